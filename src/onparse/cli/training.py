"""``onparse train`` and ``onparse perplexity``: thin shells over each trainable kind's
:class:`onparse.training.family.Family` (``onparse.TRAIN_FAMILIES``: its presets, settings and
``start``) and :func:`onparse.perplexity`.  The options of ``train`` are the families'
settings, and which of them a family refuses is read off its declaration: no family is named here
but in the help's prose."""
import re
from dataclasses import fields
from typing import Optional

import click

from .. import CORPORA, CORPUS_FORMATS, CORPUS_SPLITS, TRAIN_FAMILIES
from ..files.safeio import dumps, format_ppl
from .common import (INT_MAX, SEED_RANGE, device_option, load_parser, model_option, no_verify_option, quiet_option,
                     renamed, renamed_option, threads_option)

# Kept free of torch imports (the homes of the names above import none): `onparse --help` must stay fast.
_DURATION = re.compile(r"^(?:(\d+(?:\.\d*)?)h)?(?:(\d+(?:\.\d*)?)m)?(?:(\d+(?:\.\d*)?)s?)?$")
#: The longest duration accepted: a year, in seconds.
MAX_DURATION = 365 * 24 * 3600


def parse_duration(text: str) -> float:
    """Seconds in ``text``: a number of seconds (``90``), or hours/minutes/seconds (``2h``,
    ``1h30m``, ``45m``, ``90s``).

    >>> parse_duration("90"), parse_duration("1h30m"), parse_duration("2.5m")
    (90.0, 5400.0, 150.0)
    """
    m = _DURATION.match(text.strip().lower())
    if not text.strip() or not m or not any(m.groups()):
        raise ValueError(f"not a duration: {text!r} (examples: 3600, 90s, 45m, 2h, 1h30m)")
    h, mins, secs = (float(g) if g else 0.0 for g in m.groups())
    seconds = h * 3600 + mins * 60 + secs
    # Hundreds of digits parse to inf, which no timer or plan can use: no run is meant to last
    # beyond a year (issue 55.6).
    if not seconds <= MAX_DURATION:
        shown = text.strip() if len(text.strip()) <= 20 else text.strip()[:20] + "..."
        raise ValueError(f"too long a duration: {shown} is longer than a year (8760h)")
    return seconds


class _Duration(click.ParamType):
    """A duration (:func:`parse_duration`), more than 0 seconds unless ``zero_ok``: refused as the
    command line is read, before anything loads (``--max-time 0``)."""

    name = "DURATION"

    def __init__(self, zero_ok: bool = False):
        self.zero_ok = zero_ok

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)):
            return float(value)
        try:
            seconds = parse_duration(value)
        except ValueError as err:
            self.fail(str(err), param, ctx)
        if seconds <= 0 and not self.zero_ok:
            self.fail(f"a duration must be more than 0 seconds, got {value.strip()!r}", param, ctx)
        return seconds


#: The families in their order (the first is the default), and every option any of them takes
#: beyond the run options, each once: the first family's settings, then each other family's
#: settings and sizes that no earlier family has (``--help`` lists them in this order).
_FAMILIES = tuple(TRAIN_FAMILIES.values())
_DEFAULT = _FAMILIES[0]
_CONFIG_NAMES = tuple(dict.fromkeys(name for family in _FAMILIES for name in family.option_names()))
#: The option of each size field, over all families (``n_nonterminals`` -> ``--nonterminals``).
SIZE_OPTIONS = {name: flag for family in _FAMILIES for name, flag in family.sizes.items()}
#: Run options a family may refuse, as they are spelled in its refusal.
_RUN_FLAGS = {"init_from": "--init-from", "amp": "--amp/--no-amp"}


def _flag(name: str) -> str:
    return SIZE_OPTIONS.get(name) or _RUN_FLAGS.get(name) or "--" + name.replace("_", "-")


def _owner(name: str):
    """The first family that takes the option ``name``: its help and type are that family's."""
    return next(family for family in _FAMILIES if name in family.option_names())


def _size_field(family, name: str):
    """The dataclass field of the size ``name`` of ``family`` (its help, check and choices)."""
    return next(f for f in fields(family.size_fields) if f.name == name)


def _option_help(name: str) -> str:
    """``name``'s help: a family's settings by their presets' values (presets that are whole
    settings) or their default, and what each later family that shares it does differently; a
    size by its presets' values."""
    family = _owner(name)
    if name in family.sizes:
        sized = _size_field(family, name)
        if sized.metadata["check"] == "choice":
            values = ", ".join(dict.fromkeys(sizes[name] for sizes in family.presets.values()))
            return f"{family.label}: {sized.metadata['help']} [every preset: {values}]"
        values = ", ".join(f"{preset} {sizes[name]}" for preset, sizes in family.presets.items())
        return f"{family.label} size: {name.replace('n_', '').replace('_', ' ')} [preset: {values}]"
    f = family.setting_fields()[name]
    if family is not _DEFAULT:
        return f"{family.label}: {f.metadata['help']} [{f.default}]"
    values = ", ".join(f"{preset} {getattr(cfg, name)}" for preset, cfg in family.presets.items())
    also = ""
    for other in _FAMILIES[1:]:
        shared = other.setting_fields().get(name)
        same = shared is not None and shared.default == f.default and shared.metadata["help"] == f.metadata["help"]
        if shared is not None and not same:      # a family that only shares this one (lstm, gru) says nothing
            also += f"; {other.name}: {shared.default}"
            if shared.metadata["help"].lower() != f.metadata["help"].lower():
                also += f", {shared.metadata['help']}"         # its own meaning there, said once
    return f"{f.metadata['help'][:1].upper()}{f.metadata['help'][1:]} [preset: {values}{also}]"


def _option_type(name: str):
    family = _owner(name)
    if name in family.sizes:
        sized = _size_field(family, name)
        return click.Choice(sized.metadata["choices"]) if sized.metadata["check"] == "choice" \
            else click.IntRange(1, INT_MAX)
    f = family.setting_fields()[name]
    if f.type in (str, "str", "Optional[str]", Optional[str]):      # a file (Family.models: a model file)
        return click.Path(dir_okay=False)
    if f.type in (float, "float"):
        return float
    return SEED_RANGE if name == "seed" else click.IntRange(0, INT_MAX)


def _config_options(command):
    """One ``--field-name`` option per setting of every family and one per size, default: the
    preset's (or the family's settings') value."""
    for name in reversed(_CONFIG_NAMES):
        command = click.option(_flag(name), name, type=_option_type(name), default=None,
                               help=_option_help(name))(command)
    return command


def _refusal(family, given):
    """The usage error for options given that ``family`` does not take (another family's
    settings or sizes, or run options it refuses), naming the family they apply to; None."""
    refused = [n for n in _CONFIG_NAMES if n not in family.option_names()] + list(family.refuses)
    refused = [n for n in refused if given(n)]
    if not refused:
        return None
    takers = [f.name for f in _FAMILIES if f is not family
              and (refused[0] in f.option_names() if refused[0] in _CONFIG_NAMES else refused[0] not in f.refuses)]
    verb = "applies" if len(refused) == 1 else "apply"
    return click.UsageError(f"{', '.join(_flag(n) for n in refused)} {verb} to --family {' or '.join(takers)}, "
                            f"not {family.name}")


@click.command("train")
@click.option("--family", type=click.Choice(tuple(TRAIN_FAMILIES)), default=None,
              help="What to train: lm (an ON-LSTM language model) or grammar (a neural PCFG, a probabilistic "
                   "grammar whose rules a network gives; docs/pcfg.md's recipe: Adam, a length curriculum, exact "
                   "perplexity; each epoch it says whether it learns better than counting words); student (what "
                   "onparse distill trains: a fast parser learning --teacher's trees of --corpus FILE, written to "
                   "OUT/student.pt); lstm or gru (a plain LSTM or GRU language model, the perplexity baselines: "
                   "the language model's options and presets but --chunk-size; they give no trees)  [default: lm; "
                   "with --resume, the run's own]")
@click.option("--preset", type=click.Choice(tuple(dict.fromkeys(p for f in _FAMILIES for p in f.presets))),
              default="small", show_default=True, metavar="PRESET",
              help="Starting hyperparameters; each family has its own presets ("
                   + "; ".join(f"{f.name}: {', '.join(f.presets)}" for f in _FAMILIES) + ").  "
                   "lm: paper (section 2; a GPU job), small (CPU, minutes an epoch), "
                   "tiny (tests, and trying the workflow: seconds an epoch on a few hundred sentences, as "
                   "examples/train_tiny.sh does; over 40 minutes an epoch on the 1M-word default corpus).  "
                   "grammar: the sizes tiny (tests), small (30 nonterminals, 60 preterminals: 4-5 minutes an "
                   "epoch of news on one idle thread, 7-15 beside other work), medium (128/256: about 20 on an "
                   "idle thread), large (250/500: a GPU job); every preset's rules have the simple form "
                   "(--rule-form)")
@click.option("--corpus", default=CORPORA[0], show_default=True, metavar="NAME|PATH",
              help="A built-in name: news (conll2000 + Brown's press sections + abc, none of the evaluation "
                   "sample's sentences), "
                   "conll2000 or conll2000+press (news' in-domain parts alone, sample removed too), "
                   "wsj (NLTK treebank sample + conll2000: holds the evaluation text), brown, "
                   "wsj+brown, alpino / cess_esp / floresta (a treebank's training part), "
                   "or a file with one sentence per line")
@click.option("--valid", "valid", type=click.Path(dir_okay=False), default=None,
              help="Validation file (default: a held-out 5% of the corpus, and another 5% for test)")
@click.option("--test", "test", type=click.Path(dir_okay=False), default=None,
              help="Test file, with --valid (e.g. ptb.test.txt)")
@click.option("--input-format", "fmt", type=click.Choice(CORPUS_FORMATS), default=None,
              help="Format of a corpus file (the text read; --format is always an output format); auto: ptb "
                   "for files named ptb.*.txt (tokens used verbatim), else text (raw text: tokenised, punctuation "
                   "dropped, lowercased, digits to N); tokens: like text but split on whitespace only "
                   "(pre-tokenised text); pretokenized: split on whitespace only and every token kept, as induce "
                   "--pretokenized reads a line (the text onparse gold-text writes)  [default: auto]")
@renamed_option("--format", "--input-format", "fmt_old", type=click.Choice(CORPUS_FORMATS))
@click.option("--out", "-o", default=None, metavar="DIR",
              help="Output folder for best.pt, last.pt and metrics.jsonl [default: runs/PRESET; a grammar: "
                   "runs/grammar-PRESET]")
@device_option
@click.option("--max-time", type=_Duration(), default=None,
              help="Stop (and save) after this much training time in this invocation: 3600, 45m, 2h30m")
@click.option("--max-steps", type=click.IntRange(0, INT_MAX), default=None,
              help="Stop (and save) after this many optimiser steps in total")
@click.option("--checkpoint-every", type=_Duration(zero_ok=True), default="10m", show_default=True,
              help="Also save last.pt this often inside an epoch, so a killed run loses at most this much "
                   "(0: only at epoch ends)")
@click.option("--keep-epochs", is_flag=True,
              help="Keep every epoch's weights as epoch-NNN.pt beside best.pt (to score the run's progress)")
@click.option("--resume", is_flag=True, help="Continue the run saved in --out (exactly where it stopped)")
@click.option("--overwrite", is_flag=True, help="Start afresh even if --out holds a run")
@click.option("--init-from", "init_from", type=click.Path(dir_okay=False), default=None, metavar="CHECKPOINT",
              help="Start from this checkpoint's vocabulary and weights (e.g. adapt a model to new text); "
                   "the size options must match its run")
@click.option("--progress/--no-progress", default=None,
              help="A progress bar on stderr; --no-progress: no progress at all  [default: a bar when stderr is a "
                   "terminal, else a plain line a minute]")
@quiet_option
@threads_option
@click.option("--amp/--no-amp", default=True, show_default=True, help="Autocast to bf16 on CUDA")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON")
@no_verify_option
@_config_options
@click.pass_context
def train_command(ctx, family, preset, corpus, valid, test, fmt, fmt_old, out, device, max_time, max_steps,
                  checkpoint_every, keep_epochs, resume, overwrite, init_from, progress, quiet, threads, amp, as_json,
                  no_verify, **hyper):
    """Train an ON-LSTM language model (AWD-LSTM recipe of the paper) or, with --family grammar,
    a neural PCFG (docs/pcfg.md), and keep the model with the best validation perplexity.

    \b
    onparse train --preset small --epochs 3 --out runs/small
    onparse train --corpus mytext.txt --preset small --out runs/mine
    onparse train --corpus ptb.train.txt --valid ptb.valid.txt --test ptb.test.txt --preset paper
    onparse train --out runs/small --resume --epochs 10
    onparse train --corpus wsj --init-from runs/wb/best.pt --epochs 5 --out runs/wb-wsj
    torchrun --nproc_per_node 2 -m onparse train --preset paper --out runs/paper

    \b
    onparse train --family grammar --preset small --corpus news --out runs/grammar-small --threads 1
    onparse train --family grammar --preset tiny --corpus mytext.txt --epochs 5 --curriculum-start 10

    Every hyperparameter option defaults to the preset's value; the terms (BPTT, DropConnect,
    AR/TAR, rule form, nonterminals) are explained in docs/glossary.md.  Ctrl-C stops after saving
    (exit 130); --resume continues from where the run stopped.
    """
    from ..progress import reading

    # The sign of life, before the slow imports and the reading of the corpus (issue 54.6).
    reading("the run to resume and its corpus" if resume and corpus == CORPORA[0] else f"the corpus {corpus}",
            quiet or progress is False)
    from .. import RunOptions, corpus_spec, run_family

    fmt = renamed(fmt, fmt_old, "--format", "--input-format", "auto")
    if quiet and progress:
        raise click.UsageError("--quiet shows no progress and --progress a bar: give one of them")
    progress = False if quiet else progress
    family = TRAIN_FAMILIES[family or (run_family(out) if resume and out else None) or _DEFAULT.name]
    if out is not None and not out.strip():
        raise click.BadParameter("is empty: name a folder, or leave --out out for runs/PRESET", param_hint="--out")
    out = out or family.out(preset)
    if resume and init_from is not None:
        raise click.UsageError("--init-from starts a new run; it does not go with --resume")

    def given(*names):
        names += ("fmt_old",) if "fmt" in names else ()
        return any(ctx.get_parameter_source(n) == click.core.ParameterSource.COMMANDLINE for n in names)

    refusal = _refusal(family, given)
    if refusal is not None:
        raise refusal
    if given("preset") and preset not in family.presets:
        raise click.BadParameter(f"{preset!r} is not a {family.name} preset: choose from {', '.join(family.presets)}",
                                 param_hint="--preset")
    options = RunOptions(out=out, device=device, max_time=max_time, max_steps=max_steps, resume=resume,
                         overwrite=overwrite, progress=progress, amp=amp, threads=threads,
                         init_from=init_from, checkpoint_every=checkpoint_every or None,
                         keep_epochs=keep_epochs, verify=not no_verify)
    try:
        spec = corpus_spec(corpus, fmt, valid, test) if given("corpus", "valid", "test", "fmt") or not resume else None
        values = {k: v for k, v in hyper.items() if v is not None}
        for name in family.models:           # a setting that names a model: loaded as -m loads it
            if name in values:
                values[name] = load_parser([values[name]], device, no_verify=no_verify)
        run = family.start(preset if given("preset") or not resume else None, spec, values, options)
    except ValueError as err:
        raise click.UsageError(str(err))
    _report(ctx, run(), out, as_json)


def _report(ctx, result, out, as_json) -> None:
    """The summary of a finished or stopped run (stdout), and exit 130 when interrupted."""
    if not result.is_main:      # a rank other than 0 of a distributed run: rank 0 reports
        ctx.exit(130 if result.stop_reason == "interrupted" else 0)
    if as_json:
        click.echo(dumps(result.summary()))
    else:
        # The stop itself is said once, on stderr, by the run (its reason, epochs and steps).
        if result.best_valid_ppl is not None:
            at = f"epoch {result.best_epoch}" if result.best_epoch else "at the stop, inside epoch 1"
            click.echo(f"best valid ppl: {format_ppl(result.best_valid_ppl)} ({at})")
        if result.test_ppl is not None:
            click.echo(f"test ppl: {format_ppl(result.test_ppl)}")
        if result.tokens_per_s:
            click.echo(f"tokens/s: {result.tokens_per_s:,.0f}")
        if result.best_path:
            click.echo(f"model: {result.best_path}")
    if result.stop_reason == "interrupted":
        click.echo(f"interrupted; continue with: onparse train --out {out} --resume", err=True)
        ctx.exit(130)


@click.command("perplexity")
@model_option(help_text="Model checkpoint written by `onparse train`, or a bundle (each of its models is measured) "
                        "[default: the model bundled with onparse; see `onparse info`].")
@click.option("--corpus", default=None, metavar="NAME|PATH",
              help=f"{', '.join(CORPORA)} or a file [default: the corpus the model was trained on]")
@click.option("--split", type=click.Choice(CORPUS_SPLITS), default=None,
              help="Which part of the corpus [default: test for a corpus name or the training corpus, "
                   "all for a file]")
@click.option("--input-format", "fmt", type=click.Choice(CORPUS_FORMATS), default=None,
              help="Format of a corpus file (see onparse train --help)  [default: auto]")
@renamed_option("--format", "--input-format", "fmt_old", type=click.Choice(CORPUS_FORMATS))
@click.option("--batch-size", type=click.IntRange(1, INT_MAX), default=None,
              help="Parallel streams; a grammar: sentences a batch [default: the run's --eval-batch-size, "
                   "else 10; a grammar: the run's --batch-size, else 8]")
@click.option("--bptt", type=click.IntRange(1, INT_MAX), default=None,
              help="Window length; the state is carried across windows [default: the run's --bptt, else 70; "
                   "a grammar reads whole sentences]")
@device_option
@threads_option
@click.option("--json", "as_json", is_flag=True,
              help="Print the result as JSON (a list, one object per model, for a bundle of several)")
@quiet_option
def perplexity_command(model_paths, no_verify, corpus, split, fmt, fmt_old, batch_size, bptt, device, threads, as_json,
                       quiet):
    """Perplexity of a trained model on a corpus (by default the test part of the corpus it was
    trained on).  For a bundle, the perplexity of each of its models, one line each.

    \b
    onparse perplexity                                   # the bundled model
    onparse perplexity -m runs/small/best.pt
    onparse perplexity -m runs/small/best.pt --corpus brown
    onparse perplexity -m runs/ptb/best.pt --corpus ptb.test.txt
    """
    from ..progress import reading

    reading(f"the corpus {corpus}" if corpus else "the model and the corpus it was trained on", quiet)
    from .. import load, perplexity
    from ..devices import torch_threads

    fmt = renamed(fmt, fmt_old, "--format", "--input-format", "auto")
    if len(model_paths) > 1:
        raise click.UsageError(f"perplexity measures one model or bundle; --model was given {len(model_paths)} times")
    with torch_threads(threads):
        parser = load(model_paths[0] if model_paths else None, device, verify=not no_verify)
        results = perplexity(parser, corpus, split, fmt=fmt, batch_size=batch_size, bptt=bptt, quiet=quiet)
    # A file of several models (a bundle) gets one record per model measured, each named, even
    # when only one of them has a perplexity; a lone model's record is the object itself.
    several = len(parser.models) > 1
    records = [{**({"model": r.model} if several else {}), "corpus": r.corpus,
                **{k: v for k, v in r.to_dict().items() if k != "model"}} for r in results]
    if as_json:
        click.echo(dumps(records if several else records[0]))
        return
    for r in results:
        click.echo(f"{r.model + ': ' if several else ''}{r.corpus}: perplexity {format_ppl(r.perplexity)} "
                   f"({r.tokens:,} tokens, {r.sentences:,} sentences, {r.loss:.4f} nats/token)")


def register(group) -> None:
    group.add_command(train_command)
    group.add_command(perplexity_command)

"""``onparse eval``, ``onparse baseline`` and ``onparse gold-text``: thin shells over
:func:`onparse.evaluate`, :func:`onparse.load_gold` and :func:`onparse.baseline_trees`."""
from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
from dataclasses import dataclass
from typing import Optional, Tuple

import click

from .. import BASELINE_KINDS, GOLD_NAMES, PTB_ROOT_ENV, OnparseError, is_gold_spec
from ..files.safeio import atomic_output, dumps, read_text
from .common import (SEED_RANGE, check_writable, device_option, force_option, line_limit_option, load_parser,
                     members_options, model_name, model_option, quiet_option, refuse_model, refuse_overwrite,
                     renamed, renamed_option, report_too_long, threads_option)
from .figures import check_plots, plots_option, write_eval_plots

#: How baselines are named in tables.
BRANCHING = {"right": "right-branching", "left": "left-branching"}


class GoldSpec(click.ParamType):
    """A gold set name or an existing file/folder of trees; anything else is a usage error (exit 2)."""

    name = "GOLD"

    def convert(self, value, param, ctx):
        if isinstance(value, str) and is_gold_spec(value):
            return value
        self.fail(
            f"{value!r} is neither a gold set ({', '.join(GOLD_NAMES)}) nor an existing file or folder",
            param,
            ctx,
        )


@dataclass(frozen=True)
class GoldChoice:
    """What the gold options asked for: ``--gold``, ``--ptb-root`` and the tag-set options
    (one parameter, ``gold``, of every command that scores against gold)."""

    spec: str
    ptb_root: Optional[str] = None
    tagset: str = "auto"
    punct_tags: Tuple[str, ...] = ()
    empty_tags: Tuple[str, ...] = ()

    def load(self, max_line_bytes: int):
        """The gold set (:func:`onparse.load_gold`, its tag set :func:`onparse.tagset`); its notes
        (preset chosen, trees set aside) go to stderr."""
        from .. import load_gold, tagset

        try:
            chosen = tagset(self.tagset, self.punct_tags, self.empty_tags)
        except ValueError as err:
            raise click.UsageError(str(err))
        gold_set = load_gold(self.spec, self.ptb_root, chosen, max_line_bytes)
        for note in gold_set.notes:
            click.echo(note, err=True)
        return gold_set


def _tags(text: Optional[str]) -> Tuple[str, ...]:
    return tuple(t.strip() for t in (text or "").split(",") if t.strip())


def gold_option(func):
    """``--gold``, ``--ptb-root`` and the tag-set options, shared by every command that scores
    against gold; they arrive together as ``gold``, a :class:`GoldChoice`."""
    from .. import TAGSETS

    @functools.wraps(func)
    def command(*args, gold, ptb_root, tagset, punct_tags, empty_tags, **kwargs):
        return func(*args, gold=GoldChoice(gold, ptb_root, tagset, _tags(punct_tags), _tags(empty_tags)), **kwargs)

    command = click.option("--empty-tags", default=None, metavar="TAG[,TAG]",
                           help="With --punct-tags: tags of empty elements to drop too (X* matches a prefix).")(command)
    command = click.option("--punct-tags", default=None, metavar="TAG[,TAG]",
                           help="Read a gold file's leaves with your own list of punctuation tags (X* matches a "
                                "prefix) instead of a preset.")(command)
    command = click.option("--tagset", type=click.Choice(("auto",) + TAGSETS), default="auto", show_default=True,
                           help="Which leaves of a gold file are words: a preset, or auto (detected from the "
                                "tags; the choice is printed).  Named gold sets use their own.")(command)
    command = click.option(
        "--ptb-root",
        type=click.Path(exists=True, file_okay=False),
        envvar=PTB_ROOT_ENV,
        show_envvar=True,
        default=None,
        help="LDC treebank folder parsed/mrg/wsj (00/wsj_0001.mrg ...): wsj10 and wsj then use "
        "every section, wsj-test is section 23, wsj-valid section 22.  "
        "Without it, wsj10/wsj come from NLTK's 3,914-sentence sample.",
    )(command)
    command = click.option(
        "--gold",
        type=GoldSpec(),
        default="wsj10",
        show_default=True,
        help=f"Gold trees: {', '.join(GOLD_NAMES)}, a file of bracketed trees (one per line "
        "or multi-line .mrg) or a folder of .mrg files.",
    )(command)
    return command


def report_options(func):
    """``--json`` and ``--per-sentence``: how a score report is written."""
    func = click.option(
        "--per-sentence",
        "per_sentence",
        type=click.Path(dir_okay=False, writable=True, allow_dash=True),
        default=None,
        help="Also write one JSON object per sentence (scores, trees) to this file, for error analysis; "
        "its \"index\" is the sentence number, 1-based, as in `onparse show --gold wsj10:I`.",
    )(func)
    func = click.option(
        "--json", "as_json", is_flag=True, help="Print the report as JSON (scores as fractions in [0, 1])."
    )(func)
    return func


def emit_report(result, as_json: bool, per_sentence: Optional[str], about: Optional[dict] = None,
                quiet: bool = False, symbols: bool = False) -> None:
    """Print an :class:`onparse.scores.metrics.SpanMetric` (table or JSON; nothing when ``quiet``) and
    write per-sentence records.

    ``about``: what was scored (``{"model": ..., "layer": 2, "decoder": "onlstm"}``, or ``"kind":
    "student"`` for a model without layers), added to the JSON object and printed as a first line
    above the table (``model student.pt, a student``).  ``symbols`` (``--labels``): the
    table ends with the induced symbols against gold, or stderr says there are none."""
    from .. import write_per_sentence

    about = about or {}
    if quiet:
        pass
    elif as_json:
        click.echo(dumps({**about, **result.to_dict()}, indent=2))
    else:
        if about:
            click.echo(", ".join(f"a {value}" if key == "kind" else f"{key} {value}" for key, value in about.items()))
        click.echo(result.format_table(symbols=symbols))
    if symbols and not quiet and not result.symbols:
        no_symbols("the trees carry no induced symbols (no label but X)")
    if per_sentence:
        if per_sentence == "-":
            write_per_sentence(result, sys.stdout)
            return
        try:
            with atomic_output(per_sentence) as tmp, open(tmp, "w", encoding="utf-8") as stream:
                write_per_sentence(result, stream)
        except OSError as err:
            raise OnparseError(f"cannot write {per_sentence}: {err.strerror}") from None


def no_symbols(why: str) -> None:
    """The stderr note of ``--labels`` when there is no symbol to report, saying ``why``."""
    click.echo(f"note: --labels: {why}; only trees made with a grammar among the members (a grammar alone, "
               "an average such as an accurate reading's), or trees they wrote with --format ptb, have "
               "symbols (NT-12) to line up with gold labels", err=True)


def check_per_sentence(per_sentence: Optional[str], inputs, force: bool = False) -> None:
    """Before any work: the ``--per-sentence`` file must be writable, must not be one of the
    ``inputs`` ((description, path) pairs) that the command reads, and must not hold an onparse
    model unless ``force``."""
    refuse_overwrite(per_sentence, "--per-sentence", [(what, path) for what, path in inputs
                                                      if path and os.path.isfile(path)])
    refuse_model(per_sentence, "--per-sentence", force)
    check_writable(per_sentence, "--per-sentence")


def read_input(path: str, max_line_bytes: int):
    """``(source name, text)`` of a file, or of stdin for ``-``, read by onparse's one rule
    (:func:`onparse.files.safeio.read_text`: a byte-order mark skipped, bytes that are not UTF-8 an
    error naming the line, bounded lines); line endings ``\\r\\n`` and ``\\r`` become ``\\n``."""
    if path == "-":
        if sys.stdin is None:
            raise OnparseError("standard input is closed; pass a FILE instead of -")
        name, text = "stdin", read_text(sys.stdin.buffer, "stdin", line_limit=max_line_bytes)   # bytes, as for files
    else:
        name, text = path, read_text(path, line_limit=max_line_bytes)
    return name, text.replace("\r\n", "\n").replace("\r", "\n")     # as text mode reads files


@click.command("eval")
@gold_option
@report_options
@plots_option
@model_option
@members_options
@device_option
@threads_option(apply=True)
@click.option("--baseline", type=click.Choice(BASELINE_KINDS), multiple=True,
              help="Also score this baseline's trees (as onparse baseline --baseline builds them) on the same "
                   "sentences, in the same table (repeatable).")
@click.option("--beside", "beside_old", type=click.Choice(BASELINE_KINDS), multiple=True, hidden=True,
              help="Deprecated spelling of --baseline (same values).")
@click.option("--labels", "show_symbols", is_flag=True,
              help="For labelled trees (made with a grammar among the members: a grammar alone, an average "
                   "such as the bundled model's or an accurate reading's, not a fast reading's student alone; "
                   "or --format ptb trees with NT-12 labels): "
                   "end the report with how each induced symbol lines up with the gold labels (its most "
                   "frequent gold label, purity: the share of its spans with that label, counts).  --json always "
                   "has them as \"symbols\".")
@click.option("--out", "-o", "out", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Write the report (text, or --json) to FILE, whole, instead of standard output.")
@force_option
@quiet_option
@line_limit_option
@click.argument("pred", type=click.Path(exists=True, dir_okay=False, allow_dash=True), required=False)
@click.pass_context
def eval_command(ctx, gold, as_json, per_sentence, plots, model_paths, no_verify, layer, decoder, voter, ties,
                 reading, device, baseline, beside_old, show_symbols, out, force, quiet, max_line_bytes, pred):
    """Score trees against gold trees: the trees in PRED, or the trees a model induces.

    PRED is a file (or - for standard input) with one bracketed tree per line, in gold
    order, labelled or not: ((the cat) sat) and (S (NP (DT the) (NN cat)) (VBD sat)) both
    work.  Words are compared with the gold tokens after the same normalisation (lowercase,
    digits -> N); punctuation must already be removed.  Any malformed tree, count or word
    mismatch is an error naming the first bad line, and nothing is scored.

    Without PRED, a model (--model, default: the bundled one) parses the gold
    sentences and its trees are scored.  With several members (repeated --model, a bundle,
    or lists such as --layer 2,3 --decode all) every member is scored, and so are their
    averaged trees; the report, --per-sentence and --plots then describe the average.

    Reports sentence F1 (ON-LSTM and Kim et al. conventions: docs/glossary.md), corpus F1 and EVALB-style
    corpus F1 with their precision and recall, recall per gold label, average depths and
    sentence counts.  EVALB-style is what EVALB (unlabelled) reports for --format ptb trees
    against the gold collapsed to word spans: corpus F1 with the whole-sentence spans counted.
    Labelled trees (a grammar's NT-12 symbols) also get, with --labels and in --json, each
    symbol's most frequent gold label and its purity.

    \b
    onparse eval --gold wsj10 trees.txt
    onparse baseline --gold wsj10 --baseline right | onparse eval --gold wsj10 -
    onparse eval --gold wsj10 --model runs/small/best.pt --layer all --decode all
    onparse eval --gold wsj                  # the bundled model
    onparse eval --gold wsj -m s1/best.pt -m s2/best.pt -m s3/best.pt --layer 2,3
    onparse eval --gold wsj-sample-dev -m s1/best.pt -m s2/best.pt --layer 2,3 --voter right --ties right
    onparse eval --gold wsj-sample-test --baseline right   # the bundled model beside right-branching
    onparse eval --gold wsj10 -m grammar.pt --labels        # its symbols against the gold labels
    onparse eval --gold wsj10 trees.txt --json -o scores.json
    """
    baseline = renamed(baseline or None, beside_old or None, "--beside", "--baseline", ())
    params = {"layer": "layer", "decode": "decoder", "voter": "voter", "ties": "ties", "reading": "reading",
              "device": "device", "threads": "threads", "baseline": "baseline", "beside": "beside_old"}
    model_only = [f"--{'baseline' if name == 'beside' else name}" for name, param in params.items()
                  if ctx.get_parameter_source(param) == click.core.ParameterSource.COMMANDLINE]
    if pred is not None and (model_paths or model_only):
        raise click.UsageError(f"{(['--model'] if model_paths else model_only)[0]} goes with a model, "
                               "not with PRED: give PRED (trees to score) or a model (trees to induce)")
    if pred is None and not model_paths and _stdin_is_piped():
        raise click.UsageError("trees are piped in but PRED is missing: pass - to score them "
                               "(without PRED, onparse eval parses the gold sentences with the bundled model)")
    check_plots(plots)  # a missing matplotlib fails before any work
    check_per_sentence(per_sentence, [("prediction file", pred), ("gold file", gold.spec)], force)
    if out is not None:
        check_writable(out, "--out")
        inputs = [("prediction file", pred), ("gold file", gold.spec), ("per-sentence file", per_sentence)]
        refuse_overwrite(out, "--out", [(what, path) for what, path in inputs + [("model", p) for p in model_paths]
                                        if path and os.path.isfile(path)])
        refuse_model(out, "--out", force)
    gold_set = gold.load(max_line_bytes)
    with report_to(out):
        if pred is not None:
            from .. import score_text

            source, text = read_input(pred, max_line_bytes)
            result = score_text(text, gold_set, source=source)
            emit_report(result, as_json, per_sentence, symbols=show_symbols)
            write_eval_plots(plots, result, gold_set, source)
            return
        parser = load_parser(model_paths, device, layer, decoder, voter=voter, ties=ties, no_verify=no_verify,
                             reading=reading)
        _eval_model(gold_set, parser, model_name(model_paths), as_json, per_sentence, plots, baseline, quiet,
                    show_symbols)


@contextlib.contextmanager
def report_to(out: Optional[str]):
    """What the block prints on stdout goes to the file ``out`` instead, written whole when the
    block succeeds (nothing is written when it fails); None or ``-``: stdout as usual."""
    if out in (None, "-"):
        yield
        return
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        yield
    with atomic_output(out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(report.getvalue())


def _with_symbols(parser, gold_set, result):
    """``result`` scored again with the labels a grammar among the members gives its trees'
    spans (:func:`onparse.induce.tree_labels`); ``result`` itself when no member's kind has them.
    Cost: the labels (a grammar: about one more parse), then the scoring, O(words)."""
    from .. import evaluate
    from ..induce import tree_labels

    trees = [s.pred_tree for s in result.sentences]
    named = tree_labels(parser, [list(words) for words in gold_set.words], trees)
    return result if named is None else evaluate(trees, gold_set, labels=named)


def _stdin_is_piped() -> bool:
    """True when standard input is a pipe (``... | onparse eval``)."""
    import os
    import stat

    try:
        return stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


def _eval_model(gold_set, parser, name, as_json, per_sentence, plots, beside=(), quiet=False,
                show_symbols=False) -> None:
    """``onparse eval`` without PRED: induce trees for the gold sentences and score them, with
    the ``beside`` baselines scored on the same sentences; a member alone whose kind names its
    spans is scored with its labels too when they are shown (``show_symbols``, ``as_json``)."""
    from .. import baseline_trees, evaluate, format_comparison

    scores = parser.score(gold_set, quiet=quiet)
    report_too_long(parser)
    baselines = [(baseline_row(kind), kind, evaluate(baseline_trees(gold_set.tokens, kind), gold_set, check_tokens=False))
                 for kind in dict.fromkeys(beside)]
    if baselines and not as_json:
        rows = scores.rows() if scores.average is not None else [(parser.describe_average(), scores.result)]
        click.echo(f"model {name}")
        click.echo(format_comparison(rows + [(label, result) for label, _, result in baselines]))
        emit_report(scores.result, False, per_sentence, quiet=True)
        write_eval_plots(plots, scores.result, gold_set, f"{name} ({parser.describe_average()})")
        return
    # An average's trees are named as induce --format ptb names them (a grammar among the
    # members names each span), so the bundled model's average has symbols too.
    labelled = _with_symbols(parser, gold_set, scores.average) \
        if scores.average is not None and (show_symbols or as_json) else None
    # No symbols to show: an average no grammar names, or a member alone beside baselines (a
    # report of several rows, which names none of them).
    unnamed = not labelled.symbols if labelled is not None else bool(baselines)
    if show_symbols and unnamed:
        no_symbols("the report compares several trees (" + ("an average" if scores.average is not None
                                                           else "baselines") + "), which have no symbols")
    if scores.average is None and not baselines:
        (member, result), = scores.members
        if show_symbols or as_json:
            result = _with_symbols(parser, gold_set, result)
        emit_report(result, as_json, per_sentence, {"model": name, **member.fields(parser.models[member.model])},
                    symbols=show_symbols)
        write_eval_plots(plots, result, gold_set, f"{name} ({member.label()})")
        return
    if as_json:
        def about(m):
            return {"model": m.model, **m.fields(parser.models[m.model])}

        records = [{"model": name, "member": about(member), **r.to_dict()} for member, r in scores.members]
        if scores.average is not None:
            records.append({"model": name, "average_of": [about(m) for m, _ in scores.members],
                            "voters": list(scores.voters), "ties": scores.ties, **labelled.to_dict()})
        records += [{"baseline": kind, **result.to_dict()} for _, kind, result in baselines]
        click.echo(dumps(records, indent=2))
    else:
        click.echo(f"model {name}")
        click.echo(format_comparison(scores.rows()))
        if show_symbols and labelled is not None and labelled.symbols:
            click.echo("\n" + labelled.format_symbols())
    emit_report(scores.result, False, per_sentence, quiet=True)
    write_eval_plots(plots, scores.result, gold_set, f"{name} ({parser.describe_average()})")


def baseline_row(kind: str) -> str:
    """How a baseline's row is named in a score table (eval --baseline, baseline --score)."""
    return f"{BRANCHING.get(kind, kind)} baseline"


@click.command("baseline")
@gold_option
@click.option("--baseline", "kind", type=click.Choice(BASELINE_KINDS), default=None,
              help="Which trees: right/left-branching, balanced (middle split), or random (uniform split points); "
                   "eval --baseline scores the same beside a model.  [required]")
@renamed_option("--kind", "--baseline", "kind_old", type=click.Choice(BASELINE_KINDS))
@click.option("--seed", type=SEED_RANGE, default=0, show_default=True, help="Seed of the random baseline.")
@click.option("--score", is_flag=True,
              help="Score the trees against the gold instead of printing them, in the table of eval --baseline "
                   "(--json: eval's whole report; piping the trees to onparse eval - prints it as text).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["brackets", "ptb", "jsonl"]),
    default="brackets",
    show_default=True,
    help="How trees are printed: ((the cat) sat), or PTB with placeholder labels (X, W) for EVALB/nltk "
    "(a one-word sentence is (W word), with no bracket for EVALB to count), or jsonl: one {tokens, tree} "
    "object per sentence, the tree in brackets (as induce --format jsonl writes them).",
)
@report_options
@force_option
@line_limit_option
def baseline_command(gold, kind, kind_old, seed, score, fmt, as_json, per_sentence, force, max_line_bytes):
    """Build baseline trees over the gold sentences: print them one per line, or --score them.

    The trees are over the gold tokens (lowercased, digits -> N, punctuation removed).

    \b
    onparse baseline --gold wsj10 --baseline right > right.txt
    onparse baseline --gold wsj10 --baseline right --score
    onparse baseline --gold wsj --baseline random --seed 3 --score --json
    """
    from .. import baseline_trees, evaluate, format_comparison, to_brackets, to_ptb

    kind = renamed(kind, kind_old, "--kind", "--baseline")
    if kind is None:
        raise click.UsageError("Missing option '--baseline': right, left, balanced or random")
    if (as_json or per_sentence) and not score:
        raise click.UsageError("--json and --per-sentence go with --score")
    check_per_sentence(per_sentence, [("gold file", gold.spec)], force)
    gold_set = gold.load(max_line_bytes)
    trees = baseline_trees(gold_set.tokens, kind, seed)
    if score:
        result = evaluate(trees, gold_set, check_tokens=False)
        if not as_json:
            click.echo(format_comparison([(baseline_row(kind), result)]))
        emit_report(result, as_json, per_sentence, quiet=not as_json)
        return
    if fmt == "jsonl":
        records = ({"tokens": list(words), "tree": to_brackets((tree,) if isinstance(tree, str) else tree)}
                   for words, tree in zip(gold_set.tokens, trees))
        sys.stdout.write("".join(dumps(record, ensure_ascii=False) + "\n" for record in records))
        sys.stdout.flush()
        return
    write = to_ptb if fmt == "ptb" else to_brackets
    sys.stdout.write("".join(write(tree) + "\n" for tree in trees))
    sys.stdout.flush()


@click.command("gold-text")
@gold_option
@click.option("--normalized", is_flag=True,
              help="Write the normalised tokens (lowercase, digits -> N) instead of the words as written.")
@line_limit_option
def gold_text_command(gold, normalized, max_line_bytes):
    """Write the raw text of a gold set: its kept words, one sentence per line, in gold order.

    The words are the gold's own tokens (punctuation and empty elements already dropped; a
    free-standing period follows a last word that ends in one, such as U.S., as the treebank
    writes it), so `onparse induce` reads them back unchanged and its trees score exactly what
    `onparse eval --model` reports for the same model:

    \b
    onparse gold-text --gold wsj10 > wsj10.txt
    onparse induce wsj10.txt | onparse eval --gold wsj10 -
    onparse gold-text --gold alpino10-test --normalized
    """
    gold_set = gold.load(max_line_bytes)
    sys.stdout.write("".join(line + "\n" for line in gold_set.text_lines(normalized)))
    sys.stdout.flush()


def register(group: click.Group) -> None:
    """Add ``eval``, ``baseline`` and ``gold-text`` to the ``onparse`` command group."""
    group.add_command(eval_command)
    group.add_command(baseline_command)
    group.add_command(gold_text_command)

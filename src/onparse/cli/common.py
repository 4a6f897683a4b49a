"""Options and helpers that several command modules share (one definition each)."""
import functools
import os
import re
import sys

import click

#: The largest value an integer option takes (click checks it: no overflow deeper down).
INT_MAX = 2 ** 31 - 1
#: Seeds are 32-bit, as NumPy's and every platform's generators take them.
SEED_RANGE = click.IntRange(0, 2 ** 32 - 1)
#: CPU threads a process may ask for.
THREADS_RANGE = click.IntRange(1, 4096)

MODEL_HELP = ("Model checkpoint written by `onparse train` (or its run folder: best.pt, else last.pt), or a "
              "bundle of several; repeat to average the trees of several models [default: the model bundled "
              "with onparse; see `onparse info`].")


def model_option(func=None, *, help_text: str = MODEL_HELP):
    """``--model/-m PATH``, repeatable; the values arrive as ``model_paths`` (a tuple; empty:
    the bundled model).  Brings ``--no-verify`` along (arriving as ``no_verify``): every command
    that loads a model can skip its checksum.  ``@model_option`` or, with another help text, ``@model_option(help_text=...)``."""
    if func is None:
        return lambda f: model_option(f, help_text=help_text)
    func = no_verify_option(func)
    return click.option("--model", "-m", "model_paths", type=click.Path(), multiple=True,
                        metavar="CHECKPOINT", help=help_text)(func)


def no_verify_option(func):
    """``--no-verify``: load checkpoints whose weights do not match their recorded checksum;
    arrives as ``no_verify``."""
    return click.option("--no-verify", is_flag=True,
                        help="Load the model even if its weights do not match the checksum recorded "
                             "in it (a damaged file; the results may be wrong).")(func)


def line_limit_option(func):
    """``--max-line-bytes N``: the longest input line the command reads (a longer one is an
    error naming it, instead of memory growing on a file without newlines); arrives as
    ``max_line_bytes``."""
    from ..files.safeio import MAX_LINE_BYTES

    return click.option("--max-line-bytes", type=click.IntRange(1, INT_MAX), default=MAX_LINE_BYTES,
                        show_default=True,
                        help="Longest input line, in bytes; a longer line is an error naming it.")(func)


_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


class DeviceType(click.ParamType):
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N``; anything else (``meta``, ``mps``) is a usage
    error, since onparse runs on those only."""

    name = "DEVICE"

    def convert(self, value, param, ctx):
        if isinstance(value, str) and _DEVICE.fullmatch(value.strip().lower()):
            return value.strip().lower()
        self.fail(f"{value!r} is not a device onparse runs on: use auto, cpu, cuda or cuda:N", param, ctx)


def members_options(func):
    """``--layer`` and ``--decode`` as lists, ``--voter``, ``--ties`` and ``--reading``; the values
    arrive as ``layer``, ``decoder`` (None: the model's own members: a bundle's, or layer 2 with
    the paper's decoder), ``voter`` (a tuple; empty: the bundle's own voters), ``ties`` (None: the
    bundle's own rule) and ``reading`` (None: the bundle's default reading)."""
    from .. import TIES, VOTER_KINDS

    func = click.option("--reading", default=None, metavar="NAME",
                        help="Which of a bundle's named readings makes the trees (a fast one, an accurate one: "
                             "`onparse info` lists a model's readings); --layer, --decode, --voter and --ties change "
                             "the reading's own  [default: the bundle's default reading].")(func)
    func = click.option("--ties", type=click.Choice(TIES), default=None,
                        help="How the average (docs/glossary.md) breaks ties between trees sharing as many spans: "
                             "first "
                             "(the first member decides), right (the most right-branching tree), left (the "
                             "most left-branching)  [default: first, or a bundle's own rule].")(func)
    func = click.option("--voter", type=click.Choice(VOTER_KINDS), multiple=True,
                        help="Add a right- or left-branching tree to the average as one more voter "
                             "(docs/glossary.md; repeatable); "
                             "right-branching suits English, not every language  [default: none, or a "
                             "bundle's own voters].")(func)
    func = click.option("--decode", "decoder", default=None, metavar="NAME[,NAME]",
                        help="Decoder(s): a language model's onlstm (the paper's greedy top-down rule) or split "
                             "(the unbiased binary split), a grammar's mbr or viterbi, a student's cyk; a "
                             "comma-separated list, or all  [default: onlstm, a grammar's mbr, a student's cyk, or "
                             "a bundle's own members].")(func)
    func = click.option("--layer", default=None, metavar="N[,N]",
                        help="Layer(s) (1-based) of a language model whose numbers per word (master-forget distances, "
                             "docs/glossary.md) make the trees: a number, a "
                             "comma-separated list, or all; with several, the trees of every model x "
                             "layer x decoder are averaged  [default: 2, or a bundle's own members].")(func)
    return func


def decoder_list(text: str):
    """``--decode`` value -> list of decoder names, or ``"all"``; whether they exist is checked
    where members are built (:func:`onparse.members.grid`)."""
    return text if text == "all" else [part.strip() for part in text.split(",") if part.strip()] or [text]


def load_parser(model_paths, device, layer=None, decoder=None, batch_size=None, voter=(), ties=None,
                no_verify=False, reading=None):
    """An :class:`onparse.Parser` over ``model_paths`` (empty: the bundled model) on
    ``device``; ``layer`` / ``decoder``: the option strings (None: the models' own members);
    ``voter`` / ``ties``: the ``--voter`` values (empty: the models' own) and ``--ties`` (None: the
    models' own); ``reading``: ``--reading`` (None: the bundle's default reading).  Errors are
    one-line OnparseErrors (files) or usage errors (option values, a reading the file lacks)."""
    from .. import MemberError, ReadingError, load

    try:
        parser = load(list(model_paths) or None, device, batch_size=batch_size, voters=tuple(voter) or None,
                      ties=ties, verify=not no_verify, reading=reading)
    except ReadingError as err:
        raise click.BadParameter(str(err), param_hint="--reading") from None
    if layer is None and decoder is None:
        return parser
    try:
        return parser.with_grid(None if layer is None else layer_list(layer), None if decoder is None else decoder_list(decoder))
    except MemberError as err:
        raise click.BadParameter(str(err), param_hint="--layer" if err.part == "layer" else "--decode") from None


def report_too_long(parser) -> None:
    """One stderr line when some sentences were too long to average (their tree is their first
    member's): :func:`onparse.induce.too_long_note`."""
    from ..induce import too_long_note

    note = too_long_note(parser)
    if note:
        click.echo(note, err=True)


def device_option(func):
    """``--device auto|cpu|cuda|cuda:N``."""
    return click.option("--device", type=DeviceType(), default="auto", show_default=True,
                        help="auto (a GPU when there is one), cpu, cuda or cuda:N.")(func)


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name the same file (through links and ``..``); ``-`` and
    None name no file."""
    if a in (None, "-") or b in (None, "-"):
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:                          # one does not exist (yet): compare the names
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_overwrite(target, option: str, inputs) -> None:
    """A usage error when the output ``target`` of ``option`` is one of ``inputs`` (pairs of a
    description and a path): writing it would destroy what is being read."""
    for what, path in inputs:
        if same_file(target, path):
            raise click.BadParameter(f"{target} is the {what}; writing there would destroy it",
                                     param_hint=option)


def pretokenized_option(func):
    """``--pretokenized``: split lines on whitespace only; arrives as ``pretokenized``."""
    return click.option("--pretokenized", is_flag=True,
                        help="Split lines on whitespace only (text already tokenised, one sentence per line) "
                             "instead of tokenising them with NLTK's word tokenizer, and keep every token (words "
                             "the model lacks read as <unk>; --punct drop drops punctuation).")(func)


def punct_option(func):
    """``--punct vocab|drop``: which punctuation tokens are dropped; arrives as ``punct``."""
    from .. import PUNCT_POLICIES

    return click.option("--punct", type=click.Choice(PUNCT_POLICIES), default=PUNCT_POLICIES[0], show_default=True,
                        help="vocab: drop punctuation (tokens without a letter or digit) unless the model's "
                             "vocabulary holds it as a word (such as % or &), or the text is --pretokenized; drop: "
                             "drop all of it.")(func)


def threads_option(func=None, *, apply: bool = False):
    """``--threads N``: CPU threads of this process, the one rule of every command that runs a
    model (:func:`onparse.devices.torch_threads`: more than the cores is capped with a note).
    The value arrives as ``threads`` (None: torch's choice); with ``apply=True`` the command
    runs inside ``torch_threads(threads)`` instead and does not receive it."""
    if func is None:
        return lambda f: threads_option(f, apply=apply)
    if apply:
        inner = func

        @functools.wraps(inner)
        def func(*args, threads=None, **kwargs):
            from ..devices import torch_threads

            with torch_threads(threads):
                return inner(*args, **kwargs)

    return click.option("--threads", type=THREADS_RANGE, default=None,
                        help="CPU threads of this process; more than the CPU cores it may use are capped there, "
                             "with a note  [default: torch's choice; torchrun sets 1]")(func)


def renamed_option(old: str, new: str, param: str, **attrs):
    """``old``, the former spelling of option ``new``, kept working but hidden from ``--help``:
    its value arrives as ``param`` (None when not given) for :func:`renamed` to resolve."""
    return click.option(old, param, default=None, hidden=True, help=f"Deprecated spelling of {new} (same values).",
                        **attrs)


def renamed(value, old_value, old: str, new: str, default=None):
    """The value of an option renamed from ``old`` to ``new``: ``value`` (new's) when given, else
    ``old_value`` with a one-line deprecation note on stderr, else ``default``; both given with
    different values is a usage error."""
    if old_value is None:
        return default if value is None else value
    if value is not None and value != old_value:
        raise click.UsageError(f"{old} is the former name of {new}: give one of them")
    click.echo(f"note: {old} is deprecated here: use {new}", err=True)
    return old_value


def sentences_options(func=None, *, output: str = ""):
    """``--split-sentences`` and ``--punkt FILE``, arriving as ``split_sentences`` and ``punkt``
    (:func:`sentence_splitter` reads them); ``output``: how the command's output then maps to
    its input lines, for the help."""
    if func is None:
        return lambda f: sentences_options(f, output=output)
    func = click.option("--punkt", type=click.Path(exists=True, dir_okay=False), default=None, metavar="PARAMS.json",
                        help="Punkt's parameters for --split-sentences (implies it), as `onparse punkt TEXT --out "
                             "PARAMS.json` learns them from text of your own  [default: the model's own when it "
                             "records them, else learnt from the input's first 2 MB]")(func)
    return click.option("--split-sentences", is_flag=True,
                        help="Split each line into sentences with Punkt (unsupervised, no download) and take each "
                             f"sentence on its own; sentences without words are left out.  {output}  Without it a "
                             "line is one sentence, and lines that look like paragraphs get a note.")(func)


def sentence_splitter(split_sentences: bool, punkt, parser, name: str, file: str = ""):
    """The :class:`onparse.text.sentences.SentenceSplitter` that ``--split-sentences`` /
    ``--punkt`` ask for (None: lines are sentences).  Its parameters: ``--punkt``'s file, else
    those a model of ``parser`` (its file is called ``name``) records, else learnt from the input
    ``file`` itself with a note (from nothing when ``file`` is standard input at a terminal:
    its lines cannot wait)."""
    if not (split_sentences or punkt):
        return None
    from ..text.sentences import LEARN_CHARS, SentenceSplitter, params_from_models, read_params

    if punkt:
        return SentenceSplitter(read_params(punkt))
    params = params_from_models([parser.metadata] + [m.metadata for m in parser.models],
                                [name] + [parser.name(i) for i in range(len(parser.models))])
    if params is not None:
        return SentenceSplitter(params)
    typed = file == "-" and sys.stdin is not None and sys.stdin.isatty()

    def learnt(chars, lines):
        first = "first line" if lines == 1 else f"first {lines:,} lines"
        how = (f"Punkt learnt them from the {first} of the input ({chars:,} characters)" if lines else
               "lines typed at a terminal cannot wait for Punkt to learn them: it knows no abbreviation")
        click.echo(f"note: --split-sentences: the model records no Punkt parameters, so {how}; `onparse punkt "
                   "TEXT --out PARAMS.json` learns them once from text of your own, --punkt PARAMS.json uses them",
                   err=True)

    return SentenceSplitter(None, learn_chars=0 if typed else LEARN_CHARS, on_learn=learnt)


def quiet_option(func):
    """``--quiet/-q``: no progress on stderr (:mod:`onparse.progress`); arrives as ``quiet``."""
    return click.option("--quiet", "-q", is_flag=True,
                        help="No progress on stderr (neither the bar on a terminal nor the periodic lines "
                             "otherwise).")(func)


def force_option(func):
    """``--force``: let an output option replace a file that holds an onparse model."""
    return click.option("--force", is_flag=True,
                        help="Let an output file replace an onparse model (refused otherwise: a typo must not "
                             "destroy a checkpoint).")(func)


def refuse_model(target, option: str, force: bool) -> None:
    """A usage error when the output ``target`` of ``option`` holds an onparse model and
    ``force`` is not given."""
    from .. import holds_model

    if target not in (None, "-") and not force and holds_model(target):
        raise click.BadParameter(f"{target} holds an onparse model; writing there would destroy it "
                                 "(pass --force to replace it)", param_hint=option)


def check_writable(target, option: str) -> None:
    """A usage error, before any work, when the file ``target`` cannot be written."""
    if target in (None, "-"):
        return
    if os.path.isdir(target):
        raise click.BadParameter(f"{target} is a folder", param_hint=option)
    folder = os.path.dirname(os.path.abspath(target))
    if os.path.exists(target):
        writable = os.access(target, os.W_OK)
    else:
        writable = os.path.isdir(folder) and os.access(folder, os.W_OK)
    if not writable:
        raise click.BadParameter(f"cannot write {target}", param_hint=option)


def model_name(model_paths) -> str:
    """How the models are named in captions and reports."""
    from ..files.pretrained import DEFAULT_NAME

    return DEFAULT_NAME if not model_paths else " + ".join(str(p) for p in model_paths)


def layer_list(text: str, allow_all: bool = True):
    """``--layer`` value -> list of 1-based layers: a number, a comma-separated list, or
    ``all`` when allowed (returned as ``"all"``; :func:`onparse.members.grid` reads it); text that
    is not a layer number is a usage error (exit 2).  Whether the layers exist is the model's to say."""
    text = str(text)
    if allow_all and text == "all":
        return text
    try:
        return list(dict.fromkeys(int(part) for part in text.split(",")))
    except ValueError:
        raise click.BadParameter(f"expected a layer number, a comma-separated list{' or all' if allow_all else ''}, "
                                 f"got {text!r}", param_hint="--layer") from None

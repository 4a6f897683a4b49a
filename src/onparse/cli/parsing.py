"""``onparse distances`` and ``onparse induce``: distances and trees for raw text, streamed.

Thin commands: they parse options, load the model and hand the lines to
:mod:`onparse.induce`.  torch is imported only when a command runs.
"""
import sys

import click

from ..devices import BATCH_SIZE
from ..induce import WINDOW
from .common import (INT_MAX, check_writable, device_option, force_option, layer_list, line_limit_option,
                     load_parser, members_options, model_name, model_option, pretokenized_option, punct_option,
                     quiet_option, refuse_model, refuse_overwrite, report_too_long, sentence_splitter, sentences_options,
                     threads_option)


class _ShardType(click.ParamType):
    name = "K/N"

    def convert(self, value, param, ctx):
        from ..induce import Shard

        if isinstance(value, Shard):
            return value
        try:
            return Shard.parse(value)
        except ValueError as err:
            self.fail(str(err), param, ctx)


def _common_options(func):
    """Options shared by both commands (input handling, batching, device)."""
    options = [
        click.argument("file", type=click.Path(allow_dash=True, dir_okay=False), default="-"),
        model_option,
        pretokenized_option,
        punct_option,
        click.option("--batch-size", type=click.IntRange(1, INT_MAX), default=None,
                     help=f"Sentences per batch, sorted by length within a window of {WINDOW} lines  "
                          f"[default: {BATCH_SIZE['cpu']} on CPU, {BATCH_SIZE['cuda']} on GPU]."),
        click.option("--shard", type=_ShardType(), default=None,
                     help="Process only the K-th of N contiguous parts of FILE (1-based, e.g. 2/8); "
                          "the N outputs concatenated in order equal the whole output."),
        quiet_option,
        device_option,
        threads_option(apply=True),
        line_limit_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


#: Files up to this size have their lines counted first, for the bar's total and ETA.
COUNT_LIMIT = 1 << 30


def count_lines(file, shard=None):
    """The number of lines the command will read from ``file``, when cheap to know (a regular
    file of at most :data:`COUNT_LIMIT` bytes, read whole); otherwise None."""
    import os

    if file == "-" or shard is not None or not os.path.isfile(file) or os.path.getsize(file) > COUNT_LIMIT:
        return None
    n, last = 0, b"\n"
    with open(file, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def _run(chunks, what: str, total=None, quiet: bool = False):
    """Write the output chunks to stdout, with progress on stderr (:mod:`onparse.progress`).
    ``chunks``: the chunks, each counted as one line per output line once written; or a function
    that makes them from the progress's ``update``, which it tells of the input lines done as
    they are parsed (a long window still shows progress)."""
    from ..induce import steady_memory, write_stream
    from ..progress import Progress

    steady_memory()
    with Progress(what, total, "lines", quiet) as bar:
        if callable(chunks):
            return write_stream(chunks(bar.update), sys.stdout)
        return write_stream(chunks, sys.stdout, progress=bar.update)


def _lines(file, shard, max_line_bytes, splitter):
    """The input lines, and the :class:`onparse.text.sentences.ParagraphCheck` that counts those
    looking like paragraphs (None with a splitter: each sentence is parsed)."""
    from ..induce import read_lines
    from ..text.sentences import ParagraphCheck

    lines = read_lines(file, shard, max_line_bytes)
    if splitter is not None:
        return lines, None
    check = ParagraphCheck()
    return check.watch(lines), check


def _first_line(file, shard) -> int:
    """The input-line number of the first line read: a --shard's own (its records carry it)."""
    import os

    return shard.first_line(file) if shard is not None and shard.count > 1 and os.path.isfile(file) else 1


def _note(check) -> None:
    if check is not None:
        check.tell(lambda note: click.echo(note, err=True))


def _window(file) -> int:
    from ..induce import WINDOW

    # Typing sentences at a terminal: answer each line at once instead of waiting for a window.
    return 1 if file == "-" and sys.stdin is not None and sys.stdin.isatty() else WINDOW


@click.command("induce")
@members_options
@sentences_options(output="brackets and ptb: one line per sentence, and an empty line after each input line's "
                          "sentences; jsonl: one record per sentence, with its input line's number (\"line\") and "
                          "its \"sentence\" number within that line.")
@click.option("--format", "fmt", type=click.Choice(["brackets", "ptb", "jsonl", "json"]), default="brackets",
              show_default=True,
              help="brackets: ((the cat) (sat down)); ptb: labelled brackets for EVALB and nltk, nodes "
                   "labelled X, or with a grammar's symbols (NT-12) when a grammar is one of the members (an "
                   "accurate reading's average; a fast reading's student alone gives X); jsonl: one JSON object "
                   "per line with tokens, tree, distances (the first language-model member's numbers per word; "
                   "null when no member is a language model, as in the bundled model (a student and grammars): "
                   "`onparse distances` gives its language models' numbers) and out-of-vocabulary flags, and a "
                   "grammar's labels (json is an alias).")
@_common_options
def induce_command(file, model_paths, no_verify, pretokenized, punct, batch_size, shard, quiet, device,
                   max_line_bytes, layer, decoder, voter, ties, reading, split_sentences, punkt, fmt):
    """Induce one binary tree per line of FILE (default: standard input).

    Lines are raw text: tokenised by NLTK's word tokenizer (--pretokenized: split on
    whitespace), punctuation dropped, the trees written in your own tokens.  One output line
    per input line, in order: a line with no words (empty, or only punctuation) gives an empty
    line (a record with "tree": null in jsonl).  With several models, layers or decoders the
    trees of every member are averaged (the tree sharing the most spans with them).  A line
    holding several sentences is one tree unless --split-sentences.

    \b
    onparse induce corpus.txt > trees.txt
    onparse induce raw.txt --model lm.pt --decode split --format ptb
    onparse induce raw.txt --model grammar.pt --format ptb    # nodes named NT-k
    onparse induce tokens.txt --pretokenized -m s1.pt -m s2.pt -m s3.pt --layer 2,3
    onparse induce corpus.txt -m s1.pt -m s2.pt --layer 2,3 --voter right --ties right
    onparse induce big.txt --shard 3/8 > part3.txt
    onparse induce paragraphs.txt --split-sentences > trees.txt
    """
    from ..induce import VocabularyCheck, induce_lines

    parser = load_parser(model_paths, device, layer, decoder, batch_size, voter, ties, no_verify, reading)
    splitter = sentence_splitter(split_sentences, punkt, parser, model_name(model_paths), file)
    check = VocabularyCheck(parser.vocab)
    lines, paragraphs = _lines(file, shard, max_line_bytes, splitter)
    _run(lambda progress: induce_lines(lines, parser, fmt="jsonl" if fmt == "json" else fmt, tokenize=not pretokenized,
                                       punct=punct, window=_window(file), check=check, split=splitter,
                                       progress=progress, first_line=_first_line(file, shard)),
         "induce", count_lines(file, shard), quiet)
    report_too_long(parser)
    note = check.note()
    if note:
        click.echo(note, err=True)
    _note(paragraphs)


@click.command("distances")
@click.option("--layer", default=None, metavar="N[,N]",
              help="Layer(s) to report (1-based): a number, a comma-separated list, or all (one column / key "
                   "each, for every model)  [default: the layer each member reads: 2 for a checkpoint alone, a "
                   "bundle's own members' layers].")
@click.option("--gate", type=click.Choice(["forget", "input"]), default="forget", show_default=True,
              help="forget: master-forget distance d_f (used for parsing; docs/glossary.md); input: master-input "
                   "distance d_i.")
@click.option("--format", "fmt", type=click.Choice(["tsv", "jsonl"]), default="tsv", show_default=True,
              help="tsv: a header row (`layer 2`; `model 1 layer 2` with several models), then "
                   "`token<TAB>value...` per word and a blank line after each sentence; jsonl: one {tokens, gate, "
                   "distances: {layer: [...]}} object per line, keyed as the columns are named (`2`; `model 1 layer "
                   "2` with several models).")
@sentences_options(output="tsv: each sentence's rows and blank line, then one more blank line after each input "
                          "line's sentences; jsonl: one record per sentence, with its input line's number (\"line\") "
                          "and its \"sentence\" number within that line.")
@_common_options
def distances_command(file, model_paths, no_verify, pretokenized, punct, batch_size, shard, quiet,
                      device, max_line_bytes, layer, gate, fmt, split_sentences, punkt):
    """Print the syntactic distance of every word of each line of FILE (default: standard input).

    Each sentence is read as `<eos> w1 .. wn <eos>` from a zero state; the values at w1 .. wn
    are printed.  Lines are tokenised and punctuation dropped as `onparse induce` does.  By
    default each model's column is the layer its member reads (a bundle member reading layer 3:
    layer 3); with several models (or a bundle) columns are named `model 1 layer 2`.

    \b
    onparse distances corpus.txt --layer all
    echo "the cat sat down" | onparse distances - --model lm.pt --format jsonl
    """
    from .. import MemberError
    from ..induce import distance_columns, distance_lines

    parser = load_parser(model_paths, device, batch_size=batch_size, no_verify=no_verify)
    layers = None if layer is None else layer_list(layer)
    try:                                            # a layer the model lacks is a usage error
        distance_columns(parser, layers)
    except MemberError as err:
        raise click.BadParameter(str(err), param_hint="--layer") from None
    splitter = sentence_splitter(split_sentences, punkt, parser, model_name(model_paths), file)
    lines, paragraphs = _lines(file, shard, max_line_bytes, splitter)
    _run(lambda progress: distance_lines(lines, parser, layers=layers, gate=gate, fmt=fmt, tokenize=not pretokenized,
                                         punct=punct, window=_window(file), header=shard is None or shard.index == 1,
                                         split=splitter, progress=progress, first_line=_first_line(file, shard)),
         "distances", count_lines(file, shard), quiet)
    _note(paragraphs)


@click.command("punkt")
@click.argument("text", type=click.Path(allow_dash=True, dir_okay=False))
@click.option("--out", "-o", "out", type=click.Path(dir_okay=False), required=True, metavar="PARAMS.json",
              help="Where to write the parameters (JSON), for --punkt of induce, distances, show and distill.")
@force_option
@line_limit_option
def punkt_command(text, out, force, max_line_bytes):
    """Learn Punkt's sentence-splitting parameters from raw TEXT (- for standard input): the
    abbreviations, collocations and sentence starters of your text's language and style.

    Punkt (NLTK's sentence splitter) is unsupervised: it learns from text with no labels and
    downloads nothing.  Give it a few megabytes of the kind of text you will split; then
    `--split-sentences --punkt PARAMS.json` uses them.  (A student distilled with
    --split-sentences records the parameters it used, and its --split-sentences uses them.)

    \b
    onparse punkt my-corpus.txt --out punkt.json
    onparse induce paragraphs.txt --split-sentences --punkt punkt.json
    """
    from ..induce import read_lines
    from ..text.sentences import learn, write_params

    check_writable(out, "--out")
    refuse_overwrite(out, "--out", [("input", text)])
    refuse_model(out, "--out", force)
    counted = {"lines": 0, "text": False}

    def lines():
        for line in read_lines(text, max_line_bytes=max_line_bytes):
            counted["lines"] += 1
            counted["text"] = counted["text"] or bool(line.strip())
            yield line

    params = learn(lines())
    if not counted["text"]:             # Punkt learns nothing from no text: no file that claims it did
        from .. import OnparseError

        raise OnparseError(f"{text} holds no text to learn from")
    write_params(params, out, {"text": text, "lines": counted["lines"]})
    click.echo(f"wrote {out}: Punkt's parameters learnt from {counted['lines']:,} lines of {text} "
               f"({len(params.abbrev_types):,} abbreviations, {len(params.sent_starters):,} sentence starters)",
               err=True)


def register(group: click.Group) -> None:
    """Add ``induce``, ``distances`` and ``punkt`` to the ``onparse`` command group."""
    group.add_command(induce_command)
    group.add_command(distances_command)
    group.add_command(punkt_command)


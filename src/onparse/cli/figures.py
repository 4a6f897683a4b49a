"""``onparse show`` and ``onparse plot-log``: thin shells over :mod:`onparse.pictures.show` (terminal
drawings) and :mod:`onparse.pictures.figures` (matplotlib figures, an optional extra).

torch and matplotlib are imported only when a command runs.
"""
import contextlib
import os
import shutil
import sys

import click

from .. import PTB_ROOT_ENV, OnparseError
from ..pictures.show import SCALES
from .common import (device_option, force_option, line_limit_option, load_parser, members_options, model_name,
                     model_option, pretokenized_option, punct_option, refuse_model, refuse_overwrite,
                     sentence_splitter, sentences_options, threads_option)



def _numbered(path: str, number: int) -> str:
    """``fig.png`` -> ``fig-3.png``: one file per sentence when several are shown."""
    stem, ext = os.path.splitext(path)
    return f"{stem}-{number}{ext}"


@contextlib.contextmanager
def _writing(path: str):
    """Report a failed figure write (full disk, no permission) in one line."""
    try:
        yield
    except OSError as err:
        raise OnparseError(f"cannot write {path}: {err.strerror or err}") from None


def _inputs(model_paths, gold_spec):
    """What ``show`` reads, as (description, path) pairs: a figure must not land on them."""
    from ..files.pretrained import resolve

    pairs = [("model file", resolve(path)) for path in (model_paths or [None])]
    if gold_spec and os.path.isfile(gold_spec):
        pairs.append(("gold file", gold_spec))
    return pairs


def _wants_unicode(ascii_only: bool) -> bool:
    if ascii_only:
        return False
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        "│┌─█▁".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


@click.command("show")
@click.argument("sentence", nargs=-1)
@model_option
@members_options
@click.option("--gold", "gold_spec", default=None, metavar="TREE|FILE|SET:I[-J]",
              help="Gold tree(s) to show beside the induced one, with the sentence's F1: a bracketed "
                   "tree ('(S (NP (DT The) (NN cat)) (VP (VBD sat)))' or '((the cat) sat)'), a file "
                   "of trees (one per sentence, in order), or sentences of a gold set such as "
                   "wsj10:3 or wsj10:3-5.  Without SENTENCE the gold trees' words are parsed.")
@click.option("--ptb-root", type=click.Path(exists=True, file_okay=False), envvar=PTB_ROOT_ENV,
              show_envvar=True, default=None,
              help="LDC treebank folder parsed/mrg/wsj, for --gold wsj-test:I and the full WSJ.")
@click.option("--out", "-o", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Also save the picture as a figure; the format follows the extension (.png, .svg, .pdf), "
                   "as for plot-log -o (needs matplotlib: pip install 'onparse[plot]').")
@click.option("--png", "png_path", type=click.Path(dir_okay=False), default=None, hidden=True,
              help="Deprecated: --out FILE.png.")
@click.option("--svg", "svg_path", type=click.Path(dir_okay=False), default=None, hidden=True,
              help="Deprecated: --out FILE.svg.")
@click.option("--ascii", "ascii_only", is_flag=True,
              help="Draw with ASCII characters only [default: Unicode when the terminal can show it].")
@click.option("--height", default=1, show_default=True, type=click.IntRange(1, 8),
              help="Lines per layer in the terminal bar chart (more lines, finer bars).")
@click.option("--scale", type=click.Choice(SCALES), default="layer", show_default=True,
              help="layer: each layer's bars span its smallest..largest value in the sentence "
                   "(shows the ranking the decoder uses; figures zoom each panel likewise); "
                   "unit: bars span 0..1.")
@pretokenized_option
@punct_option
@sentences_options(output="Each sentence is drawn on its own (and numbered as one in figure names); not with --gold.")
@device_option
@threads_option(apply=True)
@force_option
@line_limit_option
def show_command(sentence, model_paths, no_verify, layer, decoder, voter, ties, reading, gold_spec, ptb_root, out_path, png_path,
                 svg_path, ascii_only, height, scale, pretokenized, punct, split_sentences, punkt, device, force,
                 max_line_bytes):
    """Draw the tree a model induces for SENTENCE, with the distance of every word.

    Prints the induced tree (brackets and a drawing) and under its words, as a bar chart, what
    the tree was built from: a language model's number per word (master-forget distance d_f,
    docs/glossary.md) in every layer (* marks the decoded layer), or for a student or a grammar
    the size of the split before each word.
    SENTENCE is the words (quoted or not); `-` reads one sentence per line from standard
    input.  With --out the same picture is saved as a figure (tree, one bar panel per layer);
    with several sentences each gets its own file, numbered: fig-1.png, fig-2.png ...
    In a terminal (or with $COLUMNS set), a drawing wider than it gives way to a compact
    form: the trees in brackets, wrapped, and one line of bars per word.

    \b
    onparse show "the cat sat on the mat" --model lm.pt
    onparse show --model lm.pt --gold wsj10:3 -o wsj10-3.png
    onparse show the cat sat --model lm.pt --gold "((the cat) sat)" --decode split
    cat sentences.txt | onparse show - --model lm.pt -o figs/sentence.svg
    """
    from .. import read_gold
    from ..pictures.show import views_from_lines
    from ..pictures.show import render_view

    inputs = _inputs(model_paths, gold_spec)
    figures = _figure_targets(out_path, png_path, svg_path, inputs, force)
    golds = read_gold(gold_spec, ptb_root, max_line_bytes) if gold_spec else None
    from_stdin = list(sentence) == ["-"]
    lines = _lines_to_show(sentence, golds, from_stdin, max_line_bytes)
    if golds is not None and (split_sentences or punkt):
        raise click.UsageError("--split-sentences splits raw text; gold trees are already one sentence each")
    several = from_stdin or len(lines) > 1 or split_sentences or punkt is not None

    parser = load_parser(model_paths, device, layer, decoder, voter=voter, ties=ties, no_verify=no_verify,
                         reading=reading)
    splitter = sentence_splitter(split_sentences, punkt, parser, model_name(model_paths), "-" if from_stdin else "")
    from ..text.sentences import ParagraphCheck, sentences_of

    paragraphs = None if golds or splitter else ParagraphCheck()
    lines = sentences_of(lines, splitter, paragraphs)
    unicode = _wants_unicode(ascii_only)
    width = _terminal_width()
    caption = f"model: {model_name(model_paths)}" + (f"  ·  gold: {gold_spec}" if gold_spec and len(gold_spec) < 60 else "")
    first = True
    # Gold trees are in the treebank's tokens: read their words as given.
    for number, view in views_from_lines(lines, parser, golds=golds, tokenize=not (pretokenized or golds),
                                         punct=punct):
        if view is None:
            click.echo(f"{'sentence' if splitter else 'line'} {number}: no words to parse (empty or only punctuation)",
                       err=True)
            continue
        if not first:
            click.echo("")
        first = False
        click.echo(render_view(view, unicode=unicode, height=height, scale=scale, width=width))
        sys.stdout.flush()
        for path, fmt, option in figures:
            from ..pictures.sentence_figure import plot_sentence

            target = _numbered(path, number) if several else path
            refuse_overwrite(target, option, inputs)
            refuse_model(target, option, force)
            with _writing(target):
                plot_sentence(view, target, caption, fmt=fmt, scale=scale)
            click.echo(f"wrote {target}", err=True)
    if paragraphs is not None:
        paragraphs.tell(lambda note: click.echo(note, err=True))


def _figure_targets(out_path, png_path, svg_path, inputs, force):
    """``(path, format, option)`` of each figure asked for, checked before any work: a known
    extension, matplotlib installed, no input or model overwritten."""
    figures = [(path, fmt, option) for path, fmt, option in
               ((out_path, None, "--out"), (png_path, "png", "--png"), (svg_path, "svg", "--svg")) if path]
    for _, fmt, option in figures[1 if out_path else 0:]:       # the former spellings, still written
        click.echo(f"note: {option} is deprecated here: use --out FILE.{fmt}", err=True)
    if out_path:
        from ..pictures.figures import check_output_path

        check_output_path(out_path)       # an extension no figure has: an error before any work
    if figures:
        from ..pictures.figures import require_matplotlib

        require_matplotlib()  # before the model is loaded: fail fast
    for path, _, option in figures:
        refuse_overwrite(path, option, inputs)
        refuse_model(path, option, force)
    return figures


def _lines_to_show(sentence, golds, from_stdin: bool, max_line_bytes: int):
    """The lines ``show`` draws: standard input's, the SENTENCE's words, or the gold trees' words."""
    from ..induce import read_lines

    if from_stdin:
        lines = read_lines("-", max_line_bytes=max_line_bytes)
    elif sentence:
        lines = [" ".join(sentence)]
    elif golds:
        lines = [" ".join(g.words) for g in golds]
    else:
        raise click.UsageError("nothing to show: give a SENTENCE, - for standard input, or --gold")
    if golds is not None and not from_stdin and len(golds) != len(lines):
        raise OnparseError(f"--gold gave {len(golds)} trees for {len(lines)} sentence(s)")
    return lines


def _terminal_width():
    """Columns of the terminal the drawing goes to ($COLUMNS first, as shutil reads it), or None
    (no limit) when standard output is a file or a pipe and $COLUMNS is not set."""
    isatty = getattr(sys.stdout, "isatty", None)
    if os.environ.get("COLUMNS") or (isatty is not None and isatty()):
        return shutil.get_terminal_size().columns
    return None


@click.command("plot-log")
@click.argument("log", type=click.Path(exists=True))
@click.option("--out", "-o", "out", type=click.Path(dir_okay=False), default=None,
              help="Figure file; the format follows the extension (.png, .svg, .pdf) "
                   "[default: training-curves.png beside the log].")
@force_option
@line_limit_option
def plot_log_command(log, out, force, max_line_bytes):
    """Draw the training curves of a run: loss and validation perplexity per epoch.

    LOG is the metrics.jsonl that `onparse train` writes, or the run folder holding it.
    The best epoch is starred, the switch to averaged SGD is a dotted line and the test
    perplexity (when measured) a dashed one.  Prints the path of the figure.

    \b
    onparse plot-log runs/small --out curves.png
    onparse plot-log runs/small/metrics.jsonl --out curves.svg
    """
    from ..pictures.figures import check_output_path, plot_training_log, require_matplotlib, training_curves_path

    require_matplotlib()
    out = training_curves_path(log) if out is None else out
    check_output_path(out)
    refuse_model(out, "--out", force)
    with _writing(out):
        click.echo(plot_training_log(log, out, max_line_bytes))


# --- hooks for `onparse eval --plots DIR` (the command lives in cli/scoring.py) ---------------


def plots_option(func):
    """The ``--plots DIR`` option of ``onparse eval`` (the value arrives as ``plots``)."""
    return click.option(
        "--plots", "plots", type=click.Path(file_okay=False), default=None, metavar="DIR",
        help="Also save figures into DIR, as PNG and SVG: sentence F1 by sentence length and recall "
             "per gold label, against the right-/left-branching and random baselines "
             "(needs matplotlib: pip install 'onparse[plot]').")(func)


def check_plots(plots) -> None:
    """Fail before any work when ``--plots`` is given but matplotlib is missing."""
    if plots:
        from ..pictures.figures import require_matplotlib

        require_matplotlib()


def write_eval_plots(plots, result, gold_set, model_name: str) -> list:
    """Draw the evaluation figures of ``result`` (an SpanMetric over ``gold_set``) into the
    folder ``plots`` (nothing when it is None); report each file on stderr."""
    if not plots:
        return []
    from ..pictures.figures import plot_eval_with_baselines

    with _writing(plots):
        paths = plot_eval_with_baselines(result, gold_set, plots, model_name)
    for path in paths:
        click.echo(f"wrote {path}", err=True)
    return paths


def register(group: click.Group) -> None:
    """Add ``show`` and ``plot-log`` to the ``onparse`` command group."""
    group.add_command(show_command)
    group.add_command(plot_log_command)

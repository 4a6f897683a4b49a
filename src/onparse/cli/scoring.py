"""``onparse eval`` and ``onparse baseline``: thin shells over :mod:`onparse.metrics`,
:mod:`onparse.treebank` and :mod:`onparse.baselines`."""
from __future__ import annotations

import json
import sys
from typing import Optional

import click

from ..errors import OnparseError
from .figures import check_plots, plots_option, write_eval_plots
from ..treebank import GOLD_NAMES, PTB_ROOT_ENV, is_gold_spec


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


def gold_option(func):
    """``--gold`` and ``--ptb-root``, shared by every command that scores against gold."""
    func = click.option(
        "--ptb-root",
        type=click.Path(exists=True, file_okay=False),
        envvar=PTB_ROOT_ENV,
        show_envvar=True,
        default=None,
        help="LDC treebank folder parsed/mrg/wsj (00/wsj_0001.mrg ...): wsj10 and wsj then use "
        "every section, wsj-test is section 23, wsj-valid section 22.  "
        "Without it, wsj10/wsj come from NLTK's 3,914-sentence sample.",
    )(func)
    func = click.option(
        "--gold",
        type=GoldSpec(),
        default="wsj10",
        show_default=True,
        help=f"Gold trees: {', '.join(GOLD_NAMES)}, a file of bracketed trees (one per line "
        "or multi-line .mrg) or a folder of .mrg files.",
    )(func)
    return func


def report_options(func):
    """``--json`` and ``--per-sentence``: how a score report is written."""
    func = click.option(
        "--per-sentence",
        "per_sentence",
        type=click.Path(dir_okay=False, writable=True, allow_dash=True),
        default=None,
        help="Also write one JSON object per sentence (scores, trees) to this file, for error analysis.",
    )(func)
    func = click.option(
        "--json", "as_json", is_flag=True, help="Print the report as JSON (scores as fractions in [0, 1])."
    )(func)
    return func


def emit_report(result, as_json: bool, per_sentence: Optional[str]) -> None:
    """Print an :class:`onparse.metrics.EvalResult` (table or JSON) and write per-sentence records."""
    from ..metrics import write_per_sentence

    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        click.echo(result.format_table())
    if per_sentence:
        if per_sentence == "-":
            write_per_sentence(result, sys.stdout)
            return
        try:
            with open(per_sentence, "w", encoding="utf-8") as stream:
                write_per_sentence(result, stream)
        except OSError as err:
            raise OnparseError(f"cannot write {per_sentence}: {err.strerror}") from None


def read_input(path: str):
    """``(source name, text)`` of a file, or of stdin for ``-``; undecodable bytes become U+FFFD."""
    if path == "-":
        stream = click.get_binary_stream("stdin")
        return "stdin", stream.read().decode("utf-8", errors="replace")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return path, handle.read()
    except OSError as err:
        raise OnparseError(f"cannot read {path}: {err.strerror}") from None


@click.command("eval")
@gold_option
@report_options
@plots_option
@click.argument("pred", type=click.Path(exists=True, dir_okay=False, allow_dash=True), default="-")
def eval_command(gold, ptb_root, as_json, per_sentence, plots, pred):
    """Score predicted trees against gold trees.

    PRED is a file (or - for stdin, the default) with one bracketed tree per line, in gold
    order, labelled or not: ((the cat) sat) and (S (NP (DT the) (NN cat)) (VBD sat)) both
    work.  Words are compared with the gold tokens after the same normalisation (lowercase,
    digits -> N); punctuation must already be removed.  Any malformed tree, count or word
    mismatch is an error naming the first bad line, and nothing is scored.

    Reports sentence F1 (ON-LSTM and Kim et al. conventions), corpus F1 and EVALB-style
    corpus F1 with their precision and recall, recall per gold label, average depths and
    sentence counts.

    \b
    onparse eval --gold wsj10 trees.txt
    onparse baseline --gold wsj10 --kind right | onparse eval --gold wsj10 -
    """
    from ..metrics import score_text
    from ..treebank import load_gold

    check_plots(plots)  # a missing matplotlib fails before any work
    gold_set = load_gold(gold, ptb_root)
    source, text = read_input(pred)
    result = score_text(text, gold_set, source=source)
    emit_report(result, as_json, per_sentence)
    write_eval_plots(plots, result, gold_set, source)


@click.command("baseline")
@gold_option
@click.option(
    "--kind",
    type=click.Choice(["right", "left", "balanced", "random"]),
    required=True,
    help="right/left-branching, balanced (middle split), or random (uniform split points).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random baseline.")
@click.option("--score", is_flag=True, help="Score the trees against the gold (same report as eval) instead of printing them.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["brackets", "ptb"]),
    default="brackets",
    show_default=True,
    help="How trees are printed: ((the cat) sat), or PTB with placeholder labels (X, W) for EVALB/nltk.",
)
@report_options
def baseline_command(gold, ptb_root, kind, seed, score, fmt, as_json, per_sentence):
    """Build baseline trees over the gold sentences: print them one per line, or --score them.

    The trees are over the gold tokens (lowercased, digits -> N, punctuation removed).

    \b
    onparse baseline --gold wsj10 --kind right > right.txt
    onparse baseline --gold wsj --kind random --seed 3 --score --json
    """
    from ..baselines import baseline_trees
    from ..metrics import evaluate
    from ..treebank import load_gold
    from ..trees import to_brackets, to_ptb

    if (as_json or per_sentence) and not score:
        raise click.UsageError("--json and --per-sentence go with --score")
    gold_set = load_gold(gold, ptb_root)
    trees = baseline_trees(gold_set.tokens, kind, seed)
    if score:
        emit_report(evaluate(trees, gold_set, check_tokens=False), as_json, per_sentence)
        return
    write = to_ptb if fmt == "ptb" else to_brackets
    sys.stdout.write("".join(write(tree) + "\n" for tree in trees))
    sys.stdout.flush()


def register(group: click.Group) -> None:
    """Add ``eval`` and ``baseline`` to the ``onparse`` command group."""
    group.add_command(eval_command)
    group.add_command(baseline_command)

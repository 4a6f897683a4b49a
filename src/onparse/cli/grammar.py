"""``onparse grammar``: look at a grammar itself -- its most probable rules, each preterminal's
most probable words, and sentences sampled from it (:meth:`onparse.kinds.ParsingModel.grammar_report`).

A thin command: torch is imported only when it runs.  A model that is not a grammar (nor a
bundle holding one) is a one-line error, exit 1.  The work is bounded: ``--rules`` lists at
most :data:`onparse.grammar.config.MOST_RULES` rules (a note on stderr says when that cut the
list), and sampling stops after a budget of draws; then the report is printed with the
sentences drawn, and one line says sampling gave up (exit 1).
"""
import click

from .. import OnparseError
from ..files.safeio import dumps
from .common import INT_MAX, SEED_RANGE, device_option, load_parser, model_name, model_option, threads_option

#: The longest sampled sentence ``--max-length`` allows (what the sampler's recursion takes).
MAX_SAMPLE_LENGTH = 500


@click.command("grammar")
@model_option(help_text="The grammar to show: a grammar file of `onparse train --family grammar` (or its run "
                        "folder), or a bundle holding one (its first grammar is shown) [default: the model "
                        "bundled with onparse].")
@click.option("--rules", "n_rules", type=click.IntRange(0, INT_MAX), default=20, show_default=True,
              help="How many of the most probable binary rules A -> B C to print (and of start rules S -> A); "
                   "at most the rules the grammar has, and at most a bound that keeps memory small (a note "
                   "says when it cut the list; docs/pcfg.md).")
@click.option("--words", "n_words", type=click.IntRange(0, INT_MAX), default=5, show_default=True,
              help="How many of each preterminal's most probable words to print.")
@click.option("--sample", "n_samples", type=click.IntRange(0, 100_000), default=5, show_default=True,
              help="How many sentences to sample from the grammar, each with its tree.")
@click.option("--seed", type=SEED_RANGE, default=0, show_default=True,
              help="Seed of the sampler: the same seed gives the same sentences.")
@click.option("--max-length", type=click.IntRange(2, MAX_SAMPLE_LENGTH), default=30, show_default=True,
              help="Longest sampled sentence, in words (longer draws are redrawn: the samples follow the "
                   "grammar conditioned on this length; sampling gives up after a budget of draws).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@device_option
@threads_option(apply=True)
def grammar_command(model_paths, no_verify, n_rules, n_words, n_samples, seed, max_length, as_json, device):
    """Show a grammar: its most probable rules, the words of each preterminal, and sentences
    sampled from it with their trees.

    Symbols are named as `onparse induce --format ptb` names them: NT-k for nonterminals, PT-k
    for preterminals (docs/glossary.md).  Rules are ranked by their probability T[A, B, C] = P(B C | A), best first
    over every parent; the start rules S -> A by P(A).

    \b
    onparse grammar -m runs/g/best.pt
    onparse grammar -m runs/g/best.pt --rules 50 --words 10 --sample 0
    onparse grammar -m runs/g/best.pt --sample 20 --seed 3 --max-length 15 --json
    """
    if len(model_paths) > 1:
        raise click.UsageError("onparse grammar shows one model file at a time")
    parser = load_parser(model_paths, device, no_verify=no_verify)
    name = model_name(model_paths)
    names = [name] if len(parser.models) == 1 else [f"{name} (model {k + 1})" for k in range(len(parser.models))]
    options = dict(rules=n_rules, words=n_words, samples=n_samples, seed=seed, max_length=max_length)
    found = None
    for model, called in zip(parser.models, names):          # a bundle: its first grammar
        try:                                                  # cheap: the start rules only
            model.grammar_report(called, rules=0, words=0, samples=0, seed=seed, max_length=max_length)
        except OnparseError:
            if len(parser.models) == 1:
                raise
            continue
        found = (model, called)
        break
    if found is None:
        raise OnparseError(f"{name} holds no grammar: none of its {len(parser.models)} models has grammar rules "
                           "to show (onparse train --family grammar writes grammars)")
    model, called = found
    report = model.grammar_report(called, **options)
    click.echo(dumps(report, indent=2) if as_json else format_report(report))
    for note in report.get("notes", []):
        click.echo(f"note: {note}", err=True)
    if report.get("gave_up"):
        raise OnparseError(report["gave_up"])


def format_report(report: dict) -> str:
    """The text form of a grammar report (:meth:`onparse.kinds.ParsingModel.grammar_report`):
    sizes, start rules, binary rules (``NT-3 -> NT-7 PT-12  0.231``), words per preterminal and
    the samples, each a sentence line and its tree."""
    sizes = report["sizes"]
    lines = [f"grammar {report['model']}: {sizes['nonterminals']} nonterminals, {sizes['preterminals']} "
             f"preterminals, {_form(sizes)}, vocabulary {sizes['vocabulary']:,}"]
    if report["start"]:
        lines += ["", "most probable start rules (S -> A, P(A)):"]
        lines += [f"  S -> {r['symbol']}  {r['probability']:.3f}" for r in report["start"]]
    if report["rules"]:
        count = report.get("rule_count")
        of = f"; {len(report['rules']):,} of {count:,}" if count else ""
        lines += ["", f"most probable binary rules (A -> B C, P(B C | A){of}):"]
        lines += [f"  {r['parent']} -> {r['left']} {r['right']}  {r['probability']:.3f}" for r in report["rules"]]
    if report["words"]:
        lines += ["", "most probable words of each preterminal (P(word | PT)):"]
        lines += [f"  {row['symbol']}: " + ", ".join(f"{w['word']} {w['probability']:.3f}" for w in row["words"])
                  for row in report["words"]]
    if report["samples"]:
        lines += ["", f"sentences sampled from the grammar (seed {report['seed']}, at most "
                      f"{report['max_length']} words):"]
        for k, sample in enumerate(report["samples"], 1):
            lines += [f"{k:>3}. {' '.join(sample['words'])}", f"     {sample['tree']}"]
    return "\n".join(lines)


def register(group: click.Group) -> None:
    """Add ``grammar`` to the ``onparse`` command group."""
    group.add_command(grammar_command)


def _form(sizes) -> str:
    """The binary rules' form in words: ``rank 64`` (low rank), ``simple rules`` or ``full rules``."""
    form = sizes.get("rule_form", "low_rank")
    return f"rank {sizes['rank']}" if form == "low_rank" else f"{form} rules"

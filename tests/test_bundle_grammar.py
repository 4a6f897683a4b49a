"""A bundle that carries a grammar beside its members: `onparse grammar` shows it, with no -m
pointing at the grammar itself, but it names no spans: a tree's labels come from the models its
members read (induce --format ptb, eval --labels name an average's spans when a grammar is among
its members, as in the bundled model's accurate reading)."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from conftest import save_tiny_checkpoint
from onparse.api import load
from onparse.cli import main
from test_agreement import save_chain_grammar

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat on a mat dog barked".split()
LINES = ["the cat sat on a mat", "a dog barked", "the dog sat"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """A language model's member beside a grammar that no member reads, saved as one bundle."""
    folder = tmp_path_factory.mktemp("bundle")
    _, _, lm = save_tiny_checkpoint(folder / "lm.pt", WORDS, seed=1)
    grammar = save_chain_grammar(folder / "g.pt", WORDS)
    both = load([lm, grammar], "cpu")
    lm_only = both.with_members([m for m in both.members if m.model == 0])
    path = folder / "bundle.pt"
    lm_only.save_bundle(path, weights="float32", carry=[1])
    return str(path), lm, grammar


def test_a_grammar_no_member_reads_labels_no_trees(bundle, monkeypatch):
    """The bundle's trees are its language model's, written with X as the language model alone
    writes them: the grammar it carries is neither asked for labels nor built."""
    from onparse.grammar.kind import Grammar
    from onparse.induce import tree_labels

    path, lm, grammar = bundle
    parser = load(path, "cpu")
    assert len(parser.models) == 2 and {m.model for m in parser.members} == {0}
    calls = []
    monkeypatch.setattr(Grammar, "labels", lambda *a, **k: calls.append(1))
    result = CliRunner().invoke(main, ["induce", "-", "-m", path, "--format", "ptb"], input="\n".join(LINES) + "\n")
    assert result.exit_code == 0, result.output
    alone = CliRunner().invoke(main, ["induce", "-", "-m", lm, "--format", "ptb"], input="\n".join(LINES) + "\n")
    assert result.stdout == alone.stdout and len(alone.stdout.splitlines()) == 3
    tokens = [line.split() for line in LINES]
    assert tree_labels(parser, tokens, parser.trees(tokens)) is None and not parser.models[1].built
    assert "NT-" not in result.stdout and calls == []


def test_grammar_shows_the_grammar_a_bundle_carries(bundle):
    path, _, grammar = bundle
    shown = CliRunner().invoke(main, ["grammar", "-m", path, "--sample", "0", "--rules", "2"])
    direct = CliRunner().invoke(main, ["grammar", "-m", grammar, "--sample", "0", "--rules", "2"])
    assert shown.exit_code == 0 and direct.exit_code == 0, shown.output + direct.output
    assert shown.stdout.splitlines()[1:] == direct.stdout.splitlines()[1:]     # all but the file's name


def test_info_says_what_each_model_no_member_reads_is_for(bundle, tmp_path):
    """A language model a bundle keeps gives distances; a grammar is what ``onparse grammar``
    shows (it names no spans: no member reads it): ``info`` says which does what (it said 'gives
    distances' of every model no member reads)."""
    from onparse.files.describe import describe_file

    path, lm, grammar = bundle
    lines = describe_file(path).splitlines()
    assert lines[1].endswith("a bundle of 2 models whose trees are one member's "
                             "(model 2 shows its rules (onparse grammar))"), lines[1]
    assert "member: layer 2 onlstm (model 1; model 2 shows its rules (onparse grammar))" in lines
    # A member between two kept models of different uses; and two language models grouped.
    three = load([lm, lm, grammar, lm], "cpu")
    mixed = tmp_path / "mixed.pt"
    three.with_members([three.members[2]]).save_bundle(str(mixed), carry=[0, 1, 3], weights="float32")
    assert "member: the grammar (model 3; models 1-2 give distances only, model 4 gives distances only)" in \
        describe_file(str(mixed)).splitlines()


def test_an_average_beside_a_grammar_is_scored_with_its_symbols(bundle, tmp_path):
    """The bundled model averages a student and grammars: eval --labels (and --json) names the
    average's spans as induce --format ptb does, and info says what the model no member reads is
    for beside the average."""
    import json

    from onparse.files.describe import describe_file

    path, lm, grammar = bundle
    both = load([lm, grammar, lm], "cpu")
    averaged = tmp_path / "averaged.pt"
    both.with_members(both.members[:2], ["right"], "first").save_bundle(str(averaged), carry=[2], weights="float32")
    assert describe_file(str(averaged)).splitlines()[1].endswith(
        "a bundle of 3 models whose trees are averaged over 2 members and 1 voter (model 3 gives distances only)")
    gold = tmp_path / "gold.txt"
    gold.write_text("((the cat) (sat (on (a mat))))\n((a dog) barked)\n((the dog) sat)\n")
    shown = CliRunner().invoke(main, ["eval", "--gold", str(gold), "-m", str(averaged), "--labels"])
    assert shown.exit_code == 0, shown.output
    assert "induced symbols against gold labels" in shown.stdout and "no symbols" not in shown.stderr
    records = json.loads(CliRunner().invoke(main, ["eval", "--gold", str(gold), "-m", str(averaged),
                                                   "--json"]).stdout)
    average = records[-1]
    assert "average_of" in average and average["symbols"]
    assert sum(s["spans"] for s in average["symbols"]) == average["pred_spans"]
    # The same symbols as its --format ptb trees scored as labelled predictions.
    ptb = CliRunner().invoke(main, ["induce", "-", "-m", str(averaged), "--format", "ptb"],
                             input="\n".join(LINES) + "\n").stdout
    piped = json.loads(CliRunner().invoke(main, ["eval", "--gold", str(gold), "-", "--json"], input=ptb).stdout)
    assert piped["symbols"] == average["symbols"]
    # Beside a baseline too (it was a traceback): the average's row keeps its symbols.
    beside = CliRunner().invoke(main, ["eval", "--gold", str(gold), "-m", str(averaged), "--json",
                                       "--baseline", "right", "--labels"])
    assert beside.exit_code == 0, beside.output
    rows = json.loads(beside.stdout)
    assert rows[-1]["baseline"] == "right" and rows[-2]["symbols"] == average["symbols"]
    assert "no symbols" not in beside.stderr          # the average has them, beside the baseline too


def test_an_average_no_grammar_names_says_it_has_no_symbols(bundle, tmp_path):
    _, lm, _ = bundle
    gold = tmp_path / "gold.txt"
    gold.write_text("((the cat) (sat (on (a mat))))\n((a dog) barked)\n((the dog) sat)\n")
    shown = CliRunner().invoke(main, ["eval", "--gold", str(gold), "-m", lm, "-m", lm, "--labels"])
    assert shown.exit_code == 0, shown.output
    assert "induced symbols" not in shown.stdout and "(an average), which have no symbols" in shown.stderr

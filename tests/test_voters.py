"""Voters and tie rules from the command line: --voter, --ties, bundles that carry them, info."""
import json

import pytest
from click.testing import CliRunner

from onparse.trees.baselines import left_branching, right_branching
from onparse.cli import main
from onparse.induce import format_tree

from conftest import expected_tree, save_tiny_checkpoint

WORDS = "the cat sat down on a mat dog barked N times and then it was quiet".split()
LINES = ["the cat sat down on a mat", "a dog barked N times and then it was quiet", "quiet"]


def invoke(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    model, vocab, path = save_tiny_checkpoint(tmp_path_factory.mktemp("voters") / "m.pt", WORDS, seed=3)
    return model, vocab, path


def test_two_right_voters_outvote_one_member(checkpoint):
    _, _, path = checkpoint
    got = invoke("induce", "-", "-m", path, "--voter", "right", "--voter", "right", input="\n".join(LINES) + "\n")
    assert got.exit_code == 0, got.output
    assert got.stdout.splitlines() == [format_tree(right_branching(line.split()), "brackets") for line in LINES]


def test_without_voters_the_member_tree_and_ties_need_an_average(checkpoint):
    model, vocab, path = checkpoint
    plain = invoke("induce", "-", "-m", path, "--ties", "right", input=LINES[0] + "\n")
    assert plain.stdout.strip() == format_tree(expected_tree(model, vocab, LINES[0].split()), "brackets")


def test_bad_voter_and_tie_rule_are_usage_errors(checkpoint):
    for args in (["--voter", "up"], ["--ties", "middle"]):
        got = invoke("induce", "-", "-m", checkpoint[2], *args, input="a b\n")
        assert got.exit_code == 2 and "Invalid value" in got.output


def test_eval_reports_voters_and_agreement_bundles_them(checkpoint, tmp_path):
    _, _, path = checkpoint
    gold = tmp_path / "gold.txt"
    gold.write_text("((the cat) (sat down))\n(a (dog barked))\n")
    got = invoke("eval", "--gold", str(gold), "-m", path, "--voter", "right", "--ties", "right", "--json")
    assert got.exit_code == 0, got.output
    records = json.loads(got.stdout)
    assert records[-1]["voters"] == ["right"] and records[-1]["ties"] == "right"
    text = tmp_path / "text.txt"
    text.write_text("\n".join(LINES * 5) + "\n")
    bundle = tmp_path / "voted.pt"
    made = invoke("agreement", str(text), "-m", path, "--layer", "2,3", "--voter", "right", "--ties", "right",
                  "--bundle", str(bundle), "--weights", "float32")
    assert made.exit_code == 0, made.output
    info = invoke("info", "-m", str(bundle))
    assert "voters: right-branching tree\n" in info.stdout
    assert "ties: right (the most right-branching of the tied trees)\n" in info.stdout
    as_json = json.loads(invoke("info", "-m", str(bundle), "--json").stdout)
    assert (as_json["voters"], as_json["ties"]) == (["right"], "right")
    # The bundle's voters apply when nothing else is asked; --voter and --ties override them.
    induced = invoke("induce", "-", "-m", str(bundle), input=LINES[1] + "\n").stdout.strip()
    overridden = invoke("induce", "-", "-m", str(bundle), "--voter", "left", "--voter", "left",
                        input=LINES[1] + "\n").stdout.strip()
    assert overridden == format_tree(left_branching(LINES[1].split()), "brackets") != induced



def test_agreement_shows_progress_on_stderr_unless_quiet(checkpoint, tmp_path, monkeypatch):
    import onparse.progress as progress

    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    text = tmp_path / "text.txt"
    text.write_text("\n".join(LINES * 3) + "\n")
    loud = invoke("agreement", str(text), "-m", checkpoint[2], "--layer", "2,3")
    assert loud.exit_code == 0, loud.output
    assert "agreement: 6 of 6 sentences (100%)" in loud.stderr
    quiet = invoke("agreement", str(text), "-m", checkpoint[2], "--layer", "2,3", "--quiet")
    assert quiet.stdout == loud.stdout and "agreement: " not in quiet.stderr

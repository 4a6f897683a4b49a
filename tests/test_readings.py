"""Named readings of a bundle (files/readings.py): several ways to make its trees from its models,
one of them the default; chosen by name in the API and with --reading on the command line; the
models a reading does not read are built on first use only."""
from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from conftest import save_tiny_checkpoint
from onparse import OnparseError, load
from onparse.cli import main
from onparse.files.bundle import load_model_file
from onparse.files.checkpoint import read_file, write_atomically
from onparse.files.readings import DEFAULT_READING, ReadingError
from test_agreement import save_chain_grammar
from test_info import _student_file

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat on a mat dog barked".split()
LINES = ["the cat sat on a mat", "a dog barked", "the dog sat on the cat", "a cat"]
TOKENS = [line.split() for line in LINES]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_bundles(tmp_path_factory.mktemp("readings"))


def write_bundles(folder):
    """A language model (kept for distances), a student and a grammar; a bundle of them with two
    readings: ``fast``, the student alone (the default), and ``accurate``, the student and the
    grammar averaged with a right-branching voter; and ``old``, the accurate one alone, as a
    bundle was written before readings."""
    _, vocab, lm = save_tiny_checkpoint(folder / "lm.pt", WORDS, seed=1)
    student = str(_student_file(folder / "student.pt", vocab.to_list()))
    grammar = save_chain_grammar(folder / "g.pt", WORDS)
    every = load([lm, student, grammar], "cpu")
    fast = every.with_members([every.members[1]])
    accurate = every.with_members([every.members[1], every.members[2]], ["right"], "first")
    bundle = folder / "bundle.pt"
    every.save_bundle(str(bundle), weights="float32", carry=[0], readings={"fast": fast, "accurate": accurate},
                      metadata={"readings_metrics": {"fast": {"sentences_per_s": 812.5, "dev_f1": 0.5931},
                                                     "accurate": {"sentences_per_s": 201.0, "dev_f1": 0.5958,
                                                                  "test_f1": 0.596}}})
    old = folder / "old.pt"                      # a bundle as written before readings
    accurate.save_bundle(str(old), weights="float32", carry=[0])
    return {"lm": lm, "student": student, "grammar": grammar, "bundle": str(bundle), "old": str(old),
            "by_hand": {"fast": fast, "accurate": accurate}}


def test_the_file_holds_its_readings_and_its_own_members_are_the_defaults(files):
    blob = load_model_file(files["bundle"])
    assert blob["default_reading"] == "fast" and list(blob["readings"]) == ["fast", "accurate"]
    # Model 1 is the language model (carried), 2 the student, 3 the grammar: as saved.
    assert blob["readings"]["accurate"] == {"members": [{"model": 1, "layer": 1, "decoder": "cyk"},
                                                         {"model": 2, "layer": 1, "decoder": "mbr"}],
                                            "voters": ["right"], "ties": "first"}
    assert blob["members"] == blob["readings"]["fast"]["members"] and blob["voters"] == [] and blob["version"] == 1


def test_each_reading_gives_the_trees_of_the_parser_built_by_hand(files):
    for name, by_hand in files["by_hand"].items():
        parser = load(files["bundle"], "cpu", reading=name)
        assert parser.reading == name
        assert (parser.voters, parser.ties) == (by_hand.voters, by_hand.ties)
        assert [m.to_dict() for m in parser.members] == [m.to_dict() for m in by_hand.members]
        assert parser.trees(TOKENS) == by_hand.trees(TOKENS)
    assert files["by_hand"]["fast"].trees(TOKENS) != files["by_hand"]["accurate"].trees(TOKENS)


def test_no_reading_is_the_default_one(files):
    parser = load(files["bundle"], "cpu")
    assert parser.reading == "fast" and not parser.averages
    assert parser.trees(TOKENS) == files["by_hand"]["fast"].trees(TOKENS)
    # Overriding its members or voters makes another reading, nameless.
    assert load(files["bundle"], "cpu", voters=["right"]).reading is None
    assert load(files["bundle"], "cpu", voters=[]).reading == "fast"


def test_an_unknown_reading_is_one_line_naming_the_readings(files):
    with pytest.raises(ReadingError, match=r"bundle\.pt has no reading 'quick': its readings are fast, "
                                           r"accurate$") as caught:
        load(files["bundle"], "cpu", reading="quick")
    assert caught.value.names == ("fast", "accurate") and isinstance(caught.value, OnparseError)
    with pytest.raises(ReadingError, match="one model file's: give one file, not 2"):
        load([files["bundle"], files["lm"]], "cpu", reading="fast")


def test_a_file_without_readings_has_one_named_default(files):
    old = load(files["old"], "cpu")
    assert old.reading == DEFAULT_READING and old.averages
    assert old.trees(TOKENS) == files["by_hand"]["accurate"].trees(TOKENS)
    assert load(files["old"], "cpu", reading="default").trees(TOKENS) == old.trees(TOKENS)
    with pytest.raises(ReadingError, match=r"old\.pt names no readings: its one reading is 'default', not 'fast'"):
        load(files["old"], "cpu", reading="fast")
    assert load(files["student"], "cpu", reading="default").reading == "default"
    with pytest.raises(ReadingError, match="names no readings"):
        load(files["student"], "cpu", reading="fast")
    assert load([files["old"], files["lm"]], "cpu").reading is None


def test_a_reading_builds_only_the_models_it_reads(files, monkeypatch):
    """The fast reading of a three-model bundle builds the student alone; the language model is
    built when distances are asked for, the grammar when its labels are."""
    built = []

    def counting(real):
        def from_blob(cls, blob, path, device="cpu"):
            built.append(cls.kind)
            return real(blob, path, device)
        return classmethod(from_blob)

    lm_vocab = load(files["lm"], "cpu").vocab.to_list()
    for kind in {type(m) for m in load(files["bundle"], "cpu", reading="accurate").models}:
        monkeypatch.setattr(kind, "from_blob", counting(kind.from_blob))
    parser = load(files["bundle"], "cpu")
    assert built == ["student"] and [m.built for m in parser.models] == [False, True, False]
    assert parser.vocab.to_list() == lm_vocab                   # the first model's, though not built
    parser.trees(TOKENS)
    assert built == ["student"]
    assert parser.distances("the cat sat", layer=2).shape == (3,)
    assert built == ["student", "language model"]
    built.clear()
    load(files["bundle"], "cpu", reading="accurate")
    assert built == ["student", "grammar"]


def test_readings_survive_a_second_save_and_bad_ones_are_refused(files, tmp_path):
    fast = load(files["bundle"], "cpu")
    accurate = fast.with_members(files["by_hand"]["accurate"].members, ["right"], "first")
    again = tmp_path / "again.pt"
    fast.save_bundle(str(again), weights="float32", readings={"accurate": accurate, "fast": fast},
                     default_reading="fast", carry=[0])
    assert list(load_model_file(str(again))["readings"]) == ["accurate", "fast"]
    assert load(str(again), "cpu", reading="accurate").trees(TOKENS) == files["by_hand"]["accurate"].trees(TOKENS)
    with pytest.raises(OnparseError, match="default reading 'slow' is not one of accurate, fast"):
        fast.save_bundle(str(tmp_path / "x.pt"), readings={"accurate": accurate, "fast": fast}, default_reading="slow")
    with pytest.raises(OnparseError, match="bad reading name 'a b'"):
        fast.save_bundle(str(tmp_path / "x.pt"), readings={"a b": fast})
    with pytest.raises(OnparseError, match="over these models"):
        fast.save_bundle(str(tmp_path / "x.pt"), readings={"other": load(files["student"], "cpu")})


@pytest.mark.parametrize("change,message", [
    (lambda b: b.pop("default_reading"), "names its readings and its default reading together"),
    (lambda b: b.update(default_reading="slow"), "the default reading 'slow' is not one of its readings"),
    (lambda b: b.update(readings=[]), "bad readings"),
    (lambda b: b["readings"]["fast"].update(members=[]), "reading 'fast': no members"),
    (lambda b: b["readings"]["accurate"].update(voters=["up"]), "reading 'accurate': unknown voter 'up'"),
    (lambda b: b["readings"]["accurate"]["members"].append({"model": 7, "layer": 1, "decoder": "mbr"}),
     "reading 'accurate': a member reads model 8 of 3"),
    (lambda b: b["readings"]["fast"].update(weights=1), "reading 'fast': expected members"),
    (lambda b: b.update(members=b["readings"]["accurate"]["members"]), "not those of its default reading 'fast'"),
    (lambda b: b["readings"].update({"a b": b["readings"]["fast"]}), "bad reading name 'a b'"),
])
def test_a_malformed_reading_is_one_line(files, tmp_path, change, message):
    blob = read_file(files["bundle"])
    change(blob)
    broken = tmp_path / "broken.pt"
    write_atomically(str(broken), blob)
    with pytest.raises(OnparseError, match=message):
        load(str(broken), "cpu")
    result = CliRunner().invoke(main, ["info", "-m", str(broken)])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and message.split("'")[0] in result.stderr


# -- the command line: --reading on the commands that parse, and info -----------------------------

def _induce(*args, lines=LINES):
    return CliRunner().invoke(main, ["induce", "-", "--pretokenized", *args], input="\n".join(lines) + "\n")


def test_induce_reads_the_reading_asked_for(files):
    from onparse import to_brackets

    for name, by_hand in files["by_hand"].items():
        result = _induce("-m", files["bundle"], "--reading", name)
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == [to_brackets(t) for t in by_hand.trees(TOKENS)]
    default = _induce("-m", files["bundle"])
    assert default.stdout == _induce("-m", files["bundle"], "--reading", "fast").stdout


@pytest.mark.parametrize("command", [["induce", "-"], ["show", "the cat sat"], ["eval", "--gold", "wsj10"],
                                     ["agreement", "-"]])
def test_an_unknown_reading_is_a_usage_error_on_every_parsing_command(files, command):
    result = CliRunner().invoke(main, [*command, "-m", files["bundle"], "--reading", "quick"], input="a cat sat\n")
    assert result.exit_code == 2, result.output
    assert "Invalid value for --reading" in result.stderr
    assert "has no reading 'quick': its readings are fast, accurate" in result.stderr
    assert "Traceback" not in result.output


def test_reading_errors_of_the_command_line(files, tmp_path):
    several = _induce("-m", files["bundle"], "-m", files["lm"], "--reading", "fast")
    assert several.exit_code == 2 and "give one file, not 2" in several.stderr
    old = _induce("-m", files["old"], "--reading", "fast")
    assert old.exit_code == 2 and "names no readings: its one reading is 'default'" in old.stderr
    assert _induce("-m", files["old"], "--reading", "default").stdout == _induce("-m", files["old"]).stdout
    trees = tmp_path / "trees.txt"
    trees.write_text("((the cat) sat)\n")
    with_trees = CliRunner().invoke(main, ["eval", "--gold", "wsj10", str(trees), "--reading", "fast"])
    assert with_trees.exit_code == 2 and "--reading goes with a model, not with PRED" in with_trees.stderr


def test_info_lists_each_reading_with_its_figures(files):
    result = CliRunner().invoke(main, ["info", "-m", files["bundle"]])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].endswith("a bundle of 3 models read in 2 ways (readings): fast, the default, and accurate "
                             "(model 1 gives distances only)"), lines[1]
    at = lines.index("readings (choose one with --reading NAME):")
    assert lines[at + 1:at + 7] == [
        "  fast (the default): the student (model 2)",
        "    812 sentences a second on one CPU thread; sentence F1 59.3 on the WSJ sample's dev half, - on its "
        "test half",
        "    span labels: none, every constituent X (no grammar among its members)",
        "  accurate: average of 2 members (in tie-breaking order: model 2 student; model 3 grammar) + a "
        "right-branching voter; ties first (the first member decides)",
        "    201 sentences a second on one CPU thread; sentence F1 59.6 on the WSJ sample's dev half, 59.6 on its "
        "test half",
        "    span labels: a grammar's symbols (NT-12), model 3's"]
    assert not any(line.startswith(("members", "voters:", "ties:")) for line in lines)
    as_json = json.loads(CliRunner().invoke(main, ["info", "-m", files["bundle"], "--json"]).stdout)
    assert as_json["default_reading"] == "fast" and list(as_json["readings"]) == ["fast", "accurate"]
    # A bundle without readings is described as before: its members, voters and tie rule.
    old = CliRunner().invoke(main, ["info", "-m", files["old"]]).stdout.splitlines()
    assert "(readings)" not in old[1] and any(line.startswith("members (in tie-breaking order): ") for line in old)
    assert "readings" not in json.loads(CliRunner().invoke(main, ["info", "-m", files["old"], "--json"]).stdout)


def test_info_leaves_out_figures_of_unexpected_types(files, tmp_path):
    blob = read_file(files["bundle"])
    blob["metadata"]["readings_metrics"] = {"fast": {"sentences_per_s": "fast", "dev_f1": True}, "accurate": 3}
    odd = tmp_path / "odd.pt"
    write_atomically(str(odd), blob)
    lines = CliRunner().invoke(main, ["info", "-m", str(odd)]).stdout.splitlines()
    at = lines.index("readings (choose one with --reading NAME):")
    assert lines[at + 1] == "  fast (the default): the student (model 2)" and lines[at + 3].startswith("  accurate: ")
    blob["metadata"]["readings_metrics"] = ["fast"]
    write_atomically(str(odd), blob)
    assert "note: 1 part(s) of the metadata" in CliRunner().invoke(main, ["info", "-m", str(odd)]).stdout


def test_a_real_pipe_parses_with_the_reading_asked_for(files):
    """``onparse induce - --reading accurate`` in a process of its own, text piped in: the accurate
    reading's trees, one line per input line; an unknown reading exits 2 with one line."""
    import os
    import subprocess
    import sys

    from onparse import to_brackets

    command = [sys.executable, "-m", "onparse", "induce", "-", "-q", "--pretokenized", "-m", files["bundle"]]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command + ["--reading", "accurate"], input="\n".join(LINES) + "\n", capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [to_brackets(t) for t in files["by_hand"]["accurate"].trees(TOKENS)]
    bad = subprocess.run(command + ["--reading", "slow"], input="a cat\n", capture_output=True, text=True, env=env,
                         timeout=300)
    assert bad.returncode == 2 and bad.stdout == "" and "has no reading 'slow'" in bad.stderr
    assert "Traceback" not in bad.stderr


# -- labels: a tree's span labels come from the models its reading reads, and from no other -------

def _counting_grammar_labels(monkeypatch):
    """A list that grows by the number of sentences each time a grammar labels trees."""
    from onparse.grammar.kind import Grammar

    calls, real = [], Grammar.labels

    def counting(self, token_lists, trees, **options):
        calls.append(len(token_lists))
        return real(self, token_lists, trees, **options)

    monkeypatch.setattr(Grammar, "labels", counting)
    return calls


def _grammar_labels(files, trees):
    """What the bundle's grammar, alone in its own file, names the spans of ``trees``."""
    from onparse.induce import tree_labels

    return tree_labels(load(files["grammar"], "cpu"), TOKENS, trees)


def test_only_a_grammar_among_the_readings_members_labels_its_trees(files, monkeypatch):
    """The accurate reading (student and grammar) names every span of its trees as the grammar
    does; the fast reading (the student alone) has no labels (PTB output all X) and neither asks
    the grammar the bundle carries nor builds it."""
    from onparse import to_ptb
    from onparse.induce import tree_labels

    calls = _counting_grammar_labels(monkeypatch)
    fast = load(files["bundle"], "cpu", reading="fast")
    trees = fast.trees(TOKENS)
    assert tree_labels(fast, TOKENS, trees) is None
    assert calls == [] and not fast.models[2].built
    assert tree_labels(files["by_hand"]["fast"], TOKENS, trees) is None and calls == []
    assert all(set(re.findall(r"\((\S+) ", to_ptb(t))) == {"X", "W"} for t in trees)

    accurate = load(files["bundle"], "cpu", reading="accurate")
    trees = accurate.trees(TOKENS)
    labels = tree_labels(accurate, TOKENS, trees)
    assert calls == [len(TOKENS)]
    assert labels == _grammar_labels(files, trees)
    for tree, names in zip(trees, labels):
        written = to_ptb(tree, labels=names)
        assert "(X " not in written and set(re.findall(r"\((\S+) ", written)) - {"W"} <= set(names.values())
        assert all(re.fullmatch(r"NT-\d+", name) for name in names.values())


def test_induce_format_ptb_labels_follow_the_reading(files, monkeypatch):
    """``onparse induce --format ptb --reading NAME``: the fast reading's trees with X, the grammar
    never asked; the accurate reading's with the grammar's symbols.  jsonl records carry labels
    only for the accurate reading."""
    from onparse import to_ptb

    calls = _counting_grammar_labels(monkeypatch)
    fast = _induce("-m", files["bundle"], "--reading", "fast", "--format", "ptb")
    assert fast.exit_code == 0, fast.output
    assert fast.stdout.splitlines() == [to_ptb(t) for t in files["by_hand"]["fast"].trees(TOKENS)]
    records = _induce("-m", files["bundle"], "--format", "jsonl")         # the default reading: fast
    assert records.exit_code == 0 and all("labels" not in json.loads(r) for r in records.stdout.splitlines())
    assert calls == []

    accurate = _induce("-m", files["bundle"], "--reading", "accurate", "--format", "ptb")
    assert accurate.exit_code == 0, accurate.output
    trees = files["by_hand"]["accurate"].trees(TOKENS)
    expected = [to_ptb(t, labels=names) for t, names in zip(trees, _grammar_labels(files, trees))]
    assert accurate.stdout.splitlines() == expected and all(line.startswith("(NT-") for line in expected)
    records = _induce("-m", files["bundle"], "--reading", "accurate", "--format", "jsonl").stdout.splitlines()
    assert all(json.loads(r)["labels"] for r in records) and calls


def test_eval_labels_follow_the_reading(files, tmp_path, monkeypatch):
    """``onparse eval --labels --reading NAME``: the accurate reading's trees line up their
    symbols with the gold labels; the fast reading's have none to line up (a note on stderr), and
    the grammar is never asked."""
    calls = _counting_grammar_labels(monkeypatch)
    gold = tmp_path / "gold.txt"
    gold.write_text("(S (NP the cat) (VP sat (PP on (NP a mat))))\n(S (NP a dog) (VP barked))\n")
    fast = CliRunner().invoke(main, ["eval", "--gold", str(gold), "-m", files["bundle"], "--reading", "fast",
                                     "--labels"])
    assert fast.exit_code == 0, fast.output
    assert "induced symbols" not in fast.stdout and "carry no induced symbols" in fast.stderr and calls == []
    accurate = CliRunner().invoke(main, ["eval", "--gold", str(gold), "-m", files["bundle"], "--reading",
                                         "accurate", "--labels"])
    assert accurate.exit_code == 0, accurate.output
    assert "induced symbols against gold labels" in accurate.stdout and "no symbols" not in accurate.stderr
    assert calls

"""The selection pipeline that ``onparse fit`` and the research lab share (:mod:`onparse.selection`):
run plans trained through their kind's own training in a process of their own, the cached tree
table, the gold scorer and the choice rules by name."""
import json
import os
import subprocess
import sys

import pytest

from conftest import save_pinned_grammar, write_corpus
from onparse import selection
from onparse.selection import RunPlan, TreeTable, run_command
from onparse.training.options import RunOptions

WORDS = "the cat saw a dog".split()


def test_a_run_plan_names_its_kind_and_seed_and_round_trips():
    plan = RunPlan("grammar", 3, "tiny", "news", settings={"max_vocab": 2000, "epochs": 2})
    assert plan.name == "grammar-3" and plan.values() == {"max_vocab": 2000, "epochs": 2, "seed": 3}
    assert RunPlan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan
    # Its epochs: its own setting, else its preset's (a language model's preset holds them).
    assert plan.epochs() == 2 and RunPlan("lm", 1, "tiny", "news").epochs() == 3
    command = run_command(plan, RunOptions(out="runs/x", max_time=60.0, keep_epochs=True))
    assert command[:3] == [sys.executable, "-m", "onparse.selection.worker"]
    sent = json.loads(command[3])
    assert RunPlan.from_dict(sent["plan"]) == plan
    assert RunOptions(**sent["options"]) == RunOptions(out="runs/x", max_time=60.0, keep_epochs=True)


def test_the_worker_refuses_a_bad_plan_in_one_line(tmp_path):
    from onparse.selection.worker import main

    assert main(["not json"]) == 2
    assert main([]) == 2
    bad = run_command(RunPlan("toy", 1, "tiny", "news"), RunOptions(out=str(tmp_path / "r")))
    assert main(bad[3:]) == 2                        # no such kind: a setting error, before training
    wrong_preset = run_command(RunPlan("grammar", 1, "huge", "news"), RunOptions(out=str(tmp_path / "r")))
    assert main(wrong_preset[3:]) == 2


def test_the_worker_trains_a_plan_through_its_kind_in_its_own_process(tmp_path):
    text = write_corpus(tmp_path / "text.txt", n_sentences=120, seed=1)
    plan = RunPlan("grammar", 2, "tiny", str(text), settings={"epochs": 1, "max_vocab": 200})
    out = tmp_path / "grammar-2"
    command = run_command(plan, RunOptions(out=str(out), keep_epochs=True, threads=1, progress=False))
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (out / "epoch-001.pt").exists()
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["stop_reason"] == "epochs" and summary["epochs"] == 1
    start = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
    assert start["family"] == "grammar" and start["config"]["seed"] == 2 and start["config"]["max_vocab"] == 200


def test_the_tree_table_parses_once_and_again_only_for_a_changed_file(tmp_path, monkeypatch):
    from onparse import load
    from onparse.api import Parser

    path = save_pinned_grammar(tmp_path / "g.pt", WORDS, left=range(4, 10), right=range(0, 10))
    sentences = [WORDS, WORDS[:3], []]
    expected = [row[0] for row in load(path, "cpu").member_trees(sentences)]
    cache = str(tmp_path / "trees.jsonl")
    [(member, trees)] = TreeTable(sentences, cache).read(path)
    assert trees == expected and trees[2] is None and member.decoder == "mbr"
    # A second table over the same cache parses nothing ...
    monkeypatch.setattr(Parser, "member_trees", lambda *a, **k: pytest.fail("parsed again"))
    assert TreeTable(sentences, cache).read(path)[0][1] == expected
    # ... unless the sentences differ, or the file changed since.
    with pytest.raises(pytest.fail.Exception):
        TreeTable(sentences[:2], cache).read(path)
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    with pytest.raises(pytest.fail.Exception):
        TreeTable(sentences, cache).read(path)


def test_candidates_of_an_epoch_say_what_their_kind_averages(tmp_path):
    folder = tmp_path / "grammar-1"
    folder.mkdir()
    save_pinned_grammar(folder / "epoch-002.pt", WORDS, left=range(4, 10), right=range(0, 10))
    table = TreeTable([WORDS])
    found = selection.candidates_of("grammar-1", str(folder), 2, table,
                                    lambda parser: parser.with_grid(None, ["mbr", "viterbi"]))
    assert [(c.run, c.epoch, c.decoder, c.averaged, c.layered) for c, _ in found] == [
        ("grammar-1", 2, "mbr", True, False), ("grammar-1", 2, "viterbi", False, False)]


def test_gold_f1_by_hand(tmp_path):
    from onparse import load_gold

    gold_file = tmp_path / "gold"
    gold_file.write_text("(S (NP (DT the) (NN cat)) (VP (VBD saw) (NP (DT a) (NN dog))))\n"
                         "(S (NP (DT a) (NN b)) (VP (VBD c) (NP (DT d) (NN e) (NN f) (NN g) (NN h) (NN i) (NN j) "
                         "(NN k) (NN l))))\n")
    gold = load_gold(str(gold_file))
    # Sentence 1 (5 words): gold spans (0,2) (2,5) (3,5); a right-branching tree has (1,5) (2,5)
    # (3,5): 2 of 3 each way, F1 2/3.  Sentence 2 (12 words) is the gold's own tree: F1 1.
    right = ("the", ("cat", ("saw", ("a", "dog"))))
    own = (("a", "b"), ("c", ("d", "e", "f", "g", "h", "i", "j", "k", "l")))
    scores = selection.gold_f1([right, own], gold)
    assert scores == {"all": pytest.approx(round((2 / 3 + 1) / 2, 5)), "10": pytest.approx(round(2 / 3, 5))}


def test_the_choice_rules_by_name():
    assert set(selection.RULES) == {"best_dev", "gold_free"}
    assert selection.RULES["best_dev"]([0.4, 0.5, 0.5, 0.1]) == 1          # ties: the earlier candidate
    assert selection.RULES["gold_free"] is selection.choose


def test_a_cached_column_that_does_not_match_the_sentences_is_parsed_again(tmp_path, monkeypatch):
    # Issue 66.3: a cached column with fewer trees than sentences was used, and zip(*columns) then
    # cut every column to it (a choice made on 5 of 30 held-out sentences).
    from onparse import load
    from onparse.api import Parser

    path = save_pinned_grammar(tmp_path / "g.pt", WORDS, left=range(4, 10), right=range(0, 10))
    sentences = [WORDS, WORDS[:3], WORDS[1:]]
    expected = [row[0] for row in load(path, "cpu").member_trees(sentences)]
    cache = tmp_path / "trees.jsonl"
    TreeTable(sentences, str(cache)).read(path)
    row = json.loads(cache.read_text())
    parsed = []
    real = Parser.member_trees
    monkeypatch.setattr(Parser, "member_trees", lambda self, s: parsed.append(len(s)) or real(self, s))
    short = {**row, "trees": row["trees"][:1]}
    other = {**row, "trees": [expected[1], expected[0], expected[2]]}      # trees of other words
    for bad in (short, other):
        cache.write_text(json.dumps(bad) + "\n")
        assert TreeTable(sentences, str(cache)).read(path)[0][1] == expected
    assert parsed == [3, 3]
    assert TreeTable(sentences, str(cache)).read(path)[0][1] == expected and parsed == [3, 3]   # cached again


@pytest.mark.parametrize("line, what", [
    (b"[1, 2]\n", "line 1: expected an object"),
    (b'{"sentences": "x", "file": "f", "reading": "r"}\n', "line 1: trees: missing"),
    (b'{"sentences": "x", "file": "f", "reading": "r", "trees": [[1]]}\n', "line 1: trees[0]"),
    (b'{"sentences": "\xff\xfe"}\n', "line 1: not UTF-8"),
])
def test_a_damaged_tree_cache_is_a_one_line_error(tmp_path, line, what):
    # Issue 66.4: rows of the wrong shape gave AttributeError, KeyError or UnicodeDecodeError.
    from onparse.errors import OnparseError

    cache = tmp_path / "trees.jsonl"
    cache.write_bytes(line)
    with pytest.raises(OnparseError) as err:
        TreeTable([WORDS], str(cache))
    message = str(err.value)
    assert message.startswith(f"{cache} is damaged ({what}") and "\n" not in message, message
    assert "delete it" in message
    # A line cut short by a kill (the next row then follows it on the same line) is no damage.
    cache.write_bytes(b'{"sentences": "x", "fi' + b'{"sentences": "x", "file": "f", "reading": "r", "trees": []}\n')
    assert TreeTable([WORDS], str(cache)).sentences == [WORDS]

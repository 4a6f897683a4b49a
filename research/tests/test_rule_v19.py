"""Rule v19 (``research/choose_v19.py``, PROTOCOL.md rules 99-105): English grammars of rule v18's
recipe.  Rule 101's ranking and ties, rule 102's candidates (the bundled model first, then groups
(b)-(e) for K = 1..3 and nine variants) with their sizes, rule 103's tie rule, the member order
of an average, rule 104's student command (read by onparse's own command line) and final
candidates, and rule 105's guards."""
import json

import pytest

from lab import load_script


@pytest.fixture()
def v19():
    return load_script("choose_v19")


def record(seed, epoch, f1):
    return {"run": f"grammar-v19-news-v2k-c10-s{seed}", "epoch": epoch, "dev": {"grammar": {"all": f1, "10": f1}}}


def test_members_rank_by_dev_then_the_lower_seed_then_the_earlier_epoch(v19):
    records = [record(2, 5, 0.4), record(1, 7, 0.4), record(1, 3, 0.4), record(3, 1, 0.5), record(1, 1, 0.2),
               {"run": "grammar-v18-alpino-v2k-s1", "epoch": 1, "dev": {"grammar": {"all": 0.9}}}]
    assert v19.ranked_members(records) == [(v19.RUN.format(seed=s), e) for s, e in
                                           ((3, 1), (1, 3), (1, 7), (2, 5), (1, 1))]


def test_the_candidates_are_the_bundled_model_then_four_groups_of_k_runs_and_nine_variants(v19, monkeypatch):
    monkeypatch.setattr(v19, "incumbent", lambda: {"name": "bundled", "incumbent": True, "trees": 1})
    ranked = [(v19.RUN.format(seed=s), e) for s, e in ((2, 4), (2, 9), (1, 3), (3, 8))]
    cands = v19.candidates(ranked)
    assert len(cands) == 1 + 4 * 3 * 9 and cands[0]["name"] == "bundled"
    assert cands[1] == {"name": "g s2 e4, ties first", "lms": False, "student": False,
                        "grammars": [[ranked[0][0], 4]], "voters": [], "ties": "first", "trees": 1}
    # K = 2 takes the best member of a second run (seed 1's e3, not seed 2's e9).
    assert cands[10]["grammars"] == [[ranked[0][0], 4], [ranked[2][0], 3]]
    groups = [(c["lms"], c["student"]) for c in cands[1::27]]
    assert groups == [(False, False), (True, False), (False, True), (True, True)]
    last = cands[-1]
    assert last["name"] == "LMs + student + g s2 e4 + g s1 e3 + g s3 e8 + left, ties left"
    assert last["trees"] == 3 + 1 + 3 + 1
    # Fewer than three runs: no K = 3 candidates.
    assert len(v19.candidates(ranked[:3])) == 1 + 4 * 2 * 9


def row(order, f1, trees, incumbent=False):
    return {"order": order, "trees": trees, "incumbent": incumbent, "dev": {"all": {"sentence_f1": f1}}}


def test_exact_ties_go_to_the_bundled_model_then_to_fewer_trees_then_the_earlier(v19):
    assert v19.choose([row(0, 0.5, 1, True), row(1, 0.5, 1)])["order"] == 0
    assert v19.choose([row(0, 0.4, 1, True), row(1, 0.5, 5), row(2, 0.5, 4), row(3, 0.5, 4)])["order"] == 2
    assert v19.choose([row(0, 0.4, 1, True), row(1, 0.41, 9)])["order"] == 1


def test_an_average_reads_the_language_models_then_the_student_then_the_grammars(v19, monkeypatch):
    trees = v19.Trees([["a", "b", "c"], ["d", "e"]], "dev")
    trees.lm_rows = [["lm1", "lm2", "lm3"], ["LM1", "LM2", "LM3"]]
    trees.student = ["st", "ST"]
    trees.grammars = {("r1", 4): ["g1", "G1"], ("r2", 2): ["g2", "G2"]}
    seen = []
    monkeypatch.setattr(v19.v9, "average", lambda rows, tokens, voters, ties: seen.append((rows, voters, ties)))
    trees.of({"lms": True, "student": True, "grammars": [["r2", 2], ["r1", 4]], "voters": ["right"], "ties": "first"})
    trees.of({"lms": False, "student": True, "grammars": [["r1", 4]], "voters": [], "ties": "right"})
    trees.of({"lms": False, "student": False, "grammars": [["r1", 4]], "voters": [], "ties": "first"})
    assert seen[0] == ([["lm1", "lm2", "lm3", "st", "g2", "g1"], ["LM1", "LM2", "LM3", "ST", "G2", "G1"]],
                       ["right"], "first")
    assert seen[1] == ([["st", "g1"], ["ST", "G1"]], [], "right")
    assert seen[2] == ([["g1"], ["G1"]], [], "first")
    assert trees.of({"incumbent": True}) == ["st", "ST"]


def test_the_student_is_rule_104s_command(v19, tmp_path, monkeypatch):
    from onparse.cli import main

    # Click checks that the files exist: the same names, under tmp_path.
    for name in ("TEXT", "TEACHER"):
        monkeypatch.setattr(v19, name, str(tmp_path / getattr(v19, name).split("/runs/")[1]))
    monkeypatch.setattr(v19.v17, "LMS", str(tmp_path / "distill" / "v6-default.pt"))
    for path in (v19.TEXT, v19.TEACHER, v19.v17.LMS):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("a b c\n")
    for resume in (False, True):
        command = v19.train_command(2, resume)
        params = main.commands["distill"].make_context("distill", command[4:]).params
        assert params["text"] == v19.TEXT and params["pretokenized"] and params["model_paths"] == (v19.v17.LMS,)
        assert params["teacher_trees"] == v19.TEACHER and params["student_path"] == v19.NEW_STUDENT.format(seed=2)
        assert (params["seed"], params["epochs"], params["keep_epochs"], params["threads"]) == (2, 6, True, 1)
        assert params["resume"] is resume


def test_the_final_candidates_are_the_bundled_model_then_each_snapshot(v19, tmp_path, monkeypatch):
    incumbent = {"order": 0, "name": "bundled", "trees": 1, "incumbent": True, "dev": {}}
    (tmp_path / "choice.json").write_text(json.dumps({"incumbent": incumbent, "chosen": {"name": "LMs + g s1 e2"}}))
    monkeypatch.setattr(v19, "CHOICE", str(tmp_path / "choice.json"))
    rows = v19.final_candidates()
    assert [r["order"] for r in rows] == list(range(13)) and rows[0]["kind"] == "incumbent"
    assert [(r["seed"], r["epoch"]) for r in rows[1:]] == [(s, e) for s in (1, 2) for e in range(1, 7)]
    assert rows[7]["name"] == "student (s2 e1)"
    # Rule 103 chose the bundled model: no students, the final choice is it.
    (tmp_path / "choice.json").write_text(json.dumps({"incumbent": incumbent, "chosen": incumbent}))
    assert v19.final_candidates() == [{**incumbent, "kind": "incumbent"}]


def test_no_students_of_the_bundled_model(v19, tmp_path, monkeypatch):
    (tmp_path / "choice.json").write_text(json.dumps({"chosen": {"incumbent": True}}))
    monkeypatch.setattr(v19, "CHOICE", str(tmp_path / "choice.json"))
    with pytest.raises(SystemExit, match="no students"):
        v19.teacher()


def test_the_test_half_is_scored_once_and_after_the_final_choice(v19, tmp_path, monkeypatch):
    monkeypatch.setattr(v19, "TEST", str(tmp_path / "test.json"))
    monkeypatch.setattr(v19, "FINAL", str(tmp_path / "final.json"))
    with pytest.raises(SystemExit, match="rule 104"):
        v19.test()
    (tmp_path / "test.json").write_text("{}")
    with pytest.raises(SystemExit, match="scored once"):
        v19.test()

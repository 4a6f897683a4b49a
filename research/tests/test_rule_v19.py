"""Rules v19 and v20 (``research/english_grammars.py`` configured by ``choose_v19.py`` and
``choose_v20.py``; PROTOCOL.md rules 99-109): the members' ranking and ties, the candidates (the
bundled model first, then the groups for K = 1..3 and nine variants, rule v20's group (f) last)
with their sizes, the tie rule, the member order of an average, the student command (read by
onparse's own command line) and final candidates, and the test step's guards."""
import dataclasses
import json

import pytest

from lab import load_script


@pytest.fixture()
def v19():
    return load_script("choose_v19")


@pytest.fixture()
def eg():
    return load_script("english_grammars")


def record(seed, epoch, f1, run="grammar-v19-news-v2k-c10-s{seed}"):
    return {"run": run.format(seed=seed), "epoch": epoch, "dev": {"grammar": {"all": f1, "10": f1}}}


def in_tmp(rule, tmp_path):
    """``rule`` with its research files under tmp_path."""
    class Moved(type(rule)):
        def path(self, name):
            return str(tmp_path / name.format(tag=self.tag))
    return Moved(**dataclasses.asdict(rule))


def test_members_rank_by_dev_then_the_lower_seed_then_the_earlier_epoch(v19, eg):
    records = [record(2, 5, 0.4), record(1, 7, 0.4), record(1, 3, 0.4), record(3, 1, 0.5), record(1, 1, 0.2),
               {"run": "grammar-v18-alpino-v2k-s1", "epoch": 1, "dev": {"grammar": {"all": 0.9}}}]
    assert eg.ranked_members(v19.RULE, records) == [(v19.RULE.run.format(seed=s), e) for s, e in
                                                    ((3, 1), (1, 3), (1, 7), (2, 5), (1, 1))]
    v20 = load_script("choose_v20")
    assert eg.ranked_members(v20.RULE, records + [record(4, 2, 0.1, "grammar-v20-news-s{seed}")]) == [
        ("grammar-v20-news-s4", 2)]


def test_the_candidates_are_the_bundled_model_then_four_groups_of_k_runs_and_nine_variants(v19, eg, monkeypatch):
    monkeypatch.setattr(eg, "incumbent", lambda: {"name": "bundled", "incumbent": True, "trees": 1})
    ranked = [(v19.RULE.run.format(seed=s), e) for s, e in ((2, 4), (2, 9), (1, 3), (3, 8))]
    cands = eg.candidates(v19.RULE, ranked)
    assert len(cands) == 1 + 4 * 3 * 9 and cands[0]["name"] == "bundled"
    assert cands[1] == {"name": "g s2 e4, ties first", "lms": False, "student": False,
                        "grammars": [[ranked[0][0], 4]], "voters": [], "ties": "first", "trees": 1}
    # K = 2 takes the best member of a second run (seed 1's e3, not seed 2's e9).
    assert cands[10]["grammars"] == [[ranked[0][0], 4], [ranked[2][0], 3]]
    groups = [(c["lms"], c["student"]) for c in cands[1::27]]
    assert groups == [(False, False), (True, False), (False, True), (True, True)]
    last = cands[-1]
    assert last["name"] == "LMs + student + g s2 e4 + g s1 e3 + g s3 e8 + left, ties left"
    assert last["trees"] == 3 + 1 + 3 + 1 and "v9" not in last
    # Fewer than three runs: no K = 3 candidates.
    assert len(eg.candidates(v19.RULE, ranked[:3])) == 1 + 4 * 2 * 9


def test_rule_v20_adds_its_members_to_rule_v9s_teacher_last(eg, monkeypatch):
    monkeypatch.setattr(eg, "incumbent", lambda: {"name": "bundled", "incumbent": True, "trees": 1})
    v20 = load_script("choose_v20")
    ranked = [(f"grammar-v20-news-s{s}", e) for s, e in ((5, 2), (4, 3), (6, 1))]
    cands = eg.candidates(v20.RULE, ranked)
    assert len(cands) == 1 + 5 * 3 * 9
    teacher = cands[1 + 4 * 27:]
    assert all(c["v9"] and c["lms"] and not c["student"] for c in teacher)
    assert teacher[0]["name"] == "LMs + v9 grammars + g s5 e2, ties first" and teacher[0]["trees"] == 3 + 3 + 1
    assert teacher[-1]["trees"] == 3 + 3 + 3 + 1


def row(order, f1, trees, incumbent=False):
    return {"order": order, "trees": trees, "incumbent": incumbent, "dev": {"all": {"sentence_f1": f1}}}


def test_exact_ties_go_to_the_bundled_model_then_to_fewer_trees_then_the_earlier(eg):
    assert eg.choose([row(0, 0.5, 1, True), row(1, 0.5, 1)])["order"] == 0
    assert eg.choose([row(0, 0.4, 1, True), row(1, 0.5, 5), row(2, 0.5, 4), row(3, 0.5, 4)])["order"] == 2
    assert eg.choose([row(0, 0.4, 1, True), row(1, 0.41, 9)])["order"] == 1


def test_an_average_reads_the_language_models_the_student_rule_v9s_grammars_then_the_new(eg, monkeypatch):
    trees = eg.Trees([["a", "b", "c"], ["d", "e"]], "dev")
    trees.lm_rows = [["lm1", "lm2", "lm3"], ["LM1", "LM2", "LM3"]]
    trees.v9_rows = [["v9a", "v9b", "v9c"], ["V9A", "V9B", "V9C"]]
    trees.student = ["st", "ST"]
    trees.grammars = {("r1", 4): ["g1", "G1"], ("r2", 2): ["g2", "G2"]}
    seen = []
    monkeypatch.setattr(eg.v9, "average", lambda rows, tokens, voters, ties: seen.append((rows, voters, ties)))
    trees.of({"lms": True, "student": True, "grammars": [["r2", 2], ["r1", 4]], "voters": ["right"], "ties": "first"})
    trees.of({"lms": False, "student": True, "grammars": [["r1", 4]], "voters": [], "ties": "right"})
    trees.of({"lms": False, "student": False, "grammars": [["r1", 4]], "voters": [], "ties": "first"})
    trees.of({"lms": True, "student": False, "v9": True, "grammars": [["r1", 4]], "voters": [], "ties": "right"})
    assert seen[0] == ([["lm1", "lm2", "lm3", "st", "g2", "g1"], ["LM1", "LM2", "LM3", "ST", "G2", "G1"]],
                       ["right"], "first")
    assert seen[1] == ([["st", "g1"], ["ST", "G1"]], [], "right")
    assert seen[2] == ([["g1"], ["G1"]], [], "first")
    assert seen[3] == ([["lm1", "lm2", "lm3", "v9a", "v9b", "v9c", "g1"], ["LM1", "LM2", "LM3", "V9A", "V9B", "V9C", "G1"]],
                       [], "right")
    assert trees.of({"incumbent": True}) == ["st", "ST"]


def test_each_rule_names_its_own_files(v19):
    v20 = load_script("choose_v20")
    assert v19.RULE.choice.endswith("research/dev-choice-v19.json")
    assert v20.RULE.final.endswith("research/dev-choice-v20-students.json")
    assert v20.RULE.snapshot(2, 3).endswith("runs/distill/v20-s2.run/epoch-003.pt")
    assert v20.RULE.teacher.endswith("runs/distill/v20-teacher.txt")


def test_the_student_is_rule_104s_command(v19, eg, tmp_path, monkeypatch):
    from onparse.cli import main

    # Click checks that the files exist: the same names, under tmp_path.
    rule = in_tmp(v19.RULE, tmp_path)
    monkeypatch.setattr(type(rule), "teacher", property(lambda self: str(tmp_path / "v19-teacher.txt")))
    monkeypatch.setattr(eg, "TEXT", str(tmp_path / "news-train.txt"))
    monkeypatch.setattr(eg.v17, "LMS", str(tmp_path / "v6-default.pt"))
    for path in (eg.TEXT, rule.teacher, eg.v17.LMS):
        (tmp_path / path).write_text("a b c\n")
    for resume in (False, True):
        command = eg.train_command(rule, 2, resume)
        params = main.commands["distill"].make_context("distill", command[4:]).params
        assert params["text"] == eg.TEXT and params["pretokenized"] and params["model_paths"] == (eg.v17.LMS,)
        assert params["teacher_trees"] == rule.teacher and params["student_path"] == rule.new_student(2)
        assert (params["seed"], params["epochs"], params["keep_epochs"], params["threads"]) == (2, 6, True, 1)
        assert params["resume"] is resume


def test_the_final_candidates_are_the_bundled_model_then_each_snapshot(v19, eg, tmp_path):
    rule = in_tmp(v19.RULE, tmp_path)
    incumbent = {"order": 0, "name": "bundled", "trees": 1, "incumbent": True, "dev": {}}
    (tmp_path / "dev-choice-v19.json").write_text(json.dumps({"incumbent": incumbent,
                                                               "chosen": {"name": "LMs + g s1 e2"}}))
    rows = eg.final_candidates(rule)
    assert [r["order"] for r in rows] == list(range(13)) and rows[0]["kind"] == "incumbent"
    assert [(r["seed"], r["epoch"]) for r in rows[1:]] == [(s, e) for s in (1, 2) for e in range(1, 7)]
    assert rows[7]["name"] == "student (s2 e1)"
    # The dev choice is the bundled model: no students, the final choice is it.
    (tmp_path / "dev-choice-v19.json").write_text(json.dumps({"incumbent": incumbent, "chosen": incumbent}))
    assert eg.final_candidates(rule) == [{**incumbent, "kind": "incumbent"}]


def test_no_candidates_before_the_runs_are_scored(eg, tmp_path):
    rule = in_tmp(load_script("choose_v20").RULE, tmp_path)
    with pytest.raises(SystemExit, match="grammar-v20-dev.jsonl is missing"):
        eg.dev(rule, list_only=True)


def test_no_students_of_the_bundled_model(v19, eg, tmp_path):
    rule = in_tmp(v19.RULE, tmp_path)
    (tmp_path / "dev-choice-v19.json").write_text(json.dumps({"chosen": {"incumbent": True}}))
    with pytest.raises(SystemExit, match="no students"):
        eg.teacher(rule)


def test_the_test_half_is_scored_once_and_after_the_final_choice(v19, eg, tmp_path):
    rule = in_tmp(v19.RULE, tmp_path)
    with pytest.raises(SystemExit, match="rule 104"):
        eg.test(rule)
    (tmp_path / "test-v19.json").write_text("{}")
    with pytest.raises(SystemExit, match="scored once"):
        eg.test(rule)


def test_rule_v19s_recorded_choice_is_the_bundled_model_and_its_test_the_bundled_models_figures():
    from lab import read_json

    choice, final, report = read_json("dev-choice-v19.json"), read_json("dev-choice-v19-students.json"), \
        read_json("test-v19.json")
    assert choice["chosen"]["incumbent"] and final["chosen"]["kind"] == "incumbent" and not final["ships"]
    assert report["chosen"] == report["incumbent"] == read_json("test-v17.json")["chosen"]
    assert report["grammar_alone"]["all"] == report["right"]["all"]

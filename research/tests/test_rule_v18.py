"""Rule v18 (``research/choose_v18.py``, PROTOCOL.md rules 93-98): grammar recipes for small
texts.  Rule 95's joint ranking of rule v13's and rule v18's members with its tie order, rule
96's candidates (the incumbent first, then rule 74's over the joint ranking) and its tie rule
(the incumbent, then fewer trees), the test scored once."""
import pytest

from lab import load_script


@pytest.fixture()
def v18():
    return load_script("choose_v18")


def record(run, epoch, f1):
    return {"run": run, "epoch": epoch, "dev": {"grammar": {"all": f1, "10": f1}}}


def test_members_rank_by_dev_then_rule_v13s_runs_then_the_recipe_order_seed_and_epoch(v18):
    records = [record("grammar-v18-alpino-v2k-c10-s1", 3, 0.4), record("grammar-v18-alpino-v2k-s2", 5, 0.4),
               record("grammar-v18-alpino-v2k-s1", 7, 0.4), record("grammar-v18-alpino-v2k-s1", 2, 0.4),
               record("grammar-fit-alpino-s3", 9, 0.4), record("grammar-fit-alpino-s1", 1, 0.3),
               record("grammar-v18-alpino-v2k-s1", 4, 0.5), record("grammar-v18-cess_esp-v2k-s1", 1, 0.9),
               record("grammar-fit-cess_esp-s1", 1, 0.9)]
    assert v18.ranked_members("alpino", records) == [
        ("grammar-v18-alpino-v2k-s1", 4), ("grammar-fit-alpino-s3", 9), ("grammar-v18-alpino-v2k-s1", 2),
        ("grammar-v18-alpino-v2k-s1", 7), ("grammar-v18-alpino-v2k-s2", 5), ("grammar-v18-alpino-v2k-c10-s1", 3),
        ("grammar-fit-alpino-s1", 1)]


def test_members_are_named_by_seed_for_rule_v13_and_by_recipe_for_rule_v18(v18):
    assert v18.label("grammar-fit-cess_esp-s2", 10) == "g s2 e10"
    assert v18.label("grammar-v18-cess_esp-v2k-c10-s1", 4) == "g v2k-c10-s1 e4"


def test_the_candidates_are_the_incumbent_then_rule_74s_over_different_runs(v18, monkeypatch):
    monkeypatch.setattr(v18, "incumbent", lambda lang: {"name": "rule v15: x", "incumbent": True, "trees": 4,
                                                        "dev": {}})
    ranked = [("grammar-v18-alpino-v2k-s1", 4), ("grammar-v18-alpino-v2k-s1", 2), ("grammar-fit-alpino-s3", 9)]
    v7_choice = {"name": "lms", "members": [1, 2], "voters": [], "ties": "first"}
    cands = v18.candidates("alpino", ranked, v7_choice)
    assert cands[0]["name"] == "rule v15: x"
    # K = 1 and 2 exist (two different runs), K = 3 does not; 9 variants each, alone and with the LMs.
    assert len(cands) == 1 + 2 * 2 * 9
    assert cands[1]["name"] == "g v2k-s1 e4, ties first" and not cands[1]["lms"]
    assert cands[10]["grammars"] == [("grammar-v18-alpino-v2k-s1", 4), ("grammar-fit-alpino-s3", 9)]
    assert cands[19]["name"] == "rule v7's LMs + g v2k-s1 e4, ties first" and cands[19]["lms"]


def test_the_grammar_files_are_found_by_run(v18):
    trees = v18.Trees("alpino", [["a", "b"]], {}, "alpino-dev")
    assert trees.grammar_path("grammar-v18-alpino-v2k-s1", 3).endswith("runs/grammar-v18-alpino-v2k-s1/epoch-003.pt")


def row(order, f1, trees, incumbent=False):
    return {"order": order, "trees": trees, "incumbent": incumbent, "dev": {"all": {"sentence_f1": f1}}}


def test_exact_ties_go_to_the_incumbent_then_to_fewer_trees_then_the_earlier(v18):
    assert v18.choose([row(0, 0.4, 5, True), row(1, 0.4, 1), row(2, 0.3, 1)])["order"] == 0
    assert v18.choose([row(0, 0.3, 5, True), row(1, 0.4, 3), row(2, 0.4, 2), row(3, 0.4, 2)])["order"] == 2
    assert v18.choose([row(0, 0.3, 5, True), row(1, 0.5, 9)])["order"] == 1


def test_the_test_parts_are_scored_once(v18, tmp_path, monkeypatch):
    (tmp_path / "test.json").write_text("{}")
    monkeypatch.setattr(v18, "TEST", str(tmp_path / "test.json"))
    with pytest.raises(SystemExit, match="scored once"):
        v18.test()


# Rule 97: the students of rule 96's choices (research/students_v18.py) and the test of the final choice.

CHOICE = {"order": 47, "name": "rule v7's LMs + g v2k-s1 e5, ties right", "lms": True,
          "grammars": [["grammar-v18-alpino-v2k-s1", 5]], "voters": [], "ties": "right", "trees": 3,
          "dev": {"all": {"sentence_f1": 0.45}}}
INCUMBENT = {"order": 0, "name": "rule v15: x", "incumbent": True, "trees": 4, "dev": {"all": {"sentence_f1": 0.41}}}


@pytest.fixture()
def s18(tmp_path, monkeypatch):
    """students_v18 reading a made-up rule 96 record of Dutch."""
    import json

    module = load_script("students_v18")
    path = tmp_path / "dev-choice-v18.json"
    path.write_text(json.dumps({"alpino": {"chosen": CHOICE, "incumbent": INCUMBENT,
                                           "grammar_alone": ["grammar-v18-alpino-v2k-s1", 5]}}))
    monkeypatch.setattr(module.v18, "CHOICES", str(path))
    return module


def test_rule_97s_candidates_are_the_choice_the_incumbent_then_each_snapshot_alone_and_added(s18):
    rows = s18.candidates("alpino")
    assert [r["order"] for r in rows] == list(range(14))
    assert [r["kind"] for r in rows] == ["choice", "incumbent"] + ["student"] * 6 + ["choice + student"] * 6
    assert rows[0]["name"] == CHOICE["name"] and rows[0]["dev"] == CHOICE["dev"]
    assert rows[1]["incumbent"] and rows[1]["dev"] == INCUMBENT["dev"]
    assert [(r["epoch"], r["trees"]) for r in rows[2:8]] == [(e, 1) for e in range(1, 7)]
    assert rows[13]["name"] == CHOICE["name"] + " + student (s1 e6)" and rows[13]["trees"] == 4
    # Rule 96's tie rule decides among them: an exact tie goes to the incumbent, then to fewer trees.
    scored = [{**r, "dev": {"all": {"sentence_f1": 0.41 if r["kind"] != "choice" else 0.40}}} for r in rows]
    assert s18.v18.choose(scored)["kind"] == "incumbent"
    scored[1]["dev"] = {"all": {"sentence_f1": 0.30}}
    assert s18.v18.choose(scored)["name"] == "student (s1 e1)"


def test_a_student_candidates_trees_parse_each_snapshot_once(s18, monkeypatch):
    parsed = []
    monkeypatch.setattr(s18, "student_trees",
                        lambda lang, epoch, tokens: parsed.append((lang, epoch)) or [f"s{epoch}"] * len(tokens))

    class Trees:
        lang, tokens = "alpino", [["a", "b"], ["c", "d", "e"]]

        def of(self, choice, last=None):
            return [(choice["name"], tree) for tree in last]

    rows, students = s18.candidates("alpino"), {}
    assert s18.trees_of(rows[3], CHOICE, Trees(), students) == ["s2", "s2"]
    assert s18.trees_of(rows[9], CHOICE, Trees(), students) == [(CHOICE["name"], "s2")] * 2
    assert parsed == [("alpino", 2)]


def test_the_student_is_rule_83s_with_rule_v18s_files(s18, monkeypatch):
    monkeypatch.setattr(s18.v13, "v7_choices", lambda: {"alpino": {"models": [{"seed": 3, "epoch": 10}]}})
    command = s18.train_command("alpino", resume=True)
    assert command[command.index("-m", 3) + 1] == s18.v15.v7.RUN.format(lang="alpino", seed=3, epoch=10)
    assert command[command.index("--teacher-trees") + 1] == s18.TEACHER.format(lang="alpino")
    assert command[command.index("--out") + 1] == s18.STUDENT.format(lang="alpino", seed=1)
    assert command[-1] == "--resume" and command[command.index("--epochs") + 1] == "6"


def test_the_test_waits_for_rule_97(v18, tmp_path, monkeypatch):
    import students_v18

    monkeypatch.setattr(v18, "TEST", str(tmp_path / "test.json"))
    monkeypatch.setattr(students_v18, "CHOICES", str(tmp_path / "missing.json"))
    with pytest.raises(SystemExit, match="rule 97"):
        v18.test()
    assert not (tmp_path / "test.json").exists()


def test_the_test_scores_a_student_final_choice_with_its_snapshot(v18, tmp_path, monkeypatch):
    import json

    import students_v18

    final = {"order": 9, "kind": "choice + student", "epoch": 4, "name": "choice + student (s1 e4)", "trees": 4,
             "dev": {"all": {"sentence_f1": 0.5}}}
    (tmp_path / "final.json").write_text(json.dumps({lang: {"chosen": final} for lang in v18.LANGUAGES}))
    (tmp_path / "choice.json").write_text(json.dumps(
        {lang: {"chosen": CHOICE, "grammar_alone": ["grammar-v18-alpino-v2k-s1", 5]} for lang in v18.LANGUAGES}))
    (tmp_path / "v15.json").write_text(json.dumps({lang: {"chosen": {"all": {"sentence_f1": 0.4}}} for lang in v18.LANGUAGES}))
    monkeypatch.setattr(students_v18, "CHOICES", str(tmp_path / "final.json"))
    monkeypatch.setattr(v18, "CHOICES", str(tmp_path / "choice.json"))
    monkeypatch.setattr(v18.v15, "TEST", str(tmp_path / "v15.json"))
    monkeypatch.setattr(v18, "TEST", str(tmp_path / "test.json"))
    monkeypatch.setattr(v18.v13, "v7_choices", lambda: {lang: {} for lang in v18.LANGUAGES})
    class Gold(list):
        name = "alpino-test"

    monkeypatch.setattr(v18.v5, "golds", lambda *names: (Gold(["g1", "g2"]), ["g1"], [0]))
    monkeypatch.setattr(v18.v5, "scores_of", lambda trees, *gold: {"all": {"sentence_f1": len(trees[0])}})
    monkeypatch.setattr(v18.v5, "baseline_scores", lambda *gold: {"right": {"all": {"sentence_f1": 0.3}}})
    monkeypatch.setattr(students_v18, "student_trees", lambda lang, epoch, tokens: [f"e{epoch}"] * len(tokens))

    class Trees:
        def __init__(self, lang, tokens, v7_choice, name):
            self.lang, self.tokens = lang, tokens

        def of(self, choice, last=None):
            return [choice["name"] + (f" + {t}" if last else "") for t in (last or ["", ""])]

    monkeypatch.setattr(v18, "Trees", Trees)
    monkeypatch.setattr(v18.v13, "gold_tokens", lambda gold: [[w] for w in gold])
    v18.test()
    out = json.loads((tmp_path / "test.json").read_text())
    for lang in v18.LANGUAGES:
        # scores_of stands in as the length of the first tree's name: the choice with snapshot 4 added.
        assert out[lang]["chosen"] == {"all": {"sentence_f1": len(CHOICE["name"] + " + e4")}}
        assert out[lang]["grammar_alone"]["name"] == "g v2k-s1 e5" and out[lang]["v15"]["all"]["sentence_f1"] == 0.4


def test_the_readme_table_is_rule_v18s_recorded_test_and_each_final_choice_beats_rule_v15():
    """The README's "Other languages" table is `--readme`'s from the recorded test files; each
    final choice is the one rule 97 recorded, beats right-branching and is at least rule v15's."""
    from lab import ROOT, read_json

    v18 = load_script("choose_v18")
    results, v15_results, v7_results = (read_json(f"test-{rule}.json") for rule in ("v18", "v15", "v7"))
    assert v18.readme_block(results, v15_results, v7_results) in (ROOT / "research" / "RESULTS.md").read_text()
    finals = read_json("dev-choice-v18-students.json")
    for lang in v18.LANGUAGES:
        assert results[lang]["candidate"] == finals[lang]["chosen"]["name"]
        assert results[lang]["v15"] == v15_results[lang]["chosen"]
        chosen = results[lang]["chosen"]["all"]["sentence_f1"]
        assert chosen > results[lang]["right"]["all"]["sentence_f1"] and chosen >= results[lang]["v15"]["all"]["sentence_f1"]

"""``research/choose_v13.py`` (rule v13, 73-76): the ranking of each language's grammar members,
rule 74's candidates in order, its choice and ties, and the test step's scored-once guard, on
made-up records."""
import pytest

from lab import load_script


def record(lang, seed, epoch, f1):
    return {"run": f"grammar-fit-{lang}-s{seed}", "epoch": epoch, "dev": {"grammar": {"all": f1, "10": f1}}}


RECORDS = [record("alpino", 1, 1, 0.30), record("alpino", 1, 2, 0.41), record("alpino", 2, 1, 0.41),
           record("alpino", 2, 2, 0.35), record("alpino", 3, 5, 0.44), record("cess_esp", 1, 1, 0.9)]
V7 = {"name": "s3 e10 L2 onlstm + s1 e7 L2 onlstm + right, ties first", "voters": ["right"], "ties": "first",
      "members": [{"model": 0, "layer": 2, "decoder": "onlstm"}, {"model": 1, "layer": 2, "decoder": "onlstm"}],
      "models": [{"seed": 3, "epoch": 10}, {"seed": 1, "epoch": 7}]}


def test_ranking_is_per_language_best_first_ties_to_the_lower_seed():
    v13 = load_script("choose_v13")
    ranked = v13.ranked_grammars("alpino", RECORDS)
    assert ranked == [(3, 5), (1, 2), (2, 1), (2, 2), (1, 1)]           # 0.41 twice: seed 1 first
    assert v13.best_of_seeds(ranked, 2) == [(3, 5), (1, 2)]
    assert v13.best_of_seeds(ranked, 3) == [(3, 5), (1, 2), (2, 1)]
    assert v13.best_of_seeds(ranked[:2], 3) is None
    assert v13.ranked_grammars("cess_esp", RECORDS) == [(1, 1)]
    assert v13.ranked_grammars("floresta", RECORDS) == []


def test_candidates_in_rule_74s_order():
    v13 = load_script("choose_v13")
    out = v13.candidates(v13.ranked_grammars("alpino", RECORDS), V7)
    assert len(out) == 1 + 2 * 3 * 9
    assert out[0] == {"name": f"rule v7: {V7['name']}", "lms": True, "grammars": [], "voters": ["right"],
                      "ties": "first"}
    assert out[1]["name"] == "g s3 e5, ties first" and not out[1]["lms"]
    assert out[4]["name"] == "g s3 e5 + right, ties first"
    assert out[9]["name"] == "g s3 e5 + left, ties left"
    assert out[10]["grammars"] == [(3, 5), (1, 2)]
    assert out[28]["name"] == "rule v7's LMs + g s3 e5, ties first" and out[28]["lms"]
    assert out[-1]["grammars"] == [(3, 5), (1, 2), (2, 1)] and out[-1]["voters"] == ["left"]
    assert [v13.size(c, V7) for c in (out[0], out[1], out[4], out[28], out[-1])] == [3, 1, 2, 3, 6]
    # One seed scored: only K = 1.
    assert len(v13.candidates(v13.ranked_grammars("cess_esp", RECORDS), V7)) == 1 + 2 * 9


def test_choice_prefers_fewer_trees_then_the_earlier():
    v13 = load_script("choose_v13")

    def row(order, f1, trees):
        return {"order": order, "trees": trees, "dev": {"all": {"sentence_f1": f1}}}
    rows = [row(0, 0.5, 3), row(1, 0.6, 2), row(2, 0.6, 1), row(3, 0.6, 1), row(4, 0.59, 1)]
    assert v13.choose(rows)["order"] == 2


def test_the_test_parts_are_scored_once(tmp_path, monkeypatch):
    v13 = load_script("choose_v13")
    done = tmp_path / "test-v13.json"
    done.write_text("{}")
    monkeypatch.setattr(v13, "TEST", str(done))
    with pytest.raises(SystemExit, match="scored once"):
        v13.test()


def test_the_readme_table_bolds_each_columns_best():
    v13 = load_script("choose_v13")

    def scores(x):
        return {part: {"sentence_f1": x, "kim_f1": x, "corpus_f1": x} for part in ("all", "10")}
    results, v7_results = {}, {}
    for lang in v13.v7.LANGUAGES:
        results[lang] = {"candidate": "g s1 e2, ties first", "sentences": [1200, 300], "chosen": scores(0.45),
                         "grammar_alone": {"name": "g s1 e2", **scores(0.40)}, "right": scores(0.30),
                         "left": scores(0.1)}
        v7_results[lang] = {"chosen": {"name": "s1 e3 L2 onlstm", "test": scores(0.42)}}
    lines = v13.readme_block(results, v7_results).splitlines()
    assert len(lines) == 2 + 3 * 4 + 2
    assert lines[2] == ("| Dutch (alpino) | 1,200 / 300 | chosen on dev (rule v13): g s1 e2, ties first | "
                        + " | ".join(["**45.0**"] * 6) + " |")
    assert lines[4] == "|  |  | rule v7's choice: s1 e3 L2 onlstm | " + " | ".join(["42.0"] * 6) + " |"


def test_the_recorded_test_scores_beat_right_branching():
    import json

    from lab import ROOT

    v13 = load_script("choose_v13")
    results = json.loads((ROOT / "research" / "test-v13.json").read_text())
    for lang in v13.v7.LANGUAGES:
        assert results[lang]["chosen"]["all"]["sentence_f1"] > results[lang]["right"]["all"]["sentence_f1"], lang

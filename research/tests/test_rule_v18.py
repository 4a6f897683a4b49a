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

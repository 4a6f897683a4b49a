"""Rule v7 (research/PROTOCOL.md, rules 34-40): the other languages' choices follow from the
recorded dev scores, and the README's table is the recorded test scores."""
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESEARCH = ROOT / "research"


def _script():
    sys.path.insert(0, str(RESEARCH))
    spec = importlib.util.spec_from_file_location("choose_v7", RESEARCH / "choose_v7.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _trials():
    lines = (RESEARCH / "dev-trials-v7.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"))) for line in lines[1:]]


def test_each_language_chose_the_best_of_its_27_candidates_on_dev():
    choices = json.loads((RESEARCH / "dev-choice-v7.json").read_text())
    trials = _trials()
    for lang in ("alpino", "cess_esp", "floresta"):
        rows = [r for r in trials if r["language"] == lang]
        assert len(rows) == 27 and [int(r["order"]) for r in rows] == list(range(1, 28))

        def best(pool):
            return max(pool, key=lambda r: (float(r["dev all sent F1"]), -int(r["trees"]), -int(r["order"])))

        assert choices[lang]["chosen"]["name"] == best(rows)["candidate"]
        lm = best([r for r in rows if "+ right" not in r["candidate"] and "+ left" not in r["candidate"]
                   and r["candidate"].endswith("ties first")])
        assert choices[lang]["lm_only"]["name"] == lm["candidate"]


def test_candidates_are_k_models_of_distinct_seeds_with_each_voter_and_tie_rule():
    v7 = _script()
    ranked = [(0.5, 2, 4, 2, "onlstm"), (0.4, 2, 5, 3, "split"), (0.3, 1, 1, 1, "onlstm"), (0.2, 3, 9, 2, "split")]
    cands = v7.candidates(ranked)
    assert len(cands) == 27
    assert [c[0] for c in cands[::9]] == [ranked[:1], [ranked[0], ranked[2]], [ranked[0], ranked[2], ranked[3]]]
    assert {(tuple(c[1]), c[2]) for c in cands[:9]} == {(v, t) for v in v7.VOTERS for t in v7.TIES}


def test_readme_table_is_the_recorded_test_scores_and_beats_right_branching():
    v7 = _script()
    results = json.loads((RESEARCH / "test-v7.json").read_text())
    readme = (ROOT / "README.md").read_text()
    assert v7.readme_block(results) in readme
    for lang, r in results.items():
        assert r["chosen"]["test"]["all"]["sentence_f1"] > r["baselines"]["right"]["all"]["sentence_f1"], lang
        assert r["lm_only"]["test"]["all"]["sentence_f1"] > r["baselines"]["right"]["all"]["sentence_f1"], lang

"""Rule v7 (research/PROTOCOL.md, rules 34-40): the other languages' choices follow from the
recorded dev scores, and the README's table is the recorded test scores."""
import pytest

from lab import load_script, read_json, read_tsv


@pytest.fixture(scope="module")
def v7():
    return load_script("choose_v7")


def _trials():
    return read_tsv("dev-trials-v7.tsv")


def test_each_language_chose_the_best_of_its_27_candidates_on_dev():
    choices = read_json("dev-choice-v7.json")
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


def test_candidates_are_k_models_of_distinct_seeds_with_each_voter_and_tie_rule(v7):
    ranked = [(0.5, 2, 4, 2, "onlstm"), (0.4, 2, 5, 3, "split"), (0.3, 1, 1, 1, "onlstm"), (0.2, 3, 9, 2, "split")]
    cands = v7.candidates(ranked)
    assert len(cands) == 27
    assert [c[0] for c in cands[::9]] == [ranked[:1], [ranked[0], ranked[2]], [ranked[0], ranked[2], ranked[3]]]
    assert {(tuple(c[1]), c[2]) for c in cands[:9]} == {(v, t) for v in v7.VOTERS for t in v7.TIES}


def test_the_recorded_candidates_are_those_of_the_recorded_epoch_scores(v7):
    """Rules 37-38 applied again to research/languages-dev.jsonl (score_epochs.py's records):
    each language's 27 candidates, named and counted as dev-trials-v7.tsv lists them, and the
    recorded choices' members are those candidates' members."""
    trials, choices = _trials(), read_json("dev-choice-v7.json")
    for lang in v7.LANGUAGES:
        ranked = v7.ranked_members(lang)
        assert len(ranked) == len(v7.SEEDS) * len(v7.EPOCHS) * 3 * len(v7.DECODERS)   # every epoch, layer, decoder
        assert ranked == sorted(ranked, key=lambda r: -r[0])
        cands = v7.candidates(ranked)
        rows = [r for r in trials if r["language"] == lang]
        assert [v7.name_of(*c) for c in cands] == [r["candidate"] for r in rows]
        assert [len(c[0]) + len(c[1]) for c in cands] == [int(r["trees"]) for r in rows]
        for key in ("chosen", "lm_only"):
            picked, voters, ties = cands[choices[lang][key]["order"]]
            assert [{"seed": s, "epoch": e} for _, s, e, _, _ in picked] == choices[lang][key]["models"]
            assert [(m["layer"], m["decoder"]) for m in choices[lang][key]["members"]] == \
                [(layer, d) for _, _, _, layer, d in picked]
            assert (choices[lang][key]["voters"], choices[lang][key]["ties"]) == (list(voters), ties)


def test_the_recorded_test_scores_beat_right_branching(v7):
    # The README's table is rule v13's now (test_rule_v13.py), with rule v7's choice beside it.
    results = read_json("test-v7.json")
    assert v7.readme_block(results).count("\n| ") == 3 * 4                # four rows a language
    for lang, r in results.items():
        assert r["chosen"]["test"]["all"]["sentence_f1"] > r["baselines"]["right"]["all"]["sentence_f1"], lang
        assert r["lm_only"]["test"]["all"]["sentence_f1"] > r["baselines"]["right"]["all"]["sentence_f1"], lang

"""``research/choose_v9.py`` (rule v9, 49-51): the ranking of grammar members, rule 50's
candidates in order, rule 51's choice and its ties, and the voted average, on made-up records."""
from lab import load_script


def record(seed, epoch, f1):
    return {"seed": seed, "epoch": epoch, "dev": {"grammar": {"all": f1, "10": f1}}}


RECORDS = [record(1, 1, 0.30), record(1, 2, 0.399), record(2, 1, 0.467), record(2, 2, 0.41), record(3, 1, 0.41)]


def test_ranking_and_best_of_seeds():
    v9 = load_script("choose_v9")
    ranked = v9.ranked_members(RECORDS)
    assert ranked == [(2, 1), (2, 2), (3, 1), (1, 2), (1, 1)]          # 0.41 tie: seed 2 before seed 3
    assert v9.best_of_seeds(ranked, 2) == [(2, 1), (3, 1)]
    assert v9.best_of_seeds(ranked, 3) == [(2, 1), (3, 1), (1, 2)]
    assert v9.best_of_seeds(ranked[:2], 2) is None


def test_candidates_in_rule_50s_order():
    v9 = load_script("choose_v9")
    out = v9.candidates(v9.ranked_members(RECORDS))
    assert len(out) == 1 + 2 * 3 * 4
    assert out[0]["name"] == "shipped bundle" and out[1]["name"] == "g s2 e1, ties first"
    assert out[4]["name"] == "g s2 e1 + right, ties right"
    assert out[13]["name"] == "shipped LMs + g s2 e1, ties first" and out[13]["bundle"]
    assert out[-1]["grammars"] == [(2, 1), (3, 1), (1, 2)] and out[-1]["voters"] == ["right"]


def test_choice_prefers_fewer_trees_then_the_earlier():
    v9 = load_script("choose_v9")

    def row(order, f1, grammars, bundle=False, voters=()):
        return {"order": order, "grammars": grammars, "bundle": bundle, "voters": list(voters),
                "dev": {"all": {"sentence_f1": f1}}}
    rows = [row(0, 0.5, []), row(1, 0.6, [[1, 1]], voters=["right"]), row(2, 0.6, [[1, 1]]), row(3, 0.6, [[2, 1]])]
    assert v9.choose(rows)["order"] == 2


def test_the_voted_average():
    v9 = load_script("choose_v9")
    words = ["a", "b", "c", "d"]
    left = ((("a", "b"), "c"), "d")
    right = ("a", ("b", ("c", "d")))
    # One left member and a right voter tie; ties right gives the right tree, ties first the left.
    assert v9.average([[left]], [words], ["right"], "right") == [right]
    assert v9.average([[left]], [words], ["right"], "first") == [left]
    assert v9.average([[left]], [words], [], "first") == [left]

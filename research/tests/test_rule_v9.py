"""``research/choose_v9.py`` (rule v9, 49-51): the ranking of grammar members, rule 50's
candidates in order, rule 51's choice and its ties, and the voted average, on made-up records."""
from lab import load_script


def record(run, epoch, f1):
    return {"run": f"grammar-{run}", "epoch": epoch, "dev": {"grammar": {"all": f1, "10": f1}}}


RECORDS = [record("a", 1, 0.30), record("a", 2, 0.399), record("b", 1, 0.467), record("b", 2, 0.41),
           record("c", 1, 0.41), record("lost", 4, 0.533)]
#: Rule 50 as amended: a member whose epoch file is gone is not ranked.
EXISTS = lambda run, epoch: run != "grammar-lost"                       # noqa: E731


def test_ranking_and_best_of_runs():
    v9 = load_script("choose_v9")
    ranked = v9.ranked_members(RECORDS, EXISTS)
    assert ranked == [("grammar-b", 1), ("grammar-b", 2), ("grammar-c", 1), ("grammar-a", 2), ("grammar-a", 1)]
    assert v9.best_of_runs(ranked, 2) == [("grammar-b", 1), ("grammar-c", 1)]     # 0.41 tie: the earlier record
    assert v9.best_of_runs(ranked, 3) == [("grammar-b", 1), ("grammar-c", 1), ("grammar-a", 2)]
    assert v9.best_of_runs(ranked[:2], 2) is None
    assert v9.ranked_members(RECORDS, lambda run, epoch: True)[0] == ("grammar-lost", 4)


def test_candidates_in_rule_50s_order():
    v9 = load_script("choose_v9")
    out = v9.candidates(v9.ranked_members(RECORDS, EXISTS))
    assert len(out) == 1 + 2 * 3 * 4
    assert out[0]["name"] == "shipped bundle" and out[1]["name"] == "g b e1, ties first"
    assert out[4]["name"] == "g b e1 + right, ties right"
    assert out[13]["name"] == "shipped LMs + g b e1, ties first" and out[13]["bundle"]
    assert out[-1]["grammars"] == [("grammar-b", 1), ("grammar-c", 1), ("grammar-a", 2)]
    assert out[-1]["voters"] == ["right"]


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

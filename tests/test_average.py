"""Tree averaging against brute-force enumeration of every binary tree (n <= 8)."""
import random
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onparse.trees.average import average_trees, average_trees_batch
from onparse.trees.baselines import left_branching, random_tree, right_branching
from onparse.trees.tree import leaves, spans_to_tree, tree_spans


@lru_cache(maxsize=None)
def _all_trees(i: int, j: int):
    """Every binary bracketing of [i, j) as a frozenset of spans, in the tie order of the
    module docstring: top split k ascending, then the left subtree's order, then the right's."""
    if j - i == 1:
        return [frozenset()]
    out = []
    for k in range(i + 1, j):
        for left in _all_trees(i, k):
            for right in _all_trees(k, j):
                out.append(frozenset({(i, j)}) | left | right)
    return out


def brute_force(n, members):
    """The first tree (in tie order) with the most shared spans, then the most spans shared
    with the first member."""
    sets = [set(s) for s in members]
    best, best_key = None, None
    for tree in _all_trees(0, n):
        key = (sum(len(tree & s) for s in sets), len(tree & sets[0]))
        if best_key is None or key > best_key:
            best, best_key = tree, key
    return best


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 8), k=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_average_equals_brute_force(n, k, seed):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(n)]
    members = [random_tree(words, rng) for _ in range(k)]
    got = average_trees(members)
    assert leaves(got) == words
    if n >= 2:
        assert frozenset(tree_spans(got)) == brute_force(n, [tree_spans(m) for m in members])


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 2**32 - 1))
def test_one_member_is_returned_unchanged(n, seed):
    words = [f"w{i}" for i in range(n)]
    member = random_tree(words, random.Random(seed))
    assert average_trees([member]) == member


def test_hand_computed_majority():
    # Three members over "a b c d": two say ((a b) (c d)), one says (a (b (c d))).
    words = list("abcd")
    m1 = (("a", "b"), ("c", "d"))
    m2 = right_branching(words)
    assert average_trees([m1, m2, m1]) == m1
    # Counts: (0,2) 2, (2,4) 3, (1,4) 1, (0,3) 0 -> ((a b) (c d)) shares 2 + 3 + 3 whole.
    assert sorted(tree_spans(average_trees([m1, m2, m1]))) == [(0, 2), (0, 4), (2, 4)]


def test_ties_go_to_the_first_member_then_the_shortest_left_part():
    words = list("abc")
    left, right = left_branching(words), right_branching(words)
    # One each: the first member wins the tie.
    assert average_trees([left, right]) == left
    assert average_trees([right, left]) == right
    # Four words, members ((a b) (c d)) first... a tie the first member cannot break:
    # two members whose spans the first does not share either way fall back to k ascending.
    a = (("a", "b"), ("c", "d"))
    assert average_trees([a]) == a


def test_batch_equals_one_at_a_time_over_mixed_lengths():
    rng = random.Random(7)
    sentences = []
    for n in [1, 2, 3, 5, 5, 9, 9, 9, 14, 1, 30]:
        words = [f"w{i}" for i in range(n)]
        sentences.append([random_tree(words, rng) for _ in range(rng.randint(1, 5))])
    batch = average_trees_batch(sentences)
    assert batch == [average_trees(s) for s in sentences]


def test_members_over_different_words_are_an_error():
    with pytest.raises(ValueError, match="same words"):
        average_trees([("a", "b"), ("a", "c")])
    with pytest.raises(ValueError, match="no member"):
        average_trees_batch([[]])


def agreement(tree, members):
    """``(shared, possible)``: spans of ``tree`` summed over the members that hold them, and
    the most any tree could share (members x spans per tree)."""
    mine = set(tree_spans(tree))
    return sum(len(mine & set(tree_spans(m))) for m in members), len(members) * len(mine)


def test_agreement_is_maximised_by_the_average():
    rng = random.Random(3)
    words = [f"w{i}" for i in range(7)]
    members = [random_tree(words, rng) for _ in range(4)]
    avg = average_trees(members)
    best = agreement(avg, members)[0]
    for tree in _all_trees(0, 7):
        assert agreement(spans_to_tree(words, tree), members)[0] <= best


def brute_force_ties(n, members, ties):
    """Rule ``right``: the first tree of most shared spans in the enumeration order of
    ``_all_trees`` (top split ascending, then left, then right subtree); ``left``: the last."""
    sets = [set(s) for s in members]
    shared = [(sum(len(tree & s) for s in sets), tree) for tree in _all_trees(0, n)]
    best = max(score for score, _ in shared)
    tied = [tree for score, tree in shared if score == best]
    return tied[0] if ties == "right" else tied[-1]


@settings(max_examples=300, deadline=None)
@given(n=st.integers(2, 8), k=st.integers(1, 6), seed=st.integers(0, 2**32 - 1), ties=st.sampled_from(["right", "left"]))
def test_directional_tie_rules_equal_brute_force(n, k, seed, ties):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(n)]
    members = [random_tree(words, rng) for _ in range(k)]
    got = average_trees(members, ties)
    assert frozenset(tree_spans(got)) == brute_force_ties(n, [tree_spans(m) for m in members], ties)


def test_tie_rules_by_hand():
    words = list("abcd")
    left, right = left_branching(words), right_branching(words)
    # One vote each: every span of either tree is held once, so the rules decide.
    assert average_trees([left, right], "first") == left
    assert average_trees([left, right], "right") == right
    assert average_trees([right, left], "left") == left
    # Two members that share only the whole sentence, ((a b) (c d)) and (a ((b c) d)): the most
    # any tree shares is 2 spans besides the whole, at top split k = 1 (a ((b c) d) or
    # a (b (c d)), whose (2, 4) is the first member's) or k = 2 (the first member), not k = 3.
    a, b = (("a", "b"), ("c", "d")), ("a", (("b", "c"), "d"))
    assert average_trees([a, b], "right") == ("a", ("b", ("c", "d")))   # k = 1, then k = 2
    assert average_trees([a, b], "left") == a                           # k = 2
    assert average_trees([b, a], "first") == b
    with pytest.raises(ValueError, match="tie rule"):
        average_trees([a], "middle")


@pytest.mark.parametrize("ties", ["first", "right", "left"])
def test_members_that_all_agree_give_their_tree_under_every_rule(ties):
    rng = random.Random(11)
    for n in range(1, 15):
        tree = random_tree([f"w{i}" for i in range(n)], rng)
        assert average_trees([tree] * 3, ties) == tree


def test_a_sentence_too_long_to_average_gets_its_first_member(monkeypatch):
    import onparse.trees.average as average

    monkeypatch.setattr(average, "MAX_WORDS", 6)
    rng = random.Random(5)
    short = [random_tree([f"w{i}" for i in range(5)], rng) for _ in range(3)]
    long_ = [random_tree([f"w{i}" for i in range(9)], rng) for _ in range(3)]
    out = average.average_trees_batch([short, long_, short])
    assert out[1] == long_[0] and out.too_long == [1]
    assert out[0] == out[2] == average_trees(short)

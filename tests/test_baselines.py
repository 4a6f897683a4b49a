"""onparse.trees.baselines, and the reference table of ``docs/onlstm.md`` section 6 on the NLTK sample (each
builder against brute force: tests/test_algorithms.py)."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onparse.trees.baselines import KINDS, balanced, baseline_trees, left_branching, random_tree, right_branching
from onparse.scores.metrics import evaluate
from onparse.gold.treebank import PTB_ROOT_ENV, load_gold
from onparse.trees.tree import depth, leaves, tree_spans


def test_hand_cases():
    words = ["a", "b", "c", "d", "e"]
    assert right_branching(words) == ("a", ("b", ("c", ("d", "e"))))
    assert left_branching(words) == (((("a", "b"), "c"), "d"), "e")
    assert balanced(words) == ((("a", "b"), "c"), ("d", "e"))
    assert balanced(words[:4]) == (("a", "b"), ("c", "d"))
    for build in (right_branching, left_branching, balanced):
        assert build(["x"]) == "x"
        assert build(["x", "y"]) == ("x", "y")
        with pytest.raises(ValueError):
            build([])
    assert random_tree(["x"], random.Random(0)) == "x"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=25), st.integers(0, 2**32))
def test_builders_give_binary_trees_over_the_words(words, seed):
    trees = [right_branching(words), left_branching(words), balanced(words), random_tree(words, random.Random(seed))]
    for tree in trees:
        assert leaves(tree) == words
        assert len(tree_spans(tree)) == len(words) - 1
    n = len(words)
    assert depth(trees[0]) == depth(trees[1]) == n - 1
    assert depth(trees[2]) == (n - 1).bit_length()  # ceil(log2 n)
    # (each builder's tree against brute force: tests/test_algorithms.py)


def test_random_trees_are_seeded_and_cover_every_split():
    sentences = [list("abc")] * 200
    a = baseline_trees(sentences, "random", seed=1)
    assert a == baseline_trees(sentences, "random", seed=1)
    assert a != baseline_trees(sentences, "random", seed=2)
    shapes = {tree: a.count(tree) for tree in set(a)}
    assert set(shapes) == {("a", ("b", "c")), (("a", "b"), "c")}
    assert min(shapes.values()) > 60  # uniform split points: about half each


def test_baseline_trees_kinds():
    assert KINDS == ("right", "left", "balanced", "random")
    assert baseline_trees([["a", "b", "c"]], "right") == [("a", ("b", "c"))]
    assert baseline_trees([("a", "b", "c")], "left") == [(("a", "b"), "c")]
    with pytest.raises(ValueError, match="unknown baseline kind"):
        baseline_trees([["a"]], "middle")


# ``docs/onlstm.md`` section 6: trees, set, sentences, Kim-scored, sentence F1 (ON-LSTM), (Kim), corpus F1
REFERENCE = [
    ("right", "wsj10", 555, 513, 58.6, 56.8, 55.0),
    ("left", "wsj10", 555, 513, 19.2, 14.1, 13.4),
    ("right", "wsj", 3914, 3872, 39.9, 39.5, 35.8),
    ("left", "wsj", 3914, 3872, 8.6, 7.8, 6.4),
]


@pytest.mark.parametrize("kind, name, n, n_kim, sent, kim, corpus", REFERENCE)
def test_reference_table(nltk_treebank, monkeypatch, kind, name, n, n_kim, sent, kim, corpus):
    monkeypatch.delenv(PTB_ROOT_ENV, raising=False)
    gold = load_gold(name)
    r = evaluate(baseline_trees(gold.tokens, kind), gold)
    assert (r.n_sentences, r.n_kim) == (n, n_kim)
    # reproduced to the table's one decimal
    assert abs(100 * r.sentence_f1.f1 - sent) <= 0.05
    assert abs(100 * r.kim_f1.f1 - kim) <= 0.05
    assert abs(100 * r.corpus_f1.f1 - corpus) <= 0.05

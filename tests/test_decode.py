"""Decoders against the recursive definitions of ``docs/onlstm.md`` section 3, plus tree invariants (and
against brute force over every binary tree: tests/test_algorithms.py)."""
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onparse.trees.decode import DECODERS, decode, onlstm_tree, split_tree


# --- the recursive definitions, written as literally as the paper states them -----------------

def _first_argmax(values):
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


def onlstm_reference(d, w):
    if len(w) == 1:
        return w[0]
    k = _first_argmax(d)
    if k == 0:
        return (w[0], onlstm_reference(d[1:], w[1:]))
    if k == len(w) - 1:
        return (onlstm_reference(d[:-1], w[:-1]), w[-1])
    return (onlstm_reference(d[:k], w[:k]), (w[k], onlstm_reference(d[k + 1:], w[k + 1:])))


def split_reference(d, w):
    # d[k] scores the boundary between w[k-1] and w[k]; d[0] is never looked at.
    if len(w) == 1:
        return w[0]
    k = 1 + _first_argmax(d[1:])
    return (split_reference(d[:k], w[:k]), split_reference(d[k:], w[k:]))


REFERENCE = {"onlstm": onlstm_reference, "split": split_reference}


def leaves_of(tree):
    return [tree] if not isinstance(tree, tuple) else [x for child in tree for x in leaves_of(child)]


def internal_spans(tree, start=0):
    """(spans of internal nodes, number of leaves); every internal node must be binary."""
    if not isinstance(tree, tuple):
        return [], 1
    assert len(tree) == 2, tree
    spans, width = [], 0
    for child in tree:
        sub, n = internal_spans(child, start + width)
        spans += sub
        width += n
    return spans + [(start, start + width)], width


# Few distinct values make ties common; floats in [0, 1] like real distances cover the rest.
distance_values = st.one_of(
    st.lists(st.integers(0, 2).map(float), min_size=1, max_size=40),
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40),
    st.lists(st.sampled_from([0.5]), min_size=1, max_size=40),
)


@pytest.mark.parametrize("method", DECODERS)
@settings(max_examples=400, deadline=None)
@given(d=distance_values)
def test_decoder_matches_recursive_definition(method, d):
    words = [f"w{i}" for i in range(len(d))]
    assert decode(d, words, method) == REFERENCE[method](d, words)


@pytest.mark.parametrize("method", DECODERS)
@settings(max_examples=200, deadline=None)
@given(d=distance_values)
def test_invariants(method, d):
    words = [f"w{i}" for i in range(len(d))]
    tree = decode(d, words, method)
    assert leaves_of(tree) == words
    spans, n = internal_spans(tree)
    assert n == len(words)
    assert len(spans) == len(words) - 1 == len(set(spans))
    if len(words) > 1:
        assert (0, len(words)) in spans


def test_hand_computed_cases():
    w = ["the", "cat", "sat", "down"]
    # Largest distance on "sat": onlstm gives [the cat] [sat [down]].
    d = [0.1, 0.2, 0.9, 0.3]
    assert onlstm_tree(d, w) == (("the", "cat"), ("sat", "down"))
    # split: boundary before "sat" (0.9) first, then before "cat" (0.2) in the left part.
    assert split_tree(d, w) == (("the", "cat"), ("sat", "down"))
    # Increasing distances: onlstm puts the last word alone at the top: (((the cat) sat) down).
    d = [0.1, 0.2, 0.3, 0.4]
    assert onlstm_tree(d, w) == ((("the", "cat"), "sat"), "down")
    assert split_tree(d, w) == ((("the", "cat"), "sat"), "down")
    # All equal: first position wins, so both become right-branching.
    d = [0.5] * 4
    assert onlstm_tree(d, w) == ("the", ("cat", ("sat", "down")))
    assert split_tree(d, w) == ("the", ("cat", ("sat", "down")))
    # Where the two rules differ: onlstm reads d[0] (the top split falls before "cat" after
    # "the" as a lone left child), split ignores it and cuts at the 0.5 boundary before "sat".
    d = [0.9, 0.1, 0.5, 0.2]
    assert onlstm_tree(d, w) == ("the", ("cat", ("sat", "down")))
    assert split_tree(d, w) == (("the", "cat"), ("sat", "down"))


def test_single_word_and_errors():
    assert onlstm_tree([0.3], ["x"]) == "x"
    assert split_tree([0.3], ["x"]) == "x"
    with pytest.raises(ValueError):
        onlstm_tree([], [])
    with pytest.raises(ValueError):
        split_tree([0.1, 0.2], ["a"])
    with pytest.raises(ValueError, match="unknown decoder"):
        decode([0.1], ["a"], "cky")


def test_numpy_input_and_non_string_leaves():
    np = pytest.importorskip("numpy")
    d = np.array([0.1, 0.2, 0.9, 0.3], dtype=np.float32)
    assert onlstm_tree(d, [0, 1, 2, 3]) == ((0, 1), (2, 3))
    assert split_tree(d, [0, 1, 2, 3]) == ((0, 1), (2, 3))


@pytest.mark.parametrize("method", DECODERS)
def test_very_long_sentence_needs_no_recursion(method):
    # Increasing distances give a maximally deep tree; the decoders must not recurse.
    n = 3 * sys.getrecursionlimit()
    words = [str(i) for i in range(n)]
    tree = decode([i / n for i in range(n)], words, method)
    depth = 0
    while isinstance(tree, tuple):
        assert tree[1] == words[n - 1 - depth]
        tree = tree[0]
        depth += 1
    assert depth == n - 1 and tree == "0"

"""Every tree builder against brute force, in the style of torch-struct's ``test_algorithms.py``:
one table names each decoder (:data:`onparse.trees.decode.DECODERS`) and each baseline kind
(:data:`onparse.trees.baselines.KINDS`) with the rule that defines its tree, and one test enumerates
every binary tree over a short sentence and checks that the builder returns the one and only
tree that obeys its rule at every node.

Each rule says where the node over words ``i .. j-1`` splits (its right part starts at word
``k``), read off ``docs/onlstm.md`` section 3 and the baseline docstrings; nodes are visited top-down,
left before right (the order in which ``random`` draws its split points):

- ``onlstm``: with ``m`` the first position of the largest distance in ``i .. j-1``, the node is
  ``(tree(i..m-1), (w_m, tree(m+1..j-1)))``, that is a split at ``m``, or at ``i + 1`` when
  ``m = i`` (``w_m`` alone on the left);
- ``split``: at the first largest boundary score ``d[k]``, ``k`` in ``i+1 .. j-1``;
- ``right`` / ``left``: at ``i + 1`` / ``j - 1``; ``balanced``: at ``(i + j + 1) // 2``;
- ``random``: at ``rng.randint(i + 1, j - 1)`` from ``random.Random(seed)``.
"""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onparse.trees.baselines import KINDS, baseline_trees
from onparse.trees.decode import DECODERS, decode


def _first_max(values, start, stop):
    best = start
    for k in range(start, stop):
        if values[k] > values[best]:
            best = k
    return best


def _onlstm_rule(d, i, j, rng):
    m = _first_max(d, i, j)
    return i + 1 if m == i else m


RULES = {  # name -> the split point of the node over words i .. j-1
    "onlstm": _onlstm_rule,
    "split": lambda d, i, j, rng: _first_max(d, i + 1, j),
    "right": lambda d, i, j, rng: i + 1,
    "left": lambda d, i, j, rng: j - 1,
    "balanced": lambda d, i, j, rng: (i + j + 1) // 2,
    "random": lambda d, i, j, rng: rng.randint(i + 1, j - 1),
}

ALGORITHMS = {  # name -> the builder under test: (words, distances, seed) -> tree
    **{name: (lambda words, d, seed, name=name: decode(d, words, name)) for name in DECODERS},
    **{kind: (lambda words, d, seed, kind=kind: baseline_trees([words], kind, seed)[0]) for kind in KINDS},
}


def all_binary_trees(words):
    """Every binary tree over ``words`` (Catalan(n - 1) of them)."""
    if len(words) == 1:
        return [words[0]]
    return [(left, right) for k in range(1, len(words))
            for left in all_binary_trees(words[:k]) for right in all_binary_trees(words[k:])]


def _width(tree):
    return 1 if isinstance(tree, str) else sum(_width(child) for child in tree)


def obeys(tree, rule, d, seed):
    """True when every node of ``tree`` splits where ``rule`` says, visited top-down, left first."""
    rng = random.Random(seed)
    todo = [(tree, 0)]
    while todo:
        node, i = todo.pop()
        if isinstance(node, str):
            continue
        left, right = node
        k, j = i + _width(left), i + _width(node)
        if k != rule(d, i, j, rng):
            return False
        todo += [(right, k), (left, i)]  # left is visited next
    return True


def test_the_table_covers_every_decoder_and_baseline_kind():
    assert set(ALGORITHMS) == set(RULES) == set(DECODERS) | set(KINDS)


# Few distinct values make ties common; floats in [0, 1] like real distances cover the rest.
VALUES = st.one_of(st.integers(0, 2).map(float), st.floats(0, 1, allow_nan=False))


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_algorithm_against_brute_force(name, data):
    n = data.draw(st.integers(1, 7), label="words")
    d = data.draw(st.lists(VALUES, min_size=n, max_size=n), label="distances")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    words = [f"w{i}" for i in range(n)]
    obeying = [tree for tree in all_binary_trees(words) if obeys(tree, RULES[name], d, seed)]
    assert obeying == [ALGORITHMS[name](words, d, seed)]

"""Trivial tree baselines: right- and left-branching, balanced, random.  No torch.

Each builder takes a sentence's words and returns a binary unlabelled tree
(:mod:`onparse.trees.tree`); a one-word sentence is the word itself.
"""
from __future__ import annotations

import random
from typing import Callable, Dict, List, Optional, Sequence

from .tree import Tree

#: Baseline kinds, in the order ``--kind`` lists them.
KINDS = ("right", "left", "balanced", "random")
#: Baselines that may vote in a tree average beside language-model members (``--voter``):
#: each adds one tree per sentence.  They lean on a language's word order (English is
#: right-branching), so no model gets one unless asked or its bundle says so.
VOTER_KINDS = ("right", "left")


def check_voters(voters: Sequence[str]) -> tuple:
    """``voters`` as a tuple if each is one of :data:`VOTER_KINDS`; otherwise ValueError."""
    bad = [v for v in voters if v not in VOTER_KINDS]
    if bad:
        raise ValueError(f"unknown voter {bad[0]!r}; choose from {', '.join(VOTER_KINDS)}")
    return tuple(voters)


def voter_tree(kind: str, words: Sequence[str]) -> Tree:
    """The tree voter ``kind`` (:data:`VOTER_KINDS`) casts for ``words``."""
    return right_branching(words) if kind == "right" else left_branching(words)


def _check(words: Sequence[str]) -> None:
    if len(words) == 0:
        raise ValueError("cannot build a tree over zero words")


def right_branching(words: Sequence[str]) -> Tree:
    """``(w1 (w2 (w3 w4)))``: every constituent ends at the last word."""
    _check(words)
    tree: Tree = words[-1]
    for word in reversed(words[:-1]):
        tree = (word, tree)
    return tree


def left_branching(words: Sequence[str]) -> Tree:
    """``(((w1 w2) w3) w4)``: every constituent starts at the first word."""
    _check(words)
    tree: Tree = words[0]
    for word in words[1:]:
        tree = (tree, word)
    return tree


def balanced(words: Sequence[str]) -> Tree:
    """Split each span in the middle; the left half gets the extra word when the length is odd.

    ``(w1 w2 w3)`` -> ``((w1 w2) w3)``; the depth is ceil(log2(n)).
    """
    _check(words)

    def build(a: int, b: int) -> Tree:
        if b - a == 1:
            return words[a]
        mid = (a + b + 1) // 2
        return (build(a, mid), build(mid, b))

    return build(0, len(words))


def random_tree(words: Sequence[str], rng: random.Random) -> Tree:
    """Split each span at a point drawn uniformly from its n - 1 gaps, top-down, left first.

    Iterative (a random tree can be as deep as the sentence is long); the draws happen in the
    order of the recursive definition, left subtree before right.
    """
    _check(words)
    order = []  # (start, end, split) in pre-order; split None for a word
    stack = [(0, len(words))]
    while stack:
        a, b = stack.pop()
        if b - a == 1:
            order.append((a, b, None))
            continue
        k = rng.randint(a + 1, b - 1)
        order.append((a, b, k))
        stack.append((k, b))
        stack.append((a, k))
    built: Dict[tuple, Tree] = {}
    for a, b, k in reversed(order):  # children are built before their parent
        built[(a, b)] = words[a] if k is None else (built.pop((a, k)), built.pop((k, b)))
    return built[(0, len(words))]


def baseline_trees(
    sentences: Sequence[Sequence[str]], kind: str, seed: Optional[int] = 0
) -> List[Tree]:
    """One baseline tree per sentence.  ``kind`` is one of :data:`KINDS`.

    ``random`` draws from one ``random.Random(seed)`` across the sentences in order, so the
    same seed and sentences give the same trees on every platform.
    """
    builders: Dict[str, Callable[[Sequence[str]], Tree]] = {
        "right": right_branching,
        "left": left_branching,
        "balanced": balanced,
    }
    if kind == "random":
        rng = random.Random(seed)
        return [random_tree(list(s), rng) for s in sentences]
    if kind not in builders:
        raise ValueError(f"unknown baseline kind {kind!r}; choose from {', '.join(KINDS)}")
    build = builders[kind]
    return [build(list(s)) for s in sentences]

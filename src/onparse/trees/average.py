"""Tree averaging: the binary tree that shares the most spans with K member trees.  No torch.

Shayegh, Cao, Zhu, Cheung and Mou (ICLR 2024, "Ensemble Distillation for Unsupervised
Constituency Parsing") define the average of K binary trees of one sentence as

    argmax over binary trees T of  sum_k |spans(T) ∩ spans(T_k)|

and compute it with a CYK-style dynamic program over span counts: with ``c(i, j)`` the number
of members holding the span ``[i, j)``,

    best(i, i+1) = 0,   best(i, j) = c(i, j) + max_{i<k<j} best(i, k) + best(k, j).

**Ties** (several trees share the most spans) are broken deterministically, by one of the rules
of :data:`TIES` (the ``ties`` argument; ``--ties`` on the command line):

* ``first`` (the default): the tree that shares the most spans with the *first* member
  (members are ordered by the caller; in a bundle, as it lists them), then, at each node from
  the top down, the split point ``k`` with the shortest left part.  Favours no direction by
  itself: the first member decides.
* ``right``: at each node from the top down, the split with the shortest left part: the
  most right-branching of the tied trees (a right-branching prior).
* ``left``: at each node from the top down, the split with the longest left part (a
  left-branching prior).

Rule ``first`` is folded into integer weights: a span scores ``n * c(i, j) + [span in member 1]``,
and since member 1 has fewer than ``n`` spans, the first term always dominates.  With K = 1 the
average is the member itself (it is the only binary tree that shares all its spans with it).

Sentences longer than :data:`MAX_WORDS` words are not averaged (their tables would take hundreds
of MB): their tree is the first member's, and :func:`average_trees_batch` counts them in
:attr:`Averaged.too_long` so that callers can say so.

Cost: O(n^3) time and O(n^2) memory per sentence.  :func:`average_trees_batch` runs the
program for all sentences of one length at once with NumPy, one vectorised step per span
length, so a corpus costs about ``max length`` NumPy steps per distinct length.
"""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Dict, List, Sequence

from .tree import Span, Tree, leaves, spans_to_tree, tree_spans

if TYPE_CHECKING:  # annotations only: NumPy is imported when a function runs
    import numpy as np

#: Beyond this length one sentence's tables would take tens of MB: the first member's tree is used.
MAX_WORDS = 2000
#: Tie rules (module docstring), the default first.
TIES = ("first", "right", "left")
DEFAULT_TIES = "first"
#: What each tie rule means, in a few words (for ``onparse info``).
TIE_MEANINGS = {"first": "the first member decides", "right": "the most right-branching of the tied trees",
                "left": "the most left-branching of the tied trees"}


class Averaged(list):
    """The averaged trees (a list, in input order), with ``too_long``: the 0-based indices of
    the sentences longer than :data:`MAX_WORDS`, whose tree is their first member's."""

    too_long: List[int]


def check_ties(ties: str) -> str:
    """``ties`` if it is a rule of :data:`TIES`; otherwise ValueError naming them."""
    if ties not in TIES:
        raise ValueError(f"unknown tie rule {ties!r}; choose from {', '.join(TIES)}")
    return ties


def _weights(n: int, member_spans: Sequence[Sequence[Span]], first_bonus: bool = True) -> np.ndarray:
    """(n+1, n+1) int64 weights per span ``[i, j)``: ``n * count + [in the first member]``,
    or ``count`` alone without ``first_bonus``."""
    import numpy as np  # here, not at import: the command line reads TIES without paying for NumPy

    w = np.zeros((n + 1, n + 1), dtype=np.int64)
    for k, spans in enumerate(member_spans):
        for i, j in set(spans):
            if j - i >= 2:
                w[i, j] += (n + (1 if k == 0 else 0)) if first_bonus else 1
    return w


def _best_splits(weights: np.ndarray, longest_left: bool = False) -> np.ndarray:
    """CYK over a batch: ``weights`` (B, n+1, n+1) -> split points (B, n+1, n+1), where
    ``split[b, i, j]`` is the ``k`` of the best tree over ``[i, j)``: the first maximum (the
    shortest left part), or the last one with ``longest_left``."""
    import numpy as np

    batch, size, _ = weights.shape
    n = size - 1
    best = np.zeros_like(weights)
    split = np.zeros(weights.shape, dtype=np.int64)
    for length in range(2, n + 1):
        starts = np.arange(0, n - length + 1)                     # (S,)
        ends = starts + length                                    # (S,)
        ks = starts[:, None] + np.arange(1, length)[None, :]      # (S, L-1)
        cand = best[:, starts[:, None], ks] + best[:, ks, ends[:, None]]  # (B, S, L-1)
        if longest_left:                                          # last maximum: longest left part
            arg = length - 2 - cand[:, :, ::-1].argmax(axis=2)
        else:                                                     # first maximum: shortest left part
            arg = cand.argmax(axis=2)
        best[:, starts, ends] = weights[:, starts, ends] + np.take_along_axis(cand, arg[..., None], 2)[..., 0]
        split[:, starts, ends] = starts[None, :] + 1 + arg
    return split


def _spans_from_splits(split: np.ndarray, n: int) -> List[Span]:
    spans: List[Span] = []
    todo = [(0, n)]
    while todo:
        i, j = todo.pop()
        if j - i < 2:
            continue
        spans.append((i, j))
        k = int(split[i, j])
        todo.append((i, k))
        todo.append((k, j))
    return spans


def average_trees(members: Sequence[Tree], ties: str = DEFAULT_TIES) -> Tree:
    """The average (module docstring) of binary trees over the same words, as a binary tree
    over the first member's leaves.  Raises ValueError when the members' words differ."""
    return average_trees_batch([members], ties)[0]


def average_trees_batch(sentences: Sequence[Sequence[Tree]], ties: str = DEFAULT_TIES) -> Averaged:
    """One averaged tree per sentence, each sentence given as its list of member trees (every
    sentence with the same number of members or not, but at least one), ties broken by
    ``ties`` (:data:`TIES`).  Sentences of equal length run through the dynamic program
    together; one longer than :data:`MAX_WORDS` gets its first member's tree."""
    import numpy as np

    check_ties(ties)
    words: List[List[str]] = []
    by_length: Dict[int, List[int]] = defaultdict(list)
    for index, members in enumerate(sentences):
        if not members:
            raise ValueError(f"sentence {index + 1}: no member trees to average")
        first = leaves(members[0])
        for other in members[1:]:
            if leaves(other) != first:
                raise ValueError(f"sentence {index + 1}: member trees do not cover the same words")
        words.append(first)
        by_length[len(first)].append(index)
    out = Averaged([None] * len(sentences))
    out.too_long = []
    for n, indices in by_length.items():
        if n < 3 or n > MAX_WORDS:
            for index in indices:
                out[index] = sentences[index][0]  # one or two words: a single binary tree exists
            if n > MAX_WORDS:
                out.too_long.extend(indices)
            continue
        # Bound the tables at about 64 MB per step: (B, n+1, n+1) int64, twice.
        chunk = max(1, (4 << 20) // ((n + 1) ** 2))
        for at in range(0, len(indices), chunk):
            group = indices[at:at + chunk]
            weights = np.stack([_weights(n, [tree_spans(t) for t in sentences[i]], ties == "first")
                                for i in group])
            split = _best_splits(weights, longest_left=ties == "left")
            for row, index in enumerate(group):
                out[index] = spans_to_tree(words[index], _spans_from_splits(split[row], n))
    out.too_long.sort()
    return out

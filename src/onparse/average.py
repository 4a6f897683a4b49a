"""Tree averaging: the binary tree that shares the most spans with K member trees.  No torch.

Shayegh, Cao, Zhu, Cheung and Mou (ICLR 2024, "Ensemble Distillation for Unsupervised
Constituency Parsing") define the average of K binary trees of one sentence as

    argmax over binary trees T of  sum_k |spans(T) ∩ spans(T_k)|

and compute it with a CYK-style dynamic program over span counts: with ``c(i, j)`` the number
of members holding the span ``[i, j)``,

    best(i, i+1) = 0,   best(i, j) = c(i, j) + max_{i<k<j} best(i, k) + best(k, j).

**Ties** (several trees share the most spans) are broken deterministically, in this order:

1. the tree that shares the most spans with the *first* member (members are ordered by the
   caller; in a bundle, by the rule in PROTOCOL.md);
2. then, at each node from the top down, the split point ``k`` with the shortest left part
   (the first maximum, as the decoders of :mod:`onparse.decode` break their ties).

Rule 1 is folded into integer weights: a span scores ``n * c(i, j) + [span in member 1]``,
and since member 1 has fewer than ``n`` spans, the first term always dominates.  With K = 1 the
average is the member itself (it is the only binary tree that shares all its spans with it).

Cost: O(n^3) time and O(n^2) memory per sentence.  :func:`average_trees_batch` runs the
program for all sentences of one length at once with NumPy, one vectorised step per span
length, so a corpus costs about ``max length`` NumPy steps per distinct length.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Dict, List, Sequence

import numpy as np

from .trees import Span, Tree, leaves, spans_to_tree, tree_spans

# Beyond this length one sentence's tables would take tens of MB: refuse clearly instead.
MAX_WORDS = 2000


def _weights(n: int, member_spans: Sequence[Sequence[Span]]) -> np.ndarray:
    """(n+1, n+1) int64 weights: ``n * count + [in the first member]`` per span ``[i, j)``."""
    w = np.zeros((n + 1, n + 1), dtype=np.int64)
    for k, spans in enumerate(member_spans):
        for i, j in set(spans):
            if j - i >= 2:
                w[i, j] += n + (1 if k == 0 else 0)
    return w


def _best_splits(weights: np.ndarray) -> np.ndarray:
    """CYK over a batch: ``weights`` (B, n+1, n+1) -> split points (B, n+1, n+1), where
    ``split[b, i, j]`` is the ``k`` of the best tree over ``[i, j)`` (first maximum)."""
    batch, size, _ = weights.shape
    n = size - 1
    best = np.zeros_like(weights)
    split = np.zeros(weights.shape, dtype=np.int64)
    for length in range(2, n + 1):
        starts = np.arange(0, n - length + 1)                     # (S,)
        ends = starts + length                                    # (S,)
        ks = starts[:, None] + np.arange(1, length)[None, :]      # (S, L-1)
        cand = best[:, starts[:, None], ks] + best[:, ks, ends[:, None]]  # (B, S, L-1)
        arg = cand.argmax(axis=2)                                 # first maximum: shortest left part
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


def average_trees(members: Sequence[Tree]) -> Tree:
    """The average (module docstring) of binary trees over the same words, as a binary tree
    over the first member's leaves.  Raises ValueError when the members' words differ."""
    return average_trees_batch([members])[0]


def average_trees_batch(sentences: Sequence[Sequence[Tree]]) -> List[Tree]:
    """One averaged tree per sentence, each sentence given as its list of member trees (every
    sentence with the same number of members or not, but at least one).  Sentences of equal
    length run through the dynamic program together."""
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
    out: List[Tree] = [None] * len(sentences)
    for n, indices in by_length.items():
        if n < 3:
            for index in indices:
                out[index] = sentences[index][0]  # one or two words: a single binary tree exists
            continue
        if n > MAX_WORDS:
            raise ValueError(f"sentence {indices[0] + 1} has {n} words: too long to average (at most {MAX_WORDS})")
        # Bound the tables at about 64 MB per step: (B, n+1, n+1) int64, twice.
        chunk = max(1, (4 << 20) // ((n + 1) ** 2))
        for at in range(0, len(indices), chunk):
            group = indices[at:at + chunk]
            weights = np.stack([_weights(n, [tree_spans(t) for t in sentences[i]]) for i in group])
            split = _best_splits(weights)
            for row, index in enumerate(group):
                out[index] = spans_to_tree(words[index], _spans_from_splits(split[row], n))
    return out

"""Binary trees from span scores, batched: the inside algorithm and CYK decoding.

A binary tree over ``n`` words is scored by the sum of ``scores[i, j]`` over its spans
``(i, j)`` of at least two words (word positions ``0 <= i < j <= n``, ``j`` exclusive); the
whole-sentence span is in every tree, so it moves every tree's score alike.  This is the
first-order tree CRF of span-based constituency parsers (Stern et al. 2017; the student of
``onparse distill``):

- :func:`inside` -- ``log Z``, the log-sum-exp of the scores of every binary tree.  Its gradient
  with respect to ``scores`` is each span's marginal probability, so ``log Z - score(tree)`` is
  the tree-CRF loss of a tree.
- :func:`cyk` -- the best tree of each sentence (ties to the split with the shortest left part).

Both are O(n^3) per sentence and run one span width at a time over the whole batch: for width
``w`` every span ``(i, i + w)`` of every sentence combines its ``w - 1`` splits at once.  Values
are kept per width (``[B, N + 1 - w]``: the spans of width ``w`` starting at ``i``), so that
autograd sees no in-place writes; :func:`cyk`, which needs no gradient, keeps them in two square
tables instead, so that each width is a few tensor operations (a 2,000-word sentence in seconds).

**Why not one chart routine for every dynamic program** (issue 40.3; torch-struct runs one
over semirings).  onparse has three charts and they differ where it counts: this one scores
spans with floats and needs autograd (inside) or a tie-stable argmax (CYK); the averaging program
(:mod:`onparse.trees.average`) counts shared spans in exact integers with NumPy, so that ties are
exact and ``onparse eval``/``induce`` of tree files never import torch; the grammar's inside
(:mod:`onparse.grammar.inside`) runs over rank-space symbol vectors, not span scalars, and its MBR
tree is this module's :func:`cyk` over its span marginals.  One generic routine would need a
semiring, a dtype and a cell type per caller, for three callers.  What they share is the tie
rule: the shortest left part, stated here for CYK and as the ``right`` rule of the average.

Shapes: ``scores`` is ``[B, N + 1, N + 1]`` (``scores[b, i, j]`` for ``i < j``; the rest is
ignored) and ``lengths`` ``[B]``, each in ``1..N``; a one-word sentence's only tree is its word,
of score 0.
"""
from __future__ import annotations

from typing import List, Sequence

import torch
from torch import Tensor

from .tree import Span


def _by_width(scores: Tensor, width: int) -> Tensor:
    """``[B, N + 1 - width]``: the scores of the spans ``(i, i + width)``."""
    return torch.diagonal(scores, offset=width, dim1=1, dim2=2)


def _splits(table: List[Tensor], width: int) -> Tensor:
    """``[B, width - 1, N + 1 - width]``: for every span ``(i, i + width)`` and split ``k``, the
    value of its left part ``(i, i + k)`` plus that of its right part ``(i + k, i + width)``."""
    n_spans = table[1].shape[1] + 1 - width                  # N + 1 - width
    return torch.stack([table[k][:, :n_spans] + table[width - k][:, k:k + n_spans] for k in range(1, width)], dim=1)


def inside(scores: Tensor, lengths: Tensor) -> Tensor:
    """``[B]``: ``log Z`` of every sentence, the log-sum-exp over its binary trees of the sum of
    their span scores (0 for a one-word sentence)."""
    batch, size = scores.shape[0], scores.shape[1] - 1
    table: List[Tensor] = [scores.new_zeros(batch, 0), scores.new_zeros(batch, size)]    # width 1: words
    for width in range(2, size + 1):
        table.append(_by_width(scores, width) + torch.logsumexp(_splits(table, width), dim=1))
    return _at_lengths(table, lengths)


def _at_lengths(table: List[Tensor], lengths: Tensor) -> Tensor:
    """The whole-sentence entry ``table[n][b, 0]`` of every sentence ``b`` of length ``n``."""
    rows = [table[int(n)][b, 0] for b, n in enumerate(lengths.tolist())]
    return torch.stack(rows)


def tree_score(scores: Tensor, spans: Sequence[Sequence[Span]]) -> Tensor:
    """``[B]``: the score of one tree per sentence, given as its spans of at least two words."""
    out = []
    for b, tree in enumerate(spans):
        kept = [(i, j) for i, j in tree if j - i >= 2]
        if kept:
            i, j = zip(*kept)
            out.append(scores[b, list(i), list(j)].sum())
        else:
            out.append(scores.new_zeros(()))
    return torch.stack(out)


@torch.no_grad()
def cyk(scores: Tensor, lengths: Tensor) -> List[List[Span]]:
    """The best tree of every sentence, as its spans of at least two words, outermost first (the
    whole sentence first).  Ties go to the split with the shortest left part.

    The best values are kept twice, ``by_start[b, i, w]`` for the span of width ``w`` starting
    at ``i`` and ``by_end[b, j, N - w]`` for the one ending at ``j``, so that the splits of every
    span of one width are one slice of each (a few tensor operations per width, not one per
    split).  Memory: 2 B (N + 1)^2 values."""
    batch, size = scores.shape[0], scores.shape[1] - 1
    by_start = scores.new_zeros(batch, size + 1, size + 1)
    by_end = scores.new_zeros(batch, size + 1, size + 1)
    best_split: List[Tensor] = [scores.new_zeros(batch, 0, dtype=torch.long)] * 2
    for width in range(2, size + 1):
        n_spans = size + 1 - width
        # split k (1..width-1) of (i, i + width): left (i, i + k) plus right (i + k, i + width)
        splits = by_start[:, :n_spans, 1:width] + by_end[:, width:, size + 1 - width:size]
        values, where = splits.max(dim=-1)                   # the first maximum: the shortest left part
        values = _by_width(scores, width) + values
        by_start[:, :n_spans, width] = values
        by_end[:, width:, size - width] = values
        best_split.append(where + 1)                         # split k = left part's width
    splits = [t.cpu() for t in best_split]
    out = []
    for b, n in enumerate(lengths.tolist()):
        spans: List[Span] = []
        stack = [(0, int(n))]
        while stack:
            i, j = stack.pop()
            if j - i < 2:
                continue
            spans.append((i, j))
            k = i + int(splits[j - i][b, i])
            stack.append((k, j))
            stack.append((i, k))
        out.append(spans)
    return out

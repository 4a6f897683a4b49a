"""The F1 conventions of unsupervised parsing, each defined once (``docs/onlstm.md``
section 5; :mod:`onparse.scores.metrics` accumulates them): one sentence's span counts, and the rule
of each convention.  No torch.

A sentence's span set holds its constituents of >= 2 words without the whole-sentence span;
duplicates collapse.  A :class:`Convention` is the rule that reads one sentence's
:class:`SpanCounts`, and how the rule's values add up over a corpus (a mean of per-sentence
scores, or pooled counts).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, NamedTuple, Optional, Set, Tuple

from ..trees.tree import Span, Tree, depth, leaves, tree_spans


def _scan(node: tuple, start: int, spans: Set[Span], words: List[str]) -> Tuple[int, int]:
    # One recursive pass for the scorer: collects spans (>= 2 words) and words, returns
    # (end position, depth).
    pos = start
    deepest = 0
    for child in node:
        if child.__class__ is str:
            words.append(child)
            pos += 1
        else:
            pos, d = _scan(child, pos, spans, words)
            if d > deepest:
                deepest = d
    if pos - start >= 2:
        spans.add((start, pos))
    return pos, deepest + 1


def scan_tree(tree: Tree) -> Tuple[Set[Span], List[str], int]:
    """``(span set, words, depth)`` of a tree in one pass (iterative fallback for deep trees).

    The span set is ``set(onparse.trees.tree.tree_spans(tree))``: whole sentence included.
    """
    if tree.__class__ is str:
        return set(), [tree], 0
    spans: Set[Span] = set()
    words: List[str] = []
    try:
        _, tree_depth = _scan(tree, 0, spans, words)
        return spans, words, tree_depth
    except RecursionError:  # deeper than the recursion limit: the iterative walks
        return set(tree_spans(tree)), leaves(tree), depth(tree)


class SpanCounts(NamedTuple):
    """What every convention reads of one sentence: its length and its span counts (spans of
    >= 2 words, whole sentence excluded)."""

    n_words: int
    n_match: int
    n_pred: int
    n_gold: int


# --------------------------------------------------------------------------------------
# The conventions
# --------------------------------------------------------------------------------------


def _f1(precision: float, recall: float) -> float:
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0


def sentence_prf(n_match: int, n_pred: int, n_gold: int) -> Tuple[float, float, float]:
    """P, R, F1 of one sentence in the ON-LSTM/PRPN convention (see module doc).

    >>> sentence_prf(1, 2, 1)
    (0.5, 1.0, 0.6666666666666666)
    >>> sentence_prf(0, 0, 0), sentence_prf(0, 1, 0), sentence_prf(0, 0, 1)
    ((1.0, 1.0, 1.0), (0.0, 1.0, 0.0), (0.0, 0.0, 0.0))
    """
    if n_gold == 0:
        recall = 1.0
        precision = 1.0 if n_pred == 0 else n_match / n_pred
    else:
        recall = n_match / n_gold
        precision = n_match / n_pred if n_pred else 0.0
    return precision, recall, _f1(precision, recall)


def kim_prf(n_match: int, n_pred: int, n_gold: int) -> Optional[Tuple[float, float, float]]:
    """P, R, F1 of one sentence in the Kim et al. convention, or None when it is not scored.

    A sentence is scored only when both span sets are non-empty (this also leaves out every
    sentence of one or two words).

    >>> kim_prf(1, 2, 1), kim_prf(0, 0, 3)
    ((0.5, 1.0, 0.6666666666666666), None)
    """
    if n_pred == 0 or n_gold == 0:
        return None
    precision, recall = n_match / n_pred, n_match / n_gold
    return precision, recall, _f1(precision, recall)


def corpus_prf(n_match: int, n_pred: int, n_gold: int) -> Tuple[float, float, float]:
    """P, R, F1 from pooled counts; an empty denominator gives 0 (1 when both are empty).

    >>> corpus_prf(1, 4, 2), corpus_prf(0, 0, 0)
    ((0.25, 0.5, 0.3333333333333333), (1.0, 1.0, 1.0))
    """
    if n_pred == 0 and n_gold == 0:
        return 1.0, 1.0, 1.0
    precision = n_match / n_pred if n_pred else 0.0
    recall = n_match / n_gold if n_gold else 0.0
    return precision, recall, _f1(precision, recall)


def evalb_counts(counts: SpanCounts) -> Tuple[int, int, int]:
    """One sentence's (matched, predicted, gold) brackets as EVALB counts them (module doc):
    the spans plus the whole-sentence span, which both trees have once a sentence has 2 words.

    >>> evalb_counts(SpanCounts(n_words=5, n_match=1, n_pred=3, n_gold=2)), evalb_counts(SpanCounts(1, 0, 0, 0))
    ((2, 4, 3), (0, 0, 0))
    """
    whole = 1 if counts.n_words >= 2 else 0
    return counts.n_match + whole, counts.n_pred + whole, counts.n_gold + whole


@dataclass(frozen=True)
class Convention:
    """One way of scoring: ``rule`` reads a sentence's :class:`SpanCounts` and gives either
    its P, R, F1 (``pooled=False``: the corpus score is their mean over the sentences where the
    rule gives a value, None leaving a sentence out) or the (matched, predicted, gold) counts
    it contributes (``pooled=True``: the corpus score is :func:`corpus_prf` of their sums).

    ``name`` is the attribute of :class:`SpanMetric` (``metric.kim_f1``), ``key`` the JSON key,
    ``title`` the report row and ``note`` its remark, formatted with ``count`` (sentences
    counted) and ``gold`` (the pooled gold count); ``column`` heads its column, on two lines,
    where results are compared side by side.
    """

    name: str
    key: str
    title: str
    rule: Callable[[SpanCounts], Optional[Tuple[float, float, float]]]
    pooled: bool
    note: str
    column: Tuple[str, str]


#: Every convention, in report order (module doc, items 1-3).
CONVENTIONS = (
    Convention("sentence_f1", "sentence_f1_onlstm", "sentence F1, ON-LSTM conv.",
               lambda c: sentence_prf(c.n_match, c.n_pred, c.n_gold), False, "{count:,} sentences",
               ("sentence F1", "ON-LSTM")),
    Convention("kim_f1", "sentence_f1_kim", "sentence F1, Kim et al. conv.",
               lambda c: kim_prf(c.n_match, c.n_pred, c.n_gold), False, "{count:,} sentences",
               ("sentence F1", "Kim et al.")),
    Convention("corpus_f1", "corpus_f1", "corpus F1",
               lambda c: (c.n_match, c.n_pred, c.n_gold), True, "{gold:,} gold spans", ("corpus", "F1")),
    Convention("evalb_f1", "corpus_f1_evalb", "corpus F1, EVALB-style",
               evalb_counts, True, "whole-sentence spans counted", ("EVALB", "F1")),
)

#: Positions of the two per-sentence conventions in :data:`CONVENTIONS`.
ONLSTM_INDEX, KIM_INDEX = ([c.name for c in CONVENTIONS].index(name) for name in ("sentence_f1", "kim_f1"))

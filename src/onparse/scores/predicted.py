"""Predicted trees from text (``onparse eval PRED``): bracketed trees, labelled or not, read
and checked against the gold sentences, then scored.  The labels of labelled predictions (a
grammar's ``NT-12`` from ``onparse induce --format ptb``) are kept by span for the induced
symbols' report (:attr:`onparse.scores.metrics.SpanMetric.symbols`).  No torch.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from ..gold import tagsets
from ..errors import OnparseError
from .metrics import PLACEHOLDER, SpanMetric, as_gold, evaluate
from .token_match import token_mismatch
from ..gold.treebank import choose_tagset, preprocess
from ..trees.tree import Span, Tree, is_labelled, iter_sexprs, read_tree_matching


def read_predictions(text: str, gold, source: str = "PRED") -> List[Tree]:
    """The trees of :func:`read_labelled_predictions`."""
    return read_labelled_predictions(text, gold, source)[0]


def read_labelled_predictions(text: str, gold, source: str = "PRED") -> Tuple[List[Tree], List[Dict[Span, str]]]:
    """Read predicted trees (bracketed, labelled or not) and check them against ``gold``; with
    each tree, its nodes' labels by span (:func:`node_labels`; ``{}`` for an unlabelled tree).

    A labelled prediction that still holds punctuation (another parser's PTB output) is
    accepted when its tags identify the punctuation: its leaves are dropped by the gold's tag
    set (:mod:`onparse.gold.tagsets`) as the gold's were, as EVALB drops them by label.

    Every problem is an OnparseError naming the first bad line of ``source``: malformed or
    unbalanced brackets, an empty input, a tree whose normalised words differ from its gold
    sentence's tokens, too many or too few trees.  Nothing is scored unless all trees fit.
    """
    gold = as_gold(gold)
    items = list(iter_sexprs(text, source))
    by_tags = _tag_filter(gold, items)
    if not items:
        raise OnparseError(
            f"{source} is empty: no trees found (gold {gold.name} has {len(gold):,} sentences)"
        )
    count_note = (
        f" ({source} holds {len(items):,} trees, gold {gold.name} has {len(gold):,} sentences)"
        if len(items) != len(gold)
        else ""
    )
    trees: List[Tree] = []
    labels: List[Dict[Span, str]] = []
    for i, (item, sentence) in enumerate(zip(items, gold)):
        tokens, surface = list(sentence.tokens), list(sentence.words)

        def matches(words: List[str]) -> bool:
            # exact tokens or surface words first: normalising every word is the slow path
            return words == tokens or words == surface or token_mismatch(words, tokens) is None

        try:
            tree, words = read_tree_matching(item.sexpr, matches)
        except ValueError as err:
            raise OnparseError(f"{source} line {item.line}: {err}") from None
        problem = None if words == tokens or words == surface else token_mismatch(words, tokens)
        named = None if problem else node_labels(item.sexpr, len(words))
        if problem and is_labelled(item.sexpr):
            filtered, keeps = by_tags(item.sexpr)
            if filtered is not None and filtered.tokens == sentence.tokens:
                tree, problem = filtered.tree, None
                named = node_labels(item.sexpr, len(filtered.tokens), keeps)
        if problem:
            raise OnparseError(
                f"{source} line {item.line}: tree {i + 1} does not match gold sentence {i + 1} "
                f"({sentence.source}): {problem}{count_note}"
            )
        trees.append(tree)
        labels.append(named)
    if len(items) > len(gold):
        extra = items[len(gold)]
        raise OnparseError(
            f"{source} line {extra.line}: tree {len(gold) + 1} has no gold sentence{count_note}"
        )
    if len(items) < len(gold):
        raise OnparseError(
            f"{source} ends after line {items[-1].line}: gold sentence {len(items) + 1} "
            f"({gold[len(items)].source}) has no tree{count_note}"
        )
    return trees, labels


def node_labels(sexpr, n_words: int, keeps=None) -> Dict[Span, str]:
    """Span -> label of every node of a labelled tree ``sexpr`` that covers at least two of its
    words (those that ``keeps(tag, word)`` keeps, when given; a unary chain: its top label), the
    placeholder ``X`` left out; ``{}`` unless its labelled reading has ``n_words`` words (an
    unlabelled tree, read with its brackets' atoms as words).  Iterative; O(nodes)."""
    if not is_labelled(sexpr):
        return {}
    if len(sexpr) == 1:                                     # the .mrg wrapper ( (S ...) )
        sexpr = sexpr[0]
    out: Dict[Span, str] = {}
    position, frames = 0, [[sexpr, 1, 0]]                   # node, next child, its first word
    while frames:
        frame = frames[-1]
        node = frame[0]
        if len(node) == 2 and node[1].__class__ is str:     # (TAG word)
            frames.pop()
            position += keeps is None or bool(keeps(node[0], node[1]))
        elif frame[1] < len(node):
            frame[1] += 1
            frames.append([node[frame[1] - 1], 1, position])
        else:
            frames.pop()
            if position - frame[2] >= 2 and node[0] != PLACEHOLDER:
                out[(frame[2], position)] = node[0]        # outer nodes come later: a chain's top wins
    return out if position == n_words else {}


def _tag_filter(gold, items):
    """A function reading a labelled predicted tree with its punctuation dropped by tag: ``(a
    :class:`onparse.gold.treebank.GoldSentence` or None when nothing is left, the tag set's
    ``keeps``)``, by the gold's tag set or, for an unlabelled gold, the one detected from the
    predictions' tags."""
    chosen = []

    def read(sexpr):
        if not chosen:
            preset = tagsets.PRESETS.get(getattr(gold, "tagset", "ptb"))
            chosen.append(preset or choose_tagset([item.sexpr for item in items])[0])
        try:
            return preprocess(sexpr, labelled=True, tagset=chosen[0]), chosen[0].keeps
        except ValueError:
            return None, None

    return read


def score_text(text: str, gold, source: str = "PRED") -> SpanMetric:
    """Read predictions from bracketed text (:func:`read_labelled_predictions`) and
    :func:`evaluate` them, with their labels."""
    gold = as_gold(gold)
    trees, labels = read_labelled_predictions(text, gold, source)
    return evaluate(trees, gold, check_tokens=False, labels=labels)

"""Predicted trees from text (``onparse eval PRED``): bracketed trees, labelled or not, read
and checked against the gold sentences, then scored.  No torch.
"""
from __future__ import annotations

from typing import List

from ..gold import tagsets
from ..errors import OnparseError
from .metrics import SpanMetric, as_gold, evaluate
from .token_match import token_mismatch
from ..gold.treebank import choose_tagset, preprocess
from ..trees.tree import Tree, is_labelled, iter_sexprs, read_tree_matching


def read_predictions(text: str, gold, source: str = "PRED") -> List[Tree]:
    """Read predicted trees (bracketed, labelled or not) and check them against ``gold``.

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
        if problem and is_labelled(item.sexpr):
            filtered = by_tags(item.sexpr)
            if filtered is not None and filtered.tokens == sentence.tokens:
                tree, problem = filtered.tree, None
        if problem:
            raise OnparseError(
                f"{source} line {item.line}: tree {i + 1} does not match gold sentence {i + 1} "
                f"({sentence.source}): {problem}{count_note}"
            )
        trees.append(tree)
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
    return trees


def _tag_filter(gold, items):
    """A function reading a labelled predicted tree with its punctuation dropped by tag (a
    :class:`onparse.gold.treebank.GoldSentence`, or None when nothing is left): by the gold's tag
    set, or, for an unlabelled gold, the one detected from the predictions' tags."""
    chosen = []

    def read(sexpr):
        if not chosen:
            preset = tagsets.PRESETS.get(getattr(gold, "tagset", "ptb"))
            chosen.append(preset or choose_tagset([item.sexpr for item in items])[0])
        try:
            return preprocess(sexpr, labelled=True, tagset=chosen[0])
        except ValueError:
            return None

    return read


def score_text(text: str, gold, source: str = "PRED") -> SpanMetric:
    """Read predictions from bracketed text (:func:`read_predictions`) and :func:`evaluate` them."""
    gold = as_gold(gold)
    return evaluate(read_predictions(text, gold, source), gold, check_tokens=False)

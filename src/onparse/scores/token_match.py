"""How predicted tokens are matched with gold tokens, and what to say when they differ
(used by the scorer, by ``onparse eval``'s reading of predicted trees and by ``onparse show``).
No torch.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from ..text.tokens import is_punct, normalize_word


def match_key(token: str) -> str:
    """What a predicted or gold token is compared by: normalised, then lowercased.

    The second lowercasing makes the comparison accept tokens that are already normalised
    (``N.N`` would otherwise normalise again to ``n.n``).
    """
    return normalize_word(token).lower()


def _extra_punctuation(pred_tokens: Sequence[str], pred: Sequence[str], gold: Sequence[str]) -> List[str]:
    """The punctuation tokens (:func:`onparse.text.tokens.is_punct`) that make ``pred`` longer than
    ``gold``, when removing them gives ``gold`` exactly (a gold word such as ``%`` may itself be
    punctuation by form); otherwise an empty list."""
    extra, j = [], 0
    for token, key in zip(pred_tokens, pred):
        if j < len(gold) and key == gold[j]:
            j += 1
        elif is_punct(token):
            extra.append(token)
        else:
            return []
    return extra if j == len(gold) else []


def token_mismatch(pred_tokens: Sequence[str], gold_tokens: Sequence[str]) -> Optional[str]:
    """Describe how predicted tokens differ from gold tokens; None when they match.

    Both sides are compared by :func:`match_key`.  Names the first differing word, and says
    so when the prediction still holds punctuation that the gold dropped.
    """
    pred = [match_key(t) for t in pred_tokens]
    gold = [match_key(t) for t in gold_tokens]
    if pred == gold:
        return None
    punct = _extra_punctuation(pred_tokens, pred, gold)
    if punct:
        shown = " ".join(repr(t) for t in punct[:5]) + (" ..." if len(punct) > 5 else "")
        return (
            f"the prediction keeps punctuation that the gold drops ({shown}); "
            "remove punctuation tokens before parsing"
        )
    k = next((i for i, (p, g) in enumerate(zip(pred, gold)) if p != g), min(len(pred), len(gold)))
    got = repr(pred_tokens[k]) if k < len(pred) else "end of sentence"
    want = repr(gold_tokens[k]) if k < len(gold) else "end of sentence"
    size = f"{len(pred)} words, gold has {len(gold)}; " if len(pred) != len(gold) else ""
    return (f"{size}first difference at word {k + 1}: {got}, gold {want} (for text from `onparse "
            "gold-text`, `induce --pretokenized` keeps every gold token as it is)")

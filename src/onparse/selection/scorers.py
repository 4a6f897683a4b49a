"""How a selection scores candidates: against each other on held-out text, with no gold
(:func:`agreement_matrix`, :func:`cross_scores`), or against a gold set (:func:`gold_f1`).
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from ..scores.agreement import MIN_WORDS, nontrivial_spans
from ..scores.metrics import evaluate
from ..trees.tree import Tree, leaves


def agreement_matrix(trees: Sequence[Sequence[Tree]]) -> Tuple[np.ndarray, int]:
    """``[K, K]`` summed agreement of every pair of the K candidates' trees over the sentences of
    at least 3 words (the diagonal is the number of such sentences), and that number.
    ``trees``: per sentence, the K candidates' trees of the same words."""
    total, counted = None, 0
    for index, row in enumerate(trees):
        if not row or any(t is None for t in row):
            continue
        words = leaves(row[0])
        n = len(words)
        if n < MIN_WORDS:
            continue
        spans = [nontrivial_spans(t) for t in row]
        where = {s: i for i, s in enumerate(sorted(set().union(*spans)))}
        hits = np.zeros((len(row), len(where)), dtype=np.float64)
        for k, own in enumerate(spans):
            hits[k, [where[s] for s in own]] = 1.0
        shared = hits @ hits.T / (n - 2)
        total = shared if total is None else total + shared
        counted += 1
    if total is None:
        raise ValueError("no held-out sentence of at least 3 words to measure agreement on")
    return total, counted


def cross_scores(shared: np.ndarray, counted: int, groups: Sequence[Any]) -> List[float]:
    """Each candidate's mean agreement with the candidates of the other groups (runs); with one
    group, with every other candidate."""
    k = len(groups)
    group = np.asarray([str(g) for g in groups])
    several = len(set(groups)) > 1
    out = []
    for i in range(k):
        peers = (group != group[i]) if several else (np.arange(k) != i)
        out.append(float(shared[i, peers].sum() / (peers.sum() * counted)) if peers.any() else 0.0)
    return out


def gold_f1(trees: Sequence[Any], gold: Sequence[Any], short: int = 10) -> Dict[str, float]:
    """Sentence F1 (ON-LSTM convention, :func:`onparse.evaluate`) of ``trees`` against ``gold``
    (its sentences, in order), at all lengths (``"all"``) and on the sentences of at most
    ``short`` words (``"10"``), rounded to 5 places as the lab records them."""
    few = [i for i, sentence in enumerate(gold) if len(sentence.tokens) <= short]
    return {"all": round(evaluate(list(trees), list(gold)).sentence_f1.f1, 5),
            "10": round(evaluate([trees[i] for i in few], [gold[i] for i in few]).sentence_f1.f1, 5)}

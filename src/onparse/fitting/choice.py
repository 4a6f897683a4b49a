"""The gold-free choice of ``onparse fit``: epochs, members, voter and tie rule from unlabelled
held-out text only.

**Candidates.** Every (run, epoch, layer, decoder) of the trained models: each language model's
epochs x layers x decoders, each grammar's epochs read by their MBR tree.  A run is one seed of
one family (``lm-1``, ``grammar-2``).  Their trees of the held-out sentences (at least 3 words
each) are the only input.

**Agreement** (:mod:`onparse.scores.agreement`): the share of non-trivial spans two binary trees
of a sentence share.  A candidate's score is its mean agreement with every candidate of the
*other* runs (all their epochs): runs start apart and meet where the text's structure is, so a
reading that several independent runs converge on is more likely a property of the text than of
one run.  With one run, its candidates are compared with each other.

**The rule** (:func:`choose`):

1. Each run's epoch is the epoch of its highest-scored candidate (ties: the earlier epoch).
2. Members: among the candidates of the chosen epochs, scored again among themselves (across
   runs), the ``ceil(K / 2)`` highest, highest first (:func:`onparse.scores.agreement.select`,
   the rule v2 of ``research/PROTOCOL.md`` used with gold-free agreement).
3. Voter and ties: the direction the members' own average leans.  Its mean agreement with the
   right-branching and the left-branching tree of each sentence is measured; when one exceeds
   the other by :data:`LEAN` or more, one tree of that direction votes and breaks ties (on the
   English sample, rule v6's right voter added 1.4 points of dev F1); otherwise no voter, ties
   to the first (most central) member.  The direction comes from the models, not from a
   language's known word order, so the rule carries to any language.

Cost: the trees of every candidate, then O(K^2 n) per sentence of n words (a [K, spans] matrix
product).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..scores.agreement import MIN_WORDS, nontrivial_spans, select
from ..trees.average import average_trees_batch
from ..trees.baselines import baseline_trees
from ..trees.tree import Tree, leaves

#: How much more the members' average must agree with one branching direction than with the
#: other for a voter of that direction to join (agreement is a share, 0 to 1).
LEAN = 0.05


@dataclass(frozen=True)
class Candidate:
    """One way to read trees: a run's epoch, layer and decoder (``layer`` 1 for a kind without
    layers)."""

    run: str
    epoch: int
    layer: int
    decoder: str

    def label(self) -> str:
        return f"{self.run} epoch {self.epoch} layer {self.layer} {self.decoder}"


@dataclass
class Choice:
    """What :func:`choose` chose and the gold-free scores it chose by."""

    epochs: Dict[str, int]                          # run -> chosen epoch
    members: List[Candidate]                        # most central first
    voter: Optional[str]                            # "right", "left" or None
    ties: str                                       # "right", "left" or "first"
    scores: List[Tuple[Candidate, float]]           # every candidate's cross-run agreement
    member_scores: List[Tuple[Candidate, float]]    # the chosen epochs' candidates, among themselves
    lean: Dict[str, float] = field(default_factory=dict)   # the average's agreement with right / left
    sentences: int = 0

    def to_dict(self) -> Dict[str, Any]:
        return {"epochs": dict(self.epochs),
                "members": [asdict(m) for m in self.members], "voter": self.voter, "ties": self.ties,
                "lean": self.lean, "sentences": self.sentences,
                "scores": [{**asdict(c), "agreement": round(a, 5)} for c, a in self.scores],
                "member_scores": [{**asdict(c), "agreement": round(a, 5)} for c, a in self.member_scores]}


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


def choose(candidates: Sequence[Candidate], trees: Sequence[Sequence[Tree]]) -> Choice:
    """The gold-free choice (module docstring) among ``candidates`` given their ``trees`` (per
    held-out sentence, one tree per candidate, in candidate order).  ValueError when there are
    fewer than two candidates or no sentence of at least 3 words."""
    if len(candidates) < 2:
        raise ValueError("choosing needs at least two candidates (train more seeds, epochs or layers)")
    shared, counted = agreement_matrix(trees)
    scores = cross_scores(shared, counted, [c.run for c in candidates])
    epochs: Dict[str, int] = {}
    for run in dict.fromkeys(c.run for c in candidates):
        mine = [i for i, c in enumerate(candidates) if c.run == run]
        best = min(mine, key=lambda i: (-scores[i], candidates[i].epoch, i))
        epochs[run] = candidates[best].epoch
    pool = [i for i, c in enumerate(candidates) if epochs[c.run] == c.epoch]
    pool_scores = cross_scores(shared[np.ix_(pool, pool)], counted, [candidates[i].run for i in pool])
    kept = select(pool_scores)
    members = [candidates[pool[i]] for i in kept]
    voter, ties, lean = _voter([[row[pool[i]] for i in kept] for row in trees])
    return Choice(epochs=epochs, members=members, voter=voter, ties=ties,
                  scores=list(zip(candidates, scores)),
                  member_scores=[(candidates[p], s) for p, s in zip(pool, pool_scores)],
                  lean=lean, sentences=counted)


def _voter(member_trees: Sequence[Sequence[Tree]]) -> Tuple[Optional[str], str, Dict[str, float]]:
    """Rule 3: the direction the members' average (ties to the first member) leans, if any."""
    usable = [row for row in member_trees if row and row[0] is not None and len(leaves(row[0])) >= MIN_WORDS]
    if not usable:
        return None, "first", {}
    averaged = average_trees_batch([list(row) for row in usable], "first")
    lean = {}
    for kind in ("right", "left"):
        rows = [[tree, baseline] for tree, baseline in zip(averaged, baseline_trees([leaves(t) for t in averaged], kind))]
        shared, counted = agreement_matrix(rows)
        lean[kind] = round(float(shared[0, 1] / counted), 5)
    if math.isclose(lean["right"], lean["left"]) or abs(lean["right"] - lean["left"]) < LEAN:
        return None, "first", lean
    side = "right" if lean["right"] > lean["left"] else "left"
    return side, side, lean

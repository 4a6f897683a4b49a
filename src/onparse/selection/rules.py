"""A selection's choice rules, as named functions (:data:`RULES`).

* :func:`best_dev` (``"best_dev"``): the candidate of highest F1 on a gold dev set (the lab's
  rules: dev may choose anything).
* :func:`choose` (``"gold_free"``): ``onparse fit``'s choice of epochs, members, voter and tie
  rule from unlabelled held-out text only, described below.

**Candidates** (:class:`onparse.selection.candidates.Candidate`). Every (run, epoch, layer,
decoder) of the trained models: each language model's epochs x layers x decoders, each grammar's
epochs read by their MBR tree.  A run is one seed of one kind (``lm-1``, ``grammar-2``).  Their
trees of the held-out sentences (at least 3 words each) are the only input.

**The rule** (:func:`choose`, rules v12 and v14 of ``research/PROTOCOL.md``):

1. Each run's epoch is its epoch of lowest validation perplexity (the run's own held-out
   split, as its ``metrics.jsonl`` logs it; ties and runs with none: the later epoch, which has
   trained more).  This is the paper's own checkpoint choice.
2. Members: at the chosen epochs, the readings each kind puts in an average
   (:meth:`onparse.kinds.ParsingModel.averaged_members`: a language model's layers 2 and 3 with
   the paper's decoder -- a model with neither of those layers gives its top layer -- and a
   grammar's MBR tree); layered readings first, layers outermost, runs in order.
3. Baselines in disguise (rule v14): a member whose held-out trees agree more than
   :data:`DEGENERATE` with the right-branching or with the left-branching tree of each sentence
   is left out (unless every member would be).  A grammar can collapse to one such tree for
   every sentence (two of three Dutch grammars did); it then adds nothing a voter does not and
   pulls the average to that baseline.  No language model reading of the four languages'
   fits came near (at most 0.42).
4. Voter and ties: the direction the members' own average leans.  Its mean agreement with the
   right-branching and the left-branching tree of each sentence is measured; when one exceeds
   the other by :data:`LEAN` or more, one tree of that direction votes and breaks ties (on the
   English sample, rule v6's right voter added 1.4 points of dev F1); otherwise no voter, ties
   to the first member.  The direction comes from the models, not from a language's known word
   order, so the rule carries to any language.

Why not agreement for epochs and readings (rule v10 did that): on the dev parts of four
languages (``research/RESULTS.md``, rule v12), agreement between runs ranked candidates no
better than chance (Spearman -0.11 to +0.61) and favoured readings whose trees are alike, not
right: layer 1 in English, layer 3 in Spanish and Portuguese.  The recipe's readings at each
run's best perplexity, averaged, came within 2 points of the best single candidate (or above
it) in English and Dutch, and beat v10's choice in three of the four (Spanish: 28.5 against
29.5 dev F1).  Agreement is still measured and
reported (**scores**: each candidate's mean agreement with every candidate of the *other* runs,
:mod:`onparse.scores.agreement`): it tells how alike the runs' trees are.

Cost: the trees of every candidate, then O(K^2 n) per sentence of n words (a [K, spans] matrix
product).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..scores.agreement import BASELINE_LIKE, MIN_WORDS
from ..scores.agreement import baseline_likeness as baseline_agreement
from ..trees.average import average_trees_batch
from ..trees.tree import Tree, leaves
from .candidates import Candidate
from .scorers import agreement_matrix, cross_scores

#: How much more the members' average must agree with one branching direction than with the
#: other for a voter of that direction to join (agreement is a share, 0 to 1).
LEAN = 0.05
#: A member whose held-out trees agree more than this with a baseline's is that baseline
#: (its one home: :data:`onparse.scores.agreement.BASELINE_LIKE`).
DEGENERATE = BASELINE_LIKE


@dataclass
class Choice:
    """What :func:`choose` chose and the gold-free scores it chose by."""

    epochs: Dict[str, int]                          # run -> chosen epoch
    members: List[Candidate]                        # most central first
    voter: Optional[str]                            # "right", "left" or None
    ties: str                                       # "right", "left" or "first"
    scores: List[Tuple[Candidate, float]]           # every candidate's cross-run agreement
    member_scores: List[Tuple[Candidate, float]]    # the members' agreement with the other runs' members
    lean: Dict[str, float] = field(default_factory=dict)   # the average's agreement with right / left
    sentences: int = 0
    perplexity: Dict[str, Optional[float]] = field(default_factory=dict)   # run -> its chosen epoch's
    # Readings left out as baselines in disguise (rule 3), with their agreement with right / left.
    baselines: List[Tuple[Candidate, Dict[str, float]]] = field(default_factory=list)
    # Grammars left out because their chosen epoch raised the collapse alarm, and why.
    collapsed: List[Tuple[Candidate, str]] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return {"epochs": dict(self.epochs),
                "members": [asdict(m) for m in self.members], "voter": self.voter, "ties": self.ties,
                "lean": self.lean, "sentences": self.sentences, "perplexity": dict(self.perplexity),
                "baselines": [{**asdict(c), "agreement": a} for c, a in self.baselines],
                "collapsed": [{**asdict(c), "alarm": why} for c, why in self.collapsed],
                "scores": [{**asdict(c), "agreement": round(a, 5)} for c, a in self.scores],
                "member_scores": [{**asdict(c), "agreement": round(a, 5)} for c, a in self.member_scores]}


def epochs_by_run(candidates: Sequence[Candidate]) -> Dict[str, List[int]]:
    """Each run's kept epochs among ``candidates`` (runs in order of first appearance)."""
    epochs: Dict[str, List[int]] = {}
    for c in candidates:
        epochs.setdefault(c.run, []).append(c.epoch)
    return epochs


def lowest_perplexity(kept: Mapping[str, Iterable[int]], perplexity: Dict[str, Dict[int, float]]) -> Dict[str, int]:
    """Rule 1: each run's kept epoch (``kept``: run -> its epochs, :func:`epochs_by_run`) of
    lowest validation perplexity (ties, and epochs with no finite figure, to the later epoch)."""
    epochs: Dict[str, int] = {}
    for run, its in kept.items():
        ppl = perplexity.get(run, {})

        def key(epoch):
            value = ppl.get(epoch)
            finite = value is not None and math.isfinite(value)
            return (0 if finite else 1, value if finite else 0.0, -epoch)
        epochs[run] = min(sorted(set(its)), key=key)
    return epochs


def member_indices(candidates: Sequence[Candidate], epochs: Dict[str, int]) -> List[int]:
    """Rule 2: the candidates at ``epochs`` that their kind averages (``averaged``); layered
    ones first, layers outermost, then runs in order; then the others, runs in order."""
    at = [i for i, c in enumerate(candidates) if epochs.get(c.run) == c.epoch and c.averaged]
    runs = list(dict.fromkeys(c.run for c in candidates))
    layered = sorted((i for i in at if candidates[i].layered),
                     key=lambda i: (candidates[i].layer, runs.index(candidates[i].run), i))
    return layered + [i for i in at if not candidates[i].layered]


def choose(candidates: Sequence[Candidate], trees: Sequence[Sequence[Tree]],
           perplexity: Optional[Dict[str, Dict[int, float]]] = None,
           alarms: Optional[Dict[str, Dict[int, str]]] = None) -> Choice:
    """The gold-free choice (module docstring) among ``candidates`` given their ``trees`` (per
    held-out sentence, one tree per candidate, in candidate order), each run's validation
    ``perplexity`` by epoch (``{run: {epoch: ppl}}``; missing: the later epoch) and the collapse
    alarms its epochs raised (``{run: {epoch: why}}``, :func:`onparse.grammar.health.collapse_alarm`):
    a member whose run's chosen epoch raised one is left out first, as a baseline in disguise
    is.  ValueError when there are fewer than two candidates or no sentence of at least 3 words."""
    if len(candidates) < 2:
        raise ValueError("choosing needs at least two candidates (train more seeds, epochs or layers)")
    shared, counted = agreement_matrix(trees)
    scores = cross_scores(shared, counted, [c.run for c in candidates])
    epochs = lowest_perplexity(epochs_by_run(candidates), perplexity or {})
    kept = member_indices(candidates, epochs)
    if not kept:
        raise ValueError("no candidate is a reading its kind averages (a language model's layers 2-3 with the "
                         "paper's decoder, a grammar's MBR tree)")
    alarms = alarms or {}
    collapsed = [i for i in kept if alarms.get(candidates[i].run, {}).get(epochs[candidates[i].run])]
    if len(collapsed) < len(kept):
        kept = [i for i in kept if i not in collapsed]
    else:
        collapsed = []                  # every member collapsed: keep them, the voter decides
    likeness = {i: baseline_agreement([row[i] for row in trees]) for i in kept}
    alike = [i for i in kept if max(likeness[i].values(), default=0.0) > DEGENERATE]
    if len(alike) < len(kept):
        kept = [i for i in kept if i not in alike]
    else:
        alike = []                      # every member is a baseline: keep them, the voter decides
    kept_scores = cross_scores(shared[np.ix_(kept, kept)], counted, [candidates[i].run for i in kept])
    voter, ties, lean = _voter([[row[i] for i in kept] for row in trees])
    return Choice(epochs=epochs, members=[candidates[i] for i in kept], voter=voter, ties=ties,
                  scores=list(zip(candidates, scores)),
                  member_scores=[(candidates[i], v) for i, v in zip(kept, kept_scores)],
                  lean=lean, sentences=counted,
                  perplexity={run: ppl.get(epochs[run]) for run, ppl in (perplexity or {}).items() if run in epochs},
                  baselines=[(candidates[i], likeness[i]) for i in alike],
                  collapsed=[(candidates[i], alarms[candidates[i].run][epochs[candidates[i].run]])
                             for i in collapsed])


def _voter(member_trees: Sequence[Sequence[Tree]]) -> Tuple[Optional[str], str, Dict[str, float]]:
    """Rule 4: the direction the members' average (ties to the first member) leans, if any."""
    usable = [row for row in member_trees if row and row[0] is not None and len(leaves(row[0])) >= MIN_WORDS]
    if not usable:
        return None, "first", {}
    averaged = average_trees_batch([list(row) for row in usable], "first")
    lean = baseline_agreement(list(averaged))
    if math.isclose(lean["right"], lean["left"]) or abs(lean["right"] - lean["left"]) < LEAN:
        return None, "first", lean
    side = "right" if lean["right"] > lean["left"] else "left"
    return side, side, lean


def best_dev(scores: Sequence[float]) -> int:
    """The index of the highest dev F1 among candidates in order; ties go to the earlier one
    (the lab's rules v5-v24).

    >>> best_dev([0.4, 0.5, 0.5, 0.1])
    1
    """
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


#: The choice rules by name: ``best_dev`` takes the candidates' dev F1 in order and gives the
#: index chosen; ``gold_free`` is :func:`choose`.
RULES: Dict[str, Callable[..., Any]] = {"best_dev": best_dev, "gold_free": choose}

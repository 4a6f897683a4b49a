"""The gold-free choice of ``onparse fit``: epochs, members, voter and tie rule from unlabelled
held-out text only.

**Candidates.** Every (run, epoch, layer, decoder) of the trained models: each language model's
epochs x layers x decoders, each grammar's epochs read by their MBR tree.  A run is one seed of
one family (``lm-1``, ``grammar-2``).  Their trees of the held-out sentences (at least 3 words
each) are the only input.

**The rule** (:func:`choose`, rules v12 and v14 of ``research/PROTOCOL.md``):

1. Each run's epoch is its epoch of lowest validation perplexity (the run's own held-out
   split, as its ``metrics.jsonl`` logs it; ties and runs with none: the later epoch, which has
   trained more).  This is the paper's own checkpoint choice.
2. Members: each language model read at :data:`MEMBER_LAYERS` with the paper's decoder
   (:data:`MEMBER_DECODER`) -- a model with neither of those layers gives its top layer -- and
   each grammar by its MBR tree, at the chosen epochs; layers outermost, runs in order.
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
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..scores.agreement import BASELINE_LIKE, MIN_WORDS, nontrivial_spans
from ..scores.agreement import baseline_likeness as baseline_agreement
from ..trees.average import average_trees_batch
from ..trees.tree import Tree, leaves

#: How much more the members' average must agree with one branching direction than with the
#: other for a voter of that direction to join (agreement is a share, 0 to 1).
LEAN = 0.05
#: The language models' readings that become members: the recipe's layers (rule v6's shipped
#: bundle, the paper's layer 2 and the top one) with the paper's decoder.
MEMBER_LAYERS = (2, 3)
MEMBER_DECODER = "onlstm"
#: How a grammar's candidates are read (their MBR tree).
GRAMMAR_DECODER = "mbr"
#: A member whose held-out trees agree more than this with a baseline's is that baseline
#: (its one home: :data:`onparse.scores.agreement.BASELINE_LIKE`).
DEGENERATE = BASELINE_LIKE


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


def best_epochs(candidates: Sequence[Candidate], perplexity: Dict[str, Dict[int, float]]) -> Dict[str, int]:
    """Rule 1: each run's kept epoch of lowest validation perplexity (ties, and epochs with no
    finite figure, to the later epoch)."""
    epochs: Dict[str, int] = {}
    for run in dict.fromkeys(c.run for c in candidates):
        kept = sorted({c.epoch for c in candidates if c.run == run})
        ppl = perplexity.get(run, {})

        def key(epoch):
            value = ppl.get(epoch)
            finite = value is not None and math.isfinite(value)
            return (0 if finite else 1, value if finite else 0.0, -epoch)
        epochs[run] = min(kept, key=key)
    return epochs


def member_indices(candidates: Sequence[Candidate], epochs: Dict[str, int]) -> List[int]:
    """Rule 2: the candidates read at :data:`MEMBER_LAYERS` with :data:`MEMBER_DECODER` (a run
    with neither layer: its top layer), and every grammar reading, at ``epochs``; layers
    outermost, then runs in order."""
    at = [i for i, c in enumerate(candidates) if epochs.get(c.run) == c.epoch]
    grammar = [i for i in at if candidates[i].decoder == GRAMMAR_DECODER]
    layered = [i for i in at if candidates[i].decoder == MEMBER_DECODER]
    wanted: Dict[str, List[int]] = {}
    for run in dict.fromkeys(candidates[i].run for i in layered):
        layers = sorted({candidates[i].layer for i in layered if candidates[i].run == run})
        wanted[run] = [layer for layer in MEMBER_LAYERS if layer in layers] or layers[-1:]
    order = sorted({layer for ls in wanted.values() for layer in ls})
    members = [i for layer in order for run in wanted for i in layered
               if candidates[i].run == run and candidates[i].layer == layer and layer in wanted[run]]
    return members + grammar


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
    epochs = best_epochs(candidates, perplexity or {})
    kept = member_indices(candidates, epochs)
    if not kept:
        raise ValueError("no candidate reads a language model's layers with the paper's decoder or a grammar")
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

"""Choosing members without gold trees: how much each member's trees agree with the others'.

A bundle averages the trees of several *members* (model, layer, decoder; :mod:`onparse.files.bundle`).
Which members to average must not be chosen by gold trees when the scores are to be reported
(PROTOCOL.md); this module gives an unsupervised criterion, computed on unlabelled sentences.

**Agreement of two trees.** Two binary trees of one sentence of ``n >= 3`` words each have
``n - 2`` *non-trivial* spans (neither one word nor the whole sentence); their agreement is the
share of those spans they have in common, from 0 to 1 (for binary trees it equals their
unlabelled span F1).  Sentences of fewer than 3 words have no non-trivial span and are skipped.

**A member's score.** ``A(m)`` is the mean, over the sentences, of m's mean agreement with every
member of the *other* groups (in a bundle, a group is a model, i.e. a training seed): comparing
only across seeds keeps a seed's members from voting for each other.  When every member belongs
to one group, each is compared with every other member instead.

**Selection.** :func:`select` keeps the ``ceil(K / 2)`` members of highest score (ties: the
earlier member), ordered by score, highest first -- so the most central member comes first and
breaks the ties of the average (:mod:`onparse.trees.average`).  :func:`choose_members` reads
the sentences, scores the members and selects them in one call (``onparse agreement``).

**Baselines in disguise.** A member whose trees agree more than :data:`BASELINE_LIKE` with each
sentence's right-branching (or left-branching) tree (:func:`baseline_likeness`) adds nothing a
right- or left-branching voter does not: a collapsed grammar gives such trees for every sentence.
Yet it can score high, since every model leans one way.  ``onparse fit`` leaves such members out,
and :func:`choose_members` keeps none of them (unless every member is one).

>>> a = (("the", "cat"), ("sat", "down"))
>>> b = ((("the", "cat"), "sat"), "down")
>>> tree_agreement(a, b)          # n = 4: non-trivial spans {(0,2), (2,4)} and {(0,2), (0,3)}
0.5
>>> agreement_scores([[a, a, b]], groups=[0, 1, 2])
[0.75, 0.75, 0.5]
>>> select([0.75, 0.75, 0.5])
[0, 1]
"""
from __future__ import annotations

import math
from typing import Any, Dict, Hashable, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from ..errors import OnparseError
from ..progress import Portion, Progress
from ..trees.baselines import baseline_trees
from ..trees.tree import Tree, leaves, tree_spans

#: The shortest sentence with a non-trivial span (a binary tree of n words has n - 2 of them).
MIN_WORDS = 3
#: A member whose trees agree more than this with each sentence's right- or left-branching tree
#: is that baseline (module docstring).  No language model reading of four languages' fits came
#: near (at most 0.42); collapsed grammars sit at 0.95-1.0.
BASELINE_LIKE = 0.9


def nontrivial_spans(tree: Tree) -> set:
    """The spans of ``tree`` that cover at least two words but not the whole sentence."""
    n = len(leaves(tree))
    return {s for s in tree_spans(tree) if s != (0, n)}


def tree_agreement(a: Tree, b: Tree) -> Optional[float]:
    """Share of the non-trivial spans of binary trees ``a`` and ``b`` (same words) that they
    share; None when the sentence has fewer than 3 words.  Raises ValueError when the trees'
    words differ."""
    words = leaves(a)
    if leaves(b) != words:
        raise ValueError("the trees do not cover the same words")
    n = len(words)
    if n < MIN_WORDS:
        return None
    return len(nontrivial_spans(a) & nontrivial_spans(b)) / (n - 2)


def agreement_scores(member_trees: Sequence[Sequence[Tree]], groups: Sequence[Hashable]) -> List[float]:
    """``A(m)`` of each member (module docstring).

    ``member_trees``: per sentence, the K members' trees (in member order); ``groups``: K group
    keys (the model of each member).  Sentences of fewer than 3 words, or with a missing tree,
    are skipped.  Cost: O(K^2 n) per sentence of n words.  Raises ValueError when K < 2 or no
    sentence has 3 words."""
    k = len(groups)
    if k < 2:
        raise ValueError("agreement needs at least two members")
    several = len(set(groups)) > 1
    peers = [[j for j in range(k) if j != i and (not several or groups[j] != groups[i])] for i in range(k)]
    totals, counted = [0.0] * k, 0
    for index, trees in enumerate(member_trees):
        if len(trees) != k:
            raise ValueError(f"sentence {index + 1}: {len(trees)} trees for {k} members")
        if any(t is None for t in trees) or len(leaves(trees[0])) < MIN_WORDS:
            continue
        n = len(leaves(trees[0]))
        spans = []
        for t in trees:
            if leaves(t) != leaves(trees[0]):
                raise ValueError(f"sentence {index + 1}: member trees do not cover the same words")
            spans.append(nontrivial_spans(t))
        for i in range(k):
            totals[i] += sum(len(spans[i] & spans[j]) for j in peers[i]) / (len(peers[i]) * (n - 2))
        counted += 1
    if not counted:
        raise ValueError("no sentence of at least 3 words to measure agreement on")
    return [t / counted for t in totals]


def baseline_likeness(trees: Sequence[Tree]) -> dict:
    """``{"right": a, "left": b}``: the mean agreement (:func:`tree_agreement`) of ``trees`` (one
    per sentence; None or under 3 words: not counted) with each sentence's right- and
    left-branching tree, rounded to 5 places; empty when no sentence counts.

    >>> baseline_likeness([(("a", "b"), ("c", "d")), ("a", ("b", ("c", "d")))])
    {'right': 0.75, 'left': 0.25}
    """
    usable = [t for t in trees if t is not None and len(leaves(t)) >= MIN_WORDS]
    if not usable:
        return {}
    return {kind: round(sum(map(tree_agreement, usable, baseline_trees([leaves(t) for t in usable], kind)))
                        / len(usable), 5) for kind in ("right", "left")}


def measure(parser, tokens: Sequence[Sequence[str]], quiet: bool = True) -> Tuple[List[float], list]:
    """``(scores, trees)``: each member's agreement score (:func:`agreement_scores`, groups by
    model) over the token lists ``tokens`` (each of at least :data:`MIN_WORDS`) and, per
    sentence, the members' trees it came from.  One-line OnparseErrors for fewer than two members
    or no sentence.  ``parser``: an :class:`onparse.api.Parser`.  Cost: the member trees, then
    O(K^2 n) per sentence."""
    if len(parser.members) < 2:
        raise OnparseError("agreement needs at least two members (several models, layers or decoders)")
    if not tokens:
        raise OnparseError(f"no sentence of at least {MIN_WORDS} words to measure agreement on")
    n_models = len({m.model for m in parser.members})
    with Progress("agreement", len(tokens), "sentences", quiet) as bar:      # the user's sentences, not x models
        trees = parser.member_trees(tokens, progress=Portion(bar.update, len(tokens), len(tokens) * n_models))
    return agreement_scores(trees, [m.model for m in parser.members]), trees


def select(scores: Sequence[float], keep: Optional[int] = None) -> List[int]:
    """Indices of the ``keep`` (default ``ceil(K / 2)``) highest scores, highest first; equal
    scores keep their order."""
    if keep is None:
        keep = math.ceil(len(scores) / 2)
    if not 1 <= keep <= len(scores):
        raise ValueError(f"cannot keep {keep} of {len(scores)} members")
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:keep]


class MemberChoice(NamedTuple):
    """What :func:`choose_members` measured: every member and its score (member order), the
    indices of the kept ones, most central first, how many sentences were read, and the
    members left out as baselines in disguise (index -> :func:`baseline_likeness`)."""

    scored: List[Tuple[Any, float]]
    kept: List[int]
    sentences: int
    baselines: Dict[int, Dict[str, float]] = {}


def choose_members(parser, lines: Iterable[str], *, keep: Optional[int] = None, limit: Optional[int] = 2000,
                   tokenize: bool = True, quiet: bool = True) -> MemberChoice:
    """Score each member of ``parser`` (an :class:`onparse.api.Parser`) by its agreement
    (:meth:`onparse.api.Parser.agreement`) on the first ``limit`` (None: all) of ``lines``, raw
    text, that hold at least :data:`MIN_WORDS` tokens as the parser reads them (``tokenize=False``:
    split on whitespace), and keep the ``keep`` most central (:func:`select`).  Lines after those
    are not read, so ``lines`` may stream a large file.  ``quiet=False``: progress on stderr.
    Members whose trees are a right- or left-branching baseline's (module docstring) are not
    kept, unless every member is one; ``keep`` counts among the others.
    Cost: the member trees of the sentences read, then O(K^2 n) per sentence."""
    prep = parser.preprocessor(tokenize=tokenize)
    sentences: List[List[str]] = []
    for line in lines:
        tokens = prep(line).tokens
        if len(tokens) >= MIN_WORDS:
            sentences.append(tokens)
            if len(sentences) == limit:
                break
    scores, trees = measure(parser, sentences, quiet)
    likeness = [baseline_likeness([row[k] for row in trees]) for k in range(len(scores))]
    chains = {k: like for k, like in enumerate(likeness) if like and max(like.values()) > BASELINE_LIKE}
    if len(chains) == len(scores):
        chains = {}                     # every member is a baseline: nothing to tell them apart by
    others = [k for k in range(len(scores)) if k not in chains]
    if keep is not None and keep > len(others):
        raise OnparseError(f"cannot keep {keep} members: {len(chains)} of the {len(scores)} give right- or "
                           f"left-branching trees and are left out; keep at most {len(others)}")
    kept = [others[i] for i in select([scores[k] for k in others], keep)]
    return MemberChoice(list(zip(parser.members, scores)), kept, len(sentences), chains)

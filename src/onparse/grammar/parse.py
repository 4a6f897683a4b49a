"""A neural PCFG read over token lists: batches, log-likelihoods, MBR and Viterbi trees, labels.

Sentences are batched by length (shortest first) under a budget on the rank-space chart:
autograd through the inside (which the marginals need) keeps about ``B n^3 r / 2`` floats, so a
batch holds at most :data:`CHART_CELLS` of ``n^3 r`` and a sentence longer than
:func:`exact_words` (about 160 words at the small size, 80 at the large) is parsed in pieces
(:func:`piece_spans`) and reported in ``too_long``; one of more than
:data:`onparse.trees.average.MAX_WORDS` words in pieces of :data:`LONG_PIECE_WORDS`, so that its
time stays linear in its length (:meth:`Reader.piece_words`).

Scores follow the same budget: :func:`log_likelihood` is exact over the sentences of 2 to
:func:`exact_words` words and leaves longer ones out, counted (``too_long``): a piece's ``log Z``
is not the sentence's, and the whole sentence's inside would cost ``n^3 r`` (minutes and GBs
at 2,000 words).  Training refuses a ``max_words`` over the same limit
(:func:`onparse.grammar.train.run_settings`) and cuts its batches to the budget too.

Viterbi needs the full rule tensor ``T [m, m+p, m+p]``: it is built from U, V, W when it has at
most :data:`VITERBI_RULES` entries (the tiny and small presets; not medium or large, where
:func:`viterbi_refusal` says why) and runs one sentence at a time, its memory
``O(n m (m+p)^2)`` per width.  The low-rank model has no cheaper max-product: the max does not
pass through the sum over the rank (``docs/pcfg.md``, "Trees out").
"""
from __future__ import annotations

from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import torch

from ..student.model import encode
from ..trees import average
from ..trees.tree import Span, spans_to_tree, tree_spans
from .inside import full_rules_from_rank, labelled_marginals, mbr_spans, rank_inside, span_labels, viterbi
from .health import branching_shares
from .model import GrammarRules, NeuralPCFG

#: Rank-space chart cells (sentences x words^3 x rank) one batch may hold: about 0.5 GB of
#: autograd memory for the marginals at its top.
CHART_CELLS = 1 << 28
#: The words of each piece of a sentence of more than :data:`onparse.trees.average.MAX_WORDS` words
#: (:meth:`Reader.piece_words`): about 0.7 ms a word on one thread at the small size, batched.
LONG_PIECE_WORDS = 40
#: The largest full rule tensor ``m (m+p)^2`` Viterbi builds (1 MB of floats; the small preset's is 243,000).
VITERBI_RULES = 1 << 20


def exact_words(rank: int) -> int:
    """The longest sentence a grammar of rank ``rank`` parses whole (at most
    :data:`onparse.trees.average.MAX_WORDS`): the largest ``n`` with ``n^3 r <= CHART_CELLS``.

    >>> exact_words(64), exact_words(500)
    (161, 81)
    """
    n = int(round((CHART_CELLS / rank) ** (1 / 3)))
    while n ** 3 * rank > CHART_CELLS:
        n -= 1
    return max(2, min(average.MAX_WORDS, n))


def viterbi_refusal(config: Dict[str, int]) -> Optional[str]:
    """Why a grammar of ``config`` (a GrammarConfig dict) has no Viterbi decoder, or None."""
    m = config["n_nonterminals"]
    rules = m * (m + config["n_preterminals"]) ** 2
    if rules <= VITERBI_RULES:
        return None
    return (f"viterbi needs the full rule tensor of m (m+p)^2 = {rules:,} entries, more than the "
            f"{VITERBI_RULES:,} onparse builds; use the mbr decoder")


def cubic_batches(lengths: Sequence[int], batch_size: int, rank: int) -> List[List[int]]:
    """Indices of ``lengths`` grouped by length (shortest first; equal lengths in input order),
    at most ``batch_size`` a group and at most :data:`CHART_CELLS` of ``n^3 r`` (a longer
    sentence goes alone)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: List[List[int]] = []
    for i in order:
        cells = lengths[i] ** 3 * rank
        if groups and len(groups[-1]) < batch_size and (len(groups[-1]) + 1) * cells <= CHART_CELLS:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def scorable(token_lists: Sequence[Sequence[str]], rank: int) -> Tuple[List[Sequence[str]], int]:
    """``(the token lists a grammar of chart width rank scores, how many are too long)``: those
    of 2 to :func:`exact_words` words; one-word lists (probability 0) are neither."""
    cap = exact_words(rank)
    kept = [t for t in token_lists if 2 <= len(t) <= cap]
    return kept, sum(1 for t in token_lists if len(t) > cap)


class Likelihood(NamedTuple):
    """What :func:`log_likelihood` measured: ``total`` log Z over ``words`` words of
    ``sentences`` sentences; ``too_long`` sentences of more than ``cap`` words left out;
    ``stopped`` when a stop request ended it early (then the figures are partial)."""

    total: float
    words: int
    sentences: int
    too_long: int
    cap: int
    stopped: bool = False


class GrammarTrees(list):
    """A grammar's trees (a list, in input order; None for an empty token list), with
    ``too_long``: the 0-based indices of the sentences longer than :func:`exact_words`, whose
    tree was built in pieces (:func:`piece_spans`)."""

    too_long: List[int]


@torch.no_grad()
def log_likelihood(model: NeuralPCFG, vocab, token_lists: Sequence[Sequence[str]], batch_size: int,
                   progress: Optional[Callable[[int], None]] = None,
                   stop: Optional[Callable[[], bool]] = None) -> Likelihood:
    """The sum of ``log Z`` over the token lists of 2 to :func:`exact_words` words, exact: the
    per-word perplexity is ``exp(-total / words)`` (:class:`Likelihood`).  A one-word sentence
    has probability 0 (the root rewrites to nonterminals) and a longer one would cost ``n^3 r``
    for its chart: both are left out, the long ones counted in ``too_long``.  ``progress(k)``
    after each batch (and once for the sentences left out); ``stop()`` is asked before each
    batch, and True ends the measure there (``stopped``).  Cost: O(n^3 r + n^2 r^2) per
    sentence without gradients, each batch within :data:`CHART_CELLS`; memory O(B n^2 r)."""
    rank = model.config.chart_rank
    kept, too_long = scorable([list(t) for t in token_lists], rank)
    device = next(model.parameters()).device
    rules = model.rules()
    total, words, stopped = torch.zeros((), dtype=torch.float64, device=device), 0, False
    for group in cubic_batches([len(t) for t in kept], batch_size, rank):
        if stop is not None and stop():
            stopped = True
            break
        ids, lengths = encode([kept[i] for i in group], vocab)
        z = rank_inside(rules.for_words(ids.to(device)), lengths.to(device))
        total += z.double().sum()
        words += int(lengths.sum())
        if progress is not None:
            progress(len(group))
    if progress is not None and not stopped:
        progress(len(token_lists) - len(kept))
    return Likelihood(float(total), words, len(kept), too_long, exact_words(rank), stopped)


@torch.no_grad()
def branching(model: NeuralPCFG, vocab, token_lists: Sequence[Sequence[str]], batch_size: int) -> Tuple[float, float, int]:
    """:func:`onparse.grammar.health.branching_shares` of the model's MBR trees of
    ``token_lists`` (:meth:`Reader.trees`).  Cost: the span marginals and CYK of each sentence."""
    trees = Reader(model, vocab, batch_size).trees(token_lists, "mbr")
    return branching_shares((len(tokens), tree_spans(tree)) for tokens, tree in zip(token_lists, trees)
                            if tree is not None)


def piece_bounds(n: int, piece: int) -> List[int]:
    """The ends of ``ceil(n / piece)`` consecutive near-equal pieces of ``n`` words, 0 first."""
    count = -(-n // piece)
    return [k * n // count for k in range(count + 1)]


def piece_spans(bounds: Sequence[int], pieces: Sequence[Sequence[Span]]) -> List[Span]:
    """The spans of a long sentence's tree in pieces: each piece's own spans (moved to its
    place), each piece as a span, and the pieces joined right-branching (English leans right):
    ``(p1 (p2 (p3 p4)))``."""
    n = bounds[-1]
    spans = [(bounds[k], n) for k in range(len(bounds) - 1)]
    spans += [(bounds[k], bounds[k + 1]) for k in range(len(bounds) - 1)]
    for start, inner in zip(bounds, pieces):
        spans += [(start + i, start + j) for i, j in inner]
    return spans


class Reader:
    """One grammar read over many token lists: its rules computed once (and the full tensor for
    Viterbi once, when asked), then :meth:`trees` per decoder, :meth:`labelled` (MBR trees and
    their labels in one pass) and :meth:`labels_of` (the labels of trees built elsewhere)."""

    def __init__(self, model: NeuralPCFG, vocab, batch_size: int):
        self.model, self.vocab, self.batch_size = model, vocab, batch_size
        self.device = next(model.parameters()).device
        with torch.no_grad():
            self.rules: GrammarRules = model.rules()
        self.cap = exact_words(model.config.chart_rank)
        self._full = None

    def _ids(self, token_lists):
        ids, lengths = encode(token_lists, self.vocab)
        return ids.to(self.device), lengths.to(self.device)

    def mbr(self, token_lists: Sequence[Sequence[str]]) -> List[List[Span]]:
        """Spans of each sentence's MBR tree (all of at most ``cap`` words, one batch)."""
        ids, lengths = self._ids(token_lists)
        return mbr_spans(self.rules.for_words(ids), lengths)

    def viterbi(self, token_lists: Sequence[Sequence[str]]) -> List[List[Span]]:
        """Spans of each sentence's most probable tree, one sentence at a time; a sentence the
        grammar gives probability 0 (underflow) gets the right-branching tree."""
        if self._full is None:
            self._full = full_rules_from_rank(self.rules.log_U, self.rules.log_V, self.rules.log_W)
        out = []
        for tokens in token_lists:
            ids, lengths = self._ids([tokens])
            _, nodes = viterbi(self.rules.log_root, self._full, self.rules.log_emission.t()[ids], lengths)
            spans = [(i, j) for i, j, _ in nodes[0] if j - i >= 2]
            out.append(spans or [(k, len(tokens)) for k in range(len(tokens) - 1)])
        return out

    def trees(self, token_lists: Sequence[Sequence[str]], decoder: str,
              progress: Optional[Callable[[int], None]] = None) -> GrammarTrees:
        """The tree of every token list by ``decoder`` (``mbr`` or ``viterbi``), nested tuples in
        input order (None for an empty list; a one-word list is its word).  Cost: per batch
        :func:`~onparse.grammar.inside.span_marginals` and CYK, O(n^3 r) (MBR); O(n^3 (m+p)^2 +
        n^2 m (m+p)^2) per sentence (Viterbi)."""
        decode = self.mbr if decoder == "mbr" else self.viterbi
        out = GrammarTrees([None] * len(token_lists))
        out.too_long = [i for i, t in enumerate(token_lists) if len(t) > self.cap]
        whole = [i for i, t in enumerate(token_lists) if 2 <= len(t) <= self.cap]
        for i, tokens in enumerate(token_lists):
            if len(tokens) == 1:
                out[i] = tokens[0]
        for group in cubic_batches([len(token_lists[i]) for i in whole], self.batch_size, self.model.config.chart_rank):
            chosen = [list(token_lists[whole[k]]) for k in group]
            for k, tokens, spans in zip(group, chosen, decode(chosen)):
                out[whole[k]] = spans_to_tree(tokens, spans)
            if progress is not None:
                progress(len(group))
        # The pieces of every long sentence, decoded in batches as whole sentences are.
        bounds = {i: piece_bounds(len(token_lists[i]), self.piece_words(len(token_lists[i]))) for i in out.too_long}
        work = [(i, a, b) for i in out.too_long for a, b in zip(bounds[i], bounds[i][1:])]
        decoded: Dict[Tuple[int, int], List[Span]] = {}
        for group in cubic_batches([b - a for _, a, b in work], self.batch_size, self.model.config.chart_rank):
            chosen = [work[k] for k in group]
            for (i, a, _), spans in zip(chosen, decode([list(token_lists[i][a:b]) for i, a, b in chosen])):
                decoded[i, a] = spans
        for i in out.too_long:
            tokens = list(token_lists[i])
            out[i] = spans_to_tree(tokens, piece_spans(bounds[i], [decoded[i, a] for a in bounds[i][:-1]]))
            if progress is not None:
                progress(1)
        if progress is not None:
            progress(sum(1 for t in token_lists if len(t) < 2))
        return out

    def piece_words(self, n: int) -> int:
        """The words of each piece of a sentence of ``n`` words too long to parse whole: ``cap``,
        or :data:`LONG_PIECE_WORDS` above :data:`onparse.trees.average.MAX_WORDS` (time linear in
        ``n`` at under 1 ms a word, where pieces of ``cap`` words cost over 10 ms a word)."""
        return self.cap if n <= average.MAX_WORDS else min(self.cap, LONG_PIECE_WORDS)

    def labelled(self, token_lists: Sequence[Sequence[str]]) -> List[Optional[Tuple[object, Dict[Span, str]]]]:
        """Per token list its MBR tree and ``{span: "NT-k"}``, each MBR span's most probable
        nonterminal (None for an empty list; a one-word list has no span).  A sentence over
        ``cap`` words is labelled piece by piece: the spans joining its pieces get no label.
        Cost: the labelled marginals, O(n^3 r + n^2 m r) per sentence."""
        out: List[Optional[Tuple[object, Dict[Span, str]]]] = [None] * len(token_lists)
        for i, tokens in enumerate(token_lists):
            if len(tokens) == 1:
                out[i] = (tokens[0], {})
        whole = [i for i, t in enumerate(token_lists) if 2 <= len(t) <= self.cap]
        for group in cubic_batches([len(token_lists[i]) for i in whole], self.batch_size, self.model.config.chart_rank):
            chosen = [list(token_lists[whole[k]]) for k in group]
            for k, tokens, (spans, labels) in zip(group, chosen, self._labelled_spans(chosen)):
                out[whole[k]] = (spans_to_tree(tokens, spans), dict(zip(spans, labels)))
        for i, tokens in enumerate(token_lists):
            if len(tokens) > self.cap:
                tokens = list(tokens)
                bounds = piece_bounds(len(tokens), self.piece_words(len(tokens)))
                pieces, labels = [], {}
                for a, b in zip(bounds, bounds[1:]):
                    spans, names = self._labelled_spans([tokens[a:b]])[0]
                    pieces.append(spans)
                    labels.update({(a + s, a + e): name for (s, e), name in zip(spans, names)})
                out[i] = (spans_to_tree(tokens, piece_spans(bounds, pieces)), labels)
        return out

    def labels_of(self, token_lists: Sequence[Sequence[str]], trees: Sequence[object]) -> List[Optional[Dict[Span, str]]]:
        """Per token list, ``{span: "NT-k"}`` for every span of width >= 2 of ITS GIVEN tree (any
        tree over its words: MBR, Viterbi, averaged): the span's most probable nonterminal given the
        sentence, as :meth:`labelled` names them; None where the tree is None, ``{}`` for one word.
        A sentence over ``cap`` words is labelled piece by piece (:func:`piece_bounds`): a span
        that no piece holds (a join) gets no label.
        Cost: the labelled marginals, O(n^3 r + n^2 m r) per sentence, batched by length."""
        out: List[Optional[Dict[Span, str]]] = [None if tree is None else {} for tree in trees]
        work = []                       # (sentence, offset, the piece's tokens, its spans moved to 0)
        for i, (tokens, tree) in enumerate(zip(token_lists, trees)):
            if tree is None or len(tokens) < 2:
                continue
            spans = tree_spans(tree)
            bounds = [0, len(tokens)] if len(tokens) <= self.cap else \
                piece_bounds(len(tokens), self.piece_words(len(tokens)))
            for a, b in zip(bounds, bounds[1:]):
                inner = [(s - a, e - a) for s, e in spans if a <= s and e <= b]
                if inner:
                    work.append((i, a, list(tokens[a:b]), inner))
        for group in cubic_batches([len(w[2]) for w in work], self.batch_size, self.model.config.chart_rank):
            chosen = [work[k] for k in group]
            ids, lengths = self._ids([w[2] for w in chosen])
            names = span_labels(self.rules.for_words(ids), lengths, [w[3] for w in chosen])
            for (i, a, _, inner), row in zip(chosen, names):
                out[i].update({(s + a, e + a): f"NT-{k}" for (s, e), k in zip(inner, row)})
        return out

    def _labelled_spans(self, token_lists) -> List[Tuple[List[Span], List[str]]]:
        ids, lengths = self._ids(token_lists)
        rules = self.rules.for_words(ids)
        marginals = labelled_marginals(rules, lengths)[0]
        spans = mbr_spans(rules, lengths, marginals=marginals.sum(-1))
        labels = span_labels(rules, lengths, spans, marginals=marginals)
        return [(s, [f"NT-{a}" for a in row]) for s, row in zip(spans, labels)]

"""PCFG math over rule log-probabilities: rank-space inside, marginals, MBR, Viterbi, sampling.

Symbols are numbered ``0 .. m-1`` (nonterminals) then ``m .. m+p-1`` (preterminals); a
preterminal ``P`` is symbol ``m + P``.  Spans are ``(i, j)`` word positions, ``j`` exclusive.
Everything here takes LOG-probabilities (see ``docs/pcfg.md`` for the definitions):

- :class:`RankRules`: ``log_root [m]``, ``log_U [m, r]``, ``log_V``/``log_W [m+p, r]`` and the
  emissions of the words at hand ``log_emit [B, T, p]``.  The root/U/V/W tensors may have NO
  batch dimension (one grammar for every sentence: an N-/TN-PCFG, the cheap case the model
  uses) or a leading ``B`` (a compound PCFG's per-sentence rules); both broadcast.  The same
  holds for ``log_root``/``log_T`` of the full-tensor functions.
- :func:`rank_inside` (training), :func:`span_marginals` / :func:`mbr_spans` (trees),
  :func:`labelled_marginals` / :func:`span_labels` (labels), :func:`full_rules_from_rank`,
  :func:`full_inside`, :func:`viterbi` (full tensor: references and small grammars),
  :func:`sample`.

log 0 is represented by :data:`NEG`, a finite number: inputs are clamped to it, so a chart
reduction over impossible items (padding, zero-probability rules) stays finite and its gradient
is 0, not NaN (``exp(-inf - -inf)``).  Outputs map such values back to ``-inf``.
"""
from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ..trees.span_trees import cyk
from ..trees.tree import Span

#: The finite stand-in for log 0; anything below ``NEG / 2`` reads as impossible.
NEG = -1e30
#: A labelled tree: ``(label, left, right)`` for a nonterminal, ``(label, word)`` for a
#: preterminal; labels are ``"NT-k"`` / ``"PT-k"`` (:func:`symbol_name`).
LabelledTree = tuple


class RankRules(NamedTuple):
    """A low-rank grammar's log-probabilities plus the emissions of a batch's words.

    ``log_root [m]`` (S -> A), ``log_U [m, r]`` (softmax over q), ``log_V [m+p, r]`` and
    ``log_W [m+p, r]`` (softmaxes over symbols for each q), each optionally with a leading batch
    dim ``B``; ``log_emit [B, T, p]`` = ``log E[P, w_t]`` for each sentence's words (padding
    positions may hold anything finite or -inf).
    """

    log_root: Tensor
    log_U: Tensor
    log_V: Tensor
    log_W: Tensor
    log_emit: Tensor


def symbol_name(symbol: int, n_nonterminals: int) -> str:
    """``"NT-k"`` for nonterminal ``k``, ``"PT-k"`` for symbol ``n_nonterminals + k``."""
    return f"NT-{symbol}" if symbol < n_nonterminals else f"PT-{symbol - n_nonterminals}"


def logmm(x: Tensor, y: Tensor) -> Tensor:
    """``log(exp(x) @ exp(y))``: ``[..., a, k] x [..., k, c] -> [..., a, c]`` (batch dims
    broadcast), in ``x``'s dtype.  Rows of ``x`` and columns of ``y`` are shifted by their max
    (detached: the result does not depend on it), then exponentiated and multiplied in float64.

    Why float64: one shift per row and one per column is exact only when the two maxima meet at
    the same ``k``.  When they do not, every term of a product can lie far below both shifts
    (``x = [0, -80]``, ``y = [-80, 0]``: ``e^-80`` twice), and float32 loses it although the
    result, ``-80 + log 2``, is an ordinary log-probability.  A trained grammar's peaked rules
    make such products common: in float32 one large-preset run on a GPU lost 6,336 training
    sentences of an epoch to ``log Z = -inf`` and its validation perplexity jumped from 613 to
    3.8e9 (research/CAMPAIGN.md, 2026-11-26).  Float64 holds products down to about ``e^-700``.
    A shifted product below :func:`_underflow` still counts as 0 and gives :data:`NEG` with a
    zero gradient: the gradient of ``log`` is ``1 / prod``, which overflows for a subnormal
    product, and ``inf`` times an ``exp`` that underflowed to 0 is NaN.
    Cost: one float64 matmul plus ``O(ak + kc + ac)`` exps."""
    x_max = x.detach().amax(-1, keepdim=True)
    y_max = y.detach().amax(-2, keepdim=True)
    wide = torch.promote_types(x.dtype, torch.float64)
    prod = torch.matmul((x - x_max).to(wide).exp(), (y - y_max).to(wide).exp())
    zero = prod < _underflow(wide)
    return x_max + y_max + torch.where(zero, torch.ones_like(prod), prod).log().masked_fill(zero, NEG).to(x.dtype)


def _underflow(dtype: torch.dtype) -> float:
    """The smallest shifted product :func:`logmm` keeps: ``tiny ** 0.8`` of the dtype (about
    ``e^-566`` in float64), so ``1 / prod`` stays far below overflow and a backward sum over
    thousands of such terms stays finite."""
    return torch.finfo(dtype).tiny ** 0.8


def _floor(x: Tensor, dims: int) -> Tensor:
    """``x`` clamped to ``NEG`` with a leading batch dim (size 1 when the rules have none)."""
    x = x.clamp(min=NEG)
    return x if x.dim() == dims + 1 else x.unsqueeze(0)


def _check(emit: Tensor, lengths: Tensor, m: int, n_symbols: int) -> None:
    if emit.dim() != 3:
        raise ValueError(f"log_emit must be [B, T, p], got shape {tuple(emit.shape)}")
    if n_symbols != m + emit.shape[-1]:
        raise ValueError(f"V/W have {n_symbols} symbol rows, expected m + p = {m} + {emit.shape[-1]}")
    if lengths.shape != (emit.shape[0],):
        raise ValueError(f"lengths must be [B] = [{emit.shape[0]}], got shape {tuple(lengths.shape)}")
    if len(lengths) and (int(lengths.min()) < 1 or int(lengths.max()) > emit.shape[1]):
        raise ValueError(f"lengths must lie in 1..{emit.shape[1]}, got {lengths.tolist()}")


def _children(lefts: List[Tensor], rights: List[Tensor], width: int) -> Tuple[Tensor, Tensor]:
    """``[B, width - 1, N + 1 - width, d]`` twice: for every span ``(i, i + width)`` and split
    ``k = 1 .. width - 1``, the left part ``(i, i + k)`` and the right part ``(i + k, i + width)``.
    ``lefts[k]`` is indexed by start (``[B, N, d]``) and ``rights[k]`` by end (``[B, N + 1, d]``),
    both padded, so each side is ONE stack and one slice whatever the split."""
    n_spans = lefts[1].shape[1] + 1 - width
    left = torch.stack(lefts[1:width], 1)[:, :, :n_spans]
    right = torch.stack(rights[width - 1:0:-1], 1)[:, :, width:]
    return left, right


def _store(lefts: List[Tensor], rights: List[Tensor], left: Tensor, right: Tensor, width: int) -> None:
    lefts.append(F.pad(left, (0, 0, 0, width - 1), value=NEG))
    rights.append(F.pad(right, (0, 0, width, 0), value=NEG))


def _read_out(whole: List[Tensor], top: Tensor, lengths: Tensor, like: Tensor) -> Tensor:
    """``[B]``: ``logsumexp(top + whole[n - 2][b])`` at each sentence's own length ``n``;
    ``-inf`` for one-word or impossible sentences."""
    if not whole:
        return like.new_full(lengths.shape, float("-inf"))
    table = torch.stack(whole, 1)                            # [B, N - 1, d]
    lengths = lengths.to(table.device)
    rows = table[torch.arange(len(lengths), device=table.device), (lengths - 2).clamp(min=0)]
    z = torch.logsumexp(top + rows, -1)
    return torch.where((lengths >= 2) & (z > NEG / 2), z, torch.full_like(z, float("-inf")))


def _rank_chart(rules: RankRules, lengths: Tensor, span_bias: Optional[Tensor] = None,
                symbol_bias: Optional[Tensor] = None) -> Tensor:
    """The rank-space inside.  With ``symbol_bias [B, N+1, N+1, m]`` it builds ``beta = U s`` for
    every wide span and adds the bias to it (labelled marginals), else it takes the r x r
    shortcut."""
    root, U, V, W = _floor(rules.log_root, 1), _floor(rules.log_U, 2), _floor(rules.log_V, 2), _floor(rules.log_W, 2)
    emit = rules.log_emit.clamp(min=NEG)
    m, size = U.shape[-2], emit.shape[1]
    _check(emit, lengths, m, V.shape[-2])
    Ut = U.transpose(-1, -2)                                 # [B', r, m]
    # Width 1 holds only preterminals: project their emissions once (index 0: never read).
    lefts = [emit, logmm(emit, V[:, m:])]
    rights = [emit, F.pad(logmm(emit, W[:, m:]), (0, 0, 1, 0), value=NEG)]
    children = torch.cat([V[:, :m], W[:, :m]], -1)           # [B', m, 2r]: one matmul for both sides
    if symbol_bias is None:
        # beta = U s is only ever read through V_N^T beta and W_N^T beta (and pi^T beta at the
        # root): fold U into r x r maps so wider levels cost O(n^2 r^2), not O(n^2 m r).
        project, top = logmm(Ut, children), logmm(root.unsqueeze(-2), U)
    else:
        project, top = children, root.unsqueeze(-2)
    whole: List[Tensor] = []
    for width in range(2, size + 1):
        left, right = _children(lefts, rights, width)
        s = torch.logsumexp(left + right, 1)                 # [B, n_spans, r]: O(n^3 r) in all
        if span_bias is not None:
            s = s + torch.diagonal(span_bias, width, 1, 2).unsqueeze(-1)
        if symbol_bias is not None:
            s = logmm(s, Ut) + torch.diagonal(symbol_bias, width, 1, 2).transpose(1, 2)
        whole.append(s[:, 0])
        if width < size:
            both = logmm(s, project)
            _store(lefts, rights, *both.chunk(2, -1), width)
    return _read_out(whole, top.squeeze(-2), lengths, emit)


def rank_inside(rules: RankRules, lengths: Tensor, span_bias: Optional[Tensor] = None) -> Tensor:
    """``log Z [B]`` of a low-rank grammar: the log of the sum over every binary tree and
    labelling of the product of its rules, each sentence read at its own ``lengths [B]``.

    ``span_bias [B, T+1, T+1]`` (optional) is added to the log inside score of every span of
    width >= 2, so ``d logZ / d span_bias`` are the span marginals.  A one-word sentence (or a
    sentence of probability 0) gets ``-inf``: drop those from training losses.
    Cost: O(B (n^3 r + n^2 r^2)) time, O(B n^3 r) autograd memory; one Python loop over widths.
    """
    return _rank_chart(rules, lengths, span_bias=span_bias)


def _grad_of_log_z(rules: RankRules, lengths: Tensor, bias: Tensor, emit_grad: bool,
                   labelled: bool) -> Tuple[Tensor, ...]:
    """Gradients of the summed finite ``log Z`` w.r.t. ``bias`` (and the emissions), computed
    with grad enabled even under the caller's ``no_grad``; the rules themselves are detached."""
    with torch.enable_grad():
        fixed = RankRules(*(t.detach() for t in rules))
        emit = fixed.log_emit.requires_grad_(emit_grad)
        fixed = fixed._replace(log_emit=emit)
        bias.requires_grad_(True)
        if labelled:
            z = _rank_chart(fixed, lengths, symbol_bias=bias)
        else:
            z = _rank_chart(fixed, lengths, span_bias=bias)
        keep = torch.isfinite(z)
        wrt = [bias, emit] if emit_grad else [bias]
        if not bool(keep.any()):
            return tuple(torch.zeros_like(t) for t in wrt)
        return torch.autograd.grad(z[keep].sum(), wrt)


def span_marginals(rules: RankRules, lengths: Tensor) -> Tensor:
    """``[B, T+1, T+1]``: ``mu[b, i, j]``, the posterior probability that span ``(i, j)`` of width
    >= 2 is a constituent (1 for the whole sentence; 0 for width < 2, spans past the sentence
    and one-word sentences).  One backward pass; not differentiable w.r.t. the rules.
    Cost: about 2-3 times :func:`rank_inside`."""
    batch, size = rules.log_emit.shape[:2]
    bias = rules.log_emit.new_zeros(batch, size + 1, size + 1)
    return _grad_of_log_z(rules, lengths, bias, emit_grad=False, labelled=False)[0]


def labelled_marginals(rules: RankRules, lengths: Tensor) -> Tuple[Tensor, Tensor]:
    """``([B, T+1, T+1, m], [B, T, p])``: the posterior probability that span ``(i, j)`` (width
    >= 2) is nonterminal ``A``, and that word ``t`` has preterminal ``P`` (0 past a sentence's
    end and for one-word sentences).  Summed over ``A``
    the first gives :func:`span_marginals`.  Built as the gradient of ``log Z`` w.r.t. a zero
    bias added to ``beta = U s`` (which the r x r shortcut never builds) and w.r.t. the
    emissions.  Cost: O(B (n^3 r + n^2 m r)) forward, one backward pass."""
    batch, size = rules.log_emit.shape[:2]
    m = rules.log_U.shape[-2]
    bias = rules.log_emit.new_zeros(batch, size + 1, size + 1, m)
    return _grad_of_log_z(rules, lengths, bias, emit_grad=True, labelled=True)


def mbr_spans(rules: RankRules, lengths: Tensor, marginals: Optional[Tensor] = None) -> List[List[Span]]:
    """Each sentence's minimum-Bayes-risk binary tree, as its spans of width >= 2 outermost
    first: the tree maximising the sum of its span marginals (``onparse.trees.span_trees.cyk``).
    Works under ``torch.no_grad()``.  Cost: :func:`span_marginals` plus O(B n^3)."""
    if marginals is None:
        marginals = span_marginals(rules, lengths)
    return cyk(marginals, lengths)


def span_labels(rules: RankRules, lengths: Tensor, spans: Sequence[Sequence[Span]],
                marginals: Optional[Tensor] = None) -> List[List[int]]:
    """For every given span (width >= 2, else ValueError), the nonterminal ``0 .. m-1`` with the
    largest labelled marginal (the most probable label of that span given the sentence), in the
    order of ``spans``.  ``marginals``: the first output of :func:`labelled_marginals`, to reuse.
    Cost: :func:`labelled_marginals` unless given."""
    if marginals is None:
        marginals = labelled_marginals(rules, lengths)[0]
    best = marginals.argmax(-1).tolist()                     # [B][T+1][T+1]
    out = []
    for b, sentence in enumerate(spans):
        if any(j - i < 2 for i, j in sentence):
            raise ValueError(f"span_labels labels spans of at least two words, got {list(sentence)}")
        out.append([best[b][i][j] for i, j in sentence])
    return out


def full_rules_from_rank(log_U: Tensor, log_V: Tensor, log_W: Tensor) -> Tensor:
    """``log T [..., m, m+p, m+p]`` with ``T[A, B, C] = sum_q U[A, q] V[B, q] W[C, q]`` (leading
    batch dims kept).  Each factor is shifted by its row max before one einsum, so entries far
    below a row's largest can underflow to :data:`NEG`.  Cost: O(m (m+p)^2 r) time and
    O(m (m+p)^2) memory: chunk over the rows of ``log_U`` for large grammars."""
    u_max, v_max, w_max = (t.clamp(min=NEG).amax(-1, keepdim=True) for t in (log_U, log_V, log_W))
    prob = torch.einsum("...aq,...bq,...cq->...abc", (log_U - u_max).exp(), (log_V - v_max).exp(),
                        (log_W - w_max).exp())
    zero = prob <= 0
    log_prob = torch.where(zero, torch.ones_like(prob), prob).log().masked_fill(zero, NEG)
    return log_prob + u_max.unsqueeze(-1) + v_max.unsqueeze(-3) + w_max.transpose(-1, -2).unsqueeze(-2)


def _full_setup(log_root: Tensor, log_T: Tensor, log_emit: Tensor, lengths: Tensor):
    root, T = _floor(log_root, 1), _floor(log_T, 3)
    emit = log_emit.clamp(min=NEG)
    m = T.shape[-3]
    _check(emit, lengths, m, T.shape[-1])
    beta = F.pad(emit, (m, 0), value=NEG)                    # width 1: preterminals only
    return root, T.flatten(-2), emit, [beta, beta], [beta, F.pad(beta, (0, 0, 1, 0), value=NEG)]


def full_inside(log_root: Tensor, log_T: Tensor, log_emit: Tensor, lengths: Tensor) -> Tensor:
    """``log Z [B]`` with the full rule tensor ``log_T [m, m+p, m+p]`` (``log_root [m]``; both
    optionally batched) and ``log_emit [B, T, p]``; ``-inf`` for one-word sentences.  The
    reference for :func:`rank_inside`.  Cost: O(B n^3 (m+p)^2 + B n^2 m (m+p)^2)."""
    root, T, emit, lefts, rights = _full_setup(log_root, log_T, log_emit, lengths)
    p, whole = emit.shape[-1], []
    for width in range(2, emit.shape[1] + 1):
        left, right = _children(lefts, rights, width)
        pair = torch.logsumexp(left.unsqueeze(-1) + right.unsqueeze(-2), 1)   # [B, n, S, S]
        beta = logmm(pair.flatten(-2), T.transpose(-1, -2))                   # [B, n, m]
        whole.append(beta[:, 0])
        full = F.pad(beta, (0, p), value=NEG)
        _store(lefts, rights, full, full, width)
    return _read_out(whole, root, lengths, emit)


@torch.no_grad()
def viterbi(log_root: Tensor, log_T: Tensor, log_emit: Tensor,
            lengths: Tensor) -> Tuple[Tensor, List[List[Tuple[int, int, int]]]]:
    """The most probable labelled tree under the FULL tensor ``log_T [m, m+p, m+p]`` (inputs as
    :func:`full_inside`).  Returns ``(log_prob [B], nodes)``: per sentence its nodes as ``(i, j,
    symbol)`` in pre-order (root first, words as ``(t, t+1, m + P)``); a one-word or impossible
    sentence gets ``-inf`` and ``[]``.  A rank-decomposed grammar has no such decoder (the max
    does not pass through the sum over q): use :func:`mbr_spans`.
    Cost: O(B n^3 (m+p)^2 + B n^2 m (m+p)^2) time and memory."""
    root, T, emit, lefts, rights = _full_setup(log_root, log_T, log_emit, lengths)
    m, p, whole, back = T.shape[-2], emit.shape[-1], [], {}
    n_symbols = m + p
    for width in range(2, emit.shape[1] + 1):
        left, right = _children(lefts, rights, width)
        pair, split = (left.unsqueeze(-1) + right.unsqueeze(-2)).max(1)        # [B, n, S, S]
        beta, pair_at = (T.unsqueeze(-3) + pair.flatten(-2).unsqueeze(-2)).max(-1)   # [B, n, m]
        back[width] = (pair_at.tolist(), (split.flatten(-2).gather(-1, pair_at) + 1).tolist())
        whole.append(beta[:, 0])
        full = F.pad(beta, (0, p), value=NEG)
        _store(lefts, rights, full, full, width)
    score = emit.new_full(lengths.shape, float("-inf"))
    out: List[List[Tuple[int, int, int]]] = []
    for b, n in enumerate(lengths.tolist()):
        if n < 2:
            out.append([])
            continue
        top = root[min(b, len(root) - 1)] + whole[n - 2][b]
        best, symbol = top.max(-1)
        score[b] = best if best > NEG / 2 else float("-inf")
        nodes, stack = [], [(0, n, int(symbol))]
        while stack:
            i, j, a = stack.pop()
            nodes.append((i, j, a))
            if j - i >= 2:
                pair_index, k = back[j - i][0][b][i][a], back[j - i][1][b][i][a]
                stack.append((i + k, j, pair_index % n_symbols))
                stack.append((i, i + k, pair_index // n_symbols))
        out.append(nodes if score[b] > NEG / 2 else [])
    return score, out


class _TooLong(Exception):
    """A sampled sentence would exceed ``max_length``: start that sentence again."""


class _OutOfDraws(Exception):
    """The sampler spent its budget of draws (:data:`DRAWS_PER_WORD`)."""


#: The draws (uniform numbers) :func:`sample` may spend, per word of ``max_length``, before its
#: first sentence and for each one it has drawn: at most ``DRAWS_PER_WORD * max_length * (k + 1)``
#: with ``k`` sentences drawn.  A sentence of w words takes about 4w draws, so this allows about 50
#: attempts of full length per sentence (a grammar that yields a short enough sentence one time in
#: five is never cut short); a grammar whose derivations never end gives up after 100,000 draws
#: at ``max_length`` 500 (about a second), and ``n`` sentences cost O(n max_length) draws at most.
DRAWS_PER_WORD = 200


class Samples(list):
    """:func:`sample`'s ``(word ids, tree)`` pairs, with ``draws`` (uniforms spent) and
    ``gave_up`` (True when the budget ran out before ``n`` sentences: the list holds fewer)."""

    draws: int = 0
    gave_up: bool = False


def sample(log_root: Tensor, log_U: Tensor, log_V: Tensor, log_W: Tensor, log_emission: Tensor,
           n: int, generator: torch.Generator, max_length: int = 60) -> Samples:
    """Draw ``n`` sentences with their trees from an unbatched grammar (``log_root [m]``,
    ``log_U [m, r]``, ``log_V``/``log_W [m+p, r]``, ``log_emission [p, vocab]``).

    S -> A ~ root; A -> B C by ``q ~ U[A]`` then ``B ~ V[:, q]`` and ``C ~ W[:, q]``
    independently (so ``P(B, C | A) = T[A, B, C]``); preterminal -> word ~ its emissions.  A
    sentence that would exceed ``max_length`` (<= 500) words is dropped as soon as that is
    certain and drawn again, so the output follows the grammar conditioned on length <=
    ``max_length``.  The work is bounded (:data:`DRAWS_PER_WORD`): past
    ``DRAWS_PER_WORD * max_length * (k + 1)`` draws with ``k`` sentences drawn it stops with
    them (``gave_up``), however explosive the grammar.  Returns
    :class:`Samples` of ``(word ids, tree)`` pairs, trees as :data:`LabelledTree`.
    Deterministic given the ``generator`` state.
    Cost: O(words) inverse-CDF draws per sentence, at most O(n max_length) in all, on the CPU.
    """
    if not 2 <= max_length <= 500:
        raise ValueError(f"max_length must lie in 2..500 (trees are grown recursively), got {max_length}")
    m = log_U.shape[0]

    def cdf(log_p: Tensor) -> np.ndarray:
        c = np.cumsum(log_p.detach().double().exp().cpu().numpy(), -1)
        return c / c[..., -1:]                               # last entry exactly 1: u < 1 always lands

    root, U, V, W, E = cdf(log_root), cdf(log_U), cdf(log_V.t()), cdf(log_W.t()), cdf(log_emission)
    uniforms: List[float] = []
    out = Samples()
    def draw(row: np.ndarray) -> int:
        out.draws += 1
        if out.draws > DRAWS_PER_WORD * max_length * (len(out) + 1):
            raise _OutOfDraws
        if not uniforms:
            uniforms.extend(torch.rand(4096, generator=generator, dtype=torch.float64).tolist()[::-1])
        return min(int(np.searchsorted(row, uniforms.pop(), side="right")), len(row) - 1)

    def grow(symbol: int, words: List[int], pending: int) -> LabelledTree:
        # ``len(words) + pending + 1`` words at least will end up in the sentence (every
        # subtree yields one); refusing once that passes max_length rejects exactly the
        # sentences longer than it, and bounds the recursion depth by max_length.
        if symbol >= m:
            words.append(draw(E[symbol - m]))
            return (symbol_name(symbol, m), words[-1])
        q = draw(U[symbol])
        left, right = draw(V[q]), draw(W[q])
        if len(words) + pending + 2 > max_length:
            raise _TooLong
        left_tree = grow(left, words, pending + 1)
        return (symbol_name(symbol, m), left_tree, grow(right, words, pending))

    while len(out) < n:
        words: List[int] = []
        try:
            tree = grow(draw(root), words, 0)
        except _TooLong:
            continue
        except _OutOfDraws:
            out.draws -= 1                                   # the refused draw was not made
            out.gave_up = True
            break
        out.append((words, tree))
    return out

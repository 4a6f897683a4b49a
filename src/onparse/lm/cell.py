"""The fast path of the ON-LSTM language model: the recurrence and the decoder's cross-entropy.

:func:`recurrence` computes the same function as :func:`onparse.lm.model.reference_recurrence`
(``docs/onlstm.md`` section 1) with one autograd function per layer and sequence and far fewer kernels:

* forward: per step one ``addmm`` for the recurrent projection and about a dozen elementwise
  kernels writing into preallocated buffers; the two cumax gates of a step are one small matrix
  product of the softmax probabilities with a constant triangular matrix;
* backward (hand-written): everything that does not depend on the incoming gradient is
  computed for the whole sequence at once before the backward loop, so a step costs one
  ``addmm`` and about nine small kernels; the recurrent weight's gradient is one big matrix
  product over all steps after the loop instead of one small one per step;
* distances: ``d_f = 1 - mean_k cumsum(p)_k = sum_j p_j * j / D_m`` (likewise ``d_i`` from the
  master-input probabilities), read from the stored softmax probabilities after the loop;
* without autograd (evaluation, :meth:`ONLSTMLanguageModel.distances`) nothing is kept for a
  backward pass and the per-step buffers are reused.

:func:`linear_cross_entropy` fuses the tied decoder with the softmax cross-entropy (one
exponential pass, the logits buffer reused for their gradient and across calls).

Layout of the pre-activations ``z`` (G = 2 D_m + 4 H): ``[mf | mi | o | f | i | g]``.

Measured on a 2-core CPU (``benchmarks/bench_train.py --mode cell``): one layer forward +
backward twice as fast as the reference cell in an autograd loop, where compiling that loop's
step with ``torch.compile`` gains nothing (the per-step autograd and small matrix products
dominate), so no compiler is needed.  Everything here is plain PyTorch and runs on any device.
On CUDA the forward and backward loops of a training step are recorded as CUDA graphs and
replayed (:mod:`onparse.lm.graphs`): launched kernel by kernel they cost the host about six times
what the GPU needs for them at batch 20 (``tests/test_cuda.py`` checks the replay against the
launches and the reference, ``benchmarks/bench_train.py --device cuda`` measures it).
"""
import contextlib
from typing import Dict, Tuple

import torch
from torch import Tensor

from . import graphs

_TRIANGLES: Dict[Tuple[int, torch.dtype, str], Tuple[Tensor, Tensor]] = {}
#: The recorded forward and backward loops on CUDA (see :mod:`onparse.lm.graphs`).
_GRAPHS = graphs.GraphCache()


def _master_matrices(levels: int, dtype: torch.dtype, device: torch.device) -> Tuple[Tensor, Tensor]:
    """(2 D_m, 2 D_m) block matrix M with ``[p_f | p_i] @ M = [cumsum(p_f) | 1 - cumsum(p_i)]``
    (the second block sums the probabilities above each level, ``1 - cumsum`` without the
    subtraction), and the (D_m,) weights ``j / D_m`` turning probabilities into distances."""
    key = (levels, dtype, str(device))
    if key not in _TRIANGLES:
        upper = torch.triu(torch.ones(levels, levels, dtype=torch.float64))   # U[j, k] = 1 if j <= k
        block = torch.zeros(2 * levels, 2 * levels, dtype=torch.float64)
        block[:levels, :levels] = upper
        block[levels:, levels:] = 1.0 - upper
        weights = torch.arange(levels, dtype=torch.float64) / levels
        _TRIANGLES[key] = (block.to(device=device, dtype=dtype), weights.to(device=device, dtype=dtype))
    return _TRIANGLES[key]


def _forward_loop(xproj: Tensor, weight: Tensor, h0: Tensor, c0: Tensor, chunk: int, keep: bool):
    """The recurrence without autograd.  xproj (T, B, G), weight (G, H), h0/c0 (B, H).

    Returns hs (T, B, H), cs (T+1 or 2, B, H), probs (T, B, 2, D_m) and, when ``keep``, the
    buffers the backward pass reads: act (T, B, 4H) = [o | f | i | tanh(g)] after their
    nonlinearities, masters (T, B, 2, D_m) = [f~ | i~], omega (T, B, D_m),
    fi_hat (T, B, 2, H) = [f^ | i^] and tanh_c (T, B, H).
    """
    steps, batch, gates = xproj.shape
    hidden = weight.shape[1]
    levels = hidden // chunk
    m2 = 2 * levels
    block, _ = _master_matrices(levels, xproj.dtype, xproj.device)
    n = steps if keep else 1
    new = xproj.new_empty
    hs = new(steps, batch, hidden)
    cs = new(steps + 1 if keep else 2, batch, hidden)
    cs[0].copy_(c0)
    probs = []
    act = new(n, batch, 4 * hidden)
    masters = new(n, batch, 2, levels)
    omega = new(n, batch, levels)
    fi_hat = new(n, batch, 2, hidden)
    tanh_c = new(n, batch, hidden)
    z = new(batch, gates)
    weight_t = weight.t()
    h = h0
    for t in range(steps):
        s = t if keep else 0
        c_prev = cs[t] if keep else cs[t % 2]
        c = cs[t + 1] if keep else cs[(t + 1) % 2]
        torch.addmm(xproj[t], h, weight_t, out=z)
        a = act[s]
        torch.sigmoid(z[:, m2:m2 + 3 * hidden], out=a[:, :3 * hidden])
        torch.tanh(z[:, m2 + 3 * hidden:], out=a[:, 3 * hidden:])
        # (torch's softmax with out= or on a strided view is much slower than on a contiguous copy)
        p = torch.softmax(z[:, :m2].reshape(batch, 2, levels), dim=-1)
        probs.append(p)
        mast = masters[s]
        torch.mm(p.view(batch, m2), block, out=mast.view(batch, m2))
        w = omega[s]
        torch.mul(mast[:, 0], mast[:, 1], out=w)
        # f^ = f * w + (f~ - w) and i^ = i * w + (i~ - w), both at once, per level broadcast over C
        fh = fi_hat[s]
        torch.addcmul((mast - w[:, None]).unsqueeze(-1), w[:, None, :, None],
                      a[:, hidden:3 * hidden].view(batch, 2, levels, chunk),
                      out=fh.view(batch, 2, levels, chunk))
        torch.mul(fh[:, 0], c_prev, out=c)
        c.addcmul_(fh[:, 1], a[:, 3 * hidden:])
        tc = tanh_c[s]
        torch.tanh(c, out=tc)
        h = hs[t]
        torch.mul(a[:, :hidden], tc, out=h)
    saved = (act, masters, omega, fi_hat, tanh_c) if keep else None
    return hs, cs, torch.stack(probs), saved


def _distances(probs: Tensor) -> Tensor:
    """(T, B, 2, D_m) softmax probabilities of the master gates -> (2, T, B) ``[d_f, d_i]``."""
    _, weights = _master_matrices(probs.shape[-1], probs.dtype, probs.device)
    return torch.matmul(probs, weights).permute(2, 0, 1)


class _ONLSTMRecurrence(torch.autograd.Function):
    """(xproj (T, B, G), weight (G, H), h0 (B, H), c0 (B, H)) -> (hs (T, B, H), c_T (B, H),
    distances (2, T, B)); the distances are not differentiable."""

    @staticmethod
    def forward(ctx, xproj, weight, h0, c0, chunk):
        hs, cs, probs, saved = _GRAPHS(("forward", chunk), lambda *t: _forward_loop(*t, chunk, keep=True),
                                       (xproj, weight, h0, c0))
        ctx.chunk = chunk
        ctx.save_for_backward(weight, h0, hs, cs, probs, *saved)
        dist = _distances(probs)
        ctx.mark_non_differentiable(dist)
        return hs, cs[-1].clone(), dist

    @staticmethod
    def backward(ctx, grad_hs, grad_c, _grad_dist):
        saved = ctx.saved_tensors
        hs = saved[2]
        if grad_hs is None:
            grad_hs = torch.zeros_like(hs)
        if grad_c is None:
            grad_c = hs.new_zeros(hs.shape[1:])
        need = (bool(ctx.needs_input_grad[1]), bool(ctx.needs_input_grad[2]), bool(ctx.needs_input_grad[3]))
        grads = _GRAPHS(("backward", ctx.chunk, need), lambda *t: _backward_pass(*t, chunk=ctx.chunk, need=need),
                        (grad_hs, grad_c, *saved))
        return (*grads, None)


def _backward_pass(grad_hs, grad_c, weight, h0, hs, cs, probs, act, masters, omega, fi_hat, tanh_c,
                   chunk, need):
    """The hand-written backward of :func:`_forward_loop` (``keep=True``): gradients of the loss
    with respect to (xproj, weight, h0, c0) from those of hs (T, B, H) and c_T (B, H); ``need``
    says which of weight, h0, c0 want one (the others are returned as None).  No host sync, so
    on CUDA it can be recorded as a graph."""
    steps, batch, hidden = hs.shape
    levels = hidden // chunk
    m2 = 2 * levels
    gates = weight.shape[0]
    block, _ = _master_matrices(levels, hs.dtype, hs.device)
    block_t = block.t().contiguous()

    # --- coefficients of the step's linear backward map, for all steps at once -------------
    # Per-level quantities broadcast over the C neurons of a level through (.., D_m, 1) views.
    def by_level(t):                                            # (T, B, H) -> (T, B, D_m, C)
        return t.view(steps, batch, levels, chunk)

    o, f, i, g = act.split(hidden, dim=2)                       # each (T, B, H)
    fi = act[:, :, hidden:3 * hidden]                           # (T, B, 2H) = [f | i]
    c_prev = cs[:-1]
    w = omega.unsqueeze(-1)                                     # (T, B, D_m, 1)
    mf, mi = masters[:, :, 0].unsqueeze(-1), masters[:, :, 1].unsqueeze(-1)
    tc2 = tanh_c * tanh_c
    coef_c = torch.addcmul(o, o, tc2, value=-1.0)               # dc += dh * o (1 - tanh^2 c)
    coef_o = tanh_c * (o - o * o)                               # dz_o = dh * tanh c * o (1 - o)
    dfi = fi - fi * fi                                          # sigmoid derivatives of f and i
    coef_fig = hs.new_empty(steps, batch, 3, hidden)            # dz_{f,i,g} = dc * coef
    k_f, k_i, k_g = coef_fig.unbind(2)
    torch.mul(by_level(c_prev) * w, by_level(dfi[:, :, :hidden]), out=by_level(k_f))
    torch.mul(by_level(g) * w, by_level(dfi[:, :, hidden:]), out=by_level(k_i))
    torch.addcmul(fi_hat[:, :, 1], fi_hat[:, :, 1], g * g, value=-1.0, out=k_g)
    # d f~ = sum_C dc * (c_prev + i~ Q) and d i~ = sum_C dc * (g + f~ Q) with
    # Q = c_prev (f - 1) + g (i - 1), from f^ = f~ (f i~ + 1 - i~) and i^ = i~ (i f~ + 1 - f~).
    q = torch.addcmul(c_prev * f - c_prev, g, i) - g
    coef_m = hs.new_empty(steps, batch, 2, levels, chunk)
    torch.addcmul(by_level(c_prev), mi, by_level(q), out=coef_m[:, :, 0])
    torch.addcmul(by_level(g), mf, by_level(q), out=coef_m[:, :, 1])
    del o, f, i, g, fi, dfi, tc2, q, k_f, k_i, k_g

    # --- the backward loop ---------------------------------------------------------------
    dz_all = hs.new_empty(steps, batch, gates)
    dh = hs.new_empty(batch, hidden)
    dc_carry = grad_c.clone()
    dc = hs.new_empty(batch, hidden)
    dmaster = hs.new_empty(batch, 2, levels)
    dprob = hs.new_empty(batch, 2, levels)
    dz_master = hs.new_empty(batch, 2, levels)
    for t in range(steps - 1, -1, -1):
        if t == steps - 1:
            dh.copy_(grad_hs[t])
        else:
            torch.addmm(grad_hs[t], dz_all[t + 1], weight, out=dh)
        torch.addcmul(dc_carry, dh, coef_c[t], out=dc)
        dz = dz_all[t]
        torch.mul(dh, coef_o[t], out=dz[:, m2:m2 + hidden])
        torch.mul(dc.unsqueeze(1), coef_fig[t], out=dz[:, m2 + hidden:].view(batch, 3, hidden))
        torch.sum(dc.view(batch, 1, levels, chunk) * coef_m[t], dim=-1, out=dmaster)
        torch.mm(dmaster.view(batch, m2), block_t, out=dprob.view(batch, m2))
        torch.ops.aten._softmax_backward_data.out(dprob, probs[t], -1, probs.dtype, grad_input=dz_master)
        dz[:, :m2].copy_(dz_master.view(batch, m2))
        torch.mul(dc, fi_hat[t, :, 0], out=dc_carry)

    # --- weight gradient: one product over all steps ---------------------------------------
    grad_weight = grad_h0 = None
    if need[0]:
        grad_weight = dz_all[0].t() @ h0
        if steps > 1:
            grad_weight.addmm_(dz_all[1:].reshape(-1, gates).t(), hs[:-1].reshape(-1, hidden))
    if need[1]:
        grad_h0 = dz_all[0] @ weight
    grad_c0 = dc_carry if need[2] else None
    return dz_all, grad_weight, grad_h0, grad_c0


def _full_precision(*tensors: Tensor):
    """Under autocast, the recurrence and the softmax run in float32 (the cell state and the
    cumax gates are sensitive to rounding); returns the float32 inputs and a context that turns
    autocast off, or the inputs unchanged and a null context."""
    device_type = tensors[0].device.type
    if not torch.is_autocast_enabled(device_type):
        return tensors, contextlib.nullcontext()
    cast = tuple(t.float() if t.is_floating_point() else t for t in tensors)
    return cast, torch.autocast(device_type, enabled=False)


def recurrence(xproj: Tensor, weight: Tensor, h0: Tensor, c0: Tensor, chunk: int):
    """Fast ON-LSTM recurrence.  xproj: (T, B, G) input projection including biases; weight:
    (G, H) recurrent weight (masked or scaled); h0, c0: (B, H); chunk: C.

    Returns hs (T, B, H), (h_T, c_T), distances (2, T, B) as ``[d_f, d_i]`` (no gradient).
    Under autocast it computes in float32.
    """
    (xproj, weight, h0, c0), precision = _full_precision(xproj, weight, h0, c0)
    steps = xproj.shape[0]
    if steps == 0:
        empty = xproj.new_zeros(2, 0, xproj.shape[1])
        return xproj.new_zeros(0, *h0.shape), (h0, c0), empty
    needs_grad = torch.is_grad_enabled() and any(
        t.requires_grad for t in (xproj, weight, h0, c0))
    with precision:
        if needs_grad:
            hs, c_last, dist = _ONLSTMRecurrence.apply(xproj, weight, h0, c0, chunk)
            return hs, (hs[-1], c_last), dist
        with torch.no_grad():
            hs, cs, probs, _ = _forward_loop(xproj, weight, h0, c0, chunk, keep=False)
            return hs, (hs[-1], cs[steps % 2].clone()), _distances(probs)


# --- the decoder's cross-entropy ------------------------------------------------------------

class _ScratchPool:
    """One reusable CPU scratch buffer per dtype for the (N, V) logits.

    glibc serves allocations above 32 MiB with a fresh mmap, and the kernel then faults in
    every 4 KiB page on first touch: for the 180 MB logits of a batch of 64 x 70 tokens over a
    10k vocabulary that costs about as much as the softmax itself.  The buffer is taken by a
    forward pass and given back when its backward pass has finished with it; a second forward
    before that (gradient accumulation) simply allocates its own.  CUDA has a caching allocator
    and bypasses the pool.
    """

    def __init__(self):
        self._free: Dict[torch.dtype, Tensor] = {}

    def take(self, rows: int, cols: int, dtype: torch.dtype, device: torch.device) -> Tensor:
        if device.type != "cpu":
            return torch.empty(rows, cols, dtype=dtype, device=device)
        buf = self._free.pop(dtype, None)
        if buf is None or buf.numel() < rows * cols:
            buf = torch.empty(rows * cols, dtype=dtype)
        return buf[:rows * cols].view(rows, cols)

    def give(self, tensor: Tensor) -> None:
        if tensor.device.type != "cpu":
            return
        base = tensor._base if tensor._base is not None else tensor
        kept = self._free.get(tensor.dtype)
        if kept is None or kept.numel() < base.numel():
            self._free[tensor.dtype] = base

    def clear(self) -> None:
        """Drop the kept buffers (they are otherwise held for the life of the process)."""
        self._free.clear()


SCRATCH = _ScratchPool()


def _cross_entropy_forward(x: Tensor, weight: Tensor, bias: Tensor, targets: Tensor):
    """Mean cross-entropy of ``x W^T + b``; also returns ``exp(logits - row max)`` (N, V) in a
    scratch buffer and its row sums (N, 1)."""
    logits = SCRATCH.take(x.shape[0], weight.shape[0], x.dtype, x.device)
    torch.addmm(bias, x, weight.t(), out=logits)                    # (N, V)
    row_max = logits.amax(dim=1, keepdim=True)                      # (N, 1)
    target_logit = logits.gather(1, targets[:, None])               # (N, 1)
    exp = logits.sub_(row_max).exp_()
    sums = exp.sum(dim=1, keepdim=True)                             # (N, 1)
    loss = (sums.log() + row_max - target_logit).mean()
    return loss, exp, sums


class _LinearCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy of ``softmax(x W^T + b)`` against ``targets`` in one function.

    The logits buffer (N, V) is reused in place: forward turns it into ``exp(logits - max)``
    (the only exponential pass), backward into the gradient of the logits
    ``(softmax - onehot) / N``; no log-probabilities, one-hot matrix or second exponential
    are materialised, which is most of the cost of ``log_softmax`` + NLL on a large vocabulary.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, targets):
        loss, exp, sums = _cross_entropy_forward(x, weight, bias, targets)
        ctx.save_for_backward(x, weight, exp, sums, targets)
        ctx.spent = False
        return loss

    @staticmethod
    def backward(ctx, grad_loss):
        if ctx.spent:
            raise RuntimeError("linear_cross_entropy: backward can run only once per forward")
        ctx.spent = True
        x, weight, exp, sums, targets = ctx.saved_tensors
        n = x.shape[0]
        scale = grad_loss / n
        grad_logits = exp.mul_(scale / sums)                        # softmax * scale, in place
        grad_logits.scatter_add_(1, targets[:, None], (-scale).expand(n, 1).to(exp.dtype))
        grad_x = grad_logits @ weight if ctx.needs_input_grad[0] else None
        grad_w = grad_logits.t() @ x if ctx.needs_input_grad[1] else None
        grad_b = grad_logits.sum(dim=0) if ctx.needs_input_grad[2] else None
        SCRATCH.give(grad_logits)
        return grad_x, grad_w, grad_b, None


def linear_cross_entropy(x: Tensor, weight: Tensor, bias: Tensor, targets: Tensor) -> Tensor:
    """``F.cross_entropy(F.linear(x, weight, bias), targets)`` (mean over N), faster and with
    half the memory.  x: (N, E); weight: (V, E); bias: (V,); targets: (N,) long.

    Only the backward pass needs the exponentials: it cannot be called twice (as with
    ``F.cross_entropy`` without ``retain_graph``, but here the buffer is reused in place).
    Under autocast it computes in float32.
    """
    (x, weight, bias), precision = _full_precision(x, weight, bias)
    with precision:
        if not torch.is_grad_enabled() or not any(t.requires_grad for t in (x, weight, bias)):
            with torch.no_grad():
                loss, exp, _ = _cross_entropy_forward(x, weight, bias, targets)
            SCRATCH.give(exp)
            return loss
        return _LinearCrossEntropy.apply(x, weight, bias, targets)

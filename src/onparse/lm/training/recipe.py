"""The pieces of the AWD-LSTM recipe (``docs/onlstm.md`` section 2) that the training loop calls: the
objective, the window lengths, the trigger of averaged SGD and the running parameter average.

torch is imported by the callers: these functions take tensors and modules as arguments.
"""
import contextlib
import random
from typing import Any, Dict, List

#: Window-length jitter of the AWD-LSTM recipe.
JITTER_STD = 5.0
MIN_WINDOW = 5
HALF_BPTT_PROB = 0.05


def objective(model, out, targets, alpha: float, beta: float):
    """Training loss of one window: cross-entropy + AR + TAR.

    ``out`` is the model's :class:`~onparse.lm.model.LMOutput` for inputs (T, B); ``targets`` (T, B).
    AR: ``alpha * mean(output^2)`` on the dropped last-layer output; TAR:
    ``beta * mean((raw_t - raw_{t-1})^2)`` on the undropped one.  Returns (loss, cross-entropy).
    """
    ce = model.loss(out.output, targets)
    loss = ce
    if alpha:
        loss = loss + alpha * out.output.float().pow(2).mean()
    if beta and out.raw_last.shape[0] > 1:
        raw = out.raw_last.float()
        loss = loss + beta * (raw[1:] - raw[:-1]).pow(2).mean()
    return loss, ce


class ParameterAverager:
    """Running mean of the parameters over the SGD steps since averaging began: the ``ax`` of
    ``torch.optim.ASGD(t0=0, lambd=0)``.  ``count`` steps averaged so far."""

    def __init__(self, model):
        self.named = [(n, p) for n, p in model.named_parameters()]
        self.avg = {n: p.detach().clone() for n, p in self.named}
        self.count = 0

    def update(self) -> None:
        """Fold in the current parameters (after an optimiser step)."""
        self.count += 1
        weight = 1.0 / self.count
        for name, p in self.named:
            if self.count == 1:
                self.avg[name].copy_(p.detach())
            else:
                self.avg[name].lerp_(p.detach(), weight)

    @contextlib.contextmanager
    def swapped_in(self):
        """Within the block, the model holds the averaged weights (its own are put back after)."""
        if self.count == 0:
            yield
            return
        backup = {n: p.detach().clone() for n, p in self.named}
        for n, p in self.named:
            p.detach().copy_(self.avg[n])
        try:
            yield
        finally:
            for n, p in self.named:
                p.detach().copy_(backup[n])

    def state_dict(self, model) -> Dict[str, Any]:
        """``model.state_dict()`` with the averaged parameters."""
        sd = model.state_dict()
        if self.count:
            sd.update(self.avg)
        return sd

    def load(self, averaged: Dict[str, Any], count: int) -> None:
        for n, _ in self.named:
            self.avg[n].copy_(averaged[n])
        self.count = count


def should_start_averaging(history: List[float], current: float, nonmono: int) -> bool:
    """The non-monotone trigger of NT-ASGD: switch when the ``current`` validation loss is worse
    than the best of the earlier checks ``history`` except the last ``nonmono`` of them, i.e. the
    best has not improved for ``nonmono`` checks.  ``nonmono=0``: at the first check that is
    worse than every earlier one's best.

    >>> should_start_averaging([5.0, 4.0, 4.1, 4.2], 4.3, 2), should_start_averaging([5.0, 4.0, 4.1], 4.3, 2)
    (True, False)
    """
    if len(history) <= nonmono:
        return False
    return current > min(history[:len(history) - nonmono])


def window_length(rng: random.Random, bptt: int) -> int:
    """Length of the next BPTT window: ``bptt`` (probability 0.95) or ``bptt / 2``, jittered by a
    normal of standard deviation 5, at least 5 (the AWD-LSTM recipe)."""
    base = bptt if rng.random() >= HALF_BPTT_PROB else bptt / 2
    return max(MIN_WINDOW, int(rng.gauss(base, JITTER_STD)))

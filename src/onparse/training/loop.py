"""The one run loop every kind trains by: :class:`RunLoop`, over a kind's
:class:`~onparse.training.hooks.Hooks`; and the run folder's lifecycle around it
(:func:`holding`: the folder and its lock; :func:`new_or_resumed`: what a new run refuses and a
resumed one keeps).

The loop, read top to bottom: while no stop is agreed, an epoch: the batches left in it, one
step each, a stop check after each step; then the validation that ends the epoch (its record,
``best.pt`` when it improved, ``epoch-NNN.pt`` with ``--keep-epochs``, ``last.pt``), or, when
a stop came inside the epoch, ``last.pt`` alone.  A stop is a request (Ctrl-C, SIGTERM: see
:mod:`onparse.training.stops`), ``--max-time`` (seconds of this invocation), ``--max-steps``
(steps over all invocations) or the last epoch done; ``--checkpoint-every`` saves ``last.pt``
inside an epoch.  No weights are saved that are not finite, and a hook that finds something
non-finite raises :class:`~onparse.training.hooks.Diverged`: the loop records it and stops with
a one-line error saying what the run folder keeps.

No torch here: the kinds' hooks hold the tensors.
"""
from __future__ import annotations

import contextlib
import os
import time
from dataclasses import replace
from typing import Iterator, Optional

from ..errors import OnparseError
from ..files.run_folder import (BEST, EPOCH_SNAPSHOT, EPOCH_SNAPSHOT_RE, FolderLock, MetricsLog, make_folder,
                                refuse_old_run, run_files)
from .hooks import Diverged, EpochEnd, Hooks
from .options import RunOptions
from .stops import StopRequests


class RunLoop:
    """One invocation of a run: :meth:`run` trains through ``hooks`` until a stop and returns its
    reason (``epochs``, ``max_time``, ``max_steps`` or ``interrupted``).  ``started``: when this
    invocation's ``--max-time`` began (default: when :meth:`run` is called)."""

    def __init__(self, hooks: Hooks, options: RunOptions, log: MetricsLog, *, started: Optional[float] = None):
        self.hooks, self.opt, self.log = hooks, options, log
        self.started = started
        self.last_saved = time.monotonic()       # when last.pt was last written (--checkpoint-every)
        self.stops: Optional[StopRequests] = None

    def run(self) -> str:
        """Epochs until a stop (the loop in the module docstring); the ``stop`` record; its reason."""
        h = self.hooks
        try:
            h.begin()
            if self.started is None:
                self.started = time.monotonic()
            with StopRequests(self.log.say) as self.stops, h.progress():
                reason = "epochs" if h.finished() else self.should_stop()
                while reason is None:
                    reason = self.epoch()
                    if reason is None:
                        reason = "epochs" if h.finished() else self.should_stop()
            h.stopped(reason)
        except Diverged as err:
            self.diverged(str(err))
        self.log.event("stop", reason=reason, **h.where())
        return reason

    def epoch(self) -> Optional[str]:
        """Train from the current position to the end of the epoch or a stop; then end the
        epoch (a whole one) or save ``last.pt`` (a stop inside it).  The stop's reason, if any."""
        h, reason = self.hooks, None
        h.begin_epoch()
        with h.epoch_progress():
            for batch in h.batches():
                h.train_step(batch)
                reason = self.should_stop()
                if reason:
                    break
        h.end_steps()
        if not h.epoch_complete():
            self.save_last()                     # stopped inside the epoch
            return reason
        end = h.validate(lambda: self.stops.requested)
        if end is None:                          # a stop while validating: --resume validates again
            self.save_last()
            return reason or "interrupted"
        self.check_weights()
        if end.improved:
            h.save(os.path.join(self.opt.out, BEST), end)
        if self.opt.keep_epochs:
            h.save(os.path.join(self.opt.out, EPOCH_SNAPSHOT.format(end.record["epoch"])), end)
        self.log.event("epoch", **end.record)
        self.log.say(end.line)
        h.after_epoch(end)
        self.save_last()
        return reason

    def should_stop(self) -> Optional[str]:
        """The stop reason agreed by every process, checked at step boundaries; saves
        ``last.pt`` when it is due (``--checkpoint-every``, or the kind's own rule)."""
        h, opt = self.hooks, self.opt
        if opt.max_steps is not None and h.step >= opt.max_steps:
            return "max_steps"                   # the same step count everywhere: no agreement needed
        if not h.syncs_at(h.step):
            return None
        now = time.monotonic()
        timed_out = opt.max_time is not None and now - self.started >= opt.max_time
        due = (opt.checkpoint_every is not None and now - self.last_saved >= opt.checkpoint_every) \
            or h.checkpoint_due()
        requested, timed_out, due = h.agree([float(self.stops.requested), float(timed_out), float(due)])
        if requested:
            return "interrupted"
        if timed_out:
            return "max_time"
        if due:
            self.save_last()                     # inside an epoch: a kill loses at most this interval
        return None

    # ---- files and divergence --------------------------------------------------------------
    def save_last(self) -> None:
        self.check_weights()
        self.hooks.save_last()
        self.last_saved = time.monotonic()

    def check_weights(self) -> None:
        """Stop before saving non-finite weights (a gradient can overflow while the loss is finite)."""
        try:
            self.hooks.check_weights()
        except Diverged as err:
            self.diverged(str(err))

    def diverged(self, what: str) -> None:
        """Stop the run: log the ``diverged`` record, raise a one-line OnparseError saying what is left."""
        h = self.hooks
        self.log.event("diverged", **h.where(), reason=what)
        raise OnparseError(f"{h.noun} diverged at step {h.step} (epoch {h.epoch_shown()}): {what}; {h.kept()}. "
                           "Lower --lr (or --clip) and start again")


# -- the run folder around a run ---------------------------------------------------------------
@contextlib.contextmanager
def holding(out: str, log: MetricsLog, *, option: str = "--out", writes: bool = True) -> Iterator[None]:
    """The run folder ``out`` made and locked for the run (``writes``: this process writes it;
    other ranks of a distributed run neither make nor lock it); ``option`` names the folder in
    messages."""
    if not writes:
        yield
        return
    make_folder(out)
    lock = FolderLock(out, option).acquire(warn=log.say)
    try:
        yield
    finally:
        lock.release()


def new_or_resumed(options: RunOptions, resumed: bool, option: str = "--out") -> RunOptions:
    """The folder's say in a run: a new run refuses a folder holding a run (unless
    ``overwrite``); a resumed run that kept its epochs keeps them (``--keep-epochs`` is not in
    ``last.pt``: the folder says)."""
    if not resumed:
        refuse_old_run(options.out, options.overwrite, option)
        return options
    if not options.keep_epochs and any(EPOCH_SNAPSHOT_RE.fullmatch(n) for n in run_files(options.out)):
        return replace(options, keep_epochs=True)
    return options


__all__ = ["RunLoop", "holding", "new_or_resumed", "Diverged", "EpochEnd", "Hooks"]

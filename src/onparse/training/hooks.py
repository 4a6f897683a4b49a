"""What a kind of model supplies to the one run loop (:class:`onparse.training.loop.RunLoop`):
:class:`Hooks`, and the two values its hooks hand back (:class:`EpochEnd`, :class:`Diverged`).

The loop owns a run's lifecycle (stop requests, the time and step limits, when ``last.pt``,
``best.pt`` and the epoch snapshots are written, the check that no non-finite weights are
saved, divergence, the ``stop`` record); a kind says how it does each thing the loop asks for:
build (in its constructor: the data, the model, the optimiser, a fresh or restored state),
the batches of an epoch, one step, the validation that ends an epoch, what its log records and
how it saves.  As SuPar's parsers supply their ``train_step`` and ``eval_step`` to one
``train`` loop, each kind's hooks live in its own package: :mod:`onparse.lm.training.train`,
:mod:`onparse.grammar.train`, :mod:`onparse.student.distill`.

No torch here.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional


class Diverged(Exception):
    """Raised by a hook when the run cannot go on: what became non-finite (``"the training loss
    became nan"``).  The loop records it and stops the run with a one-line error."""


@dataclass
class EpochEnd:
    """What a validated epoch hands the loop: its ``record`` (the ``epoch`` event of the metrics
    log), its ``line`` on stderr, and whether it is the best so far (``best.pt`` is written)."""

    record: Dict[str, Any]
    line: str
    improved: bool = False


class Hooks:
    """A kind's side of a run (the module docstring).  Counters the loop reads: :attr:`step`
    (optimiser steps over all invocations), :meth:`finished` (every epoch done); the rest are
    methods the loop calls, top to bottom, in this order."""

    #: Who diverged, in the error: "training diverged at step ..."
    noun = "training"
    #: Whether this process writes the run's files (False on ranks other than 0 of a distributed run).
    is_main = True
    #: Optimiser steps so far, over every invocation of the run.
    step = 0

    # -- the run -----------------------------------------------------------------------------
    def begin(self) -> None:
        """Log the run's ``start`` (or ``resume``) record and say its first line."""

    def progress(self) -> contextlib.AbstractContextManager:
        """The whole run's progress display (closed when the loop ends)."""
        return contextlib.nullcontext()

    def finished(self) -> bool:
        """Whether every epoch asked for is done."""
        raise NotImplementedError

    def where(self) -> Dict[str, Any]:
        """Where the run stands, as its ``stop`` and ``diverged`` records say it (``epoch``, ``step``)."""
        raise NotImplementedError

    def epoch_shown(self) -> int:
        """The epoch in progress, counted from 1 (the divergence message names it)."""
        raise NotImplementedError

    # -- an epoch ----------------------------------------------------------------------------
    def begin_epoch(self) -> None:
        """Before the epoch's steps (a new epoch, or the rest of one): what they start from."""

    def epoch_progress(self) -> contextlib.AbstractContextManager:
        """One epoch's progress display."""
        return contextlib.nullcontext()

    def batches(self) -> Iterable[Any]:
        """The batches left in the epoch in progress, from where the run stands (drawn lazily: the
        loop asks for the next one only when it takes another step)."""
        raise NotImplementedError

    def train_step(self, batch: Any) -> None:
        """One optimiser step on ``batch``, moving the run's position on; :class:`Diverged` when
        the step cannot be taken."""
        raise NotImplementedError

    def end_steps(self) -> None:
        """After the epoch's last step, or a stop inside it: fold what the steps counted."""

    def epoch_complete(self) -> bool:
        """Whether the epoch in progress has taken all its batches."""
        raise NotImplementedError

    def validate(self, stop) -> Optional[EpochEnd]:
        """End the epoch: measure it, count it done, and return its record; None (and nothing
        changed) when ``stop()`` became true while measuring."""
        raise NotImplementedError

    def after_epoch(self, end: EpochEnd) -> None:
        """After the epoch's record, snapshots and line, before ``last.pt``: what the next epoch
        starts from (and any line or record that follows the epoch's own)."""

    def stopped(self, reason: str) -> None:
        """Once the loop has stopped, before its ``stop`` record (a last measurement)."""

    # -- agreement between processes (a distributed run) ----------------------------------------
    def syncs_at(self, step: int) -> bool:
        """Whether the processes agree on stopping at this step (every step when there is one)."""
        return True

    def agree(self, flags: List[float]) -> List[float]:
        """The flags of every process, combined (the largest of each)."""
        return flags

    # -- files ---------------------------------------------------------------------------------
    def checkpoint_due(self) -> bool:
        """Whether ``last.pt`` is due by the kind's own rule (every so many batches), beside the
        run's ``--checkpoint-every`` seconds."""
        return False

    def weights(self) -> Iterator[Any]:
        """Every tensor a checkpoint saves (checked finite before each save)."""
        raise NotImplementedError

    def check_weights(self) -> None:
        """:class:`Diverged` when a weight is not finite: the loop checks before each save, and a
        kind may check sooner (before an epoch's validation counts it as the best)."""
        if not all(bool(w.detach().isfinite().all()) for w in self.weights()):
            raise Diverged("the weights became NaN or infinite")

    def save_last(self) -> None:
        """Write ``last.pt``: the weights and everything ``--resume`` needs."""
        raise NotImplementedError

    def save(self, path: str, end: EpochEnd) -> None:
        """Write the weights as a model file at ``path`` (``best.pt``, an epoch's snapshot)."""
        raise NotImplementedError

    def kept(self) -> str:
        """What a diverged run leaves (``"RUN/best.pt keeps epoch 2 (valid ppl 123)"``)."""
        raise NotImplementedError

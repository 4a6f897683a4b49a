"""The train stage of ``onparse fit`` (:mod:`onparse.fitting.pipeline`): its runs side by side in
waves, each in a process of its own (:func:`onparse.selection.run_command`) with its share of
``--max-time`` (:mod:`onparse.fitting.budget`), stopped at the share's end (it saves), resumed
where it stopped; a run that fails is one line saying what to do.
"""
from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from typing import Any, Dict, List, Optional

from ..errors import OnparseError
from ..files.run_folder import (LAST, FolderLock, epoch_seconds, has_last, kept_epochs, logged_events, run_files,
                                run_finished, stopped_since)
from ..files.safeio import format_duration
from ..progress import PLAIN_EVERY
from ..selection.runs import run_command
from ..selection.worker import CANNOT_RESUME
from ..training.options import RunOptions
from ..training.stops import stopped_with_parent
from . import budget

#: How often a training run saves its state mid-epoch (seconds): a fit stopped any way loses at
#: most this much of a run's training.
CHECKPOINT_EVERY = 300.0


class TrainStage:
    """The train stage of :class:`onparse.fitting.pipeline._Fit`, whose record (``state``,
    ``save``, ``say``, ``settings``, ``plans``, ``count_time`` ...) it reads and keeps."""

    def _train(self) -> Dict[str, Any]:
        plan = {**self.state["plan"], **self._layout(self.state["plan"])}      # today's --cores
        runs = plan["runs"]
        used = self.state.setdefault("train_seconds", {})
        for first in range(0, len(runs), plan["parallel"]):
            self._run_wave(runs[first:first + plan["parallel"]], plan, used)
        epochs = {run: kept_epochs(self._folder(run)) for run in runs}
        empty = [run for run, e in epochs.items() if not e]
        if len(empty) == len(runs):
            logs = [os.path.join(self._folder(run), "train.log") for run in empty]
            logs = [log for log in logs if os.path.exists(log)]
            # A budget under a second a run starts none: there is no log to point to.
            why = f"log: {logs[0]}" if logs else ("each run's share of it left under a second of training after "
                                                   "its start-up: none started")
            raise OnparseError(f"no run completed an epoch ({', '.join(empty)}); give more --max-time ({why})")
        if empty:
            # A grammar on a large text can need more than its share for one epoch: the runs
            # that have epochs still make a parser, and the report says what was left out.
            self.say(f"fit: {', '.join(empty)} completed no epoch within its share of the budget: left out "
                     "of the choice (more --max-time would keep it)")
        return {"epochs": {run: e for run, e in epochs.items() if e}, "left_out": empty}

    def _folder(self, run: str) -> str:
        return os.path.join(self.run_dir, run)

    def _command(self, run: str, plan: Dict[str, Any], seconds: Optional[float]) -> List[str]:
        """The command that trains ``run`` (:func:`onparse.selection.run_command`) for at most
        ``seconds`` (its training time: :meth:`_train_time`), resumed where it stopped."""
        folder = self._folder(run)
        # Killed (or out of disk) before its first last.pt: nothing to resume, and a new run
        # refuses a folder that holds its metrics.jsonl (issue 55.1).
        options = RunOptions(out=folder, max_time=None if seconds is None else float(max(1, int(seconds))),
                             resume=has_last(folder), overwrite=not has_last(folder) and bool(run_files(folder)),
                             threads=plan["threads_per_run"], checkpoint_every=CHECKPOINT_EVERY, keep_epochs=True)
        return run_command(self.plans(plan)[run], options)

    def _train_time(self, run: str, left: float, plan: Dict[str, Any]) -> float:
        """The ``--max-time`` of ``run`` with ``left`` seconds of its share: what its start-up (the
        longest measured so far, else the plan's estimate) and its stop leave."""
        measured = max(self.state.get("start_up", {}).values(), default=None)
        return budget.train_time(left, budget.start_up(plan.get("read_seconds", 0.0), measured))

    def _run_wave(self, wave: List[str], plan: Dict[str, Any], used: Dict[str, float]) -> None:
        share = self._seconds_per_run(plan["waves"])
        running = {}
        for run in wave:
            left = None if share is None else share - used.get(run, 0.0)
            seconds = None if left is None else self._train_time(run, left, plan)
            if seconds is not None and seconds < 1 or run_finished(self._folder(run)):
                continue
            os.makedirs(self._folder(run), exist_ok=True)
            # A run of a fit stopped a moment ago may still be saving (issue 55.9).
            FolderLock(self._folder(run)).acquire(wait=lambda holder, run=run: self.say(
                f"fit: waiting for an earlier training of {run} to end ({holder})")).release()
            log = open(os.path.join(self._folder(run), "train.log"), "a", encoding="utf-8")
            # A session of its own: a terminal's Ctrl-C reaches fit alone, which passes it on once
            # (a second SIGINT aborts a run without saving, issue 55.2); and the run is stopped,
            # saving, when fit dies however it dies (issue 55.9).
            launched = time.time()
            proc = subprocess.Popen(self._command(run, plan, seconds), stdout=log, stderr=log,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=stopped_with_parent())
            # Past its share less its stop, fit stops it (it saves, as on Ctrl-C): a start-up longer
            # than planned cannot make it overrun.
            deadline = None if left is None else time.monotonic() + left - budget.STOP_SECONDS
            running[run] = (proc, log, time.monotonic(), launched, deadline)
        last_line = time.monotonic()
        try:
            while running:
                time.sleep(0.5)
                for run, (proc, log, began, launched, deadline) in list(running.items()):
                    if proc.poll() is None:
                        if deadline is not None and time.monotonic() >= deadline:
                            proc.send_signal(signal.SIGINT)
                            self.say(f"fit: {run} reached the end of its share of the budget: stopping it")
                            running[run] = (proc, log, began, launched, None)
                        continue
                    log.close()
                    used[run] = round(used.get(run, 0.0) + time.monotonic() - began, 1)
                    start_up = budget.measured_start_up(logged_events(self._folder(run)), launched)
                    if start_up is not None:
                        self.state.setdefault("start_up", {})[run] = round(start_up, 1)
                    self.save()
                    del running[run]
                    # A run that logged its stop has saved: a signal after it (fit's own end of its
                    # share, crossing the run's own time limit) changes nothing.
                    if proc.returncode not in (0, 130) and not stopped_since(self._folder(run), launched):
                        raise self._failed(run, proc.returncode)
                self.count_time()
                if time.monotonic() - last_line >= PLAIN_EVERY and running:
                    last_line = time.monotonic()
                    self.say("fit: train: " + ", ".join(
                        f"{run} epoch {len(kept_epochs(self._folder(run)))}" for run in running)
                        + (self._left() or self._training_eta(list(running), plan)))
        except BaseException:
            # Stopped (Ctrl-C, a signal): each run saves its state on SIGINT and resumes exactly.
            for proc, *_ in running.values():
                proc.send_signal(signal.SIGINT)
            for run, (proc, log, began, *_) in running.items():
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                log.close()
                used[run] = round(used.get(run, 0.0) + time.monotonic() - began, 1)
            self.save()
            raise

    def _failed(self, run: str, status: int) -> OnparseError:
        """The one-line error of a run that failed: its own one-line error (the last line of its
        log) and, when its saved state cannot be read, how to go on."""
        log = os.path.join(self._folder(run), "train.log")
        said = _last_error(log)
        if status == CANNOT_RESUME:
            last = os.path.join(self._folder(run), LAST)
            return OnparseError(f"cannot resume {run}: {said or 'its saved state cannot be read'}; to go on, delete "
                                f"{last} and resume the fit ({run} then trains again from its start), or start "
                                "the fit anew in another --run-dir")
        return OnparseError(f"training {run} failed (exit {status}{': ' + said if said else ''}); its log: {log}")

    def _training_eta(self, running: List[str], plan: Dict[str, Any]) -> str:
        """Without ``--max-time``: the training time left, from the epochs the runs have timed
        (their ``metrics.jsonl``), the epochs planned and the waves still to come."""
        times = [t for run in plan["runs"] for t in epoch_seconds(self._folder(run))]
        plans = self.plans(plan)
        planned = max((plans[run].epochs() or 0 for run in running), default=0)
        if not times or not planned:
            return ""
        per_epoch = sum(times) / len(times)
        now = max(planned - len(epoch_seconds(self._folder(run))) for run in running)
        later = plan["runs"][plan["runs"].index(running[-1]) + 1:]
        left = per_epoch * (now + planned * math.ceil(len(later) / plan["parallel"]))
        return f"; training ends in about {format_duration(left)}"


def _last_error(log: str) -> str:
    """The one-line error a run's worker wrote last in its log (``onparse: ...``), if any."""
    try:
        with open(log, "rb") as handle:
            handle.seek(max(0, os.path.getsize(log) - 4096))
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return next((line[len("onparse: "):] for line in reversed(lines) if line.startswith("onparse: ")), "")

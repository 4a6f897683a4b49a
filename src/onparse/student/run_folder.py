"""A distillation's run folder (``onparse distill``'s ``--run-dir``) and the state its ``last.pt``
keeps: where the folder goes by default, which student paths would clash with the run's own
files, whether a student file is the one the run wrote (a ``--resume`` may replace it), and
:class:`RunState`, the plain value the run loop updates."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import torch

from ..errors import OnparseError
from ..files.checkpoint import STUDENT_FORMAT, read_file
from ..files.run_folder import LAST, is_run_file
from .file import same_teachers
from .teacher_trees import TEACHER_TREES

#: The option that names the run folder, in messages.
RUN_DIR_OPTION = "--run-dir"


@dataclass
class RunState:
    """Where a run stands: the plain value the loop updates and ``last.pt`` stores (its
    ``"training"`` dict, with the optimiser and RNG states; ``history`` as its
    ``metadata["epochs"]``).  The layout of ``last.pt`` is that of onparse 41."""

    epoch: int = 1                 # the epoch in progress, 1-based (epochs + 1 once all are done)
    done: int = 0                  # its batches done
    step: int = 0                  # optimiser steps so far
    loss_sum: float = 0.0          # the epoch's batch losses so far
    minutes: float = 0.0           # training time so far
    history: List[Dict[str, Any]] = field(default_factory=list)   # one record per finished epoch

    POSITION = ("epoch", "done", "step", "loss_sum")

    def position(self) -> Dict[str, Any]:
        return {key: getattr(self, key) for key in self.POSITION}

    def to_training(self, optimizer) -> Dict[str, Any]:
        """``last.pt``'s ``"training"``: the position, the minutes, the optimiser and RNG states."""
        state = {**self.position(), "minutes": self.minutes, "optimizer": optimizer.state_dict(),
                 "torch_rng": torch.get_rng_state()}
        if torch.cuda.is_available():            # dropout on a GPU draws from its own generators
            state["cuda_rng"] = torch.cuda.get_rng_state_all()
        return state

    @classmethod
    def from_training(cls, state: Dict[str, Any], history: list, path: str) -> "RunState":
        try:
            return cls(**{key: state[key] for key in cls.POSITION}, minutes=float(state.get("minutes", 0.0)),
                       history=list(history))
        except (KeyError, TypeError, ValueError):
            raise OnparseError(f"{path}: its training state is damaged (start again with --overwrite)") from None


def default_run_dir(student_path: str) -> str:
    """``student.pt`` -> ``student.run``."""
    root, ext = os.path.splitext(student_path)
    return (root if ext == ".pt" else student_path) + ".run"


def run_file_clash(student_path: str, run_dir: str) -> Optional[str]:
    """Why ``student_path`` cannot be the student of a run in ``run_dir`` (it is the folder
    itself or a file of the run: its lock, ``last.pt``, the teacher's trees ...), else None."""
    student, folder = os.path.realpath(student_path), os.path.realpath(run_dir)
    name = os.path.basename(student)
    if student == folder:
        return f"{student_path} is the run folder"
    if os.path.dirname(student) == folder and (is_run_file(name) or name == TEACHER_TREES):
        return f"{student_path} is a file of the run in {run_dir} ({name}): write the student elsewhere"
    return None


def written_by_run(student_path: str, run_dir: str) -> bool:
    """Whether the file at ``student_path`` is the student that the run in ``run_dir`` wrote:
    it records the run id, text and teachers of the run's ``last.pt``.  A ``--resume`` of that
    run may replace it without ``--force``."""
    last = os.path.join(run_dir, LAST)
    if not (os.path.isfile(student_path) and os.path.isfile(last)):
        return False
    try:
        mine, run = read_file(student_path), read_file(last)
    except OnparseError:
        return False
    if not (isinstance(mine, dict) and isinstance(run, dict) and mine.get("format") == STUDENT_FORMAT):
        return False
    ours, theirs = mine.get("metadata"), run.get("metadata")
    if not (isinstance(ours, dict) and isinstance(theirs, dict) and ours.get("run_id")):
        return False
    return (all(ours.get(key) == theirs.get(key) for key in ("run_id", "text"))
            and same_teachers(ours.get("teachers"), theirs.get("teachers")))

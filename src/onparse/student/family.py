"""How ``onparse train --family student`` trains a student: :data:`FAMILY` (see
:class:`onparse.training.family.Family`), listed in :mod:`onparse.registry`.  It does what
``onparse distill`` does: the student learns the trees its teacher (``--teacher MODEL``) gives
for the lines of the text (``--corpus FILE``), and is written to ``RUN/student.pt``.

Torch-free, as every family declaration is: the command line reads it at start-up, and the run
(:mod:`onparse.student.training`) is imported only when one starts.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..training.family import Family
from .config import StudentTraining

def start(preset: Optional[str], spec, values: Dict[str, Any], options):
    """:attr:`onparse.training.family.Family.start` of the student (ValueError for a bad setting),
    then its run (:func:`onparse.student.training.train`).  ``values["teacher"]``: the teacher,
    loaded by the command line (:attr:`Family.models`)."""
    from .training import train_student      # torch, once a run starts

    return train_student(spec, values, options)


#: ``onparse train --family student``: one preset (the defaults); its run loads a teacher, saves
#: ``last.pt`` every ``--save-every`` batches (not ``--checkpoint-every``) and counts no steps
#: against ``--max-steps``.
FAMILY = Family("student", {"small": StudentTraining()}, StudentTraining, start, label="Student",
                noun="student", folder="runs/student-{preset}", refuses=("init_from", "amp", "max_steps", "checkpoint_every"), models=("teacher",))

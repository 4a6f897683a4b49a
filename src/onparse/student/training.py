"""``onparse train --family student``: a distillation run (:func:`onparse.student.distill.distill`)
whose run folder is ``--out`` and whose student is ``OUT/student.pt``, reported as every family's
run is (:class:`onparse.training.options.TrainResult`)."""
from __future__ import annotations

import os
from typing import Any, Dict

from ..devices import torch_threads
from ..errors import OnparseError
from ..files.run_folder import has_last
from ..training.options import RunOptions, TrainResult
from .distill import distill
from .config import StudentTraining
from .run_folder import written_by_run

#: The student's file in its run folder (not a run file: ``last.pt`` and ``best.pt`` are the run's).
STUDENT_FILE = "student.pt"


def train_student(spec, values: Dict[str, Any], options: RunOptions):
    """The checked settings of a student's run, then the function that runs it: ValueError (a
    usage error) for a missing teacher, a corpus that is no text file, or a bad setting."""
    values = dict(values)
    teacher = values.pop("teacher", None)
    if teacher is None:
        raise ValueError("--family student learns from a teacher: give --teacher MODEL (a model file or bundle)")
    if spec is None or not os.path.isfile(spec.source):
        raise ValueError("--family student learns from a text file, one sentence per line: give --corpus FILE "
                         "(the same file on --resume)")
    if spec.valid or spec.test:
        raise ValueError("--valid and --test do not apply to --family student (it holds out every "
                         "--valid-every-th line of the text)")
    settings, sizes = StudentTraining(**values).split_values()
    student = os.path.join(options.out, STUDENT_FILE)

    def run() -> TrainResult:
        # A student file that no run wrote is not replaced (a new run into a folder holding a run
        # is refused by the run itself, which says how to resume it).
        foreign = not written_by_run(student, options.out) if options.resume else not has_last(options.out)
        if os.path.exists(student) and not options.overwrite and foreign:
            raise OnparseError(f"{student} exists; pass --overwrite to replace it, or choose another --out")
        try:
            with torch_threads(options.threads):
                result = distill(teacher, spec.source, student, run_dir=options.out, sizes=sizes, settings=settings,
                                 resume=options.resume, overwrite=options.overwrite,
                                 keep_epochs=options.keep_epochs, tokenize=spec.format != "pretokenized",
                                 quiet=options.progress is False, max_time=options.max_time)
        except KeyboardInterrupt:            # Ctrl-C: last.pt is saved, --resume continues
            return TrainResult(options.out, "interrupted", 0, 0, None, None, None, None)
        history = result.epochs
        return TrainResult(options.out, {"max-time": "max_time", "max-steps": "max_steps"}.get(result.stopped,
                                                                                               result.stopped),
                           len(history), history[-1]["step"] if history else 0, None, None, None, None,
                           best_path=result.student)
    return run

"""The language model shipped inside the package: what a command uses when it gets no ``--model``.

The file is package data (``onparse/models/default.pt``, an ordinary checkpoint with fp16
weights; :func:`onparse.files.checkpoint.load_model` reads it into float32).  Nothing is loaded at
import time: :func:`resolve` only returns a path, and the model is read when a command runs.
"""
import os
import sys
from typing import Optional

from ..errors import OnparseError
from .run_folder import BEST, LAST

#: File name of the bundled model inside ``onparse/models/``.
DEFAULT_FILE = "default.pt"
#: What ``--model`` shows in help texts and messages when the bundled model is used.
DEFAULT_NAME = "the bundled model"


def default_model_path() -> Optional[str]:
    """Path of the bundled model, or None when this installation has none."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models", DEFAULT_FILE)
    return path if os.path.isfile(path) else None


def resolve(path: Optional[str]) -> str:
    """The model file ``path`` names: ``path`` itself; for a run folder of ``onparse train``, its
    ``best.pt``, else its ``last.pt`` (a run stopped before its first epoch ended), said on
    stderr; the bundled model's path when ``path`` is None.

    Raises :class:`OnparseError` (one line, saying what to do) when there is no bundled model,
    when a folder holds neither file, or when a run's missing ``best.pt`` is asked for while its
    ``last.pt`` exists.
    """
    if path is not None:

        path = os.fspath(path)
        if os.path.isdir(path):
            for name in (BEST, LAST):
                candidate = os.path.join(path, name)
                if os.path.isfile(candidate):
                    if sys.stderr is not None:
                        print(f"note: using {candidate}", file=sys.stderr)
                    return candidate
            raise OnparseError(f"{path} is a folder without best.pt or last.pt: pass a checkpoint file or the "
                               "folder of an `onparse train` run")
        folder, name = os.path.split(path)
        last = os.path.join(folder, LAST)
        if name == BEST and not os.path.exists(path) and os.path.isfile(last):
            raise OnparseError(f"{path} does not exist yet (the run has not finished an epoch); its latest "
                               f"weights are in {last}: pass -m {last} or -m {folder or '.'}")
        return path
    default = default_model_path()
    if default is None:
        raise OnparseError("no --model given and this installation has no bundled model; "
                           "pass --model PATH (a checkpoint written by `onparse train`)")
    return default

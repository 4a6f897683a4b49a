"""The language model shipped inside the package: what a command uses when it gets no ``--model``.

The file is package data (``onparse/models/default.pt``, an ordinary checkpoint with fp16
weights; :func:`onparse.checkpoint.load_model` reads it into float32).  Nothing is loaded at
import time: :func:`resolve` only returns a path, and the model is read when a command runs.
"""
import os
from typing import Optional

from .errors import OnparseError

#: File name of the bundled model inside ``onparse/models/``.
DEFAULT_FILE = "default.pt"
#: What ``--model`` shows in help texts and messages when the bundled model is used.
DEFAULT_NAME = "the bundled model"


def default_model_path() -> Optional[str]:
    """Path of the bundled model, or None when this installation has none."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", DEFAULT_FILE)
    return path if os.path.isfile(path) else None


def resolve(path: Optional[str]) -> str:
    """``path`` itself, or the bundled model's path when ``path`` is None.

    Raises :class:`OnparseError` (one line, saying what to do) when there is no bundled model.
    """
    if path is not None:
        return path
    default = default_model_path()
    if default is None:
        raise OnparseError("no --model given and this installation has no bundled model; "
                           "pass --model PATH (a checkpoint written by `onparse train`)")
    return default

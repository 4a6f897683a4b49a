"""The kinds of model onparse knows, beside the contract they follow (:mod:`onparse.kinds`).

:func:`kinds` lists every :class:`onparse.kinds.ParsingModel` subclass; a file's ``format`` (a
file of its own) or a bundle entry's ``kind`` picks one (:func:`kind_of`).  :data:`FAMILIES` holds
what ``onparse train`` needs of each kind that trains itself (:class:`onparse.training.family.Family`,
declared in the kind's package).  The registry lives here, not in :mod:`onparse.files`, so that
the file layer asks it which kind a file holds and imports no kind's package itself, and the
command line asks it which families there are and tests none: adding a kind means its package
and its lines here.

No torch at import: the command line reads :data:`FAMILIES` at start-up, and the kinds (which
import torch) are imported when a file is first matched to one.
"""
from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Type

from .baselines_lm.family import GRU_FAMILY, LSTM_FAMILY
from .errors import OnparseError
from .files.checkpoint import read_file
from .files.run_folder import LAST
from .grammar.family import FAMILY as GRAMMAR_TRAINING
from .lm.training.family import FAMILY as LM_TRAINING
from .student.family import FAMILY as STUDENT_TRAINING
from .training.family import Family

if TYPE_CHECKING:
    from .kinds import ParsingModel

#: ``onparse train --family NAME``: how each kind that trains itself is trained; the first is the default.
FAMILIES: Dict[str, Family] = {f.name: f for f in (LM_TRAINING, GRAMMAR_TRAINING, STUDENT_TRAINING, LSTM_FAMILY,
                                                   GRU_FAMILY)}


@lru_cache(maxsize=None)
def kinds() -> Sequence[Type["ParsingModel"]]:
    """Every kind of model, in the order a file's ``format`` or an entry's ``kind`` is matched."""
    from .baselines_lm import kind as baselines
    from .grammar.kind import Grammar
    from .lm.kind import LanguageModel
    from .student.kind import Student

    return (LanguageModel, Student, Grammar, baselines.LSTMLanguageModel, baselines.GRULanguageModel)


def kind_of(blob: Dict[str, Any], path, *, entry: bool = False) -> Type["ParsingModel"]:
    """The kind of a file read from ``path``, by its ``format``, or with ``entry`` of a bundle's
    model entry, by its ``kind``; a one-line OnparseError when it is neither."""
    if not entry:
        for kind in kinds():
            if blob.get("format") == kind.file_format:
                return kind
        raise OnparseError(f"{path} is not an onparse checkpoint, student, grammar or bundle")
    for kind in kinds():
        if blob.get("kind") == kind.entry_kind:
            return kind
    raise OnparseError(f"{path}: unknown kind of model {str(blob.get('kind'))[:40]!r}")


def run_family(out: str) -> Optional[str]:
    """The ``onparse train --family`` of the run saved in the folder ``out`` (``lm`` or
    ``grammar``), by the kind of its ``last.pt``, so that a resume needs no ``--family``; None
    when there is no readable ``last.pt`` of a trained kind (the resume itself then says what is
    wrong).  Reads the whole file."""
    path = os.path.join(out, LAST)
    try:
        blob = read_file(path) if os.path.isfile(path) else None
        return kind_of(blob, path).family if isinstance(blob, dict) else None
    except OnparseError:
        return None

"""The kinds of model onparse knows: one line per kind, beside the contract they follow.

:data:`KINDS` lists every :class:`onparse.kinds.ParsingModel` subclass; a file's ``format`` (a
file of its own) or a bundle entry's ``kind`` picks one (:func:`kind_of`).  It lives here, not in
:mod:`onparse.files`, so that the file layer asks the registry which kind a file holds and
imports no kind's package itself: adding a kind means its package and one line here.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional, Sequence, Type

from .errors import OnparseError
from .files.checkpoint import read_file
from .files.run_folder import LAST
from .grammar.kind import Grammar
from .kinds import ParsingModel
from .lm.kind import LanguageModel
from .student.kind import Student

#: Every kind of model, in the order a file's ``format`` or an entry's ``kind`` is matched.
KINDS: Sequence[Type[ParsingModel]] = (LanguageModel, Student, Grammar)


def kind_of(blob: Dict[str, Any], path, *, entry: bool = False) -> Type[ParsingModel]:
    """The kind of a file read from ``path``, by its ``format``, or with ``entry`` of a bundle's
    model entry, by its ``kind``; a one-line OnparseError when it is neither."""
    if not entry:
        for kind in KINDS:
            if blob.get("format") == kind.file_format:
                return kind
        raise OnparseError(f"{path} is not an onparse checkpoint, student, grammar or bundle")
    for kind in KINDS:
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

"""The teacher's trees of a distillation text as a file: ``RUN/teacher-trees.txt`` (written once
by a run, reused by ``--resume``) or what ``onparse induce`` wrote (``--teacher-trees``), read
like any input and checked, tree by tree, against the sentences they are trees of."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

from ..errors import OnparseError
from ..files.safeio import atomic_output
from ..induce import read_lines
from ..trees.tree import leaves, parse_brackets, to_brackets
from .config import MIN_WORDS

#: The teacher's trees in a run folder, one per kept sentence, and what they were made from.
TEACHER_TREES = "teacher-trees.txt"


def read_teacher_trees(path: str, sentences: Sequence[Sequence[str]], text: str, max_line_bytes: int,
                       option: Optional[str] = None) -> List[Any]:
    """The trees of ``path`` (brackets, one a line; UTF-8, bounded lines) checked against
    ``sentences`` (those of the file ``text``) in order; OnparseError naming the file and line.
    Empty lines and trees of fewer than :data:`MIN_WORDS` words (``induce`` writes those for
    lines a student does not learn from) are passed over, so that ``induce``'s output reads as
    is.  ``option``: the file is the user's, given by that option (the message says to give the
    right one, not to delete it).  May return fewer or more trees than sentences: the caller
    decides."""
    trees: List[Any] = []
    remedy = (f"give {option} the trees `onparse induce` wrote for this text" if option else
              f"delete {path} to have the teacher parse the text again")
    # A tree's line holds its sentence's words, a space and at most two brackets a word.
    for number, line in enumerate(read_lines(path, max_line_bytes=4 * max_line_bytes), 1):
        if not line.strip():
            continue
        tree = parse_brackets(line, source=path, line=number)
        words = leaves(tree)
        if len(words) < MIN_WORDS:
            continue
        if len(trees) < len(sentences) and words != [to_brackets(w) for w in sentences[len(trees)]]:
            raise OnparseError(f"{path} line {number}: the tree's words are not those of sentence "
                               f"{len(trees) + 1:,} of {text}; {remedy}")
        trees.append(tree)
    return trees


def given_teacher_trees(path: str, sentences: Sequence[Sequence[str]], text: str, max_line_bytes: int) -> List[Any]:
    """The trees of the ``--teacher-trees`` file ``path``: one per sentence, else OnparseError."""
    trees = read_teacher_trees(path, sentences, text, max_line_bytes, option="--teacher-trees")
    if len(trees) != len(sentences):
        raise OnparseError(f"{path} holds {len(trees):,} trees of at least {MIN_WORDS} words for the "
                           f"{len(sentences):,} sentences of {text}: give the trees `onparse induce` wrote "
                           "for this text, with the same options")
    return trees


def write_teacher_trees(path: str, trees: Sequence[Any]) -> None:
    """``trees`` to ``path``, one bracketed tree a line, atomically."""
    with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(to_brackets(t) + "\n" for t in trees)

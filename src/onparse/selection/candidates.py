"""Candidates of a selection and their trees: a :class:`Candidate` is one way to read trees from
a run's kept epoch (its epoch file, a layer and a decoder); :class:`TreeTable` holds every
candidate's trees of one fixed list of sentences, parsing each (file, reading) once and keeping
the trees in a cache file, so that a resumed choice or a second scoring parses nothing again.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..api import load
from ..errors import OnparseError
from ..files.run_folder import epoch_path, logged_events
from ..files.schema import ListOf, Obj, ShapeError, Where, check, decode
from ..registry import FAMILIES
from ..trees.tree import leaves


@dataclass(frozen=True)
class Candidate:
    """One way to read trees: a run's epoch, layer and decoder (``layer`` 1 for a kind without
    layers).  ``averaged``: one of the readings its kind puts in an average
    (:meth:`onparse.kinds.ParsingModel.averaged_members`); ``layered``: its kind has layers."""

    run: str
    epoch: int
    layer: int
    decoder: str
    averaged: bool = False
    layered: bool = False

    def label(self) -> str:
        return f"{self.run} epoch {self.epoch} layer {self.layer} {self.decoder}"


def _sentences_digest(sentences: Sequence[Sequence[str]]) -> str:
    return hashlib.sha256("\n".join(" ".join(s) for s in sentences).encode()).hexdigest()


def _is_tree(value: Any) -> bool:
    """A tree as JSON holds it: a word, or a list of one or more trees (null: an empty sentence)."""
    if value is None or isinstance(value, str):
        return True
    stack = [value]
    while stack:                # no recursion: a long sentence's chain of a tree is deep
        node = stack.pop()
        if isinstance(node, list) and node:
            stack.extend(node)
        elif not isinstance(node, str):
            return False
    return True


#: A row of the tree cache (:class:`TreeTable`): the sentences' digest, the file (path, size and
#: modification time), the reading's label and one tree per sentence.
ROW = Obj({"sentences": str, "file": str, "reading": str,
           "trees": ListOf(Where((str, list, type(None)), _is_tree, "a tree (words in nested lists) or null"))})


def _as_tree(value: Any) -> Any:
    """A tree read back from JSON: lists become the nested tuples trees are."""
    return tuple(_as_tree(v) for v in value) if isinstance(value, list) else value


class TreeTable:
    """The trees of candidates on ``sentences`` (token lists), one column per (model file,
    reading), cached in ``cache`` (a JSON-lines file; None: in memory only).  A cached column is
    used again only for the same sentences and the same file (its path, size and modification
    time): a retrained epoch file is parsed anew."""

    def __init__(self, sentences: Sequence[Sequence[str]], cache: Optional[str] = None):
        self.sentences = [list(s) for s in sentences]
        self.digest = _sentences_digest(self.sentences)
        self.cache = cache
        self._columns: Dict[Tuple[str, str], List[Any]] = {}
        if cache and os.path.exists(cache):
            self._read_cache(cache)

    def _read_cache(self, cache: str) -> None:
        """The cached columns of these sentences: each row checked against :data:`ROW` (OnparseError
        naming the line when it has not that shape), its trees against the sentences (a column of
        other length or other words is parsed again, never trusted)."""
        with open(cache, "rb") as handle:
            for number, line in enumerate(handle, 1):
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError:
                    raise self._damaged(cache, number, "not UTF-8 text") from None
                try:
                    row = decode(text)
                except ValueError:          # a line cut short by a kill
                    continue
                try:
                    check(row, ROW)
                except ShapeError as err:
                    raise self._damaged(cache, number, str(err).replace("the record: ", "")) from None
                if row["sentences"] == self.digest:
                    trees = [_as_tree(t) for t in row["trees"]]
                    if self._fits(trees):
                        self._columns[(row["file"], row["reading"])] = trees

    @staticmethod
    def _damaged(cache: str, number: int, what: str) -> OnparseError:
        return OnparseError(f"{cache} is damaged (line {number}: {what}): delete it (its trees are parsed again)")

    def _fits(self, trees: List[Any]) -> bool:
        """Whether a column holds one tree of each sentence, of its words (None for an empty one)."""
        return len(trees) == len(self.sentences) and all(
            (tree is None) if not words else (tree is not None and leaves(tree) == words)
            for tree, words in zip(trees, self.sentences))

    @staticmethod
    def file_key(path: str) -> str:
        stat = os.stat(path)
        return f"{os.path.realpath(path)}:{stat.st_size}:{stat.st_mtime_ns}"

    def read(self, path: str, readings: Callable[[Any], Any] = lambda parser: parser) -> List[Tuple[Any, List[Any]]]:
        """``[(member, trees)]`` of the model file ``path`` read by ``readings`` (a function of the
        loaded :class:`onparse.Parser` giving the parser whose members are wanted; default: the
        file's own members): :meth:`columns` of that parser."""
        return self.columns(path, readings(load(path, "cpu")))

    def columns(self, path: str, parser: Any) -> List[Tuple[Any, List[Any]]]:
        """``[(member, trees)]`` of ``parser`` (loaded from the model file ``path``, read by the
        members wanted); ``trees``: one per sentence (None for an empty one).  Members not cached
        are parsed in one pass and cached."""
        key = self.file_key(path)
        labels = [m.label(len(parser.models)) for m in parser.members]
        missing = [k for k, label in enumerate(labels) if (key, label) not in self._columns]
        if missing:
            part = parser.with_members([parser.members[k] for k in missing], [], parser.ties)
            rows = part.member_trees(self.sentences)
            for j, k in enumerate(missing):
                trees = [row[j] for row in rows]
                self._columns[(key, labels[k])] = trees
                self._append({"sentences": self.digest, "file": key, "reading": labels[k], "trees": trees})
        return [(m, self._columns[(key, label)]) for m, label in zip(parser.members, labels)]

    def _append(self, row: Dict[str, Any]) -> None:
        if self.cache:
            with open(self.cache, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")


def candidates_of(run: str, folder: str, epoch: int, table: TreeTable,
                  readings: Callable[[Any], Any] = lambda parser: parser) -> List[Tuple[Candidate, List[Any]]]:
    """The candidates of run ``run``'s kept epoch ``epoch`` (its ``epoch-NNN.pt`` in ``folder``)
    read by ``readings`` (see :meth:`TreeTable.read`), each with its trees of the table's
    sentences."""
    path = epoch_path(folder, epoch)
    loaded = load(path, "cpu")                 # once: what its kind averages, then its trees
    model = loaded.models[0]
    averaged = {(m.layer, m.decoder) for m in model.averaged_members(0)}
    return [(Candidate(run, epoch, m.layer, m.decoder, (m.layer, m.decoder) in averaged, model.layered), trees)
            for m, trees in table.columns(path, readings(loaded))]


def every_reading(parser: Any) -> Any:
    """A reading function for :func:`candidates_of`: every layer x decoder of a layered model,
    and a model without layers as its file reads it (a grammar's MBR tree: its Viterbi pass is
    too slow to try on every epoch)."""
    return parser.with_grid("all", "all") if parser.models[0].layered else parser


def run_alarms(folder: str, family: Optional[str] = None) -> Dict[int, str]:
    """``{epoch: why}`` for each logged epoch of the run in ``folder`` that raised its kind's alarm
    (:attr:`onparse.training.family.Family.alarm`: a grammar's collapse alarm; a kind without one
    raises none).  ``family``: the run's kind as its selection planned it, which survives
    whatever happens to the log; else the kind its log names in any start or resume event."""
    events = logged_events(folder)
    if family is None:
        family = next((e.get("family") for e in events
                       if e.get("event") in ("start", "resume") and isinstance(e.get("family"), str)), None)
    alarm = getattr(FAMILIES.get(family), "alarm", None)
    out = {}
    for event in events if alarm else ():
        # The run has stopped: each epoch is judged as it stands, the first one too (no grace).
        if event.get("event") == "epoch" and isinstance(event.get("epoch"), int):
            why = alarm(event, grace=False)
            if why:
                out[event["epoch"]] = why
    return out

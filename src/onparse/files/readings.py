"""Readings: the named ways a bundle makes its trees, and the one it makes them by default.

A *reading* is what a bundle's trees are made of: its members (:class:`onparse.members.Member`,
reading the bundle's models by index), the voters that join their average and the tie rule.
A bundle (:mod:`onparse.files.bundle`) may name several, say a fast one (one student) and an
accurate one (an average), and choose one as its default::

    "readings": {"fast": {"members": [{"model": 1, "layer": 1, "decoder": ...}]},
                 "accurate": {"members": [...], "voters": ["right"], "ties": "first"}},
    "default_reading": "fast",

``voters`` and ``ties`` may be left out (none, :data:`onparse.trees.average.DEFAULT_TIES`).  The
bundle's own ``members``, ``voters`` and ``ties`` are then its default reading's, written twice
so that an onparse that knows no readings reads the file as its default reading.  A file that
names no readings has one, :data:`DEFAULT_READING`, made of its own members, voters and ties.

Names are short words (:data:`NAME`: letters, digits, ``_``, ``-``, ``.``).  What a reading
costs and scores may be recorded in the bundle's metadata, for ``onparse info``::

    "readings_metrics": {"fast": {"sentences_per_s": 960.0, "dev_f1": 0.593, "test_f1": 0.587}}

(sentences a second on one CPU thread, as ``benchmarks/bench_readings.py`` measures them; sentence
F1 as a fraction on the dev and test halves of the WSJ sample; any of them may be missing).
This module checks the layout; the bundle checks each member against its model's kind.  No torch.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from ..errors import OnparseError
from ..members import Member
from ..trees.average import DEFAULT_TIES, check_ties
from ..trees.baselines import check_voters

#: The name of the one reading of a file that names none.
DEFAULT_READING = "default"
#: What a reading's name may be.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
#: The metadata key of each reading's recorded figures, and the figures ``onparse info`` shows.
METRICS_KEY = "readings_metrics"
METRICS = ("sentences_per_s", "dev_f1", "test_f1")


class ReadingError(OnparseError):
    """A reading that a model file does not have (an unknown name, or a reading asked of several
    files at once); ``names`` lists the ones it has.  The command line reports it as a usage error
    of ``--reading``."""

    def __init__(self, message: str, names: Sequence[str] = ()):
        super().__init__(message)
        self.names = tuple(names)


def check_name(name: Any) -> str:
    """``name`` when it may name a reading (:data:`NAME`); ValueError otherwise."""
    if not (isinstance(name, str) and NAME.fullmatch(name)):
        raise ValueError(f"bad reading name {name!r}: letters, digits, '_', '-' or '.'")
    return name


def voting(layout: Dict[str, Any]) -> Tuple[Tuple[str, ...], str]:
    """``(voters, ties)`` of a bundle or of one of its readings (none and the default rule when it
    names neither); ValueError when they are malformed."""
    voters = layout.get("voters", [])
    if not isinstance(voters, (list, tuple)):
        raise ValueError(f"bad voters {voters!r}")
    return tuple(check_voters(voters)), check_ties(layout.get("ties", DEFAULT_TIES))


def layouts(blob: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Name -> ``{"members": [...], "voters": [...], "ties": ...}`` (stored values) of every reading
    of a bundle dict, in the file's order; one, :data:`DEFAULT_READING`, when it names none."""
    if "readings" not in blob:
        return {DEFAULT_READING: {"members": blob.get("members"), "voters": blob.get("voters", []),
                                  "ties": blob.get("ties", DEFAULT_TIES)}}
    return dict(blob["readings"])


def default_name(blob: Dict[str, Any]) -> str:
    """The name of a checked bundle's default reading."""
    return blob["default_reading"] if "readings" in blob else DEFAULT_READING


def check_readings(blob: Dict[str, Any], n_models: int) -> None:
    """Check a bundle's readings and its own members, voters and tie rule (members read models
    ``0 .. n_models - 1``); ValueError naming the first problem."""
    if ("readings" in blob) != ("default_reading" in blob):
        raise ValueError("a bundle names its readings and its default reading together")
    readings = blob.get("readings")
    if readings is not None and (not isinstance(readings, dict) or not readings):
        raise ValueError("bad readings: expected a mapping of names to members, voters and ties")
    for name, layout in layouts(blob).items():
        where = "" if readings is None else f"reading {name!r}: "
        if readings is not None:
            check_name(name)
        if not isinstance(layout, dict) or "members" not in layout or set(layout) - {"members", "voters", "ties"}:
            raise ValueError(f"{where}expected members, and voters and ties if any")
        members = layout["members"] or []
        if not isinstance(members, list):
            raise ValueError(f"{where}bad members {members!r}")
        parsed = [Member.from_dict(m) for m in members]
        if not parsed:
            raise ValueError(f"{where}no members" if where else "bundle lists no members")
        for m in parsed:
            if m.model >= n_models:
                raise ValueError(f"{where}a member reads model {m.model + 1} of {n_models}")
        try:
            voting(layout)
        except ValueError as err:
            raise ValueError(f"{where}{err}") from None
    if readings is None:
        return
    default = blob["default_reading"]
    if not isinstance(default, str) or default not in readings:
        raise ValueError(f"the default reading {default!r} is not one of its readings ({', '.join(map(str, readings))})")
    own = {"members": blob.get("members"), **dict(zip(("voters", "ties"), voting(blob)))}
    mine = readings[default]
    if own != {"members": mine["members"], **dict(zip(("voters", "ties"), voting(mine)))}:
        raise ValueError(f"its own members, voters and ties are not those of its default reading {default!r}")


def choose(blob: Dict[str, Any], asked: Optional[str], name: str) -> str:
    """The name of the reading of a checked bundle (or model file) ``asked`` for: None is its
    default.  :class:`ReadingError` naming the file (``name``) and its readings otherwise."""
    bundle = blob.get("models") is not None                   # else a file of one model
    known = list(layouts(blob)) if bundle else [DEFAULT_READING]
    if asked is None:
        return default_name(blob) if bundle else DEFAULT_READING
    if asked in known:
        return asked
    if "readings" not in blob:
        raise ReadingError(f"{name} names no readings: its one reading is {DEFAULT_READING!r}, not {asked!r}", known)
    raise ReadingError(f"{name} has no reading {asked!r}: its readings are {', '.join(known)}", known)


def readings_layout(readings: Mapping[str, Tuple[Sequence[Member], Sequence[str], str]],
                    default: Optional[str]) -> Dict[str, Any]:
    """``readings`` and ``default_reading`` as a bundle stores them: ``readings`` maps names to
    ``(members, voters, ties)``; ``default``: one of them (None: the first).  ValueError for a
    bad name, none at all or a default that is not among them."""
    if not readings:
        raise ValueError("no readings to write")
    for name in readings:
        check_name(name)
    default = next(iter(readings)) if default is None else default
    if default not in readings:
        raise ValueError(f"the default reading {default!r} is not one of {', '.join(readings)}")
    return {"readings": {name: {"members": [m.to_dict() for m in members], "voters": list(check_voters(voters)),
                                "ties": check_ties(ties or DEFAULT_TIES)}
                         for name, (members, voters, ties) in readings.items()},
            "default_reading": default}

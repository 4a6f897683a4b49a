"""Bundles: several models of any kind in one file, and the member trees that are averaged.

Members (:mod:`onparse.members`) come from repeated ``--model`` options and lists of layers and
decoders, or from a bundle file, which stores its models and its members together::

    {"format": "onparse-bundle", "version": 1,
     "models": [{"config": ..., "vocab": [...], "state_dict": {...}, "metadata": {...}}, ...],
     "members": [{"model": 0, "layer": 2, "decoder": "onlstm"}, ...],
     "voters": ["right"],                      # optional: baseline trees that vote too
     "ties": "right",                          # optional: the tie rule of the average
     "readings": {"fast": {...}, ...},         # optional: named readings (members, voters, ties)
     "default_reading": "fast",                # with readings: the one used unless another is asked for
     "metadata": {...}}                        # recipe, selection rule, scores; readings_metrics:
                                               # each reading's speed and F1 (files/readings.py)

Each model entry has the layout of its kind's own file (:func:`onparse.registry.kinds`): a language model's
entry is an ordinary checkpoint's (no ``kind`` key), other kinds add their ``kind``
(``"student"``, ``"grammar"``).  *Voters* (:data:`onparse.trees.baselines.VOTER_KINDS`) add one
baseline tree per sentence to the average, and ``ties`` names its tie rule
(:data:`onparse.trees.average.TIES`); both are chosen with the members and travel with them.
Weights may be stored in float32, float16, or int8 (:func:`onparse.files.weights.quantize_int8`:
one scale per row of every matrix, vectors in float16), a quarter of float32's size; they are
read back into float32.  Like checkpoints, bundles hold plain values and tensors only.

*Readings* (:mod:`onparse.files.readings`) name several ways to make the bundle's trees from its
models (a fast one, an accurate one), each its own members, voters and tie rule, and one of them
the default; the bundle's own ``members``, ``voters`` and ``ties`` are the default reading's.
They came after version 1 and keep it: a file without them is read as before (its members,
voters and ties are its one reading, ``default``), and an onparse that knows no readings reads a
file with them as its default reading.  Loading builds the models the chosen reading reads; the
others are built on first use (:meth:`onparse.kinds.ParsingModel.deferred`).

:func:`load_model_file` reads any model file: a file of one model of any kind, or a bundle.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import OnparseError
from ..kinds import ParsingModel
from ..members import Member, MemberError
from ..registry import kind_of
from ..trees.average import DEFAULT_TIES, check_ties
from ..trees.baselines import check_voters
from .checkpoint import BUNDLE_FORMAT, DIGEST_KEY, read_file, write_atomically
from .readings import check_readings, choose, layouts, readings_layout, voting
from .weights import convert_weights, dequantize, weights_digest

VERSION = 1


def is_bundle(blob: Dict[str, Any]) -> bool:
    """Whether a checked file's dict is a bundle (several models and their members)."""
    return blob.get("format") == BUNDLE_FORMAT


def check_bundle(blob: Dict[str, Any], path) -> Dict[str, Any]:
    """Validate a bundle's layout read from ``path`` (not yet its entries); a malformed one is
    a one-line OnparseError."""
    if blob.get("version") != VERSION:
        raise OnparseError(f"{path}: unsupported bundle version {blob.get('version')!r}")
    models, members = blob.get("models"), blob.get("members")
    if not isinstance(models, list) or not models:
        raise OnparseError(f"{path}: bundle holds no models")
    meta = blob.get("metadata", {})
    if not isinstance(meta, dict):       # as a model file's (checkpoint.check_common): readers take a dict
        raise OnparseError(f"{path}: metadata is a {type(meta).__name__}, not a dict")
    for i, entry in enumerate(models):
        if not isinstance(entry, dict) or any(k not in entry for k in ("config", "vocab", "state_dict")):
            raise OnparseError(f"{path}: model {i + 1} of the bundle lacks its config, vocabulary or weights")
    try:
        check_readings(blob, len(models))           # its own members, voters and ties, and its readings'
    except ValueError as err:
        raise OnparseError(f"{path}: {err}") from None
    return blob


def bundle_voting(blob: Dict[str, Any]):
    """``(voters, ties)`` of a bundle dict, its default reading's (none and the default rule when
    it names neither); ValueError when they are malformed."""
    return voting(blob)


def bundle_reading(blob: Dict[str, Any], path, asked: Optional[str] = None,
                   name: str = "") -> Tuple[str, List[Member], Tuple[str, ...], str]:
    """``(name, members, voters, ties)`` of the reading ``asked`` for (None: the default) of a
    checked bundle, its members checked and named by their models' kinds;
    :class:`onparse.files.readings.ReadingError` (``name``: the file as the user called it) when
    it has no such reading."""
    chosen = choose(blob, asked, name or str(path))
    layout = layouts(blob)[chosen]
    return (chosen, bundle_members(blob, path, layout["members"]), *voting(layout))


def file_reading(blob: Dict[str, Any], path, device="cpu", asked: Optional[str] = None, name: str = ""):
    """What :func:`onparse.load` takes of a checked file (one model, or a bundle): ``(reading,
    models, members, voting)``: the name of the reading ``asked`` for (None: the default;
    :class:`onparse.files.readings.ReadingError` for one the file lacks), the file's models (those
    the reading's members read built now, the others on first use), its members (by the file's
    model indices) and its ``(voters, ties)`` (None for a file of one model: it names neither)."""
    if not is_bundle(blob):
        models = models_of(blob, path, device)
        return choose(blob, asked, name or str(path)), models, models[0].default_members(0), None
    chosen, members, voters, ties = bundle_reading(blob, path, asked, name)
    return chosen, models_of(blob, path, device, {m.model for m in members}), members, (voters, ties)


def bundle_readings(blob: Dict[str, Any], path) -> List[Tuple[str, List[Member], Tuple[str, ...], str]]:
    """Every reading of a checked bundle as :func:`bundle_reading` gives it, the default first."""
    names = list(layouts(blob))
    first = bundle_reading(blob, path)[0]
    return [bundle_reading(blob, path, n) for n in [first] + [n for n in names if n != first]]


def bundle_members(blob: Dict[str, Any], path, members: Optional[Sequence[Dict[str, Any]]] = None) -> List[Member]:
    """The members of a checked bundle (or ``members``, stored members of one of its readings),
    each checked and named by its model's kind."""
    out = []
    for m in blob["members"] if members is None else members:
        member = Member.from_dict(m)
        entry = blob["models"][member.model]
        try:
            out.append(kind_of(entry, path, entry=True).checked_member(entry["config"], member.model, member.layer, member.decoder))
        except MemberError as err:
            raise OnparseError(f"{path}: {err}") from None
    return out


def save_bundle(path, models: Sequence[Dict[str, Any]], members: Sequence[Member], *,
                weights: str = "int8", metadata: Dict[str, Any] = None, voters: Sequence[str] = (),
                ties: str = None, weights_of: Optional[Mapping[int, str]] = None,
                readings: Optional[Mapping[str, Tuple[Sequence[Member], Sequence[str], str]]] = None,
                default_reading: Optional[str] = None) -> None:
    """Write a bundle atomically.  ``models``: entries of any kind (``config``, ``vocab``,
    ``state_dict``, ``metadata`` and the kind's ``kind``; a training state is dropped);
    ``weights``: how their weights are stored (:data:`onparse.files.weights.WEIGHT_KINDS`), and
    ``weights_of``: another way for some of them, by index (a model used only for distances
    can be int8 while the member beside it keeps float16); ``voters`` and ``ties``: the
    average's voters and tie rule (default: none, and :data:`onparse.trees.average.DEFAULT_TIES`).
    ``readings``: name -> ``(members, voters, ties)``, the bundle's named readings, and
    ``default_reading`` the one of them it uses by default (None: the first); the bundle's own
    ``members``, ``voters`` and ``ties`` are then ignored: the default reading's are written."""
    named = {}
    if readings is not None:
        named = readings_layout(readings, default_reading)
        members, voters, ties = readings[named["default_reading"]]
    entries = []
    for i, blob in enumerate(models):
        kind = (weights_of or {}).get(i, weights)
        state = convert_weights(dequantize(blob["state_dict"]), kind)
        entries.append({"config": dict(blob["config"]), "vocab": list(blob["vocab"]), "state_dict": state,
                        "metadata": {**dict(blob.get("metadata") or {}), "weights": kind,
                                     DIGEST_KEY: weights_digest(state)}})
        if blob.get("kind") is not None:
            entries[-1]["kind"] = blob["kind"]
    for m in [m for reading in (readings or {}).values() for m in reading[0]] + list(members):
        if not 0 <= m.model < len(entries):
            raise ValueError(f"member {m} reads a model the bundle does not hold")
    bundle = {"format": BUNDLE_FORMAT, "version": VERSION, "models": entries,
              "members": [m.to_dict() for m in members],
              "voters": list(check_voters(voters)), "ties": check_ties(ties or DEFAULT_TIES),
              **named, "metadata": dict(metadata or {})}
    write_atomically(path, bundle)


def load_model_file(path, map_location="cpu", *, verify: bool = True) -> Dict[str, Any]:
    """Read and validate a model file of any kind, or a bundle, returned as read (a bundle holds
    ``models``); each model of a bundle is checked as its own file would be, and each member
    by the kind of model it reads.  ``verify=False`` skips the weights' checksums.  A missing,
    corrupt or foreign file is a one-line OnparseError."""
    blob = read_file(path, map_location)
    if not isinstance(blob, dict):
        raise OnparseError(f"{path} is not an onparse checkpoint, student, grammar or bundle")
    if blob.get("format") != BUNDLE_FORMAT:
        return kind_of(blob, path).check(blob, path, verify=verify)
    check_bundle(blob, path)
    for i, entry in enumerate(blob["models"]):
        where = f"{path} (model {i + 1})"
        kind_of(entry, where, entry=True).check(entry, where, verify=verify)
    bundle_members(blob, path)
    return blob


def models_of(blob: Dict[str, Any], path, device="cpu", build: Optional[Sequence[int]] = None) -> List[ParsingModel]:
    """The models a checked file holds (one, or a bundle's), on ``device``: those of ``build``
    (indices; None: all) built now, the others on first use (:meth:`ParsingModel.deferred`)."""
    if blob.get("format") != BUNDLE_FORMAT:
        return [kind_of(blob, path).from_blob(blob, path, device)]
    return [(kind.from_blob if build is None or i in build else kind.deferred)(e, path, device)
            for i, (e, kind) in enumerate((e, kind_of(e, path, entry=True)) for e in blob["models"])]


def save_models(path, models: Sequence[ParsingModel], members: Sequence[Member], carry: Sequence[int] = (),
                **options) -> None:
    """Write a bundle of loaded models of any kind read by ``members``: only the models some
    member reads are stored (a member of ``members`` or of a reading of ``options["readings"]``),
    and those of ``carry`` (indices of models no member reads, kept for what else they do: a
    grammar shows its rules, a language model gives distances), renumbered in
    order; ``options`` as for :func:`save_bundle` (``weights_of`` and the readings' members by
    the indices of ``models``)."""
    readings = options.get("readings")
    read = [m for reading in (readings or {}).values() for m in reading[0]] if readings else list(members)
    used = sorted({m.model for m in read} | set(carry))
    renumber = {old: new for new, old in enumerate(used)}
    if options.get("weights_of"):           # given by the models' indices here, stored by the bundle's
        options = {**options, "weights_of": {renumber[i]: w for i, w in options["weights_of"].items() if i in renumber}}
    if readings:
        options = {**options, "readings": {name: ([m.moved(renumber[m.model]) for m in ms], voters, ties)
                                           for name, (ms, voters, ties) in readings.items()}}
        members = []
    entries = []
    for i in used:
        entry = models[i].entry()
        entry["metadata"] = {k: v for k, v in entry["metadata"].items() if k not in ("weights", DIGEST_KEY)}
        entries.append(entry)
    save_bundle(path, entries, [m.moved(renumber[m.model]) for m in members], **options)

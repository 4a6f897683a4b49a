"""Bundles: several models of any kind in one file, and the member trees that are averaged.

Members (:mod:`onparse.members`) come from repeated ``--model`` options and lists of layers and
decoders, or from a bundle file, which stores its models and its members together::

    {"format": "onparse-bundle", "version": 1,
     "models": [{"config": ..., "vocab": [...], "state_dict": {...}, "metadata": {...}}, ...],
     "members": [{"model": 0, "layer": 2, "decoder": "onlstm"}, ...],
     "voters": ["right"],                      # optional: baseline trees that vote too
     "ties": "right",                          # optional: the tie rule of the average
     "metadata": {...}}                        # recipe, selection rule, scores

Each model entry has the layout of its kind's own file (:func:`onparse.registry.kinds`): a language model's
entry is an ordinary checkpoint's (no ``kind`` key), other kinds add their ``kind``
(``"student"``, ``"grammar"``).  *Voters* (:data:`onparse.trees.baselines.VOTER_KINDS`) add one
baseline tree per sentence to the average, and ``ties`` names its tie rule
(:data:`onparse.trees.average.TIES`); both are chosen with the members and travel with them.
Weights may be stored in float32, float16, or int8 (:func:`onparse.files.weights.quantize_int8`:
one scale per row of every matrix, vectors in float16), a quarter of float32's size; they are
read back into float32.  Like checkpoints, bundles hold plain values and tensors only.

:func:`load_model_file` reads any model file: a file of one model of any kind, or a bundle.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ..errors import OnparseError
from ..kinds import ParsingModel
from ..members import Member, MemberError
from ..registry import kind_of
from ..trees.average import DEFAULT_TIES, check_ties
from ..trees.baselines import check_voters
from .checkpoint import BUNDLE_FORMAT, DIGEST_KEY, read_file, write_atomically
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
        parsed = [Member.from_dict(m) for m in members or []]
    except ValueError as err:
        raise OnparseError(f"{path}: {err}") from None
    if not parsed:
        raise OnparseError(f"{path}: bundle lists no members")
    for m in parsed:
        if m.model >= len(models):
            raise OnparseError(f"{path}: a member reads model {m.model + 1} of {len(models)}")
    try:
        bundle_voting(blob)
    except ValueError as err:
        raise OnparseError(f"{path}: {err}") from None
    return blob


def bundle_voting(blob: Dict[str, Any]):
    """``(voters, ties)`` of a bundle dict (none and the default rule when it names neither);
    ValueError when they are malformed."""
    voters = blob.get("voters", [])
    if not isinstance(voters, (list, tuple)):
        raise ValueError(f"bad voters {voters!r}")
    return check_voters(voters), check_ties(blob.get("ties", DEFAULT_TIES))


def bundle_members(blob: Dict[str, Any], path) -> List[Member]:
    """The members of a checked bundle, each checked and named by its model's kind."""
    out = []
    for m in blob["members"]:
        member = Member.from_dict(m)
        entry = blob["models"][member.model]
        try:
            out.append(kind_of(entry, path, entry=True).checked_member(entry["config"], member.model, member.layer, member.decoder))
        except MemberError as err:
            raise OnparseError(f"{path}: {err}") from None
    return out


def save_bundle(path, models: Sequence[Dict[str, Any]], members: Sequence[Member], *,
                weights: str = "int8", metadata: Dict[str, Any] = None, voters: Sequence[str] = (),
                ties: str = None, weights_of: Optional[Mapping[int, str]] = None) -> None:
    """Write a bundle atomically.  ``models``: entries of any kind (``config``, ``vocab``,
    ``state_dict``, ``metadata`` and the kind's ``kind``; a training state is dropped);
    ``weights``: how their weights are stored (:data:`onparse.files.weights.WEIGHT_KINDS`), and
    ``weights_of``: another way for some of them, by index (a model used only for distances
    can be int8 while the member beside it keeps float16); ``voters`` and ``ties``: the
    average's voters and tie rule (default: none, and :data:`onparse.trees.average.DEFAULT_TIES`)."""
    entries = []
    for i, blob in enumerate(models):
        kind = (weights_of or {}).get(i, weights)
        state = convert_weights(dequantize(blob["state_dict"]), kind)
        entries.append({"config": dict(blob["config"]), "vocab": list(blob["vocab"]), "state_dict": state,
                        "metadata": {**dict(blob.get("metadata") or {}), "weights": kind,
                                     DIGEST_KEY: weights_digest(state)}})
        if blob.get("kind") is not None:
            entries[-1]["kind"] = blob["kind"]
    for m in members:
        if not 0 <= m.model < len(entries):
            raise ValueError(f"member {m} reads a model the bundle does not hold")
    bundle = {"format": BUNDLE_FORMAT, "version": VERSION, "models": entries,
              "members": [m.to_dict() for m in members],
              "voters": list(check_voters(voters)), "ties": check_ties(ties or DEFAULT_TIES),
              "metadata": dict(metadata or {})}
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


def models_of(blob: Dict[str, Any], path, device="cpu") -> List[ParsingModel]:
    """The models a checked file holds (one, or a bundle's), built on ``device``."""
    if blob.get("format") != BUNDLE_FORMAT:
        return [kind_of(blob, path).from_blob(blob, path, device)]
    return [kind_of(e, path, entry=True).from_blob(e, path, device) for e in blob["models"]]


def save_models(path, models: Sequence[ParsingModel], members: Sequence[Member], carry: Sequence[int] = (),
                **options) -> None:
    """Write a bundle of loaded models of any kind read by ``members``: only the models some
    member reads are stored, and those of ``carry`` (indices of models no member reads, kept for
    what else they do: a grammar names spans and shows its rules, a language model gives
    distances), renumbered in order; ``options`` as for :func:`save_bundle` (``weights_of`` by
    the indices of ``models``)."""
    used = sorted({m.model for m in members} | set(carry))
    renumber = {old: new for new, old in enumerate(used)}
    if options.get("weights_of"):           # given by the models' indices here, stored by the bundle's
        options = {**options, "weights_of": {renumber[i]: w for i, w in options["weights_of"].items() if i in renumber}}
    entries = []
    for i in used:
        entry = models[i].entry()
        entry["metadata"] = {k: v for k, v in entry["metadata"].items() if k not in ("weights", DIGEST_KEY)}
        entries.append(entry)
    save_bundle(path, entries, [m.moved(renumber[m.model]) for m in members], **options)

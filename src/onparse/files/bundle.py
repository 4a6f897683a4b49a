"""Bundles: several language models in one file, and the member trees that are averaged.

Members (:mod:`onparse.members`) come from repeated ``--model`` options and lists of layers and
decoders, or from a bundle file, which stores its models and its members together::

    {"format": "onparse-bundle", "version": 1,
     "models": [{"config": ..., "vocab": [...], "state_dict": {...}, "metadata": {...}}, ...],
     "members": [{"model": 0, "layer": 2, "decoder": "onlstm"}, ...],
     "voters": ["right"],                      # optional: baseline trees that vote too
     "ties": "right",                          # optional: the tie rule of the average
     "metadata": {...}}                        # recipe, selection rule, scores

*Voters* (:data:`onparse.trees.baselines.VOTER_KINDS`) add one baseline tree per sentence to the
average, and ``ties`` names its tie rule (:data:`onparse.trees.average.TIES`); both are chosen with
the members and travel with them.  A checkpoint alone has one member
(:data:`onparse.members.DEFAULT_LAYER` read by :data:`onparse.members.DEFAULT_DECODER`), no
voter and the default tie rule.  :func:`load_model_file` reads either kind of file.

Each model entry has the layout of an ordinary checkpoint (:mod:`onparse.files.checkpoint`), or of a
student file with ``"kind": "student"`` (:mod:`onparse.student.file`; its member is
:func:`onparse.members.student_member`).
Weights may be stored in float32, float16, or int8 (:func:`onparse.files.weights.quantize_int8`: one scale per row
of every matrix, vectors in float16), a quarter of float32's size; they are read back into
float32.  Like checkpoints, bundles hold plain values and tensors only.
"""
from __future__ import annotations

from typing import Any, Dict, Sequence

from ..trees.average import DEFAULT_TIES, check_ties
from ..trees.baselines import check_voters
from .checkpoint import (BUNDLE_FORMAT, DIGEST_KEY, STUDENT_FORMAT, check_contents, check_checkpoint, read_file,
                         write_atomically)
from ..errors import OnparseError
from ..members import Member, MemberError, check_member
from ..student.file import STUDENT_KIND, check_student, is_student
from .weights import convert_weights, dequantize, weights_digest

VERSION = 1


def check_bundle(blob: Dict[str, Any], path) -> Dict[str, Any]:
    """Validate a bundle read from ``path``; a malformed one is a one-line OnparseError."""
    if blob.get("version") != VERSION:
        raise OnparseError(f"{path}: unsupported bundle version {blob.get('version')!r}")
    models, members = blob.get("models"), blob.get("members")
    if not isinstance(models, list) or not models:
        raise OnparseError(f"{path}: bundle holds no models")
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


def save_bundle(path, models: Sequence[Dict[str, Any]], members: Sequence[Member], *,
                weights: str = "int8", metadata: Dict[str, Any] = None, voters: Sequence[str] = (),
                ties: str = None) -> None:
    """Write a bundle atomically.  ``models``: checkpoint dicts (``config``, ``vocab``,
    ``state_dict``, ``metadata``; a training state is dropped); ``weights``: how their
    weights are stored (:data:`WEIGHT_KINDS`); ``voters`` and ``ties``: the average's voters
    and tie rule (default: none, and :data:`onparse.trees.average.DEFAULT_TIES`)."""
    entries = []
    for blob in models:
        state = convert_weights(dequantize(blob["state_dict"]), weights)
        entries.append({"config": dict(blob["config"]), "vocab": list(blob["vocab"]), "state_dict": state,
                        "metadata": {**dict(blob.get("metadata") or {}), "weights": weights,
                                     DIGEST_KEY: weights_digest(state)}})
        if is_student(blob):
            entries[-1]["kind"] = STUDENT_KIND
    for m in members:
        if not 0 <= m.model < len(entries):
            raise ValueError(f"member {m} reads a model the bundle does not hold")
    bundle = {"format": BUNDLE_FORMAT, "version": VERSION, "models": entries,
              "members": [m.to_dict() for m in members],
              "voters": list(check_voters(voters)), "ties": check_ties(ties or DEFAULT_TIES),
              "metadata": dict(metadata or {})}
    write_atomically(path, bundle)


def load_model_file(path, map_location="cpu", *, verify: bool = True) -> Dict[str, Any]:
    """Read and validate a checkpoint, a student or a bundle, returned as read (a bundle holds
    ``models``); each model of a bundle is checked as its own file would be, and each member
    against the kind of model it reads.  ``verify=False`` skips the weights' checksums.  A
    missing, corrupt or foreign file is a one-line OnparseError."""
    blob = read_file(path, map_location)
    if isinstance(blob, dict) and blob.get("format") == STUDENT_FORMAT:
        return check_student(blob, path, verify=verify)
    if not (isinstance(blob, dict) and blob.get("format") == BUNDLE_FORMAT):
        return check_checkpoint(blob, path, verify=verify)
    check_bundle(blob, path)
    for i, entry in enumerate(blob["models"]):
        where = f"{path} (model {i + 1})"
        if is_student(entry):
            check_student(entry, where, verify=verify)
        else:
            check_contents(entry, where, verify=verify)
    for m in blob["members"]:
        entry = blob["models"][m["model"]]
        try:
            check_member(Member.from_dict(m), None if is_student(entry) else entry["config"]["n_layers"])
        except MemberError as err:
            raise OnparseError(f"{path}: {err}") from None
    return blob


def save_models(path, loaded: Sequence[Any], members: Sequence[Member], **options) -> None:
    """Write a bundle of in-memory models (:class:`onparse.lm.model.LoadedModel` each) read by
    ``members``: only the models some member reads are stored, renumbered in order; ``options``
    as for :func:`save_bundle`."""
    used = sorted({m.model for m in members})
    renumber = {old: new for new, old in enumerate(used)}
    blobs = [{"config": loaded[i].model.config.to_dict(), "vocab": loaded[i].vocab.to_list(),
              "state_dict": {k: t.detach().cpu() for k, t in loaded[i].model.state_dict().items()},
              "metadata": {k: v for k, v in loaded[i].metadata.items() if k not in ("weights", DIGEST_KEY)},
              **({"kind": STUDENT_KIND} if loaded[i].n_layers is None else {})}
             for i in used]
    save_bundle(path, blobs, [Member(renumber[m.model], m.layer, m.decoder) for m in members], **options)

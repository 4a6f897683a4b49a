"""Bundles: several language models in one file, and the member trees that are averaged.

A *member* is one way of reading a tree off a model: ``(model, layer, decoder)``.  A parser
with more than one member returns the average of its members' trees (:mod:`onparse.average`).
Members come from repeated ``--model`` options and lists of layers and decoders, or from a
bundle file, which stores its models and its members together::

    {"format": "onparse-bundle", "version": 1,
     "models": [{"config": ..., "vocab": [...], "state_dict": {...}, "metadata": {...}}, ...],
     "members": [{"model": 0, "layer": 2, "decoder": "onlstm"}, ...],
     "voters": ["right"],                      # optional: baseline trees that vote too
     "ties": "right",                          # optional: the tie rule of the average
     "metadata": {...}}                        # recipe, selection rule, scores

*Voters* (:data:`onparse.baselines.VOTER_KINDS`) add one baseline tree per sentence to the
average, and ``ties`` names its tie rule (:data:`onparse.average.TIES`); both are chosen with
the members and travel with them.  A checkpoint alone has one member, :data:`DEFAULT_LAYER`
read by :data:`DEFAULT_DECODER` (the paper's choice), no voter and the default tie rule.

Each model entry has the layout of an ordinary checkpoint (:mod:`onparse.checkpoint`).
Weights may be stored in float32, float16, or int8 (:func:`quantize_int8`: one scale per row
of every matrix, vectors in float16), a quarter of float32's size; they are read back into
float32.  Like checkpoints, bundles hold plain values and tensors only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Sequence

from .decode import DECODERS
from .errors import OnparseError

VERSION = 1
#: The member of a checkpoint read alone: the paper's layer and decoder.
DEFAULT_LAYER = 2
DEFAULT_DECODER = "onlstm"
#: Suffix of the entry holding the per-row scales of an int8 matrix ``name``.
SCALE_SUFFIX = ":int8-scale"
WEIGHT_KINDS = ("float32", "float16", "int8")


@dataclass(frozen=True)
class Member:
    """One tree per sentence: model ``model`` (0-based, in load order), ``layer`` (1-based),
    ``decoder`` (one of :data:`onparse.decode.DECODERS`)."""

    model: int
    layer: int
    decoder: str

    def to_dict(self) -> Dict[str, Any]:
        return {"model": self.model, "layer": self.layer, "decoder": self.decoder}

    @classmethod
    def from_dict(cls, d) -> "Member":
        if not isinstance(d, dict) or set(d) != {"model", "layer", "decoder"}:
            raise ValueError(f"bad member: {d!r}")
        model, layer, decoder = d["model"], d["layer"], d["decoder"]
        if not (isinstance(model, int) and isinstance(layer, int) and model >= 0 and layer >= 1):
            raise ValueError(f"bad member: {d!r}")
        if decoder not in DECODERS:
            raise ValueError(f"bad member decoder {decoder!r}")
        return cls(model, layer, decoder)

    def label(self, n_models: int = 1) -> str:
        """``layer 2 onlstm``, or ``model 1 layer 2 onlstm`` when there are several models."""
        head = f"model {self.model + 1} " if n_models > 1 else ""
        return f"{head}layer {self.layer} {self.decoder}"


def quantize_int8(state_dict: Dict[str, Any]) -> Dict[str, Any]:
    """int8 copy of a state dict: every floating matrix ``w`` (rows x ...) becomes
    ``round(w / s)`` with ``s = max|row| / 127`` per row (``name`` -> int8, ``name:int8-scale``
    -> float32 scales); floating vectors become float16; other tensors are kept.

    The rounding error of an entry is at most half a step, ``max|row| / 254``.
    """
    import torch

    out: Dict[str, Any] = {}
    for name, t in state_dict.items():
        if not t.is_floating_point():
            out[name] = t
        elif t.dim() >= 2:
            w = t.detach().float().reshape(t.shape[0], -1)
            scale = w.abs().amax(dim=1) / 127.0
            scale = torch.where(scale > 0, scale, torch.ones_like(scale))
            out[name] = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8).reshape(t.shape)
            out[name + SCALE_SUFFIX] = scale
        else:
            out[name] = t.detach().half()
    return out


def dequantize(state_dict: Dict[str, Any]) -> Dict[str, Any]:
    """The float32 state dict behind :func:`quantize_int8` (other state dicts pass through)."""
    if not any(name.endswith(SCALE_SUFFIX) for name in state_dict):
        return state_dict
    out: Dict[str, Any] = {}
    for name, t in state_dict.items():
        if name.endswith(SCALE_SUFFIX):
            continue
        scale = state_dict.get(name + SCALE_SUFFIX)
        if scale is not None:
            shape = t.shape
            out[name] = (t.float().reshape(shape[0], -1) * scale.float()[:, None]).reshape(shape)
        else:
            out[name] = t
    return out


def convert_weights(state_dict: Dict[str, Any], kind: str) -> Dict[str, Any]:
    """``state_dict`` stored as ``kind`` (one of :data:`WEIGHT_KINDS`)."""
    if kind == "int8":
        return quantize_int8(state_dict)
    if kind == "float16":
        return {k: (t.half() if t.is_floating_point() else t) for k, t in state_dict.items()}
    if kind == "float32":
        return {k: (t.float() if t.is_floating_point() else t) for k, t in state_dict.items()}
    raise ValueError(f"unknown weight kind {kind!r}; choose from {', '.join(WEIGHT_KINDS)}")


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
    from .average import DEFAULT_TIES, check_ties
    from .baselines import check_voters

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
    and tie rule (default: none, and :data:`onparse.average.DEFAULT_TIES`)."""
    from .average import DEFAULT_TIES, check_ties
    from .baselines import check_voters
    from .checkpoint import BUNDLE_FORMAT, DIGEST_KEY, weights_digest, write_atomically

    entries = []
    for blob in models:
        state = convert_weights(dequantize(blob["state_dict"]), weights)
        entries.append({"config": dict(blob["config"]), "vocab": list(blob["vocab"]), "state_dict": state,
                        "metadata": {**dict(blob.get("metadata") or {}), "weights": weights,
                                     DIGEST_KEY: weights_digest(state)}})
    for m in members:
        if not 0 <= m.model < len(entries):
            raise ValueError(f"member {m} reads a model the bundle does not hold")
    bundle = {"format": BUNDLE_FORMAT, "version": VERSION, "models": entries,
              "members": [m.to_dict() for m in members],
              "voters": list(check_voters(voters)), "ties": check_ties(ties or DEFAULT_TIES),
              "metadata": dict(metadata or {})}
    write_atomically(path, bundle)


def default_members(n_models: int, layers: Sequence[int] = (DEFAULT_LAYER,),
                    decoders: Sequence[str] = (DEFAULT_DECODER,)) -> List[Member]:
    """Every model x layer x decoder, in that order."""
    return [Member(m, layer, d) for m in range(n_models) for layer in layers for d in decoders]

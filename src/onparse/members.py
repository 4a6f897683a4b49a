"""Members: the ways a tree is read off a model, and the one check of each part.

A *member* is ``(model, layer, decoder)``: model ``model`` (0-based, in load order), its layer
``layer`` (1-based; 1 for kinds whose members read the whole model) and a decoder the model's
kind offers (:attr:`onparse.kinds.ParsingModel.decoders`).  A parser with more than one member
returns the average of its members' trees (:mod:`onparse.trees.average`).  Which members a model
can give is its kind's to say (:meth:`onparse.kinds.ParsingModel.member`); this module only
holds the member value, the layer check and :func:`grid`, which asks every model.

A language model read alone has one member, :data:`DEFAULT_LAYER` read by
:data:`DEFAULT_DECODER` (the paper's choice).  No torch here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

from .errors import OnparseError
from .trees.decode import DECODERS

#: A language model's member when it is read alone: the paper's layer and decoder (the first
#: of :data:`onparse.trees.decode.DECODERS`).
DEFAULT_LAYER = 2
DEFAULT_DECODER = DECODERS[0]
#: ``layers="all"`` / ``decoders="all"``: every layer / decoder of each model.
ALL = "all"
#: The two distances of a layer, by their index in a distances array: master forget d_f (trees
#: are read from it) and master input d_i.
GATES = {"forget": 0, "input": 1}


class MemberError(OnparseError):
    """A member a model cannot give: a layer it lacks or a decoder it does not have; ``part``
    says which (``"layer"`` or ``"decoder"``: the command line reports it as a usage error of
    ``--layer`` / ``--decode``)."""

    def __init__(self, message: str, part: str):
        super().__init__(message)
        self.part = part


def check_layer(layer: int, n_layers: int) -> int:
    """``layer`` when it is a layer (1-based) of a model of ``n_layers``; MemberError otherwise.

    >>> check_layer(3, 3)
    3
    """
    if isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer <= n_layers:
        raise MemberError(f"layer {layer} does not exist: the model has {n_layers} layers (1..{n_layers})", "layer")
    return layer


@dataclass(frozen=True)
class Member:
    """One tree per sentence: model ``model`` (0-based), ``layer`` (1-based), ``decoder``;
    ``reading`` is how the model's kind names it (``layer 2 onlstm``, ``student``), which the
    kind sets when it checks the member; it takes no part in comparisons."""

    model: int
    layer: int
    decoder: str
    reading: str = field(default="", compare=False)

    def __post_init__(self):
        if not self.reading:
            object.__setattr__(self, "reading", f"layer {self.layer} {self.decoder}")

    def to_dict(self) -> Dict[str, Any]:
        return {"model": self.model, "layer": self.layer, "decoder": self.decoder}

    @classmethod
    def from_dict(cls, d) -> "Member":
        """The member a bundle records, not yet checked against its model; ValueError when
        malformed."""
        if not isinstance(d, dict) or set(d) != {"model", "layer", "decoder"}:
            raise ValueError(f"bad member: {d!r}")
        model, layer, decoder = d["model"], d["layer"], d["decoder"]
        if not (isinstance(model, int) and isinstance(layer, int) and isinstance(decoder, str)
                and not isinstance(model, bool) and not isinstance(layer, bool) and model >= 0 and layer >= 1):
            raise ValueError(f"bad member: {d!r}")
        return cls(model, layer, decoder)

    def moved(self, model: int) -> "Member":
        """The same member reading model ``model`` instead (bundles renumber their models)."""
        return Member(model, self.layer, self.decoder, self.reading)

    def fields(self, model: Any) -> Dict[str, Any]:
        """What a report records of this member, which reads ``model``: its layer and decoder
        when the model has layers; otherwise its kind (``"student"``), with its decoder only when
        the kind has several to choose from -- never a layer that is not there."""
        if model.layered:
            return {"layer": self.layer, "decoder": self.decoder}
        return {"kind": model.kind, **({"decoder": self.decoder} if len(model.decoders) > 1 else {})}

    def label(self, n_models: int = 1) -> str:
        """Its reading, after ``model 2`` when there are several models:
        ``layer 2 onlstm`` / ``model 1 layer 2 onlstm`` / ``model 2 student``."""
        return f"model {self.model + 1} {self.reading}" if n_models > 1 else self.reading


def grid(models: Sequence[Any], layers: Union[None, str, Sequence[int]] = None,
         decoders: Union[None, str, Sequence[str]] = None) -> List[Member]:
    """The members every model x layer x decoder gives, checked by each model's kind
    (:meth:`onparse.kinds.ParsingModel.grid`): ``layers`` a list of 1-based layers or ``"all"``
    (every layer of each model that has layers), default :data:`DEFAULT_LAYER`; ``decoders`` a
    list or ``"all"``; a model takes the decoders of the list it has (its default when it has
    none of them).  Repeats are dropped.  MemberError for a layer a model lacks, a decoder no
    model has, or ``layers`` when no model has layers to choose from.
    """
    if layers is not None and layers != ALL:
        layers = list(dict.fromkeys(layers))
    if decoders is not None and decoders != ALL:
        decoders = list(dict.fromkeys(decoders))
        known = [d for m in models for d in m.decoders]
        for d in decoders:
            if d not in known:
                raise MemberError(f"no model here has a decoder named {d!r}: choose from "
                                  f"{', '.join(dict.fromkeys(known))}", "decoder")
    if layers and not any(m.layered for m in models):
        raise MemberError(f"--layer does not apply: {_kinds(models)} no layers to choose from", "layer")
    out: List[Member] = []
    for index, model in enumerate(models):
        out += model.grid(index, layers, decoders)
    return out


def _kinds(models: Sequence[Any]) -> str:
    names = sorted({m.kind for m in models})
    return f"a {names[0]} has" if len(names) == 1 else f"{', '.join(names)} models have"


def describe_members(members: Sequence[Member], n_models: int) -> str:
    """``layer 2 onlstm; model 2 student``: the members' labels in order."""
    return "; ".join(m.label(n_models) for m in members)


def checked(models: Sequence[Any], members: Sequence[Member]) -> List[Member]:
    """``members`` each checked and named by the model it reads (MemberError otherwise)."""
    out = []
    for m in members:
        if not 0 <= m.model < len(models):
            raise MemberError(f"a member reads model {m.model + 1} of {len(models)}", "layer")
        out.append(models[m.model].member(m.model, m.layer, m.decoder))
    return out


def first_of(members: Sequence[Member], models: Sequence[Any], *, layered: bool) -> Optional[Member]:
    """The first member whose model has (``layered``) or lacks layers; None when there is none."""
    return next((m for m in members if models[m.model].layered == layered), None)


def labelling(members: Sequence[Member], models: Sequence[Any]) -> Optional[Member]:
    """The member whose model labels the spans of a reading's trees, the one rule of labels: the
    first, in the members' order, whose model's kind names spans
    (:meth:`onparse.kinds.ParsingModel.names_spans`: a grammar), whichever members made the trees;
    None when none does: the reading's trees are unlabelled (every constituent ``X``), whatever
    other models its file carries.  ``models``: the models, or their kinds, by index."""
    return next((m for m in members if models[m.model].names_spans()), None)

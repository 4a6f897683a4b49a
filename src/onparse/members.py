"""Members: the ways a tree is read off a language model, and the one check of each part.

A *member* is ``(model, layer, decoder)``: model ``model`` (0-based, in load order), its layer
``layer`` (1-based) and a decoder of :data:`onparse.trees.decode.DECODERS`.  A parser with more than
one member returns the average of its members' trees (:mod:`onparse.trees.average`).  A checkpoint
read alone has one member, :data:`DEFAULT_LAYER` read by :data:`DEFAULT_DECODER` (the paper's
choice).  A *student* (:mod:`onparse.student.model`, written by ``onparse distill``) has no layers to
choose from: its one member is :func:`student_member`, its CYK tree.  No torch here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Union

from .trees.decode import DECODERS, check_decoder
from .errors import OnparseError

#: The member of a checkpoint read alone: the paper's layer and decoder.
DEFAULT_LAYER = 2
DEFAULT_DECODER = "onlstm"
#: ``layers="all"``: every layer of the models.
ALL = "all"
#: The two distances of a layer, by their index in a distances array: master forget d_f (trees
#: are read from it) and master input d_i.
GATES = {"forget": 0, "input": 1}
#: The decoder of a student's member: the best tree of its span scores (CYK), read off its one
#: "layer" (the span scorer).
STUDENT_DECODER = "cyk"


class MemberError(OnparseError):
    """A member a model cannot give: a layer it lacks or an unknown decoder; ``part`` says which
    (``"layer"`` or ``"decoder"``: the command line reports it as a usage error of ``--layer`` /
    ``--decode``)."""

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


def member_decoder(name: str) -> str:
    """``name`` when it is a decoder; MemberError naming the choices otherwise."""
    try:
        return check_decoder(name)
    except ValueError as err:
        raise MemberError(str(err), "decoder") from None


@dataclass(frozen=True)
class Member:
    """One tree per sentence: model ``model`` (0-based), ``layer`` (1-based), ``decoder``."""

    model: int
    layer: int
    decoder: str

    def to_dict(self) -> Dict[str, Any]:
        return {"model": self.model, "layer": self.layer, "decoder": self.decoder}

    @classmethod
    def from_dict(cls, d) -> "Member":
        """The member a bundle records; ValueError when malformed."""
        if not isinstance(d, dict) or set(d) != {"model", "layer", "decoder"}:
            raise ValueError(f"bad member: {d!r}")
        model, layer, decoder = d["model"], d["layer"], d["decoder"]
        if not (isinstance(model, int) and isinstance(layer, int) and model >= 0 and layer >= 1):
            raise ValueError(f"bad member: {d!r}")
        if decoder == STUDENT_DECODER:
            return student_member(model)
        return cls(model, layer, check_decoder(decoder))

    @property
    def student(self) -> bool:
        """Whether this is a student's member (its CYK tree)."""
        return self.decoder == STUDENT_DECODER

    def label(self, n_models: int = 1) -> str:
        """``layer 2 onlstm``, or ``model 1 layer 2 onlstm`` when there are several models;
        ``student`` / ``model 2 student`` for a student's member."""
        head = f"model {self.model + 1} " if n_models > 1 else ""
        return f"{head}student" if self.student else f"{head}layer {self.layer} {self.decoder}"


def student_member(model: int) -> Member:
    """The one member of the student that is model ``model`` (0-based)."""
    return Member(model, 1, STUDENT_DECODER)


def check_member(member: Member, n_layers: Optional[int]) -> Member:
    """``member`` when its model can give it: ``n_layers`` is the layer count of the language
    model it reads, None for a student (whose one member is :func:`student_member`);
    MemberError otherwise."""
    if n_layers is None:
        if member != student_member(member.model):
            raise MemberError(f"model {member.model + 1} is a student parser: it has one tree per sentence, "
                              "not layers and decoders to choose from", "layer")
        return member
    if member.student:
        raise MemberError(f"model {member.model + 1} is a language model, not a student: "
                          f"choose a decoder of {', '.join(DECODERS)}", "decoder")
    check_layer(member.layer, n_layers)
    member_decoder(member.decoder)
    return member


def default_members(n_models: int, layers: Sequence[int] = (DEFAULT_LAYER,),
                    decoders: Sequence[str] = (DEFAULT_DECODER,)) -> List[Member]:
    """Every model x layer x decoder, in that order."""
    return [Member(m, layer, d) for m in range(n_models) for layer in layers for d in decoders]


def grid(n_layers: Sequence[Optional[int]], layers: Union[None, str, Sequence[int]] = None,
         decoders: Union[None, str, Sequence[str]] = None) -> List[Member]:
    """The members every model x layer x decoder gives, checked: ``n_layers[i]`` is model i's
    layer count (None for a student, which gives its one member whatever the lists say);
    ``layers`` a list of 1-based layers or ``"all"`` (every layer of the shallowest
    model), default :data:`DEFAULT_LAYER`; ``decoders`` a list or ``"all"``, default
    :data:`DEFAULT_DECODER`.  Repeats are dropped.  MemberError for a layer or decoder that does
    not exist.

    >>> [m.label(2) for m in grid([3, 3], [2], "all")]
    ['model 1 layer 2 onlstm', 'model 1 layer 2 split', 'model 2 layer 2 onlstm', 'model 2 layer 2 split']
    >>> [m.label(2) for m in grid([3, None], [1, 2])]
    ['model 1 layer 1 onlstm', 'model 1 layer 2 onlstm', 'model 2 student']
    """
    if all(n is None for n in n_layers):          # students only: nothing to choose
        return [student_member(m) for m in range(len(n_layers))]
    deepest = min(n for n in n_layers if n is not None)
    if layers == ALL:
        layers = range(1, deepest + 1)
    if decoders == ALL:
        decoders = DECODERS
    layers = [check_layer(layer, deepest) for layer in dict.fromkeys(layers or (DEFAULT_LAYER,))]
    decoders = [member_decoder(d) for d in dict.fromkeys(decoders or (DEFAULT_DECODER,))]
    out: List[Member] = []
    for m, n in enumerate(n_layers):
        out += [student_member(m)] if n is None else [Member(m, layer, d) for layer in layers for d in decoders]
    return out

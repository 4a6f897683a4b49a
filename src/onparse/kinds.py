"""The contract every kind of model follows: :class:`ParsingModel`.

onparse has several kinds of model -- ON-LSTM language models (:mod:`onparse.lm`), students of
``onparse distill`` (:mod:`onparse.student`) and neural PCFGs (:mod:`onparse.grammar`) -- and one
way to use them.  A loaded model of any kind says what it is, checks and writes its own file,
names the members (ways to read a tree off it) it can give, and gives those members' trees for
a batch of token lists.  :class:`onparse.api.Parser`, the bundles, averaging, ``distill`` and every
command go through this contract and never ask which kind they hold: a kind that lacks a
capability (distances, perplexity, grammar rules) says so in its own words by raising
:class:`onparse.errors.OnparseError`, and one without labels for its trees gives None.

Kinds are listed in :mod:`onparse.registry` (:func:`onparse.registry.kind_of` reads a file's
``format``, a file of its own, or its ``kind``, an entry of a bundle).  No torch here, and no
import of what shows or files a model: the contract depends on nothing a kind does not need.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Tuple

from .errors import OnparseError
from .files.checkpoint import first_line
from .files.weights import dequantize
from .members import ALL, Member, MemberError
from .text.vocab import Vocabulary
from .trees.tree import Span, split_sizes

Progress = Optional[Callable[[int], None]]
#: :attr:`Bars.measure` of bars that are a tree's split sizes (the default :meth:`ParsingModel.bars`);
#: named here, with the bars, so that ``onparse show`` reads it from the contract, not the other way.
SPLIT_SIZES = "split size"


@dataclass(frozen=True)
class Bars:
    """What ``onparse show`` draws under a sentence's tree: ``rows`` (one list of n values per
    row), ``marked`` (the 1-based row the tree was read from, 0 for none) and ``measure`` (what
    the values are: ``d_f`` for distances, ``split size`` ...)."""

    rows: List[List[float]]
    marked: int
    measure: str


class ParsingModel:
    """One loaded model of any kind, in evaluation mode (module docstring).

    Attributes: ``model`` (the torch module), ``vocab`` (:class:`onparse.text.vocab.Vocabulary`:
    the words it reads) and ``metadata`` (the file's free-form record).  Subclasses set
    :attr:`kind`, :attr:`file_format` and :attr:`entry_kind` and implement the methods that raise
    ``NotImplementedError`` here.
    """

    #: What the kind is called in messages and ``onparse info`` (``language model`` ...).
    kind: ClassVar[str] = "model"
    #: The ``format`` of a file holding one model of this kind.
    file_format: ClassVar[str] = ""
    #: The ``kind`` of its entry in a bundle (None: the entry has no ``kind`` key).
    entry_kind: ClassVar[Optional[str]] = None
    #: The decoders its members may name; the first is its default.
    decoders: ClassVar[Tuple[str, ...]] = ()
    #: Whether its members choose a layer (``--layer`` applies to it).
    layered: ClassVar[bool] = False
    #: The ``onparse train --family`` that trains it (None: ``onparse train`` does not).
    family: ClassVar[Optional[str]] = None
    #: What a bundle keeps it for when no member reads it, as ``onparse info`` says it (one model,
    #: several): a language model gives distances, a grammar shows its rules (labels are members').
    kept_for: ClassVar[Tuple[str, str]] = ("makes no trees here", "make no trees here")

    #: ``(blob, path, device)`` of a model whose torch module is not built yet (:meth:`deferred`).
    _pending: Optional[Tuple[Dict[str, Any], Any, Any]] = None

    def __init__(self, model: Any, vocab: Any, metadata: Optional[Dict[str, Any]] = None):
        self.model = model
        self.vocab = vocab
        self.metadata = dict(metadata or {})

    @classmethod
    def deferred(cls, blob: Dict[str, Any], path, device="cpu") -> "ParsingModel":
        """The model a checked ``blob`` describes, its torch module built by :meth:`from_blob` on
        first use (``.model``, trees, distances ...) instead of now: a bundle's models that the
        chosen reading does not read cost nothing until asked for.  Its vocabulary, metadata,
        kind, members and device are there at once; an error of building comes on first use."""
        try:
            vocab = Vocabulary(blob["vocab"])
        except OnparseError as err:
            raise OnparseError(f"{path}: {err}") from None
        model = cls(None, vocab, blob.get("metadata", {}))
        model._pending = (blob, path, device)
        return model

    @property
    def model(self) -> Any:
        """The torch module (built now when :meth:`deferred` left it for later)."""
        if self._pending is not None:
            blob, path, device = self._pending
            built = type(self).from_blob(blob, path, device)
            self.__dict__.update({k: v for k, v in built.__dict__.items() if k not in ("vocab", "metadata")})
            self._pending = None
        return self._module

    @model.setter
    def model(self, module: Any) -> None:
        self._module = module

    @property
    def built(self) -> bool:
        """Whether the torch module is built (False for a :meth:`deferred` model not used yet)."""
        return self._pending is None

    # -- files ----------------------------------------------------------------------------------
    @classmethod
    def owns(cls, blob: Any) -> bool:
        """Whether a dict read from a file, or a bundle's model entry, is of this kind."""
        return isinstance(blob, dict) and (blob.get("format") == cls.file_format
                                           or blob.get("kind", None) == cls.entry_kind)

    @classmethod
    def check(cls, blob: Dict[str, Any], path, *, verify: bool = True) -> Dict[str, Any]:
        """``blob`` when it is a valid file (or bundle entry) of this kind read from ``path``;
        a one-line OnparseError naming the first problem.  Allocates no weights."""
        raise NotImplementedError

    #: The config dataclass and the torch module of the kind, for :meth:`from_blob`.
    config_class: ClassVar[Any] = None
    module_class: ClassVar[Any] = None

    @classmethod
    def from_blob(cls, blob: Dict[str, Any], path, device="cpu") -> "ParsingModel":
        """The model a checked ``blob`` describes, built in eval mode on ``device``; ``path``
        names the file in errors.  float16 and int8 weights are read back into float32.  This
        builds ``module_class(config_class.from_dict(config))``; a kind may build otherwise."""
        try:
            model = cls.module_class(cls.config_class.from_dict(blob["config"]))
            model.load_state_dict(dequantize(blob["state_dict"]))          # float16 is copied into float32
            vocab = Vocabulary(blob["vocab"])
        except (TypeError, ValueError, KeyError, RuntimeError, OnparseError) as err:
            raise OnparseError(f"{path}: {cls.kind} does not match this onparse version's {cls.kind} "
                               f"({first_line(err)})")
        return cls(model.to(device).eval(), vocab, blob.get("metadata", {}))

    def entry(self) -> Dict[str, Any]:
        """The model as a bundle entry: ``config``, ``vocab``, ``state_dict`` (on the CPU),
        ``metadata`` and, for kinds that have one, ``kind``."""
        entry = {"config": self.model.config.to_dict(), "vocab": self.vocab.to_list(),
                 "state_dict": {k: t.detach().cpu() for k, t in self.model.state_dict().items()},
                 "metadata": dict(self.metadata)}
        if self.entry_kind is not None:
            entry["kind"] = self.entry_kind
        return entry

    @classmethod
    def describe_sections(cls) -> Tuple[Callable[[Dict[str, Any], Dict[str, Any]], List[str]], ...]:
        """What ``onparse info`` says of a checked file (or entry) of this kind after its file
        line: functions ``(blob, metadata) -> lines`` (architecture, origin, recorded figures),
        each shown unless the free-form metadata it reads has unexpected types."""
        return ()

    # -- members --------------------------------------------------------------------------------
    def default_members(self, index: int) -> List[Member]:
        """The members of model ``index`` (0-based) when it is read alone from its own file."""
        return [self.member(index, 1, self.decoders[0])]

    def averaged_members(self, index: int) -> List[Member]:
        """The members of model ``index`` that go into an average of several models' trees (what
        ``onparse fit`` chooses among): by default, its :meth:`default_members`."""
        return self.default_members(index)

    def member(self, index: int, layer: int, decoder: str) -> Member:
        """Member ``(index, layer, decoder)`` of this model, named as this kind names it;
        :class:`onparse.members.MemberError` when it cannot give it."""
        config = self._pending[0]["config"] if self._pending is not None else self.model.config.to_dict()
        return self.checked_member(config, index, layer, decoder)

    @classmethod
    def checked_member(cls, config: Dict[str, Any], index: int, layer: int, decoder: str) -> Member:
        """:meth:`member` for a model of stored ``config`` (a bundle read by ``onparse info``
        is checked without building its models)."""
        if layer != 1:
            raise MemberError(f"model {index + 1} is a {cls.kind}: it has no layers to choose from", "layer")
        if decoder not in cls.decoders:
            raise MemberError(f"model {index + 1} is a {cls.kind}: its decoder is one of "
                              f"{', '.join(cls.decoders)}, not {decoder!r}", "decoder")
        return Member(index, 1, decoder, cls.reading(1, decoder))

    @classmethod
    def reading(cls, layer: int, decoder: str) -> str:
        """How a member is named in tables: ``layer 2 onlstm``, ``student`` ..."""
        return cls.kind if decoder == cls.decoders[0] else f"{cls.kind} {decoder}"

    def grid(self, index: int, layers: Optional[Sequence[int]], decoders: Optional[Sequence[str]]) -> List[Member]:
        """The members of model ``index`` for these requested layers and decoders (None: not
        asked).  A kind without layers ignores ``layers``; requested decoders it does not have
        are left to other kinds (:func:`onparse.members.grid` says when nobody has one)."""
        if decoders == ALL:
            return [self.member(index, 1, d) for d in self.decoders]
        mine = [d for d in (decoders or ()) if d in self.decoders] or [self.decoders[0]]
        return [self.member(index, 1, d) for d in mine]

    # -- trees ----------------------------------------------------------------------------------
    def member_trees(self, token_lists: Sequence[Sequence[str]], members: Sequence[Member], *,
                     batch_size: int, max_tokens: int, progress: Progress = None) -> List[List[Any]]:
        """``[member][sentence]``: each of ``members`` (all of this model) gives a tree per
        non-empty token list (nested tuples, :mod:`onparse.trees.tree`; None for an empty one).
        ``progress(k)`` is called with the sentences of each batch done, once over the batch."""
        raise NotImplementedError

    def labels(self, token_lists: Sequence[Sequence[str]], trees: Sequence[Any], *, member: Member,
               batch_size: int) -> Optional[List[Optional[Dict[Span, str]]]]:
        """Span -> label for each tree (``trees[i]`` over ``token_lists[i]``, as ``member`` gave it; None
        for an empty one), or None when the kind has no labels (the default: the commands then
        write ``X``).  Cost: the kind's; nothing for a kind without labels."""
        return None

    @classmethod
    def names_spans(cls) -> bool:
        """Whether the kind labels the spans of trees (it overrides :meth:`labels`: a grammar)."""
        return cls.labels is not ParsingModel.labels

    def bars(self, tokens: Sequence[str], member: Member, tree: Any) -> Bars:
        """What ``show`` draws under the tree of ``tokens``: by default the tree's split sizes
        (:func:`onparse.trees.tree.split_sizes`, which the ``split`` decoder turns back into it)."""
        return Bars([split_sizes(tree)], 1, SPLIT_SIZES)

    # -- capabilities some kinds lack -----------------------------------------------------------
    def lacks(self, what: str, name: str) -> OnparseError:
        """The error for a capability this kind does not have (``what``: ``distances`` ...)."""
        return OnparseError(f"{name} is a {self.kind}: it has no {what}; give a language model "
                            "(a checkpoint of onparse train, or a bundle holding one)")

    def distances(self, token_lists: Sequence[Sequence[str]], n_layers: int, *, name: str,
                  batch_size: int, max_tokens: int, progress: Progress = None) -> List[Any]:
        """Per sentence a float32 array (n_layers, 2, n) of distances; only language models have them."""
        raise self.lacks("distances", name)

    def perplexity(self, corpus, split, fmt, batch_size, bptt, *, name: str, quiet: bool):
        """Its perplexity on a corpus (:class:`onparse.lm.perplexity.PerplexityResult`)."""
        raise self.lacks("perplexity", name)

    @property
    def has_perplexity(self) -> bool:
        """Whether the kind gives a perplexity (it overrides :meth:`perplexity`)."""
        return type(self).perplexity is not ParsingModel.perplexity

    def grammar_report(self, name: str, *, rules: int, words: int, samples: int, seed: int,
                       max_length: int) -> Dict[str, Any]:
        """What ``onparse grammar`` shows of a grammar (a JSON-ready dict: its most probable rules,
        each preterminal's most probable words, sentences sampled with ``seed``); only grammars
        have rules to show."""
        raise OnparseError(f"{name} is a {self.kind}: it has no grammar rules to show; give a grammar "
                           "(onparse train --family grammar writes one)")

    @property
    def device(self):
        if self._pending is not None:                 # where it will be built
            import torch

            return torch.device(self._pending[2])
        return next(self.model.parameters()).device

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.kind}, {len(self.vocab)} words>"


"""The Python front door: ``onparse.load()`` returns a :class:`Parser`.

>>> import onparse                                        # doctest: +SKIP
>>> parser = onparse.load()                               # the bundled model  # doctest: +SKIP
>>> print(parser.parse_one("The cat sat on the mat."))    # doctest: +SKIP
(X (X (X (W The) (W cat)) (W sat)) (X (W on) (X (W the) (W mat))))

A parser holds one or more models of any kind (:class:`onparse.kinds.ParsingModel`: ON-LSTM
language models, students of ``onparse distill``, grammars), one or more *members* (model,
layer, decoder; :class:`onparse.members.Member`), and optionally *voters*, baseline trees that join the average
(:data:`onparse.baselines.VOTER_KINDS`).  With one member and no voter a sentence's tree is that
member's tree; otherwise it is the average of the members' and voters' trees, ties broken by the
parser's tie rule (:mod:`onparse.average`).  The command line is a thin shell over this class.

Trees are binary :class:`nltk.Tree` objects, as ``nltk.Tree.fromstring`` reads ``onparse induce
--format ptb``: constituents labelled ``X``, each word under a pre-terminal ``W`` (``(X (W the)
(W cat))``; one word: ``Tree('W', [word])``), so ``tree.pretty_print()`` draws the words in order
and ``tree.leaves()`` is the tokens as given.  Internally, and in :meth:`Parser.trees`, a tree is
a nested tuple of tokens (:mod:`onparse.trees`).  A ``--format brackets`` line (``((the cat)
sat)``) is not PTB: ``nltk.Tree.fromstring`` silently takes its first word for a label;
:func:`read_trees` reads either format (and treebank trees) as the parser returns them.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from nltk.parse.api import ParserI

from . import arguments
from .devices import MAX_TOKENS, batch_size_for, resolve_device
from .errors import OnparseError
from .induce import WINDOW
from .files.bundle import file_reading, is_bundle, load_model_file, save_models
from .files.readings import ReadingError
from .files.pretrained import DEFAULT_NAME, resolve
from .kinds import ParsingModel
from .lm.kind import LanguageModel
from .members import DEFAULT_DECODER, DEFAULT_LAYER, GATES, Member, checked, grid
from .progress import Portion, Progress
from .scores.agreement import MIN_WORDS, measure as measure_agreement
from .scores.metrics import evaluate
from .text.tokens import DEFAULT_PUNCT, PUNCT_POLICIES, Preprocessor
from .gold.treebank import Gold, load_gold
from .trees import average as averaging
from .trees.average import DEFAULT_TIES, average_trees_batch, check_ties
from .trees.baselines import check_voters, voter_tree
from .trees.nltk_trees import NODE_LABEL, WORD_LABEL, read_trees, to_nltk  # noqa: F401 (public here)

#: Sentences processed together by the list methods (bounds memory on long inputs): the
#: window the commands read, :data:`onparse.induce.WINDOW`.
CHUNK = WINDOW

SentenceInput = Union[str, Sequence[str]]


def load(model: Union[None, str, os.PathLike, Sequence[Union[str, os.PathLike]]] = None, device: str = "auto", *,
         layers: Optional[Sequence[int]] = None, decoders: Optional[Sequence[str]] = None,
         voters: Optional[Sequence[str]] = None, ties: Optional[str] = None,
         batch_size: Optional[int] = None, verify: bool = True, reading: Optional[str] = None) -> "Parser":
    """Load a parser.

    ``model``: None (the model bundled with onparse), a checkpoint, student or bundle path, or a
    list of them (their trees are averaged; None in the list is the bundled model).  ``device``: ``auto`` (a GPU when there is one), ``cpu``,
    ``cuda`` or ``cuda:N``.  ``layers`` / ``decoders``: read trees off these layers (1-based, or
    ``"all"``) with these decoders (:data:`onparse.decode.DECODERS`, or ``"all"``), for every
    model; by default a bundle's own members and layer 2 with the paper's decoder for a
    checkpoint (:func:`onparse.members.grid`).  ``voters``: baseline trees
    that join the average (``["right"]``; :data:`onparse.baselines.VOTER_KINDS`) and ``ties``:
    the average's tie rule (:data:`onparse.average.TIES`); by default the first bundle's own,
    else none and ``first``.  ``batch_size``: sentences per batch (default
    :data:`onparse.devices.BATCH_SIZE`: 64 on CPU, 512 on GPU).
    ``verify=False`` loads files whose weights do not match their recorded checksum.
    ``reading``: the name of a bundle's reading (:mod:`onparse.files.readings`; None: its default;
    ``"default"``: a file's that names none); a ReadingError for a name it lacks, or several files.

    Cost: reading the files (a second or two for the bundled model) and building the models the
    members read (a bundle's others on first use); nothing runs until asked.
    A wrong argument is refused first (:mod:`onparse.arguments`).
    """
    if model is None or isinstance(model, (str, os.PathLike)):
        paths = [model]
    else:
        paths = list(arguments.listed(model, "model", (str, os.PathLike, type(None)), "['a.pt', 'b.pt']"))
        if not paths:
            raise arguments.ArgumentValueError("no model given: model takes a path, a list of paths, or None")
    layers = arguments.listed(layers, "layers", int, "[2, 3]", word="all")
    decoders = arguments.listed(decoders, "decoders", str, "['onlstm']", word="all")
    voters = arguments.listed(voters, "voters", str, "['right']")
    if batch_size is not None:
        arguments.whole(batch_size, "batch_size", 1)
    if reading is not None and len(paths) > 1:
        raise ReadingError(f"a reading ({reading!r}) is one model file's: give one file, not {len(paths)}")
    dev = resolve_device(device)
    models: List[ParsingModel] = []
    names: List[str] = []
    own_members: List[Member] = []
    metadata, voting, chosen = None, None, None
    for path in paths:
        file = resolve(None if path is None else os.fspath(path))
        name = DEFAULT_NAME if path is None else os.fspath(path)
        blob = load_model_file(file, verify=verify)
        offset = len(models)
        chosen, loaded, members, own_voting = file_reading(blob, file, dev, reading, name)
        names += [f"{name} [{i + 1}]" for i in range(len(loaded))] if is_bundle(blob) else [name]
        own_members += [m.moved(m.model + offset) for m in members]
        voting = voting or own_voting
        models += loaded
        if metadata is None:
            metadata = dict(blob.get("metadata") or {})
    own_voters, own_ties = voting or ((), DEFAULT_TIES)
    parser = Parser(models, own_members, names, metadata or {}, batch_size=batch_size, voters=tuple(own_voters),
                    ties=own_ties, reading=chosen if len(paths) == 1 else None)
    if layers is not None or decoders is not None or voters is not None or ties is not None:
        parser = parser.with_members(own_members if layers is None and decoders is None else
                                     grid(models, layers, decoders), voters, ties)
    return parser


@dataclass
class Scores:
    """What :meth:`Parser.score` measured: one :class:`onparse.metrics.SpanMetric` per member,
    and that of the averaged trees when there are several members."""

    gold: str
    members: List[Tuple[Member, Any]]
    average: Optional[Any] = None
    n_models: int = 1
    voters: Tuple[str, ...] = ()
    ties: str = DEFAULT_TIES

    @property
    def result(self):
        """The parser's own trees' result: the average's, or the single member's."""
        return self.average if self.average is not None else self.members[0][1]

    def rows(self) -> List[Tuple[str, Any]]:
        """``(label, result)`` per member, then the average's (:func:`average_label`)."""
        rows = [(m.label(self.n_models), r) for m, r in self.members]
        if self.average is not None:
            rows.append((average_label(len(self.members), self.voters, self.ties), self.average))
        return rows


def average_label(n_members: int, voters: Sequence[str] = (), ties: str = DEFAULT_TIES) -> str:
    """How an average is named in tables: ``average of 4 members``, with ``+ right voter`` and
    ``, ties right`` when it has voters or a tie rule other than the default.

    >>> average_label(4, ["right"], "right")
    'average of 4 members + right voter, ties right'
    """
    label = f"average of {n_members} member{'s' if n_members != 1 else ''}"
    for voter in voters:
        label += f" + {voter} voter"
    return label + ("" if ties == DEFAULT_TIES else f", ties {ties}")


@dataclass
class Parser(ParserI):
    """Language models and the members whose trees are averaged (module docstring).

    Attributes: ``models`` (:class:`onparse.kinds.ParsingModel` each), ``members``,
    ``names`` (where each model came from), ``metadata`` (of the first file), ``voters`` and
    ``ties`` (the average's voters and tie rule), ``reading`` (:func:`load`'s: the file's reading
    they are; None for several files or other members), ``too_long`` (sentences so far whose tree is
    their first member's because they were too long to average; :mod:`onparse.average`) and
    ``in_pieces`` (per kind of model, sentences so far too long for a model of that kind to
    parse whole, whose member trees it built in pieces: a grammar's or a student's).
    """

    models: List[Any]
    members: List[Member]
    names: List[str] = field(default_factory=list)
    metadata: Dict[str, Any] = field(default_factory=dict)
    batch_size: Optional[int] = None
    max_tokens: Optional[int] = None
    voters: Tuple[str, ...] = ()
    ties: str = DEFAULT_TIES
    reading: Optional[str] = None
    too_long: int = field(default=0, init=False)
    in_pieces: Dict[str, int] = field(default_factory=dict, init=False)

    @classmethod
    def from_model(cls, model, vocab, members: Optional[Sequence[Member]] = None, **options) -> "Parser":
        """A parser over one in-memory :class:`onparse.model.ONLSTMLanguageModel` and its
        :class:`onparse.vocab.Vocabulary` (default member: layer 2, the paper's decoder)."""
        return cls([LanguageModel(model.eval(), vocab, {})],
                   list(members or [Member(0, DEFAULT_LAYER, DEFAULT_DECODER)]), ["model"], **options)

    def __post_init__(self):
        if not self.models or not self.members:
            raise OnparseError("a parser needs at least one model and one member")
        self.members = checked(self.models, self.members)
        try:
            self.voters = check_voters(self.voters)
            check_ties(self.ties)
        except ValueError as err:
            raise OnparseError(str(err)) from None
        if self.batch_size is None:
            self.batch_size = batch_size_for(self.device)
        if self.max_tokens is None:
            self.max_tokens = max(MAX_TOKENS, 128 * self.batch_size)

    # -- what it is ---------------------------------------------------------------------------
    @property
    def vocab(self):
        """The first model's vocabulary: it decides tokenisation and what counts as a word."""
        return self.models[0].vocab

    def name(self, index: int) -> str:
        """What model ``index`` (0-based) is called in messages: where it came from."""
        return self.names[index] if index < len(self.names) else f"model {index + 1}"

    @property
    def device(self):
        return self.models[0].device

    @property
    def averages(self) -> bool:
        """Whether a sentence's tree is an average (several members, or any voter)."""
        return len(self.members) + len(self.voters) > 1

    def with_members(self, members: Sequence[Member], voters: Optional[Sequence[str]] = None,
                     ties: Optional[str] = None) -> "Parser":
        """The same models read by other members (and, when given, other voters or tie rule);
        :attr:`reading` is kept when they are the same members, voters and tie rule."""
        voters, ties = tuple(self.voters if voters is None else voters), self.ties if ties is None else ties
        same = (list(members), tuple(voters), ties) == (self.members, tuple(self.voters), self.ties)
        return Parser(self.models, list(members), self.names, self.metadata, self.batch_size, self.max_tokens,
                      voters, ties, self.reading if same else None)

    def with_grid(self, layers=None, decoders=None) -> "Parser":
        """The same models read by every model x layer x decoder (:func:`onparse.members.grid`:
        lists, or ``"all"``; None means layer 2 / the paper's decoder); voters and ties kept.
        :class:`onparse.members.MemberError` for a layer or decoder that does not exist."""
        return self.with_members(grid(self.models, layers, decoders))

    def save_bundle(self, path, *, weights: str = "float16", metadata: Optional[Dict[str, Any]] = None,
                    carry: Sequence[int] = (), weights_of: Optional[Dict[int, str]] = None,
                    readings: Optional[Dict[str, "Parser"]] = None, default_reading: Optional[str] = None) -> None:
        """Write the parser as a bundle file (:mod:`onparse.bundle`): the models its members read
        and those of ``carry`` (indices of :attr:`models` no member reads, kept for their other
        uses: a grammar shows its rules, a language model gives distances), the members, voters and
        tie rule; ``weights``: :data:`onparse.weights.WEIGHT_KINDS`, and ``weights_of``: another
        for some models, by index of :attr:`models` (``{0: "int8"}``: a language model kept for
        distances, smaller).  ``readings``: named readings instead (:mod:`onparse.files.readings`),
        name -> a parser over these models (``parser.with_members(...)``), ``default_reading`` one
        of them (default: the first).  ``load(path)`` reads it back (``reading=``: another)."""
        if any(r.models is not self.models for r in (readings or {}).values()):
            raise OnparseError("each reading must be a parser over these models (parser.with_members(...))")
        named = readings and {n: (r.members, r.voters, r.ties) for n, r in readings.items()}
        try:
            save_models(path, self.models, self.members, carry, weights=weights, metadata=metadata, voters=self.voters,
                        ties=self.ties, weights_of=weights_of, readings=named, default_reading=default_reading)
        except ValueError as err:
            raise OnparseError(str(err)) from None

    def describe_average(self) -> str:
        """``layer 2 onlstm`` / ``student`` for one member (the models no member reads, such as a
        bundle's language models kept for distances, make no trees: no ``model 4`` before it),
        else :func:`average_label`."""
        if not self.averages:
            return self.members[0].label()
        return average_label(len(self.members), self.voters, self.ties)

    # -- text -> tokens -----------------------------------------------------------------------
    def preprocessor(self, tokenize: bool = True, punct: str = DEFAULT_PUNCT) -> Preprocessor:
        """How raw text becomes tokens (:class:`onparse.text.Preprocessor`) for this parser."""
        arguments.choice(punct, "punct", PUNCT_POLICIES)
        return Preprocessor(self.vocab, tokenize, punct)

    def tokens(self, sentences: Iterable[SentenceInput], tokenize: bool = True, punct: str = DEFAULT_PUNCT) -> List[List[str]]:
        """The tokens the models read: a string is tokenised and its punctuation dropped (as
        ``onparse induce`` does); a list of tokens is used as given.  Each sentence is checked
        first (:func:`onparse.arguments.sentence`: no bytes, no empty token, no NUL)."""
        prep = self.preprocessor(tokenize, punct)
        checked_sentences = [arguments.sentence(s) for s in arguments.sentences(sentences, "sentences")]
        return [prep(s).tokens if isinstance(s, str) else s for s in checked_sentences]

    # -- tokens -> distances -> trees ---------------------------------------------------------
    def model_distances(self, token_lists: Sequence[Sequence[str]], progress=None) -> List[Any]:
        """``[model][sentence]`` float32 arrays (n_layers, 2, n): master-forget ``[l, 0]`` and
        master-input ``[l, 1]`` distances of layer l + 1, up to the deepest layer the members
        read, for every model whose members choose a layer (None for the others).

        ``progress(k)``: called with the sentences of each batch done, model after model.
        Cost: one batched forward pass per model (sentences sorted by length, batches bounded
        by ``batch_size`` sentences and ``max_tokens`` padded tokens); O(total words) memory."""
        out = []
        for index, model in enumerate(self.models):
            layers = [m.layer for m in self.members if m.model == index]
            out.append(model.distances(token_lists, max(layers), name=self.name(index), batch_size=self.batch_size,
                                       max_tokens=self.max_tokens, progress=progress)
                       if layers and model.layered else None)
        return out

    def member_trees(self, token_lists: Sequence[Sequence[str]], dists=None, progress=None,
                     first_only_over: Optional[int] = None) -> List[List[Any]]:
        """Per sentence, each member's tree (nested tuples; None for an empty sentence), each
        model giving its members' trees (:meth:`onparse.kinds.ParsingModel.member_trees`).
        ``dists``: what :meth:`model_distances` gave for these token lists (reused); ``progress``
        as for :meth:`model_distances`.  Sentences a model built in pieces because they were too
        long for it (a grammar's or a student's ``too_long``) are counted in :attr:`in_pieces`,
        once per sentence and kind of model.  ``first_only_over``: sentences of more words are
        read by the first member's model only (the others' trees are None): :meth:`trees` does
        not average them, so the other models step aside instead of parsing them in vain."""
        per_member: List[Any] = [None] * len(self.members)
        for index, model in enumerate(self.models):
            mine = [k for k, m in enumerate(self.members) if m.model == index]
            if not mine:
                continue
            reuse = {} if dists is None or dists[index] is None else {"distances": dists[index]}
            read = token_lists
            if first_only_over is not None and index != self.members[0].model and not reuse:
                read = [t if len(t) <= first_only_over else [] for t in token_lists]
            trees = model.member_trees(read, [self.members[k] for k in mine], batch_size=self.batch_size,
                                       max_tokens=self.max_tokens, progress=progress, **reuse)
            pieced = set()
            for k, member_trees in zip(mine, trees):
                per_member[k] = member_trees
                pieced.update(getattr(member_trees, "too_long", ()))
            if pieced:
                self.in_pieces[model.kind] = self.in_pieces.get(model.kind, 0) + len(pieced)
        return [[trees[i] if len(token_lists[i]) else None for trees in per_member] for i in range(len(token_lists))]

    def trees(self, token_lists: Sequence[Sequence[str]], dists=None, progress=None) -> List[Any]:
        """One tree per token list (nested tuples; None for an empty one): the member's tree,
        or the average of the members' and voters' trees; ``progress`` as for
        :meth:`member_trees`.  Cost: each model's (O(n) per language-model member tree after
        its distances, O(n^3) for a student's or a grammar's), then O(n^3) per average.

        A sentence of more than :data:`onparse.trees.average.MAX_WORDS` words is not averaged: its
        tree is the first member's, the other members step aside (their models do not read it)
        and it is counted in :attr:`too_long`.  So its cost is the first member's alone: linear
        in its length for a language model or a student (which parses it in pieces,
        :meth:`onparse.student.model.SpanStudent.parse_in_pieces`)."""
        if not self.averages:
            return [trees[0] for trees in self.member_trees(token_lists, dists, progress)]
        per_sentence = self.member_trees(token_lists, dists, progress, first_only_over=averaging.MAX_WORDS)
        out: List[Any] = [None] * len(token_lists)
        full = [i for i, t in enumerate(token_lists) if 0 < len(t) <= averaging.MAX_WORDS]
        for i, tree in zip(full, self.average([per_sentence[i] for i in full], [token_lists[i] for i in full])):
            out[i] = tree
        long = [i for i, t in enumerate(token_lists) if len(t) > averaging.MAX_WORDS]
        for i in long:
            out[i] = per_sentence[i][0]
        self.too_long += len(long)
        return out

    def average(self, per_sentence: Sequence[Sequence[Any]], token_lists: Sequence[Sequence[str]]) -> List[Any]:
        """The average of each sentence's member trees and the voters' trees over its tokens,
        by the parser's tie rule; a sentence too long to average gets its first member's tree
        and is counted in :attr:`too_long`."""
        voted = [list(trees) + [voter_tree(v, list(tokens)) for v in self.voters]
                 for trees, tokens in zip(per_sentence, token_lists)]
        out = average_trees_batch(voted, self.ties)
        self.too_long += len(out.too_long)
        return out

    # -- the nltk ParserI contract and friends -----------------------------------------------
    def batch(self, sentences: Sequence[SentenceInput]) -> List[Optional[Any]]:
        """One :class:`nltk.Tree` per sentence (None where no word is left), in order.
        ``sentences``: a list (or any iterable) of sentences, each a str of raw text or a list of
        tokens; a str, bytes or a mapping is a TypeError (:mod:`onparse.arguments`).
        Sentences run in batches of similar length, ``CHUNK`` at a time."""
        out: List[Optional[Any]] = []
        sentences = list(arguments.sentences(sentences, "batch"))
        for at in range(0, len(sentences), CHUNK):
            tokens = self.tokens(sentences[at:at + CHUNK])
            out.extend(None if t is None else to_nltk(t) for t in self.trees(tokens))
        return out

    def parse_sents(self, sents: Iterable[SentenceInput], *args, **kwargs) -> Iterator[Iterator[Any]]:
        """For each sentence, an iterator over its one tree (empty when no word is left), in
        input order; computed ``CHUNK`` sentences at a time, in batches."""
        chunk: List[SentenceInput] = []
        for sentence in arguments.sentences(sents, "parse_sents"):
            chunk.append(sentence)
            if len(chunk) == CHUNK:
                yield from (iter([] if t is None else [t]) for t in self.batch(chunk))
                chunk = []
        if chunk:
            yield from (iter([] if t is None else [t]) for t in self.batch(chunk))

    def parse(self, sent: SentenceInput, *args, **kwargs) -> Iterator[Any]:
        """An iterator over the sentence's one tree (a string is tokenised; a token list is used
        as given)."""
        return next(self.parse_sents([sent]))

    def grammar(self):
        """No grammar: the trees come from the language model's distances."""
        return None

    def distances(self, sentence: SentenceInput, layer: int = DEFAULT_LAYER, gate: str = "forget", model: int = 0):
        """The distances of one sentence at ``layer`` (1-based) of model ``model``: a float32
        array of shape (n,), one value per token (:meth:`tokens` tells which tokens)."""
        arguments.choice(gate, "gate", tuple(GATES))
        arguments.whole(layer, "layer", 1)
        reader = self.models[arguments.whole(model, "model", 0, len(self.models) - 1)]
        reader.member(model, layer, DEFAULT_DECODER)                 # the layer exists (or: no layers)
        values = reader.distances(self.tokens([sentence]), layer, name=self.name(model), batch_size=1,
                                  max_tokens=self.max_tokens)
        return values[0][layer - 1, GATES[gate]]

    # -- scoring -----------------------------------------------------------------------------
    def score(self, gold="wsj10", layers: Optional[Sequence[int]] = None,
              decoders: Optional[Sequence[str]] = None, ptb_root=None, quiet: bool = True) -> Scores:
        """Parse the sentences of a gold set and score the trees, per member and averaged.

        ``gold``: a name (``wsj10``, ``alpino10`` ...), a path, or a :class:`onparse.treebank.Gold`.
        ``layers`` / ``decoders``: score these members instead of the parser's own (every model
        x layer x decoder; ``layers=[]`` or ``None`` with ``decoders`` given means layer 2); the
        parser's voters and tie rule still apply to the average.
        The models read the gold's kept words as given, normalised.  Unless ``quiet``, progress
        on stderr (:mod:`onparse.progress`).  Cost: the distances once for all members, then a
        decode per member and sentence.
        """
        parser = self if layers is None and decoders is None else self.with_grid(layers, decoders)
        if not isinstance(gold, Gold):
            gold = load_gold(str(gold), ptb_root)
        tokens = [list(s.words) for s in gold]
        n_models = len({m.model for m in parser.members})           # each reports its sentences: count the gold's
        with Progress(f"parsing {gold.name}", len(tokens), "sentences", quiet) as bar:
            per_sentence = parser.member_trees(tokens, progress=Portion(bar.update, len(tokens), bar.total * n_models))
        members = [(m, evaluate([trees[k] for trees in per_sentence], gold))
                   for k, m in enumerate(parser.members)]
        average = None
        if parser.averages:
            average = evaluate(parser.average(per_sentence, tokens), gold)
        return Scores(gold.name, members, average, len(self.models), parser.voters, parser.ties)

    def agreement(self, sentences: Iterable[SentenceInput], *, min_words: int = MIN_WORDS,
                  limit: Optional[int] = None, quiet: bool = True) -> List[Tuple[Member, float]]:
        """Each member's agreement score on unlabelled ``sentences`` (:mod:`onparse.agreement`:
        its mean share of non-trivial spans shared with the members of the other models), in
        member order.  No gold tree is involved, so the score may choose members.

        Sentences are read as :meth:`tokens` reads them; those of fewer than ``min_words``
        (at least :data:`onparse.agreement.MIN_WORDS`, 3) tokens are skipped, and only
        the first ``limit`` of the others are used.  Unless ``quiet``, progress on stderr.
        Cost: the distances and member trees of those sentences, then O(K^2 n) per sentence."""
        if min_words < MIN_WORDS:
            raise OnparseError(f"agreement needs sentences of at least {MIN_WORDS} words (min_words >= {MIN_WORDS})")
        tokens = [t for t in self.tokens(sentences) if len(t) >= min_words][:limit]
        return list(zip(self.members, measure_agreement(self, tokens, quiet)[0]))

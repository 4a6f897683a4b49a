"""The Python front door: ``onparse.load()`` returns a :class:`Parser`.

>>> import onparse                                        # doctest: +SKIP
>>> parser = onparse.load()                               # the bundled model  # doctest: +SKIP
>>> parser.parse_one("The cat sat on the mat.")           # doctest: +SKIP
Tree('X', [Tree('X', ['The', 'cat']), Tree('X', ['sat', Tree('X', ['on', Tree('X', ['the', 'mat'])])])])

A parser holds one or more models -- language models, or *students* of ``onparse distill``
(:mod:`onparse.student.distill`), whose one member is their CYK tree -- and one or more *members* (model,
layer, decoder; :class:`onparse.members.Member`), and optionally *voters*, baseline trees that join the average
(:data:`onparse.trees.baselines.VOTER_KINDS`).  With one member and no voter a sentence's tree is that
member's tree; otherwise it is the average of the members' and voters' trees, ties broken by the
parser's tie rule (:mod:`onparse.trees.average`).  The command line is a thin shell over this class.

Trees are returned as binary :class:`nltk.Tree` objects: every internal node is labelled
``X`` and has two children; leaves are the sentence's tokens as given (a one-word sentence is
``Tree('X', [word])``).  Internally, and in :meth:`Parser.trees`, a tree is a nested tuple of
tokens (:mod:`onparse.trees.tree`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from nltk.parse.api import ParserI

from .scores.agreement import MIN_WORDS, agreement_scores
from .trees.average import DEFAULT_TIES, average_trees_batch, check_ties
from .trees.baselines import check_voters, voter_tree
from .files.bundle import bundle_voting, load_model_file, save_models
from .trees.decode import decode
from .lm.distances import resolve_device, sentence_distances
from .student.distill import distill
from .errors import OnparseError
from .members import DEFAULT_DECODER, DEFAULT_LAYER, GATES, Member, check_layer, check_member, grid, student_member
from .scores.metrics import evaluate
from .lm.model import LoadedModel, model_from_blob
from .lm.perplexity import measure_model
from .files.pretrained import DEFAULT_NAME, resolve
from .progress import Progress
from .student.model import student_trees
from .student.file import is_student, student_from_blob
from .text.tokens import DEFAULT_PUNCT, PUNCT_POLICIES, Preprocessor, normalize_word
from .gold.treebank import Gold, load_gold

#: Label of every internal node of the nltk trees a parser returns.
NODE_LABEL = "X"
#: Sentences processed together by the list methods (bounds memory on long inputs).
CHUNK = 4096

SentenceInput = Union[str, Sequence[str]]


def load(model: Union[None, str, os.PathLike, Sequence[Union[str, os.PathLike]]] = None, device: str = "auto", *,
         layers: Optional[Sequence[int]] = None, decoders: Optional[Sequence[str]] = None,
         voters: Optional[Sequence[str]] = None, ties: Optional[str] = None,
         batch_size: Optional[int] = None, verify: bool = True) -> "Parser":
    """Load a parser.

    ``model``: None (the model bundled with onparse), a checkpoint, student or bundle path, or a
    list of them (their trees are averaged; None in the list is the bundled model).  ``device``: ``auto`` (a GPU when there is one), ``cpu``,
    ``cuda`` or ``cuda:N``.  ``layers`` / ``decoders``: read trees off these layers (1-based, or
    ``"all"``) with these decoders (:data:`onparse.trees.decode.DECODERS`, or ``"all"``), for every
    model; by default a bundle's own members and layer 2 with the paper's decoder for a
    checkpoint (:func:`onparse.members.grid`).  ``voters``: baseline trees
    that join the average (``["right"]``; :data:`onparse.trees.baselines.VOTER_KINDS`) and ``ties``:
    the average's tie rule (:data:`onparse.trees.average.TIES`); by default the first bundle's own,
    else none and ``first``.  ``batch_size``: sentences per batch (default 64 on CPU, 512 on GPU).
    ``verify=False`` loads files whose weights do not match their recorded checksum.

    Cost: reading the files (a second or two for the bundled model); nothing runs until asked.
    """
    if model is None or isinstance(model, (str, os.PathLike)):
        paths = [model]
    else:
        paths = list(model)
        if not paths:
            raise OnparseError("no model given")
    dev = resolve_device(device)
    models, names, own_members, metadata, voting = [], [], [], None, None
    for path in paths:
        file = resolve(None if path is None else os.fspath(path))
        name = DEFAULT_NAME if path is None else os.fspath(path)
        blob = load_model_file(file, verify=verify)
        offset = len(models)
        if "models" in blob:  # a bundle
            for i, entry in enumerate(blob["models"]):
                models.append(_from_blob(entry, file, dev))
                names.append(f"{name} [{i + 1}]")
            own_members += [Member(m["model"] + offset, m["layer"], m["decoder"]) for m in blob["members"]]
            meta = dict(blob.get("metadata") or {})
            if voting is None:
                voting = bundle_voting(blob)
        else:
            models.append(_from_blob(blob, file, dev))
            names.append(name)
            own_members.append(student_member(offset) if is_student(blob) else Member(offset, DEFAULT_LAYER, DEFAULT_DECODER))
            meta = dict(blob.get("metadata") or {})
        if metadata is None:
            metadata = meta
    if layers is not None or decoders is not None:
        own_members = grid([m.n_layers for m in models], layers, decoders)
    own_voters, own_ties = voting or ((), DEFAULT_TIES)
    return Parser(models, own_members, names, metadata or {}, batch_size=batch_size,
                  voters=tuple(own_voters if voters is None else voters), ties=own_ties if ties is None else ties)


def _from_blob(blob, path, device) -> LoadedModel:
    return student_from_blob(blob, path, device) if is_student(blob) else model_from_blob(blob, path, device)


@dataclass
class Scores:
    """What :meth:`Parser.score` measured: one :class:`onparse.scores.metrics.EvalResult` per member,
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

    Attributes: ``models`` (:class:`onparse.files.checkpoint.LoadedModel` each), ``members``,
    ``names`` (where each model came from), ``metadata`` (of the first file), ``voters`` and
    ``ties`` (the average's voters and tie rule), ``too_long`` (sentences so far whose tree is
    their first member's because they were too long to average, or a lone student's built in
    pieces because they were too long for its CYK; :mod:`onparse.trees.average`).
    """

    models: List[Any]
    members: List[Member]
    names: List[str] = field(default_factory=list)
    metadata: Dict[str, Any] = field(default_factory=dict)
    batch_size: Optional[int] = None
    max_tokens: Optional[int] = None
    voters: Tuple[str, ...] = ()
    ties: str = DEFAULT_TIES
    too_long: int = field(default=0, init=False)

    @classmethod
    def from_model(cls, model, vocab, members: Optional[Sequence[Member]] = None, **options) -> "Parser":
        """A parser over one in-memory :class:`onparse.lm.model.ONLSTMLanguageModel` and its
        :class:`onparse.text.vocab.Vocabulary` (default member: layer 2, the paper's decoder)."""
        return cls([LoadedModel(model.eval(), vocab, {})],
                   list(members or [Member(0, DEFAULT_LAYER, DEFAULT_DECODER)]), ["model"], **options)

    def __post_init__(self):
        if not self.models or not self.members:
            raise OnparseError("a parser needs at least one model and one member")
        for m in self.members:
            check_member(m, self.models[m.model].n_layers)
        try:
            self.voters = check_voters(self.voters)
            check_ties(self.ties)
        except ValueError as err:
            raise OnparseError(str(err)) from None
        if self.batch_size is None:
            # A GPU needs wide batches to be busy; on a CPU 64 sentences already make the
            # matrix products efficient, and wider ones only add padding.
            self.batch_size = 512 if self.device.type == "cuda" else 64
        if self.max_tokens is None:
            self.max_tokens = max(8192, 128 * self.batch_size)

    # -- what it is ---------------------------------------------------------------------------
    @property
    def vocab(self):
        """The first model's vocabulary: it decides tokenisation and what counts as a word."""
        return self.models[0].vocab

    def language_model(self, index: int = 0) -> LoadedModel:
        """Model ``index`` (0-based) when it is a language model; OnparseError for a student,
        which has no distances or perplexity."""
        loaded = self.models[index]
        if loaded.n_layers is None:
            name = self.names[index] if index < len(self.names) else f"model {index + 1}"
            raise OnparseError(f"{name} is a student parser: it has no distances or perplexity; "
                               "give a language model (a checkpoint, or a bundle of them)")
        return loaded

    @property
    def device(self):
        return next(self.models[0].model.parameters()).device

    @property
    def averages(self) -> bool:
        """Whether a sentence's tree is an average (several members, or any voter)."""
        return len(self.members) + len(self.voters) > 1

    def with_members(self, members: Sequence[Member], voters: Optional[Sequence[str]] = None,
                     ties: Optional[str] = None) -> "Parser":
        """The same models read by other members (and, when given, other voters or tie rule)."""
        return Parser(self.models, list(members), self.names, self.metadata, self.batch_size, self.max_tokens,
                      tuple(self.voters if voters is None else voters), self.ties if ties is None else ties)

    def with_grid(self, layers=None, decoders=None) -> "Parser":
        """The same models read by every model x layer x decoder (:func:`onparse.members.grid`:
        lists, or ``"all"``; None means layer 2 / the paper's decoder); voters and ties kept.
        :class:`onparse.members.MemberError` for a layer or decoder that does not exist."""
        return self.with_members(grid([m.n_layers for m in self.models], layers, decoders))

    def save_bundle(self, path, *, weights: str = "float16", metadata: Optional[Dict[str, Any]] = None) -> None:
        """Write the parser as a bundle file (:mod:`onparse.files.bundle`): the models its members read,
        the members, voters and tie rule; ``weights``: how the weights are stored
        (:data:`onparse.files.weights.WEIGHT_KINDS`).  ``load(path)`` gives the same trees back."""
        save_models(path, self.models, self.members, weights=weights, metadata=metadata,
                    voters=self.voters, ties=self.ties)

    def describe_average(self) -> str:
        """``layer 2 onlstm`` for one member, else :func:`average_label`."""
        if not self.averages:
            return self.members[0].label(len(self.models))
        return average_label(len(self.members), self.voters, self.ties)

    # -- text -> tokens -----------------------------------------------------------------------
    def preprocessor(self, tokenize: bool = True, punct: str = DEFAULT_PUNCT) -> Preprocessor:
        """How raw text becomes tokens (:class:`onparse.text.tokens.Preprocessor`) for this parser."""
        if punct not in PUNCT_POLICIES:
            raise OnparseError(f"unknown punctuation policy {punct!r}; choose from {', '.join(PUNCT_POLICIES)}")
        return Preprocessor(self.vocab, tokenize, punct)

    def tokens(self, sentences: Iterable[SentenceInput], tokenize: bool = True, punct: str = DEFAULT_PUNCT) -> List[List[str]]:
        """The tokens the models read: a string is tokenised and its punctuation dropped (as
        ``onparse induce`` does); a list of tokens is used as given."""
        prep = self.preprocessor(tokenize, punct)
        return [prep(s).tokens if isinstance(s, str) else list(s) for s in sentences]

    # -- tokens -> distances -> trees ---------------------------------------------------------
    def model_distances(self, token_lists: Sequence[Sequence[str]], progress=None) -> List[List[Any]]:
        """``[model][sentence]`` float32 arrays (n_layers, 2, n): master-forget ``[l, 0]`` and
        master-input ``[l, 1]`` distances of layer l + 1, for the layers the members read
        (None for a model no member reads the distances of, and for a student).

        ``progress(k)``: called with the sentences of each batch done, model after model.
        Cost: one batched forward pass per model (sentences sorted by length, batches bounded
        by ``batch_size`` sentences and ``max_tokens`` padded tokens); O(total words) memory."""
        out = []
        for index, loaded in enumerate(self.models):
            layers = [m.layer for m in self.members if m.model == index and not m.student]
            if not layers:
                out.append(None)
                continue
            ids = self.ids(token_lists, index)
            out.append(sentence_distances(loaded.model, ids, loaded.vocab.eos_id, max(layers),
                                          self.batch_size, self.max_tokens, progress))
        return out

    def ids(self, token_lists: Sequence[Sequence[str]], model: int = 0) -> List[List[int]]:
        """Ids of the tokens in model ``model``'s vocabulary (normalised; unknown -> ``<unk>``)."""
        index = self.models[model].vocab.index
        return [[index(normalize_word(t)) for t in tokens] for tokens in token_lists]

    def member_trees(self, token_lists: Sequence[Sequence[str]], dists=None, progress=None) -> List[List[Any]]:
        """Per sentence, each member's tree (nested tuples; None for an empty sentence);
        ``progress`` as for :meth:`model_distances` (students after the language models).
        A student's tree of a sentence too long for CYK (:mod:`onparse.trees.average` ``MAX_WORDS``)
        is built in pieces; without averaging such a sentence is counted in :attr:`too_long`
        (with averaging, :meth:`average` counts it)."""
        dists = self.model_distances(token_lists, progress) if dists is None else dists
        taught = {m.model: student_trees(self.models[m.model].model, self.models[m.model].vocab, token_lists,
                                         self.batch_size, progress)
                  for m in self.members if m.student}
        if taught and not self.averages:
            self.too_long += len(next(iter(taught.values())).too_long)
        out = []
        for i, tokens in enumerate(token_lists):
            tokens = list(tokens)
            if not tokens:
                out.append([None] * len(self.members))
                continue
            out.append([taught[m.model][i] if m.student else decode(dists[m.model][i][m.layer - 1, 0], tokens, m.decoder)
                        for m in self.members])
        return out

    def trees(self, token_lists: Sequence[Sequence[str]], dists=None, progress=None) -> List[Any]:
        """One tree per token list (nested tuples; None for an empty one): the member's tree,
        or the average of the members' and voters' trees; ``progress`` as for
        :meth:`member_trees`.  Cost: the distances, then O(n) per member tree (O(n^3) for a
        student's) and O(n^3) per average."""
        per_sentence = self.member_trees(token_lists, dists, progress)
        if not self.averages:
            return [trees[0] for trees in per_sentence]
        full = [i for i, t in enumerate(token_lists) if len(t)]
        out: List[Any] = [None] * len(token_lists)
        for i, tree in zip(full, self.average([per_sentence[i] for i in full], [token_lists[i] for i in full])):
            out[i] = tree
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
        Sentences run in batches of similar length, ``CHUNK`` at a time."""
        out: List[Optional[Any]] = []
        sentences = list(sentences)
        for at in range(0, len(sentences), CHUNK):
            tokens = self.tokens(sentences[at:at + CHUNK])
            out.extend(None if t is None else to_nltk(t) for t in self.trees(tokens))
        return out

    def parse_sents(self, sents: Iterable[SentenceInput], *args, **kwargs) -> Iterator[Iterator[Any]]:
        """For each sentence, an iterator over its one tree (empty when no word is left), in
        input order; computed ``CHUNK`` sentences at a time, in batches."""
        chunk: List[SentenceInput] = []
        for sentence in sents:
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

    def distances(self, sentence: SentenceInput, layer: int = 2, gate: str = "forget", model: int = 0):
        """The distances of one sentence at ``layer`` (1-based) of model ``model``: a float32
        array of shape (n,), one value per token (:meth:`tokens` tells which tokens)."""
        if gate not in GATES:
            raise OnparseError(f"unknown gate {gate!r}; choose from {', '.join(GATES)}")
        check_layer(layer, self.language_model(model).model.config.n_layers)
        tokens = self.tokens([sentence])
        reader = self.with_members([Member(model, layer, DEFAULT_DECODER)])
        return reader.model_distances(tokens)[model][0][layer - 1, GATES[gate]]

    # -- scoring -----------------------------------------------------------------------------
    def score(self, gold="wsj10", layers: Optional[Sequence[int]] = None,
              decoders: Optional[Sequence[str]] = None, ptb_root=None, quiet: bool = True) -> Scores:
        """Parse the sentences of a gold set and score the trees, per member and averaged.

        ``gold``: a name (``wsj10``, ``alpino10`` ...), a path, or a :class:`onparse.gold.treebank.Gold`.
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
        n_models = len({m.model for m in parser.members})
        with Progress(f"parsing {gold.name}", len(tokens) * n_models, "sentences", quiet) as bar:
            per_sentence = parser.member_trees(tokens, progress=bar.update)
        members = [(m, evaluate([trees[k] for trees in per_sentence], gold))
                   for k, m in enumerate(parser.members)]
        average = None
        if parser.averages:
            average = evaluate(parser.average(per_sentence, tokens), gold)
        return Scores(gold.name, members, average, len(self.models), parser.voters, parser.ties)

    def agreement(self, sentences: Iterable[SentenceInput], *, min_words: int = MIN_WORDS,
                  limit: Optional[int] = None, quiet: bool = True) -> List[Tuple[Member, float]]:
        """Each member's agreement score on unlabelled ``sentences`` (:mod:`onparse.scores.agreement`:
        its mean share of non-trivial spans shared with the members of the other models), in
        member order.  No gold tree is involved, so the score may choose members.

        Sentences are read as :meth:`tokens` reads them; those of fewer than ``min_words``
        (at least :data:`onparse.scores.agreement.MIN_WORDS`, 3) tokens are skipped, and only
        the first ``limit`` of the others are used.  Unless ``quiet``, progress on stderr.
        Cost: the distances and member trees of those sentences, then O(K^2 n) per sentence."""
        if min_words < MIN_WORDS:
            raise OnparseError(f"agreement needs sentences of at least {MIN_WORDS} words (min_words >= {MIN_WORDS})")
        if len(self.members) < 2:
            raise OnparseError("agreement needs at least two members (several models, layers or decoders)")
        tokens = [t for t in self.tokens(sentences) if len(t) >= min_words][:limit]
        if not tokens:
            raise OnparseError(f"no sentence of at least {min_words} words to measure agreement on")

        n_models = len({m.model for m in self.members})
        with Progress("agreement", len(tokens) * n_models, "sentences", quiet) as bar:
            trees = self.member_trees(tokens, progress=bar.update)
        scores = agreement_scores(trees, [m.model for m in self.members])
        return list(zip(self.members, scores))

    def distill(self, text, student, **options):
        """Train a student parser on this parser's trees of the lines of the file ``text`` and
        write it to ``student`` (:func:`onparse.student.distill.distill`: ``run_dir``, ``sizes``,
        ``settings``, ``resume`` ...); returns a :class:`onparse.student.distill.DistillResult`.
        ``onparse.load(student)`` reads the student back, alone or beside other models."""
        return distill(self, os.fspath(text), os.fspath(student), **options)

    # -- language modelling --------------------------------------------------------------------
    def perplexity(self, corpus: Optional[str] = None, split: Optional[str] = None, *, fmt: str = "auto",
                   batch_size: Optional[int] = None, bptt: Optional[int] = None, quiet: bool = False) -> List[Any]:
        """The perplexity of each model of the parser (a bundle's models one by one): one
        :class:`onparse.lm.perplexity.PerplexityResult` per model, in order, whose ``corpus`` says
        what was measured (``"wsj test"``).

        ``corpus``: None (each model's own training corpus, as its checkpoint records it), a
        built-in name (``news``, ``wsj`` ...) or a text file; ``split``: ``train``, ``valid``,
        ``test`` (default for a name or the recorded corpus) or ``all`` (default for a file);
        ``fmt``: a file's format (:data:`onparse.text.corpora.FORMATS`).  ``batch_size`` / ``bptt``:
        parallel streams and window length, by default those of each model's training run (else
        10 and 70), so that the figure matches the trainer's.

        Progress goes to stderr (a bar on a terminal, a line a minute otherwise; ``quiet``: none).
        Cost: per model, one forward pass over the text without gradients, on the parser's
        device; memory of the order of ``batch_size x bptt x vocabulary`` for the logits.
        """
        return [measure_model(self.language_model(i), corpus, split, fmt, batch_size, bptt,
                              name=self.names[i] if i < len(self.names) else f"model {i + 1}", quiet=quiet)
                for i in range(len(self.models))]


def to_nltk(tree) -> Any:
    """A nested-tuple tree as an :class:`nltk.Tree` (internal nodes labelled ``X``), without
    recursion."""
    from nltk import Tree

    if isinstance(tree, str):
        return Tree(NODE_LABEL, [tree])
    # Post-order over the tuples: convert children before their parent.
    done: Dict[int, Any] = {}
    stack = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if isinstance(node, str):
            continue
        if expanded:
            done[id(node)] = Tree(NODE_LABEL, [c if isinstance(c, str) else done[id(c)] for c in node])
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in node)
    return done[id(tree)]

"""Where language-model text comes from, and how it becomes batches of token ids.

A corpus is three lists of sentences (``train``, ``valid``, ``test``), each sentence a list of
normalised words.  Sources (the ``--corpus`` argument of ``onparse train``):

* ``news`` (default): free news text that holds no sentence of NLTK's ``treebank`` sample, the
  evaluation set: ``conll2000`` (WSJ sections 15-18 and 20, POS-tagged, so punctuation goes by
  tag as in the gold trees), the press sections of ``brown`` (news, editorials and reviews of
  1961, 250k words, punctuation by Brown tag as below), then ``abc`` (Australian Broadcasting Commission news and
  science, 767k words of raw text: sentences split by NLTK's Punkt splitter with its default
  parameters, words by :func:`onparse.text.tokens.tokenize`, punctuation by the word rule of
  :mod:`onparse.text.tokens`).  A sentence is removed when its words equal those of a sample sentence,
  or when a sample sentence of :data:`HOLD_OUT_MIN_WORDS` or more words occurs in it as a
  contiguous run (WSJ's boilerplate such as "call money N %" recurs inside longer
  sentences), so no evaluation sentence is training, validation or test text.
* ``conll2000`` and ``conll2000+press``: the in-domain parts of ``news`` alone: WSJ's
  ``conll2000`` text, and the same followed by Brown's press sections, with the same removal of
  the evaluation sample's sentences.
* ``alpino``, ``cess_esp``, ``floresta``: the text of NLTK's Dutch, Spanish and Portuguese
  treebanks, leaves dropped by each treebank's tag set as in its gold trees, split as
  :mod:`onparse.gold.multilingual` says: training and validation never hold a sentence of the
  held-out gold sets ``alpino-test`` ..., whose text is the test split.
* ``wsj``: the embedded WSJ text, the raw sentences of NLTK's ``treebank`` sample
  (WSJ sections 00-01) followed by ``conll2000`` (sections 15-18 and 20).  Both are POS-tagged,
  so punctuation, currency signs and empty elements are dropped by tag
  (:data:`onparse.text.tokens.WORD_TAGS`), exactly as the gold trees drop them.
* ``wsj+brown``: ``wsj``'s training part followed by all of ``brown`` (4x the text), validated
  and tested on ``wsj``'s held-out parts, so its perplexities are WSJ perplexities.
* ``brown``: NLTK's Brown corpus.  Its tagset is not the Penn tagset, so the PTB word-tag list
  does not apply; a token is dropped when its Brown tag, with the ``-HL``/``-TL``/``-NC``
  suffixes removed, holds no letter (``. , : ( ) -- `` '' '``), except ``*``, which Brown uses
  for the word *not* / *n't*.
* a text file, one sentence per line, tokenised by :func:`onparse.text.tokens.tokenize` (format
  ``text``) or split on whitespace (format ``tokens``, for pre-tokenised text); punctuation is
  dropped by the word rule (:func:`onparse.text.tokens.is_punct`).
* a text file of pre-tokenised sentences whose every token is a word, such as ``onparse
  gold-text``'s (format ``pretokenized``): split on whitespace and every token kept, by
  :func:`onparse.text.tokens.pretokenized_tokens`, the function ``induce --pretokenized`` reads
  lines with, so a model trains on the tokens it is later given (a treebank's ``’`` tagged POS,
  or ``、`` tagged as a conjunction, which the word rule would drop).
* a file in the PTB language-model format (``ptb.train.txt``, Mikolov's preprocessing: already
  lowercased, numbers as ``N``, ``<unk>`` for rare words, no punctuation): tokens are used
  verbatim so that perplexities compare with the literature.  ``format="auto"`` picks this
  format for files named ``ptb.*.txt``.

Every word is normalised with :func:`onparse.text.tokens.normalize_word` (lowercase, digit runs to
``N``) except in the PTB format.

Held-out split (when no validation file is given): :mod:`onparse.text.splits`'s rule with its text
layout, about 5% validation and 5% test, spread over the whole corpus in paragraph-sized runs
(so every source and every part of a file is represented), and independent of any random seed.
"""
import functools
import os
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple

from .data import require
from ..arguments import ArgumentTypeError
from ..errors import OnparseError
from ..gold.multilingual import text_sentences
from .splits import PERIOD as HELD_OUT_PERIOD, TEXT_LAYOUT, split
from .tokens import WORD_TAGS, normalize_word, pretokenized_tokens, text_problem, tokenize, words_of
from ..gold.treebank import load_gold

Sentence = List[str]

#: Built-in corpus names accepted by ``--corpus``, the default first.
NAMES = ("news", "conll2000", "conll2000+press", "wsj", "brown", "wsj+brown", "alpino", "cess_esp",
         "floresta")
#: Corpora whose three splits come from a treebank's own held-out rule.
TREEBANK_NAMES = ("alpino", "cess_esp", "floresta")
#: The corpus ``onparse train`` reads when none is named.
DEFAULT = NAMES[0]
#: How a corpus file is read (:func:`resolve_format`, :func:`read_sentences`), the default first.
FORMATS = ("auto", "text", "tokens", "pretokenized", "ptb")
#: The parts of a corpus (:meth:`Corpus.split`).
SPLITS = ("train", "valid", "test", "all")

_BROWN_SUFFIX = re.compile(r"(-(HL|TL|NC))+$")
_LETTER = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class CorpusSpec:
    """What to read: a built-in name or a file (absolute path), its format, and optional
    separate validation and test files.  Stored in checkpoints (:meth:`to_dict`) so that
    ``onparse perplexity`` can rebuild the same splits."""

    source: str
    format: str = "auto"
    valid: Optional[str] = None
    test: Optional[str] = None

    def to_dict(self) -> dict:
        return {"source": self.source, "format": self.format, "valid": self.valid, "test": self.test}

    @classmethod
    def from_dict(cls, d) -> "CorpusSpec":
        if not isinstance(d, dict) or set(d) - {"source", "format", "valid", "test"} or "source" not in d:
            raise ValueError(f"bad corpus description: {d!r}")
        return cls(**d)

    @property
    def is_named(self) -> bool:
        return self.source in NAMES


@dataclass
class Corpus:
    """Normalised sentences of the three splits (``test`` may be empty)."""

    name: str
    train: List[Sentence]
    valid: List[Sentence]
    test: List[Sentence]

    def split(self, which: str) -> List[Sentence]:
        """``train``, ``valid``, ``test``, or ``all`` (the three concatenated)."""
        if which == "all":
            return self.train + self.valid + self.test
        if which not in ("train", "valid", "test"):
            raise ValueError(f"unknown split {which!r}")
        return getattr(self, which)


# -- filters ---------------------------------------------------------------------------------
def ptb_tagged_words(tagged: Iterable[Tuple[str, str]]) -> Sentence:
    """Words of a PTB-tagged sentence: word tags only, normalised.

    >>> ptb_tagged_words([("Pierre", "NNP"), (",", ","), ("61", "CD"), ("*-1", "-NONE-"), (".", ".")])
    ['pierre', 'N']
    """
    return [normalize_word(w) for w, tag in tagged if tag in WORD_TAGS]


def is_brown_punct_tag(tag: str) -> bool:
    """True for a Brown tag that marks punctuation (see the module docstring).

    >>> [is_brown_punct_tag(t) for t in (".", ",-HL", "--", "*", "NN-TL", "'")]
    [True, True, True, False, False, True]
    """
    base = _BROWN_SUFFIX.sub("", tag)
    return base != "*" and _LETTER.search(base) is None


def brown_tagged_words(tagged: Iterable[Tuple[str, str]]) -> Sentence:
    """Words of a Brown-tagged sentence: punctuation dropped by tag, normalised."""
    return [normalize_word(w) for w, tag in tagged if not is_brown_punct_tag(tag)]


def text_line_words(line: str, pretokenized: bool = False) -> Sentence:
    """Words of one line of untagged text: tokenised (:func:`onparse.text.tokens.tokenize`, or split on
    whitespace when ``pretokenized``), punctuation dropped by the word rule, normalised.

    >>> text_line_words("The cat sat on the mat, at 3.5 km/h.")
    ['the', 'cat', 'sat', 'on', 'the', 'mat', 'at', 'N.N', 'km/h']
    >>> text_line_words("你好 世界")
    ['你好', '世界']
    """
    return words_of(line.split() if pretokenized else tokenize(line))


# -- sources ---------------------------------------------------------------------------------
def news_sentences() -> List[Sentence]:
    """The ``news`` corpus: ``conll2000``, Brown's press sections, then ``abc``, without any
    sentence of the evaluation sample (module docstring)."""
    return [list(s) for s in _named_sentences("news")]


def abc_sentences() -> List[Sentence]:
    """NLTK's ``abc`` corpus (rural news, then science), split into sentences and words as raw
    text is (module docstring); sentences left without words are skipped."""
    require("abc")
    import nltk
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    splitter = PunktSentenceTokenizer()   # default parameters: nothing to download
    out: List[Sentence] = []
    # The two files' encodings, as NLTK's own abc reader declares them.
    for name, encoding in (("rural.txt", "utf-8"), ("science.txt", "latin-1")):
        with nltk.data.find(f"corpora/abc/{name}").open() as handle:
            text = handle.read().decode(encoding)
        for line in text.splitlines():
            for sentence in splitter.tokenize(line.strip()):
                words = text_line_words(sentence)
                if words:
                    out.append(words)
    return out


#: Sample sentences of at least this many words are also removed where they occur inside a sentence.
HOLD_OUT_MIN_WORDS = 5


def holds_evaluation_text(sentence: Sequence[str], held_out: frozenset, by_head: dict) -> bool:
    """True when ``sentence`` is a held-out sentence, or contains one of at least
    :data:`HOLD_OUT_MIN_WORDS` words (``by_head`` indexes those by their first words)."""
    if tuple(sentence) in held_out:
        return True
    n = HOLD_OUT_MIN_WORDS
    for i in range(len(sentence) - n + 1):
        for needle in by_head.get(tuple(sentence[i:i + n]), ()):
            if tuple(sentence[i:i + len(needle)]) == needle:
                return True
    return False


def evaluation_sentences() -> frozenset:
    """Word tuples of every sentence of NLTK's ``treebank`` sample, as the gold reads them:
    the text no training corpus may hold."""
    return frozenset(load_gold("wsj").tokens)


def _read_held_out(parts: Sequence[str]) -> List[Sentence]:
    """The sentences of ``parts`` (``conll2000``, ``press``, ``abc``, in that order), less every
    one that :func:`holds_evaluation_text`."""
    held_out = evaluation_sentences()
    by_head: dict = {}
    for needle in held_out:
        if len(needle) >= HOLD_OUT_MIN_WORDS:
            by_head.setdefault(needle[:HOLD_OUT_MIN_WORDS], []).append(needle)
    sents: List[Sentence] = []
    if "conll2000" in parts:
        require("conll2000")
        from nltk.corpus import conll2000

        sents += [s for s in map(ptb_tagged_words, conll2000.tagged_sents()) if s]
    if "press" in parts:
        sents += _read_brown(categories=BROWN_PRESS)
    if "abc" in parts:
        sents += abc_sentences()
    return [s for s in sents if not holds_evaluation_text(s, held_out, by_head)]


#: What each held-out named corpus is made of.
_HELD_OUT_PARTS = {"news": ("conll2000", "press", "abc"), "conll2000": ("conll2000",),
                   "conll2000+press": ("conll2000", "press")}
#: The named corpora that hold no sentence of the evaluation sample.
HELD_OUT_NAMES = tuple(_HELD_OUT_PARTS)


def wsj_sentences() -> List[Sentence]:
    """The embedded WSJ text: NLTK ``treebank`` (3,914 sentences) then ``conll2000`` (10,948),
    punctuation dropped by PTB tag, normalised; sentences left empty are skipped."""
    return [list(s) for s in _named_sentences("wsj")]


def brown_sentences(fileids: Optional[Sequence[str]] = None) -> List[Sentence]:
    """NLTK's Brown corpus (or some of its files), punctuation dropped by Brown tag, normalised."""
    if fileids is None:
        return [list(s) for s in _named_sentences("brown")]
    return _read_brown(fileids)


def _read_wsj() -> List[Sentence]:
    require("treebank")
    require("conll2000")
    from nltk.corpus import conll2000, treebank

    tagged = list(treebank.tagged_sents()) + list(conll2000.tagged_sents())
    return [s for s in map(ptb_tagged_words, tagged) if s]


#: Brown's newspaper categories, part of the ``news`` corpus.
BROWN_PRESS = ("news", "editorial", "reviews")


def _read_brown(fileids=None, categories=None) -> List[Sentence]:
    require("brown")
    from nltk.corpus import brown

    tagged = brown.tagged_sents(fileids=fileids, categories=categories)
    return [s for s in map(brown_tagged_words, tagged) if s]


@functools.lru_cache(maxsize=3)
def _named_sentences(name: str) -> Tuple[Tuple[str, ...], ...]:
    # Cached: reading NLTK's files takes seconds, and perplexity runs and tests reread them.
    if name in _HELD_OUT_PARTS:
        sents = _read_held_out(_HELD_OUT_PARTS[name])
    elif name == "wsj":
        sents = _read_wsj()
    elif name == "brown":
        sents = _read_brown()
    else:
        raise OnparseError(f"unknown corpus name '{name}'; known: {', '.join(NAMES)}")
    return tuple(tuple(s) for s in sents)


def resolve_format(path: str, fmt: str = "auto") -> str:
    """A format of :data:`FORMATS` but ``auto``, which is ``ptb`` for files named ``ptb.*.txt``, else ``text``."""
    if fmt not in FORMATS:
        raise OnparseError(f"unknown corpus format '{fmt}'; known: {', '.join(FORMATS)}")
    if fmt != "auto":
        return fmt
    base = os.path.basename(path)
    return "ptb" if base.startswith("ptb.") and base.endswith(".txt") else "text"


def check_corpus_file(path: str) -> None:
    """A one-line OnparseError when ``path`` names no file that text can be read from: missing,
    or a folder.  Devices and pipes are read (``/dev/null`` is then an empty corpus)."""
    if not os.path.exists(path):
        raise OnparseError(f"corpus file not found: {path} (built-in corpora: {', '.join(NAMES)})")
    if os.path.isdir(path):
        raise OnparseError(f"corpus {path} is a folder; give a file with one sentence per line")


class TooFewSentences(OnparseError):
    """A corpus too small for the held-out split (:func:`held_out_split`); ``sentences``: how many."""

    def __init__(self, message: str, sentences: int):
        super().__init__(message)
        self.sentences = sentences


def read_sentences(path: str, fmt: str = "auto") -> List[Sentence]:
    """Sentences of a file with one sentence per line (empty lines, and lines left empty once
    punctuation is dropped, are skipped)."""
    check_corpus_file(path)
    fmt = resolve_format(path, fmt)
    try:
        with open(path, encoding="utf-8-sig") as handle:        # "-sig": a byte-order mark at the start goes
            lines = handle.readlines()
    except UnicodeDecodeError as err:
        raise OnparseError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})")
    except OSError as err:
        raise OnparseError(f"cannot read {path}: {err.strerror}")
    for number, line in enumerate(lines, 1):
        problem = text_problem(line)
        if problem:
            raise OnparseError(f"{path} line {number} {problem}")
    return [s for s in map(_line_reader(fmt), lines) if s]


def _line_reader(fmt: str):
    """How a line of a file in format ``fmt`` (resolved, not ``auto``) becomes its words."""
    if fmt == "ptb":
        return str.split                    # verbatim: the benchmark's own tokens
    if fmt == "pretokenized":
        return lambda line: [normalize_word(token) for token in pretokenized_tokens(line)]
    return functools.partial(text_line_words, pretokenized=fmt == "tokens")


def held_out_split(sentences: Sequence[Sentence]) -> Tuple[List[Sentence], List[Sentence], List[Sentence]]:
    """Deterministic (train, valid, test) split of ``sentences`` (:data:`onparse.text.splits.TEXT_LAYOUT`).

    >>> tr, va, te = held_out_split([[str(i)] for i in range(40)])
    >>> [s[0] for s in va], [s[0] for s in te], len(tr)
    (['18', '38'], ['19', '39'], 36)
    """
    n = len(sentences)
    if n < HELD_OUT_PERIOD:
        raise TooFewSentences(f"corpus has only {n} sentence{'' if n == 1 else 's'}; at least {HELD_OUT_PERIOD} are "
                              "needed to hold out validation and test sentences (or pass a validation file)", n)
    parts = split(sentences, TEXT_LAYOUT)
    return tuple([list(s) for s in parts[name]] for name in ("train", "valid", "test"))


def load_corpus(spec: CorpusSpec) -> Corpus:
    """Read the sentences ``spec`` describes and split them (held-out split unless ``spec.valid``).
    ``spec``: a :class:`CorpusSpec` (``onparse.corpus_spec(path)`` makes one of a path or a corpus
    name).  A read of a minute or more says so on stderr each minute (:class:`onparse.progress.Progress`)."""
    from ..progress import Progress

    if not isinstance(spec, CorpusSpec):
        raise ArgumentTypeError(f"spec must be a CorpusSpec, not {type(spec).__name__} ({spec!r}): "
                                "onparse.corpus_spec(path) makes one of a path or a corpus name")

    with Progress(f"reading the corpus {spec.source}", what=None):
        return _load_corpus(spec)


def _load_corpus(spec: CorpusSpec) -> Corpus:
    if spec.source == "wsj+brown":
        train, valid, test = held_out_split(wsj_sentences())
        return Corpus(spec.source, train + brown_sentences(), valid, test)
    if spec.source in TREEBANK_NAMES:
        return Corpus(spec.source, *(text_sentences(spec.source, part) for part in ("train", "valid", "test")))
    if spec.is_named:
        sentences = [list(s) for s in _named_sentences(spec.source)]
    else:
        sentences = read_sentences(spec.source, spec.format)
    if not sentences:
        raise OnparseError(f"corpus {spec.source} is empty (no words once punctuation is dropped)")
    if spec.valid is None:
        if spec.test is not None:
            raise OnparseError("a test file needs a validation file too (--valid)")
        train, valid, test = held_out_split(sentences)
    else:
        train = sentences
        valid = read_sentences(spec.valid, spec.format)
        if not valid:
            raise OnparseError(f"validation file {spec.valid} is empty")
        test = read_sentences(spec.test, spec.format) if spec.test is not None else []
    return Corpus(spec.source, train, valid, test)


def make_spec(source: str, fmt: str = "auto", valid: Optional[str] = None,
              test: Optional[str] = None) -> CorpusSpec:
    """A :class:`CorpusSpec` from command-line values: a built-in name stays a name, a path is
    made absolute (so a checkpoint can find it again from another folder)."""
    if fmt not in FORMATS:
        raise OnparseError(f"unknown corpus format '{fmt}'; known: {', '.join(FORMATS)}")

    def absolute(path):
        return None if path is None else os.path.abspath(path)

    if source in NAMES:
        if valid is not None or test is not None:
            raise OnparseError(f"--valid/--test go with a corpus file, not the built-in corpus '{source}'")
        if fmt == "pretokenized":
            # A built-in corpus keeps its words by its own tags; no format changes that.
            raise OnparseError(f"pre-tokenised text is a corpus file, not the built-in corpus '{source}'")
        return CorpusSpec(source, fmt)
    check_corpus_file(source)
    return CorpusSpec(absolute(source), fmt, absolute(valid), absolute(test))


# -- ids and batches -------------------------------------------------------------------------
def encode_stream(sentences: Iterable[Sentence], vocab):
    """One long id sequence: each sentence's words followed by ``<eos>``.  Returns a (N,) LongTensor."""
    import torch

    ids: List[int] = []
    eos = vocab.eos_id
    for sent in sentences:
        ids.extend(vocab.encode(sent))
        ids.append(eos)
    return torch.tensor(ids, dtype=torch.long)


def batchify(stream, n_streams: int):
    """Cut a (N,) id sequence into ``n_streams`` contiguous streams, one per column: (N // B, B).

    The tail that does not fill a row is dropped, as in the AWD-LSTM recipe.
    """
    if n_streams < 1:
        raise ValueError(f"n_streams must be positive, got {n_streams}")
    length = stream.numel() // n_streams
    return stream[: length * n_streams].view(n_streams, length).t().contiguous()


def shard_streams(data, rank: int, world_size: int):
    """The columns (streams) of ``data`` (N, B) that ``rank`` of ``world_size`` trains on:
    a contiguous slice of B / world_size streams."""
    batch = data.shape[1]
    if batch % world_size:
        raise OnparseError(f"batch size {batch} is not divisible by the number of processes {world_size}")
    per = batch // world_size
    return data[:, rank * per:(rank + 1) * per].contiguous()

"""Sentences of raw text: Punkt sentence splitting (``--split-sentences``) and the note for lines
that look like paragraphs.

onparse reads one sentence per line.  A line holding a paragraph is parsed as one long tree,
which is rarely what the writer of the text meant, so the commands that read raw text count the
lines that look like several sentences (:class:`ParagraphCheck`) and say so once on stderr, and
``--split-sentences`` parses each sentence of a line on its own (:class:`SentenceSplitter`).

The splitter is NLTK's Punkt (Kiss and Strunk, 2006), which is unsupervised: its parameters --
the abbreviations it knows, collocations, the words that start sentences, and how each word is
capitalised where -- are learnt from raw text by ``nltk.tokenize.punkt.PunktTrainer``, with no
labels and no download.  Where they come from, first found first (:func:`params_from_models`
and the commands): a file written by ``onparse punkt TEXT --out FILE`` (``--punkt FILE``), the
``punkt`` key of a model's metadata (a student distilled with ``--split-sentences`` records the
parameters it used), else Punkt learns them from the first :data:`LEARN_CHARS` characters of
the input itself, and the command says so.  No torch here, and NLTK's Punkt is imported when
it is first used (the command line imports this module at start-up).
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence

from ..errors import OnparseError
from ..files.safeio import atomic_output, read_text

#: What a parameters file (and a model's ``punkt`` metadata) says it is.
PUNKT_FORMAT = "onparse-punkt"
PUNKT_VERSION = 1
#: Characters of the input Punkt learns from when no parameters are given (about 10 seconds).
LEARN_CHARS = 2_000_000
#: Text is handed to the trainer in pieces of this many characters (bounded memory).
PIECE_CHARS = 200_000
#: A line with at least this many sentence ends inside it (a sentence-final mark followed by a
#: capitalised word), or more than :data:`LONG_WORDS` words, looks like a paragraph.
MIN_ENDS = 2
LONG_WORDS = 100

_CLOSERS = "\"'’”»)]}"
_OPENERS = "\"'‘“«([{"
_ENDS = ".!?"
_LONE_END = re.compile(r"\s+([.!?]+)(?=\s|$)")          # "mat . The" (pre-tokenised): "mat. The"


# -- the parameters ------------------------------------------------------------------------------
def _punkt():
    """NLTK's Punkt module (half a second to import NLTK: not at start-up)."""
    from nltk.tokenize import punkt

    return punkt


def learn(lines: Iterable[str], limit: Optional[int] = None):
    """Punkt's parameters (``nltk.tokenize.punkt.PunktParameters``) learnt from ``lines`` (raw
    text, any line breaks), at most ``limit`` characters of them.  Cost: about 5 seconds a
    million characters."""
    trainer, piece, size, seen = _punkt().PunktTrainer(), [], 0, 0
    for line in lines:
        if limit is not None and seen >= limit:
            break
        piece.append(line)
        size += len(line) + 1
        seen += len(line) + 1
        if size >= PIECE_CHARS:
            trainer.train("\n".join(piece), finalize=False)
            piece, size = [], 0
    if piece:
        trainer.train("\n".join(piece), finalize=False)
    trainer.finalize_training()
    return trainer.get_params()


def params_to_dict(params) -> Dict[str, Any]:
    """The parameters as plain values (JSON, a model's metadata)."""
    return {"format": PUNKT_FORMAT, "version": PUNKT_VERSION,
            "abbrev_types": sorted(params.abbrev_types),
            "collocations": sorted([a, b] for a, b in params.collocations),
            "sent_starters": sorted(params.sent_starters),
            "ortho_context": dict(sorted(params.ortho_context.items()))}


def params_from_dict(blob: Any, source: str):
    """The parameters ``blob`` (:func:`params_to_dict`'s form) holds; a one-line OnparseError
    naming ``source`` when it is not such a record."""
    def bad(why: str) -> OnparseError:
        return OnparseError(f"{source}: not Punkt parameters of onparse ({why}; `onparse punkt TEXT --out FILE` "
                            "writes them)")

    if not isinstance(blob, dict) or blob.get("format") != PUNKT_FORMAT:
        raise bad("no \"format\": \"onparse-punkt\"")
    if blob.get("version") != PUNKT_VERSION:
        raise bad(f"version {blob.get('version')!r}")
    words = {key: blob.get(key) for key in ("abbrev_types", "sent_starters")}
    for key, value in words.items():
        if not (isinstance(value, list) and all(isinstance(w, str) for w in value)):
            raise bad(f"{key} is not a list of words")
    pairs, ortho = blob.get("collocations"), blob.get("ortho_context")
    if not (isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 and all(isinstance(w, str) for w in p)
                                            for p in pairs)):
        raise bad("collocations is not a list of word pairs")
    if not (isinstance(ortho, dict) and all(isinstance(k, str) and type(v) is int for k, v in ortho.items())):
        raise bad("ortho_context is not a map of words to flags")
    params = _punkt().PunktParameters()
    params.abbrev_types = set(words["abbrev_types"])
    params.sent_starters = set(words["sent_starters"])
    params.collocations = {(a, b) for a, b in pairs}
    for word, flags in ortho.items():
        params.ortho_context[word] = flags
    return params


def read_params(path: str):
    """The parameters of a file :func:`write_params` wrote; a one-line OnparseError otherwise."""
    try:
        blob = json.loads(read_text(path))
    except ValueError as err:
        raise OnparseError(f"{path}: not JSON ({err})") from None
    return params_from_dict(blob, path)


def write_params(params, path: str, about: Optional[Dict[str, Any]] = None) -> None:
    """Write the parameters to ``path`` as JSON, whole or not at all; ``about`` (what they were
    learnt from) is stored beside them."""
    blob = {**params_to_dict(params), **({"learnt_from": about} if about else {})}
    with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        json.dump(blob, handle, ensure_ascii=False, indent=1)
        handle.write("\n")


def params_from_models(metadata: Sequence[Dict[str, Any]], names: Sequence[str]):
    """The parameters the first of these metadata records (a parser's file's, then each model's,
    named by ``names``) holds under ``punkt``; None when none holds any."""
    for meta, name in zip(metadata, names):
        if isinstance(meta, dict) and "punkt" in meta:
            return params_from_dict(meta["punkt"], f"{name}: its punkt metadata")
    return None


# -- splitting -----------------------------------------------------------------------------------
class SentenceSplitter:
    """The sentences of lines of raw text, by Punkt.  ``params``: Punkt's parameters, or None:
    :meth:`lines` learns them from the first ``learn_chars`` characters of the lines it is given
    and calls ``on_learn(characters, lines)`` once it has."""

    def __init__(self, params=None, *, learn_chars: int = LEARN_CHARS,
                 on_learn: Optional[Callable[[int, int], None]] = None):
        self.params = params
        self.learn_chars, self.on_learn = learn_chars, on_learn
        self._tokenizer = None if params is None else _punkt().PunktSentenceTokenizer(params)

    def split(self, line: str) -> List[str]:
        """The sentences of one line (none for a blank line), in order, their text as written."""
        if self._tokenizer is None:
            raise OnparseError("the sentence splitter has no parameters yet: learn them first")
        return [s for s in self._tokenizer.tokenize(line) if s.strip()]

    def lines(self, lines: Iterable[str]) -> Iterator[List[str]]:
        """Each line's sentences (:meth:`split`), line by line.  Without parameters the first
        ``learn_chars`` characters of the lines are held in memory while Punkt learns from them."""
        lines = iter(lines)
        if self._tokenizer is None:
            start, size = [], 0
            while size < self.learn_chars:
                line = next(lines, None)
                if line is None:
                    break
                start.append(line)
                size += len(line) + 1
            self.params = learn(start)
            self._tokenizer = _punkt().PunktSentenceTokenizer(self.params)
            if self.on_learn is not None:
                self.on_learn(size, len(start))
            for line in start:
                yield self.split(line)
        for line in lines:
            yield self.split(line)


# -- lines that look like paragraphs ---------------------------------------------------------------
def sentence_ends(line: str) -> int:
    """How often a sentence seems to end inside ``line``: a word ending in ``.``, ``!`` or ``?``
    (closing quotes and brackets aside) followed by a capitalised word.  Words that look like
    abbreviations end nothing: one holding another period (``U.S.``) or of at most three
    characters starting with a capital (``Mr.``, ``Inc.``, an initial).

    >>> sentence_ends("The cat sat. Mr. Smith came in. He saw U.S. troops."), sentence_ends("the mat . The dog")
    (2, 1)
    """
    tokens = _LONE_END.sub(r"\1", line).split()
    count = 0
    for before, after in zip(tokens, tokens[1:]):
        stem = before.rstrip(_CLOSERS)
        word = stem.rstrip(_ENDS)
        if word == stem or not any(c.isalnum() for c in word) or "." in word:
            continue
        if word[0].isupper() and len(word) <= 3:
            continue
        start = after.lstrip(_OPENERS)
        count += bool(start) and start[0].isupper()
    return count


class ParagraphCheck:
    """Counts, over a whole input, the lines that look like paragraphs (at least
    :data:`MIN_ENDS` sentence ends inside, or more than :data:`LONG_WORDS` words), so that a
    command can say once, on stderr, that they were each parsed as one sentence (:meth:`note`).
    Pass the lines through :meth:`watch`, or give each to :meth:`add`."""

    def __init__(self):
        self.lines = self.paragraphs = 0
        self.example = None                      # (line number, sentences, words) of the first one

    def add(self, line: str) -> None:
        self.lines += 1
        words = len(line.split())
        ends = sentence_ends(line) if words > 3 else 0
        if ends >= MIN_ENDS or words > LONG_WORDS:
            self.paragraphs += 1
            if self.example is None:
                self.example = (self.lines, ends + 1, words)

    def watch(self, lines: Iterable[str]) -> Iterator[str]:
        """The lines unchanged, each counted as it passes."""
        for line in lines:
            self.add(line)
            yield line

    def note(self, done: str = "parsed") -> Optional[str]:
        """One line for stderr when some lines look like paragraphs, else None; ``done``: what
        was done with each line (``parsed``, ``learnt from``)."""
        if not self.paragraphs:
            return None
        number, sentences, words = self.example
        return (f"note: {self.paragraphs:,} of {self.lines:,} lines look like several sentences (line {number}: "
                f"{words:,} words, about {sentences} sentence{'' if sentences == 1 else 's'}), and each line was "
                f"{done} as one sentence: "
                "--split-sentences takes each sentence on its own (see --help)")

    def tell(self, say: Callable[[str], Any], done: str = "parsed") -> None:
        """Give :meth:`note` to ``say`` when there is one."""
        note = self.note(done)
        if note:
            say(note)


def sentences_of(lines: Iterable[str], split: Optional[SentenceSplitter] = None,
                 check: Optional[ParagraphCheck] = None) -> Iterator[str]:
    """Every sentence of ``lines``, in order: each line itself (counted by ``check``, when
    given), or with ``split`` each of its sentences."""
    if split is None:
        yield from (lines if check is None else check.watch(lines))
    else:
        for sentences in split.lines(lines):
            yield from sentences


def by_line(outputs: List[Any], tokens: Sequence[Sequence[str]], counts: Sequence[int], records: bool,
            empty: Optional[Dict[str, Any]] = None, first: int = 1) -> List[Any]:
    """The outputs of split sentences (``counts[j]`` of them for input line j, in order; their
    ``tokens``) as ``--split-sentences`` writes them; sentences without words are left out.
    Lines of text (``records`` False): each line's sentences, one output each, then an empty
    line, so that a blank line ends every input line.  Records (JSON Lines): one per sentence,
    its input line's number (``"line"``, counted from ``first``) and its ``"sentence"`` number
    within that line added (1 starts a new input line); a line without words gives one record,
    ``empty``, numbered 1.

    >>> by_line(["(a b)", "", "(c d)"], [["a", "b"], [], ["c", "d"]], [2, 0, 1], False)
    ['(a b)', '', '', '(c d)', '']
    """
    out: List[Any] = []
    at = 0
    for line, count in enumerate(counts, first):
        mine = [k for k in range(at, at + count) if len(tokens[k])]
        at += count
        if records:
            out += ([{"line": line, "sentence": n, **outputs[k]} for n, k in enumerate(mine, 1)]
                    or [{"line": line, "sentence": 1, **(empty or {})}])
        else:
            out += [outputs[k] for k in mine] + [""]
    return out

"""Words of raw text in any language: the word rule, normalisation and tokenisation.

One rule decides what is a word everywhere onparse reads untagged text (``induce``,
``distances``, ``show``, training corpora, and gold trees whose tag set is unknown):

* **A token is a word when it holds at least one letter or number of any script**: a character
  of Unicode category ``L*`` (``Lu Ll Lt Lm Lo``) or ``N*`` (``Nd Nl No``).  Every other token
  -- one made only of punctuation (``P*``: ``Pc Pd Ps Pe Pi Pf Po``), symbols (``S*``: ``Sm Sc
  Sk So``), or marks and invisible characters -- is punctuation.  So ``à``, ``é``, ``世界``,
  ``мир`` and ``3.5`` are words; ``,``, ``--``, ``¿``, ``。``, ``%``, ``$`` and ``€`` are not.
  The Penn Treebank's bracket escapes (``-LRB-`` ``-RRB-`` ``-LCB-`` ``-RCB-`` ``-LSB-``
  ``-RSB-``) are read as the brackets they stand for, so they are punctuation too.
* Treebanks may drop tokens by tag instead (:mod:`onparse.gold.tagsets`): the Penn Treebank's word
  tags keep ``%`` (NN), ``&`` (CC) and the possessive ``'`` (POS), which the rule above calls
  punctuation.  A model trained on such text has these symbols in its vocabulary, and the
  raw-text :class:`Preprocessor` keeps a punctuation token that the model's vocabulary holds as
  a word (``punct="vocab"``, the default), so raw text and tag-filtered text agree.

Normalisation (:func:`normalize_word`): lowercase, every run of digits (of any script)
becomes ``N``.  It is idempotent on the text it produces, so normalised text can be fed back.

Tokenisation (:func:`tokenize`): NLTK's ``NLTKWordTokenizer`` (the Treebank-style word
tokenizer behind ``nltk.word_tokenize``, used without its Punkt sentence splitter, so it needs
no download), whose spans are mapped back to the user's characters; punctuation outside ASCII
(``¿`` ``¡`` ``。`` ``，`` ...) at either end of a token is split off as well.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import List, NamedTuple, Optional, Sequence, Tuple

#: The 36 Penn Treebank word tags; every other tag (punctuation, ``$``, ``#``, ``-NONE-``) is dropped.
WORD_TAGS = frozenset(
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB RBR RBS RP "
    "SYM TO UH VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB".split()
)

#: The Penn Treebank's escapes for brackets, and the characters they stand for.
PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]"}

#: Unicode category initials that make a token a word: letters and numbers.
WORD_CATEGORIES = ("L", "N")

_DIGITS = re.compile(r"\d+")  # str patterns: every Unicode decimal digit (Nd), not only 0-9
# After a number N, these letters still read as part of the number (1980s, 19th, 3d, 5m, 4x4).
_NUMBER_SUFFIXES = frozenset("s st nd rd th d k m b x mm cm km kg mg ml ft mph kb mb gb".split())


def is_word(token: str) -> bool:
    """True when ``token`` holds a letter or a number of any script (module docstring).

    >>> [is_word(t) for t in ("cat", "à", "世界", "мир", "3.5", "U.S.", "n't")]
    [True, True, True, True, True, True, True]
    >>> [is_word(t) for t in (",", "--", "¿", "。", "%", "$", "€", "-LRB-", "")]
    [False, False, False, False, False, False, False, False, False]
    """
    if token in PTB_ESCAPES:
        return False
    for ch in token:
        if ch.isascii():
            if ch.isalnum():
                return True
        elif unicodedata.category(ch)[0] in WORD_CATEGORIES:
            return True
    return False


def is_punct(token: str) -> bool:
    """True for a token that is not a word (:func:`is_word`): punctuation and symbols only."""
    return not is_word(token)


def _keeps_capital_n(word: str, i: int) -> bool:
    # An "N" that normalisation itself could have written: not touching a capital letter, not
    # one of dotted initials (N.J., U.N.), and followed by a non-letter, the end, or a number
    # suffix ("Ns", "Nth").
    if i and word[i - 1].isupper():
        return False
    if i >= 2 and word[i - 1] == "." and word[i - 2].isalpha() and word[i - 2] != "N":
        return False                      # U.N.
    if word[i + 1:i + 2] in ("'", "\u2019") and word[i + 2:i + 3] in ("t", "T"):
        return False                      # DIDN'T
    if word[i + 1:i + 2] == "." and word[i + 2:i + 3].isalpha() and word[i + 2] != "N":
        return False                      # N.J.
    j = i + 1
    while j < len(word) and word[j].isalpha():
        j += 1
    return j == i + 1 or word[i + 1:j].lower() in _NUMBER_SUFFIXES


def normalize_word(word: str) -> str:
    """Lowercase, then replace each run of digits by ``N``.

    >>> normalize_word("Pierre"), normalize_word("61"), normalize_word("3.5"), normalize_word("1980s")
    ('pierre', 'N', 'N.N', 'Ns')
    >>> normalize_word("МИР"), normalize_word("٣٤"), normalize_word("No"), normalize_word("CNN")
    ('мир', 'N', 'no', 'cnn')

    Idempotent on what it writes: an ``N`` that could stand for a number (between non-letters,
    or before a number suffix such as ``s``, ``th``, ``km``; not in dotted initials such as
    ``N.J.``) stays uppercase, so ``N.N``, ``N%`` and ``Ns`` are unchanged.  The price: a
    lone letter N (``N``, ``N-``) reads as a number.  Digits glued to other letters (``A4`` -> ``aN``) are the only text
    whose normal form changes again (``aN`` -> ``an``).

    >>> [normalize_word(normalize_word(w)) == normalize_word(w) for w in ("3.5", "1980s", "19th-century", "$5")]
    [True, True, True, True]
    """
    if word.isascii() and word.islower() and not any(c.isdigit() for c in word):
        return word  # the common case: already lowercase, nothing to replace
    if "N" in word:
        lowered = "".join(ch if ch == "N" and _keeps_capital_n(word, i) else ch.lower()
                          for i, ch in enumerate(word))
    else:
        lowered = word.lower()
    return _DIGITS.sub("N", lowered)


# --------------------------------------------------------------------------------------
# Odd characters of input text
# --------------------------------------------------------------------------------------

#: The byte-order mark a file saved as "UTF-8 with BOM" starts with (U+FEFF): dropped at the
#: start of input (:func:`onparse.induce.read_lines`, corpus files, a string given to the API),
#: never part of the first token.
BOM = "\ufeff"


def text_problem(text: str) -> Optional[str]:
    """What makes ``text`` unreadable, in words, or None.  The one rule: a NUL character
    (``\\x00``) is refused, not taken for whitespace nor kept inside a token: NUL bytes come
    from binary files and from UTF-16 text, whose every other byte is NUL, so reading them as
    text would give silent nonsense.

    >>> text_problem("the cat"), text_problem("the c\\x00at")
    (None, 'holds a NUL character (binary data, or UTF-16 text?); onparse reads UTF-8 text')
    """
    if "\x00" in text:
        return "holds a NUL character (binary data, or UTF-16 text?); onparse reads UTF-8 text"
    return None


# --------------------------------------------------------------------------------------
# Tokenisation
# --------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _word_tokenizer():
    from nltk.tokenize import NLTKWordTokenizer  # regular expressions only: no data to download

    return NLTKWordTokenizer()


def _is_edge_punct(ch: str) -> bool:
    return not ch.isascii() and unicodedata.category(ch)[0] == "P"


def _split_edges(text: str, start: int, end: int, out: List[Tuple[int, int]]) -> None:
    # Split non-ASCII punctuation off both ends of text[start:end] (one span per character).
    a, b = start, end
    while a < b and _is_edge_punct(text[a]):
        out.append((a, a + 1))
        a += 1
    tail = []
    while b > a and _is_edge_punct(text[b - 1]):
        tail.append((b - 1, b))
        b -= 1
    if a < b:
        out.append((a, b))
    out.extend(reversed(tail))


def token_spans(text: str) -> List[Tuple[int, int]]:
    """``[(start, end), ...]`` of the tokens of ``text`` (module docstring), in order."""
    if not text.strip():
        return []
    try:
        spans = list(_word_tokenizer().span_tokenize(text))
    except ValueError:
        # NLTK could not align a rewritten token (rare quote sequences): whitespace, then edges.
        spans = [m.span() for m in re.finditer(r"\S+", text)]
    out: List[Tuple[int, int]] = []
    for start, end in spans:
        _split_edges(text, start, end, out)
    return _join_ampersands(text, out)


def _join_ampersands(text: str, spans: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    # NLTK splits every "&"; between two letters with no space (AT&T, R&D, S&P) it is inside a name.
    out: List[Tuple[int, int]] = []
    for span in spans:
        if (len(out) >= 2 and text[out[-1][0]:out[-1][1]] == "&" and out[-2][1] == out[-1][0] == span[0] - 1
                and text[out[-2][1] - 1].isalpha() and text[span[0]].isalpha()):
            out[-2:] = [(out[-2][0], span[1])]
        else:
            out.append(span)
    return out


def tokenize(text: str) -> List[str]:
    """The tokens of a line of raw text, as the user wrote them (no quote rewriting).

    >>> tokenize("The cat sat on the mat.")
    ['The', 'cat', 'sat', 'on', 'the', 'mat', '.']
    >>> tokenize("¿Dónde está? «Hola», dijo.")
    ['¿', 'Dónde', 'está', '?', '«', 'Hola', '»', ',', 'dijo', '.']
    >>> tokenize("我爱北京。 Привет, мир!")
    ['我爱北京', '。', 'Привет', ',', 'мир', '!']
    >>> tokenize("AT&T and R&D, not rock & roll.")
    ['AT&T', 'and', 'R&D', ',', 'not', 'rock', '&', 'roll', '.']
    """
    return [text[a:b] for a, b in token_spans(text)]


# --------------------------------------------------------------------------------------
# Raw text -> the words a model reads
# --------------------------------------------------------------------------------------

#: How the raw-text preprocessor treats punctuation tokens (see :class:`Preprocessor`), the default first.
PUNCT_POLICIES = ("vocab", "drop")
#: The policy every reader of raw text uses unless told otherwise.
DEFAULT_PUNCT = PUNCT_POLICIES[0]


#: Split off a word's edge, these say nothing about whether a line is raw text: treebank tokens
#: end in them too (``Dunkin'``, Dutch ``Jenkins'``, Spanish ``'Arteaga'``).
APOSTROPHES = frozenset("'’‘`")


def _edge_punct_split(parts: Sequence[str]) -> bool:
    """True when NLTK split punctuation other than apostrophes off either end of a whitespace
    chunk (``mat.``, ``(cat``, ``"hi``), as opposed to splitting it into words (``ca n't``),
    splitting off only an apostrophe (``Dunkin'``), or not at all."""
    def edge(part: str) -> bool:
        return is_punct(part) and not set(part) <= APOSTROPHES

    return len(parts) > 1 and (edge(parts[0]) or edge(parts[-1]))


class Sentence(NamedTuple):
    """One input line after preprocessing: the user's tokens the model reads, and their ids."""

    tokens: List[str]
    ids: List[int]


@dataclass(frozen=True)
class Preprocessor:
    """Turns a line of raw text into the words a model reads (a :class:`Sentence`).

    ``tokenize``: split with :func:`tokenize` (default) or, when False, on whitespace only
    (pre-tokenised text).  When tokenising, a line in which no word has punctuation other than
    an apostrophe attached at either end (nothing like ``mat.``, ``(cat`` or ``"hi``) is already
    tokenised and is split on whitespace only (so ``CREATOR'S`` or ``can't`` stay whole there);
    otherwise a whitespace-separated chunk that the vocabulary holds as one word (``U.S.`` or
    ``Inc.`` at the end of a line, ``AT&T``) is kept whole and every other chunk is split by NLTK.
    So text in a treebank's own tokens (``onparse gold-text``) reads back unchanged.

    ``punct``: ``vocab`` (default) drops punctuation tokens (:func:`is_punct`) of raw text unless
    the vocabulary holds them as words (``%``, ``&`` and the possessive ``'`` of Penn-tagged
    training text), and keeps the token of a line that holds only one; pre-tokenised text keeps
    every token (:func:`pretokenized_tokens`).  ``drop`` drops every punctuation
    token.  Words are normalised
    (:func:`normalize_word`) and looked up; unknown words become ``<unk>``.
    """

    vocab: object                  # onparse.text.vocab.Vocabulary
    tokenize: bool = True
    punct: str = DEFAULT_PUNCT

    def __post_init__(self):
        if self.punct not in PUNCT_POLICIES:
            raise ValueError(f"unknown punctuation policy {self.punct!r}; choose from {', '.join(PUNCT_POLICIES)}")

    def tokens(self, line: str) -> List[str]:
        """The tokens of ``line`` before punctuation is dropped."""
        chunks = line.split()
        if not self.tokenize:
            return chunks
        known = self.vocab.stoi
        spans = token_spans(line)
        # Group NLTK's tokens by the whitespace chunk they come from.
        groups, i = [], 0
        for chunk in re.finditer(r"\S+", line):
            parts = []
            while i < len(spans) and spans[i][0] < chunk.end():
                parts.append(line[spans[i][0]:spans[i][1]])
                i += 1
            groups.append((chunk.group(), parts))
        if not any(_edge_punct_split(parts) for _, parts in groups):
            return chunks                 # already tokenised: no punctuation attached to any word
        out: List[str] = []
        quoting = False
        for chunk, parts in groups:
            if len(parts) > 1 and normalize_word(chunk) in known:
                out.append(chunk)
            else:
                parts, quoting = quote_marks_dropped(parts, quoting)
                out.extend(parts)
        return out

    def keeps(self, token: str, word: Optional[str] = None) -> bool:
        """True when ``token`` (normalised: ``word``) is a word the model reads."""
        if is_word(token):
            return True
        return self.punct == "vocab" and (normalize_word(token) if word is None else word) in self.vocab.stoi

    def __call__(self, line: str) -> Sentence:
        index = self.vocab.index
        if line.startswith(BOM):
            line = line[1:]               # a string that starts as a "UTF-8 with BOM" file does
        if not self.tokenize and self.punct == "vocab":
            # Pre-tokenised text's tokens are the user's: a treebank's own (onparse gold-text) hold
            # words such as '%' that a model trained on raw text never saw, and dropping one would
            # make the trees disagree with the gold's tokens.  Training text read in the format
            # ``pretokenized`` goes by the same function, so a model learns the tokens it is given.
            tokens = pretokenized_tokens(line)
        else:
            raw = self.tokens(line)
            tokens = [token for token in raw if self.keeps(token)]
            if not tokens and len(raw) == 1 and self.punct == "vocab":
                # A line of one punctuation token keeps it (policy ``vocab`` only): a treebank's
                # one-symbol sentence, such as WSJ's ``@`` (tagged IN), reads back as itself.
                tokens = list(raw)
        return Sentence(tokens, [index(normalize_word(token)) for token in tokens])


def pretokenized_tokens(line: str) -> List[str]:
    """The tokens a model reads of a line of pre-tokenised text (``--pretokenized``, and the
    training format ``pretokenized``): the line split on whitespace, every token kept but the
    free-standing period that :func:`gold_text_line` writes after a last word ending in one.

    >>> pretokenized_tokens("the boy ’ s 50 % in the U.S. .")
    ['the', 'boy', '’', 's', '50', '%', 'in', 'the', 'U.S.']
    >>> pretokenized_tokens("苹果 、 香蕉"), pretokenized_tokens("、")
    (['苹果', '、', '香蕉'], ['、'])
    """
    tokens = line.split()
    if tokens[-1:] == ["."] and _ends_in_a_period(tokens[:-1]):
        return tokens[:-1]            # gold_text_line's, for tokenizers: no token of the gold's
    return tokens


def quote_marks_dropped(parts: Sequence[str], quoting: bool = False) -> Tuple[List[str], bool]:
    """The NLTK tokens of one whitespace chunk without the single quotes that are quote marks,
    and whether a quotation is open after it (``quoting``: open before it).

    An apostrophe split off a chunk is a quote mark when it opens the chunk (``'yes``) or closes
    an open quotation (``'yes'``, ``'n'``, ``'discredited carcass'``); one that closes a word
    ending in ``s`` otherwise (``students'``) is the possessive, which Penn-tagged text counts as
    a word.  Elsewhere the vocabulary decides, as for any punctuation (:class:`Preprocessor`).

    >>> quote_marks_dropped(["'", "yes", "'"]), quote_marks_dropped(["students", "'"])
    ((['yes'], False), (['students', "'"], False))
    >>> quote_marks_dropped(["'", "discredited"]), quote_marks_dropped(["carcass", "'"], quoting=True)
    ((['discredited'], True), (['carcass'], False))
    """
    out = list(parts)
    if len(out) < 2:
        return out, quoting
    if set(out[0]) <= APOSTROPHES:
        out, quoting = out[1:], True
    elif out[0][:1] in APOSTROPHES and out[0][1:2].isalpha():
        quoting = True                                  # 'n, 'Tis: NLTK kept the quote on the word
    if len(out) > 1 and set(out[-1]) <= APOSTROPHES and (quoting or out[-2][-1:] not in ("s", "S")):
        out, quoting = out[:-1], False
    return out, quoting


def gold_text_line(words: Sequence[str]) -> str:
    """A gold sentence's words as a line of text that :class:`Preprocessor` reads back as
    these words: joined by spaces, with a free-standing period after a last word that ends in
    a period (``U.S.``), as the treebank writes it, so that no tokenizer splits it.

    >>> gold_text_line(["prices", "rose", "in", "the", "U.S."])
    'prices rose in the U.S. .'
    """
    line = " ".join(words)
    return line + " ." if _ends_in_a_period(words) else line


def _ends_in_a_period(words: Sequence[str]) -> bool:
    """Whether the last word ends in a period (``U.S.``): :func:`gold_text_line` writes a
    free-standing period after it, which :class:`Preprocessor` drops from pre-tokenised text."""
    return bool(words) and len(words[-1]) > 1 and words[-1].endswith(".")


def words_of(tokens: Sequence[str]) -> List[str]:
    """Normalised words of untagged tokens, punctuation (:func:`is_punct`) dropped.

    >>> words_of(["Le", "chat", ",", "à", "3", "heures", "."])
    ['le', 'chat', 'à', 'N', 'heures']
    """
    return [normalize_word(t) for t in tokens if is_word(t)]

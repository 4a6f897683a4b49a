"""Token normalisation shared by gold trees, LM corpora and induction input.

The rules of ``shared/docs/onlstm.md`` section 4: keep words whose POS tag is one of the
36 word tags, lowercase, every run of digits becomes ``N``.  For untagged text (user
corpora, induction input) punctuation is recognised by its form (:func:`is_punct`).
"""
import re

#: The 36 Penn Treebank word tags; every other tag (punctuation, ``$``, ``#``, ``-NONE-``) is dropped.
WORD_TAGS = frozenset(
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB RBR RBS RP "
    "SYM TO UH VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB".split()
)

_DIGITS = re.compile(r"[0-9]+")
# Tokens PTB tags as punctuation or currency even though they hold letters.
_PUNCT_WORDS = frozenset({"-LRB-", "-RRB-", "-LCB-", "-RCB-", "-LSB-", "-RSB-"})
_CURRENCY = re.compile(r"^[A-Z]{0,3}\$$")  # $, US$, C$, M$ ...
# Symbols that PTB tags as words (NN %, CC &, IN @, SYM = *): a token holding one is kept.
_WORDLIKE = re.compile(r"[A-Za-z0-9%&@=*]")


def normalize_word(word: str) -> str:
    """Lowercase, then replace each run of digits by ``N``.

    >>> normalize_word("Pierre"), normalize_word("61"), normalize_word("3.5"), normalize_word("1980s")
    ('pierre', 'N', 'N.N', 'Ns')
    """
    return _DIGITS.sub("N", word.lower())


def is_word_tag(tag: str) -> bool:
    """True when a leaf with this POS tag is kept (one of :data:`WORD_TAGS`)."""
    return tag in WORD_TAGS


def is_punct(token: str) -> bool:
    """True for a token of untagged text that the evaluation protocol would drop.

    Bracket codes (``-LRB-``), currency signs (``$``, ``US$``), and tokens with no letter,
    digit or word-like symbol (``,`` ``.`` ``--`` ``...`` ``````) are punctuation.
    ``%`` and ``&`` are words, as in the treebank.
    """
    if token in _PUNCT_WORDS or _CURRENCY.match(token):
        return True
    return _WORDLIKE.search(token) is None

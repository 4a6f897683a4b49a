"""Does a text suit a model: the share of its tokens outside the model's vocabulary, and the
scripts the vocabulary has no word in, counted over a whole input so that a command can say so
once (:class:`VocabularyCheck`)."""
from typing import Dict, Optional, Sequence

from .tokens import normalize_word


class VocabularyCheck:
    """Counts, over a whole input, the tokens outside a model's vocabulary and the scripts the
    vocabulary has no word in, so that a command can say once, on stderr, that the text does not
    suit the model (:meth:`note`).  Feed it each sentence's tokens with :meth:`add`."""

    #: Above this share of unknown tokens the input is reported (French against an English
    #: vocabulary: 75%; plain English with two rare nouns in six words: 33%).
    OOV_SHARE = 0.50
    #: A token of this many characters or more in a script written without spaces (Han, kana,
    #: Thai ...) is probably a whole unsegmented sentence.
    UNSEGMENTED = 8

    def __init__(self, vocab):
        self.known = vocab.stoi
        self.scripts = {script_of(w) for w in vocab.itos} - {None}
        self.tokens = self.unknown = 0
        self.missing: Dict[str, int] = {}
        self.unsegmented = 0

    def add(self, tokens: Sequence[str]) -> None:
        for token in tokens:
            word = normalize_word(token)
            self.tokens += 1
            if word not in self.known:
                self.unknown += 1
                script = script_of(token)
                if script is not None and script not in self.scripts:
                    self.missing[script] = self.missing.get(script, 0) + 1
                if script in UNSPACED_SCRIPTS and len(token) >= self.UNSEGMENTED:
                    self.unsegmented += 1

    def note(self) -> Optional[str]:
        """One line for stderr when the input suits the model badly, else None."""
        if not self.tokens:
            return None
        share = self.unknown / self.tokens
        if share <= self.OOV_SHARE and not self.missing:
            return None
        parts = [f"{100 * share:.0f}% of the {self.tokens:,} tokens are outside the model's vocabulary"]
        if self.missing:
            parts.append("its vocabulary has no word in " + ", ".join(sorted(self.missing))
                         + (" script" if len(self.missing) == 1 else " scripts"))
        advice = "a model trained on text of this language (onparse train --corpus FILE) will parse it better"
        if self.unsegmented:
            advice = (f"{self.unsegmented:,} token(s) look like unsegmented text: split the words with spaces and "
                      "use --pretokenized, and " + advice)
        return "note: " + "; ".join(parts) + "; " + advice


#: Scripts written without spaces between words.
UNSPACED_SCRIPTS = frozenset({"CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR", "TIBETAN"})


def script_of(token: str) -> Optional[str]:
    """The script of the first letter of ``token`` (``LATIN``, ``CYRILLIC``, ``CJK`` ...: the
    first word of its Unicode name), or None when it has no letter.

    >>> script_of("chat"), script_of("мир"), script_of("北京"), script_of("42")
    ('LATIN', 'CYRILLIC', 'CJK', None)
    """
    import unicodedata

    for ch in token:
        if ch.isalpha():
            return unicodedata.name(ch, "UNKNOWN").split()[0]
    return None

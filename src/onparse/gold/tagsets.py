"""Which leaves of a treebank are words: one preset per tag set, detected from the tags.  No torch.

A gold tree keeps a leaf when its tag marks a word, and drops punctuation and empty elements
(traces, elided subjects).  Every tag set marks them differently, so each gets a preset:

========== =================================================================================
``ptb``     Penn Treebank: keep the 36 word tags of ``docs/onlstm.md`` section 4
            (``CC CD DT ... WRB``); everything else (``, . : `` '' -LRB- $ # -NONE-``) goes.
``alpino``  NLTK's ``alpino`` (Dutch): drop the tag ``punct``.
``cess_esp`` NLTK's ``cess_esp`` (Spanish, EAGLES tags): drop the punctuation tags ``F...``
            (``Fc Fp Fe Fg Fia`` ...) and the elided subjects (``sn.e...``; word ``*0*``).
``floresta`` NLTK's ``floresta`` (Portuguese, ``FUNCTION+pos`` tags): drop the tags without a
            letter (punctuation is tagged with itself: ``, . « »``).
``unicode`` no tag decides: drop a leaf whose word is punctuation by the word rule of
            :mod:`onparse.text.tokens` (no letter or number in any script).
========== =================================================================================

:func:`detect` picks the preset whose tag inventory recognises at least 98% of a treebank's
tags (``ptb`` first), else ``unicode``; callers print the choice.  Users can name a preset, or
give their own lists of punctuation and empty-element tags (:func:`custom`): then a leaf is
dropped when its tag is in either list (a trailing ``*`` matches a prefix: ``F*``).
Tags are compared as written, so the case of labels and tags does not matter to reading.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Optional, Sequence, Tuple

from ..text.tokens import WORD_TAGS, is_punct

#: Every tag of the Penn Treebank (word tags, punctuation, empty elements), for detection.
PTB_TAGS = WORD_TAGS | frozenset(
    [",", ".", ":", "``", "''", "-LRB-", "-RRB-", "-LCB-", "-RCB-", "-LSB-", "-RSB-", "#", "$", "-NONE-",
     "HYPH", "NFP", "AFX", "ADD", "GW", "XX", "(", ")"])
#: Alpino's part-of-speech tags as NLTK's reader gives them.
ALPINO_TAGS = frozenset("adj adv comp comparative det fixed name noun num part pp prefix prep pron punct "
                        "tag verb vg".split())
_EAGLES = re.compile(r"(?:[acdfinprsvwz][a-z0-9]{1,7}|F[a-z]{0,3}|Z[a-z]?|W|I|Y|sn\.e.*)")
_FLORESTA = re.compile(r"[^\s+]*\+[a-z][a-z-]*|[^A-Za-z]+")
_LETTER = re.compile(r"[A-Za-z]")
#: Share of a treebank's tag tokens a preset must recognise to be chosen.
DETECT_THRESHOLD = 0.98


@dataclass(frozen=True)
class TagSet:
    """A rule for dropping leaves: ``drops(tag, word)``; ``recognises(tag)`` serves detection."""

    name: str
    description: str
    drops: Callable[[str, str], bool] = field(compare=False)
    recognises: Callable[[str], bool] = field(compare=False, default=lambda tag: False)

    def keeps(self, tag: str, word: str) -> bool:
        return not self.drops(tag, word)


def _ptb_drops(tag: str, word: str) -> bool:
    return tag not in WORD_TAGS


def _cess_drops(tag: str, word: str) -> bool:
    # The elided subject's word is *0* whatever its tag (sn.e-SUJ, and a few sn-SUJ).
    return (tag[:1] == "F" and tag[1:].islower() or tag == "F") or tag.startswith("sn.e") or word == "*0*"


PRESETS: Dict[str, TagSet] = {
    "ptb": TagSet("ptb", "Penn Treebank: the 36 word tags are kept", _ptb_drops, PTB_TAGS.__contains__),
    "alpino": TagSet("alpino", "Alpino (Dutch): tag punct dropped", lambda tag, word: tag == "punct",
                     ALPINO_TAGS.__contains__),
    "cess_esp": TagSet("cess_esp", "CESS-ESP (Spanish, EAGLES): tags F* (punctuation) and sn.e* (elided "
                       "subjects) dropped", _cess_drops, lambda tag: _EAGLES.fullmatch(tag) is not None),
    "floresta": TagSet("floresta", "Floresta (Portuguese): tags without a letter (punctuation) dropped",
                       lambda tag, word: _LETTER.search(tag) is None,
                       lambda tag: _FLORESTA.fullmatch(tag) is not None),
    "unicode": TagSet("unicode", "no preset: leaves whose word has no letter or number dropped",
                      lambda tag, word: is_punct(word)),
}
#: Preset names, in detection order (``unicode`` is the fallback).
NAMES = ("ptb", "alpino", "cess_esp", "floresta", "unicode")


def _matcher(tags: Iterable[str]) -> Callable[[str], bool]:
    exact = {t for t in tags if not t.endswith("*")}
    prefixes = tuple(t[:-1] for t in tags if t.endswith("*"))
    return lambda tag: tag in exact or (bool(prefixes) and tag.startswith(prefixes))


def custom(punct_tags: Sequence[str] = (), empty_tags: Sequence[str] = ()) -> TagSet:
    """A tag set from explicit lists: a leaf is dropped when its tag is one of ``punct_tags``
    or ``empty_tags`` (``X*`` matches every tag that starts with ``X``)."""
    listed = [t.strip() for t in list(punct_tags) + list(empty_tags) if t.strip()]
    match = _matcher(listed)
    return TagSet("custom", f"tags dropped: {' '.join(listed) or '(none)'}", lambda tag, word: match(tag))


def get(name: str) -> TagSet:
    """The preset called ``name``; ValueError for an unknown one."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown tag set {name!r}; choose from {', '.join(NAMES)}") from None


def detect(tags: Counter) -> Tuple[TagSet, float]:
    """The preset for a treebank whose preterminal tags are counted in ``tags``, and the share
    of tag tokens it recognises: the first of ``ptb alpino cess_esp floresta`` that recognises
    at least :data:`DETECT_THRESHOLD`, else ``unicode`` (with the best share seen)."""
    total = sum(tags.values())
    best = 0.0
    if total:
        for name in NAMES[:-1]:
            preset = PRESETS[name]
            share = sum(n for tag, n in tags.items() if preset.recognises(tag)) / total
            if share >= DETECT_THRESHOLD:
                return preset, share
            best = max(best, share)
    return PRESETS["unicode"], best


def resolve(name: Optional[str], punct_tags: Sequence[str] = (), empty_tags: Sequence[str] = ()) -> Optional[TagSet]:
    """What the user asked for: explicit lists (a custom set), a preset name, or None (detect)."""
    if punct_tags or empty_tags:
        if name not in (None, "auto"):
            raise ValueError("give a tag set name or lists of tags, not both")
        return custom(punct_tags, empty_tags)
    if name in (None, "auto"):
        return None
    return get(name)

"""The held-out split rule: which part of a corpus each sentence belongs to.  No torch.

A corpus's sentences, in order, are cut into consecutive blocks of ``max(1, n // 1000)``
sentences; block ``j`` goes to the part its layout names for ``j % PERIOD``, to training
otherwise.  Held-out parts are thus spread over the whole corpus (not one end of it) and fixed
by the corpus alone.  Two layouts use the rule:

* :data:`TEXT_LAYOUT`, for plain-text corpora (:mod:`onparse.text.corpora`): about 5% validation and
  5% test;
* :data:`TREEBANK_LAYOUT`, for the treebanks in other languages (:mod:`onparse.gold.multilingual`):
  5% validation, plus two gold parts that language models never see: 10% ``dev`` (chooses
  members) and 10% ``test`` (reported, never chosen from).
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, TypeVar

T = TypeVar("T")

#: Blocks repeat with this period.
PERIOD = 20
#: Plain-text corpora: one block in 20 validates, the next tests.
TEXT_LAYOUT: Mapping[int, str] = {18: "valid", 19: "test"}
#: Treebanks: validation, and the dev and test gold parts, each spread over the treebank.
TREEBANK_LAYOUT: Mapping[int, str] = {3: "dev", 8: "valid", 13: "dev", 18: "test", 19: "test"}


def part_of(index: int, n: int, layout: Mapping[int, str]) -> str:
    """The part (``train`` or a name of ``layout``) of sentence ``index`` among ``n``.

    >>> [part_of(i, 40, TEXT_LAYOUT) for i in (17, 18, 19, 38)]
    ['train', 'valid', 'test', 'valid']
    """
    return layout.get((index // max(1, n // 1000)) % PERIOD, "train")


def split(items: Sequence[T], layout: Mapping[int, str]) -> Dict[str, List[T]]:
    """``items`` grouped by :func:`part_of`, in order: a list for ``train`` and for every part
    ``layout`` names (empty when ``items`` is too short to reach it)."""
    parts: Dict[str, List[T]] = {name: [] for name in ("train", *layout.values())}
    n = len(items)
    for i, item in enumerate(items):
        parts[part_of(i, n, layout)].append(item)
    return parts

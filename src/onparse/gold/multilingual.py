"""NLTK's treebanks in other languages: ``alpino`` (Dutch), ``cess_esp`` (Spanish) and
``floresta`` (Portuguese), as gold sets and as language-model text.  No torch.

They are read through NLTK's own corpus readers, whose trees are converted here to the nested
lists of :mod:`onparse.trees.tree`.  Two things NLTK's readers produce are set aside and counted
(callers print the counts), never fatal:

* *flat recoveries*: a tree NLTK could not parse comes back as one flat node of ``(word, tag)``
  pairs (NLTK prints "Bad tree detected ... Recovered by returning a flat parse", which is
  silenced here).  It has no constituents to score, so it is skipped as gold; its words still
  serve as language-model text.
* *empty subtrees* ``()``: nodes with no children; they are removed.
* *stray leaves*: words beside subtrees in one node, which no tag marks.  In ``alpino`` these
  are the raw XML of co-indexed empty nodes (``<node begin="0" ... index="1"``), i.e. empty
  elements; they are removed.  A pre-terminal with several atoms (a few ``floresta`` tags hold
  spaces, which NLTK splits) keeps its last atom as the word; the others count as stray.

**Held-out split.**  Every treebank's sentences, in NLTK's order, are split by
:mod:`onparse.text.splits`'s rule with its treebank layout: 75% training, 5% validation, 10% dev and
10% test, each spread over the whole treebank.  The gold sets ``NAME-dev`` / ``NAME10-dev`` hold
the dev part (it may choose members, layers, voters), ``NAME-test`` / ``NAME10-test`` the test
part (reported, never chosen from); the language-model corpus ``NAME`` trains on the training
part and validates on the validation part, so no evaluation sentence is ever training or
validation text.
"""
from __future__ import annotations

import contextlib
import html
import io
from dataclasses import dataclass
from functools import lru_cache
from typing import List, Tuple

from ..text.data import require
from ..errors import OnparseError
from ..text.splits import TREEBANK_LAYOUT, part_of
from .tagsets import get
from ..text.tokens import normalize_word

#: The treebanks and the tag-set preset of each (:mod:`onparse.gold.tagsets`).
TREEBANKS = {"alpino": "alpino", "cess_esp": "cess_esp", "floresta": "floresta"}
#: The parts of a treebank; ``dev`` and ``test`` are gold only.
SPLITS = ("train", "valid", "dev", "test")


def split_of(index: int, n: int) -> str:
    """The part (one of :data:`SPLITS`) sentence ``index`` of ``n`` belongs to.

    >>> [split_of(i, 40) for i in (2, 3, 8, 13, 17, 18, 19, 28, 33, 39)]
    ['train', 'dev', 'valid', 'dev', 'train', 'test', 'test', 'valid', 'dev', 'test']
    """
    return part_of(index, n, TREEBANK_LAYOUT)


@dataclass(frozen=True)
class TreebankRead:
    """One treebank as read: ``sexprs[i]`` is sentence i's tree as nested lists, or None for a
    flat recovery; ``tagged[i]`` its ``(word, tag)`` leaves; and the counts of what was set aside."""

    name: str
    sexprs: Tuple[object, ...]
    tagged: Tuple[Tuple[Tuple[str, str], ...], ...]
    flat: int
    empty: int
    stray: int = 0

    def notes(self) -> List[str]:
        """One line per thing set aside, for stderr."""
        out = []
        if self.flat:
            out.append(f"{self.name}: {self.flat} tree(s) that NLTK could only read as flat lists of words "
                       "were left out (no constituents to score)")
        if self.empty:
            out.append(f"{self.name}: {self.empty} empty subtree(s) () were removed")
        if self.stray:
            out.append(f"{self.name}: {self.stray} stray leaves beside subtrees (untagged; in alpino, the XML "
                       "of co-indexed empty nodes) were removed")
        return out


def _convert(tree, counts) -> object:
    """An nltk.Tree as nested lists ``[label, child, ...]`` (leaves: str), empty subtrees
    removed and counted; iterative, so deep trees are fine."""
    from nltk import Tree

    def build(node):
        return [node.label()]

    root = build(tree)
    stack = [(tree, root)]
    while stack:
        node, out = stack.pop()
        mixed = any(isinstance(c, Tree) for c in node) and any(not isinstance(c, Tree) for c in node)
        if not mixed and len(node) > 1 and not isinstance(node[0], Tree):
            counts["stray"] += len(node) - 1      # (TAG with spaces word): the word is the last atom
            out.append(_word(node[-1]))
            continue
        for child in node:
            if isinstance(child, Tree):
                if len(child) == 0:
                    counts["empty"] += 1
                    continue
                sub = build(child)
                out.append(sub)
                stack.append((child, sub))
            elif mixed:
                counts["stray"] += 1          # a word beside subtrees: no tag says what it is
            else:
                out.append(_word(child))
    # A node whose children were all empty subtrees has no words left: drop it too.
    return _prune(root, counts)


def _word(atom) -> str:
    # NLTK's alpino reader leaves XML entities in the words (zo&apos;n): decode them.
    text = str(atom)
    return html.unescape(text) if "&" in text else text


def _preterminals(sexpr):
    """``(word, tag)`` of every pre-terminal of a converted tree, left to right."""
    out, todo = [], [sexpr]
    while todo:
        node = todo.pop()
        if node is None or isinstance(node, str):
            continue
        if len(node) == 2 and isinstance(node[1], str):
            out.append((node[1], node[0]))
        else:
            todo.extend(reversed(node[1:]))
    return out


def _prune(node, counts):
    if isinstance(node, str):
        return node
    kids = [k for k in (_prune(c, counts) for c in node[1:]) if k is not None]
    if not kids:
        return None
    return [node[0], *kids]


@lru_cache(maxsize=3)
def read_treebank(name: str) -> TreebankRead:
    """Read NLTK treebank ``name`` (a key of :data:`TREEBANKS`) once per process (about 10-40 s)."""
    from nltk import Tree

    if name not in TREEBANKS:
        raise OnparseError(f"unknown treebank {name!r}; known: {', '.join(TREEBANKS)}")
    require(name)
    import nltk.corpus

    reader = getattr(nltk.corpus, name)
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        trees = list(reader.parsed_sents())
    counts = {"empty": 0, "stray": 0}
    sexprs, tagged, flat = [], [], 0
    for tree in trees:
        if any(not isinstance(child, (Tree, str)) for child in tree):   # flat recovery: (word, tag) pairs
            flat += 1
            sexprs.append(None)
            tagged.append(tuple((_word(w), str(t)) for w, t in tree))
            continue
        sexpr = _convert(tree, counts)
        sexprs.append(sexpr)
        tagged.append(tuple(_preterminals(sexpr)))
    return TreebankRead(name, tuple(sexprs), tuple(tagged), flat, counts["empty"], counts["stray"])


def text_sentences(name: str, split: str) -> List[List[str]]:
    """Language-model text of treebank ``name``: the words of its sentences in ``split``
    (one of :data:`SPLITS`, or ``all``), leaves dropped by the treebank's tag set as in
    its gold trees, normalised; sentences left empty are skipped."""
    read = read_treebank(name)
    tagset = get(TREEBANKS[name])
    n = len(read.tagged)
    out = []
    for i, leaves in enumerate(read.tagged):
        if split != "all" and split_of(i, n) != split:
            continue
        words = [normalize_word(w) for w, t in leaves if tagset.keeps(t, w)]
        if words:
            out.append(words)
    return out

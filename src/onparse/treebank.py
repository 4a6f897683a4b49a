"""Gold trees: where they come from and how they are preprocessed.  No torch.

Gold sets (:func:`load_gold`):

- ``wsj10`` / ``wsj``: NLTK's ``treebank`` sample (WSJ files 0001-0199) by default; sentences
  with at most 10 kept words / all of them.
- With ``ptb_root`` (or the environment variable ``ONPARSE_PTB_ROOT``) pointing at the LDC
  treebank's ``parsed/mrg/wsj`` folder (``00/wsj_0001.mrg`` ...): ``wsj10`` and ``wsj`` use
  every section, ``wsj-test`` is section 23 and ``wsj-valid`` section 22.
- A path: a file of bracketed trees (one per line or multi-line ``.mrg``) or a folder whose
  ``.mrg`` files (searched recursively, sorted by path) hold them.

Preprocessing follows ``shared/docs/onlstm.md`` section 4: keep a leaf only when its tag is
one of the 36 word tags (punctuation, currency signs and ``-NONE-`` go), lowercase and turn
digit runs into ``N``; nodes left without words disappear, unary chains collapse, labels lose
their function tags and indices (``NP-SBJ-1`` -> ``NP``).  A constituent is a span of >= 2 words.
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import FrozenSet, Iterator, List, Optional, Tuple

from .errors import OnparseError
from .text import WORD_TAGS, normalize_word
from .trees import Span, Tree, guess_labelled, iter_sexprs, leaves, sexpr_to_tree, spans_to_tree, tree_spans
from .trees import depth as tree_depth

#: Environment variable naming the LDC ``parsed/mrg/wsj`` folder.
PTB_ROOT_ENV = "ONPARSE_PTB_ROOT"
#: Gold set names; the last two need the LDC treebank.
GOLD_NAMES = ("wsj10", "wsj", "wsj-test", "wsj-valid")
#: Sentences of at most this many kept words form WSJ10.
WSJ10_MAX_WORDS = 10
_SECTIONS = {"wsj-test": ("23",), "wsj-valid": ("22",)}


@dataclass(frozen=True)
class GoldSentence:
    """One preprocessed gold sentence.

    ``words``: the kept words as written in the treebank (original case, digits kept), for
    running a model on the surface text.  ``tokens``: the same words normalised
    (lowercase, digit runs -> ``N``): what predictions are compared with.  ``tree``: the
    unlabelled gold tree over ``tokens`` (unary chains collapsed).  ``spans``: its
    constituents (spans of >= 2 words, whole sentence included).  ``labelled``: the
    ``(label, span)`` pairs behind those spans, one per distinct base label, so a collapsed
    unary chain ``(S (VP ...))`` gives both ``S`` and ``VP``.  ``source``: ``file:line``.
    """

    words: Tuple[str, ...]
    tokens: Tuple[str, ...]
    tree: Tree
    spans: FrozenSet[Span]
    labelled: FrozenSet[Tuple[str, Span]] = frozenset()
    source: str = ""

    def __len__(self) -> int:
        return len(self.tokens)

    @cached_property
    def depth(self) -> int:
        """Depth of the gold tree (:func:`onparse.trees.depth`), computed once."""
        return tree_depth(self.tree)

    @classmethod
    def from_tree(cls, tree: Tree, source: str = "") -> "GoldSentence":
        """An unlabelled gold sentence from a tree (words normalised, no labels)."""
        words = tuple(leaves(tree))
        tokens = tuple(normalize_word(w) for w in words)
        spans = tree_spans(tree)
        if tokens != words:  # the same shape over the normalised tokens
            tree = spans_to_tree(tokens, spans)
        return cls(
            words=words,
            tokens=tokens,
            tree=tree,
            spans=frozenset(spans),
            source=source,
        )


@dataclass(frozen=True)
class Gold:
    """A named, ordered list of gold sentences (``len``, iteration and indexing work)."""

    name: str
    sentences: Tuple[GoldSentence, ...] = field(repr=False)

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self) -> Iterator[GoldSentence]:
        return iter(self.sentences)

    def __getitem__(self, index):
        return self.sentences[index]

    @property
    def tokens(self) -> List[Tuple[str, ...]]:
        """Normalised tokens of every sentence (what trees are scored over)."""
        return [s.tokens for s in self.sentences]

    @property
    def words(self) -> List[Tuple[str, ...]]:
        """Surface words of every sentence (original case), for running a model."""
        return [s.words for s in self.sentences]


# --------------------------------------------------------------------------------------
# Preprocessing one tree
# --------------------------------------------------------------------------------------

_FUNCTION_TAG = re.compile(r"[-=]")
_NOT_LABELLED = "malformed labelled tree: expected (LABEL word) or (LABEL (...) ...) throughout"


def base_label(label: str) -> str:
    """Strip function tags and indices: ``NP-SBJ-1`` -> ``NP``, ``NP=2`` -> ``NP``, ``-NONE-`` stays."""
    if not label or label[0] == "-":
        return label
    return _FUNCTION_TAG.split(label, 1)[0]


def preprocess(sexpr, source: str = "", labelled: Optional[bool] = None) -> Optional[GoldSentence]:
    """Turn one bracket structure into a :class:`GoldSentence`; None if no word is kept.

    ``sexpr`` is nested lists as produced by :func:`onparse.trees.iter_sexprs`.
    ``labelled``: True for PTB trees (filtered by tag, labels kept), False for unlabelled
    trees (every atom a word, all kept, no labels), None to guess
    (:func:`onparse.trees.guess_labelled`).
    """
    if labelled is None:
        labelled = guess_labelled(sexpr)
    if not labelled:
        tree = sexpr_to_tree(sexpr, labelled=False)
        return GoldSentence.from_tree(tree, source)
    if len(sexpr) == 1 and isinstance(sexpr[0], list):  # .mrg wrapper ( (S ...) )
        sexpr = sexpr[0]
    if sexpr.__class__ is str:
        raise ValueError(_NOT_LABELLED)
    words: List[str] = []
    tokens: List[str] = []
    spans = set()
    labelled = set()
    word_tags = WORD_TAGS

    def walk(node) -> Optional[Tree]:
        # Returns the unlabelled subtree over kept tokens (None when nothing is kept) and
        # records spans and labels; positions are len(words) before and after the children.
        if node.__class__ is not list or len(node) < 2 or node[0].__class__ is not str:
            raise ValueError(_NOT_LABELLED)
        if len(node) == 2 and node[1].__class__ is str:  # pre-terminal (TAG word)
            if node[0] in word_tags:
                words.append(node[1])
                token = normalize_word(node[1])
                tokens.append(token)
                return token
            return None
        start = len(words)
        kids = []
        for child in node[1:]:
            kid = walk(child)
            if kid is not None:
                kids.append(kid)
        if not kids:
            return None
        end = len(words)
        if end - start >= 2:
            spans.add((start, end))
            name = base_label(node[0])
            if name:
                labelled.add((name, (start, end)))
        return kids[0] if len(kids) == 1 else tuple(kids)

    tree = walk(sexpr)
    if tree is None:
        return None
    return GoldSentence(
        words=tuple(words),
        tokens=tuple(tokens),
        tree=tree,
        spans=frozenset(spans),
        labelled=frozenset(labelled),
        source=source,
    )


def read_gold_text(text: str, source: str) -> List[GoldSentence]:
    """Preprocess every tree of a bracketed text; trees with no kept word are skipped.

    The text is read as labelled PTB when any of its trees is clearly labelled
    (:func:`onparse.trees.guess_labelled`), or when all of them look labelled even with one
    word; then every tree must be labelled, so that a one-word tree ``( (S (NN yes)) )`` is
    not mistaken for three words.
    """
    items = list(iter_sexprs(text, source))
    labelled = any(guess_labelled(item.sexpr) for item in items) or (
        bool(items) and all(guess_labelled(item.sexpr, min_words=1) for item in items)
    )
    out = []
    for item in items:
        try:
            sentence = preprocess(item.sexpr, f"{source}:{item.line}", labelled)
        except ValueError as err:
            raise OnparseError(f"{source} line {item.line}: {err}") from None
        except RecursionError:
            raise OnparseError(f"{source} line {item.line}: tree nested too deeply to read") from None
        if sentence is not None:
            out.append(sentence)
    return out


# --------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------


def _nltk_data_dirs() -> List[Path]:
    # NLTK's own search path (NLTK_DATA first, then its defaults), restated so that finding
    # an unzipped sample does not pay for `import nltk` (over a second).
    dirs = [Path(p) for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    dirs.append(Path.home() / "nltk_data")
    for prefix in {sys.prefix, sys.exec_prefix, getattr(sys, "base_prefix", sys.prefix)}:
        dirs += [Path(prefix) / "nltk_data", Path(prefix) / "share" / "nltk_data", Path(prefix) / "lib" / "nltk_data"]
    dirs += [Path(p) for p in ("/usr/share/nltk_data", "/usr/local/share/nltk_data", "/usr/lib/nltk_data", "/usr/local/lib/nltk_data")]
    return dirs


#: The sample's files: WSJ 0001-0199, as NLTK's treebank reader lists them.
_SAMPLE_FILE = re.compile(r"wsj_\d{4}\.mrg")


@lru_cache(maxsize=1)  # wsj and wsj10 share one reading
def _nltk_sample() -> Tuple[GoldSentence, ...]:
    for base in _nltk_data_dirs():
        folder = base / "corpora" / "treebank" / "combined"
        if folder.is_dir():
            files = sorted(p for p in folder.iterdir() if _SAMPLE_FILE.fullmatch(p.name))
            if files:
                out: List[GoldSentence] = []
                for file in files:
                    out.extend(read_gold_text(file.read_text(encoding="utf-8"), file.name))
                return tuple(out)
    # Not unzipped on a known path (e.g. only treebank.zip): let NLTK find and read it.
    from .data import require

    require("treebank")
    from nltk.corpus import treebank

    out = []
    for fileid in treebank.fileids():
        out.extend(read_gold_text(treebank.raw(fileid), fileid))
    return tuple(out)


def _read_path(path: Path) -> List[GoldSentence]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.mrg") if p.is_file())
        if not files:
            raise OnparseError(f"gold folder {path} holds no .mrg files")
    else:
        files = [path]
    out: List[GoldSentence] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            raise OnparseError(f"cannot read gold file {file}: {err.strerror}") from None
        out.extend(read_gold_text(text, str(file)))
    if not out:
        raise OnparseError(f"gold {path} holds no trees")
    return out


def find_sections(ptb_root: Path) -> Path:
    """Return the folder holding the two-digit section folders (``00`` ... ``24``).

    Accepts the ``parsed/mrg/wsj`` folder itself, or one of its parents ``parsed/mrg`` /
    ``parsed``; raises OnparseError otherwise.
    """
    for candidate in (ptb_root, ptb_root / "wsj", ptb_root / "mrg" / "wsj"):
        if candidate.is_dir() and any(
            p.is_dir() and re.fullmatch(r"\d\d", p.name) for p in candidate.iterdir()
        ):
            return candidate
    raise OnparseError(
        f"PTB root {ptb_root}: no section folders 00..24 found "
        "(expected the LDC treebank's parsed/mrg/wsj folder)"
    )


@lru_cache(maxsize=4)
def _read_sections(ptb_root: Path, sections: Optional[Tuple[str, ...]]) -> Tuple[GoldSentence, ...]:
    base = find_sections(ptb_root)
    present = sorted(p.name for p in base.iterdir() if p.is_dir() and re.fullmatch(r"\d\d", p.name))
    wanted = present if sections is None else list(sections)
    out: List[GoldSentence] = []
    for section in wanted:
        folder = base / section
        files = sorted(folder.glob("*.mrg")) if folder.is_dir() else []
        if not files:
            raise OnparseError(f"PTB root {base}: section {section} has no .mrg files")
        for file in files:
            text = file.read_text(encoding="utf-8", errors="replace")
            out.extend(read_gold_text(text, f"{section}/{file.name}"))
    return tuple(out)


def resolve_ptb_root(ptb_root: Optional[os.PathLike]) -> Optional[Path]:
    """``ptb_root`` if given, else ``$ONPARSE_PTB_ROOT`` if set (and non-empty), else None."""
    if ptb_root is None:
        ptb_root = os.environ.get(PTB_ROOT_ENV) or None
    return None if ptb_root is None else Path(ptb_root)


def is_gold_spec(spec: str) -> bool:
    """True when ``spec`` is a gold set name or an existing file/folder (cheap, loads nothing)."""
    return spec in GOLD_NAMES or Path(spec).exists()


def load_gold(name: str, ptb_root: Optional[os.PathLike] = None) -> Gold:
    """Load and preprocess a gold set: a name of :data:`GOLD_NAMES` or a file/folder path.

    ``ptb_root`` defaults to ``$ONPARSE_PTB_ROOT``.  Named sets are cached per process (files
    given by path are read every time, so edits show).  Raises OnparseError for an unknown
    name, a missing LDC treebank, or unreadable or malformed files.
    """
    name = str(name)
    if name in GOLD_NAMES:
        root = resolve_ptb_root(ptb_root)
        return _load_named(name, None if root is None else str(root.resolve()))
    path = Path(name)
    if not path.exists():
        raise OnparseError(
            f"unknown gold '{name}': not one of {', '.join(GOLD_NAMES)} and no such file or folder"
        )
    return Gold(name, tuple(_read_path(path)))


@lru_cache(maxsize=8)
def _load_named(name: str, root: Optional[str]) -> Gold:
    if root is None:
        if name in _SECTIONS:
            raise OnparseError(
                f"gold '{name}' needs the LDC Penn Treebank: pass --ptb-root DIR "
                f"or set {PTB_ROOT_ENV} to its parsed/mrg/wsj folder"
            )
        sentences = _nltk_sample()
    else:
        sentences = _read_sections(Path(root), _SECTIONS.get(name))
    if name == "wsj10":
        sentences = tuple(s for s in sentences if len(s) <= WSJ10_MAX_WORDS)
    return Gold(name, sentences)

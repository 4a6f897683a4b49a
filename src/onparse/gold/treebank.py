"""Gold trees: where they come from and how they are preprocessed.  No torch.

Gold sets (:func:`load_gold`):

- ``wsj10`` / ``wsj``: NLTK's ``treebank`` sample (WSJ files 0001-0199) by default; sentences
  with at most 10 kept words / all of them.
- ``wsj-sample-dev`` / ``wsj10-sample-dev``: the sample's first half, WSJ section 00 (files
  0001-0099), all lengths / at most 10 words: the **dev** half, which may choose anything.
  ``wsj-sample-test`` / ``wsj10-sample-test``: its second half, section 01 (files 0100-0199):
  the **test** half, reported and never chosen from.  With the LDC treebank they are read
  from its sections 00 and 01, which hold the same files.
- With ``ptb_root`` (or the environment variable ``ONPARSE_PTB_ROOT``) pointing at the LDC
  treebank's ``parsed/mrg/wsj`` folder (``00/wsj_0001.mrg`` ...): ``wsj10`` and ``wsj`` use
  every section, ``wsj-test`` is section 23 and ``wsj-valid`` section 22.
- ``alpino``, ``cess_esp``, ``floresta`` (NLTK's Dutch, Spanish and Portuguese treebanks),
  ``alpino10`` ... (at most 10 kept words), and their held-out parts: ``alpino-dev``,
  ``alpino10-dev`` ... (the **dev** part) and ``alpino-test``, ``alpino10-test`` ... (the
  **test** part) (:mod:`onparse.gold.multilingual`).
- A path: a file of bracketed trees (one per line or multi-line ``.mrg``) or a folder whose
  ``.mrg`` files (searched recursively, sorted by path) hold them.

Preprocessing follows ``docs/onlstm.md`` section 4, for any tag set: keep a leaf only
when its tag marks a word (the tag-set preset of :mod:`onparse.gold.tagsets`: for the Penn Treebank,
one of the 36 word tags, so punctuation, currency signs and ``-NONE-`` go; for a file, the
preset is detected from its tags, or given), lowercase and turn digit runs into ``N``; nodes
left without words disappear, unary chains collapse, labels lose their function tags and
indices (``NP-SBJ-1`` -> ``NP``).  A constituent is a span of >= 2 words.  Unlabelled trees
keep every word.
"""
from __future__ import annotations

import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import FrozenSet, Iterator, List, Optional, Tuple

from . import tagsets
from ..errors import OnparseError
from ..text.data import require
from .multilingual import TREEBANKS, read_treebank, split_of
from ..files.safeio import MAX_LINE_BYTES, read_text
from ..text.tokens import gold_text_line, normalize_word
from ..trees.tree import Span, Tree, guess_labelled, is_labelled, iter_sexprs, leaves, sexpr_to_tree, spans_to_tree, tree_spans
from ..trees.tree import depth as tree_depth

#: Environment variable naming the LDC ``parsed/mrg/wsj`` folder.
PTB_ROOT_ENV = "ONPARSE_PTB_ROOT"
#: Gold sets of the LDC treebank's sections (need --ptb-root).
_LDC_NAMES = ("wsj-test", "wsj-valid")
#: NLTK's treebanks in other languages: NAME, NAME10, and their gold parts NAME-dev, NAME10-dev,
#: NAME-test, NAME10-test.
_FOREIGN_PARTS = ("dev", "test")
_FOREIGN = tuple(f"{t}{short}{part}" for t in TREEBANKS
                 for part in ("", *(f"-{p}" for p in _FOREIGN_PARTS)) for short in ("", "10"))
#: The sample's dev and test halves: name -> (LDC section, first and last file number).
SAMPLE_HALVES = {"wsj-sample-dev": ("00", 1, 99), "wsj10-sample-dev": ("00", 1, 99),
                 "wsj-sample-test": ("01", 100, 199), "wsj10-sample-test": ("01", 100, 199)}
#: Gold set names.
GOLD_NAMES = ("wsj10", "wsj") + tuple(SAMPLE_HALVES) + _LDC_NAMES + _FOREIGN
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
        """Depth of the gold tree (:func:`onparse.trees.tree.depth`), computed once."""
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
    tagset: str = "ptb"              # the tag-set preset that decided which leaves are words
    notes: Tuple[str, ...] = ()      # what reading set aside or chose, for stderr

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

    def text_lines(self, normalized: bool = False) -> List[str]:
        """Each sentence as a line of raw text that ``onparse induce`` reads back into the same
        words (:func:`onparse.text.tokens.gold_text_line`); ``normalized``: the scored tokens."""
        return [gold_text_line(words) for words in (self.tokens if normalized else self.words)]


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


def preprocess(sexpr, source: str = "", labelled: Optional[bool] = None,
               tagset: Optional["tagsets.TagSet"] = None) -> Optional[GoldSentence]:
    """Turn one bracket structure into a :class:`GoldSentence`; None if no word is kept.

    ``sexpr`` is nested lists as produced by :func:`onparse.trees.tree.iter_sexprs`.
    ``labelled``: True for labelled trees (leaves filtered by ``tagset``, default the Penn
    Treebank's; labels kept), False for unlabelled trees (every atom a word, all kept, no
    labels), None to guess (:func:`onparse.trees.tree.guess_labelled`).
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
    keeps = (tagset or tagsets.PRESETS["ptb"]).keeps

    def walk(node) -> Optional[Tree]:
        # Returns the unlabelled subtree over kept tokens (None when nothing is kept) and
        # records spans and labels; positions are len(words) before and after the children.
        if node.__class__ is not list or len(node) < 2 or node[0].__class__ is not str:
            raise ValueError(_NOT_LABELLED)
        if len(node) == 2 and node[1].__class__ is str:  # pre-terminal (TAG word)
            if keeps(node[0], node[1]):
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


def _looks_labelled(items) -> bool:
    # Labelled when some tree clearly is (uppercase PTB labels), or when nearly every tree is a
    # labelled structure with at least two words, whatever the case of its labels (alpino's
    # "(top (punct ,) (smain ...))"): unlabelled trees from a parser are never that.
    if any(guess_labelled(item.sexpr) for item in items):
        return True
    if not items:
        return False
    structural = sum(is_labelled(item.sexpr) and _preterminals(item.sexpr) >= 2 for item in items)
    if structural >= 0.9 * len(items) and structural:
        return True
    return all(is_labelled(item.sexpr) for item in items)  # e.g. one-word trees ( (S (NN yes)) )


def _preterminals(sexpr) -> int:
    count, todo = 0, [sexpr]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            if len(node) == 2 and isinstance(node[1], str) and isinstance(node[0], str):
                count += 1
            else:
                todo.extend(node[1:] if node and isinstance(node[0], str) else node)
    return count


def tag_counts(sexprs) -> Counter:
    """How often each pre-terminal tag occurs in labelled trees (nested lists)."""
    counts: Counter = Counter()
    todo = list(sexprs)
    while todo:
        node = todo.pop()
        if isinstance(node, list) and node:
            if len(node) == 2 and isinstance(node[0], str) and isinstance(node[1], str):
                counts[node[0]] += 1
            else:
                todo.extend(c for c in node if isinstance(c, list))
    return counts


def choose_tagset(sexprs, tagset: Optional["tagsets.TagSet"] = None, source: str = ""):
    """``(tag set, note)``: ``tagset`` when given, else the preset detected from the trees'
    tags (:func:`onparse.gold.tagsets.detect`); the note says what was chosen, for stderr."""
    if tagset is not None:
        return tagset, f"{source}: tag set {tagset.name} ({tagset.description})"
    chosen, share = tagsets.detect(tag_counts(sexprs))
    if chosen.name == "unicode":
        return chosen, (f"{source}: the tags match no preset ({', '.join(tagsets.NAMES[:-1])}; best "
                        f"{100 * share:.0f}% of tags); words are kept by the Unicode word rule instead "
                        "(give --tagset or --punct-tags/--empty-tags to decide)")
    return chosen, f"{source}: tag set {chosen.name} detected ({chosen.description})"


def read_gold_text(text: str, source: str, tagset: Optional["tagsets.TagSet"] = None,
                   notes: Optional[list] = None) -> List[GoldSentence]:
    """Preprocess every tree of a bracketed text; trees with no kept word are skipped.

    The text is read as labelled when its trees are labelled (:func:`_looks_labelled`; the
    case of labels does not matter); then every tree must be labelled, so that a one-word tree
    ``( (S (NN yes)) )`` is not mistaken for three words.  Leaves are kept by ``tagset``, or
    by the preset detected from the tags; the choice is appended to ``notes``.
    """
    return _gold_sentences(list(iter_sexprs(text, source)), source, tagset, notes)


def _gold_sentences(items, source: str, tagset=None, notes: Optional[list] = None) -> List[GoldSentence]:
    """:func:`read_gold_text` on trees already parsed (``iter_sexprs`` items of ``source``)."""
    labelled = _looks_labelled(items)
    if labelled:
        tagset, note = choose_tagset([item.sexpr for item in items], tagset, source)
        if notes is not None:
            notes.append(note)
    out = []
    for item in items:
        try:
            sentence = preprocess(item.sexpr, f"{source}:{item.line}", labelled, tagset)
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
_SAMPLE_FILE = re.compile(r"wsj_(\d{4})\.mrg")


@lru_cache(maxsize=1)  # wsj and wsj10 share one reading
def _nltk_sample() -> Tuple[GoldSentence, ...]:
    for base in _nltk_data_dirs():
        folder = base / "corpora" / "treebank" / "combined"
        if folder.is_dir():
            files = sorted(p for p in folder.iterdir() if _SAMPLE_FILE.fullmatch(p.name))
            if files:
                out: List[GoldSentence] = []
                for file in files:
                    out.extend(read_gold_text(read_text(file), file.name, _PTB))
                return tuple(out)
    # Not unzipped on a known path (e.g. only treebank.zip): let NLTK find and read it.
    require("treebank")
    from nltk.corpus import treebank

    out = []
    for fileid in treebank.fileids():
        out.extend(read_gold_text(treebank.raw(fileid), fileid, _PTB))
    return tuple(out)


def _read_path(path: Path, tagset=None, max_line_bytes: int = MAX_LINE_BYTES
               ) -> Tuple[List[GoldSentence], "tagsets.TagSet", List[str]]:
    """The trees of a file or folder, the tag set that read them (None: unlabelled trees), and
    the notes for stderr.  The tag set is detected once, from every file's tags together."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.mrg") if p.is_file())
        if not files:
            raise OnparseError(f"gold folder {path} holds no .mrg files")
    else:
        files = [path]
    parsed = [(str(file), list(iter_sexprs(read_text(file, f"gold file {file}", line_limit=max_line_bytes), str(file))))
              for file in files]
    notes: List[str] = []
    if tagset is None:
        # One decision for the file or folder: the tags of all its trees, when labelled.
        items = [item for _, trees in parsed for item in trees]
        if len(parsed) > 1 or _looks_labelled(items):
            tagset, note = choose_tagset([item.sexpr for item in items], None, str(path))
            notes.append(note)
    out: List[GoldSentence] = []
    for source, trees in parsed:
        out.extend(_gold_sentences(trees, source, tagset))
    if not out:
        raise OnparseError(f"gold {path} holds no trees")
    return out, tagset, notes


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
            text = read_text(file, f"gold file {file}")
            out.extend(read_gold_text(text, f"{section}/{file.name}", _PTB))
    return tuple(out)


def resolve_ptb_root(ptb_root: Optional[os.PathLike]) -> Optional[Path]:
    """``ptb_root`` if given, else ``$ONPARSE_PTB_ROOT`` if set (and non-empty), else None."""
    if ptb_root is None:
        ptb_root = os.environ.get(PTB_ROOT_ENV) or None
    return None if ptb_root is None else Path(ptb_root)


def is_gold_spec(spec: str) -> bool:
    """True when ``spec`` is a gold set name or an existing file/folder (cheap, loads nothing)."""
    return spec in GOLD_NAMES or Path(spec).exists()


def load_gold(name: str, ptb_root: Optional[os.PathLike] = None, tagset: Optional["tagsets.TagSet"] = None,
              max_line_bytes: int = MAX_LINE_BYTES) -> Gold:
    """Load and preprocess a gold set: a name of :data:`GOLD_NAMES` or a file/folder path.

    ``ptb_root`` defaults to ``$ONPARSE_PTB_ROOT``.  ``tagset``: which leaves are words
    (:mod:`onparse.gold.tagsets`; default: each named set's own preset, and for a path the preset
    detected from its tags).  Named sets are cached per process (files given by path are read
    every time, so edits show).  The returned :class:`Gold` carries the tag set and the notes
    to print.  A line of a file longer than ``max_line_bytes`` is an error naming it.  Raises
    OnparseError for an unknown name, a missing LDC treebank, or unreadable or malformed files.
    """
    name = str(name)
    if name in GOLD_NAMES and tagset is None:
        root = resolve_ptb_root(ptb_root)
        return _load_named(name, None if root is None else str(root.resolve()))
    path = Path(name)
    if name in GOLD_NAMES and not path.exists():
        raise OnparseError(f"gold '{name}' has its own tag set; --tagset and tag lists go with a gold file")
    if not path.exists():
        raise OnparseError(
            f"unknown gold '{name}': not one of {', '.join(GOLD_NAMES)} and no such file or folder"
        )
    sentences, chosen, notes = _read_path(path, tagset, max_line_bytes)
    return Gold(name, tuple(sentences), chosen.name if chosen else "unlabelled", tuple(notes))


@lru_cache(maxsize=8)
def _load_named(name: str, root: Optional[str]) -> Gold:
    if name in _FOREIGN:
        return _load_foreign(name)
    if root is None:
        if name in _SECTIONS:
            raise OnparseError(
                f"gold '{name}' needs the LDC Penn Treebank: pass --ptb-root DIR "
                f"or set {PTB_ROOT_ENV} to its parsed/mrg/wsj folder"
            )
        sentences = _nltk_sample()
        if name in SAMPLE_HALVES:
            _, first, last = SAMPLE_HALVES[name]
            sentences = tuple(s for s in sentences if first <= _file_number(s.source) <= last)
    elif name in SAMPLE_HALVES:
        sentences = _read_sections(Path(root), (SAMPLE_HALVES[name][0],))
    else:
        sentences = _read_sections(Path(root), _SECTIONS.get(name))
    if name.startswith("wsj10"):
        sentences = tuple(s for s in sentences if len(s) <= WSJ10_MAX_WORDS)
    return Gold(name, sentences)


def _file_number(source: str) -> int:
    """The WSJ file number in a sample sentence's source (``wsj_0042.mrg:7`` -> 42)."""
    return int(_SAMPLE_FILE.search(source).group(1))


def _load_foreign(name: str) -> Gold:
    """``alpino``, ``alpino10``, ``alpino-dev``, ``alpino10-test`` and the like."""
    base, _, part = name.partition("-")
    short = base.endswith("10")
    treebank = base[:-2] if short else base
    read = read_treebank(treebank)
    tagset = tagsets.get(TREEBANKS[treebank])
    n = len(read.sexprs)
    out = []
    for i, sexpr in enumerate(read.sexprs):
        if sexpr is None or (part and split_of(i, n) != part):
            continue
        sentence = preprocess(sexpr, f"{treebank}:{i + 1}", True, tagset)
        if sentence is not None and (not short or len(sentence) <= WSJ10_MAX_WORDS):
            out.append(sentence)
    return Gold(name, tuple(out), tagset.name, tuple(read.notes()))


_PTB = tagsets.PRESETS["ptb"]

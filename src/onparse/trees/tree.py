"""Unlabelled trees: reading and writing brackets, spans, depth.  No torch.

An unlabelled tree is a leaf ``str`` or a ``tuple`` of child trees, e.g.
``(("the", "cat"), ("sat", "down"))``.  A span is ``(start, end)`` over word positions,
``end`` exclusive.  Spans are the common currency between trees and metrics: a tree's
constituents are the spans of its internal nodes that cover at least two words
(:func:`tree_spans`), and :func:`spans_to_tree` builds the tree back.

Bracketed text comes in two shapes, both read by :func:`parse_brackets`:

- unlabelled: ``((the cat) (sat down))`` — what :func:`to_brackets` writes;
- labelled PTB: ``(S (NP (DT the) (NN cat)) (VBD sat))`` or the ``.mrg`` form with an
  unlabelled outer wrapper ``( (S ...) )``; labels and part-of-speech tags are dropped.

:func:`read_trees` splits a text into trees (one per line, or multi-line ``.mrg`` style) and
reports malformed input as :class:`~onparse.errors.OnparseError` naming the line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import OnparseError

#: An unlabelled tree: a word, or a tuple of subtrees.
Tree = Union[str, tuple]
#: A constituent: ``(start, end)`` word positions, ``end`` exclusive.
Span = Tuple[int, int]

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


# --------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BracketText:
    """One tree's raw bracket structure and where it came from.

    ``sexpr`` is the tree as nested Python lists of ``str`` atoms (``["S", ["NP", ...]]``),
    or a bare ``str`` for a one-word line; ``line`` is the 1-based line it starts on.
    """

    sexpr: Union[str, list]
    line: int


def iter_sexprs(text: str, source: str = "input", first_line: int = 1) -> Iterator[BracketText]:
    """Split ``text`` into top-level bracket structures, one per tree.

    Trees may span several lines (``.mrg`` style) or sit one per line.  A line holding a
    single atom and nothing else is a one-word tree.  Anything else outside brackets, an
    unmatched ``)``, an unclosed ``(`` or an empty pair ``()`` raises OnparseError naming the
    line: ``"{source} line 3: unbalanced parentheses: ..."``.
    """
    # Hot loop when reading a treebank: one regex call per line; a node is attached to its
    # parent when it opens, so closing it is just a pop.
    stack: List[list] = []  # ancestors of `node`
    node: Optional[list] = None  # the innermost open node; None between trees
    start = first_line
    for lineno, line in enumerate(text.split("\n"), first_line):
        tokens = _TOKEN.findall(line)
        for token in tokens:
            if token == "(":
                child: list = []
                if node is None:
                    start = lineno
                else:
                    node.append(child)
                    stack.append(node)
                node = child
            elif token == ")":
                if node is None:
                    raise OnparseError(
                        f"{source} line {lineno}: unbalanced parentheses: ')' with no matching '('"
                    )
                if not node:
                    raise OnparseError(f"{source} line {lineno}: malformed brackets: empty '()'")
                if stack:
                    node = stack.pop()
                else:
                    yield BracketText(node, start)
                    node = None
            elif node is not None:
                node.append(token)
            elif len(tokens) == 1:
                yield BracketText(token, lineno)
            else:
                raise OnparseError(
                    f"{source} line {lineno}: malformed brackets: {token!r} outside any '( ... )'"
                )
    if node is not None:
        raise OnparseError(
            f"{source} line {start}: unbalanced parentheses: {len(stack) + 1} '(' never closed"
        )


def is_labelled(sexpr) -> bool:
    """True when ``sexpr`` reads as a labelled PTB tree.

    Labelled means: every node is ``[label, word]`` (a pre-terminal) or ``[label, node, ...]``
    (only nodes after the label); the root may also be the ``.mrg`` wrapper ``[node]``.
    """
    if isinstance(sexpr, str):
        return False
    if len(sexpr) == 1 and isinstance(sexpr[0], list):  # ( (S ...) )
        sexpr = sexpr[0]
    todo = [sexpr]
    while todo:
        node = todo.pop()
        if len(node) < 2 or not isinstance(node[0], str):
            return False
        if len(node) == 2 and isinstance(node[1], str):
            continue
        for child in node[1:]:
            if not isinstance(child, list):
                return False
            todo.append(child)
    return True


def guess_labelled(sexpr, min_words: int = 2) -> bool:
    """Decide how to read a bracket structure when the caller did not say.

    Read as labelled when it is a valid labelled tree (:func:`is_labelled`) with at least
    ``min_words`` words whose labels and tags hold no lowercase letter (``NP-SBJ``, ``PRP$``, ``-NONE-``,
    ``,``).  Unlabelled binary trees such as ``(a (b (c d)))`` are also valid labelled trees,
    but with a single word (a unary chain over ``(c d)``); lowercase words such as
    ``(a (b c) (d e))`` do not look like labels.  The remaining ambiguity (a one-word labelled
    tree like ``(NN cat)``, all-capital words) is resolved by callers that know the expected
    words (:func:`read_tree_matching`).
    """
    if isinstance(sexpr, str):
        return False
    if len(sexpr) == 1 and isinstance(sexpr[0], list):  # ( (S ...) )
        sexpr = sexpr[0]
    # One pass that stops at the first sign of an unlabelled tree (usually the root).
    words = 0
    todo = [sexpr]
    while todo:
        node = todo.pop()
        label = node[0]
        if len(node) < 2 or label.__class__ is not str or label != label.upper():
            return False
        if len(node) == 2 and node[1].__class__ is str:
            words += 1
            continue
        for child in node[1:]:
            if child.__class__ is not list:
                return False
            todo.append(child)
    return words >= min_words


def _convert(sexpr, labelled: bool) -> Tree:
    # Unary nodes collapse into their child.  Labelled: a pre-terminal (TAG word) becomes its
    # word and a node's first atom (its label) is dropped.  Recursive (fast) with an
    # iterative fallback for trees nested deeper than the recursion limit.
    if isinstance(sexpr, str):
        return sexpr
    if labelled and len(sexpr) == 1 and isinstance(sexpr[0], list):  # .mrg wrapper
        sexpr = sexpr[0]
    try:
        return (_convert_labelled if labelled else _convert_plain)(sexpr)
    except RecursionError:
        return _convert_iterative(sexpr, labelled)


def _convert_plain(node: list) -> Tree:
    if len(node) == 1:
        child = node[0]
        return _convert_plain(child) if child.__class__ is list else child
    return tuple([_convert_plain(c) if c.__class__ is list else c for c in node])


def _convert_labelled(node: list) -> Tree:
    if len(node) == 2:
        child = node[1]
        return child if child.__class__ is str else _convert_labelled(child)
    return tuple([_convert_labelled(c) for c in node[1:]])


def _convert_iterative(sexpr: list, labelled: bool) -> Tree:
    out: dict = {}
    stack = [(sexpr, False)]
    while stack:
        node, done = stack.pop()
        if labelled:
            if len(node) == 2 and isinstance(node[1], str):
                out[id(node)] = node[1]
                continue
            children = node[1:]
        else:
            children = node
        if not done:
            stack.append((node, True))
            stack.extend((child, False) for child in children if isinstance(child, list))
            continue
        kids = tuple(out.pop(id(c)) if isinstance(c, list) else c for c in children)
        out[id(node)] = kids[0] if len(kids) == 1 else kids
    return out[id(sexpr)]


def sexpr_to_tree(sexpr, labelled: Optional[bool] = None) -> Tree:
    """Turn one bracket structure (from :func:`iter_sexprs`) into an unlabelled tree.

    ``labelled``: True = PTB labels and tags to drop, False = every atom is a word,
    None = :func:`guess_labelled`.  Raises ValueError when ``labelled=True`` but the
    structure is not a labelled tree.
    """
    if labelled is None:
        labelled = guess_labelled(sexpr)
    if labelled and not is_labelled(sexpr):
        raise ValueError("not a labelled tree: expected (LABEL word) or (LABEL (...) ...)")
    return _convert(sexpr, labelled)


def parse_brackets(text: str, labelled: Optional[bool] = None, *, source: Optional[str] = None,
                   line: int = 1) -> Tree:
    """Parse exactly one bracketed tree, labelled or not, into an unlabelled tree.

    >>> parse_brackets("((the cat) sat)")
    (('the', 'cat'), 'sat')
    >>> parse_brackets("(S (NP (DT the) (NN cat)) (VBD sat))")
    (('the', 'cat'), 'sat')

    Unary nodes collapse (``((a b))`` is ``('a', 'b')``); a lone word is a one-leaf tree.
    Raises OnparseError for malformed text or when the text holds no tree or several; with
    ``source``, every message names it and the ``line`` the text starts on (``"{source} line
    {line}: ..."``).
    """
    where = f"{source} line {line}: " if source else ""
    trees = list(iter_sexprs(text, source or "input", line))
    if len(trees) != 1:
        raise OnparseError(f"{where}expected one bracketed tree, found {len(trees)}")
    try:
        return sexpr_to_tree(trees[0].sexpr, labelled)
    except ValueError as err:
        raise OnparseError(f"{where}{err}") from None


def read_trees(text: str, source: str = "input", labelled: Optional[bool] = None) -> List[Tuple[Tree, int]]:
    """Read every tree of ``text``; return ``[(tree, line), ...]`` with 1-based start lines."""
    out = []
    for item in iter_sexprs(text, source):
        try:
            out.append((sexpr_to_tree(item.sexpr, labelled), item.line))
        except ValueError as err:
            raise OnparseError(f"{source} line {item.line}: {err}") from None
    return out


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------


def _escape(word: str) -> str:
    # Brackets inside words would break the format; PTB writes them as -LRB- / -RRB-.
    if "(" in word or ")" in word:
        return word.replace("(", "-LRB-").replace(")", "-RRB-")
    return word


def to_brackets(tree: Tree) -> str:
    """Write an unlabelled tree in bracket form: ``((the cat) (sat down))``.

    A one-word tree is written as the bare word; words holding ``(``/``)`` are escaped as
    ``-LRB-``/``-RRB-``.  :func:`parse_brackets` reads the result back unchanged.
    """
    return _write(tree, lambda word: _escape(word), "(")


def to_ptb(tree: Tree, label: str = "X", tag: str = "W", labels: Optional[Mapping[Span, str]] = None) -> str:
    """Write a tree as PTB brackets with placeholder labels, e.g. ``(X (X (W the) (W cat)) (W sat))``.

    Every internal node gets ``label`` (or, with ``labels``, its span's label there: a grammar's
    ``NT-12``) and every word a pre-terminal ``tag``; the output is readable by
    ``nltk.Tree.fromstring`` and by EVALB (score it with unlabelled settings).
    A one-word tree is its pre-terminal alone, ``(W word)``: a tree has no constituent of one
    word, so EVALB counts no bracket for it, as onparse's EVALB-style F1 counts none
    (:mod:`onparse.scores.metrics`).  Cost: O(n), O(n depth) with ``labels``.
    """
    if isinstance(tree, str):
        return f"({tag} {_escape(tree)})"
    opener = f"({label} " if not labels else lambda node, at: f"({labels.get((at, at + len(leaves(node))), label)} "
    return _write(tree, lambda word: f"({tag} {_escape(word)})", opener)


_CLOSE = object()  # end-of-node marker for the iterative writer


def _write(tree: Tree, write_word, open_text) -> str:
    # Iterative pre-order walk so that deep trees do not hit the recursion limit; ``open_text``
    # opens every node (a string), or is called with the node and its first word's position.
    parts: List[str] = []
    stack: list = [tree]
    need_space, at = False, 0
    while stack:
        item = stack.pop()
        if item is _CLOSE:
            parts.append(")")
            need_space = True
            continue
        if need_space:
            parts.append(" ")
        if isinstance(item, str):
            parts.append(write_word(item))
            need_space, at = True, at + 1
        else:
            parts.append(open_text if open_text.__class__ is str else open_text(item, at))
            need_space = False
            stack.append(_CLOSE)
            stack.extend(reversed(item))
    return "".join(parts)


# --------------------------------------------------------------------------------------
# Spans and structure
# --------------------------------------------------------------------------------------


def leaves(tree: Tree) -> List[str]:
    """The words of ``tree`` from left to right."""
    if isinstance(tree, str):
        return [tree]
    out: List[str] = []
    try:
        _leaves_into(tree, out)
    except RecursionError:  # deeper than the recursion limit: walk with a stack
        out = []
        stack = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                out.append(node)
            else:
                stack.extend(reversed(node))
    return out


def _leaves_into(node: tuple, out: List[str]) -> None:
    for child in node:
        if child.__class__ is str:
            out.append(child)
        else:
            _leaves_into(child, out)


def tree_spans(tree: Tree) -> List[Span]:
    """Spans of the internal nodes that cover at least two words, outermost first (pre-order).

    Includes the whole-sentence span ``(0, n)`` when ``n >= 2``; a span shared by a unary chain
    appears once.  ``tree_spans((("the", "cat"), "sat")) == [(0, 3), (0, 2)]``.
    """
    found = set()
    # Iterative walk; each frame is [node, start, next child index, position so far].
    stack = [[tree, 0, 0, 0]] if not isinstance(tree, str) else []
    while stack:
        frame = stack[-1]
        node = frame[0]
        if frame[2] < len(node):
            child = node[frame[2]]
            frame[2] += 1
            if isinstance(child, str):
                frame[3] += 1
            else:
                stack.append([child, frame[3], 0, frame[3]])
            continue
        stack.pop()
        start, end = frame[1], frame[3]
        if end - start >= 2:
            found.add((start, end))
        if stack:
            stack[-1][3] = end
    # Laminar spans sorted by (start, longest first) are exactly the pre-order.
    return sorted(found, key=lambda s: (s[0], -s[1]))


def spans_to_tree(words: Sequence[str], spans: Iterable[Span]) -> Tree:
    """Build the tree whose constituents are ``spans`` (plus the whole sentence).

    Spans of length < 2 and duplicates are ignored; words not grouped by a span become
    children of the smallest span around them, so missing spans give n-ary nodes.  For a tree
    without unary nodes, ``spans_to_tree(leaves(t), tree_spans(t)) == t``.  Raises ValueError
    for crossing spans or spans outside ``0 .. len(words)``.
    """
    n = len(words)
    if n == 0:
        raise ValueError("cannot build a tree over zero words")
    if n == 1:
        return words[0]
    chosen = {(0, n)}
    for a, b in spans:
        if not (0 <= a < b <= n):
            raise ValueError(f"span ({a}, {b}) outside a {n}-word sentence")
        if b - a >= 2:
            chosen.add((a, b))
    # Outer spans first (by start, longest first).  A stack of open spans nests them; a span
    # that starts inside the top one but ends beyond it crosses it.
    stack: List[Tuple[int, list]] = []  # (end, children so far)
    cursor = 0  # next word not yet placed
    result: list = []

    def close_until(position: int) -> None:
        nonlocal cursor
        while stack and stack[-1][0] <= position:
            end, kids = stack.pop()
            kids.extend(words[cursor:end])
            cursor = end
            (stack[-1][1] if stack else result).append(tuple(kids))

    for a, b in sorted(chosen, key=lambda s: (s[0], -s[1])):
        close_until(a)
        if stack:
            if b > stack[-1][0]:
                raise ValueError(f"span ({a}, {b}) crosses another span ending at {stack[-1][0]}")
            stack[-1][1].extend(words[cursor:a])
            cursor = a
        stack.append((b, []))
    close_until(n)
    return result[0]


def depth(tree: Tree) -> int:
    """Number of internal nodes on the longest root-to-word path: a word is 0, ``(a b)`` is 1.

    A right-branching tree over n words has depth n - 1; a balanced one about log2(n).
    """
    if isinstance(tree, str):
        return 0
    try:
        return _depth(tree)
    except RecursionError:
        pass
    best = 0
    stack = [(tree, 1)]
    while stack:
        node, d = stack.pop()
        if d > best:
            best = d
        for child in node:
            if not isinstance(child, str):
                stack.append((child, d + 1))
    return best


def _depth(node: tuple) -> int:
    best = 0
    for child in node:
        if child.__class__ is not str:
            d = _depth(child)
            if d > best:
                best = d
    return best + 1


def read_tree_matching(sexpr, matches: Callable[[List[str]], bool]) -> Tuple[Tree, List[str]]:
    """Read ``sexpr`` the way whose words satisfy ``matches(words)``; return ``(tree, words)``.

    Used when the expected words are known (scoring against gold): the guessed reading is
    tried first, then the other one.  Returns the guessed reading when neither matches, so
    that the caller reports the mismatch on what the user most likely meant.
    """
    guess = guess_labelled(sexpr)
    first = sexpr_to_tree(sexpr, guess)
    first_words = leaves(first)
    if matches(first_words):
        return first, first_words
    if guess or is_labelled(sexpr):
        other = sexpr_to_tree(sexpr, not guess)
        other_words = leaves(other)
        if matches(other_words):
            return other, other_words
    return first, first_words


def split_sizes(tree: Tree) -> List[int]:
    """Per word position ``k``, the size of the constituent that splits between words ``k - 1``
    and ``k`` (0 where none does, always at ``k = 0``): distances that the ``split`` decoder
    turns back into ``tree`` when it is binary (``onparse show``'s bars for a student).

    >>> split_sizes((("the", "cat"), ("sat", "down")))
    [0, 2, 4, 2]
    """
    words = leaves(tree)
    ends: dict = {}
    for i, j in tree_spans(tree):
        ends.setdefault(i, []).append(j)
    out = [0] * len(words)
    for i, js in ends.items():
        for j in js:
            inner = [e for e in js if e < j]
            k = max(inner) if inner else i + 1
            if k < len(words):
                out[k] = max(out[k], j - i)
    return out

"""Every token of a sentence in the tree: the model's tree over the words, with the other tokens
placed by one fixed rule.

A model reads the *words* of a sentence (:meth:`onparse.text.tokens.Preprocessor.keeps`: a token
that holds a letter or a digit, or punctuation the model's vocabulary holds as a word); the
other tokens, punctuation and whitespace, are no part of its tree.  A pipeline such as spaCy's
needs every token in the tree, so they are placed by this rule:

- a run of other tokens between two words goes into the smallest constituent that holds both
  words, between the two of its parts that hold them (in a binary tree, the constituent where
  the sentence splits between the two words: a comma between two clauses sits where the
  clauses meet);
- a run at the start or the end of the sentence goes into the sentence's own constituent, first
  or last (so a full stop hangs from the top);
- a sentence without words is one flat constituent over its tokens.

No constituent over the words changes: each keeps its words, with the other tokens between them,
so the spans of the model's tree are the spans here, read over words.  A constituent's label is
the one a grammar gives its words (``NT-12``), else ``X``; the sentence is always a constituent,
except a sentence of one token, which is that token alone.

Trees here are lists of nodes ``(start, end, label)`` over token positions (``end`` exclusive),
the sentence first, in pre-order: the constituents of two tokens or more, one per span (a tree
has no unary node).  Each token is a leaf with a tag: :data:`WORD_TAG` (read by the model),
:data:`PUNCT_TAG` or :data:`SPACE_TAG`.  Pure Python: no spaCy, no torch.

>>> place(("(", "The", ",", "cat", "sat", "."), [False, True, False, True, True, False],
...       ((("The", "cat"), "sat")))
[(0, 6, 'X'), (1, 4, 'X')]
>>> write(("(", "The", ",", "cat", "sat", "."), ["P", "W", "P", "W", "W", "P"], [(0, 6, "X"), (1, 4, "X")])
'(X (P -LRB-) (X (W The) (P ,) (W cat)) (W sat) (P .))'
"""
import re
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

#: The label of a constituent no grammar names.
NODE_LABEL = "X"
#: Leaf tags: a token the model read, another non-space token (punctuation, symbols), whitespace.
WORD_TAG, PUNCT_TAG, SPACE_TAG = "W", "P", "SP"
TAGS = (WORD_TAG, PUNCT_TAG, SPACE_TAG)

Node = Tuple[int, int, str]
Span = Tuple[int, int]

#: How whitespace inside a token is written in brackets (PTB leaves hold no whitespace).
_SPACE_ESCAPES = {" ": "\\s", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
#: How brackets inside a token are written (as onparse writes them everywhere: -LRB-, -RRB-).
_BRACKET_ESCAPES = {"(": "-LRB-", ")": "-RRB-"}
_NEEDS_ESCAPE = re.compile(r"[\s()]")


def place(tokens: Sequence[str], read: Sequence[bool], tree, labels: Optional[Mapping[Span, str]] = None) -> List[Node]:
    """The constituents of a sentence of ``tokens`` (module docstring): ``read[i]`` says whether
    the model read token ``i``; ``tree`` is its tree over the tokens it read, in order (nested
    tuples, :mod:`onparse.trees.tree`; a string for one word; None for none); ``labels`` maps a
    span over those words (``(first, last + 1)``) to its label.  Returns the nodes, the
    sentence's first (nothing for a sentence of one token).  Cost: O(n), without recursion."""
    n = len(tokens)
    positions = [i for i in range(n) if read[i]]
    labels = labels or {}
    if tree is None or not positions:
        if any(read):
            raise ValueError("a sentence with words needs their tree")
        return [(0, n, NODE_LABEL)] if n > 1 else []
    sizes = _sizes(tree)
    if sizes[id(tree)] != len(positions):
        raise ValueError(f"the tree has {sizes[id(tree)]} words, the sentence {len(positions)}")
    if isinstance(tree, str):
        return [(0, n, NODE_LABEL)] if n > 1 else []
    out: List[Node] = []
    # Pre-order walk over the word tree; ``word`` counts the words left of the node.
    stack = [(tree, 0, True)]
    while stack:
        node, word, is_root = stack.pop()
        if isinstance(node, str):
            continue
        size = sizes[id(node)]
        start, end = (0, n) if is_root else (positions[word], positions[word + size - 1] + 1)
        out.append((start, end, labels.get((word, word + size), NODE_LABEL)))
        children, at = [], word
        for child in node:
            children.append((child, at, False))
            at += 1 if isinstance(child, str) else sizes[id(child)]
        stack.extend(reversed(children))
    return out


def _sizes(tree) -> Dict[int, int]:
    """Words under each internal node of ``tree`` (by ``id``; a lone word: 1), post-order."""
    if isinstance(tree, str):
        return {id(tree): 1}
    sizes: Dict[int, int] = {}
    stack = [(tree, False)]
    while stack:
        node, done = stack.pop()
        if done:
            sizes[id(node)] = sum(1 if isinstance(c, str) else sizes[id(c)] for c in node)
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in node if not isinstance(c, str))
    return sizes


def children_of(nodes: Sequence[Node], n: int) -> Tuple[Dict[Span, List[Span]], Dict[Span, Optional[Span]]]:
    """Each constituent's children, in order (constituents and single tokens ``(i, i + 1)``),
    and each span's parent (None for the sentence), for a sentence of ``n`` tokens whose
    ``nodes`` :func:`place` gave (offsets as given: they may be shifted to the document's).
    Cost: O(n)."""
    kids: Dict[Span, List[Span]] = {}
    parent: Dict[Span, Optional[Span]] = {}
    if not nodes:
        return kids, parent
    first = nodes[0][0]
    if nodes[0][1] - first != n:
        raise ValueError("the first node is not the sentence")
    stack: List[Span] = []
    for start, end, _ in nodes:
        while stack and stack[-1][1] <= start:
            stack.pop()
        span = (start, end)
        if stack:
            if not (stack[-1][0] <= start and end <= stack[-1][1]):
                raise ValueError(f"node {span} crosses node {stack[-1]}")
            kids[stack[-1]].append(span)
        parent[span] = stack[-1] if stack else None
        kids[span] = []
        stack.append(span)
    # Fill each constituent's gaps with its single tokens: a token's parent is the smallest
    # constituent that holds it, the one in whose gaps it lies.
    for span, inner in kids.items():
        merged, at = [], span[0]
        for child in inner + [(span[1], span[1])]:
            for i in range(at, child[0]):
                merged.append((i, i + 1))
                parent[(i, i + 1)] = span
            merged.append(child)
            at = child[1]
        kids[span] = merged[:-1]
    return kids, parent


def write(tokens: Sequence[str], tags: Sequence[str], nodes: Sequence[Node], span: Optional[Span] = None) -> str:
    """PTB brackets of the constituent ``span`` (default: the sentence) of a sentence of
    ``tokens`` whose constituents are ``nodes`` (offsets as ``span``'s) and whose leaves carry
    ``tags``: ``(X (W The) (W cat))`` (:func:`write_span`).  Cost: O(n)."""
    first = nodes[0][0] if nodes else 0
    children, _ = children_of(nodes, len(tokens))
    labels = {(a, b): label for a, b, label in nodes}
    return write_span(span or (first, first + len(tokens)), children, labels,
                      lambda i: tokens[i - first], lambda i: tags[i - first])


def write_span(span: Span, children: Mapping[Span, Sequence[Span]], labels: Mapping[Span, str],
               token: Callable[[int], str], tag: Callable[[int], str]) -> str:
    """PTB brackets of ``span``, a constituent (in ``labels``, with its parts in ``children``,
    as :func:`children_of` gives them) or a single token; ``token(i)`` and ``tag(i)`` give the
    text and tag of the token at position ``i``.  Brackets in a token are written
    ``-LRB-``/``-RRB-`` and whitespace as ``\\s``, ``\\n``, ``\\t``, ``\\r`` (others
    ``\\uXXXX``), so every token is one leaf of ``nltk.Tree.fromstring``.  ValueError for a
    span of several tokens that is no constituent.  Cost: O(length of the span), no recursion."""
    if span not in labels and span[1] - span[0] != 1:
        raise ValueError(f"{span} is not a constituent")
    parts: List[str] = []
    stack: list = [span]
    while stack:
        item = stack.pop()
        if item is None:
            parts.append(")")
        elif item in labels:
            parts.append(f" ({labels[item]}" if parts else f"({labels[item]}")
            stack.append(None)
            stack.extend(reversed(children[item]))
        else:
            parts.append(f"{' ' if parts else ''}({tag(item[0])} {leaf_text(token(item[0]))})")
    return "".join(parts)


def leaf_text(token: str) -> str:
    """A token as a PTB leaf (:func:`write`).

    >>> [leaf_text(t) for t in ("cat", "(", "\\n\\n", "New York", "\\u3000")]
    ['cat', '-LRB-', '\\\\n\\\\n', 'New\\\\sYork', '\\\\u3000']
    """
    if not _NEEDS_ESCAPE.search(token):
        return token
    return "".join(_BRACKET_ESCAPES.get(ch) or _SPACE_ESCAPES.get(ch)
                   or (f"\\u{ord(ch):04x}" if ch.isspace() else ch) for ch in token)

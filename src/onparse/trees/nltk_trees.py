"""Nested-tuple trees as :class:`nltk.Tree` objects, and tree text read back as them.

A parser's trees (:meth:`onparse.api.Parser.batch`) are binary nltk trees as ``nltk.Tree.fromstring``
reads ``onparse induce --format ptb``: constituents labelled :data:`NODE_LABEL`, each word under a
pre-terminal :data:`WORD_LABEL`.
"""
import os
from typing import Any, Dict, List, Optional

from ..errors import OnparseError
from .tree import guess_labelled, is_labelled, iter_sexprs, sexpr_to_tree

#: Label of every internal node of the nltk trees a parser returns.
NODE_LABEL = "X"
#: Label of the pre-terminal node over each word (the tag ``--format ptb`` writes).
WORD_LABEL = "W"


def to_nltk(tree) -> Any:
    """A nested-tuple tree as an :class:`nltk.Tree`: :data:`NODE_LABEL` over every internal node,
    :data:`WORD_LABEL` over every word (``nltk.Tree.fromstring(to_ptb(tree))``, with the words
    unescaped), built without recursion.  Cost: O(n)."""
    from nltk import Tree

    if isinstance(tree, str):
        return Tree(WORD_LABEL, [tree])
    # Post-order over the tuples: convert children before their parent.
    done: Dict[int, Any] = {}
    stack = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if isinstance(node, str):
            continue
        if expanded:
            done[id(node)] = Tree(NODE_LABEL, [Tree(WORD_LABEL, [c]) if isinstance(c, str) else done[id(c)]
                                               for c in node])
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in node)
    return done[id(tree)]


def read_trees(lines_or_path, labelled: Optional[bool] = None) -> List[Any]:
    """The trees of ``onparse induce`` output (``brackets`` or ``ptb``) or of treebank text, as
    :class:`nltk.Tree` objects shaped as :meth:`Parser.batch` returns them, in order (blank lines
    skipped).  ``lines_or_path``: a path (``str`` or ``os.PathLike``), an iterable of lines, or
    the text itself (a ``str`` holding ``(`` that names no file).  ``labelled``: True for PTB trees
    (labels and tags dropped), False when every atom is a word; None decides for the whole input:
    PTB when every tree reads as one and one at least looks like one (:func:`onparse.trees.tree.
    guess_labelled`; so ``--format ptb``'s one-word ``(W word)``), else tree by tree.  Labels are
    not kept (``nltk.Tree.fromstring`` keeps a PTB line's); unary nodes collapse.  OnparseError,
    naming the line, for malformed text."""
    source = "input"
    if not isinstance(lines_or_path, (str, os.PathLike)):
        text = "\n".join(line.rstrip("\n") for line in lines_or_path)
    elif isinstance(lines_or_path, str) and not os.path.isfile(lines_or_path) and "(" in lines_or_path:
        text = lines_or_path
    else:
        try:
            source = os.fspath(lines_or_path)
            with open(source, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as err:
            raise OnparseError(f"cannot read trees from {source}: {getattr(err, 'strerror', None) or err}") from None
    items = list(iter_sexprs(text, source))
    if labelled is None and all(is_labelled(i.sexpr) for i in items) and any(guess_labelled(i.sexpr) for i in items):
        labelled = True
    out = []
    for item in items:
        try:
            out.append(to_nltk(sexpr_to_tree(item.sexpr, labelled)))
        except ValueError as err:
            raise OnparseError(f"{source} line {item.line}: {err}") from None
    return out

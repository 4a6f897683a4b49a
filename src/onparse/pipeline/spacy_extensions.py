"""The ``Span._`` attributes of onparse's spaCy component, read from the trees it stores on a Doc.

The component (:mod:`onparse.pipeline.spacy_component`) stores each doc's trees in
``doc.user_data[KEY]`` as plain lists, ints and strings, so that they travel with the doc
(``Doc.to_bytes``, ``DocBin(store_user_data=True)``, ``nlp.pipe(n_process=2)``), and every attribute
is computed from them:

- ``span._.parse_string``: PTB brackets over spaCy's tokens, ``(X (X (W The) (W cat)) (W sat)
  (P .))``: ``X``, or a grammar's label (``NT-12``), over each constituent; ``W`` over a token the
  model read, ``P`` over punctuation, ``SP`` over whitespace (:mod:`onparse.pipeline.placement`);
- ``span._.constituents``: the span and every constituent inside it, single tokens included,
  outermost first, in pre-order (a generator, as benepar's);
- ``span._.parent``: the smallest constituent around it (None for a sentence);
- ``span._.children``: its parts, constituents and single tokens, in order (a generator);
- ``span._.labels``: ``("X",)`` or ``("NT-12",)`` for a constituent of two tokens or more, ``()``
  for a single token.

Each works on a span that is a constituent (a sentence of ``doc.sents``, or one that
``constituents``/``children``/``parent`` gave) and raises ValueError, in one line, for any
other.  :func:`register` adds them once; names that another package registered (benepar's are
the same) are refused, not overwritten.
"""
from collections import OrderedDict
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span

from .placement import children_of, write_span

#: Where a doc keeps its trees: ``{"tags": [tag per token], "sentences": [[start, end, nodes]]}``,
#: ``nodes`` as :func:`onparse.pipeline.placement.place` gives them, shifted to the doc's positions.
KEY = "onparse"
#: What the component gives every Span, and the getter of each.
NAMES = ("parse_string", "constituents", "parent", "children", "labels")

Pair = Tuple[int, int]


class Index(NamedTuple):
    """A doc's trees, ready to answer: each token's tag, each constituent's label and parts, and
    each span's parent (None for a sentence): a span is in the tree when it has an entry there."""

    tags: Sequence[str]
    labels: Dict[Pair, str]
    children: Dict[Pair, List[Pair]]
    parent: Dict[Pair, Optional[Pair]]


#: The last docs' indexes, by the identity of their stored trees (held here, so an id cannot be
#: reused while its entry lives): reading every constituent of a long sentence builds it once.
_CACHE: "OrderedDict[int, Tuple[Any, Index]]" = OrderedDict()
_CACHE_SIZE = 16


def store(doc: Doc, tags: Sequence[str], sentences: Sequence[Any]) -> None:
    """Keep ``doc``'s trees on it (module docstring): ``sentences`` holds ``[start, end, nodes]``."""
    doc.user_data[KEY] = {"tags": list(tags), "sentences": [[s, e, [list(n) for n in nodes]]
                                                            for s, e, nodes in sentences]}


def index_of(doc: Doc) -> Index:
    """The index of ``doc``'s stored trees.  ValueError when it has none, or when its tokens
    changed since they were parsed.  Cost: O(tokens), once per stored trees."""
    stored = doc.user_data.get(KEY)
    if stored is None:
        raise ValueError("this doc has no onparse trees: add the component first (nlp.add_pipe('onparse'))")
    cached = _CACHE.get(id(stored))
    if cached is not None and cached[0] is stored:
        index = cached[1]
    else:
        index = _build(stored)
        _CACHE[id(stored)] = (stored, index)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    if len(index.tags) != len(doc):
        raise ValueError(f"the doc has {len(doc)} tokens, its onparse trees {len(index.tags)}: parse it again")
    return index


def _build(stored) -> Index:
    labels: Dict[Pair, str] = {}
    children: Dict[Pair, List[Pair]] = {}
    parent: Dict[Pair, Optional[Pair]] = {}
    for start, end, nodes in stored["sentences"]:
        nodes = [(int(a), int(b), str(label)) for a, b, label in nodes]
        parent[(start, end)] = None                   # a sentence of one token has no node
        kids, up = children_of(nodes, end - start)
        children.update(kids)
        parent.update(up)
        labels.update({(a, b): label for a, b, label in nodes})
    return Index(list(stored["tags"]), labels, children, parent)


def _place(span: Span) -> Tuple[Index, Pair]:
    index = index_of(span.doc)
    pair = (span.start, span.end)
    if pair not in index.parent:
        raise ValueError(f"{span.text!r} (tokens {span.start}-{span.end}) is not a constituent of onparse's tree")
    return index, pair


def parse_string(span: Span) -> str:
    """PTB brackets of the constituent ``span``."""
    index, pair = _place(span)
    doc = span.doc
    return write_span(pair, index.children, index.labels, lambda i: doc[i].text, index.tags.__getitem__)


def labels(span: Span) -> Tuple[str, ...]:
    """``(label,)`` of a constituent of two tokens or more, ``()`` of a single token."""
    index, pair = _place(span)
    return (index.labels[pair],) if pair in index.labels else ()


def parent(span: Span) -> Optional[Span]:
    """The smallest constituent around ``span``; None for a sentence."""
    index, pair = _place(span)
    up = index.parent[pair]
    return None if up is None else span.doc[up[0]:up[1]]


def children(span: Span) -> Iterator[Span]:
    """The parts of ``span``, in order: constituents and single tokens (none for a token)."""
    index, pair = _place(span)
    doc = span.doc
    return (doc[a:b] for a, b in index.children.get(pair, ()))


def constituents(span: Span) -> Iterator[Span]:
    """``span`` and every constituent inside it, single tokens included, in pre-order."""
    index, pair = _place(span)
    return _walk(span.doc, index, pair)


def _walk(doc: Doc, index: Index, pair: Pair) -> Iterator[Span]:
    stack = [pair]
    while stack:
        a, b = stack.pop()
        yield doc[a:b]
        stack.extend(reversed(index.children.get((a, b), ())))


GETTERS = {"parse_string": parse_string, "constituents": constituents, "parent": parent,
           "children": children, "labels": labels}


def register() -> None:
    """Give ``Span._`` the attributes of :data:`NAMES`, once: a second call (or a spaCy worker
    process) finds them in place.  ValueError when another package took one of the names."""
    for name in NAMES:
        if Span.has_extension(name):
            getter = Span.get_extension(name)[2]
            if getattr(getter, "__module__", None) == __name__ and getattr(getter, "__name__", None) == name:
                continue
            raise ValueError(f"Span._.{name} is already registered by another package "
                             f"({getattr(getter, '__module__', 'unknown')}): onparse cannot share it")
        Span.set_extension(name, getter=GETTERS[name])

"""Gold trees one sentence at a time, as ``onparse show --gold`` names them: a bracketed tree,
sentences ``NAME:I-J`` of a gold set, or a file of trees.  No torch.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

from ..errors import OnparseError
from ..files.safeio import MAX_LINE_BYTES, read_text
from ..pictures.show import GoldTree
from .treebank import GOLD_NAMES, load_gold, read_gold_text
from ..trees.tree import Span, spans_to_tree


def _gold_tree(sentence, source: Optional[str] = None) -> GoldTree:
    """A :class:`GoldTree` over the surface words of a :class:`onparse.gold.treebank.GoldSentence`
    (``source`` replaces the sentence's own ``file:line``)."""
    spans = sorted(sentence.spans)
    tree = spans_to_tree(list(sentence.words), spans)
    names: Dict[Span, List[str]] = {}
    for label, span in sorted(sentence.labelled, key=lambda item: (item[1][0], -item[1][1], item[0])):
        names.setdefault(span, []).append(label)
    # A collapsed unary chain holds several labels on one span; outermost first reads best,
    # and the treebank's label order is lost, so list them in a fixed order: S before VP.
    order = {name: i for i, name in enumerate(("S", "SBAR", "SINV", "SQ", "VP", "NP", "PP", "ADJP", "ADVP"))}
    labels = {span: "/".join(sorted(found, key=lambda n: (order.get(n, len(order)), n)))
              for span, found in names.items()}
    return GoldTree(tree, labels, sentence.source if source is None else source)


def read_gold(spec: str, ptb_root=None, max_line_bytes: int = MAX_LINE_BYTES) -> List[GoldTree]:
    """Gold trees named by ``spec`` (what ``onparse show --gold`` accepts):

    - bracketed text (starts with ``(``): one or more trees, labelled PTB or unlabelled;
    - ``NAME:I`` or ``NAME:I-J`` with NAME a gold set (``wsj10``, ``wsj``, ...): its sentence(s)
      I..J, 1-based, inclusive;
    - the path of a file of bracketed trees (one per line, or multi-line ``.mrg``).

    Labelled trees are preprocessed like any gold set (punctuation and empty elements
    dropped, function tags stripped).  A line of a file longer than ``max_line_bytes`` is an
    error naming it.  Raises OnparseError for anything else.
    """
    text = spec.strip()
    if text.startswith("("):
        return [_gold_tree(s, "") for s in read_gold_text(text, "--gold")]
    name, sep, which = text.partition(":")
    if sep and name in GOLD_NAMES:
        first, dash, last = which.partition("-")
        try:
            i, j = int(first), int(last) if dash else int(first)
        except ValueError:
            raise OnparseError(f"--gold {spec}: expected {name}:I or {name}:I-J with sentence numbers") from None
        gold = load_gold(name, ptb_root)
        if not 1 <= i <= j <= len(gold):
            raise OnparseError(f"--gold {spec}: gold {name} has sentences 1..{len(gold):,}")
        return [_gold_tree(gold[k], f"{name} sentence {k + 1}, {gold[k].source}") for k in range(i - 1, j)]
    path = Path(text)
    if path.is_file():
        try:
            content = read_text(path, line_limit=max_line_bytes)
        except (OSError, UnicodeDecodeError) as err:
            raise OnparseError(f"cannot read {spec}: {getattr(err, 'strerror', None) or err}") from None
        return [_gold_tree(s) for s in read_gold_text(content, str(path))]
    raise OnparseError(f"--gold {spec!r}: not a bracketed tree, a gold set sentence "
                       f"({'|'.join(GOLD_NAMES)}:I) or an existing file")

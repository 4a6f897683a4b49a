"""What ``onparse show`` prints: an induced tree drawn in the terminal, and under it the
master-forget distance d_f of every word in every layer as a small bar chart.

The rendering functions are pure (strings in, strings out, no torch, no matplotlib), so the
output is deterministic and golden-file tests can pin it.  Trees are drawn by nltk's tree
pretty-printer; the bars are aligned under the tree's leaves (``onparse show``)::

    induced tree: layer 2 of 2, decoder onlstm
    ((the cat) (sat (on (the mat))))

         ┌───────┴───────┐
         │               │
         │       ┌───────┴───┐
         │       │           │
         │       │   ┌───────┴───┐
         │       │   │           │
     ┌───┴───┐   │   │       ┌───┴───┐
    the     cat sat  on     the     mat
    ▁▁▁     ▃▃▃ ███  ▂▂     ▅▅▅     ▂▂▂   layer 1    0.120–0.810
    ▁▁▁     ▃▃▃ ███  ▆▆     ▄▄▄     ▁▁▁   layer 2 *  0.120–0.830

A drawing wider than the terminal (``width``: 546 columns for a 40-word sentence) falls back
to :func:`render_compact`: the trees as bracketed text wrapped at the terminal's width, and one
line of horizontal bars per word.

The drawing touches no model: :func:`views_from_lines` runs the parser line by line and makes
the views, and :mod:`onparse.gold.gold_trees` reads the gold trees ``--gold`` names.  (It lives
here, not in :mod:`onparse.induce`, so that parsing imports no drawing code.)
"""
from __future__ import annotations

import textwrap
import warnings
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from ..scores.conventions import sentence_prf
from ..trees.decode import check_decoder, decode
from ..errors import OnparseError
from ..induce import tree_labels
from ..members import DEFAULT_DECODER, DEFAULT_LAYER, check_layer, first_of
from ..scores.token_match import token_mismatch
from ..kinds import SPLIT_SIZES
from ..text.tokens import DEFAULT_PUNCT
from ..trees.tree import Span, Tree, leaves, to_brackets, tree_spans

#: What the bars measure: a language model's distances, or the split sizes of the tree
#: (:data:`onparse.kinds.SPLIT_SIZES`, named with the contract's bars so that the contract need not
#: import this module) for a model without distances.
DISTANCES = "master-forget distance d_f"
#: Bar cells from empty to full: eighth blocks (Unicode) or a coarse ramp (ASCII).
UNICODE_RAMP = " ▁▂▃▄▅▆▇█"
ASCII_RAMP = " .:#"
#: How bars are scaled: ``layer`` maps each layer's smallest..largest value of the sentence to
#: the bar height (shows the ranking the decoder uses); ``unit`` maps 0..1 (absolute values).
SCALES = ("layer", "unit")
#: Widest bar, in characters (a bar is as wide as its word, up to this).
BAR_WIDTH = 3
#: Horizontal bar cells from empty to full, for the compact form (Unicode eighths, ASCII whole).
UNICODE_HBAR = " ▏▎▍▌▋▊▉█"
ASCII_HBAR = " #"
#: Widest horizontal bar of the compact form, in cells; and the widest word column.
HBAR_CELLS = 8
WORD_COLUMN = 16


@dataclass(frozen=True)
class GoldTree:
    """A gold tree for one sentence: the tree over the sentence's surface words and, for
    labelled (PTB) gold, the label(s) of each constituent span (``"NP"``, ``"S/VP"``)."""

    tree: Tree
    labels: Mapping[Span, str]
    source: str = ""

    @property
    def words(self) -> List[str]:
        """The sentence's words, in order."""
        return leaves(self.tree)


@dataclass(frozen=True)
class SentenceView:
    """Everything shown for one sentence.

    ``words``: the tokens the model read (the user's spelling, punctuation removed);
    ``distances``: per layer, the d_f of each word, shape ``(L, n)`` as nested tuples;
    ``layer``: the 1-based layer that was decoded with ``decoder`` into ``tree``;
    ``gold``: an optional gold tree over the same words.
    """

    words: Tuple[str, ...]
    distances: Tuple[Tuple[float, ...], ...]
    layer: int
    decoder: str
    tree: Tree
    gold: Optional[GoldTree] = None
    #: What the bars measure (:data:`DISTANCES` or :data:`SPLIT_SIZES`).
    measure: str = DISTANCES
    #: The induced tree's span labels when its model names them (a grammar's ``NT-12``), else None.
    labels: Optional[Mapping[Span, str]] = None

    @property
    def n_layers(self) -> int:
        return len(self.distances)

    def gold_prf(self) -> Optional[Tuple[float, float, float]]:
        """Sentence P, R, F1 of ``tree`` against ``gold`` (ON-LSTM convention), or None."""
        if self.gold is None:
            return None

        whole = (0, len(self.words))
        pred = set(tree_spans(self.tree)) - {whole}
        gold = set(tree_spans(self.gold.tree)) - {whole}
        return sentence_prf(len(pred & gold), len(pred), len(gold))


def make_view(words: Sequence[str], distances: Sequence[Sequence[float]], layer: int = DEFAULT_LAYER,
              decoder: str = DEFAULT_DECODER, gold: Optional[GoldTree] = None, tree: Optional[Tree] = None,
              measure: str = SentenceView.measure, labels: Optional[Mapping[Span, str]] = None) -> SentenceView:
    """Decode layer ``layer`` (1-based) of ``distances`` (``(L, n)``: d_f per layer and word)
    into a tree over ``words`` and bundle the lot; a given ``tree`` (an average of several
    members, whose ``decoder`` then names it) is used instead of decoding, drawn with its span
    ``labels`` when given.  ValueError for
    inconsistent shapes; OnparseError when ``gold``'s words differ from ``words``."""
    words = tuple(words)
    rows = tuple(tuple(float(x) for x in row) for row in distances)
    if not words:
        raise ValueError("a sentence view needs at least one word")
    if not rows or any(len(row) != len(words) for row in rows):
        raise ValueError(f"distances must have shape (layers, {len(words)})")
    check_layer(layer, len(rows))
    if tree is None:
        check_decoder(decoder)
    if gold is not None:
        _check_gold_words(words, gold)
    if tree is None:
        tree = decode(rows[layer - 1], list(words), decoder)
    return SentenceView(words, rows, layer, decoder, tree, gold, measure, dict(labels) if labels else None)


def _check_gold_words(words: Sequence[str], gold: GoldTree) -> None:
    problem = token_mismatch(leaves(gold.tree), words)
    if problem:
        where = f" ({gold.source})" if gold.source else ""
        # token_mismatch speaks of "the prediction" and "gold"; here the gold is the first side.
        problem = problem.replace("the prediction keeps", "the gold tree keeps").replace(", gold ", ", sentence ")
        problem = problem.replace("gold has", "the sentence has")
        raise OnparseError(f"gold tree{where} does not fit the sentence: {problem}")


# --------------------------------------------------------------------------------------
# Trees
# --------------------------------------------------------------------------------------


def _node_mark(unicode: bool) -> str:
    # An internal node without a label is drawn as a bare vertical stroke, so that the line
    # from its parent runs on unbroken into its own branch.
    return "│" if unicode else "|"


def to_nltk(tree: Tree, labels: Optional[Mapping[Span, str]] = None, unlabelled: str = "│",
            positions: bool = False):
    """An ``nltk.Tree`` for drawing: internal nodes get their span's label from ``labels`` or
    ``unlabelled``; leaves are the words, or with ``positions`` their 0-based positions
    (what nltk's pretty-printer needs to keep the word order, see :func:`draw_tree`).
    Iterative, so deep trees are fine."""
    from nltk import Tree as NltkTree

    labels = labels or {}
    if isinstance(tree, str):
        return NltkTree(labels.get((0, 1), unlabelled), [0 if positions else tree])
    next_word = 0
    # Post-order walk; a frame is [node, next child index, finished children, start position].
    frames = [[tree, 0, [], 0]]
    root = None
    while frames:
        frame = frames[-1]
        node, i, kids, start = frame
        if i < len(node):
            frame[1] += 1
            child = node[i]
            if isinstance(child, str):
                kids.append(next_word if positions else child)
                next_word += 1
            else:
                frames.append([child, 0, [], next_word])
            continue
        frames.pop()
        built = NltkTree(labels.get((start, next_word), unlabelled), kids)
        if frames:
            frames[-1][2].append(built)
        else:
            root = built
    return root


def draw_tree(tree: Tree, labels: Optional[Mapping[Span, str]] = None, unicode: bool = True) -> str:
    """The tree drawn with nltk's pretty-printer, words on the bottom line, trailing spaces
    removed.  A one-word tree is just the word.  ``labels``: optional span -> label text."""
    if isinstance(tree, str):
        return tree
    mark = _node_mark(unicode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            from nltk.tree import TreePrettyPrinter
        except ImportError:  # nltk < 3.6
            from nltk.treeprettyprinter import TreePrettyPrinter
        # Leaves are handed over as positions plus the word list: given words, the printer
        # orders them by its own traversal, which misplaces a word that is a sibling of a
        # subtree, e.g. it draws ((the cat) sat) as "sat the cat".
        printer = TreePrettyPrinter(to_nltk(tree, labels, mark, positions=True), list(leaves(tree)))
        text = printer.text(unicodelines=unicode, maxwidth=None)
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    if lines and lines[0].strip() == mark:
        lines.pop(0)  # the stub above an unlabelled root carries nothing
    return "\n".join(lines)


def leaf_columns(bottom_line: str, words: Sequence[str]) -> List[int]:
    """Start column of each word on the bottom line of a drawing (words appear in order)."""
    columns, pos = [], 0
    for word in words:
        found = bottom_line.find(word, pos)
        if found < 0:
            raise ValueError(f"word {word!r} not found on the bottom line of the drawing")
        columns.append(found)
        pos = found + len(word)
    return columns


# --------------------------------------------------------------------------------------
# Bars
# --------------------------------------------------------------------------------------


def bar_levels(values: Sequence[float], levels: int, scale: str = "layer") -> Tuple[List[int], float, float]:
    """Quantise ``values`` to bar heights in ``0 .. levels``; returns ``(heights, lo, hi)``.

    ``layer`` scale: the range ``lo = min .. hi = max`` maps to ``1 .. levels`` (the smallest
    value keeps a sliver, so every word has a visible bar); all-equal values are all full.
    ``unit`` scale: ``lo = 0 .. hi = 1`` maps to ``0 .. levels`` (values clipped to [0, 1]).
    """
    if levels < 1:
        raise ValueError("levels must be positive")
    if scale == "unit":
        return [int(round(min(max(v, 0.0), 1.0) * levels)) for v in values], 0.0, 1.0
    if scale != "layer":
        raise ValueError(f"unknown scale {scale!r}; choose from {', '.join(SCALES)}")
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        return [levels] * len(values), lo, hi
    return [1 + int(round((v - lo) / (hi - lo) * (levels - 1))) for v in values], lo, hi


def _bar_block(heights: Sequence[int], starts: Sequence[int], widths: Sequence[int], rows: int,
               ramp: str) -> List[str]:
    """``rows`` text lines drawing one layer's bars (top line first)."""
    per_cell = len(ramp) - 1
    width = max((s + w for s, w in zip(starts, widths)), default=0)
    lines = []
    for r in range(rows):
        floor = (rows - 1 - r) * per_cell  # levels below this line
        cells = [" "] * width
        for h, s, w in zip(heights, starts, widths):
            fill = min(max(h - floor, 0), per_cell)
            for x in range(s, s + w):
                cells[x] = ramp[fill]
        lines.append("".join(cells))
    return lines


def draw_bars(words: Sequence[str], distances: Sequence[Sequence[float]], columns: Sequence[int],
              decoded_layer: Optional[int] = None, height: int = 1, scale: str = "layer",
              unicode: bool = True) -> List[str]:
    """Lines of the per-layer bar chart, bars under the words that start at ``columns``.

    ``distances``: ``(L, n)`` d_f per layer and word.  Each layer takes ``height`` lines;
    at the right of its bottom line: ``layer k`` (``*`` marks ``decoded_layer``) and the
    value range the bars span.  Layers taller than one line are separated by a blank line.
    """
    if height < 1:
        raise ValueError("height must be at least 1")
    ramp = UNICODE_RAMP if unicode else ASCII_RAMP
    widths = [max(1, min(BAR_WIDTH, len(w))) for w in words]
    starts = [c + (len(w) - bw) // 2 for c, w, bw in zip(columns, words, widths)]
    right = max((c + len(w) for c, w in zip(columns, words)), default=0)
    dash = "–" if unicode else "-"
    out: List[str] = []
    for k, row in enumerate(distances, 1):
        heights, lo, hi = bar_levels(row, height * (len(ramp) - 1), scale)
        block = _bar_block(heights, starts, widths, height, ramp)
        mark = " *" if k == decoded_layer else "  "
        block[-1] = f"{block[-1]:<{right}}   layer {k}{mark}  {lo:.3f}{dash}{hi:.3f}"
        if height > 1 and out:
            out.append("")
        out.extend(line.rstrip() for line in block)
    return out


# --------------------------------------------------------------------------------------
# A whole sentence
# --------------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def render_view(view: SentenceView, unicode: bool = True, height: int = 1, scale: str = "layer",
                width: Optional[int] = None) -> str:
    """The terminal picture of one sentence: a header, the induced tree in brackets and drawn,
    the d_f bars of every layer under the words, and the gold tree with the sentence's F1 when
    the view has one.  No trailing newline.

    ``width``: the columns the terminal has (None: no limit).  A drawing wider than that is
    replaced by :func:`render_compact`, which keeps within it; the lines of text around a
    drawing that fits are wrapped at ``width``."""
    tree_lines = draw_tree(view.tree, view.labels, unicode=unicode).split("\n")
    columns = leaf_columns(tree_lines[-1], view.words)
    bar_lines = draw_bars(view.words, view.distances, columns, view.layer, height, scale, unicode)
    gold_lines = [] if view.gold is None else draw_tree(view.gold.tree, view.gold.labels, unicode).split("\n")
    drawn = max(len(line) for line in tree_lines + bar_lines + gold_lines)
    if width is not None and drawn > width:
        return render_compact(view, width, unicode, scale, drawn)

    def text(line: str) -> List[str]:
        return [line] if width is None else _wrap(line, width)

    lines = [
        *text(_header(view)),
        *text(_induced_brackets(view)),
        "",
        *tree_lines,
        *bar_lines,
        *text(f"{view.measure} per word ({_scale_note(scale)}; * = decoded layer)"),
    ]
    if view.gold is not None:
        lines += ["", *text(_gold_header(view)), *text(to_brackets(view.gold.tree)), "", *gold_lines,
                  *text(_gold_f1(view))]
    return "\n".join(lines)


def render_compact(view: SentenceView, width: int, unicode: bool = True, scale: str = "layer",
                   drawn: Optional[int] = None) -> str:
    """The compact form of :func:`render_view`, for a terminal ``width`` columns wide: the trees
    as bracketed text wrapped at ``width`` (the gold tree with its labels), and one line per word
    with a horizontal d_f bar and value for every layer.  ``drawn``: the width the drawing would
    have taken, for the note.  No trailing newline."""
    ramp = UNICODE_HBAR if unicode else ASCII_HBAR
    word_width = min(WORD_COLUMN, max(len(w) for w in view.words))
    # each layer: bar, a space, the value (5 characters), two spaces
    cells = max(1, min(HBAR_CELLS, (width - word_width - 1) // view.n_layers - 8))
    per_cell = len(ramp) - 1
    rows = [bar_levels(row, cells * per_cell, scale) for row in view.distances]
    why = f"the drawing takes {drawn} columns, " if drawn else ""
    lines = [_header(view), *_wrap(_induced_brackets(view), width), "",
             *_wrap(f"{view.measure}, one line per word ({why}the terminal has {width}; "
                    f"{_scale_note(scale)}; * = decoded layer):", width)]
    heads = [f"layer {k}" + (" *" if k == view.layer else "") for k in range(1, view.n_layers + 1)]
    lines.append(f"{'':{word_width}} " + "".join(f"{h:<{cells + 8}}" for h in heads).rstrip())
    dash = "–" if unicode else "-"
    for i, word in enumerate(view.words):
        shown = word if len(word) <= word_width else word[:word_width - 1] + ("…" if unicode else "~")
        bars = []
        for (heights, _, _), row in zip(rows, view.distances):
            full, part = divmod(heights[i], per_cell)
            bar = ramp[-1] * full + (ramp[part] if part else "")
            bars.append(f"{bar:<{cells}} {row[i]:.3f}  ")
        lines.append(f"{shown:<{word_width}} " + "".join(bars).rstrip())
    ranges = ", ".join(f"layer {k} {lo:.3f}{dash}{hi:.3f}" for k, (_, lo, hi) in enumerate(rows, 1))
    lines += _wrap(f"(bar ranges: {ranges})", width)
    if view.gold is not None:
        lines += ["", _gold_header(view), *_wrap(labelled_brackets(view.gold.tree, view.gold.labels), width),
                  *_wrap(_gold_f1(view), width)]
    return "\n".join(lines)


def labelled_brackets(tree: Tree, labels: Mapping[Span, str]) -> str:
    """The tree in brackets with each span's label after its opening bracket, e.g.
    ``(S (NP the cat) (VP sat))``; a span without a label is a plain bracket.  Iterative."""
    if isinstance(tree, str):
        return tree
    position = 0
    frames = [[tree, 0, 0, []]]  # node, next child, start position, the children written so far
    while True:
        node, i, start, pieces = frames[-1]
        if i < len(node):
            frames[-1][1] += 1
            if isinstance(node[i], str):
                pieces.append(node[i])
                position += 1
            else:
                frames.append([node[i], 0, position, []])
            continue
        frames.pop()
        label = labels.get((start, position))
        text = f"({label} {' '.join(pieces)})" if label else f"({' '.join(pieces)})"
        if not frames:
            return text
        frames[-1][3].append(text)


def _induced_brackets(view: SentenceView) -> str:
    return labelled_brackets(view.tree, view.labels) if view.labels else to_brackets(view.tree)


def _wrap(text: str, width: int) -> List[str]:
    """``text`` over lines of at most ``width`` columns, broken at spaces (a longer word alone)."""
    return textwrap.wrap(text, max(width, 10), break_long_words=False, break_on_hyphens=False) or [""]


def tree_heading(view: SentenceView) -> str:
    """What made the tree, as the terminal's first line and the figure's title say it:
    ``induced tree: the student's`` / ``the average of 3 members`` / ``layer 2 of 3, decoder onlstm``."""
    if view.measure == SPLIT_SIZES:                 # a model without distances: a student, a grammar
        named = "; nodes: each span's most probable symbol" if view.labels else ""
        return f"induced tree: the {view.decoder}'s{named}"
    if view.decoder.startswith("average"):
        return f"induced tree: the {view.decoder}"
    return f"induced tree: layer {view.layer} of {view.n_layers}, decoder {view.decoder}"


def bars_heading(view: SentenceView) -> str:
    """What the bars show, in the terminal's words (the figure titles its bar panels with it)."""
    return f"{view.measure} per word"


def _header(view: SentenceView) -> str:
    if view.measure == SPLIT_SIZES:
        return f"{tree_heading(view)}; bars: the size of the constituent split before each word"
    if view.decoder.startswith("average"):
        return f"{tree_heading(view)}; bars: model 1, * = its first member's layer"
    return tree_heading(view)


def _scale_note(scale: str) -> str:
    return "bars span each layer's smallest..largest value" if scale == "layer" else "bars span 0..1"


def _gold_header(view: SentenceView) -> str:
    return "gold tree" + (f" ({view.gold.source})" if view.gold.source else "") + ":"


def _gold_f1(view: SentenceView) -> str:
    precision, recall, f1 = view.gold_prf()
    return (f"sentence F1 against gold: {_pct(f1)} (precision {_pct(precision)}, recall {_pct(recall)}; "
            "whole-sentence span excluded)")


# --------------------------------------------------------------------------------------
# Gold trees for free sentences
# --------------------------------------------------------------------------------------


def views_from_lines(lines: Iterable[str], parser, *, golds: Optional[Sequence[GoldTree]] = None,
                     tokenize: bool = True, punct: str = DEFAULT_PUNCT) -> Iterator[Tuple[int, Optional[SentenceView]]]:
    """Run the parser (:class:`onparse.api.Parser`) over each line and yield ``(line number,
    view)``; the view is None for a line with no words.  Lines are read one at a time (a
    terminal user sees each answer at once).  ``golds``: one gold tree per non-empty line, in
    order (checked against the words).  The bars show the distances of the model the first
    member reads, at every layer; the tree is the parser's (an average with several members),
    its spans labelled when a grammar is among the members (:func:`tree_labels`).
    """
    # The bars: those of the first member that reads a layer (every layer's d_f of a language
    # model), else of the first member (a student's or a grammar's split sizes).
    bars = first_of(parser.members, parser.models, layered=True) or parser.members[0]
    bars_model = parser.models[bars.model]
    # The name of the tree's reading: a language model's decoder, else the member's or the average's.
    decoder = bars.decoder if bars_model.layered and not parser.averages else parser.describe_average()
    prep = parser.preprocessor(tokenize, punct)
    used = 0
    for number, line in enumerate(lines, 1):
        tokens = prep(line).tokens
        if not tokens:
            yield number, None
            continue
        gold = None
        if golds is not None:
            if used >= len(golds):
                raise OnparseError(f"line {number}: no gold tree left (--gold gave {len(golds)})")
            gold = golds[used]
            used += 1
        tree = parser.trees([tokens])[0]
        shown = bars_model.bars(tokens, bars, tree)
        labels = tree_labels(parser, [tokens], [tree])
        yield number, make_view(tokens, shown.rows, shown.marked, decoder, gold, tree=tree, measure=shown.measure,
                                labels=labels[0] if labels else None)
    if golds is not None and used < len(golds):
        raise OnparseError(f"--gold gave {len(golds)} trees for {used} sentence(s)")

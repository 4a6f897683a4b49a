"""The figure of one sentence (``onparse show -o FIG.png``): the induced tree, one bar panel
of d_f per layer with the words along the x axis, and the gold tree beside it when given.
matplotlib is imported only when a figure is drawn (:mod:`onparse.pictures.figures`).
"""
from __future__ import annotations

from typing import List, Mapping, Optional, Sequence, Tuple

from . import figures
from .figures import (_DECODED, _GOLD, _MODEL, _OTHER_LAYER, _around_centre, _caption, _new_figure, _right_of, _style,
                      check_output_path, fit_texts, require_matplotlib)
from .show import SCALES, bars_heading, tree_heading
from ..trees.tree import Span, Tree, leaves


def tree_layout(tree: Tree) -> Tuple[List[Tuple[float, float, List[Tuple[float, float]], Span]], int]:
    """Coordinates for drawing ``tree`` with its words at ``x = 0 .. n-1``, ``y = 0``.

    Returns ``(nodes, height)``: per internal node, children first, ``(x, y, children, span)``
    with ``children`` the ``(x, y)`` of its children; a node sits one above its tallest child,
    centred over its first and last child.  Iterative, so deep trees are fine.  A one-word
    tree has no nodes and height 0.
    """
    if isinstance(tree, str):
        return [], 0
    nodes = []
    next_word = 0
    # Post-order walk; a frame is [node, next child index, places of the finished children],
    # a place being (x, y, span).  Words are numbered as they are met, left to right.
    frames = [[tree, 0, []]]
    root = None
    while frames:
        frame = frames[-1]
        node, i, kids = frame
        if i < len(node):
            frame[1] += 1
            child = node[i]
            if isinstance(child, str):
                kids.append((float(next_word), 0.0, (next_word, next_word + 1)))
                next_word += 1
            else:
                frames.append([child, 0, []])
            continue
        frames.pop()
        x = (kids[0][0] + kids[-1][0]) / 2
        place = (x, 1.0 + max(k[1] for k in kids), (kids[0][2][0], kids[-1][2][1]))
        nodes.append((place[0], place[1], [(k[0], k[1]) for k in kids], place[2]))
        if frames:
            frames[-1][2].append(place)
        else:
            root = place
    return nodes, int(root[1])


def draw_tree(ax, tree: Tree, words: Sequence[str], labels: Optional[Mapping[Span, str]] = None,
              colour: str = _MODEL, word_rotation: float = 0.0, show_words: bool = True) -> None:
    """Draw ``tree`` on ``ax`` with elbow branches: words at ``x = 0 .. n-1`` below ``y = 0``,
    optional span labels at the nodes (gold trees, a grammar's symbols)."""
    nodes, height = tree_layout(tree)
    labels = labels or {}
    for x, y, kids, span in nodes:
        kx = [k[0] for k in kids]
        ax.plot([min(kx), max(kx)], [y, y], color=colour, lw=1.4, solid_capstyle="round")
        for cx, cy in kids:
            ax.plot([cx, cx], [cy, y], color=colour, lw=1.4, solid_capstyle="round")
        label = labels.get(span)
        if label:
            ax.text(x, y, label, ha="center", va="center", fontsize=8, color=colour,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))
    n = len(words)
    if isinstance(tree, str):
        ax.plot([0, 0], [0, 0.5], color=colour, lw=1.4)
    if show_words:
        for i, word in enumerate(words):
            ax.text(i, -0.15, word, ha="center" if not word_rotation else "right", va="top",
                    rotation=word_rotation, rotation_mode="anchor", fontsize=9)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(-0.4 if show_words else -0.1, max(height, 1) + 0.3)
    ax.axis("off")


def _word_rotation(words: Sequence[str]) -> float:
    longest = max((len(w) for w in words), default=1)
    return 40.0 if longest > 6 and len(words) > 8 else 0.0


def plot_sentence(view, path: str, caption: Optional[str] = None, fmt: Optional[str] = None,
                  scale: str = "layer") -> str:
    """Save the figure of one :class:`onparse.pictures.show.SentenceView` to ``path``.

    Left: the induced tree above one bar panel per layer (d_f of each word, the words along
    the x axis, the decoded layer highlighted).  With a gold tree: the gold tree at the right,
    with its labels, and the sentence's F1 against it below.  ``caption``: a line at the
    bottom (e.g. the model and gold names).  ``fmt``: png, svg or pdf (default: from the
    extension of ``path``).  ``scale``: ``layer`` zooms each bar panel's y axis to the layer's
    range in the sentence (the ranking is what the decoder reads), ``unit`` shows 0..1.
    """
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; choose from {', '.join(SCALES)}")
    require_matplotlib()
    check_output_path(path, fmt)
    words, n, layers = list(view.words), len(view.words), view.n_layers
    rotation = _word_rotation(words)
    _, height = tree_layout(view.tree)
    gold_height = tree_layout(view.gold.tree)[1] if view.gold is not None else 0
    tree_rows = max(height, gold_height, 1)
    panel_w = min(max(3.2, 0.62 * n + 1.2), 16.0)
    width = panel_w * (2 if view.gold is not None else 1) + 0.6
    tree_h = min(0.32 * tree_rows + 0.9, 5.0)
    fig_h = tree_h + 1.05 * layers + (0.5 if rotation else 0.25) + (0.25 if caption else 0)
    with _style():
        fig = _new_figure(width, fig_h)
        columns = 2 if view.gold is not None else 1
        grid = fig.add_gridspec(1 + layers, columns, height_ratios=[tree_h] + [1.0] * layers)
        ax_tree = fig.add_subplot(grid[0, 0])
        draw_tree(ax_tree, view.tree, words, view.labels, colour=_MODEL, word_rotation=rotation,
                  show_words=True)
        ax_tree.set_ylim(-0.4 if not rotation else -1.5, tree_rows + 0.3)
        tree_title = ax_tree.set_title(tree_heading(view), loc="left")
        first, bars_title = _bar_panels(fig, grid, view, rotation, scale)
        fits = []
        if view.gold is not None:
            ax_gold = fig.add_subplot(grid[0, 1])
            gold_words = [w for w in _leaves(view.gold.tree)]
            draw_tree(ax_gold, view.gold.tree, gold_words, view.gold.labels, colour=_GOLD,
                      word_rotation=rotation, show_words=True)
            ax_gold.set_ylim(-0.4 if not rotation else -1.5, tree_rows + 0.3)
            gold_title = ax_gold.set_title("gold tree" + (f" ({view.gold.source})" if view.gold.source else ""),
                                           loc="left")
            ax_note = fig.add_subplot(grid[1:, 1])
            ax_note.axis("off")
            precision, recall, f1 = view.gold_prf()
            ax_note.text(0.02, 0.9, f"sentence F1 against gold: {100 * f1:.1f}\n"
                                    f"precision {100 * precision:.1f}, recall {100 * recall:.1f}\n"
                                    "(whole-sentence span excluded)",
                         transform=ax_note.transAxes, va="top", fontsize=10)
            # Each title stays within its column: the left ones stop where the right ones start.
            fits += [(tree_title, _right_of(fig, ax_tree, lambda: ax_gold.get_position().x0)),
                     (bars_title, _right_of(fig, first, lambda: ax_note.get_position().x0)),
                     (gold_title, _right_of(fig, ax_gold))]
        else:
            fits += [(tree_title, _right_of(fig, ax_tree)), (bars_title, _right_of(fig, first))]
        fits.append((_caption(fig, caption), _around_centre(fig)))
        fit_texts(fig, fits)
        return figures.save_figure(fig, path, fmt)     # through the module: tests watch what is saved


def _bar_panels(fig, grid, view, rotation: float, scale: str):
    """One bar panel per layer under the tree (rows 1.. of column 0 of ``grid``): d_f of each word,
    the decoded layer highlighted, the words under the last.  Returns the first panel and its
    title."""
    from matplotlib.ticker import MaxNLocator

    words, n, layers = list(view.words), len(view.words), view.n_layers
    first = bars_title = None
    for k in range(1, layers + 1):
        ax = fig.add_subplot(grid[k, 0], sharex=first) if first else fig.add_subplot(grid[k, 0])
        first = first or ax
        decoded = k == view.layer
        values = view.distances[k - 1]
        ax.bar(range(n), values, width=0.6, color=_DECODED if decoded else _OTHER_LAYER)
        ax.set_ylim(*_bar_limits(values, scale))
        ax.yaxis.set_major_locator(MaxNLocator(3))
        ax.set_ylabel(f"layer {k}" + ("\n(decoded)" if decoded else ""), rotation=0, ha="right",
                      va="center", fontweight="bold" if decoded else "normal")
        ax.grid(axis="y", color="#e5e5e5", lw=0.6)
        ax.set_axisbelow(True)
        ax.set_xlim(-0.6, n - 0.4)
        ax.set_xticks(range(n))
        if k == 1:
            note = " (each panel zoomed to its layer's range)" if scale == "layer" else ""
            bars_title = ax.set_title(bars_heading(view).replace(" d_f", " $d_f$") + note, loc="left", fontsize=10)
        if k < layers:
            ax.tick_params(axis="x", labelbottom=False)
        else:
            ax.set_xticklabels(words, rotation=rotation, ha="right" if rotation else "center",
                               rotation_mode="anchor")
    return first, bars_title


def _bar_limits(values: Sequence[float], scale: str) -> Tuple[float, float]:
    """y range of a bar panel: 0..1, or (``layer``) the values' range padded by 15% each side,
    kept within 0..1; a flat layer gets a small window around its value."""
    if scale == "unit":
        return 0.0, 1.0
    lo, hi = min(values), max(values)
    pad = 0.15 * (hi - lo) if hi - lo > 1e-6 else 0.05
    low, high = lo - pad, hi + pad
    if 0.0 <= lo and hi <= 1.0:  # distances are in [0, 1]: no point showing beyond
        low, high = max(0.0, low), min(1.0, high)
    return low, high


def _leaves(tree: Tree) -> List[str]:
    return leaves(tree)



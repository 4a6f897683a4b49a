"""Figures: evaluation plots and training curves, and what every figure shares (style,
saving, layout); a sentence's figure is drawn by :mod:`onparse.pictures.sentence_figure`.

matplotlib is an optional extra (``pip install 'onparse[plot]'``) and is imported only when a
figure is drawn; without it every function here that draws raises a one-line
:class:`~onparse.errors.OnparseError` saying how to install it.

Figures are built as ``matplotlib.figure.Figure`` objects without pyplot, so nothing here
touches the global backend or opens a window: PNG is rendered by Agg, SVG by matplotlib's
SVG writer (text kept as text, no timestamps, stable element ids: the files can be committed).
The format follows the file's extension (``.png``, ``.svg``, ``.pdf``).

- :func:`onparse.pictures.sentence_figure.plot_sentence` -- ``onparse show -o FIG.png``;
- :func:`plot_eval` / :func:`plot_eval_with_baselines` -- ``onparse eval --plots DIR``:
  sentence F1 by sentence length and recall per gold label, the model against baselines;
- :func:`plot_training_log` -- ``onparse plot-log``: training and validation loss, validation
  perplexity per epoch, of a run's log (:func:`plot_log` draws one read by
  :func:`onparse.files.training_log.read_log`).
"""
from __future__ import annotations

import math
import os
import textwrap
from contextlib import contextmanager
from typing import Callable, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..trees.baselines import baseline_trees
from ..errors import OnparseError
from ..scores.metrics import evaluate
from ..files.safeio import MAX_LINE_BYTES, atomic_output, format_ppl
from ..files.training_log import TrainingLog, log_path, read_log

MISSING_MATPLOTLIB = "matplotlib is needed for plots: pip install 'onparse[plot]'"
#: File formats a figure can be saved in (by extension).
FORMATS = ("png", "svg", "pdf")
#: Resolution of PNG files.
DPI = 120

# Colours: the model in a strong blue, baselines in muted tones, gold in dark grey.
_MODEL = "#1f5fa8"
_BASELINE_COLOURS = ("#d0743c", "#6a9a48", "#8e6bb0", "#a0a0a0", "#c9a227")
_GOLD = "#404040"
_DECODED = "#1f5fa8"
_OTHER_LAYER = "#9bb3cf"

_STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",      # text stays text in SVG: small files, searchable words
    "svg.hashsalt": "onparse",   # stable element ids, so regenerated SVGs diff cleanly
}


def require_matplotlib():
    """Import matplotlib or raise the one-line OnparseError telling how to install it."""
    try:
        import matplotlib
        import matplotlib.figure  # the part used here; also fails early on a broken install
    except ImportError:
        raise OnparseError(MISSING_MATPLOTLIB) from None
    return matplotlib


def check_output_path(path: str, fmt: Optional[str] = None) -> str:
    """The format to save ``path`` in: ``fmt`` when given, else from the file's extension;
    OnparseError for an unknown one."""
    if fmt is None:
        fmt = os.path.splitext(str(path))[1].lower().lstrip(".")
        if fmt not in FORMATS:
            raise OnparseError(f"{path}: cannot tell the figure format; use a file name ending in "
                               f"{', '.join('.' + f for f in FORMATS)}")
    elif fmt not in FORMATS:
        raise OnparseError(f"unknown figure format {fmt!r}; choose from {', '.join(FORMATS)}")
    return fmt


@contextmanager
def _style():
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        yield


def _new_figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def save_figure(fig, path: str, fmt: Optional[str] = None) -> str:
    """Save ``fig`` to ``path`` in format ``fmt`` (default: from the extension), creating
    missing folders; returns the path."""
    fmt = check_output_path(path, fmt)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        metadata = {"Date": None} if fmt in ("svg", "pdf") else None
        if fmt == "pdf":
            metadata = {"CreationDate": None}
        with atomic_output(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=DPI, metadata=metadata)
            if fmt == "svg":
                _renumber_svg_ids(tmp)
    except OSError as err:
        raise OnparseError(f"cannot write {path}: {err.strerror or err}") from None
    return path


def _renumber_svg_ids(path: str) -> None:
    """Replace matplotlib's hashed SVG ids by sequential ones, in order of first appearance.

    ``svg.hashsalt`` fixes most ids, but a clip path's id hashes the Python ``id()`` of its
    path object, a memory address that changes from run to run; renumbering makes the file
    byte-for-byte reproducible (and diff-friendly when committed)."""
    import re

    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    ids = {}
    for match in re.finditer(r'id="([A-Za-z]+[0-9a-f]{10})"|url\(#([A-Za-z]+[0-9a-f]{10})\)', text):
        ids.setdefault(match.group(1) or match.group(2), None)
    mapping = {old: f"{old[:-10]}{n:04d}" for n, old in enumerate(ids)}
    if mapping:
        text = re.sub(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b", lambda m: mapping[m.group(1)], text)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


def _caption(fig, text: Optional[str]):
    """The caption line at the bottom (a Text artist, or None without text)."""
    if text:
        return fig.supxlabel(text, fontsize=8, color="#555555")
    return None


#: Room kept between a text and the figure's edge or the next panel, in inches.
_PAD = 0.1
#: Longest legend entry, in characters, before it wraps (long model paths).
LEGEND_CHARS = 30


def _layout(fig) -> None:
    """Lay the figure out (constrained layout runs at draw time) so that texts can be measured."""
    if hasattr(fig, "draw_without_rendering"):
        fig.draw_without_rendering()
    else:  # matplotlib < 3.6
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig).draw()


def _right_of(fig, ax, right: Optional[Callable[[], float]] = None) -> Callable[[], float]:
    """Room, in pixels, for a left-aligned title of ``ax``: from the axes' left edge to
    ``right()`` (a figure fraction: where the next panel starts) or to the figure's right edge."""
    def room() -> float:
        width = fig.bbox.width
        stop = width * (1.0 if right is None else right()) - _PAD * fig.dpi
        return stop - ax.get_position().x0 * width
    return room


def _around_centre(fig, ax: Optional = None) -> Callable[[], float]:
    """Room, in pixels, for a text centred under ``ax`` (or under the whole figure)."""
    def room() -> float:
        width = fig.bbox.width
        if ax is None:
            return width - 2 * _PAD * fig.dpi
        box = ax.get_position()
        centre = width * (box.x0 + box.x1) / 2
        return 2 * (min(centre, width - centre) - _PAD * fig.dpi)
    return room


def fit_texts(fig, fits) -> None:
    """Wrap texts onto more lines until each fits its room, so that nothing is clipped at the
    figure's edge or runs into the next panel.  ``fits``: ``(text artist, room)`` pairs,
    ``room()`` the width in pixels the text may take under the current layout (re-measured
    after every pass, since wrapping changes the layout).  Words are kept whole when they fit."""
    fits = [(text, room) for text, room in fits if text is not None and text.get_text()]
    originals = {id(text): text.get_text() for text, _ in fits}
    for _ in range(4):
        _layout(fig)
        changed = False
        for text, room in fits:
            width, allowed = text.get_window_extent().width, room()
            longest = max(len(line) for line in text.get_text().split("\n"))
            if width <= allowed or longest <= 8:
                continue
            chars = max(8, min(longest - 1, int(longest * allowed / width)))
            text.set_text(textwrap.fill(originals[id(text)], chars, break_on_hyphens=False))
            changed = True
        if not changed:
            return


# --------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------


#: Sentences shorter than this are left out of F1-by-length: with the whole-sentence span
#: excluded they have no constituent, and every system scores 100 on them by convention.
MIN_PLOT_LENGTH = 3


def length_bins(lengths: Iterable[int], min_length: int = MIN_PLOT_LENGTH) -> List[Tuple[int, Optional[int], str]]:
    """Bins of sentence lengths for F1-by-length: ``(low, high or None, tick label)``.

    Up to 20 words: one bin per length from ``min_length``; longer corpora: 5-word bins
    (``3-5``, ``6-10``, ...), the last one open (``41+``) so that a few very long sentences
    do not make bins of one sentence.
    """
    lengths = [n for n in lengths if n >= min_length]
    if not lengths:
        return []
    longest = max(lengths)
    if longest <= 20:
        return [(k, k, str(k)) for k in range(min_length, longest + 1)]
    bins, low = [], min_length
    high = ((low - 1) // 5 + 1) * 5  # first bin ends at a multiple of 5: 3-5, 6-10, ...
    while high <= 40 and high < longest:
        bins.append((low, high, f"{low}–{high}"))
        low, high = high + 1, high + 5
    if longest > high:
        bins.append((low, None, f"{low}+"))
    else:
        bins.append((low, longest, str(low) if low == longest else f"{low}–{longest}"))
    return bins


def f1_by_length(result, bins) -> Tuple[List[Optional[float]], List[int]]:
    """Mean sentence F1 (ON-LSTM convention) and sentence count in each bin of ``bins``."""
    sums = [0.0] * len(bins)
    counts = [0] * len(bins)
    for score in result.sentences:
        n = len(score.tokens)
        for i, (low, high, _) in enumerate(bins):
            if n >= low and (high is None or n <= high):
                sums[i] += score.f1
                counts[i] += 1
                break
    return [s / c if c else None for s, c in zip(sums, counts)], counts


def plot_eval(results: Mapping[str, object], out_dir: str, caption: Optional[str] = None,
              formats: Sequence[str] = ("png", "svg")) -> List[str]:
    """Save the evaluation figures of ``results`` into ``out_dir``; returns the files written.

    ``results``: name -> :class:`onparse.scores.metrics.SpanMetric`, all over the same gold
    sentences; the first is the model (drawn in a strong colour), the rest baselines.
    Files: ``f1_by_length.<fmt>`` (mean sentence F1 by sentence length, with the number of
    sentences per bin below) and ``label_recall.<fmt>`` (recall of NP, VP, PP, ... per system).
    """
    require_matplotlib()
    if not results:
        raise ValueError("no results to plot")
    for fmt in formats:
        check_output_path("", fmt)
    names = list(results)
    colours = {name: (_MODEL if i == 0 else _BASELINE_COLOURS[(i - 1) % len(_BASELINE_COLOURS)])
               for i, name in enumerate(names)}
    first = results[names[0]]
    written: List[str] = []
    with _style():
        fig = _f1_by_length_figure(results, names, colours, caption)
        if fig is not None:
            written += [save_figure(fig, os.path.join(out_dir, f"f1_by_length.{fmt}")) for fmt in formats]
        fig = _label_recall_figure(results, names, colours, first, caption)
        written += [save_figure(fig, os.path.join(out_dir, f"label_recall.{fmt}")) for fmt in formats]
    return written


def _f1_by_length_figure(results, names, colours, caption):
    first = results[names[0]]
    bins = length_bins(len(s.tokens) for s in first.sentences)
    if not bins:
        return None
    fig = _new_figure(max(7.0, 0.45 * len(bins) + 4.0), 4.4)
    grid = fig.add_gridspec(2, 1, height_ratios=[3.2, 1.0])
    ax = fig.add_subplot(grid[0])
    ax_n = fig.add_subplot(grid[1], sharex=ax)
    xs = list(range(len(bins)))
    for i, name in enumerate(names):
        means, counts = f1_by_length(results[name], bins)
        pts = [(x, 100 * m) for x, m in zip(xs, means) if m is not None]
        overall = 100 * results[name].sentence_f1.f1
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4 if i else 5,
                lw=2.2 if i == 0 else 1.3, ls="-" if i == 0 else "--", color=colours[name],
                label=_legend_label(f"{name} ({overall:.1f})"), zorder=3 if i == 0 else 2)
    _, counts = f1_by_length(first, bins)
    ax.set_ylim(0, 100)
    ax.set_ylabel("sentence F1 (%)\nON-LSTM convention")
    ax.grid(axis="y", color="#e5e5e5", lw=0.6)
    ax.set_title("sentence F1 by sentence length", loc="left")
    ax.legend(title="overall sentence F1", loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False,
              title_fontsize=9)
    ax.tick_params(axis="x", labelbottom=False)
    ax_n.bar(xs, counts, color="#c8c8c8", width=0.7)
    ax_n.set_ylabel("sentences")
    ax_n.set_xticks(xs)
    ax_n.set_xticklabels([b[2] for b in bins])
    xlabel = ax_n.set_xlabel(f"sentence length in words\n(from {MIN_PLOT_LENGTH}: shorter ones have no "
                             "constituent to find)")
    fit_texts(fig, [(xlabel, _around_centre(fig, ax_n)), (_caption(fig, caption), _around_centre(fig))])
    return fig


def _label_recall_figure(results, names, colours, first, caption):
    labels = list(first.label_recall)
    fig = _new_figure(max(7.0, 0.9 * len(labels) + 3.0), 3.8)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        recall = results[name].label_recall
        values = [100 * (recall[lab].recall or 0.0) for lab in labels]
        offsets = [j - 0.4 + width * (i + 0.5) for j in range(len(labels))]
        ax.bar(offsets, values, width=width * 0.92, color=colours[name], label=_legend_label(name))
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([f"{lab}\n{first.label_recall[lab].total:,}" for lab in labels])
    xlabel = ax.set_xlabel("gold label, and number of gold constituents\n(whole-sentence span excluded)")
    ax.set_ylim(0, 100)
    ax.set_ylabel("recall (%)")
    ax.grid(axis="y", color="#e5e5e5", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_title("recall by gold label", loc="left")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fit_texts(fig, [(xlabel, _around_centre(fig, ax)), (_caption(fig, caption), _around_centre(fig))])
    return fig


def _legend_label(text: str) -> str:
    """A legend entry wrapped at :data:`LEGEND_CHARS` (a long model path would squeeze the plot
    beside the legend to nothing)."""
    return textwrap.fill(text, LEGEND_CHARS, break_on_hyphens=False)


def eval_caption(model_name: str, gold_name: str, n_sentences: int) -> str:
    """The caption line of the evaluation figures."""
    return f"model: {model_name}  ·  gold: {gold_name} ({n_sentences:,} sentences)"


def plot_eval_with_baselines(result, gold, out_dir: str, model_name: str,
                             baselines: Sequence[str] = ("right", "left", "random"), seed: int = 0,
                             formats: Sequence[str] = ("png", "svg")) -> List[str]:
    """:func:`plot_eval` for one model's :class:`~onparse.scores.metrics.SpanMetric` against the
    baseline trees of :mod:`onparse.trees.baselines` over the same gold sentences (``gold``: an
    :class:`onparse.gold.treebank.Gold`).  This is what ``onparse eval --plots DIR`` draws."""
    require_matplotlib()
    results = {model_name: result}
    for kind in baselines:
        trees = baseline_trees(gold.tokens, kind, seed)
        results[f"{kind}-branching" if kind in ("right", "left") else kind] = evaluate(trees, gold, check_tokens=False)
    caption = eval_caption(model_name, gold.name, len(gold))
    return plot_eval(results, out_dir, caption, formats)


# --------------------------------------------------------------------------------------
# Training curves
# --------------------------------------------------------------------------------------


def _finite(values: Sequence[float]) -> List[float]:
    return [v if math.isfinite(v) else float("nan") for v in values]


def plot_log(log: TrainingLog, path: str, caption: Optional[str] = None, fmt: Optional[str] = None) -> str:
    """Save the training curves of ``log`` to ``path``: loss (training and validation
    cross-entropy) and validation perplexity per epoch, the best epoch marked, the switch to
    averaged SGD drawn as a dotted line, the test perplexity as a dashed one.  ``fmt``: png,
    svg or pdf (default: from the extension of ``path``)."""
    require_matplotlib()
    check_output_path(path, fmt)
    if caption is None:
        bits = [f"log: {log.source}"] if log.source else []
        if log.preset:
            bits.append(f"preset {log.preset}")
        if log.parameters:
            bits.append(f"{log.parameters:,} parameters")
        caption = "  ·  ".join(bits) or None
    epochs = list(log.epochs)
    marker = "o" if len(epochs) <= 30 else None
    with _style():
        fig = _new_figure(9.0, 3.6)
        ax_loss, ax_ppl = fig.subplots(1, 2)
        ax_loss.plot(epochs, _finite(log.train_loss), marker=marker, ms=3, color="#d0743c", label="training")
        ax_loss.plot(epochs, _finite(log.valid_loss), marker=marker, ms=3, color=_MODEL, label="validation")
        ax_loss.set_ylabel("cross-entropy (nats per token)")
        ax_loss.set_title("loss", loc="left")
        ax_loss.legend(frameon=False)
        ppl = _finite(log.valid_ppl)
        ax_ppl.plot(epochs, ppl, marker=marker, ms=3, color=_MODEL, label="validation")
        finite = [v for v in ppl if v == v]
        if finite and max(finite) / max(min(finite), 1e-9) > 20:
            ax_ppl.set_yscale("log")
        best = log.best_epoch
        best_ppl = log.valid_ppl[epochs.index(best)]
        if math.isfinite(best_ppl):
            ax_ppl.plot([best], [best_ppl], marker="*", ms=12, color="#c9a227", ls="none",
                        label=f"best: {format_ppl(best_ppl)} (epoch {best})", zorder=4)
        if log.test_ppl is not None and math.isfinite(log.test_ppl):
            ax_ppl.axhline(log.test_ppl, color="#6a9a48", ls="--", lw=1,
                           label=f"test (best checkpoint): {format_ppl(log.test_ppl)}")
        if log.unigram_ppl is not None and math.isfinite(log.unigram_ppl):
            # A grammar above this line is worse than counting words: the collapse alarm's baseline.
            ax_ppl.axhline(log.unigram_ppl, color="#a33b3b", ls="-.", lw=1,
                           label=f"counting words (unigram): {format_ppl(log.unigram_ppl)}")
            shares = [f"{share:.0%}" if share is not None else "-" for share in log.branching_share]
            caption = "  ·  ".join(filter(None, [caption, "held-out trees that are branching chains, by epoch: "
                                                 + " ".join(shares)]))
        ax_ppl.set_ylabel("perplexity")
        ax_ppl.set_title("validation perplexity", loc="left")
        for ax in (ax_loss, ax_ppl):
            ax.set_xlabel("epoch")
            ax.grid(color="#e5e5e5", lw=0.6)
            ax.xaxis.get_major_locator().set_params(integer=True)
            if log.asgd_epoch is not None:
                ax.axvline(log.asgd_epoch, color="#777777", ls=":", lw=1.2,
                           label="averaged SGD from here" if ax is ax_ppl else None)
        ax_ppl.legend(frameon=False)
        _caption(fig, caption)
        return save_figure(fig, path, fmt)


def training_curves_path(log: str) -> str:
    """Where :func:`plot_training_log` puts a run's curves by default: ``training-curves.png``
    beside its log (``log``: the ``metrics.jsonl`` of a run, or its folder)."""
    return os.path.join(os.path.dirname(os.path.abspath(log_path(log))), "training-curves.png")


def plot_training_log(log: str, out: Optional[str] = None, max_line_bytes: int = MAX_LINE_BYTES) -> str:
    """Draw the training curves of a run (:func:`plot_log`) into ``out`` (default:
    :func:`training_curves_path`) and return its path; ``log``: the ``metrics.jsonl`` that
    ``onparse train`` writes, or the run folder holding it.  OnparseError without matplotlib,
    for an unreadable log or a file name with no figure format.  Cost: reading the log, then
    drawing (about a second)."""
    require_matplotlib()
    out = training_curves_path(log) if out is None else out
    check_output_path(out)
    return plot_log(read_log(log, max_line_bytes), out)

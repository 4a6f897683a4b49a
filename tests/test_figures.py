"""Figures (matplotlib, the `plot` extra): each one is rendered to temporary files that must be
valid images of a sensible size; the training-log reader; `onparse plot-log`; and the one-line
error without matplotlib.

On a developer machine without matplotlib the rendering tests skip; with the CI variable set
they fail instead (CI installs the extra).
"""
import importlib
import json
import math
import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import save_tiny_checkpoint
from onparse.cli import main
from onparse.errors import OnparseError
from onparse.pictures.figures import (MISSING_MATPLOTLIB, check_output_path, f1_by_length, length_bins, plot_eval,
                             plot_eval_with_baselines, plot_log, require_matplotlib)
from onparse.pictures.sentence_figure import plot_sentence, tree_layout
from onparse.files.training_log import TrainingLog, read_log
from onparse.scores.metrics import evaluate
from onparse.gold.gold_trees import read_gold
from onparse.pictures.show import make_view
from onparse.trees.tree import parse_brackets

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def mpl():
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("matplotlib is missing: CI must install the plot extra (pip install -e '.[dev]')")
        pytest.skip("matplotlib not installed (pip install 'onparse[plot]')")


def png_size(path):
    data = Path(path).read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def check_png(path, min_w=300, min_h=200, max_side=5000):
    width, height = png_size(path)
    assert min_w <= width <= max_side and min_h <= height <= max_side, (width, height)
    assert os.path.getsize(path) > 5000  # something was drawn
    return width, height


def check_svg(path, must_contain=()):
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    text = Path(path).read_text(encoding="utf-8")
    for word in must_contain:
        assert word in text, word  # text stays text (svg.fonttype none)
    return root


# --- the sentence figure ----------------------------------------------------------------------

WORDS = "It has no bearing on our work force today".split()
DIST = [[0.31, 0.72, 0.12, 0.44, 0.58, 0.21, 0.09, 0.37, 0.66],
        [0.05, 0.81, 0.33, 0.41, 0.62, 0.27, 0.14, 0.18, 0.49],
        [0.5] * 9]
GOLD = "(S (NP (PRP It)) (VP (VBZ has) (NP (NP (DT no) (NN bearing)) (PP (IN on) (NP (PRP$ our) (NN work) (NN force))))) (NP (NN today)) (. .))"


def test_tree_layout_hand_computed():
    nodes, height = tree_layout((("a", "b"), "c"))
    assert height == 2
    assert nodes == [(0.5, 1.0, [(0.0, 0.0), (1.0, 0.0)], (0, 2)),
                     (1.25, 2.0, [(0.5, 1.0), (2.0, 0.0)], (0, 3))]
    assert tree_layout("a") == ([], 0)
    # Deep trees need no recursion.
    deep = "w"
    for _ in range(3000):
        deep = ("v", deep)
    assert tree_layout(deep)[1] == 3000


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_sentence_figure_png_svg_pdf(mpl, tmp_path):
    view = make_view(WORDS, DIST, 2, "onlstm")
    w, h = check_png(plot_sentence(view, str(tmp_path / "s.png"), caption="model: test"))
    assert w > h  # words along the x axis
    check_svg(plot_sentence(view, str(tmp_path / "s.svg")), must_contain=["bearing", "layer 3"])
    pdf = plot_sentence(view, str(tmp_path / "s.pdf"))
    assert Path(pdf).read_bytes()[:5] == b"%PDF-"


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_sentence_figure_with_gold_is_wider(mpl, tmp_path):
    plain = check_png(plot_sentence(make_view(WORDS, DIST, 2), str(tmp_path / "a.png")))
    view = make_view(WORDS, DIST, 2, "split", gold=read_gold(GOLD)[0])
    with_gold = check_png(plot_sentence(view, str(tmp_path / "b.png")))
    assert with_gold[0] > 1.5 * plain[0]
    check_svg(plot_sentence(view, str(tmp_path / "b.svg")), must_contain=["gold tree", "VP", "PP", "sentence F1"])


def test_one_word_and_long_sentences_render(mpl, tmp_path):
    check_png(plot_sentence(make_view(["Hello"], [[0.4]], 1), str(tmp_path / "one.png")), min_w=200)
    words = [f"word{i}" for i in range(60)]
    dist = [[(i * 37 % 101) / 101 for i in range(60)]] * 2
    check_png(plot_sentence(make_view(words, dist, 2), str(tmp_path / "long.png")))


def test_bar_panel_limits():
    from onparse.pictures.sentence_figure import _bar_limits

    assert _bar_limits([0.2, 0.6], "unit") == (0.0, 1.0)
    low, high = _bar_limits([0.2, 0.6], "layer")  # 15% of the 0.4 range each side
    assert (low, high) == pytest.approx((0.14, 0.66))
    assert _bar_limits([0.02, 0.98], "layer") == (0.0, 1.0)  # clipped to the distances' 0..1
    assert _bar_limits([0.5, 0.5], "layer") == pytest.approx((0.45, 0.55))


def test_sentence_figure_unit_scale(mpl, tmp_path):
    view = make_view(WORDS, DIST, 1)
    check_png(plot_sentence(view, str(tmp_path / "u.png"), scale="unit"))
    with pytest.raises(ValueError):
        plot_sentence(view, str(tmp_path / "u.png"), scale="log")


def test_svg_is_reproducible(mpl, tmp_path):
    view = make_view(WORDS, DIST, 2)
    a = plot_sentence(view, str(tmp_path / "a.svg"))
    b = plot_sentence(view, str(tmp_path / "b.svg"))
    assert Path(a).read_bytes() == Path(b).read_bytes()  # no dates, stable ids: commit-friendly


def test_format_from_extension_or_explicit(mpl, tmp_path):
    view = make_view(WORDS, DIST, 2)
    with pytest.raises(OnparseError, match="cannot tell the figure format"):
        plot_sentence(view, str(tmp_path / "x.jpeg"))
    path = plot_sentence(view, str(tmp_path / "noext"), fmt="png")
    png_size(path)
    assert check_output_path("a.SVG") == "svg"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("model") / "tiny.pt", "the cat sat on a mat dog".split(),
                                seed=7, embedding_size=8, hidden_size=12, n_layers=2)[2]


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_cli_show_figures(mpl, tiny_model, tmp_path):
    png, svg = tmp_path / "one.png", tmp_path / "figs" / "one.svg"
    result = CliRunner().invoke(main, ["show", "the cat sat", "--model", tiny_model, "--png", str(png),
                                       "--svg", str(svg), "--gold", "((the cat) sat)"])
    assert result.exit_code == 0, result.output
    assert f"wrote {png}" in result.output and f"wrote {svg}" in result.output
    check_png(str(png))
    check_svg(str(svg), must_contain=["gold tree", "layer 2"])
    # Several sentences (stdin): one file each, numbered by input line.
    result = CliRunner().invoke(main, ["show", "-", "--model", tiny_model, "--png", str(tmp_path / "s.png")],
                                input="the cat\n\na dog sat on a mat\n")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.glob("s-*.png")) == ["s-1.png", "s-3.png"]
    check_png(str(tmp_path / "s-3.png"))


def test_cli_show_out_follows_the_extension_as_plot_log_does(mpl, tiny_model, tmp_path):
    out = tmp_path / "fig.svg"
    result = CliRunner().invoke(main, ["show", "the cat sat", "--model", tiny_model, "-o", str(out)])
    assert result.exit_code == 0 and f"wrote {out}" in result.output
    check_svg(str(out), must_contain=["layer 2"])
    bad = CliRunner().invoke(main, ["show", "the cat sat", "--model", tiny_model, "-o", str(tmp_path / "f.jpeg")])
    assert bad.exit_code == 1 and "cannot tell the figure format" in bad.output


# --- evaluation plots -------------------------------------------------------------------------

def _small_gold():
    trees = ["((a b) (c d))", "(a (b (c d)))", "((a b) c)", "(a b)", "(((a b) c) (d (e f)))", "x"]
    return [parse_brackets(t) for t in trees]


def test_length_bins():
    assert length_bins([1, 2, 3, 5, 4]) == [(3, 3, "3"), (4, 4, "4"), (5, 5, "5")]
    assert length_bins([1, 2]) == []
    bins = length_bins(range(1, 70))
    assert bins[0] == (3, 5, "3–5") and bins[1] == (6, 10, "6–10") and bins[-1] == (41, None, "41+")
    assert length_bins([3, 23])[-1] == (21, 23, "21–23")


def test_f1_by_length_hand_computed():
    gold = _small_gold()
    from onparse.trees.baselines import baseline_trees
    from onparse.trees.tree import leaves

    right = evaluate(baseline_trees([leaves(t) for t in gold], "right"), gold, check_tokens=False)
    means, counts = f1_by_length(right, length_bins([3, 4, 6]))
    # Lengths 3: ((a b) c) vs right (a (b c)): gold {(0,2)}, pred {(1,3)} -> 0.
    # 4: two sentences: ((a b) (c d)) gold {(0,2),(2,4)}, pred {(1,4),(2,4)} -> 0.5;
    #    (a (b (c d))) -> 1; mean 0.75.
    # 5: none.  6: (((a b) c) (d (e f))) vs right: gold {(0,2),(0,3),(3,6),(4,6)},
    #    pred {(1,6),(2,6),(3,6),(4,6)} -> P = R = 1/2 -> 0.5.
    assert counts == [1, 2, 0, 1]
    assert means == [0.0, 0.75, None, 0.5]


def test_eval_plots(mpl, tmp_path):
    gold = _small_gold()
    from onparse.trees.baselines import baseline_trees
    from onparse.trees.tree import leaves

    sentences = [leaves(t) for t in gold]
    results = {kind: evaluate(baseline_trees(sentences, kind), gold, check_tokens=False)
               for kind in ("balanced", "right", "left")}
    written = plot_eval(results, str(tmp_path / "plots"), caption="model: balanced  ·  gold: six trees")
    names = sorted(Path(p).name for p in written)
    assert names == ["f1_by_length.png", "f1_by_length.svg", "label_recall.png", "label_recall.svg"]
    for path in written:
        if path.endswith(".png"):
            check_png(path)
        else:
            check_svg(path, must_contain=["gold: six trees", "balanced"])
    check_svg(str(tmp_path / "plots" / "label_recall.svg"), must_contain=["NP", "SBAR", "recall"])


def test_eval_plots_with_baselines_on_wsj10(mpl, nltk_treebank, tmp_path):
    from onparse.trees.baselines import baseline_trees
    from onparse.gold.treebank import load_gold

    gold = load_gold("wsj10")
    result = evaluate(baseline_trees(gold.tokens, "balanced"), gold, check_tokens=False)
    written = plot_eval_with_baselines(result, gold, str(tmp_path), "balanced.txt")
    assert len(written) == 4
    svg = Path(tmp_path / "f1_by_length.svg").read_text(encoding="utf-8")
    # The legend names the systems with their overall sentence F1 (right-branching: 58.6 on the sample).
    assert "right-branching (58.6)" in svg and "balanced.txt" in svg
    assert "gold: wsj10 (555 sentences)" in svg
    check_png(str(tmp_path / "label_recall.png"))


def test_cli_eval_plots(mpl, nltk_treebank, tmp_path):
    trees = CliRunner().invoke(main, ["baseline", "--gold", "wsj10", "--baseline", "balanced"])
    assert trees.exit_code == 0
    pred = tmp_path / "balanced.txt"
    pred.write_text(trees.output, encoding="utf-8")
    plots = tmp_path / "plots"
    result = CliRunner().invoke(main, ["eval", "--gold", "wsj10", str(pred), "--plots", str(plots)])
    assert result.exit_code == 0, result.output
    assert "sentence F1, ON-LSTM conv." in result.output  # the report is still printed
    for stem in ("f1_by_length", "label_recall"):
        check_png(str(plots / f"{stem}.png"))
        check_svg(str(plots / f"{stem}.svg"), must_contain=["balanced.txt", "gold: wsj10 (555 sentences)"])


@pytest.fixture
def saved_figures(monkeypatch):
    """The Figure objects the plotting functions save, for inspection after the files are written."""
    import onparse.pictures.figures as figures

    saved, save = [], figures.save_figure

    def keep(fig, path, fmt=None):
        saved.append(fig)
        return save(fig, path, fmt)

    monkeypatch.setattr(figures, "save_figure", keep)
    return saved


def texts_outside(fig):
    """The texts of a laid-out figure that reach past its edges (what a saved file clips)."""
    from matplotlib.text import Text

    from onparse.pictures.figures import _layout

    _layout(fig)
    width, height = fig.bbox.width, fig.bbox.height
    outside = []
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text().strip():
            box = text.get_window_extent()
            if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1:
                outside.append(text.get_text())
    return outside


def left_title(ax):
    """The Text artist of an axes' left-aligned title."""
    from matplotlib.text import Text

    return next(t for t in ax.findobj(Text) if t.get_text() and t.get_text() == ax.get_title(loc="left"))


LONG_MODEL = "/home/someone/experiments/onlstm/runs/seed-3/checkpoints/best.pt (average of 6 members)"


def test_sentence_figure_titles_stay_in_their_panels(mpl, tmp_path, saved_figures):
    # A short sentence makes narrow panels; a long gold source and decoder name made the titles
    # run off the figure or into the gold panel.
    gold = read_gold("(S (NP (DT the) (NN cat)) (VP (VBD sat)))")[0]
    gold = type(gold)(gold.tree, gold.labels, "wsj10 sentence 143, wsj_0123.mrg:4567")
    view = make_view("the cat sat".split(), [[0.2, 0.5, 0.1], [0.3, 0.6, 0.2]], 2, "average of 6 members",
                     gold, tree=(("the", "cat"), "sat"))
    check_png(plot_sentence(view, str(tmp_path / "s.png"), caption=f"model: {LONG_MODEL}  ·  gold: wsj10:143"))
    (fig,) = saved_figures
    assert texts_outside(fig) == []
    tree_ax, gold_ax = fig.axes[0], next(ax for ax in fig.axes if ax.get_title(loc="left").startswith("gold tree"))
    assert left_title(tree_ax).get_window_extent().x1 < gold_ax.get_window_extent().x0  # not into the gold panel
    gold_title = left_title(gold_ax).get_text()
    assert "\n" in gold_title and gold_title.replace("\n", " ").endswith("(wsj10 sentence 143, wsj_0123.mrg:4567)")
    plot_sentence(make_view(["Hello"], [[0.4]], 1), str(tmp_path / "one.png"))
    assert texts_outside(saved_figures[-1]) == []


def test_eval_figures_fit_a_long_model_name(mpl, tmp_path, saved_figures, recwarn):
    from onparse.trees.baselines import baseline_trees
    from onparse.gold.treebank import Gold, GoldSentence
    from onparse.trees.tree import leaves

    gold = Gold("six", tuple(GoldSentence.from_tree(t) for t in _small_gold()))
    result = evaluate(baseline_trees([leaves(t) for t in _small_gold()], "balanced"), gold)
    plot_eval_with_baselines(result, gold, str(tmp_path), LONG_MODEL, formats=("png",))
    assert len(saved_figures) == 2
    for fig in saved_figures:
        assert texts_outside(fig) == []
        (ax_main,) = [ax for ax in fig.axes if ax.get_legend() is not None]
        assert ax_main.get_position().width > 0.4  # the legend did not squeeze the plot away
    assert not [w for w in recwarn if "constrained_layout" in str(w.message)]


# --- training log -----------------------------------------------------------------------------

def _record(event, **values):
    return json.dumps({"event": event, "time": 1.0, **values})


def _epoch(e, train, valid, **extra):
    return _record("epoch", epoch=e, step=10 * e, train_loss=train, train_ppl=math.exp(train), valid_loss=valid,
                   valid_ppl=math.exp(valid), improved=True, **extra)


def write_log(tmp_path, lines, name="metrics.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_read_log_synthetic(tmp_path):
    path = write_log(tmp_path, [
        _record("start", preset="tiny", parameters=1234, config={}),
        _epoch(1, 6.0, 5.5),
        _epoch(2, 5.0, 5.0),
        _record("asgd", epoch=2, step=20),
        _record("resume", preset="tiny", parameters=1234, epoch=2),
        _epoch(2, 5.1, 4.9),          # logged again after a resume: the later record wins
        _epoch(3, 4.8, 5.2),
        "",
        _record("stop", reason="epochs", epoch=3, step=30),
        _record("test", test_ppl=130.5, best_epoch=2),
    ])
    log = read_log(path)
    assert log.epochs == (1, 2, 3)
    assert log.train_loss == (6.0, 5.1, 4.8) and log.valid_loss == (5.5, 4.9, 5.2)
    assert log.valid_ppl[1] == pytest.approx(math.exp(4.9))
    assert log.asgd_epoch == 2 and log.test_ppl == 130.5 and log.best_epoch == 2
    assert log.preset == "tiny" and log.parameters == 1234
    assert read_log(str(tmp_path)) == log  # a run folder means its metrics.jsonl


def test_read_log_infinite_perplexity(tmp_path):
    path = write_log(tmp_path, [json.dumps({"event": "epoch", "epoch": 1, "train_loss": 800.0,
                                            "valid_loss": 750.0, "valid_ppl": float("inf")})])
    assert "Infinity" in Path(path).read_text()
    log = read_log(path)
    assert math.isinf(log.valid_ppl[0])


def test_read_log_real_trainer_output(tmp_path):
    # A log written by `onparse train --preset tiny` (trimmed config), kept as a fixture so the
    # reader is checked against the trainer's real record format.
    log = read_log(str(Path(__file__).parent / "golden" / "metrics_tiny.jsonl"))
    assert log.epochs == (1, 2, 3, 4)
    assert log.preset == "tiny" and log.test_ppl == pytest.approx(691.27, abs=0.01)
    assert log.best_epoch == 4


@pytest.mark.parametrize("lines,message", [
    (["not json"], "line 1: not a JSON object"),
    ([_record("start", preset="tiny"), "[1, 2]"], "line 2: not a JSON object"),
    ([_record("epoch", epoch=1)], "line 1: malformed 'epoch' record"),
    ([_record("start", preset="tiny")], "no finished epoch"),
])
def test_read_log_errors(tmp_path, lines, message):
    with pytest.raises(OnparseError, match=message):
        read_log(write_log(tmp_path, lines))


def test_read_log_missing_and_binary(tmp_path):
    with pytest.raises(OnparseError, match="training log not found"):
        read_log(str(tmp_path / "nope.jsonl"))
    binary = tmp_path / "model.pt"
    binary.write_bytes(b"\x80\x02\xff\xfe")
    with pytest.raises(OnparseError, match="not a training log"):
        read_log(str(binary))


def test_plot_log(mpl, tmp_path):
    lines = [_record("start", preset="small", parameters=5_000_000)]
    lines += [_epoch(e, 7 - 0.3 * e, 6.8 - 0.25 * e + (0.02 * e if e > 8 else 0)) for e in range(1, 13)]
    lines += [_record("asgd", epoch=9, step=90), _record("test", test_ppl=120.0, best_epoch=8)]
    log = read_log(write_log(tmp_path, lines))
    check_png(plot_log(log, str(tmp_path / "curves.png")))
    check_svg(plot_log(log, str(tmp_path / "curves.svg")),
              must_contain=["validation perplexity", "averaged SGD", "test (best checkpoint)", "preset small"])
    one = TrainingLog(epochs=(1,), train_loss=(5.0,), valid_loss=(4.0,), valid_ppl=(math.exp(4.0),))
    check_png(plot_log(one, str(tmp_path / "one.png")))
    inf = TrainingLog(epochs=(1, 2), train_loss=(800.0, 5.0), valid_loss=(790.0, 4.0),
                      valid_ppl=(float("inf"), math.exp(4.0)))
    check_png(plot_log(inf, str(tmp_path / "inf.png")))


def test_cli_plot_log(mpl, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_log(run, [_epoch(1, 6.0, 5.5), _epoch(2, 5.0, 5.1)])
    result = CliRunner().invoke(main, ["plot-log", str(run)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(run / "training-curves.png")
    check_png(str(run / "training-curves.png"))
    result = CliRunner().invoke(main, ["plot-log", str(run / "metrics.jsonl"), "--out", str(tmp_path / "c.svg")])
    assert result.exit_code == 0 and check_svg(str(tmp_path / "c.svg")) is not None
    result = CliRunner().invoke(main, ["plot-log", str(run), "--out", str(tmp_path / "c.gif")])
    assert result.exit_code == 1 and "error: " in result.output and "cannot tell the figure format" in result.output
    result = CliRunner().invoke(main, ["plot-log", str(tmp_path / "missing")])
    assert result.exit_code == 2
    # Python users: plot_training_log draws the same figure, by default beside the log.
    from onparse.pictures.figures import plot_training_log

    os.remove(run / "training-curves.png")
    assert plot_training_log(str(run)) == str(run / "training-curves.png")
    check_png(str(run / "training-curves.png"))


def test_plot_log_in_a_real_process(mpl, tmp_path):
    path = write_log(tmp_path, [_epoch(1, 6.0, 5.5), _epoch(2, 5.0, 5.1), _epoch(3, 4.5, 5.0)])
    out = tmp_path / "curves.png"
    proc = subprocess.run([sys.executable, "-m", "onparse", "plot-log", path, "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    check_png(str(out))


# --- without matplotlib -----------------------------------------------------------------------

def test_missing_matplotlib_is_a_one_line_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    with pytest.raises(OnparseError) as err:
        require_matplotlib()
    assert str(err.value) == MISSING_MATPLOTLIB == "matplotlib is needed for plots: pip install 'onparse[plot]'"
    view = make_view(WORDS, DIST, 2)
    log = TrainingLog(epochs=(1,), train_loss=(5.0,), valid_loss=(4.0,), valid_ppl=(54.6,))
    for call in (lambda: plot_sentence(view, str(tmp_path / "s.png")),
                 lambda: plot_log(log, str(tmp_path / "l.png")),
                 lambda: plot_eval({"m": None}, str(tmp_path))):
        with pytest.raises(OnparseError, match="pip install 'onparse\\[plot\\]'"):
            call()
    result = CliRunner().invoke(main, ["eval", "--gold", "wsj10", "-", "--plots", str(tmp_path)], input="(a b)\n")
    assert (result.exit_code, result.output) == (1, f"error: {MISSING_MATPLOTLIB}\n")  # before any scoring
    path = write_log(tmp_path, [_epoch(1, 6.0, 5.5)])
    result = CliRunner().invoke(main, ["plot-log", path])
    assert result.exit_code == 1
    assert result.output == f"error: {MISSING_MATPLOTLIB}\n"
    assert not list(tmp_path.glob("*.png"))


def test_sentence_figure_titles_say_what_the_terminal_says(mpl, tmp_path, saved_figures):
    """Issue 54.7: a student's figure was titled "layer 1, decoder model 4 student" with bars
    of "master-forget distance"; its titles now say what the terminal says: whose tree, and
    what the bars measure."""
    from onparse.pictures.show import SPLIT_SIZES, render_view

    view = make_view("the cat sat".split(), [[0.0, 2.0, 1.0]], 1, "student", tree=(("the", "cat"), "sat"),
                     measure=SPLIT_SIZES)
    plot_sentence(view, str(tmp_path / "s.png"))
    titles = [ax.get_title(loc="left") for ax in saved_figures[-1].axes if ax.get_title(loc="left")]
    assert titles[0] == "induced tree: the student's" and render_view(view).startswith(titles[0] + ";")
    assert titles[1].startswith("split size per word") and not any("master-forget" in t or "decoder" in t for t in titles)
    plot_sentence(make_view(WORDS, DIST, 2, "onlstm"), str(tmp_path / "lm.png"))
    titles = [ax.get_title(loc="left") for ax in saved_figures[-1].axes if ax.get_title(loc="left")]
    assert titles[0] == "induced tree: layer 2 of 3, decoder onlstm"
    assert titles[1].startswith("master-forget distance $d_f$ per word")

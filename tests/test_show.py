"""`onparse show`'s terminal drawing: golden files, bars, gold trees, and the command itself.

Golden files live in tests/golden/show_*.txt.  After an intended change of the drawing (or an
nltk release that draws trees differently), regenerate them and review the diff:

    ONPARSE_REGEN_GOLDEN=1 python -m pytest -q tests/test_show.py
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import save_tiny_checkpoint
from onparse.cli import main
from onparse.trees.decode import decode
from onparse.errors import OnparseError
from onparse.api import Parser
from onparse.members import Member
from onparse.induce import induce_lines
from onparse.gold.gold_trees import read_gold
from onparse.pictures.show import views_from_lines
from onparse.pictures.show import _bar_block, bar_levels, draw_bars, draw_tree, leaf_columns, make_view, render_view, to_nltk
from onparse.trees.tree import leaves, spans_to_tree, to_brackets

pytestmark = pytest.mark.usefixtures("one_thread")

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("ONPARSE_REGEN_GOLDEN") == "1"

CAT_GOLD = "(S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))"

# Hand-given distances (no model, so the drawings cannot drift with torch); no value sits on a
# rounding boundary of the bar quantisation.
LONG_WORDS = ("The company said its quarterly earnings rose sharply to a record as strong sales of "
              "its new products in Asia and Europe offset the higher costs of raw materials while the "
              "firm kept cutting jobs at two of older plants").split()
LONG_GOLD = ("((The company) (said ((its quarterly earnings) (rose sharply (to (a record)) (as ((strong sales "
             "(of (its new products)) (in (Asia and Europe))) (offset ((the higher costs) (of (raw materials))) "
             "(while ((the firm) (kept (cutting jobs (at (two (of (older plants)))))))))))))))")
CASES = {
    "unicode_gold": dict(
        words="The cat sat on the mat".split(),
        distances=[[0.11, 0.23, 0.91, 0.32, 0.52, 0.21],
                   [0.15, 0.31, 0.83, 0.62, 0.41, 0.12],
                   [0.47, 0.47, 0.47, 0.47, 0.47, 0.47]],
        layer=2, decoder="onlstm", gold=CAT_GOLD, unicode=True, height=1, scale="layer"),
    "ascii_tall_split": dict(
        words="Stocks fell 5 % in heavy trading yesterday".split(),
        distances=[[0.05, 0.62, 0.33, 0.12, 0.71, 0.28, 0.19, 0.44],
                   [0.02, 0.81, 0.09, 0.27, 0.66, 0.13, 0.38, 0.55]],
        layer=2, decoder="split", gold=None, unicode=False, height=2, scale="layer"),
    "unit_scale": dict(
        words="dogs bark loudly at night".split(),
        distances=[[0.93, 0.12, 0.58, 0.71, 0.36]],
        layer=1, decoder="onlstm", gold="((dogs (bark loudly)) (at night))", unicode=True, height=3,
        scale="unit"),
    "one_word": dict(words=["Hello"], distances=[[0.3], [0.7]], layer=1, decoder="onlstm", gold=None,
                     unicode=True, height=1, scale="layer"),
    # 40 words drawn for an 80-column terminal: the compact form.
    "compact_40_words": dict(
        words=LONG_WORDS,
        distances=[[round((i * 37 % 101) / 101 + 0.0003, 4) for i in range(40)],
                   [round((i * 53 % 97) / 97 + 0.0003, 4) for i in range(40)]],
        layer=2, decoder="split", gold=LONG_GOLD, unicode=True, height=1, scale="layer", width=80),
}


def _render(case):
    gold = read_gold(case["gold"])[0] if case["gold"] else None
    view = make_view(case["words"], case["distances"], case["layer"], case["decoder"], gold)
    return render_view(view, unicode=case["unicode"], height=case["height"], scale=case["scale"],
                       width=case.get("width"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_drawings(name):
    text = _render(CASES[name]) + "\n"
    path = GOLDEN / f"show_{name}.txt"
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}: run with ONPARSE_REGEN_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


def test_golden_content_makes_sense():
    # The golden file is not just whatever came out: check what it must say.
    text = _render(CASES["unicode_gold"])
    lines = text.split("\n")
    assert lines[0] == "induced tree: layer 2 of 3, decoder onlstm"
    # Layer 2's largest d_f is at "sat": the onlstm rule makes it the root split.
    assert lines[1] == "((The cat) (sat (on (the mat))))"
    assert "sentence F1 against gold: 100.0" in text
    assert any(line.rstrip().endswith("layer 2 *  0.120–0.830") for line in lines)
    assert any("layer 3    0.470–0.470" in line for line in lines)
    # Gold labels are drawn; the punctuation of the gold tree was dropped.
    assert " S" in text and "VP" in text and "PP" in text
    assert "." not in lines[-2]


def test_a_drawing_wider_than_the_terminal_gives_way_to_the_compact_form():
    case = CASES["compact_40_words"]
    gold = read_gold(case["gold"])[0]
    view = make_view(case["words"], case["distances"], 2, "split", gold)
    full = render_view(view)
    assert max(len(line) for line in full.split("\n")) > 300  # what an 80-column terminal got
    assert render_view(view, width=1000) == full
    for width in (80, 60):
        for unicode in (True, False):
            lines = render_view(view, unicode=unicode, width=width).split("\n")
            assert max(len(line) for line in lines) <= width
            # the trees, wrapped at spaces: joined again they are the brackets
            blank = lines.index("")
            assert " ".join(lines[1:blank]) == to_brackets(view.tree)
            gold_at = lines.index("gold tree:")
            f1_at = next(i for i, line in enumerate(lines) if line.startswith("sentence F1 against gold"))
            assert " ".join(lines[gold_at + 1:f1_at]) == to_brackets(gold.tree)
            # one line per word, with the word's d_f in every layer
            head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["layer", "1"])
            rows = lines[head + 1:head + 41]
            assert [row.split()[0] for row in rows] == case["words"] and lines[head + 41].startswith("(bar ranges")
            for row, d1, d2 in zip(rows, *case["distances"]):
                assert f"{d1:.3f}" in row and f"{d2:.3f}" in row
    # a sentence that fits is drawn as before, the text around the drawing wrapped at the width
    short = make_view("the cat sat".split(), [[0.1, 0.5, 0.2]], 1)
    narrow = render_view(short, width=80)
    assert max(len(line) for line in narrow.split("\n")) <= 80
    assert draw_tree(short.tree) in narrow and " ".join(narrow.split("\n")[-2:]) == render_view(short).split("\n")[-1]


def test_labelled_brackets():
    from onparse.pictures.show import labelled_brackets

    gold = read_gold(CAT_GOLD)[0]
    assert labelled_brackets(gold.tree, gold.labels) == "(S (NP The cat) (VP sat (PP on (NP the mat))))"
    assert labelled_brackets(gold.tree, {}) == to_brackets(gold.tree)
    assert labelled_brackets("yes", {}) == "yes"


# --- trees ------------------------------------------------------------------------------------

def test_word_order_survives_mixed_children():
    # nltk's printer reorders string leaves that are siblings of subtrees; ours must not.
    for tree in [(("the", "cat"), "sat"), ("a", ("b", "c"), "d"), ((("x", "y"), "z"), "w")]:
        bottom = draw_tree(tree).split("\n")[-1]
        assert bottom.split() == leaves(tree)


def _trees(max_leaves=9):
    word = st.sampled_from(["a", "bb", "c", "dd", "e", "fff", "the", "N"])
    return st.recursive(word, lambda kids: st.lists(kids, min_size=2, max_size=3).map(tuple),
                        max_leaves=max_leaves)


@settings(max_examples=60, deadline=None)
@given(_trees())
def test_drawn_words_in_order_and_columns_increase(tree):
    words = leaves(tree)
    assert to_nltk(tree).leaves() == words
    assert to_nltk(tree, positions=True).leaves() == list(range(len(words)))
    for unicode in (True, False):
        bottom = draw_tree(tree, unicode=unicode).split("\n")[-1]
        assert bottom.split() == words
        columns = leaf_columns(bottom, words)
        assert columns == sorted(columns) and len(set(columns)) == len(columns)
        assert all(bottom[c:c + len(w)] == w for c, w in zip(columns, words))


def test_labels_are_drawn_at_their_spans():
    tree = ("a", "b", "c", ("d", "e"), "f")
    text = draw_tree(tree, {(0, 6): "S", (3, 5): "NP"})
    lines = text.split("\n")
    assert lines[0].strip() == "S"
    np_line = next(line for line in lines if "NP" in line)
    bottom = lines[-1]
    # NP sits above d..e, between their columns.
    d, e = leaf_columns(bottom, leaves(tree))[3:5]
    assert d <= np_line.index("NP") <= e + 1


def test_one_word_tree_is_the_word():
    assert draw_tree("hello") == "hello"


# --- bars -------------------------------------------------------------------------------------

def test_bar_levels_layer_scale_hand_computed():
    # levels 8: lo -> 1, hi -> 8, 0.3 is a quarter of the way: 1 + round(0.25 * 7) = 3.
    heights, lo, hi = bar_levels([0.1, 0.3, 0.9], 8, "layer")
    assert heights == [1, 3, 8] and (lo, hi) == (0.1, 0.9)


def test_bar_levels_unit_scale_and_flat_layer():
    assert bar_levels([0.1, 0.3, 0.9, 1.4, -0.2], 8, "unit")[0] == [1, 2, 7, 8, 0]
    assert bar_levels([0.4, 0.4], 16, "layer") == ([16, 16], 0.4, 0.4)
    with pytest.raises(ValueError):
        bar_levels([0.1], 8, "log")


def test_bar_block_cells():
    # Two rows of eighth blocks: 16 = full/full, 9 = eighth on top of a full cell, 1 = one eighth.
    rows = _bar_block([16, 9, 1, 0], [0, 2, 4, 6], [1, 1, 1, 1], 2, " ▁▂▃▄▅▆▇█")
    assert rows == ["█ ▁    ", "█ █ ▁  "]
    ascii_rows = _bar_block([3, 2], [0, 1], [1, 1], 1, " .:#")
    assert ascii_rows == ["#:"]


def test_draw_bars_layout():
    lines = draw_bars(["ab", "c"], [[0.2, 0.8], [0.5, 0.5]], [0, 3], decoded_layer=2, height=1)
    assert lines == ["▁▁ █   layer 1    0.200–0.800",
                     "██ █   layer 2 *  0.500–0.500"]
    tall = draw_bars(["ab", "c"], [[0.2, 0.8], [0.5, 0.5]], [0, 3], height=2, unicode=False)
    assert tall[2] == ""  # blank line between layers taller than one line
    assert len(tall) == 5 and all(set(line[:4]) <= set(" .:#") for line in tall)


# --- views and gold -----------------------------------------------------------------------------

def test_make_view_decodes_the_chosen_layer():
    words = "a b c d".split()
    d = [[0.1, 0.9, 0.2, 0.3], [0.4, 0.1, 0.2, 0.8]]
    assert make_view(words, d, 1).tree == decode(d[0], words, "onlstm")
    assert make_view(words, d, 2, "split").tree == decode(d[1], words, "split")
    with pytest.raises(OnparseError, match="layer 3 does not exist"):
        make_view(words, d, 3)
    with pytest.raises(ValueError):
        make_view(words, [[0.1, 0.2]], 1)


def test_gold_f1_hand_computed():
    words = "a b c d".split()
    # Predicted (onlstm, max at d): (((a b) c) d)? max d_f at position 3 (k = b) -> (tree(a..c), d).
    view = make_view(words, [[0.5, 0.1, 0.3, 0.9]], 1, gold=read_gold("((a b) (c d))")[0])
    assert to_brackets(view.tree) == "((a (b c)) d)"
    # pred spans {(0,3), (1,3)}, gold {(0,2), (2,4)}: nothing matches.
    assert view.gold_prf() == (0.0, 0.0, 0.0)
    view = make_view(words, [[0.5, 0.1, 0.9, 0.3]], 1, gold=read_gold("((a b) (c d))")[0])
    assert to_brackets(view.tree) == "((a b) (c d))" and view.gold_prf() == (1.0, 1.0, 1.0)


def test_gold_that_does_not_fit_is_a_one_line_error():
    with pytest.raises(OnparseError, match="does not fit the sentence.*'dog'"):
        make_view("the cat sat".split(), [[0.1, 0.2, 0.3]], 1, gold=read_gold("((the dog) sat)")[0])


def test_read_gold_brackets_and_file(tmp_path):
    (gold,) = read_gold(CAT_GOLD)
    assert leaves(gold.tree) == "The cat sat on the mat".split()  # punctuation dropped
    assert gold.labels[(0, 6)] == "S" and gold.labels[(0, 2)] == "NP" and gold.labels[(3, 6)] == "PP"
    path = tmp_path / "gold.txt"
    path.write_text("((a b) c)\n(a (b c))\n", encoding="utf-8")
    trees = read_gold(str(path))
    assert [g.tree for g in trees] == [(("a", "b"), "c"), ("a", ("b", "c"))]
    assert trees[1].source.endswith("gold.txt:2") and trees[0].labels == {}
    with pytest.raises(OnparseError, match="not a bracketed tree"):
        read_gold("no-such-file.txt")
    with pytest.raises(OnparseError, match="unbalanced"):
        read_gold("((a b)")


def test_read_gold_from_a_gold_set(nltk_treebank):
    from onparse.gold.treebank import load_gold

    wsj10 = load_gold("wsj10")
    (third,) = read_gold("wsj10:3")
    assert leaves(third.tree) == list(wsj10[2].words)
    assert third.tree == spans_to_tree(list(wsj10[2].words), wsj10[2].spans)
    assert "wsj10 sentence 3" in third.source
    assert len(read_gold("wsj10:2-4")) == 3
    for bad in ("wsj10:0", "wsj10:556", "wsj10:4-2", "wsj10:x"):
        with pytest.raises(OnparseError, match="--gold"):
            read_gold(bad)


# --- through a model --------------------------------------------------------------------------

WORDS = "the cat sat on a mat dog barked N times".split()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(model, vocabulary, checkpoint path) of an untrained 3-layer model."""
    return save_tiny_checkpoint(tmp_path_factory.mktemp("model") / "tiny.pt", WORDS, seed=5)


def test_views_agree_with_induce(tiny):
    model, vocab, _ = tiny
    lines = ["The cat sat on a mat .", "", "dog barked 3 times"]
    for layer in (1, 2, 3):
        for decoder in ("onlstm", "split"):
            parser = Parser.from_model(model, vocab, [Member(0, layer, decoder)])
            induced = [l for chunk in induce_lines(lines, parser) for l in chunk]
            views = list(views_from_lines(lines, parser))
            assert [n for n, _ in views] == [1, 2, 3] and views[1][1] is None
            assert to_brackets(views[0][1].tree) == induced[0]
            assert to_brackets(views[2][1].tree) == induced[2]
            assert views[0][1].words == tuple("The cat sat on a mat".split())
            assert len(views[0][1].distances) == 3


def test_views_gold_count_must_match(tiny):
    model, vocab, _ = tiny
    golds = read_gold("((the cat) sat)\n(dog barked)")
    parser = Parser.from_model(model, vocab)
    with pytest.raises(OnparseError, match="2 trees for 1"):
        list(views_from_lines(["the cat sat"], parser, golds=golds))
    with pytest.raises(OnparseError, match="no gold tree left"):
        list(views_from_lines(["the cat sat", "dog barked", "a mat"], parser, golds=golds))


def invoke(args, input=None):
    return CliRunner().invoke(main, args, input=input)


def test_cli_show_sentence(tiny):
    model, vocab, path = tiny
    result = invoke(["show", "The", "cat", "sat", "on", "a", "mat", "--model", path, "--layer", "3"])
    assert result.exit_code == 0, result.output
    induced = next(iter(induce_lines(["The cat sat on a mat"], Parser.from_model(model, vocab, [Member(0, 3, "onlstm")]))))[0]
    lines = result.output.split("\n")
    assert lines[0] == "induced tree: layer 3 of 3, decoder onlstm"
    assert lines[1] == induced
    assert sum("layer" in line and "–" in line for line in lines) == 3
    assert any("layer 3 *" in line for line in lines) and not any("layer 2 *" in line for line in lines)


def test_cli_show_keeps_a_long_sentence_within_the_terminal(tiny, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    args = ["show", " ".join(LONG_WORDS), "--model", tiny[2]]
    piped = invoke(args)  # not a terminal, no $COLUMNS: the whole drawing
    assert piped.exit_code == 0, piped.output
    assert max(len(line) for line in piped.output.splitlines()) > 200
    narrow = CliRunner().invoke(main, args, env={"COLUMNS": "80"})
    assert narrow.exit_code == 0, narrow.output
    assert max(len(line) for line in narrow.output.splitlines()) <= 80
    assert "one line per word" in narrow.output and "the terminal has 80" in narrow.output


def test_cli_show_stdin_gold_and_ascii(tiny):
    _, _, path = tiny
    result = CliRunner().invoke(main, ["show", "-", "--model", path, "--ascii", "--gold", "((the cat) sat)\n(dog barked)"],
                                input="the cat sat\n\ndog barked\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("induced tree:") == 2
    assert result.output.count("sentence F1 against gold:") == 2
    assert "line 2: no words to parse" in result.output  # (CliRunner mixes stderr in)
    assert all(ord(ch) < 128 for ch in result.output)


def test_cli_show_words_from_gold(tiny):
    _, _, path = tiny
    result = invoke(["show", "--model", path, "--gold", "(S (NP (DT the) (NN cat)) (VP (VBD sat)) (. .))"])
    assert result.exit_code == 0, result.output
    assert "gold tree:\n((the cat) sat)" in result.output


@pytest.mark.parametrize("args,code,message", [
    (["show", "--model", "MODEL"], 2, "nothing to show"),
    (["show", "the", "cat", "--model", "MODEL", "--layer", "4"], 2, "layer 4 does not exist"),  # usage, as elsewhere
    (["show", "the", "cat", "--model", "MODEL", "--gold", "((the dog) sat)"], 1, "error: gold tree does not fit"),
    (["show", "the", "cat", "--model", "MODEL", "--gold", "(a b) (c d)"], 1, "error: --gold gave 2 trees"),
    (["show", "the", "cat", "--model", "missing.pt"], 1, "error: checkpoint not found"),
    (["show", "the", "--model", "MODEL", "--decode", "cky"], 2, "Invalid value for --decode"),
])
def test_cli_show_errors(tiny, args, code, message):
    args = [tiny[2] if a == "MODEL" else a for a in args]
    result = invoke(args)
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_terminal_drawing_works_without_matplotlib(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    result = invoke(["show", "the", "cat", "--model", tiny[2]])
    assert result.exit_code == 0 and "induced tree" in result.output
    result = invoke(["show", "the", "cat", "--model", tiny[2], "-o", "x.png"])
    assert result.exit_code == 1
    assert result.output.strip() == "error: matplotlib is needed for plots: pip install 'onparse[plot]'"


def test_show_help_documents_the_gold_forms():
    result = invoke(["show", "--help"])
    assert result.exit_code == 0
    for text in ("wsj10:3", "--out", ".png, .svg, .pdf", "--ascii", "default: 2", "onlstm"):
        assert text in result.output
    assert "--png" not in result.output and "--svg" not in result.output     # one way to write a figure


def test_show_in_a_real_process(tiny):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONIOENCODING="utf-8")
    proc = subprocess.run([sys.executable, "-m", "onparse", "show", "the cat sat on a mat", "--model", tiny[2],
                           "--decode", "split"], capture_output=True, text=True, encoding="utf-8", env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("induced tree: layer 2 of 3, decoder split\n")
    assert "│" in proc.stdout and proc.stderr == ""
    proc = subprocess.run([sys.executable, "-m", "onparse", "show", "the", "--model", tiny[2], "--layer", "9"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2 and "layer 9 does not exist" in proc.stderr and "Traceback" not in proc.stderr


def test_show_names_the_bundled_models_trees_as_what_they_are(monkeypatch):
    """Issue 54.7: the bundled model's members read some of several models (a language model
    before them gives distances only); show called its one member "model 4 student".  Its trees
    are named as info and eval name them: the default reading's, a student's, unlabelled; the
    accurate reading's, an average, its spans named by its grammar."""
    from onparse.cli import main

    monkeypatch.setenv("COLUMNS", "200")      # wide: a narrow terminal wraps the header line
    result = CliRunner().invoke(main, ["show", "the cat sat on the mat"])
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("induced tree: the student's;") and "bars:" in first
    assert "model 1" not in result.stdout and not re.search(r"\(NT-\d+ ", result.stdout)
    result = CliRunner().invoke(main, ["show", "the cat sat on the mat", "--reading", "accurate"])
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("induced tree: the average of 3 members + right voter's;") and "bars:" in first
    assert "model 1" not in result.stdout and re.search(r"\(NT-\d+ ", result.stdout)

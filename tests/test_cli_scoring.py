"""`onparse eval` and `onparse baseline`: CliRunner runs, bad input, and real subprocesses."""
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import save_tiny_checkpoint
from onparse.cli import main
from onparse.gold.treebank import GOLD_NAMES, PTB_ROOT_ENV

pytestmark = pytest.mark.usefixtures("nltk_treebank")


@pytest.fixture()
def run(monkeypatch):
    monkeypatch.delenv(PTB_ROOT_ENV, raising=False)
    runner = CliRunner()

    def invoke(*args, input=None, env=None):
        return runner.invoke(main, list(args), input=input, env=env, catch_exceptions=False)

    return invoke


@pytest.fixture(scope="module")
def right_wsj10():
    result = CliRunner().invoke(main, ["baseline", "--gold", "wsj10", "--kind", "right"], env={PTB_ROOT_ENV: ""})
    assert result.exit_code == 0
    return result.stdout


def test_baseline_prints_one_tree_per_gold_sentence(right_wsj10, run):
    lines = right_wsj10.splitlines()
    assert len(lines) == 555
    assert lines[0] == "(a (lorillard (spokewoman (said (this (is (an (old story))))))))"
    ptb = run("baseline", "--kind", "left", "--format", "ptb").stdout.splitlines()
    assert ptb[1] == "(X (X (X (X (X (X (X (W there) (W is)) (W no)) (W asbestos)) (W in)) (W our)) (W products)) (W now))"


def test_baseline_score_reproduces_the_reference(run):
    result = run("baseline", "--gold", "wsj10", "--kind", "right", "--score", "--json")
    assert result.exit_code == 0
    d = json.loads(result.stdout)
    assert (d["sentences"], d["sentences_kim"]) == (555, 513)
    assert round(100 * d["sentence_f1_onlstm"]["f1"], 1) == 58.6
    assert round(100 * d["sentence_f1_kim"]["f1"], 1) == 56.8
    assert round(100 * d["corpus_f1"]["f1"], 1) == 55.0
    table = run("baseline", "--baseline", "left", "--score").stdout
    assert table.splitlines()[4].split() == ["left-branching", "baseline", "19.2", "14.1", "13.4", "29.3", "5.95"]


def test_baseline_random_is_seeded(run):
    a = run("baseline", "--kind", "random", "--seed", "7").stdout
    assert a == run("baseline", "--kind", "random", "--seed", "7").stdout
    assert a != run("baseline", "--kind", "random", "--seed", "8").stdout


def test_eval_file_and_stdin_agree(right_wsj10, run, tmp_path):
    pred = tmp_path / "right.txt"
    pred.write_text(right_wsj10)
    from_file = run("eval", "--gold", "wsj10", str(pred), "--json")
    from_stdin = run("eval", "--gold", "wsj10", "-", "--json", input=right_wsj10)
    assert from_file.exit_code == from_stdin.exit_code == 0
    assert json.loads(from_file.stdout) == json.loads(from_stdin.stdout)
    assert round(100 * json.loads(from_file.stdout)["sentence_f1_onlstm"]["f1"], 1) == 58.6
    table = run("eval", str(pred)).stdout  # --gold defaults to wsj10
    assert "gold wsj10: 555 sentences" in table and "58.6" in table


def test_eval_out_writes_the_report_whole(right_wsj10, run, tmp_path):
    """41.14: eval's report goes to -o/--out as it would to stdout; nothing is written when it
    fails, and an input or a model is never overwritten."""
    pred = tmp_path / "right.txt"
    pred.write_text(right_wsj10)
    printed = run("eval", "--gold", "wsj10", str(pred), "--json").stdout
    out = tmp_path / "scores.json"
    written = run("eval", "--gold", "wsj10", str(pred), "--json", "-o", str(out))
    assert written.exit_code == 0 and written.stdout == ""
    assert out.read_text() == printed
    table = run("eval", "--gold", "wsj10", str(pred), "--out", str(tmp_path / "table.txt"))
    assert table.exit_code == 0 and (tmp_path / "table.txt").read_text() == run("eval", "--gold", "wsj10", str(pred)).stdout
    bad = tmp_path / "bad.txt"
    bad.write_text("(a b\n")
    failed = CliRunner().invoke(main, ["eval", "--gold", "wsj10", str(bad), "-o", str(tmp_path / "none.json")])
    assert failed.exit_code == 1 and not (tmp_path / "none.json").exists()
    same = CliRunner().invoke(main, ["eval", "--gold", "wsj10", str(pred), "-o", str(pred)])
    assert same.exit_code == 2 and "is the prediction file" in same.output
    assert pred.read_text() == right_wsj10


def test_eval_per_sentence(right_wsj10, run, tmp_path):
    from onparse.gold.gold_trees import read_gold

    out = tmp_path / "per.jsonl"
    result = run("eval", "--per-sentence", str(out), "-", input=right_wsj10)
    assert result.exit_code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 555
    assert records[0]["pred"] == right_wsj10.splitlines()[0]
    assert sum(r["f1"] for r in records) / 555 == pytest.approx(0.586, abs=5e-4)
    # One base for sentence numbers: record "index" I is what `onparse show --gold wsj10:I` shows.
    assert [r["index"] for r in records] == list(range(1, 556))
    for record in (records[0], records[41], records[-1]):
        (shown,) = read_gold(f"wsj10:{record['index']}")
        assert shown.source.endswith(record["source"]) and f"sentence {record['index']}," in shown.source


def test_eval_reads_stdin_without_click_binary_streams(right_wsj10, run, monkeypatch):
    import click

    # Deprecated since Click 8.2 (a module __getattr__ in 8.5, gone in 9): onparse must not use it.
    def gone(*args, **kwargs):
        raise AssertionError("click.get_binary_stream was used")

    monkeypatch.setattr(click, "get_binary_stream", gone, raising=False)
    result = run("eval", "--gold", "wsj10", "-", "--json", input=right_wsj10.replace("\n", "\r\n"))
    assert result.exit_code == 0, result.output
    assert round(100 * json.loads(result.stdout)["sentence_f1_onlstm"]["f1"], 1) == 58.6


@pytest.mark.parametrize("kind", ["right", "random"])
def test_evalb_on_ptb_output_equals_the_evalb_style_f1(run, kind):
    """EVALB-style corpus F1 is what EVALB (unlabelled) reports for `--format ptb` trees against
    the gold collapsed to word spans, written the same way; one-word sentences (13 in wsj10)
    carry no bracket on either side."""
    from naive import naive_evalb
    from onparse.gold.treebank import load_gold
    from onparse.trees.tree import to_ptb

    gold = load_gold("wsj10")
    assert sum(len(s) == 1 for s in gold) == 13
    ptb = run("baseline", "--gold", "wsj10", "--kind", kind, "--format", "ptb").stdout.splitlines()
    assert sum(line.startswith("(W ") for line in ptb) == 13  # one-word sentences: no bracket
    evalb = json.loads(run("baseline", "--gold", "wsj10", "--kind", kind, "--score", "--json").stdout)["corpus_f1_evalb"]
    assert naive_evalb(ptb, [to_ptb(s.tree) for s in gold]) == pytest.approx(
        (evalb["precision"], evalb["recall"], evalb["f1"]), abs=1e-12)


def test_eval_accepts_labelled_trees_with_surface_words(run, tmp_path):
    gold = tmp_path / "gold.mrg"
    gold.write_text("( (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)) )\n")
    pred = "(S (NP (DT The) (NN Cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))))\n"
    result = run("eval", "--gold", str(gold), "--json", "-", input=pred)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["corpus_f1"]["f1"] == 1.0


@pytest.mark.parametrize(
    "make_input, message",
    [
        (lambda right: "", "error: stdin is empty: no trees found (gold wsj10 has 555 sentences)"),
        (lambda right: right.replace(")", "", 1), "error: stdin line 1: unbalanced parentheses"),
        (lambda right: "((a b) c))\n" + right, "error: stdin line 1: unbalanced parentheses: ')' with no matching '('"),
        (lambda right: right.replace("\n", "\nstray words\n", 1), "error: stdin line 2: malformed brackets: 'stray' outside"),
        (lambda right: "\n".join(right.splitlines()[:-1]) + "\n", "error: stdin ends after line 554: gold sentence 555"),
        (lambda right: right + "(extra tree)\n", "error: stdin line 556: tree 556 has no gold sentence"),
        (
            lambda right: right.replace("(old story)", "(old tale)", 1),
            "error: stdin line 1: tree 1 does not match gold sentence 1 (wsj_0003.mrg:145): first difference at word 9: 'tale', gold 'story'",
        ),
        (
            lambda right: right.replace("(old story)", "(old (story .))", 1),
            "the prediction keeps punctuation that the gold drops ('.'); remove punctuation tokens before parsing",
        ),
    ],
)
def test_eval_bad_input_is_one_line_exit_1_nothing_scored(right_wsj10, run, tmp_path, make_input, message):
    per = tmp_path / "per.jsonl"
    result = run("eval", "--gold", "wsj10", "--per-sentence", str(per), "-", input=make_input(right_wsj10))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not per.exists()


def test_wrong_count_names_both_counts(run):
    whole = run("baseline", "--gold", "wsj", "--kind", "right").stdout
    result = run("eval", "--gold", "wsj10", "-", input=whole)
    assert result.exit_code == 1
    assert "(stdin holds 3,914 trees, gold wsj10 has 555 sentences)" in result.stderr


def test_usage_errors_exit_2(run, tmp_path):
    result = run("eval", "--gold", "wsj11", "-", input="(a b)\n")
    assert result.exit_code == 2
    assert f"'wsj11' is neither a gold set ({', '.join(GOLD_NAMES)}) nor an existing file or folder" in result.stderr
    assert "wsj10, wsj, wsj-sample-dev, wsj10-sample-dev, wsj-sample-test, wsj10-sample-test, wsj-test, " in result.stderr
    assert run("baseline", "--gold", "nope", "--kind", "right").exit_code == 2
    assert run("baseline", "--kind", "sideways").exit_code == 2
    assert run("baseline", "--kind", "right", "--json").exit_code == 2  # --json goes with --score
    assert run("eval", str(tmp_path / "missing.txt")).exit_code == 2


def test_ldc_sets_need_a_root(run):
    result = run("eval", "--gold", "wsj-test", "-", input="(a b)\n")
    assert result.exit_code == 1
    assert "needs the LDC Penn Treebank: pass --ptb-root DIR or set ONPARSE_PTB_ROOT" in result.stderr


def test_ptb_root_option_and_environment(run, tmp_path):
    import nltk

    combined = Path(nltk.data.find("corpora/treebank/combined"))
    wsj = tmp_path / "wsj"
    (wsj / "23").mkdir(parents=True)
    shutil.copy(combined / "wsj_0001.mrg", wsj / "23" / "wsj_2301.mrg")
    expected = "(pierre (vinken (N (years (old (will (join (the (board (as (a (nonexecutive (director (nov. N))))))))))))))"
    by_option = run("baseline", "--gold", "wsj-test", "--ptb-root", str(wsj), "--kind", "right").stdout
    by_env = run("baseline", "--gold", "wsj-test", "--kind", "right", env={PTB_ROOT_ENV: str(wsj)}).stdout
    assert by_option == by_env
    assert by_option.splitlines() == [expected, "(mr. (vinken (is (chairman (of (elsevier (n.v. (the (dutch (publishing group))))))))))"]
    result = run("eval", "--gold", "wsj-test", "--ptb-root", str(wsj), "--json", "-", input=by_option)
    assert json.loads(result.stdout)["sentences"] == 2


def test_help_shows_defaults(run):
    text = " ".join(run("eval", "--help").stdout.split())  # independent of line wrapping
    assert "[default: wsj10]" in text and "ONPARSE_PTB_ROOT" in text
    assert "[default: 0; 0<=x<=4294967295]" in " ".join(run("baseline", "--help").stdout.split())


def _onparse(*args):
    return [sys.executable, "-m", "onparse", *args]


def test_real_shell_pipe_baseline_into_eval():
    command = (
        shlex.join(_onparse("baseline", "--gold", "wsj10", "--kind", "right"))
        + " | "
        + shlex.join(_onparse("eval", "--gold", "wsj10", "-", "--json"))
    )
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert round(100 * d["sentence_f1_onlstm"]["f1"], 1) == 58.6


def test_real_subprocess_error_is_one_line():
    done = subprocess.run(_onparse("eval", "--gold", "wsj10", "-"), input="(a b\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == "error: stdin line 1: unbalanced parentheses: 1 '(' never closed\n"


# --- scoring a model: onparse eval without PRED ---------------------------------------------------

@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    """An untrained 3-layer model whose vocabulary holds every WSJ10 word (its trees are
    arbitrary but fixed, which is all these tests need)."""
    from onparse.gold.treebank import load_gold

    words = [token for s in load_gold("wsj10") for token in s.tokens]  # normalised, as training makes them
    return save_tiny_checkpoint(tmp_path_factory.mktemp("model") / "m.pt", words)[2]


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_eval_model_equals_induce_then_eval(run, model_path, tmp_path):
    # The gold's raw text, as gold-text writes it (the words as written, in the gold's tokens).
    text = run("gold-text", "--gold", "wsj10").stdout
    assert len(text.splitlines()) == 555 and text.startswith("A Lorillard spokewoman said This is an old story\n")
    # Default options: the gold keeps a possessive "'" (tag POS) and "%" (NN); the model's
    # vocabulary holds them as words, so induce keeps them too; "CREATOR'S" stays whole.
    induced = run("induce", "-", "--model", model_path, "--decode", "split", "--layer", "3", input=text)
    assert induced.exit_code == 0 and len(induced.stdout.splitlines()) == 555
    piped = json.loads(run("eval", "--gold", "wsj10", "-", "--json", input=induced.stdout).stdout)
    direct = run("eval", "--gold", "wsj10", "--model", model_path, "--decode", "split", "--layer", "3", "--json")
    assert direct.exit_code == 0, direct.output
    record = json.loads(direct.stdout)
    assert (record.pop("model"), record.pop("layer"), record.pop("decoder")) == (model_path, 3, "split")
    assert record == piped
    table = run("eval", "--gold", "wsj10", "--model", model_path).stdout
    assert table.startswith(f"model {model_path}, layer 2, decoder onlstm\ngold wsj10: 555 sentences")


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_eval_model_every_layer_and_decoder(run, model_path, tmp_path):
    as_json = json.loads(run("eval", "--model", model_path, "--layer", "all", "--decode", "all", "--json").stdout)
    *members, average = as_json
    assert [(r["member"]["layer"], r["member"]["decoder"]) for r in members] == \
        [(k, d) for k in (1, 2, 3) for d in ("onlstm", "split")]
    assert average["average_of"] == [r["member"] for r in members]
    one = json.loads(run("eval", "--model", model_path, "--layer", "1", "--decode", "split", "--json").stdout)
    strip = ("model", "member", "layer", "decoder")
    assert {k: v for k, v in members[1].items() if k not in strip} == {k: v for k, v in one.items() if k not in strip}
    table = run("eval", "--model", model_path, "--layer", "all", "--decode", "all").stdout.splitlines()
    rows = [line for line in table if line.startswith("layer ")]
    assert [r.split()[:3] for r in rows] == [["layer", str(k), d] for k in (1, 2, 3) for d in ("onlstm", "split")]
    # each row shows the same four F1 values as the single-combination report, to one decimal
    assert rows[1].split()[3:7] == [f"{100 * one[key]['f1']:.1f}" for key in
                                    ("sentence_f1_onlstm", "sentence_f1_kim", "corpus_f1", "corpus_f1_evalb")]
    (avg_row,) = [line for line in table if line.startswith("average of 6 members")]
    assert avg_row.split()[4] == f"{100 * average['sentence_f1_onlstm']['f1']:.1f}"
    # --per-sentence describes the average: its trees, scored, give the average's figures.
    records = tmp_path / "per.jsonl"
    assert run("eval", "--model", model_path, "--layer", "all", "--decode", "all", "--per-sentence", str(records)).exit_code == 0
    lines = [json.loads(x) for x in records.read_text().splitlines()]
    assert len(lines) == 555
    assert abs(sum(x["f1"] for x in lines) / 555 - average["sentence_f1_onlstm"]["f1"]) < 1e-9


@pytest.mark.parametrize("args,message", [
    (["PRED", "--model", "MODEL"], "--model goes with a model, not with PRED"),
    (["PRED", "--layer", "1"], "--layer goes with a model, not with PRED"),
    (["PRED", "--decode", "split"], "--decode goes with a model, not with PRED"),
    (["--model", "MODEL", "--layer", "4"], "the model has 3 layers"),
    (["--model", "MODEL", "--decode", "cky"], "Invalid value for --decode"),
])
def test_eval_model_usage_errors_exit_2(run, model_path, right_wsj10, tmp_path, args, message):
    pred = tmp_path / "pred.txt"
    pred.write_text(right_wsj10)
    args = [{"PRED": str(pred), "MODEL": model_path}.get(a, a) for a in args]
    result = run("eval", "--gold", "wsj10", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_eval_without_pred_or_bundled_model_is_one_line(run, monkeypatch):
    monkeypatch.setattr("onparse.files.pretrained.default_model_path", lambda: None)
    result = run("eval", "--gold", "wsj10")
    assert result.exit_code == 1
    assert result.stderr == ("error: no --model given and this installation has no bundled model; "
                             "pass --model PATH (a checkpoint written by `onparse train`)\n")


def test_piped_trees_without_pred_are_a_usage_error():
    command = (shlex.join(_onparse("baseline", "--gold", "wsj10", "--kind", "right"))
               + " | " + shlex.join(_onparse("eval", "--gold", "wsj10")))
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert "trees are piped in but PRED is missing: pass - to score them" in done.stderr


def test_baseline_writes_jsonl_as_induce_does(run):
    """41.14: every command that writes trees has the same formats; baseline gains jsonl."""
    records = [json.loads(line) for line in run("baseline", "--kind", "right", "--format", "jsonl").stdout.splitlines()]
    brackets = run("baseline", "--kind", "right").stdout.splitlines()
    assert len(records) == len(brackets) == 555
    # A one-word tree is "(word)" in jsonl, as induce writes it: every record's tree is a bracketed tree.
    assert [r["tree"] for r in records] == [t if t.startswith("(") else f"({t})" for t in brackets]
    assert records[0]["tokens"][:2] == ["a", "lorillard"]


# -- issue 54.7 and 54.9: counts in the user's units, one layout, the gold's own labels ----------

def test_eval_progress_counts_the_gold_sentences_whatever_the_models(run, tmp_path, monkeypatch):
    """eval parsed with two models counted 2 x the sentences ("5,906 of 5,979 sentences" for a
    1,993-sentence gold set): the count is the gold's sentences."""
    import onparse.progress as progress

    words = "the cat sat down on a mat".split()
    one = save_tiny_checkpoint(tmp_path / "a.pt", words, seed=1)[2]
    two = save_tiny_checkpoint(tmp_path / "b.pt", words, seed=2)[2]
    gold = tmp_path / "gold.txt"
    gold.write_text("((the cat) (sat down))\n((the cat) (sat (on (a mat))))\n((a cat) sat)\n")
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    result = CliRunner().invoke(main, ["eval", "--gold", str(gold), "-m", one, "-m", two])
    assert result.exit_code == 0, result.output
    counts = [line for line in result.stderr.splitlines() if line.startswith("parsing ")]
    assert counts and all(" of 3 sentences " in line for line in counts), counts


def test_baseline_score_prints_the_layout_of_eval_beside(run):
    scored = run("baseline", "--gold", "wsj10-sample-test", "--baseline", "right", "--score").stdout.splitlines()
    beside = run("eval", "--gold", "wsj10-sample-test", "--baseline", "right").stdout.splitlines()
    # eval's table: its model line, the gold line, a blank, two header lines, a row per tree, the
    # note; its first column is as wide as its longest row name (the bundled model's average).
    assert [line.split() for line in scored[:4]] == [line.split() for line in beside[1:5]]
    assert [line.split() for line in scored if line.startswith("right-branching baseline")] == \
        [line.split() for line in beside if line.startswith("right-branching baseline")]
    assert scored[-1] == beside[-1] and len(scored) == 6


def test_the_label_report_uses_the_golds_own_labels(run, tmp_path):
    """A treebank with its own label set (IP, CP as a Chinese treebank has; no SBAR, no ADJP)
    got the Penn Treebank's labels, "0 of 0" each."""
    gold = tmp_path / "own.txt"
    gold.write_text("(IP (NP (NN a) (NN b)) (VP (VV c) (NP (NN d))))\n"
                    "(IP (NP (NN e)) (VP (VV f) (CP (IP (NP (NN g)) (VP (VV h))) (DEC i))))\n")
    trees = run("baseline", "--gold", str(gold), "--baseline", "right").stdout
    report = run("eval", "--gold", str(gold), "-", input=trees).stdout
    labels = report.split("recall by gold label")[1].split("\n\n")[0]
    assert "0 of 0" not in labels and "SBAR" not in labels and "ADJP" not in labels
    assert {line.split()[0] for line in labels.splitlines()[1:]} == {"NP", "VP", "IP", "CP"}
    # a Penn Treebank gold keeps its usual rows, in their usual order
    wsj = run("baseline", "--gold", "wsj10", "--baseline", "right", "--score", "--json").stdout
    assert list(json.loads(wsj)["label_recall"]) == ["NP", "VP", "PP", "SBAR", "ADJP", "ADVP", "S"]

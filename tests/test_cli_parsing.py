"""`onparse induce` and `onparse distances` from the command line (CliRunner and real processes)."""
import json
import os
import subprocess
import sys

import pytest
import torch
from click.testing import CliRunner

from conftest import save_tiny_checkpoint
from onparse.cli import main
from onparse.trees.tree import leaves, parse_brackets

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat down on a mat dog barked N times and then it was quiet".split()
TEXT = "The cat sat down .\n\n, .\ndog\nthe dog barked 3 times\nand then it was quiet\n"


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("model") / "tiny.pt", WORDS, seed=3, metadata={"test": True})[2]


def invoke(args, input=None):
    return CliRunner().invoke(main, args, input=input)


def test_induce_from_stdin_one_line_per_input_line(model_path):
    result = invoke(["induce", "-", "--model", model_path], input=TEXT)
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n")
    assert lines[-1] == "" and len(lines) - 1 == TEXT.count("\n")
    assert lines[1] == "" and lines[2] == "" and lines[3] == "(dog)"
    assert leaves(parse_brackets(lines[0])) == ["The", "cat", "sat", "down"]
    assert leaves(parse_brackets(lines[4])) == ["the", "dog", "barked", "3", "times"]


def test_induce_file_formats_and_decoders(model_path, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text(TEXT)
    ptb = invoke(["induce", str(path), "-m", model_path, "--format", "ptb", "--decode", "split", "--layer", "1"])
    assert ptb.exit_code == 0, ptb.output
    assert ptb.stdout.splitlines()[3] == "(W dog)"
    # `json` is an alias of `jsonl`; the old hidden --tokenize / --keep-punct flags are gone.
    js = invoke(["induce", str(path), "-m", model_path, "--format", "json"])
    for gone in ("--tokenize", "--keep-punct"):
        assert invoke(["induce", str(path), "-m", model_path, gone]).exit_code == 2
    records = [json.loads(line) for line in js.stdout.splitlines()]
    assert js.stdout == invoke(["induce", str(path), "-m", model_path, "--format", "jsonl"]).stdout
    assert len(records) == 6 and records[1] == {"tokens": [], "tree": None, "distances": [], "oov": []}
    assert records[0]["tokens"] == ["The", "cat", "sat", "down"]  # "." is not in the vocabulary
    assert records[4]["oov"] == [False, False, False, False, False]  # "3" reads as N


def test_shards_concatenate_to_the_whole_output(model_path, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text(TEXT * 7)
    whole = invoke(["induce", str(path), "-m", model_path]).stdout
    parts = [invoke(["induce", str(path), "-m", model_path, "--shard", f"{k}/4"]) for k in range(1, 5)]
    assert all(p.exit_code == 0 for p in parts)
    assert "".join(p.stdout for p in parts) == whole
    assert all(p.stdout for p in parts)  # each part did some of the work


def test_distances_tsv_all_layers_and_jsonl(model_path):
    tsv = invoke(["distances", "-", "-m", model_path, "--layer", "all"], input="the cat\n\ndog\n")
    assert tsv.exit_code == 0, tsv.output
    header, *lines = tsv.stdout.split("\n")
    assert header == "token\tlayer 1\tlayer 2\tlayer 3"
    assert lines[2] == lines[3] == "" and lines[4].startswith("dog\t") and lines[5:] == ["", ""]
    rows = [row.split("\t") for row in tsv.stdout.splitlines()[1:] if row]
    assert [r[0] for r in rows] == ["the", "cat", "dog"] and all(len(r) == 4 for r in rows)
    js = invoke(["distances", "-", "-m", model_path, "--gate", "input", "--format", "jsonl"], input="the cat\n")
    record = json.loads(js.stdout)
    assert record["gate"] == "input" and list(record["distances"]) == ["2"]
    assert len(record["distances"]["2"]) == 2


@pytest.mark.parametrize("args,code,message", [
    (["induce", "-", "-m", "MISSING.pt"], 1, "checkpoint not found"),
    (["induce", "-", "-m", "{model}", "--layer", "4"], 2, "the model has 3 layers"),
    (["distances", "-", "-m", "{model}", "--layer", "x"], 2, "expected a layer number"),
    (["induce", "-", "-m", "{model}", "--decode", "cky"], 2, "Invalid value for --decode"),
    (["induce", "-", "-m", "{model}", "--shard", "5/4"], 2, "1 <= K <= N"),
    (["induce", "-", "-m", "{model}", "--shard", "2/4"], 1, "--shard needs a FILE"),
    (["induce", "NOPE.txt", "-m", "{model}"], 1, "cannot read NOPE.txt"),
    (["induce", "-", "-m", "{model}", "--format", "xml"], 2, "Invalid value for '--format'"),
])
def test_errors(model_path, args, code, message):
    result = invoke([a.replace("{model}", model_path) for a in args], input="the cat\n")
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_cuda_without_gpu_is_a_one_line_error(model_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    result = invoke(["induce", "-", "-m", model_path, "--device", "cuda"], input="the cat\n")
    assert result.exit_code == 1 and "no CUDA device" in result.output


def test_help_shows_defaults():
    result = CliRunner().invoke(main, ["induce", "--help"], terminal_width=200, max_content_width=200)
    assert result.exit_code == 0
    for text in ("--decode NAME[,NAME]", "default: onlstm", "--shard K/N", "default: 2", "--pretokenized",
                 "--punct [vocab|drop]"):
        assert text in result.output
    assert "default: tsv" in invoke(["distances", "--help"]).output


# --- real processes ---------------------------------------------------------------------------

def _env():
    env = dict(os.environ, OMP_NUM_THREADS="1")  # tiny model: one thread, no spin-waits
    env.pop("COLUMNS", None)
    env.pop("PYTHONUNBUFFERED", None)  # buffered stdout, as for most users: errors can surface at flush
    return env


def test_non_utf8_input_exits_1_with_one_line(model_path, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"the cat\nthe \xe9 cat\n")
    proc = subprocess.run([sys.executable, "-m", "onparse", "induce", str(path), "-m", model_path],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")
    assert "line 2" in proc.stderr and "UTF-8" in proc.stderr


def test_pipe_into_head_exits_quietly(model_path, tmp_path):
    # Far more output than a pipe buffer holds, so writing goes on after `head` has exited.
    path = tmp_path / "big.txt"
    path.write_text("the cat sat down on the mat and then it was quiet\n" * 6000)
    producer = subprocess.Popen([sys.executable, "-m", "onparse", "induce", str(path), "-m", model_path],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    head = subprocess.Popen(["head", "-1"], stdin=producer.stdout, stdout=subprocess.PIPE)
    producer.stdout.close()  # only `head` holds the read end now
    first, _ = head.communicate(timeout=120)
    stderr = producer.stderr.read()
    producer.wait(timeout=120)
    assert first.decode().startswith("((") or first.decode().startswith("(the")
    assert producer.returncode == 0 and stderr == b""


def test_reader_gone_before_the_final_flush(model_path, tmp_path):
    # A tiny output only reaches the pipe at the final flush: the error is raised there.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "onparse", "induce", "-", "-m", model_path],
                              input=b"the cat\n", stdout=write_end, stderr=subprocess.PIPE,
                              env=_env(), timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode == 0 and proc.stderr == b""


def test_progress_bar_only_on_a_terminal(monkeypatch):
    import io

    from onparse.cli import parsing

    class Terminal(io.StringIO):
        def __init__(self, tty):
            super().__init__()
            self.tty = tty

        def isatty(self):
            return self.tty

    chunks = [["(a b)", ""], ["(c d)"]]
    for tty in (False, True):
        out, err = io.StringIO(), Terminal(tty)
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        assert parsing._run(iter(chunks), "induce") == 3
        assert out.getvalue() == "(a b)\n\n(c d)\n"  # results only on stdout
        assert ("3" in err.getvalue() and "lines" in err.getvalue()) == tty
    # Not a terminal: a plain line per interval (here every chunk), with the total when known.
    import onparse.progress as progress

    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    out, err = io.StringIO(), Terminal(False)
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert parsing._run(iter(chunks), "induce", total=3) == 3
    lines = err.getvalue().splitlines()
    assert lines[0] == "induce: 2 of 3 lines (67%), about " + lines[0].split("about ")[1]
    assert lines[1].startswith("induce: 3 of 3 lines (100%), about 0s left")
    assert parsing._run(iter(chunks), "induce", total=3, quiet=True) == 3 and len(err.getvalue().splitlines()) == 2


def test_chinese_and_cyrillic_end_to_end_through_real_processes(tmp_path):
    """Train a tiny model on Chinese and Russian text, then parse through a pipe: every word
    of every script survives (once, words without an ASCII letter vanished)."""
    lines = ["你好 世界 。", "我 爱 北京 天安门 。", "Привет , мир !", "Я люблю Москву .", "il est à la maison ."] * 8
    corpus = tmp_path / "multi.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = dict(_env(), PYTHONIOENCODING="utf-8")
    run = subprocess.run([sys.executable, "-m", "onparse", "train", "--preset", "tiny", "--corpus", str(corpus),
                          "--epochs", "1", "--out", str(tmp_path / "run"), "--threads", "1", "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    model = str(tmp_path / "run" / "best.pt")
    from onparse.lm.file import load_checkpoint

    vocab = set(load_checkpoint(model)["vocab"])
    assert {"你好", "世界", "天安门", "привет", "мир", "à"} <= vocab and not vocab & {"。", ",", "!", "."}
    text = "你好 世界\nПривет мир\nil est à la maison\n\n我爱北京。\n"
    induce = subprocess.Popen([sys.executable, "-m", "onparse", "induce", "-", "-m", model], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env)
    out, _ = induce.communicate(text.encode("utf-8"), timeout=300)
    trees = out.decode("utf-8").split("\n")
    assert induce.returncode == 0 and len(trees) == 6 and trees[3] == "" and trees[5] == ""
    assert leaves(parse_brackets(trees[0])) == ["你好", "世界"]
    assert leaves(parse_brackets(trees[1])) == ["Привет", "мир"]
    assert leaves(parse_brackets(trees[2])) == ["il", "est", "à", "la", "maison"]
    assert trees[4] == "(我爱北京)"  # Chinese without spaces is one word: "。" is split off and dropped
    js = subprocess.run([sys.executable, "-m", "onparse", "induce", "-", "-m", model, "--format", "jsonl"],
                        input="Привет мир Земля\n", capture_output=True, text=True, env=env, timeout=300)
    assert json.loads(js.stdout)["oov"] == [False, False, True]


#: Every command that runs a model, and the arguments that make it run one (41.13).
MODEL_COMMANDS = ("induce", "distances", "eval", "show", "agreement", "grammar", "perplexity", "distill", "train")


def test_every_command_that_runs_a_model_takes_threads(model_path, tmp_path, monkeypatch):
    """41.13: --threads, with the one rule (capped at the cores with a note), on every command
    that runs a model; the setting holds while the command runs and is given back after."""
    for name in MODEL_COMMANDS:
        option = next((p for p in main.commands[name].params if p.name == "threads"), None)
        assert option is not None and "capped" in option.help, name
    seen = []
    real = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (seen.append(n), real(n)))
    before = torch.get_num_threads()
    out = invoke(["induce", "-", "-m", model_path, "--threads", "4096"], input="the cat sat\n")
    assert out.exit_code == 0, out.output
    cores = len(os.sched_getaffinity(0))
    assert f"note: --threads 4096 is more than the {cores} CPU core(s) this process may use: using {cores}" in out.stderr
    assert seen == [cores, before] and torch.get_num_threads() == before
    seen.clear()
    gold = tmp_path / "gold.txt"
    gold.write_text("((the cat) sat)\n")
    runs = [["eval", "--gold", str(gold), "-m", model_path], ["show", "the cat sat", "-m", model_path],
            ["distances", "-", "-m", model_path], ["agreement", "-", "-m", model_path, "--layer", "1,2"]]
    for args in runs:
        result = invoke(args + ["--threads", "1"], input="the cat sat\n")
        assert result.exit_code == 0, (args, result.output)
    assert seen == [1, before] * len(runs)
    refused = invoke(["eval", "--gold", str(gold), "-", "--threads", "1"], input="((the cat) sat)\n")
    assert refused.exit_code == 2 and "--threads goes with a model, not with PRED" in refused.output


def test_induce_shows_progress_while_a_window_is_parsed(model_path, tmp_path, monkeypatch):
    """41.17: progress moves batch by batch, not once a window (a 153-second run of one window
    printed one line, at the end)."""
    import onparse.progress as progress

    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    path = tmp_path / "in.txt"
    path.write_text("the cat sat down on a mat\n" * 12)
    out = invoke(["induce", str(path), "-m", model_path, "--batch-size", "3"])
    assert out.exit_code == 0, out.output
    done = [int(line.split(": ")[1].split(" of ")[0]) for line in out.stderr.splitlines() if line.startswith("induce: ")]
    assert done == [3, 6, 9, 12]
    out = invoke(["distances", str(path), "-m", model_path, "--batch-size", "4"])
    assert [line.split(" of ")[0] for line in out.stderr.splitlines()] == ["distances: 4", "distances: 8", "distances: 12"]


def test_distances_name_their_columns_and_read_each_members_own_layer(model_path, tmp_path):
    """41.16: a bundle member reading layer 3 shows layer 3 by default, and columns of several
    models say `model 1 layer 3`, not `layer 1.3`."""
    from onparse.api import load
    from onparse.members import Member

    parser = load([model_path, model_path], "cpu")
    one, two = tmp_path / "one.pt", tmp_path / "two.pt"
    parser.with_members([Member(0, 3, "onlstm")]).save_bundle(one, weights="float32")
    parser.with_members([Member(0, 3, "split"), Member(1, 1, "onlstm")]).save_bundle(two, weights="float32")
    header = invoke(["distances", "-", "-m", str(one)], input="the cat\n").stdout.splitlines()[0]
    assert header == "token\tlayer 3"
    header = invoke(["distances", "-", "-m", str(two)], input="the cat\n").stdout.splitlines()[0]
    assert header == "token\tmodel 1 layer 3\tmodel 2 layer 1"
    record = json.loads(invoke(["distances", "-", "-m", str(two), "--format", "jsonl", "--layer", "2"],
                               input="the cat\n").stdout)
    assert list(record["distances"]) == ["model 1 layer 2", "model 2 layer 2"]
    assert invoke(["distances", "-", "-m", model_path], input="a\n").stdout.splitlines()[0] == "token\tlayer 2"


def test_decode_help_names_every_kinds_decoders():
    # Issue 55 (low): --decode's help named only the language model's onlstm and split.
    from onparse.grammar.kind import Grammar
    from onparse.lm.kind import LanguageModel
    from onparse.student.kind import Student

    result = CliRunner().invoke(main, ["induce", "--help"], terminal_width=200, max_content_width=200)
    text = " ".join(result.output.split())
    start = text.index("--decode NAME[,NAME]")
    decode = text[start:text.index("--", start + 2)]
    for kind in (LanguageModel, Grammar, Student):
        assert all(name in decode for name in kind.decoders), (kind.kind, decode)


def test_induce_help_says_when_jsonl_distances_are_empty():
    """Issue 54.7: jsonl's "distances" is null for a model without distances (the bundled model's
    members are a student and grammars); --help promised distances."""
    help_text = " ".join(invoke(["induce", "--help"]).output.split())
    assert "null when no member is a language model, as in the bundled model" in help_text
    record = json.loads(invoke(["induce", "-", "--format", "jsonl"], input="the cat sat\n").stdout)
    assert record["distances"] is None


def test_punkt_learnt_from_one_line_says_one_line(model_path, tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("The cat sat down. The dog barked.\n")
    out = invoke(["induce", str(path), "-m", model_path, "--split-sentences"])
    assert out.exit_code == 0, out.output
    assert "from the first line of the input" in out.stderr and "first 1 lines" not in out.stderr

"""Sign of life and lost minutes (issue 54.6): every command that reads a corpus says so on stderr
before its slow imports, a long read says it is still reading, a run stopped inside its first
epoch leaves a usable best.pt and says its stop once, and the start-up benchmark runs."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import write_corpus
from onparse.cli import main

ROOT = Path(__file__).resolve().parent.parent
MARK = "TORCH-IMPORT-STARTED"


@pytest.fixture
def no_torch(tmp_path):
    """A PYTHONPATH whose ``torch`` says on stderr that it is being imported, then ends the
    process: what a command printed before it is what it printed before its slow imports."""
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"import sys\nsys.stderr.write({MARK + chr(10)!r})\nsys.exit(3)\n")
    return str(tmp_path / "fake")


@pytest.mark.parametrize("command", [
    ["train", "--corpus", "{text}", "--preset", "tiny", "--out", "{tmp}/run"],
    ["train", "--family", "grammar", "--corpus", "{text}", "--preset", "tiny", "--out", "{tmp}/g"],
    ["fit", "{text}", "--out", "{tmp}/p.pt", "--preset", "tiny"],
    ["perplexity", "--corpus", "{text}"],
    ["distill", "{text}", "--out", "{tmp}/s.pt"],
])
def test_a_command_that_reads_a_corpus_says_so_before_importing_torch(tmp_path, no_torch, command):
    text = write_corpus(tmp_path / "text.txt", n_sentences=50, seed=1)
    args = [a.format(text=text, tmp=tmp_path) for a in command]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([no_torch, str(ROOT / "src")])}
    stderr = on_a_terminal([sys.executable, "-m", "onparse", *args], env)
    lines = stderr.splitlines()
    assert MARK in lines, stderr                      # it did go on to import torch
    first = lines[0]
    assert first.startswith("reading the ") and first.endswith(" ...") and lines.index(first) < lines.index(MARK)
    assert str(text) in first
    # Off a terminal (a log, a script) the line is left to the plain progress lines: an error
    # that comes early stays one line.
    done = subprocess.run([sys.executable, "-m", "onparse", *args], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.stderr.splitlines()[0] == MARK


def on_a_terminal(argv, env) -> str:
    """What ``argv`` writes on its stderr when that is a (pseudo-)terminal."""
    import pty

    master, slave = pty.openpty()
    try:
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL, env=env, timeout=120)
    finally:
        os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:                              # the terminal closed: all was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_a_long_read_says_it_is_still_reading(tmp_path, monkeypatch, capsys):
    from onparse import progress
    from onparse.text import corpora

    clock = [1000.0]
    monkeypatch.setattr(progress, "now", lambda: clock[0])
    monkeypatch.setattr(progress, "PLAIN_EVERY", 60.0)
    text = write_corpus(tmp_path / "text.txt", n_sentences=50, seed=1)
    real = corpora.read_sentences

    def slow(*args, **kwargs):
        clock[0] += 61.0                       # a minute and a second of reading
        return real(*args, **kwargs)
    monkeypatch.setattr(corpora, "read_sentences", slow)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)   # on a terminal too
    # The timer's beat, a minute after the read began (the timer thread calls it then).
    beats = []
    monkeypatch.setattr(progress.Progress, "_arm", lambda self: beats.append(self))
    corpus = corpora.load_corpus(corpora.make_spec(str(text)))
    assert len(corpus.train) > 0 and len(beats) == 1
    beats[0]._due()
    assert capsys.readouterr().err.splitlines() == [f"reading the corpus {text}: still at it after 1m01s"]


def test_a_run_stopped_inside_its_first_epoch_leaves_a_usable_best_pt_and_says_the_stop_once(tmp_path):
    text = write_corpus(tmp_path / "text.txt", n_sentences=300, seed=4)
    out = tmp_path / "run"
    done = CliRunner().invoke(main, ["train", "--corpus", str(text), "--preset", "tiny", "--out", str(out),
                                     "--max-steps", "5", "--threads", "1"])
    assert done.exit_code == 0, done.output
    assert [line for line in done.output.splitlines() if line.startswith("stopped")] == [
        "stopped (max_steps) after 0 epoch(s), 5 steps, 7% into epoch 1; best valid ppl "
        + done.stdout.split("best valid ppl: ")[1].split()[0]], done.output
    assert "stopped (max_steps) after 0 epoch(s), 5 steps" in done.stderr and "best valid ppl -" not in done.stderr
    assert "best valid ppl: " in done.stdout and "(at the stop, inside epoch 1)" in done.stdout
    assert f"model: {out / 'best.pt'}" in done.stdout
    import onparse

    parser = onparse.load(str(out / "best.pt"))
    assert len(parser.trees(parser.tokens(["the dog saw a cat near the house"]))) == 1
    assert parser.models[0].metadata["epoch"] == 0
    # Resumed, the first whole epoch replaces it.
    again = CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--epochs", "1", "--threads", "1"])
    assert again.exit_code == 0, again.output
    assert "(epoch 1)" in again.stdout and onparse.load(str(out / "best.pt")).models[0].metadata["epoch"] == 1


def test_the_start_up_benchmark_runs_quick(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_startup.py"), "--quick"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "import torch: median" in done.stdout and "onparse induce, one sentence: median" in done.stdout
    assert "ratio induce / import torch: " in done.stdout

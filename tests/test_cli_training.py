"""`onparse train` and `onparse perplexity` from the command line: output, exit codes, errors."""
import json
import os
import subprocess
import sys

import pytest
import torch
from click.testing import CliRunner

from onparse.cli import main
from onparse.cli.training import parse_duration
from conftest import write_corpus

TINY = ["--preset", "tiny", "--threads", "1", "--no-progress"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result):
    lines = result.output.strip().splitlines()
    assert result.exit_code == 1, result.output
    assert lines[-1].startswith("error: ") and "Traceback" not in result.output, result.output
    return lines[-1]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny model trained by the CLI for one epoch: (corpus path, run folder, CLI output)."""
    folder = tmp_path_factory.mktemp("cli")
    corpus = write_corpus(folder / "toy.txt")
    result = invoke("train", *TINY, "--corpus", corpus, "--epochs", 1, "--out", folder / "run")
    assert result.exit_code == 0, result.output
    return corpus, folder / "run", result.output


def test_the_grammar_size_options_are_the_ones_the_library_names():
    """One home for the grammar size flags (onparse.GRAMMAR_SIZE_OPTIONS, from the presets' keys):
    the command line offers exactly them, and a resume that changes one names it."""
    import onparse

    assert onparse.GRAMMAR_SIZE_OPTIONS == {"n_nonterminals": "--nonterminals", "n_preterminals": "--preterminals",
                                            "rank": "--rank", "symbol_size": "--symbol-size", "mlp_size": "--mlp-size",
                                            "rule_form": "--rule-form"}
    train = main.commands["train"]
    flags = {opt for p in train.params for opt in p.opts}
    assert set(onparse.GRAMMAR_SIZE_OPTIONS.values()) <= flags


def test_train_prints_a_summary(trained):
    _, run, output = trained
    assert "stopped (epochs) after 1 epoch(s)" in output and "stopped:" not in output     # once (issue 54.6)
    assert "best valid ppl: " in output and "test ppl: " in output
    assert f"model: {run / 'best.pt'}" in output
    assert sorted(os.listdir(run)) == ["best.pt", "last.pt", "metrics.jsonl"]


def test_resume_with_more_epochs_and_json(trained, tmp_path):
    corpus, run, _ = trained
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in os.listdir(run):
        (copy / name).write_bytes((run / name).read_bytes())
    result = invoke("train", "--out", copy, "--resume", "--epochs", 2, "--threads", 1, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["stop_reason"] == "epochs" and summary["epochs"] == 2 and summary["best_path"]
    changed = invoke("train", "--out", copy, "--resume", "--lr", 1.0)
    assert "cannot change lr" in one_error_line(changed)
    other = invoke("train", "--out", copy, "--resume", "--preset", "paper")
    assert "cannot change the preset" in one_error_line(other)


def test_keep_epochs_survives_a_resume(trained, tmp_path):
    """--keep-epochs is an option of the invocation, not of last.pt: a resumed run whose folder
    holds epoch snapshots keeps writing them (found when the recipe's runs were resumed)."""
    corpus = trained[0]
    out = tmp_path / "kept"
    first = invoke("train", *TINY, "--corpus", corpus, "--epochs", 1, "--keep-epochs", "--out", out)
    assert first.exit_code == 0, first.output
    assert invoke("train", "--out", out, "--resume", "--epochs", 2, "--threads", 1).exit_code == 0
    assert sorted(n for n in os.listdir(out) if n.startswith("epoch-")) == ["epoch-001.pt", "epoch-002.pt"]
    plain = tmp_path / "plain"
    assert invoke("train", *TINY, "--corpus", corpus, "--epochs", 1, "--out", plain).exit_code == 0
    assert invoke("train", "--out", plain, "--resume", "--epochs", 2, "--threads", 1).exit_code == 0
    assert not [n for n in os.listdir(plain) if n.startswith("epoch-")]


def test_init_from(trained, tmp_path):
    corpus, run, _ = trained
    result = invoke("train", *TINY, "--corpus", corpus, "--init-from", run / "best.pt", "--max-steps", 2,
                    "--out", tmp_path / "ft", "--json")
    assert result.exit_code == 0, result.output
    meta = torch.load(tmp_path / "ft" / "last.pt", weights_only=True)["metadata"]
    assert meta["init_from"]["checkpoint"] == str(run / "best.pt") and meta["init_from"]["epoch"] == 1
    info = invoke("info", "--model", tmp_path / "ft" / "last.pt").stdout.splitlines()
    assert f"started from: {run / 'best.pt'} (corpus {corpus}, epoch 1, seed 1111)" in info
    both = invoke("train", "--out", tmp_path / "ft", "--resume", "--init-from", run / "best.pt")
    assert both.exit_code == 2 and "does not go with --resume" in both.output
    wider = invoke("train", *TINY, "--corpus", corpus, "--init-from", run / "best.pt", "--hidden-size", 64,
                   "--out", tmp_path / "w")
    assert "another shape: hidden_size 32 (here 64)" in one_error_line(wider)
    missing = invoke("train", *TINY, "--corpus", corpus, "--init-from", tmp_path / "no.pt", "--out", tmp_path / "m")
    assert "checkpoint not found" in one_error_line(missing)


def test_perplexity_of_the_recorded_test_split(trained):
    corpus, run, output = trained
    # The model names its training file; onparse does not open a path a model names.
    refused = invoke("perplexity", "--model", run / "best.pt", "--device", "cpu", "--threads", 1)
    assert refused.exit_code == 1
    assert refused.output == (f"error: {run / 'best.pt'} was trained on the file {corpus!r}; onparse opens no path "
                              "that a model names: pass --corpus FILE (with --split test for its held-out test "
                              "part)\n")
    result = invoke("perplexity", "--model", run / "best.pt", "--corpus", corpus, "--split", "test", "--threads", 1)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("toy.txt test: perplexity ")
    # The figure the trainer reported for best.pt: same split, same evaluation settings.
    as_json = json.loads(invoke("perplexity", "--model", run / "best.pt", "--corpus", corpus, "--split", "test",
                                "--json", "--threads", 1).stdout)
    reported = float(next(line for line in output.splitlines() if line.startswith("test ppl:")).split()[-1])
    # (``output`` is stdout and stderr interleaved; the summary lines are stdout's.)
    assert as_json["perplexity"] == pytest.approx(reported, abs=0.01)
    assert as_json["corpus"] == "toy.txt test" and as_json["tokens"] > 0


def test_perplexity_of_a_whole_file(trained, tmp_path):
    _, run, _ = trained
    text = tmp_path / "held.txt"
    text.write_text("the cat saw a dog .\nsome big bird liked every child .\n", encoding="utf-8")
    result = invoke("perplexity", "--model", run / "best.pt", "--corpus", text, "--json", "--batch-size", 1,
                    "--threads", 1)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["corpus"] == "held.txt" and data["sentences"] == 2
    assert data["tokens"] == 5 + 6 + 2 - 1                        # words and <eos>, less the first id
    assert data["perplexity"] == pytest.approx(2.718281828 ** data["loss"])


def test_cli_errors(trained, tmp_path):
    corpus, run, _ = trained
    missing = invoke("train", *TINY, "--corpus", tmp_path / "nope.txt", "--out", tmp_path / "o")
    assert "corpus file not found" in one_error_line(missing)
    empty = tmp_path / "empty.txt"
    empty.write_text(". , ;\n\n", encoding="utf-8")
    result = invoke("train", *TINY, "--corpus", empty, "--out", tmp_path / "o")
    assert "is empty" in one_error_line(result)
    bad_preset = invoke("train", "--preset", "huge", "--corpus", corpus)
    assert bad_preset.exit_code == 2 and "huge" in bad_preset.output
    bad_value = invoke("train", *TINY, "--corpus", corpus, "--chunk-size", 5, "--out", tmp_path / "o")
    assert bad_value.exit_code == 2 and "not a multiple of chunk_size" in bad_value.output
    bad_time = invoke("train", *TINY, "--corpus", corpus, "--max-time", "soon")
    assert bad_time.exit_code == 2 and "not a duration" in bad_time.output
    again = invoke("train", *TINY, "--corpus", corpus, "--out", run)
    assert "already holds a run" in one_error_line(again)
    nothing = invoke("train", "--out", tmp_path / "none", "--resume")
    assert "nothing to resume" in one_error_line(nothing)
    tpu = invoke("train", *TINY, "--corpus", corpus, "--device", "tpu", "--out", tmp_path / "o")
    assert tpu.exit_code == 2 and "not a device onparse runs on" in tpu.output
    if not torch.cuda.is_available():
        no_gpu = invoke("train", *TINY, "--corpus", corpus, "--device", "cuda", "--out", tmp_path / "o")
        assert "sees no CUDA device" in one_error_line(no_gpu)


def test_corrupt_and_foreign_checkpoints(tmp_path):
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"PK\x03\x04 this is not a checkpoint")
    assert "cannot read checkpoint" in one_error_line(invoke("perplexity", "--model", corrupt))
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    assert "is not an onparse checkpoint" in one_error_line(invoke("perplexity", "--model", foreign))
    assert "checkpoint not found" in one_error_line(invoke("perplexity", "--model", tmp_path / "none.pt"))
    run = tmp_path / "run"
    run.mkdir()
    (run / "last.pt").write_bytes(b"garbage")
    assert "cannot read checkpoint" in one_error_line(invoke("train", "--out", run, "--resume"))


def test_durations():
    assert parse_duration("90") == 90 and parse_duration("90s") == 90
    assert parse_duration("45m") == 2700 and parse_duration("2h") == 7200 and parse_duration("1h30m") == 5400
    for bad in ("", "h", "soon", "5d", "-3"):
        with pytest.raises(ValueError):
            parse_duration(bad)
    # Issue 55.6: 400 nines parse to inf as a float; no duration past a year is meant.
    for absurd in ("9" * 400, "9" * 400 + "h", "1e309", "400d", "9000h"):
        with pytest.raises(ValueError):
            parse_duration(absurd)
    assert parse_duration("8760h") == 365 * 24 * 3600


def test_help_shows_presets():
    result = invoke("train", "--help")
    assert result.exit_code == 0
    assert "--hidden-size" in result.output and "paper 1150, small 400, tiny 32" in result.output


def test_real_subprocess(tmp_path):
    corpus = write_corpus(tmp_path / "toy.txt", n_sentences=120)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    cmd = [sys.executable, "-m", "onparse", "train", *TINY, "--corpus", corpus, "--epochs", "1",
           "--out", str(tmp_path / "run"), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["epochs"] == 1
    assert "epoch    1 | train ppl" in done.stderr                 # progress and logs on stderr
    cmd = [sys.executable, "-m", "onparse", "perplexity", "--model", str(tmp_path / "run" / "best.pt"),
           "--corpus", corpus, "--threads", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("toy.txt: perplexity "), done.stderr
    bad = subprocess.run([sys.executable, "-m", "onparse", "train", "--corpus", str(tmp_path / "nope.txt")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("error: corpus file not found") and len(bad.stderr.splitlines()) == 1


def test_a_log_file_gets_plain_progress_lines_and_no_progress_silences_them(trained, tmp_path, monkeypatch):
    """stderr that is not a terminal (CliRunner's, a log file) gets a plain line per interval
    (here every window of steps); --no-progress turns them off."""
    import re

    import onparse.progress as progress

    corpus = trained[0]
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    args = ["--preset", "tiny", "--threads", "1", "--corpus", corpus, "--epochs", 1]
    plain = invoke("train", *args, "--out", tmp_path / "plain")
    assert plain.exit_code == 0, plain.output
    lines = [line for line in plain.stderr.splitlines() if line.startswith("epoch 1/1: ")]
    assert lines, plain.stderr
    pattern = re.compile(r"epoch 1/1: \d+% \| [\d,]+ tok/s \| ppl [\d.,]+ \| epoch ends in about (\d+s|\d+m\d\ds|\?)")
    assert all(pattern.fullmatch(line) for line in lines), lines
    quiet = invoke("train", *args, "--no-progress", "--out", tmp_path / "quiet")
    assert quiet.exit_code == 0 and "epoch 1/1: " not in quiet.stderr

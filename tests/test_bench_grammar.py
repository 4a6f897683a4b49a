"""benchmarks/bench_grammar.py in its --quick mode: every part runs, the trainer's own step is
what it times, and the output has the structure benchmarks/README.md quotes.  Nothing asserts on
time."""
import json
import math
from pathlib import Path

import pytest

import onparse.grammar.train

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_grammar

    return bench_grammar


def positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def test_quick_run_times_the_trainer_step_and_reports_every_part(bench, monkeypatch, capsys):
    calls = []
    real = onparse.grammar.train._Run._step

    def spy(self, sentences):
        calls.append(len(sentences))
        return real(self, sentences)

    monkeypatch.setattr(onparse.grammar.train._Run, "_step", spy)
    result = bench.main(["--quick", "--json", "--no-memory", "--rounds", "1"])
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(result))
    assert set(result) == {"mode", "rounds", "lengths_source", "inside", "training", "parsing", "where", "machine"}
    quick = bench.MODES["quick"]

    inside = result["inside"]
    assert [row["n"] for row in inside["rows"]] == list(quick["inside_lengths"])
    for row in inside["rows"]:
        assert all(positive(row[k]) for k in ("rank_forward_ms", "full_forward_ms", "rank_both_ms", "full_both_ms",
                                              "forward_ratio", "both_ratio"))
        assert row["max_relative_log_z_gap"] < 1e-4          # the two insides compute the same log Z

    training = result["training"]
    assert [row["preset"] for row in training["rows"]] == list(quick["train_presets"])
    assert all(positive(row["words_per_s"]) and positive(row["news_epoch_minutes"]) for row in training["rows"])
    assert len(calls) == 1 + quick["train_batches"]           # a warm-up step, then one round of batches
    assert all(2 <= n <= 40 for n in training["batch_lengths"])

    parsing = result["parsing"]
    assert [row["model"] for row in parsing["rows"]] == ["grammar", "student", "language model"]
    assert parsing["sentences"] == quick["parse_sentences"]
    assert all(positive(row["sentences_per_s"]) for row in parsing["rows"])

    where = result["where"]
    for row in where["rows"]:
        assert list(row["percent"]) == list(bench.PHASES)
        assert sum(row["percent"].values()) == pytest.approx(100)

    machine = result["machine"]
    assert machine["threads"] == 1 and machine["load_start"] >= 0


def test_the_table_names_every_part(bench, capsys):
    bench.main(["--quick", "--no-memory", "--rounds", "1", "--only", "inside", "where"])
    out = capsys.readouterr().out
    assert "load average" in out and "1. inside" in out and "5. where the time" in out
    assert "2. training" not in out


@pytest.mark.slow          # starts a fresh process per probe
def test_memory_probes_run_in_fresh_processes(bench):
    result = bench.main(["--quick", "--json", "--rounds", "1", "--only", "memory"])
    rows = result["memory"]["rows"]
    assert [(r["preset"], r["n"]) for r in rows] == [("tiny", n) for n in bench.MODES["quick"]["memory_lengths"]]
    assert all(r["peak_mib"] >= r["before_mib"] > 0 and r["saved_mib"] > 0 for r in rows)

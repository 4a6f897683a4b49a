"""benchmarks/bench_grammar.py in its --quick mode: every part runs, the three rule forms are
what it compares, the trainer's own step is what it times, and the output has the structure
benchmarks/README.md quotes.  Nothing asserts on time."""
import json
import math
from pathlib import Path

import pytest

import onparse.grammar.train
from onparse import GrammarTraining

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_grammar

    return bench_grammar


def positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def test_quick_run_compares_the_forms_times_the_trainer_step_and_reports_every_part(bench, monkeypatch, capsys):
    calls = []
    real = onparse.grammar.train._Run._step

    def spy(self, sentences):
        calls.append((self.config.rule_form, self.settings.batch_size, len(sentences)))
        return real(self, sentences)

    monkeypatch.setattr(onparse.grammar.train._Run, "_step", spy)
    result = bench.main(["--quick", "--json", "--no-memory", "--rounds", "1"])
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(result))
    assert set(result) == {"mode", "rounds", "lengths_source", "inside", "training", "parsing", "where", "machine"}
    quick = bench.MODES["quick"]

    inside = result["inside"]
    assert [g["size"] for g in inside["groups"]] == [size for size, _ in quick["inside_groups"]]
    for group, (_, contenders) in zip(inside["groups"], quick["inside_groups"]):
        assert group["contenders"] == list(contenders)
        # tiny: m=4, p=6, r=8; the chart is m wide (simple), r (low rank), (m+p)^2 (full, full tensor)
        assert group["chart_width"] == {"simple": 4, "low_rank": 8, "full": 100, "tensor": 100}
        assert group["full_tensor_entries"] == 4 * 10 * 10
        assert set(group["log_z_gap"]) == {"simple", "low_rank", "full"}
        assert all(gap < 1e-4 for gap in group["log_z_gap"].values())   # every form's inside is its tensor's
        assert [row["n"] for row in group["rows"]] == list(quick["inside_lengths"])
        for row in group["rows"]:
            assert set(row["ms"]) == set(contenders)
            assert all(positive(row["ms"][c][part]) and positive(row["vs_simple"][c][part])
                       for c in contenders for part in ("forward", "both"))
            assert row["vs_simple"]["simple"] == {"forward": 1.0, "both": 1.0}

    training = result["training"]
    rows = training["rows"]
    assert [(row["size"], row["form"]) for row in rows] == [(s, f) for s, f, _, _ in quick["train"]]
    roles = {row["role"]: row for row in rows if row["role"]}
    chosen, old = roles["chosen"], roles["old recipe"]
    assert (chosen["form"], chosen["batch"]) == ("simple", GrammarTraining().batch_size)   # the trainer's defaults
    assert (old["form"], old["batch"], old["lr"]) == ("low_rank", 8, 2e-3)
    assert training["chosen"]["name"] == chosen["name"] and training["chosen"]["old_recipe"] == old["name"]
    assert training["chosen"]["ratio"] == pytest.approx(chosen["words_per_s"] / old["words_per_s"])
    assert old["vs_old_recipe"] == 1.0
    assert all(positive(row["words_per_s"]) and positive(row["words_per_s_per_thread"])
               and positive(row["news_epoch_minutes"]) for row in rows)
    assert all(2 <= n <= 40 for n in training["batch_lengths"])
    # every contender steps the same sentences (a warm-up step, then one round), cut at its own batch size
    assert len(calls) == sum(1 + row["steps"] for row in rows)
    for row in rows:
        mine = [n for form, batch, n in calls if (form, batch) == (row["form"], row["batch"])]
        assert sum(mine[1:]) == training["sentences"] and max(mine) <= row["batch"]
    assert {form for form, _, _ in calls} == {"simple", "low_rank", "full"}

    parsing = result["parsing"]
    names = [bench.label(size, form) for size, form in quick["parse_grammars"]]
    assert [row["model"] for row in parsing["rows"]] == names + ["student", "language model"]
    assert parsing["first"] == names[0] and parsing["rows"][0]["vs_first"] == pytest.approx(1.0)
    assert parsing["sentences"] == quick["parse_sentences"]
    assert all(positive(row["sentences_per_s"]) for row in parsing["rows"])

    where = result["where"]
    assert [(row["grammar"], row["n"]) for row in where["rows"]] == [
        (bench.label(size, form, bench.settings_with(overrides).batch_size), n)
        for size, form, overrides in quick["split"] for n in quick["split_lengths"]]
    for row in where["rows"]:
        assert list(row["percent"]) == list(bench.PHASES)
        assert sum(row["percent"].values()) == pytest.approx(100)

    machine = result["machine"]
    assert machine["threads"] == 1 and machine["load_start"] >= 0


def test_the_table_names_every_part_and_says_where_the_full_form_is_compared(bench, capsys):
    bench.main(["--quick", "--no-memory", "--rounds", "1", "--only", "inside", "where"])
    out = capsys.readouterr().out
    assert "load average" in out and "1. inside" in out and "5. where the time" in out
    assert "the full form only exists up to 16,384 rules" in out and "full tensor" in out
    assert "2. training" not in out


@pytest.mark.slow          # starts a fresh process per probe
def test_memory_probes_run_in_fresh_processes(bench):
    result = bench.main(["--quick", "--json", "--rounds", "1", "--only", "memory"])
    quick = bench.MODES["quick"]
    rows = result["memory"]["rows"]
    assert [(r["size"], r["form"], r["n"]) for r in rows] == [
        (size, form, n) for size, form in quick["memory_grammars"] for n in quick["memory_lengths"]]
    assert [r["chart_width"] for r in rows if r["n"] == quick["memory_lengths"][0]] == [4, 100]
    assert all(r["peak_mib"] >= r["before_mib"] > 0 and r["saved_mib"] > 0 for r in rows)

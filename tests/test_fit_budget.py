"""`onparse fit` keeps its budget (issue 54.4): the plan counts fit's start-up and reading, keeps
the choosing share, gives each run a --max-time that leaves room for the run's own start-up and
stop, stops a run that outlives its share, and says what the budget buys.  No timing assertions:
the plan and the commands are checked, not the clock."""
import json
import sys

import pytest

from conftest import write_corpus
from onparse.fitting import budget, pipeline, waves
from onparse.fitting.pipeline import FitSettings, _Fit


def _planned(tmp_path, settings, spent_start=3.0, n_sentences=400):
    text = write_corpus(tmp_path / "text.txt", n_sentences=n_sentences, seed=2)
    said = []
    fit = _Fit(str(text), str(tmp_path / "p.pt"), settings, str(tmp_path / "run"), None, said.append)
    (tmp_path / "run").mkdir()
    fit.state["seconds"] = {"start": spent_start}
    fit.do("plan")
    return fit, fit.state["plan"], said


class _Finished:
    """A training process that has ended at once (exit 0)."""

    returncode = 0

    def poll(self):
        return 0


def test_the_plan_and_the_runs_max_time_fit_within_the_budget(tmp_path, monkeypatch):
    settings = FitSettings(seeds=2, preset="tiny", grammars=2, grammar_preset="tiny", epochs=2, cores=2,
                           max_time=600, limit=20)
    fit, plan, _ = _planned(tmp_path, settings)
    spent = fit.state["seconds"]["start"] + fit.state["seconds"]["plan"]
    assert plan["waves"] == 2 and plan["start_up_seconds"] >= budget.START_UP_SECONDS
    # The runs' wall shares, what was spent before training and the choosing share make the budget.
    assert plan["seconds_per_run"] * plan["waves"] + spent + 600 * budget.CHOOSE_SHARE == pytest.approx(600, abs=0.2)
    assert plan["train_max_time"] == pytest.approx(
        plan["seconds_per_run"] - plan["start_up_seconds"] - budget.STOP_SECONDS)
    commands = []
    monkeypatch.setattr(waves.subprocess, "Popen", lambda command, **kw: commands.append(command) or _Finished())
    fit._run_wave(plan["runs"][:2], plan, {})
    assert len(commands) == 2
    for command in commands:
        given = _max_time(command)
        # Each run's --max-time leaves its start-up (reading the text, importing torch) and its stop
        # within its share: on main it was the whole share (270 s here), and runs overran it.
        assert given + plan["start_up_seconds"] + budget.STOP_SECONDS <= plan["seconds_per_run"] + 1e-6
        assert given == int(plan["train_max_time"])
    # A run resumed with part of its share used gets the rest, less another start-up.
    resumed = []
    monkeypatch.setattr(waves.subprocess, "Popen", lambda command, **kw: resumed.append(command) or _Finished())
    fit._run_wave(["lm-1"], plan, {"lm-1": 100.0})
    assert _max_time(resumed[0]) == int(plan["train_max_time"] - 100.0)


def _max_time(command):
    """The ``max_time`` a run's command gives it (:func:`onparse.selection.run_command`: its
    options as the worker's one JSON argument)."""
    assert command[1:3] == ["-m", "onparse.selection.worker"]
    return json.loads(command[-1])["options"]["max_time"]


def test_the_next_runs_plan_by_the_longest_start_up_measured(tmp_path):
    settings = FitSettings(seeds=1, preset="tiny", grammars=0, cores=1, max_time=600, limit=20)
    fit, plan, _ = _planned(tmp_path, settings)
    planned = fit._train_time("lm-1", 300.0, plan)
    fit.state["start_up"] = {"lm-1": plan["start_up_seconds"] + 40.0}
    assert fit._train_time("lm-1", 300.0, plan) == pytest.approx(planned - 40.0)
    # A shorter one measured gives the time back (fit still stops a run at the end of its share).
    fit.state["start_up"] = {"lm-1": 2.0, "lm-2": 3.0}
    assert fit._train_time("lm-1", 300.0, plan) == pytest.approx(300.0 - 3.0 - budget.STOP_SECONDS)
    assert budget.measured_start_up([{"event": "start", "time": 1000.0}], 990.0) == 10.0
    assert budget.measured_start_up([{"event": "epoch", "time": 1000.0}], 990.0) is None


def test_a_run_that_outlives_its_share_is_stopped_and_saves(tmp_path, monkeypatch):
    """The run ignores its --max-time (a start-up longer than any estimate): fit sends it the
    stop (SIGINT, on which a run saves) at the end of its share, and records its start-up."""
    settings = FitSettings(seeds=1, preset="tiny", grammars=0, cores=1, max_time=600, limit=20)
    fit, plan, said = _planned(tmp_path, settings)
    marker = tmp_path / "stopped"
    child = (f"import json, signal, sys, time\n"
             f"def stop(*_):\n    open({str(marker)!r}, 'w').write('saved')\n    sys.exit(130)\n"
             f"signal.signal(signal.SIGINT, stop)\n"
             f"open({str(tmp_path / 'run' / 'lm-1' / 'metrics.jsonl')!r}, 'a').write("
             f"json.dumps({{'event': 'start', 'time': time.time()}}) + '\\n')\n"
             f"time.sleep(300)\n")
    monkeypatch.setattr(_Fit, "_command", lambda self, run, plan, seconds: [sys.executable, "-c", child])
    # Its share: 5 s of training after the planned start-up and stop.
    left = plan["start_up_seconds"] + budget.STOP_SECONDS + 5.0
    monkeypatch.setattr(_Fit, "_seconds_per_run", lambda self, waves: left)
    used = {}
    fit._run_wave(["lm-1"], plan, used)
    assert marker.read_text() == "saved"
    assert "fit: lm-1 reached the end of its share of the budget: stopping it" in said
    assert used["lm-1"] < 300 and 0 <= fit.state["start_up"]["lm-1"] < 300
    assert json.loads((tmp_path / "run" / "fit.json").read_text())["start_up"] == fit.state["start_up"]


def test_the_plan_says_what_the_budget_buys_and_warns_when_it_is_too_little(tmp_path):
    # The small preset on 3,000 lines in 40 s: under 3 epochs per language model.
    settings = FitSettings(seeds=1, preset="small", grammars=0, cores=1, max_time=40, limit=20)
    fit, plan, said = _planned(tmp_path, settings, spent_start=1.0, n_sentences=3000)
    bought = [line for line in said if line.startswith("fit: each run trains about")]
    assert len(bought) == 1 and "epoch(s) per language model at the preset's measured speed" in bought[0]
    assert plan["epochs_bought"]["lm"] < budget.MIN_EPOCHS
    assert [line for line in said if "warning" in line] == [
        f"fit: warning: about {plan['epochs_bought']['lm']:.1f} epoch(s) per language model is too little to expect "
        "trees better than right-branching ones (at least 3): give more --max-time, fewer --seeds/--grammars, "
        "or --preset tiny to try the workflow"]
    # Ten minutes of the tiny preset on the same text buy its 3 epochs: no warning.
    quick = FitSettings(seeds=1, preset="tiny", grammars=0, cores=1, max_time=600, limit=20)
    (tmp_path / "quick").mkdir()
    _, plan, said = _planned(tmp_path / "quick", quick, n_sentences=3000)
    assert plan["epochs_bought"]["lm"] >= 3 and not [line for line in said if "warning" in line]
    assert any("about 3.0 epoch(s) per language model" in line for line in said)   # no more than the preset's


def test_fit_help_names_a_quick_preset_and_the_budget_of_its_figures():
    from click.testing import CliRunner

    from onparse.cli import main

    text = " ".join(CliRunner().invoke(main, ["fit", "--help"]).output.split())
    assert "--preset tiny --grammar-preset tiny --max-time 5m" in text
    assert "with that budget (--max-time 3h20m)" in text
    assert "10% is kept for choosing and bundling" in text and "its start-up included" in text


def test_the_student_stage_gets_its_share_of_the_budget(tmp_path, monkeypatch):
    # Issue 66.7: _student gave distill no time limit: a 2-minute fit took 145 s, its student
    # stage 72.6 s against a 30 s share.
    from onparse.fitting.settings import STUDENT_TEXT

    given = []
    monkeypatch.setattr(pipeline, "distill", lambda parser, text, student, **options: given.append(options))
    monkeypatch.setattr(pipeline, "load", lambda path, device: "the bundle")
    (tmp_path / STUDENT_TEXT).write_text("a b c\n")
    for max_time, spent, expect in ((600, 0.0, 150.0), (600, 30.0, 120.0), (600, 400.0, 1.0), (None, 0.0, None)):
        fit = _Fit("text.txt", str(tmp_path / "p.pt"), FitSettings(max_time=max_time), str(tmp_path),
                   str(tmp_path / "s.pt"), print)
        fit.state["seconds"] = {"plan": 5.0, "train": 300.0, "student": spent}
        fit._student()
        assert given[-1]["max_time"] == expect
    assert budget.student_time(600, 30.0) == 600 * budget.STUDENT_SHARE - 30.0


def test_a_run_that_finished_its_share_is_a_success_whatever_signal_follows(tmp_path, monkeypatch):
    # Issue 66.8: fit's end-of-share SIGINT reached a run that had already stopped on its own time
    # limit and logged its stop; it died of the signal (exit -2) and the whole fit failed.
    import time

    from onparse.errors import OnparseError

    settings = FitSettings(seeds=1, preset="tiny", grammars=0, cores=1, max_time=600, limit=20)
    fit, plan, _ = _planned(tmp_path, settings)
    log = tmp_path / "run" / "lm-1" / "metrics.jsonl"

    class Killed:
        """A run that ends killed by SIGINT, having (or not) logged its stop first."""

        returncode = -2

        def __init__(self, stopped):
            log.parent.mkdir(exist_ok=True)
            now = time.time()
            stop = {"event": "stop", "reason": "max_time", "time": now if stopped else now - 100}
            log.write_text("".join(json.dumps(e) + "\n" for e in ({"event": "start", "time": now}, stop)))

        def poll(self):
            return -2

    monkeypatch.setattr(waves.subprocess, "Popen", lambda command, **kw: Killed(True))
    used = {}
    fit._run_wave(["lm-1"], plan, used)
    assert "lm-1" in used
    # A run killed before it logged its stop (this launch's: an earlier one does not count) failed.
    monkeypatch.setattr(waves.subprocess, "Popen", lambda command, **kw: Killed(False))
    with pytest.raises(OnparseError, match=r"training lm-1 failed \(exit -2"):
        fit._run_wave(["lm-1"], plan, {})

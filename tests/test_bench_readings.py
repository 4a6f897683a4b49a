"""benchmarks/bench_readings.py: every reading of a bundle parses the same dev sentences side by
side, with its speed, its sentence F1 and the ratio fast / accurate; a file without readings is
measured through a stand-in pair made of its own members."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_readings import write_bundles

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_readings.py"
NUMBER = r"[\d,.]+"

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.slow          # one process reading the dev half
def test_each_reading_of_a_bundle_is_timed_and_scored_side_by_side(tmp_path):
    files = write_bundles(tmp_path)
    done = subprocess.run([sys.executable, str(BENCH), "--model", files["bundle"], "--limit", "12", "--rounds", "1"],
                          capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "12 sentences of wsj-sample-dev" in done.stderr and "the file's readings" in done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(rf"fast     \| +{NUMBER} sent/s \| sentence F1 {NUMBER} \| student", lines[1]), lines
    assert re.fullmatch(rf"accurate \| +{NUMBER} sent/s \| sentence F1 {NUMBER} \| average of 2 members \+ right "
                        r"voter", lines[2]), lines
    assert re.fullmatch(r"fast / accurate: [\d.]+x", lines[3]) and len(lines) == 4


def test_a_file_without_readings_gets_a_stand_in_of_its_own_members(tmp_path, capsys, monkeypatch):
    files = write_bundles(tmp_path)
    spec = importlib.util.spec_from_file_location("bench_readings", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    what, parsers = bench.readings(files["old"], "cpu")
    assert what.startswith("a stand-in") and list(parsers) == ["fast", "accurate"]
    assert parsers["fast"].describe_average() == "student" and parsers["fast"].models is parsers["accurate"].models
    assert parsers["accurate"].describe_average() == "average of 2 members + right voter"
    import onparse.induce

    labelled, real = [], onparse.induce.tree_labels
    monkeypatch.setattr(onparse.induce, "tree_labels", lambda p, t, trees: labelled.append(len(t)) or real(p, t, trees))
    bench.main(["--model", files["old"], "--limit", "5", "--rounds", "1", "--labels"])
    assert labelled == [5, 5, 5, 5]                      # a warm-up and a round per reading, all labelled
    out = capsys.readouterr()
    assert "fast = its model 2 student alone" in out.err and "; trees and their labels" in out.err
    assert re.search(r"^fast / accurate: [\d.]+x$", out.out, re.M)

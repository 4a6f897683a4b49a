"""benchmarks/bench_distill.py --end-to-end (issue 41.18): `onparse induce` timed as a user times it,
start-up included, beside the start-up alone and the in-process figure, for the ensemble and a
student (an untrained stand-in of the default sizes when the given student does not exist)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DETS, NOUNS, VERBS, save_tiny_checkpoint

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_distill.py"


@pytest.mark.slow          # four onparse processes: tens of seconds
def test_end_to_end_reports_both_contenders_three_ways(tmp_path):
    _, _, teacher = save_tiny_checkpoint(tmp_path / "teacher.pt", [w.lower() for w in NOUNS + VERBS + DETS])
    done = subprocess.run([sys.executable, str(BENCH), "--end-to-end", "--lines", "12", "--rounds", "1",
                           "--threads", "1", "--teacher", teacher, "--student", str(tmp_path / "none.pt")],
                          capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "12 lines of raw news text" in done.stderr and "an untrained student of the default sizes" in done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if re.match(r"(ensemble|student) +\|", line)}
    number = r"[\d,.]+"
    for name in ("ensemble", "student"):
        assert re.fullmatch(rf"{name} +\| +{number} s = +{number} sent/s \| +{number} s \| +{number} s = +{number} "
                            r"sent/s", rows[name]), rows[name]
    assert re.search(r"student / ensemble: [\d.]+x end to end, [\d.]+x in process", done.stdout)

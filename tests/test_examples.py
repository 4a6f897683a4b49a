"""The shell examples run end to end (they are documentation: a broken one misleads users)."""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_train_tiny_example_runs(tmp_path):
    """examples/train_tiny.sh: train, resume, perplexity, and a student distilled from the model."""
    done = subprocess.run(["bash", str(ROOT / "examples" / "train_tiny.sh"), str(tmp_path)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "stopped: epochs after 4 epoch(s)" in out
    teacher = next(line for line in out.splitlines() if line.startswith("teacher: "))
    assert teacher.startswith(f"teacher: {tmp_path}/run/best.pt, a language model: corpus ")   # what it is (41.16)
    assert "(members: layer 2 onlstm" in teacher
    trees = [line for line in out.splitlines() if line.startswith("(")]
    assert len(trees) == 2 and all(t.count("(") == 9 for t in trees)    # binary trees over 10 words
    assert sorted(os.listdir(tmp_path / "run")) == ["best.pt", "last.pt", "metrics.jsonl"]
    assert (tmp_path / "student.pt").is_file()

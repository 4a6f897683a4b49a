"""The same `onparse distill` command twice gives the same student (issue 41.19).

Two fresh runs, each in its own process with its own hash seed (``PYTHONHASHSEED``: the order of
sets and dicts of strings), with one seed and one thread, write bit-identical weights, the same
per-epoch records and the same teacher trees.  What may still differ, and why, is in
docs/reproducibility.md: the thread count, the device, the torch build, onparse's own version.
"""
import os
import subprocess
import sys

import pytest
import torch

from conftest import ADJS, DETS, NOUNS, PREPS, VERBS, save_tiny_checkpoint, write_corpus

pytestmark = pytest.mark.usefixtures("one_thread")

#: A small student, dropout kept (it draws random numbers), two epochs, a held-out sentence in 10.
ARGS = ["--embedding-size", "8", "--hidden-size", "12", "--mlp-size", "12", "--epochs", "2", "--seed", "3",
        "--batch-size", "16", "--valid-every", "10", "--threads", "1", "-q"]


@pytest.fixture(scope="module")
def teacher_and_text(tmp_path_factory):
    root = tmp_path_factory.mktemp("determinism")
    words = NOUNS + VERBS + ADJS + DETS + PREPS + ["Yesterday"]
    _, _, teacher = save_tiny_checkpoint(root / "teacher.pt", [w.lower() for w in words])
    return teacher, write_corpus(root / "text.txt", n_sentences=160, seed=5)


def _fresh_run(teacher, text, out, hash_seed):
    """``onparse distill`` in a new process with ``PYTHONHASHSEED=hash_seed``; the student's dict."""
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "onparse", "distill", text, "-m", teacher, "--out", str(out), *ARGS],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return torch.load(out, weights_only=True)


def test_two_fresh_runs_write_identical_students(teacher_and_text, tmp_path):
    teacher, text = teacher_and_text
    first = _fresh_run(teacher, text, tmp_path / "a.pt", 0)
    second = _fresh_run(teacher, text, tmp_path / "b.pt", 4242)
    a, b = first["state_dict"], second["state_dict"]
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert first["metadata"]["weights_sha256"] == second["metadata"]["weights_sha256"]
    drop_time = lambda epochs: [{k: v for k, v in e.items() if k != "minutes"} for e in epochs]  # noqa: E731
    assert drop_time(first["metadata"]["epochs"]) == drop_time(second["metadata"]["epochs"])
    assert len(first["metadata"]["epochs"]) == 2
    trees = [(tmp_path / f"{name}.run" / "teacher-trees.txt").read_bytes() for name in ("a", "b")]
    assert trees[0] == trees[1] and trees[0].count(b"\n") == 160
    # What the run ran with is recorded, so that the command can be repeated as it ran.
    assert first["metadata"]["environment"] == {"threads": 1, "device": "cpu", "torch": str(torch.__version__)}


def test_the_teacher_parse_draws_no_random_numbers(teacher_and_text):
    """A fresh run seeds the student, saves last.pt, then lets the teacher parse: the parse must
    leave torch's random state as it was, or a run resumed from that last.pt would differ."""
    from onparse.api import load

    teacher, text = teacher_and_text
    parser = load(teacher, "cpu")
    with open(text, encoding="utf-8") as handle:
        sentences = parser.tokens(handle.read().splitlines())
    torch.manual_seed(11)
    before = torch.get_rng_state()
    parser.trees(sentences)
    assert torch.equal(torch.get_rng_state(), before)

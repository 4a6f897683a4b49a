"""`onparse train --family student` (issue 64.2): the student as a family like the language
model and the grammar, doing what `onparse distill` does (which stays as it is)."""
import json
import os

import pytest
import torch
from click.testing import CliRunner

from conftest import ADJS, DETS, NOUNS, PREPS, VERBS, save_tiny_checkpoint, write_corpus
from onparse.cli import main
from onparse.student.kind import load_student

pytestmark = pytest.mark.usefixtures("one_thread")

SIZES = ["--embedding-size", "8", "--hidden-size", "12", "--mlp-size", "12", "--valid-every", "10",
         "--batch-size", "32", "--threads", "1"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def material(tmp_path_factory):
    root = tmp_path_factory.mktemp("student_family")
    words = NOUNS + VERBS + ADJS + DETS + PREPS + ["Yesterday"]
    _, _, teacher = save_tiny_checkpoint(root / "teacher.pt", [w.lower() for w in words])
    text = write_corpus(root / "text.txt", n_sentences=120, seed=5)
    return {"root": root, "teacher": teacher, "text": text}


def weights(path):
    return load_student(str(path)).model.state_dict()


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_train_family_student_is_distill(material, tmp_path):
    """The same teacher, text and settings give the same student, bit for bit, by either command."""
    trained = run("train", "--family", "student", "--teacher", material["teacher"], "--corpus", material["text"],
                  "--out", tmp_path / "run", "--epochs", 2, "--json", "-q", *SIZES)
    assert trained.exit_code == 0, trained.output
    summary = json.loads(trained.stdout)
    assert summary["stop_reason"] == "epochs" and summary["epochs"] == 2
    assert summary["best_path"] == str(tmp_path / "run" / "student.pt")
    distilled = run("distill", material["text"], "-m", material["teacher"], "--out", tmp_path / "d.pt",
                    "--epochs", 2, "-q", *SIZES)
    assert distilled.exit_code == 0, distilled.output
    assert same(weights(tmp_path / "run" / "student.pt"), weights(tmp_path / "d.pt"))
    assert {"last.pt", "metrics.jsonl", "student.pt"} <= set(os.listdir(tmp_path / "run"))
    # A student is a model like any other: induce reads it.
    parsed = CliRunner().invoke(main, ["induce", "-m", str(tmp_path / "run" / "student.pt")],
                                input="the dog saw a cat\n")
    assert parsed.exit_code == 0 and parsed.stdout.startswith("("), parsed.output


def test_a_student_run_resumes_exactly_without_naming_its_family(material, tmp_path):
    """One epoch, then --resume to two (the family read off last.pt): the weights of a run never stopped."""
    common = ["--teacher", material["teacher"], "--corpus", material["text"], "-q", *SIZES]
    whole = run("train", "--family", "student", "--out", tmp_path / "whole", "--epochs", 2, *common)
    assert whole.exit_code == 0, whole.output
    first = run("train", "--family", "student", "--out", tmp_path / "cut", "--epochs", 1, *common)
    assert first.exit_code == 0, first.output
    again = run("train", "--out", tmp_path / "cut", "--resume", "--epochs", 2, *common)
    assert again.exit_code == 0, again.output
    assert same(weights(tmp_path / "whole" / "student.pt"), weights(tmp_path / "cut" / "student.pt"))
    refused = run("train", "--family", "student", "--out", tmp_path / "cut", "--epochs", 1, *common)
    assert refused.exit_code == 1 and "already holds a run" in refused.output


@pytest.mark.parametrize("args, message", [
    ([], "give --teacher MODEL"),
    (["--teacher", "TEACHER", "--corpus", "news"], "give --corpus FILE"),
    (["--teacher", "TEACHER", "--corpus", "TEXT", "--max-steps", "3"], "--max-steps applies to --family"),
    (["--teacher", "TEACHER", "--corpus", "TEXT", "--init-from", "TEACHER"], "--init-from applies to --family lm"),
])
def test_what_a_student_run_refuses_is_a_usage_error(material, tmp_path, args, message):
    args = [{"TEACHER": material["teacher"], "TEXT": material["text"]}.get(a, a) for a in args]
    done = run("train", "--family", "student", "--out", tmp_path / "r", *args)
    assert done.exit_code == 2 and message in done.output, done.output
    assert not (tmp_path / "r").exists()


def test_a_stop_request_saves_a_distillation_where_it_stands_and_resume_is_exact(material, tmp_path, monkeypatch):
    """Ctrl-C inside an epoch: the run loop's stop request serves distillation too (issue 64.1).
    ``last.pt`` is saved at the batch in hand, not at the last periodic save, the call ends with
    KeyboardInterrupt (as before), and --resume ends with the weights of a run never stopped."""
    import signal

    import onparse.student.distill as distill_module
    from onparse import DistillSettings, distill, load

    teacher = load(material["teacher"])
    settings = DistillSettings(epochs=2, batch_size=16, save_every=1000, valid_every=10)    # 7 batches an epoch
    sizes = dict(embedding_size=8, hidden_size=12, mlp_size=12)
    whole = distill(teacher, material["text"], tmp_path / "whole.pt", sizes=sizes, settings=settings, quiet=True)
    calls, real = {"n": 0}, torch.nn.utils.clip_grad_norm_

    def interrupt_at_step_10(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 10:                 # epoch 2, batch 3: long after epoch 1's save
            os.kill(os.getpid(), signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(distill_module.torch.nn.utils, "clip_grad_norm_", interrupt_at_step_10)
    with pytest.raises(KeyboardInterrupt):
        distill(teacher, material["text"], tmp_path / "cut.pt", sizes=sizes, settings=settings, quiet=True)
    monkeypatch.setattr(distill_module.torch.nn.utils, "clip_grad_norm_", real)
    saved = torch.load(tmp_path / "cut.run" / "last.pt", weights_only=True)["training"]
    assert (saved["step"], saved["epoch"], saved["done"]) == (10, 2, 3)
    assert not (tmp_path / "cut.pt").exists()
    resumed = distill(teacher, material["text"], tmp_path / "cut.pt", sizes=sizes, settings=settings, resume=True,
                      quiet=True)
    assert [e["step"] for e in resumed.epochs] == [e["step"] for e in whole.epochs] == [7, 14]
    assert same(weights(tmp_path / "whole.pt"), weights(tmp_path / "cut.pt"))

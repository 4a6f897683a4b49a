"""`onparse distill` (issue 33): the command, its run folder (resume is exact), its errors, and the
student as a member like any other (induce, eval, show, info, agreement, bundles, averaging)."""
import json
import os
import subprocess
import sys

import pytest
import torch
from click.testing import CliRunner

from conftest import NOUNS, VERBS, ADJS, DETS, PREPS, save_tiny_checkpoint, write_corpus
from onparse import distill
from onparse.api import load
from onparse.trees.average import average_trees_batch
from onparse.cli import main
from onparse.student.distill import default_run_dir
from onparse.student.teacher_trees import TEACHER_TREES
from onparse.errors import OnparseError
from onparse.members import Member, MemberError, grid
from onparse.student.config import DistillSettings
from onparse.student.file import check_student
from onparse.student.kind import load_student
from onparse.trees.tree import to_brackets, tree_spans

pytestmark = pytest.mark.usefixtures("one_thread")

SMALL = ["--embedding-size", "8", "--hidden-size", "12", "--mlp-size", "12", "--threads", "1", "-q"]
SIZES = dict(embedding_size=8, hidden_size=12, mlp_size=12)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A tiny teacher over the toy language, 200 lines of its text, and a student distilled
    from it by the command line (2 epochs, every epoch kept)."""
    root = tmp_path_factory.mktemp("distill")
    words = NOUNS + VERBS + ADJS + DETS + PREPS + ["Yesterday"]
    _, _, teacher = save_tiny_checkpoint(root / "teacher.pt", [w.lower() for w in words])
    text = write_corpus(root / "text.txt", n_sentences=200, seed=3)
    student = str(root / "student.pt")
    result = CliRunner().invoke(main, ["distill", text, "-m", teacher, "--out", student, "--epochs", "2",
                                       "--keep-epochs", "--valid-every", "10", "--json", *SMALL])
    assert result.exit_code == 0, result.output
    return {"root": root, "teacher": teacher, "text": text, "student": student,
            "summary": json.loads(result.stdout.strip().splitlines()[-1])}


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def test_distill_writes_the_student_and_its_run_folder(setup):
    summary = setup["summary"]
    assert summary["sentences"] == 180 and summary["held_out"] == 20      # every 10th of 200 lines held out
    assert [e["epoch"] for e in summary["epochs"]] == [1, 2]
    assert all(0 <= e["agreement"] <= 1 for e in summary["epochs"])
    run_dir = default_run_dir(setup["student"])
    assert run_dir.endswith("student.run")
    assert sorted(os.listdir(run_dir)) == ["epoch-001.pt", "epoch-002.pt", "last.pt", "metrics.jsonl", TEACHER_TREES]
    # The teacher's trees are those the teacher gives the text's lines.
    teacher = load(setup["teacher"])
    lines = open(setup["text"], encoding="utf-8").read().splitlines()
    with open(os.path.join(run_dir, TEACHER_TREES), encoding="utf-8") as handle:
        assert [line.rstrip("\n") for line in handle] == [to_brackets(t) for t in teacher.trees(teacher.tokens(lines))]
    # The last epoch's snapshot is the student.
    final, snapshot = load_student(setup["student"]), load_student(os.path.join(run_dir, "epoch-002.pt"))
    for (name, a), (_, b) in zip(final.model.state_dict().items(), snapshot.model.state_dict().items()):
        assert torch.equal(a, b), name
    # The student reads its teacher's vocabulary.
    assert final.vocab.to_list() == teacher.vocab.to_list()
    events = [json.loads(line)["event"] for line in open(os.path.join(run_dir, "metrics.jsonl"))]
    assert events[0] == "start" and events.count("epoch") == 2 and events[-1] == "done"


def test_student_file_records_its_teachers_and_text(setup):
    meta = load_student(setup["student"]).metadata
    assert meta["teachers"]["models"][0]["name"] == setup["teacher"]
    assert meta["teachers"]["members"] == ["layer 2 onlstm"]
    assert meta["text"]["path"] == setup["text"] and meta["text"]["sentences"] == 200
    assert len(meta["text"]["sha256"]) == 64 and meta["distill"]["config"]["hidden_size"] == 12
    out = run("info", "-m", setup["student"])
    assert out.exit_code == 0, out.output
    assert f"teacher: {setup['teacher']}, a language model (members: layer 2 onlstm; voters: none; ties: first)" \
        in out.output
    assert f"text: {setup['text']} (200 sentences" in out.output
    assert "2 BiLSTM layers of 12 units per direction" in out.output
    as_json = json.loads(run("info", "-m", setup["student"], "--json").output)
    assert as_json["kind"] == "student" and as_json["metadata"]["text"]["sentences"] == 200


def test_student_member_in_induce_eval_show(setup, tmp_path):
    student = load(setup["student"])
    assert student.members == [Member(0, 1, "cyk")] and student.members[0].label() == "student"
    sentence = "the big dog saw a cat near the house ."
    tree = student.parse_one(sentence)
    assert tree.leaves() == ["the", "big", "dog", "saw", "a", "cat", "near", "the", "house"]
    out = run("induce", "-", "-m", setup["student"], input=sentence + "\n\n")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == [to_brackets(student.trees(student.tokens([sentence]))[0]), ""]
    # --layer has nothing to choose in a student: refused, not ignored (issue 41.9).
    refused = run("induce", "-", "-m", setup["student"], "--layer", "1,2", input=sentence)
    assert refused.exit_code == 2 and "--layer does not apply: a student has no layers to choose from" in refused.output
    jsonl = json.loads(run("induce", "-", "-m", setup["student"], "--format", "jsonl", input=sentence).stdout)
    assert jsonl["distances"] is None and jsonl["tokens"][0] == "the"
    shown = run("show", "-", "-m", setup["student"], input=sentence)
    assert shown.exit_code == 0 and "induced tree: the student's; bars: the size of the constituent split" in shown.output
    assert "split size per word" in shown.output
    gold = tmp_path / "gold.txt"
    gold.write_text("((the (big dog)) (saw ((a cat) (near (the house)))))\n")
    scored = run("eval", "--gold", gold, "-m", setup["teacher"], "-m", setup["student"])
    assert scored.exit_code == 0, scored.output
    assert "model 2 student" in scored.output and "average of 2 members" in scored.output


def test_student_averaged_with_language_models(setup):
    both = load([setup["teacher"], setup["student"]], voters=["right"], ties="right")
    assert both.members == [Member(0, 2, "onlstm"), Member(1, 1, "cyk")]
    lines = open(setup["text"], encoding="utf-8").read().splitlines()[:40]
    tokens = both.tokens(lines)
    per_member = both.member_trees(tokens)
    assert [t[0] for t in per_member] == load(setup["teacher"]).trees(tokens)
    assert [t[1] for t in per_member] == load(setup["student"]).trees(tokens)
    expected = average_trees_batch([t + [_right(toks)] for t, toks in zip(per_member, tokens)], "right")
    assert both.trees(tokens) == list(expected)
    # A grid over every layer keeps the student's one member.
    assert both.with_grid("all", ["split"]).members == [Member(0, 1, "split"), Member(0, 2, "split"),
                                                         Member(0, 3, "split"), Member(1, 1, "cyk")]


def _right(tokens):
    tree = tokens[-1]
    for word in reversed(tokens[:-1]):
        tree = (word, tree)
    return tree


def test_bundles_hold_students(setup, tmp_path):
    both = load([setup["teacher"], setup["student"]])
    lines = open(setup["text"], encoding="utf-8").read().splitlines()[:30]
    for weights in ("float32", "int8"):
        path = tmp_path / f"bundle-{weights}.pt"
        both.save_bundle(path, weights=weights)
        again = load(path)
        assert again.members == both.members and [m.kind for m in again.models] == ["language model", "student"]
        if weights == "float32":
            assert again.trees(again.tokens(lines)) == both.trees(both.tokens(lines))
    info = run("info", "-m", tmp_path / "bundle-float32.pt")
    assert info.exit_code == 0 and "model 2 student" in info.output and "a student parser" in info.output
    summary = json.loads(run("info", "-m", tmp_path / "bundle-float32.pt", "--json").output)
    assert [m["kind"] for m in summary["models"]] == ["language model", "student"]
    # agreement scores the student beside the teacher's members and can bundle it.
    out = run("agreement", setup["text"], "-m", setup["teacher"], "-m", setup["student"], "--layer", "1,2",
              "--keep", "2", "--bundle", tmp_path / "kept.pt")
    assert out.exit_code == 0, out.output
    assert "model 2 student\t" in out.stdout
    kept = load(tmp_path / "kept.pt")
    assert len(kept.members) == 2


def test_resume_is_exact(setup, tmp_path, monkeypatch):
    """A run stopped mid-epoch (after its last save) and resumed ends with the same weights as a
    run never stopped."""
    teacher = load(setup["teacher"])
    settings = DistillSettings(epochs=2, batch_size=16, save_every=3, valid_every=10)
    whole = distill(teacher, setup["text"], tmp_path / "whole.pt", sizes=SIZES, settings=settings, quiet=True)
    assert whole.epochs[-1]["epoch"] == 2

    import onparse.student.distill as distill_module

    calls = {"n": 0}
    real = torch.nn.utils.clip_grad_norm_

    def stop_at_batch_17(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 17:               # epoch 2 (12 batches an epoch), after the save at batch 3
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(distill_module.torch.nn.utils, "clip_grad_norm_", stop_at_batch_17)
    with pytest.raises(KeyboardInterrupt):
        distill(teacher, setup["text"], tmp_path / "cut.pt", sizes=SIZES, settings=settings, quiet=True)
    monkeypatch.setattr(distill_module.torch.nn.utils, "clip_grad_norm_", real)
    assert not os.path.exists(tmp_path / "cut.pt")
    resumed = distill(teacher, setup["text"], tmp_path / "cut.pt", sizes=SIZES, settings=settings, resume=True,
                      quiet=True)
    a, b = load_student(tmp_path / "whole.pt").model.state_dict(), load_student(tmp_path / "cut.pt").model.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert [e["agreement"] for e in resumed.epochs] == [e["agreement"] for e in whole.epochs]
    assert [e["loss"] for e in resumed.epochs] == pytest.approx([e["loss"] for e in whole.epochs], rel=1e-12)
    # More epochs later: --resume --epochs 3 continues the same run.
    more = distill(teacher, setup["text"], tmp_path / "cut.pt", sizes=SIZES, resume=True, quiet=True,
                   settings=DistillSettings(epochs=3, batch_size=16, save_every=3, valid_every=10))
    assert [e["epoch"] for e in more.epochs] == [1, 2, 3]


def test_resume_refuses_another_run(setup, tmp_path):
    teacher = load(setup["teacher"])
    settings = DistillSettings(epochs=1, valid_every=10)
    distill(teacher, setup["text"], tmp_path / "s.pt", sizes=SIZES, settings=settings, quiet=True)
    other = write_corpus(tmp_path / "other.txt", n_sentences=50, seed=9)
    with pytest.raises(OnparseError, match="distilled from other text"):
        distill(teacher, other, tmp_path / "s.pt", sizes=SIZES, settings=settings, resume=True, quiet=True)
    with pytest.raises(OnparseError, match="sizes or settings differ"):
        distill(teacher, setup["text"], tmp_path / "s.pt", sizes={**SIZES, "hidden_size": 13}, settings=settings,
                resume=True, quiet=True)
    with pytest.raises(OnparseError, match="already holds a run; pass --resume"):
        distill(teacher, setup["text"], tmp_path / "s.pt", sizes=SIZES, settings=settings, quiet=True)
    with pytest.raises(OnparseError, match="--resume needs TEXT as a file"):
        distill(teacher, "-", tmp_path / "s.pt", sizes=SIZES, settings=settings, resume=True, quiet=True)
    with pytest.raises(OnparseError, match="nothing to resume"):
        distill(teacher, setup["text"], tmp_path / "new.pt", sizes=SIZES, settings=settings, resume=True, quiet=True)


@pytest.mark.parametrize("case", ["empty", "one-word lines", "unknown words", "not a model", "student as perplexity",
                                  "student distances", "missing text"])
def test_bad_input_is_one_line(setup, tmp_path, case):
    text, model, command = tmp_path / "text.txt", setup["teacher"], "distill"
    text.write_text({"empty": "", "one-word lines": "dog\ncat\n\n", "unknown words": "zorp blix quux fnord\n" * 5,
                     "missing text": ""}.get(case, "the dog saw a cat\n"))
    args = [command, text, "-m", model, "--out", tmp_path / "s.pt", *SMALL]
    if case == "not a model":
        args[3] = text
    if case == "student as perplexity":
        args = ["perplexity", "-m", setup["student"], "--corpus", setup["text"], "-q"]   # -q: no sign of life
    if case == "student distances":
        args = ["distances", "-", "-m", setup["student"]]
    if case == "missing text":
        args[1] = tmp_path / "nowhere.txt"
    out = run(*args, input="the dog\n")
    assert out.exit_code == 1, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), out.output
    expected = {"empty": "no sentence of at least 2 words", "one-word lines": "no sentence of at least 2 words",
                "unknown words": "100% of the words", "not a model": "not an onparse checkpoint",
                "student as perplexity": "is a student: it has no perplexity",
                "student distances": "is a student: it has no distances",
                "missing text": "nowhere.txt"}[case]
    assert expected in lines[0]
    assert not os.path.exists(tmp_path / "s.pt")


def test_usage_errors_exit_2(setup, tmp_path):
    out = run("distill", setup["text"], "-m", setup["teacher"], "--out", tmp_path / "s.pt", "--resume", "--overwrite")
    assert out.exit_code == 2 and "give one of them" in out.output
    out = run("distill", setup["text"], "-m", setup["teacher"], "--out", setup["teacher"])
    assert out.exit_code == 2


def test_members_of_students_are_checked_by_their_kind(setup):
    lm, student = load([setup["teacher"], setup["student"]], "cpu").models
    assert student.member(1, 1, "cyk") == Member(1, 1, "cyk") and student.member(1, 1, "cyk").label(2) == "model 2 student"
    with pytest.raises(MemberError, match="model 1 is a student: it has no layers to choose from"):
        student.member(0, 2, "cyk")
    with pytest.raises(MemberError, match="model 1 is a student: its decoder is one of cyk, not 'onlstm'"):
        student.member(0, 1, "onlstm")
    with pytest.raises(MemberError, match="model 1 is a language model: unknown decoder 'cyk'"):
        lm.member(0, 2, "cyk")
    # Options that apply to no model of the parser are refused, not ignored (issue 41.9) ...
    with pytest.raises(MemberError, match="--layer does not apply: a student has no layers"):
        grid([student, student], [5], None)
    with pytest.raises(MemberError, match="no model here has a decoder named 'split': choose from cyk"):
        grid([student], None, ["split"])
    # ... and those that apply to some models are left to them.
    assert grid([lm, student], [1], ["split"]) == [Member(0, 1, "split"), Member(1, 1, "cyk")]
    assert grid([student, student], None, "all") == [Member(0, 1, "cyk"), Member(1, 1, "cyk")]
    assert Member.from_dict({"model": 2, "layer": 1, "decoder": "cyk"}) == Member(2, 1, "cyk")


def test_damaged_student_files_are_refused(setup, tmp_path):
    blob = torch.load(setup["student"], weights_only=True)
    bad = dict(blob, state_dict={**blob["state_dict"], "out.bias": torch.zeros(2)})
    with pytest.raises(OnparseError, match="the config does not fit the weights: out.bias"):
        check_student(bad, "x.pt")
    bad = dict(blob, config={**blob["config"], "hidden_size": 10 ** 9})
    with pytest.raises(OnparseError, match="unusable student config"):
        check_student(bad, "x.pt")
    altered = dict(blob, state_dict={**blob["state_dict"], "out.bias": blob["state_dict"]["out.bias"] + 1})
    torch.save(altered, tmp_path / "altered.pt")
    out = run("induce", "-", "-m", tmp_path / "altered.pt", input="the dog\n")
    assert out.exit_code == 1 and "do not match their checksum" in out.output
    assert run("induce", "-", "-m", tmp_path / "altered.pt", "--no-verify", input="the dog\n").exit_code == 0


def test_distill_and_induce_through_a_pipe(setup, tmp_path):
    """The real programs: distill writes a student that `induce` reads from a pipe."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    student = tmp_path / "piped.pt"
    done = subprocess.run([sys.executable, "-m", "onparse", "distill", setup["text"], "-m", setup["teacher"],
                           "--out", str(student), "--epochs", "1", *SMALL], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {student}: learnt from ")
    text = "the dog saw a cat\nthe big bird\n"
    induced = subprocess.run([sys.executable, "-m", "onparse", "induce", "-", "-m", str(student)], input=text,
                             capture_output=True, text=True, env=env)
    assert induced.returncode == 0, induced.stderr
    parser = load(student)
    assert induced.stdout.splitlines() == [to_brackets(t) for t in parser.trees(parser.tokens(text.splitlines()))]


def test_distances_and_show_beside_a_student(setup):
    """A parser of a language model and a student: distances are the language model's, and
    show draws its bars under the averaged tree."""
    both = ["-m", setup["teacher"], "-m", setup["student"]]
    out = run("distances", "-", *both, input="the dog saw a cat\n")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[0] == "token\tmodel 1 layer 2"        # not "layer 1.2" (issue 41.16)
    assert len(out.stdout.splitlines()) == 1 + 5 + 1
    shown = run("show", "-", *both, input="the dog saw a cat\n")
    assert shown.exit_code == 0, shown.output
    assert "average of 2 members" in shown.output and "layer 2 *" in shown.output


def test_a_run_stopped_while_the_teacher_parses_resumes(setup, tmp_path, monkeypatch):
    teacher = load(setup["teacher"])
    settings = DistillSettings(epochs=1, batch_size=16, valid_every=10)
    whole = distill(teacher, setup["text"], tmp_path / "whole.pt", sizes=SIZES, settings=settings, quiet=True)

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(type(teacher), "trees", stop)
    with pytest.raises(KeyboardInterrupt):
        distill(teacher, setup["text"], tmp_path / "cut.pt", sizes=SIZES, settings=settings, quiet=True)
    monkeypatch.undo()
    assert os.path.exists(tmp_path / "cut.run" / "last.pt") and not os.path.exists(tmp_path / "cut.run" / TEACHER_TREES)
    resumed = distill(teacher, setup["text"], tmp_path / "cut.pt", sizes=SIZES, settings=settings, resume=True,
                      quiet=True)
    a, b = load_student(tmp_path / "whole.pt").model.state_dict(), load_student(tmp_path / "cut.pt").model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert resumed.epochs[0]["agreement"] == whole.epochs[0]["agreement"]


def test_interrupted_command_says_how_to_resume(setup, tmp_path, monkeypatch):
    from onparse import api_tools

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api_tools, "distill", interrupted)     # what `onparse.distill` names
    out = run("distill", setup["text"], "-m", setup["teacher"], "--out", tmp_path / "s.pt", *SMALL)
    assert out.exit_code == 130
    assert out.output.strip() == (f"interrupted; {tmp_path / 's.run'} keeps the run: give the same command "
                                  "with --resume to continue it")


def test_a_run_folder_in_use_is_refused(setup, tmp_path):
    from onparse.files.run_folder import FolderLock

    teacher = load(setup["teacher"])
    settings = DistillSettings(epochs=1, valid_every=10)
    distill(teacher, setup["text"], tmp_path / "s.pt", sizes=SIZES, settings=settings, quiet=True)
    with FolderLock(str(tmp_path / "s.run")):
        with pytest.raises(OnparseError, match="is in use by another"):
            distill(teacher, setup["text"], tmp_path / "s.pt", sizes=SIZES, settings=settings, resume=True,
                    quiet=True)


def test_a_student_written_to_a_device_needs_a_run_folder(setup, tmp_path):
    """The run folder goes beside the student unless --run-dir says where; beside a pipe or a
    device (/dev/null) it cannot."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    out = run("distill", setup["text"], "-m", setup["teacher"], "--out", pipe, *SMALL)
    assert out.exit_code == 1
    assert out.output.strip() == f"error: {pipe} is not a regular file, so the run folder cannot go beside it: give --run-dir"


def test_held_out_agreement_skips_sentences_over_max_words(setup, tmp_path, monkeypatch):
    """Issue 41: the held-out agreement step respects --max-words as training does (a long
    held-out line used to go through the student's O(n^3) parse)."""
    import onparse.student.distill as distill_module

    teacher = load(setup["teacher"])
    lengths = [len(t) for t in teacher.tokens(open(setup["text"], encoding="utf-8").read().splitlines())]
    max_words = sorted(lengths)[len(lengths) // 2]
    held = [n for i, n in enumerate(lengths) if not i % 10]
    assert any(n > max_words for n in held) and any(n <= max_words for n in held)
    seen = []
    real = distill_module._agreement

    def spy(model, vocab, sentences, trees, batch_size):
        seen.append([len(s) for s in sentences])
        return real(model, vocab, sentences, trees, batch_size)

    monkeypatch.setattr(distill_module, "_agreement", spy)
    result = distill(teacher, setup["text"], tmp_path / "short.pt", sizes=SIZES, quiet=True,
                     settings=DistillSettings(epochs=1, batch_size=32, valid_every=10, max_words=max_words))
    assert seen == [[n for n in held if n <= max_words]]
    assert result.held_out == len(seen[0])


def test_a_student_counts_sentences_too_long_for_cyk_once(setup, monkeypatch):
    """Issue 41: a sentence over the cap gets a student's tree (in pieces) and is counted once,
    alone or averaged with a language model (issue 55.13: as built in pieces by the student; when
    averaged, as too long to average, and the student, not the first member, steps aside: its
    tree would not be averaged, issue 66.10)."""
    import onparse.trees.average as average_module

    monkeypatch.setattr(average_module, "MAX_WORDS", 6)
    lines = ["the big dog saw a cat near the house", "the dog saw a cat", "the dog"]
    for models in ([setup["student"]], [setup["teacher"], setup["student"]]):
        parser = load(models)
        trees = parser.trees(parser.tokens(lines))
        assert [len(tree_spans(t)) for t in trees] == [8, 4, 1]
        assert parser.in_pieces == ({"student": 1} if len(models) == 1 else {})
        assert parser.too_long == len(models) - 1


# -- issue 41, round three: the run folder, its files and a run that goes wrong -----------------
def _one_line(result, code=1):
    """The last stderr line of a failed command, after checking it fails with ``code`` and no
    traceback (and, for data errors, that it is the only error line)."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and (result.exception is None or isinstance(result.exception, SystemExit))
    lines = result.stderr.strip().splitlines()
    if code == 1:
        assert [line for line in lines if line.startswith("error: ")] == lines[-1:], result.stderr
    return lines[-1]


@pytest.fixture(scope="module")
def finished(setup, tmp_path_factory):
    """A finished one-epoch run of the command line: its arguments, student and run folder."""
    root = tmp_path_factory.mktemp("finished")
    student = root / "s.pt"
    args = ["distill", setup["text"], "-m", setup["teacher"], "--out", student, "--epochs", "1",
            "--valid-every", "10", *SMALL]
    assert run(*args).exit_code == 0
    return {"args": args, "student": student, "run_dir": root / "s.run"}


def test_a_diverged_student_is_not_written(setup, tmp_path):
    """41.4: a learning rate of 1e30 makes the weights overflow after one step; the run stops on
    the first non-finite loss, keeps last.pt's good state, writes no student and exits 1 in one
    line (it wrote a student of NaN weights and exited 0)."""
    student = tmp_path / "s.pt"
    out = run("distill", setup["text"], "-m", setup["teacher"], "--out", student, "--lr", "1e30", *SMALL)
    line = _one_line(out)
    assert line.startswith("error: distillation diverged at step 2 (epoch 1): the training loss became nan; "
                           f"{tmp_path / 's.run' / 'last.pt'} keeps step 0 (epoch 1, batch 0)"), line
    assert "Lower --lr" in line and not student.exists()
    check_student(torch.load(tmp_path / "s.run" / "last.pt", weights_only=True), "last.pt")   # finite weights
    events = [json.loads(x) for x in open(tmp_path / "s.run" / "metrics.jsonl")]
    assert events[-1]["event"] == "diverged" and events[-1]["step"] == 2
    assert sorted(os.listdir(tmp_path)) == ["s.run"] and ".onparse.lock" not in os.listdir(tmp_path / "s.run")


def test_text_from_process_substitution_is_hashed_as_read(setup, tmp_path):
    """41.3: TEXT as /dev/fd/N (bash's <(...), a pipe) is read once and its hash is that of
    what was read (it was opened again and hashed empty; a named pipe hung)."""
    import hashlib
    import threading

    data = open(setup["text"], "rb").read()
    read_end, write_end = os.pipe()

    def feed():
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        distill(load(setup["teacher"]), f"/dev/fd/{read_end}", tmp_path / "s.pt", sizes=SIZES, quiet=True,
                settings=DistillSettings(epochs=1, batch_size=64, valid_every=10))
    finally:
        feeder.join(timeout=20)
        os.close(read_end)
    meta = load_student(tmp_path / "s.pt").metadata
    assert meta["text"]["sha256"] == hashlib.sha256(data).hexdigest() and meta["text"]["sentences"] == 200


@pytest.mark.parametrize("name", [".onparse.lock", "last.pt", TEACHER_TREES])
def test_out_naming_a_file_of_the_run_is_refused(setup, name, tmp_path):
    """41.5: the student cannot be written over the run's own files (--out RUN/.onparse.lock
    lost the student when the lock was released), nor be the run folder."""
    run_dir = tmp_path / "run"
    os.makedirs(run_dir)
    out = run("distill", setup["text"], "-m", setup["teacher"], "--out", run_dir / name, "--run-dir", run_dir,
              "--force", "--epochs", "1", *SMALL)
    assert out.exit_code == 2, out.output
    assert f"is a file of the run in {run_dir} ({name})" in out.output and os.listdir(run_dir) == []
    with pytest.raises(OnparseError, match="is the run folder"):
        distill(load(setup["teacher"]), setup["text"], tmp_path / "x", run_dir=tmp_path / "x", sizes=SIZES, quiet=True)


@pytest.mark.parametrize("case", ["not UTF-8", "malformed", "other words"])
def test_resume_checks_the_teacher_trees_like_any_input(finished, case):
    """41.6: RUN/teacher-trees.txt is read like any input: an error names the file and line."""
    path = finished["run_dir"] / TEACHER_TREES
    good = path.read_bytes()
    lines = good.splitlines(keepends=True)
    bad = {"not UTF-8": b"((the \xff dog) barked)\n", "malformed": b"((the dog) barked\n",
           "other words": b"((a cat) (sat down))\n"}[case]
    path.write_bytes(b"".join(lines[:2] + [bad] + lines[3:]))
    try:
        line = _one_line(run(*finished["args"], "--resume", "--force"))
    finally:
        path.write_bytes(good)
    assert line.startswith(f"error: {path} line 3: "), line
    assert {"not UTF-8": "not valid UTF-8", "malformed": "unbalanced parentheses",
            "other words": "the tree's words are not those of sentence 3"}[case] in line


def test_resume_replaces_its_own_student_and_sweeps_temporary_files(setup, finished, tmp_path):
    """41.8: the README's continue flow (--resume --epochs N over the run's own student) needs no
    --force, while another student at --out still does; 41.7: temporary files of dead writers go,
    in the run folder and beside the student, whatever onparse wrote them for."""
    dead = 2 ** 22 + 12345                           # above any pid_max in use: not running
    folder, run_dir = finished["student"].parent, finished["run_dir"]
    debris = [run_dir / f".onparse-{dead}-teacher-trees.txt.abcd1234.tmp", run_dir / ".teacher-trees.k2j4h5g6.tmp.txt",
              folder / f".onparse-{dead}-s.pt.x1y2z3w4.tmp"]
    for path in debris:
        path.write_bytes(b"half a file")
    args = list(finished["args"])
    args[args.index("--epochs") + 1] = "2"
    out = run(*args, "--resume")
    assert out.exit_code == 0, out.output
    assert not any(path.exists() for path in debris)
    assert [e["epoch"] for e in load_student(finished["student"]).metadata["epochs"]] == [1, 2]
    other = tmp_path / "other.pt"
    other.write_bytes(open(setup["student"], "rb").read())
    refused = run(*[other if a == finished["student"] else a for a in args], "--resume", "--run-dir", run_dir)
    assert refused.exit_code == 2 and "pass --force to replace it" in refused.output


def test_every_temporary_file_has_the_one_name(setup, tmp_path, monkeypatch):
    """41.7 / 40.3: the teacher's trees and every student file go through one atomic writer,
    whose temporary names (the writer's pid inside) the sweep knows."""
    import onparse.student.teacher_trees as trees_module
    from onparse.files.safeio import TEMP_PATTERN

    seen = []
    real_save, real_brackets = torch.save, trees_module.to_brackets

    def save(obj, handle, *args, **kwargs):
        seen.append(os.path.basename(handle.name))
        return real_save(obj, handle, *args, **kwargs)

    def to_brackets(tree):
        seen.extend(n for n in os.listdir(tmp_path / "s.run") if n.endswith(".tmp"))
        return real_brackets(tree)

    monkeypatch.setattr(torch, "save", save)
    monkeypatch.setattr(trees_module, "to_brackets", to_brackets)
    distill(load(setup["teacher"]), setup["text"], tmp_path / "s.pt", sizes=SIZES, quiet=True,
            settings=DistillSettings(epochs=1, batch_size=64, valid_every=10))
    assert seen and {TEMP_PATTERN.fullmatch(n).group(1) for n in seen} == {str(os.getpid())}
    assert any("teacher-trees" in n for n in seen) and any("s.pt" in n for n in seen)
    assert sorted(os.listdir(tmp_path)) == ["s.pt", "s.run"]


def test_run_folder_messages_name_the_option_and_the_file(setup, tmp_path, monkeypatch):
    """41.11: the lock message names --run-dir; a full disk names the file and leaves no lock."""
    import errno

    import onparse.student.teacher_trees as trees_module
    from onparse.files.run_folder import FolderLock

    args = ["distill", setup["text"], "-m", setup["teacher"], "--out", tmp_path / "s.pt", *SMALL]
    run_dir = tmp_path / "s.run"
    os.makedirs(run_dir)
    with FolderLock(str(run_dir)):
        assert "wait for it to end or choose another --run-dir" in _one_line(run(*args))

    real_write = os.write

    def full(fd, data):
        if data.startswith(b"pid "):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    line = _one_line(run(*args))
    monkeypatch.setattr(os, "write", real_write)
    assert line == f"error: cannot write {run_dir / '.onparse.lock'}: No space left on device"
    assert os.listdir(run_dir) == []

    def no_space(tree):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(trees_module, "to_brackets", no_space)
    line = _one_line(run(*args, "--overwrite"))
    assert line == f"error: cannot write {run_dir / TEACHER_TREES}: No space left on device"
    assert sorted(os.listdir(run_dir)) == ["last.pt", "metrics.jsonl"]       # no lock, no temporary file


def test_last_pt_stores_the_run_state(setup):
    """40.4: the loop's state is a plain value; last.pt stores it in the layout older runs wrote."""
    from onparse.student.distill import RunState

    blob = torch.load(os.path.join(default_run_dir(setup["student"]), "last.pt"), weights_only=True)
    state = RunState.from_training(blob["training"], blob["metadata"]["epochs"], "last.pt")
    assert (state.epoch, state.done, state.loss_sum) == (3, 0, 0.0) and state.step == blob["training"]["step"]
    assert [e["epoch"] for e in state.history] == [1, 2]
    training = state.to_training(torch.optim.Adam([torch.zeros(1)]))
    assert set(training) >= {"epoch", "done", "step", "loss_sum", "minutes", "optimizer", "torch_rng"}


def test_eval_names_a_student_as_a_student(setup, tmp_path):
    """41.9: a student has no layer: eval neither prints nor records "layer 1, decoder cyk", and
    options that apply to no model are refused, not ignored."""
    gold = tmp_path / "gold.txt"
    gold.write_text("((the (big dog)) (saw ((a cat) (near (the house)))))\n((the cat) (saw (a dog)))\n")
    alone = run("eval", "--gold", gold, "-m", setup["student"])
    assert alone.exit_code == 0, alone.output
    assert alone.stdout.splitlines()[0] == f"model {setup['student']}, a student"
    assert "layer 1" not in alone.stdout and "cyk" not in alone.stdout
    record = json.loads(run("eval", "--gold", gold, "-m", setup["student"], "--json").stdout)
    assert record["kind"] == "student" and "layer" not in record and "decoder" not in record
    records = json.loads(run("eval", "--gold", gold, "-m", setup["teacher"], "-m", setup["student"], "--json").stdout)
    assert [r["member"] for r in records[:2]] == [{"model": 0, "layer": 2, "decoder": "onlstm"},
                                                 {"model": 1, "kind": "student"}]
    assert records[2]["average_of"] == [r["member"] for r in records[:2]]
    refused = run("induce", "-", "-m", setup["student"], "--layer", "99", "--decode", "split,onlstm", input="the dog\n")
    assert refused.exit_code == 2 and "no model here has a decoder named 'split'" in refused.output


def test_a_student_names_its_teachers_and_keeps_the_punkt_parameters_it_split_with(setup, tmp_path):
    """41.16: the teachers of a student are named by where they came from and what they are
    (not "the bundled model [1]; [2]"); 41.12: distill reads paragraphs with --split-sentences,
    and the student records the Punkt parameters, which its own --split-sentences uses."""
    words = NOUNS + VERBS + ADJS + DETS + PREPS + ["Yesterday"]
    lm = save_tiny_checkpoint(tmp_path / "lm.pt", [w.lower() for w in words], seed=4,
                              metadata={"corpus": {"source": "toy"}, "epoch": 3})[2]
    bundle = tmp_path / "pair.pt"
    load([setup["teacher"], lm]).save_bundle(bundle, weights="float32")
    lines = [line.rstrip(" .") for line in open(setup["text"], encoding="utf-8").read().splitlines()]
    paragraphs = tmp_path / "paragraphs.txt"
    paragraphs.write_text("".join(" ".join(s[:1].upper() + s[1:] + "." for s in lines[k:k + 4]) + "\n"
                                  for k in range(0, 120, 4)))
    student = tmp_path / "s.pt"
    args = ["distill", paragraphs, "-m", bundle, "--out", student, "--epochs", "1", "--valid-every", "5", *SMALL]
    noted = run(*[a for a in args if a != "-q"], "--out", tmp_path / "whole.pt")
    assert noted.exit_code == 0, noted.output
    assert "note: 30 of 30 lines look like several sentences" in noted.stderr and "learnt from as one" in noted.stderr
    out = run(*args, "--split-sentences")
    assert out.exit_code == 0, out.output
    assert "learnt from 96 sentences" in out.stdout and "on 24 held-out sentences" in out.stdout    # 120 sentences
    assert "learnt from 24 sentences" in noted.stdout                                                 # 30 lines
    meta = load_student(student).metadata
    models = meta["teachers"]["models"]
    assert [m["name"] for m in models] == [f"model 1 of {bundle}", f"model 2 of {bundle}"]
    assert [m["about"] for m in models] == ["a language model", "a language model: corpus toy, epoch 3"]
    assert meta["text"]["split_sentences"] is True and meta["punkt"]["format"] == "onparse-punkt"
    info = run("info", "-m", student).stdout
    assert "teachers: 2 models (members: model 1 layer 2 onlstm; model 2 layer 2 onlstm; voters: none; ties: first)" in info
    assert f"  model 2: model 2 of {bundle}, a language model: corpus toy, epoch 3" in info
    induced = run("induce", "-", "-m", student, "--split-sentences", input="The dog saw a cat. A bird saw the dog.\n")
    assert induced.exit_code == 0, induced.output
    assert len(induced.stdout.splitlines()) == 3 and "learnt them" not in induced.stderr


def test_a_student_learns_from_a_mixed_teacher(setup, tmp_path):
    """38.4: a teacher of three kinds (a language model, a grammar, a student) and a voter: the
    teacher trees distill writes are the mixed parser's averaged trees, the student file names
    every teacher by its kind, and the student parses beside its teachers."""
    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.file import save_grammar
    from onparse.grammar.model import NeuralPCFG

    teacher_vocab = load_student(setup["student"]).vocab          # the teacher's vocabulary
    torch.manual_seed(5)
    grammar = tmp_path / "g.pt"
    config = GrammarConfig.preset("tiny", len(teacher_vocab))
    save_grammar(grammar, config=config.to_dict(), vocab=teacher_vocab, state_dict=NeuralPCFG(config).state_dict())
    mixed = load([setup["teacher"], str(grammar), setup["student"]], voters=["right"], ties="right")
    assert [m.kind for m in mixed.models] == ["language model", "grammar", "student"]
    student = tmp_path / "mixed-student.pt"
    out = run("distill", setup["text"], "-m", setup["teacher"], "-m", grammar, "-m", setup["student"],
              "--voter", "right", "--ties", "right", "--out", student, "--epochs", "1", "--valid-every", "10",
              *SMALL)
    assert out.exit_code == 0, out.output
    lines = open(setup["text"], encoding="utf-8").read().splitlines()
    with open(os.path.join(default_run_dir(str(student)), TEACHER_TREES), encoding="utf-8") as handle:
        written = [line.rstrip("\n") for line in handle]
    expected = [to_brackets(t) for t in mixed.trees(mixed.tokens(lines))]
    assert written == expected
    # The grammar's trees are not the language model's: the average really mixes kinds.
    per_member = mixed.member_trees(mixed.tokens(lines[:50]))
    assert any(t[0] != t[1] for t in per_member)
    meta = load_student(student).metadata
    assert [m["about"].split(":")[0] for m in meta["teachers"]["models"]] == ["a language model", "a grammar",
                                                                            "a student"]
    assert meta["teachers"]["voters"] == ["right"] and meta["teachers"]["ties"] == "right"
    beside = load([str(student), str(grammar)])
    assert len(beside.trees(beside.tokens(lines[:10]))) == 10


def _induced_in_two_shards(setup, tmp_path):
    """The teacher's trees of the setup text as two `induce --shard` parts concatenated."""
    parts = []
    for k in (1, 2):
        out = run("induce", setup["text"], "-m", setup["teacher"], "--shard", f"{k}/2", "-q", "--threads", "1")
        assert out.exit_code == 0, out.output
        parts.append(out.stdout)
    path = tmp_path / "trees.txt"
    path.write_text("".join(parts), encoding="utf-8")
    return path


def test_teacher_trees_from_induce_make_the_same_student_without_parsing(setup, tmp_path, monkeypatch):
    """--teacher-trees: trees `induce --shard` wrote, concatenated, replace the teacher's parse
    (which would fail here) and give a student equal, weight for weight, to the setup's."""
    trees = _induced_in_two_shards(setup, tmp_path)
    from onparse.api import Parser

    def no_parse(*args, **kwargs):
        raise AssertionError("the teacher parsed although its trees were given")

    monkeypatch.setattr(Parser, "trees", no_parse)
    student = tmp_path / "s.pt"
    out = run("distill", setup["text"], "-m", setup["teacher"], "--teacher-trees", trees, "--out", student,
              "--epochs", "2", "--keep-epochs", "--valid-every", "10", *SMALL)
    assert out.exit_code == 0, out.output
    mine, theirs = load_student(str(student)), load_student(setup["student"])
    for (name, a), (_, b) in zip(mine.model.state_dict().items(), theirs.model.state_dict().items()):
        assert torch.equal(a, b), name
    assert mine.metadata["teacher_trees"] == str(trees)
    # The run folder keeps them, so that --resume needs neither the file nor the teacher.
    theirs_kept = os.path.join(default_run_dir(setup["student"]), TEACHER_TREES)
    with open(theirs_kept, encoding="utf-8") as handle:
        assert (tmp_path / "s.run" / TEACHER_TREES).read_text(encoding="utf-8") == handle.read()


@pytest.mark.parametrize("case", ["other words", "too few", "jsonl"])
def test_teacher_trees_that_do_not_fit_the_text_are_one_line(setup, tmp_path, case):
    trees = _induced_in_two_shards(setup, tmp_path)
    lines = trees.read_text(encoding="utf-8").splitlines(keepends=True)
    if case == "other words":
        lines[4] = "((a cat) (sat down))\n"
    elif case == "too few":
        lines = lines[:-3]
    else:
        lines = ['{"tree": "' + lines[0].strip() + '"}\n'] + lines[1:]
    trees.write_text("".join(lines), encoding="utf-8")
    line = _one_line(run("distill", setup["text"], "-m", setup["teacher"], "--teacher-trees", trees,
                         "--out", tmp_path / "s.pt", "--epochs", "1", *SMALL))
    assert line.startswith("error: "), line
    assert {"other words": f"{trees} line 5: the tree's words are not those of sentence 5",
            "too few": f"{trees} holds 197 trees of at least 2 words for the 200 sentences",
            "jsonl": f"{trees} line 1: "}[case] in line, line
    assert not (tmp_path / "s.pt").exists()

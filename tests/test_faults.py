"""Fault injection: what onparse does when the run folder, the disk, the pipes, the numbers or
the files go wrong.  Every failure must be one line on stderr with exit 1 (2 for usage), leave
the good files intact, and never print a traceback.

Kept fast for a 2-core machine: tiny models built in place (no training) wherever a model is
only read, short runs on a 120-sentence corpus where training is the point, and only a few
real processes (a kill -9, a closed stdout, Ctrl-C at start-up).
"""
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest
import torch
from click.testing import CliRunner

import onparse.lm.training.train as train_module
from conftest import save_tiny_checkpoint, write_corpus
from onparse.files.checkpoint import DIGEST_KEY
from onparse.lm.file import load_checkpoint
from onparse.lm.kind import load_model
from onparse.files.weights import weights_digest
from onparse.cli import main
from onparse.devices import resolve_device
from onparse.lm.distances import sentence_distances
from onparse.errors import OnparseError
from onparse.induce import read_lines
from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
from onparse.files.safeio import dumps, format_ppl, remove_stale_temp_files
from onparse.files.run_folder import FolderLock, MetricsLog, truncate_log

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat down on a mat dog barked".split()
TINY = ["--preset", "tiny", "--threads", "1", "--no-progress"]
SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def invoke(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def one_line_error(result, code=1):
    """The error line of a failed command, after checking it is alone and traceback-free."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.stderr.strip().splitlines()       # progress messages may come first
    if code == 1:
        assert [line for line in lines if line.startswith("error: ")] == lines[-1:], result.stderr
    return lines[-1]


def strict_json(text):
    """json.loads that rejects NaN and Infinity, as strict parsers do."""
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


def make_model_file(path, metadata=None, mutate=None):
    """A small untrained checkpoint (no training needed to test loading); ``mutate(blob)``
    may edit the dict before it is written with plain torch.save."""
    save_tiny_checkpoint(path, WORDS, embedding_size=8, hidden_size=8, n_layers=2, metadata=metadata or {})
    if mutate is not None:
        blob = torch.load(str(path), weights_only=True)
        mutate(blob)
        torch.save(blob, str(path))
    return str(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("corpus") / "c.txt", n_sentences=120)


@pytest.fixture
def model_file(tmp_path):
    return make_model_file(tmp_path / "m.pt")


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    """A run folder after one epoch of the tiny preset (tests work on copies)."""
    out = tmp_path_factory.mktemp("trained") / "run"
    result = invoke("train", *TINY, "--corpus", corpus, "--epochs", 1, "--out", out)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def run_copy(trained, tmp_path):
    """A private copy of the trained run folder."""
    out = tmp_path / "run"
    out.mkdir()
    for name in os.listdir(trained):
        (out / name).write_bytes((trained / name).read_bytes())
    return out


def python_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


# -- 1, 2: the run folder is the run's own -----------------------------------------------------
def test_fresh_train_refuses_a_folder_holding_a_copied_model(corpus, tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "best.pt").write_bytes(b"a model I want to keep")
    (keep / "metrics.jsonl").write_text("{}\n")
    message = one_line_error(invoke("train", *TINY, "--corpus", corpus, "--out", keep))
    assert "already holds onparse files (best.pt, metrics.jsonl)" in message and "--overwrite" in message
    assert (keep / "best.pt").read_bytes() == b"a model I want to keep"
    (keep / "best.pt").unlink()
    (keep / "epoch-003.pt").write_bytes(b"snapshot")
    assert "epoch-003.pt" in one_line_error(invoke("train", *TINY, "--corpus", corpus, "--out", keep))


def test_a_locked_folder_is_refused_naming_the_holder(corpus, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    with FolderLock(str(out)):
        message = one_line_error(invoke("train", *TINY, "--corpus", corpus, "--out", out))
    assert f"in use by another training run (pid {os.getpid()} on {socket.gethostname()} since" in message
    assert not os.listdir(out)                       # released, and the lock file removed
    with FolderLock(str(out)):                       # free again
        pass


def test_the_lock_is_held_for_the_whole_run(corpus, tmp_path, monkeypatch):
    out = tmp_path / "run"
    seen = []
    real = train_module._Run._valid_loss

    def probe(self):
        try:
            FolderLock(str(out)).acquire()
            seen.append("free")
        except OnparseError as err:
            seen.append(str(err))
        return real(self)

    monkeypatch.setattr(train_module._Run, "_valid_loss", probe)
    result = invoke("train", *TINY, "--corpus", corpus, "--epochs", 1, "--out", out)
    assert result.exit_code == 0, result.output
    assert len(seen) == 1 and "in use by another training run" in seen[0]
    assert sorted(os.listdir(out)) == ["best.pt", "last.pt", "metrics.jsonl"]


def test_out_under_a_file_is_one_line(corpus, tmp_path):
    plain = tmp_path / "file.txt"
    plain.write_text("x")
    message = one_line_error(invoke("train", *TINY, "--corpus", corpus, "--out", plain / "run"))
    assert "cannot create the output folder" in message and "Not a directory" in message


# -- 3: divergence -----------------------------------------------------------------------------
@pytest.mark.parametrize("option, value", [("--lr", "inf"), ("--clip", "nan"), ("--weight-decay", "inf"),
                                           ("--alpha", "nan"), ("--beta", "-inf")])
def test_non_finite_options_are_usage_errors(corpus, tmp_path, option, value):
    result = invoke("train", *TINY, "--corpus", corpus, option, value, "--out", tmp_path / "o")
    assert result.exit_code == 2 and "must be a finite number" in result.output
    assert not (tmp_path / "o").exists()


def test_a_non_finite_loss_stops_the_run_and_keeps_the_last_good_model(run_copy, monkeypatch):
    out = run_copy
    real = train_module.objective

    def poisoned(model, output, targets, alpha, beta):
        loss, ce = real(model, output, targets, alpha, beta)
        return loss * float("nan"), ce              # the AR/TAR part overflowed, say

    monkeypatch.setattr(train_module, "objective", poisoned)
    # Poison the second epoch: the run must stop there, with best.pt still epoch 1's.
    result = invoke("train", "--out", out, "--resume", "--epochs", 3, "--threads", 1, "--no-progress")
    message = one_line_error(result)
    assert "training diverged" in message and "the training loss became nan" in message
    assert "best.pt keeps epoch 1" in message
    best = load_model(str(out / "best.pt"))                 # finite, checksum intact
    assert best.metadata["epoch"] == 1
    records = [strict_json(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert records[-1]["event"] == "diverged"


def test_huge_lr_diverges_with_an_error_not_a_nan_model(corpus, tmp_path):
    out = tmp_path / "run"
    message = one_line_error(invoke("train", *TINY, "--corpus", corpus, "--lr", "1e30", "--out", out))
    assert "training diverged" in message
    assert not (out / "best.pt").exists() or load_model(str(out / "best.pt"))
    for line in (out / "metrics.jsonl").read_text().splitlines():
        strict_json(line)


def test_non_finite_weights_are_never_saved(corpus, tmp_path, monkeypatch):
    # A gradient can overflow while the loss stays finite: the weights are checked before saving.
    def ruin(self):
        with torch.no_grad():
            next(self.model.parameters()).fill_(float("inf"))
        return 3.0

    monkeypatch.setattr(train_module._Run, "_valid_loss", ruin)
    out = tmp_path / "run"
    message = one_line_error(invoke("train", *TINY, "--corpus", corpus, "--epochs", 1, "--out", out))
    assert "the weights became NaN or infinite" in message and "no model was saved" in message
    assert not (out / "best.pt").exists() and not (out / "last.pt").exists()


def test_non_finite_weights_and_distances_are_refused_at_load(tmp_path):
    def poison(blob):
        blob["state_dict"]["decoder_bias"][0] = float("nan")
        blob["metadata"].pop(DIGEST_KEY)
    path = make_model_file(tmp_path / "nan.pt", mutate=poison)
    with pytest.raises(OnparseError, match="hold NaN or infinite values"):
        load_checkpoint(path)
    model = load_model(make_model_file(tmp_path / "ok.pt")).model
    with torch.no_grad():
        model.layers[0].weight_hh.fill_(float("nan"))
    with pytest.raises(OnparseError, match="NaN or infinite distances"):
        sentence_distances(model, [[2, 3, 4]], eos_id=1)


def test_json_never_holds_nan():
    text = dumps({"ppl": float("inf"), "loss": float("nan"), "ok": [1.5, float("-inf")], (1, 2): "tuple key"})
    assert strict_json(text) == {"ppl": None, "loss": None, "ok": [1.5, None], "(1, 2)": "tuple key"}


def test_perplexities_stay_short():
    assert format_ppl(1e300) == "1e+300" and format_ppl(123456.789) == "123456.79"
    assert format_ppl(float("inf")) == "inf" and format_ppl(None) == "-"


def test_perplexity_json_writes_null_for_an_overflow(tmp_path, monkeypatch):
    from onparse.lm import perplexity
    text = tmp_path / "t.txt"
    text.write_text("the cat sat down on a mat\n" * 5)
    monkeypatch.setattr(perplexity, "perplexity_of", lambda loss: float("inf"))
    result = invoke("perplexity", "--model", make_model_file(tmp_path / "m.pt"), "--corpus", text, "--json")
    assert result.exit_code == 0, result.output
    assert strict_json(result.stdout)["perplexity"] is None
    plain = invoke("perplexity", "--model", tmp_path / "m.pt", "--corpus", text)
    assert "perplexity inf" in plain.stdout


# -- 4: system failures are one line -----------------------------------------------------------
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["info"], ["induce", "-"], ["distances", "-"], ["show", "the", "cat"],
                                  ["baseline", "--gold", "GOLD", "--baseline", "right"],
                                  ["eval", "--gold", "GOLD", "PRED", "--per-sentence", "-"]])
def test_a_full_disk_on_stdout_is_one_line(model_file, tmp_path, monkeypatch, capsys, args):
    gold = tmp_path / "gold.txt"
    gold.write_text("((the cat) (sat down))\n" * 200)
    args = [str(gold) if a in ("GOLD", "PRED") else a for a in args]
    if args[0] in ("info", "induce", "distances", "show"):
        args += ["--model", model_file]
    monkeypatch.setattr(sys, "stdin", open(gold))   # induce/distances read it as text
    full = open("/dev/full", "w")
    monkeypatch.setattr(sys, "stdout", full)
    with pytest.raises(SystemExit) as stopped:
        main(args)
    assert stopped.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "No space left on device" in err, err


def test_a_reader_gone_midway_is_a_quiet_exit(model_file, monkeypatch, capsys):
    class GonePipe:
        encoding = "utf-8"

        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", GonePipe())
    with pytest.raises(SystemExit) as stopped:
        main(["info", "--model", model_file])
    assert stopped.value.code == 0 and capsys.readouterr().err == ""


def test_a_closed_stdout_is_one_line(model_file):
    shell = f"{sys.executable} -m onparse info --model {model_file} >&-"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env=python_env(), timeout=120)
    assert done.returncode == 1 and done.stderr.strip().splitlines() == [
        "error: standard output is closed; redirect it instead (> FILE, or > /dev/null)"], done.stderr


def test_a_read_error_after_open_is_one_line():
    if not os.path.exists("/proc/self/mem"):
        pytest.skip("needs /proc")
    with pytest.raises(OnparseError, match=r"cannot read /proc/self/mem \(line 1\)"):
        list(read_lines("/proc/self/mem"))


def test_a_full_disk_during_a_checkpoint_save(run_copy, monkeypatch):
    out = run_copy
    before = {name: (out / name).read_bytes() for name in ("best.pt", "last.pt")}
    real = torch.save

    def full_disk(obj, handle, *args, **kwargs):
        handle.write(b"half a checkpoint")
        raise RuntimeError("[enforce fail at inline_container.cc:664] . unexpected pos 64 vs 0\n"
                           "PytorchStreamWriter failed writing file data/0: file write failed")

    monkeypatch.setattr(torch, "save", full_disk)
    message = one_line_error(invoke("train", "--out", out, "--resume", "--epochs", 2, "--threads", 1,
                                    "--no-progress"))
    monkeypatch.setattr(torch, "save", real)
    assert message.startswith(f"error: cannot write {out}")
    assert sorted(os.listdir(out)) == ["best.pt", "last.pt", "metrics.jsonl"]   # no temp file left
    for name, data in before.items():
        assert (out / name).read_bytes() == data


def test_a_full_disk_under_the_metrics_log_is_one_line():
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    with pytest.raises(OnparseError, match="cannot write /dev/full: No space left on device"):
        MetricsLog("/dev/full", True).event("epoch", epoch=1)


def test_an_unreadable_training_state_is_one_line(run_copy):
    blob = torch.load(str(run_copy / "last.pt"), weights_only=True)
    del blob["training"]["rng"]["jitter"]
    torch.save(blob, str(run_copy / "last.pt"))
    message = one_line_error(invoke("train", "--out", run_copy, "--resume", "--epochs", 2, "--threads", 1))
    assert "unreadable training state (KeyError: 'jitter')" in message


@pytest.mark.parametrize("device", ["meta", "mps", "ipu"])
def test_devices_onparse_does_not_run_on_are_usage_errors(model_file, corpus, tmp_path, device):
    for args in (["induce", "-", "--model", model_file], ["train", *TINY, "--corpus", corpus, "--out", tmp_path / "o"]):
        result = invoke(*args, "--device", device, input="the cat\n")
        assert result.exit_code == 2 and "not a device onparse runs on" in result.output
    with pytest.raises(OnparseError, match="unknown device"):
        resolve_device(device)


def test_info_survives_metadata_of_the_wrong_types(tmp_path):
    odd = {"epoch": "seven", "step": [1], "corpus": "wsj", "train_config": 5, "init_from": {"corpus": 3},
           "valid_ppl": "low", "scores": [1, {"gold": "wsj10"}], "parameters": "many", "weights": 16}
    path = make_model_file(tmp_path / "odd.pt", metadata=odd)
    result = invoke("info", "--model", path)
    assert result.exit_code == 0, result.output
    assert "architecture: 2 ON-LSTM layers" in result.stdout
    assert strict_json(invoke("info", "--model", path, "--json").stdout)["metadata"]["epoch"] == "seven"


@pytest.mark.parametrize("config", [None, {"vocab_size": "ten"}, {"hidden_size": 8}])
def test_a_checkpoint_whose_config_is_unusable_is_one_line(corpus, tmp_path, config):
    path = make_model_file(tmp_path / "bad.pt", mutate=lambda blob: blob.update(config=config))
    assert "unusable model config" in one_line_error(invoke("info", "--model", path))
    message = one_line_error(invoke("train", *TINY, "--corpus", corpus, "--init-from", path, "--out", tmp_path / "o"))
    assert "unusable model config" in message


INTERRUPTER = textwrap.dedent("""
    import builtins, os, runpy, signal, sys
    # As at a terminal: a parent started in the background (`cmd &`) hands its children SIGINT
    # ignored, and Python then installs no KeyboardInterrupt for it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    real_import, target = builtins.__import__, sys.argv[1]
    def interrupting_import(name, *args, **kwargs):
        # Ctrl-C exactly when the start-up first imports this module (no timing luck needed).
        if name == target:
            builtins.__import__ = real_import
            os.kill(os.getpid(), signal.SIGINT)
        return real_import(name, *args, **kwargs)
    builtins.__import__ = interrupting_import
    sys.argv = ["onparse"] + sys.argv[2:]
    runpy.run_module("onparse", run_name="__main__")
""")


@pytest.mark.parametrize("module", ["click", "torch"])   # importing the CLI; then a command
def test_ctrl_c_during_start_up_is_one_line(model_file, module):
    done = subprocess.run([sys.executable, "-c", INTERRUPTER, module, "info", "--model", model_file],
                          capture_output=True, text=True, env=python_env(), timeout=120)
    assert (done.returncode, done.stderr) == (130, "interrupted\n")


# -- 5: debris of kill -9 ----------------------------------------------------------------------
KILLER = textwrap.dedent("""
    import os, signal, sys, torch
    real = torch.save
    def save(obj, handle, *args, **kwargs):
        # Die in the middle of writing last.pt at the end of epoch 2, as kill -9 would.
        if "training" in obj and obj["metadata"]["epoch"] == 2:
            handle.write(b"half a checkpoint")
            handle.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        return real(obj, handle, *args, **kwargs)
    torch.save = save
    from onparse.cli import main
    main(sys.argv[1:])
""")


def test_kill_during_a_save_then_resume(corpus, tmp_path):
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-c", KILLER, "train", *TINY, "--corpus", corpus, "--epochs", "3",
                           "--out", str(out)], capture_output=True, text=True, env=python_env(), timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = [n for n in os.listdir(out) if n.endswith(".tmp")]
    assert len(left) == 1 and left[0].startswith(".onparse-")
    epochs = [r["epoch"] for r in map(strict_json, (out / "metrics.jsonl").read_text().splitlines())
              if r["event"] == "epoch"]
    assert epochs == [1, 2]                          # epoch 2 logged, but last.pt is still epoch 1's
    result = invoke("train", "--out", out, "--resume", "--threads", 1, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "removed 1 temporary file(s)" in result.stderr
    assert sorted(os.listdir(out)) == ["best.pt", "last.pt", "metrics.jsonl"]
    records = [strict_json(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in records if r["event"] == "epoch"] == [1, 2, 3]
    assert load_checkpoint(str(out / "last.pt"))["metadata"]["epoch"] == 3


def test_stale_temp_files_are_those_of_dead_writers(tmp_path):
    dead = 2 ** 22 + 12345                           # above any pid_max in use: not running
    names = [f".onparse-{dead}-abc.tmp", ".onparse-legacy.tmp", f".onparse-{os.getppid()}-live.tmp", "notes.tmp"]
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    assert remove_stale_temp_files(str(tmp_path)) == sorted(names[:2])
    assert sorted(os.listdir(tmp_path)) == sorted(names[2:])


def test_truncate_log_keeps_records_up_to_the_checkpoint(tmp_path):
    log = tmp_path / "metrics.jsonl"
    rows = [{"event": "start", "step": 0}, {"event": "epoch", "epoch": 1, "step": 10},
            {"event": "epoch", "epoch": 2, "step": 20}, {"event": "stop", "step": 25}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"event": "epo')
    assert truncate_log(str(log), 10) == 3
    assert [json.loads(line) for line in log.read_text().splitlines()] == rows[:2]
    assert truncate_log(str(log), 10) == 0


# -- 6: integrity ------------------------------------------------------------------------------
def test_a_flipped_byte_in_the_weights_is_caught(tmp_path):
    path = make_model_file(tmp_path / "m.pt")
    blob = load_checkpoint(path)
    assert blob["metadata"][DIGEST_KEY] == weights_digest(blob["state_dict"])
    data = bytearray(open(path, "rb").read())
    raw = blob["state_dict"]["layers.0.weight_hh"].numpy().tobytes()
    at = data.find(raw[:64])
    assert at > 0
    data[at + 10] ^= 0x40                            # inside a tensor: the file still unpickles
    open(path, "wb").write(bytes(data))
    message = one_line_error(invoke("induce", "-", "--model", path, input="the cat\n"))
    assert "do not match their checksum" in message and "--no-verify" in message
    assert invoke("induce", "-", "--model", path, "--no-verify", input="the cat\n").exit_code == 0
    assert invoke("info", "--model", path).exit_code == 1          # the option lasted one command


def test_a_checkpoint_without_checksum_still_loads(tmp_path):
    path = make_model_file(tmp_path / "old.pt", mutate=lambda blob: blob["metadata"].pop(DIGEST_KEY))
    assert load_model(path).model.config.n_layers == 2


def test_a_vocabulary_shorter_than_vocab_size_is_refused(tmp_path):
    path = make_model_file(tmp_path / "short.pt", mutate=lambda blob: blob.update(vocab=blob["vocab"][:-2]))
    with pytest.raises(OnparseError, match=r"vocabulary has 9 words but the config says vocab_size 11"):
        load_checkpoint(path)


def test_config_sizes_are_bounded_by_the_tensors_before_building(tmp_path, monkeypatch):
    import onparse.lm.model as model_module

    def huge(blob):
        blob["config"]["hidden_size"] = 4_000
    def strided(blob):   # 10^12 elements claimed from 4 bytes
        blob["state_dict"]["decoder_bias"] = torch.zeros(1).expand(10 ** 12)

    path = make_model_file(tmp_path / "huge.pt", mutate=huge)
    assert os.path.getsize(path) < 20_000
    strided_path = make_model_file(tmp_path / "strided.pt", mutate=strided)
    absurd = make_model_file(tmp_path / "absurd.pt", mutate=lambda blob: blob["config"].update(hidden_size=4_000_000))
    not_a_dict = make_model_file(tmp_path / "not-a-dict.pt", mutate=lambda blob: blob.update(state_dict=5))
    deep = make_model_file(tmp_path / "deep.pt", mutate=lambda blob: blob["config"].update(n_layers=40))
    built = []
    monkeypatch.setattr(model_module.ONLSTMLanguageModel, "__init__",
                        lambda self, config: built.append(config) or 1 / 0)
    with pytest.raises(OnparseError, match=r"layers.0.weight_ih is \(36, 8\) in the file, \(18000, 8\)"):
        load_model(path)
    with pytest.raises(OnparseError, match=r"hidden_size 4,000,000 is larger than onparse allows \(65,536\)"):
        load_model(absurd)
    with pytest.raises(OnparseError, match="claims more elements than the file holds"):
        load_model(strided_path)
    # Weights that are not a dict of tensors, and a layer count beyond the tensors, are checked
    # in that order (one line each, before any shape is computed).
    with pytest.raises(OnparseError, match="the weights are not a dict of tensors"):
        load_model(not_a_dict)
    with pytest.raises(OnparseError, match="config says 40 layers, the file holds 10 tensors"):
        load_model(deep)
    assert not built


def test_parameter_shapes_match_the_model():
    config = ModelConfig(vocab_size=13, embedding_size=12, hidden_size=20, n_layers=3, chunk_size=4)
    actual = {name: tuple(t.shape) for name, t in ONLSTMLanguageModel(config).state_dict().items()}
    assert config.parameter_shapes() == actual


def test_a_malicious_pickle_names_what_it_would_run(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo owned",))

    path = tmp_path / "evil.pt"
    torch.save({"format": "onparse-checkpoint", "version": 1, "config": Evil()}, path)
    message = one_line_error(invoke("info", "--model", path))
    assert "unsupported GLOBAL posix.system" in message or "unsupported GLOBAL nt.system" in message


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_checkpoints_follow_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        path = make_model_file(tmp_path / "m.pt")
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o777 == mode


# -- 7: unbounded input --------------------------------------------------------------------------
def test_a_line_without_end_is_an_error_naming_it(model_file, tmp_path):
    gold = tmp_path / "gold.txt"
    gold.write_text("((short line) x)\n")
    path = tmp_path / "long.txt"
    path.write_bytes(b"short line\n" + b"x" * 5000 + b"\nafter\n")
    with pytest.raises(OnparseError, match=r"long.txt line 2: longer than 1,000 bytes; pass --max-line-bytes"):
        list(read_lines(str(path), max_line_bytes=1000))
    assert len(list(read_lines(str(path), max_line_bytes=5000))) == 3     # exactly the limit is fine
    result = invoke("induce", path, "--model", model_file, "--max-line-bytes", 1000)
    assert "line 2: longer than 1,000 bytes" in one_line_error(result)
    assert invoke("induce", path, "--model", model_file, "--max-line-bytes", 10000).exit_code == 0
    scored = invoke("eval", "--gold", gold, path, "--max-line-bytes", 1000)
    assert "line 2: longer than 1,000 bytes" in one_line_error(scored)


def test_dev_zero_is_refused_in_bounded_memory(model_file):
    if not os.path.exists("/dev/zero"):
        pytest.skip("needs /dev/zero")
    message = one_line_error(invoke("induce", "/dev/zero", "--model", model_file))
    assert "/dev/zero line 1: longer than 1,000,000 bytes" in message


# -- 8: smaller defects --------------------------------------------------------------------------
def test_show_never_draws_over_the_model_file(model_file):
    before = open(model_file, "rb").read()
    result = invoke("show", "the", "cat", "--model", model_file, "--png", model_file)
    assert result.exit_code == 2 and "is the model file" in result.output
    assert open(model_file, "rb").read() == before


def test_show_layer_out_of_range_exits_2(model_file):
    result = invoke("show", "the", "cat", "--model", model_file, "--layer", 7)
    assert result.exit_code == 2 and "layer 7 does not exist" in result.output


def test_per_sentence_never_overwrites_an_input_and_is_checked_first(tmp_path, monkeypatch):
    import onparse.scores.predicted as predicted

    gold = tmp_path / "gold.txt"
    gold.write_text("((the cat) (sat down))\n")
    pred = tmp_path / "pred.txt"
    pred.write_text("(the (cat (sat down)))\n")
    for target, what in ((pred, "prediction file"), (gold, "gold file")):
        result = invoke("eval", "--gold", gold, pred, "--per-sentence", target)
        assert result.exit_code == 2 and f"is the {what}" in result.output
    assert pred.read_text() == "(the (cat (sat down)))\n" and gold.read_text() == "((the cat) (sat down))\n"
    scored = []
    monkeypatch.setattr(predicted, "score_text", lambda *a, **k: scored.append(1))
    result = invoke("eval", "--gold", gold, pred, "--per-sentence", tmp_path / "missing" / "per.jsonl")
    assert result.exit_code == 2 and "cannot write" in result.output and not scored
    baseline = invoke("baseline", "--gold", gold, "--baseline", "right", "--score", "--per-sentence", gold)
    assert baseline.exit_code == 2 and "is the gold file" in baseline.output


def test_closed_standard_streams(tmp_path):
    """`induce - <&-` is a one-line error; `induce FILE 2>&-` and `train ... 2>&-` run and
    write everything (a closed stderr must not hand its descriptor to a checkpoint)."""
    import os
    import subprocess
    import sys

    from conftest import write_corpus

    def without_stderr(*args):
        return subprocess.run([sys.executable, "-m", "onparse", *args], stdout=subprocess.PIPE, text=True,
                              timeout=300, preexec_fn=lambda: os.close(2), cwd=tmp_path)

    no_stdin = subprocess.run([sys.executable, "-m", "onparse", "induce", "-"], capture_output=True, text=True,
                              timeout=120, preexec_fn=lambda: os.close(0))
    assert no_stdin.returncode == 1
    assert no_stdin.stderr == "error: standard input is closed; pass a FILE instead of -\n"
    corpus = write_corpus(tmp_path / "toy.txt")
    trained = without_stderr("train", "--preset", "tiny", "--threads", "1", "--corpus", corpus, "--epochs", "1",
                             "--out", "run")
    assert trained.returncode == 0
    assert sorted(os.listdir(tmp_path / "run")) == ["best.pt", "last.pt", "metrics.jsonl"]
    (tmp_path / "one.txt").write_text("the cat sat\n")
    induced = without_stderr("induce", "one.txt", "-m", "run")
    assert induced.returncode == 0 and induced.stdout.count("\n") == 1 and "cat" in induced.stdout


def test_a_sentence_too_long_to_average_never_stops_the_stream(tmp_path, monkeypatch):
    """Averaged members over a line longer than the averaging limit: that line gets the first
    member's tree, every other line its average, one note on stderr, exit 0, no line lost."""
    import onparse.trees.average as average
    from onparse.induce import format_tree

    monkeypatch.setattr(average, "MAX_WORDS", 12)
    words = "the cat sat on a mat and the dog barked at it".split()
    _, _, path = save_tiny_checkpoint(tmp_path / "m.pt", words, seed=4)
    long_line = " ".join(words * 2)                                   # 24 words
    lines = ["the cat sat on a mat", long_line, "the dog barked"]
    both = CliRunner().invoke(main, ["induce", "-", "-m", path, "--layer", "1,2"], input="\n".join(lines) + "\n")
    assert both.exit_code == 0, both.output
    out = both.stdout.splitlines()
    assert len(out) == 3
    first = CliRunner().invoke(main, ["induce", "-", "-m", path, "--layer", "1"], input=long_line + "\n")
    assert out[1] == first.stdout.strip()                             # layer 1: the first member
    assert both.stderr == ("note: 1 sentence(s) of more than 12 words were too long to average: each got its "
                           "first member's tree\n")
    from onparse.api import load

    averaged = load(path, "cpu", layers=[1, 2])
    assert [out[0], out[2]] == [format_tree(t, "brackets") for t in averaged.trees([lines[0].split(), lines[2].split()])]


def test_a_reader_that_goes_away_stops_the_printing_not_the_training(corpus, tmp_path):
    """`onparse train ... 2>&1 | head -1`: every epoch is trained, logged and saved."""
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "onparse", "train", "--preset", "tiny", "--threads", "1",
                             "--corpus", corpus, "--epochs", "3", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout.readline().startswith(b"training: ")
    proc.stdout.close()                                   # what `head -1` does after one line
    assert proc.wait(timeout=300) == 0
    epochs = [json.loads(line)["epoch"] for line in (out / "metrics.jsonl").read_text().splitlines()
              if json.loads(line)["event"] == "epoch"]
    assert epochs == [1, 2, 3]
    assert load_checkpoint(str(out / "last.pt"))["training"]["schedule"]["epoch"] == 3


def test_no_output_option_replaces_a_model_without_force(tmp_path):
    """A typo that names another run's checkpoint as an output file is a usage error, whichever
    run the file belongs to; --force replaces it."""
    words = "the cat sat".split()
    _, _, model = save_tiny_checkpoint(tmp_path / "a.pt", words, seed=1)
    (tmp_path / "other").mkdir()
    _, _, other = save_tiny_checkpoint(tmp_path / "other" / "last.pt", words, seed=2)
    before = open(other, "rb").read()
    gold = tmp_path / "gold.txt"
    gold.write_text("((the cat) sat)\n")
    runs = [["show", "the", "cat", "sat", "-m", model, "--svg", other],
            ["eval", "--gold", str(gold), "-m", model, "--per-sentence", other],
            ["baseline", "--gold", str(gold), "--baseline", "right", "--score", "--per-sentence", other]]
    for args in runs:
        got = CliRunner().invoke(main, args)
        assert got.exit_code == 2, (args, got.output)
        assert f"{other} holds an onparse model; writing there would destroy it (pass --force to replace it)" in \
            " ".join(got.output.split()), got.output
        assert open(other, "rb").read() == before
    forced = CliRunner().invoke(main, ["eval", "--gold", str(gold), "-m", model, "--per-sentence", other, "--force"])
    assert forced.exit_code == 0, forced.output
    assert open(other, "rb").read() != before


@pytest.mark.parametrize("args", [["baseline", "--gold", "{zero}", "--baseline", "right", "--score"],
                                  ["eval", "--gold", "{zero}", "{pred}"],
                                  ["gold-text", "--gold", "{zero}"],
                                  ["gold-text", "--gold", "wsj", "--ptb-root", "{root}"],
                                  ["plot-log", "{zero}"]])
def test_endless_files_are_read_in_bounded_pieces(args, tmp_path):
    """/dev/zero as a gold file, a log, or a section file of --ptb-root: a one-line error
    naming the line, in bounded memory (the process may not grow past 3 GB)."""
    import resource

    section = tmp_path / "wsj" / "00"
    section.mkdir(parents=True)
    os.symlink("/dev/zero", section / "wsj_0001.mrg")
    pred = tmp_path / "pred.txt"
    pred.write_text("(a b)\n")
    args = [a.format(zero="/dev/zero", pred=pred, root=tmp_path / "wsj") for a in args]

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    done = subprocess.run([sys.executable, "-m", "onparse", *args], capture_output=True, text=True, timeout=120,
                          preexec_fn=cap)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "line 1: longer than 1,000,000 bytes" in done.stderr, done.stderr


def test_outputs_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """A full disk in the middle of --per-sentence or a figure leaves the old file as it was
    (or none), and no temporary file; the error is one line."""
    import errno

    import onparse.scores.reports as reports

    gold = tmp_path / "gold.txt"
    gold.write_text("((the cat) sat)\n(a (dog barked))\n")
    target = tmp_path / "per.jsonl"
    target.write_text("the good old file\n")

    def full_disk(result, stream):
        stream.write('{"half": ')
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(reports, "write_per_sentence", full_disk)
    got = CliRunner().invoke(main, ["baseline", "--gold", str(gold), "--baseline", "right", "--score",
                                    "--per-sentence", str(target)])
    assert got.exit_code == 1 and got.output.endswith(f"error: cannot write {target}: No space left on device\n")
    assert target.read_text() == "the good old file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold.txt", "per.jsonl"]
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    def half_figure(self, path, **kwargs):
        with open(path, "w") as handle:
            handle.write("<svg")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", half_figure)
    words = "the cat sat".split()
    _, _, model = save_tiny_checkpoint(tmp_path / "m.pt", words)
    figure = tmp_path / "fig.svg"
    got = CliRunner().invoke(main, ["show", "the", "cat", "sat", "-m", model, "--svg", str(figure)])
    assert got.exit_code == 1 and "No space left on device" in got.output
    assert not figure.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["gold.txt", "m.pt", "per.jsonl"]


@pytest.mark.parametrize("options, message", [
    (["--hidden-size", "1000000000"], "hidden_size 1,000,000,000 is larger than onparse allows (65,536)"),
    (["--n-layers", "100000000"], "n_layers 100,000,000 is larger than onparse allows (64)"),
    (["--hidden-size", "60000", "--embedding-size", "60000"], "parameters is larger than onparse allows"),
])
def test_sizes_are_checked_before_anything_is_allocated(corpus, tmp_path, options, message):
    got = CliRunner().invoke(main, ["train", "--preset", "tiny", "--corpus", corpus, *options,
                                    "--out", str(tmp_path / "run")])
    assert got.exit_code == 2 and message in got.output and not (tmp_path / "run").exists()


def test_a_checkpoint_with_absurd_sizes_is_one_line_on_info(tmp_path):
    _, _, path = save_tiny_checkpoint(tmp_path / "m.pt", ["a", "b"])
    blob = torch.load(path, weights_only=True)
    blob["config"]["n_layers"] = 10 ** 12
    torch.save(blob, path)
    got = CliRunner().invoke(main, ["info", "-m", path])
    assert got.exit_code == 1
    assert got.output == f"error: {path}: unusable model config (n_layers 1,000,000,000,000 is larger than onparse " \
                         "allows (64))\n"


def test_a_leftover_world_size_is_one_line(corpus, tmp_path, monkeypatch):
    for name in ("RANK", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WORLD_SIZE", "2")
    got = CliRunner().invoke(main, ["train", "--preset", "tiny", "--corpus", corpus, "--threads", "1",
                                    "--out", str(tmp_path / "run")])
    assert got.exit_code == 1
    assert got.output == ("error: WORLD_SIZE=2 asks for a distributed run, but RANK, MASTER_ADDR, MASTER_PORT are "
                          "not set: start the run with torchrun, or unset WORLD_SIZE for a single process\n")


def test_leftover_torchrun_variables_time_out_instead_of_waiting_forever(corpus, tmp_path):
    env = dict(os.environ, WORLD_SIZE="2", RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT="29577",
               ONPARSE_JOIN_TIMEOUT="3")
    done = subprocess.run([sys.executable, "-m", "onparse", "train", "--preset", "tiny", "--corpus", corpus,
                           "--threads", "1", "--out", str(tmp_path / "run")], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("error: cannot join the distributed run (WORLD_SIZE=2, RANK=0, "
                                  "MASTER_ADDR=127.0.0.1, MASTER_PORT=29577): ")


def test_one_reading_rule_bom_accepted_invalid_utf8_named(tmp_path):
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbf((the cat) sat)\n")
    assert CliRunner().invoke(main, ["gold-text", "--gold", str(bom)]).stdout == "the cat sat\n"
    scored = CliRunner().invoke(main, ["eval", "--gold", str(bom), str(bom), "--json"])
    assert scored.exit_code == 0 and json.loads(scored.stdout)["sentence_f1_onlstm"]["f1"] == 1.0
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"((the cat) sat)\n(a \xff)\n")
    got = CliRunner().invoke(main, ["gold-text", "--gold", str(bad)])
    assert got.exit_code == 1
    assert got.output == f"error: gold file {bad} line 2: not UTF-8 text (byte 0xff); convert the file to UTF-8\n"
    pred = CliRunner().invoke(main, ["eval", "--gold", str(bom), str(bad)])
    assert pred.exit_code == 1 and pred.output.endswith(f"{bad} line 2: not UTF-8 text (byte 0xff); "
                                                        "convert the file to UTF-8\n")


def test_metadata_names_no_file_to_read_and_prints_no_control_characters(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the cat sat\n" * 50)
    _, _, path = save_tiny_checkpoint(tmp_path / "m.pt", ["the", "cat", "sat"],
                                      metadata={"corpus": {"source": str(secret), "format": "text", "valid": None,
                                                           "test": None},
                                                "recipe": "ring\x07 the bell \x1b[31mred"})
    got = CliRunner().invoke(main, ["perplexity", "-m", path])
    assert got.exit_code == 1 and "onparse opens no path that a model names" in got.output
    info = CliRunner().invoke(main, ["info", "-m", path])
    assert info.exit_code == 0 and "recipe: ring the bell [31mred\n" in info.stdout
    assert not any(ord(ch) < 32 and ch != "\n" for ch in info.stdout)


def test_small_ones_empty_out_bad_int8_int32_and_a_named_vocabulary(corpus, tmp_path):
    got = CliRunner().invoke(main, ["train", "--preset", "tiny", "--corpus", corpus, "--out", ""])
    assert got.exit_code == 2 and "is empty: name a folder" in got.output
    _, _, path = save_tiny_checkpoint(tmp_path / "m.pt", ["the", "cat", "sat"])
    blob = torch.load(path, weights_only=True)
    for name, change in (("int32", lambda b: b["state_dict"].__setitem__(
                             "embedding.weight", b["state_dict"]["embedding.weight"].to(torch.int32))),
                         ("scale", lambda b: (b["state_dict"].__setitem__(
                             "embedding.weight", b["state_dict"]["embedding.weight"].to(torch.int8)),
                             b["state_dict"].__setitem__("embedding.weight:int8-scale", torch.ones(2)))),
                         ("vocab", lambda b: b.__setitem__("vocab", ["the"] * len(b["vocab"])))):
        damaged = {**blob, "state_dict": dict(blob["state_dict"]), "metadata": {}}
        change(damaged)
        target = tmp_path / f"{name}.pt"
        torch.save(damaged, target)
        out = CliRunner().invoke(main, ["induce", "-", "-m", str(target)], input="the cat\n")
        assert out.exit_code == 1 and out.output.startswith(f"error: {target}: "), out.output
        assert {"int32": "is torch.int32, not floating point", "scale": "expected int8 with",
                "vocab": "vocabulary has duplicate words"}[name] in out.output


@pytest.mark.parametrize("args, option", [
    (["induce", "-", "--max-line-bytes", "9223372036854775807"], "--max-line-bytes"),
    (["train", "--preset", "tiny", "--seed", "18446744073709551616"], "--seed"),
    (["train", "--preset", "tiny", "--threads", "99999999999999999999"], "--threads"),
    (["train", "--preset", "tiny", "--batch-size", "99999999999999999999"], "--batch-size"),
    (["baseline", "--gold", "wsj10", "--baseline", "random", "--seed", "-1"], "--seed"),
])
def test_integer_options_have_ranges(args, option, tmp_path):
    got = CliRunner().invoke(main, args + (["--out", str(tmp_path / "run")] if args[0] == "train" else []),
                             input="a b\n")
    assert got.exit_code == 2 and f"Invalid value for '{option}'" in got.output and "is not in the range" in \
        got.output, got.output
    assert not (tmp_path / "run").exists()


def _read_pipe_in_background(path):
    """Start a reader of the named pipe ``path``; returns the thread and the list its bytes go to."""
    import threading

    got = []
    thread = threading.Thread(target=lambda: got.append(open(path, "rb").read()), daemon=True)
    thread.start()
    return thread, got


def test_outputs_go_straight_into_a_pipe_or_device(tmp_path):
    """A model file or a report written to a named pipe (or /dev/null, /dev/full) goes into it: a
    temporary file renamed onto it would replace the pipe or the device with a regular file."""
    import io
    import stat

    from onparse.files.checkpoint import write_atomically
    from onparse.files.safeio import atomic_output

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    thread, got = _read_pipe_in_background(pipe)
    write_atomically(str(pipe), {"weights": torch.arange(3)})
    thread.join(timeout=20)
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert torch.equal(torch.load(io.BytesIO(got[0]), weights_only=True)["weights"], torch.arange(3))
    thread, got = _read_pipe_in_background(pipe)
    with atomic_output(str(pipe)) as target, open(target, "w", encoding="utf-8") as handle:
        handle.write("a report\n")
    thread.join(timeout=20)
    assert stat.S_ISFIFO(os.stat(pipe).st_mode) and got == [b"a report\n"]


# -- issue 55, low items ----------------------------------------------------------------------------

def test_a_checkpoint_inside_an_epoch_records_the_epochs_time_so_far(corpus, tmp_path, monkeypatch):
    # Mid-epoch last.pt (--checkpoint-every) stored seconds 0.0, so a run resumed from it
    # reported its epoch's words per second wrongly.
    saved = []
    real = train_module._Run._save_last

    def probe(self):
        saved.append((self.loop.schedule.position, self.loop.schedule.epoch_time))
        real(self)
    monkeypatch.setattr(train_module._Run, "_save_last", probe)
    result = invoke("train", *TINY, "--corpus", corpus, "--epochs", 1, "--checkpoint-every", "0.001",
                    "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    inside = [seconds for position, seconds in saved if position > 0]
    assert inside and all(seconds > 0 for seconds in inside)
    assert [s for _, s in saved[:-1]] == sorted(s for _, s in saved[:-1])     # it grows through the epoch


def test_a_corpus_that_is_no_regular_file_is_read_not_called_missing(tmp_path):
    result = invoke("train", *TINY, "--corpus", os.devnull, "--out", tmp_path / "o")
    assert result.exit_code == 1 and "not found" not in result.output
    assert f"corpus {os.devnull} is empty" in result.output
    folder = invoke("train", *TINY, "--corpus", tmp_path, "--out", tmp_path / "o")
    assert folder.exit_code == 1 and f"corpus {tmp_path} is a folder" in folder.output


def test_a_corpus_of_one_sentence_is_named_so(tmp_path):
    one = tmp_path / "one.txt"
    one.write_text("the cat sat on the mat\n")
    result = invoke("train", *TINY, "--corpus", one, "--out", tmp_path / "o")
    assert result.exit_code == 1 and "corpus has only 1 sentence;" in result.output


def test_punkt_on_no_text_is_an_error(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = invoke("punkt", empty, "--out", tmp_path / "p.json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output == f"error: {empty} holds no text to learn from\n"
    assert not (tmp_path / "p.json").exists()


def huge_weight_grammar(path, scale):
    """A tiny grammar file whose weights are all multiplied by ``scale``, checksum valid."""
    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.file import save_grammar
    from onparse.grammar.model import NeuralPCFG

    vocab = ["<unk>", "<eos>", *WORDS]
    model = NeuralPCFG(GrammarConfig.preset("tiny", len(vocab)))
    state = {k: v * scale for k, v in model.state_dict().items()}
    save_grammar(path, config=model.config.to_dict(), vocab=vocab, state_dict=state)
    return str(path)


def test_grammar_weights_whose_rules_overflow_are_refused_at_load(tmp_path):
    """Issue 55.11: weights finite but huge (x 1e30, checksum valid) give rules of NaN; every
    command refuses the file in one line (exit 1) instead of printing nan, inf or chains."""
    import onparse

    path = huge_weight_grammar(tmp_path / "huge.pt", 1e30)
    with pytest.raises(OnparseError, match="rule probabilities are not finite") as err:
        onparse.load(path, "cpu")
    assert "\n" not in str(err.value)
    text = tmp_path / "text.txt"
    text.write_text("the cat sat down\non a mat\n")
    for args in (["grammar", "-m", path], ["induce", "-m", path, "-q", str(text)],
                 ["perplexity", "-m", path, "--corpus", str(text)]):
        line = one_line_error(invoke(*args))
        assert "rule probabilities are not finite" in line, args
    assert onparse.load(huge_weight_grammar(tmp_path / "ok.pt", 2.0), "cpu") is not None


def test_info_minutes_of_training_skip_non_finite_times(tmp_path):
    """Issue 55, low: an epoch record whose time is NaN does not make '(nan min of training)'."""
    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.file import save_grammar
    from onparse.grammar.model import NeuralPCFG

    vocab = ["<unk>", "<eos>", *WORDS]
    model = NeuralPCFG(GrammarConfig.preset("tiny", len(vocab)))
    epochs = [{"epoch": 1, "valid_ppl": 40.0, "epoch_time_s": float("nan")},
              {"epoch": 2, "valid_ppl": 30.0, "epoch_time_s": 120.0}]
    save_grammar(tmp_path / "g.pt", config=model.config.to_dict(), vocab=vocab, state_dict=model.state_dict(),
                 metadata={"epochs": epochs, "epoch": 2, "valid_ppl": 30.0})
    result = invoke("info", "--model", tmp_path / "g.pt")
    assert result.exit_code == 0, result.output
    assert "nan" not in result.stdout and "(2.0 min of training)" in result.stdout

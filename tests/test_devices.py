"""One device rule and one thread setting for every command and the API."""
import os

import pytest
import torch

import onparse
from onparse.files.checkpoint import save_checkpoint
from onparse.text.corpora import make_spec
from onparse.devices import resolve_device, torch_threads
from onparse.errors import OnparseError
from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
from onparse.lm.training.config import PRESETS
from onparse.training.options import RunOptions
from onparse.lm.training.train import train
from onparse.text.vocab import Vocabulary


@pytest.fixture(scope="module")
def model_and_text(tmp_path_factory):
    folder = tmp_path_factory.mktemp("devices")
    vocab = Vocabulary.build([["the", "cat", "sat"]])
    config = ModelConfig(vocab_size=len(vocab), embedding_size=8, hidden_size=8, n_layers=2, chunk_size=4)
    path = folder / "m.pt"
    save_checkpoint(str(path), config=config.to_dict(), vocab=vocab, state_dict=ONLSTMLanguageModel(config).state_dict())
    text = folder / "t.txt"
    text.write_text("the cat sat\n" * 40, encoding="utf-8")
    return str(path), str(text)


def device_errors(name, model, text, tmp_path):
    """The message of each entry point that takes a device, for the device ``name``."""
    messages = []
    for attempt in (lambda: resolve_device(name),
                    lambda: onparse.load(model, name),
                    lambda: train(PRESETS["tiny"], make_spec(text), RunOptions(out=str(tmp_path / "o"), device=name))):
        with pytest.raises(OnparseError) as caught:
            attempt()
        messages.append(str(caught.value))
    return messages


@pytest.mark.parametrize("name", ["meta", "mps", "tpu-ish"])
def test_an_unknown_device_has_one_message_everywhere(model_and_text, tmp_path, name):
    messages = device_errors(name, *model_and_text, tmp_path)
    assert messages == [f"unknown device {name!r}: onparse runs on auto, cpu, cuda, cuda:N"] * 3
    assert not (tmp_path / "o").exists()           # refused before anything was written


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
@pytest.mark.parametrize("name", ["cuda", "cuda:1"])
def test_a_missing_gpu_has_one_message_everywhere(model_and_text, tmp_path, name):
    messages = device_errors(name, *model_and_text, tmp_path)
    assert messages == [f"--device {name}: this torch sees no CUDA device (use --device cpu or auto)"] * 3


def test_cpu_and_auto():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")


def test_torch_threads_sets_and_restores():
    before = torch.get_num_threads()
    other = 2 if before == 1 else 1
    with torch_threads(other):
        assert torch.get_num_threads() == other
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError, match="boom"):
        with torch_threads(other):
            raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(OnparseError, match="threads must be at least 1, got 0"):
        with torch_threads(0):
            pass


def test_threads_far_above_the_cores_are_capped_with_a_note(capsys):
    """Issue 41.2: `--threads 4096` crashed distill and froze the machine under train.  Every
    command's --threads goes through torch_threads, which caps it at the cores this process may
    use and says so in one line."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    before = torch.get_num_threads()
    with torch_threads(4096):
        assert torch.get_num_threads() == cores
    assert torch.get_num_threads() == before
    err = capsys.readouterr().err
    assert err == f"note: --threads 4096 is more than the {cores} CPU core(s) this process may use: using {cores}\n"
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert capsys.readouterr().err == ""


def test_training_gives_its_threads_back_even_when_it_fails(model_and_text, tmp_path):
    _, text = model_and_text
    before = torch.get_num_threads()
    other = 2 if before == 1 else 1
    with pytest.raises(OnparseError, match="unknown device"):
        train(PRESETS["tiny"], make_spec(text), RunOptions(out=str(tmp_path / "o"), device="meta", threads=other))
    assert torch.get_num_threads() == before


def test_the_command_line_makes_openmp_threads_sleep_unless_told_otherwise():
    """benchmarks/bench_threads.py: spinning threads halve training on a busy machine."""
    import subprocess
    import sys

    code = "import os, onparse.cli; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    default = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert default.stdout.strip() == "PASSIVE", default.stderr
    told = subprocess.run([sys.executable, "-c", code], env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
                          capture_output=True, text=True, timeout=60)
    assert told.stdout.strip() == "ACTIVE", told.stderr

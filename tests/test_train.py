"""The trainer: configs, the schedule's pieces, training that lowers perplexity, exact resume,
averaged SGD, Ctrl-C, and DistributedDataParallel with two CPU processes (gloo)."""
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections import Counter

import pytest
import torch

from conftest import write_corpus

from onparse.lm.file import load_checkpoint
from onparse.lm.kind import load_model
from onparse.text.corpora import load_corpus, make_spec
from onparse.errors import OnparseError
from onparse.lm.training.config import PRESETS, TrainConfig, preset
from onparse.training.options import RunOptions
from onparse.lm.training.recipe import ParameterAverager, objective, should_start_averaging, window_length
from onparse.lm.training.train import train



def tiny(**overrides):
    return PRESETS["tiny"].with_overrides(overrides)


def run(corpus, out, config=None, **options):
    options.setdefault("threads", 1)        # a model this small only loses from more threads
    return train(config or tiny(), make_spec(corpus), RunOptions(out=str(out), **options), "tiny")


def events(out, kind=None):
    with open(os.path.join(out, "metrics.jsonl"), encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return [r for r in rows if kind is None or r["event"] == kind]


def assert_same_tensors(a, b):
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("corpus") / "toy.txt")


# -- configuration ---------------------------------------------------------------------------
def test_presets_and_overrides():
    assert preset("paper") == TrainConfig()
    paper = PRESETS["paper"]
    assert (paper.embedding_size, paper.hidden_size, paper.n_layers, paper.chunk_size) == (400, 1150, 3, 10)
    assert (paper.batch_size, paper.bptt, paper.lr, paper.clip, paper.weight_decay) == (20, 70, 30.0, 0.25, 1.2e-6)
    assert (paper.alpha, paper.beta, paper.nonmono, paper.epochs) == (2.0, 1.0, 5, 1000)
    assert paper.model_config(10000).dropconnect == 0.45
    small = PRESETS["small"]
    assert (small.embedding_size, small.hidden_size, small.n_layers, small.chunk_size, small.batch_size) == \
        (200, 400, 3, 10, 20)
    assert tiny(lr=3.0).lr == 3.0 and tiny(lr=3.0).bptt == PRESETS["tiny"].bptt
    assert TrainConfig.from_dict(PRESETS["small"].to_dict()) == PRESETS["small"]
    with pytest.raises(OnparseError, match="unknown preset 'huge'"):
        preset("huge")


@pytest.mark.parametrize("bad,message", [
    ({"colour": 1}, "unknown training options: colour"),
    ({"dropout_input": 1.0}, "dropout_input must be a probability"),
    ({"hidden_size": 30, "chunk_size": 4}, "not a multiple of chunk_size"),
    ({"batch_size": 0}, "batch_size must be at least 1"),
    ({"lr": 0.0}, "lr must be positive"),
    ({"epochs": 2.5}, "epochs must be an integer"),
])
def test_bad_configs(bad, message):
    with pytest.raises(ValueError, match=message):
        PRESETS["tiny"].with_overrides(bad)


def test_from_dict_rejects_unknown_keys():
    with pytest.raises(ValueError, match="unknown training config keys: speed"):
        TrainConfig.from_dict({**TrainConfig().to_dict(), "speed": 3})


def test_the_model_config_is_derived_from_the_training_config():
    from dataclasses import fields

    from onparse.lm.model import ModelConfig

    # Every field of the model's config but the vocabulary size comes from the training config,
    # and the paper's defaults agree on both sides.
    shared = [f.name for f in fields(ModelConfig) if f.name != "vocab_size"]
    assert set(shared) <= {f.name for f in fields(TrainConfig)}
    paper = TrainConfig().model_config(123)
    assert paper == ModelConfig(vocab_size=123)
    odd = tiny(dropout_hidden=0.2, dropconnect=0.3, chunk_size=8).model_config(50)
    assert {name: getattr(odd, name) for name in shared} == \
        {name: getattr(tiny(dropout_hidden=0.2, dropconnect=0.3, chunk_size=8), name) for name in shared}


# -- pieces of the schedule ------------------------------------------------------------------
def test_non_monotone_trigger():
    assert not should_start_averaging([], 9.0, 0)
    assert should_start_averaging([5.0], 5.1, 0)                 # nonmono 0: first non-improvement
    assert not should_start_averaging([5.0], 4.9, 0)
    history = [5.0, 4.0, 4.5, 4.4, 4.3, 4.2, 4.1]
    # Best 4.0 was 6 checks ago: with nonmono 5, a check worse than it switches ...
    assert should_start_averaging(history, 4.05, 5)
    assert not should_start_averaging(history, 3.9, 5)         # ... an improvement does not
    assert not should_start_averaging(history[:5], 4.05, 5)     # fewer than nonmono + 1 checks
    # With nonmono 6 the best of the earlier checks is 5.0.
    assert not should_start_averaging(history, 4.05, 6)


def test_window_lengths():
    rng = random.Random(0)
    lengths = [window_length(rng, 70) for _ in range(4000)]
    assert min(lengths) >= 5
    near_half = sum(1 for x in lengths if x < 50)
    assert 0.03 < near_half / len(lengths) < 0.07               # bptt/2 with probability 0.05
    full = [x for x in lengths if x >= 50]
    assert abs(sum(full) / len(full) - 69.5) < 0.5                # int() of N(70, 5)
    rng_a, rng_b = random.Random(5), random.Random(5)
    assert [window_length(rng_a, 10) for _ in range(50)] == [window_length(rng_b, 10) for _ in range(50)]
    assert min(window_length(rng_a, 3) for _ in range(100)) == 5


def test_parameter_averager_is_the_running_mean():
    torch.manual_seed(0)
    module = torch.nn.Linear(3, 2)
    averager = ParameterAverager(module)
    snapshots = []
    for _ in range(5):
        with torch.no_grad():
            for p in module.parameters():
                p.add_(torch.randn_like(p))
        averager.update()
        snapshots.append({n: p.detach().clone() for n, p in module.named_parameters()})
    raw = {n: p.detach().clone() for n, p in module.named_parameters()}
    mean = {n: torch.stack([s[n] for s in snapshots]).mean(0) for n in raw}
    averaged = averager.state_dict(module)
    for n in raw:
        torch.testing.assert_close(averaged[n], mean[n])
    with averager.swapped_in():
        for n, p in module.named_parameters():
            torch.testing.assert_close(p.detach(), mean[n])
    assert_same_tensors(dict(module.named_parameters()), raw)     # put back exactly


def test_objective_adds_ar_and_tar_by_hand():
    from onparse.lm.model import LMOutput

    class Fixed:
        def loss(self, output, targets):
            return torch.tensor(1.5)

    output = torch.tensor([[[1.0, 2.0]], [[3.0, 0.0]]])          # (T=2, B=1, E=2)
    raw = torch.tensor([[[1.0, 1.0]], [[2.0, 3.0]]])
    out = LMOutput(output, raw, [], torch.zeros(1, 2, 2, 1))
    loss, ce = objective(Fixed(), out, None, alpha=2.0, beta=1.0)
    # AR: 2 * mean(1, 4, 9, 0) = 7; TAR: mean((2-1)^2, (3-1)^2) = 2.5
    assert ce.item() == 1.5 and loss.item() == pytest.approx(1.5 + 7.0 + 2.5)


# -- training --------------------------------------------------------------------------------
def test_tiny_preset_learns(corpus, tmp_path):
    result = run(corpus, tmp_path / "run")
    ppl = [e["valid_ppl"] for e in events(result.out, "epoch")]
    assert len(ppl) == PRESETS["tiny"].epochs == result.epochs
    # Better than the unigram distribution of the training text: the model uses the context.
    train_sents = load_corpus(make_spec(corpus)).train
    counts = Counter(w for s in train_sents for w in s + ["<eos>"])
    n = sum(counts.values())
    unigram_ppl = math.exp(-sum(c / n * math.log(c / n) for c in counts.values()))
    assert ppl[-1] < ppl[0] and ppl[-1] < 0.6 * unigram_ppl
    assert result.best_valid_ppl == min(ppl)
    assert result.test_ppl is not None and result.test_ppl < 0.6 * unigram_ppl
    # best.pt is a usable model; checkpoints hold plain values and tensors only.
    loaded = load_model(result.best_path)
    assert loaded.metadata["preset"] == "tiny" and loaded.metadata["corpus"]["source"] == corpus
    blob = torch.load(os.path.join(result.out, "last.pt"), weights_only=True)
    assert set(blob) == {"format", "version", "config", "vocab", "state_dict", "metadata", "training"}
    assert {"optimizer", "schedule", "rng", "config", "corpus"} <= set(blob["training"])
    assert blob["training"]["schedule"]["epoch"] == 3 and blob["training"]["schedule"]["position"] == 0
    assert [e["event"] for e in events(result.out)] == ["start", "epoch", "epoch", "epoch", "stop", "test"]


def test_resume_is_exact_through_averaged_sgd(corpus, tmp_path):
    # nonmono 0 and a high rate: the switch to averaged SGD comes after epoch 3 of 4.
    config = tiny(nonmono=0, lr=20.0, epochs=4)
    whole = run(corpus, tmp_path / "whole", config)
    switches = events(whole.out, "asgd")
    assert len(switches) == 1 and switches[0]["epoch"] < 4
    steps_before = switches[0]["step"]

    # The same run in four pieces: an epoch boundary, mid-epoch within averaging, one more step,
    # then to the end.
    parts = tmp_path / "parts"
    first = run(corpus, parts, config.with_overrides({"epochs": 2}))
    assert first.stop_reason == "epochs" and first.epochs == 2
    mid = run(corpus, parts, config, resume=True, max_steps=steps_before + 5)
    assert mid.stop_reason == "max_steps" and mid.steps == steps_before + 5
    before = load_checkpoint(str(parts / "last.pt"))
    run(corpus, parts, config, resume=True, max_steps=steps_before + 6)
    after = load_checkpoint(str(parts / "last.pt"))
    final = run(corpus, parts, config, resume=True)
    assert final.stop_reason == "epochs" and final.steps == whole.steps

    a = load_checkpoint(os.path.join(whole.out, "last.pt"))
    b = load_checkpoint(str(parts / "last.pt"))
    assert_same_tensors(a["state_dict"], b["state_dict"])
    assert_same_tensors(a["training"]["raw_state_dict"], b["training"]["raw_state_dict"])
    assert a["training"]["schedule"]["val_history"] == b["training"]["schedule"]["val_history"]
    assert_same_tensors(load_checkpoint(os.path.join(whole.out, "best.pt"))["state_dict"],
                        load_checkpoint(str(parts / "best.pt"))["state_dict"])
    assert_same_tensors(dict(whole.model.named_parameters()), dict(final.model.named_parameters()))

    # The checkpoints keep the averaged weights: the mean of the raw weights after each step
    # since the switch.  One step later: avg' = avg + (raw' - avg) / (n + 1).
    n = before["training"]["schedule"]["averaged_steps"]
    assert n == 5 and after["training"]["schedule"]["averaged_steps"] == 6
    assert before["metadata"]["averaged"] is True
    for key, avg in before["state_dict"].items():
        raw_next = after["training"]["raw_state_dict"][key]
        torch.testing.assert_close(after["state_dict"][key], avg + (raw_next - avg) / (n + 1))
        assert not torch.equal(avg, before["training"]["raw_state_dict"][key])


#: The layout of last.pt's "training" dict: runs started by any version resume with any other.
TRAINING_LAYOUT = {
    "config": None, "corpus": None, "preset": None, "init_from": None, "fingerprint": None, "optimizer": None,
    "raw_state_dict": None,
    "schedule": ["epoch", "position", "step", "val_history", "best_loss", "best_epoch", "averaging_since",
                 "averaged_steps", "epoch_time"],
    "rng": ["jitter", "python", "numpy", "ranks"],
    "world_size": None,
}
RANK_LAYOUT = ["torch", "cuda", "hidden", "epoch_loss_sum", "epoch_tokens"]
NUMPY_LAYOUT = ["name", "keys", "pos", "has_gauss", "cached_gaussian"]


def assert_same_values(a, b, path="training"):
    """Equal dicts (keys in the same order), lists, tensors (dtype and values) and plain values."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), path
        for key in a:
            assert_same_values(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_values(x, y, f"{path}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b), path
    else:
        assert type(a) is type(b) and a == b, (path, a, b)


def test_the_training_state_layout_and_its_round_trip(corpus, tmp_path):
    from onparse.lm.training.state import TrainingState

    run(corpus, tmp_path / "r", tiny(nonmono=0, lr=20.0, epochs=4), max_steps=200)   # averaging, mid-epoch
    training = load_checkpoint(str(tmp_path / "r" / "last.pt"))["training"]
    assert list(training) == list(TRAINING_LAYOUT)
    for key, inner in TRAINING_LAYOUT.items():
        if inner is not None:
            assert list(training[key]) == inner, key
    assert list(training["rng"]["numpy"]) == NUMPY_LAYOUT
    assert [list(r) for r in training["rng"]["ranks"]] == [RANK_LAYOUT]
    schedule = training["schedule"]
    assert schedule["step"] == 200 and schedule["position"] > 0 and schedule["averaged_steps"] > 0
    assert training["raw_state_dict"] is not None and training["rng"]["ranks"][0]["hidden"] is not None
    # One to/from-dict pair: reading the state and writing it again changes nothing.
    assert_same_values(TrainingState.from_dict(training).to_dict(), training)


def test_the_loop_state_round_trips_through_last_pt(corpus):
    # capture -> TrainingState.to_dict -> torch.save/load -> from_dict -> restore gives back the loop
    # state, the raw weights and every RNG, without a training run.
    import io

    import numpy as np

    from onparse.lm.model import ONLSTMLanguageModel
    from onparse.lm.training.distributed import Dist
    from onparse.lm.training.state import (LoopState, Schedule, TrainingState, capture, rank_state, restore,
                                           to_cpu)

    config, cpu = tiny(), torch.device("cpu")

    def build(seed):
        torch.manual_seed(seed)
        model = ONLSTMLanguageModel(config.model_config(20))
        return model, torch.optim.SGD(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)

    model, optimizer = build(0)
    schedule = Schedule(epoch=2, position=7, step=50, val_history=[4.0, 3.5], best_loss=3.5, best_epoch=2,
                        averaging_since=2, epoch_time=1.5)
    loop = LoopState(random.Random(3), schedule, ParameterAverager(model),
                     [(torch.randn(4, layer.hidden_size), torch.randn(4, layer.hidden_size)) for layer in model.layers],
                     12.5, 40)
    for _ in range(2):                              # the raw weights move away from their average
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p))
        loop.averager.update()
    loop.jitter.random()
    random.seed(5), np.random.seed(6), torch.manual_seed(7)
    state = capture(loop, model, optimizer, [rank_state(loop, cpu).to_dict()], config=config,
                    corpus=make_spec(corpus), preset="tiny", init_from=None, fingerprint="f")
    buffer = io.BytesIO()
    torch.save({"state_dict": to_cpu(loop.averager.state_dict(model)), "training": state.to_dict()}, buffer)
    draws = (loop.jitter.random(), random.random(), np.random.rand(), torch.rand(3))
    buffer.seek(0)
    blob = torch.load(buffer, weights_only=True)

    again, again_optimizer = build(1)
    random.seed(9), np.random.seed(9), torch.manual_seed(9)
    back = restore(blob, TrainingState.from_dict(blob["training"]), again, again_optimizer, Dist(), cpu,
                   path="last.pt", warn=pytest.fail)
    assert back.schedule == schedule and (back.epoch_loss_sum, back.epoch_tokens) == (12.5, 40)
    assert back.averager.count == 2
    assert_same_tensors(back.averager.avg, loop.averager.avg)
    assert_same_tensors(again.state_dict(), model.state_dict())
    assert all(torch.equal(a, b) for layer, saved in zip(back.hidden, loop.hidden) for a, b in zip(layer, saved))
    again_draws = (back.jitter.random(), random.random(), np.random.rand(), torch.rand(3))
    assert again_draws[:3] == draws[:3] and torch.equal(again_draws[3], draws[3])

    # Resumed by another number of processes: a warning, this rank's part starts afresh.
    warnings = []
    other = restore(blob, TrainingState.from_dict(blob["training"]), again, again_optimizer,
                    Dist(rank=1, world_size=2), cpu, path="last.pt", warn=warnings.append)
    assert len(warnings) == 1 and "not bit-identical" in warnings[0]
    assert other.hidden is None and (other.epoch_loss_sum, other.epoch_tokens) == (0.0, 0)
    assert other.schedule == schedule and other.averager.count == 2


def test_the_loop_sets_every_attribute_in_init(corpus, tmp_path, monkeypatch):
    import onparse.lm.training.train as train_module

    seen = []
    real = train_module._Run.run

    def spy(self):
        before = set(vars(self))
        result = real(self)
        seen.append((before, set(vars(self))))
        return result

    monkeypatch.setattr(train_module._Run, "run", spy)
    run(corpus, tmp_path / "r", tiny(epochs=2), max_steps=90)        # an epoch, then stopped mid-epoch
    run(corpus, tmp_path / "r", tiny(epochs=2), resume=True)         # restored mid-epoch, to the end
    assert len(seen) == 2
    for before, after in seen:
        assert after == before


def test_resume_refuses_changed_settings(corpus, tmp_path):
    run(corpus, tmp_path / "r", max_steps=3)
    with pytest.raises(OnparseError, match="cannot change lr"):
        run(corpus, tmp_path / "r", tiny(lr=1.0), resume=True)
    with pytest.raises(OnparseError, match="already holds a run"):
        run(corpus, tmp_path / "r")
    with pytest.raises(OnparseError, match="nothing to resume"):
        run(corpus, tmp_path / "elsewhere", resume=True)
    other = write_corpus(tmp_path / "other.txt", seed=1)
    with pytest.raises(OnparseError, match="cannot change the corpus"):
        train(tiny(), make_spec(other), RunOptions(out=str(tmp_path / "r"), resume=True, threads=1), "tiny")
    with pytest.raises(OnparseError, match="cannot change the preset"):
        train(tiny(), make_spec(corpus), RunOptions(out=str(tmp_path / "r"), resume=True, threads=1), "small")
    mine = tmp_path / "mine.txt"                       # the same file, another text
    mine.write_text(open(corpus).read())
    run(mine, tmp_path / "m", max_steps=2)
    mine.write_text(open(other).read())
    with pytest.raises(OnparseError, match="changed since the run started"):
        run(mine, tmp_path / "m", resume=True)
    fresh = run(corpus, tmp_path / "r", overwrite=True, max_steps=2)
    # Stopped inside epoch 1: validated at the stop (best.pt), then the stop.
    assert fresh.steps == 2 and [e["event"] for e in events(fresh.out)] == ["start", "valid", "stop"]


def test_init_from_starts_from_the_checkpoint(corpus, tmp_path):
    source = run(corpus, tmp_path / "source", tiny(epochs=2))
    src = load_checkpoint(source.best_path)
    # New text with a word the source never saw: the vocabulary stays the source's (ids must
    # keep their meaning for the copied weights), so the new word is <unk>.
    other = tmp_path / "other.txt"
    other.write_text(open(corpus, encoding="utf-8").read().replace("cat", "zebra"), encoding="utf-8")
    unmoved = run(str(other), tmp_path / "unmoved", tiny(epochs=1), init_from=source.best_path, max_steps=0)
    assert unmoved.steps == 0
    assert_same_tensors({k: v.cpu() for k, v in unmoved.model.state_dict().items()}, src["state_dict"])
    run(str(other), tmp_path / "start", tiny(epochs=1), init_from=source.best_path, max_steps=1)
    blob = load_checkpoint(str(tmp_path / "start" / "last.pt"))
    assert blob["vocab"] == src["vocab"] and "zebra" not in blob["vocab"]
    assert blob["metadata"]["init_from"]["checkpoint"] == os.path.abspath(source.best_path)
    assert blob["metadata"]["init_from"]["epoch"] == 2
    # Training on: the first epoch starts far below where a fresh model's ends, and the origin
    # stays recorded through --resume.
    go_on = run(str(other), tmp_path / "start", tiny(epochs=1), resume=True)
    fresh = run(str(other), tmp_path / "fresh", tiny(epochs=1))
    assert go_on.best_valid_ppl < 0.8 * fresh.best_valid_ppl
    assert load_model(go_on.best_path).metadata["init_from"]["checkpoint"] == os.path.abspath(source.best_path)
    with pytest.raises(OnparseError, match="another shape: hidden_size 32 \\(here 16\\)"):
        run(corpus, tmp_path / "bad", tiny(hidden_size=16), init_from=source.best_path)


def test_max_time_stops_and_saves(corpus, tmp_path):
    result = run(corpus, tmp_path / "run", tiny(epochs=1000), max_time=1.0)
    assert result.stop_reason == "max_time" and result.steps > 0
    schedule = load_checkpoint(str(tmp_path / "run" / "last.pt"))["training"]["schedule"]
    assert schedule["step"] == result.steps and result.epochs < 1000


def test_errors_on_text_too_short(tmp_path):
    path = tmp_path / "short.txt"
    path.write_text("".join(f"w{i}\n" for i in range(20)), encoding="utf-8")
    with pytest.raises(OnparseError, match="training text too short"):
        run(str(path), tmp_path / "out", tiny(batch_size=16))


def test_ctrl_c_saves_and_resumes(corpus, tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "onparse", "train", "--preset", "tiny", "--corpus", corpus, "--out", str(out),
           "--epochs", "1000", "--threads", "1", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / "best.pt").exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "stop requested" in stderr and "--resume" in stderr and "Traceback" not in stderr
    assert "stopped (interrupted)" in stderr and "stopped:" not in stdout      # said once (issue 54.6)
    state = load_checkpoint(str(out / "last.pt"))["training"]["schedule"]
    assert [e["event"] for e in events(str(out))][-1] == "stop"
    resumed = run(corpus, out, tiny(epochs=1000), resume=True, max_steps=state["step"] + 2)
    assert resumed.steps == state["step"] + 2


# -- DistributedDataParallel -----------------------------------------------------------------
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ddp_worker(rank, world, port, corpus, out, dump):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    result = train(tiny(epochs=2), make_spec(corpus), RunOptions(out=out, device="cpu", threads=1), "tiny")
    torch.save({k: v.detach().clone() for k, v in result.model.state_dict().items()}, f"{dump}.{rank}.pt")


def test_ddp_two_cpu_processes(corpus, tmp_path):
    import torch.multiprocessing as mp

    out = str(tmp_path / "ddp")
    dump = str(tmp_path / "params")
    mp.spawn(_ddp_worker, args=(2, _free_port(), corpus, out, dump), nprocs=2, join=True)
    p0 = torch.load(f"{dump}.0.pt", weights_only=True)
    p1 = torch.load(f"{dump}.1.pt", weights_only=True)
    assert_same_tensors(p0, p1)                                    # every rank took the same steps
    # Only rank 0 wrote: the three files, and each event once.
    assert sorted(os.listdir(out)) == ["best.pt", "last.pt", "metrics.jsonl"]
    assert [e["event"] for e in events(out)] == ["start", "epoch", "epoch", "stop", "test"]
    assert events(out, "start")[0]["world_size"] == 2
    last = load_checkpoint(os.path.join(out, "last.pt"))
    assert_same_tensors(last["state_dict"], p0)
    assert len(last["training"]["rng"]["ranks"]) == 2
    r0, r1 = last["training"]["rng"]["ranks"]
    assert not torch.equal(r0["torch"], r1["torch"])              # each rank its own dropout masks

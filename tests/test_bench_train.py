"""The training benchmark times the trainer's own step: its loss is onparse.lm.training.recipe.objective."""
from pathlib import Path

import pytest
import torch

import onparse.lm.training.recipe

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_the_benchmark_step_calls_the_trainer_objective(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_train

    calls = []
    real = onparse.lm.training.recipe.objective

    def spy(model, out, targets, alpha, beta):
        loss, ce = real(model, out, targets, alpha, beta)
        calls.append((alpha, beta, loss.detach().clone()))
        return loss, ce

    monkeypatch.setattr(onparse.lm.training.recipe, "objective", spy)
    c = dict(bench_train.CONFIGS["tiny"], batch=2)
    data = torch.randint(0, c["vocab"], (2 * c["bptt"] + 1, c["batch"]), generator=torch.Generator().manual_seed(0))
    runner = bench_train.OnparseRunner(c, data, "cpu", seed=0)
    losses = [runner.step(), runner.step()]
    assert [(a, b) for a, b, _ in calls] == [(bench_train.ALPHA, bench_train.BETA)] * 2
    assert all(torch.equal(step, seen) for step, (_, _, seen) in zip(losses, calls))

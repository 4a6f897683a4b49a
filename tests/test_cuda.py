"""The GPU path: the fast recurrence, parsing and training on CUDA agree with the CPU.

Skipped on machines without CUDA (CI has none); run on a GPU machine with ``pytest tests/test_cuda.py``.
"""
import json

import pytest
import torch
from click.testing import CliRunner

from conftest import NO_DROPOUT, random_tokens, run_both, tiny_model, write_corpus
from onparse.cli import main

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
CUDA = torch.device("cuda")


@pytest.mark.parametrize("train", [True, False])
def test_fast_path_equals_reference_on_cuda(train):
    """Outputs, distances, states and every gradient, float64, as the CPU test does."""
    model = tiny_model(torch.float64, **NO_DROPOUT).to(CUDA)
    tokens, targets = random_tokens(9, 4).to(CUDA), random_tokens(9, 4, seed=2).to(CUDA)
    (ref, ref_grads, _, ref_loss), (fast, fast_grads, _, fast_loss) = run_both(model, tokens, targets, train)
    assert abs(ref_loss.item() - fast_loss.item()) < 1e-10
    for a, b in ((ref.output, fast.output), (ref.distances, fast.distances), (ref.raw_last, fast.raw_last)):
        assert (a - b).abs().max().item() < 1e-10
    for name in ref_grads:
        assert ref_grads[name].abs().sum() > 0, name
        assert (ref_grads[name] - fast_grads[name]).abs().max().item() < 1e-9, name


def test_cuda_distances_equal_cpu_distances():
    model = tiny_model(torch.float32).eval()
    tokens = random_tokens(30, 7)
    on_cpu = model.distances(tokens)
    on_gpu = model.to(CUDA).distances(tokens.to(CUDA)).cpu()
    assert on_cpu.shape == on_gpu.shape
    assert (on_cpu - on_gpu).abs().max().item() < 1e-5


def test_induce_on_cuda_gives_the_cpu_trees():
    """The bundled model parses the same text to the same trees on both devices."""
    text = "\n".join(["the cat sat on the mat", "", "stocks fell sharply in heavy trading on friday",
                      "it has no bearing on our work force today"] * 20) + "\n"
    runner = CliRunner()
    cpu = runner.invoke(main, ["induce", "-", "--device", "cpu"], input=text)
    gpu = runner.invoke(main, ["induce", "-", "--device", "cuda"], input=text)
    assert cpu.exit_code == 0 and gpu.exit_code == 0, (cpu.output, gpu.output)
    assert cpu.stdout == gpu.stdout
    assert cpu.stdout.count("\n") == text.count("\n")


def test_train_on_cuda_and_resume(tmp_path):
    corpus = write_corpus(tmp_path / "toy.txt")
    args = ["--preset", "tiny", "--corpus", str(corpus), "--device", "cuda", "--no-progress"]
    first = CliRunner().invoke(main, ["train", *args, "--epochs", "2", "--out", str(tmp_path / "run")])
    assert first.exit_code == 0, first.output
    more = CliRunner().invoke(main, ["train", "--out", str(tmp_path / "run"), "--resume", "--epochs", "3",
                                     "--device", "cuda", "--no-progress"])
    assert more.exit_code == 0, more.output
    epochs = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    valid = [e["valid_ppl"] for e in epochs if e["event"] == "epoch"]
    assert len(valid) == 3 and valid[-1] < valid[0]
    # the checkpoint was written from the GPU and loads on the CPU
    ppl = CliRunner().invoke(main, ["perplexity", "--model", str(tmp_path / "run" / "best.pt"),
                                    "--corpus", str(corpus), "--device", "cpu"])
    assert ppl.exit_code == 0, ppl.output


# --- CUDA graphs (onparse.lm.graphs) -------------------------------------------------------------

def forward_backward(model, tokens, targets):
    model.zero_grad()
    torch.manual_seed(3)
    out = model(tokens)
    loss = model.loss(out.output, targets) + (out.raw_last[1:] - out.raw_last[:-1]).pow(2).mean()
    loss.backward()
    return out, {name: p.grad.clone() for name, p in model.named_parameters()}


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_graph_replay_equals_kernel_by_kernel(monkeypatch, dtype, tol):
    """Recorded once, replayed on new inputs (new tokens, new dropout masks, other lengths): the
    same outputs, distances and gradients as launching every kernel."""
    from onparse.lm import cell
    from onparse.lm import graphs
    model = tiny_model(dtype).to(CUDA).train()
    before = cell._GRAPHS.captures
    for steps, seed in ((9, 1), (9, 2), (9, 3), (5, 4), (9, 5)):
        tokens = random_tokens(steps, 4, seed=seed).to(CUDA)
        targets = random_tokens(steps, 4, seed=seed + 10).to(CUDA)
        monkeypatch.setattr(graphs, "ENABLED", True)
        out_g, grads_g = forward_backward(model, tokens, targets)
        monkeypatch.setattr(graphs, "ENABLED", False)
        out_e, grads_e = forward_backward(model, tokens, targets)
        for a, b in ((out_g.output, out_e.output), (out_g.distances, out_e.distances)):
            assert (a - b).abs().max().item() <= tol
        for name in grads_e:
            assert (grads_g[name] - grads_e[name]).abs().max().item() <= tol * max(1.0, grads_e[name].abs().max().item()), name
    # two lengths x (forward, backward) x the layer shapes of TINY (18 -> 18 -> 12 hidden: two shapes)
    assert cell._GRAPHS.captures - before <= 2 * 2 * 3


def test_graph_cache_keeps_within_its_limits():
    from onparse.lm.graphs import GraphCache

    cache = GraphCache(max_graphs=2)
    x = torch.arange(6.0, device=CUDA)
    for k in range(4):
        assert torch.equal(cache.run(k, lambda t, k=k: t * k, (x,)), x * k)
    assert list(cache.graphs) == [2, 3] and cache.captures == 4
    assert torch.equal(cache.run(3, lambda t: t * 3, (x + 1,)), (x + 1) * 3)   # replayed, new input
    assert cache.captures == 4


# --- grammars (onparse.grammar) -------------------------------------------------------------------

def test_grammar_inside_and_marginals_on_cuda_equal_cpu():
    """log Z and the span marginals of one random grammar, float64, on both devices."""
    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.inside import span_marginals
    from onparse.grammar.model import NeuralPCFG

    torch.manual_seed(0)
    model = NeuralPCFG(GrammarConfig.preset("tiny", vocab_size=40)).double()
    ids, lengths = torch.randint(0, 40, (5, 12)), torch.tensor([12, 9, 2, 1, 7])
    z_cpu = model(ids, lengths)
    mu_cpu = span_marginals(model.rules().for_words(ids), lengths)
    model = model.to(CUDA)
    z_gpu = model(ids.to(CUDA), lengths.to(CUDA)).cpu()
    mu_gpu = span_marginals(model.rules().for_words(ids.to(CUDA)), lengths.to(CUDA)).cpu()
    assert torch.isinf(z_cpu[3]) and torch.isinf(z_gpu[3])                 # the one-word sentence
    finite = torch.isfinite(z_cpu)
    assert (z_cpu[finite] - z_gpu[finite]).abs().max().item() < 1e-10
    assert (mu_cpu - mu_gpu).abs().max().item() < 1e-10


def test_grammar_trains_on_cuda_resumes_and_parses_as_on_the_cpu(tmp_path):
    corpus = tmp_path / "toy.txt"
    write_corpus(corpus, 300)
    out = tmp_path / "g"
    args = ["train", "--family", "grammar", "--preset", "tiny", "--corpus", str(corpus), "--curriculum-start", "5",
            "--max-words", "20", "--device", "cuda", "--no-progress", "--checkpoint-every", "0"]
    first = CliRunner().invoke(main, [*args, "--epochs", "2", "--out", str(out), "--keep-epochs"])
    assert first.exit_code == 0, first.output
    more = CliRunner().invoke(main, ["train", "--family", "grammar", "--out", str(out), "--resume", "--epochs", "3",
                                     "--device", "cuda", "--no-progress"])
    assert more.exit_code == 0, more.output
    events = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [e["epoch"] for e in events if e["event"] == "epoch"] == [1, 2, 3]
    assert all(e["device"].startswith("cuda") for e in events if e["event"] in ("start", "resume"))
    text = "\n".join(" ".join(line.split()[:12]) for line in corpus.read_text().splitlines()[:40]) + "\n"
    trees = {device: CliRunner().invoke(main, ["induce", "-", "-m", str(out / "best.pt"), "--device", device,
                                               "--format", "ptb"], input=text)
             for device in ("cpu", "cuda")}
    assert all(r.exit_code == 0 for r in trees.values()), {d: r.output for d, r in trees.items()}
    assert trees["cpu"].stdout == trees["cuda"].stdout and trees["cpu"].stdout.count("\n") == 40
    ppl = CliRunner().invoke(main, ["perplexity", "--model", str(out / "best.pt"), "--corpus", str(corpus),
                                    "--device", "cuda"])
    assert ppl.exit_code == 0, ppl.output

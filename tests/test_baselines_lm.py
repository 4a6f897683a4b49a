"""The recurrent baselines (issue 64.4): `onparse train --family lstm` and `--family gru` train a
plain LSTM or GRU language model by the ON-LSTM's recipe, resume exactly, report perplexity and
`info`, and refuse every command that needs trees in one line."""
import json

import pytest
import torch
from click.testing import CliRunner

from conftest import write_corpus
from onparse.baselines_lm.config import GRUTraining, LSTMTraining, RecurrentConfig, presets
from onparse.baselines_lm.file import load_recurrent
from onparse.baselines_lm.model import RecurrentLM
from onparse.cli import main
from onparse.lm.training.config import PRESETS

pytestmark = pytest.mark.usefixtures("one_thread")

CELLS = ("lstm", "gru")


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("baselines") / "text.txt", n_sentences=200, seed=2)


def train(corpus, out, *extra):
    done = run("train", "--preset", "tiny", "--corpus", corpus, "--out", out, "--threads", 1, "--no-progress",
               "--json", *extra)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def same_weights(a, b):
    a, b = a.state_dict(), b.state_dict()
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_the_presets_are_the_language_models_but_the_chunk_size():
    for settings in (LSTMTraining, GRUTraining):
        for name, preset in presets(settings).items():
            assert {k: v for k, v in PRESETS[name].to_dict().items() if k != "chunk_size"} == preset.to_dict()
        assert "chunk_size" not in settings().to_dict()


@pytest.mark.parametrize("cell", CELLS)
def test_the_model_is_a_language_model_without_distances(cell):
    config = RecurrentConfig(vocab_size=20, cell=cell, embedding_size=8, hidden_size=12, n_layers=2)
    model = RecurrentLM(config)
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert shapes == config.parameter_shapes()
    tokens = torch.randint(0, 20, (6, 3))
    model.eval()
    whole = model(tokens)
    assert whole.output.shape == (6, 3, 8) and whole.distances.numel() == 0
    assert [tuple(h.shape) + tuple(c.shape) for h, c in whole.state] == \
        [(3, 12, 3, 12 if cell == "lstm" else 0), (3, 8, 3, 8 if cell == "lstm" else 0)]
    # The state carries across windows: two halves give the whole (evaluation mode, no dropout).
    first = model(tokens[:3])
    second = model(tokens[3:], first.state)
    assert torch.allclose(torch.cat([first.output, second.output]), whole.output, atol=1e-6)
    # DropConnect: training draws a mask over the recurrent weights, evaluation scales them.
    model.train()
    torch.manual_seed(0)
    a = model(tokens).output
    torch.manual_seed(0)
    assert torch.equal(a, model(tokens).output) and not torch.equal(a, whole.output)


@pytest.mark.parametrize("cell", CELLS)
def test_a_baseline_trains_resumes_exactly_and_reports_its_perplexity(corpus, tmp_path, cell):
    whole = train(corpus, tmp_path / "whole", "--family", cell, "--epochs", 2)
    assert whole["stop_reason"] == "epochs" and whole["epochs"] == 2 and whole["test_ppl"] > 1
    cut = train(corpus, tmp_path / "cut", "--family", cell, "--epochs", 2, "--max-steps", 70)
    assert cut["stop_reason"] == "max_steps" and cut["steps"] == 70           # inside epoch 2
    again = train(corpus, tmp_path / "cut", "--resume")                         # the family is read off last.pt
    assert again["steps"] == whole["steps"] and again["best_valid_ppl"] == whole["best_valid_ppl"]
    for name in ("best.pt", "last.pt"):
        assert same_weights(load_recurrent(tmp_path / "whole" / name), load_recurrent(tmp_path / "cut" / name)), name
    measured = run("perplexity", "-m", tmp_path / "whole" / "best.pt", "--corpus", corpus, "--split", "test",
                   "--threads", 1, "--json", "-q")
    assert measured.exit_code == 0, measured.output
    assert json.loads(measured.stdout)["perplexity"] == pytest.approx(whole["test_ppl"], rel=1e-9)
    info = run("info", "-m", tmp_path / "whole" / "best.pt")
    assert info.exit_code == 0, info.output
    assert f"kind: {cell.upper()} language model" in info.output and f"{cell.upper()} layers" in info.output


@pytest.mark.parametrize("cell", CELLS)
def test_what_needs_trees_refuses_a_baseline_in_one_line(corpus, tmp_path, cell):
    train(corpus, tmp_path / "r", "--family", cell, "--epochs", 1)
    model = tmp_path / "r" / "best.pt"
    for command in (["induce", "-m", model], ["eval", "-m", model, "--gold", "wsj10"]):
        done = run(*command, input="the dog saw a cat\n")
        assert done.exit_code == 1 and "Traceback" not in done.output, (command, done.output)
        lines = done.stderr.strip().splitlines()
        article = {"lstm": "an", "gru": "a"}[cell]
        assert lines[-1] == (f"error: {article} {cell.upper()} language model has no master gates, so no distances "
                             "and no trees: give an ON-LSTM language model, a student or a grammar (onparse train "
                             "--family lm, student or grammar)"), (command, done.output)
        assert done.stdout == ""
    distances = run("distances", "-m", model, input="the dog saw a cat\n")
    assert distances.exit_code == 1 and distances.stderr.strip().splitlines()[-1] == (
        f"error: {model} is {article} {cell.upper()} language model: it has no distances (no master gates); give an "
        "ON-LSTM language model (onparse train --family lm)"), distances.output
    refused = run("train", "--family", cell, "--init-from", model, "--out", tmp_path / "x")
    assert refused.exit_code == 2 and "--init-from applies to --family lm" in refused.output

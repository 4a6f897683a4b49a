"""Exporting a checkpoint for distribution (fp16, no training state) and `onparse info`."""
import json

import pytest
import torch
from click.testing import CliRunner

from onparse.checkpoint import export_checkpoint, load_checkpoint, load_model, save_checkpoint
from onparse.cli import main
from onparse.model import ModelConfig, ONLSTMLanguageModel
from onparse.vocab import Vocabulary

WORDS = "the cat sat on a mat and dog barked".split()


@pytest.fixture()
def checkpoint(tmp_path):
    torch.manual_seed(0)
    vocab = Vocabulary.build([WORDS])
    config = ModelConfig(vocab_size=len(vocab), embedding_size=16, hidden_size=24, n_layers=3, chunk_size=4)
    path = tmp_path / "best.pt"
    save_checkpoint(str(path), config=config.to_dict(), vocab=vocab, state_dict=ONLSTMLanguageModel(config).state_dict(),
                    metadata={"onparse_version": "0.1.0", "preset": "tiny", "corpus": {"source": "wsj"},
                              "train_config": {"seed": 7}, "epoch": 12, "step": 3456, "valid_ppl": 123.456,
                              "averaged": True},
                    training={"optimizer": {"state": {}}})
    return path


def test_export_halves_the_weights_and_drops_the_training_state(checkpoint, tmp_path):
    out = tmp_path / "shipped.pt"
    meta = export_checkpoint(str(checkpoint), str(out), metadata={"test_ppl": 130.0, "preset": "small"})
    blob = load_checkpoint(str(out))
    assert "training" not in blob
    assert all(t.dtype == torch.float16 for t in blob["state_dict"].values())
    assert meta == blob["metadata"]
    assert (meta["weights"], meta["test_ppl"], meta["preset"], meta["epoch"]) == ("float16", 130.0, "small", 12)
    original, shipped = load_model(str(checkpoint)).model, load_model(str(out)).model
    assert next(shipped.parameters()).dtype == torch.float32  # read back into float32
    tokens = torch.randint(0, 10, (9, 2))
    # fp16 weights: distances agree to rounding (fp16 keeps about 3 decimal digits)
    assert torch.allclose(original.distances(tokens), shipped.distances(tokens), atol=5e-3)
    assert out.stat().st_size < 0.7 * checkpoint.stat().st_size


def test_info_on_a_checkpoint(checkpoint):
    result = CliRunner().invoke(main, ["info", "--model", str(checkpoint)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"model: {checkpoint}"
    assert lines[1].startswith(f"file: {checkpoint} (") and lines[1].endswith("MB, float32 weights)")
    assert lines[2].startswith("architecture: 3 ON-LSTM layers of 24/24/16 units, chunk size 4, embedding 16")
    assert "training: corpus wsj, preset tiny, seed 7, 12 epochs, 3,456 steps, averaged SGD weights" in lines
    assert "perplexity: valid 123.46" in lines
    as_json = json.loads(CliRunner().invoke(main, ["info", "-m", str(checkpoint), "--json"]).stdout)
    assert as_json["config"]["hidden_size"] == 24 and as_json["metadata"]["valid_ppl"] == 123.456


def test_info_on_a_bad_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    result = CliRunner().invoke(main, ["info", "--model", str(bad)])
    assert result.exit_code == 1
    assert result.output.startswith(f"error: cannot read checkpoint {bad}") and result.output.count("\n") == 1

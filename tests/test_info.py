"""`onparse info`: what a checkpoint holds, and one-line errors for files that are not one."""
import json

import pytest
from click.testing import CliRunner

from conftest import save_tiny_checkpoint
from onparse.cli import main

WORDS = "the cat sat on a mat and dog barked".split()


@pytest.fixture()
def checkpoint(tmp_path):
    path = tmp_path / "best.pt"
    save_tiny_checkpoint(path, WORDS, metadata={"onparse_version": "0.1.0", "preset": "tiny", "corpus": {"source": "wsj"},
                                                "train_config": {"seed": 7}, "epoch": 12, "step": 3456,
                                                "valid_ppl": 123.456, "averaged": True},
                         training={"optimizer": {"state": {}}})
    return path


def test_info_on_a_checkpoint(checkpoint):
    result = CliRunner().invoke(main, ["info", "--model", str(checkpoint)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"model: {checkpoint}"
    assert lines[1].startswith(f"file: {checkpoint} (") and lines[1].endswith("MB, float32 weights)")
    assert lines[2] == "kind: language model"
    assert lines[3].startswith("architecture: 3 ON-LSTM layers of 24/24/16 units, chunk size 4, embedding 16")
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


def test_python_users_get_the_same_description(checkpoint, tmp_path):
    import onparse
    from onparse.files.describe import describe_file

    text = describe_file(str(checkpoint))
    cli = CliRunner().invoke(main, ["info", "--model", str(checkpoint)]).stdout
    assert text + "\n" == cli
    as_dict = describe_file(str(checkpoint), "mine", as_dict=True)
    assert as_dict["model"] == "mine" and as_dict["vocab_size"] == len(WORDS) + 2  # <unk>, <eos>
    bundle = tmp_path / "b.pt"
    onparse.load(str(checkpoint), "cpu", layers=[1, 2], voters=["right"]).save_bundle(str(bundle), weights="float32")
    described = describe_file(str(bundle))
    assert "a bundle of 1 models whose trees are averaged over 2 members and 1 voter" in described
    assert "members (in tie-breaking order): layer 1 onlstm; layer 2 onlstm" in described
    summary = describe_file(str(bundle), as_dict=True)
    assert summary["voters"] == ["right"] and [m["layer"] for m in summary["members"]] == [1, 2]

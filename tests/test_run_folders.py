"""-m takes a run folder (best.pt, else last.pt, said on stderr), and a run's missing best.pt
points at its last.pt."""
from click.testing import CliRunner

from onparse.cli import main
from onparse.induce import format_tree

from conftest import expected_tree, save_tiny_checkpoint

WORDS = "the cat sat on a mat".split()


def invoke(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def test_a_run_folder_is_a_model(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    model, vocab, last = save_tiny_checkpoint(run / "last.pt", WORDS, seed=1)
    got = invoke("induce", "-", "-m", str(run), input="the cat sat on a mat\n")
    assert got.exit_code == 0, got.output
    assert got.stderr == f"note: using {last}\n"
    want = invoke("induce", "-", "-m", last, input="the cat sat on a mat\n")
    assert got.stdout == want.stdout and want.stderr == ""
    assert got.stdout.strip() == format_tree(expected_tree(model, vocab, WORDS), "brackets")
    missing = invoke("induce", "-", "-m", str(run / "best.pt"), input="a b\n")
    assert missing.exit_code == 1
    assert missing.output == (f"error: {run / 'best.pt'} does not exist yet (the run has not finished an epoch); "
                              f"its latest weights are in {last}: pass -m {last} or -m {run}\n")
    # best.pt wins once there is one.
    _, _, best = save_tiny_checkpoint(run / "best.pt", WORDS, seed=2)
    info = invoke("info", "-m", str(run))
    assert info.exit_code == 0 and info.stderr == f"note: using {best}\n"


def test_a_folder_without_a_model_is_a_one_line_error(tmp_path):
    got = invoke("induce", "-", "-m", str(tmp_path), input="a b\n")
    assert got.exit_code == 1
    assert got.output == (f"error: {tmp_path} is a folder without best.pt or last.pt: pass a checkpoint file or "
                          "the folder of an `onparse train` run\n")


def test_a_runs_metrics_log_is_read_defensively(tmp_path):
    # Issue 66.4, beside it: fit reads each run's metrics.jsonl (epochs, perplexities, alarms,
    # stops); a line that is not UTF-8 raised UnicodeDecodeError, a line of another shape is skipped.
    import json

    from onparse.files.run_folder import logged_events, valid_perplexities

    lines = [json.dumps({"event": "epoch", "epoch": 1, "valid_ppl": 90.0}).encode(), b'{"event": "\xff\xfe"}',
             b"[1, 2]", json.dumps({"event": "epoch", "epoch": "2", "valid_ppl": 80.0}).encode(),
             json.dumps({"event": "epoch", "epoch": 3, "valid_ppl": 70.0}).encode()]
    (tmp_path / "metrics.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    assert [e.get("epoch") for e in logged_events(str(tmp_path))] == [1, "2", 3]
    assert valid_perplexities(str(tmp_path)) == {1: 90.0, 3: 70.0}


def test_records_nested_too_deep_are_damaged_not_a_traceback(tmp_path):
    import pytest

    """A crafted record nested thousands of levels deep (real ones nest at most about 60) is a
    damaged record like any other: decode raises ValueError, not RecursionError."""
    from onparse.files.run_folder import logged_events
    from onparse.files.schema import decode

    deep = "[" * 5000 + "]" * 5000
    with pytest.raises(ValueError, match="nested too deep"):
        decode(deep)
    assert decode('{"a": [1, 2]}') == {"a": [1, 2]}
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text('{"event": "start"}\n' + deep + "\n")
    assert logged_events(str(run)) == [{"event": "start"}]
    from onparse.errors import OnparseError
    from onparse.fitting.settings import read_state

    (run / "fit.json").write_text(deep)
    with pytest.raises(OnparseError, match="fit.json is damaged \\(nested too deep"):
        read_state(str(run))

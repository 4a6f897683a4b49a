"""Rule v12 (PROTOCOL.md 66-69): `research/rechoose_v12.py` re-runs fit's choose and bundle stages
over rule v10's trained runs without training again, and `research/explore_v12.py`'s fixed
readings are the rule's members (onparse.fitting.choice)."""
import json
import os

from lab import load_script


def test_rechoose_keeps_plan_and_training_and_links_the_runs(tmp_path, monkeypatch):
    v12 = load_script("rechoose_v12")
    old = tmp_path / "fit-english.fit"
    for run in ("lm-1", "lm-2"):
        (old / run).mkdir(parents=True)
    state = {"format": "onparse-fit", "text": "news", "settings": {}, "plan": {"corpus": "news"},
             "train": {"epochs": {"lm-1": [1, 2], "lm-2": [1]}}, "choose": {"choice": {}}, "bundle": {"out": "x"},
             "seconds": {"plan": 1.0, "train": 2.0, "choose": 3.0, "bundle": 4.0}}
    (old / "fit.json").write_text(json.dumps(state))
    calls = []
    monkeypatch.setattr(v12, "RUNS", str(tmp_path))
    monkeypatch.setattr(v12.subprocess, "call", lambda command: calls.append(command) or 0)
    assert v12.main("english") == 0
    new = tmp_path / "fit-english-v12.fit"
    kept = json.loads((new / "fit.json").read_text())
    assert set(kept) == {"format", "text", "settings", "plan", "train", "seconds"}
    assert kept["seconds"] == {"plan": 1.0, "train": 2.0} and kept["train"] == state["train"]
    assert all(os.path.realpath(new / run) == str(old / run) for run in ("lm-1", "lm-2"))
    assert calls == [["onparse", "fit", "news", "--out", str(tmp_path / "fit-english-v12.pt"), "--run-dir", str(new),
                      "--resume", "--seeds", "2", "--preset", "small", "--max-time", "1h", "--threads", "2"]]


def test_explore_fixed_readings_are_the_rule_members():
    from onparse.fitting.choice import Candidate, member_indices

    explore = load_script("explore_v12")
    cands = [("lm-1", e, layer, d) for e in (1, 2) for layer in (1, 2, 3) for d in ("onlstm", "split")]
    cands += [("lm-2", e, layer, d) for e in (1, 2, 3) for layer in (1, 2, 3) for d in ("onlstm", "split")]
    epochs = {"lm-1": 2, "lm-2": 3}
    assert explore.fixed_readings(cands, epochs, (2, 3), ("onlstm",)) == \
        member_indices([Candidate(*c) for c in cands], epochs)


def test_fit_trees_reads_the_held_out_sentences_fit_chose_by(tmp_path, monkeypatch):
    """research/fit_trees.py: the held-out sentences come from the fit's own record, and a text
    that changed since (another digest) is refused."""
    import pytest
    from onparse.fitting.pipeline import held_out_digest

    trees = load_script("fit_trees")
    held = [["a", "b", "c"], ["d", "e", "f", "g"]]
    corpus = type("Corpus", (), {"test": held + [["x", "y"]], "train": [], "valid": []})()
    monkeypatch.setattr("onparse.text.corpora.load_corpus", lambda spec: corpus)
    monkeypatch.setattr("onparse.text.corpora.make_spec", lambda name: name)
    state = {"plan": {"corpus": "news", "held_out_sha256": held_out_digest(held)}, "settings": {"limit": 1000}}
    (tmp_path / "fit.json").write_text(json.dumps(state))
    assert trees.held_out(str(tmp_path)) == held
    state["plan"]["held_out_sha256"] = "0" * 64
    (tmp_path / "fit.json").write_text(json.dumps(state))
    with pytest.raises(AssertionError, match="changed"):
        trees.held_out(str(tmp_path))


def test_explore_reads_rule_v10s_members_from_its_fit_not_from_todays_rule(tmp_path, monkeypatch):
    """onparse fit chooses by rule v12 now: the v10 row of explore_v12.py is the choice rule v10's
    fit recorded in its choice.json."""
    explore = load_script("explore_v12")
    folder = tmp_path / "runs" / "fit-english.fit"
    folder.mkdir(parents=True)
    members = [{"run": "lm-2", "epoch": 3, "layer": 2, "decoder": "split"},
               {"run": "lm-1", "epoch": 1, "layer": 1, "decoder": "onlstm"}]
    (folder / "choice.json").write_text(json.dumps({"members": members}))
    monkeypatch.setattr(explore, "ROOT", str(tmp_path))
    cands = [("lm-1", 1, 1, "onlstm"), ("lm-1", 1, 2, "onlstm"), ("lm-2", 3, 2, "split")]
    assert explore.rule_v10("english", cands) == [2, 0]

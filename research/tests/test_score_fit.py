"""``research/score_fit.py`` (rule v10, 58): a tiny fit scored against a made-up gold set; every
figure is computed again here through the public API, and the rank correlation by hand."""
import json

import pytest
from click.testing import CliRunner

from lab import GOLD_TREES, load_script, write_corpus


def test_spearman_by_hand():
    script = load_script("score_fit")
    assert script.ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]
    assert script.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert script.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert script.spearman([1, 1, 1], [1, 2, 3]) is None


def test_scores_a_tiny_fit(tmp_path, monkeypatch):
    from onparse import baseline_trees, evaluate, load, load_gold
    from onparse.cli import main

    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=3)
    bundle = tmp_path / "fit.pt"
    out = CliRunner().invoke(main, ["fit", text, "--out", str(bundle), "--seeds", "2", "--preset", "tiny",
                                    "--epochs", "1", "--threads", "2", "--limit", "20", "-q"])
    assert out.exit_code == 0, out.output
    gold = tmp_path / "gold.txt"
    gold.write_text(GOLD_TREES)
    script = load_script("score_fit")
    monkeypatch.setitem(script.GOLD, "english", (str(gold), str(gold), str(gold)))
    records = tmp_path / "fit.jsonl"
    monkeypatch.setattr("sys.argv", ["score_fit.py", str(bundle), "--language", "english", "--records", str(records)])
    script.main()
    record = json.loads(records.read_text().splitlines()[0])
    choice = json.loads((tmp_path / "fit.fit" / "choice.json").read_text())
    assert len(record["dev"]["candidates"]) == len(choice["scores"]) == 2 * 2 * 2
    g = load_gold(str(gold))
    tokens = [list(s.words) for s in g]
    fitted = load(str(bundle))
    assert record["dev"]["bundle"] == round(evaluate(fitted.trees(tokens), g).sentence_f1.f1, 5)
    assert record["test"]["fit"]["all"] == record["dev"]["bundle"]          # the same gold file here
    assert record["dev"]["oracle"] == max(record["dev"]["candidates"] + [record["dev"]["bundle"]])
    assert record["test"]["right"]["all"] == round(evaluate(baseline_trees(tokens, "right"), g).sentence_f1.f1, 5)
    first = choice["scores"][0]
    one = load(str(tmp_path / "fit.fit" / first["run"] / f"epoch-{first['epoch']:03d}.pt"))
    from onparse import Member

    one = one.with_members([Member(0, first["layer"], first["decoder"])])
    assert record["dev"]["candidates"][0] == round(evaluate(one.trees(tokens), g).sentence_f1.f1, 5)
    # --dev-only: the same dev figures, and the test part is never read (its gold is missing here).
    missing = str(tmp_path / "no-test-gold.txt")
    monkeypatch.setitem(script.GOLD, "english", (str(gold), missing, missing))
    monkeypatch.setattr("sys.argv", ["score_fit.py", str(bundle), "--language", "english", "--records", str(records),
                                     "--dev-only"])
    script.main()
    dev_only = json.loads(records.read_text().splitlines()[1])
    assert "test" not in dev_only and dev_only == {k: v for k, v in record.items() if k != "test"}


def test_known_dev_trees_are_those_of_the_same_run_folders(tmp_path):
    import os
    import pickle

    script = load_script("score_fit")
    old = tmp_path / "old.fit"
    for run in ("lm-1", "lm-2"):
        (old / run).mkdir(parents=True)
    kept = {"candidates": [("lm-1", 3, 2, "onlstm"), ("lm-2", 3, 2, "onlstm")], "dev": [["t1"], ["t2"]],
            "dev_gold": "alpino-dev"}
    with open(old / "trees-v12.pkl", "wb") as handle:
        pickle.dump(kept, handle)
    new = tmp_path / "new.fit"
    new.mkdir()
    os.symlink(old / "lm-1", new / "lm-1")             # the same folder, linked
    (new / "lm-2").mkdir()                             # another run of the same name: not used
    assert script.known_dev_trees(str(old / "trees-v12.pkl"), str(new), "alpino-dev") == \
        {("lm-1", 3, 2, "onlstm"): ["t1"]}
    with pytest.raises(AssertionError, match="not cess_esp-dev"):
        script.known_dev_trees(str(old / "trees-v12.pkl"), str(new), "cess_esp-dev")


def test_perplexity_ranking_reads_the_members_readings_only(tmp_path):
    script = load_script("score_fit")
    for run, ppl in (("lm-1", {1: 300.0, 2: 200.0, 3: 100.0}), ("grammar-1", {1: 900.0, 2: 800.0})):
        (tmp_path / run).mkdir()
        (tmp_path / run / "metrics.jsonl").write_text("".join(
            json.dumps({"event": "epoch", "epoch": e, "valid_ppl": p}) + "\n" for e, p in ppl.items()))
    scores = [{"run": "lm-1", "epoch": e, "layer": layer, "decoder": "onlstm"} for e in (1, 2, 3) for layer in (1, 2)]
    scores += [{"run": "grammar-1", "epoch": e, "layer": 1, "decoder": "mbr"} for e in (1, 2)]
    # Layer 2 and the grammar: F1 rises as perplexity falls (ranks agree); layer 1 (not a member's
    # reading) falls, and would break the agreement if it were counted.
    f1 = {(1, 1): 0.9, (1, 2): 0.1, (2, 1): 0.8, (2, 2): 0.2, (3, 1): 0.7, (3, 2): 0.3}
    dev_f1 = [f1[(c["epoch"], c["layer"])] for c in scores[:6]] + [0.05, 0.06]
    assert script.perplexity_ranking(str(tmp_path), {"scores": scores}, dev_f1) == pytest.approx(
        script.spearman([-300, -200, -100, -900, -800], [0.1, 0.2, 0.3, 0.05, 0.06]))
    assert script.perplexity_ranking(str(tmp_path), {"scores": scores[:2]}, dev_f1[:2]) is None


def test_tree_cache_keeps_trees_by_epoch_file_and_drops_changed_ones(tmp_path, monkeypatch):
    import os

    script = load_script("score_fit")
    run = tmp_path / "fit.fit" / "grammar-1"
    run.mkdir(parents=True)
    for epoch in (1, 2):
        (run / f"epoch-{epoch:03d}.pt").write_bytes(b"x" * epoch)
    cache = str(tmp_path / "fit.fit" / "score-trees-alpino-dev.pkl")
    kept = script.TreeCache(cache, "alpino-dev", every=3600)
    assert kept.trees == {}
    kept.add(str(run / "epoch-001.pt"), {("grammar-1", 1, 1, "mbr"): ["t1"]})
    assert not os.path.exists(cache)                       # not an hour yet: nothing written
    kept.save()
    assert script.TreeCache(cache, "alpino-dev").trees == {("grammar-1", 1, 1, "mbr"): ["t1"]}
    kept = script.TreeCache(cache, "alpino-dev", every=0)  # written after each epoch file
    kept.add(str(run / "epoch-001.pt"), {("grammar-1", 1, 1, "mbr"): ["t1"]})
    kept.add(str(run / "epoch-002.pt"), {("grammar-1", 2, 1, "mbr"): ["t2"]})
    again = script.TreeCache(cache, "alpino-dev")
    assert again.trees == {("grammar-1", 1, 1, "mbr"): ["t1"], ("grammar-1", 2, 1, "mbr"): ["t2"]}
    # What was kept is used as it is: no epoch file is loaded.
    monkeypatch.setattr("onparse.load", lambda *a, **k: pytest.fail("loaded an epoch file"))
    choice = {"scores": [{"run": "grammar-1", "epoch": e, "layer": 1, "decoder": "mbr"} for e in (2, 1)]}
    assert script.candidate_trees(str(tmp_path / "fit.fit"), choice, [["a"]], kept=again) == [["t2"], ["t1"]]
    # An epoch file written again (a resumed run) loses its trees; another gold set reads none.
    (run / "epoch-002.pt").write_bytes(b"yyy")
    assert set(script.TreeCache(cache, "alpino-dev").trees) == {("grammar-1", 1, 1, "mbr")}
    assert script.TreeCache(cache, "cess_esp-dev").trees == {}
    assert sorted(os.listdir(tmp_path / "fit.fit")) == ["grammar-1", "score-trees-alpino-dev.pkl"]  # no temporary left

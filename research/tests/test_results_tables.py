"""research/results.py: the tables it writes from scores, and the README blocks it rewrites.

The scores here are made up (no model is loaded), so every cell can be checked by hand.
"""
import pytest

from lab import load_script

results = load_script("results")

CONVENTIONS = ("sentence_f1", "kim_f1", "corpus_f1")


def scored(value):
    """One summary whose three conventions are value, value - 0.01, value - 0.02."""
    return {c: value - 0.01 * i for i, c in enumerate(CONVENTIONS)}


def fake_record(n_models=3):
    members = {}
    for m in range(n_models):
        for k, (layer, decoder) in enumerate(results.KINDS):
            members[f"{m}/{layer}/{decoder}"] = scored(0.5 + 0.1 * m + 0.01 * k)
    gold = {"average": scored(0.9), "members": members,
            "seeds": {str(m): scored(0.4 + 0.1 * m) for m in range(n_models)}}
    return {"n_models": n_models, "label": "every seed", "out": "examples/r.md",
            "members": [{"model": 1, "layer": 2, "decoder": "onlstm"}, {"model": 0, "layer": 3, "decoder": "split"}],
            "meta": {"seeds": [{"seed": 4}, {"seed": 5}, {"seed": 3}]},
            "scores": {"wsj10": gold, "wsj": gold}}


BASELINES = {kind: {"wsj10": [scored(0.3)], "wsj": [scored(0.2)]} for kind in ("right", "left", "balanced")}


def test_spread_is_mean_std_and_max_in_percent():
    assert results.spread([0.5, 0.6, 0.7]) == "60.0 ± 10.0 (70.0)"
    assert results.spread([0.42]) == "42.0"
    assert results.spread([None]) == "-"


def test_conventions_table_reads_every_seed_and_convention():
    rows = results.conventions(fake_record(), BASELINES)
    assert rows[2].startswith("| **bundle: average of its 2 members** | **90.0** | **89.0** | **88.0** | **90.0**")
    # each seed's own average: 40, 50, 60 -> 50 ± 10 (60); Kim is one point lower
    assert rows[3] == ("| each seed's 4-member average (3 seeds) | " + " | ".join(
        ["50.0 ± 10.0 (60.0)", "49.0 ± 10.0 (59.0)", "48.0 ± 10.0 (58.0)"] * 2) + " |")
    # layer 3 split is the fourth kind: 53, 63, 73
    assert rows[7].startswith("| single member: layer 3, split (3 seeds) | 63.0 ± 10.0 (73.0) | 62.0 ± 10.0 (72.0)")
    assert rows[-1] == "| right-branching | 30.0 | 29.0 | 28.0 | 20.0 | 19.0 | 18.0 |"


def test_seeds_block_names_members_by_their_training_seed():
    block = results.conventions_block(fake_record(), BASELINES, "python research/results.py --block seeds")
    first = block.splitlines()[0]
    assert first.startswith("every seed: the 3 seeds' 2 members by agreement (seed 5 L2 onlstm, seed 4 L3 split)")
    assert "`python research/results.py --block seeds`" in block and "[examples/r.md](examples/r.md)" in block


def test_replace_block_rewrites_only_its_own_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("top\n<!-- results:start -->\nold results\n<!-- results:end -->\nmiddle\n"
                      "<!-- seeds:start -->\nold seeds\n<!-- seeds:end -->\nend\n", encoding="utf-8")
    results.replace_block(str(readme), "new seeds", "seeds")
    assert readme.read_text(encoding="utf-8") == (
        "top\n<!-- results:start -->\nold results\n<!-- results:end -->\nmiddle\n"
        "<!-- seeds:start -->\nnew seeds\n<!-- seeds:end -->\nend\n")
    readme.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="lacks the <!-- seeds:start -->"):
        results.replace_block(str(readme), "x", "seeds")


@pytest.mark.usefixtures("one_thread")
def test_main_scores_a_bundle_and_writes_the_report_the_json_and_the_block(seed_runs, gold_file, tmp_path,
                                                                             monkeypatch):
    """The whole script on a two-seed float32 bundle of tiny runs, the gold file standing in for
    both gold sets: every figure it records is computed again through the public API."""
    import json
    import os
    import shlex

    import onparse.gold.treebank as treebank
    from onparse.api import load
    from onparse.files.bundle import save_bundle
    from onparse.files.checkpoint import load_checkpoint
    from onparse.members import Member
    from onparse.scores.metrics import evaluate
    from onparse.trees.baselines import baseline_trees

    real = treebank.load_gold
    monkeypatch.setattr(treebank, "load_gold", lambda name: real(str(gold_file)))
    gold = real(str(gold_file))
    blobs = [load_checkpoint(os.path.join(run, "best.pt")) for run in seed_runs[:2]]
    meta = {"recipe": "two tiny runs", "selection": "by hand", "weights_check": "none",
            "seeds": [{"seed": b["metadata"]["train_config"]["seed"], "valid_ppl": b["metadata"]["valid_ppl"],
                       "test_ppl": 9.5} for b in blobs]}
    bundle = tmp_path / "bundle.pt"
    save_bundle(str(bundle), blobs, [Member(1, 2, "onlstm"), Member(0, 3, "split")], weights="float32", metadata=meta)
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- seeds:start -->\nold\n<!-- seeds:end -->\nb\n", encoding="utf-8")
    args = ["--default", str(bundle), "--out", str(tmp_path / "r.md"), "--json", str(tmp_path / "r.json"),
            "--readme", str(readme), "--block", "seeds", "--label", "two seeds"]
    assert results.main(args) == 0

    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    rec, baselines = data["bundle"], data["baselines"]
    tokens = [list(s.words) for s in gold]
    parser = load(str(bundle), "cpu")

    def f1(trees, convention="sentence_f1"):
        return getattr(evaluate(trees, gold), convention).f1

    for name in ("wsj10", "wsj"):
        got = rec["scores"][name]
        assert got["average"]["sentence_f1"] == f1(parser.trees(tokens))
        assert got["members"]["1/2/onlstm"]["corpus_f1"] == \
            f1(parser.with_members([Member(1, 2, "onlstm")]).trees(tokens), "corpus_f1")
        assert len(got["members"]) == 8                     # every candidate: 2 seeds x 2 layers x 2 decoders
        own = parser.with_members([Member(0, layer, d) for layer in (2, 3) for d in ("onlstm", "split")])
        assert got["seeds"]["0"]["kim_f1"] == f1(own.trees(tokens), "kim_f1")
        assert baselines["right"][name][0]["sentence_f1"] == f1(baseline_trees(gold.tokens, "right", 0))
        assert len(baselines["random"][name]) == len(results.RANDOM_SEEDS)
    assert rec["members"] == [{"model": 1, "layer": 2, "decoder": "onlstm"},
                              {"model": 0, "layer": 3, "decoder": "split"}]

    report = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert report.startswith("# onparse results") and "Model: `" in report and ", two tiny runs." in report
    seeds = [s["seed"] for s in meta["seeds"]]
    assert f"| 1 | {seeds[0]} | {meta['seeds'][0]['valid_ppl']:.1f} | 9.5 |" in report
    command = "python research/results.py " + shlex.join(args)
    assert readme.read_text(encoding="utf-8") == \
        f"a\n<!-- seeds:start -->\n{results.conventions_block(rec, baselines, command)}\n<!-- seeds:end -->\nb\n"
    assert f"two seeds: the 2 seeds' 2 members by agreement (seed {seeds[1]} L2 onlstm, seed {seeds[0]} L3 split)" \
        in readme.read_text(encoding="utf-8")

"""Rule v14 (PROTOCOL.md 77-80): `research/refit_v14.py` plans fit for real, links runs it checks
(same text, finished, under their share) and resumes; `research/explore_v13.py` reads each
language's grammar records and averages a choice's dev trees as fit's bundle would."""
import json
import os

import pytest

from lab import load_script, write_run


def test_refit_links_checked_runs_and_resumes_the_fit(tmp_path, monkeypatch):
    refit = load_script("refit_v14")
    corpus = "/data/fit-text-alpino.txt"
    runs = tmp_path / "runs"
    for s in (1, 2):
        write_run(runs / "fit-alpino.fit" / f"lm-{s}", corpus)
    for s in (1, 2, 3):
        write_run(runs / f"grammar-fit-alpino-s{s}", corpus)
    monkeypatch.setattr(refit, "RUNS", str(runs))
    monkeypatch.setattr(refit, "ROOT", str(tmp_path))
    run_dir = runs / "fit-alpino-v14.fit"
    plan = {"corpus": corpus, "runs": ["lm-1", "lm-2", "grammar-1", "grammar-2", "grammar-3"],
            "seconds_per_run": 2160.0}

    def plan_stage(command, cwd, check):
        assert command[-11:-10] == ["plan"] and cwd == str(tmp_path)
        run_dir.mkdir()
        (run_dir / "fit.json").write_text(json.dumps({"plan": plan}))
    calls = []
    monkeypatch.setattr(refit.subprocess, "run", plan_stage)
    monkeypatch.setattr(refit.subprocess, "call", lambda command, cwd: calls.append(command) or 0)
    assert refit.main("alpino") == 0
    assert os.path.realpath(run_dir / "lm-2") == str(runs / "fit-alpino.fit" / "lm-2")
    assert os.path.realpath(run_dir / "grammar-3") == str(runs / "grammar-fit-alpino-s3")
    assert calls == [["onparse", "fit", os.path.join("runs", "fit-text-alpino.txt"), "--out",
                      str(runs / "fit-alpino-v14.pt"), "--run-dir", str(run_dir), "--resume", "--seeds", "2",
                      "--grammars", "3", "--preset", "small", "--max-time", "2h", "--threads", "2"]]


@pytest.mark.parametrize("case", ["text", "unfinished", "too long"])
def test_refit_refuses_a_run_fit_would_not_have_trained(tmp_path, case):
    refit = load_script("refit_v14")
    plan = {"corpus": "/data/t.txt", "seconds_per_run": 2160.0}
    write_run(tmp_path / "run", "/data/other.txt" if case == "text" else "/data/t.txt",
              finished=case != "unfinished", seconds=1200.0 if case == "too long" else 100.0)
    with pytest.raises(AssertionError, match={"text": "not /data/t.txt", "unfinished": "did not finish",
                                              "too long": "more than the plan's share"}[case]):
        refit.check("grammar-1", str(tmp_path / "run"), plan)


def test_explore_reads_each_languages_grammar_records(tmp_path, monkeypatch):
    explore = load_script("explore_v13")
    records = tmp_path / "records.jsonl"
    rows = [{"run": "grammar-fit-alpino-s2", "epoch": 3, "dev": {"grammar": {"all": 0.31}}},
            {"run": "grammar-fit-cess_esp-s1", "epoch": 1, "dev": {"grammar": {"all": 0.4}}}]
    records.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setattr(explore, "RECORDS", str(records))
    assert explore.grammar_dev_records("alpino") == {(2, 3): 0.31}
    assert explore.grammar_dev_records("floresta") == {}


def test_explore_averages_a_choices_dev_trees_with_its_voter():
    from onparse.fitting.choice import Candidate, Choice

    explore = load_script("explore_v13")
    left = ((("a", "b"), "c"), "d")
    right = ("a", ("b", ("c", "d")))
    a, b = Candidate("lm-1", 1, 2, "onlstm"), Candidate("grammar-1", 3, 1, "mbr")
    columns = [[left], [right]]
    index = {a: 0, b: 1}
    # One left member and a right voter tie: ties right gives the right tree, ties first the left.
    choice = Choice(epochs={}, members=[a], voter="right", ties="right", scores=[], member_scores=[])
    assert explore.average_dev(columns, choice, index) == [right]
    choice.ties = "first"
    assert explore.average_dev(columns, choice, index) == [left]
    both = Choice(epochs={}, members=[b, a], voter=None, ties="first", scores=[], member_scores=[])
    assert explore.average_dev(columns, both, index) == [right]          # two members: ties to the first


def test_explore_v16_keeps_the_most_central_members_in_member_order():
    explore = load_script("explore_v16")
    got = explore.variants([0.30, 0.45, 0.20, 0.40, 0.35])
    assert got["rule v14 (every member)"] == [0, 1, 2, 3, 4]
    assert got["the top half by centrality"] == [1, 3, 4]           # median 0.35
    assert got["the 1 most central"] == [1]
    assert got["the 2 most central"] == [1, 3]
    assert got["the 3 most central"] == [1, 3, 4]
    assert got["all but the least central"] == [0, 1, 3, 4]
    # Four members: the lower median keeps half or more; an exact tie keeps both.
    four = explore.variants([0.4, 0.3, 0.3, 0.5])
    assert four["the top half by centrality"] == [0, 1, 2, 3]
    assert explore.variants([0.4, 0.5, 0.3, 0.6])["the top half by centrality"] == [0, 1, 3]
    assert "the 3 most central" in four and "the 2 most central" not in explore.variants([0.1, 0.2])
    assert round(explore.spearman([1, 2, 3, 4], [10, 20, 40, 30]), 6) == 0.8


def test_cached_makes_once_and_keeps_every_key(tmp_path):
    explore = load_script("explore_v12")
    cache, calls = tmp_path / "trees.pkl", []
    assert explore.cached(cache, 3, lambda: calls.append(3) or "three") == "three"
    assert explore.cached(cache, 3, lambda: calls.append("again") or "other") == "three"   # read, not made
    assert explore.cached(cache, 5, lambda: calls.append(5) or "five") == "five"
    assert calls == [3, 5] and explore.cached(cache, 3, lambda: None) == "three"


def test_explore_v21_lists_finished_runs_by_seed_and_takes_fits_epoch(tmp_path, monkeypatch):
    explore = load_script("explore_v21")
    runs = tmp_path / "runs"
    for folder, finished in (("grammar-x39-floresta-s10", True), ("grammar-fit-floresta-s2", True),
                             ("grammar-x39-floresta-s4", False), ("grammar-fit-alpino-s1", True)):
        write_run(runs / folder, "/data/fit-text.txt", epochs=3, finished=finished)
    (runs / "grammar-fit-floresta-s3.log").write_text("a run's log beside the folders")
    monkeypatch.setattr(explore, "RUNS", [str(runs / "grammar-fit-{lang}-s{seed}"),
                                          str(runs / "grammar-x39-{lang}-s{seed}")])
    assert [os.path.basename(f) for f in explore.finished_runs("floresta")] == \
        ["grammar-fit-floresta-s2", "grammar-x39-floresta-s10"]          # seed order; unfinished runs left out
    folder = runs / "grammar-fit-floresta-s2"
    for e in (1, 2):                                                    # epoch 3 (the lowest perplexity) not kept
        (folder / f"epoch-{e:03d}.pt").write_bytes(b"")
    assert explore.fit_epoch(str(folder)) == 2

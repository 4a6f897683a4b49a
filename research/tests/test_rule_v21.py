"""Rule v21 (PROTOCOL.md 110-113): `research/refit_v21.py` plans fit with seven grammars for real,
links the nine runs rule 79's checks accept (or, in English, rule v14's fit runs with the seconds
that fit spent on them) and resumes it."""
import json
import os

import pytest

from lab import load_script, write_run

SHARE = 2160.0


def patched(tmp_path, monkeypatch, plan_runs, corpus):
    """refit_v21 with runs/ under tmp_path and fit's plan stage faked: it writes ``plan_runs``."""
    refit = load_script("refit_v21")
    runs = tmp_path / "runs"
    monkeypatch.setattr(refit.refit_v14, "RUNS", str(runs))
    monkeypatch.setattr(refit.refit_v14, "ROOT", str(tmp_path))
    calls = []

    def plan_stage(command, cwd, check):
        assert command[command.index("--stop-after") + 1] == "plan"
        run_dir = command[command.index("--run-dir") + 1]
        os.makedirs(run_dir)
        with open(os.path.join(run_dir, "fit.json"), "w") as handle:
            json.dump({"plan": {"corpus": corpus, "runs": plan_runs, "seconds_per_run": SHARE}}, handle)
    monkeypatch.setattr(refit.refit_v14.subprocess, "run", plan_stage)
    monkeypatch.setattr(refit.refit_v14.subprocess, "call", lambda command, cwd: calls.append(command) or 0)
    return refit, runs, calls


NINE = ["lm-1", "lm-2"] + [f"grammar-{s}" for s in range(1, 8)]


def test_refit_v21_links_nine_checked_runs_and_resumes_with_seven_grammars(tmp_path, monkeypatch):
    corpus = "/data/fit-text-floresta.txt"
    refit, runs, calls = patched(tmp_path, monkeypatch, NINE, corpus)
    for s in (1, 2):
        write_run(runs / "fit-floresta.fit" / f"lm-{s}", corpus)
    for s in (1, 2, 3):
        write_run(runs / f"grammar-fit-floresta-s{s}", corpus)
    for s in (4, 5, 6, 7):
        write_run(runs / f"grammar-x39-floresta-s{s}", corpus)
    assert refit.main("floresta") == 0
    run_dir = runs / "fit-floresta-v21.fit"
    assert os.path.realpath(run_dir / "grammar-2") == str(runs / "grammar-fit-floresta-s2")
    assert os.path.realpath(run_dir / "grammar-6") == str(runs / "grammar-x39-floresta-s6")
    assert calls == [["onparse", "fit", os.path.join("runs", "fit-text-floresta.txt"), "--out",
                      str(runs / "fit-floresta-v21.pt"), "--run-dir", str(run_dir), "--resume", "--seeds", "2",
                      "--grammars", "7", "--preset", "small", "--max-time", "3h20m", "--threads", "2"]]
    assert "train_seconds" not in json.loads((run_dir / "fit.json").read_text())     # nothing carried


def test_refit_v21_refuses_a_missing_seed(tmp_path, monkeypatch):
    corpus = "/data/fit-text-alpino.txt"
    refit, runs, calls = patched(tmp_path, monkeypatch, NINE, corpus)
    for s in (1, 2):
        write_run(runs / "fit-alpino.fit" / f"lm-{s}", corpus)
    for s in (1, 2, 3, 4, 5, 6):
        write_run(runs / f"grammar-{'fit' if s < 4 else 'x39'}-alpino-s{s}", corpus)
    write_run(runs / "grammar-x39-alpino-s7", corpus, finished=False)            # still training
    with pytest.raises(AssertionError, match="grammar-7: .* did not finish"):
        refit.main("alpino")
    assert calls == []


def earlier_english_fit(runs, share=SHARE):
    earlier = runs / "fit-english-v14.fit"
    spent = {"lm-1": 2200.7, "lm-2": 2199.7, "grammar-1": 2187.6, "grammar-2": 2185.6, "grammar-3": 2180.5}
    for run in spent:
        write_run(earlier / run, "news", finished=False)                           # cut by the share
    (earlier / "fit.json").write_text(json.dumps({"plan": {"seconds_per_run": share}, "train_seconds": spent}))
    return spent


def test_refit_v21_english_carries_rule_v14s_seconds_and_leaves_four_grammars_to_train(tmp_path, monkeypatch):
    refit, runs, calls = patched(tmp_path, monkeypatch, NINE, "news")
    spent = earlier_english_fit(runs)
    assert refit.main("english") == 0
    run_dir = runs / "fit-english-v21.fit"
    state = json.loads((run_dir / "fit.json").read_text())
    assert state["train_seconds"] == spent                 # the fit finds them spent and trains 4-7
    assert sorted(os.listdir(run_dir)) == ["fit.json", "grammar-1", "grammar-2", "grammar-3", "lm-1", "lm-2"]
    assert calls[0][2] == "news" and calls[0][calls[0].index("--grammars") + 1] == "7"


def test_refit_v21_english_refuses_runs_of_another_share(tmp_path, monkeypatch):
    refit, runs, calls = patched(tmp_path, monkeypatch, NINE, "news")
    earlier_english_fit(runs, share=1800.0)
    with pytest.raises(AssertionError, match="share of 1800 s, not 2160"):
        refit.main("english")
    assert calls == []


def test_rule_v21s_settings_give_rule_v14s_share():
    """3h20m over five waves of two runs, less fit's choosing share: 36 minutes a run, rule v14's."""
    from onparse.fitting import pipeline

    refit = load_script("refit_v21")
    settings = refit.SETTINGS
    assert settings[settings.index("--max-time") + 1] == "3h20m"
    runs = 2 + int(settings[settings.index("--grammars") + 1])
    waves = -(-runs // 2)
    assert 200 * 60 * (1 - pipeline.CHOOSE_SHARE) / waves == SHARE


@pytest.mark.parametrize("language", ["alpino", "floresta"])
def test_refit_v21_checks_time_except_for_dutch_and_spanish_new_seeds(tmp_path, monkeypatch, language):
    """Rule 114: a Dutch or Spanish seed 4-7 over the share passes (trained beside other work);
    a Portuguese one, or any of rule 71's seeds, does not."""
    corpus = f"/data/fit-text-{language}.txt"
    refit, runs, calls = patched(tmp_path, monkeypatch, NINE, corpus)
    for s in (1, 2):
        write_run(runs / f"fit-{language}.fit" / f"lm-{s}", corpus)
    for s in range(1, 8):
        write_run(runs / f"grammar-{'fit' if s < 4 else 'x39'}-{language}-s{s}", corpus,
                  seconds=1200.0 if s == 5 else 100.0)                           # 2 epochs: 40 minutes
    if language == "alpino":
        assert refit.main(language) == 0 and len(calls) == 1
    else:
        with pytest.raises(AssertionError, match="grammar-5: 2400 s of training"):
            refit.main(language)
        assert calls == []


def test_explore_v22_groups_fits_members_and_every_grammar_at_fits_epoch():
    explore = load_script("explore_v22")
    scores = [{"run": r, "epoch": e, "layer": layer, "decoder": d}
              for r, e, layer, d in (("lm-1", 3, 2, "onlstm"), ("lm-1", 3, 3, "onlstm"), ("grammar-1", 1, 1, "mbr"),
                                     ("grammar-1", 2, 1, "mbr"), ("grammar-2", 1, 1, "mbr"), ("grammar-2", 2, 1, "mbr"))]
    choice = {"scores": scores, "epochs": {"lm-1": 3, "grammar-1": 2, "grammar-2": 1},
              "members": [scores[0], scores[1], scores[3]]}                 # grammar-2 left out as a baseline
    got = explore.groups(choice)
    lms = [("lm-1", 3, 2, "onlstm"), ("lm-1", 3, 3, "onlstm")]
    assert got["fit's members"] == lms + [("grammar-1", 2, 1, "mbr")]
    assert got["its language models only"] == lms
    assert got["its grammars only"] == [("grammar-1", 2, 1, "mbr")]
    assert got["every grammar at fit's epoch, baseline-like too"] == [("grammar-1", 2, 1, "mbr"), ("grammar-2", 1, 1, "mbr")]
    assert got["every grammar + the language models"] == got["every grammar at fit's epoch, baseline-like too"] + lms

"""Rule v20 (PROTOCOL.md 106-109): `research/refit_v20.py` refits a small text's fit over rule
v10's language models and rule v18's `v2k-c10` grammars, checking that the real plan gives the
grammars the small-text options and that each linked grammar trained with them."""
import json
import os

import pytest

from lab import load_script, write_run

SMALL = {"max_vocab": 2000, "curriculum_start": 10, "seed": 1}
CORPUS = "/data/fit-text-floresta.txt"


def layout(tmp_path, monkeypatch, refit, grammar_config=SMALL):
    runs = tmp_path / "runs"
    for s in (1, 2):
        write_run(runs / "fit-floresta.fit" / f"lm-{s}", CORPUS)
    for s in (1, 2, 3):
        write_run(runs / f"grammar-v18-floresta-v2k-c10-s{s}", CORPUS, config=grammar_config)
    monkeypatch.setattr(refit.v14, "RUNS", str(runs))
    monkeypatch.setattr(refit.v14, "ROOT", str(tmp_path))
    return runs


def plan_stage(run_dir, options):
    def run(command, cwd, check):
        run_dir.mkdir()
        (run_dir / "fit.json").write_text(json.dumps({"plan": {
            "corpus": CORPUS, "runs": ["lm-1", "lm-2", "grammar-1", "grammar-2", "grammar-3"],
            "seconds_per_run": 2160.0, **({"grammar_options": options} if options is not None else {})}}))
    return run


def test_refit_links_rule_v18s_grammars_and_resumes_under_its_own_name(tmp_path, monkeypatch):
    refit = load_script("refit_v20")
    runs = layout(tmp_path, monkeypatch, refit)
    run_dir = runs / "fit-floresta-v20.fit"
    calls = []
    monkeypatch.setattr(refit.v14.subprocess, "run",
                        plan_stage(run_dir, ["--max-vocab", "2000", "--curriculum-start", "10"]))
    monkeypatch.setattr(refit.v14.subprocess, "call", lambda command, cwd: calls.append(command) or 0)
    assert refit.main("floresta") == 0
    assert os.path.realpath(run_dir / "grammar-3") == str(runs / "grammar-v18-floresta-v2k-c10-s3")
    assert os.path.realpath(run_dir / "lm-1") == str(runs / "fit-floresta.fit" / "lm-1")
    assert calls[0][4:7] == [str(runs / "fit-floresta-v20.pt"), "--run-dir", str(run_dir)]
    assert calls[0][7:] == ["--resume"] + refit.v14.SETTINGS


@pytest.mark.parametrize("case", ["plan without the options", "grammar without them"])
def test_refit_refuses_a_plan_or_a_grammar_without_the_small_text_recipe(tmp_path, monkeypatch, case):
    refit = load_script("refit_v20")
    runs = layout(tmp_path, monkeypatch, refit, grammar_config=SMALL if case.startswith("plan") else {"seed": 1})
    run_dir = runs / "fit-floresta-v20.fit"
    monkeypatch.setattr(refit.v14.subprocess, "run", plan_stage(
        run_dir, None if case.startswith("plan") else ["--max-vocab", "2000", "--curriculum-start", "10"]))
    monkeypatch.setattr(refit.v14.subprocess, "call", lambda command, cwd: pytest.fail("resumed"))
    with pytest.raises(AssertionError, match="None" if case.startswith("plan") else "max_vocab"):
        refit.main("floresta")
    assert not (run_dir / "grammar-1").exists()

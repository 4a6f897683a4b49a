"""`onparse fit` (issue 39): the gold-free choice against hand-computed and brute-force figures,
and the pipeline end to end on a tiny corpus, stopped between stages and resumed, with no gold
tree readable anywhere."""
import json
import os

import pytest
from click.testing import CliRunner

from conftest import write_corpus
from onparse.cli import main
from onparse.selection import Candidate, agreement_matrix, choose, cross_scores
from onparse.scores.agreement import agreement_scores
from onparse.trees.baselines import baseline_trees

WORDS = "a b c d e f".split()
RIGHT = baseline_trees([WORDS], "right")[0]       # (a (b (c (d (e f)))))
LEFT = baseline_trees([WORDS], "left")[0]
MIXED = (("a", "b"), (("c", "d"), ("e", "f")))
BALANCED = ((("a", "b"), "c"), ("d", ("e", "f")))      # (0,2) (0,3) lean left, (3,6) (4,6) right
RIGHTISH = ("a", ("b", (("c", "d"), ("e", "f"))))      # 3 of 4 spans right-branching ones, 3 MIXED's
LEFTISH = (((("a", "b"), "c"), ("d", "e")), "f")       # 3 of 4 spans left-branching ones, 1 MIXED's


def test_agreement_matrix_by_hand():
    # n = 6: 4 non-trivial spans each.  RIGHT {(1,6),(2,6),(3,6),(4,6)}, LEFT {(0,2),(0,3),(0,4),(0,5)},
    # MIXED {(0,2),(2,6),(2,4),(4,6)}: RIGHT-MIXED share (2,6),(4,6): 2/4; LEFT-MIXED share (0,2): 1/4.
    shared, counted = agreement_matrix([[RIGHT, LEFT, MIXED], [("a", "b"), ("a", "b"), ("a", "b")]])
    assert counted == 1                                      # the two-word sentence has no such span
    assert shared.tolist() == [[1.0, 0.0, 0.5], [0.0, 1.0, 0.25], [0.5, 0.25, 1.0]]


@pytest.mark.parametrize("groups", [[0, 0, 1, 1, 2], [0, 1, 2, 3, 4], [7, 7, 7, 7, 7]])
def test_cross_scores_equal_the_reference_agreement(groups):
    import random

    rng = random.Random(sum(groups))
    sentences = []
    for n in (3, 5, 8, 2, 6):
        words = [f"w{i}" for i in range(n)]
        sentences.append(baseline_trees([words] * 5, "random", seed=rng.randrange(1000)))
    shared, counted = agreement_matrix(sentences)
    assert cross_scores(shared, counted, groups) == pytest.approx(agreement_scores(sentences, groups))


def lm(run, epochs, layers=(1, 2, 3), decoders=("onlstm", "split"), averaged=(2, 3)):
    """A language model's candidates: its kind averages ``averaged`` layers with the paper's decoder."""
    return [Candidate(run, e, layer, d, layer in averaged and d == "onlstm", True)
            for e in epochs for layer in layers for d in decoders]


def grammar(run, epochs):
    return [Candidate(run, e, 1, "mbr", True) for e in epochs]


def test_each_runs_epoch_is_its_lowest_validation_perplexity():
    from onparse.selection import epochs_by_run, lowest_perplexity

    candidates = lm("lm-1", (1, 2, 3)) + lm("lm-2", (1, 2)) + lm("lm-3", (1, 2, 4)) + \
        grammar("grammar-1", (1, 2))
    ppl = {"lm-1": {1: 300.0, 2: 250.0, 3: 260.0},
           "lm-2": {1: 200.0, 2: 200.0},                          # a tie: the later epoch, trained more
           "lm-3": {1: float("nan"), 2: 400.0, 3: 100.0},         # epoch 3 not kept; NaN is no figure
           "grammar-1": {1: 500.0, 2: float("inf")}}
    assert lowest_perplexity(epochs_by_run(candidates), ppl) == {"lm-1": 2, "lm-2": 2, "lm-3": 2, "grammar-1": 1}
    assert lowest_perplexity(epochs_by_run(candidates), {}) == {"lm-1": 3, "lm-2": 2, "lm-3": 4, "grammar-1": 2}   # none: the last


def test_members_are_the_readings_each_kind_averages_layered_ones_first():
    from onparse.selection.rules import member_indices

    candidates = lm("lm-1", (1, 2)) + lm("lm-2", (1, 2)) + grammar("grammar-1", (1, 2))
    got = [candidates[i] for i in member_indices(candidates, {"lm-1": 2, "lm-2": 1, "grammar-1": 2})]
    assert [(c.run, c.epoch, c.layer, c.decoder) for c in got] == [
        ("lm-1", 2, 2, "onlstm"), ("lm-2", 1, 2, "onlstm"),      # layers outermost, then runs
        ("lm-1", 2, 3, "onlstm"), ("lm-2", 1, 3, "onlstm"),
        ("grammar-1", 2, 1, "mbr")]                             # readings without layers last
    # Whatever the kind averages: a run whose kind averages its layer 1 gives it, first.
    small = lm("lm-1", (1,), layers=(1, 2), averaged=(2,)) + lm("lm-2", (1,), layers=(1,), averaged=(1,))
    assert [(small[i].run, small[i].layer) for i in member_indices(small, {"lm-1": 1, "lm-2": 1})] == \
        [("lm-2", 1), ("lm-1", 2)]


@pytest.mark.parametrize("n_layers, layers", [(3, [2, 3]), (2, [2]), (1, [1]), (4, [2, 3])])
def test_a_language_model_averages_layers_2_and_3_or_its_top_one(tmp_path, n_layers, layers):
    from conftest import save_tiny_checkpoint

    from onparse import load

    path = tmp_path / "lm.pt"
    save_tiny_checkpoint(path, "a b c d".split(), n_layers=n_layers)
    model = load(str(path), "cpu").models[0]
    assert [(m.layer, m.decoder) for m in model.averaged_members(0)] == [(layer, "onlstm") for layer in layers]


def test_choose_records_its_members_and_the_lean_of_their_average():
    # Epoch 1 of lm-1 reads LEFTISH at every layer, epoch 2 RIGHTISH; the grammar reads MIXED.
    # Epoch 2 has the lower perplexity: the members (layers 2 and 3 of epoch 2, and the grammar)
    # average to RIGHTISH (ties first), which agrees 0.75 with right- and 0.0 with left-branching
    # trees.
    candidates = lm("lm-1", (1, 2), layers=(2, 3), decoders=("onlstm",)) + grammar("grammar-1", (1,))
    row = [LEFTISH, LEFTISH, RIGHTISH, RIGHTISH, MIXED]
    choice = choose(candidates, [row] * 3, {"lm-1": {1: 90.0, 2: 80.0}})
    assert choice.epochs == {"lm-1": 2, "grammar-1": 1} and choice.perplexity == {"lm-1": 80.0}
    assert choice.members == candidates[2:] and choice.baselines == []
    assert (choice.voter, choice.ties) == ("right", "right") and choice.lean == {"right": 0.75, "left": 0.0}
    assert choice.sentences == 3
    # Every candidate's agreement with the other run's candidates is reported: RIGHTISH meets
    # MIXED on 3 of 4 spans, LEFTISH on 1.
    assert [round(a, 4) for _, a in choice.scores] == [0.25, 0.25, 0.75, 0.75, 0.5]
    # Members that lean neither way get no voter.
    balanced = choose(candidates, [[BALANCED] * 5], {"lm-1": {1: 90.0, 2: 80.0}})
    assert balanced.voter is None and balanced.ties == "first"
    with pytest.raises(ValueError, match="at least two candidates"):
        choose(candidates[:1], [[RIGHT]])
    with pytest.raises(ValueError, match="no candidate is a reading its kind averages"):
        choose(lm("lm-1", (1,), layers=(2,), decoders=("split",)) * 2, [[RIGHT, RIGHT]])


def test_a_member_whose_trees_are_a_baselines_is_left_out():
    from onparse.cli.fit import report
    from onparse.selection.rules import baseline_agreement

    # By hand: RIGHTISH shares 3 of its 4 spans with the right-branching tree, none with the left.
    assert baseline_agreement([RIGHTISH, ("a", "b"), None]) == {"right": 0.75, "left": 0.0}
    assert baseline_agreement([("a", "b")]) == {}
    # A grammar collapsed to right-branching trees (agreement 1.0 > 0.9) is left out and reported;
    # the language model's layers 2 and 3 stay, and their average chooses the voter.
    candidates = lm("lm-1", (1,), layers=(2, 3), decoders=("onlstm",)) + grammar("grammar-1", (4,))
    choice = choose(candidates, [[RIGHTISH, MIXED, RIGHT]] * 2, {"lm-1": {1: 50.0}, "grammar-1": {4: 70.0}})
    assert choice.members == candidates[:2]
    assert choice.baselines == [(candidates[2], {"right": 1.0, "left": 0.0})]
    assert choice.to_dict()["baselines"] == [{"run": "grammar-1", "epoch": 4, "layer": 1, "decoder": "mbr",
                                              "averaged": True, "layered": False,
                                              "agreement": {"right": 1.0, "left": 0.0}}]
    assert ("left out as a baseline: grammar-1 epoch 4 layer 1 mbr (agrees 1.000 with right-branching trees, "
            "0.000 with left-branching ones)") in report(choice.to_dict()).splitlines()
    # A left-branching grammar is one too; and when every member is a baseline, all stay.
    assert choose(candidates, [[RIGHTISH, MIXED, LEFT]] * 2).members == candidates[:2]
    every = choose(candidates, [[RIGHT, RIGHT, RIGHT]] * 2)
    assert every.members == candidates and every.baselines == [] and every.voter == "right"


def test_a_grammar_whose_chosen_epoch_raised_the_collapse_alarm_is_left_out():
    from onparse.cli.fit import report

    candidates = lm("lm-1", (1,), layers=(2, 3), decoders=("onlstm",)) + \
        grammar("grammar-1", (1, 2))
    perplexity = {"lm-1": {1: 50.0}, "grammar-1": {1: 90.0, 2: 70.0}}
    # Its trees look healthy (MIXED), but its chosen epoch (2, the lower perplexity) is no better
    # than counting words; an alarm at the other epoch does not count.
    choice = choose(candidates, [[RIGHTISH, MIXED, MIXED, MIXED]] * 2, perplexity,
                    {"grammar-1": {2: "no better than counting words"}})
    assert choice.members == candidates[:2] and choice.baselines == []
    assert choice.collapsed == [(candidates[3], "no better than counting words")]
    assert "left out, not learning: grammar-1 epoch 2 (no better than counting words)" in \
        report(choice.to_dict()).splitlines()
    assert choose(candidates, [[RIGHTISH, MIXED, MIXED, MIXED]] * 2, perplexity,
                  {"grammar-1": {1: "chains"}}).members == [candidates[0], candidates[1], candidates[3]]
    # Every member collapsed: all stay.
    assert len(choose(candidates[2:], [[MIXED, MIXED]] * 2, perplexity, {"grammar-1": {1: "x", 2: "y"}}).members) == 1


def test_run_alarms_reads_a_runs_log(tmp_path):
    from onparse.selection import run_alarms

    records = [{"event": "start", "family": "grammar"}, {"event": "epoch", "epoch": 1, "valid_ppl": 900.0, "unigram_ppl": 700.0},
               {"event": "epoch", "epoch": 2, "valid_ppl": 900.0, "unigram_ppl": 700.0, "branching_share": 0.1},
               {"event": "epoch", "epoch": 3, "valid_ppl": 500.0, "unigram_ppl": 700.0, "branching_share": 0.95}]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    alarms = run_alarms(str(tmp_path))
    # Epoch 1 too: a stopped run's epochs get no grace (its first epoch may be the one fit keeps).
    assert sorted(alarms) == [1, 2, 3] and "counting words" in alarms[1] and "95%" in alarms[3]


# ---- the pipeline, end to end -------------------------------------------------------------------

TINY = ["--seeds", "1", "--preset", "tiny", "--grammars", "1", "--grammar-preset", "tiny", "--epochs", "2",
        "--cores", "1", "--limit", "20"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def no_gold(monkeypatch, tmp_path):
    """No gold tree can be read: NLTK finds no data (here and in the training processes) and the
    gold readers raise."""
    empty = tmp_path / "no-nltk-data"
    empty.mkdir()
    monkeypatch.setenv("NLTK_DATA", str(empty))
    import onparse.gold.treebank as treebank

    def refuse(*args, **kwargs):
        raise AssertionError("fit read a gold tree")
    monkeypatch.setattr(treebank, "load_gold", refuse)
    monkeypatch.setattr(treebank, "read_treebank_file", refuse, raising=False)


def test_fit_end_to_end_stopped_and_resumed_without_gold(tmp_path, no_gold):
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=3)
    out = tmp_path / "mine.pt"
    first = run("fit", text, "--out", out, *TINY, "--stop-after", "train")
    assert first.exit_code == 0, first.output
    assert "fit stopped after train" in first.stdout and not out.exists()
    run_dir = tmp_path / "mine.fit"
    state = json.loads((run_dir / "fit.json").read_text())
    assert set(state) >= {"plan", "train"} and "choose" not in state
    assert state["plan"]["held_out"] == 20 and state["train"]["epochs"] == {"lm-1": [1, 2], "grammar-1": [1, 2]}
    for name in ("lm-1", "grammar-1"):
        assert sorted(p for p in os.listdir(run_dir / name) if p.startswith("epoch-")) == ["epoch-001.pt", "epoch-002.pt"]
    again = run("fit", text, "--out", out, *TINY)
    assert again.exit_code == 2 or again.exit_code == 1
    assert "--resume" in again.output                       # a fit is there: resume it, or another folder
    done = run("fit", text, "--out", out, *TINY, "--resume", "--json")
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    choice = result["choice"]
    # Rule v12: each run's epoch of lowest validation perplexity as its metrics.jsonl logs it;
    # the tiny preset's two layers give layer 2 with the paper's decoder, the grammar its MBR tree.
    for seed in ("lm-1", "grammar-1"):
        logged = [json.loads(line) for line in (run_dir / seed / "metrics.jsonl").read_text().splitlines()]
        ppl = {e["epoch"]: e["valid_ppl"] for e in logged if e.get("event") == "epoch"}
        assert choice["epochs"][seed] == min(sorted(ppl, reverse=True), key=ppl.get)
        assert choice["perplexity"][seed] == ppl[choice["epochs"][seed]]
    assert choice["members"] == [{"run": "lm-1", "epoch": choice["epochs"]["lm-1"], "layer": 2, "decoder": "onlstm",
                                  "averaged": True, "layered": True},
                                 {"run": "grammar-1", "epoch": choice["epochs"]["grammar-1"], "layer": 1,
                                  "decoder": "mbr", "averaged": True, "layered": False}]
    # Per epoch: the language model's layers x decoders, the grammar's MBR tree.
    assert len(choice["scores"]) == 2 * (2 * 2 + 1)
    assert sorted({(s["run"], s["decoder"]) for s in choice["scores"]}) == [
        ("grammar-1", "mbr"), ("lm-1", "onlstm"), ("lm-1", "split")]
    assert json.loads((run_dir / "choice.json").read_text()) == choice
    from onparse import load

    parser = load(out)
    assert [m.decoder for m in parser.members] == [m["decoder"] for m in choice["members"]]
    assert list(parser.voters) == ([choice["voter"]] if choice["voter"] else [])
    assert parser.ties == choice["ties"]
    assert parser.metadata["fit"]["choice"] == choice and parser.metadata["fit"]["text"] == str(text)
    assert len(parser.trees(parser.tokens(["the dog saw a cat near the house"]))) == 1
    # Training resumed nothing (it was done): seed 1 trained once.
    assert state["train_seconds"].keys() == {"lm-1", "grammar-1"}
    text_report = run("fit", text, "--out", out, *TINY, "--resume")
    assert text_report.exit_code == 0 and "chosen epochs (lowest validation perplexity): lm-1 epoch" in text_report.stdout
    # Issue 55.10: a finished fit resumed for a bundle that is not there (deleted, or another
    # --out) writes it, rather than name a file that does not exist.
    out.unlink()
    other = tmp_path / "other.pt"
    for bundle, extra in ((out, []), (other, ["--run-dir", run_dir]), (out, [])):
        again = run("fit", text, "--out", bundle, *extra, *TINY, "--resume")
        assert again.exit_code == 0 and f"bundle: {bundle}" in again.stdout, again.output
        assert load(bundle).metadata["fit"]["choice"] == choice
    # The Python twin resumes the same fit with a student: only the student stage runs, learning
    # the bundle's trees of the training part (never the held-out sentences).
    from onparse import DistillSettings, FitSettings, fit
    from onparse.student.kind import load_student

    settings = FitSettings(seeds=1, preset="tiny", grammars=1, grammar_preset="tiny", epochs=2, cores=1, limit=20)
    student = tmp_path / "student.pt"
    said = []
    result = fit(str(text), str(out), settings, resume=True, student=str(student), say=said.append,
                 student_options={"sizes": {"embedding_size": 8, "hidden_size": 8, "mlp_size": 8},
                                  "settings": DistillSettings(epochs=1, valid_every=10)})
    assert result.student == str(student) and load_student(str(student)).metadata["text"]["sentences"] == 360
    assert [line for line in said if line.startswith("fit: ") and "(" in line and " of " in line] == [
        "fit: student (5 of 5)"]
    assert result.choice == choice and json.loads((run_dir / "fit.json").read_text())["student"]


def test_fit_never_replaces_a_model_without_force(tmp_path):
    from conftest import save_tiny_checkpoint

    model = save_tiny_checkpoint(tmp_path / "m.pt", ["the", "cat"])[2]
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=1)
    before = open(model, "rb").read()
    out = run("fit", text, "--out", model, *TINY, "--stop-after", "plan")
    assert out.exit_code == 2 and "holds an onparse model" in out.output
    student = run("fit", text, "--out", tmp_path / "new.pt", "--student", model, *TINY)
    assert student.exit_code == 2 and "--student" in student.output
    assert open(model, "rb").read() == before
    none = run("fit", text, "--out", tmp_path / "p.pt", "--seeds", "0")
    assert none.exit_code == 2 and "nothing to train" in none.output


@pytest.mark.parametrize("case", ["small", "treebank", "unreadable", "nothing", "settings", "damaged"])
def test_fit_errors_are_one_line(tmp_path, case):
    text = tmp_path / "text.txt"
    args = ["fit", text, "--out", tmp_path / "p.pt", *TINY]
    if case == "small":
        write_corpus(text, n_sentences=50, seed=1)
        expect = "fit needs at least 200"
    elif case == "treebank":
        args[1] = "alpino"
        expect = "fit its training part as a text file"
    elif case == "unreadable":
        text.write_bytes(b"\xff\xfe\x00 not text\n" * 300)
        expect = str(text)
    elif case == "nothing":
        write_corpus(text, n_sentences=400, seed=1)
        args.append("--resume")
        expect = "nothing to resume"
    elif case == "settings":
        write_corpus(text, n_sentences=400, seed=1)
        assert run(*args, "--stop-after", "plan").exit_code == 0
        args = [a if a != "2" else "3" for a in args] + ["--resume"]     # --epochs 3
        expect = "a fit with other settings (epochs)"
    else:
        write_corpus(text, n_sentences=400, seed=1)
        (tmp_path / "p.fit").mkdir()
        (tmp_path / "p.fit" / "fit.json").write_text('{"plan": ')
        args.append("--resume")
        expect = "fit.json is damaged"
    out = run(*args)
    assert out.exit_code == 1, out.output
    assert expect in out.output and "Traceback" not in out.output
    assert len(out.output.strip().splitlines()) <= 3


def test_the_training_eta_counts_timed_epochs_and_waves_to_come(tmp_path):
    from onparse.fitting.pipeline import FitSettings, _Fit

    fit = _Fit("text.txt", str(tmp_path / "p.pt"), FitSettings(seeds=3, epochs=4), str(tmp_path), None, print)
    for run, epochs in (("lm-1", 1), ("lm-2", 2)):
        (tmp_path / run).mkdir()
        (tmp_path / run / "metrics.jsonl").write_text("".join(
            json.dumps({"event": "epoch", "epoch": e, "epoch_time_s": 100.0}) + "\n" for e in range(1, epochs + 1)))
    plan = {"runs": ["lm-1", "lm-2", "lm-3"], "parallel": 2}
    # 100 s an epoch: lm-1 has 3 epochs to go (the longest now), then lm-3's 4 in the next wave.
    assert fit._training_eta(["lm-1", "lm-2"], plan) == "; training ends in about 11m40s"
    assert fit._training_eta(["lm-3"], {"runs": ["lm-1", "lm-2", "lm-3"], "parallel": 2}) == \
        "; training ends in about 6m40s"


def test_an_interrupted_fit_says_how_to_go_on(tmp_path, monkeypatch):
    import onparse.fitting.pipeline as pipeline

    def stop(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(pipeline, "fit", stop)
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=1)
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY)
    assert out.exit_code == 130
    assert f"interrupted: continue with onparse fit {text} --out {tmp_path / 'p.pt'} --resume" in out.output


def test_the_budget_left_counts_the_stage_under_way(tmp_path):
    import time

    from onparse.fitting.pipeline import FitSettings, _Fit

    fit = _Fit("text.txt", str(tmp_path / "p.pt"), FitSettings(max_time=600), str(tmp_path), None, print)
    fit.state["seconds"] = {"plan": 60.0}
    assert fit._left() == "; about 9m00s of the budget left"
    fit.stage_began = time.monotonic() - 120.2          # training for two minutes so far
    assert fit._left() == "; about 7m00s of the budget left"


def test_a_run_that_completed_no_epoch_is_left_out_and_reported(tmp_path, monkeypatch):
    from onparse.cli.fit import report
    from onparse.errors import OnparseError
    from onparse.fitting.pipeline import FitSettings, _Fit

    said = []
    fit = _Fit("text.txt", str(tmp_path / "p.pt"), FitSettings(seeds=1, grammars=1), str(tmp_path), None, said.append)
    fit.state["plan"] = {"runs": ["lm-1", "grammar-1"], "parallel": 2, "waves": 1}
    monkeypatch.setattr(_Fit, "_run_wave", lambda self, wave, plan, used: None)     # training is done
    for run in ("lm-1", "grammar-1"):
        (tmp_path / run).mkdir()
    # Neither has an epoch: nothing to choose from, one line that says what to do.
    with pytest.raises(OnparseError, match=r"no run completed an epoch \(lm-1, grammar-1\); give more --max-time"):
        fit._train()
    (tmp_path / "lm-1" / "epoch-001.pt").write_bytes(b"")
    (tmp_path / "lm-1" / "epoch-002.pt").write_bytes(b"")
    assert fit._train() == {"epochs": {"lm-1": [1, 2]}, "left_out": ["grammar-1"]}
    assert said == ["fit: grammar-1 completed no epoch within its share of the budget: left out of the choice "
                    "(more --max-time would keep it)"]
    choice = {"epochs": {"lm-1": 2}, "perplexity": {"lm-1": 80.0}, "sentences": 20, "voter": None, "ties": "first",
              "lean": {}, "members": [{"run": "lm-1", "epoch": 2, "layer": 2, "decoder": "onlstm"}],
              "member_scores": [{"run": "lm-1", "epoch": 2, "layer": 2, "decoder": "onlstm", "agreement": 0.5}]}
    lines = report(choice, ["grammar-1"]).splitlines()
    assert lines[:2] == ["chosen epochs (lowest validation perplexity): lm-1 epoch 2 (80.0)",
                         "left out (no epoch within its share of --max-time): grammar-1"]
    assert "left out" not in report(choice)


def test_grammar_options_reach_the_grammar_runs_only(tmp_path):
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=2)
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY, "--epochs", "1", "--grammar-vocab", "12",
              "--grammar-curriculum", "6", "--grammar-form", "low_rank", "--stop-after", "train")
    assert out.exit_code == 0, out.output
    starts = {name: json.loads((tmp_path / "p.fit" / name / "metrics.jsonl").read_text().splitlines()[0])
              for name in ("lm-1", "grammar-1")}
    grammar = starts["grammar-1"]
    assert grammar["family"] == "grammar" and grammar["vocab_size"] == 12
    assert grammar["config"]["max_vocab"] == 12 and grammar["config"]["curriculum_start"] == 6
    assert grammar["sizes"]["rule_form"] == "low_rank" and starts["lm-1"].get("sizes") is None
    assert starts["lm-1"]["vocab_size"] > 12               # the language model keeps its own vocabulary
    state = json.loads((tmp_path / "p.fit" / "fit.json").read_text())
    assert state["settings"]["grammar_vocab"] == 12 and state["settings"]["grammar_curriculum"] == 6
    # A fit recorded before these options existed (no such keys) resumes without them.
    for key in ("grammar_vocab", "grammar_curriculum", "grammar_form"):
        del state["settings"][key]
    (tmp_path / "q.fit").mkdir()
    (tmp_path / "q.fit" / "fit.json").write_text(json.dumps({**state, "text": str(text)}))
    from onparse.fitting.pipeline import FitSettings, _Fit

    _Fit(str(text), str(tmp_path / "q.pt"), FitSettings(seeds=1, preset="tiny", grammars=1, grammar_preset="tiny",
                                                         epochs=1, cores=1, limit=20),
         str(tmp_path / "q.fit"), None, print)


@pytest.mark.parametrize("option, value, expect", [
    ("--grammar-vocab", "2", "max_vocab must be 0 (no limit) or at least 3"),
    ("--grammar-curriculum", "41", "curriculum_start must lie in 2..max_words (40)"),
    ("--grammar-curriculum", "1", "1 is not in the range 2<=x")])
def test_bad_grammar_options_are_usage_errors(tmp_path, option, value, expect):
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=1)
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY, option, value)
    assert out.exit_code == 2 and expect in out.output and "Traceback" not in out.output
    assert not (tmp_path / "p.fit").exists()


@pytest.mark.parametrize("value, expect", [("9" * 400, "longer than a year"),
                                           ("0", "a duration must be more than 0 seconds")])
def test_a_duration_of_nothing_or_forever_is_a_usage_error(tmp_path, value, expect):
    # Issue 55.6: 400 nines parsed to inf and fit crashed after planning; 0 was a data error.
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=1)
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY, "--max-time", value)
    assert out.exit_code == 2, out.output
    assert expect in out.output and "Traceback" not in out.output
    assert not (tmp_path / "p.fit").exists()


def test_a_budget_too_short_to_start_a_run_names_no_log(tmp_path):
    # Issue 55.6: --max-time 0.5 left each run under a second, none started, and the error
    # pointed to a train.log never written.
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=1)
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY, "--max-time", "0.5")
    assert out.exit_code == 1 and "Traceback" not in out.output
    error = out.output.strip().splitlines()[-1]
    assert "no run completed an epoch" in error and "under a second" in error
    assert "train.log" not in error and not (tmp_path / "p.fit" / "lm-1" / "train.log").exists()


@pytest.mark.parametrize("option, name", [
    ("--out", "fit.json"), ("--out", "choice.json"), ("--out", "lm-1"), ("--out", "grammar-2/best.pt"),
    ("--out", "student-text.txt"), ("--student", "fit.json"), ("--student", "student")])
def test_fit_refuses_outputs_that_are_its_own_files(tmp_path, option, name):
    # Issue 55.8: --out R/fit.json --run-dir R overwrote fit's state with the bundle (exit 0);
    # --out R/lm-1 failed with "Is a directory" only after all training.
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=1)
    folder = tmp_path / "R"
    folder.mkdir()
    target = os.path.normpath(folder / name)
    outputs = {"--out": tmp_path / "p.pt", "--student": None, option: target}
    args = ["--out", outputs["--out"]] + (["--student", outputs["--student"]] if outputs["--student"] else [])
    out = run("fit", text, *args, "--run-dir", folder, *TINY)
    assert out.exit_code == 2 and "Traceback" not in out.output, out.output
    assert f"{option} {target} is one of fit's own files in its run folder {folder}" in out.output
    assert os.listdir(folder) == []                        # refused before any stage
    # A file of another name in the run folder is the user's to choose.
    fine = run("fit", text, "--out", folder / "parser.pt", "--run-dir", folder, *TINY, "--stop-after", "plan")
    assert fine.exit_code == 0, fine.output
    # The run folder itself (a folder not made yet, which click's file check lets through).
    from onparse.errors import OnparseError
    from onparse.fitting.pipeline import FitSettings

    with pytest.raises(OnparseError, match="is fit's run folder"):
        FitSettings().check(str(tmp_path / "S"), None, str(tmp_path / "S"))


# ---- issue 55.1, 55.2, 55.9: a stopped fit can always resume ------------------------------------

def test_runs_killed_before_their_first_checkpoint_start_afresh_on_resume(tmp_path):
    # A run killed before its first last.pt (the first comes at --checkpoint-every or the end of
    # epoch 1) leaves metrics.jsonl and perhaps a temporary file of a save cut short (a kill, a
    # full disk): nothing to resume, and `onparse train` refused the folder ("already holds
    # onparse files; pass --resume").
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=1)
    args = ["fit", text, "--out", tmp_path / "p.pt", *TINY[:-4], "--limit", "20", "--epochs", "1", "--threads", "1"]
    assert run(*args, "--stop-after", "plan").exit_code == 0
    for name in ("lm-1", "grammar-1"):
        folder = tmp_path / "p.fit" / name
        folder.mkdir()
        (folder / "metrics.jsonl").write_text(json.dumps({"event": "start", "step": 0}) + "\n" + '{"event": "ep')
        (folder / f".onparse-{os.getpid()}-last.pt.tmp").write_bytes(b"cut short")
    done = run(*args, "--resume", "--stop-after", "train")
    assert done.exit_code == 0, done.output
    state = json.loads((tmp_path / "p.fit" / "fit.json").read_text())
    assert state["train"]["epochs"] == {"lm-1": [1], "grammar-1": [1]}
    for name in ("lm-1", "grammar-1"):
        events = [json.loads(line)["event"] for line in (tmp_path / "p.fit" / name / "metrics.jsonl").open()]
        assert events[0] == "start" and events.count("start") == 1 and "epoch" in events   # afresh, once


def _start_fit(tmp_path, *extra, began="training:"):
    """A real `onparse fit` in a session of its own (as a terminal's job is), training one
    language model that cannot finish (50 epochs of 2,000 sentences), once its run has said
    ``began`` in its log."""
    import subprocess
    import sys
    import time

    text = tmp_path / "text.txt"
    if not text.exists():
        write_corpus(text, n_sentences=2000, seed=1)
    proc = subprocess.Popen([sys.executable, "-m", "onparse", "fit", str(text), "--out", str(tmp_path / "p.pt"),
                             "--seeds", "1", "--preset", "tiny", "--epochs", "50", "--threads", "1", "--limit", "20",
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    log = tmp_path / "p.fit" / "lm-1" / "train.log"
    for _ in range(1200):
        if log.exists() and began in log.read_text():
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    time.sleep(1.0)                   # past its start: the run now saves when asked to stop
    return proc, log


def _lock_holder_pid(folder):
    text = (folder / ".onparse.lock").read_text()
    return int(text.split()[1])            # "pid N on HOST since T"


def _ctrl_c(proc):
    """A terminal's Ctrl-C, which reaches the whole process group; fit's exit status and stderr."""
    import signal

    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err


def test_ctrl_c_of_fit_stops_each_run_once_and_it_saves(tmp_path):
    proc, log = _start_fit(tmp_path)
    status, err = _ctrl_c(proc)
    assert status == 130 and "interrupted: continue with" in err, err
    text = log.read_text()
    # One stop request (the terminal's SIGINT does not reach the run as a second, which aborted it
    # without saving): the run stopped and saved its place.
    assert "stopped (interrupted)" in text and "Traceback" not in text, text
    assert (tmp_path / "p.fit" / "lm-1" / "last.pt").exists()
    # ... and the advised --resume continues it.
    proc, log = _start_fit(tmp_path, "--resume", began="resuming:")
    assert _ctrl_c(proc)[0] == 130 and log.read_text().count("stopped (interrupted)") == 2


def test_a_training_run_stops_and_saves_when_fit_is_killed(tmp_path):
    import signal
    import time

    proc, log = _start_fit(tmp_path)
    folder = tmp_path / "p.fit" / "lm-1"
    child = _lock_holder_pid(folder)
    os.kill(proc.pid, signal.SIGKILL)       # fit alone: its run must not train on as an orphan
    proc.communicate(timeout=60)
    for _ in range(1200):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the training run outlived fit")
    assert "stopped (interrupted)" in log.read_text() and (folder / "last.pt").exists()
    proc, log = _start_fit(tmp_path, "--resume", began="resuming:")     # not "in use by another run"
    assert _ctrl_c(proc)[0] == 130 and log.read_text().count("stopped (interrupted)") == 2


def test_a_folder_lock_can_be_waited_for(tmp_path):
    # A run of an earlier fit that still saves (or an orphan of a fit killed before this
    # version) holds its folder's lock: the resumed fit waits for it and says why, rather than
    # fail "in use by another training run".
    import subprocess
    import sys

    from onparse.files.run_folder import FolderLock

    folder = tmp_path / "run"
    folder.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from onparse.files.run_folder import FolderLock; "
        f"lock = FolderLock({str(folder)!r}).acquire(); print('held', flush=True); sys.stdin.read(); lock.release()")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    said = []

    def waiting(who):
        said.append(who)
        holder.stdin.close()                 # the earlier run ends once we have said we wait
    lock = FolderLock(str(folder)).acquire(wait=waiting)
    lock.release()
    assert holder.wait(timeout=60) == 0
    assert len(said) == 1 and said[0].startswith(f"pid {holder.pid} on ")


def test_fit_on_a_few_lines_asks_for_more_text_not_a_validation_file(tmp_path):
    # fit has no validation file option: a text too short for the held-out split gets fit's own
    # advice, not onparse train's.
    text = write_corpus(tmp_path / "text.txt", n_sentences=10, seed=1)
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY)
    assert out.exit_code == 1 and "validation file" not in out.output
    assert f"{text} has 10 sentences; fit needs at least 200" in out.output


def test_paragraph_lines_do_not_choose(tmp_path):
    """A probe's fit of paragraph-like text (lines of up to 1,108 words) spent 427 s of a 4-minute
    budget choosing: every kept epoch parsed every held-out line.  Choosing reads held-out lines of
    3 to CHOOSE_MAX_WORDS words; a fit planned before the cap (no such key) still reads them all."""
    from onparse.errors import OnparseError
    from onparse.fitting.pipeline import CHOOSE_MAX_WORDS, FitSettings, _Fit, held_out_sentences

    class Corpus:
        test = [["a"] * 2, ["a"] * 3, ["b"] * (CHOOSE_MAX_WORDS + 1), ["c"] * CHOOSE_MAX_WORDS]

    assert held_out_sentences(Corpus, 10, CHOOSE_MAX_WORDS) == [["a"] * 3, ["c"] * CHOOSE_MAX_WORDS]
    assert held_out_sentences(Corpus, 1, CHOOSE_MAX_WORDS) == [["a"] * 3]
    assert len(held_out_sentences(Corpus, 10)) == 3
    lines = [" ".join(["word"] * 100) if i % 3 == 0 else line
             for i, line in enumerate(open(write_corpus(tmp_path / "t.txt", n_sentences=600, seed=3)))]
    text = tmp_path / "text.txt"
    text.write_text("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY, "--stop-after", "plan")
    assert out.exit_code == 0, out.output
    state_path = tmp_path / "p.fit" / "fit.json"
    plan = json.loads(state_path.read_text())["plan"]
    assert plan["held_out_max_words"] == CHOOSE_MAX_WORDS and 0 < plan["held_out"] < 30
    # The fit's own check on resume reads the same sentences; an older plan (no cap) its own.
    fit = _Fit(str(text), str(tmp_path / "p.pt"), FitSettings(**{k: v for k, v in json.loads(
        state_path.read_text())["settings"].items()}), str(tmp_path / "p.fit"), None, print)
    assert max(len(s) for s in fit._held_out()) <= CHOOSE_MAX_WORDS
    del fit.state["plan"]["held_out_max_words"]
    with pytest.raises(OnparseError, match="changed since the fit started"):
        fit._held_out()                   # the capped digest is not the uncapped sentences'


# -- pre-tokenised text: fit reads the tokens that induce --pretokenized and eval -m read --------

def _given_text(path):
    """A text of 400 lines as onparse gold-text writes a treebank's: tokens separated by spaces,
    some of them words by their tags though they hold no letter or digit (’, 、), and every
    tenth line only such a token."""
    lines = open(write_corpus(path, n_sentences=400, seed=4), encoding="utf-8").read().splitlines()
    lines = ["、" if i % 10 == 0 else line.replace(" .", " ’ s") for i, line in enumerate(lines)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_fit_help_offers_pretokenized_text():
    out = run("fit", "--help")
    assert out.exit_code == 0 and "--pretokenized" in out.output
    assert "onparse gold-text" in " ".join(out.output.split())


def test_pretokenized_is_a_setting_of_the_fit(tmp_path):
    from onparse.errors import OnparseError
    from onparse.fitting.pipeline import FitSettings, _Fit

    assert FitSettings().pretokenized is False and FitSettings().corpus_format == "auto"
    assert FitSettings(pretokenized=True).corpus_format == "pretokenized"
    text = _given_text(tmp_path / "text.txt")
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY, "--pretokenized", "--stop-after", "plan")
    assert out.exit_code == 0, out.output
    state = json.loads((tmp_path / "p.fit" / "fit.json").read_text())
    assert state["settings"]["pretokenized"] is True
    # --resume alone keeps the recorded reading (an option not given again keeps its value) ...
    again = run("fit", text, "--out", tmp_path / "p.pt", "--resume", "--stop-after", "plan")
    assert again.exit_code == 0, again.output
    # ... and a fit started without it refuses to resume with it.
    raw = run("fit", text, "--out", tmp_path / "r.pt", *TINY, "--stop-after", "plan")
    assert raw.exit_code == 0, raw.output
    again = run("fit", text, "--out", tmp_path / "r.pt", *TINY, "--pretokenized", "--resume", "--stop-after", "plan")
    assert again.exit_code == 1 and "a fit with other settings (pretokenized)" in again.output
    # A fit recorded before the option (no such key) read its text as raw text: it resumes so.
    del state["settings"]["pretokenized"]
    (tmp_path / "q.fit").mkdir()
    (tmp_path / "q.fit" / "fit.json").write_text(json.dumps(state))
    settings = FitSettings(**{**state["settings"], "max_time": None})
    _Fit(text, str(tmp_path / "q.pt"), settings, str(tmp_path / "q.fit"), None, print)
    with pytest.raises(OnparseError, match="other settings"):
        _Fit(text, str(tmp_path / "q.pt"), FitSettings(**{**state["settings"], "pretokenized": True}),
             str(tmp_path / "q.fit"), None, print)


def test_a_pretokenized_fit_plans_and_trains_on_every_token(tmp_path):
    text = _given_text(tmp_path / "text.txt")
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY, "--pretokenized", "--stop-after", "plan")
    assert out.exit_code == 0, out.output
    plan = json.loads((tmp_path / "p.fit" / "fit.json").read_text())["plan"]
    assert plan["sentences"] == 400                  # the lines of only 、 are sentences too
    assert plan["corpus_format"] == "pretokenized"   # what the runs read TEXT by
    from onparse.fitting.pipeline import FitSettings, _Fit

    state = json.loads((tmp_path / "p.fit" / "fit.json").read_text())
    fit = _Fit(str(text), str(tmp_path / "p.pt"), FitSettings(**state["settings"]), str(tmp_path / "p.fit"), None, print)
    for name in plan["runs"]:
        assert json.loads(fit._command(name, plan, 60.0)[-1])["plan"]["fmt"] == "pretokenized"


def test_resume_alone_continues_a_fit_with_the_settings_it_was_started_with(tmp_path):
    """The hint fit prints when stopped ("continue with: onparse fit TEXT --out OUT --resume")
    works as printed: the options not given again keep their recorded values (it was refused as
    "a fit with other settings (epochs, grammars, ...)" when the fit had been started with any
    option); an option given differently is still refused."""
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=2)
    out = tmp_path / "p.pt"
    first = run("fit", text, "--out", out, *TINY, "--max-time", "10m", "--stop-after", "plan")
    assert first.exit_code == 0, first.output
    hint = first.stdout.strip().splitlines()[-1]
    assert hint.endswith(f"continue with: onparse fit {text} --out {out} --resume")
    again = run("fit", text, "--out", out, "--resume", "--stop-after", "plan")
    assert again.exit_code == 0, again.output
    recorded = json.loads((tmp_path / "p.fit" / "fit.json").read_text())["settings"]
    assert (recorded["epochs"], recorded["grammars"], recorded["max_time"]) == (2, 1, 600.0)
    other = run("fit", text, "--out", out, "--resume", "--epochs", "3", "--stop-after", "plan")
    assert other.exit_code == 1 and "a fit with other settings (epochs)" in other.output


# ---- issue 66: fit never replaces a file it did not write; its run folder is read defensively ----

@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """A tiny fit stopped after its plan (no training): its text and run folder, which each test
    copies (:func:`_copy_planned`) before changing anything."""
    root = tmp_path_factory.mktemp("planned")
    text = write_corpus(root / "text.txt", n_sentences=400, seed=1)
    done = run("fit", text, "--out", root / "p.pt", "--run-dir", root / "R", *TINY, "--stop-after", "plan")
    assert done.exit_code == 0, done.output
    return text, root / "R"


def _copy_planned(planned, tmp_path):
    import shutil

    text, folder = planned
    shutil.copytree(folder, tmp_path / "R")
    return text, tmp_path / "R"


def test_a_resumed_fit_never_replaces_a_model_it_did_not_write(tmp_path, planned):
    # Issue 66.1: refuse_model was called only without --resume, so a resumed fit replaced any
    # model at --out or --student.
    from conftest import save_tiny_checkpoint
    from onparse import FitSettings, fit
    from onparse.errors import OnparseError

    text, folder = _copy_planned(planned, tmp_path)
    model = save_tiny_checkpoint(tmp_path / "m.pt", ["the", "cat"])[2]
    before = open(model, "rb").read()
    out = run("fit", text, "--out", model, "--run-dir", folder, "--resume", "--stop-after", "plan")
    assert out.exit_code == 2 and f"{model} holds an onparse model" in out.output, out.output
    assert "--force" in out.output and "Traceback" not in out.output
    settings = FitSettings(**json.loads((folder / "fit.json").read_text())["settings"])
    for outputs in ({"out": model}, {"out": str(tmp_path / "p.pt"), "student": model}):
        with pytest.raises(OnparseError, match="holds an onparse model"):
            fit(str(text), outputs["out"], settings, run_dir=str(folder), resume=True,
                student=outputs.get("student"), stop_after="plan")
    assert open(model, "rb").read() == before
    # --force replaces it, as without --resume.
    forced = run("fit", text, "--out", model, "--run-dir", folder, "--resume", "--stop-after", "plan", "--force")
    assert forced.exit_code == 0, forced.output


def test_fit_never_replaces_a_plain_file_without_force(tmp_path, planned):
    # Issue 66.21: `fit --out notes.txt` replaced a text file with the bundle.
    text, folder = _copy_planned(planned, tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    for extra in ([*TINY], ["--run-dir", folder, "--resume"]):
        out = run("fit", text, "--out", notes, *extra, "--stop-after", "plan")
        assert out.exit_code == 2 and f"{notes} exists and is not an onparse model" in out.output, out.output
        assert "--force" in out.output
    student = run("fit", text, "--out", tmp_path / "p.pt", "--student", notes, "--run-dir", folder, "--resume")
    assert student.exit_code == 2 and "--student" in student.output and "is not an onparse model" in student.output
    assert notes.read_text() == "my notes\n"
    forced = run("fit", text, "--out", notes, *TINY, "--stop-after", "plan", "--force")
    assert forced.exit_code == 0, forced.output
    # A folder is no file to write, --force or not (the API found out only after all the training).
    from onparse import FitSettings, fit
    from onparse.errors import OnparseError

    with pytest.raises(OnparseError, match="is a folder"):
        fit(str(text), str(tmp_path), FitSettings(), run_dir=str(tmp_path / "S"), force=True)


def test_the_bundle_and_the_student_are_two_files(tmp_path, planned):
    # Issue 66.2: `--out s.pt --student s.pt` was accepted and the student replaced the bundle.
    from onparse import FitSettings, fit
    from onparse.errors import OnparseError

    text, folder = _copy_planned(planned, tmp_path)
    (tmp_path / "sub").mkdir()
    bundle = tmp_path / "s.pt"
    os.symlink(bundle, tmp_path / "link.pt")
    for student in (bundle, tmp_path / "sub" / ".." / "s.pt", tmp_path / "link.pt"):
        out = run("fit", text, "--out", bundle, "--student", student, *TINY)
        assert out.exit_code == 2 and "Traceback" not in out.output, out.output
        assert f"--student {student} is the same file as --out {bundle}" in out.output
    assert not bundle.exists() and not (tmp_path / "s.fit").exists()
    settings = FitSettings(**json.loads((folder / "fit.json").read_text())["settings"])
    with pytest.raises(OnparseError, match="the same file as --out"):
        fit(str(text), str(bundle), settings, run_dir=str(folder), resume=True, student=str(tmp_path / "link.pt"))
    # Nor may a resumed fit's student be the bundle it wrote (which it would no longer rebuild).
    state = json.loads((folder / "fit.json").read_text())
    choice = {"epochs": {"lm-1": 1}, "members": [], "voter": None, "ties": "first", "sentences": 20,
              "member_scores": []}
    state.update(train={"epochs": {"lm-1": [1]}}, choose={"choice": choice}, bundle={"out": str(bundle)})
    (folder / "fit.json").write_text(json.dumps(state))
    with pytest.raises(OnparseError, match=f"--student {bundle} is this fit's bundle"):
        fit(str(text), str(tmp_path / "other.pt"), settings, run_dir=str(folder), resume=True, student=str(bundle))
    # Nor may either be the text the fit learns from.
    out = run("fit", text, "--out", text, *TINY, "--force")
    assert out.exit_code == 2 and f"--out {text} is the text the fit learns from" in out.output, out.output


_SHAPES = {
    "plan": lambda s: s.update(plan="x"),
    "seconds": lambda s: s["seconds"].update(start="1"),
    "seeds": lambda s: s["settings"].update(seeds="1"),
    "digest": lambda s: (s["plan"].pop("held_out_sha256"),
                         s.update(train={"epochs": {"lm-1": [1]}, "left_out": []})),
    "runs": lambda s: s["plan"].update(runs=["../elsewhere"]),
    "epochs": lambda s: s.update(train={"epochs": {"lm-1": ["1"]}, "left_out": []}),
}


@pytest.mark.parametrize("case", sorted(_SHAPES))
def test_a_fit_record_of_the_wrong_shape_is_a_one_line_error(tmp_path, planned, case):
    # Issue 66.4: well-formed JSON of the wrong shape in fit.json gave tracebacks (TypeError,
    # KeyError) rather than the one-line "damaged" error.
    text, folder = _copy_planned(planned, tmp_path)
    state = json.loads((folder / "fit.json").read_text())
    _SHAPES[case](state)
    (folder / "fit.json").write_text(json.dumps(state))
    out = run("fit", text, "--out", tmp_path / "p.pt", "--run-dir", folder, "--resume", "--stop-after", "choose")
    assert out.exit_code == 1, out.output
    assert f"{folder / 'fit.json'} is damaged" in out.output and "Traceback" not in out.output, out.output
    assert len(out.output.strip().splitlines()) <= 2
    assert not (folder / "lm-1").exists()                 # nothing trained on a damaged record


def test_the_collapse_alarm_knows_a_runs_family_from_the_fit(tmp_path):
    # Issue 66.5: the alarm read a run's family only from its `start` event; a metrics.jsonl that
    # had lost it (or held only a resume) let a grammar worse than counting words become a member.
    from onparse.fitting.pipeline import FitSettings, _Fit
    from onparse.selection import run_alarms

    fit = _Fit("text.txt", str(tmp_path / "p.pt"), FitSettings(seeds=1, grammars=1), str(tmp_path), None, print)
    fit.state["plan"] = {"runs": ["lm-1", "grammar-1"], "corpus": "text.txt"}
    epoch = {"event": "epoch", "epoch": 1, "valid_ppl": 1170.0, "unigram_ppl": 972.0}
    for run_name in ("lm-1", "grammar-1"):
        (tmp_path / run_name).mkdir()
        (tmp_path / run_name / "metrics.jsonl").write_text(json.dumps(epoch) + "\n")
    alarms = fit._alarms(["lm-1", "grammar-1"])
    assert alarms["lm-1"] == {} and "no better than counting words" in alarms["grammar-1"][1]
    # Alone, a run folder names its family by whichever of its start or resume events survived.
    resumed = {"event": "resume", "family": "grammar", "step": 10}
    (tmp_path / "grammar-1" / "metrics.jsonl").write_text(json.dumps(resumed) + "\n" + json.dumps(epoch) + "\n")
    assert list(run_alarms(str(tmp_path / "grammar-1"))) == [1]
    assert list(run_alarms(str(tmp_path / "lm-1"), "grammar")) == [1]


def test_a_damaged_saved_state_of_a_run_says_which_file_and_how_to_go_on(tmp_path, planned):
    # Issue 66.9: the worker read a run's last.pt outside its `except OnparseError`: train.log got
    # a traceback, and every --resume failed the same way with no hint.
    from onparse.fitting.pipeline import FitSettings, _Fit

    text, folder = _copy_planned(planned, tmp_path)
    (folder / "lm-1").mkdir()
    last = folder / "lm-1" / "last.pt"
    last.write_bytes(b"not a checkpoint")
    (folder / "lm-1" / "metrics.jsonl").write_text(json.dumps({"event": "start", "family": "lm", "step": 0}) + "\n")
    out = run("fit", text, "--out", tmp_path / "p.pt", "--run-dir", folder, "--resume", "--stop-after", "train")
    assert out.exit_code == 1 and "Traceback" not in out.output, out.output
    error = out.output.strip().splitlines()[-1]
    assert f"cannot resume lm-1: cannot read checkpoint {last}" in error, error
    assert f"delete {last} and resume the fit" in error and "another --run-dir" in error
    assert "Traceback" not in (folder / "lm-1" / "train.log").read_text()
    # As advised: without it, the run starts again from its start (its old files replaced).
    last.unlink()
    state = json.loads((folder / "fit.json").read_text())
    fit = _Fit(str(text), str(tmp_path / "p.pt"), FitSettings(**state["settings"]), str(folder), None, print)
    options = json.loads(fit._command("lm-1", state["plan"], 60.0)[-1])["options"]
    assert options["resume"] is False and options["overwrite"] is True


def test_sigterm_to_fit_saves_the_stage_time_and_says_how_to_go_on(tmp_path, monkeypatch):
    # Issue 66.14: SIGTERM to fit exited 143 with no message, and the stage's seconds were lost.
    import signal
    import time

    import onparse.fitting.pipeline as pipeline

    def terminated(self):
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
        pytest.fail("SIGTERM did not stop fit")
    monkeypatch.setattr(pipeline._Fit, "_plan", terminated)
    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=1)
    before = signal.getsignal(signal.SIGTERM)
    out = run("fit", text, "--out", tmp_path / "p.pt", *TINY)
    assert out.exit_code == 143, out.output
    assert "stopped (SIGTERM): continue with" in out.output and "--resume" in out.output
    seconds = json.loads((tmp_path / "p.fit" / "fit.json").read_text())["seconds"]
    assert seconds["plan"] >= 0.3
    assert signal.getsignal(signal.SIGTERM) == before            # fit's handler is fit's alone


def test_a_killed_fit_has_saved_most_of_its_stage_time(tmp_path, monkeypatch):
    # Issue 66.14: after kill -9 the stage's time was not counted, so a resumed fit got that
    # budget back.  The running stage's time is saved as it goes (every STAGE_SAVE_EVERY seconds).
    import onparse.fitting.pipeline as pipeline
    import onparse.fitting.waves as waves
    from onparse.errors import OnparseError
    from onparse.fitting.pipeline import FitSettings, _Fit

    monkeypatch.setattr(pipeline, "STAGE_SAVE_EVERY", 0.0, raising=False)
    fit = _Fit("text.txt", str(tmp_path / "p.pt"), FitSettings(seeds=1, cores=1), str(tmp_path), None, print)
    fit.state["plan"] = {"runs": ["lm-1"], "parallel": 1, "waves": 1, "threads_per_run": 1, "corpus": "text.txt"}
    on_disk = []

    class Running:
        returncode, polls = 0, 0

        def poll(self):
            self.polls += 1
            saved = tmp_path / "fit.json"
            on_disk.append(json.loads(saved.read_text())["seconds"].get("train", 0.0) if saved.exists() else 0.0)
            return None if self.polls < 4 else 0

        def send_signal(self, signum):
            pass

        def wait(self, timeout=None):
            return 0
    monkeypatch.setattr(waves.subprocess, "Popen", lambda command, **kw: Running())
    with pytest.raises(OnparseError, match="no run completed an epoch"):
        fit.do("train")
    assert on_disk[-1] >= 1.0 and on_disk == sorted(on_disk)       # what a kill -9 would have left
    assert fit.state["seconds"]["train"] == pytest.approx(on_disk[-1], abs=1.0)


def test_the_chose_line_names_only_runs_with_members():
    # Issue 66.14: "fit: chose grammar-1 epoch 2, lm-1 epoch 3; ..." named a grammar left out.
    from onparse.fitting.pipeline import describe
    from onparse.selection import Candidate
    from onparse.selection.rules import Choice

    member = Candidate("lm-1", 3, 2, "onlstm", True, True)
    choice = Choice(epochs={"grammar-1": 2, "lm-1": 3}, members=[member], voter="right", ties="right",
                    scores=[], member_scores=[],
                    collapsed=[(Candidate("grammar-1", 2, 1, "mbr", True, False), "not learning")])
    assert describe(choice) == "lm-1 epoch 3; 1 member(s); a right-branching voter, ties right"


def test_a_fit_resumes_with_its_text_however_spelled_and_with_other_cores(tmp_path, planned, monkeypatch):
    # Issue 66.20: a fit started with one spelling of TEXT was refused on resume when given the
    # same file by another ("is a fit of text.txt, not /abs/text.txt"); --cores was refused too.
    from onparse.fitting.pipeline import FitSettings, _Fit

    from pathlib import Path

    text, folder = _copy_planned(planned, tmp_path)
    text = Path(text)
    monkeypatch.chdir(text.parent)
    os.symlink(text, tmp_path / "link.txt")
    for spelling in ("text.txt", "./text.txt", tmp_path / "link.txt"):
        out = run("fit", spelling, "--out", tmp_path / "p.pt", "--run-dir", folder, "--resume", "--stop-after", "plan")
        assert out.exit_code == 0, out.output
    other = tmp_path / "other.txt"
    other.write_text(text.read_text())
    out = run("fit", other, "--out", tmp_path / "p.pt", "--run-dir", folder, "--resume", "--stop-after", "plan")
    assert out.exit_code == 1 and f"is a fit of {text}, not {other}" in out.output
    # Another --cores: accepted, and the runs still to train are laid out by it.
    out = run("fit", text, "--out", tmp_path / "p.pt", "--run-dir", folder, "--resume", "--cores", "2",
              "--stop-after", "plan")
    assert out.exit_code == 0, out.output
    state = json.loads((folder / "fit.json").read_text())
    assert state["plan"]["parallel"] == 1
    fit = _Fit(str(text), str(tmp_path / "p.pt"), FitSettings(**{**state["settings"], "cores": 2}), str(folder),
               None, print)
    assert fit._layout(state["plan"]) == {"parallel": 2, "waves": 1, "threads_per_run": 1}


def test_a_fit_killed_while_distilling_has_saved_most_of_the_student_stage_time(tmp_path, monkeypatch):
    # Issue 66.14: the student stage runs in fit's own process (one long call): its time, too, is
    # saved as it goes, so that kill -9 leaves it counted.
    import time

    import onparse.fitting.pipeline as pipeline
    from onparse.fitting.pipeline import FitSettings, _Fit
    from onparse.fitting.settings import STUDENT_TEXT

    monkeypatch.setattr(pipeline, "STAGE_SAVE_EVERY", 0.2, raising=False)
    monkeypatch.setattr(pipeline, "load", lambda path, device: "the bundle")
    on_disk = []

    def distilling(*args, **options):
        for _ in range(8):
            time.sleep(0.2)
            saved = json.loads((tmp_path / "fit.json").read_text()) if (tmp_path / "fit.json").exists() else {}
            on_disk.append(saved.get("seconds", {}).get("student", 0.0))
    monkeypatch.setattr(pipeline, "distill", distilling)
    (tmp_path / STUDENT_TEXT).write_text("a b c\n")
    fit = _Fit("text.txt", str(tmp_path / "p.pt"), FitSettings(), str(tmp_path), str(tmp_path / "s.pt"), print)
    fit.do("student")
    assert on_disk[-1] >= 0.8 and on_disk == sorted(on_disk), on_disk
    assert fit.state["seconds"]["student"] >= 1.4 and fit.state["student"] == {"student": str(tmp_path / "s.pt")}

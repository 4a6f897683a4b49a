"""``research/score_epochs.py``: one JSON line per kept epoch of a run (``make model``, ``make
campaign``, ``make multilingual``), in the layout of the recorded research/campaign-dev.jsonl
that rules v6 and v7 choose from.  A tiny run (two kept epochs) and a three-sentence gold file
stand in for the campaign's runs and the dev half; every score is computed again here through the
public API."""
import json
import os
import sys

import pytest

from lab import load_script, read_jsonl

pytestmark = pytest.mark.usefixtures("one_thread")

AVERAGE = "avg L2,3 onlstm + right, ties right"


@pytest.fixture()
def script():
    return load_script("score_epochs")


def run_main(script, monkeypatch, *args):
    monkeypatch.setattr(sys, "argv", ["score_epochs.py", *args])
    script.main()


def epochs_of(run):
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as handle:
        return {e["epoch"]: e["valid_ppl"] for e in map(json.loads, handle) if e.get("event") == "epoch"}


def test_run_log_reads_the_recipe_and_every_epoch(script, seed_runs):
    log = script.run_log(seed_runs[0])
    recipe = log["recipe"]
    assert (recipe["preset"], recipe["seed"], recipe["hidden_size"]) == ("tiny", 1, 32)
    assert recipe["corpus"].endswith("toy.txt")
    assert {e: v["valid_ppl"] for e, v in log["epochs"].items()} == epochs_of(seed_runs[0])
    hours = [log["epochs"][e]["hours"] for e in sorted(log["epochs"])]
    assert 0 < hours[0] < hours[1] < 0.1


def expected_dev(path, gold):
    """Sentence F1 of every single member and of the voted average, all lengths and <= 10 words."""
    from onparse.api import load
    from onparse.members import Member
    from onparse.scores.metrics import evaluate

    tokens = [list(s.words) for s in gold]
    short = [i for i, s in enumerate(gold) if len(s) <= 10]

    def f1(trees):
        return {"all": round(evaluate(trees, gold).sentence_f1.f1, 5),
                "10": round(evaluate([trees[i] for i in short], [gold[i] for i in short]).sentence_f1.f1, 5)}

    parser = load(path, "cpu")
    out = {f"L{layer} {d}": f1(parser.with_members([Member(0, layer, d)]).trees(tokens))
           for layer in (1, 2, 3) for d in ("onlstm", "split")}
    voted = load(path, "cpu", layers=[2, 3], decoders=["onlstm"], voters=["right"], ties="right")
    out[AVERAGE] = f1(voted.trees(tokens))
    return out


def test_main_writes_one_record_per_new_epoch_in_the_recorded_layout(script, seed_runs, gold_file, tmp_path,
                                                                      monkeypatch):
    from onparse.gold.treebank import load_gold

    run, records = seed_runs[0], tmp_path / "dev.jsonl"
    monkeypatch.chdir(gold_file.parent)          # a relative name: the script refuses any gold named *test*
    run_main(script, monkeypatch, "--gold", gold_file.name, "--records", str(records), run)
    got = read_jsonl(records)
    recorded = read_jsonl("campaign-dev.jsonl")[0]
    assert [(r["run"], r["epoch"]) for r in got] == [("tiny-s1", 1), ("tiny-s1", 2)]
    gold = load_gold(gold_file.name)
    assert [len(s) <= 10 for s in gold] == [True, True, False]
    for record in got:
        assert set(record) == set(recorded) and set(record["dev"]) == set(recorded["dev"])
        assert (record["preset"], record["seed"], record["hidden_size"]) == ("tiny", 1, 32)
        assert record["valid_ppl"] == epochs_of(run)[record["epoch"]]
        assert record["dev"] == expected_dev(os.path.join(run, f"epoch-{record['epoch']:03d}.pt"), gold)

    # Scored epochs are skipped; another run is appended.
    run_main(script, monkeypatch, "--gold", gold_file.name, "--records", str(records), run, seed_runs[1])
    assert [(r["run"], r["epoch"]) for r in read_jsonl(records)] == \
        [("tiny-s1", 1), ("tiny-s1", 2), ("tiny-s2", 1), ("tiny-s2", 2)]
    assert read_jsonl(records)[:2] == got

    table = script.table(str(records)).splitlines()
    assert len(table) == 2 + 4
    assert table[2].startswith(f"| tiny-s1 | 1 | {got[0]['hours']:.2f} | {got[0]['valid_ppl']:.1f} | ")
    dev = got[0]["dev"]
    assert table[2].endswith(f" | {100 * dev[AVERAGE]['all']:.1f} / {100 * dev[AVERAGE]['10']:.1f} |")


def test_a_test_set_is_refused(script, monkeypatch, tmp_path):
    with pytest.raises(SystemExit) as stop:
        run_main(script, monkeypatch, "--gold", "wsj-sample-test", "--records", str(tmp_path / "x.jsonl"), "runs/x")
    assert stop.value.code == 2 and not (tmp_path / "x.jsonl").exists()


def test_the_recorded_campaign_reads_back_as_a_table(script):
    rows = read_jsonl("campaign-dev.jsonl")
    assert all(r["run"] == f"{r['preset']}-{r['corpus']}-s{r['seed']}" for r in rows)
    assert len({(r["run"], r["epoch"]) for r in rows}) == len(rows)          # each epoch once
    table = script.table().splitlines()
    assert len(table) == 2 + len(rows) and table[2].startswith(f"| {rows[0]['run']} | {rows[0]['epoch']} |")


def test_until_scores_epochs_as_they_appear_and_passes_over_runs_not_yet_started(script, seed_runs, gold_file,
                                                                                 tmp_path, monkeypatch):
    """``--until FILE``: the runs are scanned every 10 s until FILE exists, then once more; a run
    folder with no finished epoch yet (or none at all) is passed over, not an error."""
    run, records, until = seed_runs[0], tmp_path / "dev.jsonl", tmp_path / "TRAINED"
    monkeypatch.chdir(gold_file.parent)
    sleeps = []

    def sleep(seconds):                    # the runs "finish" during the first wait
        sleeps.append(seconds)
        until.write_text("")
    monkeypatch.setattr(script.time, "sleep", sleep)
    run_main(script, monkeypatch, "--gold", gold_file.name, "--records", str(records), "--until", str(until),
             str(tmp_path / "not-started"), run)
    assert sleeps == [10]
    assert [(r["run"], r["epoch"]) for r in read_jsonl(records)] == [("tiny-s1", 1), ("tiny-s1", 2)]

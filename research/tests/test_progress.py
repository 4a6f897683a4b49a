"""``research/progress.py`` (``make progress``): every kept epoch of the recipe's runs scored on the
sample (for reading only), a table, its JSON and the time-to-quality figure.  Tiny runs (two kept
epochs each) and a three-sentence gold file stand in for the recipe's runs and the sample."""
import json
import os
import shutil

import pytest

from lab import ROOT, load_script

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture()
def script():
    return load_script("progress")


@pytest.fixture()
def tiny_gold(gold_file, monkeypatch):
    """The gold file in place of every gold set the script names (wsj10, wsj)."""
    import onparse.gold.treebank as treebank

    real = treebank.load_gold
    monkeypatch.setattr(treebank, "load_gold", lambda name: real(str(gold_file)))
    return real(str(gold_file))


def expected(path, gold):
    """Layer 2 onlstm alone, and the 4-member average (layers 2, 3 x both decoders), sentence F1."""
    from onparse.api import load
    from onparse.scores.metrics import evaluate

    tokens = [list(s.words) for s in gold]
    single = load(path, "cpu").trees(tokens)
    average = load(path, "cpu", layers=[2, 3], decoders=["onlstm", "split"]).trees(tokens)
    return {"single": evaluate(single, gold).sentence_f1.f1, "average": evaluate(average, gold).sentence_f1.f1}


def test_every_kept_epoch_is_scored_and_tabled_and_drawn(script, seed_runs, tiny_gold, tmp_path, monkeypatch):
    out, figure = tmp_path / "progress.md", tmp_path / "figures" / "ttq.png"
    runs = seed_runs[:2]
    assert script.main([*runs, "--out", str(out), "--figure", str(figure)]) == 0
    rows = json.loads((tmp_path / "progress.json").read_text())
    names = [os.path.relpath(r, ROOT) for r in runs]
    assert [(r["run"], r["epoch"]) for r in rows] == [(n, e) for n in names for e in (1, 2)]
    for row, run in zip(rows, [r for r in runs for _ in (1, 2)]):
        log = script.epoch_log(run)[row["epoch"]]
        assert (row["valid_ppl"], row["hours"]) == (log["valid_ppl"], log["hours"])
        scores = expected(os.path.join(run, f"epoch-{row['epoch']:03d}.pt"), tiny_gold)
        assert row["scores"] == {"wsj10": scores, "wsj": scores}
    table = out.read_text().splitlines()
    assert table[0] == "# Time to quality" and f"`python research/progress.py {' '.join(names)}`" in table[2]
    body = [line for line in table if line.startswith(f"| {names[0]} |")]
    s = rows[1]["scores"]
    assert body[1] == (f"| {names[0]} | 2 | {rows[1]['hours']:.2f} | {rows[1]['valid_ppl']:.1f} | "
                       f"{100 * s['wsj10']['single']:.1f} | {100 * s['wsj10']['average']:.1f} | "
                       f"{100 * s['wsj']['single']:.1f} | {100 * s['wsj']['average']:.1f} |")
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # --reuse: the snapshots already scored are not scored again.
    monkeypatch.setattr(script, "score_snapshot", lambda path, golds: pytest.fail(f"{path} scored again"))
    assert script.main([*runs, "--out", str(out), "--figure", str(figure), "--reuse"]) == 0
    assert json.loads((tmp_path / "progress.json").read_text()) == rows


def test_a_run_without_snapshots_is_read_at_its_best_epoch(script, seed_runs, tiny_gold, tmp_path, monkeypatch):
    run = tmp_path / "resumed"
    run.mkdir()
    for name in ("best.pt", "metrics.jsonl"):
        shutil.copy(os.path.join(seed_runs[2], name), run / name)
    log = script.epoch_log(str(run))
    best = min(log, key=lambda e: (log[e]["valid_ppl"], e))
    scored = []
    marks = {"single": 0.25, "average": 0.5}
    monkeypatch.setattr(script, "score_snapshot", lambda path, golds: scored.append(path) or {g: marks for g in golds})
    out = tmp_path / "p.md"
    assert script.main([str(run), "--out", str(out), "--figure", str(tmp_path / "p.png"), "--reuse"]) == 0
    rows = json.loads((tmp_path / "p.json").read_text())
    assert scored == [str(run / "best.pt")]                   # best.pt is always scored, never reused
    assert [(r["epoch"], r["scores"]["wsj"]) for r in rows] == [(best, marks)]

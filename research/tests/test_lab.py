"""The lab (research/lab.py over research/rules.toml and research/records/): every recorded rule
replays to its recorded choice; a rule's verbs on tiny runs, every figure computed again; the test
part scored once; the lab's own limits (issue 57: files, size, script lines, public names only).

``make research-test``; ``make test`` never collects these.
"""
from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RESEARCH = HERE.parent
ROOT = RESEARCH.parent
sys.path.insert(0, str(RESEARCH))

import lab  # noqa: E402

if "NLTK_DATA" not in os.environ and (ROOT.parent / "shared" / "nltk_data").is_dir():
    os.environ["NLTK_DATA"] = str(ROOT.parent / "shared" / "nltk_data")

NOUNS, VERBS, DETS = "cat dog bird man teacher farmer".split(), "saw liked chased found".split(), "the a every".split()
GOLD = ["(S (NP (DT the) (NN cat)) (VP (VBD saw) (NP (DT a) (NN dog))))",
        "(S (NP (DT every) (NN man)) (VP (VBD liked) (NP (DT the) (NN bird))))",
        "(S (NP (DT the) (NN teacher)) (VP (VBD found) (NP (NP (DT a) (NN farmer)) (PP (IN with) "
        "(NP (NP (DT a) (NN dog)) (PP (IN near) (NP (DT the) (NN cat))))))))"]        # 11 words


# -- the records -----------------------------------------------------------------------------------
def test_every_recorded_rule_replays_to_its_recorded_choice():
    rows = lab.replay()
    assert {r["rule"] for r in rows} >= {"v5", "v6", "v7", "v8", "v9", "v11", "v13", "v15", "v17", "v18", "v19",
                                         "v20"}
    assert len(rows) == 24 and all(r["same"] for r in rows), [r for r in rows if not r["same"]]


def test_the_replay_would_notice_another_choice(tmp_path):
    for name in ("trials.tsv", "choices.json", "tests.json"):
        (tmp_path / name).write_text((RESEARCH / "records" / name).read_text(encoding="utf-8"), encoding="utf-8")
    choices = json.loads((tmp_path / "choices.json").read_text())
    choices["v17"]["chosen"]["name"] = "student (s2 e6)"
    (tmp_path / "choices.json").write_text(json.dumps(choices))
    assert [r["rule"] for r in lab.replay(str(tmp_path)) if not r["same"]] == ["v17"]


def test_every_rule_is_a_short_record_whose_protocol_exists():
    text = (RESEARCH / "rules.toml").read_text(encoding="utf-8")
    rules = tomllib.loads(text)
    protocol = (RESEARCH / "PROTOCOL.md").read_text(encoding="utf-8")
    from onparse.selection import RULES

    starts = [i for i, line in enumerate(text.splitlines()) if line.startswith("[v")] + [len(text.splitlines())]
    assert max(b - a for a, b in zip(starts, starts[1:])) <= 30
    for name, rule in rules.items():
        first = rule["protocol"].split("-")[0]
        assert f"\n{first}. " in protocol, name
        assert rule.get("choice", "best_dev") in RULES


def test_the_lab_stays_small_and_reads_only_public_names():
    import onparse

    tracked = subprocess.run(["git", "ls-files", "research"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    assert len(tracked) <= 30, tracked
    assert sum((ROOT / p).stat().st_size for p in tracked if (ROOT / p).exists()) <= 1_000_000
    scripts = [p for p in tracked if p.endswith((".py", ".sh")) and "/tests/" not in p]
    assert sum(len((ROOT / p).read_text(encoding="utf-8").splitlines()) for p in scripts) <= 1500
    for path in scripts:
        for node in ast.walk(ast.parse((ROOT / path).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("onparse"):
                assert node.module == "onparse", f"{path} imports {node.module}"
                assert all(alias.name in onparse.__all__ for alias in node.names), path
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("onparse.") for a in node.names), path


# -- a rule's verbs on tiny runs -------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_rule(tmp_path_factory):
    """A rule over two tiny grammar runs (2 epochs each, kept) and a three-sentence gold set
    (dev and test the same file: the verbs are what is tested), its records in a folder of its own."""
    folder = tmp_path_factory.mktemp("lab")
    rng = random.Random(0)
    lines = [" ".join([rng.choice(DETS), rng.choice(NOUNS), rng.choice(VERBS), rng.choice(DETS), rng.choice(NOUNS)])
             for _ in range(300)]
    (folder / "toy.txt").write_text("\n".join(lines) + "\n")
    for part in ("dev", "test"):
        (folder / f"gold-{part}").write_text("\n".join(GOLD) + "\n")
    rule = {"title": "tiny", "protocol": "1-1", "gold": str(folder / "gold"), "seeds": [1, 2],
            "runs": str(folder / "g-s{seed}"), "decoders": ["mbr"], "choice": "best_dev", "recipe": "tiny",
            "command": (f"{sys.executable} -m onparse train --family grammar --preset tiny --corpus {folder / 'toy.txt'} "
                        "--seed {seed} --epochs 2 --keep-epochs --threads 1 --no-progress --out {run}")}
    lab.train("tiny", rule)
    records = folder / "records"
    records.mkdir()
    return rule, str(records), folder


def test_dev_scores_every_kept_epoch_and_chooses_the_best(tiny_rule):
    from onparse import evaluate, load, load_gold

    rule, records, folder = tiny_rule
    chosen = lab.dev("tiny", rule, records)["chosen"]
    scored = lab.read_jsonl("dev.jsonl", records)
    assert sorted((r["seed"], r["epoch"]) for r in scored) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    gold = load_gold(str(folder / "gold-dev"))
    for row in scored:
        trees = load(os.path.join(row["run"], f"epoch-{row['epoch']:03d}.pt"), "cpu").trees([list(s.words) for s in gold])
        assert row["dev"]["grammar"]["all"] == round(evaluate(trees, gold).sentence_f1.f1, 5)
    best = max(scored, key=lambda r: (r["dev"]["grammar"]["all"], -r["seed"], -r["epoch"]))
    assert (chosen["seed"], chosen["epoch"]) == (best["seed"], best["epoch"])
    # Scored epochs are not scored again.
    lab.dev("tiny", rule, records)
    assert len(lab.read_jsonl("dev.jsonl", records)) == 4


def test_test_scores_once_and_ship_writes_the_choice(tiny_rule, tmp_path):
    from onparse import load

    rule, records, folder = tiny_rule
    lab.dev("tiny", rule, records)
    tested = lab.test("tiny", rule, records)
    assert tested["sentences"] == [3, 2] and set(tested) >= {"chosen", "right", "left"}
    with pytest.raises(SystemExit, match="scored already"):
        lab.test("tiny", rule, records)
    assert "| right-branching |" in lab.readme("tiny", records)
    chosen = lab.read_json("choices.json", records)["tiny"]["chosen"]
    lab.ship("tiny", rule, str(tmp_path / "shipped.pt"), records)
    words = [["the", "cat", "saw", "a", "dog"]]
    assert load(str(tmp_path / "shipped.pt"), "cpu").trees(words) == \
        load(os.path.join(chosen["run"], f"epoch-{chosen['epoch']:03d}.pt"), "cpu").trees(words)


def test_average_candidates_take_k_grammars_of_k_different_seeds_in_the_rules_order():
    rule = {"incumbent": ["student"], "groups": [["student"], ["lms"]], "grammars": {"k": [1, 2, 3]},
            "voters": [[], ["right"]], "ties": ["first", "right"]}
    ranked = [{"run": "r2", "seed": 2, "epoch": 3, "member": "grammar"}, {"run": "r2", "seed": 2, "epoch": 9,
              "member": "grammar"}, {"run": "r1", "seed": 1, "epoch": 9, "member": "grammar"}]
    found = lab.average_candidates(rule, ranked)
    assert found[0] == {"name": "student", "parts": ["student"], "grammars": [], "voters": [], "ties": "first"}
    assert len(found) == 1 + 2 * 2 * 4                     # K = 3 needs three seeds: there are two
    assert [(g["seed"], g["epoch"]) for g in found[5]["grammars"]] == [(2, 3), (1, 9)]
    assert found[1]["name"] == "student + grammar s2 e3 grammar, ties first"
    assert found[4]["name"] == "student + grammar s2 e3 grammar + right voter, ties right"
    assert found[-1]["parts"] == ["lms"] and found[-1]["voters"] == ["right"]


def test_an_average_rule_scores_each_average_as_load_gives_it_and_ships_its_choice(tiny_rule, tmp_path, monkeypatch):
    from onparse import evaluate, load, load_gold

    rule, _, folder = tiny_rule
    records = tmp_path / "records"
    records.mkdir()
    (records / "trials.tsv").write_text((RESEARCH / "records" / "trials.tsv").read_text(encoding="utf-8").splitlines()[0]
                                        + "\n", encoding="utf-8")
    monkeypatch.setattr(lab, "ROOT", str(tmp_path))
    first = os.path.join(rule["runs"].format(seed=1), "epoch-002.pt")
    ranked = [{"run": rule["runs"].format(seed=2), "seed": 2, "epoch": e, "member": "grammar"} for e in (1, 2)]
    monkeypatch.setattr(lab, "ranked_grammars", lambda rule, records: ranked)
    avg = {"title": "tiny average", "protocol": "1-1", "gold": rule["gold"], "kind": "average",
           "parts": {"one": first}, "grammars": {"k": [1]}, "incumbent": ["one"], "groups": [["one"]],
           "voters": [[], ["right"]], "ties": ["first", "right"], "choice": "best_dev"}
    chosen = lab.average_dev("avg", avg, str(records))["chosen"]
    rows = [r for r in lab.trials(str(records)) if r["rule"] == "avg"]
    assert len(rows) == 5
    gold = load_gold(str(folder / "gold-dev"))
    words = [list(s.words) for s in gold]
    for row, voters, ties, files in [(rows[0], [], "first", [first]),
                                     (rows[4], ["right"], "right", [first, lab.epoch_file(ranked[0]["run"], 1)])]:
        trees = load(files, "cpu", voters=voters, ties=ties).trees(words)
        assert float(row[lab.DEV_COLUMN]) == round(100 * round(evaluate(trees, gold).sentence_f1.f1, 5), 4)
    best = max(range(5), key=lambda i: (float(rows[i][lab.DEV_COLUMN]), -i))
    assert chosen["name"] == rows[best]["candidate"]
    with pytest.raises(SystemExit, match="recorded already"):
        lab.average_dev("avg", avg, str(records))
    lab.ship_average("avg", avg, str(tmp_path / "teacher.pt"), str(records))
    table = lab.gold_table(avg, "dev", lab.tree_cache("avg", "dev"))[1]
    assert load(str(tmp_path / "teacher.pt"), "cpu").trees(words) == lab.Averages("avg", avg, table).trees(chosen)


def test_make_model_rebuilds_the_shipped_file_byte_for_byte_and_never_over_it(tmp_path):
    """``make model`` (``lab.py model``): the shipped file comes back from its recorded parts (the
    bundle committed with its rule, in git history) byte for byte; it is written beside the
    shipped file, never over it."""
    known = lab.rules()
    name, rule = next((n, r) for n, r in known.items() if "ships" in r)
    for source in lab.read_json(rule["build"])["sources"]:
        if "git" in source and subprocess.run(["git", "cat-file", "-e", source["git"]], cwd=ROOT).returncode != 0:
            pytest.skip(f"{source['git']} is not in this checkout's history")
        if "file" in source and not (ROOT / source["file"]).exists():
            pytest.skip(f"{source['file']} is not on this machine (its rebuild: {source['rebuild']})")
    out = tmp_path / "default.pt"
    line = lab.model(known, str(out))
    assert "byte for byte" in line and out.read_bytes() == (ROOT / rule["ships"]).read_bytes()
    with pytest.raises(SystemExit, match="never over it"):
        lab.model(known, str(ROOT / rule["ships"]))


def test_make_model_writes_named_readings_from_the_recipe(tiny_rule, tmp_path, monkeypatch):
    """``shipped.json`` may name readings (name -> members, voters, ties) and the default one:
    ``lab.py model`` writes them into the bundle, each giving the trees of its parser built by hand."""
    from onparse import load

    rule, _, folder = tiny_rule
    monkeypatch.setattr(lab, "ROOT", str(tmp_path))
    parts = [os.path.join(rule["runs"].format(seed=seed), "epoch-002.pt") for seed in (1, 2)]
    member = [{"model": k, "layer": 1, "decoder": "mbr"} for k in (0, 1)]
    records = tmp_path / "records"
    records.mkdir()
    recipe = {"sources": [{"file": p, "sha256": lab.sha256_of(Path(p).read_bytes())} for p in parts],
              "readings": {"fast": {"members": member[:1], "voters": [], "ties": "first"},
                           "accurate": {"members": member, "voters": ["right"], "ties": "first"}},
              "default_reading": "fast", "carry": [], "weights": "float32", "metadata": {"recipe": "tiny"}}
    (records / "shipped.json").write_text(json.dumps(recipe))
    known = {"tiny": {"ships": "shipped.pt", "build": "shipped.json", "sha256": "not yet"}}
    out = tmp_path / "rebuilt.pt"
    with pytest.raises(SystemExit, match="DIFFERS"):
        lab.model(known, str(out), str(records))
    words = [["the", "cat", "saw", "a", "dog"], ["every", "man", "liked", "the", "bird"]]
    both = load(parts, "cpu")
    by_hand = {"fast": both.with_members(both.members[:1], [], "first"),
               "accurate": both.with_members(both.members, ["right"], "first")}
    assert load(str(out), "cpu").reading == "fast"
    for name, parser in by_hand.items():
        assert load(str(out), "cpu", reading=name).trees(words) == parser.trees(words)
    known["tiny"]["sha256"] = lab.sha256_of(out.read_bytes())
    assert "byte for byte" in lab.model(known, str(tmp_path / "again.pt"), str(records))

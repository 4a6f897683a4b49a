"""Rules v5 (``research/choose_members.py``) and v6 (``research/choose_v6.py``, the shipped model):
their candidates are those the recorded trial tables list, their choices follow from the recorded
dev scores (highest dev sentence F1; exact ties to fewer trees, then order: PROTOCOL.md rules 27
and 32), the shipped bundle holds the v6 choice, and the README's results table is the recorded
test-half scores (``make results``).  No model is scored here: the recorded files are the inputs."""
import pytest

from lab import ROOT, load_script, read_json, read_tsv

SCORES = (("all", "dev all sent F1", "sentence_f1"), ("all", "dev all Kim F1", "kim_f1"),
          ("all", "dev all corpus F1", "corpus_f1"), ("10", "dev <=10 sent F1", "sentence_f1"),
          ("10", "dev <=10 Kim F1", "kim_f1"), ("10", "dev <=10 corpus F1", "corpus_f1"))


@pytest.fixture(scope="module")
def v5():
    return load_script("choose_members")


@pytest.fixture(scope="module")
def v6():
    return load_script("choose_v6")


@pytest.fixture(scope="module")
def blob():
    from onparse.files.bundle import load_model_file

    return load_model_file(str(ROOT / "src" / "onparse" / "models" / "default.pt"))


def as_rows(trials):
    """The rows of a dev-trials table in the shape the scripts choose from: order (from 0), name,
    voters and ties (read off the name; rule v8's names have neither), trees, and the dev scores as
    fractions."""
    rows = []
    for r in trials:
        head, ties = r["candidate"].rsplit(", ties ", 1) if ", ties " in r["candidate"] else (r["candidate"], None)
        voters = tuple(v for v in ("right", "left") for _ in range(head.count(f" + {v}")))
        dev = {"all": {}, "10": {}}
        for part, column, key in SCORES:
            dev[part][key] = float(r[column]) / 100
        rows.append({"order": int(r["order"]) - 1, "name": r["candidate"], "voters": voters, "ties": ties,
                     **({"trees": int(r["trees"])} if "trees" in r else {}), "dev": dev})
    return rows


# -- rule v5 ---------------------------------------------------------------------------------------
def test_v5_candidates_are_the_108_of_the_recorded_table_in_order(v5):
    trials = read_tsv("dev-trials-v5.tsv")
    cands = v5.candidates()
    assert len(cands) == 108 and [int(r["order"]) for r in trials] == list(range(1, 109))
    assert [v5.name_of(*c) for c in cands] == [r["candidate"] for r in trials]
    # two models (the v4 bundle's): every layer x decoder of each, and the voters
    assert [2 * len(layers) * len(decoders) + len(voters) for layers, decoders, voters, _ in cands] == \
        [int(r["trees"]) for r in trials]


def test_v5_choice_follows_from_the_recorded_dev_scores(v5, v6):
    rows = as_rows(read_tsv("dev-trials-v5.tsv"))
    best, lm = v5.chosen(rows), v5.chosen(rows, lm_only=True)
    assert (best["name"], lm["name"]) == ("L2,3 onlstm + right, ties right", "L2,3 onlstm, ties first")
    log = (ROOT / "research" / "choose-v5.log").read_text(encoding="utf-8")
    assert (f"chosen: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}); "
            f"LM only: {lm['name']} (dev {100 * lm['dev']['all']['sentence_f1']:.2f})") in log
    test = read_json("test-v5.json")
    assert (test["chosen"], test["lm_only"]) == (best["name"], lm["name"])
    assert round(100 * test["dev"]["chosen"]["all"]["sentence_f1"], 2) == \
        round(100 * best["dev"]["all"]["sentence_f1"], 2)
    assert v6.V5_DEV == test["dev"]["chosen"]["all"]["sentence_f1"]     # what v6 had to beat on dev


def test_chosen_breaks_exact_ties_to_fewer_trees_then_order(v5):
    def row(order, f1, trees, voters=(), ties="first"):
        return {"order": order, "name": str(order), "trees": trees, "voters": voters, "ties": ties,
                "dev": {"all": {"sentence_f1": f1}}}

    rows = [row(0, 0.5, 3), row(1, 0.6, 4, ("right",)), row(2, 0.6, 3, ("right",)), row(3, 0.6, 3, ("right",)),
            row(4, 0.55, 2), row(5, 0.55, 2, (), "right")]
    assert v5.chosen(rows)["order"] == 2
    assert v5.chosen(rows, lm_only=True)["order"] == 4        # no voter and ties first only


def test_first_per_seed_keeps_each_seeds_best_in_rank_order(v5):
    ranked = [(0.9, 2, 5, 2), (0.8, 2, 6, 3), (0.7, 1, 1, 2), (0.6, 3, 2, 2), (0.5, 1, 2, 3)]
    assert v5.first_per_seed(ranked) == [ranked[0], ranked[2], ranked[3]]


@pytest.mark.parametrize("name, columns", [("dev-trials-v6.tsv", ("trees",)), ("dev-trials-v8.tsv", ())])
def test_write_trials_writes_the_recorded_tables_byte_for_byte(v5, tmp_path, name, columns):
    rows = as_rows(read_tsv(name))
    v5.write_trials(str(tmp_path / name), rows, columns)
    assert (tmp_path / name).read_text() == (ROOT / "research" / name).read_text()


def test_readme_block_says_which_targets_are_met(v5):
    def scores(f1):
        return {"sentence_f1": f1, "kim_f1": f1 - 0.01, "corpus_f1": f1 - 0.02, "evalb_f1": f1 - 0.03}

    test = {"wsj-sample-test": {"n": 1000, "chosen": scores(0.52), "lm_only": scores(0.43), "right": scores(0.40)},
            "wsj10-sample-test": {"n": 300, "chosen": scores(0.60), "lm_only": scores(0.50), "right": scores(0.55)}}
    block = v5.readme_block({"test": test, "chosen": "A", "lm_only": "B"})
    lines = block.splitlines()
    assert lines[0].startswith("| trees | all lengths (1,000): sent. F1 (ON-LSTM) |")
    assert lines[2] == ("| **onparse bundled model**: A | **52.0** | **51.0** | **50.0** | **60.0** | **59.0** "
                        "| **58.0** |")
    assert lines[3] == "| its language models alone: B | 43.0 | 42.0 | 41.0 | 50.0 | 49.0 | 48.0 |"
    assert lines[-1].endswith("Met: all lengths 52.0 against 50.0 (met); at most 10 words 60.0 against 63.0 "
                              "(not met); LM only 43.0 against 44.0 (not met).")


@pytest.mark.usefixtures("nltk_treebank")
def test_golds_and_scores_of_read_the_short_part_of_the_same_sentences(v5):
    from onparse.scores.metrics import evaluate
    from onparse.trees.baselines import baseline_trees

    gold, short, index = v5.golds("wsj-sample-dev", "wsj10-sample-dev")
    assert len(index) == len(short) < len(gold) and all(len(gold[i]) <= 10 for i in index)
    trees = baseline_trees(gold.tokens, "right", 0)
    got = v5.scores_of(trees, gold, short, index)
    assert got["10"]["sentence_f1"] == evaluate([trees[i] for i in index], short).sentence_f1.f1
    assert got["all"]["corpus_f1"] == evaluate(trees, gold).corpus_f1.f1
    assert got["10"]["sentence_f1"] > got["all"]["sentence_f1"] > 0.3          # right-branching: better when short


# -- rule v6 (the shipped model) -------------------------------------------------------------------
def test_v6_candidates_are_the_16_of_the_recorded_table(v5, v6):
    ranked = v6.ranked_members()
    assert ranked == sorted(ranked, key=lambda r: (-r[0], r[1], r[2], r[3]))
    assert {r[1] for r in ranked} == set(v6.SEEDS)
    trials = read_tsv("dev-trials-v6.tsv")
    cands = v6.candidates(ranked)
    assert [v6.name_of(*c) for c in cands] == [r["candidate"] for r in trials]
    assert [len(members) + len(voters) for members, voters, _ in cands] == [int(r["trees"]) for r in trials]
    assert [len(members) for members, _, _ in cands] == [k for k in range(1, 5) for _ in range(4)]


def test_the_v6_choice_follows_from_the_recorded_dev_scores(v5, v6, blob):
    """Rule v6's choice (its language models are the bundled model's, since rule v11 beside a
    student) follows from the recorded dev scores, and test-v6.json names it."""
    from onparse.members import Member

    rows = as_rows(read_tsv("dev-trials-v6.tsv"))
    best, lm = v5.chosen(rows), v5.chosen(rows, lm_only=True)
    assert best["dev"]["all"]["sentence_f1"] > v6.V5_DEV                  # v6 replaced v5 by beating it on dev
    picked = v6.candidates(v6.ranked_members())[best["order"]][0]
    assert [Member.from_dict(m) for m in blob["metadata"]["dev"]["lm_only_members"]] == \
        [Member(i, layer, "onlstm") for i, (_, _, _, layer) in enumerate(picked)]
    assert [(s["seed"], s["epoch"]) for s in blob["metadata"]["seeds"]] == [(s, e) for _, s, e, _ in picked]
    lms = [m for m in blob["models"] if "kind" not in m]
    assert [m["metadata"]["train_config"]["seed"] for m in lms] == [s for _, s, _, _ in picked]
    test = read_json("test-v6.json")
    assert (test["chosen"], test["lm_only"]) == (best["name"], lm["name"])


def test_the_bundles_the_rules_write_hold_their_choice(v5, v6, seed_runs, tmp_path):
    """write_bundle of rules v5 and v6 on two tiny runs: the chosen members, voters and tie rule,
    the dev record, the weights; record_scores adds the test-half figures and nothing else."""
    from onparse.api import load
    from onparse.files.bundle import load_model_file
    from onparse.members import Member

    paths = [f"{run}/best.pt" for run in seed_runs[:2]]
    dev = {"all": {"sentence_f1": 0.5}, "10": {"sentence_f1": 0.6}}
    best = {"name": "chosen", "members": [m.to_dict() for m in v5.every_member(2, (2, 3), ("onlstm",))],
            "voters": ("right",), "ties": "right", "dev": dev}
    lm = {"name": "lm", "members": [Member(0, 2, "onlstm").to_dict()], "voters": (), "ties": "first", "dev": dev}
    assert [(m["model"], m["layer"]) for m in best["members"]] == [(0, 2), (0, 3), (1, 2), (1, 3)]

    v5.write_bundle(paths, str(tmp_path / "v5.pt"), best, lm)
    blob = load_model_file(str(tmp_path / "v5.pt"))
    assert (blob["members"], blob["voters"], blob["ties"]) == (best["members"], ["right"], "right")
    assert blob["metadata"]["dev"] == {"chosen": "chosen", "sentence_f1": dev, "lm_only": "lm",
                                       "lm_only_members": lm["members"], "lm_only_sentence_f1": dev}
    assert {m["metadata"]["weights"] for m in blob["models"]} == {"float32"}     # the checkpoints' own
    rows = [{"gold": "wsj-sample-test", "trees": "average", "sentence_f1_onlstm": 0.5}]
    v5.record_scores(str(tmp_path / "v5.pt"), rows)
    again = load_model_file(str(tmp_path / "v5.pt"))
    assert again["metadata"]["scores"] == rows and again["members"] == blob["members"]
    assert load(str(tmp_path / "v5.pt"), "cpu").members == [Member.from_dict(m) for m in best["members"]]

    v6.write_bundle(paths, str(tmp_path / "v6.pt"), best, lm)
    blob = load_model_file(str(tmp_path / "v6.pt"))
    meta = blob["metadata"]
    assert {m["metadata"]["weights"] for m in blob["models"]} == {"float16"}
    assert [s["seed"] for s in meta["seeds"]] == [1, 2] and "this file holds seeds 1, 2" in meta["recipe"]
    assert (meta["dev"]["trials"], meta["dev"]["chosen_members"], meta["dev"]["voters"], meta["dev"]["ties"]) == \
        ("research/dev-trials-v6.tsv", best["members"], ["right"], "right")
    assert (blob["voters"], blob["ties"]) == (["right"], "right")


def test_every_script_of_research_is_tested_here():
    """Each research/*.py is loaded and each research/*.sh run by a test of research/tests."""
    text = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "research" / "tests").glob("test_*.py"))
    scripts = sorted((ROOT / "research").glob("*.py")) + sorted((ROOT / "research").glob("*.sh"))
    assert len(scripts) >= 13
    untested = [p.name for p in scripts
                if f'load_script("{p.stem}")' not in text and f'"{p.name}"' not in text]
    assert untested == []

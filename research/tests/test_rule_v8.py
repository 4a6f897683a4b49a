"""Rule v8 (``research/choose_v8.py``, PROTOCOL.md rules 41-46): students of ``onparse distill``
against their teacher.  The candidates are those of the recorded table, in rule 45's tie-breaking
order; the script's dev step, fed the recorded dev scores, writes the recorded table and choice;
its test step writes every figure once; and its trees are the library's (teacher, student,
teacher + student as ``onparse.load([None, student])`` gives)."""
import json
import re

import pytest

import lab
from lab import RESEARCH, load_script, read_json, read_tsv


@pytest.fixture()
def v8():
    return load_script("choose_v8")


def test_candidates_are_the_25_of_the_recorded_table_and_of_the_students_script(v8):
    cands = v8.candidates()
    assert len(cands) == 25 and cands[0] == ("teacher", None, None)
    assert [v8.name_of(*c) for c in cands] == [r["candidate"] for r in read_tsv("dev-trials-v8.tsv")]
    # the snapshots it reads are those research/train_students.sh keeps
    script = (RESEARCH / "train_students.sh").read_text(encoding="utf-8")
    assert re.search(r'SEEDS=\$\{SEEDS:-"([\d ]+)"\}', script).group(1).split() == [str(s) for s in v8.SEEDS]
    assert f"--epochs {len(v8.EPOCHS)} --keep-epochs" in script and list(v8.EPOCHS) == list(range(1, 7))


def recorded_scores(v8):
    """scores_of() as the recorded table gives it (fractions), keyed by the candidate's trees."""
    rows = {r["candidate"]: r for r in read_tsv("dev-trials-v8.tsv")}
    columns = {"all": ("dev all sent F1", "dev all Kim F1", "dev all corpus F1"),
               "10": ("dev <=10 sent F1", "dev <=10 Kim F1", "dev <=10 corpus F1")}

    def scores_of(trees, gold, short, short_index):
        row = rows[v8.name_of(*trees)]
        return {part: {key: float(row[c]) / 100 for key, c in zip(("sentence_f1", "kim_f1", "corpus_f1"), cols)}
                for part, cols in columns.items()}

    return scores_of


def test_dev_step_fed_the_recorded_scores_writes_the_recorded_table_and_choice(v8, tmp_path, monkeypatch):
    got = lab.run_dev(v8, tmp_path, monkeypatch, recorded_scores(v8))
    assert (tmp_path / "trials.tsv").read_text() == (RESEARCH / "dev-trials-v8.tsv").read_text()
    recorded = read_json("dev-choice-v8.json")
    assert got["rule"] == recorded["rule"]
    for key in ("chosen", "teacher"):
        assert {k: got[key][k] for k in ("order", "name", "kind", "seed", "epoch")} == \
            {k: recorded[key][k] for k in ("order", "name", "kind", "seed", "epoch")}
        assert round(100 * got[key]["dev"]["all"]["sentence_f1"], 2) == \
            round(100 * recorded[key]["dev"]["all"]["sentence_f1"], 2)


def test_dev_step_keeps_the_first_of_exact_ties(v8, tmp_path, monkeypatch):
    """Rule 45: exact ties to the teacher, then students alone, then the lower seed, then the earlier epoch."""
    def scores_of(trees, gold, short, short_index):
        kind, seed, epoch = trees
        f1 = 0.5 if kind == "teacher" or (seed, epoch) != (2, 3) else 0.6      # s2 e3 alone and with the teacher
        return {part: {"sentence_f1": f1, "kim_f1": f1, "corpus_f1": f1} for part in ("all", "10")}

    assert lab.run_dev(v8, tmp_path, monkeypatch, scores_of)["chosen"]["name"] == "student (s2 e3)"
    monkeypatch.setattr(v8.v5, "scores_of", lambda trees, *rest: {
        part: {"sentence_f1": 0.5, "kim_f1": 0.5, "corpus_f1": 0.5} for part in ("all", "10")})
    v8.dev()
    assert json.loads((tmp_path / "choice.json").read_text())["chosen"]["name"] == "teacher"


def test_test_step_scores_the_choice_and_the_teacher_beside_baselines_once(v8, tmp_path, monkeypatch):
    import onparse.trees.baselines

    class Gold(list):
        tokens = [("a", "b")]

    chosen = read_json("dev-choice-v8.json")["chosen"]
    f1 = {(chosen["kind"], chosen["seed"], chosen["epoch"]): 0.6, ("teacher", None, None): 0.5, "right": 0.3,
          "left": 0.2}

    def scores_of(trees, gold, short, short_index):
        return {"all": {"sentence_f1": f1[trees]}, "10": {"sentence_f1": f1[trees] + len(short) / 10}}

    monkeypatch.setattr(v8, "Trees", lab.NamedTrees)
    monkeypatch.setattr(v8.v5, "golds", lambda name, short: (Gold([1, 2, 3]), Gold([1]), [0]))
    monkeypatch.setattr(v8.v5, "scores_of", scores_of)
    monkeypatch.setattr(onparse.trees.baselines, "baseline_trees", lambda tokens, kind, seed: kind)
    monkeypatch.setattr(v8, "TEST", str(tmp_path / "test.json"))
    v8.test()                                                  # reads the recorded dev-choice-v8.json
    got = json.loads((tmp_path / "test.json").read_text())
    assert got["candidate"] == chosen["name"] and got["sentences"] == [3, 1]
    assert [got[k]["all"]["sentence_f1"] for k in ("chosen", "teacher", "right", "left")] == [0.6, 0.5, 0.3, 0.2]
    assert got["left"]["10"]["sentence_f1"] == 0.2 + 0.1
    with pytest.raises(SystemExit, match="scored once"):
        v8.test()


@pytest.mark.usefixtures("nltk_treebank")
def test_the_recorded_test_scores_are_of_the_test_half():
    from onparse.gold.treebank import load_gold

    test = read_json("test-v8.json")
    assert test["rule"] == "v8"
    assert test["sentences"] == [len(load_gold("wsj-sample-test")), len(load_gold("wsj10-sample-test"))]
    assert set(test) >= {"chosen", "teacher", "right", "left"}
    assert test["chosen"]["all"]["sentence_f1"] > test["right"]["all"]["sentence_f1"]


@pytest.fixture()
def student(tmp_path, gold_file):
    """An untrained tiny student over the gold's words, saved as run-s1/epoch-001.pt."""
    import torch

    from onparse.gold.treebank import load_gold
    from onparse.student.config import StudentConfig
    from onparse.student.file import save_student
    from onparse.student.model import SpanStudent
    from onparse.text.vocab import Vocabulary

    torch.manual_seed(0)
    vocab = Vocabulary.build([list(s.words) for s in load_gold(str(gold_file))])
    config = StudentConfig(vocab_size=len(vocab), embedding_size=8, hidden_size=8, n_layers=1, mlp_size=8)
    path = tmp_path / "run-s1" / "epoch-001.pt"
    path.parent.mkdir()
    save_student(str(path), config=config.to_dict(), vocab=vocab, state_dict=SpanStudent(config).state_dict())
    return str(path)


@pytest.mark.slow          # the bundled model loaded twice and run: 10 seconds on two busy cores
def test_trees_are_the_librarys_for_teacher_student_and_both(v8, student, gold_file, tmp_path, monkeypatch):
    import onparse.api
    from onparse.gold.treebank import load_gold

    real, loaded = onparse.api.load, {}

    def load(model=None, *args, **kwargs):
        """onparse.load, each parser loaded once (the script loads the teacher twice)."""
        key = repr((model, args, sorted(kwargs.items())))
        if key not in loaded:
            loaded[key] = real(model, *args, **kwargs)
        return loaded[key]

    monkeypatch.setattr(onparse.api, "load", load)
    monkeypatch.setattr(v8, "SNAPSHOT", str(tmp_path / "run-s{seed}" / "epoch-{epoch:03d}.pt"))
    gold = load_gold(str(gold_file))
    tokens = [list(s.words) for s in gold]
    trees = v8.Trees(gold)
    assert trees.of("teacher", None, None) == load().trees(tokens)
    assert trees.of("student", 1, 1) == load(student).trees(tokens)
    assert trees.of("teacher + student", 1, 1) == load([None, student]).trees(tokens)

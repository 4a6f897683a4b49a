"""``research/students_v15.py`` (rule v15, 81-85): rule 84's candidates in order, its choice and
ties, the student's vocabulary model and command (read by onparse's own command line), the
student added as the choice's last member, and the test step's scored-once guard."""
import pytest

from lab import load_script

LM_CHOICE = {"name": "rule v7's LMs + g s2 e1, ties right", "lms": True, "grammars": [[2, 1]], "voters": [],
             "ties": "right", "trees": 3}
GRAMMAR_CHOICE = {"name": "g s2 e10 + g s1 e10 + right, ties first", "lms": False, "grammars": [[2, 10], [1, 10]],
                  "voters": ["right"], "ties": "first", "trees": 3}
V7 = {"models": [{"seed": 3, "epoch": 10}, {"seed": 1, "epoch": 7}]}


def test_candidates_in_rule_84s_order():
    v15 = load_script("students_v15")
    out = v15.candidates(LM_CHOICE)
    assert len(out) == 13
    assert out[0] == ("choice", None)
    assert out[1:7] == [("student", e) for e in range(1, 7)]
    assert out[7:] == [("choice + student", e) for e in range(1, 7)]
    names = [v15.name_of(kind, epoch, LM_CHOICE) for kind, epoch in out]
    assert names[0] == "rule v13: rule v7's LMs + g s2 e1, ties right"
    assert names[1] == "student (s1 e1)"
    assert names[12] == "rule v7's LMs + g s2 e1, ties right + student (s1 e6)"
    assert [v15.size(kind, LM_CHOICE) for kind, _ in (out[0], out[1], out[7])] == [3, 1, 4]


def test_choice_prefers_fewer_trees_then_the_earlier_and_the_student_alone_is_the_best_student():
    v15 = load_script("students_v15")

    def row(order, kind, f1, trees):
        return {"order": order, "kind": kind, "trees": trees, "dev": {"all": {"sentence_f1": f1}}}
    rows = [row(0, "choice", 0.40, 3), row(1, "student", 0.38, 1), row(2, "student", 0.39, 1),
            row(7, "choice + student", 0.40, 4), row(8, "choice + student", 0.41, 4)]
    assert v15.choose(rows)["order"] == 8
    assert v15.choose(rows[:4])["order"] == 0                  # 0.40 twice: three trees beat four
    assert v15.choose(rows, ("student",))["order"] == 2
    rows.append(row(3, "student", 0.39, 1))
    assert v15.choose(rows, ("student",))["order"] == 2        # an exact tie: the earlier epoch


def test_the_student_reads_the_first_language_models_vocabulary_else_the_first_grammars(tmp_path):
    v15 = load_script("students_v15")
    assert v15.first_model(LM_CHOICE, V7, "alpino") == v15.v7.RUN.format(lang="alpino", seed=3, epoch=10)
    assert v15.first_model(GRAMMAR_CHOICE, V7, "floresta") == v15.v13.GRAMMAR.format(lang="floresta", seed=2,
                                                                                       epoch=10)


def test_the_training_command_is_rule_83s(tmp_path, monkeypatch):
    from onparse.cli import main

    v15 = load_script("students_v15")
    # Click checks that the files exist: the same names, under tmp_path.
    for name in ("TEXT", "TEACHER"):
        monkeypatch.setattr(v15, name, str(tmp_path / getattr(v15, name).split("/runs/")[1]))
    monkeypatch.setattr(v15.v13, "GRAMMAR", str(tmp_path / v15.v13.GRAMMAR.split("/runs/")[1]))
    for path in (v15.TEXT, v15.TEACHER, v15.v13.GRAMMAR):
        target = tmp_path / path.format(lang="floresta", seed=2, epoch=10)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("a b c\n")
    monkeypatch.setattr(v15, "v13_choices", lambda: {"floresta": GRAMMAR_CHOICE})
    monkeypatch.setattr(v15.v13, "v7_choices", lambda: {"floresta": V7})
    for resume in (False, True):
        command = v15.train_command("floresta", resume)
        assert command[1:4] == ["-m", "onparse", "distill"]
        params = main.commands["distill"].make_context("distill", command[4:]).params
        assert params["text"] == v15.TEXT.format(lang="floresta") and params["pretokenized"]
        assert params["model_paths"] == (v15.v13.GRAMMAR.format(lang="floresta", seed=2, epoch=10),)
        assert params["teacher_trees"] == v15.TEACHER.format(lang="floresta")
        assert params["student_path"] == v15.STUDENT.format(lang="floresta", seed=1)
        assert (params["seed"], params["epochs"], params["keep_epochs"], params["threads"]) == (1, 6, True, 1)
        assert params["resume"] is resume


def test_a_student_joins_the_choice_as_its_last_member(monkeypatch):
    v15 = load_script("students_v15")
    trees = object.__new__(v15.v13.Trees)
    trees.tokens = [["a", "b", "c"], ["d", "e"]]
    trees.lm_rows = [["lm1-a", "lm2-a"], ["lm1-d", "lm2-d"]]
    trees.grammars = {(2, 1): ["g-a", "g-d"]}
    seen = []
    monkeypatch.setattr(v15.v13.v9, "average",
                        lambda rows, tokens, voters, ties: seen.append((rows, voters, ties)) or ["avg"] * len(rows))
    trees.of(LM_CHOICE, ["s-a", "s-d"])
    trees.of(LM_CHOICE)
    trees.of({**GRAMMAR_CHOICE, "grammars": [[2, 1]]}, ["s-a", "s-d"])
    assert seen[0] == ([["lm1-a", "lm2-a", "g-a", "s-a"], ["lm1-d", "lm2-d", "g-d", "s-d"]], [], "right")
    assert seen[1] == ([["lm1-a", "lm2-a", "g-a"], ["lm1-d", "lm2-d", "g-d"]], [], "right")
    assert seen[2] == ([["g-a", "s-a"], ["g-d", "s-d"]], ["right"], "first")
    # A choice without language models never computes their trees (Portuguese's teacher).
    lazy = object.__new__(v15.v13.Trees)
    lazy.tokens, lazy.grammars = trees.tokens, trees.grammars
    lazy.of({**GRAMMAR_CHOICE, "grammars": [[2, 1]]})
    assert seen[3] == ([["g-a"], ["g-d"]], ["right"], "first") and "lm_rows" not in vars(lazy)


def test_the_test_parts_are_scored_once(tmp_path, monkeypatch):
    v15 = load_script("students_v15")
    done = tmp_path / "test-v15.json"
    done.write_text("{}")
    monkeypatch.setattr(v15, "TEST", str(done))
    with pytest.raises(SystemExit, match="scored once"):
        v15.test()


def test_the_teachers_sentences_are_those_distill_reads(tmp_path, monkeypatch):
    """Rule 82 as amended: split on whitespace, fewer than two words passed over -- what `onparse
    distill --pretokenized` learns from.  When rule v15 ran, punctuation the first model's
    vocabulary lacked was dropped too; since 103ed90 (issue 55.14) pre-tokenised text keeps every
    token it is given, so a rerun reads the punctuation as well (as <unk> where the vocabulary
    lacks it)."""
    import onparse
    from onparse.text.tokens import Preprocessor
    from onparse.text.vocab import Vocabulary

    class Parser:
        def __init__(self, words):
            self.vocab = Vocabulary(["<unk>", "<eos>"] + words)

        def tokens(self, lines, tokenize):
            prep = Preprocessor(self.vocab, tokenize)
            return [prep(line).tokens for line in lines]

    v15 = load_script("students_v15")
    text = tmp_path / "fit-text-floresta.txt"
    text.write_text("o dia & a noite\nsó\n& ,\na % b\n")
    monkeypatch.setattr(v15, "TEXT", str(tmp_path / "fit-text-{lang}.txt"))
    every = [["o", "dia", "&", "a", "noite"], ["&", ","], ["a", "%", "b"]]
    monkeypatch.setattr(onparse, "load", lambda path, device: Parser(["o", "dia", "a", "noite", "%"]))
    assert v15.read_text("floresta", "first.pt") == every
    monkeypatch.setattr(onparse, "load", lambda path, device: Parser(["&"]))
    assert v15.read_text("floresta", "first.pt") == every


def test_rule_v15s_recorded_test_scores_are_its_choices_and_its_readme_block_is_portugueses():
    """Rule v15's recorded test: each choice beats right-branching and is at least rule v13's (its
    choice plus a student); its Portuguese rows are in the README's "Other languages" table
    (Dutch and Spanish are rule v18's since)."""
    import json

    from lab import ROOT

    v15 = load_script("students_v15")
    results = json.loads((ROOT / "research" / "test-v15.json").read_text())
    v7_results = json.loads((ROOT / "research" / "test-v7.json").read_text())
    portuguese = v15.readme_block(results, v7_results).split("| Portuguese")[1].split("\n\n")[0]
    assert portuguese in (ROOT / "research" / "RESULTS.md").read_text()
    choices = json.loads((ROOT / "research" / "dev-choice-v15.json").read_text())
    for lang in v15.v7.LANGUAGES:
        assert results[lang]["candidate"] == choices[lang]["chosen"]["name"]
        assert results[lang]["chosen"]["all"]["sentence_f1"] > results[lang]["right"]["all"]["sentence_f1"], lang
        assert results[lang]["chosen"]["all"]["sentence_f1"] >= results[lang]["v13"]["all"]["sentence_f1"] - 0.02


@pytest.mark.parametrize("name", ["dev-trials-v7.tsv", "dev-trials-v13.tsv", "dev-trials-v15.tsv"])
def test_the_language_trials_writer_gives_the_recorded_files_back(tmp_path, name):
    """choose_members.write_trials with the language first writes rules v7, v13 and v15's trial
    files as they were written before it served them: the rows read back, written again, byte
    for byte."""
    from lab import RESEARCH, read_tsv

    v5 = load_script("choose_members")
    keys = [("all", "sentence_f1"), ("all", "kim_f1"), ("all", "corpus_f1"),
            ("10", "sentence_f1"), ("10", "kim_f1"), ("10", "corpus_f1")]
    rows = []
    for row in read_tsv(name):
        values = list(row.values())[4:]
        dev = {"all": {}, "10": {}}
        for (part, key), value in zip(keys, values):
            dev[part][key] = float(value) / 100
        rows.append({"language": row["language"], "order": int(row["order"]) - 1, "name": row["candidate"],
                     "trees": row["trees"], "dev": dev})
    out = tmp_path / name
    v5.write_trials(out, rows, ("trees",), lead="language")
    assert out.read_bytes() == (RESEARCH / name).read_bytes()

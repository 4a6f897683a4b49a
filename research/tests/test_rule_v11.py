"""Rule v11 (``research/choose_v11.py``, PROTOCOL.md rules 59-65): students of rule v9's average.
The candidates and their tie-breaking order are rule 62's and 63's; the dev step chooses among
students alone and students beside the shipped bundle, and says whether the choice ships (rule
65: above the shipped bundle's dev score); the test step scores once."""
import pytest

import lab
from lab import load_script


@pytest.fixture()
def v11():
    return load_script("choose_v11")


def test_candidates_are_rule_62s_in_rule_63s_order(v11):
    cands = v11.candidates()
    assert len(cands) == 24
    assert cands[:6] == [("student", 1, e) for e in range(1, 7)]
    assert cands[6:12] == [("student", 2, e) for e in range(1, 7)]
    assert cands[12] == ("shipped + student", 1, 1) and cands[-1] == ("shipped + student", 2, 6)
    assert v11.name_of(*cands[13]) == "shipped + student (s1 e2)"


def run_dev(v11, tmp_path, monkeypatch, table):
    return lab.run_dev(v11, tmp_path, monkeypatch, lab.scores_from(table))


def test_exact_ties_go_to_the_student_alone_then_the_lower_seed_then_the_earlier_epoch(v11, tmp_path, monkeypatch):
    def table(kind, seed, epoch):
        if kind in ("teacher", "shipped"):
            return {"teacher": 0.9, "shipped": 0.5}[kind]       # the teacher is reported, never chosen
        return 0.6 if epoch in (3, 5) else 0.55

    got = run_dev(v11, tmp_path, monkeypatch, table)
    assert got["chosen"]["name"] == "student (s1 e3)" and got["ships"] is True
    assert got["teacher"]["all"]["sentence_f1"] == 0.9 and got["shipped"]["all"]["sentence_f1"] == 0.5
    assert len((tmp_path / "trials.tsv").read_text().splitlines()) == 25


def test_a_choice_not_above_the_shipped_bundle_does_not_ship(v11, tmp_path, monkeypatch):
    def table(kind, seed, epoch):
        return 0.6 if kind == "shipped" else (0.6 if (kind, seed, epoch) == ("shipped + student", 2, 4) else 0.5)

    got = run_dev(v11, tmp_path, monkeypatch, table)
    assert got["chosen"]["name"] == "shipped + student (s2 e4)" and got["ships"] is False


def test_the_test_half_is_scored_once(v11, tmp_path, monkeypatch):
    (tmp_path / "test.json").write_text("{}")
    monkeypatch.setattr(v11, "TEST", str(tmp_path / "test.json"))
    with pytest.raises(SystemExit, match="scored once"):
        v11.test()


def test_v11_text_takes_each_halfs_first_trees_and_their_lines(tmp_path, monkeypatch):
    """research/v11_text.py (rule 60, amended): the first N trees of each `induce --shard K/2`
    output and the lines they are trees of, found where induce starts each half."""
    from onparse.induce import Shard

    script = load_script("v11_text")
    lines = [f"w{i} x{i} y{i}" for i in range(10)]
    (tmp_path / "news-train.txt").write_text("".join(line + "\n" for line in lines))
    size = (tmp_path / "news-train.txt").stat().st_size
    start = Shard(2, 2).byte_range(size)[0]
    first = next(i for i in range(10) if sum(len(x) + 1 for x in lines[:i]) >= start)   # induce's half 2
    for k, at in ((1, 0), (2, first)):
        trees = [f"({lines[i].split()[0]} ({' '.join(lines[i].split()[1:])}))" for i in range(at, at + 3)]
        (tmp_path / f"v9-teacher.part{k}.txt").write_text("".join(t + "\n" for t in trees))
    monkeypatch.setattr(script, "DISTILL", str(tmp_path))
    monkeypatch.setattr(script, "TEXT", str(tmp_path / "news-train.txt"))
    monkeypatch.setattr(script, "PART", str(tmp_path / "v9-teacher.part{k}.txt"))
    monkeypatch.setattr("sys.argv", ["v11_text.py", "--lines", "2"])
    script.main()
    assert (tmp_path / "v11-text.txt").read_text().splitlines() == lines[0:2] + lines[first:first + 2]
    assert len((tmp_path / "v11-teacher.txt").read_text().splitlines()) == 4


def test_rule_v11s_choice_shipped_until_rule_v17(v11):
    """Rule 65: dev-choice-v11.json said the choice ships; its test record is that candidate's,
    and rule v17's table keeps it as the bundled model before (research/test-v17.json)."""
    from lab import read_json

    decided, tested = read_json("dev-choice-v11.json"), read_json("test-v11.json")
    assert decided["ships"] and decided["chosen"]["name"] == tested["candidate"] == "student (s2 e6)"
    assert read_json("test-v17.json")["incumbent"] == tested["chosen"]

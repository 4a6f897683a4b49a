"""Rule v17 (``research/choose_v17.py``, ``research/v17_text.py``; PROTOCOL.md rules 86-92):
students of rule v9's average on the whole `news` text.  The candidates and their order are rule
89's over the epochs both seeds completed (rule 88); the dev step chooses by rule 90 and ships
anything but the incumbent (rule 92); the test step scores once; the teacher's trees are the
pieces concatenated in the text's order, each checked against its line."""
import pytest

import lab
from lab import load_script


@pytest.fixture()
def v17():
    return load_script("choose_v17")


def test_candidates_are_rule_89s_in_rule_90s_order(v17):
    cands = v17.candidates(3)
    assert len(cands) == 1 + 3 * 2 * 3
    assert cands[0] == (v17.INCUMBENT, None, None)
    assert cands[1:4] == [("student", 1, e) for e in (1, 2, 3)]
    assert cands[4:7] == [("student", 2, e) for e in (1, 2, 3)]
    assert cands[7] == ("language models + student", 1, 1)
    assert cands[-1] == ("student + v11 student + right", 2, 3)
    assert v17.name_of(*cands[0]) == "shipped (rule v11's student)"
    assert v17.name_of(*cands[8]) == "language models + student (s1 e2)"


def test_the_candidates_are_the_epochs_both_seeds_completed(v17, tmp_path):
    for seed, epochs in ((1, 4), (2, 3)):
        run = tmp_path / f"v17-s{seed}.run"
        run.mkdir()
        for e in range(1, epochs + 1):
            (run / f"epoch-{e:03d}.pt").write_bytes(b"")
    (tmp_path / "v17-s1.run" / "epoch-006.pt").write_bytes(b"")     # a gap ends the count
    assert v17.completed_epochs(str(tmp_path / "v17-s{seed}.run")) == 3


def run_dev(v17, tmp_path, monkeypatch, table, epochs=2):
    monkeypatch.setattr(v17, "completed_epochs", lambda: epochs)
    return lab.run_dev(v17, tmp_path, monkeypatch, lab.scores_from(table))


def test_exact_ties_go_to_the_earlier_candidate_and_a_new_choice_ships(v17, tmp_path, monkeypatch):
    def table(kind, seed, epoch):
        if kind == v17.INCUMBENT:
            return 0.58
        return 0.6 if (seed, epoch) in ((2, 1), (1, 2)) else 0.55

    got = run_dev(v17, tmp_path, monkeypatch, table)
    assert got["chosen"]["name"] == "student (s1 e2)" and got["ships"] is True and got["epochs"] == 2
    assert got["incumbent"]["all"]["sentence_f1"] == 0.58
    assert len((tmp_path / "trials.tsv").read_text().splitlines()) == 1 + 1 + 3 * 2 * 2


def test_the_incumbent_keeps_its_place_on_a_tie_and_then_nothing_ships(v17, tmp_path, monkeypatch):
    got = run_dev(v17, tmp_path, monkeypatch, lambda kind, seed, epoch: 0.58)
    assert got["chosen"]["name"] == v17.INCUMBENT and got["ships"] is False


def test_no_snapshot_in_both_runs_is_a_clear_stop(v17, monkeypatch):
    monkeypatch.setattr(v17, "completed_epochs", lambda: 0)
    with pytest.raises(SystemExit, match="no epoch"):
        v17.dev()


def test_the_test_half_is_scored_once(v17, tmp_path, monkeypatch):
    (tmp_path / "test.json").write_text("{}")
    monkeypatch.setattr(v17, "TEST", str(tmp_path / "test.json"))
    with pytest.raises(SystemExit, match="scored once"):
        v17.test()


def write_pieces(tmp_path, lines, pieces):
    """Each piece's trees of its run of lines, as induce writes them: `(w0 (w1 w2))`."""
    (tmp_path / "news-train.txt").write_text("".join(line + "\n" for line in lines))
    at = 0
    for name, n, extra in pieces:
        trees = [f"({lines[i].split()[0]} ({' '.join(lines[i].split()[1:])}))" for i in range(at, at + n)]
        (tmp_path / name).write_text("".join(t + "\n" for t in trees) + extra)
        at += n


def test_v17_text_concatenates_the_pieces_in_order_checking_each_tree(tmp_path, monkeypatch):
    script = load_script("v17_text")
    lines = [f"w{i} x{i} y{i}" for i in range(9)]
    # A piece the clock cut ends in a partial line, and is taken to its first N lines.
    write_pieces(tmp_path, lines, [("a.txt", 3, "(w3 (x3"), ("b.txt", 2, ""), ("c.txt", 4, "")])
    monkeypatch.setattr(script, "OUT", str(tmp_path / "out.txt"))
    trees = script.concatenate(["a.txt:3", "b.txt", "c.txt"], str(tmp_path / "news-train.txt"), str(tmp_path))
    assert len(trees) == 9 and trees[3] == "(w3 (x3 y3))" and trees[-1] == "(w8 (x8 y8))"


@pytest.mark.parametrize("pieces, message", [
    (["a.txt:3", "c.txt", "b.txt"], "not a tree of text line 4"),        # out of order
    (["a.txt:3", "b.txt"], "cover 5 of the text's 9 lines"),            # a piece missing
    (["a.txt:4", "b.txt", "c.txt"], "fewer than the 4 taken"),         # the partial line is not a tree
])
def test_v17_text_refuses_pieces_that_do_not_cover_the_text_in_order(tmp_path, pieces, message):
    script = load_script("v17_text")
    lines = [f"w{i} x{i} y{i}" for i in range(9)]
    write_pieces(tmp_path, lines, [("a.txt", 3, "(w3 (x3"), ("b.txt", 2, ""), ("c.txt", 4, "")])
    with pytest.raises(SystemExit, match=message.replace("'", ".")):
        script.concatenate(pieces, str(tmp_path / "news-train.txt"), str(tmp_path))


@pytest.mark.parametrize("kind, kept, members, voters, ties", [
    ("student", [0, 1, 2, 4], [(3, 1, "cyk")], (), "first"),
    ("language models + student", [0, 1, 2, 4], [(0, 2, "onlstm"), (1, 3, "onlstm"), (2, 2, "onlstm"), (3, 1, "cyk")],
     ("right",), "right"),
    ("student + v11 student + right", [0, 1, 2, 3, 4], [(4, 1, "cyk"), (3, 1, "cyk")], ("right",), "right"),
])
def test_the_shipped_bundle_keeps_the_language_models_and_the_students_its_members_read(v17, kind, kept, members,
                                                                                         voters, ties):
    """Rule 92: ``load([shipped bundle, snapshot])`` holds three language models, rule v11's
    student and the new one; the bundle keeps the language models (distances, show) and only the
    students a member reads, members renumbered over what is kept."""
    from types import SimpleNamespace

    from onparse import Member

    both = SimpleNamespace(models=[object()] * 5, members=[Member(3, 1, "cyk"), Member(4, 1, "cyk")])
    lm_members = [Member(0, 2, "onlstm"), Member(1, 3, "onlstm"), Member(2, 2, "onlstm")]
    got = v17.bundle_of(kind, both, lm_members)
    assert got[0] == kept and [(m.model, m.layer, m.decoder) for m in got[1]] == members
    assert got[2:] == (voters, ties)


def test_the_incumbent_is_never_shipped_again(v17):
    from types import SimpleNamespace

    from onparse import Member

    both = SimpleNamespace(models=[object()] * 5, members=[Member(3, 1, "cyk"), Member(4, 1, "cyk")])
    with pytest.raises(ValueError, match="not a candidate that ships"):
        v17.bundle_of(v17.INCUMBENT, both, [])


def test_the_readme_table_heads_with_the_new_bundled_model_and_keeps_the_older_rows(v17):
    from lab import read_json

    older = read_json("test-v11.json")
    scores = {part: {"sentence_f1": 0.6, "kim_f1": 0.59, "corpus_f1": 0.57} for part in ("all", "10")}
    report = {"candidate": "student (s1 e9)", "sentences": older["sentences"], "chosen": scores,
              "incumbent": older["chosen"], "right": older["right"]}
    lines = v17.readme_block(report, older).splitlines()
    assert lines[2].startswith("| **onparse bundled model**") and "(s1 e9)" in lines[2] and "| **60.0** |" in lines[2]
    assert "| 58.9 |" in lines[3] and "| 58.1 |" in lines[4] and "| 54.5 |" in lines[5]
    assert lines[6].startswith("| right-branching | 39.9 |")
    assert lines[-1].endswith("All lengths 60.00 (met); at most 10 words 60.00 (not met).")


def test_the_bundled_model_is_the_shipped_v17_choice_and_the_readme_table_its_test_scores(v17):
    """Rule 92: the dev choice was not the incumbent, so it ships: the bundled model holds the
    shipped language models and the chosen student read alone; its recorded test figures are rule
    91's; the README's table is `choose_v17.py --readme` of test-v17.json."""
    from lab import ROOT, read_json
    from onparse.files.bundle import load_model_file

    decided, tested = read_json("dev-choice-v17.json"), read_json("test-v17.json")
    assert decided["ships"] and decided["chosen"]["name"] == tested["candidate"] == "student (s1 e6)"
    assert decided["chosen"]["kind"] == "student" and decided["epochs"] == 10
    blob = load_model_file(str(ROOT / "src" / "onparse" / "models" / "default.pt"))
    assert [m.get("kind") for m in blob["models"]] == [None, None, None, "student"]
    assert blob["members"] == [{"model": 3, "layer": 1, "decoder": "cyk"}]
    assert (blob["voters"], blob["ties"]) == ([], "first")
    assert blob["metadata"]["dev"]["chosen"] == decided["chosen"]["name"]
    assert blob["metadata"]["student"]["seed"] == 1 and blob["metadata"]["student"]["epoch"] == 6
    for row in blob["metadata"]["scores"]:
        part = "10" if "10" in row["gold"] else "all"
        assert abs(row["sentence_f1_onlstm"] - tested["chosen"][part]["sentence_f1"]) < 5e-4
    assert v17.readme_block(tested, read_json("test-v11.json")) in (ROOT / "research" / "RESULTS.md").read_text(encoding="utf-8")

"""Sentences of raw text (issue 41.12): Punkt learnt without supervision, its parameters in a
file or a model, --split-sentences on induce / distances / show, and the note for lines that
look like paragraphs."""
import json
import random

import pytest
from click.testing import CliRunner

from conftest import save_tiny_checkpoint
from onparse.cli import main
from onparse.errors import OnparseError
from onparse.text.sentences import (LEARN_CHARS, ParagraphCheck, SentenceSplitter, by_line, learn, params_from_dict,
                                    params_to_dict, read_params, sentence_ends, write_params)
from onparse.trees.tree import leaves, parse_brackets

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat on a mat dog barked at it then slept dr smith came home".split()


def _prose(n=400, seed=0):
    """Raw text of ``n`` sentences on one line, where "Dr." is an abbreviation (never ends a
    sentence), as Punkt must learn: without parameters it splits "Dr. Smith" in two."""
    rng = random.Random(seed)
    names, nouns = "Smith Jones Brown Lee".split(), "cat dog mat house garden river".split()
    verbs = "saw found left painted watched".split()
    patterns = [lambda: f"Dr. {rng.choice(names)} {rng.choice(verbs)} the {rng.choice(nouns)}.",
                lambda: f"The {rng.choice(nouns)} {rng.choice(verbs)} a {rng.choice(nouns)}.",
                lambda: f"Then the {rng.choice(nouns)} {rng.choice(verbs)} a {rng.choice(nouns)} near Dr. {rng.choice(names)}."]
    return " ".join(rng.choice(patterns)() for _ in range(n))


#: Raw text: 400 sentences in one line.
PROSE = _prose()
PARAGRAPH = "The cat sat on a mat. Then the dog barked at a house. Dr. Smith came home."


def invoke(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("sentences") / "tiny.pt", WORDS, seed=3)[2]


@pytest.fixture(scope="module")
def params_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("punkt") / "punkt.json"
    write_params(learn([PROSE]), str(path), {"text": "PROSE"})
    return str(path)


def test_punkt_learns_abbreviations_from_raw_text_and_its_parameters_round_trip(tmp_path):
    params = learn([PROSE])
    assert "dr" in params.abbrev_types                  # learnt, not downloaded
    splitter = SentenceSplitter(params)
    assert splitter.split(PARAGRAPH) == ["The cat sat on a mat.", "Then the dog barked at a house.", "Dr. Smith came home."]
    assert splitter.split("") == [] and splitter.split("   ") == []
    again = params_from_dict(json.loads(json.dumps(params_to_dict(params))), "x")
    assert params_to_dict(again) == params_to_dict(params)
    path = tmp_path / "p.json"
    write_params(params, str(path), {"text": "PROSE"})
    assert json.loads(path.read_text())["learnt_from"] == {"text": "PROSE"}
    assert SentenceSplitter(read_params(str(path))).split(PARAGRAPH) == splitter.split(PARAGRAPH)


@pytest.mark.parametrize("content, message", [
    ("not json", "not JSON"),
    ('{"format": "other"}', 'no "format": "onparse-punkt"'),
    ('{"format": "onparse-punkt", "version": 9}', "version 9"),
    ('{"format": "onparse-punkt", "version": 1, "abbrev_types": [1], "sent_starters": []}', "abbrev_types is not"),
    ('{"format": "onparse-punkt", "version": 1, "abbrev_types": [], "sent_starters": [], "collocations": [["a"]],'
     ' "ortho_context": {}}', "collocations"),
    ('{"format": "onparse-punkt", "version": 1, "abbrev_types": [], "sent_starters": [], "collocations": [],'
     ' "ortho_context": {"a": "x"}}', "ortho_context"),
])
def test_bad_parameter_files_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(OnparseError, match=message) as err:
        read_params(str(path))
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_a_splitter_without_parameters_learns_them_from_the_start_of_its_input():
    told = []
    splitter = SentenceSplitter(None, learn_chars=len(PROSE) + 1, on_learn=lambda chars, lines: told.append((chars, lines)))
    lines = [PROSE, PARAGRAPH, "", "one more line"]
    groups = list(splitter.lines(iter(lines)))
    assert told == [(len(PROSE) + 1, 1)] and "dr" in splitter.params.abbrev_types
    assert [len(g) for g in groups] == [400, 3, 0, 1] and groups[3] == ["one more line"]
    assert LEARN_CHARS >= 1_000_000
    # With nothing to learn from (lines typed at a terminal) Punkt still splits, on punctuation alone.
    bare = SentenceSplitter(None, learn_chars=0, on_learn=lambda chars, lines: told.append((chars, lines)))
    assert list(bare.lines([PARAGRAPH])) == [["The cat sat on a mat.", "Then the dog barked at a house.", "Dr.",
                                              "Smith came home."]]
    assert told[-1] == (0, 0)


def test_lines_that_look_like_paragraphs_are_counted():
    assert sentence_ends(PARAGRAPH) == 2
    assert sentence_ends("Mr. Smith and Dr. Jones of the U.S. met Sen. Brown.") == 0
    assert sentence_ends('He said "stop." Then he left! Where? Nowhere.') == 3
    check = ParagraphCheck()
    lines = list(check.watch(["The cat sat.", PARAGRAPH, "word " * 101, "Mr. Smith came. Home."]))
    assert len(lines) == 4 and (check.lines, check.paragraphs) == (4, 2)
    note = check.note()
    assert note.startswith("note: 2 of 4 lines look like several sentences (line 2: 17 words, about 3 sentences)")
    assert "--split-sentences" in note and "\n" not in note
    assert ParagraphCheck().note() is None


def test_split_outputs_map_back_to_input_lines():
    tokens = [["a", "b"], [], ["c"]]
    assert by_line(["(a b)", "", "(c)"], tokens, [2, 0, 1], False) == ["(a b)", "", "", "(c)", ""]
    records = by_line([{"t": 1}, {"t": 2}, {"t": 3}], tokens, [2, 0, 1], True, {"t": None})
    assert records == [{"line": 1, "sentence": 1, "t": 1}, {"line": 2, "sentence": 1, "t": None},
                       {"line": 3, "sentence": 1, "t": 3}]
    # issue 54.7: records carry their input-line number, counted from the first line given
    assert [r["line"] for r in by_line([{}, {}, {}], tokens, [2, 0, 1], True, {}, first=41)] == [41, 42, 43]


def test_induce_notes_paragraphs_and_keeps_one_line_per_input_line(model_path):
    text = f"{PARAGRAPH}\nthe cat sat\n"
    out = invoke("induce", "-", "-m", model_path, input=text)
    assert out.exit_code == 0, out.output
    assert len(out.stdout.splitlines()) == 2
    assert "note: 1 of 2 lines look like several sentences (line 1: 17 words" in out.stderr
    assert "look like several" not in invoke("induce", "-", "-m", model_path, input="the cat sat\n").stderr


def test_induce_split_sentences_one_tree_per_sentence_and_a_blank_line_per_input_line(model_path, params_file):
    text = f"{PARAGRAPH}\n\nthe cat sat\n"
    out = invoke("induce", "-", "-m", model_path, "--punkt", params_file, input=text)      # --punkt implies it
    assert out.exit_code == 0, out.output
    lines = out.stdout.split("\n")
    assert leaves(parse_brackets(lines[5])) == ["the", "cat", "sat"]
    assert [leaves(parse_brackets(line)) for line in lines[:3]] == [
        ["The", "cat", "sat", "on", "a", "mat"], ["Then", "the", "dog", "barked", "at", "a", "house"],
        ["Dr.", "Smith", "came", "home"]]
    assert lines[3] == "" and lines[4] == "" and lines[6:] == ["", ""]
    assert "look like several" not in out.stderr and "learnt them" not in out.stderr
    records = [json.loads(x) for x in invoke("induce", "-", "-m", model_path, "--split-sentences", "--punkt",
                                             params_file, "--format", "jsonl", input=text).stdout.splitlines()]
    assert [(r["sentence"], len(r["tokens"])) for r in records] == [(1, 6), (2, 7), (3, 4), (1, 0), (1, 3)]
    assert records[3]["tree"] is None
    assert [r["line"] for r in records] == [1, 1, 1, 2, 3]           # the input line of each record


def test_split_sentence_records_of_a_shard_carry_the_files_line_numbers(model_path, params_file, tmp_path):
    """Issue 54.7: --split-sentences --format jsonl records name their input line; a --shard's
    records count from the shard's first line, so the parts concatenated equal the whole."""
    path = tmp_path / "paragraphs.txt"
    path.write_text("".join(f"{PARAGRAPH}\nthe cat sat\n" for _ in range(6)))
    args = ["-m", model_path, "--punkt", params_file, "--format", "jsonl"]
    whole = invoke("induce", path, *args)
    parts = [invoke("induce", path, *args, "--shard", f"{k}/3") for k in (1, 2, 3)]
    assert whole.exit_code == 0 and all(p.exit_code == 0 for p in parts), whole.output
    assert "".join(p.stdout for p in parts) == whole.stdout
    lines = [json.loads(x)["line"] for x in whole.stdout.splitlines()]
    assert lines == [n for line in range(1, 13) for n in [line] * (3 if line % 2 else 1)]
    distances = [json.loads(x) for x in invoke("distances", path, *args).stdout.splitlines()]
    assert [r["line"] for r in distances] == lines


def test_without_parameters_punkt_learns_from_the_input_and_says_so(model_path, tmp_path):
    path = tmp_path / "prose.txt"
    path.write_text(PROSE + "\n" + PARAGRAPH + "\n")
    out = invoke("induce", path, "-m", model_path, "--split-sentences")
    assert out.exit_code == 0, out.output
    assert "note: --split-sentences: the model records no Punkt parameters, so Punkt learnt them from the first " \
           "2 lines of the input" in out.stderr
    assert len(out.stdout.split("\n\n")[1].splitlines()) == 3          # Dr. Smith stays one sentence


def test_a_model_that_records_punkt_parameters_splits_with_them(tmp_path, params_file):
    with open(params_file) as handle:
        punkt = {k: v for k, v in json.load(handle).items() if k != "learnt_from"}
    path = save_tiny_checkpoint(tmp_path / "with-punkt.pt", WORDS, seed=3, metadata={"punkt": punkt})[2]
    out = invoke("induce", "-", "-m", path, "--split-sentences", input=PARAGRAPH + "\n")
    assert out.exit_code == 0, out.output
    assert len(out.stdout.splitlines()) == 4 and "learnt them" not in out.stderr
    bad = save_tiny_checkpoint(tmp_path / "bad-punkt.pt", WORDS, seed=3, metadata={"punkt": {"format": "x"}})[2]
    out = invoke("induce", "-", "-m", bad, "--split-sentences", input=PARAGRAPH + "\n")
    assert out.exit_code == 1 and "its punkt metadata" in out.output


def test_distances_and_show_split_sentences(model_path, params_file):
    out = invoke("distances", "-", "-m", model_path, "--punkt", params_file, input=f"{PARAGRAPH}\nthe cat\n")
    assert out.exit_code == 0, out.output
    header, *rows = out.stdout.split("\n")
    assert header == "token\tlayer 2"
    words = [row.split("\t")[0] for row in rows]       # rows of a sentence, a blank line, one more per input line
    assert words == ["The", "cat", "sat", "on", "a", "mat", "", "Then", "the", "dog", "barked", "at", "a", "house", "",
                     "Dr.", "Smith", "came", "home", "", "", "the", "cat", "", "", ""]
    records = [json.loads(x) for x in invoke("distances", "-", "-m", model_path, "--punkt", params_file,
                                             "--format", "jsonl", input=PARAGRAPH + "\n").stdout.splitlines()]
    assert [r["sentence"] for r in records] == [1, 2, 3]
    shown = invoke("show", "-", "-m", model_path, "--punkt", params_file, input=PARAGRAPH + "\n")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.count("induced tree") == 3
    assert "look like several" in invoke("show", PARAGRAPH, "-m", model_path).stderr
    refused = invoke("show", "-m", model_path, "--gold", "((the cat) sat)", "--split-sentences")
    assert refused.exit_code == 2 and "gold trees are already one sentence each" in refused.output


def test_the_punkt_command_writes_parameters(tmp_path, model_path):
    text = tmp_path / "prose.txt"
    text.write_text(PROSE + "\n")
    out = invoke("punkt", text, "--out", tmp_path / "p.json")
    assert out.exit_code == 0, out.output
    assert out.stderr.startswith(f"wrote {tmp_path / 'p.json'}: Punkt's parameters learnt from 1 lines")
    assert "dr" in read_params(str(tmp_path / "p.json")).abbrev_types
    assert invoke("punkt", text, "-o", text).exit_code == 2                          # the input itself
    assert invoke("punkt", text, "-o", model_path).exit_code == 2                    # a model, without --force
    missing = invoke("induce", "-", "-m", model_path, "--punkt", tmp_path / "none.json", input="a\n")
    assert missing.exit_code == 2 and "does not exist" in missing.output
    assert "--split-sentences" in invoke("induce", "--help").stdout and "--punkt" in invoke("distill", "--help").stdout


def test_the_paragraph_note_counts_one_sentence_in_the_singular():
    from onparse.text.sentences import ParagraphCheck

    check = ParagraphCheck()
    check.paragraphs, check.lines, check.example = 1, 1, (1, 1, 40)
    note = check.note()
    assert "about 1 sentence)" in note and "1 sentences" not in note
    check.example = (1, 3, 40)
    assert "about 3 sentences)" in check.note()

"""A very long line in bounded time: a sentence too long to average is read by the first member
alone (the others step aside), a student parses it in pieces of PIECE_WORDS words and a grammar
in pieces of LONG_PIECE_WORDS, batched; every word is in its tree."""
import pytest
import torch

import onparse
import onparse.grammar.parse as grammar_parse
import onparse.trees.average as average_module
from conftest import save_pinned_grammar
from onparse.api import load
from onparse.grammar.kind import Grammar
from onparse.trees.tree import leaves, tree_spans

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the a cat dog saw liked big small".split()


def save_chain_grammar(path):
    # Every tree it gives is right-branching (S -> NT-0, NT-0 -> PT-0 (NT-0 | PT-1)).
    return save_pinned_grammar(path, WORDS, left=[4], right=[0, 5])


def save_student(path, seed=0):
    from onparse.student.config import StudentConfig
    from onparse.student.file import save_student as save
    from onparse.student.model import SpanStudent
    from onparse.text.vocab import Vocabulary

    vocab = Vocabulary.build([WORDS])
    torch.manual_seed(seed)
    config = StudentConfig(vocab_size=len(vocab), embedding_size=8, hidden_size=8, mlp_size=8)
    save(str(path), config=config.to_dict(), vocab=vocab, state_dict=SpanStudent(config).state_dict())
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("long")
    return save_student(folder / "student.pt"), save_chain_grammar(folder / "chain.pt")


def test_a_sentence_too_long_to_average_is_read_by_the_first_member_alone(files, monkeypatch):
    student, grammar = files
    monkeypatch.setattr(average_module, "MAX_WORDS", 10)
    parser = load([student, grammar], "cpu", voters=["right"])
    read = []
    real = Grammar.member_trees
    monkeypatch.setattr(Grammar, "member_trees", lambda self, token_lists, *a, **k: (
        read.extend(len(t) for t in token_lists), real(self, token_lists, *a, **k))[1])
    long, short = [WORDS[k % 8] for k in range(30)], WORDS[:6]
    trees = parser.trees([short, long, short])
    # The grammar read the short sentences only: it steps aside from the long one, whose tree
    # would not be averaged anyway (it parsed all 30 words, to throw its tree away).
    assert sorted(read) == [0, 6, 6]
    alone = load(student, "cpu").trees([long])[0]
    assert trees[1] == alone and leaves(trees[1]) == long and parser.too_long == 1
    assert trees[0] == trees[2] == parser.average([parser.member_trees([short])[0]], [short])[0]


def test_a_grammar_parses_a_very_long_sentence_in_short_pieces_in_batches(files, monkeypatch):
    _, grammar = files
    monkeypatch.setattr(average_module, "MAX_WORDS", 10)
    monkeypatch.setattr(grammar_parse, "LONG_PIECE_WORDS", 4)
    parser = load(grammar, "cpu")
    tokens = [WORDS[k % 8] for k in range(22)]
    (tree,) = parser.trees([tokens])
    # Pieces of 3 or 4 words (ceil(22 / 4) = 6 near-equal pieces), joined right-branching; the
    # chain grammar's tree of each piece is right-branching: every span by hand.
    bounds = [0, 3, 7, 11, 14, 18, 22]
    expected = {(a, 22) for a in bounds[:-1]}
    expected |= {(i, b) for a, b in zip(bounds, bounds[1:]) for i in range(a, b - 1)}
    assert set(tree_spans(tree)) == expected and leaves(tree) == tokens
    assert parser.in_pieces == {"grammar": 1}
    # A sentence of at most MAX_WORDS keeps pieces of the grammar's whole-sentence cap (10 here).
    (shorter,) = parser.trees([tokens[:10]])
    assert set(tree_spans(shorter)) == {(i, 10) for i in range(9)}


def test_a_student_parses_a_very_long_sentence_in_pieces_of_piece_words(files, monkeypatch):
    import onparse.student.model as student_model

    student, _ = files
    monkeypatch.setattr(average_module, "MAX_WORDS", 10)
    monkeypatch.setattr(student_model, "PIECE_WORDS", 4)
    tokens = [WORDS[k % 8] for k in range(22)]
    (tree,) = load(student, "cpu").trees([tokens])
    bounds = [0, 3, 7, 11, 14, 18, 22]
    assert {(a, b) for a, b in zip(bounds, bounds[1:])} <= set(tree_spans(tree)) and leaves(tree) == tokens


def test_a_20000_word_line_through_the_api_and_the_command_line(files, tmp_path):
    # At its real length limits (2,000 words averaged; pieces of 500 and 40 words): every word
    # is in the tree, through the API and through induce (ptb: the grammar names spans of pieces).
    from click.testing import CliRunner

    from onparse.cli import main

    student, grammar = files
    line = " ".join(WORDS[(k * 7 + k // 3) % 8] for k in range(20000))
    parser = load([student, grammar], "cpu", voters=["right"])
    tree = parser.batch([line, "the cat saw a dog"])
    assert tree[0].leaves() == line.split() and tree[1].leaves() == "the cat saw a dog".split()
    text = tmp_path / "long.txt"
    text.write_text(line + "\nthe cat saw a dog\n")
    result = CliRunner().invoke(main, ["induce", str(text), "-m", student, "-m", grammar, "--voter", "right",
                                       "--format", "ptb", "-q"])
    assert result.exit_code == 0, result.output
    assert [t.leaves() for t in onparse.read_trees(result.stdout.splitlines())] == [line.split(), tree[1].leaves()]
    assert "1 sentence(s) of more than 2,000 words were too long to average" in result.stderr

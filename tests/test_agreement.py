"""Member agreement (onparse.scores.agreement): hand-computed cases, a naive reference over random
trees, Parser.agreement against trees computed member by member, and `onparse agreement`."""
import math
import random

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import onparse
from onparse.scores.agreement import agreement_scores, select, tree_agreement
from onparse.api import load
from onparse.trees.baselines import balanced, left_branching, random_tree, right_branching
from onparse.cli import main
from onparse.errors import OnparseError

from conftest import expected_tree, save_pinned_grammar, save_tiny_checkpoint
from naive import naive_spans, naive_words

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat down on a mat dog barked N times and then it was quiet".split()
LINES = ["the cat sat down on a mat", "the dog barked N times", "and then it was quiet",
         "a cat", "the dog sat on the mat and then it barked"]


def naive_agreement(a, b, n):
    """Shared brackets over n - 2, from the naive span lists of tests/naive.py: every span of
    two or more words, minus the whole sentence."""
    def brackets(tree):
        return {s for s in naive_spans(tree) if s != (0, n)}
    return len(brackets(a) & brackets(b)) / (n - 2)


def test_hand_computed_cases():
    words = list("abcde")
    left, right = left_branching(words), right_branching(words)
    assert tree_agreement(left, left) == 1.0
    # left: (0,2) (0,3) (0,4); right: (1,5) (2,5) (3,5): nothing shared.
    assert tree_agreement(left, right) == 0.0
    # ((a b) c) (d e): (0,3) (0,2) (3,5) shares (0,2) (0,3) with left: 2 of 3.
    mixed = ((("a", "b"), "c"), ("d", "e"))
    assert tree_agreement(mixed, left) == pytest.approx(2 / 3)
    assert tree_agreement(("a", "b"), ("a", "b")) is None          # no non-trivial span
    with pytest.raises(ValueError, match="same words"):
        tree_agreement(left, left_branching(list("abcdx")))


@settings(max_examples=200, deadline=None)
@given(st.integers(3, 12), st.integers(0, 10 ** 6))
def test_agreement_matches_a_naive_count(n, seed):
    words = [f"w{i}" for i in range(n)]
    a, b = random_tree(words, random.Random(seed)), random_tree(words, random.Random(seed + 1))
    assert tree_agreement(a, b) == pytest.approx(naive_agreement(a, b, n))
    assert tree_agreement(a, b) == tree_agreement(b, a)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=6), st.lists(st.integers(0, 2), min_size=2, max_size=5),
       st.integers(0, 10 ** 6))
def test_scores_match_the_definition(lengths, groups, seed):
    rng = random.Random(seed)
    sentences = [[random_tree([f"w{i}" for i in range(n)], rng) for _ in groups] for n in lengths]
    used = [s for s in sentences if len(naive_words(s[0])) >= 3]
    if not used:
        with pytest.raises(ValueError, match="3 words"):
            agreement_scores(sentences, groups)
        return
    scores = agreement_scores(sentences, groups)
    several = len(set(groups)) > 1
    for i in range(len(groups)):
        peers = [j for j in range(len(groups)) if j != i and (not several or groups[j] != groups[i])]
        expected = sum(sum(naive_agreement(s[i], s[j], len(naive_words(s[0]))) for j in peers) / len(peers)
                       for s in used) / len(used)
        assert scores[i] == pytest.approx(expected)


def test_only_other_groups_vote_and_short_sentences_are_skipped():
    words = list("abcdef")
    left, right, bal = left_branching(words), right_branching(words), balanced(words)
    short = [("a", "b")] * 3
    # Members 0 and 1 (group 0) are identical: they may not vote for each other.
    assert agreement_scores([[left, left, right], short], groups=[0, 0, 1]) == [0.0, 0.0, 0.0]
    # One group: every other member votes.
    assert agreement_scores([[left, left, right]], groups=[0, 0, 0]) == [0.5, 0.5, 0.0]
    assert agreement_scores([[bal, bal]], groups=[0, 1]) == [1.0, 1.0]
    with pytest.raises(ValueError, match="3 words"):
        agreement_scores([short], groups=[0, 1, 2])
    with pytest.raises(ValueError, match="two members"):
        agreement_scores([[left]], groups=[0])


def test_select_keeps_half_rounded_up_highest_first_ties_in_order():
    assert select([0.1, 0.3, 0.2, 0.3]) == [1, 3]
    assert select([0.5, 0.5, 0.5]) == [0, 1]
    assert select([0.2, 0.9, 0.4, 0.1, 0.3], keep=3) == [1, 2, 4]
    assert len(select([0.0] * 7)) == math.ceil(7 / 2)
    with pytest.raises(ValueError):
        select([0.1, 0.2], keep=3)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``(model, vocabulary, path)`` of two untrained tiny models."""
    folder = tmp_path_factory.mktemp("agree")
    return [save_tiny_checkpoint(folder / f"m{seed}.pt", WORDS, seed=seed) for seed in (1, 2)]


@pytest.fixture(scope="module")
def paths(saved):
    return [path for _, _, path in saved]


def test_parser_agreement_is_the_mean_over_the_other_models_members(saved, paths):
    parser = load(paths, "cpu", layers=[2, 3], decoders=["onlstm", "split"])
    scored = parser.agreement(LINES)
    assert [m for m, _ in scored] == parser.members
    sentences = [line.split() for line in LINES if len(line.split()) >= 3]
    trees = {(p, layer, d): [expected_tree(model, vocab, s, layer, d) for s in sentences]
             for p, (model, vocab, _) in enumerate(saved) for layer in (2, 3) for d in ("onlstm", "split")}
    for member, score in scored:
        others = [k for k in trees if k[0] != member.model]
        mine = trees[(member.model, member.layer, member.decoder)]
        expected = sum(sum(naive_agreement(mine[s], trees[o][s], len(sentences[s])) for o in others) / len(others)
                       for s in range(len(sentences))) / len(sentences)
        assert score == pytest.approx(expected)
    # `limit` takes the first sentences of at least 3 words only.
    first = parser.agreement(LINES, limit=1)
    assert first == parser.agreement(LINES[:1])
    with pytest.raises(OnparseError, match="two members"):
        load(paths[0], "cpu").agreement(LINES)
    with pytest.raises(OnparseError, match="at least 3 words"):
        parser.agreement(["a cat", "the"])


def test_choose_members_reads_only_the_lines_it_needs(paths):
    """onparse.choose_members: the first ``limit`` lines of at least 3 words, scored as
    Parser.agreement scores them, the most central kept; the lines after them are not read."""
    parser = load(paths, "cpu", layers=[2, 3], decoders=["onlstm", "split"])
    read = []

    def lines():
        for line in ["a cat", *LINES]:
            read.append(line)
            yield line

    chosen = onparse.choose_members(parser, lines(), limit=2, tokenize=False)
    long_enough = [line for line in LINES if len(line.split()) >= 3][:2]
    assert chosen.sentences == 2 and read == ["a cat", *long_enough]
    expected = parser.agreement(long_enough)
    assert [m for m, _ in chosen.scored] == [m for m, _ in expected]
    assert [s for _, s in chosen.scored] == pytest.approx([s for _, s in expected])
    assert chosen.kept == select([s for _, s in chosen.scored])
    assert onparse.choose_members(parser, LINES, keep=3, limit=None).kept == \
        select([s for _, s in parser.agreement(LINES)], keep=3)


def test_cli_prints_scores_and_writes_a_bundle_of_the_kept_members(paths, tmp_path):
    text = tmp_path / "valid.txt"
    text.write_text("\n".join(LINES) + "\n")
    bundle = tmp_path / "kept.pt"
    args = ["agreement", str(text), "-m", paths[0], "-m", paths[1], "--layer", "2,3", "--decode", "all",
            "--pretokenized"]
    result = CliRunner().invoke(main, args + ["--out", str(bundle), "--weights", "float32"])
    assert result.exit_code == 0, result.output
    assert "deprecated" not in result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows[0] == ["member", "agreement", "kept"] and len(rows) == 9
    expected = load(paths, "cpu", layers=[2, 3], decoders=["onlstm", "split"]).agreement(LINES)
    assert [float(r[1]) for r in rows[1:]] == [pytest.approx(s, abs=1e-4) for _, s in expected]
    order = select([s for _, s in expected])
    kept = [r for r in rows[1:] if r[2] != "-"]
    assert len(kept) == 4 and sorted(int(r[2]) for r in kept) == [1, 2, 3, 4]
    # The bundle holds the kept members, most central first, and gives their average.
    written = load(str(bundle), "cpu")
    wanted = [expected[i][0] for i in order]
    used = sorted({m.model for m in wanted})
    assert [(used[m.model], m.layer, m.decoder) for m in written.members] == \
        [(m.model, m.layer, m.decoder) for m in wanted]
    direct = load(paths, "cpu").with_members(wanted)
    tokens = [line.split() for line in LINES]
    assert written.trees(tokens) == direct.trees(tokens)


def test_cli_errors_are_one_line(paths, tmp_path):
    text = tmp_path / "valid.txt"
    text.write_text("a cat\n")
    result = CliRunner().invoke(main, ["agreement", str(text), "-m", paths[0], "-m", paths[1]])
    assert result.exit_code == 1 and "at least 3 words" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(main, ["agreement", str(text), "-m", paths[0], "--keep", "3"])
    assert result.exit_code == 2 and "cannot keep 3 of 1" in result.output
    result = CliRunner().invoke(main, ["agreement", str(text), "-m", paths[0], "--bundle", str(tmp_path)])
    assert result.exit_code == 2 and "is a directory" in result.output
    result = CliRunner().invoke(main, ["agreement", str(text), "-m", paths[0], "-m", paths[1], "--bundle", paths[1]])
    assert result.exit_code == 2 and "is the model" in result.output


def test_the_bundle_is_written_with_out_and_bundle_still_works(paths, tmp_path):
    """41.14: a command's written file is -o/--out everywhere; --bundle is kept, with a note."""
    text = tmp_path / "valid.txt"
    text.write_text("\n".join(LINES) + "\n")
    args = ["agreement", str(text), "-m", paths[0], "-m", paths[1], "--pretokenized", "--weights", "float32"]
    new = CliRunner().invoke(main, args + ["-o", str(tmp_path / "new.pt")])
    old = CliRunner().invoke(main, args + ["--bundle", str(tmp_path / "old.pt")])
    assert new.exit_code == old.exit_code == 0, old.output
    assert new.stdout == old.stdout and "note: --bundle is deprecated here: use --out" in old.stderr
    tokens = [line.split() for line in LINES]
    assert load(str(tmp_path / "new.pt"), "cpu").trees(tokens) == load(str(tmp_path / "old.pt"), "cpu").trees(tokens)
    both = CliRunner().invoke(main, args + ["--out", str(tmp_path / "a.pt"), "--bundle", str(tmp_path / "b.pt")])
    assert both.exit_code == 2 and "--bundle is the former name of --out" in both.output


def save_chain_grammar(path, words):
    """A tiny grammar collapsed on purpose, by its weights: S -> NT-0, NT-0 -> PT-0 (NT-0 | PT-1),
    so every tree it gives is right-branching."""
    return save_pinned_grammar(path, words, left=[4], right=[0, 5])


def test_a_member_whose_trees_are_chains_is_left_out_and_said_so(paths, tmp_path):
    grammar = save_chain_grammar(tmp_path / "chain.pt", WORDS)
    parser = load([*paths, grammar], "cpu")
    chosen = onparse.choose_members(parser, LINES, limit=None, tokenize=False)
    assert list(chosen.baselines) == [2] and chosen.baselines[2]["right"] == 1.0
    assert 2 not in chosen.kept and len(chosen.kept) == 1      # half of the other two, rounded up
    # ... although the chain agrees most with the others: every model leans right.
    assert max(range(3), key=lambda k: chosen.scored[k][1]) == 2
    scores = dict(parser.agreement(LINES))
    assert scores[parser.members[2]] == pytest.approx(chosen.scored[2][1])
    text = tmp_path / "valid.txt"
    text.write_text("\n".join(LINES) + "\n")
    result = CliRunner().invoke(main, ["agreement", str(text), "-m", paths[0], "-m", paths[1], "-m", grammar,
                                       "--pretokenized"])
    assert result.exit_code == 0, result.output
    assert [r.split("\t")[2] for r in result.stdout.splitlines()[1:]][2] == "-"
    assert "left out model 3" in result.stderr and "right-branching chains (agreement 1.00" in result.stderr
    result = CliRunner().invoke(main, ["agreement", str(text), "-m", paths[0], "-m", grammar, "--pretokenized",
                                       "--keep", "2"])
    assert result.exit_code == 1 and "keep at most 1" in result.output

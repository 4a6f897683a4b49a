"""onparse.trees.tree: bracket reading/writing, spans, round trips, depth."""
import nltk
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onparse.errors import OnparseError
from onparse.trees.tree import (
    depth,
    guess_labelled,
    iter_sexprs,
    leaves,
    parse_brackets,
    read_tree_matching,
    read_trees,
    spans_to_tree,
    to_brackets,
    to_ptb,
    tree_spans,
)

# ---------------------------------------------------------------- strategies

WORDS = st.text(alphabet="abcxyzN.'$%-&", min_size=1, max_size=4)
# n-ary trees without unary nodes (every internal node has >= 2 children)
NARY = st.recursive(WORDS, lambda kids: st.lists(kids, min_size=2, max_size=4).map(tuple), max_leaves=30)
BINARY = st.recursive(WORDS, lambda kids: st.tuples(kids, kids), max_leaves=30)


def brute_spans(tree, start=0):
    """Reference: every internal node's (start, end), recursively, as a list (with repeats)."""
    if isinstance(tree, str):
        return [], start + 1
    out, pos = [], start
    for child in tree:
        spans, pos = brute_spans(child, pos)
        out += spans
    if pos - start >= 2:
        out.append((start, pos))
    return out, pos


# ---------------------------------------------------------------- reading

def test_parse_unlabelled_and_labelled_give_the_same_tree():
    assert parse_brackets("((the cat) sat)") == (("the", "cat"), "sat")
    assert parse_brackets("(S (NP (DT the) (NN cat)) (VBD sat))") == (("the", "cat"), "sat")
    # .mrg wrapper, function tags and punctuation kept as words (no filtering here)
    assert parse_brackets("( (S (NP-SBJ (DT the) (NN cat)) (VBD sat) (. .)) )") == (("the", "cat"), "sat", ".")


def test_unary_nodes_collapse_and_a_lone_word_is_a_tree():
    assert parse_brackets("((a b))") == ("a", "b")
    assert parse_brackets("(((a)) b)") == ("a", "b")
    assert parse_brackets("cat") == "cat"
    assert parse_brackets("(S (NP (NN cat)) (VP (VBD sat)))") == ("cat", "sat")


def test_guess_keeps_unlabelled_branching_trees_unlabelled():
    # valid labelled structures with a single word: read as unlabelled words
    assert parse_brackets("(a (b (c d)))") == ("a", ("b", ("c", "d")))
    assert parse_brackets("(NN cat)") == ("NN", "cat")
    # lowercase "labels" are words
    assert parse_brackets("(a (b c) (d e))") == ("a", ("b", "c"), ("d", "e"))
    assert parse_brackets("(a (b c) (d e))", labelled=True) == ("c", "e")
    assert parse_brackets("(NN cat)", labelled=True) == "cat"
    assert guess_labelled(["S", ["NP", ["DT", "the"], ["NN", "cat"]], ["VBD", "sat"]])


def test_labelled_reading_of_an_unlabelled_structure_is_an_error():
    with pytest.raises(OnparseError, match="not a labelled tree"):
        parse_brackets("((a b) c)", labelled=True)


def test_read_tree_matching_uses_the_expected_words():
    def expect(words):
        return lambda got: [w.lower() for w in got] == words

    [item] = iter_sexprs("(NN Cat)")
    assert read_tree_matching(item.sexpr, expect(["cat"])) == ("Cat", ["Cat"])
    [item] = iter_sexprs("(a (b c) (d e))")
    assert read_tree_matching(item.sexpr, expect(["c", "e"])) == (("c", "e"), ["c", "e"])
    assert read_tree_matching(item.sexpr, expect(list("abcde")))[0] == ("a", ("b", "c"), ("d", "e"))
    # neither reading matches: the guessed (unlabelled) one comes back for the error message
    assert read_tree_matching(item.sexpr, expect(["x"]))[0] == ("a", ("b", "c"), ("d", "e"))


def test_multiline_mrg_trees_and_their_lines():
    text = "\n( (S\n    (NP (DT the) (NN cat))\n    (VBD sat)) )\n( (S (NN yes) (. .)) )\n"
    got = read_trees(text, "f.mrg")
    assert got == [((("the", "cat"), "sat"), 2), (("yes", "."), 5)]


def test_one_tree_per_line_with_blank_lines_and_bare_words():
    got = read_trees("(a b)\n\n((c d) e)\nf\n")
    assert got == [(("a", "b"), 1), ((("c", "d"), "e"), 3), ("f", 4)]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("(a b)\n(c d))\n", 2, "unbalanced parentheses: ')' with no matching '('"),
        ("(a b)\n(c (d e)\n(f g)\n", 2, "unbalanced parentheses: 1 '(' never closed"),
        ("(a b)\n\n(c ())\n", 3, "empty '()'"),
        ("(a b)\nc d\n", 2, "'c' outside any"),
        ("(a b) c\n", 1, "'c' outside any"),
    ],
)
def test_malformed_input_names_the_line(text, line, message):
    with pytest.raises(OnparseError) as err:
        read_trees(text, "pred.txt")
    assert str(err.value).startswith(f"pred.txt line {line}: ")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_parse_brackets_wants_exactly_one_tree():
    with pytest.raises(OnparseError, match="found 2"):
        parse_brackets("(a b)\n(c d)")
    with pytest.raises(OnparseError, match="found 0"):
        parse_brackets("   \n")


# ---------------------------------------------------------------- writing

def test_to_brackets_and_to_ptb_exact_text():
    tree = (("the", "cat"), ("sat", "down"))
    assert to_brackets(tree) == "((the cat) (sat down))"
    assert to_ptb(tree) == "(X (X (W the) (W cat)) (X (W sat) (W down)))"
    assert to_brackets("yes") == "yes"
    assert to_ptb("yes") == "(W yes)"  # no bracket over one word: EVALB counts none, as onparse does
    assert to_ptb(("a", "b"), label="S", tag="NN") == "(S (NN a) (NN b))"


def test_words_with_brackets_are_escaped():
    assert to_brackets(("f(x)", "y")) == "(f-LRB-x-RRB- y)"
    assert parse_brackets(to_brackets(("f(x)", "y"))) == ("f-LRB-x-RRB-", "y")


@settings(max_examples=150, deadline=None)
@given(NARY)
def test_to_ptb_is_read_by_nltk_with_the_same_words_and_spans(tree):
    nt = nltk.Tree.fromstring(to_ptb(tree))
    assert nt.leaves() == leaves(tree)
    # nltk's spans of internal non-pre-terminal nodes, from leaf positions
    spans = set()
    for pos in nt.treepositions():
        node = nt[pos]
        if isinstance(node, nltk.Tree) and node.height() > 2 and len(node.leaves()) >= 2:
            n_before = len([p for p in nt.treepositions("leaves") if p < pos])
            spans.add((n_before, n_before + len(node.leaves())))
    assert spans == set(tree_spans(tree))


@settings(max_examples=200, deadline=None)
@given(NARY)
def test_bracket_round_trips(tree):
    assert parse_brackets(to_brackets(tree), labelled=False) == tree
    assert parse_brackets(to_ptb(tree), labelled=True) == tree
    assert parse_brackets(to_ptb(tree)) == tree or len(leaves(tree)) < 2


# ---------------------------------------------------------------- spans

def test_tree_spans_hand_cases():
    assert tree_spans((("the", "cat"), "sat")) == [(0, 3), (0, 2)]
    assert tree_spans((("a", "b"), ("c", ("d", "e")))) == [(0, 5), (0, 2), (2, 5), (3, 5)]
    assert tree_spans("a") == []
    assert tree_spans(("a",)) == []  # a unary node over one word covers < 2 words
    assert tree_spans(((("a", "b"),),)) == [(0, 2)]  # unary chain: one span
    assert tree_spans(("a", "b", "c")) == [(0, 3)]


def test_spans_to_tree_hand_cases():
    words = list("abcde")
    assert spans_to_tree(words, [(1, 3), (0, 3)]) == (("a", ("b", "c")), "d", "e")
    assert spans_to_tree(words, []) == tuple(words)
    assert spans_to_tree(words, [(2, 3), (4, 5), (0, 5), (1, 4), (1, 4)]) == ("a", ("b", "c", "d"), "e")
    assert spans_to_tree(["x"], []) == "x"
    with pytest.raises(ValueError, match="crosses"):
        spans_to_tree(words, [(0, 3), (2, 5)])
    with pytest.raises(ValueError, match="outside"):
        spans_to_tree(words, [(3, 6)])
    with pytest.raises(ValueError):
        spans_to_tree([], [])


@settings(max_examples=300, deadline=None)
@given(NARY)
def test_tree_spans_match_brute_force_and_round_trip(tree):
    spans = tree_spans(tree)
    reference, n = brute_spans(tree)
    assert set(spans) == set(reference) and len(spans) == len(set(spans))
    assert spans == sorted(spans, key=lambda s: (s[0], -s[1]))  # outermost first
    if n >= 2:
        assert spans[0] == (0, n)
    assert spans_to_tree(leaves(tree), spans) == tree


@settings(max_examples=300, deadline=None)
@given(BINARY)
def test_binary_tree_has_n_minus_1_spans(tree):
    n = len(leaves(tree))
    spans = tree_spans(tree)
    assert len(spans) == n - 1
    assert all(b - a >= 2 for a, b in spans)
    if n >= 2:
        assert (0, n) in spans


@settings(max_examples=100, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=12), st.data())
def test_spans_to_tree_then_spans_gives_the_spans_back(words, data):
    # any laminar span set: take the spans of a random binary tree, drop some
    n = len(words)
    from onparse.trees.baselines import random_tree
    import random

    tree = random_tree(words, random.Random(data.draw(st.integers(0, 10**6))))
    kept = [s for s in tree_spans(tree) if data.draw(st.booleans())]
    rebuilt = spans_to_tree(words, kept)
    assert leaves(rebuilt) == words
    assert set(tree_spans(rebuilt)) == set(kept) | ({(0, n)} if n >= 2 else set())


def test_depth():
    assert depth("a") == 0
    assert depth(("a", "b")) == 1
    assert depth(("a", ("b", ("c", "d")))) == 3
    assert depth((("a", "b"), ("c", "d"))) == 2
    assert depth(("a", "b", "c", "d")) == 1


def test_very_deep_trees_do_not_hit_the_recursion_limit():
    words = [f"w{i}" for i in range(3000)]
    tree = words[-1]
    for word in reversed(words[:-1]):
        tree = (word, tree)
    text = to_brackets(tree)
    assert to_brackets(parse_brackets(text)) == text
    assert to_brackets(parse_brackets(to_ptb(tree))) == text
    assert len(tree_spans(tree)) == 2999 and depth(tree) == 2999
    assert leaves(tree) == words
    assert to_brackets(spans_to_tree(words, tree_spans(tree))) == text

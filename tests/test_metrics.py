"""onparse.scores.metrics: the F1 conventions by hand, against a brute-force reference, and predictions
read from text."""
import io
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onparse
from naive import differences, naive_scores, scores_of
from onparse.trees.baselines import baseline_trees, random_tree, right_branching
from onparse.errors import OnparseError
from onparse.scores.conventions import CONVENTIONS, corpus_prf, kim_prf, sentence_prf
from onparse.scores.metrics import SpanMetric, evaluate
from onparse.scores.reports import write_per_sentence
from onparse.scores.predicted import read_predictions, score_text
from onparse.scores.token_match import token_mismatch
from onparse.gold.treebank import GoldSentence, read_gold_text
from onparse.trees.tree import spans_to_tree, to_brackets, tree_spans

# ---------------------------------------------------------------- per-sentence rules


def test_sentence_prf_onlstm_convention():
    assert sentence_prf(1, 2, 2) == (0.5, 0.5, 0.5)
    assert sentence_prf(2, 2, 4) == (1.0, 0.5, pytest.approx(2 / 3))
    assert sentence_prf(0, 0, 0) == (1.0, 1.0, 1.0)  # both empty (length 1 and 2)
    assert sentence_prf(0, 3, 0) == (0.0, 1.0, 0.0)  # empty gold: R = 1, P = 0
    assert sentence_prf(0, 0, 3) == (0.0, 0.0, 0.0)  # empty prediction
    assert sentence_prf(0, 2, 2) == (0.0, 0.0, 0.0)


def test_kim_prf_skips_empty_sets():
    assert kim_prf(1, 2, 2) == (0.5, 0.5, 0.5)
    assert kim_prf(0, 0, 0) is None
    assert kim_prf(0, 3, 0) is None
    assert kim_prf(0, 0, 3) is None
    assert kim_prf(0, 1, 1) == (0.0, 0.0, 0.0)


def test_corpus_prf():
    assert corpus_prf(1, 3, 3) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert corpus_prf(2, 4, 2) == pytest.approx((0.5, 1.0, 2 / 3))
    assert corpus_prf(0, 0, 0) == (1.0, 1.0, 1.0)
    assert corpus_prf(0, 5, 0) == (0.0, 0.0, 0.0)
    assert corpus_prf(0, 0, 5) == (0.0, 0.0, 0.0)


# ---------------------------------------------------------------- a hand-computed corpus

HAND_GOLD = [
    (("a", "b"), ("c", "d")),  # spans {(0,2), (2,4)}
    ("a", "b", "c"),  # flat: empty gold set
    "a",  # one word
    ("a", "b"),  # two words: both sets empty
    (("a", "b"), "c", "d"),  # gold {(0,2)}
]
HAND_PRED = [
    ("a", ("b", ("c", "d"))),  # {(1,4), (2,4)}: 1 match
    ("a", ("b", "c")),  # {(1,3)}, gold empty -> P 0, R 1, F1 0
    "a",
    ("a", "b"),
    ("a", "b", "c", "d"),  # empty prediction
]


def test_hand_computed_corpus_every_convention():
    r = evaluate(HAND_PRED, HAND_GOLD)
    assert r.n_sentences == 5 and r.n_kim == 1 and r.n_words == 4 + 3 + 1 + 2 + 4
    # ON-LSTM: F1 (0.5, 0, 1, 1, 0), P (0.5, 0, 1, 1, 0), R (0.5, 1, 1, 1, 0)
    assert r.sentence_f1.f1 == pytest.approx(2.5 / 5)
    assert r.sentence_f1.precision == pytest.approx(2.5 / 5)
    assert r.sentence_f1.recall == pytest.approx(3.5 / 5)
    # Kim: only the first sentence
    assert (r.kim_f1.precision, r.kim_f1.recall, r.kim_f1.f1) == pytest.approx((0.5, 0.5, 0.5))
    # corpus: 1 matched of 3 predicted, 3 gold
    assert (r.n_matched, r.n_pred_spans, r.n_gold_spans) == (1, 3, 3)
    assert r.corpus_f1.f1 == pytest.approx(1 / 3)
    # EVALB-style: + the whole-sentence span of the 4 sentences with >= 2 words
    assert (r.evalb_f1.precision, r.evalb_f1.recall, r.evalb_f1.f1) == pytest.approx((5 / 7, 5 / 7, 5 / 7))
    assert [s.f1 for s in r.sentences] == pytest.approx([0.5, 0.0, 1.0, 1.0, 0.0])
    assert [s.kim_f1 for s in r.sentences] == [0.5, None, None, None, None]
    assert r.pred_depth == pytest.approx((3 + 2 + 0 + 1 + 1) / 5)
    assert r.gold_depth == pytest.approx((2 + 1 + 0 + 1 + 2) / 5)


@pytest.mark.parametrize(
    "pred, gold, f1, kim, corpus, evalb",
    [
        # length 1: nothing to score but the ON-LSTM mean counts it as 1
        ("a", "a", 1.0, None, 1.0, 1.0),
        # length 2: every binary tree is the same; Kim leaves it out
        (("a", "b"), ("a", "b"), 1.0, None, 1.0, 1.0),
        # empty gold (flat) with a non-empty prediction
        (("a", ("b", "c")), ("a", "b", "c"), 0.0, None, 0.0, 2 / 3),
        # empty prediction (flat) with a non-empty gold
        (("a", "b", "c"), ("a", ("b", "c")), 0.0, None, 0.0, 2 / 3),
        # both flat
        (("a", "b", "c"), ("a", "b", "c"), 1.0, None, 1.0, 1.0),
        # length 3, the two binary trees
        ((("a", "b"), "c"), ("a", ("b", "c")), 0.0, 0.0, 0.0, 0.5),
    ],
)
def test_corner_cases_single_sentence(pred, gold, f1, kim, corpus, evalb):
    r = evaluate([pred], [gold])
    assert r.sentence_f1.f1 == pytest.approx(f1)
    assert r.n_kim == (0 if kim is None else 1)
    assert r.kim_f1.f1 == pytest.approx(0.0 if kim is None else kim)
    assert r.corpus_f1.f1 == pytest.approx(corpus)
    assert r.evalb_f1.f1 == pytest.approx(evalb)


def test_empty_corpus_is_all_zero_or_trivial():
    r = evaluate([], [])
    assert r.n_sentences == 0 and r.sentence_f1.f1 == 0.0 and r.n_kim == 0


def test_label_recall_and_depth_on_a_labelled_gold():
    [gold] = read_gold_text(
        "(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))", "g"
    )
    pred = right_branching(list(gold.tokens))
    r = evaluate([pred], [gold])
    assert r.sentence_f1.f1 == pytest.approx(0.75)
    recall = {label: (v.found, v.total) for label, v in r.label_recall.items()}
    # the gold's own labels (issue 54.9): a gold without SBAR or ADJP gets no row of 0 of 0 for them
    assert recall == {"NP": (1, 2), "VP": (1, 1), "PP": (1, 1)}
    assert r.label_recall["NP"].recall == 0.5 and list(r.label_recall) == ["NP", "PP", "VP"]
    assert r.pred_depth == 5 and r.gold_depth == 4


def test_evaluate_accepts_surface_words_and_checks_tokens():
    gold = [GoldSentence.from_tree((("The", "cat"), ("sat", "12")))]
    assert gold[0].tokens == ("the", "cat", "sat", "N")
    assert evaluate([(("THE", "Cat"), ("sat", "99"))], gold).sentence_f1.f1 == 1.0
    assert evaluate([(("the", "cat"), ("sat", "N"))], gold).sentence_f1.f1 == 1.0
    with pytest.raises(OnparseError, match="first difference at word 2: 'dog', gold 'cat'"):
        evaluate([(("the", "dog"), ("sat", "N"))], gold)
    with pytest.raises(OnparseError, match="2 predicted trees but gold trees has 1"):
        evaluate(["a", "b"], gold)
    # without the token check only the lengths must agree
    assert evaluate([(("x", "y"), ("z", "w"))], gold, check_tokens=False).sentence_f1.f1 == 1.0
    with pytest.raises(OnparseError, match="3 words, gold has 4"):
        evaluate([("x", ("y", "z"))], gold, check_tokens=False)


def test_package_reexports_evaluate():
    assert onparse.evaluate is evaluate


def test_token_mismatch_messages():
    assert token_mismatch(["The", "3.5"], ["the", "N.N"]) is None
    assert token_mismatch(["the", "N.N"], ["the", "N.N"]) is None  # already normalised
    msg = token_mismatch(["the", "cat", ",", "sat", "."], ["the", "cat", "sat"])
    assert "punctuation" in msg and "','" in msg and "'.'" in msg
    assert token_mismatch(["a", "b"], ["a", "b", "c"]).startswith("2 words, gold has 3; first difference at word 3: end of sentence, gold 'c' (for text from `onparse gold-text`, `induce --pretokenized`")


# ---------------------------------------------------------------- the naive scorer (tests/naive.py)

NARY_WORDS = st.lists(st.sampled_from(list("abcdefgh")), min_size=1, max_size=14)


@st.composite
def tree_pairs(draw):
    """(pred, gold) over the same words: random binary pred, random n-ary gold (spans dropped)."""
    pairs = []
    for _ in range(draw(st.integers(1, 6))):
        words = draw(NARY_WORDS)
        rng = random.Random(draw(st.integers(0, 10**6)))
        pred = random_tree(words, rng)
        full = random_tree(words, rng)
        gold = spans_to_tree(words, [s for s in tree_spans(full) if draw(st.booleans())])
        if draw(st.booleans()):  # sometimes an n-ary prediction too
            pred = spans_to_tree(words, [s for s in tree_spans(pred) if draw(st.booleans())])
        pairs.append((pred, gold))
    return pairs


@settings(max_examples=200, deadline=None)
@given(tree_pairs())
def test_evaluate_matches_the_naive_scorer(pairs):
    preds, golds = zip(*pairs)
    got, want = scores_of(evaluate(list(preds), list(golds))), naive_scores(preds, golds)
    assert not differences(got, want), (got, want)


@settings(max_examples=100, deadline=None)
@given(tree_pairs(), st.data())
def test_metric_added_in_parts_and_merged_equals_one_pass(pairs, data):
    preds = [pred for pred, _ in pairs]
    golds = [GoldSentence.from_tree(gold, f"g{i}") for i, (_, gold) in enumerate(pairs)]
    whole = evaluate(preds, golds)
    cut = data.draw(st.integers(0, len(pairs)))
    first = SpanMetric()(preds[:cut], golds[:cut])
    second = SpanMetric()
    for pred, gold in zip(preds[cut:], golds[cut:]):
        second.update(pred, gold)
    merged = first + second
    assert not differences(scores_of(merged), scores_of(whole))  # sums in another order: to 1e-12
    counts = ("n_sentences", "n_kim", "n_words", "n_matched", "n_pred_spans", "n_gold_spans")
    assert [getattr(merged, k) for k in counts] == [getattr(whole, k) for k in counts]
    assert merged.sentences == whole.sentences  # numbered 1.. across the merge
    assert [s.index for s in merged.sentences] == list(range(1, len(pairs) + 1))


def test_reference_scorer_agrees_on_labelled_gold(nltk_treebank):
    from onparse.gold.treebank import load_gold

    gold = load_gold("wsj10")
    for kind in ("right", "random"):
        preds = baseline_trees(gold.tokens, kind)
        got, want = scores_of(evaluate(preds, gold)), naive_scores(preds, gold)
        assert not differences(got, want), kind
        assert all(want["label_recall"][label] for label in ("NP", "VP", "PP", "S"))  # labels were seen


def test_each_convention_is_reported_once_everywhere():
    r = evaluate(HAND_PRED, HAND_GOLD)
    d, table = r.to_dict(), r.format_table()
    for c in CONVENTIONS:
        prf = getattr(r, c.name)
        assert prf == r.score(c.name) and d[c.key] == prf.to_dict()
        assert sum(line.startswith(c.title + " ") for line in table.splitlines()) == 1
    with pytest.raises(KeyError, match="no convention 'f2'"):
        r.score("f2")


def test_evaluate_takes_gold_objects_not_names():
    with pytest.raises(TypeError, match="load_gold"):
        evaluate(["a"], "wsj10")
    with pytest.raises(TypeError, match="load_gold"):
        SpanMetric()(["a"], "a")


@settings(max_examples=150, deadline=None)
@given(tree_pairs())
def test_a_tree_scored_against_itself_gives_one(pairs):
    golds = [g for _, g in pairs]
    r = evaluate(golds, golds)
    assert r.sentence_f1.f1 == pytest.approx(1.0)
    assert r.corpus_f1.f1 == pytest.approx(1.0)
    assert r.evalb_f1.f1 == pytest.approx(1.0)
    assert r.kim_f1.f1 == pytest.approx(1.0 if r.n_kim else 0.0)
    assert r.pred_depth == r.gold_depth


# ---------------------------------------------------------------- predictions from text

GOLD_TEXT = """\
( (S (NP-SBJ (NNP Pierre) (NNP Vinken)) (VP (MD will) (VP (VB join) (NP (DT the) (NN board)))) (. .)) )
( (S (NP-SBJ (PRP It)) (VP (VBD rose) (NP (CD 3.5) (NN %))) (. .)) )
( (FRAG (INTJ (UH Yes)) (. .)) )
"""


@pytest.fixture()
def small_gold():
    return read_gold_text(GOLD_TEXT, "small.mrg")


def test_read_predictions_labelled_unlabelled_surface_and_normalised(small_gold):
    text = (
        "((Pierre Vinken) (will (join (the board))))\n"
        "(S (NP (PRP it)) (VP (VBD rose) (NP (CD N.N) (NN %))))\n"
        "(NN Yes)\n"
    )
    trees = read_predictions(text, small_gold, "p.txt")
    assert trees == [
        (("Pierre", "Vinken"), ("will", ("join", ("the", "board")))),
        ("it", ("rose", ("N.N", "%"))),
        "Yes",
    ]
    r = score_text(text, small_gold)
    assert r.sentence_f1.f1 == 1.0


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "p.txt is empty: no trees found (gold trees has 3 sentences)"),
        ("\n  \n", "p.txt is empty"),
        ("((pierre vinken) (will (join (the board))))\n(it (rose (N %))\n(yes)\n", "p.txt line 2: unbalanced parentheses"),
        ("((pierre vinken) will)\n", "p.txt line 1: tree 1 does not match gold sentence 1 (small.mrg:1): 3 words, gold has 6"),
        (
            "(pierre vinken will join the board)\n(it (rose (N.N %)))\n",
            "p.txt ends after line 2: gold sentence 3 (small.mrg:3) has no tree (p.txt holds 2 trees, gold trees has 3 sentences)",
        ),
        (
            "(pierre vinken will join the board)\n(it (rose (N.N %)))\nyes\n(extra tree)\n",
            "p.txt line 4: tree 4 has no gold sentence",
        ),
        (
            "(pierre vinken will join the board)\n(it (rose (N.N %) .))\nyes\n",
            "p.txt line 2: tree 2 does not match gold sentence 2 (small.mrg:2): the prediction keeps punctuation "
            "that the gold drops ('.')",
        ),
        (
            "(pierre vinken will join the board)\n(it (fell (N %)))\nyes\n",
            "first difference at word 2: 'fell', gold 'rose'",
        ),
    ],
)
def test_read_predictions_errors(small_gold, text, message):
    with pytest.raises(OnparseError) as err:
        read_predictions(text, small_gold, "p.txt")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_per_sentence_records(small_gold):
    text = "(pierre (vinken (will (join (the board)))))\n(it (rose (N.N %)))\nyes\n"
    r = score_text(text, small_gold)
    out = io.StringIO()
    write_per_sentence(r, out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records) == 3
    first = records[0]
    assert first["sentence"] == "pierre vinken will join the board"
    assert first["source"] == "small.mrg:1" and first["length"] == 6
    assert [r["index"] for r in records] == [1, 2, 3]  # sentence numbers are 1-based everywhere
    assert first["pred"] == "(pierre (vinken (will (join (the board)))))"
    assert first["gold"] == "((pierre vinken) (will (join (the board))))"
    # gold {(0,2),(2,6),(3,6),(4,6)}, pred {(1,6),(2,6),(3,6),(4,6)}
    assert (first["matched"], first["pred_spans"], first["gold_spans"]) == (3, 4, 4)
    assert first["f1"] == pytest.approx(0.75) and first["kim_f1"] == pytest.approx(0.75)
    assert records[2]["length"] == 1 and records[2]["kim_f1"] is None and records[2]["f1"] == 1.0


def test_result_to_dict_and_table(small_gold):
    r = score_text("(pierre (vinken (will (join (the board)))))\n(it (rose (N.N %)))\nyes\n", small_gold)
    d = r.to_dict()
    assert set(d) >= {"sentence_f1_onlstm", "sentence_f1_kim", "corpus_f1", "corpus_f1_evalb", "label_recall"}
    assert d["sentences"] == 3 and d["sentences_kim"] == 2
    json.dumps(d)
    table = r.format_table()
    for name in ("sentence F1, ON-LSTM conv.", "sentence F1, Kim et al. conv.", "corpus F1", "EVALB-style", "NP", "average depth"):
        assert name in table
    assert "SBAR" not in table and "0 of 0" not in table          # the gold's own labels only (issue 54.9)
    assert to_brackets(r.sentences[0].gold_tree) == "((pierre vinken) (will (join (the board))))"


def test_label_recall_of_a_gold_in_another_tag_set_reports_its_own_labels():
    # alpino-style lowercase labels: no PTB label occurs, so the gold's own labels are
    # reported, most frequent first, ties by name (hand-counted: np 3, pp 1, smain 0 below the
    # whole sentence, which is excluded).
    from onparse.gold.tagsets import PRESETS

    [gold] = read_gold_text(
        "(top (smain (np (det de) (noun kat)) (verb zat) (pp (prep op) (np (det de) (noun mat))))"
        " (punct .))", "g", tagset=PRESETS["alpino"])
    assert gold.tokens == ("de", "kat", "zat", "op", "de", "mat")
    r = evaluate([right_branching(list(gold.tokens))], [gold])
    recall = {label: (v.found, v.total) for label, v in r.label_recall.items()}
    # right-branching spans: (1,6) (2,6) (3,6) (4,6); gold np (0,2) (4,6), pp (3,6)
    assert recall == {"np": (1, 2), "pp": (1, 1)}

"""onparse as a spaCy pipeline component (onparse.pipeline): real spaCy, which CI installs with
the dev extra.  Tiny untrained models (conftest) parse in O(n), so the long-sentence and
batching tests stay quick; one test runs the bundled model on a normal sentence."""
import os
import pickle
import random
import re
import subprocess
import sys
from pathlib import Path

import nltk
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

import onparse
from conftest import save_pinned_grammar, save_tiny_checkpoint
from onparse.induce import tree_labels
from onparse.pipeline import spacy_extensions
from onparse.pipeline.placement import children_of, place, write
from onparse.trees.tree import to_ptb, tree_spans

ROOT = Path(__file__).resolve().parent.parent
WORDS = "the cat sat on mat dogs bark and cats meow a bird sang".split()
TEXTS = ["The cat sat on the mat.", "Dogs bark, and cats meow! A bird sang.", "", "...", "Hello",
         "  the cat  sat \n\n on the mat ", "(The cat) sat -- on « the » mat?! Dogs bark."]

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    """An untrained language model's file: its trees are O(n) to read."""
    return save_tiny_checkpoint(tmp_path_factory.mktemp("spacy") / "lm.pt", WORDS)[2]


def pipeline(lang="en", **config):
    nlp = spacy.blank(lang)
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("onparse", config=config)
    return nlp


@pytest.fixture(scope="module")
def nlp(tiny_lm):
    return pipeline(model=tiny_lm)


def trees_of(doc):
    return [s._.parse_string for s in doc.sents]


def leaf_tags(sent):
    """Each token's tag as its own parse_string gives it: W, P or SP."""
    return [re.match(r"\((\S+) ", sent.doc[i:i + 1]._.parse_string).group(1) for i in range(sent.start, sent.end)]


# -- the placement rule, by hand ----------------------------------------------------------------

def test_placement_rule_by_hand():
    """Between two words: the smallest constituent holding both, between its parts; at the ends:
    the sentence; no words: one flat constituent; one token: no constituent."""
    tokens, read = ["a", ",", "b", ";", "c"], [True, False, True, False, True]
    # right-branching (a (b c)): ',' lies where a meets (b c): the sentence; ';' inside (b c)
    assert place(tokens, read, ("a", ("b", "c"))) == [(0, 5, "X"), (2, 5, "X")]
    kids, parent = children_of([(0, 5, "X"), (2, 5, "X")], 5)
    assert kids == {(0, 5): [(0, 1), (1, 2), (2, 5)], (2, 5): [(2, 3), (3, 4), (4, 5)]}
    assert parent == {(0, 5): None, (2, 5): (0, 5), (0, 1): (0, 5), (1, 2): (0, 5),
                      (2, 3): (2, 5), (3, 4): (2, 5), (4, 5): (2, 5)}
    # left-branching ((a b) c): ',' inside (a b), ';' in the sentence
    assert place(tokens, read, (("a", "b"), "c")) == [(0, 5, "X"), (0, 3, "X")]
    # runs at either end go to the sentence, which keeps the grammar's label of all its words
    assert place(["«", "a", "b", "»", "."], [False, True, True, False, False], ("a", "b"),
                 {(0, 2): "NT-3"}) == [(0, 5, "NT-3")]
    assert place(["«", "a", "b", "c", "»"], [False, True, True, True, False], ("a", ("b", "c")),
                 {(1, 3): "NT-7"}) == [(0, 5, "X"), (2, 4, "NT-7")]
    assert place(["Hi", "!"], [True, False], "Hi") == [(0, 2, "X")]
    assert place(["...", "!", "\n"], [False] * 3, None) == [(0, 3, "X")]
    assert place(["."], [False], None) == [] and place(["Hi"], [True], "Hi") == []
    with pytest.raises(ValueError, match="the tree has 2 words, the sentence 5"):
        place(tokens, [True] * 5, ("a", "b"))


def test_brackets_hold_every_token_as_one_leaf():
    tokens = ["(", "New York", ")", "\n\n", "is", "big", "\u3000"]
    tags = ["P", "W", "P", "SP", "W", "W", "SP"]
    nodes = place(tokens, [tag == "W" for tag in tags], ("New York", ("is", "big")))
    text = write(tokens, tags, nodes)
    assert text == r"(X (P -LRB-) (W New\sYork) (P -RRB-) (SP \n\n) (X (W is) (W big)) (SP \u3000))"
    tree = nltk.Tree.fromstring(text)
    assert len(tree.leaves()) == len(tokens) and [t for _, t in tree.pos()] == tags
    assert write(tokens, tags, nodes, (4, 6)) == "(X (W is) (W big))"
    assert write(tokens, tags, nodes, (3, 4)) == r"(SP \n\n)"
    with pytest.raises(ValueError, match="not a constituent"):
        write(tokens, tags, nodes, (2, 5))


# -- the component on real spaCy docs -----------------------------------------------------------

def test_every_token_has_its_place_and_the_words_tree_is_the_parsers(nlp, tiny_lm):
    """parse_string holds every spaCy token once, in order; the constituents, read over the
    words, are exactly the spans of the parser's own tree of those words."""
    parser = onparse.load(tiny_lm)
    for text in TEXTS:
        for sent in nlp(text).sents:
            tree = nltk.Tree.fromstring(sent._.parse_string)
            assert len(tree.leaves()) == len(sent)
            tags = leaf_tags(sent)
            assert [t for _, t in tree.pos()] == tags
            assert all((tag == "SP") == tok.is_space for tag, tok in zip(tags, sent))
            words = [tok.text for tok, tag in zip(sent, tags) if tag == "W"]
            position = {sent.start + i: k for k, i in enumerate(i for i, tag in enumerate(tags) if tag == "W")}
            over_words = set()
            for c in sent._.constituents:
                inside = [position[i] for i in range(c.start, c.end) if i in position]
                if len(inside) >= 2:
                    over_words.add((inside[0], inside[-1] + 1))
            expected = parser.trees([words])[0] if words else None
            assert over_words == set(tree_spans(expected) if expected else ())


def test_constituents_parents_children_and_labels(nlp):
    doc = nlp("(The cat) sat, on the mat -- and the dog barked!")
    sent = next(doc.sents)
    found = list(sent._.constituents)
    assert found[0] == sent and sent._.parent is None
    assert [(c.start, c.end) for c in found] == sorted(((c.start, c.end) for c in found), key=lambda s: (s[0], -s[1]))
    assert len({(c.start, c.end) for c in found}) == len(found)
    singles = [c for c in found if len(c) == 1]
    assert [c.start for c in singles] == list(range(sent.start, sent.end))     # every token, once
    for c in found:
        kids = list(c._.children)
        if len(c) == 1:
            assert kids == [] and c._.labels == ()
            continue
        assert c._.labels == ("X",) and len(kids) >= 2
        assert kids[0].start == c.start and kids[-1].end == c.end
        assert all(a.end == b.start for a, b in zip(kids, kids[1:]))
        assert all(k._.parent == c for k in kids)
    # the parse string of a constituent is its part of the sentence's
    inner = next(c for c in found[1:] if len(c) > 1)
    assert inner._.parse_string in sent._.parse_string and inner._.parse_string.startswith("(X ")


def test_a_grammar_names_the_spans(tmp_path):
    """Labels as `onparse induce --format ptb` writes them: a sentence of words alone reads the same."""
    path = save_pinned_grammar(tmp_path / "g.pt", WORDS, left=range(4, 10), right=range(0, 10))
    nlp = pipeline(model=path)
    parser = onparse.load(path)
    words = "the cat sat on the mat".split()
    tree = parser.trees([words])
    expected = to_ptb(tree[0], labels=tree_labels(parser, [words], tree)[0])
    sent = next(nlp(" ".join(words)).sents)
    assert sent._.parse_string == expected and "(NT-" in expected
    assert sent._.labels == (re.match(r"\((\S+) ", expected).group(1),)
    with_stop = next(nlp(" ".join(words) + " .").sents)._.parse_string
    assert with_stop == expected[:-1] + " (P .))"


def test_the_bundled_model_on_a_normal_sentence():
    """The bundled model's tree and labels, as `onparse induce --format ptb` writes them, with
    the full stop at the top."""
    nlp = pipeline()
    sent = next(nlp("The cat sat on the mat.").sents)
    parser = onparse.load()
    words = "The cat sat on the mat".split()
    tree = parser.trees([words])
    labels = tree_labels(parser, [words], tree)
    expected = to_ptb(tree[0], labels=labels[0] if labels else None)
    assert sent._.parse_string == expected[:-1] + " (P .))"
    assert len(list(sent._.constituents)) == 7 + 5       # 7 tokens, 5 constituents of a binary tree


def test_pipe_batches_sentences_across_docs_and_gives_nlps_trees(tiny_lm):
    nlp = pipeline(model=tiny_lm, batch_size=3)
    texts = TEXTS * 3
    one_by_one = [trees_of(nlp(t)) for t in texts]
    calls = []
    component = nlp.get_pipe("onparse")
    trees = component.parser.trees

    def counting(token_lists, *args, **kwargs):
        calls.append(len(token_lists))
        return trees(token_lists, *args, **kwargs)

    component.parser.trees = counting
    try:
        piped = [trees_of(doc) for doc in nlp.pipe(texts, batch_size=4)]
    finally:
        del component.parser.trees
    assert piped == one_by_one
    total = sum(len(t) for t in one_by_one)
    # never more than batch_size sentences at once, and fewer calls than docs: batches cross docs
    assert sum(calls) == total and max(calls) <= 3 and len(calls) < len([t for t in texts if t])


#: nlp() then nlp.pipe(n_process=2) in a process whose torch runs on two threads.
TWO_PROCESSES = """
import sys, torch, spacy
torch.set_num_threads(2)
nlp = spacy.blank("en"); nlp.add_pipe("sentencizer"); nlp.add_pipe("onparse", config={"model": sys.argv[1]})
texts = [f"The cat {i} sat on the mat near the old house by the river. Dogs bark, and cats meow!" for i in range(8)]
texts += ["", "...", "Hello", "  the cat  sat \\n\\n on the mat "]
one = [[s._.parse_string for s in nlp(t).sents] for t in texts]
two = [[s._.parse_string for s in d.sents] for d in nlp.pipe(texts, n_process=2, batch_size=2)]
print(one == two, torch.get_num_threads())
"""


def test_pipe_with_two_processes_gives_nlps_trees(tiny_lm):
    """Forked workers after the parent parsed on two threads: they used to wait forever on the
    parent's OpenMP threads (each now parses on one thread); the trees are nlp()'s."""
    done = subprocess.run([sys.executable, "-c", TWO_PROCESSES, tiny_lm], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "2"]


def test_trees_survive_docbin_and_bytes(nlp):
    docs = [nlp(t) for t in TEXTS]
    box = DocBin(store_user_data=True)
    for doc in docs:
        box.add(doc)
    back = list(DocBin().from_bytes(box.to_bytes()).get_docs(nlp.vocab))
    for doc, again in zip(docs + docs[:2], back + [Doc(nlp.vocab).from_bytes(d.to_bytes()) for d in docs[:2]]):
        assert trees_of(again) == trees_of(doc)
        for sent, sent2 in zip(doc.sents, again.sents):
            mine = [(c.start, c.end, c._.labels, None if c._.parent is None else c._.parent.start) for c in sent._.constituents]
            assert mine == [(c.start, c.end, c._.labels, None if c._.parent is None else c._.parent.start)
                            for c in sent2._.constituents]
    bare = DocBin(store_user_data=False)
    bare.add(docs[0])
    lost = next(DocBin().from_bytes(bare.to_bytes()).get_docs(nlp.vocab))
    with pytest.raises(ValueError, match="no onparse trees"):
        next(lost.sents)._.parse_string


def test_empty_punctuation_only_and_whitespace(nlp):
    empty = nlp("")
    assert len(empty) == 0 and list(empty.sents) == [] and empty.user_data["onparse"]["sentences"] == []
    box = DocBin(store_user_data=True)
    box.add(empty)
    assert len(next(DocBin().from_bytes(box.to_bytes()).get_docs(nlp.vocab))) == 0
    (dots,) = nlp("... !!!").sents
    assert dots._.parse_string == "(X (P ...) (P !) (P !) (P !))" and dots._.labels == ("X",)
    (stop,) = nlp(".").sents
    assert stop._.parse_string == "(P .)" and stop._.labels == () and stop._.parent is None
    assert list(stop._.constituents) == [stop] and list(stop._.children) == []
    doc = nlp("the  cat\n\nsat")
    assert [t.is_space for t in doc] == [False, True, False, True, False]
    text = " ".join(trees_of(doc))
    assert r"(SP \s)" in text and r"(SP \n\n)" in text
    assert [len(nltk.Tree.fromstring(t).leaves()) for t in trees_of(doc)] == [len(s) for s in doc.sents]


def test_chinese_characters(tiny_lm):
    """spaCy's Chinese tokenizer segments characters by default (no download): each one is a
    word of the tree, the full-width stops are punctuation."""
    nlp = pipeline("zh", model=tiny_lm)
    doc = nlp("我爱北京。你好！")
    assert [t.text for t in doc] == list("我爱北京。你好！")
    first, second = [s._.parse_string for s in doc.sents]
    assert first.endswith("(P 。))") and "(W 北)" in first and second.endswith("(P ！))")
    assert [len(nltk.Tree.fromstring(t).leaves()) for t in (first, second)] == [5, 3]


def test_a_sentence_of_2000_tokens(nlp):
    rng = random.Random(3)
    tokens = [rng.choice(WORDS + [",", "--", ";"]) for _ in range(2000)]
    doc = Doc(nlp.vocab, words=tokens, sent_starts=[True] + [False] * 1999)
    doc = nlp.get_pipe("onparse")(doc)
    (sent,) = doc.sents
    tree = nltk.Tree.fromstring(sent._.parse_string)
    assert tree.leaves() == tokens
    found = list(sent._.constituents)
    words = sum(tag == "W" for tag in leaf_tags(sent))
    assert len(found) == 2000 + words - 1             # every token, and a binary tree's n - 1 constituents


def test_what_it_refuses(nlp, tiny_lm):
    bare = spacy.blank("en")
    bare.add_pipe("onparse", config={"model": tiny_lm})
    with pytest.raises(ValueError, match="no sentence boundaries: add a sentencizer"):
        bare("the cat sat")
    doc = nlp("the cat sat on the mat")
    spans = {(c.start, c.end) for c in doc[:]._.constituents}
    a, b = next((a, b) for a in range(6) for b in range(a + 2, 7) if (a, b) not in spans)
    for attribute in ("parse_string", "labels", "parent", "children", "constituents"):
        with pytest.raises(ValueError, match=rf"\(tokens {a}-{b}\) is not a constituent of onparse's tree"):
            getattr(doc[a:b]._, attribute)
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[0:2])
    with pytest.raises(ValueError, match="the doc has 5 tokens, its onparse trees 6: parse it again"):
        next(doc.sents)._.parse_string
    with pytest.raises(Exception, match="batch_size"):
        pipeline(model=tiny_lm, batch_size=0)
    with pytest.raises(onparse.OnparseError):
        pipeline(model=str(ROOT / "no-such-model.pt"))


def test_extensions_are_registered_once_and_never_taken_over():
    spacy_extensions.register()
    spacy_extensions.register()
    assert Span.get_extension("parse_string")[2] is spacy_extensions.parse_string
    mine = Span.get_extension("labels")
    Span.set_extension("labels", getter=lambda span: ("another package's",), force=True)
    try:
        with pytest.raises(ValueError, match="Span._.labels is already registered by another package"):
            spacy_extensions.register()
    finally:
        Span.set_extension("labels", getter=mine[2], force=True)


def test_reading_goes_to_load_only_when_given(monkeypatch, tiny_lm):
    real = onparse.load
    given = []

    def recording(model=None, **options):
        given.append(options)
        return real(model, **{k: v for k, v in options.items() if k != "reading"})

    monkeypatch.setattr(onparse, "load", recording)
    pipeline(model=tiny_lm)
    pipeline(model=tiny_lm, reading="accurate", batch_size=8)
    assert given == [{}, {"reading": "accurate"}]


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """test_readings' bundle: a fast reading (a student alone) and an accurate one (the student and
    a grammar, with a right-branching voter)."""
    from test_readings import write_bundles

    return write_bundles(tmp_path_factory.mktemp("readings"))


def test_a_bundles_reading_by_name(bundles):
    """config reading: that reading's trees (each reading's parser built by hand), the file's
    default without one, and a reading the file lacks refused when the pipe is added."""
    from test_readings import LINES

    files = bundles
    for name, by_hand in [(None, files["by_hand"]["fast"]), *files["by_hand"].items()]:
        nlp = pipeline(model=files["bundle"], reading=name)
        assert nlp.get_pipe("onparse").parser.reading == (name or "fast")
        tokens = [line.split() for line in LINES]
        trees = by_hand.trees(tokens)
        labels = tree_labels(by_hand, tokens, trees) or [None] * len(trees)
        expected = [to_ptb(tree, labels=names) for tree, names in zip(trees, labels)]
        assert [next(nlp(line).sents)._.parse_string for line in LINES] == expected
    with pytest.raises(onparse.ReadingError, match="no-such"):
        pipeline(model=files["bundle"], reading="no-such")


def test_labels_follow_the_reading(bundles, monkeypatch):
    """span._.labels and parse_string: the accurate reading's constituents are named by the
    grammar among its members; the fast reading's are all X, the bundle's grammar never asked."""
    from onparse.grammar.kind import Grammar

    calls, real = [], Grammar.labels
    monkeypatch.setattr(Grammar, "labels", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    text = "the cat sat on a mat"
    sent = next(pipeline(model=bundles["bundle"], reading="fast")(text).sents)
    spans = [span for span in sent._.constituents if len(span) > 1]
    assert spans and all(span._.labels == ("X",) for span in spans)
    assert "(NT-" not in sent._.parse_string and calls == []
    sent = next(pipeline(model=bundles["bundle"], reading="accurate")(text).sents)
    spans = [span for span in sent._.constituents if len(span) > 1]
    assert spans and all(re.fullmatch(r"NT-\d+", span._.labels[0]) for span in spans)
    assert sent._.parse_string.startswith("(NT-") and calls


def test_the_component_pickles_and_the_pipeline_reloads_from_disk(nlp, tmp_path):
    component = nlp.get_pipe("onparse")
    again = pickle.loads(pickle.dumps(component))
    assert again._parser is None and again.model == component.model and again.batch_size == 1000
    doc = nlp.make_doc("the cat sat on the mat , a bird sang")
    doc[0].is_sent_start = True
    for token in doc[1:]:
        token.is_sent_start = False
    assert trees_of(again(doc)) == trees_of(nlp(doc.text))
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["sentencizer", "onparse"]
    assert [trees_of(loaded(t)) for t in TEXTS] == [trees_of(nlp(t)) for t in TEXTS]


# -- packaging: the entry point, and onparse without spaCy ---------------------------------------

def test_add_pipe_works_without_importing_onparse(nlp, tiny_lm):
    """A fresh interpreter that never imports onparse: spaCy finds the factory by its entry point."""
    code = ("import sys, spacy\n"
            "assert 'onparse' not in sys.modules\n"
            "nlp = spacy.blank('en'); nlp.add_pipe('sentencizer')\n"
            f"nlp.add_pipe('onparse', config={{'model': {tiny_lm!r}}})\n"
            "print(next(nlp('The cat sat on the mat.').sents)._.parse_string)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == trees_of(nlp("The cat sat on the mat."))
    from importlib.metadata import entry_points

    (point,) = [e for e in entry_points(group="spacy_factories") if e.name == "onparse"]
    assert point.value == "onparse.pipeline.spacy_component:make_component"


def test_importing_onparse_imports_no_spacy():
    code = ("import sys, onparse, onparse.pipeline, onparse.pipeline.placement; onparse.load\n"
            "assert 'spacy' not in sys.modules, 'spacy imported'; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr[-2000:]


def test_the_example_runs(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "spacy_pipeline.py")], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(P .))" in done.stdout and "DocBin" in done.stdout


def test_the_benchmark_compares_the_component_with_its_parser(tiny_lm, nltk_treebank):
    """benchmarks/bench_spacy.py: the same brackets both ways, each one's speed, their ratio, and
    the long sentence's clock."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_spacy.py"), "--model", tiny_lm,
                           "--limit", "12", "--rounds", "1", "--long", "150"], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    number = r"[\d,.]+"
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"medians of 1 round\(s\), \d+ sentences, the same brackets", lines[0]), lines
    assert re.fullmatch(rf"parser \| +{number} sent/s", lines[1]) and re.fullmatch(rf"spacy  \| +{number} sent/s", lines[2])
    assert re.fullmatch(rf"spacy / parser: {number}x", lines[3])
    assert re.fullmatch(rf"one sentence of 150 tokens: parser {number} s \({number} s CPU\), spacy {number} s "
                        rf"\({number} s CPU\)", lines[4]) and len(lines) == 5

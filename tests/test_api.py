"""onparse.load() and the Parser: nltk's ParserI contract, batching, averaging, bundles."""
import nltk
import numpy as np
import pytest
import torch

import onparse
from onparse.api import CHUNK, load, to_nltk
from onparse.trees.average import average_trees
from onparse.members import Member
from onparse.files.bundle import load_model_file, save_bundle
from onparse.files.checkpoint import save_checkpoint
from onparse.lm.file import load_checkpoint
from onparse.errors import OnparseError
from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
from onparse.text.vocab import Vocabulary

from conftest import expected_tree

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat down on a mat dog barked N times and then it was quiet".split()


def tiny_model(seed):
    torch.manual_seed(seed)
    vocab = Vocabulary.build([WORDS])
    config = ModelConfig(vocab_size=len(vocab), embedding_size=16, hidden_size=24, n_layers=3, chunk_size=4)
    return ONLSTMLanguageModel(config).eval(), vocab


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    out = []
    for seed in (1, 2):
        model, vocab = tiny_model(seed)
        path = folder / f"m{seed}.pt"
        save_checkpoint(str(path), config=model.config.to_dict(), vocab=vocab, state_dict=model.state_dict())
        out.append(str(path))
    return out


def test_public_names_and_the_nltk_contract(paths):
    parser = onparse.load(paths[0], "cpu")
    assert isinstance(parser, onparse.Parser) and isinstance(parser, nltk.parse.api.ParserI)
    tree = parser.parse_one("The cat sat down.")
    assert isinstance(tree, nltk.Tree) and tree.leaves() == ["The", "cat", "sat", "down"]
    assert all(len(t) == 2 for t in tree.subtrees(lambda t: t.label() == "X"))  # binary, labelled X
    assert [t.label() for t in tree.subtrees(lambda t: t.height() == 2)] == ["W"] * 4  # a pre-terminal per word
    assert list(parser.parse("The cat sat down.")) == [tree]
    model, vocab = tiny_model(1)
    assert tree == to_nltk(expected_tree(model, vocab, ["The", "cat", "sat", "down"]))


def test_strings_are_tokenised_lists_are_used_as_given(paths):
    parser = load(paths[0], "cpu")
    assert parser.parse_one("the cat, sat.").leaves() == ["the", "cat", "sat"]
    assert parser.parse_one(["the", "cat,", "sat."]).leaves() == ["the", "cat,", "sat."]
    assert parser.parse_one("dog") == nltk.Tree("W", ["dog"])              # as --format ptb writes it
    assert list(parser.parse(". , !")) == [] and parser.batch([". ,"]) == [None]


def test_parse_sents_keeps_order_and_runs_in_batches(paths, monkeypatch):
    from onparse.lm import kind as api          # the language model's distances, batched

    calls = []
    real = api.sentence_distances

    def counting(model, sentences, *args, **kwargs):
        calls.append(len(sentences))
        return real(model, sentences, *args, **kwargs)

    monkeypatch.setattr(api, "sentence_distances", counting)
    parser = load(paths[0], "cpu")
    rng = np.random.default_rng(0)
    sentences = [" ".join(rng.choice(WORDS, size=rng.integers(1, 12))) for _ in range(50)] + ["", "a cat"]
    results = [list(trees) for trees in parser.parse_sents(sentences)]
    assert calls == [len(sentences)]                       # one batched pass, not one per sentence
    assert [r[0].leaves() if r else [] for r in results] == [s.split() for s in sentences]
    assert results[-2] == [] and parser.batch(sentences) == [r[0] if r else None for r in results]
    assert CHUNK >= 1024  # a chunk is big enough to batch well


def test_several_models_are_averaged_and_a_bundle_is_the_same(paths, tmp_path):
    parser = load(paths, "cpu", layers=[2, 3], decoders=["onlstm", "split"])
    assert len(parser.members) == 8 and parser.members[0] == Member(0, 2, "onlstm")
    tokens = "the dog barked N times and then it was quiet".split()
    models = [tiny_model(seed) for seed in (1, 2)]
    members = [expected_tree(m, v, tokens, layer, d) for m, v in models for layer in (2, 3) for d in ("onlstm", "split")]
    expected = average_trees(members)
    assert parser.trees([tokens])[0] == expected
    bundle = tmp_path / "bundle.pt"
    save_bundle(str(bundle), [load_checkpoint(p) for p in paths], parser.members, weights="float32",
                metadata={"recipe": "test"})
    from_bundle = load(str(bundle), "cpu")
    assert from_bundle.members == parser.members and from_bundle.metadata == {"recipe": "test"}
    assert from_bundle.trees([tokens])[0] == expected
    # Asking for other members overrides the bundle's own.
    assert len(load(str(bundle), "cpu", layers=[1]).members) == 2
    # A parser saves itself: only the models its members read, renumbered; voters and ties kept.
    chosen = parser.with_members([Member(1, 3, "split"), Member(1, 2, "onlstm")], ["right"], "right")
    chosen.save_bundle(str(tmp_path / "saved.pt"), weights="float32")
    saved = load(str(tmp_path / "saved.pt"), "cpu")
    assert len(saved.models) == 1 and saved.members == [Member(0, 3, "split"), Member(0, 2, "onlstm")]
    assert (saved.voters, saved.ties) == (("right",), "right")
    assert saved.trees([tokens]) == chosen.trees([tokens])


def test_int8_bundle_weights_are_close_and_a_quarter_of_the_size(paths, tmp_path):
    blobs = [load_checkpoint(p) for p in paths]
    full, small = tmp_path / "f32.pt", tmp_path / "int8.pt"
    members = [Member(0, 2, "onlstm"), Member(1, 2, "onlstm")]
    save_bundle(str(full), blobs, members, weights="float32")
    save_bundle(str(small), blobs, members, weights="int8")
    a, b = load(str(full), "cpu").models[0].model, load(str(small), "cpu").models[0].model
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        step = x.abs().amax(dim=-1, keepdim=True) / 127 if x.dim() >= 2 else x.abs().max() / 1000
        assert torch.all((x - y).abs() <= step / 2 + 1e-6), name
    tensor_bytes = lambda path: sum(t.numel() * t.element_size() for m in load_model_file(path)["models"]  # noqa: E731
                                    for t in m["state_dict"].values())
    assert tensor_bytes(str(small)) < 0.35 * tensor_bytes(str(full))  # (tiny rows: the scales weigh more)


def test_distances_and_errors(paths):
    parser = load(paths[0], "cpu")
    d = parser.distances("the cat sat", layer=3, gate="input")
    assert d.shape == (3,) and np.all((0 <= d) & (d <= 1))
    with pytest.raises(OnparseError, match="the model has 3 layers"):
        parser.distances("the cat", layer=4)
    with pytest.raises(OnparseError, match="unknown gate"):
        parser.distances("the cat", gate="output")
    with pytest.raises(OnparseError, match="no model given"):
        load([], "cpu")


def test_to_nltk_handles_very_deep_trees():
    tree = "w0"
    for i in range(1, 5000):                  # left-branching: depth 4999
        tree = (tree, f"w{i}")
    converted = to_nltk(tree)
    # (nltk's own Tree methods recurse, so walk the result here without recursion)
    leaves, todo = [], [converted]
    while todo:
        node = todo.pop()
        if isinstance(node, str):
            leaves.append(node)
        elif node.label() == "W":
            assert len(node) == 1 and isinstance(node[0], str)
            todo.append(node[0])
        else:
            assert node.label() == "X" and len(node) == 2
            todo.extend(reversed(node))
    assert leaves == [f"w{i}" for i in range(5000)]


def test_voters_join_the_average_and_travel_in_bundles(paths, tmp_path):
    from onparse.trees.baselines import right_branching

    tokens = "the dog barked N times and then it was quiet".split()
    model, vocab = tiny_model(1)
    member = expected_tree(model, vocab, tokens)
    alone = load(paths[0], "cpu")
    assert not alone.averages and alone.voters == () and alone.ties == "first"
    # Two right-branching voters outvote any one member: R shares all n - 1 spans twice.
    two = load(paths[0], "cpu", voters=["right", "right"])
    assert two.averages and two.trees([tokens])[0] == right_branching(tokens)
    # One voter and one member: a tie everywhere they differ, broken by the rule.
    one = load(paths[0], "cpu", voters=["right"], ties="first")
    assert one.trees([tokens])[0] == average_trees([member, right_branching(tokens)], "first") == member
    assert one.with_members(one.members, ties="right").trees([tokens])[0] == \
        average_trees([member, right_branching(tokens)], "right")
    # A bundle records its voters and tie rule; load() uses them unless told otherwise.
    bundle = tmp_path / "voted.pt"
    save_bundle(str(bundle), [load_checkpoint(paths[0])], one.members, weights="float32", voters=["right"],
                ties="right")
    voted = load(str(bundle), "cpu")
    assert (voted.voters, voted.ties) == (("right",), "right")
    assert voted.trees([tokens])[0] == right_branching(tokens)
    assert load(str(bundle), "cpu", voters=[], ties="first").trees([tokens])[0] == member
    assert voted.describe_average() == "average of 1 member + right voter, ties right"
    with pytest.raises(OnparseError, match="unknown voter 'up'"):
        load(paths[0], "cpu", voters=["up"])
    with pytest.raises(OnparseError, match="unknown tie rule"):
        load(paths[0], "cpu", ties="middle")


def test_a_bundle_with_bad_voters_is_refused(paths, tmp_path):
    bundle = tmp_path / "bad.pt"
    save_bundle(str(bundle), [load_checkpoint(paths[0])], [Member(0, 2, "onlstm")], weights="float32")
    blob = torch.load(str(bundle), weights_only=True)
    blob["voters"] = ["diagonal"]
    torch.save(blob, str(bundle))
    with pytest.raises(OnparseError, match="unknown voter 'diagonal'"):
        load(str(bundle), "cpu")


def test_scoring_shows_progress_unless_quiet(paths, tmp_path, monkeypatch, capsys):
    import onparse.progress as progress
    from onparse.gold.treebank import load_gold

    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    gold_file = tmp_path / "gold.txt"
    gold_file.write_text("((the cat) (sat down))\n(a (dog barked))\n((the dog) (sat (on (a mat))))\n")
    gold = load_gold(str(gold_file))
    parser = load(paths, "cpu")                           # two models, each parses the 3 sentences: counted once
    loud = parser.score(gold, quiet=False)
    lines = capsys.readouterr().err.splitlines()
    assert lines and lines[-1].startswith(f"parsing {gold_file}: 3 of 3 sentences (100%)")
    quiet = parser.score(gold)
    assert [(label, r.to_dict()) for label, r in quiet.rows()] == [(label, r.to_dict()) for label, r in loud.rows()]
    assert capsys.readouterr().err == ""


def drawn_words(tree) -> list:
    """The words of ``tree.pretty_print()``'s last line, left to right, as a reader sees them."""
    import io

    out = io.StringIO()
    tree.pretty_print(stream=out)
    return out.getvalue().rstrip("\n").splitlines()[-1].split()


def test_trees_draw_in_order_and_are_what_ptb_output_reads_as(paths):
    """Issue 41.15: a node mixing words and subtrees drew its bare words first ("sat The cat on
    the mat"); every word now sits under a pre-terminal, as ``--format ptb`` writes it."""
    from onparse.trees.tree import to_ptb

    words = "The cat sat on the mat".split()
    mixed = ((("The", "cat"), "sat"), ("on", ("the", "mat")))      # the bundled model's tree
    assert drawn_words(to_nltk(mixed)) == words
    assert to_nltk(mixed).leaves() == words
    for tree in (mixed, ("a", ("b", "c")), "dog"):
        assert to_nltk(tree) == nltk.Tree.fromstring(to_ptb(tree))
    tree = load(paths[0], "cpu").parse_one("the dog barked N times and then it was quiet")
    assert drawn_words(tree) == tree.leaves() == "the dog barked N times and then it was quiet".split()
    assert to_nltk("(a)") == nltk.Tree("W", ["(a)"])          # words kept as given, not escaped


def test_read_trees_gives_back_what_the_parser_returned(paths, tmp_path):
    """``onparse.read_trees`` reads induce's brackets and ptb lines (and treebank trees) as the
    parser's own nltk trees; ``nltk.Tree.fromstring`` on a brackets line drops the first word."""
    from onparse.induce import format_tree

    parser = load(paths[0], "cpu")
    sentences = ["the cat sat down on a mat", "dog", "the dog barked N times", "it was quiet"]
    tokens = parser.tokens(sentences)
    expected = parser.batch(sentences)
    for fmt in ("brackets", "ptb"):
        lines = [format_tree(t, fmt) for t in parser.trees(tokens)]
        assert onparse.read_trees(lines) == expected, fmt
        path = tmp_path / f"trees.{fmt}"
        path.write_text("\n".join(lines[:2] + [""] + lines[2:]) + "\n")      # blank lines skipped
        assert onparse.read_trees(path) == onparse.read_trees(str(path)) == expected
        with open(path) as handle:
            assert onparse.read_trees(handle) == expected
    assert onparse.read_trees("((the cat) sat)\n(S (NP (DT the) (NN cat)) (VBD sat))") == [
        nltk.Tree.fromstring("(X (X (W the) (W cat)) (W sat))")] * 2
    assert nltk.Tree.fromstring("((the cat) sat)").leaves() == ["cat", "sat"]   # why the reader exists
    with pytest.raises(OnparseError, match="input line 2: unbalanced"):
        onparse.read_trees(["(a b)", "((a b)"])
    with pytest.raises(OnparseError, match="cannot read trees from .*nowhere.txt"):
        onparse.read_trees(tmp_path / "nowhere.txt")


def test_the_api_tour_shows_the_trees_the_bundled_model_returns(capsys):
    """examples/api_tour.py's comments in part 1 are what the bundled model prints (issue 41.15)."""
    import importlib.util
    import re
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "api_tour.py"
    spec = importlib.util.spec_from_file_location("api_tour", path)
    tour = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tour)
    tour.parse_text(onparse.load(device="cpu"))
    printed = capsys.readouterr().out.splitlines()
    source = path.read_text()
    shown = re.search(r"print\(tree\) +# (.*)", source).group(1)
    assert printed[0] == shown
    drawn = re.search(r"tree.pretty_print\(\) +# drawn with the words in order: (.*)", source).group(1)
    end = next(i for i, line in enumerate(printed) if line.startswith("["))     # the leaves' line
    drawing = [line for line in printed[1:end] if line.strip()]
    assert drawing[-1].split() == drawn.split() == nltk.Tree.fromstring(shown).leaves()
    assert printed[end] == re.search(r"print\(tree.leaves\(\)\) +# (.*)", source).group(1)
    assert printed[-1] == re.search(r"\[0\]\) +# (.*)", source).group(1)

"""Trees from a grammar (issue 38, item 3): its symbols as labels in ``induce --format ptb`` and
``jsonl``, in ``show``, against gold labels in ``eval`` (``--labels``, JSON ``symbols``), and the
grammar itself in ``onparse grammar``.  A tiny untrained grammar built here (seeded), no
training: seconds."""
from __future__ import annotations

import json
import subprocess
import sys

import nltk
import pytest
import torch
from click.testing import CliRunner

from conftest import save_pinned_grammar, save_tiny_checkpoint
from onparse.cli import main
from onparse.grammar.config import GrammarConfig
from onparse.grammar.file import save_grammar
from onparse.grammar.inside import DRAWS_PER_WORD
from onparse.grammar.kind import load_grammar
from onparse.grammar.model import NeuralPCFG
from onparse.gold.treebank import load_gold
from onparse.pictures.show import labelled_brackets
from onparse.scores.metrics import evaluate
from onparse.scores.predicted import node_labels
from onparse.text.vocab import Vocabulary
from onparse.trees.tree import iter_sexprs, to_brackets, to_ptb, tree_spans

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the a cat dog sat saw man bird big red old with near every some liked heard chased on mat".split()
SENTENCES = [["the", "big", "cat", "saw", "a", "dog"], ["every", "man", "liked", "some", "bird"],
             ["the", "cat", "with", "a", "red", "bird", "near", "the", "old", "man", "chased", "some", "dog"],
             ["a", "dog", "heard", "the", "man"], ["dog", "cat"]]


def cli(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def grammar_path(tmp_path_factory):
    """An untrained tiny grammar (seeded: its trees and labels are fixed) in a grammar file."""
    torch.manual_seed(0)
    vocab = Vocabulary(["<unk>", "<eos>"] + WORDS)
    config = GrammarConfig.preset("tiny", len(vocab))
    path = tmp_path_factory.mktemp("grammar") / "g.pt"
    save_grammar(path, config=config.to_dict(), vocab=vocab, state_dict=NeuralPCFG(config).state_dict())
    return path


@pytest.fixture(scope="module")
def grammar(grammar_path):
    return load_grammar(grammar_path)


def nltk_labels(tree: "nltk.Tree"):
    """Span -> label of the nodes of an nltk tree that cover two words or more."""
    out, position = {}, [0]

    def walk(node):
        if isinstance(node, str):
            position[0] += 1
            return
        start = position[0]
        for child in node:
            walk(child)
        if position[0] - start >= 2:
            out[(start, position[0])] = node.label()
    walk(tree)
    return out


def labels_of(text: str):
    """Every label of a bracketed tree (the first atom of each node)."""
    return {node[0] for node in _nodes(next(iter_sexprs(text)).sexpr)}


def _nodes(sexpr):
    todo = [sexpr]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            yield node
            todo.extend(node[1:])


# -- induce ----------------------------------------------------------------------------------------
def test_ptb_writes_the_symbols_that_labelled_trees_gives(grammar_path, grammar):
    text = "\n".join(" ".join(s) for s in SENTENCES) + "\n\nalone\n"
    result = cli("induce", "-m", grammar_path, "--format", "ptb", "--pretokenized", "-q", input=text)
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n")[:-1]
    assert len(lines) == len(SENTENCES) + 2 and lines[-2] == "" and lines[-1] == "(W alone)"
    expected = grammar.labelled_trees(SENTENCES)
    for line, words, (tree, labels) in zip(lines, SENTENCES, expected):
        read = nltk.Tree.fromstring(line)
        assert read.leaves() == words
        assert nltk_labels(read) == labels and set(labels) == set(tree_spans(tree))
        assert line == to_ptb(tree, labels=labels)
    records = cli("induce", "-m", grammar_path, "--format", "jsonl", "--pretokenized", "-q", input=text).stdout
    records = [json.loads(line) for line in records.splitlines()]
    for record, (_, labels) in zip(records, expected):
        assert {(a, b): name for a, b, name in record["labels"]} == labels
    assert records[-2]["labels"] is None and records[-1]["labels"] == []


def test_a_viterbi_member_alone_is_labelled_and_averages_are_named_by_the_grammar(grammar_path, grammar, tmp_path):
    text = "\n".join(" ".join(s) for s in SENTENCES) + "\n"
    viterbi = cli("induce", "-m", grammar_path, "--decode", "viterbi", "--format", "ptb", "--pretokenized", "-q",
                  input=text)
    assert viterbi.exit_code == 0, viterbi.output
    trees = [nltk.Tree.fromstring(line) for line in viterbi.stdout.splitlines()]
    tuples = [_tuple(t) for t in trees]
    named = grammar.labels(SENTENCES, tuples, member=None, batch_size=4)
    assert [nltk_labels(t) for t in trees] == named
    assert all(set(n) == set(tree_spans(t)) and set(n.values()) <= {f"NT-{k}" for k in range(4)}
               for n, t in zip(named, tuples))
    _, _, lm = save_tiny_checkpoint(tmp_path / "lm.pt", WORDS)
    # An average that holds a grammar: its trees' spans are named by the grammar's most probable
    # nonterminal given the sentence, whichever members built them.
    for args in (["-m", grammar_path, "--decode", "mbr,viterbi"], ["-m", lm, "-m", grammar_path],
                 ["-m", grammar_path, "--voter", "right"]):
        out = cli("induce", *args, "--format", "ptb", "--pretokenized", "-q", input=text)
        assert out.exit_code == 0, out.output
        averaged = [nltk.Tree.fromstring(line) for line in out.stdout.splitlines()]
        assert [nltk_labels(t) for t in averaged] == \
            grammar.labels(SENTENCES, [_tuple(t) for t in averaged], member=None, batch_size=4)
    # No model that names spans: every span is X.
    out = cli("induce", "-m", lm, "--format", "ptb", "--pretokenized", "-q", input=text)
    assert set().union(*(labels_of(line) for line in out.stdout.splitlines())) == {"X", "W"}
    record = json.loads(cli("induce", "-m", lm, "--format", "jsonl", "--pretokenized", "-q",
                            input=text).stdout.splitlines()[0])
    assert "labels" not in record


def _tuple(tree):
    return tree if isinstance(tree, str) else tuple(_tuple(c) for c in tree)


def test_labelled_writer_and_reader_agree():
    tree = (("the", "cat"), ("sat", ("on", "it")))
    labels = {(0, 5): "NT-1", (0, 2): "NT-2", (2, 5): "NT-0"}
    assert to_ptb(tree, labels=labels) == "(NT-1 (NT-2 (W the) (W cat)) (NT-0 (W sat) (X (W on) (W it))))"
    assert to_ptb(tree) == to_ptb(tree, labels={}) == "(X (X (W the) (W cat)) (X (W sat) (X (W on) (W it))))"
    read = next(iter_sexprs(to_ptb(tree, labels=labels))).sexpr
    assert node_labels(read, 5) == labels and node_labels(read, 4) == {}
    assert node_labels(next(iter_sexprs(to_brackets(tree))).sexpr, 5) == {}


# -- eval --------------------------------------------------------------------------------------
GOLD = ["(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))))",
        "(S (NP (DT a) (NN dog)) (VP (VBD ran)))",
        "(S (S (NP (DT a) (NN dog)) (VP (VBD ran))) (CC and) (S (VP (VBD sat) (ADVP (RB down)))))"]
PRED = ["(NT-1 (NT-2 (W the) (W cat)) (NT-3 (W sat) (NT-4 (W on) (NT-2 (W the) (W mat)))))",
        "(NT-1 (NT-3 (W a) (W dog)) (W ran))",
        "(NT-1 (NT-3 (NT-2 (W a) (W dog)) (W ran)) (NT-3 (W and) (NT-2 (W sat) (W down))))"]
#: By hand.  NT-2 labels (0,2) NP, (4,6) NP in sentence 1 and (0,2) NP, (4,6) S+VP (a unary chain:
#: two gold constituents) in sentence 3: 4 spans, 5 constituents, NP 3/5.  NT-3 labels (2,6) VP,
#: (0,2) NP, (0,3) S and (3,6) no gold constituent: 4 spans, 3 constituents, a tie decided
#: alphabetically: NP 1/3.  NT-4 labels (3,6) PP.  NT-1 labels whole sentences only: not listed.
SYMBOLS = [("NT-2", "NP", 3 / 5, 5, 4), ("NT-3", "NP", 1 / 3, 3, 4), ("NT-4", "PP", 1.0, 1, 1)]


def test_eval_lines_symbols_up_with_gold_labels(tmp_path):
    gold, pred = tmp_path / "gold.txt", tmp_path / "pred.txt"
    gold.write_text("\n".join(GOLD) + "\n")
    pred.write_text("\n".join(PRED) + "\n")
    record = json.loads(cli("eval", "--gold", gold, pred, "--json").stdout)
    assert [(s["symbol"], s["gold_label"], s["purity"], s["constituents"], s["spans"]) for s in record["symbols"]] \
        == SYMBOLS
    assert record["symbols"][1]["gold_labels"] == {"VP": 1, "NP": 1, "S": 1}
    table = cli("eval", "--gold", gold, pred, "--labels")
    assert table.exit_code == 0, table.output
    rows = table.stdout[table.stdout.index("induced symbols"):].splitlines()[3:]
    assert [row.split() for row in rows] == [["NT-2", "NP", "60.0", "5", "4"], ["NT-3", "NP", "33.3", "3", "4"],
                                             ["NT-4", "PP", "100.0", "1", "1"], ["all", "55.6", "9", "9"]]
    plain = cli("eval", "--gold", gold, pred)
    assert plain.stdout == table.stdout[:table.stdout.index("\n\ninduced symbols")] + "\n"
    unlabelled = tmp_path / "x.txt"                                 # the same trees, labelled X
    unlabelled.write_text("".join(line.replace("NT-1", "X").replace("NT-2", "X").replace("NT-3", "X")
                                  .replace("NT-4", "X") + "\n" for line in PRED))
    for args in ([], ["--labels"]):
        result = CliRunner().invoke(main, ["eval", "--gold", str(gold), str(unlabelled), *args])
        assert result.stdout == plain.stdout and ("no induced symbols" in result.stderr) == bool(args)
    assert "symbols" not in json.loads(cli("eval", "--gold", gold, unlabelled, "--json").stdout)


def test_eval_of_a_grammar_alone_reports_its_symbols(grammar_path, grammar, tmp_path):
    gold_path = tmp_path / "gold.txt"
    gold_path.write_text("\n".join(GOLD) + "\n")
    result = cli("eval", "--gold", gold_path, "-m", grammar_path, "--json", "-q")
    assert result.exit_code == 0, result.output
    gold = load_gold(str(gold_path))
    trees, labels = zip(*grammar.labelled_trees([list(s.words) for s in gold]))
    assert json.loads(result.stdout)["symbols"] == evaluate(trees, gold, labels=labels).symbols
    table = cli("eval", "--gold", gold_path, "-m", grammar_path, "--labels", "-q")
    assert "induced symbols against gold labels" in table.stdout
    average = CliRunner().invoke(main, ["eval", "--gold", str(gold_path), "-m", str(grammar_path),
                                                        "--decode", "all", "--labels", "-q"])
    # An average (its MBR and Viterbi trees) is named by the grammar as induce --format ptb names it.
    assert average.exit_code == 0 and "induced symbols against gold labels" in average.stdout
    assert "no symbols" not in average.stderr


# -- show --------------------------------------------------------------------------------------
def test_show_draws_the_symbols(grammar_path, grammar, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")      # wide: a narrow terminal wraps the header line
    sentence = SENTENCES[0]
    result = cli("show", "-m", grammar_path, *sentence)
    assert result.exit_code == 0, result.output
    tree, labels = grammar.labelled_trees([sentence])[0]
    lines = result.stdout.splitlines()
    assert lines[1] == labelled_brackets(tree, labels) and "most probable symbol" in lines[0]
    drawing = "\n".join(lines[3:])
    assert all(label in drawing for label in labels.values())
    averaged = cli("show", "-m", grammar_path, "--decode", "all", *sentence)      # named by the grammar too
    assert averaged.exit_code == 0 and "NT-" in averaged.stdout.splitlines()[1]


# -- the grammar itself ----------------------------------------------------------------------------
def test_grammar_prints_its_rules_words_and_samples(grammar_path, grammar):
    result = cli("grammar", "-m", grammar_path, "--rules", "6", "--words", "2", "--sample", "3", "--seed", "7")
    assert result.exit_code == 0, result.output
    text = result.stdout
    rules = text[text.index("most probable binary rules"):].splitlines()[1:7]
    top = grammar.model.top_rules(6)
    assert [r.split() for r in rules] == [[a, "->", b, c, f"{p:.3f}"] for a, b, c, p in top]
    assert [p for *_, p in top] == sorted((p for *_, p in top), reverse=True)
    words = text[text.index("most probable words"):].splitlines()[1:7]
    assert [w.split(":")[0].strip() for w in words] == [f"PT-{k}" for k in range(6)]
    report = json.loads(cli("grammar", "-m", grammar_path, "--rules", "6", "--sample", "3", "--seed", "7",
                            "--json").stdout)
    assert [(r["parent"], r["left"], r["right"]) for r in report["rules"]] == [t[:3] for t in top]
    drawn = grammar.model.sample(3, torch.Generator().manual_seed(7), 30)
    assert [s["words"] for s in report["samples"]] == [[grammar.vocab.itos[i] for i in ids] for ids, _ in drawn]
    for sample in report["samples"]:
        read = nltk.Tree.fromstring(sample["tree"])
        assert read.leaves() == sample["words"] and read.label().startswith("NT-")
        assert " ".join(sample["words"]) in text                  # the same sentences in the text form
    again = json.loads(cli("grammar", "-m", grammar_path, "--rules", "0", "--words", "0", "--sample", "3",
                           "--seed", "7", "--json").stdout)
    assert again["samples"] == report["samples"] and again["rules"] == [] and again["words"] == []
    other = json.loads(cli("grammar", "-m", grammar_path, "--sample", "3", "--seed", "8", "--json").stdout)
    assert other["samples"] != report["samples"]


def test_grammar_of_a_language_model_is_a_one_line_error(tmp_path):
    _, _, lm = save_tiny_checkpoint(tmp_path / "lm.pt", WORDS)
    result = CliRunner().invoke(main, ["grammar", "-m", lm])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "is a language model: it has no grammar rules" in result.stderr
    usage = cli("grammar", "-m", lm, "-m", lm)
    assert usage.exit_code == 2


def test_grammar_shows_the_grammar_of_a_bundle(grammar_path, tmp_path):
    import onparse

    _, _, lm = save_tiny_checkpoint(tmp_path / "lm.pt", WORDS)
    onparse.load([lm, str(grammar_path)], "cpu").save_bundle(str(tmp_path / "mixed.pt"), weights="float32")
    onparse.load([lm, lm], "cpu").save_bundle(str(tmp_path / "lms.pt"), weights="float32")
    mixed = cli("grammar", "-m", tmp_path / "mixed.pt", "--sample", "2", "--json")
    alone = cli("grammar", "-m", grammar_path, "--sample", "2", "--json")
    assert mixed.exit_code == 0, mixed.output
    assert json.loads(mixed.stdout)["model"].endswith("(model 2)")
    assert {**json.loads(mixed.stdout), "model": ""} == {**json.loads(alone.stdout), "model": ""}
    none = cli("grammar", "-m", tmp_path / "lms.pt")
    assert none.exit_code == 1 and none.stderr.count("\n") == 1 and "holds no grammar" in none.stderr


def test_induce_ptb_pipes_into_head(grammar_path):
    text = "".join(" ".join(SENTENCES[k % len(SENTENCES)]) + "\n" for k in range(200))
    pipe = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m onparse induce -m {grammar_path} "
                           "--format ptb -q - | head -n 2"], input=text, capture_output=True, text=True, timeout=120)
    assert pipe.returncode == 0 and pipe.stderr == "", pipe.stderr
    first = nltk.Tree.fromstring(pipe.stdout.splitlines()[0])
    assert len(pipe.stdout.splitlines()) == 2 and first.label().startswith("NT-") and first.leaves() == SENTENCES[0]


# -- bounded reports (issue 55) ----------------------------------------------------------------
def test_grammar_rules_are_capped_at_the_rules_there_are_and_the_listing_bounded(grammar_path, monkeypatch):
    """Issue 55.5: ``--rules 2147483647`` lists every rule of a grammar that has fewer (a tiny
    one: 4 x 10^2 = 400) and says how many there are; past the listing's bound (shrunk here to
    50) it lists that many, best first, and says so on stderr."""
    import onparse.grammar.kind as kind_module

    report = json.loads(cli("grammar", "-m", grammar_path, "--rules", 2147483647, "--words", 0, "--sample", 0,
                            "--json").stdout)
    assert report["rule_count"] == 400 and len(report["rules"]) == 400
    assert len({(r["parent"], r["left"], r["right"]) for r in report["rules"]}) == 400
    assert abs(sum(r["probability"] for r in report["rules"]) - 4.0) < 1e-4     # T[A] sums to 1 per parent
    monkeypatch.setattr(kind_module, "MOST_RULES", 50)
    result = cli("grammar", "-m", grammar_path, "--rules", 2147483647, "--words", 0, "--sample", 0)
    assert result.exit_code == 0, result.output
    text = result.stdout
    listed = text[text.index("most probable binary rules"):].splitlines()[1:]
    assert len(listed) == 50 and "of 400" in text
    assert result.stderr.count("\n") == 1 and "lists at most 50" in result.stderr


def explosive_grammar(path):
    """A tiny grammar whose every binary rule is NT-0 -> NT-0 NT-0: no derivation ever ends."""
    return save_pinned_grammar(path, WORDS, left=[0], right=[0])


def test_sampling_an_explosive_grammar_gives_up_in_bounded_work_and_keeps_the_report(tmp_path, grammar):
    """Issue 55.12: a grammar whose children are always nonterminals never yields a sentence.
    The sampler stops after a budget of draws proportional to n x max_length, and ``grammar``
    prints its rules and words, then one line saying sampling gave up (exit 1)."""
    path = explosive_grammar(tmp_path / "boom.pt")
    drawn = load_grammar(path).model.sample(5, torch.Generator().manual_seed(0), max_length=500)
    assert list(drawn) == [] and drawn.gave_up and drawn.draws <= DRAWS_PER_WORD * 500      # 100,000: a second
    ordinary = grammar.model.sample(300, torch.Generator().manual_seed(0), max_length=10)
    assert len(ordinary) == 300 and not ordinary.gave_up
    result = cli("grammar", "-m", path, "--sample", 5, "--max-length", 500)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "most probable binary rules" in result.stdout and "most probable words" in result.stdout
    assert "NT-0 -> NT-0 NT-0" in result.stdout
    assert result.stderr.count("\n") == 1 and "sampling gave up" in result.stderr
    assert "0 of 5 sentences" in result.stderr
    report = json.loads(cli("grammar", "-m", path, "--sample", 5, "--json").stdout)
    assert report["samples"] == [] and report["rules"]

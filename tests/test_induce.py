"""The streaming induction pipeline: preprocessing, reading, alignment, formats, batching."""
import json

import nltk
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from onparse.api import Parser
from onparse.trees.average import average_trees
from onparse.members import Member
from onparse.trees.decode import decode
from onparse.errors import OnparseError
from onparse.induce import Shard, distance_lines, induce_lines, read_lines
from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
from onparse.text.tokens import Preprocessor, normalize_word
from onparse.trees.tree import leaves, parse_brackets
from onparse.text.vocab import Vocabulary

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat down on a mat dog barked N times and then it was quiet".split()


@pytest.fixture(scope="module")
def vocab():
    return Vocabulary.build([WORDS])


@pytest.fixture(scope="module")
def model(vocab):
    torch.manual_seed(11)
    config = ModelConfig(vocab_size=len(vocab), embedding_size=16, hidden_size=24, n_layers=3, chunk_size=4)
    return ONLSTMLanguageModel(config).eval()


def parser_of(model, vocab, layer=2, decoder="onlstm", **options):
    return Parser.from_model(model, vocab, [Member(0, layer, decoder)], **options)


def run(lines, model, vocab, layer=2, decoder="onlstm", batch_size=None, max_tokens=None, window=4096, **kw):
    parser = parser_of(model, vocab, layer, decoder, batch_size=batch_size, max_tokens=max_tokens)
    return [line for chunk in induce_lines(lines, parser, window=window, **kw) for line in chunk]


def write(tmp_path, data: bytes, name="in.txt"):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


# --- preprocessing ----------------------------------------------------------------------------

def test_preprocessor_drops_punct_normalises_and_maps_unknowns(vocab):
    prep = Preprocessor(vocab, punct="drop")
    s = prep("The Cat , sat 42 times on the Zebra .")
    assert s.tokens == ["The", "Cat", "sat", "42", "times", "on", "the", "Zebra"]
    assert s.ids == [vocab.index(w) for w in ["the", "cat", "sat", "N", "times", "on", "the", "<unk>"]]
    assert s.ids[-1] == vocab.unk_id
    assert prep("") == ([], []) and prep(" , . ") == ([], [])


def test_default_keeps_only_punctuation_the_vocabulary_has():
    vocab = Vocabulary.build([WORDS + [",", "."]])
    s = Preprocessor(vocab)("the cat ; sat , down .")
    assert s.tokens == ["the", "cat", "sat", ",", "down", "."]  # ";" is not in the vocabulary
    assert s.ids[3] == vocab.index(",")
    assert Preprocessor(vocab, punct="drop")("the cat ; sat , down .").tokens == ["the", "cat", "sat", "down"]


def test_tokenize_splits_raw_text_unless_pretokenized(vocab):
    assert Preprocessor(vocab, tokenize=False)("the cat's mat.").tokens == ["the", "cat's", "mat."]
    assert Preprocessor(vocab, punct="drop")("the cat's mat.").tokens == ["the", "cat", "'s", "mat"]


def test_a_chunk_the_vocabulary_knows_is_kept_whole():
    vocab = Vocabulary.build([["at&t", "u.s.", "inc.", "sold", "it", "to", "the"]])
    prep = Preprocessor(vocab)
    # Without the vocabulary, NLTK splits "AT&T" and the final period of "Inc.".
    assert prep("AT&T sold it to the U.S. unit of Acme Inc.").tokens == \
        ["AT&T", "sold", "it", "to", "the", "U.S.", "unit", "of", "Acme", "Inc."]
    assert prep("the mat.").tokens == ["the", "mat"]


def test_names_with_an_ampersand_stay_whole_in_real_sentences():
    """WSJ and conll2000 sentences, written as raw text: AT&T, S&P, H&R and P&G are one token
    whatever the vocabulary; a free-standing & is punctuation as before."""
    vocab = Vocabulary.build([["the", "at&t", "advance"]])
    prep = Preprocessor(vocab, punct="drop")
    assert prep("The AT&T advance shows how one aspect of the current-carrying problem can be overcome.").tokens[:3] \
        == ["The", "AT&T", "advance"]
    assert prep("They are keeping a close watch on the yield on the S&P 500.").tokens[-2:] == ["S&P", "500"]
    assert prep("Brokerage houses are sweet on H&R Block, too.").tokens == \
        ["Brokerage", "houses", "are", "sweet", "on", "H&R", "Block", "too"]
    assert prep("In New Brunswick, N.J., a Johnson & Johnson spokesman declined comment.").tokens[5:8] == \
        ["Johnson", "Johnson", "spokesman"]


def test_single_quotes_used_as_quote_marks_are_not_words():
    """Brown's press sections (raw text of real sentences): single quotes around a phrase are
    dropped even when the vocabulary holds the possessive ', which the plural possessive keeps."""
    vocab = Vocabulary.build([["'", "his", "reference", "to"]])
    prep = Preprocessor(vocab)
    assert prep("His reference to 'discredited carcass' or 'tattered remains' of the president's leadership "
                "is an insult.").tokens[:9] == \
        ["His", "reference", "to", "discredited", "carcass", "or", "tattered", "remains", "of"]
    assert prep("Hodges predicted: 'I think we will see more foreign firms coming to the U.S.'").tokens[:4] == \
        ["Hodges", "predicted", "I", "think"]
    assert prep("He said 'yes' to her.").tokens == ["He", "said", "yes", "to", "her"]
    # The plural possessive is a word in Penn-tagged text (POS), kept when the vocabulary has it.
    assert prep("The students' books were late.").tokens == ["The", "students", "'", "books", "were", "late"]


def test_unicode_words_survive_in_every_script(vocab):
    prep = Preprocessor(vocab, punct="drop")
    assert prep("你好 世界").tokens == ["你好", "世界"]
    assert prep("Привет, мир!").tokens == ["Привет", "мир"]
    assert prep("il est à la maison").tokens == ["il", "est", "à", "la", "maison"]
    assert prep("¿Dónde está? «Hola»").tokens == ["Dónde", "está", "Hola"]


# --- reading ------------------------------------------------------------------------------------

def test_read_lines_endings_bom_and_last_line(tmp_path):
    path = write(tmp_path, "\ufeffone\r\ntwo\n\nthree".encode("utf-8"))
    assert list(read_lines(path)) == ["one", "two", "", "three"]
    assert list(read_lines(write(tmp_path, b"", "empty.txt"))) == []


def test_non_utf8_names_the_line(tmp_path):
    path = write(tmp_path, b"ok\nstill ok\nbad \xff byte\nok\n")
    with pytest.raises(OnparseError, match=r"line 3: not valid UTF-8"):
        list(read_lines(path))
    # The line number is the file's, not the shard's.
    with pytest.raises(OnparseError, match=r"line 3: not valid UTF-8"):
        for k in (1, 2, 3):
            list(read_lines(path, Shard(k, 3)))


def test_missing_file_is_a_one_line_error(tmp_path):
    with pytest.raises(OnparseError, match="cannot read"):
        list(read_lines(str(tmp_path / "nope.txt")))


def test_shard_parse():
    assert Shard.parse("2/8") == Shard(2, 8)
    for bad in ("0/3", "4/3", "x", "1/2/3", "1/0"):
        with pytest.raises(ValueError):
            Shard.parse(bad)


@given(lines=st.lists(st.text(alphabet="ab \u00e9", max_size=12), max_size=30),
       final_newline=st.booleans(), count=st.integers(1, 7))
@settings(max_examples=150, deadline=None)
def test_shards_partition_the_lines_in_order(tmp_path_factory, lines, final_newline, count):
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    path = write(tmp_path_factory.mktemp("shard"), text.encode("utf-8"))
    whole = list(read_lines(path))
    parts = [list(read_lines(path, Shard(k, count))) for k in range(1, count + 1)]
    assert [line for part in parts for line in part] == whole


# --- the pipeline -------------------------------------------------------------------------------

LINES = ["The cat sat down .", "", ", ; .", "dog", "the dog barked 3 times and then it was quiet",
         "a cat sat on the mat", "", "it was quiet"]


def test_one_output_line_per_input_line_in_order(model, vocab):
    out = run(LINES, model, vocab, batch_size=2, window=3)
    assert len(out) == len(LINES)
    assert out[1] == "" and out[2] == "" and out[6] == ""
    assert out[3] == "(dog)"
    for line, tree_text in zip(LINES, out):
        if tree_text:
            words = [t for t in line.split() if t not in {".", ",", ";"}]
            assert leaves(parse_brackets(tree_text)) == words


@pytest.mark.parametrize("decoder", ["onlstm", "split"])
def test_trees_are_the_decoded_model_distances(model, vocab, decoder):
    out = run(LINES, model, vocab, decoder=decoder, layer=2)
    prep = Preprocessor(vocab)
    for line, tree_text in zip(LINES, out):
        s = prep(line)
        if not s.tokens:
            continue
        tokens = torch.tensor([vocab.eos_id] + s.ids + [vocab.eos_id]).view(-1, 1)
        d_f = model.distances(tokens)[1, 0, 1:-1, 0].numpy()
        expected = decode(d_f, s.tokens, decoder)
        assert parse_brackets(tree_text) == expected


def test_batching_and_windows_do_not_change_the_output(model, vocab):
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(WORDS, size=rng.integers(0, 25))) for _ in range(60)]
    single = run(lines, model, vocab, fmt="jsonl", batch_size=1, window=1)
    batched = run(lines, model, vocab, fmt="jsonl", batch_size=16, max_tokens=200, window=23)
    assert len(single) == len(batched) == 60
    for a, b in zip(map(json.loads, single), map(json.loads, batched)):
        assert a["tokens"] == b["tokens"] and a["tree"] == b["tree"]
        np.testing.assert_allclose(a["distances"], b["distances"], atol=2e-6)


@pytest.mark.parametrize("fmt", ["brackets", "ptb", "jsonl"])
def test_every_format_reads_back_with_nltk(model, vocab, fmt):
    lines = LINES + ["a (cat) sat", "it was N", "a zebra"]
    out = run(lines, model, vocab, fmt=fmt, decoder="split")
    if fmt == "jsonl":
        assert json.loads(out[-1])["oov"] == [False, True]
    assert len(out) == len(lines)
    for line, text in zip(lines, out):
        expected = Preprocessor(vocab)(line).tokens
        if fmt == "jsonl":
            record = json.loads(text)
            assert record["tokens"] == expected and len(record["distances"]) == len(expected)
            assert record["oov"] == [normalize_word(t) not in vocab for t in expected]
            text = record["tree"] or ""
        if not expected:
            assert text == ""
            continue
        # Unlabelled brackets: tell nltk that no node has a label (else a first word reads as one).
        tree = nltk.Tree.fromstring(text, node_pattern=r"(?!)") if fmt != "ptb" else nltk.Tree.fromstring(text)
        words = tree.leaves()
        assert [w.replace("-LRB-", "(").replace("-RRB-", ")") for w in words] == expected
        if fmt == "ptb":  # n - 1 binary X nodes over n W pre-terminals (no X over a single word)
            assert len(list(tree.subtrees())) == len(expected) - 1 + len(expected)
            assert all(len(t) == 2 for t in tree.subtrees(lambda t: t.label() == "X" and len(expected) > 1))
        else:
            assert len(list(tree.subtrees())) == max(1, len(expected) - 1)  # binary: n - 1 nodes


def test_sentence_of_1000_tokens(model, vocab):
    rng = np.random.default_rng(5)
    line = " ".join(rng.choice(WORDS, size=1000))
    for decoder in ("onlstm", "split"):
        (text,) = run([line], model, vocab, decoder=decoder, fmt="ptb", tokenize=False)
        tree = nltk.Tree.fromstring(text)
        assert tree.leaves() == line.split()
        assert len(list(tree.subtrees())) == 999 + 1000  # internal nodes + pre-terminals


def test_distance_lines_tsv_and_jsonl(model, vocab):
    lines = ["the cat sat", "", "dog ."]
    parser = parser_of(model, vocab)
    header, *tsv = [x for chunk in distance_lines(lines, parser, layers=[1, 3]) for x in chunk]
    assert header == "token\tlayer 1\tlayer 3"
    assert tsv[3] == "" and tsv[4] == "" and tsv[6] == ""
    assert [row.split("\t")[0] for row in tsv if row] == ["the", "cat", "sat", "dog"]
    assert all(len(row.split("\t")) == 3 for row in tsv if row)
    records = [json.loads(x) for chunk in distance_lines(lines, parser, layers=[1, 2, 3],
                                                         gate="input", fmt="jsonl") for x in chunk]
    assert [r["tokens"] for r in records] == [["the", "cat", "sat"], [], ["dog"]]
    tokens = torch.tensor([vocab.eos_id] + Preprocessor(vocab)("the cat sat").ids + [vocab.eos_id]).view(-1, 1)
    d_i = model.distances(tokens)[:, 1, 1:-1, 0].numpy()
    for k in (1, 2, 3):
        np.testing.assert_allclose(records[0]["distances"][str(k)], d_i[k - 1], atol=2e-6)
    assert float(tsv[0].split("\t")[2]) != float(tsv[0].split("\t")[1])


def test_bad_layer_is_an_error(model, vocab):
    with pytest.raises(OnparseError, match="the model has 3 layers"):
        run(["the cat"], model, vocab, layer=4)


def test_several_members_write_the_average_of_their_trees(model, vocab):
    members = [Member(0, 1, "onlstm"), Member(0, 2, "split"), Member(0, 3, "onlstm")]
    parser = Parser.from_model(model, vocab, members)
    lines = ["the cat sat down on a mat", "dog barked N times and then it was quiet", "", "a cat"]
    out = [x for chunk in induce_lines(lines, parser) for x in chunk]
    for line, text in zip(lines, out):
        tokens = Preprocessor(vocab)(line).tokens
        if not tokens:
            assert text == ""
            continue
        ids = torch.tensor([vocab.eos_id] + [vocab.index(t) for t in tokens]).view(-1, 1)
        dist = model.distances(ids)[:, 0, 1:, 0].numpy()
        trees = [decode(dist[m.layer - 1], tokens, m.decoder) for m in members]
        assert parse_brackets(text) == average_trees(trees)


# --- scoring a model on a gold set --------------------------------------------------------------

def test_score_on_wsj10(nltk_treebank, model, vocab, tmp_path):
    from onparse.api import load
    from onparse.files.checkpoint import save_checkpoint
    from onparse.lm.distances import sentence_distances
    from onparse.scores.metrics import evaluate
    from onparse.gold.treebank import load_gold

    gold = load_gold("wsj10")
    parser = Parser.from_model(model, vocab)
    scores = parser.score("wsj10", layers=[1, 2, 3], decoders=["onlstm", "split"])
    assert [(m.layer, m.decoder) for m, _ in scores.members] == [(k, d) for k in (1, 2, 3) for d in ("onlstm", "split")]
    assert all(r.n_sentences == 555 for _, r in scores.rows())
    # Independently: one sentence per batch, decoded, averaged and scored here.
    ids = [[vocab.index(normalize_word(w)) for w in s.words] for s in gold]
    dists = sentence_distances(model, ids, vocab.eos_id, batch_size=1)
    per_sentence = [[decode(d[m.layer - 1, 0], list(s.words), m.decoder) for m, _ in scores.members]
                    for d, s in zip(dists, gold)]
    for k, (member, result) in enumerate(scores.members):
        assert result.sentence_f1 == evaluate([trees[k] for trees in per_sentence], gold).sentence_f1
    assert scores.average.sentence_f1 == evaluate([average_trees(t) for t in per_sentence], gold).sentence_f1
    assert scores.members[0][1].sentence_f1 != scores.members[2][1].sentence_f1
    # A checkpoint path works too, and its default member is layer 2 with the paper's decoder.
    path = tmp_path / "m.pt"
    save_checkpoint(str(path), config=model.config.to_dict(), vocab=vocab, state_dict=model.state_dict())
    one = load(str(path), "cpu").score(gold)
    assert one.average is None and one.members[0][0] == Member(0, 2, "onlstm")
    assert one.result.sentence_f1 == scores.members[2][1].sentence_f1
    with pytest.raises(OnparseError, match="the model has 3 layers"):
        load(str(path), "cpu", layers=[5])


def test_a_line_of_one_symbol_is_read_as_that_symbol(model, vocab):
    """WSJ holds the one-word sentence ``@`` (tagged IN): by default a line of one punctuation
    token gets a tree, so a gold's text reads back line for line; several punctuation tokens
    alone on a line still give an empty line, and ``--punct drop`` drops even a lone one."""
    assert run(["@", "- -", "@ @"], model, vocab) == ["(@)", "", ""]
    from onparse.text.tokens import Preprocessor

    assert Preprocessor(vocab)("@").tokens == ["@"] and Preprocessor(vocab, punct="drop")("@").tokens == []


def test_text_that_does_not_suit_the_model_is_named_once_on_stderr(model, vocab, tmp_path):
    """Russian and unsegmented Chinese against an English vocabulary: one note for the input;
    English text the vocabulary knows: none."""
    from click.testing import CliRunner

    from onparse.cli import main
    from onparse.induce import VocabularyCheck

    check = VocabularyCheck(vocab)
    for line in ("the cat sat", "the dog sat"):
        check.add(line.split())
    assert check.note() is None
    check.add(["Привет", "мир", "我爱北京天安门我爱北京"])
    assert check.note() == ("note: 33% of the 9 tokens are outside the model's vocabulary; its vocabulary has no "
                            "word in CJK, CYRILLIC scripts; 1 token(s) look like unsegmented text: split the words "
                            "with spaces and use --pretokenized, and a model trained on text of this language "
                            "(onparse train --corpus FILE) will parse it better")
    path = tmp_path / "m.pt"
    from onparse.files.checkpoint import save_checkpoint

    save_checkpoint(str(path), config=model.config.to_dict(), vocab=vocab, state_dict=model.state_dict())
    got = CliRunner().invoke(main, ["induce", "-", "-m", str(path)], input="Привет, как дела?\nthe cat sat\n")
    assert got.exit_code == 0 and len(got.stdout.splitlines()) == 2
    assert got.stderr.count("note: ") == 1 and "CYRILLIC script;" in got.stderr
    quiet = CliRunner().invoke(main, ["induce", "-", "-m", str(path)], input="the cat sat\n")
    assert quiet.stderr == ""
    # French against this English vocabulary: the share alone (Latin script is known).
    french = VocabularyCheck(vocab)
    french.add("le chat est sur la mat".split())
    assert french.note() == ("note: 83% of the 6 tokens are outside the model's vocabulary; a model trained on "
                             "text of this language (onparse train --corpus FILE) will parse it better")
    english = VocabularyCheck(vocab)
    english.add("the zebra sat on the yak".split())               # 2 of 6 unknown: no note
    assert english.note() is None


# -- issue 55.13: the note about long sentences says what happened to them ------------------------

@pytest.fixture(scope="module")
def grammar_run(tmp_path_factory):
    from click.testing import CliRunner

    from conftest import write_corpus
    from onparse.cli import main

    folder = tmp_path_factory.mktemp("grammar")
    corpus = write_corpus(folder / "text.txt", n_sentences=120, seed=5)
    trained = CliRunner().invoke(main, ["train", "--family", "grammar", "--preset", "tiny", "--corpus", corpus,
                                        "--epochs", "1", "--threads", "1", "--out", str(folder / "g")])
    assert trained.exit_code == 0, trained.output
    return folder / "g" / "best.pt", folder / "text.txt"


def test_a_sentence_a_grammar_parses_in_pieces_is_noted_as_such(grammar_run, monkeypatch):
    # A 400-word line through one grammar (whole up to 322 words at its size) was noted as "of
    # more than 2,000 words ... too long to average: each got its first member's tree".
    from click.testing import CliRunner

    import onparse.grammar.parse as parse
    from onparse.cli import main

    monkeypatch.setattr(parse, "exact_words", lambda rank: 8)         # the grammar's whole-sentence limit
    grammar, text = grammar_run
    words = " ".join(text.read_text().split()[:30]).replace(" .", "").replace(" ,", "")
    lines = words + "\nthe dog saw a cat\n"
    alone = CliRunner().invoke(main, ["induce", "-", "-m", str(grammar)], input=lines)
    assert alone.exit_code == 0 and len(alone.stdout.splitlines()) == 2, alone.output
    assert alone.stderr == ("note: 1 sentence(s) were too long for the grammar to parse whole: each got a tree "
                            "built in pieces, joined by a tree over them\n")
    both = CliRunner().invoke(main, ["induce", "-", "-m", str(grammar), "--voter", "right"], input=lines)
    assert both.exit_code == 0 and both.stderr == alone.stderr, both.output          # averaged: still in pieces


# -- issue 55.14: pre-tokenised text keeps every token it is given ---------------------------------

def test_pretokenized_text_keeps_every_token_unless_told_to_drop_punctuation(vocab):
    line = "the cat sat on 50 % of the mat ; ok"
    s = Preprocessor(vocab, tokenize=False)(line)
    assert s.tokens == line.split()                              # '%' and ';' are the user's tokens
    assert s.ids[5] == s.ids[9] == vocab.unk_id                  # words the model never saw: <unk>
    assert Preprocessor(vocab, tokenize=False, punct="drop")(line).tokens == \
        "the cat sat on 50 of the mat ok".split()
    assert Preprocessor(vocab)(line).tokens == "the cat sat on 50 of the mat ok".split()   # raw text: as before
    # gold-text's period after a last word ending in one (for tokenizers) is no token of the gold's.
    from onparse.text.tokens import gold_text_line

    words = ["prices", "rose", "5", "%", "in", "the", "U.S."]
    assert gold_text_line(words).endswith("U.S. .")
    assert Preprocessor(vocab, tokenize=False)(gold_text_line(words)).tokens == words


def test_gold_text_round_trips_through_induce_pretokenized(tmp_path, nltk_treebank):
    # `gold-text | induce --pretokenized | eval` failed at the gold '%', which a model trained by
    # `onparse train` never holds (its text drops punctuation).
    from click.testing import CliRunner

    from conftest import save_tiny_checkpoint
    from onparse.cli import main

    model = save_tiny_checkpoint(tmp_path / "m.pt", "the cat sat on a mat".split())[2]
    runner = CliRunner()
    text = runner.invoke(main, ["gold-text", "--gold", "wsj10-sample-test"]).stdout
    assert "%" in text.split()
    trees = runner.invoke(main, ["induce", "-", "-m", model, "--pretokenized", "-q"], input=text)
    assert trees.exit_code == 0 and len(trees.stdout.splitlines()) == len(text.splitlines()), trees.output
    scored = runner.invoke(main, ["eval", "--gold", "wsj10-sample-test", "-", "--json"], input=trees.stdout)
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["sentences"] == len(text.splitlines())

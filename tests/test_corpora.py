"""Training corpora: filters, file formats, the held-out split, ids and batches."""
import os
import string

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from onparse.text.corpora import (
    FORMATS, HELD_OUT_PERIOD, CorpusSpec, batchify, brown_sentences, brown_tagged_words, encode_stream,
    held_out_split, is_brown_punct_tag, load_corpus, make_spec, ptb_tagged_words, read_sentences,
    resolve_format, shard_streams, text_line_words, wsj_sentences,
)
from onparse.errors import OnparseError
from onparse.text.tokens import is_punct, normalize_word
from onparse.text.vocab import Vocabulary


# -- filters ---------------------------------------------------------------------------------
def test_ptb_tags_drop_punctuation_currency_and_empty_elements():
    tagged = [("Pierre", "NNP"), (",", ","), ("$", "$"), ("61", "CD"), ("*-1", "-NONE-"), ("years", "NNS"),
              ("1980s", "CD"), ("``", "``"), ("%", "NN"), ("-LRB-", "-LRB-"), (".", ".")]
    assert ptb_tagged_words(tagged) == ["pierre", "N", "years", "Ns", "%"]


@pytest.mark.parametrize("tag,punct", [
    (".", True), (",", True), (":", True), ("(", True), (")", True), ("--", True), ("``", True), ("''", True),
    ("'", True), (",-HL", True), (".-TL", True), ("(-HL-TL", True),
    ("*", False), ("*-HL", False), ("NN", False), ("NP-TL", False), ("BEZ*", False), ("FW-IN", False),
])
def test_brown_punctuation_tags(tag, punct):
    assert is_brown_punct_tag(tag) is punct


def test_brown_sentence_keeps_not():
    tagged = [("He", "PPS"), ("did", "DOD"), ("not", "*"), ("go", "VB"), (";", "."), ("1961", "CD"), ("--", "--")]
    assert brown_tagged_words(tagged) == ["he", "did", "not", "go", "N"]


def test_text_lines_drop_punctuation_by_form():
    line = "The Cat , said `` 1,000 $ '' ... -- US$ %  Hello!"
    # Tokenised (NLTK splits "US$" and "Hello!"); % and $ hold no letter or digit: punctuation.
    assert text_line_words(line) == ["the", "cat", "said", "N,N", "us", "hello"]
    assert text_line_words(line, pretokenized=True) == ["the", "cat", "said", "N,N", "us$", "hello!"]
    assert text_line_words("你好 世界 。 Привет , мир") == ["你好", "世界", "привет", "мир"]


# -- files -----------------------------------------------------------------------------------
def test_resolve_format():
    assert resolve_format("/data/ptb.train.txt") == "ptb"
    assert resolve_format("ptb.valid.txt") == "ptb"
    assert resolve_format("my.ptb.txt") == "text"
    assert resolve_format("ptb.train.txt", "text") == "text"
    with pytest.raises(OnparseError, match="unknown corpus format"):
        resolve_format("x.txt", "xml")


def test_text_and_ptb_formats(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text(" the N <unk> rose $ N million .\n\n , ;\nDow Jones 1987 .\n", encoding="utf-8")
    # Raw text is tokenised ("<unk>" loses its brackets); N stays N (normalisation is idempotent).
    assert read_sentences(str(path), "text") == [["the", "N", "unk", "rose", "N", "million"], ["dow", "jones", "N"]]
    assert read_sentences(str(path), "tokens") == [["the", "N", "<unk>", "rose", "N", "million"], ["dow", "jones", "N"]]
    # PTB LM format: verbatim (its N and $ are part of the benchmark's text); only empty lines skipped.
    assert read_sentences(str(path), "ptb") == [["the", "N", "<unk>", "rose", "$", "N", "million", "."],
                                               [",", ";"], ["Dow", "Jones", "1987", "."]]


def test_missing_and_bad_files(tmp_path):
    with pytest.raises(OnparseError, match="corpus file not found: .*nope.txt"):
        read_sentences(str(tmp_path / "nope.txt"))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"caf\xe9 au lait\n")
    with pytest.raises(OnparseError, match="not UTF-8"):
        read_sentences(str(bad))
    empty = tmp_path / "empty.txt"
    empty.write_text(", . ;\n\n-- ...\n", encoding="utf-8")
    with pytest.raises(OnparseError, match="empty"):
        load_corpus(make_spec(str(empty)))


# -- the held-out split ----------------------------------------------------------------------
def test_held_out_split_by_hand():
    sents = [[str(i)] for i in range(45)]          # block size 1: positions 18, 38 / 19, 39
    train, valid, test = held_out_split(sents)
    assert valid == [["18"], ["38"]] and test == [["19"], ["39"]]
    assert train == [s for s in sents if s[0] not in {"18", "19", "38", "39"}]
    sents = [[str(i)] for i in range(4000)]        # block size 4: block 18 is sentences 72..75
    _, valid, test = held_out_split(sents)
    assert valid[:5] == [["72"], ["73"], ["74"], ["75"], ["152"]]
    assert test[:4] == [["76"], ["77"], ["78"], ["79"]]


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=HELD_OUT_PERIOD, max_value=5000))
def test_held_out_split_partitions_in_order(n):
    sents = [[str(i)] for i in range(n)]
    train, valid, test = held_out_split(sents)
    ids = [int(s[0]) for s in train + valid + test]
    assert sorted(ids) == list(range(n))                          # a partition
    for part in (train, valid, test):
        assert [int(s[0]) for s in part] == sorted(int(s[0]) for s in part)   # order kept
    assert valid and test
    block = max(1, n // 1000)
    blocks = -(-n // block)
    for part, j in ((valid, HELD_OUT_PERIOD - 2), (test, HELD_OUT_PERIOD - 1)):
        expected = sum(min(block, n - b * block) for b in range(blocks) if b % HELD_OUT_PERIOD == j)
        assert len(part) == expected
        assert len(part) <= n / HELD_OUT_PERIOD + block


def test_held_out_split_needs_enough_sentences():
    with pytest.raises(OnparseError, match="only 19 sentences"):
        held_out_split([["a"]] * 19)


def test_validation_file_replaces_the_split(tmp_path):
    (tmp_path / "train.txt").write_text("a b\nc d\n", encoding="utf-8")
    (tmp_path / "valid.txt").write_text("e f\n", encoding="utf-8")
    (tmp_path / "test.txt").write_text("g\n", encoding="utf-8")
    spec = make_spec(str(tmp_path / "train.txt"), valid=str(tmp_path / "valid.txt"), test=str(tmp_path / "test.txt"))
    corpus = load_corpus(spec)
    assert (corpus.train, corpus.valid, corpus.test) == ([["a", "b"], ["c", "d"]], [["e", "f"]], [["g"]])
    assert corpus.split("all") == [["a", "b"], ["c", "d"], ["e", "f"], ["g"]]
    assert CorpusSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(OnparseError, match="test file needs a validation file"):
        load_corpus(CorpusSpec(str(tmp_path / "train.txt"), test=str(tmp_path / "test.txt")))


def test_make_spec():
    assert make_spec("wsj") == CorpusSpec("wsj")
    with pytest.raises(OnparseError, match="not found"):
        make_spec("no-such-file.txt")
    with pytest.raises(OnparseError, match="built-in corpus"):
        make_spec("wsj", valid="x.txt")
    with pytest.raises(ValueError):
        CorpusSpec.from_dict({"source": "wsj", "colour": "red"})


# -- ids and batches -------------------------------------------------------------------------
def test_encode_and_batchify_by_hand():
    vocab = Vocabulary.build([["a", "b", "a"]])                   # <unk> 0, <eos> 1, a 2, b 3
    stream = encode_stream([["a", "b"], ["zz", "a"]], vocab)
    assert stream.tolist() == [2, 3, 1, 0, 2, 1]
    data = batchify(torch.arange(11), 3)                          # 11 ids, 3 streams: one id dropped
    assert data.tolist() == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert shard_streams(batchify(torch.arange(12), 4), 1, 2).tolist() == [[6, 9], [7, 10], [8, 11]]
    with pytest.raises(OnparseError, match="not divisible"):
        shard_streams(data, 0, 2)


# -- the built-in corpora --------------------------------------------------------------------
@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_wsj_corpus(nltk_treebank, nltk_conll2000):
    sents = wsj_sentences()
    assert len(sents) == 3914 + 10948                             # no sentence is all punctuation
    assert sents[0] == ["pierre", "vinken", "N", "years", "old", "will", "join", "the", "board", "as", "a",
                        "nonexecutive", "director", "nov.", "N"]
    assert sents[3914][:4] == ["confidence", "in", "the", "pound"]      # conll2000 follows the treebank
    # Symbols the treebank tags as words stay (NN %, CC &, POS ', SYM =, IN @); no other
    # punctuation, currency sign or empty element survives.
    symbols = {w for s in sents for w in s if w in set(string.punctuation) or w.startswith("*")}
    assert symbols == {"%", "&", "'", "=", "@"}
    assert not any(w in {"``", "''", "--", "-lrb-", "-rrb-", "..."} for s in sents for w in s)
    corpus = load_corpus(CorpusSpec("wsj"))
    assert corpus.train[0] == sents[0]
    assert len(corpus.train) + len(corpus.valid) + len(corpus.test) == len(sents)
    assert 0.04 < len(corpus.valid) / len(sents) < 0.06


def test_brown_file(nltk_brown):
    sents = brown_sentences(["ca01"])
    assert sents[0][:6] == ["the", "fulton", "county", "grand", "jury", "said"]
    assert not any(is_punct(w) for s in sents for w in s)
    assert any("not" in s for s in sents)


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_wsj_plus_brown_trains_on_both_and_holds_out_wsj(nltk_treebank, nltk_conll2000, nltk_brown):
    wsj = load_corpus(CorpusSpec("wsj"))
    both = load_corpus(make_spec("wsj+brown"))
    brown = brown_sentences()
    # Validation and test are wsj's, so perplexities and checkpoint choice stay WSJ ones.
    assert both.valid == wsj.valid and both.test == wsj.test
    assert both.train == wsj.train + brown
    assert len(brown) > 50000


# -- the held-out protocol -------------------------------------------------------------------
def _occurrences(needles, haystack, n=5):
    """Needles (word tuples of >= n words) that occur as contiguous runs in a haystack sentence."""
    by_head = {}
    for needle in needles:
        by_head.setdefault(tuple(needle[:n]), []).append(needle)
    found = set()
    for sent in haystack:
        for i in range(len(sent) - n + 1):
            for needle in by_head.get(tuple(sent[i:i + n]), ()):
                if tuple(sent[i:i + len(needle)]) == needle:
                    found.add(needle)
    return found


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_default_corpus_holds_no_evaluation_sentence(nltk_treebank, nltk_conll2000, nltk_brown):
    from onparse.text.corpora import DEFAULT, abc_sentences, evaluation_sentences, load_corpus, make_spec
    from onparse.text.data import is_installed

    if not is_installed("abc"):
        pytest.fail("NLTK package 'abc' not found") if os.environ.get("CI") else pytest.skip("no abc")
    assert DEFAULT == "news"
    corpus = load_corpus(make_spec(DEFAULT))
    sample = [s for s in evaluation_sentences() if len(s) >= 5]
    assert len(sample) > 3000
    for split in ("train", "valid", "test"):
        sentences = corpus.split(split)
        assert len(sentences) > (30000 if split == "train" else 1500)
        assert not _occurrences(sample, sentences), split
    # The corpus is news text from its three sources, not the sample's: WSJ, Brown press, abc.
    words = sum(len(s) for s in corpus.split("all"))
    assert 1_000_000 < words < 1_200_000
    assert abc_sentences()[0] == ["pm", "denies", "knowledge", "of", "awb", "kickbacks"]


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_evaluation_sentences_are_removed_from_news(monkeypatch, nltk_treebank, nltk_conll2000, nltk_brown):
    # The filter itself: a sample sentence planted in a source is gone from every split.
    from onparse.text import corpora
    planted = list(sorted(corpora.evaluation_sentences(), key=len)[-1])
    monkeypatch.setattr(corpora, "abc_sentences", lambda: [planted, ["a", "sentence", "of", "news"]] * 20)
    corpora._named_sentences.cache_clear()
    try:
        sentences = corpora.news_sentences()
        assert planted not in sentences and ["a", "sentence", "of", "news"] in sentences
    finally:
        corpora._named_sentences.cache_clear()


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
@pytest.mark.parametrize("name, parts", [("conll2000", 1), ("conll2000+press", 2)])
def test_in_domain_corpora_hold_no_evaluation_sentence(name, parts, nltk_treebank, nltk_conll2000, nltk_brown):
    """conll2000 (WSJ sections 15-18, 20) and conll2000 + Brown's press sections: news' first
    parts alone, with the same removal of the sample's sentences, in every split."""
    from onparse.text.corpora import HELD_OUT_NAMES, evaluation_sentences, load_corpus, make_spec

    assert name in HELD_OUT_NAMES
    corpus = load_corpus(make_spec(name))
    sample = [s for s in evaluation_sentences() if len(s) >= 5]
    for split in ("train", "valid", "test"):
        assert not _occurrences(sample, corpus.split(split)), split
    words = sum(len(s) for s in corpus.split("all"))
    assert (220_000 < words < 240_000) if parts == 1 else (390_000 < words < 420_000)


# -- pre-tokenised text read as induce --pretokenized reads it ---------------------------------
#: A gold set's words that its tags call words though they hold no letter or digit: an English
#: treebank's possessive ’ (POS), a Chinese treebank's enumeration comma 、 (a conjunction), % (NN).
GIVEN_LINES = ["The boy ’ s toys : 苹果 、 香蕉 and 50 %", "、", "prices rose in the U.S. .", "", "Dow Jones 1987"]


def test_the_pretokenized_format_keeps_every_token_and_the_others_still_drop_them(tmp_path):
    path = tmp_path / "given.txt"
    path.write_text("\n".join(GIVEN_LINES) + "\n", encoding="utf-8")
    # Every token kept, normalised; only the period gold-text writes after a last "U.S." goes.
    assert read_sentences(str(path), "pretokenized") == [
        ["the", "boy", "’", "s", "toys", ":", "苹果", "、", "香蕉", "and", "N", "%"], ["、"],
        ["prices", "rose", "in", "the", "u.s."], ["dow", "jones", "N"]]
    # The other text formats drop them by the word rule, as they did.
    assert read_sentences(str(path), "tokens") == [
        ["the", "boy", "s", "toys", "苹果", "香蕉", "and", "N"], ["prices", "rose", "in", "the", "u.s."],
        ["dow", "jones", "N"]]
    assert read_sentences(str(path), "text") == read_sentences(str(path), "tokens")
    assert "pretokenized" in FORMATS and resolve_format(str(path), "pretokenized") == "pretokenized"


def test_the_pretokenized_format_gives_a_model_what_induce_pretokenized_gives_it(tmp_path):
    from onparse.text.tokens import Preprocessor, gold_text_line

    train, valid = tmp_path / "train.txt", tmp_path / "valid.txt"
    train.write_text("\n".join(GIVEN_LINES) + "\n", encoding="utf-8")
    valid.write_text("a ’ b\n", encoding="utf-8")
    corpus = load_corpus(make_spec(str(train), "pretokenized", valid=str(valid)))
    vocab = Vocabulary.build(corpus.train)
    read = Preprocessor(vocab, tokenize=False)          # onparse induce --pretokenized
    assert [vocab.encode(s) for s in corpus.train] == [read(line).ids for line in GIVEN_LINES if line]
    assert corpus.valid == [["a", "’", "b"]]
    # eval -m hands the models a gold sentence's words: gold-text's line of them reads back as them.
    for words in (["The", "boy", "’", "s"], ["苹果", "、", "香蕉"], ["in", "the", "U.S."], ["@"]):
        line = tmp_path / "one.txt"
        line.write_text(gold_text_line(words) + "\n", encoding="utf-8")
        assert read_sentences(str(line), "pretokenized") == [[normalize_word(w) for w in words]]


def test_a_built_in_corpus_is_not_pretokenized_text():
    with pytest.raises(OnparseError, match="built-in corpus"):
        make_spec("news", "pretokenized")

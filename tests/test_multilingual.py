"""NLTK's Dutch, Spanish and Portuguese treebanks: named gold sets, what NLTK's readers set
aside, and the held-out split shared by the gold sets and the language-model corpora."""
import os

import pytest

from onparse.gold.multilingual import TREEBANKS, read_treebank, split_of, text_sentences
from onparse.gold.treebank import load_gold


def _need(name):
    from onparse.text.data import is_installed

    if not is_installed(name):
        if os.environ.get("CI"):
            pytest.fail(f"NLTK package '{name}' not found")
        pytest.skip(f"no {name}")


def test_split_is_five_and_ten_percent_blocks():
    parts = [split_of(i, 7000) for i in range(7000)]
    assert parts.count("valid") == 350 and parts.count("dev") == 700 and parts.count("test") == 700
    assert parts.count("train") == 7000 - 350 - 700 - 700
    # blocks of 7 sentences: 3 train blocks, a dev block, 4 train blocks, a validation block
    assert parts[:21] == ["train"] * 21 and parts[21:28] == ["dev"] * 7
    assert parts[28:56] == ["train"] * 28 and parts[56:63] == ["valid"] * 7


# Sentences, flat recoveries (left out of the gold), and words of the <=10-word held-out set.
EXPECTED = {"alpino": (7136, 161), "cess_esp": (6030, 30), "floresta": (9266, 71)}


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
@pytest.mark.parametrize("name", list(TREEBANKS))
def test_named_gold_sets(name):
    _need(name)
    read = read_treebank(name)
    n, flat = EXPECTED[name]
    assert len(read.sexprs) == n and read.flat == flat
    full, short, dev, short_dev, test, short_test = (
        load_gold(f"{name}{suffix}") for suffix in ("", "10", "-dev", "10-dev", "-test", "10-test"))
    assert len(full) == n - flat - sum(1 for s in read.sexprs if s is not None and not _has_word(s, full.tagset))
    assert all(len(s) <= 10 for s in short) and len(short) == sum(len(s) <= 10 for s in full)
    assert {s.source for s in short_test} <= {s.source for s in test} <= {s.source for s in full}
    assert {s.source for s in short_dev} <= {s.source for s in dev} <= {s.source for s in full}
    assert not {s.source for s in dev} & {s.source for s in test}
    assert 0.08 * len(full) < len(test) < 0.12 * len(full) and 0.08 * len(full) < len(dev) < 0.12 * len(full)
    assert full.tagset == TREEBANKS[name] and any("flat" in note for note in full.notes)
    # Tag sets drop punctuation and empty elements: no gold word is punctuation-only or *0*.
    from onparse.text.tokens import is_punct

    words = [w for s in full for w in s.words]
    assert sum(is_punct(w) for w in words) < 0.002 * len(words) and "*0*" not in words


def _has_word(sexpr, tagset):
    from onparse.gold.tagsets import get
    from onparse.gold.treebank import preprocess

    return preprocess(sexpr, labelled=True, tagset=get(tagset)) is not None


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
@pytest.mark.parametrize("name", list(TREEBANKS))
def test_held_out_sentences_are_never_training_or_validation_text(name):
    _need(name)
    seen = {tuple(s) for part in ("train", "valid") for s in text_sentences(name, part)}
    for part in ("dev", "test"):
        held_out = {tuple(s.tokens) for s in load_gold(f"{name}-{part}")}
        assert held_out and not (held_out & seen - _duplicates(name))


def _duplicates(name):
    # Sentences the treebank itself holds twice, once in a held-out block and once outside it
    # (short formulaic ones); they are the same text, not a leak of the split.
    from collections import Counter

    counts = Counter(tuple(s) for s in text_sentences(name, "all"))
    return {s for s, c in counts.items() if c > 1}


def test_alpino_xml_leftovers_are_removed_and_entities_decoded():
    _need("alpino")
    read = read_treebank("alpino")
    assert read.stray > 1000 and read.empty > 0
    words = {w for s in load_gold("alpino") for w in s.words}
    assert "zo'n" in words and not any("&apos;" in w or w.startswith("<node") for w in words)
    assert any("stray" in note for note in read.notes())


@pytest.mark.slow          # tens of seconds: real corpora, the bundled model or matplotlib
def test_gold_text_of_a_foreign_set_round_trips_pretokenized(tmp_path):
    """gold-text | induce --pretokenized | eval equals eval --model on alpino's held-out set,
    although some gold tokens hold punctuation at an edge (``Jenkins'``, ``Stranger,``), which
    raw-text tokenisation would split; without the flag eval names the first such token and
    says to use it."""
    import json

    from click.testing import CliRunner
    from conftest import save_tiny_checkpoint

    from onparse.cli import main

    _need("alpino")
    gold = load_gold("alpino-test")
    # A vocabulary without the words that hold punctuation at an edge, as a trained model's
    # (they are rare): raw-text reading keeps a chunk whole only when the vocabulary holds it.
    # Tokens the tags keep as words although all punctuation (alpino's '"') are in it, as
    # training on the treebank's words puts them there.
    from onparse.text.tokens import is_word

    words = [t for s in gold for t in s.tokens
             if not is_word(t) or (t[:1].isalnum() and t[-1:].isalnum())]
    model = save_tiny_checkpoint(tmp_path / "nl.pt", words)[2]
    runner = CliRunner()

    def run(*args, input=None):
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)

    text = run("gold-text", "--gold", "alpino-test").stdout
    assert len(text.splitlines()) == len(gold)
    pretok = run("induce", "-", "-m", model, "--pretokenized", input=text).stdout
    piped = json.loads(run("eval", "--gold", "alpino-test", "-", "--json", input=pretok).stdout)
    direct = json.loads(run("eval", "--gold", "alpino-test", "-m", model, "--json").stdout)
    assert {k: v for k, v in direct.items() if k not in ("model", "layer", "decoder")} == piped
    raw = run("induce", "-", "-m", model, input=text).stdout
    failed = run("eval", "--gold", "alpino-test", "-", input=raw)
    assert failed.exit_code == 1 and "induce --pretokenized" in failed.stderr

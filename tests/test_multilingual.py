"""NLTK's Dutch, Spanish and Portuguese treebanks: named gold sets, what NLTK's readers set
aside, and the held-out split shared by the gold sets and the language-model corpora."""
import os

import pytest

from onparse.multilingual import TREEBANKS, read_treebank, split_of, text_sentences
from onparse.treebank import load_gold


def _need(name):
    from onparse.data import is_installed

    if not is_installed(name):
        if os.environ.get("CI"):
            pytest.fail(f"NLTK package '{name}' not found")
        pytest.skip(f"no {name}")


def test_split_is_five_and_ten_percent_blocks():
    parts = [split_of(i, 7000) for i in range(7000)]
    assert parts.count("valid") == 350 and parts.count("test") == 700
    assert parts[:56] == ["train"] * 56 and parts[56:63] == ["valid"] * 7  # blocks of 7 sentences


# Sentences, flat recoveries (left out of the gold), and words of the <=10-word held-out set.
EXPECTED = {"alpino": (7136, 161), "cess_esp": (6030, 30), "floresta": (9266, 71)}


@pytest.mark.parametrize("name", list(TREEBANKS))
def test_named_gold_sets(name):
    _need(name)
    read = read_treebank(name)
    n, flat = EXPECTED[name]
    assert len(read.sexprs) == n and read.flat == flat
    full, short, test, short_test = (load_gold(f"{name}{suffix}") for suffix in ("", "10", "-test", "10-test"))
    assert len(full) == n - flat - sum(1 for s in read.sexprs if s is not None and not _has_word(s, full.tagset))
    assert all(len(s) <= 10 for s in short) and len(short) == sum(len(s) <= 10 for s in full)
    assert {s.source for s in short_test} <= {s.source for s in test} <= {s.source for s in full}
    assert 0.08 * len(full) < len(test) < 0.12 * len(full)
    assert full.tagset == TREEBANKS[name] and any("flat" in note for note in full.notes)
    # Tag sets drop punctuation and empty elements: no gold word is punctuation-only or *0*.
    from onparse.text import is_punct

    words = [w for s in full for w in s.words]
    assert sum(is_punct(w) for w in words) < 0.002 * len(words) and "*0*" not in words


def _has_word(sexpr, tagset):
    from onparse.tagsets import get
    from onparse.treebank import preprocess

    return preprocess(sexpr, labelled=True, tagset=get(tagset)) is not None


@pytest.mark.parametrize("name", list(TREEBANKS))
def test_held_out_sentences_are_never_training_or_validation_text(name):
    _need(name)
    test = {tuple(s.tokens) for s in load_gold(f"{name}-test")}
    seen = {tuple(s) for part in ("train", "valid") for s in text_sentences(name, part)}
    assert test and not (test & seen - _duplicates(name))


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

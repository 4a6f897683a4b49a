"""onparse.gold.treebank: preprocessing per ``docs/onlstm.md`` section 4, gold sets from the NLTK sample,
an LDC-style folder (built from the sample at test time), files and folders."""
import shutil
from pathlib import Path

import pytest

from onparse.errors import OnparseError
from onparse.text.tokens import WORD_TAGS
from onparse.gold.treebank import (
    GOLD_NAMES,
    PTB_ROOT_ENV,
    base_label,
    find_sections,
    is_gold_spec,
    load_gold,
    read_gold_text,
)
from onparse.trees.tree import tree_spans

# ---------------------------------------------------------------- preprocessing

SAID = """\
( (S
    (NP-SBJ-1 (DT The) (NN dog) )
    (VP (VBD said)
      (SBAR (-NONE- 0)
        (S
          (NP-SBJ (PRP it) )
          (VP (VBD ran)
            (NP-EXT (CD 3,200) (NNS yards) )
            (PP-DIR (IN to)
              (NP (NNP U.S.) (NNS farms) ))))))
    (, ,)
    (NP-TMP (NNP Friday) )
    (. .) ))
"""


def test_preprocessing_of_one_tree():
    [s] = read_gold_text(SAID, "said.mrg")
    assert s.words == ("The", "dog", "said", "it", "ran", "3,200", "yards", "to", "U.S.", "farms", "Friday")
    assert s.tokens == ("the", "dog", "said", "it", "ran", "N,N", "yards", "to", "u.s.", "farms", "friday")
    assert s.source == "said.mrg:1"
    # (0,2) NP, (2,10) VP, (3,10) SBAR=S (unary chain after -NONE- removal), (4,10) VP,
    # (5,7) NP, (7,10) PP, (8,10) NP, (0,11) S; one-word NP-SBJ / NP-TMP are not constituents
    assert s.spans == {(0, 11), (0, 2), (2, 10), (3, 10), (4, 10), (5, 7), (7, 10), (8, 10)}
    assert s.labelled == {
        ("S", (0, 11)), ("NP", (0, 2)), ("VP", (2, 10)), ("SBAR", (3, 10)), ("S", (3, 10)),
        ("VP", (4, 10)), ("NP", (5, 7)), ("PP", (7, 10)), ("NP", (8, 10)),
    }
    assert s.tree == (
        ("the", "dog"),
        ("said", ("it", ("ran", ("N,N", "yards"), ("to", ("u.s.", "farms"))))),
        "friday",
    )
    assert set(tree_spans(s.tree)) == s.spans


def test_word_tags_filter_currency_and_symbols():
    text = "(S (NP ($ $) (CD 5) (-NONE- *U*)) (VP (VBZ is) (NP (NN %) (SYM *))) (# #) (`` ``) (-LRB- -LRB-))"
    [s] = read_gold_text(text, "t")
    assert s.words == ("5", "is", "%", "*")
    assert s.spans == {(0, 4), (1, 4), (2, 4)}


def test_a_file_of_one_word_labelled_trees_is_labelled():
    [s] = read_gold_text("( (S (NN Yes) (. .)) )\n", "t")
    assert s.words == ("Yes",)
    assert [g.words for g in read_gold_text("(yes)\n(no)\n", "t")] == [("yes",), ("no",)]


def test_a_tree_without_kept_words_is_skipped():
    assert read_gold_text("( (X (-NONE- *) (. .)) )\n( (S (NN yes) (. .)) )", "t")[0].tokens == ("yes",)


@pytest.mark.parametrize(
    "label, base",
    [("NP-SBJ-1", "NP"), ("NP=2", "NP"), ("PP-LOC-CLR", "PP"), ("-NONE-", "-NONE-"), ("S", "S"), ("WHNP-3", "WHNP")],
)
def test_base_label(label, base):
    assert base_label(label) == base


def test_unlabelled_gold_file(tmp_path):
    path = tmp_path / "gold.txt"
    path.write_text("((The cat) sat)\n(a (b (c d)))\nyes\n")
    gold = load_gold(str(path))
    assert gold.tokens == [("the", "cat", "sat"), ("a", "b", "c", "d"), ("yes",)]
    assert gold[1].spans == {(0, 4), (1, 4), (2, 4)}
    assert gold[0].labelled == frozenset()


def test_malformed_labelled_gold_names_the_line(tmp_path):
    path = tmp_path / "bad.mrg"
    path.write_text("(S (NP (DT the) (NN cat)) (VBD sat))\n(S (NP (DT a) (NN dog)) barked)\n")
    with pytest.raises(OnparseError, match=r"bad.mrg line 2: malformed labelled tree"):
        load_gold(str(path))
    path.write_text("(S (NP (DT the) (NN cat)) (VBD sat))\n(S (NP (DT a) (NN dog))\n")
    with pytest.raises(OnparseError, match=r"bad.mrg line 2: unbalanced parentheses"):
        load_gold(str(path))


def test_files_and_folders(tmp_path):
    folder = tmp_path / "trees"
    (folder / "sub").mkdir(parents=True)
    (folder / "b.mrg").write_text("( (S (NP (DT a) (NN dog)) (VP (VBD barked))) )\n")
    (folder / "sub" / "a.mrg").write_text("( (S (NP (DT the) (NN cat))\n   (VP (VBD sat))) )\n")
    (folder / "notes.txt").write_text("not a tree")
    gold = load_gold(str(folder))
    assert gold.tokens == [("a", "dog", "barked"), ("the", "cat", "sat")]  # sorted by path
    (tmp_path / "empty").mkdir()
    with pytest.raises(OnparseError, match="holds no .mrg files"):
        load_gold(str(tmp_path / "empty"))
    (tmp_path / "blank.txt").write_text("\n\n")
    with pytest.raises(OnparseError, match="holds no trees"):
        load_gold(str(tmp_path / "blank.txt"))


def test_unknown_names_and_missing_ldc(monkeypatch):
    monkeypatch.delenv(PTB_ROOT_ENV, raising=False)
    with pytest.raises(OnparseError, match="unknown gold 'wsj11'"):
        load_gold("wsj11")
    for name in ("wsj-test", "wsj-valid"):
        with pytest.raises(OnparseError, match="needs the LDC Penn Treebank: pass --ptb-root"):
            load_gold(name)
    assert is_gold_spec("wsj10") and not is_gold_spec("wsj11")


# ---------------------------------------------------------------- the NLTK sample


@pytest.fixture(scope="module")
def sample(nltk_treebank):
    return load_gold("wsj")


def test_sample_counts(sample, monkeypatch, nltk_treebank):
    monkeypatch.delenv(PTB_ROOT_ENV, raising=False)
    assert len(sample) == 3914
    wsj10 = load_gold("wsj10")
    assert len(wsj10) == 555
    assert all(len(s) <= 10 for s in wsj10)
    assert wsj10[0] in sample.sentences
    assert sample[0].words[:3] == ("Pierre", "Vinken", "61")
    assert sample[0].tokens[:3] == ("pierre", "vinken", "N")
    assert load_gold("wsj") is sample  # cached


def test_sample_agrees_with_an_nltk_based_reading(sample):
    """Independent reading with nltk.Tree of every 10th file: same words and spans."""
    import nltk
    from nltk.corpus import treebank

    by_file = {}
    for s in sample:
        by_file.setdefault(s.source.split(":")[0], []).append(s)
    assert sorted(by_file) == treebank.fileids()
    for fileid in treebank.fileids()[::10]:
        trees = treebank.parsed_sents(fileid)
        assert len(trees) == len(by_file[fileid])
        for tree, ours in zip(trees, by_file[fileid]):
            kept = {pos: None for pos, (_, tag) in zip(tree.treepositions("leaves"), tree.pos()) if tag in WORD_TAGS}
            for k, pos in enumerate(kept):
                kept[pos] = k
            spans = set()
            for pos in tree.treepositions():
                node = tree[pos]
                if isinstance(node, nltk.Tree):
                    inside = [kept[pos + rel] for rel in node.treepositions("leaves") if pos + rel in kept]
                    if len(inside) >= 2:
                        spans.add((inside[0], inside[-1] + 1))
            assert ours.words == tuple(tree[p] for p in kept)
            assert ours.spans == spans


def test_sample_halves_dev_and_test(sample, monkeypatch):
    """Section 00 is dev, section 01 test: disjoint, together the sample, in its order; their
    sizes and right-branching scores are those issue 32 measured independently."""
    from onparse.trees.baselines import baseline_trees
    from onparse.scores.metrics import evaluate

    monkeypatch.delenv(PTB_ROOT_ENV, raising=False)
    dev, test = load_gold("wsj-sample-dev"), load_gold("wsj-sample-test")
    assert (len(dev), len(test)) == (1921, 1993)
    assert dev.sentences + test.sentences == sample.sentences
    assert {s.source[:8] for s in dev} == {f"wsj_{i:04d}" for i in range(1, 100)}
    assert {s.source[:8] for s in test} == {f"wsj_{i:04d}" for i in range(100, 200)}
    short = {name: load_gold(name) for name in ("wsj10-sample-dev", "wsj10-sample-test")}
    assert [len(g) for g in short.values()] == [270, 285]
    assert short["wsj10-sample-dev"].sentences == tuple(s for s in dev if len(s) <= 10)
    right = {g.name: round(100 * evaluate(baseline_trees(g.tokens, "right"), g).sentence_f1.f1, 1)
             for g in (dev, test, *short.values())}
    assert right == {"wsj-sample-dev": 39.9, "wsj-sample-test": 39.9, "wsj10-sample-dev": 59.0,
                     "wsj10-sample-test": 58.2}


# ---------------------------------------------------------------- LDC layout


@pytest.fixture()
def ldc_root(tmp_path, nltk_treebank):
    """parsed/mrg/wsj with sections 00 and 01 from the sample, 22 and 23 from copies of it."""
    import nltk

    combined = Path(nltk.data.find("corpora/treebank/combined"))
    files = sorted(combined.glob("wsj_*.mrg"))
    wsj = tmp_path / "parsed" / "mrg" / "wsj"
    for file in files:
        number = int(file.stem[4:])
        section = wsj / f"{number // 100:02d}"
        section.mkdir(parents=True, exist_ok=True)
        shutil.copy(file, section / file.name)
    for section, chosen in (("22", files[0:3]), ("23", files[3:8])):
        (wsj / section).mkdir()
        for k, file in enumerate(chosen):
            shutil.copy(file, wsj / section / f"wsj_{section}{k:02d}.mrg")
    return wsj


def _count(files):
    return sum(len(read_gold_text(f.read_text(), f.name)) for f in files)


def test_ldc_layout_sections(ldc_root, monkeypatch):
    monkeypatch.delenv(PTB_ROOT_ENV, raising=False)
    test = load_gold("wsj-test", ptb_root=ldc_root)
    valid = load_gold("wsj-valid", ptb_root=ldc_root)
    assert len(test) == _count(sorted((ldc_root / "23").glob("*.mrg")))
    assert len(valid) == _count(sorted((ldc_root / "22").glob("*.mrg")))
    assert test[0].source.startswith("23/wsj_2300.mrg:")
    assert test.tokens[0] == load_gold("wsj")[_count(sorted((ldc_root / "00").glob("*.mrg"))[:3])].tokens
    # wsj10 from every section: the sample's 555 plus the short ones in the copies
    extra = sum(1 for s in test if len(s) <= 10) + sum(1 for s in valid if len(s) <= 10)
    assert len(load_gold("wsj10", ptb_root=ldc_root)) == 555 + extra
    assert len(load_gold("wsj", ptb_root=ldc_root)) == 3914 + len(test) + len(valid)


def test_ldc_layout_sample_halves_are_sections_00_and_01(ldc_root, monkeypatch):
    monkeypatch.delenv(PTB_ROOT_ENV, raising=False)
    for name in ("wsj-sample-dev", "wsj10-sample-test"):
        ldc = load_gold(name, ptb_root=ldc_root)
        nltk_half = load_gold(name)
        assert ldc.tokens == nltk_half.tokens and [s.spans for s in ldc] == [s.spans for s in nltk_half]
        assert ldc[0].source.startswith("00/" if "dev" in name else "01/")


def test_ldc_root_from_the_environment_and_parent_folders(ldc_root, monkeypatch):
    monkeypatch.setenv(PTB_ROOT_ENV, str(ldc_root.parent))  # parsed/mrg is accepted too
    assert len(load_gold("wsj-test")) > 0
    assert find_sections(ldc_root.parent.parent) == ldc_root


def test_ldc_root_errors(tmp_path, ldc_root):
    with pytest.raises(OnparseError, match="no section folders"):
        load_gold("wsj-test", ptb_root=tmp_path / "nowhere")
    shutil.rmtree(ldc_root / "23")
    with pytest.raises(OnparseError, match="section 23 has no .mrg files"):
        load_gold("wsj-test", ptb_root=ldc_root)


def test_gold_names_are_documented():
    from click.testing import CliRunner

    from onparse.cli import main

    assert GOLD_NAMES[:8] == ("wsj10", "wsj", "wsj-sample-dev", "wsj10-sample-dev", "wsj-sample-test",
                              "wsj10-sample-test", "wsj-test", "wsj-valid")
    assert {"alpino", "alpino10", "alpino-test", "alpino10-test", "cess_esp10", "floresta-test"} <= set(GOLD_NAMES)
    help_text = " ".join(CliRunner().invoke(main, ["eval", "--help"], terminal_width=400).output.split())
    assert all(name in help_text for name in GOLD_NAMES)


def test_normalisation_is_idempotent_on_every_gold_word():
    """normalize(normalize(w)) == normalize(w) for every word of the WSJ sample, except the
    documented case: digits glued to letters, also across a period (``A4`` -> ``aN`` -> ``an``,
    ``Sept.30``)."""
    import re

    from onparse.text.tokens import normalize_word

    pytest.importorskip("nltk")
    from onparse.text.data import is_installed

    if not is_installed("treebank"):
        pytest.skip("no treebank")
    words = {w for s in load_gold("wsj") for w in s.words}
    broken = {w for w in words if normalize_word(normalize_word(w)) != normalize_word(w)}
    glued = re.compile(r"[^\W\d_]\.?\d|\d\.?[^\W\d_]")
    assert not [w for w in broken if not glued.search(w)]
    assert len(broken) < 0.01 * len(words)

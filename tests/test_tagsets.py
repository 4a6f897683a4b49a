"""Treebanks in any tag set: presets, detection, explicit lists, and reading independent of case."""
from collections import Counter

import pytest

from onparse.gold import tagsets
from onparse.gold.treebank import load_gold, read_gold_text

PTB = "(S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))"
ALPINO = "(top (smain (np (det de) (noun kat)) (verb zat) (pp (prep op) (np (det de) (noun mat)))) (punct .))"
CESS = ("(S (sn-SUJ (sn.e-SUJ *0*)) (grup.verb (vmis3s0 vio)) (sn-CD (espec.ms (da0ms0 el)) "
        "(grup.nom.ms (ncms000 gato))) (Fc ,) (sadv (rg hoy)) (Fp .))")
FLORESTA = "(STA+fcl (SUBJ+np (>N+art O) (H+n gato)) (P+v-fin dormiu) (ADVL+adv bem) (. .))"
# STTS-like German tags: uppercase, but no preset knows them.
STTS = "(S (NP (ART Die) (NN Katze)) (VVFIN schlief) ($. .))"


@pytest.mark.parametrize("text,preset,words", [
    (PTB, "ptb", ["The", "cat", "sat", "on", "the", "mat"]),
    (ALPINO, "alpino", ["de", "kat", "zat", "op", "de", "mat"]),
    (CESS, "cess_esp", ["vio", "el", "gato", "hoy"]),
    (FLORESTA, "floresta", ["O", "gato", "dormiu", "bem"]),
    (STTS, "unicode", ["Die", "Katze", "schlief"]),
])
def test_each_preset_is_detected_and_keeps_the_words(text, preset, words):
    notes = []
    sentence, *_ = read_gold_text("\n".join([text] * 3), "t.mrg", notes=notes)
    assert list(sentence.words) == words
    assert f"tag set {preset}" in notes[0] or (preset == "unicode" and "match no preset" in notes[0])


def test_lowercase_labels_are_labels_not_words():
    # alpino's lowercase labels and tags once became "words": 24,620 instead of 8,024.
    (sentence,) = read_gold_text(ALPINO, "a.mrg")
    assert len(sentence) == 6 and sentence.labelled  # labels kept: np, pp, smain ...
    assert {label for label, _ in sentence.labelled} >= {"np", "pp"}


def test_explicit_tag_lists_and_names_override_detection():
    custom = tagsets.resolve(None, ["punct"], ["det"])
    (sentence,) = read_gold_text(ALPINO, "a.mrg", tagset=custom)
    assert list(sentence.words) == ["kat", "zat", "op", "mat"]
    prefix = tagsets.custom(["F*"], ["sn.e*"])
    (sentence,) = read_gold_text(CESS, "c.mrg", tagset=prefix)
    assert list(sentence.words) == ["vio", "el", "gato", "hoy"]
    with pytest.raises(ValueError, match="not both"):
        tagsets.resolve("ptb", ["X"])
    with pytest.raises(ValueError, match="unknown tag set"):
        tagsets.resolve("stts")
    assert tagsets.resolve("auto") is None and tagsets.resolve("floresta").name == "floresta"


def test_detection_needs_nearly_all_tags_known():
    ptb = Counter({"NN": 50, "DT": 30, ",": 10})
    assert tagsets.detect(ptb)[0].name == "ptb"
    ptb["VVFIN"] = 10  # 10% unknown: not PTB any more
    chosen, share = tagsets.detect(ptb)
    assert chosen.name == "unicode" and 0.8 < share < 0.95


def test_ptb_preset_reproduces_the_word_tag_filter():
    # The definitions' 36-tag rule: currency and empty elements go, % and & stay.
    text = "(S (NP ($ $) (CD 5) (NN %)) (CC &) (-NONE- *T*-1) (`` ``) (NNP US$))"
    (sentence,) = read_gold_text(text, "p.mrg", tagset=tagsets.get("ptb"))
    assert list(sentence.words) == ["5", "%", "&", "US$"]


def test_cli_eval_prints_the_choice_and_takes_overrides(tmp_path):
    from click.testing import CliRunner

    from onparse.cli import main

    gold = tmp_path / "g.mrg"
    gold.write_text("\n".join([ALPINO] * 4))
    pred = tmp_path / "p.txt"
    pred.write_text("((de kat) (zat (op (de mat))))\n" * 4)
    result = CliRunner().invoke(main, ["eval", "--gold", str(gold), str(pred)])
    assert result.exit_code == 0, result.output
    assert "tag set alpino detected" in result.stderr
    # The same trees read with a list that also drops determiners no longer fit: a clear error.
    bad = CliRunner().invoke(main, ["eval", "--gold", str(gold), str(pred), "--punct-tags", "punct,det"])
    assert bad.exit_code == 1 and "does not match gold sentence 1" in bad.stderr
    usage = CliRunner().invoke(main, ["eval", "--gold", str(gold), str(pred), "--tagset", "ptb", "--punct-tags", "x"])
    assert usage.exit_code == 2 and "not both" in usage.stderr


def test_a_tag_set_no_preset_knows_falls_back_with_a_note(tmp_path):
    from click.testing import CliRunner

    from onparse.cli import main

    gold = tmp_path / "stts.mrg"
    gold.write_text("\n".join([STTS] * 2))
    result = CliRunner().invoke(main, ["baseline", "--gold", str(gold), "--kind", "right"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "(die (katze schlief))\n" * 2  # baselines are over the normalised tokens
    assert "match no preset" in result.stderr and "Unicode word rule" in result.stderr
    assert load_gold(str(gold)).tagset == "unicode"


def test_predictions_may_keep_punctuation_that_their_tags_identify(tmp_path):
    from onparse.scores.predicted import score_text

    gold = tmp_path / "g.mrg"
    gold.write_text(PTB + "\n")
    # Another parser's PTB output, with its "." still there: dropped by tag, as EVALB does.
    result = score_text(PTB + "\n", load_gold(str(gold)))
    assert result.sentence_f1.f1 == 1.0

"""``research/distill_text.py`` (the students' text, rule v8) and ``research/distill_probe.py``
(the first distillation probe, for reading only): their helpers on made-up inputs, and the probe
end to end on a toy text with a tiny language model as its teacher and a three-sentence gold file
as its dev half."""
import json
import sys

import pytest
import torch

from lab import load_script

pytestmark = pytest.mark.usefixtures("one_thread")


def test_distill_text_writes_news_training_part_one_sentence_a_line(tmp_path, monkeypatch):
    script = load_script("distill_text")
    asked = []

    class Corpus:
        train = [["The", "cat", "sat"], ["It", "rained", "N"]]

    monkeypatch.setattr(script, "make_spec", lambda name: asked.append(name) or name)
    monkeypatch.setattr(script, "load_corpus", lambda spec: Corpus)
    out = tmp_path / "distill" / "news-train.txt"           # its folder does not exist yet
    script.main(str(out))
    assert asked == ["news"]
    assert out.read_text(encoding="utf-8") == "The cat sat\nIt rained N\n"


@pytest.fixture()
def probe():
    return load_script("distill_probe")


def test_read_data_keeps_sentences_of_2_to_max_words_with_a_tree(probe, tmp_path):
    from onparse.trees.tree import parse_brackets, tree_spans

    text = tmp_path / "text.txt"
    trees = tmp_path / "trees.txt"
    text.write_text("the cat sat\nalone\na b c d e\nno tree here\nthe dog ran\n", encoding="utf-8")
    trees.write_text("((the cat) sat)\nalone\n(a (b (c (d e))))\n\n(the (dog ran))\n", encoding="utf-8")
    sentences, spans = probe.read_data(str(text), str(trees), max_words=4)
    assert sentences == [["the", "cat", "sat"], ["the", "dog", "ran"]]
    assert spans == [tree_spans(parse_brackets("((the cat) sat)")), tree_spans(parse_brackets("(the (dog ran))"))]


def test_batches_cover_every_sentence_once_in_chunks_of_similar_length(probe):
    import random

    lengths = [5, 1, 9, 3, 3, 7, 2, 8, 4, 6, 10]
    chunks = probe.batches(range(len(lengths)), lengths, 3, random.Random(0))
    assert sorted(i for chunk in chunks for i in chunk) == list(range(len(lengths)))
    assert [len(c) for c in chunks].count(3) == 3 and all(1 <= len(c) <= 3 for c in chunks)
    spans = sorted((min(lengths[i] for i in c), max(lengths[i] for i in c)) for c in chunks)
    assert all(hi <= next_lo for (_, hi), (next_lo, _) in zip(spans, spans[1:]))   # lengths never interleave


def test_encode_pads_with_zeros_and_reads_normalised_words(probe):
    from onparse.text.vocab import Vocabulary

    vocab = Vocabulary.build([["the", "cat", "N"]])
    ids, lengths = probe.encode([["The", "cat"], ["the", "cat", "1984"]], vocab)
    assert lengths.tolist() == [2, 3] and ids.shape == (2, 3)
    assert ids[0].tolist() == [vocab.index("the"), vocab.index("cat"), 0]
    assert ids[1, 2].item() == vocab.index("N")


def test_probe_end_to_end_on_a_toy_text(probe, seed_runs, gold_file, tmp_path, monkeypatch):
    import onparse.api
    import onparse.gold.treebank as treebank
    from onparse.scores.metrics import evaluate
    from onparse.student.config import StudentConfig
    from onparse.student.model import SpanStudent

    teacher_path = f"{seed_runs[0]}/best.pt"
    real_load, real_gold = onparse.api.load, treebank.load_gold
    monkeypatch.setattr(onparse.api, "load", lambda *args, **kw: real_load(teacher_path, "cpu"))
    monkeypatch.setattr(treebank, "load_gold", lambda name: real_gold(str(gold_file)))
    words = [line.split() for line in
             ["the cat saw a dog", "every old man liked the bird", "a dog found the cat"] * 4]
    (tmp_path / "text.txt").write_text("".join(" ".join(w) + "\n" for w in words), encoding="utf-8")
    right_branching = ["(" + " (".join(w[:-1]) + f" {w[-1]}" + ")" * (len(w) - 1) for w in words]
    assert right_branching[0] == "(the (cat (saw (a dog))))"
    (tmp_path / "trees.txt").write_text("\n".join(right_branching) + "\n", encoding="utf-8")
    out = tmp_path / "probe"
    monkeypatch.setattr(sys, "argv", ["distill_probe.py", "--text", str(tmp_path / "text.txt"), "--trees",
                                      str(tmp_path / "trees.txt"), "--out", str(out), "--minutes", "0",
                                      "--threads", "1", "--batch", "4"])
    probe.main()

    teacher, evaluation = (json.loads(line) for line in (out / "probe.jsonl").read_text().splitlines())
    gold = real_gold(str(gold_file))
    expected = evaluate(real_load(teacher_path, "cpu").trees([list(s.words) for s in gold]), gold).sentence_f1.f1
    assert teacher == {"event": "teacher", "dev": {"all": expected, "10": expected}, "sentences": len(words)}
    assert (evaluation["event"], evaluation["epoch"], evaluation["step"]) == ("eval", 1, 1)   # stopped after a step
    assert set(evaluation["dev"]) == {"all", "10"} and all(0 <= f <= 1 for f in evaluation["dev"].values())
    saved = torch.load(out / "student.pt", weights_only=False)
    student = SpanStudent(StudentConfig(**saved["config"]))
    student.load_state_dict(saved["state_dict"])
    assert {w for s in words for w in s} <= set(saved["vocab"])

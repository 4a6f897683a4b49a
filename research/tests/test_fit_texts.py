"""``research/fit_texts.py`` (rule v10, 56): a treebank's training sentences, one a line, and
nothing of its dev or test parts."""
from lab import load_script


def test_writes_the_training_part_only(tmp_path, monkeypatch):
    script = load_script("fit_texts")
    asked = []

    def sentences(name, split):
        asked.append((name, split))
        return [["een", "zin"], ["nog", "een", "zin"]]
    monkeypatch.setattr(script, "text_sentences", sentences)
    path = script.write_text("alpino", str(tmp_path))
    assert open(path, encoding="utf-8").read() == "een zin\nnog een zin\n"
    assert asked == [("alpino", "train")] and path.endswith("fit-text-alpino.txt")

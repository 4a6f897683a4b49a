"""``research/explore_recipes.py`` (issue 39 after rule v22, dev only): its gold-free signals of a
fit, checked on a tiny fit against the public API and by hand."""
import json

from click.testing import CliRunner
from nltk import Tree

from lab import load_script, write_corpus


def test_mean_agreement_by_hand():
    script = load_script("explore_recipes")
    right = Tree.fromstring("(S a (S b (S c d)))")
    left = Tree.fromstring("(S (S (S a b) c) d)")
    two = Tree.fromstring("(S a b)")                      # fewer than 3 words: not counted
    assert script.mean_agreement([right, right, two], [right, left, two]) == 0.5


def test_signals_of_a_tiny_fit(tmp_path, monkeypatch, capsys):
    from onparse.cli import main

    text = write_corpus(tmp_path / "text.txt", n_sentences=400, seed=3)
    out = CliRunner().invoke(main, ["fit", str(text), "--out", str(tmp_path / "f.pt"), "--seeds", "1", "--preset", "tiny",
                                    "--grammars", "1", "--grammar-preset", "tiny", "--grammar-vocab", "50",
                                    "--epochs", "1", "--threads", "1", "--limit", "20", "-q"])
    assert out.exit_code == 0, out.output
    script = load_script("explore_recipes")
    run_dir = str(tmp_path / "f.fit")
    got = script.signals(run_dir)
    choice = json.loads((tmp_path / "f.fit" / "choice.json").read_text())
    grammars = [m for m in choice["members"] if m["run"] == "grammar-1"]
    assert got["settings"] == {"grammar_vocab": 50, "grammar_curriculum": None}
    assert got["kept"] == f"{len(grammars)}/1" and got["lean_right"] == choice["lean"]["right"]
    scores = [m["agreement"] for m in choice["member_scores"]]
    assert got["members"] == round(sum(scores) / len(scores), 5)
    assert ("grammars_vs_lms" in got) == bool(grammars)      # only with a kept grammar to compare
    if grammars:
        assert 0.0 <= got["grammars_vs_lms"] <= 1.0
    records = tmp_path / "dev.jsonl"
    records.write_text(json.dumps({"bundle": str(tmp_path / "f.pt"), "dev": {"bundle": 0.4, "oracle": 0.5}}) + "\n")
    monkeypatch.setattr("sys.argv", ["explore_recipes.py", run_dir, "--dev-records", str(records)])
    script.main()
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed == {**got, "dev": {"bundle": 0.4, "oracle": 0.5}}

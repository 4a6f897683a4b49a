"""One meaning per option name across commands (issue 54.5): -q everywhere long work runs, one
meaning of --threads, presets listed per family, one name for the baseline trees, one way to
write a figure, deprecated spellings hidden from --help but still accepted with a note."""
import click
import pytest
from click.testing import CliRunner

from conftest import save_tiny_checkpoint, write_corpus
from onparse.cli import main


def invoke(*args, **kwargs):
    return CliRunner().invoke(main, [str(a) for a in args], **kwargs)


def help_text(*command) -> str:
    """A command's --help with its lines joined (click wraps them anywhere)."""
    result = invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_deprecated_spellings_are_hidden_from_every_help():
    shown = []
    for name, command in main.commands.items():
        for param in command.params:
            if isinstance(param, click.Option) and (param.help or "").startswith("Deprecated") and not param.hidden:
                shown.append(f"{name} {param.opts[0]}")
    assert shown == []
    assert "--format [" not in help_text("train") and "--format [" not in help_text("perplexity")
    assert "--bundle" not in help_text("agreement")
    show = help_text("show")
    assert "--png" not in show and "--svg" not in show and "-o, --out" in show
    assert "--beside" not in help_text("eval") and "--kind" not in help_text("baseline")
    assert "--threads INTEGER" not in help_text("fit") and "--cores INTEGER" in help_text("fit")


def test_one_name_for_the_baseline_trees_and_the_old_ones_still_work():
    new = invoke("baseline", "--gold", "wsj10", "--baseline", "left")
    old = invoke("baseline", "--gold", "wsj10", "--kind", "left")
    assert new.exit_code == old.exit_code == 0, old.output
    assert new.stdout == old.stdout and new.stderr == ""
    assert old.stderr == "note: --kind is deprecated here: use --baseline\n"
    assert "--baseline [right|left|balanced|random]" in help_text("eval")
    assert invoke("baseline", "--gold", "wsj10").exit_code == 2          # a kind is still needed
    both = invoke("baseline", "--kind", "left", "--baseline", "right")
    assert both.exit_code == 2 and "give one of them" in both.output


def test_eval_beside_is_the_old_spelling_of_baseline(tmp_path):
    trees = invoke("baseline", "--gold", "wsj10", "--baseline", "right").stdout
    new = invoke("eval", "--gold", "wsj10", "--baseline", "left", "--json", "-", input=trees)
    old = invoke("eval", "--gold", "wsj10", "--beside", "left", "--json", "-", input=trees)
    # with PRED, a baseline goes with a model only: the same usage error under either name
    assert new.exit_code == old.exit_code == 2
    assert "--baseline goes with a model" in new.output and "--baseline goes with a model" in old.output


def test_show_writes_a_figure_one_way_and_the_old_ways_still_work(tmp_path):
    pytest.importorskip("matplotlib")
    _, _, model = save_tiny_checkpoint(tmp_path / "m.pt", "the cat sat".split())
    png = tmp_path / "old.png"
    old = invoke("show", "the", "cat", "sat", "-m", model, "--png", png)
    assert old.exit_code == 0, old.output
    assert "note: --png is deprecated here: use --out FILE.png" in old.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = tmp_path / "old.svg"
    assert invoke("show", "the", "cat", "-m", model, "--svg", svg).exit_code == 0 and "<svg" in svg.read_text()


def test_train_takes_quiet(tmp_path, monkeypatch):
    import onparse.progress as progress

    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    corpus = write_corpus(tmp_path / "toy.txt", n_sentences=60)
    args = ["train", "--preset", "tiny", "--threads", "1", "--corpus", corpus, "--epochs", 1]
    quiet = invoke(*args, "-q", "--out", tmp_path / "quiet")
    assert quiet.exit_code == 0, quiet.output
    assert "epoch 1/1: " not in quiet.stderr and "best valid ppl" in quiet.stdout
    assert "-q, --quiet" in help_text("train")
    both = invoke(*args, "-q", "--progress", "--out", tmp_path / "both")
    assert both.exit_code == 2 and "--quiet" in both.output


def test_fit_threads_is_cores_and_the_old_name_still_works(tmp_path, monkeypatch):
    import onparse
    from onparse.errors import OnparseError

    seen = []

    def fake_fit(text, out, settings, **kwargs):
        seen.append(settings.cores)
        raise OnparseError("stopped by the test")

    monkeypatch.setattr(onparse, "fit", fake_fit)
    text = write_corpus(tmp_path / "t.txt", n_sentences=20)
    new = invoke("fit", text, "--out", tmp_path / "a.pt", "--cores", 2)
    old = invoke("fit", text, "--out", tmp_path / "b.pt", "--threads", 2)
    assert new.exit_code == old.exit_code == 1 and seen == [2, 2], old.output
    assert "note: --threads is deprecated here: use --cores" in old.stderr
    fit = help_text("fit")
    assert "--cores INTEGER RANGE CPU cores to use in all" in fit
    # elsewhere --threads is this process's threads, and says so
    for command in ("train", "induce", "eval", "distill"):
        assert "--threads INTEGER RANGE CPU threads of this process" in help_text(command), command


def test_presets_are_listed_per_family():
    from onparse import GRAMMAR_PRESETS, PRESETS

    train = help_text("train")
    assert f"lm: {', '.join(PRESETS)}" in train and f"grammar: {', '.join(GRAMMAR_PRESETS)}" in train
    fit = help_text("fit")
    assert f"--preset [{'|'.join(PRESETS)}]" in fit
    assert f"--grammar-preset [{'|'.join(GRAMMAR_PRESETS)}]" in fit
    bad = invoke("fit", "x.txt", "--out", "x.pt", "--preset", "medium")
    assert bad.exit_code == 2 and "medium" in bad.output


def test_train_help_writes_each_grammar_default_once():
    from dataclasses import fields

    from onparse import GrammarTraining

    train = help_text("train")
    for f in fields(GrammarTraining):
        words = f.metadata["help"].lower()
        assert train.lower().count(words) <= 1, words


def test_distill_takes_max_time(tmp_path):
    from conftest import NOUNS, VERBS, ADJS, DETS, PREPS

    words = [w.lower() for w in NOUNS + VERBS + ADJS + DETS + PREPS + ["Yesterday"]]
    _, _, teacher = save_tiny_checkpoint(tmp_path / "teacher.pt", words)
    text = write_corpus(tmp_path / "text.txt", n_sentences=120, seed=3)
    student = tmp_path / "student.pt"
    result = invoke("distill", text, "-m", teacher, "--out", student, "--epochs", 50, "--max-time", "0.001s",
                    "--batch-size", 4, "--embedding-size", 8, "--hidden-size", 8, "--mlp-size", 8, "--threads", 1,
                    "-q", "--json")
    assert result.exit_code == 0, result.output
    import json

    summary = json.loads(result.stdout)
    assert summary["stopped"] == "max-time" and summary["epochs"] == []      # stopped inside epoch 1
    assert student.is_file()
    again = invoke("distill", text, "-m", teacher, "--out", student, "--epochs", 1, "--resume",
                   "--batch-size", 4, "--embedding-size", 8, "--hidden-size", 8, "--mlp-size", 8, "--threads", 1,
                   "-q", "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["stopped"] == "epochs" and len(json.loads(again.stdout)["epochs"]) == 1
    assert "--max-time DURATION" in help_text("distill")

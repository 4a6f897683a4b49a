"""Perplexity of loaded models, files and bundles: ``perplexity.measure_model`` against a
direct computation, ``onparse.perplexity(parser)`` (one result per model), and ``onparse perplexity``
with ``-m``, a bundle, and the bundled model by default."""
import json
import math
import os

import pytest
import torch
from click.testing import CliRunner

import onparse
from onparse.members import Member
from onparse.files.bundle import save_bundle
from onparse.files.checkpoint import save_checkpoint
from onparse.lm.file import load_checkpoint
from onparse.lm.kind import load_model
from onparse.cli import main
from onparse.text.corpora import make_spec
from onparse.errors import OnparseError
from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
from onparse.lm.perplexity import measure_model
from onparse.files.pretrained import default_model_path
from onparse.text.vocab import Vocabulary

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat on a mat dog barked at it".split()
TEXT = "the cat sat on a mat .\nthe dog barked at the cat\na zebra sat on it\n"


def write_model(path, seed, n_layers=2, corpus=None):
    """An untrained checkpoint (perplexity needs no training) recording ``corpus`` (a spec dict)."""
    torch.manual_seed(seed)
    vocab = Vocabulary.build([WORDS])
    config = ModelConfig(vocab_size=len(vocab), embedding_size=8, hidden_size=8, n_layers=n_layers, chunk_size=4)
    meta = {"corpus": corpus} if corpus else {}
    save_checkpoint(str(path), config=config.to_dict(), vocab=vocab,
                    state_dict=ONLSTMLanguageModel(config).state_dict(), metadata=meta)
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two models recording a corpus whose test part is ``test.txt``, their bundle, and a text."""
    folder = tmp_path_factory.mktemp("ppl")
    (folder / "train.txt").write_text("the cat sat\n" * 30, encoding="utf-8")
    (folder / "valid.txt").write_text("a dog barked\n", encoding="utf-8")
    (folder / "test.txt").write_text(TEXT, encoding="utf-8")
    spec = make_spec(str(folder / "train.txt"), "auto", str(folder / "valid.txt"), str(folder / "test.txt"))
    one = write_model(folder / "one.pt", 1, corpus=spec.to_dict())
    two = write_model(folder / "two.pt", 2, corpus=spec.to_dict())
    bundle = folder / "bundle.pt"
    save_bundle(str(bundle), [load_checkpoint(one), load_checkpoint(two)],
                [Member(0, 2, "onlstm"), Member(1, 2, "onlstm")], weights="float32")
    text = folder / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    return {"one": one, "two": two, "bundle": str(bundle), "text": str(text)}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_measure_model_is_the_mean_cross_entropy_of_the_stream(files):
    loaded = load_model(files["one"])
    result = measure_model(loaded, files["text"], batch_size=1, bptt=1000)
    # One stream read in one window: the words and <eos> of every sentence, each predicted
    # from those before it ("." is dropped, "zebra" is <unk>).
    sentences = [line.replace(" .", "").split() for line in TEXT.splitlines()]
    ids = torch.tensor([i for s in sentences for i in loaded.vocab.encode(s) + [loaded.vocab.eos_id]])
    with torch.no_grad():
        out = loaded.model(ids[:-1, None], loaded.model.init_state(1))
        expected = torch.nn.functional.cross_entropy(loaded.model.logits(out.output).reshape(len(ids) - 1, -1),
                                                     ids[1:]).item()
    assert result.tokens == len(ids) - 1 and result.sentences == 3 and result.corpus == "text.txt"
    assert result.loss == pytest.approx(expected, rel=1e-5)
    assert result.perplexity == pytest.approx(math.exp(expected), rel=1e-5)
    # The parser's perplexity is measure_model over the loaded file.
    by_path = onparse.perplexity(onparse.load(files["one"], "cpu"), files["text"], batch_size=1, bptt=1000)
    assert by_path == [result]


def test_parser_perplexity_gives_one_result_per_model(files):
    # The models record files as their corpus; a model names a corpus, it does not choose what is read.
    parser = onparse.load(files["bundle"], "cpu")
    for attempt in (onparse.load(files["one"], "cpu"), parser):
        with pytest.raises(OnparseError, match="onparse opens no path that a model names: pass --corpus FILE"):
            onparse.perplexity(attempt)
    test = os.path.join(os.path.dirname(files["text"]), "test.txt")
    single = [onparse.perplexity(onparse.load(files[k], "cpu"), test)[0] for k in ("one", "two")]
    assert single[0].corpus == "test.txt" and single[0].sentences == 3
    assert single[0].loss != single[1].loss
    assert onparse.perplexity(parser, test) == single                 # each model of the bundle
    on_text = onparse.perplexity(parser, files["text"], batch_size=2)
    assert [r.corpus for r in on_text] == ["text.txt", "text.txt"]
    alone = {k: onparse.load(files[k], "cpu") for k in ("one", "two")}
    assert on_text == [onparse.perplexity(alone[k], files["text"], batch_size=2)[0] for k in ("one", "two")]
    assert onparse.perplexity(alone["one"], files["text"], batch_size=2) == on_text[:1]
    assert not hasattr(parser, "perplexity")           # a function beside the Parser, not a method


def test_cli_takes_m_and_reports_each_model_of_a_bundle(files):
    single = [json.loads(invoke("perplexity", "-m", files[k], "--corpus", files["text"], "--json").stdout)
              for k in ("one", "two")]
    assert single[0]["corpus"] == "text.txt" and single[0]["loss"] != single[1]["loss"]
    both = invoke("perplexity", "-m", files["bundle"], "--corpus", files["text"], "--json")
    assert both.exit_code == 0, both.output
    listed = json.loads(both.stdout)
    assert [r.pop("model") for r in listed] == [f"{files['bundle']} [1]", f"{files['bundle']} [2]"]
    assert listed == single
    lines = invoke("perplexity", "-m", files["bundle"], "--corpus", files["text"]).stdout.splitlines()
    assert len(lines) == 2
    for i, (line, record) in enumerate(zip(lines, single)):
        assert line.startswith(f"{files['bundle']} [{i + 1}]: text.txt: perplexity {record['perplexity']:.2f} (")


def test_cli_perplexity_takes_one_model(files):
    result = invoke("perplexity", "-m", files["one"], "-m", files["two"], "--corpus", files["text"])
    assert result.exit_code == 2 and "Usage:" in result.output
    assert "one model or bundle; --model was given 2 times" in result.output


def test_cli_perplexity_of_a_one_layer_model(files, tmp_path):
    path = write_model(tmp_path / "flat.pt", 3, n_layers=1)
    result = invoke("perplexity", "-m", path, "--corpus", files["text"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("text.txt: perplexity ")


@pytest.mark.skipif(default_model_path() is None, reason="this installation has no bundled model")
def test_cli_perplexity_defaults_to_the_bundled_model(files):
    default = invoke("perplexity", "--corpus", files["text"], "--json")
    assert default.exit_code == 0, default.output
    by_path = invoke("perplexity", "-m", default_model_path(), "--corpus", files["text"], "--json")

    def records(text):  # one record per model (a bundle: one per model in it)
        out = json.loads(text)
        return out if isinstance(out, list) else [out]

    implicit, explicit = records(default.stdout), records(by_path.stdout)
    from onparse.files.bundle import load_model_file

    # one per model that has a perplexity: the bundled model's student is passed over
    lms = [m for m in load_model_file(default_model_path())["models"] if m.get("kind") in (None, "grammar")]
    assert len(implicit) == len(explicit) == len(lms) >= 1
    for a, b in zip(implicit, explicit):
        assert a.pop("model").startswith("the bundled model") and b.pop("model").startswith(default_model_path())
        assert a == b


def test_perplexity_of_a_bundle_prints_a_line_a_minute_across_its_models(files, monkeypatch, capsys):
    """41.17: three models measured in 40 s each printed nothing in two minutes (each bar was
    under a minute); consecutive work now shares one clock, so a line comes every minute."""
    import onparse.lm.perplexity as perplexity
    import onparse.progress as progress

    clock = {"t": 1000.0}
    monkeypatch.setattr(progress, "now", lambda: clock["t"])
    monkeypatch.setattr(progress, "_shared", {"line": None, "closed": None})
    measured = perplexity.stream_loss

    def slow(*args, **kwargs):                    # each model's pass takes 40 s
        clock["t"] += 40.0
        return measured(*args, **kwargs)

    monkeypatch.setattr(perplexity, "stream_loss", slow)
    parser = onparse.load([files["one"], files["two"], files["one"]], "cpu")
    results = onparse.perplexity(parser, files["text"])
    lines = capsys.readouterr().err.splitlines()
    assert len(results) == 3 and len(lines) == 1, lines         # at 80 s (the second model), none before
    assert lines[0].startswith(f"perplexity of {files['two']} on text.txt: ") and "tokens (100%)" in lines[0]
    onparse.perplexity(parser, files["text"], quiet=True)
    assert capsys.readouterr().err == ""


def test_input_format_names_what_is_read_and_format_still_works(files):
    """41.14: --format is an output format everywhere else; perplexity and train read
    --input-format, and the old spelling works with a note."""
    new = invoke("perplexity", "-m", files["one"], "--corpus", files["text"], "--input-format", "ptb", "--json")
    assert new.exit_code == 0, new.output
    old = invoke("perplexity", "-m", files["one"], "--corpus", files["text"], "--format", "ptb", "--json")
    assert old.exit_code == 0 and old.stdout == new.stdout
    assert "note: --format is deprecated here: use --input-format" in old.stderr
    assert new.stdout != invoke("perplexity", "-m", files["one"], "--corpus", files["text"], "--json").stdout  # "." kept
    both = invoke("perplexity", "-m", files["one"], "--corpus", files["text"], "--format", "ptb", "--input-format", "text")
    assert both.exit_code == 2 and "--format is the former name of --input-format" in both.output
    assert "--input-format" in invoke("train", "--help").stdout


def test_a_bundle_names_the_model_each_perplexity_is_of(files, tmp_path):
    """A bundle whose first model has no perplexity (a student) and whose second does: the one
    record is named for the language model (results were paired with the models in file order,
    so it carried the student's name), and a bundle always names its records."""
    import onparse
    from onparse.student.file import save_student
    from onparse.student.model import SpanStudent, StudentConfig

    vocab = Vocabulary.build([WORDS])
    config = StudentConfig(vocab_size=len(vocab), embedding_size=8, hidden_size=8, mlp_size=8)
    student = tmp_path / "student.pt"
    save_student(str(student), config=config.to_dict(), vocab=vocab, state_dict=SpanStudent(config).state_dict())
    parser = onparse.load([str(student), files["one"]], "cpu")
    bundle = tmp_path / "student-first.pt"
    parser.with_members([parser.members[0]]).save_bundle(str(bundle), carry=[1], weights="float32")
    [result] = onparse.perplexity(onparse.load(str(bundle), "cpu"), files["text"], quiet=True)
    assert result.model == f"{bundle} [2]", result.model           # its second model, not the student
    out = invoke("perplexity", "-m", bundle, "--corpus", files["text"], "--json")
    assert out.exit_code == 0, out.output
    [record] = json.loads(out.stdout)
    assert record["model"] == result.model and record["perplexity"] == pytest.approx(result.perplexity)

"""`onparse info`: what a checkpoint holds, and one-line errors for files that are not one."""
import json

import pytest
from click.testing import CliRunner

from conftest import save_tiny_checkpoint
from onparse.cli import main

WORDS = "the cat sat on a mat and dog barked".split()


@pytest.fixture()
def checkpoint(tmp_path):
    path = tmp_path / "best.pt"
    save_tiny_checkpoint(path, WORDS, metadata={"onparse_version": "0.1.0", "preset": "tiny", "corpus": {"source": "wsj"},
                                                "train_config": {"seed": 7}, "epoch": 12, "step": 3456,
                                                "valid_ppl": 123.456, "averaged": True},
                         training={"optimizer": {"state": {}}})
    return path


def test_info_on_a_checkpoint(checkpoint):
    result = CliRunner().invoke(main, ["info", "--model", str(checkpoint)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"model: {checkpoint}"
    assert lines[1].startswith(f"file: {checkpoint} (") and lines[1].endswith("MB, float32 weights)")
    assert lines[2] == "kind: language model"
    assert lines[3].startswith("architecture: 3 ON-LSTM layers of 24/24/16 units, chunk size 4, embedding 16")
    assert "training: corpus wsj, preset tiny, seed 7, 12 epochs, 3,456 steps, averaged SGD weights" in lines
    assert "perplexity: valid 123.46" in lines
    as_json = json.loads(CliRunner().invoke(main, ["info", "-m", str(checkpoint), "--json"]).stdout)
    assert as_json["config"]["hidden_size"] == 24 and as_json["metadata"]["valid_ppl"] == 123.456


def test_info_on_a_bad_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    result = CliRunner().invoke(main, ["info", "--model", str(bad)])
    assert result.exit_code == 1
    assert result.output.startswith(f"error: cannot read checkpoint {bad}") and result.output.count("\n") == 1


def test_python_users_get_the_same_description(checkpoint, tmp_path):
    import onparse
    from onparse.files.describe import describe_file

    text = describe_file(str(checkpoint))
    cli = CliRunner().invoke(main, ["info", "--model", str(checkpoint)]).stdout
    assert text + "\n" == cli
    as_dict = describe_file(str(checkpoint), "mine", as_dict=True)
    assert as_dict["model"] == "mine" and as_dict["vocab_size"] == len(WORDS) + 2  # <unk>, <eos>
    bundle = tmp_path / "b.pt"
    onparse.load(str(checkpoint), "cpu", layers=[1, 2], voters=["right"]).save_bundle(str(bundle), weights="float32")
    described = describe_file(str(bundle))
    assert "a bundle of 1 model whose trees are averaged over 2 members and 1 voter" in described
    assert "members (in tie-breaking order): layer 1 onlstm; layer 2 onlstm" in described
    summary = describe_file(str(bundle), as_dict=True)
    assert summary["voters"] == ["right"] and [m["layer"] for m in summary["members"]] == [1, 2]
    run = tmp_path / "run"                                    # a run folder: its best.pt, as load() reads it
    run.mkdir()
    (run / "best.pt").write_bytes(checkpoint.read_bytes())
    assert describe_file(str(run)) == describe_file(str(run / "best.pt"), str(run))


# -- issue 41.10: info runs the loaders' checks and counts what the built model holds ------------

def _student_file(path, vocab, extra_weight=False):
    """A tiny untrained student file (written as distill writes one, with a valid checksum)."""
    import torch

    from onparse.student.file import save_student
    from onparse.student.model import SpanStudent, StudentConfig

    torch.manual_seed(0)
    config = StudentConfig(vocab_size=len(vocab), embedding_size=4, hidden_size=4, mlp_size=4)
    state = SpanStudent(config).state_dict()
    if extra_weight:
        state = {**state, "extra.weight": torch.zeros(3)}
    save_student(str(path), config=config.to_dict(), vocab=vocab, state_dict=state)
    return path


@pytest.mark.parametrize("case,message", [
    ("extra weight", "the weights hold extra.weight, which the config has no place for"),
    ("duplicate words", "the vocabulary has duplicate words ('cat' twice)"),
])
def test_info_refuses_the_student_files_that_loading_refuses(tmp_path, case, message):
    vocab = ["<unk>", "<eos>", "the", "cat", "sat"]
    good = _student_file(tmp_path / "good.pt", vocab)
    bad = _student_file(tmp_path / "bad.pt", vocab[:4] + ["cat"] if case == "duplicate words" else vocab,
                        extra_weight=case == "extra weight")
    assert CliRunner().invoke(main, ["info", "-m", str(good)]).exit_code == 0
    outputs = []
    for args in (["info", "-m", str(bad)], ["induce", "-", "-m", str(bad)]):
        result = CliRunner().invoke(main, args, input="the cat sat\n")
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert result.stderr.count("\n") == 1 and result.stdout == ""
        outputs.append(result.stderr)
    assert outputs[0] == outputs[1] == f"error: {bad}: {message}\n"


def test_an_int8_bundle_counts_the_parameters_of_the_float32_one(checkpoint, tmp_path):
    import torch

    import onparse
    from onparse.files.describe import describe_file

    parser = onparse.load(str(checkpoint), "cpu")
    counts = {}
    for weights in ("float32", "int8"):
        path = tmp_path / f"{weights}.pt"
        parser.save_bundle(str(path), weights=weights)
        counts[weights] = describe_file(str(path), as_dict=True)["models"][0]["parameters"]
        assert f"; {counts[weights]:,} parameters" in describe_file(str(path))
        stored = sum(t.numel() for t in torch.load(path, weights_only=True)["models"][0]["state_dict"].values())
        if weights == "int8":
            assert stored > counts["int8"]                  # the scales are stored, not counted
    assert counts["int8"] == counts["float32"] == sum(p.numel() for p in parser.models[0].model.parameters())


def test_a_bundle_describes_its_weights_by_its_own_figures(checkpoint, tmp_path):
    """A note written when a bundle was made ("weights: float16 (four models in 40 MB)" in the
    bundled model, which holds 3 models in 29.8 MB) is not printed as if it described the file."""
    import onparse
    from onparse.files.describe import describe_file
    from onparse.files.pretrained import resolve

    bundle = tmp_path / "b.pt"
    onparse.load([str(checkpoint), str(checkpoint)], "cpu").save_bundle(
        str(bundle), weights="float16", metadata={"weights_check": "float16 (four models in 40 MB)", "recipe": "two"})
    text = describe_file(str(bundle))
    assert "four models in 40 MB" not in text and not any(line.startswith("weights:") for line in text.splitlines())
    assert "float16 weights): a bundle of 2 models" in text.splitlines()[1] and "recipe: two" in text
    shipped = describe_file(resolve(None), "the bundled model").splitlines()
    assert "a bundle of 5 models" in shipped[1] and not any(line.startswith("weights:") for line in shipped)
    assert describe_file().splitlines() == shipped            # no path: the bundled model, as load() reads it


def test_recorded_scores_without_a_figure_show_a_dash(checkpoint, tmp_path):
    """A bundle whose metadata records some figures of a score row but not others (EVALB's, say)
    is described with a dash for each missing one, not a traceback."""
    import onparse

    bundle = tmp_path / "b.pt"
    row = {"gold": "wsj-sample-test", "trees": "layer 2 onlstm", "sentence_f1_onlstm": 0.5, "sentence_f1_kim": 0.25}
    onparse.load(str(checkpoint), "cpu").save_bundle(str(bundle), weights="float32", metadata={"scores": [row]})
    result = CliRunner().invoke(main, ["info", "-m", str(bundle)])
    assert result.exit_code == 0, result.output
    line = next(text for text in result.stdout.splitlines() if text.split()[:1] == ["wsj-sample-test"])
    assert line.split()[-4:] == ["50.0", "25.0", "-", "-"]


# -- issue 55.7: info describes what it can of a bundle's free-form metadata ----------------------

def _bundle_with_metadata(checkpoint, path, metadata):
    """A bundle whose metadata is ``metadata`` as written by hand (save_bundle takes dicts only)."""
    import torch

    import onparse

    onparse.load(str(checkpoint), "cpu").save_bundle(str(path), weights="float32")
    blob = torch.load(path, weights_only=True)
    blob["metadata"] = metadata
    torch.save(blob, path)
    return path


@pytest.mark.parametrize("metadata, skipped", [
    ({"scores": [5]}, 1),
    ({"scores": [{"gold": "wsj10", "sentence_f1_onlstm": 0.5}]}, 1),           # a row without 'trees'
    ({"scores": [{"gold": "wsj10", "trees": "layer 2 onlstm", "sentence_f1_onlstm": 0.5}, "x"], "recipe": "r"}, 1),
    ({"seeds": {"a": 1}, "scores": "abc"}, 2),
    ({"seeds": 5, "scores": {"gold": "wsj10"}}, 2),
])
def test_info_describes_what_it_can_of_odd_bundle_metadata(checkpoint, tmp_path, metadata, skipped):
    bundle = _bundle_with_metadata(checkpoint, tmp_path / "b.pt", metadata)
    assert CliRunner().invoke(main, ["induce", "-", "-m", str(bundle)], input="the cat sat\n").exit_code == 0
    result = CliRunner().invoke(main, ["info", "-m", str(bundle)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert result.stdout.startswith(f"model: {bundle}\n") and "\nmember: layer 2 onlstm\n" in result.stdout
    assert f"note: {skipped} part(s) of the metadata have unexpected types and are not shown" in result.stdout
    rows = [line.split() for line in result.stdout.splitlines() if line.split()[:1] == ["wsj10"]]
    assert rows == ([["wsj10", "layer", "2", "onlstm", "50.0", "-", "-", "-"]] if "recipe" in metadata else [])
    assert json.loads(CliRunner().invoke(main, ["info", "-m", str(bundle), "--json"]).stdout)["metadata"] == metadata


@pytest.mark.parametrize("metadata", ["abc", ["x"], 7, None])
def test_a_bundle_whose_metadata_is_no_dict_is_refused_in_one_line(checkpoint, tmp_path, metadata):
    bundle = _bundle_with_metadata(checkpoint, tmp_path / "b.pt", metadata)
    outputs = []
    for args in (["info", "-m", str(bundle)], ["induce", "-", "-m", str(bundle)]):
        result = CliRunner().invoke(main, args, input="the cat sat\n")
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        outputs.append(result.stderr)
    assert outputs[0] == outputs[1] == f"error: {bundle}: metadata is a {type(metadata).__name__}, not a dict\n"


# -- what users read: --help, and the metadata fit writes, in plain words (issue 54.3) -----------

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The lab's vocabulary: selection-rule and run names, issue numbers, the protocol's line numbers.
LAB_WORDS = re.compile(r"\brules? v\d+|\bissue \d+|PROTOCOL|\bs\d e\d+\b")
#: Words --help may use only beside a pointer to the glossary (each defined there).
GLOSSARY_TERMS = {"member": r"\bmembers?\b", "voter": r"\bvoters?\b", "ties": r"--ties\b", "MBR": r"\bMBR\b",
                  "Viterbi": r"\bViterbi\b", "CYK": r"\bCYK\b", "master-forget distance": r"master-forget",
                  "tree-CRF": r"tree-CRF", "BPTT": r"\bBPTT\b", "DropConnect": r"DropConnect",
                  "AR / TAR": r"\(T?AR\)", "purity": r"\bpurity\b", "Kim et al. convention": r"Kim et al",
                  "nonterminal, preterminal": r"\b(pre|non)terminals?\b", "rule form": r"--rule-form"}
GLOSSARY = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")


def help_text(command):
    result = CliRunner().invoke(main, [command, "--help"] if command else ["--help"], terminal_width=1000)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_glossary_defines_every_term_help_uses_and_the_issues_list():
    entries = set(re.findall(r"^\*\*([^*]+)\*\*", GLOSSARY, flags=re.M))
    wanted = set(GLOSSARY_TERMS) | {"sentence F1", "corpus F1", "right-branching baseline", "WSJ10",
                                    "dev and test halves", "grammar", "student", "bundle"}
    assert wanted - entries == set()
    assert "docs/glossary.md" in help_text(None)


@pytest.mark.parametrize("command", sorted(main.commands))
def test_help_speaks_plainly_and_points_to_the_glossary(command):
    """No rule numbers, run names or issue numbers in any --help; a --help that uses a word of
    the glossary says where it is explained."""
    text = help_text(command)
    assert LAB_WORDS.findall(text) == []
    used = [term for term, pattern in GLOSSARY_TERMS.items() if re.search(pattern, text)]
    assert not used or "docs/glossary.md" in text, used


def test_the_metadata_fit_writes_names_no_lab_rule():
    """The "rule" a bundle written by `onparse fit` records (`onparse info` prints it) is said in
    the product's words: read from the source, where the bundle's metadata is built."""
    tree = ast.parse((ROOT / "src" / "onparse" / "fitting" / "pipeline.py").read_text(encoding="utf-8"))
    written = [ast.literal_eval(node.values[i]) for node in ast.walk(tree) if isinstance(node, ast.Dict)
               for i, key in enumerate(node.keys) if isinstance(key, ast.Constant) and key.value == "rule"]
    assert written and all(isinstance(w, str) and not LAB_WORDS.search(w) for w in written), written


# -- issue 54.3 and 54.7: info on the bundled model speaks to users -------------------------------

def test_info_describes_the_bundled_model_in_plain_words():
    """The bundled model's metadata cites the lab (rule numbers, research/PROTOCOL.md lines, run
    names such as "s1 e6"); info rephrases it when printing, names its members in tie-breaking
    order, and says what the model no member reads is for."""
    result = CliRunner().invoke(main, ["info"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    for lab in ("rule v", "research/", "PROTOCOL", "(s1 e6)", "s2 e3"):
        assert lab not in text, lab
    lines = text.splitlines()
    assert lines[1].endswith("a bundle of 5 models read in 2 ways (readings): fast, the default, and accurate "
                             "(model 1 gives distances only)"), lines[1]
    assert "  fast (the default): the student (model 5)" in lines
    assert ("  accurate: average of 3 members (in tie-breaking order: model 2 student; model 3 grammar; "
            "model 4 grammar) + a right-branching voter; ties first (the first member decides)") in lines
    rows = [line.split() for line in lines if line.strip().startswith("wsj")]
    # the accurate reading's row, then each member's, then the fast reading's student, for all
    # lengths and <= 10 words, each named by its model number
    assert [row[1:3] for row in rows] == [["average", "of"], ["model", "2"], ["model", "3"], ["model", "4"],
                                          ["model", "5"]] * 2
    # the figures themselves are untouched
    assert [rows[0][-4], rows[5][-4], rows[4][-4], rows[9][-4]] == ["59.6", "72.3", "59.7", "73.2"]


def test_plain_words_rephrases_lab_references_only():
    from onparse.files.record import plain_words

    assert plain_words("the student: rule v17's dev choice among the students of rule v9's average "
                       "(research/PROTOCOL.md 86-92)") == \
        "the student: the dev choice among the students of the teachers' average"
    assert plain_words("wsj-sample-dev: student (s1 e6) (research/PROTOCOL.md, rule v17)") == \
        "wsj-sample-dev: student (seed 1, epoch 6)"
    assert plain_words("model 1 of ../../research/models/v9-grammars-int8.pt") == "model 1 of v9-grammars-int8.pt"
    mine = "my corpus (from /data/research-notes), 3 epochs"
    assert plain_words(mine) == mine


def test_one_epoch_is_one_epoch(tmp_path):
    path = tmp_path / "one.pt"
    save_tiny_checkpoint(path, WORDS, metadata={"corpus": {"source": "wsj"}, "epoch": 1, "step": 12})
    text = CliRunner().invoke(main, ["info", "-m", str(path)]).stdout
    assert "1 epoch, 12 steps" in text and "1 epochs" not in text


def test_a_bundle_can_store_each_model_at_its_own_precision(checkpoint, tmp_path):
    """``save_bundle(weights_of=...)``: a language model kept for distances can be int8 beside a
    member stored float16; each comes back as its own precision gives it, and ``info`` says each."""
    import torch

    import onparse
    from onparse.files.describe import describe_file
    from onparse.files.weights import convert_weights, dequantize

    parser = onparse.load([str(checkpoint), str(checkpoint)], "cpu")
    parser = parser.with_members([parser.members[1]])            # model 2 parses; model 1 is carried
    bundle = tmp_path / "mixed.pt"
    parser.save_bundle(str(bundle), weights="float16", carry=[0], weights_of={0: "int8"})
    back = onparse.load(str(bundle), "cpu")
    original = parser.models[0].model.state_dict()
    for index, kind in ((0, "int8"), (1, "float16")):
        expected = dequantize(convert_weights(original, kind))
        got = back.models[index].model.state_dict()
        assert all(torch.equal(got[k].float(), expected[k].float()) for k in expected), kind
    assert back.models[0].metadata["weights"] == "int8" and back.models[1].metadata["weights"] == "float16"
    assert "weights model 1 int8, model 2 float16): a bundle of 2 models" in describe_file(str(bundle)).splitlines()[1]
    # Indices name the parser's models, not the file's: carrying model 2 for a member of model 1.
    other = tmp_path / "other.pt"
    onparse.load([str(checkpoint), str(checkpoint)], "cpu").save_bundle(str(other), carry=[1], weights_of={1: "int8"})
    assert [m.metadata["weights"] for m in onparse.load(str(other), "cpu").models] == ["float16", "int8"]

"""Odd inputs on the command line: odd bytes in text, odd paths given as models, odd model
files, and the one-line errors they get (nothing written before the error)."""
import os
import socket
import subprocess
import sys

import pytest
import torch
from click.testing import CliRunner

from conftest import save_tiny_checkpoint
from onparse.cli import main
from onparse.text.corpora import read_sentences
from onparse.trees.tree import leaves, parse_brackets

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = "the cat sat down on a mat dog barked N times and then it was quiet pierre".split()


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("model") / "tiny.pt", WORDS, seed=3)[2]


def invoke(args, input=None):
    return CliRunner().invoke(main, args, input=input)


def _env():
    return dict(os.environ, OMP_NUM_THREADS="1")


# -- odd bytes in text -------------------------------------------------------------------
def test_a_byte_order_mark_never_reaches_a_token(model_path, tmp_path):
    text = tmp_path / "bom.txt"
    text.write_bytes(b"\xef\xbb\xbfPierre sat on the mat .\nthe cat sat\n")
    for args, given in ((["induce", str(text)], None), (["induce", "-"], text.read_bytes())):
        result = invoke(args + ["-m", model_path], input=given)
        assert result.exit_code == 0, result.output
        assert leaves(parse_brackets(result.stdout.splitlines()[0]))[0] == "Pierre" and "\ufeff" not in result.stdout
    # A corpus file for training: the same rule (it kept '\ufeffpierre' as the first word).
    assert read_sentences(str(text))[0][0] == "pierre"


def test_a_nul_character_is_refused_in_one_line_naming_the_line(model_path, tmp_path):
    text = tmp_path / "nul.txt"
    text.write_bytes(b"the cat sat\nthe c\x00at sat\n")
    result = invoke(["induce", str(text), "-m", model_path])
    assert result.exit_code == 1 and "c\x00at" not in result.output
    assert f"{text} line 2 holds a NUL character (binary data, or UTF-16 text?); onparse reads UTF-8 text" \
        in result.output
    # UTF-16 text without a byte-order mark: every other byte is NUL, never words of one letter.
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes("the cat sat\n".encode("utf-16-le"))
    done = subprocess.run([sys.executable, "-m", "onparse", "induce", str(utf16), "-m", model_path],
                          capture_output=True, text=True, env=_env())
    assert done.returncode == 1 and done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
    assert "line 1 holds a NUL character" in done.stderr
    from onparse import OnparseError
    with pytest.raises(OnparseError, match="line 2 holds a NUL character"):
        read_sentences(str(text))


def test_distances_with_standard_input_closed_writes_nothing(model_path):
    # The header row was written before the error.
    done = subprocess.run([sys.executable, "-m", "onparse", "distances", "-", "-m", model_path],
                          capture_output=True, text=True, env=_env(), stdin=subprocess.DEVNULL,
                          preexec_fn=lambda: os.close(0))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == "error: standard input is closed; pass a FILE instead of -"


# -- odd paths given as models --------------------------------------------------------------
def test_a_model_path_that_is_no_file_says_what_it_is(tmp_path):
    fifo, loop, broken = tmp_path / "pipe", tmp_path / "loop", tmp_path / "broken.pt"
    os.mkfifo(fifo)
    os.symlink(loop, loop)
    os.symlink(tmp_path / "gone.pt", broken)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    try:
        for path, what in (("/dev/zero", "is a device"), (fifo, "is a named pipe (FIFO)"),
                           (loop, "is a loop of symbolic links"), (tmp_path / "sock", "is a socket"),
                           (broken, f"is a broken symbolic link to {tmp_path / 'gone.pt'}")):
            result = invoke(["induce", "-", "-m", str(path)], input="the cat\n")
            assert result.exit_code == 1 and result.output == f"error: {path} {what}, not a model file\n"
    finally:
        server.close()
    result = invoke(["induce", "-", "-m", str(tmp_path / "none.pt")], input="the cat\n")
    assert result.output == f"error: checkpoint not found: {tmp_path / 'none.pt'}\n"


# -- odd model files --------------------------------------------------------------------------
def _bundle(model_path, tmp_path, change):
    import onparse

    path = tmp_path / "bundle.pt"
    onparse.load(model_path, "cpu").save_bundle(str(path), weights="int8")
    blob = torch.load(path, weights_only=True)
    change(blob)
    torch.save(blob, path)
    return str(path)


def test_a_precision_tag_that_its_tensors_belie_is_refused(model_path, tmp_path):
    import onparse

    good = _bundle(model_path, tmp_path, lambda blob: None)
    assert "int8 weights" in invoke(["info", "-m", good]).output
    bad = _bundle(model_path, tmp_path, lambda blob: blob["models"][0]["metadata"].update(weights="float16"))
    result = invoke(["info", "-m", bad])            # it said "float16 weights" of int8 tensors
    assert result.exit_code == 1
    assert result.output == (f"error: {bad} (model 1): its metadata says 'float16' weights but its tensors are stored as int8: "
                             "the file was altered or damaged\n")
    with pytest.raises(onparse.OnparseError, match="its tensors are stored as int8"):
        onparse.load(bad)


def test_a_member_whose_model_is_true_is_refused(model_path, tmp_path):
    import onparse

    bad = _bundle(model_path, tmp_path, lambda blob: blob["members"][0].update(model=True))
    with pytest.raises(onparse.OnparseError, match="bad member"):     # it was read as model 1
        onparse.load(bad)
    result = invoke(["induce", "-", "-m", bad], input="the cat\n")
    assert result.exit_code == 1 and "bad member" in result.output and len(result.output.splitlines()) == 1


# -- fit's messages -------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["fit", "train", "distill"])
def test_max_time_0_is_refused_as_the_command_line_is_read(command, tmp_path):
    # fit refused it only after torch had loaded (4.8 s); other bad values at parse time.
    text = ["--corpus"] * (command == "train") + [str(tmp_path / "text.txt")]
    args = [command, *text, "--out", str(tmp_path / "o.pt"), "--max-time", "0"]
    code = ("import sys\nfrom onparse.cli import main\n"
            f"try:\n    main({args!r})\n"
            "except SystemExit as end:\n    print(end.code, 'torch' in sys.modules)\n")
    (tmp_path / "text.txt").write_text("the cat sat\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env())
    assert done.stdout.split() == ["2", "False"], done.stderr
    assert "Invalid value for '--max-time': a duration must be more than 0 seconds, got '0'" in done.stderr


def test_the_few_epochs_warning_suggests_the_tiny_preset_only_to_other_presets():
    from onparse.fitting import budget

    assert budget.warning({"lm": 1.2}, {"lm": 3}, {"lm": "small"}).endswith(
        "give more --max-time, fewer --seeds/--grammars, or --preset tiny to try the workflow")
    tiny = budget.warning({"lm": 1.2}, {"lm": 3}, {"lm": "tiny", "grammar": "small"})
    assert "--preset tiny" not in tiny and tiny.endswith("give more --max-time or fewer --seeds/--grammars")
    assert budget.warning({"lm": 3.5}, {"lm": 3}, {"lm": "tiny"}) is None


def test_fit_plans_warn_without_suggesting_the_preset_they_have(tmp_path):
    from onparse import FitSettings
    from onparse.fitting.pipeline import _Fit
    from conftest import write_corpus

    text = write_corpus(tmp_path / "text.txt", n_sentences=3000, seed=2)
    said = []
    fit = _Fit(text, str(tmp_path / "p.pt"), FitSettings(seeds=1, preset="tiny", grammars=0, cores=1, max_time=12,
                                                         limit=20), str(tmp_path / "run"), None, said.append)
    (tmp_path / "run").mkdir()
    fit.state["seconds"] = {"start": 1.0}
    fit.do("plan")
    warned = [line for line in said if "warning" in line]
    assert len(warned) == 1 and "--preset tiny" not in warned[0], said


def test_the_interrupt_hint_has_single_spaces(tmp_path, monkeypatch):
    import onparse.fitting.pipeline as pipeline

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "fit", interrupted)
    (tmp_path / "t.txt").write_text("the cat sat\n")
    result = invoke(["fit", str(tmp_path / "t.txt"), "--out", str(tmp_path / "o.pt")])
    assert result.exit_code == 130
    assert f"interrupted: continue with onparse fit {tmp_path / 't.txt'} --out {tmp_path / 'o.pt'} --resume" \
        in result.output and "  " not in result.output


def test_each_command_is_imported_from_the_module_that_registers_it():
    # The command line imports a command's module when the command runs (a quicker start-up):
    # its table of homes must name every command each module registers, and no other.
    import importlib

    import click

    from onparse.cli import HOMES

    registered = {}
    for module in set(HOMES.values()):
        group = click.Group()
        importlib.import_module(f"onparse.cli.{module}").register(group)
        registered.update({name: module for name in group.commands})
    assert registered == HOMES
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom onparse.cli import main\n"
                           "try:\n    main(['induce', '--help'])\nexcept SystemExit:\n"
                           "    print(sorted(m for m in sys.modules if m.startswith('onparse.cli.')))"],
                          capture_output=True, text=True, env=_env())
    assert done.stdout.split("\n")[-2] == "['onparse.cli.common', 'onparse.cli.parsing']", done.stderr

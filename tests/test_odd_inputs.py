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

"""The model bundled with onparse: it is there, loads lazily, parses with no --model, its scores
match its recorded metadata, and the wheel carries it into a fresh install."""
import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from onparse import pretrained
from onparse.cli import main

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "src" / "onparse" / "models" / pretrained.DEFAULT_FILE
KEYS = ("sentence_f1_onlstm", "sentence_f1_kim", "corpus_f1", "corpus_f1_evalb")


def invoke(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


@pytest.fixture(scope="module")
def blob():
    from onparse.checkpoint import load_checkpoint

    assert BUNDLED.is_file(), "the bundled model is missing: run `make model`"
    return load_checkpoint(str(BUNDLED))


def test_bundled_model_is_small_fp16_and_described(blob):
    assert pretrained.default_model_path() == str(BUNDLED)
    assert BUNDLED.stat().st_size <= 20 * 1024 * 1024
    assert {t.dtype for t in blob["state_dict"].values() if t.is_floating_point()} == {__import__("torch").float16}
    assert "training" not in blob  # no optimiser state shipped
    meta = blob["metadata"]
    for key in ("onparse_version", "corpus", "preset", "train_config", "valid_ppl", "test_ppl", "recipe",
                "selection", "scores"):
        assert key in meta, key
    assert meta["corpus"]["source"] == "wsj" and meta["weights"] == "float16"
    assert f"--seed {meta['train_config']['seed']}" in meta["recipe"]
    assert {(r["gold"], r["layer"], r["decoder"]) for r in meta["scores"]} == {
        (g, k, d) for g in ("wsj10", "wsj") for k in (1, 2, 3) for d in ("onlstm", "split")}


def test_loading_onparse_does_not_load_the_model():
    code = ("import sys, onparse.cli, onparse.pretrained as p; p.resolve(None); "
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_bundled_model_scores_as_recorded(blob, nltk_treebank):
    """Its scores on the sample, recomputed here, equal the metadata (to 0.05 points).  With the
    paper's layer and decoder it beats right-branching, the strongest baseline, on both sets:
    WSJ10 above 58.6 and all lengths above 39.9 (onlstm.md section 6; README, Results)."""
    from onparse.api import load

    recorded = {(r["gold"], r["layer"], r["decoder"]): r for r in blob["metadata"]["scores"]}
    parser = load(str(BUNDLED), "cpu")
    for gold in ("wsj10", "wsj"):
        scores = parser.score(gold, layers=[1, 2, 3], decoders=["onlstm", "split"])
        for member, result in scores.members:
            layer, decoder = member.layer, member.decoder
            d = result.to_dict()
            for key in KEYS:
                assert abs(d[key]["f1"] - recorded[(gold, layer, decoder)][key]) < 5e-4, (gold, layer, decoder, key)
    assert recorded[("wsj10", 2, "onlstm")]["sentence_f1_onlstm"] > 0.586
    assert recorded[("wsj", 2, "onlstm")]["sentence_f1_onlstm"] > 0.399


def test_commands_use_the_bundled_model_without_model(blob, nltk_treebank):
    induced = invoke("induce", "-", input="The cat sat on the mat .\n\nIt rained\n")
    assert induced.exit_code == 0, induced.output
    lines = induced.stdout.split("\n")
    assert lines[1] == "" and len(lines) == 4
    assert sorted(lines[0].replace("(", " ").replace(")", " ").split()) == sorted("The cat sat on the mat".split())
    scored = invoke("eval", "--gold", "wsj10", "--json")
    assert scored.exit_code == 0, scored.output
    record = json.loads(scored.stdout)
    assert (record["model"], record["layer"], record["decoder"]) == (pretrained.DEFAULT_NAME, 2, "onlstm")
    recorded = next(r for r in blob["metadata"]["scores"] if (r["gold"], r["layer"], r["decoder"]) == ("wsj10", 2, "onlstm"))
    assert abs(record["sentence_f1_onlstm"]["f1"] - recorded["sentence_f1_onlstm"]) < 5e-4
    distances = invoke("distances", "-", input="the cat sat\n")
    assert distances.exit_code == 0 and len(distances.stdout.splitlines()) == 5  # header, 3 words, blank


def test_info_describes_the_bundled_model(blob):
    text = invoke("info").stdout
    meta = blob["metadata"]
    assert text.startswith(f"model: {pretrained.DEFAULT_NAME}\nfile: {BUNDLED}")
    assert f"preset {meta['preset']}, seed {meta['train_config']['seed']}, {meta['epoch']} epochs" in text
    assert f"perplexity: valid {meta['valid_ppl']:.2f}, test {meta['test_ppl']:.2f}" in text
    wsj10 = next(line for line in text.splitlines() if line.split()[:3] == ["wsj10", "2", "onlstm"])
    recorded = next(r for r in meta["scores"] if (r["gold"], r["layer"], r["decoder"]) == ("wsj10", 2, "onlstm"))
    assert wsj10.split()[3] == f"{100 * recorded['sentence_f1_onlstm']:.1f}"
    as_json = json.loads(invoke("info", "--json").stdout)
    assert as_json["metadata"]["scores"] == meta["scores"] and as_json["vocab_size"] == len(blob["vocab"])


def test_without_a_bundled_model_commands_say_what_to_do(monkeypatch):
    monkeypatch.setattr(pretrained, "default_model_path", lambda: None)
    for args in (["induce", "-"], ["distances", "-"], ["show", "a", "b"], ["info"]):
        result = invoke(*args, input="a b\n")
        assert result.exit_code == 1, args
        assert result.output == ("error: no --model given and this installation has no bundled model; "
                                 "pass --model PATH (a checkpoint written by `onparse train`)\n")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, blob):
    """A wheel built from a copy of the project (so the checkout gets no build/ folder)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "project"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp / "dist"), str(src)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (path,) = (tmp / "dist").glob("onparse-*.whl")
    return path


def test_wheel_contains_the_model(wheel):
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo(f"onparse/models/{pretrained.DEFAULT_FILE}")
        assert info.file_size == BUNDLED.stat().st_size
        assert archive.read(info) == BUNDLED.read_bytes()


def test_fresh_install_parses_on_cpu(wheel, tmp_path):
    """Install the wheel into a new virtual environment (torch, nltk, click from this machine's
    site-packages) and parse from a folder outside the checkout."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", site,
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    where = subprocess.run([str(python), "-c", "import onparse; print(onparse.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, env=env, timeout=60)
    assert where.stdout.strip().startswith(site), where.stdout + where.stderr
    parsed = subprocess.run([str(python), "-m", "onparse", "induce", "-", "--device", "cpu"], cwd=tmp_path,
                            input="the cat sat on the mat\n", capture_output=True, text=True, env=env, timeout=120)
    assert parsed.returncode == 0, parsed.stderr
    tree = parsed.stdout.strip()
    assert tree.startswith("(") and tree.replace("(", " ").replace(")", " ").split() == "the cat sat on the mat".split()

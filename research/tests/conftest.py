"""Fixtures of the research tests (``make research-test``): tiny training runs standing in for the
real ones, and a tiny gold file (the helpers, such as loading a script of research/ as a module,
are in lab.py).

These tests check the lab, not the product: ``make test`` never collects them, and nothing in
tests/ imports from here.  NLTK data comes from NLTK_DATA (or ../shared/nltk_data beside the
checkout), as for tests/.
"""
import os

import pytest

from lab import EPOCHS, GOLD_TREES, ROOT, SEEDS, write_corpus

_SHARED = ROOT.parent / "shared" / "nltk_data"
if "NLTK_DATA" not in os.environ and _SHARED.is_dir():
    os.environ["NLTK_DATA"] = str(_SHARED)


@pytest.fixture(scope="session")
def nltk_treebank():
    from onparse.text.data import is_installed

    if not is_installed("treebank"):
        message = "NLTK package 'treebank' not found (set NLTK_DATA or run `make data`)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def one_thread():
    """Torch on one thread for the module: tiny models run fastest so."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def seed_runs(tmp_path_factory):
    """Three tiny runs of the toy language (seeds 1-3, 3 layers so that layers 2 and 3 exist,
    2 epochs, every epoch kept as epoch-NNN.pt beside best.pt and metrics.jsonl): the run folders,
    as the recipe's and the campaign's runs are.  About 10 seconds on one thread."""
    from onparse.lm.training.config import PRESETS, RunOptions
    from onparse.lm.training.train import train
    from onparse.text.corpora import make_spec

    folder = tmp_path_factory.mktemp("seeds")
    corpus = write_corpus(folder / "toy.txt", n_sentences=400)
    runs = []
    for seed in SEEDS:
        config = PRESETS["tiny"].with_overrides({"n_layers": 3, "epochs": EPOCHS, "seed": seed})
        out = folder / f"tiny-s{seed}"
        train(config, make_spec(corpus), RunOptions(out=str(out), threads=1, keep_epochs=True), "tiny")
        runs.append(str(out))
    return runs


@pytest.fixture(scope="session")
def gold_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("gold") / "toy.mrg"
    path.write_text(GOLD_TREES, encoding="utf-8")
    return path


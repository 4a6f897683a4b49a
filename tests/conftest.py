"""Shared fixtures.  NLTK data comes from NLTK_DATA (or ../shared/nltk_data beside the checkout).

Tests that need an NLTK package use the ``nltk_treebank`` / ``nltk_conll2000`` / ``nltk_brown``
fixtures: they skip on a developer machine without the data but FAIL when the CI variable is set,
so CI can never pass by skipping the gold-set tests.
"""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_SHARED = ROOT.parent / "shared" / "nltk_data"
if "NLTK_DATA" not in os.environ and _SHARED.is_dir():
    os.environ["NLTK_DATA"] = str(_SHARED)


def _need(package):
    from onparse.data import is_installed

    if not is_installed(package):
        message = f"NLTK package '{package}' not found (set NLTK_DATA or run `make data`)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def nltk_treebank():
    _need("treebank")


@pytest.fixture(scope="session")
def nltk_conll2000():
    _need("conll2000")


@pytest.fixture(scope="session")
def nltk_brown():
    _need("brown")


@pytest.fixture(scope="module")
def one_thread():
    """Torch on one thread for the module (``pytestmark = pytest.mark.usefixtures("one_thread")``):
    tiny models run fastest so, and it avoids OpenMP spin-waits on a busy machine."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

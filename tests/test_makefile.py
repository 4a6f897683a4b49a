"""The Makefile: `make quickstart` installs only when this checkout is not the installed onparse.

Dry runs only (``make -n``): nothing is installed or downloaded; the recipe line that decides
runs anyway (it calls ``$(MAKE)``), and the install it would start is only printed.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = "onparse is installed from this checkout: install skipped (make install forces it)"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def dry_run(target, python, **env):
    """The lines ``make -n`` prints (the recipes, and what the deciding line itself says)."""
    done = subprocess.run(["make", "-n", "--no-print-directory", target, f"PYTHON={python}"], cwd=ROOT,
                          env=dict(os.environ, **env), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_quickstart_skips_the_install_when_this_checkout_is_installed(tmp_path):
    command = tmp_path / "onparse"              # an `onparse` on PATH, as an install leaves one
    command.write_text("#!/bin/sh\n")
    command.chmod(0o755)
    lines = dry_run("quickstart", sys.executable, PYTHONPATH=str(ROOT / "src"),
                    PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert SKIPPED in lines and not any("pip install" in line for line in lines)
    assert "onparse eval --gold wsj10-sample-test --beside right" in lines


def test_quickstart_installs_when_onparse_is_not_installed():
    lines = dry_run("quickstart", f"{sys.executable} -S", PYTHONPATH="")  # -S: no site-packages
    assert f"{sys.executable} -S -m pip install -e '.[dev]'" in lines and SKIPPED not in lines


def test_make_test_runs_the_product_tests_and_research_test_the_labs():
    """`make test` runs pytest on pyproject's testpaths (tests/ and src/onparse, never research/);
    `make research-test` runs research/tests, which nothing in tests/ needs."""
    tomllib = pytest.importorskip("tomllib")
    assert dry_run("test", "python") == ["python -m pytest -q -n 2"]              # two workers (pytest-xdist)
    assert dry_run("research-test", "python") == ["python -m pytest -q research/tests"]
    with open(ROOT / "pyproject.toml", "rb") as handle:
        paths = tomllib.load(handle)["tool"]["pytest"]["ini_options"]["testpaths"]
    assert paths == ["tests", "src/onparse"]

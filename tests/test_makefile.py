"""The Makefile: `make quickstart` installs only when this checkout is not the installed onparse;
on a stock Debian/Ubuntu (a `python3`, no `python`) it finds a Python without being told.

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


def test_quickstart_skips_the_install_when_this_checkout_is_installed():
    lines = dry_run("quickstart", sys.executable, PYTHONPATH=str(ROOT / "src"))
    assert SKIPPED in lines and not any("pip install" in line for line in lines)
    # through the Python that has it, so a virtual environment need not be on PATH
    assert f"{sys.executable} -m onparse eval --gold wsj10-sample-test --baseline right" in lines
    # issue 54.10: an induced tree of a test-half sentence beside its gold tree and its F1, not a
    # hand-picked sentence parsed with no gold to judge it by
    assert f"{sys.executable} -m onparse show --gold wsj10-sample-test:3" in lines
    assert not any("the cat sat" in line for line in lines)


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


def stock_machine(tmp_path, **env):
    """What a stock Debian/Ubuntu gives `make`: a PATH whose only Python is `python3` (here a
    link to this interpreter, in front of /usr/bin:/bin with any `python` of theirs hidden),
    nothing else in the environment."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    for name in ("make", "sh", "env"):
        found = shutil.which(name)
        if found and not Path("/usr/bin", name).exists() and not Path("/bin", name).exists():
            (bin_dir / name).symlink_to(found)
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    return {"PATH": path, "HOME": str(tmp_path), **env}, path


def makefile_copy(tmp_path, venv=False):
    """The Makefile alone in a folder (with a ``.venv/bin/python`` when ``venv``), as a checkout
    with or without the virtual environment the README makes."""
    folder = tmp_path / "checkout"
    folder.mkdir()
    shutil.copy(ROOT / "Makefile", folder / "Makefile")
    if venv:
        (folder / ".venv" / "bin").mkdir(parents=True)
        (folder / ".venv" / "bin" / "python").symlink_to(sys.executable)
    return folder


def dry_run_plain(folder, target, env):
    done = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "No such file" not in done.stderr and "not found" not in done.stderr, done.stderr
    return done.stdout.splitlines()


def test_make_finds_python3_on_a_stock_machine(tmp_path):
    """Issue 54.3: with only `python3` on PATH (no `python`, no virtual environment), the
    Makefile's commands start with a Python that PATH resolves."""
    env, path = stock_machine(tmp_path)
    folder = makefile_copy(tmp_path)
    assert dry_run_plain(folder, "install", env) == ["python3 -m pip install -e '.[dev]'"]
    assert dry_run_plain(folder, "test", env) == ["python3 -m pytest -q -n 2"]
    for line in dry_run_plain(folder, "install", env) + dry_run_plain(folder, "data", env):
        assert shutil.which(line.split()[0], path=path), line


def test_make_uses_the_checkouts_venv_or_the_active_one(tmp_path):
    """The README's set-up makes ``.venv``: make uses it without activation; an active virtual
    environment (VIRTUAL_ENV) comes first; PYTHON=... still overrides both (as .ci/run does)."""
    env, _ = stock_machine(tmp_path)
    folder = makefile_copy(tmp_path, venv=True)
    assert dry_run_plain(folder, "install", env) == [".venv/bin/python -m pip install -e '.[dev]'"]
    active = dict(env, VIRTUAL_ENV="/opt/env")
    assert dry_run_plain(folder, "install", active) == ["/opt/env/bin/python -m pip install -e '.[dev]'"]
    done = subprocess.run(["make", "-n", "--no-print-directory", "install", "PYTHON=/ci/python"], cwd=folder,
                          env=active, capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["/ci/python -m pip install -e '.[dev]'"]


def test_quickstart_runs_on_a_stock_machine(tmp_path):
    """`make -n quickstart` with only `python3` on PATH, in a checkout with no virtual environment:
    the install check runs (the one recipe a dry run executes) and starts the install with
    python3; each command runs through python3 (no `python`, no `onparse` script on PATH)."""
    env, path = stock_machine(tmp_path)
    lines = dry_run_plain(makefile_copy(tmp_path), "quickstart", env)
    assert "python3 -m pip install -e '.[dev]'" in lines
    assert "python3 -m onparse eval --gold wsj10-sample-test --baseline right" in lines
    commands = [line.split()[0] for line in lines if line and not line.startswith(("@", "if ", "\t", "echo", "else"))]
    assert commands and all(shutil.which(c, path=path) for c in commands), commands

"""NLTK data packages: finding them, and fetching them with NLTK's own downloader.

``python -m onparse.text.data treebank conll2000 abc`` downloads each package NLTK does not
already find (``make data`` runs it).  Code that needs a package calls :func:`require`,
which turns a missing package into a one-line :class:`~onparse.errors.OnparseError`.
"""
import sys

from ..errors import OnparseError

#: NLTK resource path of each package onparse uses.
PACKAGES = {
    "treebank": "corpora/treebank",
    "conll2000": "corpora/conll2000",
    "abc": "corpora/abc",
    "brown": "corpora/brown",
    "alpino": "corpora/alpino",
    "cess_esp": "corpora/cess_esp",
    "floresta": "corpora/floresta",
}


def is_installed(package: str) -> bool:
    """True when NLTK finds ``package`` (a key of :data:`PACKAGES`) on its data path."""
    import nltk

    try:
        nltk.data.find(PACKAGES[package])
    except LookupError:
        return False
    return True


def require(package: str) -> None:
    """Raise a one-line OnparseError naming the fix when NLTK cannot find ``package``."""
    if not is_installed(package):
        raise OnparseError(
            f"NLTK data package '{package}' not found; run `make data` or "
            f"`python -m nltk.downloader {package}` (or set NLTK_DATA to a folder holding it)"
        )


def download(packages, quiet: bool = False) -> int:
    """Download each package NLTK does not find yet; return the number that failed."""
    import nltk

    failed = 0
    for package in packages:
        if package not in PACKAGES:
            print(f"unknown package '{package}'; known: {', '.join(PACKAGES)}", file=sys.stderr)
            failed += 1
        elif is_installed(package):
            if not quiet:
                print(f"{package}: already installed", file=sys.stderr)
        elif not nltk.download(package, quiet=quiet):
            failed += 1
    if failed:
        print(f"{failed} package(s) could not be fetched.  Without network, point NLTK_DATA at a folder "
              "that already holds them (e.g. export NLTK_DATA=/path/to/nltk_data) and run again.",
              file=sys.stderr)
    return failed


if __name__ == "__main__":
    sys.exit(1 if download(sys.argv[1:] or list(PACKAGES)) else 0)

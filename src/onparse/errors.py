"""The one exception type the CLI turns into a one-line error and exit status 1."""


class OnparseError(Exception):
    """A problem with the user's data or files (not a bug): reported in one line, exit 1."""

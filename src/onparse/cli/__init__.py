"""The ``onparse`` command group.  Commands live in the modules of this package, one per
concern; each is a thin shell over a Python function of the library.

Exit codes: 0 success, 1 data errors (:class:`~onparse.errors.OnparseError`, one line on
stderr), 2 usage errors (click's own).  A reader that goes away (``onparse induce big.txt |
head``) ends the program quietly with status 0.  Failures of the system are one line and exit 1
too, never a traceback: a full disk (``> /dev/full``), a closed standard output (``>&-``), any
other OSError.  Ctrl-C prints "interrupted" and exits 130, even while the program starts.
"""
import os
import signal
import sys


def _exit_interrupted(signum, frame):
    # Ctrl-C while the command line is still being imported: no traceback, the usual status.
    os.write(2, b"interrupted\n")
    os._exit(130)


def _guard_start_up():
    """Make Ctrl-C quiet until the commands are registered (imports take a few tenths of a
    second); returns the function that gives Python its own handler back."""
    import threading

    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        return lambda: None
    signal.signal(signal.SIGINT, _exit_interrupted)
    return lambda: signal.signal(signal.SIGINT, signal.default_int_handler)


def _reserve_closed_streams() -> None:
    """A closed standard input or error (``<&-``, ``2>&-``) gets /dev/null on its descriptor
    before any file is opened: otherwise the next file opened (a checkpoint, a lock) would take
    descriptor 0 or 2 and receive what is written there.  Reading ``-`` then says that standard
    input is closed; messages for a closed stderr go nowhere, and the command runs.  A stderr
    descriptor open for reading only (what a launcher left there after closing it) counts as
    closed."""
    import fcntl

    for fd in (0, 2):
        try:
            mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
            if fd == 0 or mode != os.O_RDONLY:
                continue
        except OSError:
            pass
        try:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        except OSError:
            continue
        if fd == 0:
            sys.stdin = None
        else:
            sys.stderr = open(fd, "w", closefd=False)


_end_start_up = _guard_start_up()   # before the imports below, which are the slow part
_reserve_closed_streams()
# OpenMP threads that wait at a barrier sleep instead of spinning: with torch's default two
# threads on a two-core machine that another process also uses, spinning halves training speed
# (0.54x of one thread), sleeping keeps it near one thread's (0.91x), and an idle machine still
# gains (1.14x).  Before torch is imported; a value the user set wins.  benchmarks/bench_threads.py.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import click  # noqa: E402

from .. import OnparseError, __version__  # noqa: E402


class _Group(click.Group):
    """A click group that reports OnparseError and system failures in one line and exits
    quietly on a broken pipe."""

    def invoke(self, ctx):
        try:
            if sys.stdout is None:           # started with `>&-`: Python had no stdout to give us
                raise OnparseError("standard output is closed; redirect it instead (> FILE, or > /dev/null)")
            try:
                result = super().invoke(ctx)
            except click.exceptions.Exit:
                _flush_stdout()
                raise
            _flush_stdout()                  # here, so that a full disk is reported, not ignored at exit
            return result
        except OnparseError as err:
            click.echo(f"error: {err}", err=True)
            ctx.exit(1)
        except BrokenPipeError:
            _quiet_broken_pipe()
        except OSError as err:
            click.echo(f"error: {_describe_os_error(err)}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)


def _flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


def _describe_os_error(err: OSError) -> str:
    """One line for an OSError that escaped a command: which file, and why."""
    reason = err.strerror or str(err) or type(err).__name__
    if err.filename is not None:
        return f"{err.filename}: {reason}"
    if _stdout_fails():
        return f"cannot write standard output: {reason}"
    return reason


def _stdout_fails() -> bool:
    """True when standard output cannot take its pending text (a full disk); it is then pointed
    at devnull, so that the interpreter's last flush does not fail again with a traceback."""
    try:
        _flush_stdout()
        return False
    except OSError:
        _silence_stdout()
        return True


def _quiet_broken_pipe():
    # The reader went away (`| head`): exit 0 as other Unix filters do.
    _silence_stdout()
    sys.exit(0)


def _silence_stdout() -> None:
    # Point stdout at devnull, so the interpreter's final flush does not raise again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="onparse")
def main():
    """Find the phrase structure of sentences in raw text, with no treebank to learn from
    (unsupervised constituency parsing: ON-LSTM language models, neural grammars, students).

    \b
    Induce trees:    onparse induce corpus.txt > trees.txt
    Score a model:   onparse eval --gold wsj10 --layer all --decode all
    Score trees:     onparse eval --gold wsj10 trees.txt
    Baselines:       onparse baseline --gold wsj10 --baseline right --score
    Train a model:   onparse train --preset small --out runs/small
    Train a student: onparse distill text.txt --out student.pt
    Text to parser:  onparse fit text.txt --out mine.pt --max-time 2h
    The bundled model: onparse info

    Words such as member, voter, MBR or sentence F1 are explained in docs/glossary.md.
    """
    from ..progress import new_job

    new_job()                       # a command is one job: its progress lines keep one clock


#: Each command's module (``cli/<module>.py``, whose ``register`` adds its commands to ``main``):
#: imported when the command runs or help lists it, so that a command imports only its own module
#: and what that needs (``induce`` no training code: a quicker start-up).
HOMES = {"eval": "scoring", "baseline": "scoring", "gold-text": "scoring", "train": "training",
         "perplexity": "training", "distill": "distill", "fit": "fit", "induce": "parsing",
         "distances": "parsing", "punkt": "parsing", "agreement": "members", "show": "figures",
         "plot-log": "figures", "info": "info", "grammar": "grammar"}


class _Commands(dict):
    """``main.commands``: every name of :data:`HOMES` from the start, each command imported from
    its module on first use (``main.commands["train"]``, ``.get``, ``.items()`` all work)."""

    def _load(self, name):
        if dict.get(self, name) is None and name in HOMES:
            import importlib

            importlib.import_module(f"{__name__}.{HOMES[name]}").register(main)
        return dict.get(self, name)

    def __getitem__(self, name):
        command = self._load(name)
        if command is None:
            raise KeyError(name)
        return command

    def get(self, name, default=None):
        command = self._load(name) if name in self else None
        return default if command is None else command

    def items(self):
        return [(name, self[name]) for name in list(self)]

    def values(self):
        return [self[name] for name in list(self)]


main.commands = _Commands.fromkeys(HOMES)
_end_start_up()

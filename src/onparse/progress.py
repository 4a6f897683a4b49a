"""Progress of long work on stderr, one rule for every command: a tqdm bar with a total (and
so an ETA) when stderr is a terminal, a plain line every :data:`PLAIN_EVERY` seconds otherwise
(a log file, ``nohup``, CI must show that the work is alive), nothing when quiet or when stderr
is closed.  Results never go here: they go to stdout.

The plain lines keep one clock for consecutive work: a :class:`Progress` that starts less than
:data:`PLAIN_EVERY` seconds after the previous one closed goes on counting from that one's last
line, so that several short steps of one long job (the models of a bundle measured one after
another) still print a line a minute.  The work reports with ``update(n)`` as it goes (the
commands report every batch, not every window of lines), and the line is printed at the first
update after the minute; when no update comes for a minute (one long batch, a slow read), a
timer thread prints it, so that a line a minute holds even then.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable, Optional

from .files.safeio import format_duration

#: Seconds between plain progress lines when stderr is not a terminal.
PLAIN_EVERY = 60.0
#: The clock of the plain lines (monotonic seconds; tests replace it).
now = time.monotonic
#: The last plain line's time, and when the last plain :class:`Progress` closed: the clock that
#: consecutive work shares (module docstring).
_shared = {"line": None, "closed": None}


def started() -> float:
    """When this process started, on :data:`now`'s clock (``time.monotonic``): Linux reads it from
    ``/proc``; elsewhere, now.  ``onparse fit`` counts its start-up against ``--max-time`` by it."""
    try:
        with open("/proc/self/stat") as handle:
            ticks = int(handle.read().rsplit(")", 1)[1].split()[19])     # field 22: starttime
        with open("/proc/uptime") as handle:
            uptime = float(handle.read().split()[0])
        import os

        age = uptime - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        age = 0.0
    return now() - max(0.0, age)


def reading(what: str, quiet: bool = False) -> None:
    """The sign of life of a command that reads a corpus (issue 54.6): one line on stderr at once,
    before the slow imports and the reading (which then shows its progress, :func:`onparse.text.
    corpora.load_corpus`) -- when stderr is a terminal, as a bar is shown: a person is waiting.
    Off a terminal (a log, a pipe, a script checking a one-line error) the plain lines of
    :class:`Progress` say the work is alive, a line a minute, and an early error stays one line."""
    if quiet or sys.stderr is None or not _is_terminal(sys.stderr):
        return
    try:
        print(f"reading {what} ...", file=sys.stderr, flush=True)
    except OSError:                          # a closed or full stderr silences the line, no more
        pass


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):        # a closed or odd stream
        return False


def new_job() -> None:
    """Start a new job's clock: the next :class:`Progress` does not continue an earlier one's
    (each command is one job; a process that runs several, as the tests do, starts each anew)."""
    _shared["line"] = _shared["closed"] = None


class Progress:
    """``update(n)`` as work is done; ``close()`` (or ``with``) at the end.

    ``total``: the amount of work when known (a bar with an ETA; plain lines with a share and
    an ETA); ``what``: what is counted (``lines``, ``tokens``; None: nothing is, and a plain line
    a minute says how long it has gone on, on a terminal too); ``desc``: what the work is.
    """

    def __init__(self, desc: str, total: Optional[int] = None, what: Optional[str] = "items", quiet: bool = False):
        self.desc, self.total, self.what = desc, total, what
        self.done = 0
        self.bar = None
        self.plain = False
        self._lock = threading.Lock()
        self._timer: Optional[threading.Timer] = None
        stream = sys.stderr
        if quiet or stream is None:
            return
        if _is_terminal(stream) and what is not None:        # a person is watching: a bar
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit=f" {what}", desc=desc, file=stream, dynamic_ncols=True)
        else:
            self.plain = True
            self.started = self.last = now()
            line, closed = _shared["line"], _shared["closed"]
            if line is not None and closed is not None and self.started - closed < PLAIN_EVERY:
                self.last = line                 # the same job goes on: its clock too
            self._arm()

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.plain:
            self._due()

    def _due(self) -> None:
        """Print the plain line when a minute has passed since the last one (either thread)."""
        with self._lock:
            if self.plain and now() - self.last >= PLAIN_EVERY:
                self.last = now()
                self._line()

    def _arm(self) -> None:
        # A daemon timer: it never keeps the process alive, and close() cancels it.  No interval
        # (PLAIN_EVERY 0: a line at every update) needs no timer.
        if PLAIN_EVERY <= 0:
            return
        self._timer = threading.Timer(PLAIN_EVERY, self._beat)
        self._timer.daemon = True
        self._timer.start()

    def _beat(self) -> None:
        self._due()
        if self.plain and self._timer is not None:
            self._arm()

    def _line(self) -> None:
        elapsed = now() - self.started
        if self.what is None:                # nothing to count: how long it has gone on
            text = f"{self.desc}: still at it after {format_duration(elapsed)}"
        elif self.total:
            left = elapsed * (self.total - self.done) / self.done if self.done else float("nan")
            text = (f"{self.desc}: {self.done:,} of {self.total:,} {self.what} ({100 * self.done / self.total:.0f}%), "
                    f"about {format_duration(left)} left")
        else:
            text = f"{self.desc}: {self.done:,} {self.what} in {format_duration(elapsed)}"
        try:
            print(text, file=sys.stderr, flush=True)
        except OSError:                     # a reader that went away stops the lines, not the work
            self.plain = False

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.plain:
            _shared["line"], _shared["closed"] = self.last, now()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Portion:
    """A part of a :class:`Progress`: tells ``progress`` (its ``update``, or None) of ``units``
    in proportion as ``work`` units of finer work are reported by calling it (the sentences of
    a parser's batches, model after model, for a window of lines), and of the rest at
    :meth:`finish`; so that a long window still moves the progress while it is parsed."""

    def __init__(self, progress: Optional[Callable[[int], None]], units: int, work: int):
        self.progress, self.units, self.work = progress, units, max(1, work)
        self.done = self.told = 0

    def __call__(self, k: int) -> None:
        self.done += k
        self._tell(min(self.units, self.done * self.units // self.work))

    def finish(self) -> None:
        """The whole part is done."""
        self._tell(self.units)

    def _tell(self, units: int) -> None:
        if self.progress is not None and units > self.told:
            self.progress(units - self.told)
            self.told = units

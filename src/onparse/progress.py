"""Progress of long work on stderr, one rule for every command: a tqdm bar with a total (and
so an ETA) when stderr is a terminal, a plain line every :data:`PLAIN_EVERY` seconds otherwise
(a log file, ``nohup``, CI must show that the work is alive), nothing when quiet or when stderr
is closed.  Results never go here: they go to stdout.
"""
from __future__ import annotations

import sys
import time
from typing import Optional

from .files.safeio import format_duration

#: Seconds between plain progress lines when stderr is not a terminal.
PLAIN_EVERY = 60.0


class Progress:
    """``update(n)`` as work is done; ``close()`` (or ``with``) at the end.

    ``total``: the amount of work when known (a bar with an ETA; plain lines with a share and
    an ETA); ``what``: what is counted (``lines``, ``tokens``); ``desc``: what the work is.
    """

    def __init__(self, desc: str, total: Optional[int] = None, what: str = "items", quiet: bool = False):
        self.desc, self.total, self.what = desc, total, what
        self.done = 0
        self.bar = None
        self.plain = False
        stream = sys.stderr
        if quiet or stream is None:
            return
        if stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit=f" {what}", desc=desc, file=stream, dynamic_ncols=True)
        else:
            self.plain = True
            self.started = self.last = time.monotonic()

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.plain and time.monotonic() - self.last >= PLAIN_EVERY:
            self.last = time.monotonic()
            self._line()

    def _line(self) -> None:
        if self.total:
            elapsed = time.monotonic() - self.started
            left = elapsed * (self.total - self.done) / self.done if self.done else float("nan")
            text = (f"{self.desc}: {self.done:,} of {self.total:,} {self.what} ({100 * self.done / self.total:.0f}%), "
                    f"about {format_duration(left)} left")
        else:
            text = f"{self.desc}: {self.done:,} {self.what}"
        try:
            print(text, file=sys.stderr, flush=True)
        except OSError:                     # a reader that went away stops the lines, not the work
            self.plain = False

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

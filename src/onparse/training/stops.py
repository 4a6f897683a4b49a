"""Stopping a run cleanly: the first Ctrl-C (or SIGTERM) asks the loop to stop and save; a
run started by another process (``onparse fit``'s) gets SIGTERM when that process dies."""
import os
import signal
import sys
import threading
from typing import Callable, Optional


class StopRequests:
    """First Ctrl-C (or SIGTERM, as schedulers and torchrun send) asks the loop to stop at the
    next step boundary and save; a second Ctrl-C aborts at once."""

    def __init__(self, announce):
        self.requested = False
        self._announce = announce
        self._old = {}

    def _handle(self, signum, frame):
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True
        self._announce("stop requested: saving after this step (Ctrl-C again to abort without saving)")

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        return False


def stopped_with_parent() -> Optional[Callable[[], None]]:
    """For ``Popen(preexec_fn=)``: the child gets SIGTERM (a training run's request to stop and
    save) when this process dies, ``kill -9`` included (strictly: when the thread that starts it
    ends, so start children from a thread that outlives them); Linux only (None elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc, parent = ctypes.CDLL(None, use_errno=True), os.getpid()

    def arrange() -> None:                   # in the child, before it starts the command
        libc.prctl(1, signal.SIGTERM)        # PR_SET_PDEATHSIG
        if os.getppid() != parent:           # the parent died before that took effect
            os.kill(os.getpid(), signal.SIGTERM)
    return arrange

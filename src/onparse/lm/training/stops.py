"""Stopping a run cleanly: the first Ctrl-C (or SIGTERM) asks the loop to stop and save."""
import signal
import threading


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

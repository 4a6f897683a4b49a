"""The folder of a training run: its file names, its lock, and its metrics log.

Files (rank 0 writes them): ``best.pt`` (best validation perplexity), ``last.pt`` (latest state
plus what ``--resume`` needs), ``epoch-NNN.pt`` (each epoch's weights, with ``--keep-epochs``),
``metrics.jsonl`` (one JSON object per event; non-finite numbers written as null), and while a
run goes on the lock file ``.onparse.lock``.

No torch here: :mod:`onparse.pictures.figures` reads run folders without it.
"""
import os
import re
import sys
import time
from typing import Any, Dict, List, Optional

from ..errors import OnparseError
from .safeio import TEMP_PATTERN, dumps, remove_stale_temp_files
from .schema import decode

BEST = "best.pt"
LAST = "last.pt"
METRICS = "metrics.jsonl"
#: Per-epoch snapshots (``--keep-epochs``): ``epoch-001.pt`` ...
EPOCH_SNAPSHOT = "epoch-{:03d}.pt"
EPOCH_SNAPSHOT_RE = re.compile(r"epoch-\d{3,}\.pt")
#: The lock file of a run folder: "pid N on host H since T" while a run is going, removed after.
LOCK = ".onparse.lock"


def run_files(folder: str) -> List[str]:
    """The files of an onparse run in ``folder``: checkpoints, snapshots and the metrics log."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in names if n in (BEST, LAST, METRICS) or EPOCH_SNAPSHOT_RE.fullmatch(n))


def is_run_file(name: str) -> bool:
    """Whether a file named ``name`` in a run folder belongs to the run (its checkpoints,
    snapshots, log, lock or temporary files): no output may take one of those names."""
    return (name in (BEST, LAST, METRICS, LOCK) or EPOCH_SNAPSHOT_RE.fullmatch(name) is not None
            or TEMP_PATTERN.fullmatch(name) is not None)


def make_folder(out: str) -> None:
    """Create the output folder (and its parents); a one-line OnparseError when impossible."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise OnparseError(f"output path {out} exists and is not a folder")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as err:
        raise OnparseError(f"cannot create the output folder {out}: {err.strerror or err}") from None


def refuse_old_run(out: str, overwrite: bool, option: str = "--out") -> None:
    """A new run's check of its folder: one that holds any run file is refused unless
    ``overwrite`` (not only ``last.pt``: a copied model must not be replaced either); ``option``
    is the one that names the folder."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise OnparseError(f"output path {out} exists and is not a folder")
    found = run_files(out)
    if found and not overwrite:
        what = "a run" if LAST in found else f"onparse files ({', '.join(found[:4])})"
        raise OnparseError(f"{out} already holds {what}; pass --resume to continue a run, "
                           f"--overwrite to replace it, or choose another {option}")


def tidy(out: str, log: "MetricsLog", resume_step: Optional[int]) -> None:
    """Remove what a killed run left in ``out``: temporary files of unfinished saves and, on a
    resume from ``resume_step``, the records of ``log`` written after that step (they will be
    written again).  Call it while holding the folder's lock."""
    removed = remove_stale_temp_files(out)
    if removed:
        log.say(f"removed {len(removed)} temporary file(s) left by an interrupted save")
    if resume_step is not None:
        truncate_log(log.path, resume_step)


def remove_run_files(out: str) -> None:
    """Delete the run files of ``out`` (``--overwrite``: nothing of the old run survives)."""
    for name in run_files(out):
        os.unlink(os.path.join(out, name))


# -- the lock ---------------------------------------------------------------------------------
class FolderLock:
    """An exclusive ``flock`` on ``folder/.onparse.lock``, held from :meth:`acquire` to
    :meth:`release`; the file says who holds it (pid, host, start time) and is removed on release.

    The lock belongs to the open file, so the kernel drops it when the process dies however it
    dies (``kill -9`` included): a stale lock file never blocks the next run.  Where the file
    system has no locks (some network mounts), the run goes on with a warning.  ``option`` is
    the one that names the folder (``--out`` of ``train``, ``--run-dir`` of ``distill``)."""

    def __init__(self, folder: str, option: str = "--out"):
        self.folder = folder
        self.option = option
        self.path = os.path.join(folder, LOCK)
        self.fd: Optional[int] = None

    def acquire(self, warn=None, wait=None) -> "FolderLock":
        """Take the lock; OnparseError when another process holds it, or with ``wait`` (a
        callable) wait for it to be released, calling ``wait`` once with the holder's description."""
        try:
            import fcntl
        except ImportError:                  # not a Unix system: no lock
            return self
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as err:
                raise OnparseError(f"cannot create {self.path}: {err.strerror or err}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _lock_holder(fd)
                os.close(fd)
                if wait is not None:
                    wait(holder)
                    wait = _poll
                    continue
                raise OnparseError(f"{self.folder} is in use by another training run ({holder}); wait for "
                                   f"it to end or choose another {self.option}") from None
            except OSError as err:
                os.close(fd)
                if warn:
                    warn(f"warning: cannot lock {self.path} ({err.strerror}): nothing stops a second run "
                         "from writing into this folder")
                return self
            if _is_current(fd, self.path):
                break
            os.close(fd)                     # locked a file its holder removed as we opened it: again
        self.fd = fd
        import socket

        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"pid {os.getpid()} on {socket.gethostname()} since {stamp}\n".encode())
        except OSError as err:               # a full disk: no lock file left behind
            self.release()
            raise OnparseError(f"cannot write {self.path}: {err.strerror or err}") from None
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        import fcntl

        try:
            os.unlink(self.path)             # while still locked: see _is_current
        except OSError:
            pass
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> "FolderLock":
        return self.acquire()

    def __exit__(self, *exc) -> bool:
        self.release()
        return False


def _poll(holder: str) -> None:
    """How :meth:`FolderLock.acquire` waits for the holder after saying so once."""
    time.sleep(0.5)


def _is_current(fd: int, path: str) -> bool:
    """Whether ``fd`` is still the file at ``path`` (a releasing run removes it)."""
    try:
        mine, now = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)


def _lock_holder(fd: int) -> str:
    """What the holder wrote into the lock file, made safe to print on one line."""
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace")
    except OSError:
        text = ""
    text = " ".join(text.split())
    return "".join(c for c in text if c.isprintable()) or "a process that has not written its name yet"


# -- the metrics log ---------------------------------------------------------------------------
class MetricsLog:
    """Messages to stderr (through tqdm so the bar stays intact) and JSON lines to the metrics
    log, from rank 0 only."""

    def __init__(self, path: Optional[str], enabled: bool):
        self.enabled = enabled
        self.path = path
        self.printing = True

    def say(self, message: str) -> None:
        # A closed stderr (2>&-) silences the run, no more.
        if self.enabled and self.printing and sys.stderr is not None:
            from tqdm import tqdm

            try:
                tqdm.write(message, file=sys.stderr)
            except OSError:
                # A reader that went away (`train ... 2>&1 | head -1`) or a full disk under a log
                # file stops the printing, never the training: metrics.jsonl keeps the record.
                self.printing = False

    def event(self, name: str, **values) -> None:
        if self.enabled and self.path:
            record = {"event": name, "time": round(time.time(), 3), **values}
            try:
                with open(self.path, "a", encoding="utf-8") as handle:
                    handle.write(dumps(record) + "\n")
            except OSError as err:
                raise OnparseError(f"cannot write {self.path}: {err.strerror or err}") from None


def truncate_log(path: str, step: int) -> int:
    """Cut the metrics log at ``path`` before its first record of a step after ``step`` (the
    checkpoint a resume starts from) or its first unreadable line (a write cut by a kill), so
    that the resumed run records each epoch once.  Returns the number of lines removed."""
    if not os.path.isfile(path):
        return 0
    keep, removed = 0, 0
    with open(path, "rb") as handle:
        for line in handle:
            if removed or not _logged_by(line, step):
                removed += 1
            else:
                keep += len(line)
    if removed:
        os.truncate(path, keep)
    return removed


def _logged_by(line: bytes, step: int) -> bool:
    """Whether a metrics line is a whole record from at most ``step`` (records without a step,
    like ``test``, go with the records around them)."""
    try:
        record = decode(line)
    except ValueError:
        return False
    if not isinstance(record, dict) or not line.endswith(b"\n"):
        return False
    logged = record.get("step")
    return not isinstance(logged, int) or logged <= step


# -- what a run has done, from its files (onparse fit reads its runs by these) -------------------
def epoch_path(folder: str, epoch: int) -> str:
    return os.path.join(folder, EPOCH_SNAPSHOT.format(epoch))


def kept_epochs(folder: str) -> List[int]:
    """The epochs whose snapshots ``folder`` holds (``--keep-epochs``), in order."""
    if not os.path.isdir(folder):
        return []
    return sorted(int(name[6:9]) for name in os.listdir(folder)
                  if name.startswith("epoch-") and name.endswith(".pt") and name[6:9].isdigit())


def logged_events(folder: str) -> List[Dict[str, Any]]:
    """The events a run has logged in its ``metrics.jsonl``: each line that is a JSON object (a
    line cut short by a kill, or not text at all, is skipped; its readers check each field)."""
    log = os.path.join(folder, METRICS)
    if not os.path.exists(log):
        return []
    out = []
    with open(log, "rb") as handle:
        for line in handle:
            try:
                event = decode(line.decode("utf-8"))
            except ValueError:            # UnicodeDecodeError is one
                continue
            if isinstance(event, dict):
                out.append(event)
    return out


def valid_perplexities(folder: str) -> Dict[int, float]:
    """Each logged epoch's validation perplexity (the last record of an epoch logged twice)."""
    return {int(e["epoch"]): float(e["valid_ppl"]) for e in logged_events(folder)
            if e.get("event") == "epoch" and isinstance(e.get("valid_ppl"), (int, float))
            and isinstance(e.get("epoch"), int)}


def epoch_seconds(folder: str) -> List[float]:
    """The training seconds of each epoch a run has logged."""
    return [float(e["epoch_time_s"]) for e in logged_events(folder)
            if e.get("event") == "epoch" and isinstance(e.get("epoch_time_s"), (int, float))]


def has_last(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, LAST))


def stopped_since(folder: str, since: float) -> bool:
    """Whether the run in ``folder`` logged its stop (it saved first) at or after ``since``
    (wall clock, a second's leeway): that invocation finished, however its process ended."""
    return any(e.get("event") in ("stop", "diverged") and isinstance(e.get("time"), (int, float))
               and e["time"] >= since - 1 for e in logged_events(folder))


def run_finished(folder: str) -> bool:
    """Whether the run in ``folder`` stopped for good (its epochs done, or it diverged)."""
    stops = [e for e in logged_events(folder) if e.get("event") in ("stop", "diverged")]
    return bool(stops) and (stops[-1]["event"] == "diverged" or stops[-1].get("reason") == "epochs")

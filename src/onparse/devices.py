"""Where and how torch runs: the one rule for ``--device`` and the one for ``--threads``.

Every command and the Python API resolve devices through :func:`resolve_device`, so that a
device is refused with the same message everywhere; CPU threads are set for one call with
:func:`torch_threads` (every command's ``--threads`` and the API's ``threads`` go through it, and
through :func:`thread_count`'s cap) and given back after it.  torch is imported when a function runs, not at
import time (the command line imports this module at start-up).
"""
import contextlib
import os
import sys
from typing import Callable, Iterator, Optional

from .errors import OnparseError

#: Sentences parsed in one batch by default: a GPU needs wide batches to be busy; on a CPU 64
#: sentences already make the matrix products efficient, and wider ones only add padding.
BATCH_SIZE = {"cpu": 64, "cuda": 512}
#: Least bound on the padded tokens (steps x sentences) of one batch; a parser allows
#: ``max(MAX_TOKENS, 128 x batch size)``.
MAX_TOKENS = 8192


def batch_size_for(device) -> int:
    """The default batch size on ``device`` (a ``torch.device``): :data:`BATCH_SIZE`."""
    return BATCH_SIZE["cuda" if device.type == "cuda" else "cpu"]

#: The devices onparse runs on, as ``--device`` names them.
DEVICE_NAMES = ("auto", "cpu", "cuda", "cuda:N")


def resolve_device(name: str = "auto"):
    """``auto`` -> ``cuda`` when a GPU is visible, else ``cpu``; ``cpu``, ``cuda``, ``cuda:N``
    as given.  A CUDA device this machine lacks, or a device onparse does not run on (``meta``,
    ``mps``), is a one-line OnparseError.  Returns a :class:`torch.device` (``cuda`` keeps no
    index: torch's current device)."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise OnparseError(f"unknown device {name!r}: onparse runs on {', '.join(DEVICE_NAMES)}")
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise OnparseError(f"--device {name}: this torch sees no CUDA device (use --device cpu or auto)")
        if device.index is not None and device.index >= count:
            raise OnparseError(f"--device {name}: no CUDA device {device.index}, this machine has {count} "
                               f"(cuda:0 to cuda:{count - 1})")
    return device


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask; all of the machine's elsewhere)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _note(message: str) -> None:
    if sys.stderr is not None:
        try:
            print(message, file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass


def thread_count(threads: Optional[int], note: Callable[[str], None] = _note) -> Optional[int]:
    """The rule for ``--threads``: ``threads`` as torch will use it.  None stays None (torch's
    own choice, never above the cores); fewer than 1 is an OnparseError; more than the
    :func:`usable_cores` is capped there with a one-line ``note`` (stderr by default): more
    threads than CPUs only wait for each other, and thousands crash OpenMP or stall the machine."""
    if threads is None:
        return None
    if threads < 1:
        raise OnparseError(f"threads must be at least 1, got {threads}")
    cores = usable_cores()
    if threads > cores:
        note(f"note: --threads {threads} is more than the {cores} CPU core(s) this process may use: "
             f"using {cores}")
        return cores
    return threads


@contextlib.contextmanager
def torch_threads(threads: Optional[int]) -> Iterator[None]:
    """Within the block torch uses ``threads`` CPU threads, capped by :func:`thread_count` (None:
    leave torch's setting, and torch unimported); the previous setting is restored after, however
    the block ends."""
    threads = thread_count(threads)
    if threads is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)

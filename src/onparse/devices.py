"""Where and how torch runs: the one rule for ``--device`` and the one for ``--threads``.

Every command and the Python API resolve devices through :func:`resolve_device`, so that a
device is refused with the same message everywhere; CPU threads are set for one call with
:func:`torch_threads` and given back after it.  torch is imported when a function runs, not at
import time (the command line imports this module at start-up).
"""
import contextlib
from typing import Iterator, Optional

from .errors import OnparseError

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


@contextlib.contextmanager
def torch_threads(threads: Optional[int]) -> Iterator[None]:
    """Within the block torch uses ``threads`` CPU threads (None: leave torch's setting); the
    previous setting is restored after, however the block ends."""
    import torch

    if threads is not None and threads < 1:
        raise OnparseError(f"threads must be at least 1, got {threads}")
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)

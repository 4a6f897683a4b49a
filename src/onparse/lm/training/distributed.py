"""The processes of a training run: one, or several under ``torchrun`` (``WORLD_SIZE`` > 1),
each on its own device, joined in a process group (``nccl`` on CUDA, ``gloo`` on CPU).

With one process the collectives below return their input: the training loop calls them
unconditionally.
"""
import datetime
import os
from dataclasses import dataclass
from typing import List, Tuple

import torch
import torch.distributed as dist

from ...devices import resolve_device
from ...errors import OnparseError


@dataclass(frozen=True)
class Dist:
    """Where this process stands: ``rank`` of ``world_size``, on GPU ``local_rank`` of its machine."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    owns_group: bool = False             # we initialised the process group (and destroy it)

    @property
    def active(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


#: What torchrun sets beside WORLD_SIZE; without them a process group cannot form.
TORCHRUN_VARIABLES = ("RANK", "MASTER_ADDR", "MASTER_PORT")
#: Seconds to wait for the other processes of a distributed run (ONPARSE_JOIN_TIMEOUT overrides).
JOIN_TIMEOUT_S = int(os.environ.get("ONPARSE_JOIN_TIMEOUT", "300") or 300)


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    try:
        return default if value in (None, "") else int(value)
    except ValueError:
        raise OnparseError(f"environment variable {name}={value!r} is not an integer") from None


def setup(device_name: str) -> Tuple[Dist, torch.device]:
    """Pick the device (:func:`onparse.devices.resolve_device`; ``cuda`` without an index is
    GPU ``LOCAL_RANK`` under torchrun, else torch's current one) and, under torchrun, join the
    process group.  Call :func:`teardown` with the result when done."""
    world = _env_int("WORLD_SIZE", 1)
    local_rank = _env_int("LOCAL_RANK", 0)
    device = resolve_device(device_name)
    if device.type == "cuda":
        if device.index is None:           # one process per GPU under torchrun
            device = torch.device("cuda", local_rank if world > 1 else torch.cuda.current_device())
            resolve_device(str(device))    # LOCAL_RANK may name a GPU this machine lacks
        torch.cuda.set_device(device)
    if world <= 1:
        return Dist(), device
    if dist.is_initialized():
        return Dist(dist.get_rank(), dist.get_world_size(), local_rank, False), device
    # WORLD_SIZE > 1 without the rest of torchrun's variables is a leftover of another job.
    missing = [name for name in TORCHRUN_VARIABLES if not os.environ.get(name)]
    if missing:
        raise OnparseError(f"WORLD_SIZE={world} asks for a distributed run, but {', '.join(missing)} "
                           f"{'is' if len(missing) == 1 else 'are'} not set: start the run with torchrun, or "
                           "unset WORLD_SIZE for a single process")
    try:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo",
                                timeout=datetime.timedelta(seconds=JOIN_TIMEOUT_S))
    except (RuntimeError, ValueError, OSError) as err:
        # Includes the join timing out: the other processes never came (leftover RANK, MASTER_*).
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise OnparseError(f"cannot join the distributed run (WORLD_SIZE={world}, RANK="
                           f"{os.environ.get('RANK')}, MASTER_ADDR={os.environ.get('MASTER_ADDR')}, "
                           f"MASTER_PORT={os.environ.get('MASTER_PORT')}): {first}") from None
    return Dist(dist.get_rank(), dist.get_world_size(), local_rank, True), device


def teardown(ctx: Dist) -> None:
    """Leave the process group if :func:`setup` joined it."""
    if ctx.owns_group:
        dist.destroy_process_group()


def all_reduce(values: List[float], ctx: Dist, device, op: str = "sum") -> List[float]:
    """``values`` summed (``op="sum"``) or maximised (``"max"``) over the processes, in float64."""
    if not ctx.active:
        return list(values)
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM if op == "sum" else dist.ReduceOp.MAX)
    return t.tolist()


def all_gather(obj, ctx: Dist) -> list:
    """Every process's ``obj``, in rank order (picklable objects)."""
    if not ctx.active:
        return [obj]
    out = [None] * ctx.world_size
    dist.all_gather_object(out, obj)
    return out

"""Measurement helpers shared by the benchmark scripts (imported as ``common``: the scripts run
as ``python benchmarks/NAME.py``, which puts this folder first on ``sys.path``)."""
import importlib.util
import resource
import sys
import time
from pathlib import Path

import torch


def sync(device) -> None:
    """Wait for queued CUDA work (a no-op on the CPU)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def matmul_peak_gflops(device="cpu", size: int = 2048, repeats: int = 10) -> float:
    """fp32 matrix-multiply throughput of this machine: the best of ``repeats`` timed
    ``size``-cube ``torch.mm`` calls after one untimed warm-up call.  A single reading is easily
    low when another process holds a core for a moment, so scripts measure it before and after
    their rounds and keep the larger (:func:`best_peak`)."""
    a = torch.randn(size, size, device=device)
    b = torch.randn(size, size, device=device)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        sync(device)
        start = time.perf_counter()
        torch.mm(a, b)
        sync(device)
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best / 1e9


def best_peak(*readings: float) -> float:
    """The peak to report: the largest of several readings of :func:`matmul_peak_gflops`."""
    return max(readings)


def peak_rss_mib() -> float:
    """Peak resident set size of this process in MiB.  /proc's VmHWM where there is one:
    getrusage's ru_maxrss survives fork and exec on Linux, so a fresh child of a big parent would
    report the parent's size."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2 ** 20 if sys.platform == "darwin" else rss / 1024     # bytes on macOS, KiB elsewhere


def load_reference(path):
    """Import the paper-style speed baseline (``../shared/bench/reference_onlstm.py``) from
    ``path``; exit with a one-line error when it is not there."""
    path = Path(path)
    if not path.is_file():
        sys.exit(f"error: reference implementation not found: {path} (use --reference)")
    spec = importlib.util.spec_from_file_location("reference_onlstm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def word(i: int) -> str:
    """A letters-only lowercase word per id, ``w`` then base-26 letters (normalisation leaves it
    alone, and it is never punctuation): the benchmarks' made-up vocabularies."""
    letters = ""
    while True:
        letters = chr(ord("a") + i % 26) + letters
        i //= 26
        if i == 0:
            return "w" + letters

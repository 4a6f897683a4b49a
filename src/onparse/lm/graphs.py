"""Replaying the recurrence's fixed-shape loops as CUDA graphs.

On a GPU the per-step loops of :mod:`onparse.lm.cell` are bound by the host, not the device: at the
paper's batch size of 20 a training step of the paper configuration keeps the H100 busy for about
24 ms but takes about 140 ms of Python and kernel launches (``benchmarks/bench_train.py``,
torch profiler).  A CUDA graph records the loop's kernels once and replays them with one launch,
so the step costs roughly what the device needs.

:class:`GraphCache` keeps one captured graph per key (the caller puts every shape, dtype and
flag that changes the recorded kernels into the key), each with its own static input buffers
and private memory pool, and evicts the least recently used beyond a memory budget (training with
BPTT length jitter meets a few dozen sequence lengths).  Outputs are cloned out of the graph's
buffers, so a later replay of the same graph never overwrites what an earlier call returned.
"""
import os
from collections import OrderedDict
from typing import Callable, Hashable, Sequence

import torch
from torch import Tensor

#: ``ONPARSE_CUDA_GRAPHS=0`` turns the graphs off (the loops then launch kernel by kernel).
ENABLED = os.environ.get("ONPARSE_CUDA_GRAPHS", "1") != "0"


def _flatten(outputs):
    """Nested tuples/lists of tensors (or None) -> (flat list of tensors, structure)."""
    if isinstance(outputs, (tuple, list)):
        flat, spec = [], []
        for item in outputs:
            sub_flat, sub_spec = _flatten(item)
            flat.extend(sub_flat)
            spec.append(sub_spec)
        return flat, tuple(spec)
    if outputs is None:
        return [], None
    return [outputs], "t"


def _unflatten(flat, spec, position=0):
    if spec is None:
        return None, position
    if spec == "t":
        return flat[position], position + 1
    items = []
    for sub in spec:
        item, position = _unflatten(flat, sub, position)
        items.append(item)
    return tuple(items), position


class _Captured:
    """One recorded call of ``fn`` on static copies of its tensor inputs."""

    def __init__(self, fn: Callable, inputs: Sequence[Tensor]):
        self.inputs = [t.detach().clone() for t in inputs]
        # Warm up on a side stream (first calls allocate, pick cuBLAS algorithms and fill caches
        # such as the cumax matrices, none of which may happen during capture).
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn(*self.inputs)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        # thread_local: other threads (the NCCL watchdog and DDP's reducer under torchrun, a data
        # loader) may keep calling CUDA while this thread records.
        with torch.cuda.graph(self.graph, capture_error_mode="thread_local"):
            outputs = fn(*self.inputs)
        self.flat, self.spec = _flatten(outputs)

    def __call__(self, inputs: Sequence[Tensor]):
        for static, value in zip(self.inputs, inputs):
            static.copy_(value)
        self.graph.replay()
        return _unflatten([t.clone() for t in self.flat], self.spec)[0]


class GraphCache:
    """Least-recently-used captured graphs, by key, within a memory budget.

    A graph's memory (its static inputs, the intermediates of its private pool and its outputs) is
    estimated as twice the bytes of its inputs and outputs; the least recently used graphs are
    dropped while the estimates add up to more than ``budget_fraction`` of the GPU's memory or
    there are more than ``max_graphs``.
    """

    def __init__(self, max_graphs: int = 256, budget_fraction: float = 0.25):
        self.max_graphs, self.budget_fraction = max_graphs, budget_fraction
        self.graphs: "OrderedDict[Hashable, _Captured]" = OrderedDict()
        self.sizes: dict = {}
        self.captures = 0

    def run(self, key: Hashable, fn: Callable, inputs: Sequence[Tensor]):
        """``fn(*inputs)`` through the graph recorded for ``key`` (recorded now if new).  ``fn``
        must launch the same kernels for every input with this key's shapes, without syncing
        with the host; it returns tensors, None or nested tuples of them."""
        captured = self.graphs.get(key)
        if captured is None:
            captured = _Captured(fn, inputs)
            self.captures += 1
            self.graphs[key] = captured
            self.sizes[key] = 2 * sum(t.numel() * t.element_size() for t in captured.inputs + captured.flat)
            budget = self.budget_fraction * torch.cuda.get_device_properties(inputs[0].device).total_memory
            while len(self.graphs) > 1 and (len(self.graphs) > self.max_graphs
                                            or sum(self.sizes.values()) > budget):
                old, _ = self.graphs.popitem(last=False)
                del self.sizes[old]
        else:
            self.graphs.move_to_end(key)
        return captured(inputs)

    def __call__(self, tag: Hashable, fn: Callable, inputs: Sequence[Tensor]):
        """``fn(*inputs)``: replayed from the graph keyed by ``tag`` (every flag that changes the
        recorded kernels) and each input's shape, dtype and device when :func:`usable`, else
        launched directly."""
        if not usable(*inputs):
            return fn(*inputs)
        key = (tag, tuple((tuple(t.shape), t.dtype, t.device) for t in inputs))
        return self.run(key, fn, inputs)

    def clear(self) -> None:
        self.graphs.clear()
        self.sizes.clear()


def usable(*tensors: Tensor) -> bool:
    """Graphs are used on CUDA tensors only, when enabled and not while another capture runs."""
    return (ENABLED and tensors[0].is_cuda
            and not torch.cuda.is_current_stream_capturing())

"""onparse.lm.graphs on any machine: the output structure survives the round trip, and graphs are
never used for CPU tensors (the CUDA behaviour is tested in test_cuda.py)."""
import torch

from onparse.lm import graphs
def test_flatten_round_trip_keeps_nesting_and_none():
    a, b, c = torch.zeros(1), torch.ones(2), torch.full((3,), 2.0)
    nested = (a, None, (b, (c, None)), [a])
    flat, spec = graphs._flatten(nested)
    assert [t.numel() for t in flat] == [1, 2, 3, 1]
    rebuilt, used = graphs._unflatten(flat, spec)
    assert used == 4
    assert rebuilt[0] is a and rebuilt[1] is None and rebuilt[2][0] is b
    assert rebuilt[2][1][0] is c and rebuilt[2][1][1] is None and rebuilt[3][0] is a


def test_cpu_tensors_never_use_graphs():
    assert not graphs.usable(torch.zeros(2))

"""Batched extraction of syntactic distances for many sentences (``docs/onlstm.md`` section 3).

Each sentence ``w_1 .. w_n`` is read as ``<eos> w_1 .. w_n <eos>`` from a zero state and the
distances at the steps of ``w_1 .. w_n`` are kept.  The model is causal, so the value at a step
depends only on that step's token and earlier ones: the closing ``<eos>`` cannot change any kept
value and is not computed, and right padding cannot either, so sentences of different lengths
share a batch.  Sentences are sorted by length before batching (little padding), and a batch is
bounded both in sentences and in padded tokens, so one very long sentence runs on its own
instead of padding a whole batch to its length.  There is no length limit: a sentence is one
sequence, however long (memory grows linearly with its length).
"""
from typing import List, Optional, Sequence

import numpy as np

from ..devices import BATCH_SIZE as DEVICE_BATCH, MAX_TOKENS as DEVICE_MAX_TOKENS
from ..errors import OnparseError

#: Default bounds on the sentences and the padded tokens (steps x sentences) of one batch.
BATCH_SIZE, MAX_TOKENS = DEVICE_BATCH["cpu"], DEVICE_MAX_TOKENS


def plan_batches(lengths: Sequence[int], batch_size: int = BATCH_SIZE,
                 max_tokens: int = MAX_TOKENS) -> List[List[int]]:
    """Group sentence indices into batches of similar length.

    Indices are sorted by length (stable, so equal lengths keep their order); a batch grows
    while it has fewer than ``batch_size`` sentences and ``sentences x (longest + 1)`` stays
    within ``max_tokens``.  Every batch holds at least one sentence.  Empty sentences
    (length 0) are left out: they have no distances to compute.
    """
    if batch_size < 1 or max_tokens < 1:
        raise ValueError("batch_size and max_tokens must be positive")
    order = sorted((i for i, n in enumerate(lengths) if n > 0), key=lambda i: lengths[i])
    batches: List[List[int]] = []
    current: List[int] = []
    for i in order:
        steps = lengths[i] + 1  # leading <eos> + words; sorted, so this is the batch's longest
        if current and (len(current) >= batch_size or (len(current) + 1) * steps > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def sentence_distances(model, sentences: Sequence[Sequence[int]], eos_id: int,
                       n_layers: Optional[int] = None, batch_size: int = BATCH_SIZE,
                       max_tokens: int = MAX_TOKENS, progress=None) -> List[np.ndarray]:
    """Distances of each sentence of word ids, in the order given.

    ``model``: an :class:`~onparse.lm.model.ONLSTMLanguageModel` (its ``distances`` method is used,
    on the model's device); ``sentences``: lists of ids without ``<eos>``; ``n_layers``: run
    the first n layers only (default all; layer K needs ``n_layers >= K``); ``progress(k)`` is
    called with the number of sentences of each batch done.

    Returns one float32 array per sentence of shape ``(n_layers, 2, n)``: ``[l, 0]`` is the
    master-forget distance d_f of layer l + 1 at each word, ``[l, 1]`` the master-input
    distance d_i.  An empty sentence gives an array with n = 0.
    """
    import torch

    n_layers = model.config.n_layers if n_layers is None else n_layers
    device = next(model.parameters()).device
    lengths = [len(s) for s in sentences]
    results: List[Optional[np.ndarray]] = [None] * len(sentences)
    for i, n in enumerate(lengths):
        if n == 0:
            results[i] = np.zeros((n_layers, 2, 0), dtype=np.float32)
    for batch in plan_batches(lengths, batch_size, max_tokens):
        steps = lengths[batch[-1]] + 1
        # (T, B) ids, right-padded with <eos> (padding never influences earlier steps).
        grid = np.full((steps, len(batch)), eos_id, dtype=np.int64)
        for column, i in enumerate(batch):
            grid[1:lengths[i] + 1, column] = sentences[i]
        tokens = torch.from_numpy(grid).to(device)
        dist = model.distances(tokens, n_layers)             # (L, 2, T, B)
        dist = dist.float().cpu().numpy()
        if not np.isfinite(dist).all():
            # A NaN distance decodes to an arbitrary (right-branching) tree without a word.
            raise OnparseError("the model gives NaN or infinite distances: its weights or the input "
                               "overflow; the trees would be meaningless")
        for column, i in enumerate(batch):
            results[i] = np.ascontiguousarray(dist[:, :, 1:lengths[i] + 1, column])
        if progress is not None:
            progress(len(batch))
    return results  # type: ignore[return-value]

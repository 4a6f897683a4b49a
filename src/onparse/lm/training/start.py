"""What a run starts from: the corpus as ids of its vocabulary, split over the processes, the
model, from the seed or the weights of ``--init-from``, and what model it is
(:class:`Architecture`: the ON-LSTM, or a recurrent baseline trained by the same recipe)."""
from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple, Optional, Tuple

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel

from ...text.corpora import batchify, encode_stream, shard_streams
from ...errors import OnparseError
from ..model import ONLSTMLanguageModel
from ..file import load_checkpoint
from ..perplexity import fit_streams
from ...text.vocab import Vocabulary
from .config import TrainConfig
from .distributed import Dist
from ...training.fingerprint import fingerprint


@dataclass(frozen=True)
class Architecture:
    """What a language model's run trains, by the AWD-LSTM recipe of this package: its presets
    and settings class (:class:`~onparse.lm.training.config.TrainConfig`, or one with the same
    fields but the ON-LSTM's chunk size, and a ``model_config(vocab_size)``), how its model is
    built from that config, and how its files are written, checked and read back.  The
    ON-LSTM's is :data:`onparse.lm.training.train.ONLSTM`; a recurrent baseline
    (:mod:`onparse.baselines_lm`) gives its own."""

    presets: Mapping[str, Any]
    train_config: type
    build: Callable[[Any], Any]                 # model config -> torch module
    save: Callable[..., None]                   # (path, *, config, vocab, state_dict, metadata, training)
    check: Callable[..., Any]                   # (blob, path, *, verify) -> blob; OnparseError otherwise
    load: Callable[..., Any]                    # (path, device) -> the module of a saved file


class Data(NamedTuple):
    corpus: Any                          # onparse.text.corpora.Corpus
    vocab: Vocabulary
    train: Any                           # (N, B / world_size) ids of this rank's streams, on the device
    valid: Any                           # (N', B') validation ids of this rank's streams, on the device
    fingerprint: str                     # of all training ids
    tokens_per_epoch: int                # training tokens of an epoch over all ranks


def load_data(cfg: TrainConfig, corpus, ctx: Dist, device, words) -> Data:
    """The ``corpus`` as ids of the vocabulary ``words`` (None: built from the training text)."""

    vocab = Vocabulary(words) if words is not None else Vocabulary.build(
        corpus.train, max_size=cfg.vocab_limit, min_count=cfg.min_count)
    train_ids = encode_stream(corpus.train, vocab)
    if train_ids.numel() < 3 * cfg.batch_size:
        raise OnparseError(f"training text too short: {train_ids.numel()} tokens for {cfg.batch_size} "
                           "streams (use a smaller --batch-size or a larger corpus)")
    full = batchify(train_ids, cfg.batch_size)                             # (N, B)
    valid_ids = encode_stream(corpus.valid, vocab)
    valid = batchify(valid_ids, fit_streams(valid_ids.numel(), cfg.eval_batch_size))
    return Data(corpus, vocab, shard_streams(full, ctx.rank, ctx.world_size).to(device),
                 valid[:, ctx.rank::ctx.world_size].contiguous().to(device), fingerprint(train_ids),
                 (full.shape[0] - 1) * full.shape[1])


def init_source(path: Optional[str], verify: bool = True) -> Tuple[Optional[dict], Optional[dict]]:
    """The checkpoint of ``--init-from`` and the record of it kept in the metadata (None, None
    without one)."""
    if not path:
        return None, None
    init = load_checkpoint(path, verify=verify)
    meta = init.get("metadata") or {}
    record = {"checkpoint": os.path.abspath(path), **{k: meta.get(k) for k in ("corpus", "preset", "epoch", "valid_ppl")},
              "seed": (meta.get("train_config") or {}).get("seed")}
    return init, record


def load_init(model, init: dict, path: str) -> None:
    """Copy the weights of ``init`` into ``model``; the sizes must match (dropout rates may differ)."""
    mine = model.config.to_dict()
    differs = [f"{k} {init['config'].get(k)} (here {mine[k]})"
               for k in ("vocab_size", "embedding_size", "hidden_size", "n_layers", "chunk_size")
               if init["config"].get(k) != mine[k]]
    if differs:
        raise OnparseError(f"--init-from {path} has another shape: {', '.join(differs)}; "
                           "pass the same size options as its run")
    try:
        model.load_state_dict(init["state_dict"])       # casts fp16 exports, like load_model
    except (RuntimeError, KeyError) as err:
        raise OnparseError(f"--init-from {path}: weights do not fit this model "
                           f"({str(err).splitlines()[0][:120]})") from None


def build_model(cfg: TrainConfig, vocab_size: int, ctx: Dist, device, init: Optional[dict], init_path: Optional[str],
                build: Callable[[Any], Any] = ONLSTMLanguageModel):
    """The model, from the seed (every RNG is seeded here) or ``init``'s weights, and what the
    loop calls forward: the model itself, or under DDP its wrapper.  The same initial weights on
    every rank; from here on, each rank its own dropout masks."""
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed % 2**32)
    model = build(cfg.model_config(vocab_size)).to(device)
    if init is not None:
        load_init(model, init, init_path)
    if ctx.rank:
        torch.manual_seed(cfg.seed + ctx.rank)
    if not ctx.active:
        return model, model
    # The decoder (tied embedding + bias) runs outside the wrapped forward, in the loss; every
    # parameter still gets a gradient each step, which is all DDP needs.
    return model, DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)

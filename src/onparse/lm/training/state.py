"""The resumable state of a training run: what ``last.pt`` holds under its ``"training"`` key,
beyond the weights, so that ``--resume`` continues bit-identically.

One pair, :meth:`TrainingState.to_dict` and :meth:`TrainingState.from_dict`, defines the
layout (plain values and tensors only, for ``torch.load(weights_only=True)``)::

    {"config": TrainConfig.to_dict(),
     "corpus": CorpusSpec.to_dict(),
     "preset": "small" or None,
     "init_from": {...} or None,             # the checkpoint --init-from started the run from
     "fingerprint": "sha1 hex",              # of the training ids: another text is refused
     "optimizer": SGD state_dict,
     "raw_state_dict": {...} or None,        # the raw weights while averaging (the checkpoint's
                                             # state_dict then holds the averaged ones)
     "schedule": {"epoch", "position", "step", "val_history", "best_loss", "best_epoch",
                  "averaging_since", "averaged_steps", "epoch_time"},
     "rng": {"jitter": [version, [ints], gauss],     # random.Random of the window lengths
             "python": [version, [ints], gauss],     # the random module
             "numpy": {"name", "keys", "pos", "has_gauss", "cached_gaussian"},
             "ranks": [{"torch", "cuda", "hidden", "epoch_loss_sum", "epoch_tokens"}, ...]},
     "world_size": 1}

``ranks`` holds one entry per process (its torch and CUDA RNG states, its recurrent state in the
middle of an epoch, and its share of the epoch's cross-entropy so far).

What the loop changes as it trains is one plain value, :class:`LoopState`, beside the model, the
optimiser and the process's RNGs; :func:`restore` makes it from a saved :class:`TrainingState`
(putting the weights, the optimiser's state and the RNGs back), and :func:`capture` with
:func:`rank_state` turns it back into one.  Neither knows the loop that holds it.
"""
import os
import random
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

from ...files.checkpoint import GRAMMAR_FORMAT, read_file
from ...text.corpora import CorpusSpec
from ...errors import OnparseError
from ...files.run_folder import LAST
from ...files.safeio import perplexity_of
from .config import TrainConfig
from .distributed import Dist
from ..file import check_checkpoint
from .recipe import ParameterAverager

#: What a damaged "training" dict raises on the way in (a missing key, a wrong type ...).
DAMAGE = (KeyError, TypeError, ValueError, IndexError, AttributeError)


@dataclass
class Schedule:
    """Where the run stands; every process holds the same values."""

    epoch: int = 0                       # completed epochs
    position: int = 0                    # row of the next window in the current epoch
    step: int = 0                        # optimiser steps, over all invocations
    val_history: List[float] = field(default_factory=list)   # validation loss after each epoch
    best_loss: Optional[float] = None
    best_epoch: Optional[int] = None
    averaging_since: Optional[int] = None    # the epoch after which averaged SGD began
    epoch_time: float = 0.0              # training seconds spent in the current epoch

    @property
    def best_ppl(self) -> Optional[float]:
        return None if self.best_loss is None else perplexity_of(self.best_loss)


@dataclass
class RankState:
    """One process's own part of the state."""

    torch: Any                           # torch.get_rng_state()
    cuda: Any = None                     # torch.cuda.get_rng_state(), on CUDA
    hidden: Optional[list] = None        # [[h, c] per layer] in the middle of an epoch, else None
    epoch_loss_sum: float = 0.0          # summed cross-entropy of the epoch so far
    epoch_tokens: int = 0

    def to_dict(self) -> Dict[str, Any]:
        return {"torch": self.torch, "cuda": self.cuda, "hidden": self.hidden,
                "epoch_loss_sum": self.epoch_loss_sum, "epoch_tokens": self.epoch_tokens}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "RankState":
        return cls(d["torch"], d.get("cuda"), d.get("hidden"), d.get("epoch_loss_sum", 0.0), d.get("epoch_tokens", 0))


@dataclass
class LoopState:
    """What the training loop changes as it goes, in one value: built fresh at the start of a run
    (``LoopState(random.Random(seed))``) or by :func:`restore` from ``last.pt``, and saved by
    :func:`capture` and :func:`rank_state`.  The model's weights, the optimiser's state and the
    process's RNGs (torch, CUDA, ``random``, numpy) are the rest of what a resume needs."""

    jitter: random.Random                # draws the window lengths
    schedule: Schedule = field(default_factory=Schedule)
    averager: Optional[ParameterAverager] = None   # from the switch to averaged SGD on
    hidden: Optional[list] = None        # this rank's recurrent state, carried across windows
    epoch_loss_sum: float = 0.0          # this rank's summed cross-entropy over the epoch so far
    epoch_tokens: int = 0                # and its number of target tokens


@dataclass
class TrainingState:
    """Everything ``--resume`` needs but the weights.  The RNG states are kept as their
    modules give them (``random.getstate()``, ``numpy.random.get_state()``)."""

    config: TrainConfig
    corpus: CorpusSpec
    preset: Optional[str]
    init_from: Optional[Dict[str, Any]]
    fingerprint: Optional[str]
    optimizer: Dict[str, Any]
    raw_state_dict: Optional[Dict[str, Any]]
    schedule: Schedule
    averaged_steps: Optional[int]        # steps folded into the average (None: not averaging)
    jitter: tuple                        # random.Random state of the window lengths
    python: tuple                        # random.getstate()
    numpy: tuple                         # numpy.random.get_state()
    ranks: List[RankState]
    world_size: int

    def to_dict(self) -> Dict[str, Any]:
        """The ``"training"`` dict of ``last.pt`` (layout in the module docstring)."""
        s = self.schedule
        return {
            "config": self.config.to_dict(),
            "corpus": self.corpus.to_dict(),
            "preset": self.preset,
            "init_from": self.init_from,
            "fingerprint": self.fingerprint,
            "optimizer": self.optimizer,
            "raw_state_dict": self.raw_state_dict,
            "schedule": {"epoch": s.epoch, "position": s.position, "step": s.step,
                         "val_history": list(s.val_history), "best_loss": s.best_loss,
                         "best_epoch": s.best_epoch, "averaging_since": s.averaging_since,
                         "averaged_steps": self.averaged_steps, "epoch_time": s.epoch_time},
            "rng": {"jitter": _random_state_to_list(self.jitter),
                    "python": _random_state_to_list(self.python),
                    "numpy": _numpy_state_to_dict(self.numpy),
                    "ranks": [r.to_dict() for r in self.ranks]},
            "world_size": self.world_size,
        }

    @classmethod
    def from_dict(cls, d: Dict[str, Any], config_class: type = TrainConfig) -> "TrainingState":
        """Inverse of :meth:`to_dict` (``config_class``: the run's settings class); a damaged dict
        raises one of :data:`DAMAGE`."""
        sched, rng = d["schedule"], d["rng"]
        schedule = Schedule(epoch=sched["epoch"], position=sched["position"], step=sched["step"],
                            val_history=list(sched["val_history"]), best_loss=sched["best_loss"],
                            best_epoch=sched["best_epoch"], averaging_since=sched["averaging_since"],
                            epoch_time=sched.get("epoch_time", 0.0))
        return cls(config=config_class.from_dict(d["config"]), corpus=CorpusSpec.from_dict(d["corpus"]),
                   preset=d.get("preset"), init_from=d.get("init_from"), fingerprint=d.get("fingerprint"),
                   optimizer=d["optimizer"], raw_state_dict=d.get("raw_state_dict"), schedule=schedule,
                   averaged_steps=sched["averaged_steps"], jitter=_random_state_from_list(rng["jitter"]),
                   python=_random_state_from_list(rng["python"]), numpy=_numpy_state_from_dict(rng["numpy"]),
                   ranks=[RankState.from_dict(r) for r in rng["ranks"]], world_size=d.get("world_size", 1))


def read_state(out: str, verify: bool = True, check=check_checkpoint,
               config_class: type = TrainConfig) -> Tuple[Dict[str, Any], TrainingState]:
    """The checkpoint ``out/last.pt`` and its training state, for ``--resume``; one-line
    OnparseErrors when there is none or it is damaged.  ``check`` and ``config_class``: the
    file check and settings of the run's architecture (:class:`~onparse.lm.training.start.Architecture`)."""
    path = os.path.join(out, LAST)
    if not os.path.isfile(path):
        raise OnparseError(f"nothing to resume in {out}: {LAST} not found")
    blob = read_file(path)
    if isinstance(blob, dict) and blob.get("format") == GRAMMAR_FORMAT:
        raise OnparseError(f"{path} is a grammar run's {LAST}: resume it with --family grammar, or without --family")
    blob = check(blob, path, verify=verify)
    if not isinstance(blob.get("training"), dict):
        raise OnparseError(f"{path} holds no training state; it cannot be resumed")
    try:
        return blob, TrainingState.from_dict(blob["training"], config_class)
    except DAMAGE as err:
        raise unreadable(path, err) from None


def check_resume(state: TrainingState, config: TrainConfig, spec: CorpusSpec, preset: Optional[str]) -> None:
    """What may change on ``--resume``, checked in this one place: the preset, the corpus and
    every setting but ``epochs`` must be the saved run's (``--max-time``, ``--max-steps``,
    ``--device`` and the other run options are not part of the config); OnparseError otherwise."""
    if preset != state.preset:
        raise OnparseError(f"cannot change the preset when resuming (the run used '{state.preset}')")
    if spec != state.corpus:
        raise OnparseError(f"cannot change the corpus when resuming (the run used {state.corpus.source})")
    differs = [f.name for f in fields(type(config))
               if f.name != "epochs" and getattr(state.config, f.name) != getattr(config, f.name)]
    if differs:
        raise OnparseError(f"cannot change {', '.join(differs)} when resuming (only --epochs, "
                           "--max-time, --max-steps and --device)")


def check_text(state: TrainingState, fingerprint: str, source: str) -> None:
    """The one thing :func:`check_resume` cannot check before the text is read: the training ids
    must be the saved run's (``fingerprint`` of the text as read now)."""
    if state.fingerprint != fingerprint:
        raise OnparseError(f"the training text of {source} changed since the run started; cannot resume")


def restore(blob: Dict[str, Any], state: TrainingState, model, optimizer, ctx: Dist, device, *,
            path: str, warn) -> LoopState:
    """The loop state saved in ``blob`` (``last.pt``, whose training state is ``state``); puts
    the weights back into ``model``, the optimiser's state into ``optimizer``, and the RNGs of
    this process (rank ``ctx.rank``).  ``warn`` says that a run saved by another number of
    processes does not continue bit-identically.  OnparseError (naming ``path``) when the state
    does not fit the model; a damaged state raises one of :data:`DAMAGE`."""
    try:
        model.load_state_dict(state.raw_state_dict or blob["state_dict"])
        optimizer.load_state_dict(state.optimizer)
    except (RuntimeError, ValueError, KeyError) as err:
        raise OnparseError(f"{path}: training state does not fit this model ({str(err).splitlines()[0]})")
    loop = LoopState(random.Random(), state.schedule)
    if state.averaged_steps is not None:
        loop.averager = ParameterAverager(model)
        loop.averager.load(blob["state_dict"], state.averaged_steps)
    loop.jitter.setstate(state.jitter)
    random.setstate(state.python)
    np.random.set_state(state.numpy)
    if len(state.ranks) != ctx.world_size:
        warn(f"warning: the run was saved by {len(state.ranks)} processes, resumed by "
             f"{ctx.world_size}: the continuation is not bit-identical")
        torch.manual_seed(state.config.seed + 7919 * ctx.rank + loop.schedule.step)
        return loop
    mine = state.ranks[ctx.rank]
    torch.set_rng_state(mine.torch)
    if mine.cuda is not None and device.type == "cuda":
        torch.cuda.set_rng_state(mine.cuda, device)
    if mine.hidden is not None and loop.schedule.position > 0:
        loop.hidden = [(h.to(device), c.to(device)) for h, c in mine.hidden]
    loop.epoch_loss_sum, loop.epoch_tokens = mine.epoch_loss_sum, mine.epoch_tokens
    return loop


def rank_state(loop: LoopState, device) -> RankState:
    """This process's part of the state to save (its RNGs; in the middle of an epoch its
    recurrent state): what :func:`capture` gathers from every rank."""
    hidden = loop.hidden if loop.schedule.position else None
    return RankState(torch.get_rng_state(), torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
                     to_cpu(hidden) if hidden is not None else None,       # [[h, c] per layer], on the CPU
                     loop.epoch_loss_sum, loop.epoch_tokens)


def capture(loop: LoopState, model, optimizer, ranks: List[Dict[str, Any]], *, config: TrainConfig,
            corpus: CorpusSpec, preset: Optional[str], init_from: Optional[Dict[str, Any]],
            fingerprint: str) -> TrainingState:
    """The state to save in ``last.pt`` (the inverse of :func:`restore`): ``loop``, the raw weights
    of ``model`` while averaging, the state of ``optimizer`` and the RNGs of this process;
    ``ranks``: every process's :func:`rank_state` dict, gathered; the rest names the run."""
    return TrainingState(
        config=config, corpus=corpus, preset=preset, init_from=init_from, fingerprint=fingerprint,
        optimizer=to_cpu(optimizer.state_dict()), raw_state_dict=to_cpu(model.state_dict()) if loop.averager else None,
        schedule=loop.schedule, averaged_steps=loop.averager.count if loop.averager else None,
        jitter=loop.jitter.getstate(), python=random.getstate(), numpy=np.random.get_state(),
        ranks=[RankState.from_dict(r) for r in ranks], world_size=len(ranks))


def unreadable(path: str, err: BaseException) -> OnparseError:
    """The one-line error of a training state that cannot be used."""
    return OnparseError(f"{path}: unreadable training state ({type(err).__name__}: {str(err)[:120]})")


def to_cpu(x):
    """A copy of ``x`` (tensors, possibly inside dicts, lists and tuples; tuples become lists)
    with every tensor on the CPU."""
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", copy=True)
    if isinstance(x, dict):
        return {k: to_cpu(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_cpu(v) for v in x]
    return x


def _random_state_to_list(state) -> list:
    version, internal, gauss = state
    return [version, list(internal), gauss]


def _random_state_from_list(saved) -> tuple:
    version, internal, gauss = saved
    return version, tuple(internal), gauss


def _numpy_state_to_dict(state) -> Dict[str, Any]:
    name, keys, pos, has_gauss, cached = state
    return {"name": name, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
            "has_gauss": int(has_gauss), "cached_gaussian": float(cached)}


def _numpy_state_from_dict(d) -> tuple:
    return d["name"], d["keys"].numpy().astype(np.uint32), d["pos"], d["has_gauss"], d["cached_gaussian"]

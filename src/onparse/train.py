"""Training an ON-LSTM language model: presets, the optimisation schedule, checkpoints, resume,
and DistributedDataParallel (onlstm.md section 2, the AWD-LSTM recipe).

The schedule:

* the training text is one id sequence cut into ``batch_size`` streams; an epoch walks the streams
  in BPTT windows whose length is drawn per step (``bptt`` with probability 0.95, else
  ``bptt / 2``, then normal with standard deviation 5, at least 5), and the learning rate of the
  step is scaled by ``length / bptt`` so that every token weighs the same;
* loss = cross-entropy + ``alpha`` * mean(output^2) (AR, on the dropped last-layer output)
  + ``beta`` * mean((raw_t - raw_{t-1})^2) (TAR, on the undropped one); gradients clipped to norm
  ``clip``; SGD with ``weight_decay``;
* after each epoch the validation perplexity is measured; when it is worse than the best of all
  checks but the last ``nonmono`` ones (the non-monotone trigger), training switches to averaged
  SGD: the same SGD steps, plus a running mean of the parameters over every step since the
  switch (``torch.optim.ASGD`` with ``t0=0, lambd=0``, as AWD-LSTM uses it).  From then on,
  validation, ``best.pt`` and the ``state_dict`` of ``last.pt`` use the averaged weights.

Files written to the output folder (rank 0 only): ``best.pt`` (best validation perplexity),
``last.pt`` (latest state plus everything ``--resume`` needs: raw weights, optimiser, averager,
schedule, data position, recurrent state, RNG states), ``metrics.jsonl`` (one JSON object per
event; non-finite numbers are written as null).  Checkpoints hold plain values and tensors only
(``torch.load(weights_only=True)``).

The folder is the run's own: a new run refuses a folder that holds any of these files unless
told to ``overwrite``, and the run holds an exclusive lock on ``.onparse.lock`` inside it (which
names the holder) from start to end, so two runs cannot mix their files.  On a resume the
metrics log is cut back to the checkpoint's step, so every epoch is recorded once.

A non-finite loss (or non-finite weights about to be saved) stops the run with an error: the
files keep the last good state.

Under ``torchrun`` (``WORLD_SIZE`` > 1) every process trains on its own contiguous slice of
``batch_size / world_size`` streams; DistributedDataParallel averages the gradients, so all
ranks take identical steps.  Backend ``nccl`` on CUDA, ``gloo`` on CPU.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import random
import re
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from . import __version__
from .checkpoint import load_checkpoint, remove_stale_temp_files, save_checkpoint
from .corpora import CorpusSpec, batchify, encode_stream, load_corpus, shard_streams
from .errors import OnparseError
from .safeio import dumps, format_ppl
from .vocab import Vocabulary

if TYPE_CHECKING:  # annotations only
    import torch

# torch (and numpy) are imported inside the functions that use them, so that the command line
# can read the presets and build its options without paying for `import torch`.

#: Window-length jitter of the AWD-LSTM recipe.
JITTER_STD = 5.0
MIN_WINDOW = 5
HALF_BPTT_PROB = 0.05
#: In DDP, how often (steps) the ranks agree on stopping (Ctrl-C, --max-time).
SYNC_EVERY = 10
#: How often (steps) the progress bar's loss is refreshed.
LOG_EVERY = 10

BEST = "best.pt"
LAST = "last.pt"
METRICS = "metrics.jsonl"
#: Per-epoch snapshots (``--keep-epochs``): ``epoch-001.pt`` ...
EPOCH_SNAPSHOT = "epoch-{:03d}.pt"
EPOCH_SNAPSHOT_RE = re.compile(r"epoch-\d{3,}\.pt")
#: The lock file of a run folder: "pid N on host H since T" while a run is going, removed after.
LOCK = ".onparse.lock"


def _opt(default, help_text):
    return field(default=default, metadata={"help": help_text})


@dataclass(frozen=True)
class TrainConfig:
    """Every hyperparameter of a run (the defaults are the paper's).  Unknown keys are errors
    (:meth:`from_dict`); ``onparse train`` exposes each field as ``--field-name``."""

    # model (onparse.model.ModelConfig)
    embedding_size: int = _opt(400, "embedding size (= size of the last layer, tied decoder)")
    hidden_size: int = _opt(1150, "hidden size of every layer but the last")
    n_layers: int = _opt(3, "number of ON-LSTM layers")
    chunk_size: int = _opt(10, "neurons per master level (chunk size C)")
    dropout_word: float = _opt(0.1, "embedding dropout (drops whole word types)")
    dropout_input: float = _opt(0.5, "locked dropout on the embedding output")
    dropout_hidden: float = _opt(0.3, "locked dropout between layers")
    dropout_output: float = _opt(0.45, "locked dropout on the last layer's output")
    dropconnect: float = _opt(0.45, "DropConnect on the recurrent weights")
    # vocabulary
    max_vocab: int = _opt(10000, "largest vocabulary, <unk> and <eos> included (0: no limit)")
    min_count: int = _opt(1, "least count of a training word to enter the vocabulary")
    # optimisation
    batch_size: int = _opt(20, "parallel training streams (over all processes)")
    bptt: int = _opt(70, "mean BPTT window length")
    lr: float = _opt(30.0, "SGD learning rate")
    clip: float = _opt(0.25, "gradient norm clipping (0: none)")
    weight_decay: float = _opt(1.2e-6, "weight decay")
    alpha: float = _opt(2.0, "activation regularisation (AR) weight")
    beta: float = _opt(1.0, "temporal activation regularisation (TAR) weight")
    nonmono: int = _opt(5, "switch to averaged SGD when validation has not improved for this many checks")
    epochs: int = _opt(1000, "number of epochs")
    eval_batch_size: int = _opt(10, "streams for validation and test perplexity")
    seed: int = _opt(1111, "random seed")

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            kind = float if f.type in (float, "float") else int
            if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
                raise ValueError(f"{f.name} must be {'a number' if kind is float else 'an integer'}, got {value!r}")
            if not math.isfinite(value):     # inf and nan pass every comparison below
                raise ValueError(f"{f.name} must be a finite number, got {value!r}")
        positive = ("embedding_size", "hidden_size", "n_layers", "chunk_size", "min_count", "batch_size",
                    "bptt", "epochs", "eval_batch_size")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, got {self.lr}")
        for name in ("clip", "weight_decay", "alpha", "beta", "nonmono", "seed", "max_vocab"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        for name in ("dropout_word", "dropout_input", "dropout_hidden", "dropout_output", "dropconnect"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1), got {getattr(self, name)}")
        for name in ("embedding_size", "hidden_size") if self.n_layers > 1 else ("embedding_size",):
            if getattr(self, name) % self.chunk_size:
                raise ValueError(f"{name} {getattr(self, name)} is not a multiple of chunk_size {self.chunk_size}")

    def model_config(self, vocab_size: int):
        """The :class:`onparse.model.ModelConfig` of this run for a vocabulary of ``vocab_size``."""
        from .model import ModelConfig

        return ModelConfig(vocab_size=vocab_size, embedding_size=self.embedding_size,
                           hidden_size=self.hidden_size, n_layers=self.n_layers, chunk_size=self.chunk_size,
                           dropout_word=self.dropout_word, dropout_input=self.dropout_input,
                           dropout_hidden=self.dropout_hidden, dropout_output=self.dropout_output,
                           dropconnect=self.dropconnect)

    @property
    def vocab_limit(self) -> Optional[int]:
        """``max_vocab`` as :meth:`Vocabulary.build` takes it (None: no limit)."""
        return self.max_vocab or None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d) -> "TrainConfig":
        if not isinstance(d, dict):
            raise ValueError(f"training config must be a dict, got {type(d).__name__}")
        unknown = sorted(set(d) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"unknown training config keys: {', '.join(map(str, unknown))}")
        return cls(**d)

    def with_overrides(self, overrides: Dict[str, Any]) -> "TrainConfig":
        """A copy with some fields replaced; unknown names raise ``ValueError``."""
        unknown = sorted(set(overrides) - {f.name for f in fields(self)})
        if unknown:
            raise ValueError(f"unknown training options: {', '.join(unknown)}")
        return replace(self, **overrides)


#: Named starting points; every field can still be overridden.
PRESETS: Dict[str, TrainConfig] = {
    # onlstm.md section 2 (25M parameters with PTB's 10k vocabulary).  The bundled model is this
    # preset at embedding 300 / hidden 600 (9.4M parameters, under the package's 20 MB in fp16;
    # examples/train_default.sh).
    "paper": TrainConfig(),
    # A CPU-sized model: an epoch of the embedded WSJ text (290k tokens) in a few minutes on two
    # cores.  Batch 20 as in the paper: on this little text, more and smaller steps learn faster
    # per token than batch 64 at about the same tokens/s.  The paper's dropout rates: lower ones
    # (0.3/0.2/0.3, DropConnect 0.3) reach a lower perplexity sooner but induce worse trees
    # (all-lengths F1 36.9 over 3 seeds after 70 epochs, against 40.2 over 5 seeds after 15 with
    # these; README, "How the bundled model was made").
    "small": TrainConfig(embedding_size=200, hidden_size=400, n_layers=3, chunk_size=10,
                         dropout_word=0.1, dropout_input=0.5, dropout_hidden=0.3, dropout_output=0.45,
                         dropconnect=0.45, max_vocab=10000, batch_size=20, bptt=70, epochs=15),
    # Seconds on a small file: for tests and smoke runs.  Two layers: plain SGD takes a model
    # this small off the unigram plateau in a few epochs with two layers, not with three.
    "tiny": TrainConfig(embedding_size=32, hidden_size=32, n_layers=2, chunk_size=4,
                        dropout_word=0.05, dropout_input=0.1, dropout_hidden=0.1, dropout_output=0.1,
                        dropconnect=0.1, max_vocab=2000, batch_size=4, bptt=10, lr=10.0,
                        nonmono=3, epochs=3, eval_batch_size=4),
}


def preset(name: str) -> TrainConfig:
    """The preset called ``name`` (``paper``, ``small``, ``tiny``)."""
    try:
        return PRESETS[name]
    except KeyError:
        raise OnparseError(f"unknown preset '{name}'; known: {', '.join(PRESETS)}") from None


@dataclass(frozen=True)
class RunOptions:
    """How to run (not part of the run's identity, so free to change on ``--resume``)."""

    out: str
    device: str = "auto"                 # auto | cpu | cuda | cuda:N
    max_time: Optional[float] = None     # seconds of this invocation
    max_steps: Optional[int] = None      # optimiser steps in total, over resumes
    resume: bool = False
    overwrite: bool = False
    progress: Optional[bool] = None      # tqdm bar; None: when stderr is a terminal
    amp: bool = True                     # bf16 autocast on CUDA
    threads: Optional[int] = None        # CPU threads of this process (None: torch's default)
    init_from: Optional[str] = None      # checkpoint whose vocabulary and weights a new run starts from
    checkpoint_every: Optional[float] = None  # seconds between mid-epoch saves of last.pt (None: epoch ends only)
    keep_epochs: bool = False            # also keep every epoch's weights as epoch-NNN.pt


@dataclass
class TrainResult:
    """What a finished (or stopped) run reports."""

    out: str
    stop_reason: str                     # epochs | max_time | max_steps | interrupted
    epochs: int                          # completed epochs
    steps: int
    best_valid_ppl: Optional[float]
    best_epoch: Optional[int]
    test_ppl: Optional[float]
    tokens_per_s: Optional[float]
    best_path: Optional[str] = None      # best.pt, once a validation has been saved
    is_main: bool = True                 # rank 0 (the one that writes and reports)
    model: Any = None                    # the trained ONLSTMLanguageModel (raw weights)

    def summary(self) -> Dict[str, Any]:
        keys = ("out", "stop_reason", "epochs", "steps", "best_valid_ppl", "best_epoch", "test_ppl", "tokens_per_s",
                "best_path")
        return {k: getattr(self, k) for k in keys}


# -- distributed -----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Dist:
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


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    try:
        return default if value in (None, "") else int(value)
    except ValueError:
        raise OnparseError(f"environment variable {name}={value!r} is not an integer") from None


def _setup(device_name: str) -> Tuple[_Dist, torch.device]:
    """Pick the device and, under torchrun (WORLD_SIZE > 1), join the process group."""
    import torch
    import torch.distributed as dist

    world = _env_int("WORLD_SIZE", 1)
    local_rank = _env_int("LOCAL_RANK", 0)
    if device_name == "auto":
        device_name = "cuda" if torch.cuda.is_available() else "cpu"
    if device_name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise OnparseError("--device cuda asked for, but this torch sees no CUDA device")
        try:
            device = torch.device(device_name)
        except RuntimeError:
            raise OnparseError(f"unknown device '{device_name}'; use auto, cpu, cuda or cuda:N") from None
        if device.index is None:           # one process per GPU under torchrun
            device = torch.device("cuda", local_rank if world > 1 else torch.cuda.current_device())
        if device.index >= torch.cuda.device_count():
            raise OnparseError(f"no CUDA device {device.index}: this machine has {torch.cuda.device_count()}")
        torch.cuda.set_device(device)
    elif device_name == "cpu":
        device = torch.device("cpu")
    else:
        raise OnparseError(f"unknown device '{device_name}'; use auto, cpu or cuda")
    if world <= 1:
        return _Dist(), device
    if dist.is_initialized():
        return _Dist(dist.get_rank(), dist.get_world_size(), local_rank, False), device
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return _Dist(dist.get_rank(), dist.get_world_size(), local_rank, True), device


def _all_reduce(values: List[float], ctx: _Dist, device: torch.device, op: str = "sum") -> List[float]:
    if not ctx.active:
        return list(values)
    import torch
    import torch.distributed as dist

    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM if op == "sum" else dist.ReduceOp.MAX)
    return t.tolist()


def _all_gather(obj, ctx: _Dist) -> list:
    if not ctx.active:
        return [obj]
    import torch.distributed as dist

    out = [None] * ctx.world_size
    dist.all_gather_object(out, obj)
    return out


# -- pieces of the loop ----------------------------------------------------------------------
def objective(model, out, targets, alpha: float, beta: float):
    """Training loss of one window: cross-entropy + AR + TAR.

    ``out`` is the model's :class:`~onparse.model.LMOutput` for inputs (T, B); ``targets`` (T, B).
    AR: ``alpha * mean(output^2)`` on the dropped last-layer output; TAR:
    ``beta * mean((raw_t - raw_{t-1})^2)`` on the undropped one.  Returns (loss, cross-entropy).
    """
    ce = model.loss(out.output, targets)
    loss = ce
    if alpha:
        loss = loss + alpha * out.output.float().pow(2).mean()
    if beta and out.raw_last.shape[0] > 1:
        raw = out.raw_last.float()
        loss = loss + beta * (raw[1:] - raw[:-1]).pow(2).mean()
    return loss, ce


class ParameterAverager:
    """Running mean of the parameters over the SGD steps since averaging began: the ``ax`` of
    ``torch.optim.ASGD(t0=0, lambd=0)``.  ``count`` steps averaged so far."""

    def __init__(self, model):
        self.named = [(n, p) for n, p in model.named_parameters()]
        self.avg = {n: p.detach().clone() for n, p in self.named}
        self.count = 0

    def update(self) -> None:
        """Fold in the current parameters (after an optimiser step)."""
        self.count += 1
        weight = 1.0 / self.count
        for name, p in self.named:
            if self.count == 1:
                self.avg[name].copy_(p.detach())
            else:
                self.avg[name].lerp_(p.detach(), weight)

    @contextlib.contextmanager
    def swapped_in(self):
        """Within the block, the model holds the averaged weights (its own are put back after)."""
        if self.count == 0:
            yield
            return
        backup = {n: p.detach().clone() for n, p in self.named}
        for n, p in self.named:
            p.detach().copy_(self.avg[n])
        try:
            yield
        finally:
            for n, p in self.named:
                p.detach().copy_(backup[n])

    def state_dict(self, model) -> Dict[str, Any]:
        """``model.state_dict()`` with the averaged parameters."""
        sd = model.state_dict()
        if self.count:
            sd.update(self.avg)
        return sd

    def load(self, averaged: Dict[str, Any], count: int) -> None:
        for n, _ in self.named:
            self.avg[n].copy_(averaged[n])
        self.count = count


class _StopRequests:
    """First Ctrl-C (or SIGTERM, as schedulers and torchrun send) asks the loop to stop at the
    next step boundary and save; a second Ctrl-C aborts at once."""

    def __init__(self, announce):
        self.requested = False
        self._announce = announce
        self._old = {}

    def _handle(self, signum, frame):
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True
        self._announce("stop requested: saving after this step (Ctrl-C again to abort without saving)")

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        return False


def should_start_averaging(history: List[float], current: float, nonmono: int) -> bool:
    """The non-monotone trigger of NT-ASGD: switch when the ``current`` validation loss is worse
    than the best of the earlier checks ``history`` except the last ``nonmono`` of them, i.e. the
    best has not improved for ``nonmono`` checks.  ``nonmono=0``: at the first check that is
    worse than every earlier one's best.

    >>> should_start_averaging([5.0, 4.0, 4.1, 4.2], 4.3, 2), should_start_averaging([5.0, 4.0, 4.1], 4.3, 2)
    (True, False)
    """
    if len(history) <= nonmono:
        return False
    return current > min(history[:len(history) - nonmono])


def window_length(rng: random.Random, bptt: int) -> int:
    """Length of the next BPTT window: ``bptt`` (probability 0.95) or ``bptt / 2``, jittered by a
    normal of standard deviation 5, at least 5 (the AWD-LSTM recipe)."""
    base = bptt if rng.random() >= HALF_BPTT_PROB else bptt / 2
    return max(MIN_WINDOW, int(rng.gauss(base, JITTER_STD)))


def _detach(state):
    return [(h.detach(), c.detach()) for h, c in state]


def _cpu(x):
    """A copy of ``x`` (tensors, possibly inside dicts and lists) with every tensor on the CPU."""
    import torch

    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", copy=True)
    if isinstance(x, dict):
        return {k: _cpu(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_cpu(v) for v in x]
    return x


def _fingerprint(ids) -> str:
    """Hash of the training id sequence: resuming on a different text is refused."""
    import numpy as np

    return hashlib.sha1(ids.numpy().astype(np.int64).tobytes()).hexdigest()


def _python_state(rng_state) -> list:
    version, internal, gauss = rng_state
    return [version, list(internal), gauss]


def _numpy_state() -> Dict[str, Any]:
    import numpy as np
    import torch

    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {"name": name, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
            "has_gauss": int(has_gauss), "cached_gaussian": float(cached)}


def _set_numpy_state(d) -> None:
    import numpy as np

    np.random.set_state((d["name"], d["keys"].numpy().astype(np.uint32), d["pos"], d["has_gauss"],
                         d["cached_gaussian"]))


class _Log:
    """Messages to stderr (through tqdm so the bar stays intact) and JSON lines to the metrics
    log, from rank 0 only."""

    def __init__(self, path: Optional[str], enabled: bool):
        self.enabled = enabled
        self.path = path

    def say(self, message: str) -> None:
        if self.enabled:
            from tqdm import tqdm

            tqdm.write(message, file=sys.stderr)

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
        record = json.loads(line)
    except ValueError:
        return False
    if not isinstance(record, dict) or not line.endswith(b"\n"):
        return False
    logged = record.get("step")
    return not isinstance(logged, int) or logged <= step


def run_files(folder: str) -> List[str]:
    """The files of an onparse run in ``folder``: checkpoints, snapshots and the metrics log."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in names if n in (BEST, LAST, METRICS) or EPOCH_SNAPSHOT_RE.fullmatch(n))


def _ppl(loss: float) -> float:
    return math.exp(loss) if loss < 700 else float("inf")


# -- the run folder --------------------------------------------------------------------------
class FolderLock:
    """An exclusive ``flock`` on ``folder/.onparse.lock``, held from :meth:`acquire` to
    :meth:`release`; the file says who holds it (pid, host, start time) and is removed on release.

    The lock belongs to the open file, so the kernel drops it when the process dies however it
    dies (``kill -9`` included): a stale lock file never blocks the next run.  Where the file
    system has no locks (some network mounts), the run goes on with a warning."""

    def __init__(self, folder: str):
        self.folder = folder
        self.path = os.path.join(folder, LOCK)
        self.fd: Optional[int] = None

    def acquire(self, warn=None) -> "FolderLock":
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
                raise OnparseError(f"{self.folder} is in use by another training run ({holder}); wait for "
                                   "it to end or choose another --out") from None
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
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()} since {stamp}\n".encode())
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


def _make_folder(out: str) -> None:
    """Create the output folder (and its parents); a one-line OnparseError when impossible."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise OnparseError(f"output path {out} exists and is not a folder")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as err:
        raise OnparseError(f"cannot create the output folder {out}: {err.strerror or err}") from None


# -- the run ---------------------------------------------------------------------------------
def train(config: TrainConfig, spec: CorpusSpec, options: RunOptions, preset_name: Optional[str] = None) -> TrainResult:
    """Train (or, with ``options.resume``, continue training) a language model; see the module
    docstring for the schedule and the files written.  Returns a :class:`TrainResult`."""
    import torch

    from .model import ONLSTMLanguageModel

    threads = torch.get_num_threads()
    if options.threads is not None:
        if options.threads < 1:
            raise OnparseError(f"threads must be at least 1, got {options.threads}")
        torch.set_num_threads(options.threads)
    ctx, device = _setup(options.device)
    try:
        return _Run(config, spec, options, preset_name, ctx, device, ONLSTMLanguageModel).run()
    finally:
        torch.set_num_threads(threads)
        if ctx.owns_group:
            import torch.distributed as dist

            dist.destroy_process_group()


def resume_settings(out: str) -> Tuple[TrainConfig, CorpusSpec, Optional[str]]:
    """Config, corpus and preset name of the run saved in ``out`` (for ``--resume``)."""
    path = os.path.join(out, LAST)
    if not os.path.isfile(path):
        raise OnparseError(f"nothing to resume in {out}: {LAST} not found")
    blob = load_checkpoint(path)
    training = blob.get("training")
    if not isinstance(training, dict):
        raise OnparseError(f"{path} holds no training state; it cannot be resumed")
    try:
        config = TrainConfig.from_dict(training["config"])
        spec = CorpusSpec.from_dict(training["corpus"])
    except (KeyError, TypeError, ValueError) as err:
        raise OnparseError(f"{path}: unreadable training state ({err})") from None
    return config, spec, training.get("preset")


class _Run:
    def __init__(self, config, spec, options, preset_name, ctx, device, model_cls):
        self.cfg, self.spec, self.opt, self.preset = config, spec, options, preset_name
        self.ctx, self.device, self.model_cls = ctx, device, model_cls
        self.out = options.out
        self.best_path = os.path.join(self.out, BEST)
        self.last_path = os.path.join(self.out, LAST)
        self.amp = options.amp and device.type == "cuda"
        self.init_from: Optional[dict] = None   # where --init-from started the run (metadata)
        self.last_saved = time.monotonic()      # when last.pt was last written (--checkpoint-every)

    # ---- setup -------------------------------------------------------------------------------
    def _prepare_folder(self) -> Optional[dict]:
        """Check the output folder; return the resume blob when resuming."""
        if self.opt.resume:
            if not os.path.isfile(self.last_path):
                raise OnparseError(f"nothing to resume in {self.out}: {LAST} not found")
            blob = load_checkpoint(self.last_path)
            if not isinstance(blob.get("training"), dict):
                raise OnparseError(f"{self.last_path} holds no training state; it cannot be resumed")
            return blob
        if os.path.exists(self.out) and not os.path.isdir(self.out):
            raise OnparseError(f"output path {self.out} exists and is not a folder")
        found = run_files(self.out)
        if found and not self.opt.overwrite:
            # Not only last.pt: a copied model (best.pt, metrics.jsonl) must not be replaced either.
            what = "a run" if LAST in found else f"onparse files ({', '.join(found[:4])})"
            raise OnparseError(f"{self.out} already holds {what}; pass --resume to continue a run, "
                               "--overwrite to replace it, or choose another --out")
        return None

    def _tidy(self, blob: Optional[dict]) -> None:
        """Remove what a killed run left: temporary files of unfinished saves and, on a resume,
        the log records written after the checkpoint (they will be written again)."""
        removed = remove_stale_temp_files(self.out)
        if removed:
            self.log.say(f"removed {len(removed)} temporary file(s) left by an interrupted save")
        if blob is not None:
            step = (blob["training"].get("schedule") or {}).get("step")
            if isinstance(step, int):
                truncate_log(self.log.path, step)

    def _build(self, blob):
        import numpy as np
        import torch

        from .perplexity import fit_streams

        cfg, ctx = self.cfg, self.ctx
        if cfg.batch_size % ctx.world_size:
            raise OnparseError(f"batch size {cfg.batch_size} is not divisible by the number of "
                               f"processes {ctx.world_size}")
        corpus = load_corpus(self.spec)
        init = self._init_source() if blob is None else None
        if blob is not None:
            vocab = Vocabulary(blob["vocab"])
        elif init is not None:
            vocab = Vocabulary(init["vocab"])          # the source's ids, so its weights mean the same
        else:
            vocab = Vocabulary.build(corpus.train, max_size=cfg.vocab_limit, min_count=cfg.min_count)
        train_ids = encode_stream(corpus.train, vocab)
        if train_ids.numel() < 3 * cfg.batch_size:
            raise OnparseError(f"training text too short: {train_ids.numel()} tokens for {cfg.batch_size} "
                               "streams (use a smaller --batch-size or a larger corpus)")
        self.fingerprint = _fingerprint(train_ids)
        full = batchify(train_ids, cfg.batch_size)                         # (N, B)
        self.train_data = shard_streams(full, ctx.rank, ctx.world_size).to(self.device)
        self.global_tokens_per_epoch = (full.shape[0] - 1) * full.shape[1]
        valid_ids = encode_stream(corpus.valid, vocab)
        valid = batchify(valid_ids, fit_streams(valid_ids.numel(), cfg.eval_batch_size))
        self.valid_data = valid[:, ctx.rank::ctx.world_size].contiguous().to(self.device)
        self.corpus, self.vocab = corpus, vocab

        torch.manual_seed(cfg.seed)
        random.seed(cfg.seed)
        np.random.seed(cfg.seed % 2**32)
        model = self.model_cls(cfg.model_config(len(vocab))).to(self.device)
        if init is not None:
            self._load_init(model, init)
        if ctx.rank:
            # Same initial weights everywhere, different dropout masks per rank.
            torch.manual_seed(cfg.seed + ctx.rank)
        self.model = model
        self.jitter = random.Random(cfg.seed)
        if ctx.active:
            from torch.nn.parallel import DistributedDataParallel

            # The decoder (tied embedding + bias) runs outside the wrapped forward, in the loss;
            # every parameter still gets a gradient each step, which is all DDP needs.
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.forward = DistributedDataParallel(model, device_ids=ids)
        else:
            self.forward = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.averager = None
        self.n_params = sum(p.numel() for p in model.parameters())
        # schedule state
        self.epoch = 0              # completed epochs
        self.position = 0           # row of the next window in the current epoch
        self.step = 0
        self.hidden = None
        self.val_history: List[float] = []
        self.best_loss: Optional[float] = None
        self.best_epoch: Optional[int] = None
        self.averaging_since: Optional[int] = None
        self.epoch_loss_sum = 0.0   # this rank's summed cross-entropy over the epoch so far
        self.epoch_tokens = 0
        self.epoch_time = 0.0
        if blob is not None:
            try:
                self._restore(blob)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
                raise OnparseError(f"{self.last_path}: unreadable training state ({type(err).__name__}: "
                                   f"{str(err)[:120]})") from None

    def _init_source(self) -> Optional[dict]:
        """The checkpoint of ``--init-from`` (None without one), noted for the metadata."""
        if not self.opt.init_from:
            return None
        init = load_checkpoint(self.opt.init_from)
        meta = init.get("metadata") or {}
        self.init_from = {"checkpoint": os.path.abspath(self.opt.init_from),
                          **{k: meta.get(k) for k in ("corpus", "preset", "epoch", "valid_ppl")},
                          "seed": (meta.get("train_config") or {}).get("seed")}
        return init

    def _load_init(self, model, init) -> None:
        """Copy the weights of ``init`` into ``model``; the sizes must match (dropout rates may differ)."""
        mine = model.config.to_dict()
        differs = [f"{k} {init['config'].get(k)} (here {mine[k]})"
                   for k in ("vocab_size", "embedding_size", "hidden_size", "n_layers", "chunk_size")
                   if init["config"].get(k) != mine[k]]
        if differs:
            raise OnparseError(f"--init-from {self.opt.init_from} has another shape: {', '.join(differs)}; "
                               "pass the same size options as its run")
        try:
            model.load_state_dict(init["state_dict"])       # casts fp16 exports, like load_model
        except (RuntimeError, KeyError) as err:
            raise OnparseError(f"--init-from {self.opt.init_from}: weights do not fit this model "
                               f"({str(err).splitlines()[0][:120]})") from None

    def _restore(self, blob) -> None:
        import torch

        tr = blob["training"]
        stored = TrainConfig.from_dict(tr["config"])
        differs = [f.name for f in fields(stored)
                   if f.name != "epochs" and getattr(stored, f.name) != getattr(self.cfg, f.name)]
        if differs:
            raise OnparseError(f"cannot change {', '.join(differs)} when resuming (only --epochs, "
                               "--max-time, --max-steps and --device)")
        if tr.get("fingerprint") != self.fingerprint:
            raise OnparseError(f"the training text of {self.spec.source} changed since the run started; "
                               "cannot resume")
        sched = tr["schedule"]
        try:
            self.model.load_state_dict(tr.get("raw_state_dict") or blob["state_dict"])
            self.optimizer.load_state_dict(tr["optimizer"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise OnparseError(f"{self.last_path}: training state does not fit this model ({str(err).splitlines()[0]})")
        if sched["averaged_steps"] is not None:
            self.averager = ParameterAverager(self.model)
            self.averager.load(blob["state_dict"], sched["averaged_steps"])
        self.epoch, self.position, self.step = sched["epoch"], sched["position"], sched["step"]
        self.val_history = list(sched["val_history"])
        self.best_loss, self.best_epoch = sched["best_loss"], sched["best_epoch"]
        self.averaging_since = sched["averaging_since"]
        rng = tr["rng"]
        self.jitter.setstate((rng["jitter"][0], tuple(rng["jitter"][1]), rng["jitter"][2]))
        random.setstate((rng["python"][0], tuple(rng["python"][1]), rng["python"][2]))
        _set_numpy_state(rng["numpy"])
        ranks = rng["ranks"]
        mine = ranks[self.ctx.rank] if len(ranks) == self.ctx.world_size else None
        if mine is None:
            self.log.say(f"warning: the run was saved by {len(ranks)} processes, resumed by "
                         f"{self.ctx.world_size}: the continuation is not bit-identical")
            torch.manual_seed(self.cfg.seed + 7919 * self.ctx.rank + self.step)
        else:
            torch.set_rng_state(mine["torch"])
            if mine.get("cuda") is not None and self.device.type == "cuda":
                torch.cuda.set_rng_state(mine["cuda"], self.device)
            if mine.get("hidden") is not None and self.position > 0:
                self.hidden = [(h.to(self.device), c.to(self.device)) for h, c in mine["hidden"]]
            self.epoch_loss_sum = mine.get("epoch_loss_sum", 0.0)
            self.epoch_tokens = mine.get("epoch_tokens", 0)
        if self.position > 0 and self.hidden is None:
            self.hidden = self.model.init_state(self.train_data.shape[1])
        self.epoch_time = sched.get("epoch_time", 0.0)
        self.init_from = tr.get("init_from")

    # ---- checkpoints -------------------------------------------------------------------------
    def _metadata(self, **extra) -> Dict[str, Any]:
        return {"onparse_version": __version__, "preset": self.preset, "train_config": self.cfg.to_dict(),
                "corpus": self.spec.to_dict(), "parameters": self.n_params, "vocab_size": len(self.vocab),
                "epoch": self.epoch, "step": self.step, "averaged": bool(self.averager and self.averager.count),
                **({"init_from": self.init_from} if self.init_from else {}), **extra}

    def _weights(self) -> Dict[str, Any]:
        sd = self.averager.state_dict(self.model) if self.averager else self.model.state_dict()
        return _cpu(sd)

    def _save_best(self, valid_loss: float) -> None:
        if self.ctx.is_main:
            save_checkpoint(self.best_path, config=self.model.config.to_dict(), vocab=self.vocab,
                            state_dict=self._weights(),
                            metadata=self._metadata(valid_loss=valid_loss, valid_ppl=_ppl(valid_loss)))

    def _save_last(self) -> None:
        """Collective (every rank gathers its RNG and recurrent state); rank 0 writes."""
        import torch

        mine = {"torch": torch.get_rng_state(),
                "cuda": torch.cuda.get_rng_state(self.device) if self.device.type == "cuda" else None,
                "hidden": _cpu([list(s) for s in self.hidden]) if (self.hidden is not None and self.position) else None,
                "epoch_loss_sum": self.epoch_loss_sum, "epoch_tokens": self.epoch_tokens}
        self._check_weights()                    # before the collective: ranks hold the same weights
        ranks = _all_gather(_cpu(mine), self.ctx)
        self.last_saved = time.monotonic()
        if not self.ctx.is_main:
            return
        training = {
            "config": self.cfg.to_dict(),
            "corpus": self.spec.to_dict(),
            "preset": self.preset,
            "init_from": self.init_from,
            "fingerprint": self.fingerprint,
            "optimizer": _cpu(self.optimizer.state_dict()),
            "raw_state_dict": _cpu(self.model.state_dict()) if self.averager else None,
            "schedule": {"epoch": self.epoch, "position": self.position, "step": self.step,
                         "val_history": list(self.val_history), "best_loss": self.best_loss,
                         "best_epoch": self.best_epoch, "averaging_since": self.averaging_since,
                         "averaged_steps": self.averager.count if self.averager else None,
                         "epoch_time": self.epoch_time},
            "rng": {"jitter": _python_state(self.jitter.getstate()),
                    "python": _python_state(random.getstate()),
                    "numpy": _numpy_state(),
                    "ranks": ranks},
            "world_size": self.ctx.world_size,
        }
        save_checkpoint(self.last_path, config=self.model.config.to_dict(), vocab=self.vocab,
                        state_dict=self._weights(), metadata=self._metadata(), training=training)

    def _check_weights(self) -> None:
        """Stop before saving non-finite weights (a gradient can overflow while the loss is finite)."""
        import torch

        params = list(self.model.parameters()) + (list(self.averager.avg.values()) if self.averager else [])
        if not all(bool(torch.isfinite(p.detach()).all()) for p in params):
            self._diverged("the weights became NaN or infinite")

    def _diverged(self, what: str) -> None:
        """Stop the run: log the event and raise a one-line OnparseError saying what is left."""
        self.log.event("diverged", epoch=self.epoch, step=self.step, reason=what)
        if self.best_loss is not None:
            kept = (f"{self.best_path} keeps epoch {self.best_epoch} (valid ppl "
                    f"{format_ppl(_ppl(self.best_loss))})")
        else:
            kept = "no model was saved"
        raise OnparseError(f"training diverged at step {self.step} (epoch {self.epoch + 1}): {what}; {kept}. "
                           "Lower --lr (or --clip) and start again")

    # ---- evaluation --------------------------------------------------------------------------
    def _valid_loss(self) -> float:
        from .perplexity import stream_loss

        averaged = self.averager.swapped_in() if self.averager else contextlib.nullcontext()
        with averaged:
            total, count = stream_loss(self.model, self.valid_data, self.cfg.bptt, self.amp)
        self.model.train()
        total, count = _all_reduce([total, float(count)], self.ctx, self.device)
        return total / count

    def _test_ppl(self) -> Optional[float]:
        """Test perplexity of ``best.pt``, measured by rank 0 alone (other ranks need not see
        its files on a multi-machine run)."""
        if not self.ctx.is_main or not self.corpus.test or not os.path.isfile(self.best_path):
            return None
        from .checkpoint import load_model
        from .perplexity import fit_streams, stream_loss

        best = load_model(self.best_path, self.device).model
        ids = encode_stream(self.corpus.test, self.vocab)
        if ids.numel() < 2:
            return None
        data = batchify(ids, fit_streams(ids.numel(), self.cfg.eval_batch_size)).to(self.device)
        total, count = stream_loss(best, data, self.cfg.bptt, self.amp)
        return _ppl(total / count)

    # ---- the loop ----------------------------------------------------------------------------
    def _should_stop(self, stops: _StopRequests, started: float) -> Optional[str]:
        """Stop reason agreed by all ranks, checked at step boundaries."""
        if self.opt.max_steps is not None and self.step >= self.opt.max_steps:
            return "max_steps"                       # same step count everywhere: no sync needed
        if self.ctx.active and self.step % SYNC_EVERY:
            return None
        now = time.monotonic()
        timed_out = self.opt.max_time is not None and now - started >= self.opt.max_time
        due = self.opt.checkpoint_every is not None and now - self.last_saved >= self.opt.checkpoint_every
        flags = _all_reduce([float(stops.requested), float(timed_out), float(due)], self.ctx, self.device,
                            op="max")
        if flags[0]:
            return "interrupted"
        if flags[1]:
            return "max_time"
        if flags[2]:
            self._save_last()                    # mid-epoch: a kill loses at most this interval
        return None

    def _train_step(self, length: int):
        """One optimiser step on the window at the current position; returns the window's
        cross-entropy (a detached device scalar) and its number of target tokens."""
        import torch
        from torch import nn

        from .perplexity import autocast_context

        cfg = self.cfg
        i = self.position
        inputs = self.train_data[i:i + length]
        targets = self.train_data[i + 1:i + 1 + length]
        self.hidden = _detach(self.hidden)
        self.optimizer.zero_grad(set_to_none=True)
        with autocast_context(self.device, self.amp):
            out = self.forward(inputs, self.hidden)
            loss, ce = objective(self.model, out, targets, cfg.alpha, cfg.beta)
        self.hidden = out.state
        # A non-finite AR or TAR term ruins the weights as surely as a non-finite cross-entropy:
        # pass it on in the returned value, which the caller checks (no device sync here).
        ce = torch.where(torch.isfinite(loss.detach()), ce.detach(), loss.detach())
        loss.backward()
        if cfg.clip:
            nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip)
        for group in self.optimizer.param_groups:
            group["lr"] = cfg.lr * length / cfg.bptt
        self.optimizer.step()
        for group in self.optimizer.param_groups:
            group["lr"] = cfg.lr
        if self.averager is not None:
            self.averager.update()
        self.position += length
        self.step += 1
        return ce.detach(), targets.numel()

    def run(self) -> TrainResult:
        """Train, holding the output folder's lock throughout (rank 0, the one that writes)."""
        if not self.ctx.is_main:
            return self._run()
        _make_folder(self.out)
        lock = FolderLock(self.out).acquire(warn=_Log(None, True).say)
        try:
            return self._run()
        finally:
            lock.release()

    def _run(self) -> TrainResult:
        main = self.ctx.is_main
        blob = self._prepare_folder()
        self.log = _Log(os.path.join(self.out, METRICS), main)
        if main:
            self._tidy(blob)
        self._build(blob)
        if main:
            if blob is None:                       # --overwrite: nothing of the old run survives
                for name in run_files(self.out):
                    os.unlink(os.path.join(self.out, name))
        cfg = self.cfg
        self.log.event("resume" if blob else "start", preset=self.preset, config=cfg.to_dict(),
                       corpus=self.spec.to_dict(), vocab_size=len(self.vocab), parameters=self.n_params,
                       train_tokens=self.global_tokens_per_epoch, device=str(self.device),
                       world_size=self.ctx.world_size, epoch=self.epoch, step=self.step)
        self.log.say(f"{'resuming' if blob else 'training'}: {self.n_params:,} parameters, vocabulary "
                     f"{len(self.vocab):,}, {self.global_tokens_per_epoch:,} training tokens per epoch, "
                     f"{self.ctx.world_size} process(es) on {self.device}")
        show_bar = main and (self.opt.progress if self.opt.progress is not None else sys.stderr.isatty())
        from tqdm import tqdm

        total_tokens = cfg.epochs * self.global_tokens_per_epoch
        done_tokens = min(total_tokens, self.epoch * self.global_tokens_per_epoch
                          + self.position * self.train_data.shape[1] * self.ctx.world_size)
        bar = tqdm(total=total_tokens, initial=done_tokens, unit="tok", unit_scale=True, file=sys.stderr,
                   disable=not show_bar, dynamic_ncols=True, leave=False)
        started = time.monotonic()
        self.run_tokens, self.run_time = 0, 0.0
        reason = None
        try:
            with _StopRequests(self.log.say) as stops:
                reason = "epochs" if self.epoch >= cfg.epochs else self._should_stop(stops, started)
                while reason is None:
                    reason = self._run_epoch(stops, started, bar)
        finally:
            bar.close()
        self.log.event("stop", reason=reason, epoch=self.epoch, step=self.step)
        where = f", {self.position} rows into epoch {self.epoch + 1}" if self.position else ""
        self.log.say(f"stopped ({reason}) after {self.epoch} epoch(s), {self.step} steps{where}; "
                     f"best valid ppl {format_ppl(self._best_ppl())}")
        test_ppl = None
        if reason != "interrupted":
            test_ppl = self._test_ppl()
            if test_ppl is not None:
                self.log.event("test", test_ppl=test_ppl, best_epoch=self.best_epoch)
        rate = self.run_tokens / self.run_time if self.run_time > 0 else None
        best = self.best_path if self.best_loss is not None else None
        return TrainResult(self.out, reason, self.epoch, self.step, self._best_ppl(), self.best_epoch,
                           test_ppl, rate, best, self.ctx.is_main, self.model)

    def _run_epoch(self, stops: _StopRequests, started: float, bar) -> Optional[str]:
        """Train from the current position to the end of the epoch, or until a stop is agreed;
        then validate (complete epoch) or save the mid-epoch state.  Returns the stop reason."""
        import torch

        cfg = self.cfg
        n_rows = self.train_data.shape[0]
        bar.set_description(f"epoch {self.epoch + 1}/{cfg.epochs}")
        if self.position == 0:
            self.hidden = self.model.init_state(self.train_data.shape[1])
            self.epoch_loss_sum, self.epoch_tokens, self.epoch_time = 0.0, 0, 0.0
        self.model.train()
        window_loss = torch.zeros((), dtype=torch.float64, device=self.device)
        window_tokens = 0
        reason = None
        tick = time.monotonic()
        while self.position < n_rows - 2:
            length = min(window_length(self.jitter, cfg.bptt), n_rows - 1 - self.position)
            ce, n = self._train_step(length)
            window_loss += ce.double() * n
            window_tokens += n
            self.run_tokens += n * self.ctx.world_size
            bar.update(n * self.ctx.world_size)
            if self.step % LOG_EVERY == 0:
                self._flush_window(window_loss, window_tokens, bar)
                window_loss.zero_()
                window_tokens = 0
            reason = self._should_stop(stops, started)
            if reason:
                break
        self._flush_window(window_loss, window_tokens, bar)
        elapsed = time.monotonic() - tick
        self.epoch_time += elapsed
        self.run_time += elapsed
        if self.position < n_rows - 2:
            self._save_last()                      # stopped mid-epoch
            return reason
        self._end_epoch()
        if reason is None and self.epoch >= cfg.epochs:
            reason = "epochs"
        return reason or self._should_stop(stops, started)

    def _best_ppl(self) -> Optional[float]:
        return None if self.best_loss is None else _ppl(self.best_loss)

    def _flush_window(self, window_loss, tokens: int, bar) -> None:
        """Fold a window of steps into the epoch's totals and refresh the bar (one device sync);
        stop the run if the window's loss is not finite."""
        if tokens:
            loss_sum = float(window_loss)
            bad = _all_reduce([float(not math.isfinite(loss_sum))], self.ctx, self.device, op="max")[0]
            if bad:                              # every rank stops together
                self._diverged(f"the training loss became {loss_sum}")
            self.epoch_loss_sum += loss_sum
            self.epoch_tokens += tokens
            bar.set_postfix(loss=f"{loss_sum / tokens:.3f}", ppl=format_ppl(_ppl(loss_sum / tokens)),
                            refresh=False)

    def _end_epoch(self) -> None:
        """Validation, the averaged-SGD trigger, checkpoints and the epoch's log line."""
        cfg = self.cfg
        loss_sum, tokens, seconds = _all_reduce([self.epoch_loss_sum, float(self.epoch_tokens), self.epoch_time],
                                                self.ctx, self.device)
        seconds /= self.ctx.world_size
        train_loss = loss_sum / max(tokens, 1.0)
        valid_loss = self._valid_loss()
        if not math.isfinite(valid_loss):
            self._diverged(f"the validation loss became {valid_loss}")
        self._check_weights()
        self.epoch += 1
        self.position = 0
        self.hidden = None
        improved = self.best_loss is None or valid_loss < self.best_loss
        if improved:
            self.best_loss, self.best_epoch = valid_loss, self.epoch
            self._save_best(valid_loss)
        if self.opt.keep_epochs and self.ctx.is_main:
            save_checkpoint(os.path.join(self.out, EPOCH_SNAPSHOT.format(self.epoch)),
                            config=self.model.config.to_dict(), vocab=self.vocab, state_dict=self._weights(),
                            metadata=self._metadata(valid_loss=valid_loss, valid_ppl=_ppl(valid_loss)))
        switched = False
        if self.averager is None and should_start_averaging(self.val_history, valid_loss, cfg.nonmono):
            self.averager = ParameterAverager(self.model)
            self.averaging_since = self.epoch
            switched = True
        self.val_history.append(valid_loss)
        rate = tokens / seconds if seconds > 0 else None
        self.log.event("epoch", epoch=self.epoch, step=self.step, train_loss=train_loss, train_ppl=_ppl(train_loss),
                       valid_loss=valid_loss, valid_ppl=_ppl(valid_loss), best_valid_ppl=self._best_ppl(),
                       improved=improved, averaged=self.averager is not None and not switched,
                       tokens_per_s=rate, epoch_time_s=seconds)
        self.log.say(f"epoch {self.epoch:4d} | train ppl {format_ppl(_ppl(train_loss)):>9} | valid ppl "
                     f"{format_ppl(_ppl(valid_loss)):>9}{' *' if improved else '  '} | "
                     f"{(rate or 0):,.0f} tok/s | {seconds:.1f}s"
                     + (" | averaging" if self.averager is not None and not switched else ""))
        if switched:
            self.log.event("asgd", epoch=self.epoch, step=self.step)
            self.log.say(f"validation has not improved for {cfg.nonmono} checks: switching to averaged SGD")
        self._save_last()

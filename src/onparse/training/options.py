"""How one invocation of a training run goes (:class:`RunOptions`) and what it reports
(:class:`TrainResult`), for every kind that ``onparse train`` trains: neither is part of a
kind's settings, so both live here rather than in one kind's package.

No torch here: the command line builds its options from these dataclasses at start-up.
"""
from dataclasses import dataclass
from typing import Any, Dict, Optional


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
    verify: bool = True                  # compare loaded weights with their checksum (--no-verify: False)


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
    model: Any = None                    # the trained model, of the run's kind (raw weights)

    def summary(self) -> Dict[str, Any]:
        keys = ("out", "stop_reason", "epochs", "steps", "best_valid_ppl", "best_epoch", "test_ppl", "tokens_per_s",
                "best_path")
        return {k: getattr(self, k) for k in keys}

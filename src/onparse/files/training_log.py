"""The training log a run folder holds (``metrics.jsonl``, written by :mod:`onparse.lm.training.train`),
read into per-epoch curves: the one reader, used by ``onparse plot-log``, the figures, the
examples and the research scripts.  No torch, no matplotlib.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from ..errors import OnparseError
from .run_folder import METRICS
from .safeio import MAX_LINE_BYTES, NotUTF8Error, perplexity_of, read_text
from .schema import decode


@dataclass(frozen=True)
class TrainingLog:
    """The per-epoch curve of a training run, read from ``metrics.jsonl`` (:mod:`onparse.lm.training.train`).

    Sequences are aligned with ``epochs`` (1-based, increasing); a perplexity that overflowed
    is ``inf``.  ``asgd_epoch``: the epoch after which averaged SGD started (None if never);
    ``test_ppl``: the test perplexity of the best checkpoint when the run measured it;
    ``epoch_seconds``: each epoch's training time; ``preset``, ``parameters``, ``corpus`` (its
    source) and ``config`` (the training config's dict): from the run's start record.
    """

    epochs: Tuple[int, ...]
    train_loss: Tuple[float, ...]
    valid_loss: Tuple[float, ...]
    valid_ppl: Tuple[float, ...]
    asgd_epoch: Optional[int] = None
    test_ppl: Optional[float] = None
    preset: Optional[str] = None
    parameters: Optional[int] = None
    source: str = ""
    epoch_seconds: Tuple[float, ...] = ()
    corpus: Optional[str] = None
    config: Optional[Dict[str, Any]] = field(default=None, compare=False, hash=False)
    #: A grammar run's collapse figures (onparse.grammar.health): the unigram baseline's
    #: perplexity, and per epoch the share of its held-out trees that are branching chains (None
    #: for an epoch that did not record it, and for other kinds).
    unigram_ppl: Optional[float] = None
    branching_share: Tuple[Optional[float], ...] = ()

    @property
    def seed(self) -> Optional[int]:
        """The run's seed, when its config is known."""
        return (self.config or {}).get("seed")

    @property
    def best_epoch(self) -> int:
        """Epoch of the lowest validation loss (the first one on ties)."""
        best = min(range(len(self.epochs)), key=lambda i: (self.valid_loss[i], i))
        return self.epochs[best]

    def hours(self) -> Dict[int, float]:
        """``{epoch: training hours until its end}`` (the sum of the epoch times so far)."""
        out, total = {}, 0.0
        for epoch, seconds in zip(self.epochs, self.epoch_seconds):
            total += seconds
            out[epoch] = total / 3600
        return out


def log_path(path: str) -> str:
    """``path`` itself, or ``path/metrics.jsonl`` when it is a run folder."""
    if os.path.isdir(path):
        return os.path.join(path, METRICS)
    return path


def read_log(path: str, max_line_bytes: int = MAX_LINE_BYTES) -> TrainingLog:
    """Read a training metrics log (JSON lines; a run folder means its ``metrics.jsonl``).

    Uses the ``epoch`` records (``epoch``, ``train_loss``, ``valid_loss``, ``valid_ppl``),
    the ``asgd`` record, the last ``test`` record and the ``start`` record (preset, size).
    After a resume an epoch may be logged twice: the later record wins.  Other events are
    ignored, so newer logs with more fields still read.  OnparseError for a missing file, a
    malformed line (named, as is one longer than ``max_line_bytes``) or a log without any
    finished epoch.
    """
    path = log_path(path)
    if not os.path.exists(path):
        raise OnparseError(f"training log not found: {path}")
    try:
        text = read_text(path, line_limit=max_line_bytes)
    except NotUTF8Error:
        raise OnparseError(f"{path} is not a training log: not UTF-8 text (expected the "
                           "metrics.jsonl written by `onparse train`)") from None
    epochs: Dict[int, Tuple[float, float, float, float, Optional[float]]] = {}
    asgd = test = preset = parameters = corpus = config = unigram = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = decode(line)
        except ValueError:
            raise OnparseError(f"{path} line {number}: not a JSON object (is this a metrics.jsonl "
                               "written by `onparse train`?)") from None
        if not isinstance(record, dict):
            raise OnparseError(f"{path} line {number}: not a JSON object")
        event = record.get("event")
        try:
            if event == "epoch":
                epoch = int(record["epoch"])
                valid_loss = float(record["valid_loss"])
                valid_ppl = record.get("valid_ppl")
                valid_ppl = perplexity_of(valid_loss) if valid_ppl is None else float(valid_ppl)
                share = record.get("branching_share")
                epochs[epoch] = (float(record["train_loss"]), valid_loss, valid_ppl,
                                 float(record.get("epoch_time_s") or 0.0), None if share is None else float(share))
                unigram = float(record["unigram_ppl"]) if record.get("unigram_ppl") is not None else unigram
            elif event == "asgd":
                asgd = int(record["epoch"]) if asgd is None else asgd
            elif event == "test" and record.get("test_ppl") is not None:
                test = float(record["test_ppl"])
            elif event == "start" and preset is None:      # a resume logs another start
                preset = record.get("preset")
                parameters = record.get("parameters")
                corpus = (record.get("corpus") or {}).get("source")
                config = record.get("config")
        except (KeyError, TypeError, ValueError) as err:
            raise OnparseError(f"{path} line {number}: malformed {event!r} record ({err})") from None
    if not epochs:
        raise OnparseError(f"{path}: no finished epoch in the log yet (nothing to plot)")
    order = sorted(epochs)
    return TrainingLog(
        epochs=tuple(order),
        train_loss=tuple(epochs[e][0] for e in order),
        valid_loss=tuple(epochs[e][1] for e in order),
        valid_ppl=tuple(epochs[e][2] for e in order),
        asgd_epoch=asgd,
        test_ppl=test,
        preset=preset if isinstance(preset, str) else None,
        parameters=parameters if isinstance(parameters, int) else None,
        source=path,
        epoch_seconds=tuple(epochs[e][3] for e in order),
        corpus=corpus if isinstance(corpus, str) else None,
        config=config if isinstance(config, dict) else None,
        unigram_ppl=unigram,
        branching_share=tuple(epochs[e][4] for e in order),
    )



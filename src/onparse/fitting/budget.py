"""How ``onparse fit`` spends ``--max-time`` (issue 54.4): the one home of its shares, of what a
training run's start-up and stop cost, and of what the budget buys.  No torch.

The whole budget, counted from the start of the ``onparse fit`` process:

* **before training**: fit's own start-up and its plan (reading the text), as measured;
* **training**: what is left but :data:`CHOOSE_SHARE` of the budget (and :data:`STUDENT_SHARE`
  with ``--student``), in equal shares of wall time per wave of runs side by side.  A run's share
  holds its own start-up (importing torch, reading the text again, building the model: the time
  fit took to read the text, and :data:`START_UP_SECONDS`; once a run has logged its start, the
  longest start-up measured so far instead, :func:`measured_start_up`) and its stop (finishing a step,
  saving; :data:`STOP_SECONDS`): the ``--max-time`` fit gives ``onparse train`` is the rest
  (:func:`train_time`).  A run still going at the end of its share is stopped by fit (it saves,
  as on Ctrl-C), so no estimate can make it overrun by more than its save;
* **choosing and bundling** (and the student): the shares kept; the student stops at the end
  of its share (:func:`student_time`), saving, and writes the student it has.

Before training, fit says what the budget buys: about how many epochs each run gets at the
presets' measured speed (:data:`PRESET_RATES`), and warns when a language model gets fewer than
:data:`MIN_EPOCHS` (its trees are then rarely better than right-branching ones).
"""
from __future__ import annotations

import math
from typing import Dict, Iterable, Optional

from ..files.safeio import format_duration
from ..registry import FAMILIES

#: Shares of --max-time kept for choosing and bundling, and for the student when asked for.
CHOOSE_SHARE, STUDENT_SHARE = 0.1, 0.25
#: A training run's start-up besides reading its text: starting Python, importing torch and
#: building the model (the import alone took 7.7-10 s on a busy 2-core machine, issue 54.6).
START_UP_SECONDS = 10.0
#: Reading the text again in a run, as a multiple of the time fit took (runs read side by side).
READ_FACTOR = 1.5
#: A run's stop: the step under way, saving last.pt, leaving.
STOP_SECONDS = 5.0
#: The fewest epochs per language model that can be expected to beat right-branching trees:
#: the README's fits that got 1-2 epochs scored below them (34.0 against 39.9, issue 54.4).
MIN_EPOCHS = 3
#: Training speed per thread by family and preset, tokens (lm) or words (grammar) a second, as
#: measured on a 2-core machine: lm small 2,312 (benchmarks/README.md, threads), grammar small
#: 3,503 (benchmarks/README.md, grammar, simple form), the tiny presets on a busy machine
#: (issue 54: 9,600 and 5,700 on 3,000 lines).  Another machine or text differs: "about".
PRESET_RATES: Dict[str, Dict[str, float]] = {
    "lm": {"tiny": 9600.0, "small": 2300.0, "paper": 400.0},
    "grammar": {"tiny": 5700.0, "small": 3500.0},
}


def training_share(max_time: Optional[float], spent: float, waves: int, student: bool) -> Optional[float]:
    """Each run's share of wall time (start-up and stop included): the budget less the shares
    kept and the ``spent`` seconds before training, over the ``waves``.  None: no budget."""
    if max_time is None:
        return None
    kept = CHOOSE_SHARE + (STUDENT_SHARE if student else 0.0)
    return max(0.0, max_time * (1 - kept) - spent) / max(1, waves)


def student_time(max_time: Optional[float], spent: float) -> Optional[float]:
    """The student stage's time limit (``onparse distill``'s ``max_time``, its teacher's parse
    included): its share of the budget less the ``spent`` seconds of earlier invocations, at
    least a second (the student then writes what it has learnt).  None: no budget."""
    if max_time is None:
        return None
    return max(1.0, max_time * STUDENT_SHARE - spent)


def start_up(read_seconds: float, measured: Optional[float] = None) -> float:
    """A run's start-up: the longest measured so far (``measured``), else the estimate from the
    time fit took to read the text."""
    return measured if measured is not None else START_UP_SECONDS + READ_FACTOR * read_seconds


def train_time(left: float, start_up_seconds: float) -> float:
    """The ``--max-time`` of a run with ``left`` seconds of its share: what its start-up and its
    stop leave (possibly under a second: then it is not started)."""
    return left - start_up_seconds - STOP_SECONDS


def measured_start_up(events: Iterable[dict], launched: float) -> Optional[float]:
    """Seconds from ``launched`` (wall clock) to the first start (or resume) event a run logged
    after it, from its ``metrics.jsonl`` events; None when it logged none."""
    for event in events:
        if event.get("event") in ("start", "resume") and isinstance(event.get("time"), (int, float)) \
                and event["time"] >= launched - 1:
            return max(0.0, event["time"] - launched)
    return None


def epochs_bought(seconds: Optional[float], words: int, family: str, preset: str, threads: int) -> Optional[float]:
    """About how many epochs of ``words`` training words ``seconds`` of training buy at the
    preset's measured speed on ``threads`` threads (None: no budget, or no measured speed)."""
    rate = PRESET_RATES.get(family, {}).get(preset)
    if seconds is None or rate is None or words <= 0:
        return None
    # More threads of one run help less than in proportion (benchmarks/README.md: 2 threads 1.55x).
    return max(0.0, seconds) * rate * max(1, threads) ** 0.5 / words


def what_it_buys(seconds: Optional[float], epochs: Dict[str, Optional[float]], max_epochs: Dict[str, int]) -> str:
    """The plan's line of what the budget buys: each family's epochs (no more than its preset's)."""
    if seconds is None:
        return ""
    parts = []
    for family, n in epochs.items():
        if n is None:
            continue
        name = FAMILIES[family].noun if family in FAMILIES else family
        capped = min(n, max_epochs.get(family, math.inf))
        parts.append(f"about {_epochs(capped)} epoch(s) per {name}")
    told = f" ({', '.join(parts)} at the preset's measured speed)" if parts else ""
    return f"each run trains about {format_duration(seconds)}{told}"


#: The language models' preset that trains fastest: what the warning below suggests to try the workflow.
QUICK_PRESET = "tiny"


def warning(epochs: Dict[str, Optional[float]], max_epochs: Dict[str, int],
            presets: Optional[Dict[str, str]] = None) -> Optional[str]:
    """One line when the language models get fewer than :data:`MIN_EPOCHS` epochs (None: enough,
    or not known).  ``presets``: each family's preset; --preset tiny is suggested only to a fit
    whose language models have another."""
    n = epochs.get("lm")
    if n is None or n >= min(MIN_EPOCHS, max_epochs.get("lm", MIN_EPOCHS)):
        return None
    quick = (presets or {}).get("lm") != QUICK_PRESET
    return (f"fit: warning: about {_epochs(n)} epoch(s) per language model is too little to expect trees better "
            f"than right-branching ones (at least {MIN_EPOCHS}): give more --max-time"
            + (", fewer --seeds/--grammars, " if quick else " or fewer --seeds/--grammars")
            + (f"or --preset {QUICK_PRESET} to try the workflow" if quick else ""))


def _epochs(n: float) -> str:
    return f"{n:.1f}" if n < 10 else f"{n:.0f}"

"""The runs of a selection: :class:`RunPlan` says what one run trains, :func:`start_run` starts
(or resumes) it through its kind's own training, :func:`run_command` does so in a process of its
own (``python -m onparse.selection.worker``), so that runs train side by side.

A plan names its kind (``family``, a key of :data:`onparse.registry.FAMILIES`) and seed
outright: nothing downstream reads them back out of a folder name, and nothing builds a command
line for ``onparse train`` to parse.
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional

from ..registry import FAMILIES
from ..text.corpora import make_spec
from ..training.options import RunOptions


@dataclass(frozen=True)
class RunPlan:
    """One training run of a selection.

    ``settings``: the kind's setting and size values that differ from the preset's, by field name
    (``epochs``, ``max_vocab``, ``rule_form`` ...), as ``onparse train --field-name`` takes them;
    ``corpus`` and ``fmt``: the text, as :func:`onparse.corpus_spec` takes them."""

    family: str
    seed: int
    preset: str
    corpus: str
    fmt: str = "auto"
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The run's folder name in a selection's run folder: ``lm-1``, ``grammar-2``."""
        return f"{self.family}-{self.seed}"

    def values(self) -> Dict[str, Any]:
        """The setting values the kind's ``start`` takes: :attr:`settings` and the seed."""
        return {**self.settings, "seed": self.seed}

    def epochs(self) -> Optional[int]:
        """The most epochs it trains: its own setting, else its preset's (None: not known)."""
        return self.settings.get("epochs") or FAMILIES[self.family].default_epochs(self.preset)

    def to_dict(self) -> Dict[str, Any]:
        return {**asdict(self), "settings": dict(self.settings)}

    @classmethod
    def from_dict(cls, record: Dict[str, Any]) -> "RunPlan":
        return cls(**record)


def start_run(plan: RunPlan, options: RunOptions) -> Callable[[], Any]:
    """The function that trains ``plan`` into ``options.out`` (resumed with ``options.resume``),
    its settings checked first: ValueError for a bad one, before any training.  Calling it returns
    the kind's :class:`onparse.training.options.TrainResult`."""
    family = FAMILIES.get(plan.family)
    if family is None:
        raise ValueError(f"unknown kind of run {plan.family!r}; kinds that train: {', '.join(FAMILIES)}")
    if plan.preset not in family.presets:
        raise ValueError(f"{plan.preset!r} is not a {family.name} preset: choose from {', '.join(family.presets)}")
    return family.start(plan.preset, make_spec(plan.corpus, plan.fmt), plan.values(), options)


def run_command(plan: RunPlan, options: RunOptions) -> List[str]:
    """The command line that trains ``plan`` in a process of its own: the worker reads the plan and
    the options back as one JSON argument (exit 0 done, 130 stopped by SIGINT after saving, 1 a data
    error, 2 a bad setting)."""
    return [sys.executable, "-m", "onparse.selection.worker",
            json.dumps({"plan": plan.to_dict(), "options": asdict(options)})]

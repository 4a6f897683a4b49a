"""What a fit is before it runs: :class:`FitSettings` (what it trains, how it chooses; recorded in
``RUN/fit.json``), the names of its files in the run folder, and the check that its outputs are
not among them (:func:`check_outputs`).  No torch: ``onparse fit``'s options are checked here
before anything heavy is imported.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields
from typing import Any, Dict, Optional

from ..errors import OnparseError
from ..files.run_folder import LOCK
from ..files.safeio import TEMP_PATTERN
from ..grammar.config import GRAMMAR_PRESETS, GrammarConfig
from ..grammar.settings import GrammarTraining

STATE = "fit.json"
CHOICE = "choice.json"
#: The trees of every candidate on the held-out sentences, cached (:class:`onparse.selection.TreeTable`).
TREES = "trees.jsonl"
#: What the student stage writes in the run folder: the text it learns from, and its run folder.
STUDENT_TEXT, STUDENT_DIR = "student-text.txt", "student"
#: The training runs' folders in the run folder (:func:`onparse.fitting.pipeline.run_plans`).
RUN_NAME = re.compile(r"(?:lm|grammar)-\d+")


def read_state(run_dir: str) -> Optional[Dict[str, Any]]:
    """The record ``RUN/fit.json`` of the fit in ``run_dir`` (None when there is none): the one
    reader of it.  Raises OnparseError when it cannot be read or is not a JSON object, saying
    what to do."""
    path = os.path.join(run_dir, STATE)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
        if not isinstance(state, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        raise OnparseError(f"{path} is damaged ({err}): start the fit anew in another --run-dir") from None
    return state


@dataclass(frozen=True)
class FitSettings:
    """What a fit trains and how it chooses; recorded in ``RUN/fit.json`` (a resumed fit must
    keep them, but for ``max_time``)."""

    seeds: int = 3                   # language models trained, seeds 1..seeds
    preset: str = "small"            # onparse train's preset of the language models
    grammars: int = 0                # neural PCFGs trained too, seeds 1..grammars
    grammar_preset: str = "small"    # their preset
    grammar_vocab: Optional[int] = None       # their --max-vocab (None: onparse train's default)
    grammar_curriculum: Optional[int] = None  # their --curriculum-start (None: onparse train's default)
    grammar_form: Optional[str] = None       # their --rule-form (None: the preset's)
    epochs: Optional[int] = None     # most epochs a seed trains (None: the preset's)
    max_time: Optional[float] = None  # seconds for the whole fit (None: no limit)
    cores: Optional[int] = None      # CPU cores to use (None: every usable one)
    limit: int = 1000                # held-out sentences of >= 3 words that choose
    weights: str = "float16"         # how the bundle stores weights
    pretokenized: bool = False       # TEXT's tokens are given: every one kept (corpus format pretokenized)

    def check(self, out: Optional[str] = None, student: Optional[str] = None, run_dir: Optional[str] = None) -> None:
        """OnparseError (one line) for settings fit cannot run with and, given ``out``, for a
        bundle or ``student`` path that is one of fit's own (:func:`check_outputs`)."""
        if out is not None:
            check_outputs(out, student, run_dir)
        if self.seeds < 0 or self.grammars < 0 or self.seeds + self.grammars < 1:
            raise OnparseError(f"fit needs at least one model to train (seeds {self.seeds}, grammars {self.grammars})")
        if self.epochs is not None and self.epochs < 1:
            raise OnparseError(f"epochs must be at least 1, got {self.epochs}")
        if self.limit < 10:
            raise OnparseError(f"the held-out limit must be at least 10 sentences, got {self.limit}")
        if self.max_time is not None and self.max_time <= 0:
            raise OnparseError(f"--max-time must be positive, got {self.max_time}")
        self.grammar_training()          # SettingError (an OnparseError) for a bad grammar option

    @property
    def corpus_format(self) -> str:
        """The format TEXT is read in (:data:`onparse.text.corpora.FORMATS`), by fit and by the
        runs it starts (``onparse train --input-format``): ``pretokenized`` keeps every token as
        ``induce --pretokenized`` does, ``auto`` reads raw text (a fit recorded before the
        option did so)."""
        return "pretokenized" if self.pretokenized else "auto"

    @classmethod
    def recorded(cls, out: str, run_dir: Optional[str] = None) -> Dict[str, Any]:
        """The settings the fit of bundle ``out`` (its run folder ``run_dir``, default
        :func:`default_run_dir`) recorded in its ``fit.json``, by field name; empty when there is
        none.  ``onparse fit --resume`` takes them for every option not given again, so that
        ``--resume`` alone continues the fit.  Raises OnparseError for a damaged record
        (:func:`read_state`)."""
        recorded = (read_state(run_dir or default_run_dir(out)) or {}).get("settings", {})
        known = {f.name for f in fields(cls)}
        return {k: v for k, v in recorded.items() if k in known} if isinstance(recorded, dict) else {}

    def grammar_changes(self) -> Dict[str, Any]:
        """The :class:`GrammarTraining` fields and the grammar size (``rule_form``) that fit's
        grammar options set (those given), the one place that maps one to the other; onparse
        train takes each as ``--field-name``."""
        changes = {"max_vocab": self.grammar_vocab, "curriculum_start": self.grammar_curriculum,
                   "rule_form": self.grammar_form}
        return {k: v for k, v in changes.items() if v is not None}

    def grammar_training(self) -> GrammarTraining:
        """The grammars' training settings as fit's options change them (the rest onparse train's)."""
        changes = self.grammar_changes()
        if "rule_form" in changes:       # a size of the grammar's, not a training setting
            GrammarConfig(vocab_size=1, **{**GRAMMAR_PRESETS[self.grammar_preset], "rule_form": changes.pop("rule_form")})
        return GrammarTraining().with_overrides(changes)


def default_run_dir(out: str) -> str:
    """``OUT.fit`` beside the bundle: ``parser.pt`` -> ``parser.fit``."""
    root, ext = os.path.splitext(out)
    return (root if ext == ".pt" else out) + ".fit"


def check_outputs(out: str, student: Optional[str], run_dir: Optional[str]) -> None:
    """OnparseError (one line) for a bundle or student path that is fit's run folder (``run_dir``,
    default :func:`default_run_dir`) or one of its files or folders there: writing one would
    destroy the fit (``--out R/fit.json``), or fail after all the training (``--out R/lm-1``)."""
    run_dir = run_dir or default_run_dir(out)
    for option, path in (("--out", out), ("--student", student)):
        if path is None:
            continue
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(run_dir))
        if rel == ".":
            raise OnparseError(f"{option} {path} is fit's run folder; choose another path")
        first = rel.split(os.sep)[0]
        if first != ".." and (first in (STATE, CHOICE, TREES, LOCK, STUDENT_TEXT, STUDENT_DIR)
                              or RUN_NAME.fullmatch(first)
                              or TEMP_PATTERN.fullmatch(first)):
            raise OnparseError(f"{option} {path} is one of fit's own files in its run folder {run_dir}; "
                               "choose another path")

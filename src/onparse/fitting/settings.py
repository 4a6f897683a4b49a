"""What a fit is before it runs: :class:`FitSettings` (what it trains, how it chooses; recorded in
``RUN/fit.json``), the names of its files in the run folder, the one checked reader of that
record (:func:`read_state`) and the one check of whether fit may write its bundle and student
(:func:`check_outputs`).  No torch: ``onparse fit``'s options are checked here before anything
heavy is imported.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, fields
from typing import Any, Dict, Optional, get_args, get_type_hints

from ..errors import OnparseError
from ..files.checkpoint import holds_model
from ..files.run_folder import LOCK
from ..files.schema import NUMBER, ListOf, MapOf, Obj, Opt, Where, check, decode
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
#: The stages of a fit, in order (each recorded in ``fit.json`` when it is done).
STAGES = ("plan", "train", "choose", "bundle", "student")


def read_state(run_dir: str) -> Optional[Dict[str, Any]]:
    """The record ``RUN/fit.json`` of the fit in ``run_dir`` (None when there is none): the one
    reader of it, checked against :func:`state_shape` (each stage's record, and each recorded
    stage's predecessors).  Raises OnparseError when it cannot be read or has not that shape,
    saying what is wrong and what to do."""
    path = os.path.join(run_dir, STATE)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            state = decode(handle.read())
        if not isinstance(state, dict):
            raise ValueError("not a JSON object")
        check(state, state_shape())
        done = [stage for stage in STAGES if stage in state]
        if done != list(STAGES[:len(done)]):
            missing = next(stage for stage in STAGES if stage not in state)
            raise ValueError(f"{', '.join(done)} recorded without {missing}")
    except (OSError, ValueError) as err:
        raise OnparseError(f"{path} is damaged ({err}): start the fit anew in another --run-dir") from None
    return state


def state_shape() -> Obj:
    """The shape of ``RUN/fit.json`` (:mod:`onparse.files.schema`): what fit and its report read
    of each stage's record.  Run names are checked too: fit joins them to the run folder."""
    run = Where(str, RUN_NAME.fullmatch, "a run's name (lm-N or grammar-N)")
    member = {"run": run, "epoch": int, "layer": int, "decoder": str}
    choice = Where(Obj({"epochs": MapOf(int, run), "members": ListOf(Obj(member)), "voter": Opt(str),
                        "ties": str, "sentences": int,
                        "member_scores": ListOf(Obj({**member, "agreement": NUMBER}))},
                       {"perplexity": MapOf(Opt(NUMBER)), "lean": MapOf(NUMBER),
                        "baselines": ListOf(Obj({**member, "agreement": MapOf(NUMBER)})),
                        "collapsed": ListOf(Obj({**member, "alarm": str}))}),
                   lambda c: all(m["run"] in c["epochs"] for m in c["members"]),
                   "members of the chosen epochs' runs")
    positive = Where(int, _positive, "at least 1")
    plan = Obj({"corpus": str, "held_out_sha256": str, "runs": ListOf(run), "parallel": positive,
                "waves": positive, "threads_per_run": positive},
               {"corpus_format": str, "held_out_max_words": Opt(int), "read_seconds": NUMBER})
    return Obj({"text": str, "settings": Obj({}, {f.name: _shape_of(t) for f, t in _setting_types()})},
               {"format": str, "text_path": str, "seconds": MapOf(NUMBER), "train_seconds": MapOf(NUMBER),
                "start_up": MapOf(NUMBER), "written": ListOf(str), "plan": plan,
                "train": Obj({"epochs": MapOf(ListOf(int), run)}, {"left_out": ListOf(str)}),
                "choose": Obj({"choice": choice}), "bundle": Obj({"out": str}, {"models": ListOf(str)}),
                "student": Obj({"student": str})})


def _positive(n: int) -> bool:
    return n >= 1


def _setting_types():
    """Each :class:`FitSettings` field with its declared type (the one home of the settings' types)."""
    hints = get_type_hints(FitSettings)
    return [(f, hints[f.name]) for f in fields(FitSettings)]


def _shape_of(hint) -> Any:
    """A setting's shape from its declared type: ``Optional[int]`` -> ``Opt(int)``, ``float`` -> a number."""
    args = [a for a in get_args(hint) if a is not type(None)]
    if args:
        return Opt(_shape_of(args[0]))
    return NUMBER if hint is float else hint


@dataclass(frozen=True)
class FitSettings:
    """What a fit trains and how it chooses; recorded in ``RUN/fit.json`` (a resumed fit must
    keep them, but for ``max_time`` and ``cores``)."""

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

    def check(self, out: Optional[str] = None, student: Optional[str] = None, run_dir: Optional[str] = None, *,
              text: Optional[str] = None, force: bool = False, resume: bool = False) -> None:
        """OnparseError (one line) for settings fit cannot run with and, given ``out``, for a
        bundle or ``student`` path fit may not write (:func:`check_outputs`)."""
        if out is not None:
            check_outputs(out, student, run_dir, text=text, force=force, resume=resume)
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


def check_outputs(out: str, student: Optional[str], run_dir: Optional[str], *, text: Optional[str] = None,
                  force: bool = False, resume: bool = False) -> None:
    """Whether fit may write its bundle ``out`` and its ``student``: the one check of both, on a
    new fit and on ``resume`` alike.  OnparseError (one line) for

    * a path that is fit's run folder (``run_dir``, default :func:`default_run_dir`) or one of
      its files or folders there: writing one would destroy the fit (``--out R/fit.json``), or
      fail after all the training (``--out R/lm-1``); or the text it learns from (``text``);
    * the same file for both (the student would replace the bundle), by identity, not spelling;
    * without ``force``, an existing file fit has not written itself (a model of the user's, a
      text): the outputs a resumed fit recorded writing (``fit.json``'s ``written``, its bundle
      and student) are its own to write again."""
    run_dir = run_dir or default_run_dir(out)
    outputs = (("--out", out), ("--student", student))
    for option, path in outputs:
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
        if os.path.isdir(path):
            raise OnparseError(f"{option} {path} is a folder; give a file's path")
        if text is not None and same_file(path, text):
            raise OnparseError(f"{option} {path} is the text the fit learns from; choose another path")
    if student is not None and same_file(out, student):
        raise OnparseError(f"--student {student} is the same file as --out {out}: the student would replace the "
                           "bundle; choose another path for one of them")
    recorded = (read_state(run_dir) or {}) if resume else {}
    if not resume and os.path.exists(os.path.join(run_dir, STATE)):
        return                  # fit refuses the folder ("holds a fit already"), writing nothing
    own = {"--out": recorded.get("bundle", {}).get("out"), "--student": recorded.get("student", {}).get("student")}
    written = recorded.get("written", [])
    for option, path in outputs:
        other = own["--student" if option == "--out" else "--out"]
        if path is not None and other is not None and same_file(path, other):
            raise OnparseError(f"{option} {path} is this fit's {'student' if option == '--out' else 'bundle'}; "
                               "choose another path")
        if path is None or force or not os.path.lexists(path) \
                or any(same_file(path, mine) for mine in [own[option], *written] if mine):
            continue
        if holds_model(path):
            raise OnparseError(f"{option}: {path} holds an onparse model; writing there would destroy it "
                               "(pass --force to replace it)")
        raise OnparseError(f"{option}: {path} exists and is not an onparse model; fit would replace it "
                           "(pass --force to replace it, or choose another path)")


def same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file: the same file when both exist (links
    included), else the same resolved path."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)

"""``onparse fit``: raw text in, a bundled parser out, and no gold tree anywhere.

One run folder (``RUN``, by default ``OUT.fit`` beside ``--out``) holds the whole pipeline;
``RUN/fit.json`` records each stage when it is done, so a stopped fit continues where it stopped
(``--resume``), stage by stage and, within training, epoch by epoch:

1. **plan**: read TEXT (a file of raw lines, or a plain-text corpus name such as ``news``), check
   it, and plan the seeds side by side (one process per core, one thread each) and the time of
   each within ``--max-time``.
2. **train**: one ON-LSTM language model per seed in ``RUN/lm-S``, and with ``--grammars G`` one
   neural PCFG per seed in ``RUN/grammar-S`` (:func:`run_plans`: each a
   :class:`onparse.selection.RunPlan`, trained through its kind's own training in a process of
   its own, keeping every epoch); each run's log in its ``train.log``.  The corpus's own
   held-out split (:func:`onparse.text.corpora.held_out_split`) leaves about 5% of the text out
   of training and validation: those sentences choose.
3. **choose**: the trees of every kept epoch x layer x decoder on those held-out sentences
   (:class:`onparse.selection.TreeTable`, cached in ``RUN/trees.jsonl``), each run's validation
   perplexities, and the gold-free rule of :mod:`onparse.selection.rules`; ``RUN/choice.json``.
4. **bundle**: the chosen members, voter and tie rule as one bundle file (``--out``).
5. **student** (``--student PATH``): a student distilled from the bundle on TEXT.

No stage reads a gold tree: the text is the only data.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional

from ..api import load
from ..api_tools import distill
from ..devices import torch_threads, usable_cores
from ..errors import OnparseError
from ..files.run_folder import FolderLock, epoch_path, has_last, make_folder, valid_perplexities
from ..files.safeio import atomic_output, dumps, format_duration
from ..members import Member
from ..selection.candidates import TreeTable, candidates_of, every_reading, run_alarms
from ..selection.rules import Choice, choose
from ..selection.runs import RunPlan
from ..text.corpora import TREEBANK_NAMES, TooFewSentences, load_corpus, make_spec
from . import budget
from .settings import (CHOICE, STAGES, STATE, STUDENT_DIR, STUDENT_TEXT, TREES, FitSettings, default_run_dir,
                       read_state, same_file)
from .waves import TrainStage

#: The fewest sentences fit accepts: its held-out 5% must give choosing sentences.
MIN_SENTENCES = 200
#: The longest held-out line that chooses.  Choosing parses every kept epoch's trees of them, a
#: grammar's cubic in the length: on paragraph-like text (lines of up to 1,108 words) a 4-minute
#: fit spent 427 s choosing.  A sentence is rarely longer; a paragraph is not a sentence.
CHOOSE_MAX_WORDS = 60
#: How often fit adds the running stage's time to ``fit.json`` (seconds): a fit killed outright
#: (``kill -9``) has counted all but at most this much of it against ``--max-time``.
STAGE_SAVE_EVERY = 30.0
#: The settings a resumed fit may change: its budget and the cores it uses.
FREE_ON_RESUME = ("max_time", "cores")


@dataclass
class FitResult:
    """What :func:`fit` did: the bundle, the optional student, the choice and the time spent."""

    out: str
    run_dir: str
    choice: Dict[str, Any]
    student: Optional[str] = None
    seconds: Dict[str, float] = field(default_factory=dict)   # per stage, over every invocation
    left_out: List[str] = field(default_factory=list)         # runs that completed no epoch

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def fit(text: str, out: str, settings: FitSettings = FitSettings(), *, run_dir: Optional[str] = None,
        resume: bool = False, student: Optional[str] = None, stop_after: Optional[str] = None,
        student_options: Optional[Dict[str, Any]] = None, say: Callable[[str], None] = lambda _: None,
        began: Optional[float] = None, force: bool = False) -> FitResult:
    """Run (or with ``resume`` continue) the pipeline of the module docstring and write the
    bundle to ``out``.  ``say`` receives progress lines (stderr in the CLI); ``stop_after``: stop
    once that stage is done (``--stop-after``); ``student``: also distil a student there, with
    ``student_options`` (:func:`onparse.distill`'s ``sizes``, ``settings`` ...); ``began``: when
    the process started (``time.monotonic()``'s clock; the CLI's), whose start-up then counts
    against ``settings.max_time`` (:mod:`onparse.fitting.budget`).  An existing file at ``out``
    or ``student`` that this fit has not written is replaced only with ``force``.  OnparseError
    (one line) for text that is too small, unreadable or a treebank's gold, a run folder
    holding another fit, an output fit may not write, or a failed stage.
    Cost: ``settings.max_time``, or the seeds' epochs of training (most of it), then one parse of
    the held-out sentences per kept epoch."""
    settings.check(out, student, run_dir, text=text, force=force, resume=resume)
    if stop_after is not None and stop_after not in STAGES:
        raise OnparseError(f"unknown stage {stop_after!r}; stages: {', '.join(STAGES)}")
    run_dir = run_dir or default_run_dir(out)
    state_path = os.path.join(run_dir, STATE)
    if os.path.exists(state_path) and not resume:
        raise OnparseError(f"{run_dir} holds a fit already: continue it with --resume, or give another --run-dir")
    if resume and not os.path.exists(state_path):
        raise OnparseError(f"nothing to resume: {run_dir} holds no {STATE}; start without --resume")
    make_folder(run_dir)
    lock = FolderLock(run_dir, "--run-dir").acquire(warn=say)
    try:
        run = _Fit(text, out, settings, run_dir, student, say)
        run.student_options = dict(student_options or {})
        if began is not None:           # this invocation's start-up, before fit was called
            seconds = run.state.setdefault("seconds", {})
            seconds["start"] = round(seconds.get("start", 0.0) + max(0.0, time.monotonic() - began), 1)
        for stage in STAGES:
            if stage == "student" and student is None:
                break
            run.do(stage)
            if stage == stop_after:
                say(f"fit: stopped after {stage}, as asked; continue with --resume")
                break
        return FitResult(out, run_dir, run.state.get("choose", {}).get("choice", {}),
                         student if "student" in run.state else None, run.state.get("seconds", {}),
                         run.state.get("train", {}).get("left_out", []))
    finally:
        lock.release()


class _Fit(TrainStage):
    """The state of one fit (``RUN/fit.json``) and its stages (the train stage:
    :class:`onparse.fitting.waves.TrainStage`)."""

    def __init__(self, text, out, settings, run_dir, student, say):
        self.text, self.out, self.settings, self.run_dir, self.student, self.say = \
            text, out, settings, run_dir, student, say
        self.path = os.path.join(run_dir, STATE)
        self.student_options: Dict[str, Any] = {}
        self.stage: Optional[str] = None           # the stage under way, since stage_began
        self.stage_began: Optional[float] = None
        self.counted: Optional[float] = None         # when its time was last added to its seconds
        self.lock = threading.RLock()                # the record, between fit and its stage's clock
        recorded = read_state(run_dir)
        if recorded is not None:
            self.state: Dict[str, Any] = recorded
            self._check_same_fit()
        else:
            self.state = {"format": "onparse-fit", "text": text, "settings": asdict(settings), "seconds": {}}
            if os.path.isfile(text):       # the file, wherever a resumed fit is started from
                self.state["text_path"] = os.path.abspath(text)

    def _check_same_fit(self) -> None:
        # A setting the record lacks came after that fit was made: it ran with the default.
        saved = {**asdict(FitSettings()), **self.state.get("settings", {})}
        mine = asdict(self.settings)
        differs = sorted(k for k in set(mine) | set(saved) if k not in FREE_ON_RESUME and saved.get(k) != mine.get(k))
        if differs:
            raise OnparseError(f"{self.run_dir} is a fit with other settings ({', '.join(differs)}); "
                               "resume it with the same ones, or give another --run-dir")
        # The same file however it is spelled (relative, absolute, through a link); a corpus name
        # by its name.
        recorded = [p for p in (self.state["text"], self.state.get("text_path")) if p]
        if not any(p == self.text or os.path.exists(p) and same_file(p, self.text) for p in recorded):
            raise OnparseError(f"{self.run_dir} is a fit of {self.state['text']}, not {self.text}")

    def save(self) -> None:
        with self.lock, atomic_output(self.path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            handle.write(dumps(self.state, indent=1) + "\n")

    def do(self, stage: str) -> None:
        if stage in self.state and not self._redo(stage):
            return
        self.say(f"fit: {stage} ({STAGES.index(stage) + 1} of {len(STAGES) - (self.student is None)})"
                 f"{self._left()}")
        self.stage, self.stage_began, self.counted = stage, time.monotonic(), None
        try:
            # Choosing and the student run here; the runs' stage counts its time as it polls them.
            clock = self._clock() if stage in ("choose", "student") else nullcontext()
            with torch_threads(self.settings.cores), clock:
                record = getattr(self, f"_{stage}")()
        finally:
            # Time spent counts against --max-time whether the stage ends or is stopped.
            self.count_time(final=True)
            self.stage_began = None
        self.state[stage] = record
        self.save()

    def count_time(self, final: bool = False) -> None:
        """Add the stage's time not yet counted to its ``seconds`` in ``fit.json``: as a stage
        goes, once :data:`STAGE_SAVE_EVERY` seconds have passed since last counted, so that a fit
        killed outright (``kill -9``) has counted nearly all of its time against ``--max-time``;
        and, ``final``, when it ends."""
        if self.stage_began is None or self._uncounted() < (0.0 if final else STAGE_SAVE_EVERY):
            return
        with self.lock:
            seconds = self.state.setdefault("seconds", {})
            now = time.monotonic()
            seconds[self.stage] = round(seconds.get(self.stage, 0.0) + self._uncounted(now), 1)
            self.counted = now
            self.save()

    @contextmanager
    def _clock(self):
        """While a stage works in long calls of its own (parsing, distilling) that leave the
        record alone, a thread counts its time every :data:`STAGE_SAVE_EVERY` seconds
        (:meth:`count_time`; the record's changes and saves hold :attr:`lock`); it has stopped when
        the block ends."""
        done = threading.Event()

        def tick() -> None:
            while not done.wait(max(STAGE_SAVE_EVERY, 0.05)):
                try:
                    self.count_time()
                except Exception:         # a full disk: the stage's own final count says so
                    return
        thread = threading.Thread(target=tick, name="fit-clock", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def _uncounted(self, now: Optional[float] = None) -> float:
        """Seconds of the stage under way not yet in its ``seconds``."""
        if self.stage_began is None:
            return 0.0
        since = self.counted if self.counted is not None else self.stage_began
        return (time.monotonic() if now is None else now) - since

    def _redo(self, stage: str) -> bool:
        """Whether a stage done already must run again: the bundle, when this invocation's
        ``--out`` is not the file written (another file, or the file was deleted)."""
        return stage == "bundle" and (not os.path.exists(self.out)
                                      or not same_file(self.state[stage].get("out", ""), self.out))

    def _left(self) -> str:
        """The budget left, counting every stage's time so far, this one's included."""
        if self.settings.max_time is None:
            return ""
        spent = sum(self.state.get("seconds", {}).values()) + self._uncounted()
        return f"; about {format_duration(max(0.0, self.settings.max_time - spent))} of the budget left"

    def _claim(self, path: str) -> None:
        """Record ``path`` as an output of this fit before writing it (the check of outputs let
        it be written): a fit stopped while writing it writes it again when resumed, with no
        --force (:func:`onparse.fitting.settings.check_outputs`)."""
        with self.lock:                   # the stage's clock may be saving the record
            written = self.state.setdefault("written", [])
            if not any(same_file(path, mine) for mine in written):
                written.append(os.path.abspath(path))
                self.save()

    # -- 1. plan ---------------------------------------------------------------------------------
    def _plan(self) -> Dict[str, Any]:
        if self.text in TREEBANK_NAMES:
            raise OnparseError(f"{self.text} is a treebank whose held-out parts are gold: fit its training "
                               f"part as a text file instead (onparse gold-text --gold {self.text}-train)")
        spec = make_spec(self.text, self.settings.corpus_format)
        reading = time.monotonic()
        try:
            corpus = load_corpus(spec)          # OnparseError for unreadable or empty text
            n = len(corpus.train) + len(corpus.valid) + len(corpus.test)
        except TooFewSentences as err:          # its advice (a validation file) is onparse train's
            n = err.sentences
        if n < MIN_SENTENCES:
            raise OnparseError(f"{self.text} has {n} sentences; fit needs at least {MIN_SENTENCES} "
                               "(about 5% of them are held out to choose by)")
        held = held_out_sentences(corpus, self.settings.limit, CHOOSE_MAX_WORDS)
        if len(held) < 5:
            raise OnparseError(f"{self.text} leaves {len(held)} held-out sentences of 3 to {CHOOSE_MAX_WORDS} "
                               "words; fit needs more text (one sentence a line)")
        read_seconds = round(time.monotonic() - reading, 1)
        plans = run_plans(self.settings, spec.source, spec.format)
        runs = [p.name for p in plans]
        layout = self._layout({"runs": runs})
        parallel, waves = layout["parallel"], layout["waves"]
        share = self._seconds_per_run(waves)
        start_up = budget.start_up(read_seconds)
        train_time = None if share is None else max(0.0, budget.train_time(share, start_up))
        words = sum(len(s) + 1 for s in corpus.train)       # a language model's tokens: words and <eos>
        kinds = {p.family: p for p in plans}          # one plan of each kind stands for its kind
        epochs = {family: budget.epochs_bought(train_time, words, family, p.preset, layout["threads_per_run"])
                  for family, p in kinds.items()}
        digest = held_out_digest(held)
        plan = {"corpus": spec.source, "corpus_format": spec.format, "sentences": n,
                "train_sentences": len(corpus.train),
                "held_out": len(held), "held_out_sha256": digest, "held_out_max_words": CHOOSE_MAX_WORDS,
                "runs": runs, **layout, "seconds_per_run": share,
                "read_seconds": read_seconds, "start_up_seconds": start_up, "train_max_time": train_time,
                "epochs_bought": epochs}
        self.say(f"fit: {n:,} sentences ({len(corpus.train):,} to train on, {len(held):,} held out to choose "
                 f"by); {len(runs)} run(s) ({', '.join(runs)}), {parallel} side by side"
                 + (f", about {format_duration(share)} each, its start-up included" if share else ""))
        most = {family: p.epochs() for family, p in kinds.items()}
        bought = budget.what_it_buys(train_time, epochs, {k: v for k, v in most.items() if v})
        if bought:
            self.say(f"fit: {bought}")
        warning = budget.warning(epochs, {k: v for k, v in most.items() if v}, {f: p.preset for f, p in kinds.items()})
        if warning:
            self.say(warning)
        return plan

    def _layout(self, plan: Dict[str, Any]) -> Dict[str, int]:
        """How ``plan``'s runs share this invocation's cores (``--cores``, which a resumed fit may
        change): ``parallel`` runs side by side, in ``waves``, at ``threads_per_run`` threads."""
        cores = self.settings.cores or usable_cores()
        parallel = max(1, min(len(plan["runs"]), cores))
        return {"parallel": parallel, "waves": math.ceil(len(plan["runs"]) / parallel),
                "threads_per_run": max(1, cores // parallel)}

    def _seconds_per_run(self, waves: int) -> Optional[float]:
        """Each run's share of ``--max-time`` in wall time, its start-up and stop included (None: no
        limit): :func:`onparse.fitting.budget.training_share` of what fit's start-up and plan left.
        Computed from the settings of this invocation, so a fit resumed with another
        ``--max-time`` plans by the new one."""
        seconds = self.state.get("seconds", {})
        spent = seconds.get("start", 0.0) + seconds.get("plan", 0.0)
        if "plan" not in self.state:      # planning now
            spent += self._uncounted()
        return budget.training_share(self.settings.max_time, spent, waves, self.student is not None)

    def plans(self, plan: Dict[str, Any]) -> Dict[str, RunPlan]:
        """The training runs by name: :func:`run_plans` of the settings and ``plan``'s corpus."""
        return {p.name: p for p in run_plans(self.settings, plan.get("corpus", ""), plan.get("corpus_format", "auto"))}

    def _spec(self):
        """The planned corpus (a fit planned before formats were recorded read ``auto``)."""
        plan = self.state["plan"]
        return make_spec(plan["corpus"], plan.get("corpus_format", "auto"))

    # -- 3. choose -------------------------------------------------------------------------------
    def _choose(self) -> Dict[str, Any]:
        table = TreeTable(self._held_out(), os.path.join(self.run_dir, TREES))
        candidates, columns = [], []
        for run, epochs in self.state["train"]["epochs"].items():
            for epoch in epochs:
                found = candidates_of(run, self._folder(run), epoch, table, every_reading)
                candidates += [c for c, _ in found]
                columns += [trees for _, trees in found]
                self.say(f"fit: choose: {run} epoch {epoch} parsed ({len(found)} reading(s))")
        runs = self.state["train"]["epochs"]
        perplexity = {run: valid_perplexities(self._folder(run)) for run in runs}
        alarms = self._alarms(list(runs))
        try:
            choice = choose(candidates, [list(row) for row in zip(*columns)], perplexity, alarms)
        except ValueError as err:
            raise OnparseError(f"cannot choose: {err}") from None
        with atomic_output(os.path.join(self.run_dir, CHOICE)) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            handle.write(dumps(choice.to_dict(), indent=1) + "\n")
        for candidate, why in choice.collapsed:
            self.say(f"fit: left out {candidate.run}: at epoch {candidate.epoch} it is not learning ({why})")
        self.say(f"fit: chose {describe(choice)}")
        return {"choice": choice.to_dict()}

    def _alarms(self, runs: List[str]) -> Dict[str, Dict[int, str]]:
        """Each run's alarms (:func:`onparse.selection.run_alarms`), its kind named by the plan in
        ``fit.json``, not by whichever events its log kept."""
        plans = self.plans(self.state["plan"])
        return {run: run_alarms(self._folder(run), plans[run].family if run in plans else None) for run in runs}

    def _held_out(self) -> List[List[str]]:
        corpus = load_corpus(self._spec())
        # A fit planned before the cap existed chose by every held-out line (no cap).
        held = held_out_sentences(corpus, self.settings.limit, self.state["plan"].get("held_out_max_words"))
        if held_out_digest(held) != self.state["plan"]["held_out_sha256"]:
            raise OnparseError(f"{self.text} changed since the fit started; start a new fit")
        return held

    # -- 4. bundle -------------------------------------------------------------------------------
    def _bundle(self) -> Dict[str, Any]:
        choice = self.state["choose"]["choice"]
        runs = list(dict.fromkeys(m["run"] for m in choice["members"]))
        paths = [epoch_path(self._folder(run), choice["epochs"][run]) for run in runs]
        members = [Member(runs.index(m["run"]), m["layer"], m["decoder"]) for m in choice["members"]]
        parser = load(paths, "cpu").with_members(members, [choice["voter"]] if choice["voter"] else [],
                                                 choice["ties"])
        meta = {"fit": {"text": self.text, "settings": self.state["settings"], "choice": choice,
                        "rule": "onparse fit's gold-free choice (onparse.selection.rules): each run's epoch of lowest "
                                "validation perplexity, layers 2-3 with the paper's decoder or a grammar's MBR tree, "
                                "baseline-like members left out, a voter of the way the average leans on held-out "
                                "text"}}
        self._claim(self.out)
        parser.save_bundle(self.out, weights=self.settings.weights, metadata=meta)
        self.say(f"fit: wrote {self.out}")
        return {"out": self.out, "models": paths}

    # -- 5. student ------------------------------------------------------------------------------
    def _student(self) -> Dict[str, Any]:
        # The training part of TEXT as the language models read it (one sentence a line, their
        # tokens): the student learns from what its teachers learnt from, never the held-out part.
        text = os.path.join(self.run_dir, STUDENT_TEXT)
        if not os.path.exists(text):
            corpus = load_corpus(self._spec())
            with atomic_output(text) as tmp, open(tmp, "w", encoding="utf-8") as handle:
                handle.writelines(" ".join(s) + "\n" for s in corpus.train)
        folder = os.path.join(self.run_dir, STUDENT_DIR)
        self._claim(self.student)
        limit = budget.student_time(self.settings.max_time, self.state.get("seconds", {}).get("student", 0.0))
        options = {"max_time": limit, **self.student_options}      # the API's own max_time wins
        distill(load(self.out, "cpu"), text, self.student, run_dir=folder, resume=has_last(folder),
                tokenize=False, quiet=True, **options)
        self.say(f"fit: wrote the student {self.student}")
        return {"student": self.student}


def run_plans(settings: FitSettings, corpus: str, fmt: str = "auto") -> List[RunPlan]:
    """The runs a fit trains: language models of seeds ``1..settings.seeds`` (``lm-S``), then
    grammars of seeds ``1..settings.grammars`` (``grammar-S``), each with the settings fit's
    options give it (``--epochs``; the grammar options)."""
    common = {} if settings.epochs is None else {"epochs": settings.epochs}
    grammar = {**common, **settings.grammar_changes()}
    return ([RunPlan("lm", s, settings.preset, corpus, fmt, common) for s in range(1, settings.seeds + 1)]
            + [RunPlan("grammar", s, settings.grammar_preset, corpus, fmt, grammar)
               for s in range(1, settings.grammars + 1)])


def held_out_sentences(corpus, limit: int, max_words: Optional[int] = None) -> List[List[str]]:
    """The sentences that choose: the first ``limit`` of 3 to ``max_words`` (None: any number of)
    words of the corpus's own held-out split (never trained or validated on)."""
    return [list(s) for s in corpus.test if 3 <= len(s) <= (max_words or len(s))][:limit]


def held_out_digest(held: List[List[str]]) -> str:
    """The SHA-256 of the held-out sentences, which ``RUN/fit.json`` records so that a resumed
    fit chooses by the same sentences."""
    return hashlib.sha256("\n".join(" ".join(s) for s in held).encode()).hexdigest()


def describe(choice: Choice) -> str:
    """One line: the chosen epochs of the runs with members, the members, voter and ties."""
    chosen = {m.run for m in choice.members}          # a run left out has no member
    epochs = ", ".join(f"{run} epoch {e}" for run, e in choice.epochs.items() if run in chosen)
    voter = f"a {choice.voter}-branching voter, ties {choice.ties}" if choice.voter else "no voter, ties first"
    return f"{epochs}; {len(choice.members)} member(s); {voter}"


"""``onparse distill``: train a student parser (:mod:`onparse.student.model`) on a teacher parser's
trees of unlabelled text (self-training; Mohananey et al. 2020, Shayegh et al. 2024).

1. *Teach*: the teacher (any :class:`onparse.api.Parser`: language models, their members,
   voters and tie rule, even another student) parses every line of the text, read as
   ``onparse induce`` reads it.  The trees go to ``RUN/teacher-trees.txt`` (written once, then
   reused by ``--resume``).  Or, with ``teacher_trees=FILE``, the trees are read from what
   ``onparse induce TEXT`` wrote with the same teacher (its ``--shard`` parts concatenated, on
   other machines, or shared by the students of several seeds): the teacher does not parse, and
   every tree is checked word by word against its sentence
   (:mod:`onparse.student.teacher_trees`).  Every :data:`DistillSettings.valid_every`-th
   sentence is held out.
2. *Learn*: the student's tree-CRF loss on the teacher's trees, Adam, batches of sentences of
   similar length in an order fixed by the seed and the epoch.  After each epoch, the student's
   *agreement* with its teacher on the held-out sentences (the share of the teacher's spans of
   2..n-1 words that the student's tree has) is logged.

The run folder ``RUN`` (default: the student's path with ``.run`` for ``.pt``) holds, as a
training run's does (:mod:`onparse.files.run_folder`): its lock, ``last.pt`` (a student file
with the optimiser, the RNG state and the position in the epoch, saved every
``save_every`` batches and at each epoch's end), ``epoch-NNN.pt`` (with ``keep_epochs``) and
``metrics.jsonl``.  ``resume=True`` continues from ``last.pt`` exactly: the weights after
resuming equal those of a run never stopped.  The student file is written at the end; a run's
``--resume`` may replace the student it wrote (:func:`written_by_run`: the same recorded
``run_id``, text and teachers).  A non-finite loss or weights stop the run (OnparseError):
``last.pt`` keeps the last good state and no student is written.

The loop reads top to bottom in :meth:`_Run.go`: read the text, build the student, start or
restore a :class:`RunState` (the plain value ``last.pt`` stores beside the weights, the
optimiser and the RNG), get the teacher's trees, then train epoch by epoch.
"""
from __future__ import annotations

import hashlib
import math
import os
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

import torch

from ..version import __version__
from ..files.checkpoint import STUDENT_FORMAT, first_line, read_file
from ..errors import OnparseError
from ..induce import WINDOW, read_lines
from ..progress import Portion, Progress
from ..files.safeio import MAX_LINE_BYTES, remove_stale_temp_files, special_file
from .model import SpanStudent, encode, student_trees
from .config import MIN_WORDS, DistillSettings, StudentConfig
from .file import check_student, same_teachers, save_student, teachers_record
from .teacher_trees import TEACHER_TREES, given_teacher_trees, read_teacher_trees, write_teacher_trees
from ..text.sentences import ParagraphCheck, params_to_dict, sentences_of
from ..text.tokens import DEFAULT_PUNCT, normalize_word
from ..files.run_folder import (EPOCH_SNAPSHOT, LAST, METRICS, FolderLock, MetricsLog, is_run_file, make_folder,
                                refuse_old_run, remove_run_files, tidy, truncate_log)
from ..trees.tree import tree_spans

#: The option that names the run folder, in messages.
RUN_DIR_OPTION = "--run-dir"


@dataclass
class DistillResult:
    """What :func:`distill` did: the student file, its run folder, the sentences it learnt from
    and held out, per epoch ``{"epoch", "loss", "agreement", "minutes"}``, and why it stopped
    (``epochs``: all done; ``max-time``: out of time, ``resume`` continues)."""

    student: str
    run_dir: str
    sentences: int
    held_out: int
    epochs: List[Dict[str, Any]] = field(default_factory=list)
    stopped: str = "epochs"


@dataclass(frozen=True)
class Job:
    """What one :func:`distill` call is asked to do: its files, the student's sizes, how it
    trains and how the text is read."""

    text: str
    student_path: str
    run_dir: str
    config: StudentConfig
    settings: DistillSettings = DistillSettings()
    keep_epochs: bool = False
    tokenize: bool = True
    punct: str = DEFAULT_PUNCT
    max_line_bytes: int = MAX_LINE_BYTES
    quiet: bool = False
    split: Any = None                 # a SentenceSplitter: each sentence of a line is one to learn from
    teacher_trees: Optional[str] = None   # the teacher's trees of the text, as `onparse induce` wrote them
    max_time: Optional[float] = None      # seconds for this call, the teacher's parse included (None: no limit)


@dataclass
class Text:
    """The text as read: its kept sentences (at least :data:`MIN_WORDS` tokens), their words,
    the SHA-256 of its bytes (hashed while read), and which sentences are learnt from
    (``train``) and held out (``held``)."""

    sentences: List[List[str]]
    words: int
    sha256: str
    train: List[int]
    held: List[int]


@dataclass
class RunState:
    """Where a run stands: the plain value the loop updates and ``last.pt`` stores (its
    ``"training"`` dict, with the optimiser and RNG states; ``history`` as its
    ``metadata["epochs"]``).  The layout of ``last.pt`` is that of onparse 41."""

    epoch: int = 1                 # the epoch in progress, 1-based (epochs + 1 once all are done)
    done: int = 0                  # its batches done
    step: int = 0                  # optimiser steps so far
    loss_sum: float = 0.0          # the epoch's batch losses so far
    minutes: float = 0.0           # training time so far
    history: List[Dict[str, Any]] = field(default_factory=list)   # one record per finished epoch

    POSITION = ("epoch", "done", "step", "loss_sum")

    def position(self) -> Dict[str, Any]:
        return {key: getattr(self, key) for key in self.POSITION}

    def to_training(self, optimizer) -> Dict[str, Any]:
        """``last.pt``'s ``"training"``: the position, the minutes, the optimiser and RNG states."""
        state = {**self.position(), "minutes": self.minutes, "optimizer": optimizer.state_dict(),
                 "torch_rng": torch.get_rng_state()}
        if torch.cuda.is_available():            # dropout on a GPU draws from its own generators
            state["cuda_rng"] = torch.cuda.get_rng_state_all()
        return state

    @classmethod
    def from_training(cls, state: Dict[str, Any], history: list, path: str) -> "RunState":
        try:
            return cls(**{key: state[key] for key in cls.POSITION}, minutes=float(state.get("minutes", 0.0)),
                       history=list(history))
        except (KeyError, TypeError, ValueError):
            raise OnparseError(f"{path}: its training state is damaged (start again with --overwrite)") from None


def default_run_dir(student_path: str) -> str:
    """``student.pt`` -> ``student.run``."""
    root, ext = os.path.splitext(student_path)
    return (root if ext == ".pt" else student_path) + ".run"


def run_file_clash(student_path: str, run_dir: str) -> Optional[str]:
    """Why ``student_path`` cannot be the student of a run in ``run_dir`` (it is the folder
    itself or a file of the run: its lock, ``last.pt``, the teacher's trees ...), else None."""
    student, folder = os.path.realpath(student_path), os.path.realpath(run_dir)
    name = os.path.basename(student)
    if student == folder:
        return f"{student_path} is the run folder"
    if os.path.dirname(student) == folder and (is_run_file(name) or name == TEACHER_TREES):
        return f"{student_path} is a file of the run in {run_dir} ({name}): write the student elsewhere"
    return None


def written_by_run(student_path: str, run_dir: str) -> bool:
    """Whether the file at ``student_path`` is the student that the run in ``run_dir`` wrote:
    it records the run id, text and teachers of the run's ``last.pt``.  A ``--resume`` of that
    run may replace it without ``--force``."""
    last = os.path.join(run_dir, LAST)
    if not (os.path.isfile(student_path) and os.path.isfile(last)):
        return False
    try:
        mine, run = read_file(student_path), read_file(last)
    except OnparseError:
        return False
    if not (isinstance(mine, dict) and isinstance(run, dict) and mine.get("format") == STUDENT_FORMAT):
        return False
    ours, theirs = mine.get("metadata"), run.get("metadata")
    if not (isinstance(ours, dict) and isinstance(theirs, dict) and ours.get("run_id")):
        return False
    return (all(ours.get(key) == theirs.get(key) for key in ("run_id", "text"))
            and same_teachers(ours.get("teachers"), theirs.get("teachers")))


def distill(parser, text: str, student_path: str, *, run_dir: Optional[str] = None,
            sizes: Optional[Dict[str, Any]] = None, settings: DistillSettings = DistillSettings(),
            resume: bool = False, overwrite: bool = False, keep_epochs: bool = False, tokenize: bool = True,
            punct: str = DEFAULT_PUNCT, max_line_bytes: int = MAX_LINE_BYTES, quiet: bool = False,
            split=None, teacher_trees: Optional[str] = None, max_time: Optional[float] = None) -> DistillResult:
    """Train a student on ``parser``'s trees of the lines of ``text`` and write it to
    ``student_path`` (module docstring).  ``sizes``: :class:`onparse.student.model.StudentConfig`
    fields other than the vocabulary (which is the teacher's first model's, so that the student
    reads tokens as its teacher does).  OnparseError (one line) for text with no sentence of
    two words, text mostly unknown to the teacher, a run folder in use or holding another run,
    a student path that names a file of the run, a run that diverges.  ``split``: a
    :class:`onparse.text.sentences.SentenceSplitter` (each sentence of a line is learnt from).
    ``teacher_trees``: a file of the teacher's trees of ``text`` as ``onparse induce`` writes
    them (brackets, one line per input line); read instead of parsing, OnparseError naming its
    line when a tree's words are not its sentence's.  ``max_time``: seconds after which the run
    saves ``last.pt``, writes the student so far and stops (checked after each batch).
    Cost: the teacher's parse of the text (none with ``teacher_trees``), then ``epochs`` passes
    of O(n^3) per sentence."""
    if run_dir is None and special_file(student_path):
        raise OnparseError(f"{student_path} is not a regular file, so the run folder cannot go beside it: "
                           "give --run-dir")
    run_dir = run_dir or default_run_dir(student_path)
    clash = run_file_clash(student_path, run_dir)
    if clash:
        raise OnparseError(clash)
    if resume and text == "-":
        raise OnparseError("--resume needs TEXT as a file (standard input cannot be checked or read again)")
    if resume and not os.path.isfile(os.path.join(run_dir, LAST)):
        raise OnparseError(f"nothing to resume: {run_dir} holds no {LAST}; start without --resume")
    try:
        config = StudentConfig(vocab_size=len(parser.vocab), **(sizes or {}))
    except (TypeError, ValueError) as err:
        raise OnparseError(f"bad student size: {first_line(err)}") from None
    job = Job(text=text, student_path=student_path, run_dir=run_dir, config=config, settings=settings,
              keep_epochs=keep_epochs, tokenize=tokenize, punct=punct, max_line_bytes=max_line_bytes, quiet=quiet,
              split=split, teacher_trees=teacher_trees, max_time=max_time)
    if not resume:
        refuse_old_run(run_dir, overwrite, RUN_DIR_OPTION)
    make_folder(run_dir)
    log = MetricsLog(os.path.join(run_dir, METRICS), True)
    log.printing = not quiet
    lock = FolderLock(run_dir, RUN_DIR_OPTION).acquire(warn=log.say)
    try:
        if not resume and overwrite:
            remove_run_files(run_dir)
            _remove(os.path.join(run_dir, TEACHER_TREES))
        tidy(run_dir, log, None)              # temporary files of killed writers
        return _Run(parser, job, log).go(resume)
    finally:
        lock.release()


def _remove(path: str) -> None:
    if os.path.exists(path):
        os.unlink(path)


class _Run:
    """One distillation run: :meth:`go` reads top to bottom; the state it updates is a
    :class:`RunState`."""

    def __init__(self, parser, job: Job, log: MetricsLog):
        self.parser, self.job, self.log = parser, job, log
        self.settings, self.vocab = job.settings, parser.vocab
        self.clock = time.monotonic()        # when training time began (less the minutes of a resumed run)
        self.saved: Dict[str, Any] = {}      # the position last.pt holds
        self.started = time.monotonic()      # when this call began (its max_time counts from here)

    def go(self, resume: bool) -> DistillResult:
        text = self.read_text()
        meta = self.metadata(text)
        self.build()
        state = self.restore(meta) if resume else self.begin(meta)
        trees = self.teacher_trees(text.sentences, reuse=resume)
        stopped = self.learn_epochs(state, text, trees)
        self.write_student(state)
        self.log.event("done", student=self.job.student_path, stopped=stopped,
                       minutes=round((time.monotonic() - self.started) / 60, 2))
        return DistillResult(self.job.student_path, self.job.run_dir, len(text.train), len(text.held), state.history,
                             stopped)

    # -- 1. the text and the teacher's trees ---------------------------------------------------
    def read_text(self) -> Text:
        """The kept sentences of the text, checked against the teacher's vocabulary, hashed in
        the same pass (a pipe cannot be read twice), split into learnt and held-out ones."""
        job, settings = self.job, self.settings
        prep = self.parser.preprocessor(job.tokenize, job.punct)
        digest = hashlib.sha256()
        kept, words, unknown, check = [], 0, 0, ParagraphCheck()
        for line in sentences_of(read_lines(job.text, max_line_bytes=job.max_line_bytes, digest=digest), job.split, check):
            tokens = prep(line).tokens
            if len(tokens) >= MIN_WORDS:
                kept.append(tokens)
                words += len(tokens)
                unknown += sum(normalize_word(t) not in self.vocab for t in tokens)
        check.tell(self.log.say, "learnt from")
        if not kept:
            raise OnparseError(f"{job.text} has no sentence of at least {MIN_WORDS} words to learn from "
                               "(one sentence per line)")
        if unknown > settings.max_unknown * words:
            raise OnparseError(f"{unknown / words:.0%} of the words of {job.text} are unknown to the teacher's "
                               f"vocabulary (at most {settings.max_unknown:.0%} allowed): its trees would be "
                               "guesses; give text in the teacher's language and tokenisation")
        train, held = settings.split(kept)
        if not train:
            raise OnparseError(f"{job.text}: no sentence left to learn from (every {settings.valid_every}th is held "
                               f"out, and those over {settings.max_words} words are skipped)")
        return Text(kept, words, digest.hexdigest(), train, held)

    def teacher_trees(self, sentences: List[List[str]], reuse: bool) -> List[Any]:
        """The teacher's trees; with ``reuse`` (a resumed run, whose text and teachers were
        checked) those of ``RUN/teacher-trees.txt`` when it holds one per sentence; else those of
        the job's ``teacher_trees`` file, else the teacher's parse.  Written to
        ``RUN/teacher-trees.txt`` so that a resumed run needs neither."""
        job = self.job
        path = os.path.join(job.run_dir, TEACHER_TREES)
        if reuse and os.path.isfile(path):
            trees = read_teacher_trees(path, sentences, job.text, job.max_line_bytes)
            if len(trees) == len(sentences):
                return trees
            self.log.say(f"{path} does not fit the text ({len(trees):,} trees, {len(sentences):,} sentences): "
                         "parsing again")
        if job.teacher_trees:
            trees = given_teacher_trees(job.teacher_trees, sentences, job.text, job.max_line_bytes)
            self.log.say(f"the teacher's trees: {len(trees):,} read from {job.teacher_trees}")
        else:
            trees = []
            readers = len({m.model for m in self.parser.members})      # member_trees counts model by model
            with Progress("teacher parsing", len(sentences), "sentences", job.quiet) as bar:
                share = Portion(bar.update, len(sentences), len(sentences) * readers)     # the text's sentences
                for at in range(0, len(sentences), WINDOW):
                    trees += self.parser.trees(sentences[at:at + WINDOW], progress=share)
        write_teacher_trees(path, trees)
        return trees

    # -- 2. the student, and where the run stands -----------------------------------------------
    def build(self) -> None:
        """The student and its optimiser, from the seed."""
        torch.manual_seed(self.settings.seed)
        self.model = SpanStudent(self.job.config).to(self.parser.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.settings.lr)

    def begin(self, meta: Dict[str, Any]) -> RunState:
        """A new run: log its start and save ``last.pt`` before the teacher parses, so that a
        run stopped then resumes (the parse draws no random numbers, so the state saved is the
        one training starts from)."""
        self.meta = meta
        self.log.event("start", settings=asdict(self.settings), config=self.job.config.to_dict(), **meta)
        state = RunState()
        self.clock = time.monotonic()
        self.save_last(state)
        return state

    def restore(self, meta: Dict[str, Any]) -> RunState:
        """Load ``last.pt`` into the student and its optimiser; refuse when it was made from
        other text, teachers or settings."""
        job = self.job
        path = os.path.join(job.run_dir, LAST)
        blob = check_student(read_file(path), path)
        old = blob.get("metadata", {})
        training = blob.get("training")
        if not isinstance(training, dict):
            raise OnparseError(f"{path} holds no training state to resume from")
        for key, same in (("text", lambda a, b: a == b), ("teachers", same_teachers)):
            if not same(old.get(key), meta[key]):
                raise OnparseError(f"cannot resume {job.run_dir}: it was distilled from other {key}; "
                                   "start a new run (another --run-dir, or --overwrite)")
        recorded = old.get("distill") if isinstance(old.get("distill"), dict) else {}
        try:
            before = DistillSettings(**{k: v for k, v in recorded.items() if k != "config"})
        except (TypeError, OnparseError):
            raise OnparseError(f"cannot resume {job.run_dir}: {LAST} does not record its settings") from None
        if recorded.get("config") != job.config.to_dict() or not self.settings.same_run(before):
            raise OnparseError(f"cannot resume {job.run_dir}: its student sizes or settings differ "
                               "(only --epochs and --save-every may change)")
        state = RunState.from_training(training, old.get("epochs", []), path)
        self.meta = {**meta, "run_id": old.get("run_id") or meta["run_id"]}
        self.model.load_state_dict(blob["state_dict"])
        self.optimizer.load_state_dict(training["optimizer"])
        torch.set_rng_state(training["torch_rng"])
        if "cuda_rng" in training and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(training["cuda_rng"])
        self.saved = state.position()
        truncate_log(self.log.path, state.step)
        self.log.event("resume", epoch=state.epoch, done=state.done, step=state.step)
        self.log.say(f"resuming {job.run_dir} at epoch {state.epoch}, batch {state.done}")
        return state

    def metadata(self, text: Text) -> Dict[str, Any]:
        """What the student file records of its run, its teachers and its text."""
        parser, job = self.parser, self.job
        return {"onparse_version": __version__, "run_id": uuid.uuid4().hex,   # os.urandom: no RNG drawn
                "teachers": teachers_record(parser),
                "text": {"path": job.text, "sha256": text.sha256, "sentences": len(text.sentences),
                         "words": text.words, "tokenize": job.tokenize, "punct": job.punct,
                         **({"split_sentences": True} if job.split else {})},
                **({"punkt": params_to_dict(job.split.params)} if job.split else {}),
                **({"teacher_trees": job.teacher_trees} if job.teacher_trees else {}),
                "distill": {**asdict(self.settings), "config": job.config.to_dict()}}

    # -- 3. learn ------------------------------------------------------------------------------
    def learn_epochs(self, state: RunState, text: Text, trees: List[Any]) -> str:
        """Train from where ``state`` stands to the last epoch (``epochs``) or out of time (``max-time``)."""
        spans = {i: tree_spans(trees[i]) for i in text.train}
        self.clock = time.monotonic() - state.minutes * 60         # training time: from here on
        lengths = [len(s) for s in text.sentences]
        per_epoch = len(self.settings.batches(text.train, lengths, 1))
        with Progress("distilling", self.settings.epochs * per_epoch, "batches", self.job.quiet) as bar:
            bar.update(min(self.settings.epochs, state.epoch - 1) * per_epoch + state.done)
            while state.epoch <= self.settings.epochs:
                batches = self.settings.batches(text.train, lengths, state.epoch)
                if not self.train_epoch(state, batches, text.sentences, spans, bar):
                    return "max-time"
                self.end_epoch(state, len(batches), text, trees)
        return "epochs"

    def train_epoch(self, state: RunState, batches: List[List[int]], sentences, spans, bar) -> bool:
        """The batches of ``state.epoch`` from ``state.done`` on; ``last.pt`` every
        ``save_every`` batches; False when out of time inside the epoch (``last.pt`` saved)."""
        self.model.train()
        for k in range(state.done, len(batches)):
            loss = self.learn(batches[k], sentences, spans)
            state.step += 1
            if not math.isfinite(loss):
                self.diverged(state, f"the training loss became {loss}")
            state.done, state.loss_sum = k + 1, state.loss_sum + loss
            bar.update(1)
            if state.done % self.settings.save_every == 0 and state.done < len(batches):
                self.save_last(state)
            if self.job.max_time is not None and time.monotonic() - self.started >= self.job.max_time \
                    and state.done < len(batches):
                self.save_last(state)
                return False
        return True

    def learn(self, chunk: List[int], sentences, spans) -> float:
        """One optimiser step on the sentences of ``chunk``; returns the batch's loss (a
        non-finite loss takes no step)."""
        device = self.parser.device
        ids, lens = encode([sentences[i] for i in chunk], self.vocab)
        loss = self.model.loss(ids.to(device), lens.to(device), [spans[i] for i in chunk])
        value = loss.item()
        if not math.isfinite(value):
            return value
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.settings.clip)
        self.optimizer.step()
        return value

    def end_epoch(self, state: RunState, n_batches: int, text: Text, trees: List[Any]) -> None:
        """Agreement on the held-out sentences, the epoch's record, its snapshot, ``last.pt``."""
        self.check_weights(state)
        agreement = _agreement(self.model, self.vocab, [text.sentences[i] for i in text.held],
                               [trees[i] for i in text.held], self.parser.batch_size)
        record = {"epoch": state.epoch, "step": state.step, "loss": state.loss_sum / n_batches,
                  "agreement": agreement, "minutes": round((time.monotonic() - self.clock) / 60, 2)}
        state.history.append(record)
        self.log.event("epoch", **record)
        self.log.say(f"epoch {state.epoch}/{self.settings.epochs}: agreement with the teacher on "
                     f"{len(text.held):,} held-out sentences {100 * agreement:.1f}%, {record['minutes']:.1f} min")
        if self.job.keep_epochs:
            self.save(os.path.join(self.job.run_dir, EPOCH_SNAPSHOT.format(state.epoch)), state)
        state.epoch, state.done, state.loss_sum = state.epoch + 1, 0, 0.0
        self.save_last(state)

    # -- 4. files ------------------------------------------------------------------------------
    def save(self, path: str, state: RunState, training: Optional[Dict[str, Any]] = None) -> None:
        """A student file of the weights so far (never non-finite ones)."""
        self.check_weights(state)
        save_student(path, config=self.job.config.to_dict(), vocab=self.vocab, state_dict=self.model.state_dict(),
                     metadata={**self.meta, "epochs": list(state.history)}, training=training)

    def save_last(self, state: RunState) -> None:
        """``last.pt``: the student so far and the :class:`RunState`."""
        state.minutes = (time.monotonic() - self.clock) / 60
        self.save(os.path.join(self.job.run_dir, LAST), state, training=state.to_training(self.optimizer))
        self.saved = state.position()
        self.log.event("saved", **self.saved)

    def write_student(self, state: RunState) -> None:
        """The student file, after removing what killed saves left beside it."""
        folder = os.path.dirname(os.path.abspath(self.job.student_path))
        removed = remove_stale_temp_files(folder)
        if removed:
            self.log.say(f"removed {len(removed)} temporary file(s) left by an interrupted save in {folder}")
        self.save(self.job.student_path, state)

    # -- divergence ----------------------------------------------------------------------------
    def check_weights(self, state: RunState) -> None:
        if not all(bool(p.isfinite().all()) for p in self.model.parameters()):
            self.diverged(state, "the weights became NaN or infinite")

    def diverged(self, state: RunState, what: str) -> None:
        """Stop the run: log the event and raise a one-line OnparseError saying what is left
        (as ``onparse train`` does)."""
        self.log.event("diverged", epoch=state.epoch, step=state.step, reason=what)
        saved = self.saved
        kept = (f"{os.path.join(self.job.run_dir, LAST)} keeps step {saved['step']} (epoch {saved['epoch']}, "
                f"batch {saved['done']})" if saved else "nothing was saved")
        raise OnparseError(f"distillation diverged at step {state.step} (epoch {state.epoch}): {what}; {kept}; "
                           f"{self.job.student_path} was not written. Lower --lr (or --clip) and start again")


def _agreement(model: SpanStudent, vocab, sentences: List[List[str]], trees: List[Any], batch_size: int) -> float:
    """The share of the teacher's spans of 2..n-1 words that the student's trees have."""
    found = total = 0
    for words, teacher, student in zip(sentences, trees, student_trees(model, vocab, sentences, batch_size)):
        gold = {s for s in tree_spans(teacher) if s[1] - s[0] < len(words)}
        found += len(gold & set(tree_spans(student)))
        total += len(gold)
    return found / total if total else float("nan")

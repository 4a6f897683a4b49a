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
``--resume`` may replace the student it wrote (:func:`onparse.student.run_folder.written_by_run`: the same recorded
``run_id``, text and teachers).  A non-finite loss or weights stop the run (OnparseError):
``last.pt`` keeps the last good state and no student is written.

The run reads top to bottom in :meth:`StudentHooks.go`: read the text, build the student, start
or restore a :class:`~onparse.student.run_folder.RunState` (the plain value ``last.pt`` stores
beside the weights, the optimiser and the RNG), get the teacher's trees, then train epoch by
epoch by the run loop (:class:`onparse.training.loop.RunLoop`, whose stops, time limit,
checkpoints and divergence every kind shares; a first Ctrl-C saves ``last.pt`` and ends the
call with ``KeyboardInterrupt``).
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
from ..files.checkpoint import first_line, read_file
from ..errors import OnparseError
from ..induce import WINDOW, read_lines
from ..progress import Portion, Progress
from ..files.safeio import MAX_LINE_BYTES, remove_stale_temp_files, special_file
from .model import SpanStudent, encode, student_trees
from .config import MIN_WORDS, DistillSettings, StudentConfig
from .file import check_student, same_teachers, save_student, teachers_record
from .run_folder import RUN_DIR_OPTION, RunState, default_run_dir, run_file_clash
from .teacher_trees import TEACHER_TREES, given_teacher_trees, read_teacher_trees, write_teacher_trees
from ..text.sentences import ParagraphCheck, params_to_dict, sentences_of
from ..text.tokens import DEFAULT_PUNCT, normalize_word
from ..files.run_folder import LAST, METRICS, MetricsLog, remove_run_files, tidy, truncate_log
from ..training.hooks import Diverged, EpochEnd, Hooks
from ..training.loop import RunLoop, holding, new_or_resumed
from ..training.options import RunOptions
from ..trees.tree import tree_spans

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
    # The run loop's options: distill saves by batches (save_every), not by seconds.
    options = new_or_resumed(RunOptions(out=run_dir, max_time=max_time, resume=resume, overwrite=overwrite,
                                        checkpoint_every=None, keep_epochs=keep_epochs), resume, RUN_DIR_OPTION)
    log = MetricsLog(os.path.join(run_dir, METRICS), True)
    log.printing = not quiet
    with holding(run_dir, log, option=RUN_DIR_OPTION):
        if not resume and overwrite:
            remove_run_files(run_dir)
            _remove(os.path.join(run_dir, TEACHER_TREES))
        tidy(run_dir, log, None)              # temporary files of killed writers
        result = StudentHooks(parser, job, log, options).go(resume)
    if result.stopped == "interrupted":       # Ctrl-C: last.pt is saved; the caller says how to resume
        raise KeyboardInterrupt
    return result


def _remove(path: str) -> None:
    if os.path.exists(path):
        os.unlink(path)


class StudentHooks(Hooks):
    """One distillation run, a student's side of the run loop
    (:class:`onparse.training.hooks.Hooks`): :meth:`go` reads top to bottom; the state it
    updates is a :class:`RunState`."""

    noun = "distillation"

    def __init__(self, parser, job: Job, log: MetricsLog, options: RunOptions):
        self.parser, self.job, self.log, self.opt = parser, job, log, options
        self.settings, self.vocab = job.settings, parser.vocab
        self.clock = time.monotonic()        # when training time began (less the minutes of a resumed run)
        self.saved: Dict[str, Any] = {}      # the position last.pt holds
        self.started = time.monotonic()      # when this call began (its max_time counts from here)
        self.state = RunState()              # where the run stands (start_run or restore)
        self.text: Optional[Text] = None     # the text, the teacher's trees and their spans (go)
        self.trees: List[Any] = []
        self.spans: Dict[int, Any] = {}
        self.epoch_batches: List[List[int]] = []     # the epoch in progress (begin_epoch)
        self.bar = None                      # the run's progress (progress)

    def go(self, resume: bool) -> DistillResult:
        text = self.text = self.read_text()
        meta = self.metadata(text)
        self.build()
        self.state = self.restore(meta) if resume else self.start_run(meta)
        self.trees = self.teacher_trees(text.sentences, reuse=resume)
        self.spans = {i: tree_spans(self.trees[i]) for i in text.train}
        self.clock = time.monotonic() - self.state.minutes * 60         # training time: from here on
        reason = RunLoop(self, self.opt, self.log, started=self.started).run()
        stopped = {"max_time": "max-time", "max_steps": "max-steps"}.get(reason, reason)
        if reason != "interrupted":
            self.write_student()
        self.log.event("done", student=self.job.student_path, stopped=stopped,
                       minutes=round((time.monotonic() - self.started) / 60, 2))
        return DistillResult(self.job.student_path, self.job.run_dir, len(text.train), len(text.held),
                             self.state.history, stopped)

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

    def start_run(self, meta: Dict[str, Any]) -> RunState:
        """A new run: log its start and save ``last.pt`` before the teacher parses, so that a
        run stopped then resumes (the parse draws no random numbers, so the state saved is the
        one training starts from)."""
        self.meta = meta
        self.log.event("start", settings=asdict(self.settings), config=self.job.config.to_dict(), **meta)
        self.state = RunState()
        self.clock = time.monotonic()
        self.save_last()
        return self.state

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

    # -- 3. learn, as the run loop asks --------------------------------------------------------
    @property
    def step(self) -> int:
        return self.state.step

    def progress(self):
        lengths = self.lengths()
        per_epoch = len(self.settings.batches(self.text.train, lengths, 1))
        self.bar = Progress("distilling", self.settings.epochs * per_epoch, "batches", self.job.quiet)
        self.bar.update(min(self.settings.epochs, self.state.epoch - 1) * per_epoch + self.state.done)
        return self.bar

    def lengths(self) -> List[int]:
        return [len(s) for s in self.text.sentences]

    def finished(self) -> bool:
        return self.state.epoch > self.settings.epochs

    def where(self) -> Dict[str, Any]:
        return {"epoch": self.state.epoch, "step": self.state.step}

    def epoch_shown(self) -> int:
        return self.state.epoch

    def begin_epoch(self) -> None:
        self.epoch_batches = self.settings.batches(self.text.train, self.lengths(), self.state.epoch)
        self.model.train()

    def batches(self):
        while self.state.done < len(self.epoch_batches):
            yield self.epoch_batches[self.state.done]

    def train_step(self, chunk: List[int]) -> None:
        state = self.state
        loss = self.learn(chunk, self.text.sentences, self.spans)
        state.step += 1
        if not math.isfinite(loss):
            raise Diverged(f"the training loss became {loss}")
        state.done, state.loss_sum = state.done + 1, state.loss_sum + loss
        self.bar.update(1)

    def checkpoint_due(self) -> bool:
        """``last.pt`` every ``save_every`` batches inside an epoch (its end saves anyway)."""
        done = self.state.done
        return 0 < done < len(self.epoch_batches) and done % self.settings.save_every == 0

    def epoch_complete(self) -> bool:
        return self.state.done >= len(self.epoch_batches)

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

    def validate(self, stop) -> EpochEnd:
        """Agreement on the held-out sentences and the epoch's record (a student keeps no best)."""
        self.check_weights()
        state, text = self.state, self.text
        agreement = _agreement(self.model, self.vocab, [text.sentences[i] for i in text.held],
                               [self.trees[i] for i in text.held], self.parser.batch_size)
        record = {"epoch": state.epoch, "step": state.step, "loss": state.loss_sum / len(self.epoch_batches),
                  "agreement": agreement, "minutes": round((time.monotonic() - self.clock) / 60, 2)}
        state.history.append(record)
        line = (f"epoch {state.epoch}/{self.settings.epochs}: agreement with the teacher on "
                f"{len(text.held):,} held-out sentences {100 * agreement:.1f}%, {record['minutes']:.1f} min")
        return EpochEnd(record, line)

    def after_epoch(self, end: EpochEnd) -> None:
        state = self.state
        state.epoch, state.done, state.loss_sum = state.epoch + 1, 0, 0.0

    # -- 4. files ------------------------------------------------------------------------------
    def weights(self):
        return self.model.parameters()

    def write(self, path: str, training: Optional[Dict[str, Any]] = None) -> None:
        """A student file of the weights so far (never non-finite ones)."""
        self.check_weights()
        save_student(path, config=self.job.config.to_dict(), vocab=self.vocab, state_dict=self.model.state_dict(),
                     metadata={**self.meta, "epochs": list(self.state.history)}, training=training)

    def save(self, path: str, end: EpochEnd) -> None:
        self.write(path)

    def save_last(self) -> None:
        """``last.pt``: the student so far and the :class:`RunState`."""
        state = self.state
        state.minutes = (time.monotonic() - self.clock) / 60
        self.write(os.path.join(self.job.run_dir, LAST), training=state.to_training(self.optimizer))
        self.saved = state.position()
        self.log.event("saved", **self.saved)

    def write_student(self) -> None:
        """The student file, after removing what killed saves left beside it."""
        folder = os.path.dirname(os.path.abspath(self.job.student_path))
        removed = remove_stale_temp_files(folder)
        if removed:
            self.log.say(f"removed {len(removed)} temporary file(s) left by an interrupted save in {folder}")
        self.write(self.job.student_path)

    def kept(self) -> str:
        """What a diverged run leaves (as ``onparse train`` says it), and that no student was written."""
        saved = self.saved
        kept = (f"{os.path.join(self.job.run_dir, LAST)} keeps step {saved['step']} (epoch {saved['epoch']}, "
                f"batch {saved['done']})" if saved else "nothing was saved")
        return f"{kept}; {self.job.student_path} was not written"


def _agreement(model: SpanStudent, vocab, sentences: List[List[str]], trees: List[Any], batch_size: int) -> float:
    """The share of the teacher's spans of 2..n-1 words that the student's trees have."""
    found = total = 0
    for words, teacher, student in zip(sentences, trees, student_trees(model, vocab, sentences, batch_size)):
        gold = {s for s in tree_spans(teacher) if s[1] - s[0] < len(words)}
        found += len(gold & set(tree_spans(student)))
        total += len(gold)
    return found / total if total else float("nan")

"""``onparse distill``: train a student parser (:mod:`onparse.student.model`) on a teacher parser's
trees of unlabelled text (self-training; Mohananey et al. 2020, Shayegh et al. 2024).

1. *Teach*: the teacher (any :class:`onparse.api.Parser`: language models, their members,
   voters and tie rule, even another student) parses every line of the text, read as
   ``onparse induce`` reads it.  The trees go to ``RUN/teacher-trees.txt`` (written once, then
   reused by ``--resume``).  Every :data:`DistillSettings.valid_every`-th sentence is held out.
2. *Learn*: the student's tree-CRF loss on the teacher's trees, Adam, batches of sentences of
   similar length in an order fixed by the seed and the epoch.  After each epoch, the student's
   *agreement* with its teacher on the held-out sentences (the share of the teacher's spans of
   2..n-1 words that the student's tree has) is logged.

The run folder ``RUN`` (default: the student's path with ``.run`` for ``.pt``) holds, as a
training run's does (:mod:`onparse.files.run_folder`): its lock, ``last.pt`` (a student file
with the optimiser, the RNG state and the position in the epoch, saved every
``save_every`` batches and at each epoch's end), ``epoch-NNN.pt`` (with ``keep_epochs``) and
``metrics.jsonl``.  ``resume=True`` continues from ``last.pt`` exactly: the weights after
resuming equal those of a run never stopped.  The student file is written at the end.
"""
from __future__ import annotations

import hashlib
import os
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from ..version import __version__
from ..files.checkpoint import first_line, read_file
from ..errors import OnparseError
from ..induce import WINDOW, read_lines
from ..progress import Progress
from ..files.safeio import MAX_LINE_BYTES, atomic_output, special_file
from .model import SpanStudent, encode, student_trees
from .config import MIN_WORDS, DistillSettings, StudentConfig
from .file import check_student, save_student
from ..text.tokens import DEFAULT_PUNCT, normalize_word
from ..files.run_folder import (EPOCH_SNAPSHOT, LAST, METRICS, FolderLock, MetricsLog, make_folder,
                                  refuse_old_run, remove_run_files, tidy)
from ..trees.tree import parse_brackets, to_brackets, tree_spans

#: The teacher's trees in a run folder, one per kept sentence, and what they were made from.
TEACHER_TREES = "teacher-trees.txt"


@dataclass
class DistillResult:
    """What :func:`distill` did: the student file, its run folder, the sentences it learnt from
    and held out, and per epoch ``{"epoch", "loss", "agreement", "minutes"}``."""

    student: str
    run_dir: str
    sentences: int
    held_out: int
    epochs: List[Dict[str, Any]] = field(default_factory=list)


def default_run_dir(student_path: str) -> str:
    """``student.pt`` -> ``student.run``."""
    root, ext = os.path.splitext(student_path)
    return (root if ext == ".pt" else student_path) + ".run"


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def distill(parser, text: str, student_path: str, *, run_dir: Optional[str] = None,
            sizes: Optional[Dict[str, Any]] = None, settings: DistillSettings = DistillSettings(),
            resume: bool = False, overwrite: bool = False, keep_epochs: bool = False, tokenize: bool = True,
            punct: str = DEFAULT_PUNCT, max_line_bytes: int = MAX_LINE_BYTES, quiet: bool = False) -> DistillResult:
    """Train a student on ``parser``'s trees of the lines of ``text`` and write it to
    ``student_path`` (module docstring).  ``sizes``: :class:`onparse.student.model.StudentConfig`
    fields other than the vocabulary (which is the teacher's first model's, so that the student
    reads tokens as its teacher does).  OnparseError (one line) for text with no sentence of
    two words, text mostly unknown to the teacher, a run folder in use or holding another run.
    Cost: the teacher's parse of the text, then ``epochs`` passes of O(n^3) per sentence."""
    if run_dir is None and special_file(student_path):
        raise OnparseError(f"{student_path} is not a regular file, so the run folder cannot go beside it: "
                           "give --run-dir")
    run_dir = run_dir or default_run_dir(student_path)
    if resume and text == "-":
        raise OnparseError("--resume needs TEXT as a file (standard input cannot be checked or read again)")
    if resume and not os.path.isfile(os.path.join(run_dir, LAST)):
        raise OnparseError(f"nothing to resume: {run_dir} holds no {LAST}; start without --resume")
    if not resume:
        refuse_old_run(run_dir, overwrite)
    make_folder(run_dir)
    log = MetricsLog(os.path.join(run_dir, METRICS), True)
    log.printing = not quiet
    lock = FolderLock(run_dir).acquire(warn=log.say)
    try:
        if not resume and overwrite:
            remove_run_files(run_dir)
            _remove(os.path.join(run_dir, TEACHER_TREES))
        return _Run(parser, text, student_path, run_dir, sizes or {}, settings, keep_epochs, tokenize, punct,
                    max_line_bytes, quiet, log).go(resume)
    finally:
        lock.release()


def _remove(path: str) -> None:
    if os.path.exists(path):
        os.unlink(path)


class _Run:
    def __init__(self, parser, text, student_path, run_dir, sizes, settings, keep_epochs, tokenize, punct,
                 max_line_bytes, quiet, log):
        self.parser, self.text, self.student_path, self.run_dir = parser, text, student_path, run_dir
        self.settings, self.keep_epochs, self.quiet, self.log = settings, keep_epochs, quiet, log
        self.tokenize, self.punct, self.max_line_bytes = tokenize, punct, max_line_bytes
        self.vocab = parser.vocab
        try:
            self.config = StudentConfig(vocab_size=len(self.vocab), **sizes)
        except (TypeError, ValueError) as err:
            raise OnparseError(f"bad student size: {first_line(err)}") from None

    # -- 1. teach ----------------------------------------------------------------------------
    def sentences(self) -> List[List[str]]:
        """The kept sentences of the text (at least two tokens), checked against the teacher's
        vocabulary."""
        prep = self.parser.preprocessor(self.tokenize, self.punct)
        kept, words, unknown = [], 0, 0
        for line in read_lines(self.text, max_line_bytes=self.max_line_bytes):
            tokens = prep(line).tokens
            if len(tokens) >= MIN_WORDS:
                kept.append(tokens)
                words += len(tokens)
                unknown += sum(normalize_word(t) not in self.vocab for t in tokens)
        if not kept:
            raise OnparseError(f"{self.text} has no sentence of at least {MIN_WORDS} words to learn from "
                               "(one sentence per line)")
        if unknown > self.settings.max_unknown * words:
            raise OnparseError(f"{unknown / words:.0%} of the words of {self.text} are unknown to the teacher's "
                               f"vocabulary (at most {self.settings.max_unknown:.0%} allowed): its trees would be "
                               "guesses; give text in the teacher's language and tokenisation")
        self.words = words
        return kept

    def teacher_trees(self, sentences: List[List[str]], reuse: bool) -> List[Any]:
        """The teacher's trees; with ``reuse`` (a resumed run, whose text and teachers were
        checked) those of ``RUN/teacher-trees.txt`` when it holds one per sentence."""
        path = os.path.join(self.run_dir, TEACHER_TREES)
        if reuse and os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                trees = [parse_brackets(line) for line in handle if line.strip()]
            if len(trees) == len(sentences):
                return trees
            self.log.say(f"{path} does not fit the text ({len(trees):,} trees, {len(sentences):,} sentences): "
                         "parsing again")
        trees: List[Any] = []
        readers = len({m.model for m in self.parser.members})      # member_trees counts model by model
        with Progress("teacher parsing", len(sentences) * readers, "sentences", self.quiet) as bar:
            for at in range(0, len(sentences), WINDOW):
                trees += self.parser.trees(sentences[at:at + WINDOW], progress=bar.update)
        with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            handle.writelines(to_brackets(t) + "\n" for t in trees)
        return trees

    # -- 2. learn ----------------------------------------------------------------------------
    def go(self, resume: bool) -> DistillResult:
        settings = self.settings
        started = time.monotonic()
        sentences = self.sentences()
        text_sha = file_sha256(self.text) if self.text != "-" else None
        train = [i for i in range(len(sentences)) if i % settings.valid_every and len(sentences[i]) <= settings.max_words]
        # Held-out sentences over max_words are skipped as training's are (the student is not
        # trained on them, and their CYK would cost O(n^3)).
        held = [i for i in range(len(sentences))
                if not i % settings.valid_every and len(sentences[i]) <= settings.max_words]
        if not train:
            raise OnparseError(f"{self.text}: no sentence left to learn from (every {settings.valid_every}th is held "
                               f"out, and those over {settings.max_words} words are skipped)")
        meta = self.metadata(len(sentences), text_sha)
        torch.manual_seed(settings.seed)
        device = self.parser.device
        model = SpanStudent(self.config).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
        position = {"epoch": 1, "done": 0, "step": 0, "loss_sum": 0.0}
        history: List[Dict[str, Any]] = []
        if resume:
            position, history = self.restore(model, optimizer, meta)
        else:
            self.log.event("start", settings=asdict(settings), config=self.config.to_dict(), **meta)
            # Saved before the teacher parses, so that a run stopped then resumes (the parse draws
            # no random numbers, so the state saved is the one training starts from).
            self.save_last(model, optimizer, meta, history, time.monotonic(), **position)
        trees = self.teacher_trees(sentences, reuse=resume)
        spans = {i: tree_spans(trees[i]) for i in train}
        lengths = [len(s) for s in sentences]
        result = DistillResult(self.student_path, self.run_dir, len(train), len(held), history)
        clock = time.monotonic() - position.get("minutes", 0.0) * 60
        per_epoch = len(_epoch_batches(train, lengths, settings, 1))
        epoch, done, step, loss_sum = position["epoch"], position["done"], position["step"], position["loss_sum"]
        with Progress("distilling", settings.epochs * per_epoch, "batches", self.quiet) as bar:
            bar.update(min(settings.epochs, epoch - 1) * per_epoch + done)
            while epoch <= settings.epochs:
                batches = _epoch_batches(train, lengths, settings, epoch)
                model.train()
                for k in range(done, len(batches)):
                    chunk = batches[k]
                    ids, lens = encode([sentences[i] for i in chunk], self.vocab)
                    loss = model.loss(ids.to(device), lens.to(device), [spans[i] for i in chunk])
                    optimizer.zero_grad()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), settings.clip)
                    optimizer.step()
                    step += 1
                    loss_sum += loss.item()
                    bar.update(1)
                    if (k + 1) % settings.save_every == 0 and k + 1 < len(batches):
                        self.save_last(model, optimizer, meta, history, clock, epoch=epoch, done=k + 1, step=step,
                                       loss_sum=loss_sum)
                agreement = _agreement(model, self.vocab, [sentences[i] for i in held], [trees[i] for i in held],
                                       self.parser.batch_size)
                record = {"epoch": epoch, "step": step, "loss": loss_sum / len(batches), "agreement": agreement,
                          "minutes": round((time.monotonic() - clock) / 60, 2)}
                history.append(record)
                self.log.event("epoch", **record)
                self.log.say(f"epoch {epoch}/{settings.epochs}: agreement with the teacher on "
                             f"{len(held):,} held-out sentences {100 * agreement:.1f}%, {record['minutes']:.1f} min")
                if self.keep_epochs:
                    self.save(os.path.join(self.run_dir, EPOCH_SNAPSHOT.format(epoch)), model, meta, history)
                epoch, done, loss_sum = epoch + 1, 0, 0.0
                self.save_last(model, optimizer, meta, history, clock, epoch=epoch, done=0, step=step, loss_sum=0.0)
        self.save(self.student_path, model, meta, history)
        self.log.event("done", student=self.student_path, minutes=round((time.monotonic() - started) / 60, 2))
        return result

    def metadata(self, n_sentences: int, text_sha: Optional[str]) -> Dict[str, Any]:
        """What the student file records of its teachers and its text."""
        parser = self.parser
        return {"onparse_version": __version__,
                "teachers": {"models": [{"name": parser.names[i] if i < len(parser.names) else f"model {i + 1}",
                                         "weights_sha256": m.metadata.get("weights_sha256")}
                                        for i, m in enumerate(parser.models)],
                             "members": [m.label(len(parser.models)) for m in parser.members],
                             "voters": list(parser.voters), "ties": parser.ties},
                "text": {"path": self.text, "sha256": text_sha, "sentences": n_sentences, "words": self.words,
                         "tokenize": self.tokenize, "punct": self.punct},
                "distill": {**asdict(self.settings), "config": self.config.to_dict()}}

    def save(self, path, model, meta, history, training=None) -> None:
        save_student(path, config=self.config.to_dict(), vocab=self.vocab, state_dict=model.state_dict(),
                     metadata={**meta, "epochs": list(history)}, training=training)

    def save_last(self, model, optimizer, meta, history, clock, **position) -> None:
        """``last.pt``: the student so far, and where the run is (``epoch``, batches ``done`` in
        it, ``step``, the epoch's ``loss_sum``) with the optimiser and RNG state."""
        state = {**position, "minutes": (time.monotonic() - clock) / 60,
                 "optimizer": optimizer.state_dict(), "torch_rng": torch.get_rng_state()}
        if torch.cuda.is_available():            # dropout on a GPU draws from its own generators
            state["cuda_rng"] = torch.cuda.get_rng_state_all()
        self.save(os.path.join(self.run_dir, LAST), model, meta, history, training=state)
        self.log.event("saved", **position)

    def restore(self, model, optimizer, meta) -> Tuple[Dict[str, Any], list]:
        """Load ``last.pt`` into ``model`` and ``optimizer``; refuse when it was made from other
        text, teachers or settings."""
        path = os.path.join(self.run_dir, LAST)
        blob = check_student(read_file(path), path)
        old = blob.get("metadata", {})
        state = blob.get("training")
        if not isinstance(state, dict):
            raise OnparseError(f"{path} holds no training state to resume from")
        for key, what in (("text", "text"), ("teachers", "teachers")):
            if old.get(key) != meta[key]:
                raise OnparseError(f"cannot resume {self.run_dir}: it was distilled from other {what}; "
                                   "start a new run (another --run-dir, or --overwrite)")
        recorded = old.get("distill") if isinstance(old.get("distill"), dict) else {}
        try:
            before = DistillSettings(**{k: v for k, v in recorded.items() if k != "config"})
        except (TypeError, OnparseError):
            raise OnparseError(f"cannot resume {self.run_dir}: {LAST} does not record its settings") from None
        if recorded.get("config") != self.config.to_dict() or not self.settings.same_run(before):
            raise OnparseError(f"cannot resume {self.run_dir}: its student sizes or settings differ "
                               "(only --epochs may change)")
        model.load_state_dict(blob["state_dict"])
        optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["torch_rng"])
        if "cuda_rng" in state and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        tidy(self.run_dir, self.log, state["step"])
        self.log.event("resume", epoch=state["epoch"], done=state["done"], step=state["step"])
        self.log.say(f"resuming {self.run_dir} at epoch {state['epoch']}, batch {state['done']}")
        return state, list(old.get("epochs", []))


def _epoch_batches(train: Sequence[int], lengths: Sequence[int], settings: DistillSettings, epoch: int) -> List[List[int]]:
    """The batches of ``epoch``: sentences of similar length, at most ``batch_size`` each, in an
    order fixed by the seed and the epoch (so that a resumed run takes the same batches)."""
    rng = random.Random(settings.seed * 1_000_003 + epoch)
    order = sorted(train, key=lambda i: (lengths[i], rng.random()))
    batches = [order[k:k + settings.batch_size] for k in range(0, len(order), settings.batch_size)]
    rng.shuffle(batches)
    return batches


def _agreement(model: SpanStudent, vocab, sentences: List[List[str]], trees: List[Any], batch_size: int) -> float:
    """The share of the teacher's spans of 2..n-1 words that the student's trees have."""
    found = total = 0
    for words, teacher, student in zip(sentences, trees, student_trees(model, vocab, sentences, batch_size)):
        gold = {s for s in tree_spans(teacher) if s[1] - s[0] < len(words)}
        found += len(gold & set(tree_spans(student)))
        total += len(gold)
    return found / total if total else float("nan")

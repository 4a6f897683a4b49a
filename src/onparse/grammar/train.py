"""Training a neural PCFG (``onparse train --family grammar``): the loop, read top to bottom.

The recipe is ``docs/pcfg.md``'s (Kim et al. 2019; settings in :mod:`onparse.grammar.settings`):

* the vocabulary is built from the training split as the language model's is (most frequent
  words, ``max_vocab`` with ``<unk>`` and ``<eos>``); one-word sentences are skipped (their
  ``log Z`` is ``-inf``: the root rewrites to a nonterminal, which covers two words or more);
* epoch ``e`` trains on the sentences of at most ``settings.length_limit(e)`` words (the length
  curriculum), in batches of ``batch_size`` sentences of similar length (fewer where their
  chart would pass :data:`onparse.grammar.parse.CHART_CELLS`) whose order is fixed by the seed
  and the epoch; loss = minus the mean ``log Z`` per sentence; Adam, gradient norm clipped.
  A ``max_words`` longer than the chart allows (:func:`onparse.grammar.parse.exact_words`) is
  refused before any text is read;
* after each epoch, the exact per-word perplexity ``exp(-sum log Z / words)`` of the
  validation sentences of 2 to ``exact_words`` words chooses ``best.pt`` (longer ones are left
  out, said at the start and counted as ``valid_too_long``: :func:`onparse.grammar.parse.log_likelihood`);
  a stop request during validation is honoured at its next batch (the epoch is validated again
  on ``--resume``); beside it the
  epoch records the collapse alarm's figures (:mod:`onparse.grammar.health`: the unigram
  baseline's perplexity, the share of branching chains among its held-out trees, its rules'
  entropy) and how the gradient was clipped (``clipped_share``, ``median_grad_norm``), and a
  collapsed grammar gets a one-line warning.

The run folder is a training run's (:mod:`onparse.files.run_folder`): its lock, ``best.pt``,
``last.pt`` (saved every ``checkpoint_every`` seconds, when stopped and at each epoch's end),
``epoch-NNN.pt`` (with ``keep_epochs``) and ``metrics.jsonl`` (the events ``onparse plot-log``
reads: ``start``/``resume``, ``epoch`` with ``train_loss``/``valid_loss``/``valid_ppl`` in nats
per word, ``stop``, ``diverged``, ``test``).  All are grammar files (:mod:`onparse.grammar.file`).

The state of a run is one plain value, :class:`Position` (with the weights, the optimiser's
state and the RNG state), which ``last.pt`` stores under ``"training"``; ``--resume`` puts it
back, so the continued run's weights equal (``torch.equal``) those of a run never stopped.  A
non-finite loss, gradient or weight stops the run with a ``diverged`` event and a one-line
error before anything is saved: ``best.pt`` and ``last.pt`` keep the last good state.
"""
from __future__ import annotations

import math
import os
import random
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from ..version import __version__
from ..devices import resolve_device, torch_threads
from ..errors import OnparseError
from ..files.checkpoint import GRAMMAR_FORMAT, read_file
from ..files.run_folder import BEST, LAST, METRICS, MetricsLog, remove_run_files, tidy
from ..files.safeio import format_ppl, perplexity_of
from ..progress import Progress
from ..student.model import encode
from ..text.corpora import CorpusSpec, encode_stream, load_corpus
from ..settings import SettingError
from ..text.vocab import Vocabulary
from ..training.fingerprint import fingerprint
from ..training.options import RunOptions, TrainResult
from ..training.hooks import Diverged, EpochEnd, Hooks
from ..training.loop import RunLoop, holding, new_or_resumed
from .config import GRAMMAR_PRESETS, GrammarConfig
from .file import check_grammar, save_grammar
from .model import NeuralPCFG
from .health import collapse_alarm, held_out_sample, unigram_perplexity
from .parse import CHART_CELLS, branching, cubic_batches, exact_words, log_likelihood, scorable
from .config import SIZE_OPTIONS
from .settings import GrammarTraining


@dataclass
class Position:
    """Where a run stands: what ``last.pt`` keeps beside the weights and the optimiser."""

    epoch: int = 0                       # completed epochs
    batch: int = 0                       # batches done in the current epoch
    step: int = 0                        # optimiser steps, over all invocations
    log_z: float = 0.0                   # sum of log Z over the current epoch's batches so far
    words: int = 0                       # ... and their words
    seconds: float = 0.0                 # training time of the current epoch so far
    skipped: int = 0                     # sentences of the current epoch whose log Z underflowed
    norms: List[float] = field(default_factory=list)   # the current epoch's gradient norms, before clipping
    best_loss: Optional[float] = None    # best validation nats per word, and its epoch
    best_epoch: Optional[int] = None
    history: List[Dict[str, Any]] = field(default_factory=list)   # the epoch records


# -- what a run is -----------------------------------------------------------------------------
def run_settings(preset: Optional[str], spec: Optional[CorpusSpec], sizes: Dict[str, int],
                 overrides: Dict[str, Any], *, resume_from: Optional[str] = None,
                 verify: bool = True) -> Tuple[Dict[str, int], GrammarTraining, CorpusSpec, Optional[str]]:
    """``(sizes, settings, corpus, preset)`` of a run: a new one of ``preset``'s sizes with the
    ``sizes`` and ``overrides`` given; or, with ``resume_from`` (a run folder), the saved run's,
    where only ``epochs`` may differ.  ValueError for a bad value; OnparseError for a run that
    cannot be resumed so; SettingError for a ``max_words`` longer than the sizes' chart allows."""
    if resume_from is None:
        chosen = {**GRAMMAR_PRESETS[preset], **sizes}
        settings = GrammarTraining().with_overrides(overrides)
        _refuse_long_sentences(GrammarConfig(vocab_size=1, **chosen), settings)   # before any text is read
        return chosen, settings, spec, preset
    blob, _ = read_last(resume_from, verify)
    meta = blob["metadata"]
    saved = {k: v for k, v in blob["config"].items() if k != "vocab_size"}
    settings = GrammarTraining.from_dict(meta["training"])
    saved_spec = CorpusSpec.from_dict(meta["corpus"])
    # A run recorded before a setting existed holds its default (rule_form: low_rank).
    current = GrammarConfig(vocab_size=1, **saved)
    _refuse_long_sentences(current, settings)
    current = current.to_dict()
    changed = [SIZE_OPTIONS[k] for k, v in sizes.items() if current[k] != v]
    changed += ["--" + k.replace("_", "-") for k, v in overrides.items() if k != "epochs" and getattr(settings, k) != v]
    if preset is not None and preset != meta.get("preset"):
        changed.append("--preset")
    if spec is not None and spec != saved_spec:
        changed.append("--corpus")
    if changed:
        raise OnparseError(f"cannot change {', '.join(changed)} when resuming {resume_from} (only --epochs, "
                           "--max-time, --max-steps and --threads)")
    return saved, settings.with_overrides({k: v for k, v in overrides.items() if k == "epochs"}), saved_spec, \
        meta.get("preset")


def _refuse_long_sentences(config: GrammarConfig, settings: GrammarTraining) -> None:
    """SettingError when a training sentence of ``settings.max_words`` words would need a chart of
    more than :data:`~onparse.grammar.parse.CHART_CELLS` cells on its own (``n^3`` x the chart's
    width): its step would take GBs and end in a MemoryError."""
    cap = exact_words(config.chart_rank)
    if settings.max_words > cap:
        raise SettingError(f"--max-words {settings.max_words} is more than the {cap:,} words a grammar of these sizes "
                           f"trains on (a sentence's chart, n^3 x {config.chart_rank:,} cells, is kept under "
                           f"{CHART_CELLS:,}): lower --max-words to {cap:,} or less")


def read_last(out: str, verify: bool = True) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``out/last.pt`` and its training state; one-line OnparseErrors when missing or damaged."""
    path = os.path.join(out, LAST)
    if not os.path.isfile(path):
        raise OnparseError(f"nothing to resume in {out}: {LAST} not found")
    blob = read_file(path)
    if not isinstance(blob, dict) or blob.get("format") != GRAMMAR_FORMAT:
        raise OnparseError(f"{path} is not a grammar run's {LAST}: resume it with --family lm, or without --family")
    check_grammar(blob, path, verify=verify)
    state, meta = blob.get("training"), blob.get("metadata")
    if not isinstance(state, dict) or not isinstance(state.get("position"), dict) \
            or not isinstance(meta.get("training"), dict) or "corpus" not in meta:
        raise OnparseError(f"{path} holds no training state; it cannot be resumed")
    return blob, state


# -- the run ---------------------------------------------------------------------------------------
def train(sizes: Dict[str, int], settings: GrammarTraining, spec: CorpusSpec, options: RunOptions,
          preset: Optional[str] = None) -> TrainResult:
    """Train (or, with ``options.resume``, continue) a grammar in the folder ``options.out``
    (module docstring) by the run loop (:class:`onparse.training.loop.RunLoop`); returns a
    :class:`onparse.training.options.TrainResult`.
    Cost: per epoch O(n^3 r + n^2 r^2) per training sentence, forward and backward, plus the
    validation's forward pass."""
    with torch_threads(options.threads):
        log = MetricsLog(os.path.join(options.out, METRICS), True)
        with holding(options.out, log):
            resumed = read_last(options.out, options.verify) if options.resume else None
            options = new_or_resumed(options, resumed is not None)
            if resumed is None:
                remove_run_files(options.out)                    # --overwrite: nothing of the old run survives
            tidy(options.out, log, resumed[1]["position"]["step"] if resumed else None)
            return GrammarHooks(sizes, settings, spec, options, preset, log, resumed).run()


class GrammarHooks(Hooks):
    """A grammar's side of the run loop (:class:`onparse.training.hooks.Hooks`): constructing it
    builds the text, the vocabulary, the grammar, its optimiser and the :class:`Position` (fresh,
    or from ``last.pt``); the methods read in the order the loop calls them."""

    def __init__(self, sizes, settings: GrammarTraining, spec: CorpusSpec, options: RunOptions, preset, log,
                 resumed):
        self.settings, self.spec, self.opt, self.preset, self.log = settings, spec, options, preset, log
        self.device = resolve_device(options.device)
        corpus = load_corpus(spec)
        words = resumed[0]["vocab"] if resumed else None
        self.vocab = Vocabulary(words) if words else Vocabulary.build(corpus.train, max_size=settings.vocab_limit,
                                                                      min_count=settings.min_count)
        self.fingerprint = fingerprint(encode_stream(corpus.train, self.vocab))
        self.config = GrammarConfig(vocab_size=len(self.vocab), **sizes)
        self.train_text = [s for s in corpus.train if 2 <= len(s) <= settings.max_words]
        self.valid_text, self.test_text = corpus.valid, corpus.test
        # Validation scores the sentences its chart holds (parse.log_likelihood); the rest are counted.
        scored, self.valid_too_long = scorable(self.valid_text, self.config.chart_rank)
        # The collapse alarm's fixed parts: the unigram baseline and the sentences parsed each epoch.
        self.unigram_ppl = unigram_perplexity(corpus.train, scored, self.vocab)
        self.health_sample = held_out_sample(self.valid_text)
        if not any(len(t) <= settings.curriculum_start for t in self.train_text):
            raise OnparseError(f"{spec.source} has no training sentence of 2 to {settings.curriculum_start} words "
                               "(the first epoch's; see --curriculum-start and --max-words)")
        # Name the text at fault: the validation file when one was given (--valid), not the corpus.
        valid = spec.valid or f"{spec.source} (its held-out validation part)"
        if not scored and self.valid_too_long:
            raise OnparseError(f"{valid}: no validation sentence of 2 to {exact_words(self.config.chart_rank):,} "
                               f"words, the lengths a grammar of these sizes scores ({self.valid_too_long:,} longer)")
        if not scored:
            raise OnparseError(f"{valid}: no validation sentence of two words or more")
        torch.manual_seed(settings.seed)
        self.model = NeuralPCFG(self.config).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=settings.lr,
                                          betas=(settings.beta1, settings.beta2))
        self.n_params = sum(p.numel() for p in self.model.parameters())
        self.at = Position()
        self.resumed = resumed is not None
        if resumed:
            self._restore(*resumed)
        self._epoch_batches: List[List[List[str]]] = []     # the epoch in progress (begin_epoch)
        self._tick = time.monotonic()                        # when its steps began
        self._bar: Optional[Progress] = None               # its progress display (epoch_progress)

    # ---- the run ---------------------------------------------------------------------------------
    def run(self) -> TrainResult:
        """Train by the run loop until the epochs are done or a stop, and report."""
        return self.finish(RunLoop(self, self.opt, self.log).run())

    @property
    def step(self) -> int:
        return self.at.step

    def begin(self) -> None:
        s, at = self.settings, self.at
        self.log.event("resume" if self.resumed else "start", family="grammar", preset=self.preset,
                       config=s.to_dict(), sizes=self.config.to_dict(), corpus=self.spec.to_dict(),
                       vocab_size=len(self.vocab), parameters=self.n_params, train_sentences=len(self.train_text),
                       device=str(self.device), epoch=at.epoch, step=at.step)
        self.log.say(f"{'resuming' if self.resumed else 'training'} a grammar: {self.n_params:,} parameters, "
                     f"vocabulary {len(self.vocab):,}, {len(self.train_text):,} training sentences of 2 to "
                     f"{s.max_words} words, on {self.device}")
        if self.valid_too_long:
            count = self.valid_too_long
            self.log.say(f"{count:,} validation sentence{'s' if count > 1 else ''} of more than "
                         f"{exact_words(self.config.chart_rank):,} words {'are' if count > 1 else 'is'} left out of "
                         "its perplexity (too long to score exactly within the chart's memory; docs/pcfg.md)")

    def finished(self) -> bool:
        return self.at.epoch >= self.settings.epochs

    def where(self) -> Dict[str, Any]:
        return {"epoch": self.at.epoch, "step": self.at.step}

    def epoch_shown(self) -> int:
        return self.at.epoch + 1

    def finish(self, reason: str) -> TrainResult:
        """The stop's line, the test perplexity of ``best.pt`` (when the epochs ran out) and the result."""
        at = self.at
        where = f", {at.batch} batches into epoch {at.epoch + 1}" if at.batch else ""
        self.log.say(f"stopped ({reason}) after {at.epoch} epoch(s), {at.step} steps{where}; best valid ppl "
                     f"{format_ppl(self._best_ppl())}")
        test_ppl = self._test_ppl() if reason == "epochs" else None
        best = os.path.join(self.opt.out, BEST) if at.best_loss is not None else None
        return TrainResult(self.opt.out, reason, at.epoch, at.step, self._best_ppl(), at.best_epoch, test_ppl,
                           None, best, True, self.model)

    # ---- an epoch --------------------------------------------------------------------------------
    def begin_epoch(self) -> None:
        self._epoch_batches = self.batches_of(self.at.epoch + 1)
        self.model.train()
        self._tick = time.monotonic()

    def epoch_progress(self):
        s, epoch = self.settings, self.at.epoch + 1
        self._bar = Progress(f"epoch {epoch}/{s.epochs} (sentences of <= {s.length_limit(epoch)} words)",
                             len(self._epoch_batches), "batches", self.opt.progress is False)
        self._bar.update(self.at.batch)
        return self._bar

    def batches(self):
        while self.at.batch < len(self._epoch_batches):
            yield self._epoch_batches[self.at.batch]

    def batches_of(self, epoch: int) -> List[List[List[str]]]:
        """The batches of ``epoch`` (1-based): the sentences within its length limit, grouped
        by length, in an order fixed by the seed and the epoch (a resumed run takes the same)."""
        s = self.settings
        rng = random.Random(s.seed * 1_000_003 + epoch)
        limit = s.length_limit(epoch)
        order = sorted((k for k, t in enumerate(self.train_text) if len(t) <= limit),
                       key=lambda k: (len(self.train_text[k]), rng.random()))
        groups = cubic_batches([len(self.train_text[k]) for k in order], s.batch_size, self.config.chart_rank)
        batches = [[self.train_text[order[i]] for i in group] for group in groups]
        rng.shuffle(batches)
        return batches

    def train_step(self, sentences: List[List[str]]) -> None:
        self._step(sentences)
        self._bar.update(1)

    def _step(self, sentences: List[List[str]]) -> None:
        """One Adam step on a batch: loss = minus its mean log Z per sentence."""
        at = self.at
        ids, lengths = encode(sentences, self.vocab)
        ids, lengths = ids.to(self.device), lengths.to(self.device)
        z = self.model(ids, lengths)
        # A sentence whose log Z underflowed (the inside gives -inf: its probability fell below
        # what the log-space products can hold) teaches nothing this step: it is left out and
        # counted, as NeuralPCFG.loss does.  Non-finite weights still stop the run.
        keep = torch.isfinite(z)
        at.skipped += int((~keep).sum())
        if not bool(keep.any()):
            at.batch += 1
            return
        z, lengths = z[keep], lengths[keep]
        loss = -z.mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.settings.clip or float("inf"))
        if not bool(torch.isfinite(norm)):
            raise Diverged(f"the gradient norm became {float(norm)}")
        at.norms.append(float(norm))
        self.optimizer.step()
        at.batch += 1
        at.step += 1
        at.log_z += float(z.detach().double().sum())
        at.words += int(lengths.sum())

    def end_steps(self) -> None:
        self.at.seconds += time.monotonic() - self._tick

    def epoch_complete(self) -> bool:
        return self.at.batch >= len(self._epoch_batches)

    def validate(self, stop) -> Optional[EpochEnd]:
        """The validation perplexity, the epoch's record with the collapse alarm's figures; None
        (nothing changed) when a stop request came during validation."""
        s, at = self.settings, self.at
        measured = log_likelihood(self.model, self.vocab, self.valid_text, s.batch_size, stop=stop)
        if measured.stopped:
            return None
        total, words, sentences = measured.total, measured.words, measured.sentences
        valid_loss = -total / words
        if not math.isfinite(valid_loss):
            raise Diverged(f"the validation loss became {valid_loss}")
        train_loss = -at.log_z / max(at.words, 1)
        at.epoch += 1
        improved = at.best_loss is None or valid_loss < at.best_loss
        if improved:
            at.best_loss, at.best_epoch = valid_loss, at.epoch
        record = {"epoch": at.epoch, "step": at.step, "train_loss": train_loss, "train_ppl": perplexity_of(train_loss),
                  "valid_loss": valid_loss, "valid_ppl": perplexity_of(valid_loss), "best_valid_ppl": self._best_ppl(),
                  "improved": improved, "length_limit": s.length_limit(at.epoch), "batches": len(self._epoch_batches),
                  "valid_sentences": sentences, "valid_words": words, "valid_too_long": measured.too_long,
                  "epoch_time_s": at.seconds,
                  "skipped_sentences": at.skipped,
                  "words_per_s": at.words / at.seconds if at.seconds > 0 else None,
                  **self._health(), **self._clipping()}
        at.history.append(record)
        line = (f"epoch {at.epoch:3d} | sentences <= {record['length_limit']} words | train ppl "
                f"{format_ppl(record['train_ppl']):>9} | valid ppl {format_ppl(record['valid_ppl']):>9}"
                f"{' *' if improved else '  '} (unigram {format_ppl(record['unigram_ppl'])}) | chains "
                f"{record['branching_share']:.0%} | {record['words_per_s'] or 0:,.0f} words/s | {at.seconds:.0f}s")
        return EpochEnd(record, line, improved)

    def after_epoch(self, end: EpochEnd) -> None:
        """The collapse alarm's warning, and the next epoch's counters."""
        at = self.at
        alarm = collapse_alarm(end.record)
        if alarm:
            self.log.say(f"warning: this grammar is not learning: {alarm}; its trees may be no better than a "
                         "right- or left-branching baseline (try another --seed, a lower --lr, or more text)")
        at.batch, at.log_z, at.words, at.seconds, at.skipped, at.norms = 0, 0.0, 0, 0.0, 0, []

    def _health(self) -> Dict[str, Any]:
        """The collapse alarm's figures of the model as it stands (:mod:`onparse.grammar.health`).
        Cost: the MBR trees of at most 300 held-out sentences, and the rules' entropy."""
        right, left, counted = branching(self.model, self.vocab, self.health_sample, self.settings.batch_size)
        return {"unigram_ppl": self.unigram_ppl, "right_branching_share": right, "left_branching_share": left,
                "branching_share": right + left, "branching_sentences": counted,
                "rule_entropy": self.model.rule_entropy()}

    def _clipping(self) -> Dict[str, Any]:
        """How the epoch's gradients met the clip: the share of steps clipped, the median norm."""
        norms, clip = self.at.norms, self.settings.clip
        if not norms:
            return {"clipped_share": None, "median_grad_norm": None}
        return {"clipped_share": sum(n > clip for n in norms) / len(norms) if clip else 0.0,
                "median_grad_norm": statistics.median(norms)}

    # ---- files ---------------------------------------------------------------------------------
    def _metadata(self) -> Dict[str, Any]:
        at, last = self.at, (self.at.history[-1] if self.at.history else {})
        return {"onparse_version": __version__, "family": "grammar", "preset": self.preset,
                "corpus": self.spec.to_dict(), "training": self.settings.to_dict(), "parameters": self.n_params,
                "epoch": at.epoch, "step": at.step, "valid_loss": last.get("valid_loss"),
                "valid_ppl": last.get("valid_ppl"), "epochs": list(at.history)}

    def weights(self):
        return self.model.parameters()

    def save(self, path: str, end: Optional[EpochEnd] = None, training: Optional[Dict[str, Any]] = None) -> None:
        save_grammar(path, config=self.config.to_dict(), vocab=self.vocab, state_dict=self.model.state_dict(),
                     metadata=self._metadata(), training=training)

    def save_last(self) -> None:
        state = {"position": asdict(self.at), "optimizer": self.optimizer.state_dict(),
                 "torch_rng": torch.get_rng_state(), "fingerprint": self.fingerprint}
        self.save(os.path.join(self.opt.out, LAST), training=state)

    def _restore(self, blob: Dict[str, Any], state: Dict[str, Any]) -> None:
        path = os.path.join(self.opt.out, LAST)
        if state.get("fingerprint") != self.fingerprint:
            raise OnparseError(f"the training text of {self.spec.source} changed since the run started; "
                               "cannot resume")
        try:
            self.model.load_state_dict(blob["state_dict"])
            self.optimizer.load_state_dict(state["optimizer"])
            torch.set_rng_state(state["torch_rng"])
            self.at = Position(**state["position"])
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            raise OnparseError(f"{path}: unreadable training state ({type(err).__name__}: {str(err)[:120]})") from None

    def kept(self) -> str:
        at = self.at
        return (f"{os.path.join(self.opt.out, BEST)} keeps epoch {at.best_epoch} (valid ppl "
                f"{format_ppl(self._best_ppl())})" if at.best_loss is not None else "no model was saved")

    # ---- figures -------------------------------------------------------------------------------
    def _best_ppl(self) -> Optional[float]:
        return None if self.at.best_loss is None else perplexity_of(self.at.best_loss)

    def _test_ppl(self) -> Optional[float]:
        """The test perplexity of ``best.pt`` (a ``test`` event), when the corpus has a test part."""
        best = os.path.join(self.opt.out, BEST)
        if not any(len(t) >= 2 for t in self.test_text) or not os.path.isfile(best):
            return None
        model = NeuralPCFG(self.config).to(self.device)
        model.load_state_dict(read_file(best)["state_dict"])
        measured = log_likelihood(model.eval(), self.vocab, self.test_text, self.settings.batch_size)
        if not measured.words:
            return None
        ppl = perplexity_of(-measured.total / measured.words)
        self.log.event("test", test_ppl=ppl, best_epoch=self.at.best_epoch, test_too_long=measured.too_long)
        return ppl


#: The name this loop's run had before the run loop was shared (tests and benchmarks spy on it).
_Run = GrammarHooks

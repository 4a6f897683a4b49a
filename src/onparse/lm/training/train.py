"""Training an ON-LSTM language model: presets, the optimisation schedule, checkpoints, resume,
and DistributedDataParallel (``docs/onlstm.md`` section 2, the AWD-LSTM recipe).

The schedule:

* the training text is one id sequence cut into ``batch_size`` streams; an epoch walks the streams
  in BPTT windows whose length is drawn per step (``bptt`` with probability 0.95, else
  ``bptt / 2``, then normal with standard deviation 5, at least 5), and the learning rate of the
  step is scaled by ``length / bptt`` so that every token weighs the same;
* loss = cross-entropy + ``alpha`` * mean(output^2) (AR, on the dropped last-layer output)
  + ``beta`` * mean((raw_t - raw_{t-1})^2) (TAR, on the undropped one); gradients clipped to norm
  ``clip``; SGD with ``weight_decay``;
* after each epoch the validation perplexity is measured; when it is worse than the best of all
  checks but the last ``nonmono`` ones (the non-monotone trigger), training switches to averaged
  SGD: the same SGD steps, plus a running mean of the parameters over every step since the
  switch (``torch.optim.ASGD`` with ``t0=0, lambd=0``, as AWD-LSTM uses it).  From then on,
  validation, ``best.pt`` and the ``state_dict`` of ``last.pt`` use the averaged weights.

Files written to the output folder (rank 0 only): ``best.pt`` (best validation perplexity),
``last.pt`` (latest state plus everything ``--resume`` needs: raw weights, optimiser, averager,
schedule, data position, recurrent state, RNG states), ``metrics.jsonl`` (one JSON object per
event; non-finite numbers are written as null).  Checkpoints hold plain values and tensors only
(``torch.load(weights_only=True)``).

The folder is the run's own: a new run refuses a folder that holds any of these files unless
told to ``overwrite``, and the run holds an exclusive lock on ``.onparse.lock`` inside it (which
names the holder) from start to end, so two runs cannot mix their files.  On a resume the
metrics log is cut back to the checkpoint's step, so every epoch is recorded once.

A non-finite loss (or non-finite weights about to be saved) stops the run with an error: the
files keep the last good state.

Under ``torchrun`` (``WORLD_SIZE`` > 1) every process trains on its own contiguous slice of
``batch_size / world_size`` streams; DistributedDataParallel averages the gradients, so all
ranks take identical steps.  Backend ``nccl`` on CUDA, ``gloo`` on CPU.

The entry points and the language model's hooks of the one run loop
(:class:`onparse.training.loop.RunLoop`, which owns the stops, limits, checkpoints and
divergence); the parts live beside it in :mod:`onparse.lm.training`.  What a run changes as it
trains is one value, :class:`~onparse.lm.training.state.LoopState`, built when the run starts
(fresh, or from ``last.pt``) and saved in ``last.pt``.
"""
from __future__ import annotations

import contextlib
import math
import os
import random
import time
from typing import Any, Dict, Optional, Tuple

import torch

from ...version import __version__
from ...files.checkpoint import save_checkpoint
from ...text.corpora import CorpusSpec, batchify, encode_stream, load_corpus
from ...devices import torch_threads
from .distributed import Dist, all_gather, all_reduce, setup, teardown
from ...errors import OnparseError
from .. import kind
from ..perplexity import autocast_context, fit_streams, stream_loss
from .recipe import ParameterAverager, objective, should_start_averaging, window_length
from ...training.hooks import Diverged, EpochEnd, Hooks
from ...training.loop import RunLoop, holding, new_or_resumed
from ...files.run_folder import BEST, LAST, METRICS, MetricsLog, remove_run_files, tidy
from ...files.safeio import format_ppl, perplexity_of
from .config import PRESETS, TrainConfig
from ...training.options import RunOptions, TrainResult
from .display import TokenDisplay
from .start import Architecture, build_model, init_source, load_data
from .state import (DAMAGE, LoopState, TrainingState, capture, check_resume, check_text, rank_state, read_state,
                    restore, to_cpu, unreadable)
from ..file import check_checkpoint
from ..model import ONLSTMLanguageModel

#: In DDP, how often (steps) the ranks agree on stopping (Ctrl-C, --max-time).
SYNC_EVERY = 10
#: How often (steps) the progress bar's loss is refreshed.
LOG_EVERY = 10


#: The ON-LSTM, as a run of this recipe trains it (:class:`~onparse.lm.training.start.Architecture`).
ONLSTM = Architecture(PRESETS, TrainConfig, ONLSTMLanguageModel, save_checkpoint, check_checkpoint,
                      lambda path, device: kind.load_model(path, device).model)


# -- entry points ----------------------------------------------------------------------------
def train(config: TrainConfig, spec: CorpusSpec, options: RunOptions, preset_name: Optional[str] = None,
          arch: Architecture = ONLSTM) -> TrainResult:
    """Train (or, with ``options.resume``, continue training) a language model of ``arch``; see
    the module docstring for the schedule and the files written.  Returns a :class:`TrainResult`."""
    with torch_threads(options.threads):
        ctx, device = setup(options.device)
        try:
            log = MetricsLog(os.path.join(options.out, METRICS), ctx.is_main)
            with holding(options.out, log, writes=ctx.is_main):   # the lock is held for the whole run
                return _train(config, spec, options, preset_name, ctx, device, log, arch)
        finally:
            teardown(ctx)


def _train(config, spec, options, preset_name, ctx, device, log, arch) -> TrainResult:
    out = options.out
    resumed = None
    if options.resume:
        resumed = read_state(out, options.verify, arch.check, arch.train_config)
        check_resume(resumed[1], config, spec, preset_name)
    options = new_or_resumed(options, resumed is not None)
    if ctx.is_main:
        tidy(out, log, resumed[1].schedule.step if resumed else None)
    hooks = LMHooks(config, spec, options, preset_name, ctx, device, log, resumed, arch)
    if ctx.is_main and resumed is None:        # --overwrite: nothing of the old run survives
        remove_run_files(out)
    return hooks.run()


def settings(preset: Optional[str], spec: Optional[CorpusSpec], overrides: Dict[str, Any], *,
             resume_from: Optional[str] = None, verify: bool = True,
             arch: Architecture = ONLSTM) -> Tuple[TrainConfig, CorpusSpec, Optional[str]]:
    """Config, corpus and preset name of a run: a new one of preset ``preset`` with
    ``overrides`` on ``spec``; or, with ``resume_from`` (a run folder), the saved run's config
    with ``overrides``, and ``preset`` / ``spec`` where given, else the run's own (whether they
    may differ is :func:`onparse.lm.training.state.check_resume`'s to say, when the run resumes).
    ValueError for a bad override."""
    if resume_from is None:
        return arch.presets[preset].with_overrides(overrides), spec, preset
    _, state = read_state(resume_from, verify, arch.check, arch.train_config)
    return (state.config.with_overrides(overrides), state.corpus if spec is None else spec,
            state.preset if preset is None else preset)


# -- the loop --------------------------------------------------------------------------------
class LMHooks(Hooks):
    """A language model's side of the run loop (:class:`onparse.training.hooks.Hooks`).
    Constructing it builds the data, the model, its optimiser and the
    :class:`~onparse.lm.training.state.LoopState` (fresh, or restored from ``last.pt``).  The
    methods read in the order the loop calls them, then evaluation, checkpoints and progress lines."""

    def __init__(self, config: TrainConfig, spec: CorpusSpec, options: RunOptions, preset_name: Optional[str],
                 ctx: Dist, device, log: MetricsLog, resumed: Optional[Tuple[dict, TrainingState]],
                 arch: Architecture = ONLSTM):
        if config.batch_size % ctx.world_size:
            raise OnparseError(f"batch size {config.batch_size} is not divisible by the number of "
                               f"processes {ctx.world_size}")
        self.cfg, self.spec, self.opt, self.preset = config, spec, options, preset_name
        self.ctx, self.device, self.log = ctx, device, log
        self.out = options.out
        self.best_path = os.path.join(self.out, BEST)
        self.last_path = os.path.join(self.out, LAST)
        self.amp = options.amp and device.type == "cuda"
        self.resumed = resumed is not None
        init, record = init_source(None if resumed else options.init_from, options.verify)
        self.init_from = resumed[1].init_from if resumed else record         # (metadata)
        # The vocabulary of the run resumed, or of --init-from's source (so that its weights
        # keep their meaning), else built from the training text.
        words = resumed[0]["vocab"] if resumed else init["vocab"] if init else None
        data = load_data(config, load_corpus(spec), ctx, device, words)
        self.corpus, self.vocab, self.train_data, self.valid_data, self.fingerprint, self.tokens_per_epoch = data
        if resumed:
            check_text(resumed[1], self.fingerprint, spec.source)
        self.arch = arch
        self.model, self.forward = build_model(config, len(self.vocab), ctx, device, init, options.init_from,
                                               arch.build)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        self.n_params = sum(p.numel() for p in self.model.parameters())
        if resumed:
            try:
                self.loop = restore(*resumed, self.model, self.optimizer, ctx, device, path=self.last_path,
                                    warn=log.say)
            except DAMAGE as err:
                raise unreadable(self.last_path, err) from None
        else:
            self.loop = LoopState(random.Random(config.seed))
        self.run_tokens, self.run_time = 0, 0.0  # of this invocation, over all ranks
        self.is_main = ctx.is_main
        self.shown: Optional[TokenDisplay] = None     # progress on stderr (progress())
        self.window_loss, self.window_tokens = None, 0   # the steps' loss since the bar's last refresh
        self.tick = time.monotonic()             # when the epoch's time was last counted
        self.switched = False                    # the epoch just validated starts averaged SGD

    # ---- the run ---------------------------------------------------------------------------
    def run(self) -> TrainResult:
        """Train by the run loop until the epochs are done or a stop is agreed, and report."""
        return self.finish(RunLoop(self, self.opt, self.log).run())

    @property
    def step(self) -> int:
        return self.loop.schedule.step

    def begin(self) -> None:
        cfg, s = self.cfg, self.loop.schedule
        self.log.event("resume" if self.resumed else "start", preset=self.preset, config=cfg.to_dict(),
                       corpus=self.spec.to_dict(), vocab_size=len(self.vocab), parameters=self.n_params,
                       train_tokens=self.tokens_per_epoch, device=str(self.device),
                       world_size=self.ctx.world_size, epoch=s.epoch, step=s.step)
        self.log.say(f"{'resuming' if self.resumed else 'training'}: {self.n_params:,} parameters, vocabulary "
                     f"{len(self.vocab):,}, {self.tokens_per_epoch:,} training tokens per epoch, "
                     f"{self.ctx.world_size} process(es) on {self.device}")

    def progress(self):
        s = self.loop.schedule
        done = s.epoch * self.tokens_per_epoch + s.position * self.train_data.shape[1] * self.ctx.world_size
        self.shown = TokenDisplay(self.log.say, self.opt.progress, self.ctx.is_main, self.cfg.epochs,
                                  self.tokens_per_epoch, done, self.run_tokens)
        return self.shown

    def finished(self) -> bool:
        return self.loop.schedule.epoch >= self.cfg.epochs

    def where(self) -> Dict[str, Any]:
        return {"epoch": self.loop.schedule.epoch, "step": self.loop.schedule.step}

    def epoch_shown(self) -> int:
        return self.loop.schedule.epoch + 1

    def stopped(self, reason: str) -> None:
        s = self.loop.schedule
        if reason in ("max_time", "max_steps") and s.best_loss is None and s.position:
            self._validate_at_stop()

    def finish(self, reason: str) -> TrainResult:
        """The stop's line, the test perplexity of ``best.pt`` (when the epochs ran out) and the result."""
        s = self.loop.schedule
        # In the user's units: how far into the epoch, as the progress lines say it (a share).
        share = s.position / max(self.train_data.shape[0] - 1, 1)
        where = f", {100 * share:.0f}% into epoch {s.epoch + 1}" if s.position else ""
        self.log.say(f"stopped ({reason}) after {s.epoch} epoch(s), {s.step} steps{where}; "
                     f"best valid ppl {format_ppl(s.best_ppl)}")
        # The test pass only when the epochs ran out, as a grammar's run does: a run stopped by
        # its budget (--max-time, or onparse fit's share) does not overrun it.
        test_ppl = self._test_ppl() if reason == "epochs" else None
        if test_ppl is not None:
            self.log.event("test", test_ppl=test_ppl, best_epoch=s.best_epoch)
        rate = self.run_tokens / self.run_time if self.run_time > 0 else None
        best = self.best_path if s.best_loss is not None else None
        return TrainResult(self.out, reason, s.epoch, s.step, s.best_ppl, s.best_epoch,
                           test_ppl, rate, best, self.ctx.is_main, self.model)

    # ---- an epoch ----------------------------------------------------------------------------
    def begin_epoch(self) -> None:
        loop, s = self.loop, self.loop.schedule
        self.shown.epoch(s.epoch + 1)
        if s.position == 0:
            loop.epoch_loss_sum, loop.epoch_tokens, s.epoch_time = 0.0, 0, 0.0
        if loop.hidden is None:              # a new epoch, or resumed by another number of processes
            loop.hidden = self.model.init_state(self.train_data.shape[1])
        self.model.train()
        self.window_loss = torch.zeros((), dtype=torch.float64, device=self.device)
        self.window_tokens = 0
        self.tick = time.monotonic()

    def batches(self):
        """The window lengths of the rest of the epoch, each drawn when its step comes."""
        n_rows, s = self.train_data.shape[0], self.loop.schedule
        while s.position < n_rows - 2:
            yield min(window_length(self.loop.jitter, self.cfg.bptt), n_rows - 1 - s.position)

    def train_step(self, length: int) -> None:
        s = self.loop.schedule
        ce, n = self._train_step(length)
        self.window_loss += ce.double() * n
        self.window_tokens += n
        self.run_tokens += n * self.ctx.world_size
        self.shown.update(n * self.ctx.world_size)
        if s.step % LOG_EVERY == 0:
            self.end_steps()
        # Counted at each step, not at the end: a checkpoint inside the epoch
        # (--checkpoint-every) records the epoch's time so far for a resume's words/s.
        now = time.monotonic()
        s.epoch_time += now - self.tick
        self.run_time += now - self.tick
        self.tick = now

    def _train_step(self, length: int):
        """One optimiser step on the window at the current position; returns the window's
        cross-entropy (a detached device scalar) and its number of target tokens."""
        cfg, loop, s = self.cfg, self.loop, self.loop.schedule
        inputs = self.train_data[s.position:s.position + length]
        targets = self.train_data[s.position + 1:s.position + 1 + length]
        loop.hidden = [(h.detach(), c.detach()) for h, c in loop.hidden]
        self.optimizer.zero_grad(set_to_none=True)
        with autocast_context(self.device, self.amp):
            out = self.forward(inputs, loop.hidden)
            loss, ce = objective(self.model, out, targets, cfg.alpha, cfg.beta)
        loop.hidden = out.state
        # A non-finite AR or TAR term ruins the weights as surely as a non-finite cross-entropy:
        # pass it on in the returned value, which the caller checks (no device sync here).
        ce = torch.where(torch.isfinite(loss.detach()), ce.detach(), loss.detach())
        loss.backward()
        if cfg.clip:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip)
        for group in self.optimizer.param_groups:
            group["lr"] = cfg.lr * length / cfg.bptt
        self.optimizer.step()
        for group in self.optimizer.param_groups:
            group["lr"] = cfg.lr
        if loop.averager is not None:
            loop.averager.update()
        s.position += length
        s.step += 1
        return ce.detach(), targets.numel()

    def end_steps(self) -> None:
        """Fold the window of steps into the epoch's totals and refresh the bar (one device sync);
        :class:`Diverged` when the window's loss is not finite."""
        tokens = self.window_tokens
        if not tokens:
            return
        loss_sum = float(self.window_loss)
        self.window_loss.zero_()
        self.window_tokens = 0
        bad = all_reduce([float(not math.isfinite(loss_sum))], self.ctx, self.device, op="max")[0]
        if bad:                                  # every rank stops together
            raise Diverged(f"the training loss became {loss_sum}")
        self.loop.epoch_loss_sum += loss_sum
        self.loop.epoch_tokens += tokens
        s = self.loop.schedule
        self.shown.window(loss_sum / tokens, s.epoch + 1, s.position / max(self.train_data.shape[0] - 1, 1),
                          self.run_tokens)

    def epoch_complete(self) -> bool:
        return self.loop.schedule.position >= self.train_data.shape[0] - 2

    def validate(self, stop) -> EpochEnd:
        """Validation, the averaged-SGD trigger and the epoch's record (a validation is not
        stopped: it is short beside an epoch)."""
        cfg, loop, s = self.cfg, self.loop, self.loop.schedule
        loss_sum, tokens, seconds = all_reduce([loop.epoch_loss_sum, float(loop.epoch_tokens), s.epoch_time],
                                               self.ctx, self.device)
        seconds /= self.ctx.world_size
        train_loss = loss_sum / max(tokens, 1.0)
        valid_loss = self._valid_loss()
        if not math.isfinite(valid_loss):
            raise Diverged(f"the validation loss became {valid_loss}")
        self.check_weights()                     # before this epoch can be counted the best
        s.epoch += 1
        s.position = 0
        loop.hidden = None
        improved = s.best_loss is None or valid_loss < s.best_loss
        if improved:
            s.best_loss, s.best_epoch = valid_loss, s.epoch
        averaging = loop.averager is not None        # since an earlier epoch
        self.switched = not averaging and should_start_averaging(s.val_history, valid_loss, cfg.nonmono)
        s.val_history.append(valid_loss)
        rate = tokens / seconds if seconds > 0 else None
        train_ppl, valid_ppl = perplexity_of(train_loss), perplexity_of(valid_loss)
        record = dict(epoch=s.epoch, step=s.step, train_loss=train_loss, train_ppl=train_ppl, valid_loss=valid_loss,
                      valid_ppl=valid_ppl, best_valid_ppl=s.best_ppl, improved=improved, averaged=averaging,
                      tokens_per_s=rate, epoch_time_s=seconds)
        line = (f"epoch {s.epoch:4d} | train ppl {format_ppl(train_ppl):>9} | valid ppl "
                f"{format_ppl(valid_ppl):>9}{' *' if improved else '  '} | "
                f"{(rate or 0):,.0f} tok/s | {seconds:.1f}s" + (" | averaging" if averaging else ""))
        return EpochEnd(record, line, improved)

    def after_epoch(self, end: EpochEnd) -> None:
        """The switch to averaged SGD, when the epoch's validation triggered it."""
        s = self.loop.schedule
        if self.switched:
            self.loop.averager = ParameterAverager(self.model)
            s.averaging_since = s.epoch
            self.log.event("asgd", epoch=s.epoch, step=s.step)
            self.log.say(f"validation has not improved for {self.cfg.nonmono} checks: switching to averaged SGD")
            self.switched = False

    # ---- agreement between processes -----------------------------------------------------------
    def syncs_at(self, step: int) -> bool:
        """In DDP, the ranks agree on stopping every :data:`SYNC_EVERY` steps."""
        return not (self.ctx.active and step % SYNC_EVERY)

    def agree(self, flags):
        return all_reduce(flags, self.ctx, self.device, op="max")

    # ---- evaluation --------------------------------------------------------------------------
    def _valid_loss(self) -> float:
        """Mean cross-entropy of the validation text over every rank, with the averaged weights
        while averaging."""
        averager = self.loop.averager
        with averager.swapped_in() if averager else contextlib.nullcontext():
            total, count = stream_loss(self.model, self.valid_data, self.cfg.bptt, self.amp)
        self.model.train()
        total, count = all_reduce([total, float(count)], self.ctx, self.device)
        return total / count

    def _validate_at_stop(self) -> None:
        """A run stopped by --max-time or --max-steps inside its first epoch: validate its weights
        now and save them as ``best.pt`` (``epoch`` 0 in its metadata), so that the stop leaves a
        usable model; the next epoch's end replaces it (a resume starts with no best)."""
        s = self.loop.schedule
        valid_loss = self._valid_loss()
        if not math.isfinite(valid_loss):
            return
        s.best_loss, s.best_epoch = valid_loss, s.epoch
        scores = dict(valid_loss=valid_loss, valid_ppl=perplexity_of(valid_loss))
        self._save(self.best_path, position=s.position, **scores)
        self.log.event("valid", epoch=s.epoch, step=s.step, position=s.position, **scores)

    def _test_ppl(self) -> Optional[float]:
        """Test perplexity of ``best.pt``, measured by rank 0 alone (other ranks need not see
        its files on a multi-machine run)."""
        if not self.ctx.is_main or not self.corpus.test or not os.path.isfile(self.best_path):
            return None
        best = self.arch.load(self.best_path, self.device)
        ids = encode_stream(self.corpus.test, self.vocab)
        if ids.numel() < 2:
            return None
        data = batchify(ids, fit_streams(ids.numel(), self.cfg.eval_batch_size)).to(self.device)
        total, count = stream_loss(best, data, self.cfg.bptt, self.amp)
        return perplexity_of(total / count)

    # ---- checkpoints -------------------------------------------------------------------------
    def _save(self, path: str, training: Optional[Dict[str, Any]] = None, **metadata) -> None:
        """A checkpoint at ``path`` (rank 0 only): the (averaged) weights, the run's metadata and,
        for ``last.pt``, the ``training`` state."""
        if not self.ctx.is_main:
            return
        averager, s = self.loop.averager, self.loop.schedule
        weights = averager.state_dict(self.model) if averager else self.model.state_dict()
        metadata = {"onparse_version": __version__, "preset": self.preset, "train_config": self.cfg.to_dict(),
                    "corpus": self.spec.to_dict(), "parameters": self.n_params, "vocab_size": len(self.vocab),
                    "epoch": s.epoch, "step": s.step, "averaged": bool(averager and averager.count),
                    **({"init_from": self.init_from} if self.init_from else {}), **metadata}
        self.arch.save(path, config=self.model.config.to_dict(), vocab=self.vocab, state_dict=to_cpu(weights),
                       metadata=metadata, training=training)

    def save(self, path: str, end: EpochEnd) -> None:
        """``best.pt`` or an epoch's snapshot, with the epoch's validation figures."""
        self._save(path, valid_loss=end.record["valid_loss"], valid_ppl=end.record["valid_ppl"])

    def save_last(self) -> None:
        self._save_last()

    def _save_last(self) -> None:
        """``last.pt``: collective (every rank gathers its RNG and recurrent state); rank 0 writes."""
        mine = rank_state(self.loop, self.device)
        ranks = all_gather(mine.to_dict(), self.ctx)
        if self.ctx.is_main:
            state = capture(self.loop, self.model, self.optimizer, ranks, config=self.cfg, corpus=self.spec,
                            preset=self.preset, init_from=self.init_from, fingerprint=self.fingerprint)
            self._save(self.last_path, training=state.to_dict())

    def weights(self):
        """The weights and, while averaging, their running mean (every rank holds the same)."""
        averager = self.loop.averager
        return list(self.model.parameters()) + (list(averager.avg.values()) if averager else [])

    def kept(self) -> str:
        s = self.loop.schedule
        if s.best_loss is not None:
            return f"{self.best_path} keeps epoch {s.best_epoch} (valid ppl {format_ppl(s.best_ppl)})"
        return "no model was saved"


#: The name this loop's run had before the run loop was shared (tests and benchmarks spy on it).
_Run = LMHooks

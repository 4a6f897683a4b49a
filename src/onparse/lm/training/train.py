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

The loop and its entry points; the parts live beside it in :mod:`onparse.lm.training`.  What
the loop changes as it trains is one value, :class:`~onparse.lm.training.state.LoopState`, built
when the run starts (fresh, or from ``last.pt``) and saved in ``last.pt``.
"""
from __future__ import annotations

import contextlib
import math
import os
import random
import sys
import time
from dataclasses import replace
from typing import Any, Dict, Optional, Tuple

import torch
from tqdm import tqdm

from ... import progress
from ...version import __version__
from ...files.checkpoint import save_checkpoint
from ...text.corpora import CorpusSpec, batchify, encode_stream, load_corpus
from ...devices import torch_threads
from .distributed import Dist, all_gather, all_reduce, setup, teardown
from ...errors import OnparseError
from .. import kind
from ..perplexity import autocast_context, fit_streams, stream_loss
from .recipe import ParameterAverager, objective, should_start_averaging, window_length
from ...training.stops import StopRequests
from ...files.run_folder import (BEST, EPOCH_SNAPSHOT, EPOCH_SNAPSHOT_RE, LAST, METRICS, FolderLock, MetricsLog,
                         make_folder, refuse_old_run, remove_run_files, run_files, tidy)
from ...files.safeio import format_duration, format_ppl, perplexity_of
from .config import PRESETS, TrainConfig
from ...training.options import RunOptions, TrainResult
from .start import build_model, init_source, load_data
from .state import (DAMAGE, LoopState, TrainingState, capture, check_resume, check_text, rank_state, read_state,
                    restore, to_cpu, unreadable)

#: In DDP, how often (steps) the ranks agree on stopping (Ctrl-C, --max-time).
SYNC_EVERY = 10
#: How often (steps) the progress bar's loss is refreshed.
LOG_EVERY = 10


# -- entry points ----------------------------------------------------------------------------
def train(config: TrainConfig, spec: CorpusSpec, options: RunOptions, preset_name: Optional[str] = None) -> TrainResult:
    """Train (or, with ``options.resume``, continue training) a language model; see the module
    docstring for the schedule and the files written.  Returns a :class:`TrainResult`."""
    with torch_threads(options.threads):
        ctx, device = setup(options.device)
        try:
            if not ctx.is_main:
                return _train(config, spec, options, preset_name, ctx, device)
            make_folder(options.out)
            lock = FolderLock(options.out).acquire(warn=MetricsLog(None, True).say)
            try:                         # the lock is held for the whole run (rank 0 writes)
                return _train(config, spec, options, preset_name, ctx, device)
            finally:
                lock.release()
        finally:
            teardown(ctx)


def _train(config, spec, options, preset_name, ctx, device) -> TrainResult:
    out = options.out
    resumed = None
    if options.resume:
        resumed = read_state(out, options.verify)
        check_resume(resumed[1], config, spec, preset_name)
        if not options.keep_epochs and any(EPOCH_SNAPSHOT_RE.fullmatch(n) for n in run_files(out)):
            # A run that kept its epochs keeps them after a resume (the flag is not in last.pt).
            options = replace(options, keep_epochs=True)
    else:
        refuse_old_run(out, options.overwrite)
    log = MetricsLog(os.path.join(out, METRICS), ctx.is_main)
    if ctx.is_main:
        tidy(out, log, resumed[1].schedule.step if resumed else None)
    run = _Run(config, spec, options, preset_name, ctx, device, log, resumed)
    if ctx.is_main and resumed is None:        # --overwrite: nothing of the old run survives
        remove_run_files(out)
    return run.run()


def settings(preset: Optional[str], spec: Optional[CorpusSpec], overrides: Dict[str, Any], *,
             resume_from: Optional[str] = None, verify: bool = True) -> Tuple[TrainConfig, CorpusSpec, Optional[str]]:
    """Config, corpus and preset name of a run: a new one of preset ``preset`` with
    ``overrides`` on ``spec``; or, with ``resume_from`` (a run folder), the saved run's config
    with ``overrides``, and ``preset`` / ``spec`` where given, else the run's own (whether they
    may differ is :func:`onparse.lm.training.state.check_resume`'s to say, when the run resumes).
    ValueError for a bad override."""
    if resume_from is None:
        return PRESETS[preset].with_overrides(overrides), spec, preset
    _, state = read_state(resume_from, verify)
    return (state.config.with_overrides(overrides), state.corpus if spec is None else spec,
            state.preset if preset is None else preset)


# -- the loop --------------------------------------------------------------------------------
class _Run:
    """One invocation of the training loop.  Constructing it builds the data, the model, its
    optimiser and the :class:`~onparse.lm.training.state.LoopState` (fresh, or restored from
    ``last.pt``); :meth:`run` trains until a stop.  The methods read top to bottom: the loop, then
    evaluation, checkpoints and progress lines."""

    def __init__(self, config: TrainConfig, spec: CorpusSpec, options: RunOptions, preset_name: Optional[str],
                 ctx: Dist, device, log: MetricsLog, resumed: Optional[Tuple[dict, TrainingState]]):
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
        self.model, self.forward = build_model(config, len(self.vocab), ctx, device, init, options.init_from)
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
        self.last_saved = time.monotonic()      # when last.pt was last written (--checkpoint-every)
        self.plain_progress = False              # plain progress lines (run() decides), and when the last was
        self.plain_at = (time.monotonic(), 0)

    def run(self) -> TrainResult:
        """Train until the epochs are done or a stop is agreed; log, measure the test
        perplexity of ``best.pt`` (unless interrupted) and report."""
        cfg, s = self.cfg, self.loop.schedule
        self.log.event("resume" if self.resumed else "start", preset=self.preset, config=cfg.to_dict(),
                       corpus=self.spec.to_dict(), vocab_size=len(self.vocab), parameters=self.n_params,
                       train_tokens=self.tokens_per_epoch, device=str(self.device),
                       world_size=self.ctx.world_size, epoch=s.epoch, step=s.step)
        self.log.say(f"{'resuming' if self.resumed else 'training'}: {self.n_params:,} parameters, vocabulary "
                     f"{len(self.vocab):,}, {self.tokens_per_epoch:,} training tokens per epoch, "
                     f"{self.ctx.world_size} process(es) on {self.device}")
        bar = self._progress_bar()
        started = time.monotonic()
        reason = None
        try:
            with StopRequests(self.log.say) as stops:
                reason = "epochs" if s.epoch >= cfg.epochs else self._should_stop(stops, started)
                while reason is None:
                    reason = self._run_epoch(stops, started, bar)
        finally:
            bar.close()
        if reason in ("max_time", "max_steps") and s.best_loss is None and s.position:
            self._validate_at_stop()
        self.log.event("stop", reason=reason, epoch=s.epoch, step=s.step)
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

    def _run_epoch(self, stops: StopRequests, started: float, bar) -> Optional[str]:
        """Train from the current position to the end of the epoch, or until a stop is agreed;
        then validate (complete epoch) or save the mid-epoch state.  Returns the stop reason."""
        cfg, loop, s = self.cfg, self.loop, self.loop.schedule
        n_rows = self.train_data.shape[0]
        bar.set_description(f"epoch {s.epoch + 1}/{cfg.epochs}")
        if s.position == 0:
            loop.epoch_loss_sum, loop.epoch_tokens, s.epoch_time = 0.0, 0, 0.0
        if loop.hidden is None:              # a new epoch, or resumed by another number of processes
            loop.hidden = self.model.init_state(self.train_data.shape[1])
        self.model.train()
        window_loss = torch.zeros((), dtype=torch.float64, device=self.device)
        window_tokens = 0
        reason = None
        tick = time.monotonic()
        while s.position < n_rows - 2:
            length = min(window_length(loop.jitter, cfg.bptt), n_rows - 1 - s.position)
            ce, n = self._train_step(length)
            window_loss += ce.double() * n
            window_tokens += n
            self.run_tokens += n * self.ctx.world_size
            bar.update(n * self.ctx.world_size)
            if s.step % LOG_EVERY == 0:
                self._flush_window(window_loss, window_tokens, bar)
                window_loss.zero_()
                window_tokens = 0
            # Counted at each step, not at the end: a checkpoint inside the epoch
            # (--checkpoint-every) records the epoch's time so far for a resume's words/s.
            now = time.monotonic()
            s.epoch_time += now - tick
            self.run_time += now - tick
            tick = now
            reason = self._should_stop(stops, started)
            if reason:
                break
        self._flush_window(window_loss, window_tokens, bar)
        if s.position < n_rows - 2:
            self._save_last()                      # stopped mid-epoch
            return reason
        self._end_epoch()
        if reason is None and s.epoch >= cfg.epochs:
            reason = "epochs"
        return reason or self._should_stop(stops, started)

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

    def _flush_window(self, window_loss, tokens: int, bar) -> None:
        """Fold a window of steps into the epoch's totals and refresh the bar (one device sync);
        stop the run if the window's loss is not finite."""
        if not tokens:
            return
        loss_sum = float(window_loss)
        bad = all_reduce([float(not math.isfinite(loss_sum))], self.ctx, self.device, op="max")[0]
        if bad:                                  # every rank stops together
            self._diverged(f"the training loss became {loss_sum}")
        self.loop.epoch_loss_sum += loss_sum
        self.loop.epoch_tokens += tokens
        bar.set_postfix(loss=f"{loss_sum / tokens:.3f}", ppl=format_ppl(perplexity_of(loss_sum / tokens)),
                        refresh=False)
        if self.plain_progress:
            self._plain_progress(loss_sum / tokens)

    def _should_stop(self, stops: StopRequests, started: float) -> Optional[str]:
        """Stop reason agreed by all ranks, checked at step boundaries; saves ``last.pt`` when
        ``--checkpoint-every`` says so."""
        step = self.loop.schedule.step
        if self.opt.max_steps is not None and step >= self.opt.max_steps:
            return "max_steps"                       # same step count everywhere: no sync needed
        if self.ctx.active and step % SYNC_EVERY:
            return None
        now = time.monotonic()
        timed_out = self.opt.max_time is not None and now - started >= self.opt.max_time
        due = self.opt.checkpoint_every is not None and now - self.last_saved >= self.opt.checkpoint_every
        flags = all_reduce([float(stops.requested), float(timed_out), float(due)], self.ctx, self.device, op="max")
        if flags[0]:
            return "interrupted"
        if flags[1]:
            return "max_time"
        if flags[2]:
            self._save_last()                    # mid-epoch: a kill loses at most this interval
        return None

    def _end_epoch(self) -> None:
        """Validation, the averaged-SGD trigger, checkpoints and the epoch's log line."""
        cfg, loop, s = self.cfg, self.loop, self.loop.schedule
        loss_sum, tokens, seconds = all_reduce([loop.epoch_loss_sum, float(loop.epoch_tokens), s.epoch_time],
                                               self.ctx, self.device)
        seconds /= self.ctx.world_size
        train_loss = loss_sum / max(tokens, 1.0)
        valid_loss = self._valid_loss()
        if not math.isfinite(valid_loss):
            self._diverged(f"the validation loss became {valid_loss}")
        self._check_weights()
        s.epoch += 1
        s.position = 0
        loop.hidden = None
        improved = s.best_loss is None or valid_loss < s.best_loss
        scores = dict(valid_loss=valid_loss, valid_ppl=perplexity_of(valid_loss))
        if improved:
            s.best_loss, s.best_epoch = valid_loss, s.epoch
            self._save(self.best_path, **scores)
        if self.opt.keep_epochs:
            self._save(os.path.join(self.out, EPOCH_SNAPSHOT.format(s.epoch)), **scores)
        averaging = loop.averager is not None        # since an earlier epoch
        switched = not averaging and should_start_averaging(s.val_history, valid_loss, cfg.nonmono)
        if switched:
            loop.averager = ParameterAverager(self.model)
            s.averaging_since = s.epoch
        s.val_history.append(valid_loss)
        rate = tokens / seconds if seconds > 0 else None
        train_ppl, valid_ppl = perplexity_of(train_loss), scores["valid_ppl"]
        self.log.event("epoch", epoch=s.epoch, step=s.step, train_loss=train_loss, train_ppl=train_ppl,
                       valid_loss=valid_loss, valid_ppl=valid_ppl, best_valid_ppl=s.best_ppl,
                       improved=improved, averaged=averaging, tokens_per_s=rate, epoch_time_s=seconds)
        self.log.say(f"epoch {s.epoch:4d} | train ppl {format_ppl(train_ppl):>9} | valid ppl "
                     f"{format_ppl(valid_ppl):>9}{' *' if improved else '  '} | "
                     f"{(rate or 0):,.0f} tok/s | {seconds:.1f}s" + (" | averaging" if averaging else ""))
        if switched:
            self.log.event("asgd", epoch=s.epoch, step=s.step)
            self.log.say(f"validation has not improved for {cfg.nonmono} checks: switching to averaged SGD")
        self._save_last()

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
        best = kind.load_model(self.best_path, self.device).model
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
        save_checkpoint(path, config=self.model.config.to_dict(), vocab=self.vocab, state_dict=to_cpu(weights),
                        metadata=metadata, training=training)

    def _save_last(self) -> None:
        """``last.pt``: collective (every rank gathers its RNG and recurrent state); rank 0 writes."""
        mine = rank_state(self.loop, self.device)
        self._check_weights()                    # before the collective: ranks hold the same weights
        ranks = all_gather(mine.to_dict(), self.ctx)
        self.last_saved = time.monotonic()
        if self.ctx.is_main:
            state = capture(self.loop, self.model, self.optimizer, ranks, config=self.cfg, corpus=self.spec,
                            preset=self.preset, init_from=self.init_from, fingerprint=self.fingerprint)
            self._save(self.last_path, training=state.to_dict())

    def _check_weights(self) -> None:
        """Stop before saving non-finite weights (a gradient can overflow while the loss is finite)."""
        averager = self.loop.averager
        params = list(self.model.parameters()) + (list(averager.avg.values()) if averager else [])
        if not all(bool(torch.isfinite(p.detach()).all()) for p in params):
            self._diverged("the weights became NaN or infinite")

    def _diverged(self, what: str) -> None:
        """Stop the run: log the event and raise a one-line OnparseError saying what is left."""
        s = self.loop.schedule
        self.log.event("diverged", epoch=s.epoch, step=s.step, reason=what)
        if s.best_loss is not None:
            kept = f"{self.best_path} keeps epoch {s.best_epoch} (valid ppl {format_ppl(s.best_ppl)})"
        else:
            kept = "no model was saved"
        raise OnparseError(f"training diverged at step {s.step} (epoch {s.epoch + 1}): {what}; {kept}. "
                           "Lower --lr (or --clip) and start again")

    # ---- progress on stderr ------------------------------------------------------------------
    def _progress_bar(self):
        """--progress: a bar; --no-progress: nothing; by default a bar on a terminal, else a plain
        line every progress.PLAIN_EVERY seconds (a log file must show that the run is alive)."""
        s = self.loop.schedule
        tty = sys.stderr is not None and sys.stderr.isatty()
        show_bar = self.ctx.is_main and (self.opt.progress if self.opt.progress is not None else tty)
        self.plain_progress = self.ctx.is_main and self.opt.progress is None and not tty
        self.plain_at = (time.monotonic(), self.run_tokens)
        total = self.cfg.epochs * self.tokens_per_epoch
        done = min(total, s.epoch * self.tokens_per_epoch + s.position * self.train_data.shape[1] * self.ctx.world_size)
        return tqdm(total=total, initial=done, unit="tok", unit_scale=True, file=sys.stderr,
                    disable=not show_bar, dynamic_ncols=True, leave=False)

    def _plain_progress(self, loss: float) -> None:
        """Every :data:`onparse.progress.PLAIN_EVERY` seconds (the interval of every command), one
        line: the epoch's share done, the rate since the last line, the window's perplexity and
        the epoch's time left."""
        now = time.monotonic()
        then, tokens_then = self.plain_at
        if now - then < progress.PLAIN_EVERY:
            return
        self.plain_at = (now, self.run_tokens)
        s, n_rows = self.loop.schedule, self.train_data.shape[0]
        rate = (self.run_tokens - tokens_then) / (now - then)
        share = s.position / max(n_rows - 1, 1)
        left = (1 - share) * self.tokens_per_epoch / rate if rate > 0 else float("nan")
        self.log.say(f"epoch {s.epoch + 1}/{self.cfg.epochs}: {100 * share:.0f}% | {rate:,.0f} tok/s | "
                     f"ppl {format_ppl(perplexity_of(loss))} | epoch ends in about {format_duration(left)}")

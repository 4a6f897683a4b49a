"""A language model run's progress on stderr (:class:`TokenDisplay`): a bar of tokens when asked
for (``--progress``) or on a terminal, else a plain line every :data:`onparse.progress.PLAIN_EVERY`
seconds (a log file must show that the run is alive), nothing with ``--no-progress``; only the
process that writes (rank 0) shows anything."""
from __future__ import annotations

import sys
import time
from typing import Optional

from tqdm import tqdm

from ... import progress
from ...files.safeio import format_duration, format_ppl, perplexity_of


class TokenDisplay:
    """The bar (or plain lines) of one invocation: ``total`` tokens over the run's epochs, ``done``
    already; ``say`` prints a line.  A context manager: the bar closes on exit."""

    def __init__(self, say, wanted: Optional[bool], is_main: bool, epochs: int, tokens_per_epoch: int, done: int,
                 run_tokens: int):
        tty = sys.stderr is not None and sys.stderr.isatty()
        show_bar = is_main and (wanted if wanted is not None else tty)
        self.plain = is_main and wanted is None and not tty
        self.say, self.epochs, self.tokens_per_epoch = say, epochs, tokens_per_epoch
        self.plain_at = (time.monotonic(), run_tokens)       # when the last plain line was, and the tokens then
        total = epochs * tokens_per_epoch
        self.bar = tqdm(total=total, initial=min(total, done), unit="tok", unit_scale=True, file=sys.stderr,
                        disable=not show_bar, dynamic_ncols=True, leave=False)

    def __enter__(self) -> "TokenDisplay":
        return self

    def __exit__(self, *exc) -> bool:
        self.bar.close()
        return False

    def epoch(self, epoch: int) -> None:
        """The bar names the epoch in progress (1-based)."""
        self.bar.set_description(f"epoch {epoch}/{self.epochs}")

    def update(self, tokens: int) -> None:
        self.bar.update(tokens)

    def window(self, loss: float, epoch: int, share: float, run_tokens: int) -> None:
        """A window of steps of mean ``loss`` ended ``share`` into ``epoch`` (1-based), after
        ``run_tokens`` tokens of this invocation: the bar's figures, and every
        :data:`onparse.progress.PLAIN_EVERY` seconds a plain line: the epoch's share done, the
        rate since the last line, the window's perplexity and the epoch's time left."""
        self.bar.set_postfix(loss=f"{loss:.3f}", ppl=format_ppl(perplexity_of(loss)), refresh=False)
        if not self.plain:
            return
        now = time.monotonic()
        then, tokens_then = self.plain_at
        if now - then < progress.PLAIN_EVERY:
            return
        self.plain_at = (now, run_tokens)
        rate = (run_tokens - tokens_then) / (now - then)
        left = (1 - share) * self.tokens_per_epoch / rate if rate > 0 else float("nan")
        self.say(f"epoch {epoch}/{self.epochs}: {100 * share:.0f}% | {rate:,.0f} tok/s | "
                 f"ppl {format_ppl(perplexity_of(loss))} | epoch ends in about {format_duration(left)}")

"""How a neural PCFG is trained (``onparse train --family grammar``): :class:`GrammarTraining`,
the settings a run keeps in ``last.pt`` and its files' metadata.  No torch here (the command line
builds its options from this module at start-up).

The defaults are ``docs/pcfg.md``'s Training section (Kim et al. 2019): Adam at lr 2e-3 with betas
(0.75, 0.999), gradient norm clipped to 3, a length curriculum that trains on sentences of at
most ``curriculum_start`` words in the first epoch and one word more each epoch up to
``max_words``.  Batches of 8 sentences of similar length: the CPU figures of ``docs/pcfg.md`` were
measured at 8, and the rules (the emission softmax over the vocabulary, the bulk of a step at
short lengths) are computed once per batch.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Dict, Mapping


def _opt(default, help_text):
    return field(default=default, metadata={"help": help_text})


@dataclass(frozen=True)
class GrammarTraining:
    """Every setting of a grammar run but its sizes (:class:`onparse.grammar.config.GrammarConfig`);
    ValueError naming the field for a bad value.  ``onparse train --family grammar`` exposes each
    field as ``--field-name``."""

    epochs: int = _opt(12, "number of epochs")
    batch_size: int = _opt(8, "sentences per batch (of similar length)")
    lr: float = _opt(2e-3, "Adam learning rate")
    beta1: float = _opt(0.75, "Adam beta1")
    beta2: float = _opt(0.999, "Adam beta2")
    clip: float = _opt(3.0, "gradient norm clipping (0: none)")
    curriculum_start: int = _opt(30, "longest training sentence in the first epoch (one word more each epoch)")
    max_words: int = _opt(40, "longest training sentence at the end of the curriculum")
    max_vocab: int = _opt(10000, "largest vocabulary, <unk> and <eos> included (0: no limit)")
    min_count: int = _opt(1, "least count of a training word to enter the vocabulary")
    seed: int = _opt(1, "random seed (initial weights, batch order)")

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            real = f.type in (float, "float")
            if isinstance(value, bool) or not isinstance(value, numbers.Real if real else numbers.Integral):
                raise ValueError(f"{f.name} must be {'a number' if real else 'an integer'}, got {value!r}")
            object.__setattr__(self, f.name, float(value) if real else int(value))
        # lr and clip may be inf or nan on purpose only in tests of the divergence stop: refuse
        # them here too, a real run never wants them (the tests monkeypatch the loss instead).
        for name in ("lr", "beta1", "beta2", "clip"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)}")
        for name in ("epochs", "batch_size", "min_count"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, got {self.lr}")
        for name in ("beta1", "beta2"):
            if not 0 <= getattr(self, name) < 1:
                raise ValueError(f"{name} must lie in [0, 1), got {getattr(self, name)}")
        for name in ("clip", "max_vocab", "seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        if not 2 <= self.curriculum_start <= self.max_words:
            raise ValueError(f"curriculum_start must lie in 2..max_words ({self.max_words}), "
                             f"got {self.curriculum_start}")
        if self.max_vocab and self.max_vocab < 3:
            raise ValueError(f"max_vocab must be 0 (no limit) or at least 3, got {self.max_vocab}")

    def length_limit(self, epoch: int) -> int:
        """The longest training sentence of ``epoch`` (1-based): the curriculum.

        >>> [GrammarTraining(curriculum_start=3, max_words=5).length_limit(e) for e in (1, 2, 3, 9)]
        [3, 4, 5, 5]
        """
        return min(self.max_words, self.curriculum_start + epoch - 1)

    @property
    def vocab_limit(self):
        """``max_vocab`` as :meth:`onparse.text.vocab.Vocabulary.build` takes it (None: no limit)."""
        return self.max_vocab or None

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "GrammarTraining":
        """The inverse of :meth:`to_dict`; unknown keys raise ValueError."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown grammar training settings: {', '.join(unknown)}")
        return cls(**dict(d))

    def with_overrides(self, overrides: Mapping[str, Any]) -> "GrammarTraining":
        return replace(self, **overrides)

    def same_run(self, other: "GrammarTraining") -> bool:
        """Whether a run with ``other`` may resume one with these settings (only ``epochs`` may
        change: anything else would make the continuation another run)."""
        return {**self.to_dict(), "epochs": 0} == {**other.to_dict(), "epochs": 0}


#: The size options of ``onparse train --family grammar`` (GrammarConfig fields) and their flags.
SIZE_OPTIONS = {"n_nonterminals": "--nonterminals", "n_preterminals": "--preterminals", "rank": "--rank",
                "symbol_size": "--symbol-size", "mlp_size": "--mlp-size"}

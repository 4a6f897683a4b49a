"""How a neural PCFG is trained (``onparse train --family grammar``): :class:`GrammarTraining`,
the settings a run keeps in ``last.pt`` and its files' metadata.  No torch here (the command line
builds its options from this module at start-up).

The defaults are the anchors' recipe (Kim et al. 2019, Yang et al. 2021; ``docs/pcfg.md``'s
Training section): Adam at lr 1e-3 with betas (0.75, 0.999), gradient norm clipped to 3, batches
of 4 sentences of similar length, 10 epochs, and a length curriculum that trains on sentences of
at most ``curriculum_start`` (30) words in the first epoch and one word more each epoch up to
``max_words`` (40).  Before, onparse took twice the step (lr 2e-3 at batch 8); most of its
English grammars then collapsed into right-branching chains (research/RESULTS.md).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from ..settings import DictConfig, SettingError, check_settings, known_fields, setting


@dataclass(frozen=True)
class GrammarTraining(DictConfig):
    """Every setting of a grammar run but its sizes (:class:`onparse.grammar.config.GrammarConfig`);
    :class:`onparse.settings.SettingError` naming the field for a bad value.  ``onparse train
    --family grammar`` exposes each field as ``--field-name``."""

    WHAT = "grammar training settings"

    epochs: int = setting(10, "number of epochs", "count")
    batch_size: int = setting(4, "sentences per batch (of similar length)", "count")
    lr: float = setting(1e-3, "Adam learning rate", "positive")
    beta1: float = setting(0.75, "Adam beta1", "probability")
    beta2: float = setting(0.999, "Adam beta2", "probability")
    clip: float = setting(3.0, "gradient norm clipping (0: none)", "non_negative")
    curriculum_start: int = setting(30, "longest training sentence in the first epoch (one word more each epoch)",
                                    "count", least=2)
    max_words: int = setting(40, "longest training sentence at the end of the curriculum", "count", least=2)
    max_vocab: int = setting(10000, "largest vocabulary, <unk> and <eos> included (0: no limit)", "non_negative")
    min_count: int = setting(1, "least count of a training word to enter the vocabulary", "count")
    seed: int = setting(1, "random seed (initial weights, batch order)", "non_negative")

    def __post_init__(self):
        check_settings(self)
        if self.curriculum_start > self.max_words:
            raise SettingError(f"curriculum_start must lie in 2..max_words ({self.max_words}), "
                               f"got {self.curriculum_start}")
        if self.max_vocab and self.max_vocab < 3:
            raise SettingError(f"max_vocab must be 0 (no limit) or at least 3, got {self.max_vocab}")

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

    def with_overrides(self, overrides: Mapping[str, Any]) -> "GrammarTraining":
        """A copy with some settings replaced; unknown names raise SettingError.  A ``max_words``
        below the ``curriculum_start`` the overrides leave as it was is refused naming that
        value, which the caller did not give (the check itself is :meth:`__post_init__`'s)."""
        given = known_fields(GrammarTraining, dict(overrides), "grammar training settings")
        try:
            return replace(self, **given)
        except SettingError:
            if "curriculum_start" in given or "max_words" not in given \
                    or given["max_words"] >= self.curriculum_start:
                raise
            raise SettingError(f"--max-words {given['max_words']} is below --curriculum-start's "
                               f"{'default ' if self == GrammarTraining() else ''}{self.curriculum_start}: give "
                               f"--curriculum-start too (2 to {given['max_words']})") from None

    def same_run(self, other: "GrammarTraining") -> bool:
        """Whether a run with ``other`` may resume one with these settings (only ``epochs`` may
        change: anything else would make the continuation another run)."""
        return {**self.to_dict(), "epochs": 0} == {**other.to_dict(), "epochs": 0}



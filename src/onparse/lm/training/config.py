"""What a language model's training run is: its hyperparameters (:class:`TrainConfig`) and the
named presets (:mod:`onparse.lm.training.family` declares them to ``onparse train``).  How one
invocation runs and what it reports are every kind's (:mod:`onparse.training.options`).

No torch here: the command line builds its options from these dataclasses at start-up.
"""
from dataclasses import dataclass, fields, replace
from typing import Any, Dict, Optional

from ...errors import OnparseError
from ...settings import DictConfig, SettingError, check_settings, known_fields, setting
from ...sizes import check_sizes
from ..config import MODEL_SETTINGS, ModelConfig


@dataclass(frozen=True)
class TrainConfig(DictConfig):
    """Every hyperparameter of a run (the defaults are the paper's).  Unknown keys are errors
    (:meth:`from_dict`); ``onparse train`` exposes each field as ``--field-name`` with the help
    its :func:`onparse.settings.setting` declares."""

    WHAT = "training config"

    # model (onparse.lm.config.ModelConfig: the same settings, declared once there)
    embedding_size: int = MODEL_SETTINGS["embedding_size"].field()
    hidden_size: int = MODEL_SETTINGS["hidden_size"].field()
    n_layers: int = MODEL_SETTINGS["n_layers"].field()
    chunk_size: int = MODEL_SETTINGS["chunk_size"].field()
    dropout_word: float = MODEL_SETTINGS["dropout_word"].field()
    dropout_input: float = MODEL_SETTINGS["dropout_input"].field()
    dropout_hidden: float = MODEL_SETTINGS["dropout_hidden"].field()
    dropout_output: float = MODEL_SETTINGS["dropout_output"].field()
    dropconnect: float = MODEL_SETTINGS["dropconnect"].field()
    # vocabulary
    max_vocab: int = setting(10000, "largest vocabulary, <unk> and <eos> included (0: no limit)", "non_negative")
    min_count: int = setting(1, "least count of a training word to enter the vocabulary", "count")
    # optimisation
    batch_size: int = setting(20, "parallel training streams (over all processes)", "count")
    bptt: int = setting(70, "mean BPTT window length", "count")
    lr: float = setting(30.0, "SGD learning rate", "positive")
    clip: float = setting(0.25, "gradient norm clipping (0: none)", "non_negative")
    weight_decay: float = setting(1.2e-6, "weight decay", "non_negative")
    alpha: float = setting(2.0, "activation regularisation (AR) weight", "non_negative")
    beta: float = setting(1.0, "temporal activation regularisation (TAR) weight", "non_negative")
    nonmono: int = setting(5, "switch to averaged SGD when validation has not improved for this many checks",
                           "non_negative")
    epochs: int = setting(1000, "number of epochs", "count")
    eval_batch_size: int = setting(10, "streams for validation and test perplexity", "count")
    seed: int = setting(1111, "random seed", "non_negative")

    def __post_init__(self):
        check_settings(self)
        for name in ("embedding_size", "hidden_size") if self.n_layers > 1 else ("embedding_size",):
            if getattr(self, name) % self.chunk_size:
                raise SettingError(f"{name} {getattr(self, name)} is not a multiple of chunk_size {self.chunk_size}")
        # The model's size bounds, before any corpus is read (and before torch is imported).
        check_sizes(self.max_vocab or 1, self.embedding_size, self.hidden_size, self.n_layers, self.chunk_size)

    def model_config(self, vocab_size: int):
        """The :class:`onparse.lm.model.ModelConfig` of this run for a vocabulary of ``vocab_size``:
        every field of the model's config but ``vocab_size`` is read from the field of the same
        name here (a model field without one here is an AttributeError, not a silent default)."""

        shared = {f.name: getattr(self, f.name) for f in fields(ModelConfig) if f.name != "vocab_size"}
        return ModelConfig(vocab_size=vocab_size, **shared)

    @property
    def vocab_limit(self) -> Optional[int]:
        """``max_vocab`` as :meth:`Vocabulary.build` takes it (None: no limit)."""
        return self.max_vocab or None

    def with_overrides(self, overrides: Dict[str, Any]) -> "TrainConfig":
        """A copy with some fields replaced; unknown names raise ``ValueError``."""
        return replace(self, **known_fields(TrainConfig, overrides, "training options"))


#: Named starting points; every field can still be overridden.
PRESETS: Dict[str, TrainConfig] = {
    # ``docs/onlstm.md`` section 2 (25M parameters with PTB's 10k vocabulary).  The bundled model is this
    # preset at embedding 300 / hidden 600 (9.4M parameters, under the package's 20 MB in fp16;
    # research/train_default.sh, kept at the git tag lab-scripts-v22).
    "paper": TrainConfig(),
    # A CPU-sized model: an epoch of the embedded WSJ text (290k tokens) in a few minutes on two
    # cores.  Batch 20 as in the paper: on this little text, more and smaller steps learn faster
    # per token than batch 64 at about the same tokens/s.  The paper's dropout rates: lower ones
    # (0.3/0.2/0.3, DropConnect 0.3) reach a lower perplexity sooner but induce worse trees
    # (all-lengths F1 36.9 over 3 seeds after 70 epochs, against 40.2 over 5 seeds after 15 with
    # these; README, "How the bundled model was made").
    "small": TrainConfig(embedding_size=200, hidden_size=400, n_layers=3, chunk_size=10,
                         dropout_word=0.1, dropout_input=0.5, dropout_hidden=0.3, dropout_output=0.45,
                         dropconnect=0.45, max_vocab=10000, batch_size=20, bptt=70, epochs=15),
    # Seconds on a small file: for tests and smoke runs.  Two layers: plain SGD takes a model
    # this small off the unigram plateau in a few epochs with two layers, not with three.
    "tiny": TrainConfig(embedding_size=32, hidden_size=32, n_layers=2, chunk_size=4,
                        dropout_word=0.05, dropout_input=0.1, dropout_hidden=0.1, dropout_output=0.1,
                        dropconnect=0.1, max_vocab=2000, batch_size=4, bptt=10, lr=10.0,
                        nonmono=3, epochs=3, eval_batch_size=4),
}


def preset(name: str) -> TrainConfig:
    """The preset called ``name`` (``paper``, ``small``, ``tiny``)."""
    try:
        return PRESETS[name]
    except KeyError:
        raise OnparseError(f"unknown preset '{name}'; known: {', '.join(PRESETS)}") from None

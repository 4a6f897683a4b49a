"""The sizes of a recurrent baseline (:class:`RecurrentConfig`, a file's ``config``) and how a
run trains one (:class:`LSTMTraining`, :class:`GRUTraining`): the language model's settings
and presets (:mod:`onparse.lm.config`, :mod:`onparse.lm.training.config`) without the ON-LSTM's
chunk size, read from there so that each default has one home.  No torch here.
"""
from dataclasses import MISSING, dataclass, field, fields, make_dataclass, replace
from typing import Any, ClassVar, Dict, List

from ..lm.config import MODEL_SETTINGS
from ..lm.training.config import PRESETS as LM_PRESETS, TrainConfig
from ..settings import DictConfig, Spec, check_settings, known_fields, setting
from ..sizes import check_sizes

#: The recurrent cells, and the gates' blocks of each (the rows of its weights per hidden unit).
CELLS = ("lstm", "gru")
GATE_BLOCKS = {"lstm": 4, "gru": 3}
#: The language model's settings a baseline takes: all but the ON-LSTM's chunk size.
SHARED = tuple(name for name in MODEL_SETTINGS if name != "chunk_size")


@dataclass(frozen=True)
class RecurrentConfig(DictConfig):
    """Sizes and regularisation of a plain LSTM or GRU language model (the ON-LSTM's, but the chunk size)."""

    WHAT = "recurrent language model config"

    vocab_size: int = Spec(MISSING, "vocabulary size, <unk> and <eos> included", "count").field()
    cell: str = setting("lstm", "the recurrent cell", "choice", choices=CELLS)
    embedding_size: int = MODEL_SETTINGS["embedding_size"].field()
    hidden_size: int = MODEL_SETTINGS["hidden_size"].field()
    n_layers: int = MODEL_SETTINGS["n_layers"].field()
    dropout_word: float = MODEL_SETTINGS["dropout_word"].field()
    dropout_input: float = MODEL_SETTINGS["dropout_input"].field()
    dropout_hidden: float = MODEL_SETTINGS["dropout_hidden"].field()
    dropout_output: float = MODEL_SETTINGS["dropout_output"].field()
    dropconnect: float = MODEL_SETTINGS["dropconnect"].field()

    def __post_init__(self):
        check_settings(self)
        check_sizes(self.vocab_size, self.embedding_size, self.hidden_size, self.n_layers, 1)

    def layer_sizes(self) -> List[int]:
        """Hidden size of each layer: ``hidden_size`` for all but the last, ``embedding_size`` last (tied decoder)."""
        return [self.hidden_size] * (self.n_layers - 1) + [self.embedding_size]

    def parameter_shapes(self) -> Dict[str, tuple]:
        """Name -> shape of every weight of :class:`onparse.baselines_lm.model.RecurrentLM`."""
        shapes = {"embedding.weight": (self.vocab_size, self.embedding_size), "decoder_bias": (self.vocab_size,)}
        sizes = [self.embedding_size] + self.layer_sizes()
        for layer, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            rows = GATE_BLOCKS[self.cell] * n_out
            shapes.update({f"layers.{layer}.weight_ih_l0": (rows, n_in), f"layers.{layer}.weight_hh_l0": (rows, n_out),
                           f"layers.{layer}.bias_ih_l0": (rows,), f"layers.{layer}.bias_hh_l0": (rows,)})
        return shapes


def _post_init(self) -> None:
    check_settings(self)
    check_sizes(self.max_vocab or 1, self.embedding_size, self.hidden_size, self.n_layers, 1)


def _model_config(self, vocab_size: int) -> RecurrentConfig:
    """The :class:`RecurrentConfig` of this run for a vocabulary of ``vocab_size``."""
    return RecurrentConfig(vocab_size=vocab_size, cell=self.CELL, **{name: getattr(self, name) for name in SHARED})


def _with_overrides(self, overrides: Dict[str, Any]):
    """A copy with some fields replaced; unknown names raise ``ValueError``."""
    return replace(self, **known_fields(type(self), overrides, "training options"))


def _training(cell: str):
    """The settings of a run of ``cell``: :class:`~onparse.lm.training.config.TrainConfig`'s
    fields but ``chunk_size`` (their defaults, help and checks are read from there)."""
    kept = [(f.name, f.type, field(default=f.default, metadata=f.metadata))
            for f in fields(TrainConfig) if f.name != "chunk_size"]
    return make_dataclass(f"{cell.upper()}Training", kept, bases=(DictConfig,), frozen=True, namespace={
        "__doc__": f"Every hyperparameter of a {cell.upper()} language model's run (the ON-LSTM's, but the chunk size).",
        "__module__": __name__, "WHAT": "training config", "CELL": cell, "__annotations__": {"CELL": ClassVar[str]},
        "__post_init__": _post_init, "model_config": _model_config, "with_overrides": _with_overrides,
        "vocab_limit": property(lambda self: self.max_vocab or None)})


LSTMTraining = _training("lstm")
GRUTraining = _training("gru")


def presets(settings: type) -> Dict[str, Any]:
    """The language model's presets as runs of ``settings``: the same sizes, text and budget."""
    names = [f.name for f in fields(settings)]
    return {name: settings(**{k: getattr(preset, k) for k in names}) for name, preset in LM_PRESETS.items()}


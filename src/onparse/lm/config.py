"""The sizes and regularisation of an ON-LSTM language model: what a checkpoint's ``config``
holds.  No torch here (checkpoints are checked against it before any model is built).
"""
import numbers
from dataclasses import asdict, dataclass, fields
from typing import List

from ..sizes import check_sizes, parameter_count


class DictConfig:
    """``to_dict`` / ``from_dict`` of a config dataclass as a file or a checkpoint stores it;
    ``WHAT`` names the config in errors (``"model config must be a dict"``, ``"unknown model
    config keys: ..."``)."""

    WHAT = "config"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d):
        """Inverse of :meth:`to_dict`; ``ValueError`` for something not a dict, unknown keys, or
        values the config refuses."""
        if not isinstance(d, dict):
            raise ValueError(f"{cls.WHAT} must be a dict, got {type(d).__name__}")
        return cls(**known_fields(cls, d, f"{cls.WHAT} keys"))


@dataclass(frozen=True)
class ModelConfig(DictConfig):
    """Sizes and regularisation of an ON-LSTM language model (the defaults are the paper's)."""

    WHAT = "model config"

    vocab_size: int
    embedding_size: int = 400
    hidden_size: int = 1150        # every layer but the last; the last layer has embedding_size (tied decoder)
    n_layers: int = 3
    chunk_size: int = 10
    dropout_word: float = 0.1      # embedding dropout: drops whole word types
    dropout_input: float = 0.5     # locked dropout on the embedding output
    dropout_hidden: float = 0.3    # locked dropout between layers
    dropout_output: float = 0.45   # locked dropout on the last layer's output
    dropconnect: float = 0.45      # DropConnect on the recurrent weights

    def __post_init__(self):
        for name in ("vocab_size", "embedding_size", "hidden_size", "n_layers", "chunk_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
            object.__setattr__(self, name, int(value))        # numpy integers become plain ints
        check_sizes(self.vocab_size, self.embedding_size, self.hidden_size, self.n_layers, self.chunk_size)
        for name in ("dropout_word", "dropout_input", "dropout_hidden", "dropout_output", "dropconnect"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1), got {value!r}")
            object.__setattr__(self, name, float(value))
        for size in self.layer_sizes():
            if size % self.chunk_size:
                raise ValueError(f"layer size {size} is not a multiple of chunk_size {self.chunk_size}")

    def parameter_count(self) -> int:
        """The number of weights of a model of this config, computed without building anything."""
        return parameter_count(self.vocab_size, self.embedding_size, self.hidden_size, self.n_layers,
                               self.chunk_size)

    def layer_sizes(self) -> List[int]:
        """Hidden size of each layer: ``hidden_size`` for all but the last, ``embedding_size`` last."""
        return [self.hidden_size] * (self.n_layers - 1) + [self.embedding_size]

    def parameter_shapes(self) -> dict:
        """Name -> shape of every weight of :class:`ONLSTMLanguageModel` with this config, computed
        without allocating (checkpoint loading compares them with the file's tensors first)."""
        shapes = {"embedding.weight": (self.vocab_size, self.embedding_size), "decoder_bias": (self.vocab_size,)}
        sizes = [self.embedding_size] + self.layer_sizes()
        for layer, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            gates = 2 * (n_out // self.chunk_size) + 4 * n_out
            shapes.update({f"layers.{layer}.weight_ih": (gates, n_in), f"layers.{layer}.bias_ih": (gates,),
                           f"layers.{layer}.weight_hh": (gates, n_out), f"layers.{layer}.bias_hh": (gates,)})
        return shapes


def known_fields(cls, values: dict, what: str) -> dict:
    """``values`` if every key names a field of the dataclass ``cls``, else ``ValueError``
    naming ``what`` (a config read from a file or from options)."""
    unknown = sorted(set(values) - {f.name for f in fields(cls)})
    if unknown:
        raise ValueError(f"unknown {what}: {', '.join(map(str, unknown))}")
    return values

"""The sizes and regularisation of an ON-LSTM language model: what a checkpoint's ``config``
holds.  No torch here (checkpoints are checked against it before any model is built).
"""
from dataclasses import MISSING, dataclass
from typing import List

from ..settings import DictConfig, SettingError, Spec, check_settings
from ..sizes import check_sizes, parameter_count

#: The model's settings, declared once: :class:`ModelConfig` and the training run's
#: :class:`onparse.lm.training.config.TrainConfig` (whose options they are) both take them from here.
#: The defaults are the paper's.
MODEL_SETTINGS = {
    "embedding_size": Spec(400, "embedding size (= size of the last layer, tied decoder)", "count"),
    "hidden_size": Spec(1150, "hidden size of every layer but the last", "count"),
    "n_layers": Spec(3, "number of ON-LSTM layers", "count"),
    "chunk_size": Spec(10, "neurons per master level (chunk size C)", "count"),
    "dropout_word": Spec(0.1, "embedding dropout (drops whole word types)", "probability"),
    "dropout_input": Spec(0.5, "locked dropout on the embedding output", "probability"),
    "dropout_hidden": Spec(0.3, "locked dropout between layers", "probability"),
    "dropout_output": Spec(0.45, "locked dropout on the last layer's output", "probability"),
    "dropconnect": Spec(0.45, "DropConnect on the recurrent weights", "probability"),
}


@dataclass(frozen=True)
class ModelConfig(DictConfig):
    """Sizes and regularisation of an ON-LSTM language model (:data:`MODEL_SETTINGS`)."""

    WHAT = "model config"

    vocab_size: int = Spec(MISSING, "vocabulary size, <unk> and <eos> included", "count").field()
    embedding_size: int = MODEL_SETTINGS["embedding_size"].field()
    hidden_size: int = MODEL_SETTINGS["hidden_size"].field()
    n_layers: int = MODEL_SETTINGS["n_layers"].field()
    chunk_size: int = MODEL_SETTINGS["chunk_size"].field()
    dropout_word: float = MODEL_SETTINGS["dropout_word"].field()
    dropout_input: float = MODEL_SETTINGS["dropout_input"].field()
    dropout_hidden: float = MODEL_SETTINGS["dropout_hidden"].field()
    dropout_output: float = MODEL_SETTINGS["dropout_output"].field()
    dropconnect: float = MODEL_SETTINGS["dropconnect"].field()

    def __post_init__(self):
        check_settings(self)
        check_sizes(self.vocab_size, self.embedding_size, self.hidden_size, self.n_layers, self.chunk_size)
        for size in self.layer_sizes():
            if size % self.chunk_size:
                raise SettingError(f"layer size {size} is not a multiple of chunk_size {self.chunk_size}")

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

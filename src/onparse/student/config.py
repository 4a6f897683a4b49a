"""The sizes of a student parser (:mod:`onparse.student.model`) and how ``onparse distill`` trains it
(:mod:`onparse.student.distill`): what a student file's ``config`` and ``metadata["distill"]`` hold.
No torch here (the command line shows these defaults in its help).
"""
import numbers
from dataclasses import asdict, dataclass

from ..errors import OnparseError
from ..lm.config import DictConfig

#: Sentences of fewer words teach nothing (one tree only) and are skipped.
MIN_WORDS = 2

#: Bounds on a student's sizes read from a file (a small file must not make onparse build a
#: huge model).
MAX_VOCAB, MAX_WIDTH, MAX_LAYERS = 5_000_000, 8192, 16


@dataclass(frozen=True)
class StudentConfig(DictConfig):
    """Sizes of a student parser; ValueError for sizes that are not positive integers (within
    :data:`MAX_WIDTH` / :data:`MAX_LAYERS` / :data:`MAX_VOCAB`) or a dropout outside [0, 1)."""

    WHAT = "student config"

    vocab_size: int
    embedding_size: int = 100
    hidden_size: int = 200         # per direction
    n_layers: int = 2
    mlp_size: int = 200
    dropout: float = 0.2

    def __post_init__(self):
        bounds = {"vocab_size": MAX_VOCAB, "embedding_size": MAX_WIDTH, "hidden_size": MAX_WIDTH,
                  "n_layers": MAX_LAYERS, "mlp_size": MAX_WIDTH}
        for name, most in bounds.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= value <= most:
                raise ValueError(f"{name} must be an integer in 1..{most:,}, got {value!r}")
            object.__setattr__(self, name, int(value))
        if isinstance(self.dropout, bool) or not isinstance(self.dropout, numbers.Real) or not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be a probability in [0, 1), got {self.dropout!r}")
        object.__setattr__(self, "dropout", float(self.dropout))

    def parameter_shapes(self) -> dict:
        """Name -> shape of every weight of :class:`SpanStudent`, computed without allocating."""
        e, h, m = self.embedding_size, self.hidden_size, self.mlp_size
        shapes = {"embedding.weight": (self.vocab_size, e), "boundary.weight": (m, 2 * h),
                  "boundary.bias": (m,), "out.weight": (1, m), "out.bias": (1,)}
        for layer in range(self.n_layers):
            for suffix in ("", "_reverse"):
                shapes.update({f"lstm.weight_ih_l{layer}{suffix}": (4 * h, e if layer == 0 else 2 * h),
                               f"lstm.weight_hh_l{layer}{suffix}": (4 * h, h),
                               f"lstm.bias_ih_l{layer}{suffix}": (4 * h,),
                               f"lstm.bias_hh_l{layer}{suffix}": (4 * h,)})
        return shapes


@dataclass(frozen=True)
class DistillSettings:
    """How a student is trained (the defaults are those the probe of research/RESULTS.md used)."""

    epochs: int = 3
    batch_size: int = 64
    lr: float = 1e-3
    clip: float = 5.0
    max_words: int = 60            # longer sentences are parsed by the teacher but not learnt from
    seed: int = 1
    valid_every: int = 50          # every N-th kept sentence is held out to measure agreement
    save_every: int = 200          # batches between saves of last.pt
    max_unknown: float = 0.5       # refuse text whose share of words unknown to the teacher is higher

    def __post_init__(self):
        for name in ("epochs", "batch_size", "max_words", "valid_every", "save_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (MIN_WORDS if name == "max_words" else 1):
                raise OnparseError(f"distill setting {name} must be an integer of at least "
                                   f"{MIN_WORDS if name == 'max_words' else 1}, got {value!r}")
        if not (self.lr > 0 and self.clip > 0 and 0 <= self.max_unknown <= 1):
            raise OnparseError("distill settings: lr and clip must be positive, max_unknown in [0, 1]")

    def same_run(self, other: "DistillSettings") -> bool:
        """Whether a run with ``other`` may resume one with these settings (only ``epochs`` and
        ``save_every`` may change)."""
        return {**asdict(self), "epochs": 0, "save_every": 0} == {**asdict(other), "epochs": 0, "save_every": 0}

"""The sizes of a student parser (:mod:`onparse.student.model`) and how ``onparse distill`` trains it
(:mod:`onparse.student.distill`): what a student file's ``config`` and ``metadata["distill"]`` hold,
and :class:`StudentTraining`, both as ``onparse train --family student`` takes them.
No torch here (the command line shows these defaults in its help).
"""
import random
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import List, Optional, Sequence, Tuple

from ..settings import DictConfig, check_settings, setting

#: Sentences of fewer words teach nothing (one tree only) and are skipped.
MIN_WORDS = 2

#: Bounds on a student's sizes read from a file (a small file must not make onparse build a
#: huge model).
MAX_VOCAB, MAX_WIDTH, MAX_LAYERS = 5_000_000, 8192, 16


@dataclass(frozen=True)
class StudentConfig(DictConfig):
    """Sizes of a student parser; SettingError for sizes that are not integers within their
    bounds (:data:`MAX_WIDTH` / :data:`MAX_LAYERS` / :data:`MAX_VOCAB`) or a dropout outside [0, 1)."""

    WHAT = "student config"

    vocab_size: int = setting(MISSING, "vocabulary size (the teacher's)", "count", most=MAX_VOCAB)
    embedding_size: int = setting(100, "word embedding size", "count", most=MAX_WIDTH)
    hidden_size: int = setting(200, "BiLSTM units per direction", "count", most=MAX_WIDTH)
    n_layers: int = setting(2, "BiLSTM layers", "count", most=MAX_LAYERS)
    mlp_size: int = setting(200, "span scorer's hidden units", "count", most=MAX_WIDTH)
    dropout: float = setting(0.2, "dropout of the embeddings, the BiLSTM and the scorer", "probability")

    def __post_init__(self):
        check_settings(self)

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
    """How a student is trained (the defaults are those the probe of research/RESULTS.md used);
    ``onparse distill`` shows each setting's help and default."""

    epochs: int = setting(3, "passes over the text", "count")
    batch_size: int = setting(64, "sentences per batch", "count")
    lr: float = setting(1e-3, "Adam's learning rate", "positive")
    clip: float = setting(5.0, "gradient norm clipping", "positive")
    max_words: int = setting(60, "longest sentence learnt from (longer ones are parsed by the teacher, not learnt)",
                             "count", least=MIN_WORDS)
    seed: int = setting(1, "seed of the weights and batch order", "non_negative")
    valid_every: int = setting(50, "hold out every N-th sentence to measure agreement with the teacher", "count")
    save_every: int = setting(200, "batches between saves of RUN/last.pt", "count")
    max_unknown: float = setting(0.5, "refuse text whose share of words unknown to the teacher is higher",
                                 "fraction")

    def __post_init__(self):
        check_settings(self)

    def split(self, sentences: Sequence[Sequence[str]]) -> Tuple[List[int], List[int]]:
        """The indices of the sentences learnt from and of those held out (every ``valid_every``-th).
        Held-out sentences over ``max_words`` are skipped as training's are (the student is not
        trained on them, and their CYK would cost O(n^3))."""
        short = [i for i in range(len(sentences)) if len(sentences[i]) <= self.max_words]
        return [i for i in short if i % self.valid_every], [i for i in short if not i % self.valid_every]

    def batches(self, train: Sequence[int], lengths: Sequence[int], epoch: int) -> List[List[int]]:
        """The batches of ``epoch``: sentences of similar length, at most ``batch_size`` each, in an
        order fixed by the seed and the epoch (so that a resumed run takes the same batches)."""
        rng = random.Random(self.seed * 1_000_003 + epoch)
        order = sorted(train, key=lambda i: (lengths[i], rng.random()))
        batches = [order[k:k + self.batch_size] for k in range(0, len(order), self.batch_size)]
        rng.shuffle(batches)
        return batches

    def same_run(self, other: "DistillSettings") -> bool:
        """Whether a run with ``other`` may resume one with these settings (only ``epochs`` and
        ``save_every`` may change)."""
        return {**asdict(self), "epochs": 0, "save_every": 0} == {**asdict(other), "epochs": 0, "save_every": 0}


#: The student's sizes that a run may set (the vocabulary is its teacher's).
SIZES = ("embedding_size", "hidden_size", "n_layers", "mlp_size", "dropout")
_SIZE_FIELDS = {f.name: f for f in fields(StudentConfig)}


def _size(name: str):
    """The field of the size ``name`` as :class:`StudentConfig` declares it (one home for its
    default, help and check)."""
    declared = _SIZE_FIELDS[name]
    return field(default=declared.default, metadata=declared.metadata)


@dataclass(frozen=True)
class StudentTraining(DistillSettings):
    """A student's run: its teacher, how it learns (:class:`DistillSettings`) and its sizes
    (:class:`StudentConfig`'s, but the vocabulary)."""

    teacher: Optional[str] = field(default=None, metadata={
        "help": "the model file or bundle whose trees of --corpus FILE the student learns (required)",
        "check": None})
    embedding_size: int = _size("embedding_size")
    hidden_size: int = _size("hidden_size")
    n_layers: int = _size("n_layers")
    mlp_size: int = _size("mlp_size")
    dropout: float = _size("dropout")

    def split_values(self) -> tuple:
        """``(DistillSettings, sizes)`` of this run."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        sizes = {k: values.pop(k) for k in SIZES}
        values.pop("teacher")
        return DistillSettings(**values), sizes

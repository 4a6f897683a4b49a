"""The word vocabulary of a language model: ``<unk>``, ``<eos>`` and the training words."""
from collections import Counter
from typing import Iterable, List, Optional, Sequence

from ..errors import OnparseError

UNK = "<unk>"
EOS = "<eos>"


class Vocabulary:
    """A fixed list of word types; ids are positions in :attr:`itos`.

    ``<unk>`` is id 0 and ``<eos>`` id 1 in vocabularies built here; a vocabulary read back
    from a checkpoint keeps whatever order it was saved with.
    """

    def __init__(self, itos: Sequence[str]):
        self.itos: List[str] = list(itos)
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise OnparseError("vocabulary has duplicate words")
        for special in (UNK, EOS):
            if special not in self.stoi:
                raise OnparseError(f"vocabulary lacks the special token {special}")
        self.unk_id = self.stoi[UNK]
        self.eos_id = self.stoi[EOS]

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], max_size: Optional[int] = None,
              min_count: int = 1) -> "Vocabulary":
        """Words of ``sentences`` seen at least ``min_count`` times, most frequent first
        (ties alphabetical, so the result does not depend on the corpus order), at most
        ``max_size`` entries including the two special tokens."""
        counts = Counter(w for sent in sentences for w in sent)
        for special in (UNK, EOS):
            counts.pop(special, None)
        words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
        if max_size is not None:
            words = words[: max(0, max_size - 2)]
        return cls([UNK, EOS] + words)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, word: str) -> bool:
        return word in self.stoi

    def index(self, word: str) -> int:
        """Id of ``word``, or of ``<unk>`` when it is not in the vocabulary."""
        return self.stoi.get(word, self.unk_id)

    def encode(self, words: Iterable[str]) -> List[int]:
        """Ids of ``words`` (unknown words map to ``<unk>``)."""
        get, unk = self.stoi.get, self.unk_id
        return [get(w, unk) for w in words]

    def to_list(self) -> List[str]:
        """Plain list for checkpoints (``torch.load(weights_only=True)`` reads it back)."""
        return list(self.itos)

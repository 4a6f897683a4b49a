"""The sizes of a neural PCFG: :class:`GrammarConfig` and :data:`GRAMMAR_PRESETS`.  No torch.

A grammar has ``n_nonterminals`` (m) nonterminals, ``n_preterminals`` (p) preterminals and binary
rules of rank ``rank`` (r): ``T[A, B, C] = sum_q U[A, q] V[B, q] W[C, q]``.  ``symbol_size`` is
the width of every symbol (and rank component) embedding, ``mlp_size`` the hidden width of the
residual MLPs that turn embeddings into rule logits.

>>> GrammarConfig.preset("tiny", vocab_size=50).rank
8
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass
from typing import Dict

from ..settings import DictConfig, check_settings, setting

#: Upper bounds: beyond them the rank-space inside (O(n^3 r + n^2 r^2)) and the emission
#: matrix (p x vocab) stop fitting a CPU; a typo such as ``rank=50000`` fails here, not in OOM.
MAX_SYMBOLS = 4096
MAX_WIDTH = 8192
MAX_VOCAB = 5_000_000

#: Sizes only: the vocabulary comes from the corpus (``GrammarConfig.preset(name, vocab_size)``).
#: ``small`` is N-PCFG's symbol counts (Kim et al. 2019), ``large`` TN-PCFG's best (Yang et al.
#: 2021); see ``docs/pcfg.md`` for their CPU cost.
GRAMMAR_PRESETS: Dict[str, Dict[str, int]] = {
    "tiny": dict(n_nonterminals=4, n_preterminals=6, rank=8, symbol_size=16, mlp_size=16),
    "small": dict(n_nonterminals=30, n_preterminals=60, rank=64, symbol_size=128, mlp_size=128),
    "medium": dict(n_nonterminals=128, n_preterminals=256, rank=256, symbol_size=256, mlp_size=256),
    "large": dict(n_nonterminals=250, n_preterminals=500, rank=500, symbol_size=256, mlp_size=256),
}
#: The sizes a preset sets and the flag of each (``onparse train --family grammar --nonterminals
#: ...``, and the messages that name them): the field's name less ``n_``, dashed.
SIZE_OPTIONS: Dict[str, str] = {name: "--" + name.removeprefix("n_").replace("_", "-")
                                for name in GRAMMAR_PRESETS["small"]}


@dataclass(frozen=True)
class GrammarConfig(DictConfig):
    """The sizes of one :class:`~onparse.grammar.model.NeuralPCFG`; checked on creation
    (:class:`onparse.settings.SettingError` naming the field)."""

    WHAT = "grammar config"

    vocab_size: int = setting(MISSING, "vocabulary size, <unk> included", "count", most=MAX_VOCAB)
    n_nonterminals: int = setting(MISSING, "nonterminals (m)", "count", most=MAX_SYMBOLS)
    n_preterminals: int = setting(MISSING, "preterminals (p)", "count", most=MAX_SYMBOLS)
    rank: int = setting(MISSING, "rank of the binary rules (r)", "count", most=MAX_SYMBOLS)
    symbol_size: int = setting(MISSING, "width of the symbol embeddings", "count", most=MAX_WIDTH)
    mlp_size: int = setting(MISSING, "hidden width of the rule MLPs", "count", most=MAX_WIDTH)

    def __post_init__(self) -> None:
        check_settings(self)

    @property
    def n_symbols(self) -> int:
        """m + p: the symbols a binary rule's child can be."""
        return self.n_nonterminals + self.n_preterminals

    def parameter_shapes(self) -> Dict[str, tuple]:
        """Name -> shape of every weight of :class:`~onparse.grammar.model.NeuralPCFG`, computed
        without allocating (a grammar file is checked against them before any model is built)."""
        d, h = self.symbol_size, self.mlp_size
        shapes: Dict[str, tuple] = {"start": (1, d), "nonterminals": (self.n_nonterminals, d),
                                    "preterminals": (self.n_preterminals, d), "components": (self.rank, d)}
        outputs = {"mlp_root": self.n_nonterminals, "mlp_emit": self.vocab_size, "mlp_parent": d,
                   "mlp_left": d, "mlp_right": d}
        for name, d_out in outputs.items():
            shapes.update({f"{name}.0.weight": (h, d), f"{name}.0.bias": (h,),
                           f"{name}.3.weight": (d_out, h), f"{name}.3.bias": (d_out,)})
            for block in (1, 2):
                for lin in ("lin1", "lin2"):
                    shapes.update({f"{name}.{block}.{lin}.weight": (h, h), f"{name}.{block}.{lin}.bias": (h,)})
        return shapes

    @classmethod
    def preset(cls, name: str, vocab_size: int) -> "GrammarConfig":
        """The sizes of :data:`GRAMMAR_PRESETS` ``[name]`` over a vocabulary of ``vocab_size``."""
        if name not in GRAMMAR_PRESETS:
            raise ValueError(f"unknown grammar preset {name!r}: choose from {', '.join(GRAMMAR_PRESETS)}")
        return cls(vocab_size=vocab_size, **GRAMMAR_PRESETS[name])

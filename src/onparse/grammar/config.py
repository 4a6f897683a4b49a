"""The sizes of a neural PCFG: :class:`GrammarConfig` and :data:`GRAMMAR_PRESETS`.  No torch.

A grammar has ``n_nonterminals`` (m) nonterminals, ``n_preterminals`` (p) preterminals and
binary rules ``T[A, B, C] = P(B C | A)`` of one of three forms (``rule_form``, docs/pcfg.md):

- ``simple``: independent children, ``T[A, B, C] = L[A, B] R[A, C]`` (Liu et al. 2023's
  SimplePCFG); the inside costs O(n^3 m + n^2 m^2);
- ``low_rank``: ``T[A, B, C] = sum_q U[A, q] V[B, q] W[C, q]`` of rank ``rank`` (r, TN-PCFG);
  O(n^3 r + n^2 r^2);
- ``full``: every ``T[A, B, C]`` its own logit (Kim et al.'s N-PCFG); O(n^3 (m+p)^2 + n^2 (m+p)^4)
  here, so only for tiny grammars (at most :data:`FULL_RULES` rules).

``rank`` is read by the low-rank form only.  ``symbol_size`` is the width of every symbol (and
rank component) embedding, ``mlp_size`` the hidden width of the residual MLPs that turn
embeddings into rule logits.

>>> GrammarConfig.preset("tiny", vocab_size=50).rule_form, GrammarConfig.preset("tiny", vocab_size=50).chart_rank
('simple', 4)
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass
from typing import Any, Dict

from ..settings import DictConfig, SettingError, check_settings, setting

#: Upper bounds: beyond them the rank-space inside (O(n^3 r + n^2 r^2)) and the emission
#: matrix (p x vocab) stop fitting a CPU; a typo such as ``rank=50000`` fails here, not in OOM.
MAX_SYMBOLS = 4096
MAX_WIDTH = 8192
MAX_VOCAB = 5_000_000
#: The most binary rules ``m (m+p)^2`` a grammar of the full form may have.  Its inside runs in
#: rank space with one component per child pair, O(n^2 (m+p)^4) a sentence: seconds for the tiny
#: preset (400 rules), hours for the small one (243,000), so the form is for tests and toys.
FULL_RULES = 1 << 14
#: The most binary rules ``onparse grammar`` lists (``--rules``): a medium grammar has 18.9 million,
#: and a list of them all would take GBs (a report's rules are sorted tuples, then text).
MOST_RULES = 100_000
#: The forms of the binary rules (module docstring).  A grammar file written before the form was a
#: setting holds low-rank rules, the dataclass default; every preset takes the simple form, the
#: one that learns (research/RESULTS.md, "Grammars that learn").
RULE_FORMS = ("simple", "low_rank", "full")

#: Sizes and form only: the vocabulary comes from the corpus (``GrammarConfig.preset(name,
#: vocab_size)``).  ``small`` is N-PCFG's symbol counts (Kim et al. 2019), ``large`` TN-PCFG's
#: (Yang et al. 2021); see ``docs/pcfg.md`` for their CPU cost.
GRAMMAR_PRESETS: Dict[str, Dict[str, Any]] = {
    "tiny": dict(rule_form="simple", n_nonterminals=4, n_preterminals=6, rank=8, symbol_size=16, mlp_size=16),
    "small": dict(rule_form="simple", n_nonterminals=30, n_preterminals=60, rank=64, symbol_size=128, mlp_size=128),
    "medium": dict(rule_form="simple", n_nonterminals=128, n_preterminals=256, rank=256, symbol_size=256,
                   mlp_size=256),
    "large": dict(rule_form="simple", n_nonterminals=250, n_preterminals=500, rank=500, symbol_size=256,
                  mlp_size=256),
}
#: The settings a preset sets and the flag of each (``onparse train --family grammar --nonterminals
#: ... --rule-form``, and the messages that name them): the field's name less ``n_``, dashed.
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
    rank: int = setting(MISSING, "rank of the binary rules (r; the low_rank form only)", "count", most=MAX_SYMBOLS)
    symbol_size: int = setting(MISSING, "width of the symbol embeddings", "count", most=MAX_WIDTH)
    mlp_size: int = setting(MISSING, "hidden width of the rule MLPs", "count", most=MAX_WIDTH)
    rule_form: str = setting("low_rank", "form of the binary rules: simple (independent left and right child), "
                             "low_rank (rank r) or full (tiny grammars only)", "choice", choices=RULE_FORMS)

    def __post_init__(self) -> None:
        check_settings(self)
        if self.rule_form == "full" and self.n_nonterminals * self.n_symbols ** 2 > FULL_RULES:
            raise SettingError(f"the full rule form holds m (m+p)^2 = {self.n_nonterminals * self.n_symbols ** 2:,} "
                               f"rules, more than {FULL_RULES:,}: use rule_form simple or low_rank")

    @property
    def n_symbols(self) -> int:
        """m + p: the symbols a binary rule's child can be."""
        return self.n_nonterminals + self.n_preterminals

    @property
    def chart_rank(self) -> int:
        """The width of the inside chart's cells (what its cost scales with): r for the low-rank
        form, m for the simple one (its rank-space form has U = identity), (m+p)^2 for the full
        one (one component per child pair)."""
        return {"low_rank": self.rank, "simple": self.n_nonterminals, "full": self.n_symbols ** 2}[self.rule_form]

    def parameter_shapes(self) -> Dict[str, tuple]:
        """Name -> shape of every weight of :class:`~onparse.grammar.model.NeuralPCFG`, computed
        without allocating (a grammar file is checked against them before any model is built)."""
        d, h, m = self.symbol_size, self.mlp_size, self.n_nonterminals
        shapes: Dict[str, tuple] = {"start": (1, d), "nonterminals": (m, d), "preterminals": (self.n_preterminals, d)}
        outputs = {"mlp_root": m, "mlp_emit": self.vocab_size}
        if self.rule_form == "low_rank":
            shapes["components"] = (self.rank, d)
            outputs.update(mlp_parent=d, mlp_left=d, mlp_right=d)
        elif self.rule_form == "simple":
            shapes["children"] = (self.n_symbols, d)      # the rules' own symbol embeddings, not the emissions'
            outputs.update(mlp_left=d, mlp_right=d)
        else:
            outputs.update(mlp_rule=self.n_symbols ** 2)
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

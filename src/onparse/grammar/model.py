""":class:`NeuralPCFG`: a neural PCFG over a word vocabulary, its binary rules in one of the
three forms of :mod:`onparse.grammar.config` (``rule_form``).

Every symbol -- the start symbol S, the ``m`` nonterminals, the ``p`` preterminals -- has an
embedding; residual MLPs (Kim et al. 2019's blocks) turn them into the rule log-probabilities of
``docs/pcfg.md``:

- root ``pi = softmax(mlp_root(e_S))`` over the m nonterminals;
- emissions ``E[P] = softmax(mlp_emit(e_P))`` over the vocabulary;
- ``simple``: ``L[A] = softmax_B(mlp_left(e_A) . c_B)`` and ``R[A]`` likewise (``mlp_right``) over
  the m + p symbols, ``c`` the rules' own child embeddings (the preterminals' emission
  embeddings stay theirs); ``T[A, B, C] = L[A, B] R[A, C]``;
- ``low_rank``: with an embedding ``e_q`` per rank component, ``U[A] = softmax_q(mlp_parent(e_A)
  . e_q)``, ``V[:, q] = softmax_B(mlp_left(e_B) . e_q)`` and ``W[:, q]`` likewise;
  ``T[A, B, C] = sum_q U[A, q] V[B, q] W[C, q]``;
- ``full``: ``T[A] = softmax_{B,C}(mlp_rule(e_A))``.

Every form reaches the inside as rank-space rules (:class:`~onparse.grammar.inside.RankRules`):
the simple form is rank m with ``U`` the identity, ``V = L^T`` and ``W = R^T``; the full form is
rank (m+p)^2, one component per child pair, with one-hot ``V`` and ``W``.  So one inside, one
marginal pass and one sampler serve the three.

The rules do not depend on the sentence (no compound latent), so they carry no batch dimension
and are computed once per batch.
"""
from __future__ import annotations

import math
from typing import List, NamedTuple, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .config import GrammarConfig
from ..trees.span_trees import cyk
from .inside import (NEG, RankRules, Samples, full_rules_from_rank, labelled_marginals, rank_inside, sample,
                     span_labels, symbol_name)


class GrammarRules(NamedTuple):
    """The grammar's log-probabilities: ``log_root [m]``, ``log_U [m, r]``, ``log_V [m+p, r]``,
    ``log_W [m+p, r]``, ``log_emission [p, vocab]``."""

    log_root: Tensor
    log_U: Tensor
    log_V: Tensor
    log_W: Tensor
    log_emission: Tensor

    def for_words(self, ids: Tensor) -> RankRules:
        """The :class:`~onparse.grammar.inside.RankRules` of a batch ``ids [B, T]``: the
        emissions of its words ``[B, T, p]`` (a row gather) beside the shared rules."""
        return RankRules(self.log_root, self.log_U, self.log_V, self.log_W, self.log_emission.t()[ids])


class ResidualBlock(nn.Module):
    """``x + relu(lin2(relu(lin1(x))))`` at a constant width (Kim et al.'s residual layer):
    the skip keeps the symbol embeddings' signal through the MLP."""

    def __init__(self, size: int):
        super().__init__()
        self.lin1 = nn.Linear(size, size)
        self.lin2 = nn.Linear(size, size)

    def forward(self, x: Tensor) -> Tensor:
        return x + F.relu(self.lin2(F.relu(self.lin1(x))))


def _full_rules_by_parents(rules: GrammarRules, chunk_size: int = 4_000_000):
    """``(first parent, log T [parents, m+p, m+p])`` a few parents at a time (about
    ``chunk_size`` floats each), so that the full ``m (m+p)^2`` tensor never exists at once."""
    m, n_symbols = rules.log_U.shape[0], rules.log_V.shape[0]
    step = max(1, chunk_size // (n_symbols * n_symbols))
    for start in range(0, m, step):
        yield start, full_rules_from_rank(rules.log_U[start:start + step], rules.log_V, rules.log_W)


def _log_one_hot(index: Tensor, size: int) -> Tensor:
    """``[size, len(index)]``: column k is log one-hot(index[k]) (0 there, ``NEG`` elsewhere)."""
    out = torch.full((size, len(index)), NEG)
    out[index, torch.arange(len(index))] = 0.0
    return out


def _mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), ResidualBlock(hidden), ResidualBlock(hidden),
                         nn.Linear(hidden, d_out))


class NeuralPCFG(nn.Module):
    """A neural PCFG built from a :class:`GrammarConfig` (its ``rule_form``: module docstring).

    Sentences are ``ids [B, T]`` (word ids, padding anything in range) with ``lengths [B]``.
    """

    def __init__(self, config: GrammarConfig):
        super().__init__()
        self.config = config
        d, h, m, n_symbols = config.symbol_size, config.mlp_size, config.n_nonterminals, config.n_symbols
        self.start = nn.Parameter(torch.empty(1, d))
        self.nonterminals = nn.Parameter(torch.empty(m, d))
        self.preterminals = nn.Parameter(torch.empty(config.n_preterminals, d))
        self.mlp_root = _mlp(d, h, m)
        self.mlp_emit = _mlp(d, h, config.vocab_size)
        if config.rule_form == "low_rank":
            self.components = nn.Parameter(torch.empty(config.rank, d))      # the q embeddings
            self.mlp_parent, self.mlp_left, self.mlp_right = _mlp(d, h, d), _mlp(d, h, d), _mlp(d, h, d)
        elif config.rule_form == "simple":
            # ``children`` would shadow nn.Module.children(); files name it ``children``
            # (GrammarConfig.parameter_shapes), see state_dict / load_state_dict.
            self.child_symbols = nn.Parameter(torch.empty(n_symbols, d))
            self.mlp_left, self.mlp_right = _mlp(d, h, d), _mlp(d, h, d)
        else:
            self.mlp_rule = _mlp(d, h, n_symbols * n_symbols)
            pairs = torch.arange(n_symbols * n_symbols)
            # The full form's rank space: component q = (B, C) has V[:, q] = one-hot(B), W[:, q] = one-hot(C).
            self.register_buffer("pair_left", _log_one_hot(pairs // n_symbols, n_symbols), persistent=False)
            self.register_buffer("pair_right", _log_one_hot(pairs % n_symbols, n_symbols), persistent=False)
        if config.rule_form != "low_rank":
            self.register_buffer("log_identity", _log_one_hot(torch.arange(m), m), persistent=False)
        # Xavier for every matrix, as Kim et al.; biases keep nn.Linear's default.
        for parameter in self.parameters():
            if parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)

    def state_dict(self, *args, **kwargs):
        state = super().state_dict(*args, **kwargs)
        if "child_symbols" in state:
            state["children"] = state.pop("child_symbols")
        return state

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        state_dict = {("child_symbols" if k == "children" else k): v for k, v in state_dict.items()}
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def rules(self) -> GrammarRules:
        """The rule log-probabilities as rank-space rules (:class:`GrammarRules`, no batch dim;
        module docstring).  Cost: O(p h vocab) for the emissions (the bulk); the binary rules
        O((m + p) r d) (low rank), O(m (m + p) d) (simple), O(m h (m + p)^2) (full)."""
        form = self.config.rule_form
        log_root = self.mlp_root(self.start).squeeze(0).log_softmax(-1)
        log_emission = self.mlp_emit(self.preterminals).log_softmax(-1)
        if form == "low_rank":
            symbols = torch.cat([self.nonterminals, self.preterminals])      # [m + p, d]
            log_U = (self.mlp_parent(self.nonterminals) @ self.components.t()).log_softmax(-1)
            log_V = (self.mlp_left(symbols) @ self.components.t()).log_softmax(0)
            log_W = (self.mlp_right(symbols) @ self.components.t()).log_softmax(0)
        elif form == "simple":
            log_U = self.log_identity
            log_V = (self.mlp_left(self.nonterminals) @ self.child_symbols.t()).log_softmax(-1).t()   # [m + p, m]
            log_W = (self.mlp_right(self.nonterminals) @ self.child_symbols.t()).log_softmax(-1).t()
        else:
            log_U = self.mlp_rule(self.nonterminals).log_softmax(-1)        # [m, (m + p)^2]
            log_V, log_W = self.pair_left, self.pair_right
        return GrammarRules(log_root, log_U, log_V, log_W, log_emission)

    def forward(self, ids: Tensor, lengths: Tensor) -> Tensor:
        """``log Z [B]``: each sentence's log-probability (``-inf`` for one-word sentences).
        Cost: :meth:`rules` + :func:`~onparse.grammar.inside.rank_inside`."""
        return rank_inside(self.rules().for_words(ids), lengths)

    def loss(self, ids: Tensor, lengths: Tensor) -> Tensor:
        """The training loss: minus the mean ``log Z`` PER SENTENCE over the sentences of at
        least two words (as Kim et al.; others are left out).  0 when there are none."""
        z = self(ids, lengths)
        keep = torch.isfinite(z)
        return -z[keep].sum() / max(1, int(keep.sum()))

    @torch.no_grad()
    def log_likelihood(self, ids: Tensor, lengths: Tensor) -> Tuple[float, int, int]:
        """``(sum of log Z, words, sentences)`` over the sentences of at least two words, for
        per-word perplexity ``exp(-sum / words)`` accumulated over batches."""
        z = self(ids, lengths)
        keep = torch.isfinite(z)
        return float(z[keep].sum()), int(lengths[keep].sum()), int(keep.sum())

    @torch.no_grad()
    def parse(self, ids: Tensor, lengths: Tensor) -> Tuple[List[List[Tuple[int, int]]], List[List[str]]]:
        """Per sentence, its MBR tree's spans of width >= 2 (outermost first) and their labels
        ``"NT-k"`` (each span's most probable nonterminal), aligned.  One-word sentences get
        ``([], [])``.  One forward and one backward pass of the labelled inside: the span
        marginals are the labelled ones summed over nonterminals.  Works under no_grad."""
        rules = self.rules().for_words(ids)
        labelled = labelled_marginals(rules, lengths)[0]
        spans = cyk(labelled.sum(-1), lengths)
        labels = span_labels(rules, lengths, spans, marginals=labelled)
        return spans, [[f"NT-{a}" for a in row] for row in labels]

    @torch.no_grad()
    def top_rules(self, k: int = 20, chunk_size: int = 4_000_000) -> List[Tuple[str, str, str, float]]:
        """The ``k`` most probable binary rules ``(A, B, C, T[A, B, C])`` over every parent, best
        first, names as :func:`~onparse.grammar.inside.symbol_name`; ``k`` is capped at the
        ``m (m+p)^2`` rules there are.  Built a few parents at a time (about ``chunk_size``
        floats each) so that the full tensor never exists.  Memory O(k + chunk_size) (callers
        bound ``k``: :data:`~onparse.grammar.config.MOST_RULES`).  Cost: O(m (m+p)^2 r) (seconds
        for the small preset, minutes for the large)."""
        rules = self.rules()
        m, n_symbols = self.config.n_nonterminals, self.config.n_symbols
        k = min(k, m * n_symbols * n_symbols)
        best_values, best_index = rules.log_U.new_empty(0), torch.empty(0, dtype=torch.long)
        for start, table in _full_rules_by_parents(rules, chunk_size):
            table = table.flatten()
            values, index = table.topk(min(k, table.numel()))
            best_values = torch.cat([best_values, values])
            best_index = torch.cat([best_index, index + start * n_symbols * n_symbols])
            best_values, keep = best_values.topk(min(k, best_values.numel()))
            best_index = best_index[keep]
        out = []
        for value, index in zip(best_values.tolist(), best_index.tolist()):
            parent, rest = divmod(index, n_symbols * n_symbols)
            left, right = divmod(rest, n_symbols)
            out.append((symbol_name(parent, m), symbol_name(left, m), symbol_name(right, m),
                        math.exp(value)))
        return out

    @torch.no_grad()
    def rule_entropy(self, most_work: int = 1 << 30) -> Optional[float]:
        """The mean over nonterminals A of the entropy (nats) of ``P(B C | A)``; None for a
        low-rank grammar whose exact figure would cost more than ``most_work`` multiply-adds
        (``m (m+p)^2 r``: the medium and large presets).  Cost: O(m (m+p) d) (simple),
        O(m (m+p)^2) (full), O(m (m+p)^2 r) (low rank, a few parents at a time)."""
        rules, config = self.rules(), self.config

        def entropy(log_p: Tensor) -> Tensor:          # over the last dim; log 0 read as 0 p log p
            return -(log_p.exp() * log_p.clamp(min=-1e4)).sum(-1)

        if config.rule_form == "simple":                # independent children: the entropies add
            per_parent = entropy(rules.log_V.t()) + entropy(rules.log_W.t())
        elif config.rule_form == "full":
            per_parent = entropy(rules.log_U)
        else:
            if config.n_nonterminals * config.n_symbols ** 2 * config.rank > most_work:
                return None
            per_parent = torch.cat([entropy(table.flatten(-2)) for _, table in _full_rules_by_parents(rules)])
        return float(per_parent.mean())

    @torch.no_grad()
    def top_words(self, words: Sequence[str], k: int = 10) -> List[List[Tuple[str, float]]]:
        """Per preterminal ``PT-P``, its ``k`` most probable words as ``(word, E[P, w])``;
        ``words`` maps ids to strings (``len(words) == vocab_size``)."""
        if len(words) != self.config.vocab_size:
            raise ValueError(f"{len(words)} words given for a vocabulary of {self.config.vocab_size}")
        values, index = self.rules().log_emission.topk(min(k, self.config.vocab_size), -1)
        return [[(words[i], float(v)) for v, i in zip(row_v, row_i)]
                for row_v, row_i in zip(values.exp().tolist(), index.tolist())]

    @torch.no_grad()
    def sample(self, n: int, generator: Optional[torch.Generator] = None,
               max_length: int = 60) -> Samples:
        """``n`` sentences drawn from the grammar as ``(word ids, tree)``, trees as nested
        ``(label, left, right)`` / ``(label, word id)`` tuples; see
        :func:`~onparse.grammar.inside.sample` (length guard, reproducibility, the bounded work:
        fewer than ``n`` and ``gave_up`` when the budget of draws ran out)."""
        rules = self.rules()
        return sample(*rules, n=n, generator=generator or torch.Generator().manual_seed(0),
                      max_length=max_length)

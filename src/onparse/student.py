"""The student of ``onparse distill``: a span-based unlabelled constituency parser trained on a
teacher's trees (self-training; Mohananey et al. 2020, Shayegh et al. 2024).

Model (Stern et al. 2017, Kitaev & Klein 2018, unlabelled): word embeddings, a BiLSTM, and for
every span ``(i, j)`` of the sentence the boundary feature ``[f_j - f_i ; b_i - b_j]`` (forward
states at the span's two ends, backward states likewise; ``f_0`` and ``b_n`` are zero), scored
by a one-hidden-layer MLP.  Because the MLP's first layer is linear, its pre-activation is
``g_j - g_i`` with ``g_k = W_f f_k - W_b b_k``: one projection per boundary, not per span.
Trees are scored as the sum of their spans' scores (:mod:`onparse.span_trees`), trained with the
tree-CRF loss ``log Z - score(teacher tree)`` and decoded by CYK.

Shapes: B sentences, T the longest of them, H the LSTM width per direction, M the MLP width.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import List, Sequence

import torch
from torch import Tensor, nn

from .span_trees import cyk, inside, tree_score
from .trees import Span


@dataclass(frozen=True)
class StudentConfig:
    """Sizes of a student parser."""

    vocab_size: int
    embedding_size: int = 100
    hidden_size: int = 200         # per direction
    n_layers: int = 2
    mlp_size: int = 200
    dropout: float = 0.2

    def to_dict(self) -> dict:
        return asdict(self)


class SpanStudent(nn.Module):
    """Scores every span of a batch of sentences (module docstring)."""

    def __init__(self, config: StudentConfig):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config.vocab_size, config.embedding_size)
        self.lstm = nn.LSTM(config.embedding_size, config.hidden_size, config.n_layers, batch_first=True,
                            bidirectional=True, dropout=config.dropout if config.n_layers > 1 else 0.0)
        self.drop = nn.Dropout(config.dropout)
        self.boundary = nn.Linear(2 * config.hidden_size, config.mlp_size)
        self.out = nn.Linear(config.mlp_size, 1)

    def forward(self, ids: Tensor, lengths: Tensor) -> Tensor:
        """``ids`` ``[B, T]`` (padded), ``lengths`` ``[B]`` -> span scores ``[B, T + 1, T + 1]``
        (``[b, i, j]`` for ``i < j <= lengths[b]``; the other entries are not meaningful)."""
        x = self.drop(self.embedding(ids))
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        states, _ = self.lstm(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(states, batch_first=True, total_length=ids.shape[1])
        forward, backward = states.chunk(2, dim=-1)                     # [B, T, H] each
        zero = states.new_zeros(states.shape[0], 1, forward.shape[-1])
        f = torch.cat([zero, forward], dim=1)                           # f_k: after word k - 1
        b = torch.cat([backward, zero], dim=1)                          # b_k: from word k on
        # Backward states at the padding of a shorter sentence are zero too (pad_packed), so
        # b_n = 0 holds for every sentence.
        h = self.config.hidden_size
        weight = self.boundary.weight                                   # [M, 2H]
        g = self.drop(f) @ weight[:, :h].T - self.drop(b) @ weight[:, h:].T   # [B, T + 1, M]
        hidden = torch.relu(g[:, None, :, :] - g[:, :, None, :] + self.boundary.bias)   # [B, i, j, M]
        return self.out(self.drop(hidden)).squeeze(-1)

    def loss(self, ids: Tensor, lengths: Tensor, spans: Sequence[Sequence[Span]]) -> Tensor:
        """Mean tree-CRF loss of the teacher trees ``spans`` (one list of spans per sentence)."""
        scores = self(ids, lengths)
        return (inside(scores, lengths) - tree_score(scores, spans)).mean()

    @torch.no_grad()
    def parse(self, ids: Tensor, lengths: Tensor) -> List[List[Span]]:
        """The best tree of every sentence (CYK), as its spans of at least two words."""
        was = self.training
        self.eval()
        try:
            return cyk(self(ids, lengths), lengths)
        finally:
            self.train(was)

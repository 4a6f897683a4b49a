"""The student of ``onparse distill``: a span-based unlabelled constituency parser trained on a
teacher's trees (self-training; Mohananey et al. 2020, Shayegh et al. 2024).

Model (Stern et al. 2017, Kitaev & Klein 2018, unlabelled): word embeddings, a BiLSTM, and for
every span ``(i, j)`` of the sentence the boundary feature ``[f_j - f_i ; b_i - b_j]`` (forward
states at the span's two ends, backward states likewise; ``f_0`` and ``b_n`` are zero), scored
by a one-hidden-layer MLP.  Because the MLP's first layer is linear, its pre-activation is
``g_j - g_i`` with ``g_k = W_f f_k - W_b b_k``: one projection per boundary, not per span.
Trees are scored as the sum of their spans' scores (:mod:`onparse.trees.span_trees`), trained with the
tree-CRF loss ``log Z - score(teacher tree)`` and decoded by CYK.

Shapes: B sentences, T the longest of them, H the LSTM width per direction, M the MLP width.
"""
from __future__ import annotations

from typing import List, Sequence

import torch
from torch import Tensor, nn

from ..trees import average
from ..trees.span_trees import cyk, inside, tree_score
from .config import StudentConfig
from ..text.tokens import normalize_word
from ..trees.tree import Span, spans_to_tree


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
        g = self.boundaries(ids, lengths)
        hidden = torch.relu(g[:, None, :, :] - g[:, :, None, :] + self.boundary.bias)   # [B, i, j, M]
        return self.out(self.drop(hidden)).squeeze(-1)

    def boundaries(self, ids: Tensor, lengths: Tensor) -> Tensor:
        """``[B, T + 1, M]``: ``g_k`` of every boundary ``k`` (module docstring); the span
        ``(i, j)`` scores ``out(relu(g_j - g_i + bias))``."""
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
        return self.drop(f) @ weight[:, :h].T - self.drop(b) @ weight[:, h:].T   # [B, T + 1, M]

    @torch.no_grad()
    def span_scores(self, g: Tensor, max_cells: int = None) -> Tensor:
        """The scores :meth:`forward` gives from boundaries ``g`` ``[B, T + 1, M]`` (in eval
        mode, without gradients), computed a block of rows ``i`` at a time so that the
        ``[B, rows, T + 1, M]`` MLP layer holds at most about ``max_cells`` (default
        :data:`MAX_CELLS`) span cells: memory O(B T^2 + max_cells M) for any T.  Only the
        meaningful entries ``i < j`` are computed; the others are 0."""
        batch, size = g.shape[0], g.shape[1]
        rows = max(1, (max_cells or MAX_CELLS) // (batch * size))
        out = g.new_zeros(batch, size, size)
        for start in range(0, size - 1, rows):
            stop = min(size - 1, start + rows)
            hidden = g[:, None, start + 1:, :] - g[:, start:stop, None, :]    # [B, rows, j > start, M]
            hidden += self.boundary.bias
            hidden.relu_()
            out[:, start:stop, start + 1:] = self.out(self.drop(hidden)).squeeze(-1)
        return out

    def loss(self, ids: Tensor, lengths: Tensor, spans: Sequence[Sequence[Span]]) -> Tensor:
        """Mean tree-CRF loss of the teacher trees ``spans`` (one list of spans per sentence)."""
        scores = self(ids, lengths)
        return (inside(scores, lengths) - tree_score(scores, spans)).mean()

    @torch.no_grad()
    def parse(self, ids: Tensor, lengths: Tensor) -> List[List[Span]]:
        """The best tree of every sentence (CYK), as its spans of at least two words.  Memory:
        O(B T^2) for the scores (the MLP runs in blocks, :meth:`span_scores`); time O(T^3)."""
        was = self.training
        self.eval()
        try:
            return cyk(self.span_scores(self.boundaries(ids, lengths)), lengths)
        finally:
            self.train(was)

    @torch.no_grad()
    def parse_in_pieces(self, ids: Tensor, piece: int) -> List[Span]:
        """A tree of one long sentence (``ids`` ``[1, n]``) built in pieces of at most
        ``piece`` words: the BiLSTM reads the whole sentence, the words are cut into
        ``ceil(n / piece)`` consecutive pieces of near-equal length, each piece gets its best
        tree (CYK) and the pieces are joined by the best tree over them (CYK on the scores of
        the spans between piece boundaries).  Every piece is a span of the tree, so it is the
        best tree only when the pieces are constituents of it.  Memory O(n + piece^2), time
        O(n piece^2)."""
        was = self.training
        self.eval()
        try:
            n = ids.shape[1]
            g = self.boundaries(ids, torch.tensor([n]))                     # [1, n + 1, M]
            count = -(-n // piece)
            bounds = [p * n // count for p in range(count + 1)]
            top = cyk(self.span_scores(g[:, bounds]), torch.tensor([count]))[0]
            spans = [(bounds[p], bounds[q]) for p, q in top]
            for start, stop in zip(bounds, bounds[1:]):
                inner = cyk(self.span_scores(g[:, start:stop + 1]), torch.tensor([stop - start]))[0]
                spans += [(start + i, start + j) for i, j in inner]
            return spans
        finally:
            self.train(was)


#: The words of each piece of a sentence too long to parse whole (more than
#: :data:`onparse.trees.average.MAX_WORDS`): its time is then linear in its length, about 0.5 ms a word
#: on one thread (2,000-word pieces cost 3 ms a word: 5 minutes for a 100,000-word line).
PIECE_WORDS = 500
#: Span cells (sentences x (words + 1)^2) scored at once when parsing: bounds the memory of the
#: ``[B, rows, T + 1, M]`` MLP layer (about 100 MB at the default M = 200; :meth:`SpanStudent.span_scores`).
MAX_CELLS = 1 << 17


def encode(token_lists: Sequence[Sequence[str]], vocab) -> "tuple[Tensor, Tensor]":
    """``(ids [B, T], lengths [B])`` of non-empty token lists in ``vocab`` (normalised words;
    unknown ones are ``<unk>``), padded with ``<unk>``."""
    lengths = torch.tensor([len(t) for t in token_lists], dtype=torch.long)
    ids = torch.full((len(token_lists), int(lengths.max())), vocab.unk_id, dtype=torch.long)
    for b, tokens in enumerate(token_lists):
        ids[b, :len(tokens)] = torch.tensor([vocab.index(normalize_word(t)) for t in tokens], dtype=torch.long)
    return ids, lengths


def length_batches(lengths: Sequence[int], batch_size: int, max_cells: int = MAX_CELLS) -> List[List[int]]:
    """Indices of sentences of ``lengths`` grouped by length (shortest first), at most
    ``batch_size`` a group and at most ``max_cells`` span cells (a longer sentence goes alone:
    its MLP still runs in blocks of ``max_cells``, :meth:`SpanStudent.span_scores`)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: List[List[int]] = []
    for i in order:
        cells = (lengths[i] + 1) ** 2
        if groups and len(groups[-1]) < batch_size and (len(groups[-1]) + 1) * cells <= max_cells:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


class StudentTrees(list):
    """The student's trees (a list, in input order), with ``too_long``: the 0-based indices of
    the sentences longer than :data:`onparse.trees.average.MAX_WORDS`, whose tree was built in pieces
    (:meth:`SpanStudent.parse_in_pieces`)."""

    too_long: List[int]


def student_trees(model: SpanStudent, vocab, token_lists: Sequence[Sequence[str]], batch_size: int,
                  progress=None) -> StudentTrees:
    """The student's tree of every token list (nested tuples; None for an empty one), in order,
    ``batch_size`` sentences at a time (the caller's: :data:`onparse.devices.BATCH_SIZE` by device).
    ``progress(k)`` is called with the sentences of each batch done.  Cost: O(n^2) span scores
    and O(n^3) CYK per sentence, batched by length; a sentence longer than
    :data:`onparse.trees.average.MAX_WORDS` is parsed in pieces of at most :data:`PIECE_WORDS` words
    and listed in ``too_long`` (memory O(n + PIECE_WORDS^2 + (n / PIECE_WORDS)^2), time
    O(n PIECE_WORDS^2 + (n / PIECE_WORDS)^3))."""
    out = StudentTrees([None] * len(token_lists))
    cap = average.MAX_WORDS                     # one length cap for averaging and the student
    out.too_long = [i for i, t in enumerate(token_lists) if len(t) > cap]
    full = [i for i, t in enumerate(token_lists) if 0 < len(t) <= cap]
    device = next(model.parameters()).device
    for group in length_batches([len(token_lists[i]) for i in full], batch_size):
        chosen = [list(token_lists[full[k]]) for k in group]
        ids, lengths = encode(chosen, vocab)
        for k, tokens, spans in zip(group, chosen, model.parse(ids.to(device), lengths.to(device))):
            out[full[k]] = spans_to_tree(tokens, spans)
        if progress is not None:
            progress(len(group))
    for i in out.too_long:
        tokens = list(token_lists[i])
        ids, _ = encode([tokens], vocab)
        out[i] = spans_to_tree(tokens, model.parse_in_pieces(ids.to(device), min(cap, PIECE_WORDS)))
        if progress is not None:
            progress(1)
    for i, tokens in enumerate(token_lists):
        if not len(tokens) and progress is not None:
            progress(1)
    return out

"""A plain LSTM or GRU language model with the ON-LSTM's regularisation (``docs/onlstm.md``
section 2): :class:`RecurrentLM`.  The same interface as
:class:`onparse.lm.model.ONLSTMLanguageModel` (``init_state``, ``forward`` giving an
:class:`onparse.lm.model.LMOutput`, ``logits``, ``loss``), so that the language model's training
run and perplexity read it unchanged; but it has no master gates, so its output holds no distances.

Shapes: T time steps, B batch, E embedding size, H_l hidden size of layer l, V vocabulary.
"""
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call

from ..lm.model import LMOutput
from .config import RecurrentConfig

State = List[Tuple[Tensor, Tensor]]


def _locked_mask(x: Tensor, p: float) -> Tensor:
    """Variational dropout mask (1, B, D) for x (T, B, D), shared over time, scaled by 1/(1-p)."""
    return x.new_empty(1, x.shape[1], x.shape[2]).bernoulli_(1.0 - p).div_(1.0 - p)


class RecurrentLM(nn.Module):
    """Embedding -> LSTM or GRU layers (sizes E, H, ..., H, E) -> decoder tied to the embedding.

    Parameters: ``embedding.weight`` (V, E), ``decoder_bias`` (V), and per layer ``l`` the
    torch cell's own ``layers.{l}.weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``.
    A GRU has no cell state: its state keeps the language model's shape, ``(h, c)`` per layer,
    with ``c`` empty (B, 0).
    """

    def __init__(self, config: RecurrentConfig):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config.vocab_size, config.embedding_size)
        sizes = [config.embedding_size] + config.layer_sizes()
        cell = nn.LSTM if config.cell == "lstm" else nn.GRU
        self.layers = nn.ModuleList(cell(n_in, n_out) for n_in, n_out in zip(sizes[:-1], sizes[1:]))
        self.decoder_bias = nn.Parameter(torch.zeros(config.vocab_size))
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)

    def init_state(self, batch_size: int) -> State:
        """Zero state: per layer (h (B, H_l), c (B, H_l), or (B, 0) for a GRU)."""
        ref, lstm = self.decoder_bias, self.config.cell == "lstm"
        return [(ref.new_zeros(batch_size, layer.hidden_size), ref.new_zeros(batch_size, layer.hidden_size if lstm else 0))
                for layer in self.layers]

    def _embed(self, tokens: Tensor, drop: bool) -> Tensor:
        weight = self.embedding.weight
        x = F.embedding(tokens, weight)                       # (T, B, E)
        p = self.config.dropout_word
        if drop and p > 0.0:                                  # whole word types, one draw per entry
            keep = weight.new_empty(weight.shape[0]).bernoulli_(1.0 - p).div_(1.0 - p)
            x = x * keep[tokens].unsqueeze(-1)
        return x

    def _recurrent_weight(self, layer: nn.Module, drop: bool) -> Tensor:
        """DropConnect as the ON-LSTM's: one mask a call in training, no rescaling; (1 - p) in evaluation."""
        w, p = layer.weight_hh_l0, self.config.dropconnect
        if p == 0.0:
            return w
        return w * (torch.rand_like(w) >= p) if drop else w * (1.0 - p)

    def forward(self, tokens: Tensor, state: Optional[State] = None) -> LMOutput:
        """tokens: (T, B) long; state: from :meth:`init_state` or a previous call (None = zeros).
        Dropout (word types, locked, DropConnect) in training mode only; ``distances`` is empty."""
        if tokens.dim() != 2:
            raise ValueError(f"tokens must be (T, B), got shape {tuple(tokens.shape)}")
        cfg, drop = self.config, self.training
        state = self.init_state(tokens.shape[1]) if state is None else state
        x = self._embed(tokens, drop)
        if drop and cfg.dropout_input > 0.0:
            x = x * _locked_mask(x, cfg.dropout_input)
        weights = [self._recurrent_weight(layer, drop) for layer in self.layers]
        new_state = []
        for k, layer in enumerate(self.layers):
            h, c = state[k]
            if cfg.cell == "lstm":
                raw, (h, c) = functional_call(layer, {"weight_hh_l0": weights[k]}, (x, (h[None], c[None])))
                new_state.append((h[0], c[0]))
            else:
                raw, h = functional_call(layer, {"weight_hh_l0": weights[k]}, (x, h[None]))
                new_state.append((h[0], c))
            x = raw
            if drop and k < cfg.n_layers - 1 and cfg.dropout_hidden > 0.0:
                x = raw * _locked_mask(raw, cfg.dropout_hidden)
        output = raw * _locked_mask(raw, cfg.dropout_output) if drop and cfg.dropout_output > 0.0 else raw
        return LMOutput(output, raw, new_state, raw.new_zeros(0))

    def logits(self, output: Tensor) -> Tensor:
        """(..., E) -> (..., V): the decoder tied to the embedding, plus its own bias."""
        return F.linear(output, self.embedding.weight, self.decoder_bias)

    def loss(self, output: Tensor, targets: Tensor) -> Tensor:
        """Mean cross-entropy (nats per token).  output: (T, B, E); targets: (T, B) long."""
        return F.cross_entropy(self.logits(output.reshape(-1, output.shape[-1])), targets.reshape(-1))

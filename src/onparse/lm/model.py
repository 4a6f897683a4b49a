"""The ON-LSTM language model (``docs/onlstm.md`` sections 1-2): cell, layer stack, tied decoder, regularisers.

Shapes: T time steps, B batch, E embedding size, H_l hidden size of layer l, V vocabulary,
L layers, D_m = H_l / C master levels of a layer with chunk size C.

Pre-activation layout of one layer (the checkpoint format; ``G = 2 * D_m + 4 * H``)::

    [ master forget (D_m) | master input (D_m) | output o (H) | forget f (H) | input i (H) | candidate (H) ]

each ordinary block viewed as ``(D_m, C)``: level-major, the C neurons of a level adjacent.

Two implementations of the recurrence compute the same function:

* ``"reference"``: :func:`reference_cell`, one readable step of section 1 called in a Python loop
  and differentiated by autograd.  It is the specification the tests compare against.
* ``"fast"`` (default): :mod:`onparse.lm.cell`, one autograd function per layer and sequence with
  a hand-written backward, few kernels per step, and the weight gradients as one matrix product
  over the whole sequence.

Both read the input projection of the whole sequence in one matrix product before the loop.
"""
import math
from typing import List, NamedTuple, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import cell as _cell
from .config import ModelConfig

State = List[Tuple[Tensor, Tensor]]
IMPLEMENTATIONS = ("fast", "reference")


class LMOutput(NamedTuple):
    output: Tensor      # (T, B, E) last-layer output after output dropout: decoder input, and AR's input
    raw_last: Tensor    # (T, B, E) last-layer output before dropout: TAR's input
    state: list         # per layer a tuple (h (B, H_l), c (B, H_l))
    distances: Tensor   # (L, 2, T, B): [:, 0] master-forget distance d_f, [:, 1] master-input distance d_i


def cumax(x: Tensor, dim: int = -1) -> Tensor:
    """Cumulative softmax: ``cumsum(softmax(x))`` along ``dim``; rises from ~0 to 1."""
    return torch.cumsum(torch.softmax(x, dim=dim), dim=dim)


def reference_cell(z: Tensor, c_prev: Tensor, chunk_size: int):
    """One ON-LSTM step exactly as ``docs/onlstm.md`` section 1 writes it (the readable specification).

    z: (B, G) pre-activations (input projection + recurrent projection + biases), layout as in
    the module docstring.  c_prev: (B, H).
    Returns h (B, H), c (B, H), master forget (B, D_m), master input (B, D_m).
    """
    batch, hidden = c_prev.shape
    levels = hidden // chunk_size
    z_mf, z_mi, z_o, z_f, z_i, z_g = z.split([levels, levels] + [hidden] * 4, dim=1)

    master_f = cumax(z_mf)                      # (B, D_m), rises 0 -> 1
    master_i = 1.0 - cumax(z_mi)                # (B, D_m), falls 1 -> 0
    omega = master_f * master_i                 # overlap of the two

    def by_level(t):                            # (B, H) -> (B, D_m, C)
        return t.reshape(batch, levels, chunk_size)

    f = torch.sigmoid(by_level(z_f))
    i = torch.sigmoid(by_level(z_i))
    o = torch.sigmoid(z_o)
    c_hat = torch.tanh(by_level(z_g))
    mf, mi, w = master_f[:, :, None], master_i[:, :, None], omega[:, :, None]   # broadcast over C
    f_hat = f * w + (mf - w)
    i_hat = i * w + (mi - w)
    c = f_hat * by_level(c_prev) + i_hat * c_hat
    h = o * torch.tanh(c).reshape(batch, hidden)
    return h, c.reshape(batch, hidden), master_f, master_i


def reference_recurrence(xproj: Tensor, weight_hh: Tensor, h0: Tensor, c0: Tensor, chunk_size: int):
    """Run :func:`reference_cell` over a sequence, step by step.

    xproj: (T, B, G) input projection with both biases; weight_hh: (G, H) recurrent weight
    (already masked or scaled); h0, c0: (B, H).
    Returns hs (T, B, H), (h_T, c_T), distances (2, T, B) as ``[d_f, d_i]``.
    """
    h, c = h0, c0
    hs, d_f, d_i = [], [], []
    for t in range(xproj.shape[0]):
        z = xproj[t] + h @ weight_hh.t()
        h, c, master_f, master_i = reference_cell(z, c, chunk_size)
        hs.append(h)
        d_f.append(1.0 - master_f.mean(dim=1))
        d_i.append(master_i.mean(dim=1))
    if not hs:
        empty = xproj.new_zeros(0, xproj.shape[1])
        return xproj.new_zeros(0, *h0.shape), (h, c), torch.stack([empty, empty])
    return torch.stack(hs), (h, c), torch.stack([torch.stack(d_f), torch.stack(d_i)])


class ONLSTMLayer(nn.Module):
    """One ON-LSTM layer: parameters and the sequence-level recurrence.

    Parameters (names are the checkpoint format): ``weight_ih`` (G, In), ``bias_ih`` (G),
    ``weight_hh`` (G, H), ``bias_hh`` (G).
    """

    def __init__(self, input_size: int, hidden_size: int, chunk_size: int):
        super().__init__()
        if hidden_size % chunk_size:
            raise ValueError(f"hidden size {hidden_size} is not a multiple of chunk size {chunk_size}")
        self.input_size, self.hidden_size, self.chunk_size = input_size, hidden_size, chunk_size
        self.n_levels = hidden_size // chunk_size
        gates = 2 * self.n_levels + 4 * hidden_size
        self.weight_ih = nn.Parameter(torch.empty(gates, input_size))
        self.bias_ih = nn.Parameter(torch.empty(gates))
        self.weight_hh = nn.Parameter(torch.empty(gates, hidden_size))
        self.bias_hh = nn.Parameter(torch.empty(gates))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # nn.Linear's default: uniform(+-1/sqrt(fan_in)) for weights and biases.
        for weight, bias in ((self.weight_ih, self.bias_ih), (self.weight_hh, self.bias_hh)):
            bound = 1.0 / math.sqrt(weight.shape[1])
            nn.init.uniform_(weight, -bound, bound)
            nn.init.uniform_(bias, -bound, bound)

    def forward(self, x: Tensor, state: Tuple[Tensor, Tensor], weight_hh: Tensor,
                implementation: str = "fast"):
        """x: (T, B, In); state (h (B, H), c (B, H)); weight_hh: (G, H), the recurrent weight to
        use this call (masked in training, scaled in evaluation).
        Returns hs (T, B, H), (h_T, c_T), distances (2, T, B)."""
        h0, c0 = state
        # One matrix product for the whole sequence; both biases enter here once.
        xproj = torch.addmm(self.bias_ih + self.bias_hh, x.reshape(-1, self.input_size),
                            self.weight_ih.t()).view(x.shape[0], x.shape[1], -1)
        if implementation == "reference":
            return reference_recurrence(xproj, weight_hh, h0, c0, self.chunk_size)
        return _cell.recurrence(xproj, weight_hh, h0, c0, self.chunk_size)


def _locked_mask(x: Tensor, p: float) -> Tensor:
    """Variational dropout mask (1, B, D) for x (T, B, D), shared over time, scaled by 1/(1-p)."""
    return x.new_empty(1, x.shape[1], x.shape[2]).bernoulli_(1.0 - p).div_(1.0 - p)


class ONLSTMLanguageModel(nn.Module):
    """Embedding -> ON-LSTM layers (sizes E, H, ..., H, E) -> decoder tied to the embedding.

    Parameters: ``embedding.weight`` (V, E), ``decoder_bias`` (V), ``layers.{l}.weight_ih``,
    ``layers.{l}.bias_ih``, ``layers.{l}.weight_hh``, ``layers.{l}.bias_hh``.

    ``implementation`` ("fast" or "reference") picks the recurrence; both compute the same
    function and draw the same random masks in the same order.
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self._implementation = "fast"
        self.embedding = nn.Embedding(config.vocab_size, config.embedding_size)
        sizes = [config.embedding_size] + config.layer_sizes()
        self.layers = nn.ModuleList(
            ONLSTMLayer(n_in, n_out, config.chunk_size) for n_in, n_out in zip(sizes[:-1], sizes[1:]))
        self.decoder_bias = nn.Parameter(torch.zeros(config.vocab_size))
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)

    @property
    def implementation(self) -> str:
        """"fast" (default) or "reference": which recurrence and loss code runs."""
        return self._implementation

    @implementation.setter
    def implementation(self, value: str) -> None:
        if value not in IMPLEMENTATIONS:
            raise ValueError(f"implementation must be one of {', '.join(IMPLEMENTATIONS)}, got {value!r}")
        self._implementation = value

    # -- state -------------------------------------------------------------------------------
    def init_state(self, batch_size: int) -> State:
        """Zero state: per layer (h (B, H_l), c (B, H_l)) on the model's device and dtype."""
        ref = self.decoder_bias
        return [(ref.new_zeros(batch_size, layer.hidden_size), ref.new_zeros(batch_size, layer.hidden_size))
                for layer in self.layers]

    # -- forward -----------------------------------------------------------------------------
    def _embed(self, tokens: Tensor, drop: bool) -> Tensor:
        weight = self.embedding.weight
        x = F.embedding(tokens, weight)                       # (T, B, E)
        p = self.config.dropout_word
        if drop and p > 0.0:
            # Drop whole word types: one keep/drop draw per vocabulary entry, applied to the
            # looked-up rows (the same as masking the whole table, without touching V x E values).
            keep = weight.new_empty(weight.shape[0]).bernoulli_(1.0 - p).div_(1.0 - p)
            x = x * keep[tokens].unsqueeze(-1)
        return x

    def _recurrent_weights(self, drop: bool, n_layers: int) -> List[Tensor]:
        p = self.config.dropconnect
        weights = []
        for layer in self.layers[:n_layers]:
            w = layer.weight_hh
            if p == 0.0:
                weights.append(w)
            elif drop:
                # DropConnect: one mask per batch (this call), entries zeroed with prob. p, no
                # rescaling.  (A uniform draw compared with p is twice as fast as bernoulli_.)
                weights.append(w * (torch.rand_like(w) >= p))
            else:
                weights.append(w * (1.0 - p))                  # once per call, not per step
        return weights

    def _run(self, tokens: Tensor, state: Optional[State], drop: bool, n_layers: int):
        """Embedding and the first ``n_layers`` layers.  Returns the last run layer's output
        before dropout (T, B, H), the new state and the distances (n_layers, 2, T, B)."""
        if tokens.dim() != 2:
            raise ValueError(f"tokens must be (T, B), got shape {tuple(tokens.shape)}")
        cfg = self.config
        if state is None:
            state = self.init_state(tokens.shape[1])
        if len(state) < n_layers:
            raise ValueError(f"state has {len(state)} layers, need {n_layers}")
        # Random draws in a fixed order, whatever the implementation: word types, input mask,
        # DropConnect masks, then the masks between layers.
        x = self._embed(tokens, drop)
        if drop and cfg.dropout_input > 0.0:
            x = x * _locked_mask(x, cfg.dropout_input)
        weights = self._recurrent_weights(drop, n_layers)
        new_state, distances = [], []
        for k in range(n_layers):
            raw, layer_state, dist = self.layers[k](x, state[k], weights[k], self.implementation)
            new_state.append(layer_state)
            distances.append(dist)
            x = raw
            if drop and k < cfg.n_layers - 1 and cfg.dropout_hidden > 0.0:
                x = raw * _locked_mask(raw, cfg.dropout_hidden)
        return raw, new_state, torch.stack(distances)

    def forward(self, tokens: Tensor, state: Optional[State] = None) -> LMOutput:
        """tokens: (T, B) long; state: from :meth:`init_state` or a previous call (None = zeros).

        In training mode each call applies the embedding and locked dropouts and draws fresh
        DropConnect masks (one per layer for the whole call); in evaluation mode no dropout and
        the recurrent weights scaled by (1 - p).  The distances do not carry gradients in the
        fast implementation (nothing in the objective uses them).
        """
        cfg = self.config
        raw, new_state, distances = self._run(tokens, state, self.training, cfg.n_layers)
        output = raw
        if self.training and cfg.dropout_output > 0.0:
            output = raw * _locked_mask(raw, cfg.dropout_output)
        return LMOutput(output, raw, new_state, distances)

    def logits(self, output: Tensor) -> Tensor:
        """(..., E) -> (..., V): the decoder tied to the embedding, plus its own bias."""
        return F.linear(output, self.embedding.weight, self.decoder_bias)

    def loss(self, output: Tensor, targets: Tensor) -> Tensor:
        """Mean cross-entropy (nats per token).  output: (T, B, E); targets: (T, B) long."""
        flat, flat_targets = output.reshape(-1, output.shape[-1]), targets.reshape(-1)
        if self.implementation == "reference":
            return F.cross_entropy(self.logits(flat), flat_targets)
        return _cell.linear_cross_entropy(flat, self.embedding.weight, self.decoder_bias, flat_targets)

    @torch.no_grad()
    def distances(self, tokens: Tensor, n_layers: Optional[int] = None) -> Tensor:
        """Distances of ``tokens`` (T, B) from a zero state with evaluation-mode weights (whatever
        the module's mode), running only the first ``n_layers`` layers and never the decoder.

        Returns (n_layers, 2, T, B): ``[:, 0]`` d_f, ``[:, 1]`` d_i.  Every column depends only on
        its own tokens and earlier steps, so right-padding a sentence does not change its values.
        """
        n = self.config.n_layers if n_layers is None else n_layers
        if not 1 <= n <= self.config.n_layers:
            raise ValueError(f"n_layers must be in 1..{self.config.n_layers}, got {n}")
        return self._run(tokens, None, False, n)[2]

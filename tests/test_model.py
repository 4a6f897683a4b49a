"""The ON-LSTM language model: cell maths, fast path == reference path, regularisers, interface."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import NO_DROPOUT, TINY, random_tokens, run_both, tiny_model
from onparse.lm import cell
from onparse.lm.model import (LMOutput, ModelConfig, ONLSTMLanguageModel, cumax, reference_cell,
                           reference_recurrence)

# Tiny tensors gain nothing from threads, and on a busy machine a parallel region on a few
# hundred numbers can wait a whole scheduler slice.
pytestmark = pytest.mark.usefixtures("one_thread")


# --- configuration --------------------------------------------------------------------------

def test_config_round_trip_and_defaults_are_the_papers():
    cfg = ModelConfig(vocab_size=10000)
    assert (cfg.embedding_size, cfg.hidden_size, cfg.n_layers, cfg.chunk_size) == (400, 1150, 3, 10)
    assert (cfg.dropout_word, cfg.dropout_input, cfg.dropout_hidden, cfg.dropout_output,
            cfg.dropconnect) == (0.1, 0.5, 0.3, 0.45, 0.45)
    assert cfg.layer_sizes() == [1150, 1150, 400]
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown model config keys: hiden_size"):
        ModelConfig.from_dict({**cfg.to_dict(), "hiden_size": 3})
    with pytest.raises(ValueError, match="multiple of chunk_size"):
        ModelConfig(vocab_size=10, embedding_size=12, hidden_size=13, chunk_size=3)
    with pytest.raises(ValueError, match="dropconnect"):
        ModelConfig(vocab_size=10, dropconnect=1.0)
    with pytest.raises(ValueError, match="vocab_size"):
        ModelConfig(vocab_size=0)


def test_parameter_names_and_shapes_are_the_checkpoint_format():
    model = ONLSTMLanguageModel(ModelConfig(**TINY))
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    # G = 2 * D_m + 4 * H: 2 * 6 + 72 = 84 for the hidden layers, 2 * 4 + 48 = 56 for the last.
    assert shapes == {
        "embedding.weight": (23, 12), "decoder_bias": (23,),
        "layers.0.weight_ih": (84, 12), "layers.0.bias_ih": (84,),
        "layers.0.weight_hh": (84, 18), "layers.0.bias_hh": (84,),
        "layers.1.weight_ih": (84, 18), "layers.1.bias_ih": (84,),
        "layers.1.weight_hh": (84, 18), "layers.1.bias_hh": (84,),
        "layers.2.weight_ih": (56, 18), "layers.2.bias_ih": (56,),
        "layers.2.weight_hh": (56, 12), "layers.2.bias_hh": (56,),
    }
    assert model.embedding.weight.abs().max() <= 0.1
    assert torch.all(model.decoder_bias == 0)


# --- the cell against an independent NumPy step ---------------------------------------------

def numpy_step(z, c_prev, chunk):
    """Section 1 of ``docs/onlstm.md`` written from scratch with explicit loops over levels."""
    batch, hidden = c_prev.shape
    levels = hidden // chunk
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    h = np.zeros_like(c_prev)
    c = np.zeros_like(c_prev)
    d_f = np.zeros(batch)
    d_i = np.zeros(batch)
    for b in range(batch):
        zf, zi = z[b, :levels], z[b, levels:2 * levels]
        pf = np.exp(zf - zf.max()) / np.exp(zf - zf.max()).sum()
        pi = np.exp(zi - zi.max()) / np.exp(zi - zi.max()).sum()
        mf = np.array([pf[:k + 1].sum() for k in range(levels)])
        mi = np.array([1.0 - pi[:k + 1].sum() for k in range(levels)])
        d_f[b] = 1.0 - mf.mean()
        d_i[b] = mi.mean()
        base = 2 * levels
        for n in range(hidden):
            k = n // chunk                                   # the neuron's level
            o = sig(z[b, base + n])
            f = sig(z[b, base + hidden + n])
            i = sig(z[b, base + 2 * hidden + n])
            g = np.tanh(z[b, base + 3 * hidden + n])
            w = mf[k] * mi[k]
            f_hat = f * w + (mf[k] - w)
            i_hat = i * w + (mi[k] - w)
            c[b, n] = f_hat * c_prev[b, n] + i_hat * g
            h[b, n] = o * np.tanh(c[b, n])
    return h, c, d_f, d_i


def test_reference_cell_matches_a_hand_written_step():
    rng = np.random.RandomState(3)
    batch, hidden, chunk = 2, 6, 2
    z = rng.randn(batch, 2 * 3 + 4 * hidden) * 2
    c_prev = rng.randn(batch, hidden)
    h, c, mf, mi = reference_cell(torch.from_numpy(z), torch.from_numpy(c_prev), chunk)
    eh, ec, ed_f, ed_i = numpy_step(z, c_prev, chunk)
    np.testing.assert_allclose(h.numpy(), eh, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.numpy(), ec, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((1 - mf.mean(1)).numpy(), ed_f, rtol=1e-12)
    np.testing.assert_allclose(mi.mean(1).numpy(), ed_i, rtol=1e-12)


def test_a_cell_step_by_hand():
    # One level of two neurons: softmax over one level is 1, so f~ = 1, i~ = 0, w = 0:
    # f^ = 1 and i^ = 0, the cell copies its memory whatever the ordinary gates say.
    z = torch.tensor([[0.3, -0.7, 0.0, 0.0, 5.0, 5.0, -5.0, -5.0, 1.0, 1.0]])
    c_prev = torch.tensor([[0.5, -2.0]])
    h, c, mf, mi = reference_cell(z, c_prev, chunk_size=2)
    assert torch.equal(mf, torch.ones(1, 1)) and torch.equal(mi, torch.zeros(1, 1))
    assert torch.allclose(c, c_prev)
    assert torch.allclose(h, 0.5 * torch.tanh(c_prev))           # o = sigmoid(0) = 0.5
    # Two levels with equal master logits: p = (1/2, 1/2), f~ = (1/2, 1), i~ = (1/2, 0).
    z = torch.zeros(1, 2 * 2 + 4 * 2)
    h, c, mf, mi = reference_cell(z, torch.ones(1, 2), chunk_size=1)
    assert torch.allclose(mf, torch.tensor([[0.5, 1.0]])) and torch.allclose(mi, torch.tensor([[0.5, 0.0]]))
    # level 0: w = 1/4, f^ = 0.5 * 0.25 + 0.25 = 0.375, i^ = 0.375, tanh(0) = 0 -> c = 0.375
    # level 1: w = 0, f^ = 1, i^ = 0 -> c = 1
    assert torch.allclose(c, torch.tensor([[0.375, 1.0]]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-30, 30), min_size=1, max_size=12))
def test_cumax_is_monotone_and_ends_at_one(values):
    out = cumax(torch.tensor(values, dtype=torch.float64))
    assert torch.all(out[1:] >= out[:-1] - 1e-12)
    assert torch.all(out >= 0) and abs(out[-1].item() - 1.0) < 1e-9


def test_distances_lie_in_unit_interval_and_agree_with_master_gates():
    model = tiny_model().eval()
    # large weights push the softmaxes to their extremes
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(20)
    dist = model.distances(random_tokens(9, 5))
    assert dist.shape == (3, 2, 9, 5)
    assert torch.all(dist >= 0) and torch.all(dist <= 1)
    model.implementation = "reference"
    assert torch.allclose(model.distances(random_tokens(9, 5)), dist, atol=1e-10)


# --- fast path == reference path -----------------------------------------------------------

@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 2e-5)])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("overrides", [{}, dict(n_layers=1, hidden_size=12, chunk_size=4), NO_DROPOUT],
                         ids=["tiny", "one-layer", "no-dropout"])
def test_fast_path_equals_reference(dtype, tol, train, overrides):
    model = tiny_model(dtype, **overrides)
    tokens, targets = random_tokens(8, 4), random_tokens(8, 4, seed=2)
    (ref, ref_grads, ref_sg, ref_loss), (fast, fast_grads, fast_sg, fast_loss) = run_both(
        model, tokens, targets, train, state_seed=5)

    def close(a, b):
        scale = max(1.0, a.abs().max().item())
        assert (a - b).abs().max().item() <= tol * scale

    close(ref_loss, fast_loss)
    close(ref.output, fast.output)
    close(ref.raw_last, fast.raw_last)
    close(ref.distances, fast.distances)
    for (h1, c1), (h2, c2) in zip(ref.state, fast.state):
        close(h1, h2)
        close(c1, c2)
    assert ref_grads.keys() == fast_grads.keys()
    for name in ref_grads:
        assert ref_grads[name].abs().sum() > 0, name
        close(ref_grads[name], fast_grads[name])
    for (h1, c1), (h2, c2) in zip(ref_sg, fast_sg):
        close(h1, h2)
        close(c1, c2)


def test_fast_recurrence_gradcheck():
    # The hand-written backward against finite differences, on its own.
    g = torch.Generator().manual_seed(0)
    steps, batch, hidden, chunk = 4, 3, 6, 2
    gates = 2 * (hidden // chunk) + 4 * hidden
    args = [torch.randn(steps, batch, gates, generator=g, dtype=torch.float64),
            torch.randn(gates, hidden, generator=g, dtype=torch.float64) * 0.5,
            torch.randn(batch, hidden, generator=g, dtype=torch.float64),
            torch.randn(batch, hidden, generator=g, dtype=torch.float64)]
    args = [a.requires_grad_() for a in args]

    def fn(xproj, weight, h0, c0):
        hs, (h, c), _ = cell.recurrence(xproj, weight, h0, c0, chunk)
        return hs, c

    assert torch.autograd.gradcheck(fn, args, fast_mode=True)


@settings(max_examples=15, deadline=None)
@given(steps=st.integers(1, 5), batch=st.integers(1, 3), levels=st.integers(1, 4),
       chunk=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_fast_recurrence_equals_reference_on_random_shapes(steps, batch, levels, chunk, seed):
    g = torch.Generator().manual_seed(seed)
    hidden = levels * chunk
    gates = 2 * levels + 4 * hidden
    shapes = [(steps, batch, gates), (gates, hidden), (batch, hidden), (batch, hidden)]
    inputs = [torch.randn(shape, generator=g, dtype=torch.float64) for shape in shapes]
    weights = [torch.randn(steps, batch, hidden, generator=g, dtype=torch.float64),
               torch.randn(batch, hidden, generator=g, dtype=torch.float64)]
    results = []
    for run in (reference_recurrence, cell.recurrence):
        args = [t.clone().requires_grad_() for t in inputs]
        hs, (h, c), dist = run(*args, chunk)
        ((hs * weights[0]).sum() + (c * weights[1]).sum()).backward()
        results.append([hs, h, c, dist] + [a.grad for a in args])
    for a, b in zip(*results):
        assert torch.allclose(a, b, atol=1e-10), (a - b).abs().max()


def test_no_grad_path_equals_autograd_path():
    model = tiny_model(torch.float32).eval()
    tokens = random_tokens(11, 3)
    with torch.no_grad():
        a = model(tokens)
    b = model(tokens)
    assert torch.equal(a.output, b.output.detach()) and torch.equal(a.distances, b.distances)


# --- distances ------------------------------------------------------------------------------

@pytest.mark.parametrize("implementation", ["fast", "reference"])
def test_distances_equal_forward_first_layers(implementation):
    model = tiny_model(torch.float32)
    model.implementation = implementation
    tokens = random_tokens(10, 3)
    model.train()                       # distances() uses evaluation weights whatever the mode
    got = {k: model.distances(tokens, n_layers=k) for k in (1, 2, 3)}
    assert model.training
    model.eval()
    full = model(tokens).distances
    for k in (1, 2, 3):
        assert got[k].shape == (k, 2, 10, 3)
        assert torch.allclose(got[k], full[:k], atol=1e-6)
    assert torch.equal(model.distances(tokens), got[3])
    with pytest.raises(ValueError):
        model.distances(tokens, n_layers=4)


def test_distances_are_invariant_to_right_padding_and_batch_mates():
    model = tiny_model(torch.float32).eval()
    sentence = torch.tensor([1, 5, 7, 2, 9, 1])
    alone = model.distances(sentence[:, None])[:, :, :, 0]
    batch = random_tokens(15, 4, seed=9)
    batch[:6, 2] = sentence
    together = model.distances(batch)[:, :, :6, 2]
    assert torch.allclose(alone, together, atol=1e-6)


# --- regularisers ---------------------------------------------------------------------------

def capture_recurrent_weights(model):
    """Record the recurrent weight each layer receives per forward call."""
    seen = []
    hooks = [layer.register_forward_pre_hook(lambda mod, args, k=k: seen.append((k, args[2].detach().clone())))
             for k, layer in enumerate(model.layers)]
    return seen, hooks


def test_dropconnect_one_mask_per_batch_zeroing_without_rescaling():
    model = tiny_model(torch.float32, dropconnect=0.4, hidden_size=60, embedding_size=30, chunk_size=6)
    seen, hooks = capture_recurrent_weights(model)
    model.train()
    tokens = random_tokens(5, 2)
    model(tokens)
    model(tokens)
    for hook in hooks:
        hook.remove()
    assert [k for k, _ in seen] == [0, 1, 2, 0, 1, 2]          # one weight per layer per call
    for k, used in seen:
        w = model.layers[k].weight_hh.detach()
        kept = used != 0
        assert torch.equal(used[kept], w[kept])                # kept entries are not rescaled
        assert 0.3 < 1 - kept.float().mean().item() < 0.5      # about p of them are zeroed
    assert not torch.equal(seen[0][1], seen[3][1])             # a fresh mask per call


def test_eval_uses_recurrent_weights_scaled_once():
    model = tiny_model(torch.float32, dropconnect=0.45)
    seen, hooks = capture_recurrent_weights(model)
    model.eval()
    tokens = random_tokens(5, 2)
    first = model(tokens)
    second = model(tokens)
    for hook in hooks:
        hook.remove()
    assert torch.equal(first.output, second.output)
    for k, used in seen:
        assert torch.allclose(used, model.layers[k].weight_hh.detach() * 0.55)
    # and the scaled weight is what the recurrence really uses: compare with a manual run
    layer = model.layers[0]
    with torch.no_grad():
        xproj = model.embedding(tokens) @ layer.weight_ih.t() + layer.bias_ih + layer.bias_hh
        zeros = torch.zeros(2, layer.hidden_size)
        _, _, expected = reference_recurrence(xproj, layer.weight_hh * 0.55, zeros, zeros, layer.chunk_size)
    assert torch.allclose(model.distances(tokens, 1)[0], expected, atol=1e-6)


def test_embedding_dropout_drops_whole_word_types():
    model = tiny_model(torch.float32, dropout_word=0.5, dropout_input=0.0)
    inputs = []
    hook = model.layers[0].register_forward_pre_hook(lambda mod, args: inputs.append(args[0].detach()))
    model.train()
    tokens = torch.tensor([[3, 4, 3, 5], [4, 3, 5, 3], [6, 6, 7, 3]])
    torch.manual_seed(11)
    for _ in range(6):
        model(tokens)
    hook.remove()
    table = model.embedding.weight.detach()
    dropped_any = kept_any = False
    for x in inputs:
        for word in tokens.unique():
            rows = x[tokens == word]                           # every occurrence of the word
            if torch.all(rows == 0):
                dropped_any = True
            else:
                assert torch.allclose(rows, (table[word] * 2).expand_as(rows))
                kept_any = True
    assert dropped_any and kept_any


def test_locked_dropout_is_shared_over_time():
    model = tiny_model(torch.float32, dropout_word=0.0, dropout_input=0.5)
    inputs = []
    hook = model.layers[0].register_forward_pre_hook(lambda mod, args: inputs.append(args[0].detach()))
    model.train()
    tokens = torch.full((6, 3), 4)                             # the same word everywhere
    model(tokens)
    hook.remove()
    x = inputs[0]
    assert torch.equal(x, x[:1].expand_as(x))                  # the same mask at every step
    zeros = (x[0] == 0).float().mean().item()
    assert 0 < zeros < 1


def test_training_mode_is_random_and_eval_is_not():
    model = tiny_model(torch.float32)
    tokens = random_tokens(6, 2)
    model.train()
    assert not torch.equal(model(tokens).output, model(tokens).output)
    model.eval()
    assert torch.equal(model(tokens).output, model(tokens).output)


# --- interface ------------------------------------------------------------------------------

def test_forward_output_shapes_and_state_chaining():
    model = tiny_model(torch.float32).eval()
    tokens = random_tokens(9, 4)
    out = model(tokens)
    assert isinstance(out, LMOutput)
    assert out.output.shape == out.raw_last.shape == (9, 4, 12)
    assert out.distances.shape == (3, 2, 9, 4) and out.distances.dtype == torch.float32
    assert [(h.shape, c.shape) for h, c in out.state] == [((4, 18), (4, 18))] * 2 + [((4, 12), (4, 12))]
    assert all(torch.equal(h, torch.zeros_like(h)) for pair in model.init_state(4) for h in pair)
    # running in two windows with the carried state equals one run
    first = model(tokens[:4])
    second = model(tokens[4:], first.state)
    assert torch.allclose(torch.cat([first.output, second.output]), out.output, atol=1e-6)
    assert torch.allclose(torch.cat([first.distances, second.distances], dim=2), out.distances, atol=1e-6)
    with pytest.raises(ValueError):
        model(tokens[0])


def test_logits_and_loss():
    model = tiny_model(torch.float64)
    output = torch.randn(3, 2, 12, dtype=torch.float64)
    targets = random_tokens(3, 2)
    logits = model.logits(output)
    assert logits.shape == (3, 2, 23)
    assert torch.allclose(logits, output @ model.embedding.weight.t() + model.decoder_bias)
    logp = torch.log_softmax(logits, dim=-1)
    expected = -logp.gather(-1, targets[..., None]).mean()
    assert torch.allclose(model.loss(output, targets), expected)
    # an untrained model is close to uniform: loss near log V
    model.eval()
    loss = model.loss(model(random_tokens(20, 3)).output, random_tokens(20, 3, seed=4))
    assert abs(loss.item() - math.log(23)) < 0.5


def test_fused_loss_with_several_pending_backwards_and_without_grad():
    # Two losses alive at once (gradient accumulation) must not share the reused logits buffer.
    model = tiny_model(torch.float64)
    outputs = [torch.randn(4, 3, 12, dtype=torch.float64, requires_grad=True) for _ in range(3)]
    targets = [random_tokens(4, 3, seed=s) for s in range(3)]
    grads = {}
    for impl in ("reference", "fast"):
        model.implementation = impl
        model.zero_grad()
        for x in outputs:
            x.grad = None
        losses = [model.loss(x, y) for x, y in zip(outputs, targets)]
        with torch.no_grad():
            quiet = model.loss(outputs[0], targets[0])
        assert torch.allclose(quiet, losses[0])
        (losses[0] + 2 * losses[1]).backward()
        losses[2].backward()
        grads[impl] = [x.grad.clone() for x in outputs] + [p.grad.clone() for p in model.parameters()
                                                           if p.grad is not None]
    for a, b in zip(grads["reference"], grads["fast"]):
        assert torch.allclose(a, b, atol=1e-12)


def test_checkpoint_round_trip(tmp_path):
    from onparse.files.checkpoint import save_checkpoint
    from onparse.lm.kind import load_model
    from onparse.text.vocab import Vocabulary

    words = ["<unk>", "<eos>"] + [f"w{i}" for i in range(21)]
    model = tiny_model(torch.float32)
    path = tmp_path / "m.pt"
    save_checkpoint(path, config=model.config.to_dict(), vocab=Vocabulary(words),
                    state_dict=model.state_dict(), metadata={"note": "test"})
    loaded = load_model(str(path))
    assert loaded.model.config == model.config and not loaded.model.training
    tokens = random_tokens(7, 2)
    model.eval()
    assert torch.equal(loaded.model.distances(tokens), model.distances(tokens))


def test_implementation_names_are_checked():
    model = tiny_model()
    model.implementation = "reference"
    assert model.implementation == "reference"
    with pytest.raises(ValueError, match="implementation"):
        model.implementation = "fastest"


def test_single_step_and_batch_of_one():
    model = tiny_model(torch.float32).eval()
    out = model(random_tokens(1, 1))
    assert out.output.shape == (1, 1, 12)
    model.train()
    out = model(random_tokens(1, 1))
    out.output.sum().backward()
    assert model.layers[0].weight_ih.grad is not None


def test_autocast_runs_the_recurrence_and_loss_in_float32():
    model = tiny_model(torch.float32)
    tokens = random_tokens(6, 3)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(tokens)
        loss = model.loss(out.output, tokens)
    assert out.output.dtype == out.distances.dtype == loss.dtype == torch.float32
    loss.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())

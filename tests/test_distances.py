"""Batched distance extraction equals one sentence at a time on `<eos> w1..wn <eos>`."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from onparse.devices import resolve_device
from onparse.lm.distances import plan_batches, sentence_distances
from onparse.errors import OnparseError
from onparse.lm.model import ModelConfig, ONLSTMLanguageModel

pytestmark = pytest.mark.usefixtures("one_thread")

EOS = 1


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(7)
    config = ModelConfig(vocab_size=50, embedding_size=16, hidden_size=24, n_layers=3, chunk_size=4)
    return ONLSTMLanguageModel(config).eval()


def one_at_a_time(model, ids):
    """The definition: batch of one, both boundary tokens fed, both boundary steps dropped."""
    tokens = torch.tensor([EOS] + list(ids) + [EOS]).view(-1, 1)
    return model.distances(tokens)[:, :, 1:-1, 0].numpy()


def random_sentences(rng, count, low=0, high=30):
    return [list(rng.integers(2, 50, size=rng.integers(low, high + 1))) for _ in range(count)]


@given(lengths=st.lists(st.integers(0, 60), max_size=40), batch_size=st.integers(1, 9),
       max_tokens=st.integers(1, 200))
@settings(max_examples=200, deadline=None)
def test_plan_batches_covers_every_sentence_once_within_bounds(lengths, batch_size, max_tokens):
    batches = plan_batches(lengths, batch_size, max_tokens)
    seen = [i for batch in batches for i in batch]
    assert sorted(seen) == [i for i, n in enumerate(lengths) if n > 0]
    assert [lengths[i] for i in seen] == sorted(lengths[i] for i in seen)  # sorted by length
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        # Over the token budget only when a single sentence alone exceeds it.
        assert len(batch) * (lengths[batch[-1]] + 1) <= max_tokens or len(batch) == 1


def test_plan_batches_long_sentence_runs_alone():
    lengths = [5, 5, 1000, 5, 5]
    batches = plan_batches(lengths, batch_size=64, max_tokens=512)
    assert [2] in batches
    assert sorted(len(b) for b in batches) == [1, 4]


@pytest.mark.parametrize("batch_size,max_tokens", [(1, 10_000), (3, 10_000), (64, 10_000), (64, 40)])
def test_batched_equals_one_at_a_time(model, batch_size, max_tokens):
    rng = np.random.default_rng(batch_size)
    sentences = random_sentences(rng, 25)
    got = sentence_distances(model, sentences, EOS, batch_size=batch_size, max_tokens=max_tokens)
    assert len(got) == len(sentences)
    for ids, dist in zip(sentences, got):
        assert dist.shape == (3, 2, len(ids)) and dist.dtype == np.float32
        np.testing.assert_allclose(dist, one_at_a_time(model, ids), rtol=0, atol=2e-6)
        assert ((dist >= 0) & (dist <= 1)).all()


def test_first_layers_only(model):
    sentences = [[3, 4, 5], [6, 7]]
    full = sentence_distances(model, sentences, EOS)
    two = sentence_distances(model, sentences, EOS, n_layers=2)
    for a, b in zip(full, two):
        assert b.shape == (2, 2, a.shape[2])
        np.testing.assert_allclose(b, a[:2], atol=1e-6)


def test_empty_sentences_keep_their_place(model):
    sentences = [[], [3, 4], [], [5]]
    got = sentence_distances(model, sentences, EOS)
    assert [d.shape for d in got] == [(3, 2, 0), (3, 2, 2), (3, 2, 0), (3, 2, 1)]
    np.testing.assert_allclose(got[1], one_at_a_time(model, [3, 4]), atol=2e-6)
    assert sentence_distances(model, [], EOS) == []


def test_sentence_of_1000_tokens(model):
    rng = np.random.default_rng(3)
    long = list(rng.integers(2, 50, size=1000))
    sentences = [[4, 5, 6], long, [7, 8]]
    got = sentence_distances(model, sentences, EOS, batch_size=8, max_tokens=256)
    assert got[1].shape == (3, 2, 1000)
    np.testing.assert_allclose(got[1], one_at_a_time(model, long), atol=2e-6)
    np.testing.assert_allclose(got[0], one_at_a_time(model, [4, 5, 6]), atol=2e-6)


def test_distances_depend_on_the_sentence(model):
    # Guards against reading the wrong column or step: different sentences, different values,
    # and the first word's value depends only on <eos> and that word.
    a, b = sentence_distances(model, [[3, 4, 5], [3, 9, 9]], EOS)
    np.testing.assert_allclose(a[:, :, 0], b[:, :, 0], atol=1e-6)
    assert not np.allclose(a[:, :, 1:], b[:, :, 1:])


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(OnparseError, match="no CUDA device"):
            resolve_device("cuda")
    with pytest.raises(OnparseError, match="unknown device"):
        resolve_device("tpu-ish")

"""The neural PCFG's math (onparse.grammar) against brute force over every tree and labelling.

The brute force enumerates every binary tree of a sentence and, for each, every labelling of its
internal nodes (m choices) and words (p choices) as NumPy index arrays, and scores each labelled
tree as the product of its rules: no chart, no sharing between trees.  Grammars are tiny (m, p
<= 3, n <= 5) and float64, so agreement is to ~1e-12.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from functools import lru_cache

import numpy as np

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from onparse.grammar.config import GRAMMAR_PRESETS, GrammarConfig
from onparse.grammar.inside import (DRAWS_PER_WORD, NEG, RankRules, full_inside, full_rules_from_rank,
                                    labelled_marginals, logmm, mbr_spans, rank_inside, sample, span_labels,
                                    span_marginals, viterbi)
from onparse.grammar.model import NeuralPCFG
from onparse.trees.tree import spans_to_tree, tree_spans

torch.set_num_threads(1)
F64 = torch.float64


# ----------------------------------------------------------------------------------------
# Brute force
# ----------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def binary_trees(i: int, k: int) -> tuple:
    """Every binary tree over words i..k-1, as a tuple of its internal nodes ``(i, j, k)``
    (split at ``j``) in pre-order."""
    if k - i == 1:
        return ((),)
    return tuple(((i, j, k),) + left + right
                 for j in range(i + 1, k) for left in binary_trees(i, j) for right in binary_trees(j, k))


def labelled_trees(log_root, log_T, log_emit, n):
    """For every binary tree of an n-word sentence: ``(tree, nt, pt, logp)`` with ``nt [Kn, n-1]``
    every labelling of its internal nodes (pre-order), ``pt [Kp, n]`` every labelling of its words
    and ``logp [Kn, Kp]`` the log-probability of each labelled tree."""
    m, p = log_T.shape[0], log_emit.shape[-1]
    nt = np.array(list(itertools.product(range(m), repeat=n - 1))).reshape(-1, n - 1)
    pt = np.array(list(itertools.product(range(p), repeat=n))).reshape(-1, n)
    words = log_emit[np.arange(n), pt].sum(1)                              # [Kp]
    out = []
    for tree in binary_trees(0, n):
        node = {(i, k): a for a, (i, _, k) in enumerate(tree)}

        def symbol(i, k):
            return nt[:, node[i, k]][:, None] if k - i >= 2 else (m + pt[:, i])[None, :]

        logp = log_root[nt[:, 0]][:, None] + words[None, :]
        for a, (i, j, k) in enumerate(tree):
            logp = logp + log_T[nt[:, a][:, None], symbol(i, j), symbol(j, k)]
        out.append((tree, nt, pt, logp))
    return out


def logsumexp(x):
    x = np.asarray(x, dtype=float)
    top = x.max()
    return top + np.log(np.exp(x - top).sum())


def brute_force(log_root, log_T, log_emit, n):
    """``(log Z, span marginals {(i, k): mu}, labelled marginals {(i, k): [m]}, root posterior [m],
    (best log prob, best nodes as a set of (i, k, symbol)))`` of one sentence."""
    m = log_T.shape[0]
    trees = labelled_trees(log_root, log_T, log_emit, n)
    z = logsumexp(np.concatenate([t[3].ravel() for t in trees]))
    spans, labelled, root = Counter(), {}, np.zeros(m)
    best = (-np.inf, None)
    for tree, nt, pt, logp in trees:
        prob = np.exp(logp - z)
        for a, (i, _, k) in enumerate(tree):
            spans[i, k] += prob.sum()
            labelled.setdefault((i, k), np.zeros(m))
            np.add.at(labelled[i, k], nt[:, a], prob.sum(1))
        np.add.at(root, nt[:, 0], prob.sum(1))
        a, b = np.unravel_index(logp.argmax(), logp.shape)
        if logp[a, b] > best[0]:
            nodes = {(i, k, int(nt[a, x])) for x, (i, _, k) in enumerate(tree)}
            nodes |= {(t, t + 1, m + int(pt[b, t])) for t in range(n)}
            best = (logp[a, b], nodes)
    return z, spans, labelled, root, best


def random_rank_grammar(m, p, r, seed, dtype=F64, sharp=2.0):
    g = torch.Generator().manual_seed(seed)
    log_root = (sharp * torch.randn(m, generator=g, dtype=dtype)).log_softmax(-1)
    log_U = (sharp * torch.randn(m, r, generator=g, dtype=dtype)).log_softmax(-1)
    log_V = (sharp * torch.randn(m + p, r, generator=g, dtype=dtype)).log_softmax(0)
    log_W = (sharp * torch.randn(m + p, r, generator=g, dtype=dtype)).log_softmax(0)
    return log_root, log_U, log_V, log_W


def random_emit(batch, size, p, seed, dtype=F64):
    g = torch.Generator().manual_seed(seed + 1)
    return (2 * torch.randn(batch, size, p, generator=g, dtype=dtype)).log_softmax(-1)


def full_tensor(log_U, log_V, log_W):
    """``log T`` computed independently of the package, in NumPy."""
    U, V, W = (t.exp().numpy() for t in (log_U, log_V, log_W))
    return np.log(np.einsum("aq,bq,cq->abc", U, V, W))


def setup(m, p, r, lengths, seed):
    grammar = random_rank_grammar(m, p, r, seed)
    emit = random_emit(len(lengths), max(lengths), p, seed)
    return RankRules(*grammar, emit), torch.tensor(lengths)


# ----------------------------------------------------------------------------------------
# Inside
# ----------------------------------------------------------------------------------------


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4),
       st.lists(st.integers(2, 5), min_size=1, max_size=3), st.integers(0, 10_000))
def test_rank_inside_equals_brute_force(m, p, r, lengths, seed):
    rules, lens = setup(m, p, r, lengths, seed)
    z = rank_inside(rules, lens)
    log_T = full_tensor(rules.log_U, rules.log_V, rules.log_W)
    for b, n in enumerate(lengths):
        expected = brute_force(rules.log_root.numpy(), log_T, rules.log_emit[b].numpy(), n)[0]
        assert abs(float(z[b]) - expected) < 1e-10


def test_rank_inside_equals_full_inside_and_batched_rules():
    rules, lengths = setup(4, 5, 6, [8, 3, 6, 2], seed=3)
    z = rank_inside(rules, lengths)
    log_T = full_rules_from_rank(rules.log_U, rules.log_V, rules.log_W)
    assert torch.allclose(log_T, torch.from_numpy(full_tensor(rules.log_U, rules.log_V, rules.log_W)), atol=1e-12)
    assert torch.allclose(log_T.exp().sum((-1, -2)), torch.ones(4, dtype=F64))
    assert torch.allclose(full_inside(rules.log_root, log_T, rules.log_emit, lengths), z, atol=1e-12)
    # Per-sentence rules (a leading batch dim) give each sentence its own grammar.
    others = [random_rank_grammar(4, 5, 6, seed) for seed in (3, 11, 12, 13)]
    batched = RankRules(*(torch.stack(parts) for parts in zip(*others)), rules.log_emit)
    zb = rank_inside(batched, lengths)
    for b, grammar in enumerate(others):
        alone = rank_inside(RankRules(*grammar, rules.log_emit[b:b + 1]), lengths[b:b + 1])
        assert torch.allclose(zb[b], alone[0], atol=1e-12)
    assert torch.allclose(zb[0], z[0])
    log_Tb = full_rules_from_rank(batched.log_U, batched.log_V, batched.log_W)
    assert torch.allclose(full_inside(batched.log_root, log_Tb, rules.log_emit, lengths), zb, atol=1e-12)


def test_one_word_sentences_are_impossible_and_leave_finite_gradients():
    rules, lengths = setup(2, 3, 3, [1, 4, 1], seed=5)
    emit = rules.log_emit.clone().requires_grad_(True)
    z = rank_inside(rules._replace(log_emit=emit), lengths)
    assert z[0] == float("-inf") and z[2] == float("-inf") and torch.isfinite(z[1])
    z[1].backward()
    assert torch.isfinite(emit.grad).all() and emit.grad[0].abs().sum() == 0
    assert rank_inside(rules._replace(log_emit=emit[:, :1]), torch.tensor([1, 1, 1])).isinf().all()


def test_float32_long_sentences_do_not_underflow():
    rules, lengths = setup(4, 6, 8, [40, 33], seed=7)
    z64 = rank_inside(rules, lengths)
    z32 = rank_inside(RankRules(*(t.float() for t in rules)), lengths)
    assert float(z64[0]) < -60                               # far below float32's smallest probability
    assert torch.isfinite(z32).all()
    assert (z32.double() - z64).abs().max() < 1e-3


def test_logmm_is_exact_where_the_row_and_column_maxima_miss_each_other():
    # exp(-95) * exp(0) twice: both terms lie 95 below the shifts, so a float32 product of the
    # shifted exps is about 1e-41 (subnormal; it once gave a NaN gradient and, counted as 0,
    # sentences of probability "0").  The true value is an ordinary log-probability.
    x = torch.tensor([[0.0, -95.0]], requires_grad=True)
    y = torch.tensor([[-95.0], [0.0]], requires_grad=True)
    out = logmm(x, y)
    (out * 4).sum().backward()
    assert out.dtype == torch.float32
    assert abs(float(out.detach()) - (-95.0 + math.log(2.0))) < 1e-4
    assert torch.allclose(x.grad, torch.tensor([[2.0, 2.0]])) and torch.allclose(y.grad, torch.tensor([[2.0], [2.0]]))
    # A whole row and column of such products, against the exact log-sum-exp in float64.
    g = torch.Generator().manual_seed(3)
    a64, b64 = -60 * torch.rand(5, 7, generator=g, dtype=torch.float64), -60 * torch.rand(7, 4, generator=g, dtype=torch.float64)
    a64[:, 0], b64[1] = 0.0, 0.0                             # maxima at different k
    exact = torch.logsumexp(a64.unsqueeze(-1) + b64.unsqueeze(0), 1)
    assert (logmm(a64.float(), b64.float()).double() - exact).abs().max() < 1e-4


def test_logmm_counts_products_below_float64s_range_as_zero_with_finite_gradients():
    x = torch.tensor([[0.0, -800.0]], requires_grad=True)
    y = torch.tensor([[-800.0], [0.0]], requires_grad=True)
    out = logmm(x, y)
    (out * 4).sum().backward()
    assert torch.isfinite(x.grad).all() and torch.isfinite(y.grad).all()
    assert float(out.detach()) <= NEG * 0.99                 # counted as an underflow: no mass
    # Well above the floor the value and gradient are exact.
    x64, y64 = torch.tensor([[0.0, -30.0]], dtype=torch.float64), torch.tensor([[-30.0], [0.0]], dtype=torch.float64)
    x, y = x64.float().requires_grad_(True), y64.float().requires_grad_(True)
    out = logmm(x, y)
    out.sum().backward()
    assert abs(float(out.detach()) - float(torch.logsumexp(x64[0] + y64[:, 0], 0))) < 1e-5
    assert torch.allclose(x.grad, torch.tensor([[0.5, 0.5]])) and torch.allclose(y.grad, torch.tensor([[0.5], [0.5]]))


@pytest.mark.parametrize("seed", [4, 7, 8, 9])
def test_float32_inside_of_a_peaked_grammar_equals_float64(seed):
    """Sharp rules (logits of scale 50, as long training makes some of them) put the row and
    column maxima of the chart's products at different components; float32 must still give
    float64's log Z (a float32 product of the shifted exps was off by 2.6 to 28 nats here)."""
    torch.manual_seed(seed)
    m, p, r, n = 5, 7, 9, 30
    sharp = lambda *shape, dim: (50 * torch.randn(*shape, dtype=torch.float64)).log_softmax(dim)
    rules = RankRules(sharp(m, dim=0), sharp(m, r, dim=1), sharp(m + p, r, dim=0), sharp(m + p, r, dim=0),
                      sharp(p, 20, dim=1).t()[torch.randint(0, 20, (3, n))])
    lengths = torch.tensor([30, 24, 17])
    z64 = rank_inside(rules, lengths)
    z32 = rank_inside(RankRules(*(t.float() for t in rules)), lengths)
    assert torch.isfinite(z64).all() and torch.isfinite(z32).all()
    assert (z32.double() - z64).abs().max() < 0.01


# ----------------------------------------------------------------------------------------
# Marginals, MBR, labels, Viterbi
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("m, p, r, lengths, seed", [(2, 3, 3, [5, 3], 0), (3, 2, 4, [4, 5, 2], 1),
                                                    (3, 3, 2, [5], 2)])
def test_marginals_labels_mbr_viterbi_equal_brute_force(m, p, r, lengths, seed):
    rules, lens = setup(m, p, r, lengths, seed)
    mu = span_marginals(rules, lens)
    nt, pt = labelled_marginals(rules, lens)
    spans = mbr_spans(rules, lens)
    labels = span_labels(rules, lens, spans)
    log_T_np = full_tensor(rules.log_U, rules.log_V, rules.log_W)
    best_score, best_nodes = viterbi(rules.log_root, torch.from_numpy(log_T_np), rules.log_emit, lens)
    # The same marginals by hand: autograd of the shortcut inside w.r.t. a span bias, the root
    # and the emissions (the labelled path builds beta explicitly, so this checks one against
    # the other too).
    root, emit = rules.log_root.clone().requires_grad_(True), rules.log_emit.clone().requires_grad_(True)
    bias = torch.zeros(len(lengths), max(lengths) + 1, max(lengths) + 1, dtype=F64, requires_grad=True)
    z_all = rank_inside(rules._replace(log_root=root, log_emit=emit), lens, span_bias=bias)
    root_grad, emit_grad, bias_grad = torch.autograd.grad(z_all.sum(), (root, emit, bias))
    assert torch.allclose(bias_grad, mu, atol=1e-12) and torch.allclose(emit_grad, pt, atol=1e-10)
    expected_root = np.zeros(m)
    for b, n in enumerate(lengths):
        z, span_mu, label_mu, root_post, (best, nodes) = brute_force(
            rules.log_root.numpy(), log_T_np, rules.log_emit[b].numpy(), n)
        expected_root += root_post
        expected = np.zeros((n + 1, n + 1))
        for (i, k), value in span_mu.items():
            expected[i, k] = value
        assert np.allclose(mu[b, :n + 1, :n + 1].numpy(), expected, atol=1e-10)
        assert mu[b, n + 1:].abs().sum() == 0 and mu[b, :, n + 1:].abs().sum() == 0
        assert abs(float(mu[b].sum()) - (n - 1)) < 1e-10  # a binary tree has n - 1 wide spans
        for (i, k), value in label_mu.items():
            assert np.allclose(nt[b, i, k].numpy(), value, atol=1e-10)
        assert torch.allclose(nt[b].sum(-1), mu[b], atol=1e-10)
        assert torch.allclose(pt[b, :n].sum(-1), torch.ones(n, dtype=F64))
        # MBR: no binary tree has a larger sum of marginals than the one returned.
        def gain(tree_spans_):
            return sum(expected[i, k] for i, k in tree_spans_)
        best_gain = max(gain([(i, k) for i, _, k in tree]) for tree in binary_trees(0, n))
        assert len(spans[b]) == n - 1 and abs(gain(spans[b]) - best_gain) < 1e-10
        assert labels[b] == [int(np.argmax(label_mu[span])) for span in spans[b]]
        assert abs(float(best_score[b]) - best) < 1e-10 and set(best_nodes[b]) == nodes
    assert np.allclose(root_grad.numpy(), expected_root, atol=1e-10)


def test_mbr_and_labels_work_under_no_grad_and_reject_short_spans():
    rules, lengths = setup(2, 2, 3, [4, 1], seed=9)
    with torch.no_grad():
        spans = mbr_spans(rules, lengths)
        labels = span_labels(rules, lengths, spans)
    assert len(spans[0]) == 3 and spans[1] == [] and labels[1] == []
    with pytest.raises(ValueError, match="at least two words"):
        span_labels(rules, lengths, [[(0, 1)], []])
    with pytest.raises(ValueError, match="lengths"):
        rank_inside(rules, torch.tensor([5, 1]))


def toy_grammar():
    """S -> NP VP, VP -> V NP, NP -> D N | NP_ -> ... as a rank-3 grammar with one-hot emissions
    over the words the(0) dog(1) cat(2) saw(3).  Nonterminals S=0, NP=1, VP=2; preterminals
    D, N, V = symbols 3, 4, 5.  Every probability not listed is exactly 0 (-inf)."""
    m, p, r = 3, 3, 3
    zeros = lambda *shape: torch.full(shape, float("-inf"), dtype=F64)  # noqa: E731
    log_root = torch.log(torch.tensor([0.75, 0.25, 0.0], dtype=F64))   # S, or a bare NP
    log_U, log_V, log_W = zeros(m, r), zeros(m + p, r), zeros(m + p, r)
    for q, (parent, left, right) in enumerate([(0, 1, 2), (1, 3, 4), (2, 5, 1)]):
        log_U[parent, q] = log_V[left, q] = log_W[right, q] = 0.0
    emission = torch.log(torch.tensor([[1, 0, 0, 0], [0, 0.5, 0.5, 0], [0, 0, 0, 1]], dtype=F64))
    return (log_root, log_U, log_V, log_W), emission


def test_one_hot_toy_grammar_recovers_its_trees():
    grammar, emission = toy_grammar()
    ids = torch.tensor([[0, 1, 3, 0, 2], [0, 2, 0, 0, 0], [3, 0, 1, 0, 0]])    # last: "saw the dog"
    lengths = torch.tensor([5, 2, 3])
    rules = RankRules(*grammar, emission.t()[ids])
    z = rank_inside(rules, lengths)
    assert torch.allclose(z[:2], torch.log(torch.tensor([0.75 * 0.25, 0.25 * 0.5], dtype=F64)))
    assert z[2] == float("-inf")                             # a VP is no sentence here
    mu = span_marginals(rules, lengths)
    assert torch.isfinite(mu).all()
    spans = mbr_spans(rules, lengths)
    assert spans[:2] == [[(0, 5), (0, 2), (2, 5), (3, 5)], [(0, 2)]]
    assert span_labels(rules, lengths, spans[:2] + [[]]) [:2] == [[0, 1, 2, 1], [1]]
    log_T = full_rules_from_rank(*grammar[1:])
    _, nodes = viterbi(grammar[0], log_T, rules.log_emit, lengths)
    assert nodes[0][:3] == [(0, 5, 0), (0, 2, 1), (0, 1, 3)] and nodes[2] == []


# ----------------------------------------------------------------------------------------
# Sampling
# ----------------------------------------------------------------------------------------


def test_sampled_rule_frequencies_match_probabilities():
    m, p, r, vocab = 2, 2, 3, 3
    log_root, log_U, log_V, log_W = random_rank_grammar(m, p, r, seed=4, sharp=1.0)
    # Make preterminals likely children so trees stay short (a subcritical grammar).
    log_V, log_W = (torch.cat([t[:m] - 1.5, t[m:]]).log_softmax(0) for t in (log_V, log_W))
    emission = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], dtype=F64).log()
    draws = sample(log_root, log_U, log_V, log_W, emission, 3000, torch.Generator().manual_seed(0), max_length=500)
    again = sample(log_root, log_U, log_V, log_W, emission, 5, torch.Generator().manual_seed(0), max_length=500)
    assert again == draws[:5]
    roots, rules, words = Counter(), Counter(), Counter()

    def visit(tree):
        label = tree[0]
        if len(tree) == 2:
            words[label, tree[1]] += 1
            return
        rules[label, tree[1][0], tree[2][0]] += 1
        visit(tree[1])
        visit(tree[2])

    for ids, tree in draws:
        roots[tree[0]] += 1
        visit(tree)
        assert len(ids) == len(tree_spans_words(tree))
    name = lambda s: f"NT-{s}" if s < m else f"PT-{s - m}"  # noqa: E731
    T = full_rules_from_rank(log_U, log_V, log_W).exp()
    for a in range(m):
        assert abs(roots[name(a)] / 3000 - float(log_root[a].exp())) < 0.03
        total = sum(c for (parent, _, _), c in rules.items() if parent == name(a))
        assert total > 300
        for b, c in itertools.product(range(m + p), repeat=2):
            assert abs(rules[name(a), name(b), name(c)] / total - float(T[a, b, c])) < 0.04
    for t in range(p):
        total = sum(c for (label, _), c in words.items() if label == f"PT-{t}")
        for w in range(vocab):
            assert abs(words[f"PT-{t}", w] / total - float(emission[t, w].exp())) < 0.03


def tree_spans_words(tree):
    return [tree[1]] if len(tree) == 2 else tree_spans_words(tree[1]) + tree_spans_words(tree[2])


def test_sampling_respects_the_length_guard():
    grammar, emission = toy_grammar()
    draws = sample(*grammar, emission, 20, torch.Generator().manual_seed(1), max_length=5)
    assert {len(ids) for ids, _ in draws} <= {2, 5}
    only_sentences = (torch.log(torch.tensor([1.0, 0.0, 0.0], dtype=F64)),) + grammar[1:]   # 5 words each
    none = sample(*only_sentences, emission, 5, torch.Generator().manual_seed(1), max_length=4)
    assert list(none) == [] and none.gave_up and none.draws <= DRAWS_PER_WORD * 4     # a bounded try, no error


# ----------------------------------------------------------------------------------------
# Config and model
# ----------------------------------------------------------------------------------------


def test_config_validation_and_round_trip():
    config = GrammarConfig.preset("small", vocab_size=100)
    assert GrammarConfig.from_dict(config.to_dict()) == config and config.n_symbols == 90
    assert set(GRAMMAR_PRESETS) >= {"tiny", "small", "medium", "large"}
    assert GrammarConfig.preset("large", 10).rank == 500
    for bad, message in [(dict(rank=0), "rank must be an integer in 1..4,096, got 0"),
                         (dict(rank=5000), "rank must be an integer in 1..4,096, got 5000"),
                         (dict(n_preterminals=2.0), "integer"), (dict(mlp_size=True), "integer")]:
        with pytest.raises(ValueError, match=message):
            GrammarConfig(**{**config.to_dict(), **bad})
    with pytest.raises(ValueError, match="unknown grammar config keys: colour"):
        GrammarConfig.from_dict({**config.to_dict(), "colour": 1})
    with pytest.raises(ValueError, match="missing grammar config keys: rank"):
        GrammarConfig.from_dict({k: v for k, v in config.to_dict().items() if k != "rank"})
    with pytest.raises(ValueError, match="unknown grammar preset"):
        GrammarConfig.preset("huge", 10)


def toy_corpus(vocab=8, n=24, seed=0):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, 7, (n,), generator=g)
    # A language with structure: words alternate between two halves of the vocabulary.
    ids = torch.randint(0, vocab // 2, (n, 6), generator=g) + (torch.arange(6) % 2) * (vocab // 2)
    return ids, lengths


def test_neural_pcfg_normalises_learns_and_parses():
    torch.manual_seed(0)
    model = NeuralPCFG(GrammarConfig.preset("tiny", vocab_size=8)).double()
    rules = model.rules()
    assert torch.allclose(rules.log_root.exp().sum(), torch.tensor(1.0, dtype=F64))
    assert torch.allclose(rules.log_emission.exp().sum(-1), torch.ones(6, dtype=F64))
    T = full_rules_from_rank(rules.log_U, rules.log_V, rules.log_W).exp()
    assert T.shape == (4, 10, 10) and torch.allclose(T.sum((-1, -2)), torch.ones(4, dtype=F64))
    ids, lengths = toy_corpus()
    lengths[0] = 1
    before = model(ids, lengths)
    assert before[0] == float("-inf") and torch.isfinite(before[1:]).all()
    optimiser = torch.optim.Adam(model.parameters(), lr=2e-2, betas=(0.75, 0.999))
    for _ in range(15):
        optimiser.zero_grad()
        model.loss(ids, lengths).backward()
        optimiser.step()
    after = model(ids, lengths)
    assert after[1:].mean() > before[1:].mean() + 0.5
    total, words, sentences = model.log_likelihood(ids, lengths)
    assert sentences == 23 and words == int(lengths[1:].sum()) and abs(total - float(after[1:].detach().sum())) < 1e-6
    spans, labels = model.parse(ids, lengths)
    for sentence, n, names in zip(spans, lengths.tolist(), labels):
        assert len(sentence) == len(names) == max(0, n - 1)
        assert all(name.startswith("NT-") for name in names)
        if n >= 2:
            words_ = [str(t) for t in range(n)]
            assert sorted(tree_spans(spans_to_tree(words_, sentence))) == sorted(sentence)


def test_neural_pcfg_inspection_and_sampling():
    torch.manual_seed(1)
    model = NeuralPCFG(GrammarConfig.preset("tiny", vocab_size=8))
    top = model.top_rules(5, chunk_size=250)                # 2 parents at a time: the merge is used
    T = full_rules_from_rank(*model.rules()[1:4]).exp()
    assert [round(t[3], 5) for t in top] == [round(v, 5) for v in T.flatten().topk(5).values.tolist()]
    assert top[0][0].startswith("NT-") and top[0][1][:3] in {"NT-", "PT-"}
    words = [f"w{i}" for i in range(8)]
    tops = model.top_words(words, k=3)
    assert len(tops) == 6 and all(len(row) == 3 and row[0][1] >= row[1][1] for row in tops)
    draws = model.sample(4, torch.Generator().manual_seed(2), max_length=200)
    assert len(draws) == 4 and all(len(ids) >= 2 and max(ids) < 8 for ids, _ in draws)

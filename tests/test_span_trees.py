"""Inside and CYK over span scores against brute-force enumeration of every binary tree."""
import itertools
import math

import pytest
import torch

from onparse.trees.span_trees import cyk, inside, tree_score


def all_trees(i, j):
    """Every binary tree over words i..j-1, as its spans of at least two words."""
    if j - i == 1:
        return [[]]
    out = []
    for k in range(i + 1, j):
        for left, right in itertools.product(all_trees(i, k), all_trees(k, j)):
            out.append([(i, j)] + left + right)
    return out


def brute(scores, n):
    values = [(sum(float(scores[a, b]) for a, b in t), t) for t in all_trees(0, n)]
    log_z = math.log(sum(math.exp(v) for v, _ in values))
    best = max(v for v, _ in values)
    return log_z, best, [t for v, t in values if v == best]


@pytest.mark.parametrize("n", range(1, 9))
def test_inside_and_cyk_match_every_tree_enumerated(n):
    torch.manual_seed(n)
    scores = torch.randn(1, n + 1, n + 1, dtype=torch.float64)
    log_z, best, argmax = brute(scores[0], n)
    assert len(all_trees(0, n)) == math.comb(2 * (n - 1), n - 1) // n          # Catalan(n - 1)
    lengths = torch.tensor([n])
    assert float(inside(scores, lengths)[0]) == pytest.approx(log_z, abs=1e-9)
    (found,) = cyk(scores, lengths)
    assert sorted(found) in [sorted(t) for t in argmax]
    assert float(tree_score(scores, [found])[0]) == pytest.approx(best, abs=1e-9)


def test_a_batch_of_lengths_equals_one_sentence_at_a_time():
    torch.manual_seed(0)
    lengths = torch.tensor([5, 1, 8, 2, 7])
    scores = torch.randn(len(lengths), 9, 9, dtype=torch.float64)
    batched, trees = inside(scores, lengths), cyk(scores, lengths)
    for b, n in enumerate(lengths.tolist()):
        alone = scores[b:b + 1, :n + 1, :n + 1]
        assert float(batched[b]) == pytest.approx(float(inside(alone, lengths[b:b + 1])[0]), abs=1e-9)
        assert trees[b] == cyk(alone, lengths[b:b + 1])[0]
    assert trees[1] == [] and trees[3] == [(0, 2)] and trees[2][0] == (0, 8)


def test_span_marginals_are_the_gradient_of_log_z():
    """d log Z / d s[i, j] is the probability that (i, j) is a span: every tree holds the whole
    sentence (marginal 1) and exactly n - 1 spans of at least two words."""
    torch.manual_seed(1)
    n = 6
    scores = torch.randn(1, n + 1, n + 1, dtype=torch.float64, requires_grad=True)
    inside(scores, torch.tensor([n]))[0].backward()
    marginals = scores.grad[0]
    assert float(marginals[0, n]) == pytest.approx(1.0)
    upper = [(i, j) for i in range(n) for j in range(i + 2, n + 1)]
    assert sum(float(marginals[i, j]) for i, j in upper) == pytest.approx(n - 1)
    trees = all_trees(0, n)
    weights = [math.exp(sum(float(scores.detach()[0, a, b]) for a, b in t)) for t in trees]
    expected = sum(w for w, t in zip(weights, trees) if (1, 4) in t) / sum(weights)
    assert float(marginals[1, 4]) == pytest.approx(expected)


def test_ties_go_to_the_shortest_left_part():
    """All-zero scores: every tree ties, and CYK builds the right-branching one."""
    (spans,) = cyk(torch.zeros(1, 6, 6), torch.tensor([5]))
    assert spans == [(0, 5), (1, 5), (2, 5), (3, 5)]

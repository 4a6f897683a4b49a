"""The three forms of a grammar's binary rules (simple, low rank, full) against brute force and
against each other, and the collapse alarm (onparse.grammar.health) on a grammar collapsed on
purpose and on a healthy one."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from conftest import write_corpus
from onparse.cli import main
from onparse.files.training_log import read_log
from onparse.grammar.config import GRAMMAR_PRESETS, RULE_FORMS, GrammarConfig
from onparse.grammar.file import check_grammar, save_grammar
from onparse.grammar.health import collapse_alarm, unigram_perplexity
from onparse.grammar.inside import full_inside, rank_inside, span_marginals
from onparse.grammar.model import GrammarRules, NeuralPCFG
from onparse.grammar.parse import branching
from onparse.settings import SettingError
from onparse.text.vocab import Vocabulary
from test_grammar import brute_force

pytestmark = pytest.mark.usefixtures("one_thread")
F64 = torch.float64


def model_of(form, seed=0, m=2, p=2, vocab=5):
    torch.manual_seed(seed)
    config = GrammarConfig(vocab_size=vocab, n_nonterminals=m, n_preterminals=p, rank=3, symbol_size=8,
                           mlp_size=8, rule_form=form)
    model = NeuralPCFG(config).double()
    # Sharper rules than Xavier's near-uniform start, so a wrong sum shows: larger embeddings.
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "." not in name:
                parameter.mul_(4.0)
    return model


def independent_full_tensor(model) -> np.ndarray:
    """``log T [m, m+p, m+p]`` of each form, computed from its own definition in NumPy (not
    through the package's rank-space rules)."""
    config, rules = model.config, model.rules()
    m, n_symbols = config.n_nonterminals, config.n_symbols
    if config.rule_form == "simple":
        # T[A, B, C] = L[A, B] R[A, C]; the package hands L and R over transposed (V = L^T).
        left, right = rules.log_V.t().detach().numpy(), rules.log_W.t().detach().numpy()
        return left[:, :, None] + right[:, None, :]
    if config.rule_form == "full":
        logits = model.mlp_rule(model.nonterminals).detach().numpy()
        logits = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) \
            - logits.max(-1, keepdims=True)
        return logits.reshape(m, n_symbols, n_symbols)
    U, V, W = (t.detach().exp().numpy() for t in (rules.log_U, rules.log_V, rules.log_W))
    return np.log(np.einsum("aq,bq,cq->abc", U, V, W))


@pytest.mark.parametrize("form", RULE_FORMS)
def test_each_form_equals_brute_force(form):
    model = model_of(form)
    rules = model.rules()
    log_T = independent_full_tensor(model)
    assert np.allclose(np.exp(log_T).sum((1, 2)), 1.0)           # P(B C | A) sums to one per parent
    ids, lengths = torch.tensor([[0, 1, 2, 3], [4, 2, 1, 0]]), torch.tensor([4, 3])
    batch = rules.for_words(ids)
    z = rank_inside(batch, lengths)
    marginals = span_marginals(batch, lengths)
    for b, n in enumerate(lengths.tolist()):
        expected_z, spans, *_ = brute_force(rules.log_root.detach().numpy(), log_T,
                                            batch.log_emit[b].detach().numpy(), n)
        assert abs(float(z[b].detach()) - expected_z) < 1e-9
        for (i, k), mu in spans.items():
            assert abs(float(marginals[b, i, k]) - mu) < 1e-9


def test_simple_rules_written_as_a_full_tensor_give_the_same_log_z_and_marginals():
    simple = model_of("simple", seed=3)
    rules = simple.rules()
    log_T = torch.from_numpy(independent_full_tensor(simple))
    ids, lengths = torch.tensor([[0, 1, 2, 3, 4], [2, 2, 1, 0, 0]]), torch.tensor([5, 4])
    emit = rules.log_emission.t()[ids]
    z_rank = rank_inside(rules.for_words(ids), lengths)
    assert torch.allclose(z_rank, full_inside(rules.log_root, log_T, emit, lengths), atol=1e-10)
    # The same rules as a full-form grammar's rank space: one component per child pair.
    full = model_of("full")
    as_full = GrammarRules(rules.log_root, log_T.flatten(1), full.pair_left.double(), full.pair_right.double(),
                           rules.log_emission)
    assert torch.allclose(z_rank, rank_inside(as_full.for_words(ids), lengths), atol=1e-10)
    assert torch.allclose(span_marginals(rules.for_words(ids), lengths),
                          span_marginals(as_full.for_words(ids), lengths), atol=1e-10)


def test_forms_are_a_setting_that_files_keep():
    assert {sizes["rule_form"] for sizes in GRAMMAR_PRESETS.values()} == {"simple"}
    old = {k: v for k, v in GrammarConfig.preset("tiny", 7).to_dict().items() if k != "rule_form"}
    assert GrammarConfig.from_dict(old).rule_form == "low_rank"    # a file from before the setting
    assert "components" in GrammarConfig.from_dict(old).parameter_shapes()
    with pytest.raises(SettingError, match="rule_form must be one of simple, low_rank, full, got 'cubic'"):
        GrammarConfig(**{**old, "rule_form": "cubic"})
    with pytest.raises(SettingError, match="full rule form holds m \\(m\\+p\\)\\^2 = 243,000 rules"):
        GrammarConfig.preset("small", 10).__class__(**{**GrammarConfig.preset("small", 10).to_dict(),
                                                       "rule_form": "full"})
    assert GrammarConfig.preset("small", 10).chart_rank == 30


@pytest.mark.parametrize("form", RULE_FORMS)
def test_every_form_round_trips_through_a_grammar_file(form, tmp_path):
    model = model_of(form).float()
    path = tmp_path / "g.pt"
    words = ["<unk>", "<eos>", "a", "b", "c"]
    save_grammar(path, config=model.config.to_dict(), vocab=words, state_dict=model.state_dict())
    blob = torch.load(path, weights_only=True)
    assert set(blob["state_dict"]) == set(model.config.parameter_shapes())
    check_grammar(blob, path)
    again = NeuralPCFG(GrammarConfig.from_dict(blob["config"]))
    again.load_state_dict(blob["state_dict"])
    ids, lengths = torch.tensor([[2, 3, 4]]), torch.tensor([3])
    assert torch.equal(again(ids, lengths), model(ids, lengths))


# -- the collapse alarm ----------------------------------------------------------------------------
def chain_rules(model) -> GrammarRules:
    """A one-state chain over ``model``'s sizes (simple form): S -> NT-0; NT-0 -> PT-0 X with X
    NT-0 or PT-1 (one half each); every word from either preterminal.  Its only trees are
    right-branching."""
    config = model.config
    m, n_symbols, vocab = config.n_nonterminals, config.n_symbols, config.vocab_size
    neg = -1e4
    log_root = torch.full((m,), neg)
    log_root[0] = 0.0
    left = torch.full((n_symbols, m), neg)
    left[m, :] = 0.0                                           # every parent's left child is PT-0
    right = torch.full((n_symbols, m), neg)
    right[0, :], right[m + 1, :] = np.log(0.5), np.log(0.5)    # ... its right child NT-0 or PT-1
    emission = torch.full((config.n_preterminals, vocab), -np.log(vocab))
    return GrammarRules(log_root, model.log_identity, left, right, emission)


def test_a_one_state_chain_raises_the_alarm_and_a_learning_grammar_does_not():
    words = ["<unk>", "<eos>"] + [f"w{i}" for i in range(6)]
    model = NeuralPCFG(GrammarConfig.preset("tiny", len(words)))
    sentences = [[f"w{(i * j) % 6}" for j in range(n)] for i, n in enumerate([3, 4, 5, 6, 7, 2])]
    healthy = branching(model, Vocabulary(words), sentences, 4)
    assert healthy[2] == 5 and healthy[0] < 0.9              # two-word sentences do not count
    model.rules = lambda: chain_rules(model)
    right, left, counted = branching(model, Vocabulary(words), sentences, 4)
    assert (right, left, counted) == (1.0, 0.0, 5)
    assert collapse_alarm({"epoch": 1, "branching_share": right + left}).startswith("100% of its held-out trees")


def test_unigram_perplexity_is_add_half_over_the_vocabulary():
    vocab = Vocabulary(["<unk>", "<eos>", "the", "cat"])
    # counts: the 2, cat 1, <unk> 1 (dog); total 4 + 0.5 * 4 = 6
    p = {"the": 2.5 / 6, "cat": 1.5 / 6, "<unk>": 1.5 / 6}
    expected = np.exp(-(np.log(p["the"]) + np.log(p["<unk>"]) + np.log(p["cat"])) / 3)
    got = unigram_perplexity([["the", "cat", "The", "dog"]], [["the", "bird", "cat"], ["cat"]], vocab)
    assert abs(got - expected) < 1e-12                         # the one-word sentence is left out


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


TINY = ["train", "--family", "grammar", "--preset", "tiny", "--curriculum-start", "20", "--max-words", "20",
        "--threads", "1", "--no-progress", "--checkpoint-every", "0"]


def epochs_of(folder):
    with open(os.path.join(folder, "metrics.jsonl")) as handle:
        return [e for e in map(json.loads, handle) if e["event"] == "epoch"]


def test_a_healthy_tiny_grammar_records_its_figures_and_raises_no_alarm(tmp_path):
    corpus = write_corpus(tmp_path / "toy.txt", 400)
    result = cli(*TINY, "--epochs", "3", "--lr", "0.01", "--corpus", corpus, "--out", tmp_path / "g")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    records = epochs_of(tmp_path / "g")
    assert len(records) == 3
    for record in records:
        assert record["valid_ppl"] < record["unigram_ppl"] and record["branching_share"] < 0.9
        assert record["branching_share"] == record["right_branching_share"] + record["left_branching_share"]
        assert record["branching_sentences"] > 0 and record["rule_entropy"] > 0
        assert 0.0 <= record["clipped_share"] <= 1.0 and record["median_grad_norm"] > 0
        assert collapse_alarm(record) is None
    assert len({r["unigram_ppl"] for r in records}) == 1     # one baseline for the whole run
    log = read_log(str(tmp_path / "g"))                     # what plot-log draws
    assert log.unigram_ppl == records[0]["unigram_ppl"]
    assert log.branching_share == tuple(r["branching_share"] for r in records)
    info = cli("info", "-m", tmp_path / "g" / "best.pt")
    assert "simple rules" in info.output and "collapse alarm: none" in info.output
    assert f"against {records[0]['unigram_ppl']:.2f} for counting words" in info.output


def test_train_warns_when_its_grammar_is_a_chain(tmp_path, monkeypatch):
    corpus = write_corpus(tmp_path / "toy.txt", 200)
    real = NeuralPCFG.rules

    def collapsed(self):
        # The chain's rules, tied to the weights by a zero term so that training still steps.
        zero = sum(t.sum() for t in real(self)) * 0.0
        return GrammarRules(*(t + zero for t in chain_rules(self)))

    monkeypatch.setattr(NeuralPCFG, "rules", collapsed)
    result = cli(*TINY, "--epochs", "1", "--corpus", corpus, "--out", tmp_path / "g")
    assert result.exit_code == 0, result.output
    assert "warning: this grammar is not learning: 100% of its held-out trees are right- or left-branching" \
        in result.output
    assert epochs_of(tmp_path / "g")[0]["right_branching_share"] == 1.0
    monkeypatch.undo()
    info = cli("info", "-m", tmp_path / "g" / "best.pt")
    assert "100% of its held-out trees are right- or left-branching chains" in info.output
    assert "warning: this grammar is not learning" in info.output

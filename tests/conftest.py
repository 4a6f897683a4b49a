"""Shared fixtures and helpers.  NLTK data comes from NLTK_DATA (or ../shared/nltk_data beside the checkout).

Tests that need an NLTK package use the ``nltk_treebank`` / ``nltk_conll2000`` / ``nltk_brown``
fixtures: they skip on a developer machine without the data but FAIL when the CI variable is set,
so CI can never pass by skipping the gold-set tests.

The ``slow`` marker is set here, by one rule, on every test that builds the wheel, starts
distributed workers or runs real processes (its body or one of its fixtures calls ``subprocess``,
``mp.spawn``, ``torchrun`` or ``venv``), and written by hand on the tests that read whole corpora,
score the bundled model or draw with matplotlib for tens of seconds: ``make test`` runs them all,
``pytest -m "not slow"`` (the quick loop, under 2 minutes on two cores) leaves them out,
``pytest -m slow --collect-only -q`` lists them.

Helpers that several test modules use live at the end of this file; import them with
``from conftest import write_corpus`` (pytest puts this folder on ``sys.path``).
"""
import inspect
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_SHARED = ROOT.parent / "shared" / "nltk_data"
if "NLTK_DATA" not in os.environ and _SHARED.is_dir():
    os.environ["NLTK_DATA"] = str(_SHARED)


def pytest_configure(config):
    """Under pytest-xdist (``make test`` runs ``-n 2``), each worker takes its share of the cores
    for torch: two workers at two threads each on two cores spend their time waiting on each
    other's spinning threads."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        import torch

        from onparse.devices import usable_cores

        torch.set_num_threads(max(1, usable_cores() // workers))


def _need(package):
    from onparse.text.data import is_installed

    if not is_installed(package):
        message = f"NLTK package '{package}' not found (set NLTK_DATA or run `make data`)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


#: What makes a test slow: a wheel build, distributed workers, or a process of its own.
_SLOW_CALLS = re.compile(r"\bsubprocess\.(run|Popen|check_output|check_call|call)\(|\bmp\.spawn\("
                         r"|\btorchrun\b|\bvenv\.create\(")


def _spawns_processes(item) -> bool:
    """True when the test's function or one of its fixtures starts processes (``_SLOW_CALLS``)."""
    functions = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        functions += [d.func for defs in info.name2fixturedefs.values() for d in defs]
    for function in functions:
        try:
            if function is not None and _SLOW_CALLS.search(inspect.getsource(function)):
                return True
        except (OSError, TypeError):  # built-in fixtures and the like have no source to read
            continue
    return False


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _spawns_processes(item):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def nltk_treebank():
    _need("treebank")


@pytest.fixture(scope="session")
def nltk_conll2000():
    _need("conll2000")


@pytest.fixture(scope="session")
def nltk_brown():
    _need("brown")


@pytest.fixture(scope="module")
def one_thread():
    """Torch on one thread for the module (``pytestmark = pytest.mark.usefixtures("one_thread")``):
    tiny models run fastest so, and it avoids OpenMP spin-waits on a busy machine."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --------------------------------------------------------------------------------------------
# Helpers shared by several test modules: `from conftest import write_corpus` (pytest puts this
# folder on sys.path).  torch is imported inside them, so tests without torch stay fast.
# --------------------------------------------------------------------------------------------

NOUNS = "cat dog bird man woman child teacher farmer".split()
VERBS = "saw liked chased found heard helped".split()
ADJS = "big small red old young happy".split()
DETS = "the a every some".split()
PREPS = "with near behind under".split()


def write_corpus(path, n_sentences=300, seed=0):
    """A toy language with structure an LM can learn (det adj? noun (prep NP)? verb NP), with
    punctuation that the reader must drop.  Returns the path as a string."""
    import random

    rng = random.Random(seed)

    def noun_phrase(depth=0):
        words = [rng.choice(DETS)] + ([rng.choice(ADJS)] if rng.random() < 0.4 else []) + [rng.choice(NOUNS)]
        if depth < 2 and rng.random() < 0.25:
            words += [rng.choice(PREPS)] + noun_phrase(depth + 1)
        return words

    lines = []
    for _ in range(n_sentences):
        words = noun_phrase() + [rng.choice(VERBS)] + noun_phrase()
        if rng.random() < 0.3:
            words = ["Yesterday", ","] + words
        lines.append(" ".join(words) + " .")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return str(path)


def save_tiny_checkpoint(path, words, seed=0, *, embedding_size=16, hidden_size=24, n_layers=3, chunk_size=4,
                         **extra):
    """An untrained checkpoint at ``path`` (no training needed to test reading one): a model of
    the given size, seeded with ``seed``, whose vocabulary holds ``words``; ``extra`` goes to
    :func:`onparse.files.checkpoint.save_checkpoint` (``metadata=``, ``training=``).  Returns
    ``(model, vocabulary, path as a string)``."""
    import torch

    from onparse.files.checkpoint import save_checkpoint
    from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
    from onparse.text.vocab import Vocabulary

    torch.manual_seed(seed)
    vocab = Vocabulary.build([list(words)])
    config = ModelConfig(vocab_size=len(vocab), embedding_size=embedding_size, hidden_size=hidden_size,
                         n_layers=n_layers, chunk_size=chunk_size)
    model = ONLSTMLanguageModel(config).eval()
    save_checkpoint(str(path), config=config.to_dict(), vocab=vocab, state_dict=model.state_dict(), **extra)
    return model, vocab, str(path)



def expected_tree(model, vocab, tokens, layer=2, decoder="onlstm"):
    """The tree of ``tokens`` computed the long way: one sentence through ``model`` from a
    zero state, its master-forget distances at ``layer`` decoded by ``decoder``."""
    import torch

    from onparse.trees.decode import decode
    from onparse.text.tokens import normalize_word

    ids = torch.tensor([vocab.eos_id] + [vocab.index(normalize_word(t)) for t in tokens]).view(-1, 1)
    return decode(model.distances(ids)[layer - 1, 0, 1:, 0].numpy(), list(tokens), decoder)

#: The model of the cell and fast-path tests: three small layers of different sizes.
TINY = dict(vocab_size=23, embedding_size=12, hidden_size=18, n_layers=3, chunk_size=3)
#: Every dropout off (model configuration overrides).
NO_DROPOUT = dict(dropout_word=0.0, dropout_input=0.0, dropout_hidden=0.0, dropout_output=0.0,
                  dropconnect=0.0)


def tiny_model(dtype=None, seed=0, **overrides):
    """A :data:`TINY` language model (float64 unless ``dtype``), seeded, with ``overrides``."""
    import torch

    from onparse.lm.model import ModelConfig, ONLSTMLanguageModel

    torch.manual_seed(seed)
    return ONLSTMLanguageModel(ModelConfig(**{**TINY, **overrides})).to(dtype or torch.float64)


def random_tokens(steps, batch, vocab=TINY["vocab_size"], seed=1):
    """Token ids of shape (steps, batch) from their own generator."""
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (steps, batch), generator=g)


def run_both(model, tokens, targets, train, state_seed=None):
    """Forward + backward with both implementations (reference, fast) from the same RNG seed:
    ``(output, parameter gradients, initial-state gradients, loss)`` of each."""
    import torch

    results = {}
    for impl in ("reference", "fast"):
        model.implementation = impl
        model.train(train)
        model.zero_grad()
        torch.manual_seed(7)
        state = None
        if state_seed is not None:
            g = torch.Generator().manual_seed(state_seed)
            state = [(torch.randn(h.shape, generator=g, dtype=h.dtype).requires_grad_(),
                      torch.randn(c.shape, generator=g, dtype=c.dtype).requires_grad_())
                     for h, c in model.init_state(tokens.shape[1])]
        out = model(tokens, state)
        # loss touching every output: CE, AR, TAR, and the final states
        loss = (model.loss(out.output, targets) + 2 * out.output.pow(2).mean()
                + (out.raw_last[1:] - out.raw_last[:-1]).pow(2).mean()
                + sum((h * 0.3).sum() + (c * c).sum() * 0.1 for h, c in out.state))
        loss.backward()
        grads = {name: p.grad.clone() for name, p in model.named_parameters()}
        state_grads = [] if state is None else [(h.grad, c.grad) for h, c in state]
        results[impl] = (out, grads, state_grads, loss.detach())
    model.implementation = "fast"
    return results["reference"], results["fast"]


def save_pinned_grammar(path, words, left, right, root=0):
    """A tiny simple-form grammar whose rules are set by hand, saved at ``path``: S -> NT-``root``,
    and every parent's left child one of the symbols ``left`` (indices: nonterminals 0..3, then
    preterminals 4..9), its right child one of ``right``, each choice equally likely.  The
    emissions stay as initialised.  Returns the path as a string."""
    import torch

    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.file import save_grammar
    from onparse.grammar.model import NeuralPCFG

    vocab = ["<unk>", "<eos>", *dict.fromkeys(words)]
    model = NeuralPCFG(GrammarConfig.preset("tiny", len(vocab)))
    with torch.no_grad():
        for mlp in (model.mlp_root, model.mlp_left, model.mlp_right):
            mlp[3].weight.zero_()
            mlp[3].bias.zero_()
        model.mlp_root[3].bias[root] = 50.0
        # The left MLP says "dimension 0", the right one "dimension 1": a child symbol is chosen
        # by the 100-point logit of the embedding that holds 10 there.
        model.mlp_left[3].bias[0] = model.mlp_right[3].bias[1] = 10.0
        model.child_symbols.zero_()
        for symbol in left:
            model.child_symbols[symbol, 0] = 10.0
        for symbol in right:
            model.child_symbols[symbol, 1] = 10.0
    save_grammar(path, config=model.config.to_dict(), vocab=vocab, state_dict=model.state_dict())
    return str(path)

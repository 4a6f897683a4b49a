"""What ``bench_grammar.py`` builds its measurements from: grammar sizes and rule forms, a
vocabulary of made-up words, conll2000's sentence lengths, the grammar trainer's own run object,
epochs cut as the trainer cuts them, timing and the text tables.  Imported as
``grammar_material`` (the scripts run as ``python benchmarks/NAME.py``, which puts this folder
first on ``sys.path``); ``bench_grammar.py`` puts ``src/`` on the path before importing it."""
import os
import random
import statistics
import sys
import time

import torch

from common import word  # benchmarks/ is on the path (this module is imported by bench_grammar.py)

#: ``news`` (the default training corpus) as an epoch of the trainer reads it: the training
#: split's sentences of 2-40 words and their words (``load_corpus(make_spec("news"))``, counted
#: 2026-11-25; the split holds 47,912 sentences of all lengths).
NEWS_SENTENCES, NEWS_WORDS = 46_193, 897_549
#: conll2000's sentence lengths in words (punctuation dropped by tag, as the corpora do):
#: length -> sentences, used when NLTK's conll2000 is not installed.
CONLL2000_LENGTHS = {
    1: 60, 2: 96, 3: 94, 4: 103, 5: 145, 6: 156, 7: 198, 8: 218, 9: 244, 10: 344, 11: 304, 12: 356, 13: 408,
    14: 421, 15: 415, 16: 455, 17: 430, 18: 472, 19: 376, 20: 442, 21: 421, 22: 398, 23: 393, 24: 391, 25: 380,
    26: 351, 27: 325, 28: 301, 29: 244, 30: 248, 31: 233, 32: 194, 33: 150, 34: 136, 35: 146, 36: 127, 37: 121,
    38: 116, 39: 71, 40: 69, 41: 56, 42: 53, 43: 50, 44: 38, 45: 27, 46: 23, 47: 28, 48: 17, 49: 16, 50: 11,
    51: 15, 52: 11, 53: 8, 54: 5, 55: 8, 56: 2, 57: 10, 58: 1, 59: 4, 60: 4, 61: 3, 63: 2, 68: 1, 69: 1, 70: 2}

#: A grammar size beside the presets: the largest with p = 2m that the full rule form allows
#: (m (m+p)^2 = 12 * 36^2 = 15,552 rules, the limit being ``onparse.grammar.config.FULL_RULES``,
#: 16,384), rank 2m as ``small``'s 64 is about 2 x 30.
M12 = dict(n_nonterminals=12, n_preterminals=24, rank=24, symbol_size=64, mlp_size=64)
#: Short names of the rule forms in tables.
FORM_NAMES = {"simple": "simple", "low_rank": "low rank", "full": "full"}


def say(*parts):
    print(*parts, file=sys.stderr, flush=True)


def load1() -> float:
    return os.getloadavg()[0]


def median_of(values):
    return statistics.median(values) if values else float("nan")


def timed(fn):
    """``(seconds, result)`` of ``fn()``; the callers alternate contenders round by round."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def per_call(fn, floor: float) -> float:
    """Seconds per call of ``fn``, called until ``floor`` seconds have passed (at least once).
    One call of a few ms on a loaded machine is either preempted or not, so a median of a few
    such samples is mostly noise; a sample of many calls averages the preemption out."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= floor:
            return elapsed / calls


# --- grammars ----------------------------------------------------------------------------------------

def grammar_config(size: str, form: str, vocab_size: int):
    """The :class:`GrammarConfig` of a preset's sizes (or ``"m12"``: :data:`M12`) in the rule
    form ``form`` (every preset's own form is ``simple``; the form is what is compared here)."""
    from onparse.grammar.config import GRAMMAR_PRESETS, GrammarConfig

    sizes = dict(M12) if size == "m12" else {k: v for k, v in GRAMMAR_PRESETS[size].items() if k != "rule_form"}
    return GrammarConfig(vocab_size=vocab_size, rule_form=form, **sizes)


def sizes_of(config) -> str:
    """``"m=30, p=60, r=64"``: the sizes a form reads (r only for low rank)."""
    rank = f", r={config.rank}" if config.rule_form == "low_rank" else ""
    return f"m={config.n_nonterminals}, p={config.n_preterminals}{rank}"


def label(size: str, form: str, batch=None) -> str:
    """``"small simple"``, ``"small low rank b8"``: a contender's name in tables and JSON."""
    return f"{size} {FORM_NAMES[form]}" + (f" b{batch}" if batch else "")


# --- words and sentences -----------------------------------------------------------------------------

def build_vocab(size: int):
    from onparse.text.vocab import EOS, UNK, Vocabulary

    return Vocabulary([UNK, EOS] + [word(i) for i in range(size - 2)])


def conll2000_lengths(stored: bool = False):
    """``(lengths, source)``: conll2000's sentence lengths, from NLTK when it is installed and
    ``stored`` is false, else from :data:`CONLL2000_LENGTHS` (the same counts)."""
    if not stored:
        try:
            from onparse.text.data import is_installed

            if is_installed("conll2000"):
                from nltk.corpus import conll2000

                from onparse.text.corpora import ptb_tagged_words

                return [len(ptb_tagged_words(s)) for s in conll2000.tagged_sents()], "NLTK conll2000"
        except (ImportError, LookupError, OSError):
            pass
    return [n for n, count in sorted(CONLL2000_LENGTHS.items()) for _ in range(count)], "stored conll2000 histogram"


def random_sentences(lengths, vocab, rng: random.Random):
    """One token list per length, words drawn uniformly from the vocabulary (not <unk>/<eos>)."""
    words = vocab.to_list()[2:]
    return [[rng.choice(words) for _ in range(n)] for n in lengths]


# --- the trainer -------------------------------------------------------------------------------------

def trainer(config, settings, vocab, seed: int):
    """The grammar trainer's own run object with only what its ``_step`` reads (as
    ``onparse.grammar.train.GrammarHooks.__init__`` sets it up, without a corpus or a folder)."""
    from onparse.grammar.model import NeuralPCFG
    from onparse.grammar.train import GrammarHooks, Position

    run = GrammarHooks.__new__(GrammarHooks)
    run.settings, run.config = settings, config
    run.vocab, run.device = vocab, torch.device("cpu")
    torch.manual_seed(seed)
    run.model = NeuralPCFG(config).train()
    run.optimizer = torch.optim.Adam(run.model.parameters(), lr=settings.lr, betas=(settings.beta1, settings.beta2))
    run.at = Position()
    return run


def epoch_batches(lengths, batch_size: int, count: int, vocab, rng: random.Random):
    """``count`` batches spread evenly over one epoch's batches ordered by length, the epoch
    made as the trainer makes it: sentences of 2-40 words sorted by length, cut into batches.
    Also the epoch's mean sentence length."""
    from onparse import GrammarTraining

    kept = sorted(n for n in lengths if 2 <= n <= GrammarTraining().max_words)
    cut = [kept[i:i + batch_size] for i in range(0, len(kept), batch_size)]
    chosen = [cut[int((k + 0.5) * len(cut) / count)] for k in range(count)]
    return [random_sentences(b, vocab, rng) for b in chosen], sum(kept) / len(kept)


def recut(batches, batch_size: int):
    """The same sentences in the same order, cut into batches of ``batch_size`` within each
    given batch (so contenders of different batch sizes train on the same words)."""
    return [b[i:i + batch_size] for b in batches for i in range(0, len(b), batch_size)]


# --- text tables -------------------------------------------------------------------------------------

def table(header, rows):
    cells = [list(map(str, header))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[k]) for r in cells) for k in range(len(header))]
    lines = [" | ".join(c.rjust(w) if k else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths))) for r in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)

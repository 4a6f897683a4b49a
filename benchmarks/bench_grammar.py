"""Grammar speed (issue 38.6): the neural PCFG's inside pass, training, parsing and memory.

Everything is built here from nothing -- freshly initialised grammars of the presets' sizes over a
10,000-word vocabulary (the trainer's ``max_vocab``), random words -- so it runs from a fresh
clone (no ``runs/`` files, no downloads).  Speed does not depend on the weights' values.
Contenders run in this process, alternating rounds (A B A B ...), and medians are compared:

1. **inside**: the rank-space inside (``onparse.grammar.inside.rank_inside``) against the plain
   full-tensor inside (``full_inside`` over ``full_rules_from_rank`` of the same U, V, W), same
   grammar (``small``), same words, n = 10, 20, 40; forward (no gradients, as perplexity runs)
   and forward + backward (gradients to the rules and emissions); ms per sentence and the ratio.
   Their log Z are checked to agree.  Building the full tensor itself is timed apart.
2. **training**: words/s of the trainer's own step (``onparse.grammar.train._Run._step``: forward,
   minus the mean log Z, backward, gradient clipping, Adam) at batch 8, on batches made as the
   trainer makes them (sentences of 2-40 words sorted by length, cut into 8s) from conll2000's
   sentence lengths (NLTK's, when installed; else the same histogram, stored below), a fixed
   spread of batches from shortest to longest; ``tiny``, ``small``, ``medium``; and the projected
   minutes per epoch of ``news`` (its words / words/s).
3. **parsing**: sentences/s of ``Parser.trees`` (what ``Parser.batch`` runs, less building
   ``nltk.Tree`` objects) on the same token lists (conll2000's lengths, all of them) for a grammar
   (``small``, written with ``save_grammar`` and read back by ``onparse.load``; MBR), a student of
   ``onparse distill``'s default sizes (written with ``save_student``, read by ``onparse.load``) and
   one ON-LSTM language model of the bundled model's size (``Parser.from_model``, layer 2).
4. **memory**: peak resident memory of a fresh process running one training forward + backward
   (rules, inside, backward) of one sentence of n = 20, 40, 80, 160 words, ``small`` and
   ``medium``; the increase over the process's size before that step is the chart's share.
   A probe whose estimated size passes ``--memory-limit-mib`` is skipped, not run.
5. **where the time goes**: a training step of the ``small`` preset at batch 8, n = 20 and 40,
   cut into rules forward (the MLPs, the softmaxes, the emission softmax over the vocabulary),
   inside forward, inside backward, rules backward, clipping + Adam; percentages.

    python benchmarks/bench_grammar.py                     # all five, 1 thread, 3-4 minutes
    python benchmarks/bench_grammar.py --rounds 3 --json   # machine-readable
    python benchmarks/bench_grammar.py --quick             # tiny sizes, seconds (the smoke test's)

The load average of the machine is printed with the results (1-minute load at the start and end
of each part): on a shared machine only ratios within one run mean much.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from common import peak_rss_mib  # benchmarks/ is on the path when run as a script

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

#: What each mode measures.  ``lm``: the bundled model's sizes (``onparse info``); ``student``:
#: ``onparse distill``'s defaults (StudentConfig's).
MODES = {
    "full": dict(vocab=10_000, inside_preset="small", inside_lengths=(10, 20, 40), inside_batch=2,
                 train_presets=("tiny", "small", "medium"), train_batches=12, train_batch=8,
                 parse_preset="small", parse_sentences=300,
                 lm=dict(embedding_size=200, hidden_size=400, n_layers=3, chunk_size=10), student={},
                 memory_presets=("small", "medium"), memory_lengths=(20, 40, 80, 160), memory_batch=1,
                 split_preset="small", split_lengths=(20, 40), split_batch=8),
    "quick": dict(vocab=200, inside_preset="tiny", inside_lengths=(6, 10), inside_batch=2,
                  train_presets=("tiny",), train_batches=2, train_batch=8,
                  parse_preset="tiny", parse_sentences=12,
                  lm=dict(embedding_size=20, hidden_size=30, n_layers=3, chunk_size=10),
                  student=dict(embedding_size=16, hidden_size=16, n_layers=1, mlp_size=16),
                  memory_presets=("tiny",), memory_lengths=(10, 20), memory_batch=1,
                  split_preset="tiny", split_lengths=(10,), split_batch=2),
}


# --- shared material -------------------------------------------------------------------------------

def say(*parts):
    print(*parts, file=sys.stderr, flush=True)


def load1() -> float:
    return os.getloadavg()[0]


def word(i: int) -> str:
    """A letters-only lowercase word per id (normalisation leaves it alone)."""
    letters = ""
    while True:
        letters = chr(ord("a") + i % 26) + letters
        i //= 26
        if i == 0:
            return "w" + letters


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


def median_of(values):
    return statistics.median(values) if values else float("nan")


def timed(fn):
    """``(seconds, result)`` of ``fn()``; the callers alternate contenders round by round."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


# --- 1. the inside pass: rank space against the full tensor ------------------------------------------

def bench_inside(mode, args):
    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.inside import RankRules, full_inside, full_rules_from_rank, rank_inside
    from onparse.grammar.model import NeuralPCFG

    torch.manual_seed(args.seed)
    config = GrammarConfig.preset(mode["inside_preset"], mode["vocab"])
    with torch.no_grad():
        rules = NeuralPCFG(config).rules()
    build = []
    for _ in range(3):
        seconds, log_T = timed(lambda: full_rules_from_rank(rules.log_U, rules.log_V, rules.log_W))
        build.append(seconds)
    batch = mode["inside_batch"]
    out = {"preset": mode["inside_preset"], "sizes": {"m": config.n_nonterminals, "p": config.n_preterminals,
                                                      "r": config.rank}, "batch": batch,
           "full_tensor_entries": log_T.numel(), "full_tensor_build_ms": 1000 * median_of(build), "rows": []}
    generator = torch.Generator().manual_seed(args.seed)
    for n in mode["inside_lengths"]:
        ids = torch.randint(2, mode["vocab"], (batch, n), generator=generator)
        lengths = torch.full((batch,), n)
        emit = rules.log_emission.t()[ids]

        def rank_forward():
            with torch.no_grad():
                return rank_inside(RankRules(rules.log_root, rules.log_U, rules.log_V, rules.log_W, emit), lengths)

        def full_forward():
            with torch.no_grad():
                return full_inside(rules.log_root, log_T, emit, lengths)

        def rank_both():
            leaves = [t.clone().requires_grad_() for t in (rules.log_root, rules.log_U, rules.log_V, rules.log_W, emit)]
            rank_inside(RankRules(*leaves), lengths).sum().backward()

        def full_both():
            leaves = [t.clone().requires_grad_() for t in (rules.log_root, log_T, emit)]
            full_inside(*leaves, lengths).sum().backward()

        z_rank, z_full = rank_forward(), full_forward()          # warm-up, and the check
        gap = float(((z_rank - z_full).abs() / z_rank.abs()).max())
        times = {k: [] for k in ("rank_forward", "full_forward", "rank_both", "full_both")}
        for r in range(args.rounds):
            for name, fn in (("rank_forward", rank_forward), ("full_forward", full_forward),
                             ("rank_both", rank_both), ("full_both", full_both)):
                times[name].append(timed(fn)[0])
            say(f"[inside] n={n} round {r + 1}: "
                + ", ".join(f"{k} {1000 * v[-1] / batch:.1f}" for k, v in times.items()) + " ms/sentence")
        row = {"n": n, "max_relative_log_z_gap": gap}
        for name, values in times.items():
            row[f"{name}_ms"] = 1000 * median_of(values) / batch
        row["forward_ratio"] = row["full_forward_ms"] / row["rank_forward_ms"]
        row["both_ratio"] = row["full_both_ms"] / row["rank_both_ms"]
        out["rows"].append(row)
    return out


# --- 2. training throughput --------------------------------------------------------------------------

def trainer(preset: str, vocab, seed: int):
    """The grammar trainer's own run object with only what its ``_step`` reads (as
    ``onparse.grammar.train._Run.__init__`` sets it up, without a corpus or a folder)."""
    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.model import NeuralPCFG
    from onparse import GrammarTraining
    from onparse.grammar.train import Position, _Run

    run = _Run.__new__(_Run)
    run.settings = settings = GrammarTraining()
    run.vocab, run.device = vocab, torch.device("cpu")
    torch.manual_seed(seed)
    run.config = GrammarConfig.preset(preset, len(vocab))
    run.model = NeuralPCFG(run.config).train()
    run.optimizer = torch.optim.Adam(run.model.parameters(), lr=settings.lr, betas=(settings.beta1, settings.beta2))
    run.at = Position()
    return run


def epoch_batches(lengths, batch_size: int, count: int, vocab, rng: random.Random):
    """``count`` batches spread evenly over one epoch's batches ordered by length, the epoch
    made as the trainer makes it: sentences of 2-40 words sorted by length, cut into batches."""
    from onparse import GrammarTraining

    kept = sorted(n for n in lengths if 2 <= n <= GrammarTraining().max_words)
    cut = [kept[i:i + batch_size] for i in range(0, len(kept), batch_size)]
    chosen = [cut[int((k + 0.5) * len(cut) / count)] for k in range(count)]
    return [random_sentences(b, vocab, rng) for b in chosen], sum(kept) / len(kept)


def bench_training(mode, args, lengths):
    vocab = build_vocab(mode["vocab"])
    rng = random.Random(args.seed)
    batches, mean_length = epoch_batches(lengths, mode["train_batch"], mode["train_batches"], vocab, rng)
    words = sum(len(s) for b in batches for s in b)
    runs = {preset: trainer(preset, vocab, args.seed) for preset in mode["train_presets"]}
    for run in runs.values():
        run._step(batches[len(batches) // 2])                  # warm-up: Adam's state, allocations
    times = {preset: [] for preset in runs}
    for r in range(args.rounds):
        for preset, run in runs.items():                        # presets side by side, round by round
            def epoch_part(run=run):
                for b in batches:
                    run._step(b)
            times[preset].append(timed(epoch_part)[0])
        say(f"[training] round {r + 1}: " + ", ".join(f"{p} {words / t[-1]:,.0f}" for p, t in times.items())
            + " words/s")
    rows = []
    for preset, values in times.items():
        rate = words / median_of(values)
        config = runs[preset].config
        rows.append({"preset": preset, "m": config.n_nonterminals, "p": config.n_preterminals, "r": config.rank,
                     "parameters": sum(p.numel() for p in runs[preset].model.parameters()),
                     "words_per_s": rate, "sentences_per_s": rate / mean_length,
                     "ms_per_batch": 1000 * median_of(values) / len(batches),
                     "news_epoch_minutes": NEWS_WORDS / rate / 60})
    return {"batch": mode["train_batch"], "batches": len(batches), "words": words,
            "batch_lengths": [len(b[0]) for b in batches], "epoch_mean_length": mean_length,
            "news": {"sentences": NEWS_SENTENCES, "words": NEWS_WORDS}, "rows": rows}


# --- 3. parsing throughput ---------------------------------------------------------------------------

def parsers(mode, args, vocab, folder: Path):
    """``[(name, what, Parser)]``: the grammar and the student through their files and
    ``onparse.load``, the language model in memory (``Parser.from_model``)."""
    import onparse
    from onparse.api import Parser
    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.file import save_grammar
    from onparse.grammar.model import NeuralPCFG
    from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
    from onparse import StudentConfig
    from onparse.student.file import save_student
    from onparse.student.model import SpanStudent

    torch.manual_seed(args.seed)
    config = GrammarConfig.preset(mode["parse_preset"], len(vocab))
    save_grammar(folder / "grammar.pt", config=config.to_dict(), vocab=vocab,
                 state_dict=NeuralPCFG(config).state_dict(), metadata={"preset": mode["parse_preset"]})
    student_config = StudentConfig(vocab_size=len(vocab), **mode["student"])
    save_student(folder / "student.pt", config=student_config.to_dict(), vocab=vocab,
                 state_dict=SpanStudent(student_config).state_dict())
    lm = ONLSTMLanguageModel(ModelConfig(vocab_size=len(vocab), **mode["lm"]))
    c, s, g = mode["lm"], student_config, config
    grammar = f"{mode['parse_preset']} grammar (m={g.n_nonterminals}, p={g.n_preterminals}, r={g.rank}), MBR"
    student = f"student (BiLSTM {s.n_layers} x {s.hidden_size}, embedding {s.embedding_size}, scorer {s.mlp_size}), CYK"
    language_model = f"one ON-LSTM LM ({c['n_layers']} layers {c['hidden_size']}/{c['embedding_size']}), layer 2"
    return [("grammar", grammar, onparse.load(str(folder / "grammar.pt"), "cpu")),
            ("student", student, onparse.load(str(folder / "student.pt"), "cpu")),
            ("language model", language_model, Parser.from_model(lm, vocab))]


def bench_parsing(mode, args, lengths):
    vocab = build_vocab(mode["vocab"])
    rng = random.Random(args.seed + 1)
    tokens = random_sentences(rng.choices(lengths, k=mode["parse_sentences"]), vocab, rng)
    words = sum(map(len, tokens))
    with tempfile.TemporaryDirectory() as folder:
        contenders = parsers(mode, args, vocab, Path(folder))
        for _, _, parser in contenders:
            parser.trees(tokens[:8])                            # warm-up
        times = {name: [] for name, _, _ in contenders}
        for r in range(args.rounds):
            for name, _, parser in contenders:
                seconds, trees = timed(lambda: parser.trees(tokens))
                assert len(trees) == len(tokens) and all(t is not None for t in trees)
                times[name].append(seconds)
            say(f"[parsing] round {r + 1}: " + ", ".join(f"{k} {len(tokens) / v[-1]:,.1f}" for k, v in times.items())
                + " sentences/s")
        batch_size = contenders[0][2].batch_size
    grammar_rate = len(tokens) / median_of(times["grammar"])
    rows = []
    for name, what, _ in contenders:
        rate = len(tokens) / median_of(times[name])
        rows.append({"model": name, "what": what, "sentences_per_s": rate, "words_per_s": rate * words / len(tokens),
                     "vs_grammar": rate / grammar_rate})
    return {"sentences": len(tokens), "words": words, "longest": max(map(len, tokens)), "batch_size": batch_size,
            "rows": rows}


# --- 4. memory against sentence length ---------------------------------------------------------------

def memory_probe(args):
    """Child process: one training forward + backward of ``--memory-batch`` sentences of
    ``--probe-length`` words; prints its peak resident memory as JSON."""
    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.model import NeuralPCFG

    torch.manual_seed(args.seed)
    model = NeuralPCFG(GrammarConfig.preset(args.probe_preset, args.probe_vocab))
    short = torch.randint(2, args.probe_vocab, (1, 4))
    model(short, torch.tensor([4])).sum().backward()              # libraries loaded, allocator warm
    model.zero_grad(set_to_none=True)
    before = peak_rss_mib()
    n, batch = args.probe_length, args.memory_batch
    ids = torch.randint(2, args.probe_vocab, (batch, n))
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def pack(t):                    # what autograd keeps for the backward: each storage once, weights aside
        storage = t.untyped_storage()
        if storage.data_ptr() not in weights:
            saved[storage.data_ptr()] = storage.nbytes()
        return t

    start = time.perf_counter()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        z = model(ids, torch.full((batch,), n)).sum()
    z.backward()
    seconds = time.perf_counter() - start
    peak = peak_rss_mib()
    print(json.dumps({"peak_mib": peak, "before_mib": before, "added_mib": peak - before,
                      "saved_mib": sum(saved.values()) / 2 ** 20, "seconds": seconds}))


def chart_mib(batch, n, rank):
    """The autograd chart the inside keeps, ``B n^3 r / 2`` floats (``onparse.grammar.parse``)."""
    return batch * n ** 3 * rank / 2 * 4 / 2 ** 20


def bench_memory(mode, args):
    from onparse.grammar.config import GRAMMAR_PRESETS

    rows = []
    batch = mode["memory_batch"]
    for preset in mode["memory_presets"]:
        rank = GRAMMAR_PRESETS[preset]["rank"]
        for n in mode["memory_lengths"]:
            estimate = chart_mib(batch, n, rank)
            row = {"preset": preset, "n": n, "batch": batch, "chart_estimate_mib": estimate}
            if 2.5 * estimate > args.memory_limit_mib:            # measured: the peak added stays below this
                row["skipped"] = f"estimated {2.5 * estimate:,.0f} MiB > --memory-limit-mib {args.memory_limit_mib}"
                say(f"[memory] {preset} n={n}: skipped ({row['skipped']})")
                rows.append(row)
                continue
            cmd = [sys.executable, __file__, "--probe-preset", preset, "--probe-length", str(n),
                   "--probe-vocab", str(mode["vocab"]), "--memory-batch", str(batch), "--threads", str(args.threads),
                   "--seed", str(args.seed)]
            done = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600,
                                  env={**os.environ, "OMP_NUM_THREADS": str(args.threads)})
            if done.returncode != 0:
                raise SystemExit(f"error: memory probe {preset} n={n} failed: {done.stderr.strip()[-400:]}")
            row.update(json.loads(done.stdout.strip().splitlines()[-1]))
            say(f"[memory] {preset} n={n}: peak {row['peak_mib']:,.0f} MiB (+{row['added_mib']:,.0f} over "
                f"{row['before_mib']:,.0f}; autograd keeps {row['saved_mib']:,.1f} MiB), {row['seconds']:.2f} s")
            rows.append(row)
    return {"batch": batch, "rows": rows}


# --- 5. where the time goes --------------------------------------------------------------------------

PHASES = ("rules forward", "inside forward", "inside backward", "rules backward", "clip + Adam")


def bench_split(mode, args):
    """A training step cut into :data:`PHASES` (the rules detached into leaves between the rules
    and the inside, so that each side's backward is timed on its own), against the step whole."""
    from onparse.grammar.config import GrammarConfig
    from onparse.grammar.inside import rank_inside
    from onparse.grammar.model import GrammarRules, NeuralPCFG

    torch.manual_seed(args.seed)
    config = GrammarConfig.preset(mode["split_preset"], mode["vocab"])
    model = NeuralPCFG(config).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.75, 0.999))
    params = list(model.parameters())
    batch = mode["split_batch"]
    generator = torch.Generator().manual_seed(args.seed)
    out = {"preset": mode["split_preset"], "batch": batch, "rows": []}

    def finish():
        torch.nn.utils.clip_grad_norm_(params, 3.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for n in mode["split_lengths"]:
        ids = torch.randint(2, mode["vocab"], (batch, n), generator=generator)
        lengths = torch.full((batch,), n)

        def split_step():
            marks = [time.perf_counter()]
            rules = model.rules()
            marks.append(time.perf_counter())
            leaves = GrammarRules(*(t.detach().requires_grad_() for t in rules))
            loss = -rank_inside(leaves.for_words(ids), lengths).mean()
            marks.append(time.perf_counter())
            loss.backward()
            marks.append(time.perf_counter())
            grads = [torch.zeros_like(t) if t.grad is None else t.grad for t in leaves]
            torch.autograd.backward(list(rules), grads)
            marks.append(time.perf_counter())
            finish()
            marks.append(time.perf_counter())
            return [b - a for a, b in zip(marks, marks[1:])]

        def whole_step():
            start = time.perf_counter()
            (-model(ids, lengths).mean()).backward()
            finish()
            return time.perf_counter() - start

        split_step(), whole_step()                                 # warm-up
        parts, whole = [], []
        for _ in range(args.rounds):
            parts.append(split_step())
            whole.append(whole_step())
        medians = [median_of([p[k] for p in parts]) for k in range(len(PHASES))]
        total = sum(medians)
        row = {"n": n, "ms": {name: 1000 * v for name, v in zip(PHASES, medians)},
               "percent": {name: 100 * v / total for name, v in zip(PHASES, medians)},
               "split_total_ms": 1000 * total, "whole_step_ms": 1000 * median_of(whole)}
        say(f"[where] n={n}: " + ", ".join(f"{k} {v:.0f}%" for k, v in row["percent"].items())
            + f"; {row['split_total_ms']:.0f} ms (whole step {row['whole_step_ms']:.0f} ms)")
        out["rows"].append(row)
    return out


# --- the report --------------------------------------------------------------------------------------

def table(header, rows):
    cells = [list(map(str, header))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[k]) for r in cells) for k in range(len(header))]
    lines = [" | ".join(c.rjust(w) if k else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths))) for r in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def report(result) -> str:
    out = []
    m = result["machine"]
    out.append(f"{m['threads']} torch thread(s) on {m['cpus']} CPU(s), torch {m['torch']}; load average (1 min) "
               f"{m['load_start']:.2f} at the start, {m['load_end']:.2f} at the end, {m['load_max']:.2f} at most "
               f"(5/15 min at the end: {m['load_end_5']:.2f}/{m['load_end_15']:.2f}); {result['rounds']} rounds; "
               f"lengths: {result['lengths_source']}")
    if "inside" in result:
        r = result["inside"]
        out.append(f"\n1. inside, {r['preset']} (m={r['sizes']['m']}, p={r['sizes']['p']}, r={r['sizes']['r']}), "
                   f"batch {r['batch']}, ms per sentence (full tensor: {r['full_tensor_entries']:,} entries, built in "
                   f"{r['full_tensor_build_ms']:.1f} ms, not counted)")
        out.append(table(["n", "rank fwd", "full fwd", "ratio", "rank fwd+bwd", "full fwd+bwd", "ratio", "log Z gap"],
                         [[x["n"], f"{x['rank_forward_ms']:.1f}", f"{x['full_forward_ms']:.1f}",
                           f"{x['forward_ratio']:.0f}x", f"{x['rank_both_ms']:.1f}", f"{x['full_both_ms']:.1f}",
                           f"{x['both_ratio']:.0f}x", f"{x['max_relative_log_z_gap']:.0e}"] for x in r["rows"]]))
    if "training" in result:
        r = result["training"]
        out.append(f"\n2. training (the trainer's step: forward, backward, clip, Adam), batch {r['batch']}, "
                   f"{r['batches']} batches of {min(r['batch_lengths'])}-{max(r['batch_lengths'])} words spread over "
                   f"an epoch ({r['words']:,} words); news = {r['news']['sentences']:,} sentences, "
                   f"{r['news']['words'] / 1e6:.2f}M words")
        base = r["rows"][0]["words_per_s"]
        out.append(table(["preset", "m, p, r", "words/s", "sentences/s", "ms/batch", f"vs {r['rows'][0]['preset']}",
                          "min/epoch of news"],
                         [[x["preset"], f"{x['m']}, {x['p']}, {x['r']}", f"{x['words_per_s']:,.0f}",
                           f"{x['sentences_per_s']:,.1f}", f"{x['ms_per_batch']:.0f}",
                           f"{x['words_per_s'] / base:.2f}x", f"{x['news_epoch_minutes']:.1f}"] for x in r["rows"]]))
    if "parsing" in result:
        r = result["parsing"]
        out.append(f"\n3. parsing {r['sentences']} sentences ({r['words']:,} words, up to {r['longest']}), "
                   f"Parser.trees, batch {r['batch_size']}")
        out.append(table(["model", "what", "sentences/s", "words/s", "vs grammar"],
                         [[x["model"], x["what"], f"{x['sentences_per_s']:,.1f}", f"{x['words_per_s']:,.0f}",
                           f"{x['vs_grammar']:.2f}x"] for x in r["rows"]]))
    if "memory" in result:
        r = result["memory"]
        out.append(f"\n4. memory: peak RSS of a fresh process, one training forward + backward of {r['batch']} "
                   "sentence(s) of n words (MiB)")
        out.append(table(["preset", "n", "peak RSS", "added by the step", "autograd keeps", "parse.py's budget",
                          "seconds"],
                         [[x["preset"], x["n"], "skipped", x["skipped"], "", f"{x['chart_estimate_mib']:,.1f}", ""]
                          if "skipped" in x else
                          [x["preset"], x["n"], f"{x['peak_mib']:,.0f}", f"{x['added_mib']:,.0f}",
                           f"{x['saved_mib']:,.1f}", f"{x['chart_estimate_mib']:,.1f}", f"{x['seconds']:.2f}"]
                          for x in r["rows"]]))
        out.append("(autograd keeps: the tensors saved for the backward, weights aside, measured; parse.py's budget: "
                   "B n^3 r / 2 floats, what onparse.grammar.parse batches by)")
    if "where" in result:
        r = result["where"]
        out.append(f"\n5. where the time of a training step goes, {r['preset']}, batch {r['batch']} (ms, %)")
        out.append(table(["n"] + list(PHASES) + ["sum", "whole step"],
                         [[x["n"]] + [f"{x['ms'][p]:.1f} ({x['percent'][p]:.0f}%)" for p in PHASES]
                          + [f"{x['split_total_ms']:.0f}", f"{x['whole_step_ms']:.0f}"] for x in r["rows"]]))
    return "\n".join(out)


PARTS = ("inside", "training", "parsing", "memory", "where")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds per contender (default 3)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, a few seconds (the smoke test)")
    ap.add_argument("--json", action="store_true", help="print the results as one JSON object")
    ap.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="parts to run (default: all)")
    ap.add_argument("--no-memory", action="store_true", help="leave out the memory part (it starts processes)")
    ap.add_argument("--memory-limit-mib", type=float, default=8192,
                    help="skip a memory probe estimated to need more (default 8192)")
    ap.add_argument("--seed", type=int, default=0)
    # the memory probe's child process
    ap.add_argument("--probe-preset", help=argparse.SUPPRESS)
    ap.add_argument("--probe-length", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--probe-vocab", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--memory-batch", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.threads < 1:
        ap.error("--rounds and --threads must be at least 1")
    torch.set_num_threads(args.threads)
    if args.probe_preset:
        memory_probe(args)
        return None
    mode = MODES["quick" if args.quick else "full"]
    lengths, source = conll2000_lengths(stored=args.quick)
    started = time.perf_counter()
    loads = [load1()]
    result = {"mode": "quick" if args.quick else "full", "rounds": args.rounds, "lengths_source": source}
    parts = [p for p in args.only if not (p == "memory" and args.no_memory)]
    for part in PARTS:
        if part not in parts:
            continue
        say(f"[{part}] load average {load1():.2f}")
        if part == "inside":
            result[part] = bench_inside(mode, args)
        elif part == "training":
            result[part] = bench_training(mode, args, lengths)
        elif part == "parsing":
            result[part] = bench_parsing(mode, args, lengths)
        elif part == "memory":
            result[part] = bench_memory(mode, args)
        else:
            result[part] = bench_split(mode, args)
        loads.append(load1())
    end = os.getloadavg()
    result["machine"] = {"threads": torch.get_num_threads(), "cpus": os.cpu_count(), "torch": torch.__version__,
                         "load_start": loads[0], "load_end": end[0], "load_end_5": end[1], "load_end_15": end[2],
                         "load_max": max(loads + [end[0]]), "loads": loads, "seconds": time.perf_counter() - started}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(report(result))
        print(f"\n({result['machine']['seconds']:.0f} s)")
    return result


if __name__ == "__main__":
    main()

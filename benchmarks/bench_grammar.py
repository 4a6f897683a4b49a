"""Grammar speed (issues 38.6 and 56.7): the neural PCFG's three rule forms -- ``simple`` (the
default of every preset), ``low_rank`` (the form before) and ``full`` -- in the inside pass,
training, parsing and memory, and where a training step's time goes.

Everything is built here from nothing -- freshly initialised grammars over a 10,000-word
vocabulary (the trainer's ``max_vocab``), random words -- so it runs from a fresh clone (no
``runs/`` files, no downloads).  Speed does not depend on the weights' values.  Contenders run in
this process, alternating rounds (A B C A B C ...); medians, and ratios between them.

The full form exists only for tiny grammars (at most 16,384 rules ``m (m+p)^2``,
``onparse.grammar.config.FULL_RULES``): it is compared at the ``tiny`` preset's sizes (m=4, p=6)
and at ``m12`` (m=12, p=24, r=24: the largest p = 2m grammar the form allows), never at
``small``.  At ``small`` the "full tensor" contender is the plain full-tensor inside
(``full_inside``, Kim et al.'s N-PCFG algorithm) over the simple grammar's rules written as a
tensor.  Every grammar reaches the inside as rank-space rules whose chart is ``chart_rank`` wide:
m (simple), r (low rank), (m+p)^2 (full).

1. **inside**: ``rank_inside`` over each form's rules (``NeuralPCFG(config).rules()``) and
   ``full_inside`` over the full tensor, n = 10, 20, 40, batch 2, same words; forward (no
   gradients, as perplexity runs) and forward + backward (gradients to what training trains:
   the rule tensors made from weights, and the words' emissions); ms per sentence and the ratio
   to the simple form.  Groups ``small`` (simple, low rank, full tensor), ``m12`` and ``tiny``
   (simple, low rank, full form, full tensor).  Each form's log Z is checked against
   ``full_inside`` over its own tensor.
2. **training**: words/s (and words/s per thread) of the trainer's own step
   (``onparse.grammar.train.GrammarHooks._step``: forward, minus the mean log Z, backward, clipping,
   Adam) on the same sentences for every contender: batches made as the trainer makes them
   (sentences of 2-40 words sorted by length, cut into 8s) from conll2000's sentence lengths
   (NLTK's, when installed; else the same histogram, stored in ``grammar_material.py``), a fixed
   spread from shortest to longest, each cut again at the contender's batch size.  The chosen
   size -- ``small``, simple form, the trainer's default batch (4) -- beside today's ``small``
   before issue 56 (low rank, batch 8, lr 2e-3: the old recipe), the two crossed (form alone,
   batch alone), ``medium`` simple and the three forms at ``tiny``; the projected minutes per
   epoch of ``news`` (its words / words/s).
3. **parsing**: sentences/s of ``Parser.trees`` (what ``Parser.batch`` runs, less building
   ``nltk.Tree`` objects) on the same token lists (conll2000's lengths) for grammars written
   with ``save_grammar`` and read back by ``onparse.load`` (MBR: ``small`` simple and low rank,
   ``tiny`` simple and full), a student of ``onparse distill``'s default sizes (``save_student``)
   and one ON-LSTM language model of the bundled model's size (``Parser.from_model``, layer 2).
4. **memory**: peak resident memory of a fresh process running one training forward + backward
   (rules, inside, backward) of one sentence of n = 20, 40, 80, 160 words: ``small`` simple and
   low rank, ``medium`` simple, ``tiny`` full; the increase over the process's size before that
   step, and what autograd keeps.  A probe whose estimated size passes ``--memory-limit-mib``
   is skipped, not run.
5. **where the time goes**: a training step of ``small`` in the simple form at the trainer's
   batch (4), beside the low-rank form at batch 8, n = 20 and 40, cut into rules forward (the
   MLPs, the softmaxes, the emission softmax over the vocabulary), inside forward, inside
   backward, rules backward, clipping + Adam; percentages.

    python benchmarks/bench_grammar.py                     # all five, 1 thread
    python benchmarks/bench_grammar.py --only inside training --rounds 3
    python benchmarks/bench_grammar.py --json              # machine-readable
    python benchmarks/bench_grammar.py --quick             # tiny sizes, seconds (the smoke test's)

A timed sample of the inside (1) and of the step cut into parts (5) repeats its call until 0.3 s
have passed and takes the mean per call (``per_call``): one call of a few ms on a loaded machine
is either preempted or not, and a median of three such single calls was mostly noise.  The load
average of the machine is printed with the results (1-minute load at the start and end of each
part): on a shared machine only ratios within one run mean much.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from common import peak_rss_mib  # benchmarks/ is on the path when run as a script
from grammar_material import (FORM_NAMES, NEWS_SENTENCES, NEWS_WORDS, build_vocab, conll2000_lengths, epoch_batches,
                              grammar_config, label, load1, median_of, per_call, random_sentences, recut, say, sizes_of,
                              table, timed, trainer)

#: The step before issue 56 (the ``small`` preset's v19 recipe): twice today's batch and lr.
OLD_RECIPE = dict(batch_size=8, lr=2e-3)
#: What each mode measures.  Training and split contenders are ``(size, form, settings
#: overrides[, role])``: no overrides is the trainer's defaults.  ``lm``: the bundled model's sizes
#: (``onparse info``); ``student``: ``onparse distill``'s defaults (StudentConfig's).
MODES = {
    "full": dict(vocab=10_000, floor=0.3, inside_lengths=(10, 20, 40), inside_batch=2,
                 inside_groups=(("small", ("simple", "low_rank", "tensor")),
                                ("m12", ("simple", "low_rank", "full", "tensor")),
                                ("tiny", ("simple", "low_rank", "full", "tensor"))),
                 train=(("small", "simple", {}, "chosen"), ("small", "low_rank", OLD_RECIPE, "old recipe"),
                        ("small", "low_rank", {}, ""), ("small", "simple", OLD_RECIPE, ""),
                        ("medium", "simple", {}, ""), ("tiny", "simple", {}, ""), ("tiny", "low_rank", {}, ""),
                        ("tiny", "full", {}, "")),
                 train_batches=12, parse_sentences=300,
                 parse_grammars=(("small", "simple"), ("small", "low_rank"), ("tiny", "simple"), ("tiny", "full")),
                 lm=dict(embedding_size=200, hidden_size=400, n_layers=3, chunk_size=10), student={},
                 memory_grammars=(("small", "simple"), ("small", "low_rank"), ("medium", "simple"), ("tiny", "full")),
                 memory_lengths=(20, 40, 80, 160), memory_batch=1,
                 split=(("small", "simple", {}), ("small", "low_rank", OLD_RECIPE)), split_lengths=(20, 40)),
    "quick": dict(vocab=200, floor=0.0, inside_lengths=(6, 10), inside_batch=2,
                  inside_groups=(("tiny", ("simple", "low_rank", "full", "tensor")),),
                  train=(("tiny", "simple", {}, "chosen"), ("tiny", "low_rank", OLD_RECIPE, "old recipe"),
                         ("tiny", "full", {}, "")),
                  train_batches=2, parse_sentences=12,
                  parse_grammars=(("tiny", "simple"), ("tiny", "low_rank"), ("tiny", "full")),
                  lm=dict(embedding_size=20, hidden_size=30, n_layers=3, chunk_size=10),
                  student=dict(embedding_size=16, hidden_size=16, n_layers=1, mlp_size=16),
                  memory_grammars=(("tiny", "simple"), ("tiny", "full")), memory_lengths=(10, 20), memory_batch=1,
                  split=(("tiny", "simple", {}), ("tiny", "low_rank", OLD_RECIPE)), split_lengths=(10,)),
}


def settings_with(overrides):
    from onparse import GrammarTraining

    return GrammarTraining().with_overrides(overrides)


# --- 1. the inside pass: the three forms and the full tensor ------------------------------------------

def form_rules(size, form, vocab_size, seed):
    """``(config, rules, trained)``: a fresh grammar's rank-space rules (detached) and, per
    tensor, whether training sends it a gradient (the simple form's U and the full form's V, W
    are constants)."""
    from onparse.grammar.model import NeuralPCFG

    torch.manual_seed(seed)
    model = NeuralPCFG(grammar_config(size, form, vocab_size))
    rules = model.rules()
    return model.config, [t.detach() for t in rules], [t.requires_grad for t in rules]


def inside_runners(rules, trained, log_T, ids, lengths):
    """``(forward, forward + backward)`` of the rank-space inside over ``rules``, or of the
    full-tensor inside over ``log_T`` (with the rules' root and emissions) when it is given."""
    from onparse.grammar.inside import RankRules, full_inside, rank_inside

    root, U, V, W, emission = rules
    emit = emission.t()[ids]
    if log_T is not None:
        def forward():
            with torch.no_grad():
                return full_inside(root, log_T, emit, lengths)

        def both():
            full_inside(*(t.clone().requires_grad_() for t in (root, log_T, emit)), lengths).sum().backward()
        return forward, both

    def forward():
        with torch.no_grad():
            return rank_inside(RankRules(root, U, V, W, emit), lengths)

    def both():
        leaves = [t.clone().requires_grad_(g) for t, g in zip((root, U, V, W, emit), trained[:4] + [True])]
        rank_inside(RankRules(*leaves), lengths).sum().backward()
    return forward, both


def relative_gap(a, b):
    return float(((a - b).abs() / b.abs()).max())


def inside_group(size, contenders, mode, args):
    from onparse.grammar.inside import full_inside, full_rules_from_rank

    forms = [c for c in contenders if c != "tensor"]
    built = {form: form_rules(size, form, mode["vocab"], args.seed) for form in forms}
    tensors, build_ms = {}, None
    for form in forms:                          # each form's own tensor: the log Z check; simple's is timed
        _, U, V, W, _ = built[form][1]
        seconds, tensors[form] = timed(lambda: full_rules_from_rank(U, V, W))
        build_ms = 1000 * seconds if form == "simple" else build_ms
    config = built["simple"][0]
    widths = {form: built[form][0].chart_rank for form in forms}
    widths["tensor"] = config.n_symbols ** 2
    out = {"size": size, "sizes": {form: sizes_of(built[form][0]) for form in forms}, "contenders": list(contenders),
           "chart_width": widths, "full_tensor_entries": tensors["simple"].numel(), "full_tensor_build_ms": build_ms,
           "log_z_gap": {}, "rows": []}
    batch = mode["inside_batch"]
    generator = torch.Generator().manual_seed(args.seed)
    for k, n in enumerate(mode["inside_lengths"]):
        ids = torch.randint(2, mode["vocab"], (batch, n), generator=generator)
        lengths = torch.full((batch,), n)
        runners = {c: inside_runners(*built["simple" if c == "tensor" else c][1:],
                                     tensors["simple"] if c == "tensor" else None, ids, lengths) for c in contenders}
        if k == 0:                              # each form against the plain inside over its own tensor
            for form in forms:
                rules = built[form][1]
                z_full = full_inside(rules[0], tensors[form], rules[4].t()[ids], lengths)
                out["log_z_gap"][form] = relative_gap(runners[form][0](), z_full)
        for forward, both in runners.values():  # warm-up
            forward(), both()
        times = {(c, part): [] for c in contenders for part in ("forward", "both")}
        for r in range(args.rounds):
            for part, index in (("forward", 0), ("both", 1)):
                for c in contenders:
                    times[c, part].append(per_call(runners[c][index], mode["floor"]))
            say(f"[inside {size}] n={n} round {r + 1}: " + ", ".join(
                f"{c} {1000 * times[c, 'forward'][-1] / batch:.1f}/{1000 * times[c, 'both'][-1] / batch:.1f}"
                for c in contenders) + " ms/sentence (forward/both)")
        ms = {c: {part: 1000 * median_of(times[c, part]) / batch for part in ("forward", "both")} for c in contenders}
        out["rows"].append({"n": n, "ms": ms, "vs_simple": {c: {part: ms[c][part] / ms["simple"][part]
                                                                for part in ("forward", "both")} for c in contenders}})
    return out


def bench_inside(mode, args):
    return {"batch": mode["inside_batch"],
            "groups": [inside_group(size, contenders, mode, args) for size, contenders in mode["inside_groups"]]}


# --- 2. training throughput --------------------------------------------------------------------------

def bench_training(mode, args, lengths):
    vocab = build_vocab(mode["vocab"])
    contenders = []
    for size, form, overrides, role in mode["train"]:
        settings = settings_with(overrides)
        run = trainer(grammar_config(size, form, len(vocab)), settings, vocab, args.seed)
        contenders.append(dict(name=label(size, form, settings.batch_size), size=size, form=form, role=role,
                               settings=settings, run=run))
    widest = max(c["settings"].batch_size for c in contenders)
    base, mean_length = epoch_batches(lengths, widest, mode["train_batches"], vocab, random.Random(args.seed))
    words = sum(len(s) for b in base for s in b)
    for c in contenders:
        c["batches"] = recut(base, c["settings"].batch_size)
        c["run"]._step(c["batches"][len(c["batches"]) // 2])      # warm-up: Adam's state, allocations
        c["times"] = []
    for r in range(args.rounds):
        for c in contenders:                                       # side by side, round by round
            def epoch_part(c=c):
                for b in c["batches"]:
                    c["run"]._step(b)
            c["times"].append(timed(epoch_part)[0])
        say(f"[training] round {r + 1}: " + ", ".join(f"{c['name']} {words / c['times'][-1]:,.0f}"
                                                      for c in contenders) + " words/s")
    threads = torch.get_num_threads()
    rows = []
    for c in contenders:
        rate, config = words / median_of(c["times"]), c["run"].config
        rows.append({"name": c["name"], "size": c["size"], "form": c["form"], "role": c["role"],
                     "batch": c["settings"].batch_size, "lr": c["settings"].lr, "sizes": sizes_of(config),
                     "chart_width": config.chart_rank,
                     "parameters": sum(p.numel() for p in c["run"].model.parameters()),
                     "words_per_s": rate, "words_per_s_per_thread": rate / threads,
                     "sentences_per_s": rate / mean_length, "steps": len(c["batches"]),
                     "ms_per_batch": 1000 * median_of(c["times"]) / len(c["batches"]),
                     "news_epoch_minutes": NEWS_WORDS / rate / 60})
    roles = {row["role"]: row for row in rows if row["role"]}
    for row in rows:
        row["vs_old_recipe"] = row["words_per_s"] / roles["old recipe"]["words_per_s"]
    chosen, old = roles["chosen"], roles["old recipe"]
    return {"threads": threads, "batches": len(base), "sentences": sum(map(len, base)), "words": words,
            "batch_lengths": [len(b[0]) for b in base], "epoch_mean_length": mean_length,
            "news": {"sentences": NEWS_SENTENCES, "words": NEWS_WORDS}, "rows": rows,
            "chosen": {"name": chosen["name"], "words_per_s_per_thread": chosen["words_per_s_per_thread"],
                       "old_recipe": old["name"], "old_words_per_s_per_thread": old["words_per_s_per_thread"],
                       "ratio": chosen["words_per_s"] / old["words_per_s"]}}


# --- 3. parsing throughput ---------------------------------------------------------------------------

def parsers(mode, args, vocab, folder: Path):
    """``[(name, what, Parser)]``: the grammars and the student through their files and
    ``onparse.load``, the language model in memory (``Parser.from_model``)."""
    import onparse
    from onparse.api import Parser
    from onparse.grammar.file import save_grammar
    from onparse.grammar.model import NeuralPCFG
    from onparse.lm.model import ModelConfig, ONLSTMLanguageModel
    from onparse import StudentConfig
    from onparse.student.file import save_student
    from onparse.student.model import SpanStudent

    out = []
    for size, form in mode["parse_grammars"]:
        torch.manual_seed(args.seed)
        config = grammar_config(size, form, len(vocab))
        path = folder / f"grammar-{size}-{form}.pt"
        save_grammar(path, config=config.to_dict(), vocab=vocab, state_dict=NeuralPCFG(config).state_dict(),
                     metadata={"preset": size})
        out.append((label(size, form), f"grammar ({sizes_of(config)}, chart {config.chart_rank}), MBR",
                    onparse.load(str(path), "cpu")))
    student_config = StudentConfig(vocab_size=len(vocab), **mode["student"])
    save_student(folder / "student.pt", config=student_config.to_dict(), vocab=vocab,
                 state_dict=SpanStudent(student_config).state_dict())
    lm = ONLSTMLanguageModel(ModelConfig(vocab_size=len(vocab), **mode["lm"]))
    c, s = mode["lm"], student_config
    student = f"student (BiLSTM {s.n_layers} x {s.hidden_size}, embedding {s.embedding_size}, scorer {s.mlp_size}), CYK"
    language_model = f"one ON-LSTM LM ({c['n_layers']} layers {c['hidden_size']}/{c['embedding_size']}), layer 2"
    return out + [("student", student, onparse.load(str(folder / "student.pt"), "cpu")),
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
    base = contenders[0][0]
    rows = []
    for name, what, _ in contenders:
        rate = len(tokens) / median_of(times[name])
        rows.append({"model": name, "what": what, "sentences_per_s": rate, "words_per_s": rate * words / len(tokens),
                     "vs_first": rate * median_of(times[base]) / len(tokens)})
    return {"sentences": len(tokens), "words": words, "longest": max(map(len, tokens)), "batch_size": batch_size,
            "first": base, "rows": rows}


# --- 4. memory against sentence length ---------------------------------------------------------------

def memory_probe(args):
    """Child process: one training forward + backward of ``--memory-batch`` sentences of
    ``--probe-length`` words; prints its peak resident memory as JSON."""
    from onparse.grammar.model import NeuralPCFG

    torch.manual_seed(args.seed)
    model = NeuralPCFG(grammar_config(args.probe_size, args.probe_form, args.probe_vocab))
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


def chart_mib(batch, n, width):
    """The autograd chart the inside keeps, ``B n^3 w / 2`` floats for a chart ``w`` wide
    (``chart_rank``; what ``onparse.grammar.parse`` budgets its batches by)."""
    return batch * n ** 3 * width / 2 * 4 / 2 ** 20


def bench_memory(mode, args):
    rows = []
    batch = mode["memory_batch"]
    for size, form in mode["memory_grammars"]:
        width = grammar_config(size, form, mode["vocab"]).chart_rank
        for n in mode["memory_lengths"]:
            estimate = chart_mib(batch, n, width)
            row = {"grammar": label(size, form), "size": size, "form": form, "chart_width": width, "n": n,
                   "batch": batch, "chart_estimate_mib": estimate}
            if 2.5 * estimate > args.memory_limit_mib:            # measured: the peak added stays below this
                row["skipped"] = f"estimated {2.5 * estimate:,.0f} MiB > --memory-limit-mib {args.memory_limit_mib}"
                say(f"[memory] {row['grammar']} n={n}: skipped ({row['skipped']})")
                rows.append(row)
                continue
            cmd = [sys.executable, __file__, "--probe-size", size, "--probe-form", form, "--probe-length", str(n),
                   "--probe-vocab", str(mode["vocab"]), "--memory-batch", str(batch), "--threads", str(args.threads),
                   "--seed", str(args.seed)]
            done = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600,
                                  env={**os.environ, "OMP_NUM_THREADS": str(args.threads)})
            if done.returncode != 0:
                raise SystemExit(f"error: memory probe {row['grammar']} n={n} failed: {done.stderr.strip()[-400:]}")
            row.update(json.loads(done.stdout.strip().splitlines()[-1]))
            say(f"[memory] {row['grammar']} n={n}: peak {row['peak_mib']:,.0f} MiB (+{row['added_mib']:,.0f} over "
                f"{row['before_mib']:,.0f}; autograd keeps {row['saved_mib']:,.1f} MiB), {row['seconds']:.2f} s")
            rows.append(row)
    return {"batch": batch, "rows": rows}


# --- 5. where the time goes --------------------------------------------------------------------------

PHASES = ("rules forward", "inside forward", "inside backward", "rules backward", "clip + Adam")


def split_rows(size, form, overrides, mode, args):
    """A training step cut into :data:`PHASES` (the rules detached into leaves between the rules
    and the inside, so that each side's backward is timed on its own), against the step whole."""
    from onparse.grammar.inside import rank_inside
    from onparse.grammar.model import GrammarRules, NeuralPCFG

    settings = settings_with(overrides)
    torch.manual_seed(args.seed)
    model = NeuralPCFG(grammar_config(size, form, mode["vocab"])).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr, betas=(settings.beta1, settings.beta2))
    params = list(model.parameters())
    batch = settings.batch_size
    generator = torch.Generator().manual_seed(args.seed)
    rows = []

    def finish():
        torch.nn.utils.clip_grad_norm_(params, settings.clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for n in mode["split_lengths"]:
        ids = torch.randint(2, mode["vocab"], (batch, n), generator=generator)
        lengths = torch.full((batch,), n)

        def split_step():
            marks = [time.perf_counter()]
            rules = model.rules()
            marks.append(time.perf_counter())
            leaves = GrammarRules(*(t.detach().requires_grad_(t.requires_grad) for t in rules))
            loss = -rank_inside(leaves.for_words(ids), lengths).mean()
            marks.append(time.perf_counter())
            loss.backward()
            marks.append(time.perf_counter())
            trained = [(t, leaf.grad) for t, leaf in zip(rules, leaves) if t.requires_grad]   # constants aside
            torch.autograd.backward([t for t, _ in trained], [g for _, g in trained])
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
        for _ in range(args.rounds):                               # steps until mode["floor"] seconds each
            for samples, step in ((parts, split_step), (whole, whole_step)):
                start = time.perf_counter()
                samples.append(step())
                while time.perf_counter() - start < mode["floor"]:
                    samples.append(step())
        medians = [median_of([p[k] for p in parts]) for k in range(len(PHASES))]
        total = sum(medians)
        row = {"grammar": label(size, form, batch), "batch": batch, "n": n,
               "ms": {name: 1000 * v for name, v in zip(PHASES, medians)},
               "percent": {name: 100 * v / total for name, v in zip(PHASES, medians)},
               "split_total_ms": 1000 * total, "whole_step_ms": 1000 * median_of(whole)}
        say(f"[where] {row['grammar']} n={n}: " + ", ".join(f"{k} {v:.0f}%" for k, v in row["percent"].items())
            + f"; {row['split_total_ms']:.0f} ms (whole step {row['whole_step_ms']:.0f} ms)")
        rows.append(row)
    return rows


def bench_split(mode, args):
    return {"rows": [row for size, form, overrides in mode["split"]
                     for row in split_rows(size, form, overrides, mode, args)]}


# --- the report --------------------------------------------------------------------------------------

CONTENDER_NAMES = {**FORM_NAMES, "tensor": "full tensor"}


def inside_report(r):
    out = [f"\n1. inside, batch {r['batch']}, ms per sentence (ratio: to the simple form); the full form only "
           "exists up to 16,384 rules m (m+p)^2, so it is compared at m12 and tiny, not at small"]
    for g in r["groups"]:
        sizes = "; ".join(f"{CONTENDER_NAMES[f]} {s}" for f, s in g["sizes"].items())
        gaps = ", ".join(f"{CONTENDER_NAMES[f]} {v:.0e}" for f, v in g["log_z_gap"].items())
        tensor = ("the full tensor: full_inside over the simple rules as T[m, m+p, m+p] "
                  f"({g['full_tensor_entries']:,} entries, built in {g['full_tensor_build_ms']:.1f} ms, not counted)")
        out.append(f"\n{g['size']} ({sizes}); chart width = m, r, (m+p)^2; {tensor}; log Z against "
                   f"full_inside over each form's own tensor, relative gap: {gaps}")
        out.append(table(["n", "rules", "chart width", "forward", "vs simple", "fwd+bwd", "vs simple"],
                         [[x["n"], CONTENDER_NAMES[c], f"{g['chart_width'][c]:,}", f"{x['ms'][c]['forward']:,.1f}",
                           f"{x['vs_simple'][c]['forward']:.2f}x", f"{x['ms'][c]['both']:,.1f}",
                           f"{x['vs_simple'][c]['both']:.2f}x"] for x in g["rows"] for c in g["contenders"]]))
    return out


def training_report(r):
    c = r["chosen"]
    out = [f"\n2. training (the trainer's step: forward, backward, clip, Adam), {r['threads']} thread(s), the same "
           f"{r['sentences']} sentences for all ({r['words']:,} words, {min(r['batch_lengths'])}-"
           f"{max(r['batch_lengths'])} words each) spread over an epoch, cut at each batch size; news = "
           f"{r['news']['sentences']:,} sentences, {r['news']['words'] / 1e6:.2f}M words",
           f"the chosen size, {c['name']} (the trainer's defaults): {c['words_per_s_per_thread']:,.0f} words/s per "
           f"thread, beside {c['old_recipe']} (the old recipe, batch 8 and lr 2e-3: small before issue 56): "
           f"{c['old_words_per_s_per_thread']:,.0f}; ratio {c['ratio']:.2f}x"]
    out.append(table(["grammar", "sizes", "chart", "batch", "words/s", "per thread", "sentences/s", "ms/step",
                      "vs old recipe", "min/epoch of news"],
                     [[x["name"] + (f" ({x['role']})" if x["role"] else ""), x["sizes"], x["chart_width"], x["batch"],
                       f"{x['words_per_s']:,.0f}", f"{x['words_per_s_per_thread']:,.0f}",
                       f"{x['sentences_per_s']:,.1f}", f"{x['ms_per_batch']:.0f}", f"{x['vs_old_recipe']:.2f}x",
                       f"{x['news_epoch_minutes']:.1f}"] for x in r["rows"]]))
    return out


def report(result) -> str:
    out = []
    m = result["machine"]
    out.append(f"{m['threads']} torch thread(s) on {m['cpus']} CPU(s), torch {m['torch']}; load average (1 min) "
               f"{m['load_start']:.2f} at the start, {m['load_end']:.2f} at the end, {m['load_max']:.2f} at most "
               f"(5/15 min at the end: {m['load_end_5']:.2f}/{m['load_end_15']:.2f}); {result['rounds']} rounds; "
               f"lengths: {result['lengths_source']}")
    if "inside" in result:
        out += inside_report(result["inside"])
    if "training" in result:
        out += training_report(result["training"])
    if "parsing" in result:
        r = result["parsing"]
        out.append(f"\n3. parsing {r['sentences']} sentences ({r['words']:,} words, up to {r['longest']}), "
                   f"Parser.trees, batch {r['batch_size']}")
        out.append(table(["model", "what", "sentences/s", "words/s", f"vs {r['first']}"],
                         [[x["model"], x["what"], f"{x['sentences_per_s']:,.1f}", f"{x['words_per_s']:,.0f}",
                           f"{x['vs_first']:.2f}x"] for x in r["rows"]]))
    if "memory" in result:
        r = result["memory"]
        out.append(f"\n4. memory: peak RSS of a fresh process, one training forward + backward of {r['batch']} "
                   "sentence(s) of n words (MiB)")
        out.append(table(["grammar", "chart", "n", "peak RSS", "added by the step", "autograd keeps",
                          "parse.py's budget", "seconds"],
                         [[x["grammar"], x["chart_width"], x["n"], "skipped", x["skipped"], "",
                           f"{x['chart_estimate_mib']:,.1f}", ""]
                          if "skipped" in x else
                          [x["grammar"], x["chart_width"], x["n"], f"{x['peak_mib']:,.0f}", f"{x['added_mib']:,.0f}",
                           f"{x['saved_mib']:,.1f}", f"{x['chart_estimate_mib']:,.1f}", f"{x['seconds']:.2f}"]
                          for x in r["rows"]]))
        out.append("(autograd keeps: the tensors saved for the backward, weights aside, measured; parse.py's budget: "
                   "B n^3 w / 2 floats for a chart w = chart_rank wide, what onparse.grammar.parse batches by)")
    if "where" in result:
        r = result["where"]
        out.append("\n5. where the time of a training step goes (ms, %)")
        out.append(table(["grammar", "n"] + list(PHASES) + ["sum", "whole step"],
                         [[x["grammar"], x["n"]] + [f"{x['ms'][p]:.1f} ({x['percent'][p]:.0f}%)" for p in PHASES]
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
    ap.add_argument("--probe-size", help=argparse.SUPPRESS)
    ap.add_argument("--probe-form", help=argparse.SUPPRESS)
    ap.add_argument("--probe-length", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--probe-vocab", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--memory-batch", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.threads < 1:
        ap.error("--rounds and --threads must be at least 1")
    torch.set_num_threads(args.threads)
    if args.probe_size:
        memory_probe(args)
        return None
    mode = MODES["quick" if args.quick else "full"]
    lengths, source = conll2000_lengths(stored=args.quick)
    started = time.perf_counter()
    loads = [load1()]
    result = {"mode": "quick" if args.quick else "full", "rounds": args.rounds, "lengths_source": source}
    parts = [p for p in args.only if not (p == "memory" and args.no_memory)]
    run = {"inside": lambda: bench_inside(mode, args), "training": lambda: bench_training(mode, args, lengths),
           "parsing": lambda: bench_parsing(mode, args, lengths), "memory": lambda: bench_memory(mode, args),
           "where": lambda: bench_split(mode, args)}
    for part in PARTS:
        if part in parts:
            say(f"[{part}] load average {load1():.2f}")
            result[part] = run[part]()
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

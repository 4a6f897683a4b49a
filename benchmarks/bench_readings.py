"""Parsing speed of every reading of a bundle, side by side: its fast reading against its accurate one.

A bundle may name several *readings* of its models (``onparse info`` lists them; ``--reading NAME``
and ``onparse.load(reading=NAME)`` choose one): say ``fast``, one student alone, and ``accurate``,
the average of a student, grammars and a right-branching voter.  Each reading is loaded as a user
loads it, and all of them parse the same token lists in this process, on one thread by default,
rounds alternating A B A B; the medians give each reading's sentences a second, the ratio of each
to the slowest (``fast / accurate`` when the bundle names those two), and each reading's sentence
F1 against the gold trees of those sentences (the same trees, scored as ``onparse eval`` does).

Sentences: the sample's dev half (``wsj-sample-dev``, all lengths), its gold words as given.
``--labels`` times each reading's trees with their labels, as ``induce --format ptb`` and the spaCy
component write them: a reading with a grammar among its members has it name the spans (about one
more parse by that grammar); a reading without one (a student alone) has no labels and pays nothing
more, whatever else the file carries.

A file that names no readings (the bundled model before readings, or any bundle) has one; the
benchmark then measures a stand-in of the two it would have, from its own members: ``fast``, its
first student member alone (else its first member alone), and ``accurate``, the whole file as it
parses (every member, voter and tie rule).

    python benchmarks/bench_readings.py                          # the bundled model, one thread, 3 rounds
    python benchmarks/bench_readings.py --model bundle.pt --rounds 5 --limit 500
    python benchmarks/bench_readings.py --labels              # trees and their labels (--format ptb)
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def readings(model, device):
    """``(what, {name: parser})``: every reading the file names, each as ``onparse.load`` gives it;
    or, for a file that names none, the stand-in pair (module docstring)."""
    from onparse import describe_file, load

    named = describe_file(model, as_dict=True).get("readings")
    if named:
        return "the file's readings", {name: load(model, device, reading=name) for name in named}
    parser = load(model, device)
    students = [m for m in parser.members if parser.models[m.model].kind == "student"]
    alone = (students or parser.members)[:1]
    fast = parser.with_members(alone, [], parser.ties)
    what = (f"a stand-in: the file names no readings; fast = its {alone[0].label(len(parser.models))} alone, "
            f"accurate = the whole file ({parser.describe_average()})")
    return what, {"fast": fast, "accurate": parser}


def timed(parser, tokens, labels=False):
    """Seconds of ``parser.trees(tokens)`` (and, with ``labels``, of their labels too), and the trees."""
    from onparse.induce import tree_labels

    started = time.perf_counter()
    trees = parser.trees(tokens)
    if labels:
        tree_labels(parser, tokens, trees)
    return time.perf_counter() - started, trees


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="a bundle [default: the bundled model]")
    ap.add_argument("--limit", type=int, default=None, help="the first N dev sentences only")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch threads [default: 1]")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--labels", action="store_true", help="time the trees with their labels (--format ptb)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    from onparse import evaluate, load_gold

    gold = list(load_gold("wsj-sample-dev"))[:args.limit]
    tokens = [list(s.words) for s in gold]
    what, parsers = readings(args.model, args.device)
    print(f"{len(tokens):,} sentences of wsj-sample-dev, {sum(map(len, tokens)):,} words; "
          f"{torch.get_num_threads()} thread(s) on {args.device}; {args.model or 'the bundled model'}: {what}"
          + ("; trees and their labels" if args.labels else ""),
          file=sys.stderr)
    for parser in parsers.values():                   # warm-up
        timed(parser, tokens[:64], args.labels)
    times = {name: [] for name in parsers}
    f1 = {}
    for r in range(args.rounds):
        for name, parser in parsers.items():
            seconds, trees = timed(parser, tokens, args.labels)
            times[name].append(seconds)
            f1[name] = evaluate(trees, gold).sentence_f1.f1
            print(f"round {r + 1} {name}: {seconds:.2f} s ({len(tokens) / seconds:,.0f} sent/s)", file=sys.stderr)
    rate = {name: len(tokens) / statistics.median(t) for name, t in times.items()}
    width = max(map(len, parsers))
    print(f"medians of {args.rounds} round(s), {len(tokens):,} sentences")
    for name, parser in parsers.items():
        print(f"{name:{width}} | {rate[name]:8,.1f} sent/s | sentence F1 {100 * f1[name]:.2f} | "
              f"{parser.describe_average()}")
    slowest = "accurate" if {"fast", "accurate"} <= set(parsers) else min(rate, key=rate.get)
    for name in parsers:
        if name != slowest:
            print(f"{name} / {slowest}: {rate[name] / rate[slowest]:.2f}x")


if __name__ == "__main__":
    main()

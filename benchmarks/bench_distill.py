"""Parsing speed of a student (``onparse distill``) against the ensemble it replaces, side by side.

Both contenders run the public ``Parser`` over the same token lists, in this process:

* ensemble: the teacher (default: the bundled model: three language models, their members
  averaged with a right-branching voter, O(n^3) per sentence for the average);
* student: one BiLSTM span scorer and CYK (O(n^3) per sentence too, batched over sentences).

Rounds alternate A B A B; the medians are compared and the ratio printed.  Sentences: the sample's
dev half (``wsj-sample-dev``, all lengths) by default, or the lines of ``--text``.

    python benchmarks/bench_distill.py --rounds 3           # rule v8's student against the bundled model
    python benchmarks/bench_distill.py --student s.pt --teacher bundle.pt --text lines.txt --limit 2000
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def sentences(args):
    if args.text:
        with open(args.text, encoding="utf-8") as handle:
            return [line.split() for line in handle if line.split()][:args.limit]
    from onparse.gold.treebank import load_gold

    return [list(s.words) for s in load_gold("wsj-sample-dev")][:args.limit]


def timed(parser, tokens):
    started = time.perf_counter()
    trees = parser.trees(tokens)
    return time.perf_counter() - started, trees


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--student", default=str(ROOT / "runs" / "distill" / "run-s2" / "epoch-002.pt"),
                    help="default: rule v8's choice (research/PROTOCOL.md)")
    ap.add_argument("--teacher", default=None, help="the ensemble (default: the bundled model)")
    ap.add_argument("--text", default=None, help="one pretokenized sentence per line")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    from onparse.api import load

    tokens = sentences(args)
    ensemble, student = load(args.teacher, args.device), load(args.student, args.device)
    words = sum(map(len, tokens))
    print(f"{len(tokens):,} sentences, {words:,} words; {torch.get_num_threads()} threads on {args.device}; "
          f"ensemble: {ensemble.describe_average()} of {len(ensemble.models)} models; student: {args.student}",
          file=sys.stderr)
    timed(ensemble, tokens[:64])                       # warm-up
    timed(student, tokens[:64])
    times = {"ensemble": [], "student": []}
    for r in range(args.rounds):
        for name, parser in (("ensemble", ensemble), ("student", student)):
            seconds, trees = timed(parser, tokens)
            assert len(trees) == len(tokens)
            times[name].append(seconds)
            print(f"round {r + 1} {name}: {seconds:.2f} s ({len(tokens) / seconds:,.0f} sent/s)", file=sys.stderr)
    rate = {name: len(tokens) / statistics.median(t) for name, t in times.items()}
    print(f"ensemble {rate['ensemble']:,.1f} sent/s | student {rate['student']:,.1f} sent/s | "
          f"ratio {rate['student'] / rate['ensemble']:.2f}x")


if __name__ == "__main__":
    main()

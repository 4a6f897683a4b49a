"""Scoring speed on the whole 3,914-sentence NLTK sample.

Reports, separately: the time to load and preprocess the gold trees, the time to score
predicted trees with :func:`onparse.evaluate`, the time to read + check + score a prediction
file (:func:`onparse.scores.metrics.score_text`), and, side by side in the same process, the naive
pure-Python reference scorer that the tests use (``tests/naive.py``: lists, linear membership
tests, one pass per convention).  Both must agree; the ratio is printed.

    python benchmarks/bench_eval.py [--repeat 5] [--kind right]
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(1, str(ROOT / "tests"))      # naive.py: the reference scorer the tests use too
if "NLTK_DATA" not in os.environ and (ROOT.parent / "shared" / "nltk_data").is_dir():
    os.environ["NLTK_DATA"] = str(ROOT.parent / "shared" / "nltk_data")

from naive import differences, naive_scores, scores_of  # noqa: E402
from onparse import baseline_trees  # noqa: E402
from onparse import evaluate  # noqa: E402
from onparse import score_text  # noqa: E402
from onparse import load_gold  # noqa: E402
from onparse import to_brackets  # noqa: E402


# ------------------------------------------------------------------ timing


def best_of(repeat, func, *args):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func(*args)
        times.append(time.perf_counter() - start)
    return result, min(times), statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--kind", default="right", choices=["right", "left", "balanced", "random"])
    args = parser.parse_args()

    start = time.perf_counter()
    gold = load_gold("wsj")
    load_s = time.perf_counter() - start
    trees = baseline_trees(gold.tokens, args.kind)
    text = "".join(to_brackets(t) + "\n" for t in trees)
    print(f"gold: {len(gold):,} sentences, {sum(map(len, gold)):,} words; load + preprocess {load_s:.3f} s")

    ours, ours_best, ours_med = best_of(args.repeat, evaluate, trees, gold)
    _, text_best, text_med = best_of(args.repeat, score_text, text, gold)
    ref, ref_best, ref_med = best_of(args.repeat, naive_scores, trees, gold)

    got = scores_of(ours)
    problems = differences(got, ref)
    assert not problems, [(key, got[key], ref[key]) for key in problems]
    print(f"{args.kind}-branching: sentence F1 {100 * ours.sentence_f1.f1:.1f} (ON-LSTM), "
          f"{100 * ours.kim_f1.f1:.1f} (Kim), corpus {100 * ours.corpus_f1.f1:.1f}, "
          f"EVALB-style {100 * ours.evalb_f1.f1:.1f}; reference scorer agrees")
    print(f"{'':38}{'best':>9}{'median':>9}   (s, {args.repeat} runs)")
    print(f"{'onparse.evaluate (trees)':38}{ours_best:9.3f}{ours_med:9.3f}")
    print(f"{'onparse score_text (parse+check+score)':38}{text_best:9.3f}{text_med:9.3f}")
    print(f"{'naive pure-Python reference':38}{ref_best:9.3f}{ref_med:9.3f}")
    print(f"speed-up of evaluate over the reference: {ref_best / ours_best:.1f}x (best), {ref_med / ours_med:.1f}x (median)")


if __name__ == "__main__":
    main()

"""Scoring speed on the whole 3,914-sentence NLTK sample.

Reports, separately: the time to load and preprocess the gold trees, the time to score
predicted trees with :func:`onparse.evaluate`, the time to read + check + score a prediction
file (:func:`onparse.metrics.score_text`), and, side by side in the same process, a naive
pure-Python reference scorer written straight from the definitions (lists, linear membership
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
if "NLTK_DATA" not in os.environ and (ROOT.parent / "shared" / "nltk_data").is_dir():
    os.environ["NLTK_DATA"] = str(ROOT.parent / "shared" / "nltk_data")

from onparse.baselines import baseline_trees  # noqa: E402
from onparse.metrics import REPORT_LABELS, evaluate, score_text  # noqa: E402
from onparse.treebank import load_gold  # noqa: E402
from onparse.trees import to_brackets  # noqa: E402


# ------------------------------------------------------------------ naive reference


def naive_spans(tree):
    """Every internal node's span (>= 2 words) as a list, by plain recursion, no dedup by set."""
    out = []

    def walk(node, start):
        if isinstance(node, str):
            return start + 1
        end = start
        for child in node:
            end = walk(child, end)
        if end - start >= 2 and (start, end) not in out:
            out.append((start, end))
        return end

    walk(tree, 0)
    return out


def naive_depth(tree):
    if isinstance(tree, str):
        return 0
    return 1 + max(naive_depth(child) for child in tree)


def naive_evaluate(preds, gold):
    """The four F1 conventions, label recall and depths, one straightforward pass each."""
    n_sent = len(gold)
    pairs = []
    for tree, sentence in zip(preds, gold):
        n = len(sentence.tokens)
        pred = [s for s in naive_spans(tree) if s != (0, n)]
        gold_spans = [s for s in naive_spans(sentence.tree) if s != (0, n)]
        pairs.append((n, pred, gold_spans))

    def f1(p, r):
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    # 1. ON-LSTM sentence F1
    total = 0.0
    for n, pred, gold_spans in pairs:
        match = len([s for s in pred if s in gold_spans])
        if not gold_spans:
            r = 1.0
            p = 1.0 if not pred else match / len(pred)
        else:
            r = match / len(gold_spans)
            p = match / len(pred) if pred else 0.0
        total += f1(p, r)
    sentence = total / n_sent
    # 2. Kim sentence F1
    kims = []
    for n, pred, gold_spans in pairs:
        if n > 1 and pred and gold_spans:
            match = len([s for s in pred if s in gold_spans])
            kims.append(f1(match / len(pred), match / len(gold_spans)))
    kim = sum(kims) / len(kims)
    # 3. corpus F1, and EVALB-style with the whole-sentence spans
    tp = sum(len([s for s in pred if s in g]) for _, pred, g in pairs)
    n_pred = sum(len(pred) for _, pred, _ in pairs)
    n_gold = sum(len(g) for _, _, g in pairs)
    corpus = f1(tp / n_pred, tp / n_gold)
    whole = sum(1 for n, _, _ in pairs if n >= 2)
    evalb = f1((tp + whole) / (n_pred + whole), (tp + whole) / (n_gold + whole))
    # label recall
    recall = {}
    for label in REPORT_LABELS:
        found = count = 0
        for (n, pred, _), s in zip(pairs, gold):
            for lab, span in s.labelled:
                if lab == label and span != (0, n):
                    count += 1
                    found += span in pred
        recall[label] = found / count if count else None
    depth_pred = sum(naive_depth(t) for t in preds) / n_sent
    depth_gold = sum(naive_depth(s.tree) for s in gold) / n_sent
    return sentence, kim, corpus, evalb, recall, depth_pred, depth_gold


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
    ref, ref_best, ref_med = best_of(args.repeat, naive_evaluate, trees, gold)

    got = (
        ours.sentence_f1.f1, ours.kim_f1.f1, ours.corpus_f1.f1, ours.evalb_f1.f1,
        {k: v.recall for k, v in ours.label_recall.items()}, ours.pred_depth, ours.gold_depth,
    )
    for a, b in zip(got, ref):
        if isinstance(a, dict):
            assert all((a[k] is None and b[k] is None) or abs(a[k] - b[k]) < 1e-12 for k in a), (a, b)
        else:
            assert abs(a - b) < 1e-12, (a, b)
    print(f"{args.kind}-branching: sentence F1 {100 * got[0]:.1f} (ON-LSTM), {100 * got[1]:.1f} (Kim), "
          f"corpus {100 * got[2]:.1f}, EVALB-style {100 * got[3]:.1f}; reference scorer agrees")
    print(f"{'':38}{'best':>9}{'median':>9}   (s, {args.repeat} runs)")
    print(f"{'onparse.evaluate (trees)':38}{ours_best:9.3f}{ours_med:9.3f}")
    print(f"{'onparse score_text (parse+check+score)':38}{text_best:9.3f}{text_med:9.3f}")
    print(f"{'naive pure-Python reference':38}{ref_best:9.3f}{ref_med:9.3f}")
    print(f"speed-up of evaluate over the reference: {ref_best / ours_best:.1f}x (best), {ref_med / ours_med:.1f}x (median)")


if __name__ == "__main__":
    main()

"""The naive scorer: every convention of ``docs/onlstm.md`` section 5 written as plainly as
possible (lists, linear membership tests, plain recursion, one loop per convention), with no
code from :mod:`onparse.scores.metrics`.  It is the reference that the tests and
``benchmarks/bench_eval.py`` compare :func:`onparse.scores.metrics.evaluate` with; it is slow on purpose.

It lives beside the tests (imported as ``naive``: pytest puts this folder on ``sys.path``); the
benchmark puts ``tests/`` on its path to import it.

    >>> scores = naive_scores([("a", ("b", "c"))], [(("a", "b"), "c")])
    >>> scores["sentence_f1"], scores["evalb_f1"], scores["n_kim"]
    ((0.0, 0.0, 0.0), (0.5, 0.5, 0.5), 1)
"""

#: The gold labels whose recall is reported (``docs/onlstm.md`` section 5).
LABELS = ("NP", "VP", "PP", "SBAR", "ADJP", "ADVP", "S")


def naive_words(tree):
    """The words of a nested-tuple tree, left to right."""
    if isinstance(tree, str):
        return [tree]
    words = []
    for child in tree:
        words += naive_words(child)
    return words


def naive_spans(tree):
    """Every internal node's span covering >= 2 words, as a list without repeats."""
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
    """Internal nodes on the longest path from the root to a word."""
    if isinstance(tree, str):
        return 0
    return 1 + max(naive_depth(child) for child in tree)


def f1(p, r):
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def pooled(tp, n_pred, n_gold):
    """P, R, F1 of pooled counts: 1 when there is nothing to find and nothing found."""
    if n_pred == 0 and n_gold == 0:
        return 1.0, 1.0, 1.0
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return p, r, f1(p, r)


def mean3(triples):
    """The mean of each of three columns (zeros for no rows)."""
    if not triples:
        return 0.0, 0.0, 0.0
    return tuple(sum(t[i] for t in triples) / len(triples) for i in range(3))


def naive_scores(preds, golds):
    """Scores of predicted trees against gold, one straightforward pass per convention.

    ``golds``: plain trees, or gold sentences with ``.tree`` and ``.labelled`` (label, span)
    pairs (:class:`onparse.gold.treebank.GoldSentence`).  Returns a dict: ``sentence_f1``,
    ``kim_f1``, ``corpus_f1``, ``evalb_f1`` as (P, R, F1); ``n_sentences``, ``n_kim``;
    ``label_recall`` (label -> recall or None); ``pred_depth``, ``gold_depth``.
    """
    rows = []  # (words in the sentence, predicted spans, gold spans), whole sentence left out
    for pred, gold in zip(preds, golds):
        gold_tree = getattr(gold, "tree", gold)
        n = len(naive_words(gold_tree))
        assert len(naive_words(pred)) == n
        pred_spans = [s for s in naive_spans(pred) if s != (0, n)]
        gold_spans = [s for s in naive_spans(gold_tree) if s != (0, n)]
        rows.append((n, pred_spans, gold_spans))

    def matched(pred_spans, gold_spans):
        return len([s for s in pred_spans if s in gold_spans])

    # 1. ON-LSTM sentence F1: every sentence; empty gold -> R = 1 (and P = 1 if pred is empty too)
    onlstm = []
    for n, pred_spans, gold_spans in rows:
        m = matched(pred_spans, gold_spans)
        if gold_spans:
            r = m / len(gold_spans)
            p = m / len(pred_spans) if pred_spans else 0.0
        else:
            r = 1.0
            p = 1.0 if not pred_spans else m / len(pred_spans)
        onlstm.append((p, r, f1(p, r)))
    # 2. Kim et al.: skip one-word sentences and sentences with an empty span set
    kim = []
    for n, pred_spans, gold_spans in rows:
        if n > 1 and pred_spans and gold_spans:
            m = matched(pred_spans, gold_spans)
            p, r = m / len(pred_spans), m / len(gold_spans)
            kim.append((p, r, f1(p, r)))
    # 3. corpus F1, and EVALB-style: plus one whole-sentence span per sentence of >= 2 words
    tp = sum(matched(p, g) for _, p, g in rows)
    n_pred = sum(len(p) for _, p, _ in rows)
    n_gold = sum(len(g) for _, _, g in rows)
    whole = len([n for n, _, _ in rows if n >= 2])
    # label recall: gold constituents of each label, whole-sentence span excluded
    recall = {}
    for label in LABELS:
        found = total = 0
        for (n, pred_spans, _), gold in zip(rows, golds):
            for lab, span in getattr(gold, "labelled", ()):
                if lab == label and span != (0, n):
                    total += 1
                    found += span in pred_spans
        recall[label] = found / total if total else None
    count = len(rows)
    return {
        "n_sentences": count,
        "n_kim": len(kim),
        "sentence_f1": mean3(onlstm),
        "kim_f1": mean3(kim),
        "corpus_f1": pooled(tp, n_pred, n_gold),
        "evalb_f1": pooled(tp + whole, n_pred + whole, n_gold + whole),
        "label_recall": recall,
        "pred_depth": sum(naive_depth(t) for t in preds) / count if count else 0.0,
        "gold_depth": sum(naive_depth(getattr(g, "tree", g)) for g in golds) / count if count else 0.0,
    }


def scores_of(result):
    """An :class:`onparse.scores.metrics.EvalResult` in the shape of :func:`naive_scores`."""
    return {
        "n_sentences": result.n_sentences,
        "n_kim": result.n_kim,
        **{name: (prf.precision, prf.recall, prf.f1) for name, prf in (
            ("sentence_f1", result.sentence_f1), ("kim_f1", result.kim_f1),
            ("corpus_f1", result.corpus_f1), ("evalb_f1", result.evalb_f1))},
        "label_recall": {label: r.recall for label, r in result.label_recall.items()},
        "pred_depth": result.pred_depth,
        "gold_depth": result.gold_depth,
    }


def differences(got, want, tol=1e-12):
    """The keys where two score dicts differ by more than ``tol`` (numbers compared inside
    tuples and dicts; None must meet None); an empty list when they agree."""
    def close(a, b):
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
        if isinstance(a, tuple):
            return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
        if a is None or b is None:
            return a is b
        return abs(a - b) <= tol

    return [key for key in want if not close(got.get(key), want[key])]


def naive_evalb(pred_lines, gold_lines):
    """Unlabelled bracketing P, R, F1 as EVALB counts them, from PTB-style trees (one per line):
    a bracket is a node that is not a pre-terminal ``(TAG word)``; it spans the words below it,
    and every bracket is counted, one-word ones included (EVALB drops only empty ones).  Brackets
    match one to one on equal spans; counts are pooled over the sentences."""
    tp = n_pred = n_gold = 0
    for pred_line, gold_line in zip(pred_lines, gold_lines):
        pred, gold = _ptb_brackets(pred_line), _ptb_brackets(gold_line)
        n_pred += len(pred)
        n_gold += len(gold)
        left = list(gold)
        for span in pred:
            if span in left:
                left.remove(span)
                tp += 1
    return pooled(tp, n_pred, n_gold)


def _ptb_brackets(line):
    """The spans of the brackets of one PTB tree: ``(X (X (W a) (W b)) (W c))`` has the
    brackets (0, 2) and (0, 3); ``(W a)`` has none."""
    tokens = line.replace("(", " ( ").replace(")", " ) ").split()
    spans, stack, words, i = [], [], 0, 0
    while i < len(tokens):
        if tokens[i] == ")":
            start = stack.pop()
            if words > start:
                spans.append((start, words))
            i += 1
        elif i + 3 < len(tokens) and tokens[i + 1] not in "()" and tokens[i + 2] not in "()" and tokens[i + 3] == ")":
            words += 1              # (TAG word): a pre-terminal, not a bracket
            i += 4
        else:                       # "(" and its label, which may be missing: ( (S ...) )
            stack.append(words)
            i += 1 if tokens[i + 1] == "(" else 2
    return sorted(spans)

"""Scoring unlabelled trees against gold: span sets, the F1 conventions, label recall.  No torch.

Definitions (``shared/docs/onlstm.md`` section 5).  A sentence's span set holds its
constituents of >= 2 words without the whole-sentence span; duplicates collapse.

1. **Sentence F1, ON-LSTM/PRPN convention** (the paper's headline): per sentence
   P = |pred ∩ gold| / |pred|, R = |pred ∩ gold| / |gold|; an empty gold set gives R = 1, and
   P = 1 too when the prediction is empty as well; F1 = 2PR / (P + R) (0 when P + R = 0);
   averaged over every sentence.
2. **Sentence F1, Kim et al. 2019 convention**: the same sets, but sentences of one word and
   sentences whose predicted or gold set is empty are left out of the mean.
3. **Corpus F1**: matched, predicted and gold spans pooled over the corpus, then P, R, F1.
   **EVALB-style** corpus F1 also counts the whole-sentence span of every sentence of >= 2 words.

Precision and recall of each convention are reported beside F1 (sentence conventions: the
means of the per-sentence P and R).  Also: recall per gold label (over the same spans, so the
whole-sentence span is not counted), average tree depth (:func:`onparse.trees.depth`), counts.
All scores are fractions in [0, 1]; the table shows them as percentages.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple

from .errors import OnparseError
from .text import is_punct, normalize_word
from .trees import Span, Tree, depth, is_labelled, iter_sexprs, leaves, read_tree_matching, to_brackets, tree_spans

#: Gold labels whose recall is reported, in report order.
REPORT_LABELS = ("NP", "VP", "PP", "SBAR", "ADJP", "ADVP", "S")


# --------------------------------------------------------------------------------------
# Span sets and per-sentence scores
# --------------------------------------------------------------------------------------


def span_set(tree: Tree) -> Set[Span]:
    """Constituent spans of ``tree`` covering >= 2 words, whole sentence included.

    Same set as ``set(onparse.trees.tree_spans(tree))``, by the scorer's one-pass walk.
    """
    return _scan_tree(tree)[0]


def _scan(node: tuple, start: int, spans: Set[Span], words: List[str]) -> Tuple[int, int]:
    # One recursive pass for the scorer: collects spans (>= 2 words) and words, returns
    # (end position, depth).
    pos = start
    deepest = 0
    for child in node:
        if child.__class__ is str:
            words.append(child)
            pos += 1
        else:
            pos, d = _scan(child, pos, spans, words)
            if d > deepest:
                deepest = d
    if pos - start >= 2:
        spans.add((start, pos))
    return pos, deepest + 1


def _scan_tree(tree: Tree) -> Tuple[Set[Span], List[str], int]:
    """``(span set, words, depth)`` of a tree in one pass (iterative fallback for deep trees)."""
    if tree.__class__ is str:
        return set(), [tree], 0
    spans: Set[Span] = set()
    words: List[str] = []
    try:
        _, tree_depth = _scan(tree, 0, spans, words)
        return spans, words, tree_depth
    except RecursionError:  # deeper than the recursion limit: the iterative walks
        return set(tree_spans(tree)), leaves(tree), depth(tree)


def sentence_prf(n_match: int, n_pred: int, n_gold: int) -> Tuple[float, float, float]:
    """P, R, F1 of one sentence in the ON-LSTM/PRPN convention (see module doc).

    >>> sentence_prf(1, 2, 1)
    (0.5, 1.0, 0.6666666666666666)
    >>> sentence_prf(0, 0, 0), sentence_prf(0, 1, 0), sentence_prf(0, 0, 1)
    ((1.0, 1.0, 1.0), (0.0, 1.0, 0.0), (0.0, 0.0, 0.0))
    """
    if n_gold == 0:
        recall = 1.0
        precision = 1.0 if n_pred == 0 else n_match / n_pred
    else:
        recall = n_match / n_gold
        precision = n_match / n_pred if n_pred else 0.0
    return precision, recall, _f1(precision, recall)


def kim_prf(n_match: int, n_pred: int, n_gold: int) -> Optional[Tuple[float, float, float]]:
    """P, R, F1 of one sentence in the Kim et al. convention, or None when it is not scored.

    A sentence is scored only when both span sets are non-empty (this also leaves out every
    sentence of one or two words).
    """
    if n_pred == 0 or n_gold == 0:
        return None
    precision, recall = n_match / n_pred, n_match / n_gold
    return precision, recall, _f1(precision, recall)


def corpus_prf(n_match: int, n_pred: int, n_gold: int) -> Tuple[float, float, float]:
    """P, R, F1 from pooled counts; an empty denominator gives 0 (1 when both are empty)."""
    if n_pred == 0 and n_gold == 0:
        return 1.0, 1.0, 1.0
    precision = n_match / n_pred if n_pred else 0.0
    recall = n_match / n_gold if n_gold else 0.0
    return precision, recall, _f1(precision, recall)


def _f1(precision: float, recall: float) -> float:
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 of one convention (fractions in [0, 1])."""

    precision: float
    recall: float
    f1: float

    def to_dict(self) -> dict:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


@dataclass(frozen=True)
class SentenceScore:
    """One sentence's scores: span counts (whole sentence excluded), ON-LSTM-convention P/R/F1,
    Kim-convention F1 (None when the sentence is left out of that mean), depths, trees."""

    index: int
    tokens: Tuple[str, ...]
    n_pred: int
    n_gold: int
    n_match: int
    precision: float
    recall: float
    f1: float
    kim_f1: Optional[float]
    pred_depth: int
    gold_depth: int
    pred_tree: Tree
    gold_tree: Tree
    source: str = ""

    def to_dict(self) -> dict:
        """A JSON-ready record (``sentence`` = tokens joined by spaces; trees in brackets)."""
        return {
            "index": self.index,
            "source": self.source,
            "length": len(self.tokens),
            "sentence": " ".join(self.tokens),
            "pred_spans": self.n_pred,
            "gold_spans": self.n_gold,
            "matched": self.n_match,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "kim_f1": self.kim_f1,
            "pred_depth": self.pred_depth,
            "gold_depth": self.gold_depth,
            "pred": to_brackets(self.pred_tree),
            "gold": to_brackets(self.gold_tree),
        }


@dataclass(frozen=True)
class LabelRecall:
    """Recall of the gold constituents carrying one label: ``found`` of ``total``."""

    found: int
    total: int

    @property
    def recall(self) -> Optional[float]:
        return self.found / self.total if self.total else None


@dataclass(frozen=True)
class EvalResult:
    """Everything :func:`evaluate` measures.  ``to_dict()`` for JSON, ``format_table()`` for people.

    ``sentence_f1`` is the ON-LSTM/PRPN convention over all ``n_sentences``; ``kim_f1`` the Kim
    et al. convention over ``n_kim`` sentences; ``corpus_f1`` pooled; ``evalb_f1`` pooled with
    the whole-sentence spans.  Span counts exclude the whole-sentence span.
    """

    gold_name: str
    n_sentences: int
    n_kim: int
    n_words: int
    n_pred_spans: int
    n_gold_spans: int
    n_matched: int
    sentence_f1: PRF
    kim_f1: PRF
    corpus_f1: PRF
    evalb_f1: PRF
    label_recall: Dict[str, LabelRecall]
    pred_depth: float
    gold_depth: float
    sentences: Tuple[SentenceScore, ...]

    def to_dict(self) -> dict:
        """Summary as plain JSON-ready values (per-sentence records are not included)."""
        return {
            "gold": self.gold_name,
            "sentences": self.n_sentences,
            "sentences_kim": self.n_kim,
            "words": self.n_words,
            "pred_spans": self.n_pred_spans,
            "gold_spans": self.n_gold_spans,
            "matched_spans": self.n_matched,
            "sentence_f1_onlstm": self.sentence_f1.to_dict(),
            "sentence_f1_kim": self.kim_f1.to_dict(),
            "corpus_f1": self.corpus_f1.to_dict(),
            "corpus_f1_evalb": self.evalb_f1.to_dict(),
            "label_recall": {
                label: {"recall": r.recall, "found": r.found, "total": r.total}
                for label, r in self.label_recall.items()
            },
            "pred_depth": self.pred_depth,
            "gold_depth": self.gold_depth,
        }

    def format_table(self) -> str:
        """A human-readable report (percentages with one decimal)."""
        return format_table(self)


def _pct(value: Optional[float]) -> str:
    return "   -" if value is None else f"{100 * value:5.1f}"


def format_table(result: EvalResult) -> str:
    """Render an :class:`EvalResult` as an aligned text table (see ``onparse eval``)."""
    rows = [
        ("sentence F1, ON-LSTM conv.", result.sentence_f1, f"{result.n_sentences:,} sentences"),
        ("sentence F1, Kim et al. conv.", result.kim_f1, f"{result.n_kim:,} sentences"),
        ("corpus F1", result.corpus_f1, f"{result.n_gold_spans:,} gold spans"),
        (
            "corpus F1, EVALB-style",
            result.evalb_f1,
            "whole-sentence spans counted",
        ),
    ]
    lines = [
        f"gold {result.gold_name}: {result.n_sentences:,} sentences, {result.n_words:,} words",
        "",
        f"{'':31}{'prec':>6}{'recall':>8}{'F1':>7}",
    ]
    for name, prf, note in rows:
        lines.append(f"{name:31}{_pct(prf.precision):>6}{_pct(prf.recall):>8}{_pct(prf.f1):>7}   {note}")
    lines += ["", "recall by gold label (whole-sentence span excluded):"]
    for label, rec in result.label_recall.items():
        lines.append(f"  {label:6}{_pct(rec.recall):>6}   {rec.found:,} of {rec.total:,}")
    lines += [
        "",
        f"average depth: predicted {result.pred_depth:.2f}, gold {result.gold_depth:.2f}",
        f"spans (whole sentence excluded): predicted {result.n_pred_spans:,}, "
        f"gold {result.n_gold_spans:,}, matched {result.n_matched:,}",
    ]
    return "\n".join(lines)


def format_comparison(rows: Sequence[Tuple[str, EvalResult]]) -> str:
    """Several results side by side, one line each: ``rows`` are ``(name, result)`` pairs
    (for example one per layer and decoder), all over the same gold set."""
    if not rows:
        return ""
    first = rows[0][1]
    width = max(12, max(len(name) for name, _ in rows) + 2)
    lines = [
        f"gold {first.gold_name}: {first.n_sentences:,} sentences, {first.n_words:,} words",
        "",
        f"{'':{width}}{'sentence F1':>13}{'sentence F1':>13}{'corpus':>8}{'EVALB':>8}{'depth':>7}",
        f"{'':{width}}{'ON-LSTM':>13}{'Kim et al.':>13}{'F1':>8}{'F1':>8}{'':>7}",
    ]
    for name, r in rows:
        lines.append(f"{name:{width}}{_pct(r.sentence_f1.f1):>13}{_pct(r.kim_f1.f1):>13}"
                     f"{_pct(r.corpus_f1.f1):>8}{_pct(r.evalb_f1.f1):>8}{r.pred_depth:>7.2f}")
    lines.append(f"(gold depth {first.gold_depth:.2f}; Kim et al. convention over {first.n_kim:,} sentences)")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------


def _as_gold(gold):
    # Accept a Gold, a name/path, or a sequence of GoldSentence or plain trees.
    from .treebank import Gold, GoldSentence, load_gold

    if isinstance(gold, Gold):
        return gold
    if isinstance(gold, str):
        return load_gold(gold)
    sentences = tuple(
        item if isinstance(item, GoldSentence) else GoldSentence.from_tree(item, f"tree {i + 1}")
        for i, item in enumerate(gold)
    )
    return Gold("trees", sentences)


def match_key(token: str) -> str:
    """What a predicted or gold token is compared by: normalised, then lowercased.

    The second lowercasing makes the comparison accept tokens that are already normalised
    (``N.N`` would otherwise normalise again to ``n.n``).
    """
    return normalize_word(token).lower()


def _extra_punctuation(pred_tokens: Sequence[str], pred: Sequence[str], gold: Sequence[str]) -> List[str]:
    """The punctuation tokens (:func:`onparse.text.is_punct`) that make ``pred`` longer than
    ``gold``, when removing them gives ``gold`` exactly (a gold word such as ``%`` may itself be
    punctuation by form); otherwise an empty list."""
    extra, j = [], 0
    for token, key in zip(pred_tokens, pred):
        if j < len(gold) and key == gold[j]:
            j += 1
        elif is_punct(token):
            extra.append(token)
        else:
            return []
    return extra if j == len(gold) else []


def token_mismatch(pred_tokens: Sequence[str], gold_tokens: Sequence[str]) -> Optional[str]:
    """Describe how predicted tokens differ from gold tokens; None when they match.

    Both sides are compared by :func:`match_key`.  Names the first differing word, and says
    so when the prediction still holds punctuation that the gold dropped.
    """
    pred = [match_key(t) for t in pred_tokens]
    gold = [match_key(t) for t in gold_tokens]
    if pred == gold:
        return None
    punct = _extra_punctuation(pred_tokens, pred, gold)
    if punct:
        shown = " ".join(repr(t) for t in punct[:5]) + (" ..." if len(punct) > 5 else "")
        return (
            f"the prediction keeps punctuation that the gold drops ({shown}); "
            "remove punctuation tokens before parsing"
        )
    k = next((i for i, (p, g) in enumerate(zip(pred, gold)) if p != g), min(len(pred), len(gold)))
    got = repr(pred_tokens[k]) if k < len(pred) else "end of sentence"
    want = repr(gold_tokens[k]) if k < len(gold) else "end of sentence"
    size = f"{len(pred)} words, gold has {len(gold)}; " if len(pred) != len(gold) else ""
    return f"{size}first difference at word {k + 1}: {got}, gold {want}"


def evaluate(pred_trees: Sequence[Tree], gold, check_tokens: bool = True) -> EvalResult:
    """Score predicted unlabelled trees against gold sentences, in order.

    ``pred_trees``: one tree per gold sentence (see :mod:`onparse.trees`), over the gold
    tokens or the surface words.  ``gold``: a :class:`onparse.treebank.Gold`, a gold name or
    path for :func:`onparse.treebank.load_gold`, or a sequence of gold sentences or trees.
    With ``check_tokens``, each tree's words, normalised (lowercase, digits -> ``N``), must
    equal the gold tokens.  Raises OnparseError for a count or token mismatch.

    Cost: one pass over each tree plus set intersections, O(total words); 0.1-0.2 s for the
    3,914-sentence NLTK sample on one core (``benchmarks/bench_eval.py``).
    """
    gold = _as_gold(gold)
    pred_trees = list(pred_trees)
    if len(pred_trees) != len(gold):
        raise OnparseError(
            f"{len(pred_trees)} predicted trees but gold {gold.name} has {len(gold)} sentences"
        )
    label_found = {label: 0 for label in REPORT_LABELS}
    label_total = {label: 0 for label in REPORT_LABELS}
    sums = [0.0, 0.0, 0.0]  # ON-LSTM P, R, F1
    kim_sums = [0.0, 0.0, 0.0]
    n_kim = n_match_all = n_pred_all = n_gold_all = n_whole = n_words = 0
    pred_depth_sum = gold_depth_sum = 0
    scores: List[SentenceScore] = []

    for index, (tree, sentence) in enumerate(zip(pred_trees, gold)):
        n = len(sentence.tokens)
        pred, words, pred_depth = _scan_tree(tree)
        if check_tokens and tuple(words) != sentence.tokens and tuple(words) != sentence.words:
            problem = token_mismatch(words, sentence.tokens)
            if problem:
                raise OnparseError(f"tree {index + 1} ({sentence.source}): {problem}")
        elif len(words) != n:
            raise OnparseError(
                f"tree {index + 1} ({sentence.source}): {len(words)} words, gold has {n}"
            )
        whole = (0, n)
        pred.discard(whole)
        gold_spans = sentence.spans - {whole} if whole in sentence.spans else sentence.spans
        n_match = len(pred & gold_spans) if pred and gold_spans else 0
        n_pred, n_gold = len(pred), len(gold_spans)

        precision, recall, f1 = sentence_prf(n_match, n_pred, n_gold)
        sums[0] += precision
        sums[1] += recall
        sums[2] += f1
        kim = kim_prf(n_match, n_pred, n_gold) if n > 1 else None
        if kim is not None:
            n_kim += 1
            kim_sums[0] += kim[0]
            kim_sums[1] += kim[1]
            kim_sums[2] += kim[2]
        n_match_all += n_match
        n_pred_all += n_pred
        n_gold_all += n_gold
        n_words += n
        if n >= 2:
            n_whole += 1
        for label, span in sentence.labelled:
            if label in label_total and span != whole:
                label_total[label] += 1
                if span in pred:
                    label_found[label] += 1
        gold_depth = sentence.depth
        pred_depth_sum += pred_depth
        gold_depth_sum += gold_depth
        scores.append(
            SentenceScore(
                index=index,
                tokens=sentence.tokens,
                n_pred=n_pred,
                n_gold=n_gold,
                n_match=n_match,
                precision=precision,
                recall=recall,
                f1=f1,
                kim_f1=None if kim is None else kim[2],
                pred_depth=pred_depth,
                gold_depth=gold_depth,
                pred_tree=tree,
                gold_tree=sentence.tree,
                source=sentence.source,
            )
        )

    count = len(gold)

    def mean(total: float, k: int) -> float:
        return total / k if k else 0.0

    return EvalResult(
        gold_name=gold.name,
        n_sentences=count,
        n_kim=n_kim,
        n_words=n_words,
        n_pred_spans=n_pred_all,
        n_gold_spans=n_gold_all,
        n_matched=n_match_all,
        sentence_f1=PRF(*(mean(s, count) for s in sums)),
        kim_f1=PRF(*(mean(s, n_kim) for s in kim_sums)),
        corpus_f1=PRF(*corpus_prf(n_match_all, n_pred_all, n_gold_all)),
        evalb_f1=PRF(*corpus_prf(n_match_all + n_whole, n_pred_all + n_whole, n_gold_all + n_whole)),
        label_recall={label: LabelRecall(label_found[label], label_total[label]) for label in REPORT_LABELS},
        pred_depth=mean(pred_depth_sum, count),
        gold_depth=mean(gold_depth_sum, count),
        sentences=tuple(scores),
    )


# --------------------------------------------------------------------------------------
# Predictions from text
# --------------------------------------------------------------------------------------


def read_predictions(text: str, gold, source: str = "PRED") -> List[Tree]:
    """Read predicted trees (bracketed, labelled or not) and check them against ``gold``.

    A labelled prediction that still holds punctuation (another parser's PTB output) is
    accepted when its tags identify the punctuation: its leaves are dropped by the gold's tag
    set (:mod:`onparse.tagsets`) as the gold's were, as EVALB drops them by label.

    Every problem is an OnparseError naming the first bad line of ``source``: malformed or
    unbalanced brackets, an empty input, a tree whose normalised words differ from its gold
    sentence's tokens, too many or too few trees.  Nothing is scored unless all trees fit.
    """
    gold = _as_gold(gold)
    items = list(iter_sexprs(text, source))
    by_tags = _tag_filter(gold, items)
    if not items:
        raise OnparseError(
            f"{source} is empty: no trees found (gold {gold.name} has {len(gold):,} sentences)"
        )
    count_note = (
        f" ({source} holds {len(items):,} trees, gold {gold.name} has {len(gold):,} sentences)"
        if len(items) != len(gold)
        else ""
    )
    trees: List[Tree] = []
    for i, (item, sentence) in enumerate(zip(items, gold)):
        tokens, surface = list(sentence.tokens), list(sentence.words)

        def matches(words: List[str]) -> bool:
            # exact tokens or surface words first: normalising every word is the slow path
            return words == tokens or words == surface or token_mismatch(words, tokens) is None

        try:
            tree, words = read_tree_matching(item.sexpr, matches)
        except ValueError as err:
            raise OnparseError(f"{source} line {item.line}: {err}") from None
        problem = None if words == tokens or words == surface else token_mismatch(words, tokens)
        if problem and is_labelled(item.sexpr):
            filtered = by_tags(item.sexpr)
            if filtered is not None and filtered.tokens == sentence.tokens:
                tree, problem = filtered.tree, None
        if problem:
            raise OnparseError(
                f"{source} line {item.line}: tree {i + 1} does not match gold sentence {i + 1} "
                f"({sentence.source}): {problem}{count_note}"
            )
        trees.append(tree)
    if len(items) > len(gold):
        extra = items[len(gold)]
        raise OnparseError(
            f"{source} line {extra.line}: tree {len(gold) + 1} has no gold sentence{count_note}"
        )
    if len(items) < len(gold):
        raise OnparseError(
            f"{source} ends after line {items[-1].line}: gold sentence {len(items) + 1} "
            f"({gold[len(items)].source}) has no tree{count_note}"
        )
    return trees


def _tag_filter(gold, items):
    """A function reading a labelled predicted tree with its punctuation dropped by tag (a
    :class:`onparse.treebank.GoldSentence`, or None when nothing is left): by the gold's tag
    set, or, for an unlabelled gold, the one detected from the predictions' tags."""
    from . import tagsets
    from .treebank import choose_tagset, preprocess

    chosen = []

    def read(sexpr):
        if not chosen:
            preset = tagsets.PRESETS.get(getattr(gold, "tagset", "ptb"))
            chosen.append(preset or choose_tagset([item.sexpr for item in items])[0])
        try:
            return preprocess(sexpr, labelled=True, tagset=chosen[0])
        except ValueError:
            return None

    return read


def score_text(text: str, gold, source: str = "PRED") -> EvalResult:
    """Read predictions from bracketed text (:func:`read_predictions`) and :func:`evaluate` them."""
    gold = _as_gold(gold)
    return evaluate(read_predictions(text, gold, source), gold, check_tokens=False)


def write_per_sentence(result: EvalResult, stream) -> None:
    """Write one JSON object per sentence (:meth:`SentenceScore.to_dict`) to a text stream."""
    for score in result.sentences:
        stream.write(json.dumps(score.to_dict(), ensure_ascii=False) + "\n")

"""Scoring unlabelled trees against gold: span sets, the F1 conventions, label recall.  No torch.

Definitions (``docs/onlstm.md`` section 5).  A sentence's span set holds its
constituents of >= 2 words without the whole-sentence span; duplicates collapse.

1. **Sentence F1, ON-LSTM/PRPN convention** (the paper's headline): per sentence
   P = |pred ∩ gold| / |pred|, R = |pred ∩ gold| / |gold|; an empty gold set gives R = 1, and
   P = 1 too when the prediction is empty as well; F1 = 2PR / (P + R) (0 when P + R = 0);
   averaged over every sentence.
2. **Sentence F1, Kim et al. 2019 convention**: the same sets, but sentences of one word and
   sentences whose predicted or gold set is empty are left out of the mean.
3. **Corpus F1**: matched, predicted and gold spans pooled over the corpus, then P, R, F1.
   **EVALB-style** corpus F1 also counts the whole-sentence span of every sentence of >= 2
   words: it is what EVALB (unlabelled) reports for the trees written by ``--format ptb``
   (:func:`onparse.trees.tree.to_ptb`) against the gold collapsed to word spans, that is the gold
   trees onparse scores (punctuation and empty elements dropped, unary chains collapsed)
   written the same way.  A one-word sentence has no bracket there, so it counts in neither.

Each convention is defined once, as a :class:`onparse.scores.conventions.Convention` of
:data:`onparse.scores.conventions.CONVENTIONS`: the rule that reads one sentence's span counts, and how
the rule's values add up over a corpus (a mean of per-sentence scores, or pooled counts).
Predicted trees are read from text by :mod:`onparse.scores.predicted`.  :class:`SpanMetric` accumulates sentences under every
convention at once (``metric(preds, golds)`` adds sentences, ``a + b`` merges two), and
:func:`evaluate` is one metric over a whole gold set.

Precision and recall of each convention are reported beside F1 (sentence conventions: the
means of the per-sentence P and R).  Also: recall per gold label (over the same spans, so the
whole-sentence span is not counted), average tree depth (:func:`onparse.trees.tree.depth`), counts,
and for labelled predictions (a grammar's ``NT-12``; ``X`` is no label) how each induced symbol
lines up with the gold labels (:attr:`SpanMetric.symbols`, over the same spans).
All scores are fractions in [0, 1]; the table shows them as percentages.  Sentence numbers
(:attr:`SentenceScore.index`, ``"index"`` of ``--per-sentence``) are 1-based, as in
``onparse show --gold wsj10:I``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .conventions import CONVENTIONS, KIM_INDEX, ONLSTM_INDEX, SpanCounts, corpus_prf, scan_tree
from ..errors import OnparseError
from .token_match import token_mismatch
from ..gold.treebank import Gold, GoldSentence
from ..trees.tree import Span, Tree, to_brackets

#: The placeholder label of unlabelled predicted nodes (``--format ptb``): not an induced symbol.
PLACEHOLDER = "X"
#: Gold labels whose recall is reported, in report order, when the gold holds any of them (Penn
#: Treebank).  A gold in another tag set (alpino's ``np``, cess_esp's ``sn`` ...) gets its own
#: most frequent labels instead, as many as these.
REPORT_LABELS = ("NP", "VP", "PP", "SBAR", "ADJP", "ADVP", "S")


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
    Kim-convention F1 (None when the sentence is left out of that mean), depths, trees.

    ``index``: the sentence's number in the gold set, 1-based (``onparse show --gold wsj10:I``
    shows sentence ``I``)."""

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


class _Total:
    """The running sums of one convention: three numbers and how many sentences gave them."""

    __slots__ = ("sums", "count")

    def __init__(self, sums=(0, 0, 0), count: int = 0):
        self.sums = list(sums)
        self.count = count

    def add(self, values: Optional[Tuple[float, float, float]]) -> Optional[Tuple[float, float, float]]:
        """Add one sentence's values (None: the sentence is left out); returns them."""
        if values is not None:
            a, b, c = values
            sums = self.sums
            sums[0] += a
            sums[1] += b
            sums[2] += c
            self.count += 1
        return values

    def __add__(self, other: "_Total") -> "_Total":
        return _Total([a + b for a, b in zip(self.sums, other.sums)], self.count + other.count)


class SpanMetric:
    """Scores accumulated over sentences, under every convention of :data:`CONVENTIONS` at once.

    As SuPar's ``SpanMetric``: ``metric(pred_trees, gold_sentences)`` adds sentences and
    returns the metric, :meth:`update` adds one, ``a + b`` merges two metrics (b's sentences
    numbered after a's), and each score is a property: ``sentence_f1``, ``kim_f1``,
    ``corpus_f1``, ``evalb_f1`` (:class:`PRF`), ``label_recall``, ``symbols`` (labelled
    predictions), ``pred_depth``, ``gold_depth``, counts.  ``to_dict()`` for JSON, ``format_table()`` for people.

    ``sentence_f1`` is the ON-LSTM/PRPN convention over all ``n_sentences``; ``kim_f1`` the Kim
    et al. convention over ``n_kim`` sentences; ``corpus_f1`` pooled; ``evalb_f1`` pooled with
    the whole-sentence spans.  Span counts exclude the whole-sentence span.

    >>> metric = SpanMetric()
    >>> metric([("a", ("b", "c")), "d"], [(("a", "b"), "c"), "d"]).n_sentences
    2
    >>> metric.sentence_f1.f1, metric.kim_f1.f1, metric.n_kim, metric.evalb_f1.f1
    (0.5, 0.0, 1, 0.5)
    >>> (metric + SpanMetric()([("a", "b")], [("a", "b")])).sentence_f1.f1
    0.6666666666666666

    Cost: one pass over each tree plus a set intersection per sentence, O(words).
    """

    def __init__(self, gold_name: str = "trees"):
        self.gold_name = gold_name
        self.n_words = 0
        self._set_totals({c.name: _Total() for c in CONVENTIONS})
        self._found: Counter = Counter()
        self._labelled: Counter = Counter()
        self._symbols: Dict[str, Counter] = {}  # induced symbol -> gold label -> constituents
        self._symbol_spans: Counter = Counter()
        self._depths = [0, 0]  # predicted, gold
        self._sentences: List[SentenceScore] = []

    def _set_totals(self, totals: Dict[str, _Total]) -> None:
        self._totals = totals
        self._steps = [(totals[c.name].add, c.rule) for c in CONVENTIONS]

    # -- adding sentences ----------------------------------------------------------------
    def __call__(self, pred_trees: Iterable[Tree], gold, check_tokens: bool = True,
                 labels: Optional[Sequence[Optional[Mapping[Span, str]]]] = None) -> "SpanMetric":
        """Add one predicted tree per gold sentence, in order (``gold``: a
        :class:`onparse.gold.treebank.Gold` or a sequence of gold sentences or plain trees;
        ``labels``: one span -> label mapping per tree, or None; see :meth:`update`); returns
        the metric.  OnparseError when the counts differ."""
        gold = as_gold(gold)
        pred_trees = list(pred_trees)
        if len(pred_trees) != len(gold):
            raise OnparseError(f"{len(pred_trees)} predicted trees but gold {gold.name} has {len(gold)} sentences")
        for i, (tree, sentence) in enumerate(zip(pred_trees, gold)):
            self._add(tree, sentence, check_tokens, None if labels is None else labels[i])
        return self

    def update(self, tree: Tree, gold, check_tokens: bool = True,
               labels: Optional[Mapping[Span, str]] = None) -> SentenceScore:
        """Score one predicted ``tree`` against ``gold`` (an :class:`onparse.gold.treebank.GoldSentence`
        or a plain tree), add it and return its :class:`SentenceScore`.  ``labels``: the tree's
        span -> label (induced symbols such as ``NT-12``), for :attr:`symbols`.

        With ``check_tokens``, the tree's words, normalised (lowercase, digits -> ``N``), must
        equal the gold tokens; without, only the lengths must agree.  OnparseError otherwise.
        """
        return self._add(tree, _as_gold_sentence(gold, len(self._sentences) + 1), check_tokens, labels)

    def _add(self, tree: Tree, sentence, check_tokens: bool, labels=None) -> SentenceScore:
        index = len(self._sentences) + 1
        n = len(sentence.tokens)
        pred, words, pred_depth = scan_tree(tree)
        if check_tokens and tuple(words) != sentence.tokens and tuple(words) != sentence.words:
            problem = token_mismatch(words, sentence.tokens)
            if problem:
                raise OnparseError(f"tree {index} ({sentence.source}): {problem}")
        elif len(words) != n:
            raise OnparseError(f"tree {index} ({sentence.source}): {len(words)} words, gold has {n}")
        whole = (0, n)
        pred.discard(whole)
        gold_spans = sentence.spans - {whole} if whole in sentence.spans else sentence.spans
        counts = SpanCounts(n, len(pred & gold_spans), len(pred), len(gold_spans))
        values = [add(rule(counts)) for add, rule in self._steps]  # every convention, in order
        onlstm, kim = values[ONLSTM_INDEX], values[KIM_INDEX]
        gold_labels: Dict[Span, List[str]] = {}
        for label, span in sentence.labelled:
            if span != whole:
                self._labelled[label] += 1
                self._found[label] += span in pred
                gold_labels.setdefault(span, []).append(label)
        for span, symbol in (labels or {}).items():     # the tree's own spans, whole sentence excluded
            if span in pred and symbol != PLACEHOLDER:
                self._symbol_spans[symbol] += 1
                self._symbols.setdefault(symbol, Counter()).update(gold_labels.get(span, ()))
        self.n_words += n
        self._depths[0] += pred_depth
        self._depths[1] += sentence.depth
        score = SentenceScore(index, sentence.tokens, counts.n_pred, counts.n_gold, counts.n_match, *onlstm,
                              None if kim is None else kim[2], pred_depth, sentence.depth, tree,
                              sentence.tree, sentence.source)
        self._sentences.append(score)
        return score

    def __add__(self, other: "SpanMetric") -> "SpanMetric":
        """Both metrics' sentences in one, ``other``'s numbered after this one's."""
        names = self.gold_name if other.gold_name == self.gold_name else f"{self.gold_name}+{other.gold_name}"
        merged = SpanMetric(names)
        merged.n_words = self.n_words + other.n_words
        merged._set_totals({name: total + other._totals[name] for name, total in self._totals.items()})
        merged._found = self._found + other._found
        merged._labelled = self._labelled + other._labelled
        merged._symbol_spans = self._symbol_spans + other._symbol_spans
        merged._symbols = {s: self._symbols.get(s, Counter()) + other._symbols.get(s, Counter())
                           for s in merged._symbol_spans}
        merged._depths = [a + b for a, b in zip(self._depths, other._depths)]
        offset = len(self._sentences)
        merged._sentences = self._sentences + [replace(s, index=s.index + offset) for s in other._sentences]
        return merged

    # -- scores --------------------------------------------------------------------------
    def score(self, name: str) -> PRF:
        """P, R, F1 of the convention called ``name`` (:data:`CONVENTIONS`)."""
        convention = next((c for c in CONVENTIONS if c.name == name), None)
        if convention is None:
            raise KeyError(f"no convention {name!r}; choose from {', '.join(c.name for c in CONVENTIONS)}")
        total = self._totals[name]
        if convention.pooled:
            return PRF(*corpus_prf(*total.sums))
        return PRF(*(s / total.count if total.count else 0.0 for s in total.sums))

    @property
    def sentence_f1(self) -> PRF:
        """Sentence F1, ON-LSTM/PRPN convention (module doc, 1)."""
        return self.score("sentence_f1")

    @property
    def kim_f1(self) -> PRF:
        """Sentence F1, Kim et al. convention (module doc, 2)."""
        return self.score("kim_f1")

    @property
    def corpus_f1(self) -> PRF:
        """Corpus F1 (module doc, 3)."""
        return self.score("corpus_f1")

    @property
    def evalb_f1(self) -> PRF:
        """EVALB-style corpus F1 (module doc, 3)."""
        return self.score("evalb_f1")

    @property
    def sentences(self) -> Tuple[SentenceScore, ...]:
        """Every sentence's :class:`SentenceScore`, in order."""
        return tuple(self._sentences)

    @property
    def n_sentences(self) -> int:
        return len(self._sentences)

    @property
    def n_kim(self) -> int:
        """Sentences in the Kim et al. mean."""
        return self._totals["kim_f1"].count

    @property
    def n_matched(self) -> int:
        """Matched spans, whole sentence excluded."""
        return self._totals["corpus_f1"].sums[0]

    @property
    def n_pred_spans(self) -> int:
        """Predicted spans, whole sentence excluded."""
        return self._totals["corpus_f1"].sums[1]

    @property
    def n_gold_spans(self) -> int:
        """Gold spans, whole sentence excluded."""
        return self._totals["corpus_f1"].sums[2]

    @property
    def label_recall(self) -> Dict[str, LabelRecall]:
        """Recall of each gold label of :data:`REPORT_LABELS` (whole-sentence span excluded) when
        the gold holds them all (a Penn Treebank); otherwise of the gold's own most frequent
        labels (a treebank with its own label set: no row of 0 of 0)."""
        labels = REPORT_LABELS
        if not all(self._labelled[label] for label in REPORT_LABELS) and self._labelled:
            ranked = sorted(self._labelled.items(), key=lambda item: (-item[1], item[0]))
            labels = tuple(label for label, _ in ranked[:len(REPORT_LABELS)])
        return {label: LabelRecall(self._found[label], self._labelled[label]) for label in labels}

    @property
    def symbols(self) -> List[dict]:
        """How each induced symbol of labelled predictions lines up with gold, the symbols that
        label the most gold constituents first (empty for unlabelled predictions): ``spans``
        (predicted constituents it labels, whole sentence excluded), ``gold_labels`` (gold label
        -> gold constituents over those spans; a unary chain's labels count each),
        ``constituents`` (their sum), ``gold_label`` (the most frequent; ties alphabetical) and
        ``purity`` (its share); the last two None when it labels no gold constituent."""
        out = []
        for symbol, spans in self._symbol_spans.items():
            gold = self._symbols.get(symbol, Counter())
            total, best = sum(gold.values()), min(gold, key=lambda g: (-gold[g], g)) if gold else None
            out.append({"symbol": symbol, "gold_label": best, "purity": gold[best] / total if gold else None,
                        "constituents": total, "spans": spans, "gold_labels": dict(gold)})
        return sorted(out, key=lambda a: (-a["constituents"], -a["spans"], a["symbol"]))

    @property
    def pred_depth(self) -> float:
        """Mean depth of the predicted trees."""
        return self._depths[0] / self.n_sentences if self._sentences else 0.0

    @property
    def gold_depth(self) -> float:
        """Mean depth of the gold trees."""
        return self._depths[1] / self.n_sentences if self._sentences else 0.0

    # -- output --------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Summary as plain JSON-ready values (per-sentence records are not included); ``symbols``
        only for labelled predictions."""
        symbols = {"symbols": self.symbols} if self._symbol_spans else {}
        return {
            "gold": self.gold_name,
            "sentences": self.n_sentences,
            "sentences_kim": self.n_kim,
            "words": self.n_words,
            "pred_spans": self.n_pred_spans,
            "gold_spans": self.n_gold_spans,
            "matched_spans": self.n_matched,
            **{c.key: self.score(c.name).to_dict() for c in CONVENTIONS},
            "label_recall": {
                label: {"recall": r.recall, "found": r.found, "total": r.total}
                for label, r in self.label_recall.items()
            },
            "pred_depth": self.pred_depth,
            "gold_depth": self.gold_depth,
            **symbols,
        }

    def format_table(self, symbols: bool = False) -> str:
        """A human-readable report (percentages with one decimal), as ``onparse eval`` prints it;
        with ``symbols``, and labelled predictions, the table of :attr:`symbols` at its end."""
        lines = [
            f"gold {self.gold_name}: {self.n_sentences:,} sentences, {self.n_words:,} words",
            "",
            f"{'':31}{'prec':>6}{'recall':>8}{'F1':>7}",
        ]
        for c in CONVENTIONS:
            prf, total = self.score(c.name), self._totals[c.name]
            note = c.note.format(count=total.count, gold=total.sums[2])
            lines.append(f"{c.title:31}{percent(prf.precision):>6}{percent(prf.recall):>8}{percent(prf.f1):>7}   {note}")
        lines += ["", "recall by gold label (whole-sentence span excluded):"]
        for label, rec in self.label_recall.items():
            lines.append(f"  {label:6}{percent(rec.recall):>6}   {rec.found:,} of {rec.total:,}")
        lines += [
            "",
            f"average depth: predicted {self.pred_depth:.2f}, gold {self.gold_depth:.2f}",
            f"spans (whole sentence excluded): predicted {self.n_pred_spans:,}, "
            f"gold {self.n_gold_spans:,}, matched {self.n_matched:,}",
        ]
        if symbols and self._symbol_spans:
            lines += ["", self.format_symbols()]
        return "\n".join(lines)

    def format_symbols(self) -> str:
        """The table of :attr:`symbols` (empty without labelled predictions), as the end of
        :meth:`format_table` and under ``onparse eval --labels``' comparison of several trees."""
        if not self._symbol_spans:
            return ""
        lines = ["induced symbols against gold labels (whole-sentence span excluded; purity: the share of",
                 "the gold constituents over a symbol's spans that carry its most frequent gold label):",
                 f"  {'symbol':10}{'gold label':12}{'purity':>7}{'constituents':>14}{'spans':>9}"]
        for a in self.symbols:
            lines.append(f"  {a['symbol']:10}{a['gold_label'] or '-':12}{percent(a['purity']):>7}"
                         f"{a['constituents']:>14,}{a['spans']:>9,}")
        pure = sum(max(c.values(), default=0) for c in self._symbols.values())
        matched = sum(sum(c.values()) for c in self._symbols.values())
        lines.append(f"  {'all':22}{percent(pure / matched if matched else None):>7}{matched:>14,}"
                     f"{sum(self._symbol_spans.values()):>9,}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"SpanMetric({self.gold_name!r}: {self.n_sentences} sentences, "
                + ", ".join(f"{c.name} {100 * self.score(c.name).f1:.1f}" for c in CONVENTIONS) + ")")


def percent(value: Optional[float]) -> str:
    return "   -" if value is None else f"{100 * value:5.1f}"


# --------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------


def _as_gold_sentence(item, number: int):
    return item if isinstance(item, GoldSentence) else GoldSentence.from_tree(item, f"tree {number}")


def as_gold(gold):
    """A :class:`onparse.gold.treebank.Gold` from a Gold or a sequence of gold sentences or plain
    trees.  A name or path is a TypeError: load it first (:func:`onparse.gold.treebank.load_gold`)."""
    if isinstance(gold, Gold):
        return gold
    if isinstance(gold, (str, bytes)) or hasattr(gold, "__fspath__"):
        raise TypeError(f"gold must be gold sentences, not the name or path {gold!r}: "
                        "read it first with onparse.gold.treebank.load_gold")
    return Gold("trees", tuple(_as_gold_sentence(item, i + 1) for i, item in enumerate(gold)))


def evaluate(pred_trees: Sequence[Tree], gold, check_tokens: bool = True,
             labels: Optional[Sequence[Optional[Mapping[Span, str]]]] = None) -> SpanMetric:
    """Score predicted unlabelled trees against gold sentences, in order; ``labels`` (one span ->
    label mapping per tree, induced symbols such as ``NT-12``) also fills :attr:`SpanMetric.symbols`.

    ``pred_trees``: one tree per gold sentence (see :mod:`onparse.trees.tree`), over the gold
    tokens or the surface words.  ``gold``: a :class:`onparse.gold.treebank.Gold` or a sequence of
    gold sentences or trees; a gold set named by a name or path is read by the caller
    (:func:`onparse.gold.treebank.load_gold`): nothing here opens a file.  With ``check_tokens``,
    each tree's words, normalised (lowercase, digits -> ``N``), must equal the gold tokens.
    Raises OnparseError for a count or token mismatch.

    Cost: one pass over each tree plus set intersections, O(total words); 0.1-0.2 s for the
    3,914-sentence NLTK sample on one core (``benchmarks/bench_eval.py``).
    """
    gold = as_gold(gold)
    return SpanMetric(gold.name)(pred_trees, gold, check_tokens, labels)

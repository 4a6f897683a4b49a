"""Is a grammar learning?  The collapse alarm's figures and its one rule.  No torch.

A neural PCFG can collapse into a one-state chain: the root picks one nonterminal, every binary
rule puts a preterminal left of that same nonterminal, and every tree it gives is right-branching
(or left-branching), while its perplexity is worse than counting words.  Such a grammar adds
nothing a right-branching baseline does not.  After every epoch a grammar run records, beside
its validation perplexity (``metrics.jsonl``, the ``epoch`` event):

- ``unigram_ppl``: the add-0.5 unigram perplexity of the same validation sentences under the
  same vocabulary, counts from the training split (:func:`unigram_perplexity`);
- ``right_branching_share``, ``left_branching_share`` and their sum ``branching_share``: the
  share of its MBR trees of held-out sentences (of at least :data:`MIN_WORDS` words, where a
  chain is not the only binary tree) that are exactly the right- or left-branching tree;
- ``rule_entropy``: the mean over nonterminals A of the entropy, in nats, of ``P(B C | A)``
  (0 for a grammar whose every parent has one rule).

:func:`collapse_alarm` reads one such record: the grammar has collapsed when at least
:data:`BRANCHING_LIMIT` of its trees are chains, or when from epoch :data:`GRACE_EPOCHS` on it is
no better than the unigram model.  ``onparse train`` prints its message, ``fit`` leaves such a
grammar out (judged at the epoch it would keep, with no grace), ``info`` and ``plot-log`` show the figures.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Mapping, Optional, Sequence, Tuple

from ..text.tokens import normalize_word

#: A grammar with at least this share of its held-out trees right- or left-branching has collapsed.
BRANCHING_LIMIT = 0.9
#: From this epoch on, a grammar no better than the unigram model has collapsed (a first epoch
#: may still be finding its feet).
GRACE_EPOCHS = 2
#: The shortest sentence whose tree counts for the branching share: under 3 words every binary
#: tree is both chains.
MIN_WORDS = 3
#: The most held-out sentences (of MIN_WORDS to MAX_WORDS words) an epoch parses for the share.
SAMPLE_SENTENCES = 300
MAX_WORDS = 40
#: The add-k smoothing of the unigram baseline.
SMOOTHING = 0.5


def unigram_perplexity(train: Iterable[Sequence[str]], held_out: Iterable[Sequence[str]], vocab) -> float:
    """The per-word perplexity of ``held_out``'s sentences of two words or more (the ones a
    grammar scores) under the add-0.5 unigram model of ``train`` over ``vocab`` (an
    :class:`onparse.text.vocab.Vocabulary`; words normalised and unknown ones ``<unk>`` as the
    grammar reads them).  ``inf`` when nothing is held out.

    >>> from onparse.text.vocab import Vocabulary
    >>> v = Vocabulary(["<unk>", "<eos>", "a", "b"])
    >>> round(unigram_perplexity([["a", "a", "b"]], [["a", "b"]], v), 4)   # p(a) = 2.5/5, p(b) = 1.5/5
    2.582
    """
    def ids(sentence):
        return [vocab.index(normalize_word(w)) for w in sentence]

    counts = Counter(i for sentence in train for i in ids(sentence))
    total = sum(counts.values()) + SMOOTHING * len(vocab)
    log_p, words = 0.0, 0
    for sentence in held_out:
        if len(sentence) >= 2:
            log_p += sum(math.log((counts[i] + SMOOTHING) / total) for i in ids(sentence))
            words += len(sentence)
    return math.exp(-log_p / words) if words else math.inf


def branching_shares(span_sets: Iterable[Tuple[int, Sequence[Tuple[int, int]]]]) -> Tuple[float, float, int]:
    """``(right, left, counted)``: the share of trees that are exactly the right-branching and
    exactly the left-branching tree, over ``(n, spans)`` pairs (a tree's spans of width >= 2 over
    ``n`` words) of at least :data:`MIN_WORDS` words; ``(0.0, 0.0, 0)`` when none counts.

    >>> branching_shares([(3, [(0, 3), (1, 3)]), (3, [(0, 3), (0, 2)]), (4, [(0, 4), (1, 3), (1, 4)])])
    (0.3333333333333333, 0.3333333333333333, 3)
    """
    right = left = counted = 0
    for n, spans in span_sets:
        if n < MIN_WORDS:
            continue
        counted += 1
        found = set(spans)
        right += found == {(i, n) for i in range(n - 1)}
        left += found == {(0, j) for j in range(2, n + 1)}
    return (right / counted, left / counted, counted) if counted else (0.0, 0.0, 0)


def collapse_alarm(record: Mapping, grace: bool = True) -> Optional[str]:
    """Why the grammar of an epoch record (``metrics.jsonl``'s ``epoch`` event or a file's
    ``metadata["epochs"]`` row) has collapsed, in a few words, or None when it has not (or the
    record predates these figures).  ``grace``: a training run's own warning spares epochs before
    :data:`GRACE_EPOCHS` the unigram test (a first epoch may still be finding its feet); a grammar
    judged as it stands (a file, ``info``; the epoch ``fit`` would keep) gets none.

    >>> collapse_alarm({"epoch": 1, "branching_share": 0.95})
    '95% of its held-out trees are right- or left-branching chains'
    >>> collapse_alarm({"epoch": 2, "valid_ppl": 850.0, "unigram_ppl": 708.0, "branching_share": 0.2})
    'its validation perplexity (850.0) is no better than counting words (unigram 708.0)'
    >>> collapse_alarm({"epoch": 1, "valid_ppl": 850.0, "unigram_ppl": 708.0}) is None
    True
    >>> collapse_alarm({"epoch": 1, "valid_ppl": 850.0, "unigram_ppl": 708.0}, grace=False)[:33]
    'its validation perplexity (850.0)'
    """
    share = record.get("branching_share")
    if isinstance(share, (int, float)) and share >= BRANCHING_LIMIT:
        return f"{share:.0%} of its held-out trees are right- or left-branching chains"
    ppl, unigram, epoch = record.get("valid_ppl"), record.get("unigram_ppl"), record.get("epoch")
    if all(isinstance(x, (int, float)) for x in (ppl, unigram, epoch)) and (epoch >= GRACE_EPOCHS or not grace) \
            and ppl >= unigram:
        return f"its validation perplexity ({ppl:.1f}) is no better than counting words (unigram {unigram:.1f})"
    return None


def held_out_sample(sentences: Sequence[Sequence[str]]) -> list:
    """The held-out sentences an epoch parses for its branching share: the first
    :data:`SAMPLE_SENTENCES` of :data:`MIN_WORDS` to :data:`MAX_WORDS` words, in order (the
    same every epoch, so the figures compare)."""
    return [list(s) for s in sentences if MIN_WORDS <= len(s) <= MAX_WORDS][:SAMPLE_SENTENCES]

"""What a parser's models do besides parsing, as functions beside :class:`onparse.api.Parser`:
``onparse.perplexity(parser, ...)`` measures its language models and ``onparse.distill(parser,
...)`` trains a student on its trees.

They were ``Parser`` methods; they live here so that the parser class holds parsing, scoring and
agreement only (issue 57.5), and each is a thin front over the home of its rule: the kinds'
:meth:`onparse.kinds.ParsingModel.perplexity` and :func:`onparse.student.distill.distill`.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, List, Optional

from .student.distill import distill as _distill


def perplexity(parser, corpus: Optional[str] = None, split: Optional[str] = None, *, fmt: str = "auto",
               batch_size: Optional[int] = None, bptt: Optional[int] = None, quiet: bool = False) -> List[Any]:
    """The perplexity of each model of ``parser`` that has one (a student has none): one
    :class:`onparse.lm.perplexity.PerplexityResult` per such model, in order, whose ``corpus``
    says what was measured (``"wsj test"``) and ``model`` which model (:meth:`Parser.name`).
    When no model has one, the first model's OnparseError says why.

    ``corpus``: None (each model's own training corpus, as its checkpoint records it), a
    built-in name (``news``, ``wsj`` ...) or a text file; ``split``: ``train``, ``valid``,
    ``test`` (default for a name or the recorded corpus) or ``all`` (default for a file);
    ``fmt``: a file's format (:data:`onparse.text.corpora.FORMATS`).  ``batch_size`` / ``bptt``:
    parallel streams and window length, by default those of each model's training run (else
    10 and 70), so that the figure matches the trainer's.

    Progress goes to stderr (a bar on a terminal, a line a minute otherwise; ``quiet``: none).
    No tensor goes in or out.  Cost: per model, one forward pass over the text without
    gradients, on the parser's device; memory of the order of ``batch_size x bptt x
    vocabulary`` floats for the logits.
    """
    # Measuring model 0 when none has a perplexity makes its kind say why, in its own words.
    measured = [i for i, model in enumerate(parser.models) if model.has_perplexity] or [0]
    # Each result names its model: a bundle's student (no perplexity) may come before a language model.
    return [replace(parser.models[i].perplexity(corpus, split, fmt, batch_size, bptt, name=parser.name(i), quiet=quiet),
                    model=parser.name(i)) for i in measured]


def distill(parser, text, student, **options):
    """Train a student parser on ``parser``'s trees of the lines of the file ``text`` and write
    it to ``student`` (paths: ``str`` or ``os.PathLike``); returns a
    :class:`onparse.student.distill.DistillResult`.  ``options``: those of
    :func:`onparse.student.distill.distill` (``run_dir``, ``sizes``, ``settings``, ``resume``,
    ``teacher_trees``, ``max_time`` ...).  ``onparse.load(student)`` reads the student back,
    alone or beside other models.

    No tensor goes in or out.  Cost: the parser's parse of the text (none with
    ``teacher_trees``), then ``epochs`` passes of O(n^3) per sentence."""
    # The run records the paths it was given in JSON: it takes strings.
    return _distill(parser, os.fspath(text), os.fspath(student), **options)

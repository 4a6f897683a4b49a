"""Reading the free-form records of model files (their ``metadata``) for people: a field of the
expected type or a default, percentages, and text without control characters.  A file may come
from anyone, so nothing here trusts a field's type.  No torch.
"""
from __future__ import annotations

import re
import unicodedata

#: Score keys recorded per (gold set, layer, decoder), in the order they are printed.
SCORE_KEYS = (("sentence_f1_onlstm", "sent. F1 ON-LSTM"), ("sentence_f1_kim", "sent. F1 Kim"),
              ("corpus_f1", "corpus F1"), ("corpus_f1_evalb", "EVALB F1"))


def field_of(meta: dict, key: str, types, default=None):
    """``meta[key]`` when it has one of ``types`` (bool is not a number here), else ``default``.

    >>> field_of({"epoch": 3, "flag": True}, "epoch", int), field_of({"flag": True}, "flag", int, 0)
    (3, 0)
    """
    value = meta.get(key)
    return value if isinstance(value, types) and not isinstance(value, bool) else default


def percent(value) -> str:
    """``54.1`` for 0.541; ``-`` for anything that is not a number."""
    return f"{100 * value:.1f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def printable(text: str) -> str:
    """``text`` without control characters (a checkpoint's metadata may hold a BEL or an escape
    sequence), line breaks kept.

    >>> printable("a\\x07b\\x1b[31mc\\nd")
    'ab[31mc\\nd'
    """
    return "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch) != "Cc")


#: The lab's references in a model file's free-form records, and their plain words
#: (:func:`plain_words`): an aside citing the research record, a rule's number, a run's name,
#: a path into the research folder.
_LAB = ((re.compile(r"\s*\((?=[^()]*(?:\bresearch/|\bPROTOCOL\b|\brule v\d))[^()]*\)"), ""),
        (re.compile(r"\brule v\d+'s average\b"), "the teachers' average"),
        (re.compile(r"\brule v\d+'s\s+"), "the "),
        (re.compile(r"\brule v\d+\s*"), ""),
        (re.compile(r"\bs(\d+) e(\d+)\b"), r"seed \1, epoch \2"),
        (re.compile(r"(?:\.\./)*research/(?:\S+/)?(?=[^/\s]+\b)"), ""))


def plain_words(text: str) -> str:
    """A free-form record as a user reads it (``onparse info``): the lab's references left out
    or said plainly; any other text unchanged.

    >>> plain_words("the one of highest F1: student (s1 e6) (research/PROTOCOL.md, rule v17)")
    'the one of highest F1: student (seed 1, epoch 6)'
    """
    for pattern, words in _LAB:
        text = pattern.sub(words, text)
    return text


def origin_lines(meta, settings_key: str, extras=()) -> list:
    """``onparse info``'s "written by" and "training" lines for a model file's metadata: the
    onparse version; the corpus, preset, seed (read from ``meta[settings_key]``, the kind's own
    settings record), epochs and steps, then the kind's ``extras`` (None entries left out).

    >>> origin_lines({"onparse_version": "0.1.0", "corpus": {"source": "news"}, "training": {"seed": 2},
    ...               "epoch": 3, "step": 1200}, "training", ["sentences of at most 40 words"])
    ['written by: onparse 0.1.0', 'training: corpus news, seed 2, 3 epochs, 1,200 steps, sentences of at most 40 words']
    """
    lines = []
    if field_of(meta, "onparse_version", str):
        lines.append(f"written by: onparse {meta['onparse_version']}")
    settings = field_of(meta, settings_key, dict, {})
    corpus = field_of(field_of(meta, "corpus", dict, {}), "source", str)
    if settings or corpus:
        epoch, step, seed = field_of(meta, "epoch", int), field_of(meta, "step", int), field_of(settings, "seed", int)
        parts = [f"corpus {corpus}" if corpus else None,
                 f"preset {meta['preset']}" if field_of(meta, "preset", str) else None,
                 f"seed {seed}" if seed is not None else None,
                 f"{epoch} epoch{'' if epoch == 1 else 's'}" if epoch is not None else None,
                 f"{step:,} steps" if step is not None else None, *extras]
        lines.append("training: " + ", ".join(p for p in parts if p))
    return lines


def training_summary(meta) -> str:
    """What a model file's metadata says of its training, in a few words, whatever its kind:
    its corpus (or text), preset, seed and epochs; empty when it says nothing.

    >>> training_summary({"corpus": {"source": "conll2000"}, "preset": "small", "train_config": {"seed": 4},
    ...                   "epoch": 8})
    'corpus conll2000, preset small, seed 4, epoch 8'
    >>> training_summary({"text": {"path": "news.txt"}, "distill": {"seed": 2}, "epochs": [{}, {}]})
    'text news.txt, seed 2, epoch 2'
    """
    if not isinstance(meta, dict):
        return ""
    corpus = field_of(field_of(meta, "corpus", dict, {}), "source", str)
    text = field_of(field_of(meta, "text", dict, {}), "path", str)
    seeds = [field_of(field_of(meta, key, dict, {}), "seed", int) for key in ("train_config", "training", "distill")]
    seed = next((s for s in seeds if s is not None), None)
    epoch = field_of(meta, "epoch", int)
    if epoch is None and field_of(meta, "epochs", list):
        epoch = len(meta["epochs"])
    parts = [f"corpus {corpus}" if corpus else None, f"text {text}" if text else None,
             f"preset {meta['preset']}" if field_of(meta, "preset", str) else None,
             f"seed {seed}" if seed is not None else None, f"epoch {epoch}" if epoch is not None else None]
    return printable(", ".join(p for p in parts if p))

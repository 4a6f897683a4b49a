"""The reports of scores that ``onparse eval`` prints beside one result's own table
(:meth:`onparse.scores.metrics.SpanMetric.format_table`): several results side by side, and one
JSON object per sentence."""
from __future__ import annotations

import json
from typing import Sequence, Tuple

from .conventions import CONVENTIONS
from .metrics import SpanMetric, percent


def format_comparison(rows: Sequence[Tuple[str, SpanMetric]]) -> str:
    """Several results side by side, one line each: ``rows`` are ``(name, result)`` pairs
    (for example one per layer and decoder), all over the same gold set."""
    if not rows:
        return ""
    first = rows[0][1]
    width = max(12, max(len(name) for name, _ in rows) + 2)
    columns = [max(8, len(c.column[0]) + 2) for c in CONVENTIONS]
    lines = [
        f"gold {first.gold_name}: {first.n_sentences:,} sentences, {first.n_words:,} words",
        "",
        f"{'':{width}}" + "".join(f"{c.column[0]:>{w}}" for c, w in zip(CONVENTIONS, columns)) + f"{'depth':>7}",
        f"{'':{width}}" + "".join(f"{c.column[1]:>{w}}" for c, w in zip(CONVENTIONS, columns)),
    ]
    for name, r in rows:
        lines.append(f"{name:{width}}" + "".join(f"{percent(r.score(c.name).f1):>{w}}" for c, w in zip(CONVENTIONS, columns))
                     + f"{r.pred_depth:>7.2f}")
    lines.append(f"(gold depth {first.gold_depth:.2f}; Kim et al. convention over {first.n_kim:,} sentences)")
    return "\n".join(lines)


def write_per_sentence(result: SpanMetric, stream) -> None:
    """Write one JSON object per sentence (:meth:`SentenceScore.to_dict`) to a text stream."""
    for score in result.sentences:
        stream.write(json.dumps(score.to_dict(), ensure_ascii=False) + "\n")

"""What a model file is, in words or as a dict (``onparse info``; :func:`describe_file`): its
kind's description (:meth:`onparse.kinds.ParsingModel.describe_sections`: architecture, origin,
perplexities, recorded scores) for a file of one model; the recipe, members, voters, tie rule
(or each named reading's, with its recorded speed and F1) and models of a bundle.  The file is checked and its models built exactly as loading does, so
``info`` accepts what ``onparse.load`` accepts and nothing else.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional, Union

from ..members import labelling
from ..trees.average import TIE_MEANINGS
from ..registry import kind_of
from .bundle import bundle_members, bundle_readings, bundle_voting, is_bundle, load_model_file, models_of
from .readings import METRICS, METRICS_KEY
from .pretrained import DEFAULT_NAME, resolve
from .record import SCORE_KEYS, field_of, percent, plain_words, printable
from .safeio import format_ppl


def describe_file(path: Optional[str] = None, name: Optional[str] = None, *, as_dict: bool = False,
                  verify: bool = True) -> Union[str, Dict[str, Any]]:
    """The description of the model file or bundle at ``path`` (None: the bundled model; a run
    folder: its ``best.pt``, else ``last.pt``, as ``onparse.load`` reads them; ``name``: how it is
    called in the text, default the path as given): printable text, or with ``as_dict`` the
    config, metadata, members and models as plain values (``onparse info --json``).
    OnparseError for a file that ``onparse.load`` would refuse; ``verify=False`` skips the
    weights' checksums.
    Cost: reading the file and building its models on the CPU (a second for the bundled model)."""
    if name is None:
        name = DEFAULT_NAME if path is None else os.fspath(path)
    path = resolve(None if path is None else os.fspath(path))
    blob = load_model_file(path, verify=verify)
    counts = [sum(p.numel() for p in m.model.parameters()) for m in models_of(blob, path)]
    if is_bundle(blob):
        if as_dict:
            return bundle_summary(blob, name, path, counts)
        return printable(describe_bundle(blob, name, path, counts))
    if as_dict:
        return {"model": name, "path": path, "kind": kind_of(blob, path).kind, "parameters": counts[0],
                "config": blob["config"], "vocab_size": len(blob["vocab"]), "metadata": blob.get("metadata", {})}
    return printable(describe(blob, name, path, kind_of(blob, path), counts[0]))


def describe(blob: dict, name: str, path: str, kind, parameters: int) -> str:
    """A human-readable description of a model file's dict of kind ``kind`` (or a bundle's
    entry) with ``parameters`` weights.

    The config has been validated by the loader; the metadata is free-form, so a field of an
    unexpected type is left out (with a note) rather than stopping the description."""
    meta = blob.get("metadata") if isinstance(blob.get("metadata"), dict) else {}
    # Counted from the built model: stored scales of int8 weights are not parameters.
    meta = {**meta, "parameters": parameters}
    lines = [f"model: {name}"] + _file_lines(meta, path) + [f"kind: {kind.kind}"]
    skipped = 0
    for section in kind.describe_sections():
        try:
            lines += section(blob, meta)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            skipped += 1
    return "\n".join(lines + _skipped_note(skipped))


def _skipped_note(skipped: int) -> list:
    """The line that says how many parts of free-form metadata were left out (none: no line)."""
    return [f"note: {skipped} part(s) of the metadata have unexpected types and are not shown"] if skipped else []


def _file_lines(meta, path):
    weights = field_of(meta, "weights", str, "float32")
    return [f"file: {path} ({os.path.getsize(path) / 1e6:.1f} MB, {weights} weights)"]


def bundle_summary(blob: dict, name: str, path: str, counts) -> dict:
    """What ``info --json`` prints for a bundle: its metadata, members and models."""
    voters, ties = bundle_voting(blob)
    named = {k: blob[k] for k in ("readings", "default_reading") if k in blob}
    return {"model": name, "path": path, "metadata": blob.get("metadata", {}), "members": blob["members"],
            "voters": list(voters), "ties": ties, **named,
            "models": [{"kind": kind_of(m, path, entry=True).kind, "parameters": n, "config": m["config"],
                        "vocab_size": len(m["vocab"]), "metadata": m.get("metadata", {})}
                       for m, n in zip(blob["models"], counts)]}


def _uses(models, read, path) -> str:
    """What the models no member reads are kept for, by their kind
    (:attr:`onparse.kinds.ParsingModel.kept_for`): ``model 1 gives distances, model 3 names
    spans``; consecutive models of one use are grouped (``models 1-3 give distances``)."""
    groups: list = []
    for i, entry in enumerate(models):
        if i in read:
            continue
        use = kind_of(entry, path, entry=True).kept_for
        if groups and groups[-1][1] == use and groups[-1][0][-1] == i:
            groups[-1][0].append(i + 1)
        else:
            groups.append(([i + 1], use))
    phrases = []
    for numbers, (one, several) in groups:
        which = f"model {numbers[0]}" if len(numbers) == 1 else f"models {numbers[0]}-{numbers[-1]}"
        phrases.append(f"{which} {one if len(numbers) == 1 else several}")
    return ", ".join(phrases)


def _reading(members, voters, models, path) -> str:
    """How a bundle's trees are made: averaged over its members and voters, or one member's;
    with what the models no member reads are kept for."""
    uses = _uses(models, {m.model for m in members}, path)
    if len(members) + len(voters) > 1:
        return (f"whose trees are averaged over {len(members)} member{'s' if len(members) > 1 else ''}"
                + (f" and {len(voters)} voter{'s' if len(voters) > 1 else ''}" if voters else "")
                + (f" ({uses})" if uses else ""))
    return "whose trees are one member's" + (f" ({uses})" if uses else "")


def _lone_member(members, voters, models, path):
    """``(name, line)`` of a bundle whose trees are one member's, named by its reading alone as
    show and eval name it (``the student``, not ``model 4 student``: the models before it make
    no trees), with what the other models are kept for; None for several members or voters."""
    if len(members) != 1 or voters:
        return None
    member = members[0]
    name = member.reading if member.reading.startswith("layer ") else f"the {member.reading}"
    uses = _uses(models, {member.model}, path)
    return name, f"member: {name}" + (f" (model {member.model + 1}; {uses})" if uses else "")


def _readings_phrase(readings, models, path) -> str:
    """How a bundle with named readings makes its trees, for its file line: ``read in 2 ways
    (readings): fast, the default, and accurate``, with what the models no reading reads are for."""
    names = [n for n, *_ in readings]
    listed = f"{names[0]}, the default" + (f", and {', '.join(names[1:])}" if names[1:] else "")
    uses = _uses(models, {m.model for _, members, *_ in readings for m in members}, path)
    return (f"read in {len(names)} way{'s' if len(names) > 1 else ''} (readings): {listed}"
            + (f" ({uses})" if uses else ""))


def _reading_lines(name, members, voters, ties, models, *, default: bool, figures) -> list:
    """A named reading in ``info``: its members (one, or an average's in tie-breaking order, its
    voters and tie rule), then its recorded speed and F1 when the bundle records them."""
    lone = _lone_member(members, voters, models, "")
    made = f"{lone[0]} (model {members[0].model + 1})" if lone else (
        f"average of {len(members)} members (in tie-breaking order: "
        + "; ".join(m.label(len(models)) for m in members) + ")"
        + "".join(f" + a {v}-branching voter" for v in voters) + f"; ties {ties} ({TIE_MEANINGS[ties]})")
    lines = [f"  {name}{' (the default)' if default else ''}: {made}"]
    figures = figures if isinstance(figures, dict) else {}
    speed, dev, test = (figures.get(key) for key in METRICS)
    parts = []
    if isinstance(speed, (int, float)) and not isinstance(speed, bool):
        parts.append(f"{speed:,.0f} sentences a second on one CPU thread")
    if any(isinstance(f, (int, float)) and not isinstance(f, bool) for f in (dev, test)):
        parts.append(f"sentence F1 {percent(dev)} on the WSJ sample's dev half, {percent(test)} on its test half")
    return lines + (["    " + "; ".join(parts)] if parts else []) + ["    " + _labels_line(members, models, "its")]


def _labels_line(members, models, whose: str) -> str:
    """Where the span labels of trees made by ``members`` come from (the one rule,
    :func:`onparse.members.labelling`: a grammar among them), in words; ``whose``: ``its``/``the``."""
    member = labelling(members, [kind_of(entry, "", entry=True) for entry in models])
    if member is None:
        return f"span labels: none, every constituent X (no grammar among {whose} members)"
    return f"span labels: a grammar's symbols (NT-12), model {member.model + 1}'s"


def describe_bundle(blob: dict, name: str, path: str, counts) -> str:
    """A human-readable description of a bundle: its recipe, members, models and scores."""
    meta = blob.get("metadata", {})
    models = blob["models"]
    members = bundle_members(blob, path)
    kinds = [(m.get("metadata") or {}).get("weights", "float32") for m in models]
    # One precision for every model, or each model's (a member kept float16 beside an int8
    # language model that gives distances only).
    weights = f"{kinds[0]} weights" if len(set(kinds)) == 1 else \
        "weights " + ", ".join(f"model {i + 1} {w}" for i, w in enumerate(kinds))
    voters, ties = bundle_voting(blob)
    readings = bundle_readings(blob, path) if "readings" in blob else None
    lines = [f"model: {name}",
             f"file: {path} ({os.path.getsize(path) / 1e6:.1f} MB, {weights}): a bundle of "
             f"{len(models)} model{'s' if len(models) > 1 else ''} "
             + (_reading(members, voters, models, path) if readings is None else _readings_phrase(readings, models, path))]
    # The bundle's own figures (its file line, each model's section) describe its weights; a
    # free-form note written when it was made (metadata "weights_check") may no longer hold.
    # The notes are said in a user's words: the lab's references left out (plain_words).
    for key, title in (("recipe", "recipe"), ("note", "note"), ("selection", "selected by"),
                       ("members_rule", "members chosen by")):
        if meta.get(key):
            lines.append(f"{title}: {plain_words(str(meta[key]))}")
    # A file of one reading whose trees are one member's names that member's score rows by what it
    # is ("the student"); a file of several readings keeps each row's model number.
    lone = _lone_member(members, voters, models, path) if readings is None else None
    # The metadata is free-form (the loader checks only that it is a dict): what has an
    # unexpected type is left out and counted, as describe() does for a model's.
    skipped = 0
    if readings is None:
        lines += ["", lone[1] if lone else
                  "members (in tie-breaking order): " + "; ".join(m.label(len(models)) for m in members)]
        lines.append("voters: " + (", ".join(f"{v}-branching tree" for v in voters) if voters else "none"))
        lines += [f"ties: {ties} ({TIE_MEANINGS[ties]})", _labels_line(members, models, "the"), ""]
    else:
        figures = meta.get(METRICS_KEY, {})
        if not isinstance(figures, dict):
            figures, skipped = {}, skipped + 1
        lines += ["", "readings (choose one with --reading NAME):"]
        for k, reading in enumerate(readings):
            lines += _reading_lines(*reading, models, default=k == 0, figures=figures.get(reading[0]))
        lines.append("")
    seeds = meta.get("seeds") or []
    if not isinstance(seeds, list):
        seeds, skipped = [], skipped + 1
    for i, entry in enumerate(models):
        extra = seeds[i] if i < len(seeds) and isinstance(seeds[i], dict) else {}
        test = f", test ppl {format_ppl(extra['test_ppl'])} ({extra.get('test_set', 'test')})" if isinstance(
            extra.get("test_ppl"), (int, float)) else ""
        lines.append(f"model {i + 1}:{test.replace(', test', ' test', 1)}")
        kind = kind_of(entry, path, entry=True)
        own = describe(entry, name, path, kind, counts[i]).splitlines()
        lines += ["  " + line for line in own[2:]]               # not its name and file
    scores = meta.get("scores") or []
    if not isinstance(scores, list):
        scores, skipped = [], skipped + 1
    rows = [r for r in scores if isinstance(r, dict) and "gold" in r and "trees" in r]
    skipped += len(scores) - len(rows)
    scores = rows
    if scores:
        g = max(len("gold"), *(len(str(r["gold"])) for r in scores))
        t = max(len("trees"), *(len(str(r["trees"])) for r in scores), len(lone[0]) if lone else 0)
        lines += ["", f"unlabeled F1 (%) on {meta.get('scores_gold', 'the gold sets')}:",
                  f"  {'gold':{g}}  {'trees':{t}}" + "".join(f"{title:>18}" for _, title in SCORE_KEYS)]
        for r in scores:
            trees = lone[0] if lone and r["trees"] == members[0].label(len(models)) else r["trees"]
            lines.append(f"  {r['gold']:{g}}  {trees:{t}}"
                         + "".join(f"{100 * r[key]:>18.1f}" if isinstance(r.get(key), (int, float)) else f"{'-':>18}"
                                   for key, _ in SCORE_KEYS))      # a figure not recorded: a dash
    return "\n".join(lines + _skipped_note(skipped))

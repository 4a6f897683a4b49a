"""What a model file is, in words or as a dict (``onparse info``; :func:`describe_file`): the
architecture, the training corpus and recipe, perplexities and recorded scores of a checkpoint;
the recipe, members, voters, tie rule and models of a bundle.  No torch beyond reading the file.
"""
from __future__ import annotations

import os
import unicodedata
from typing import Any, Dict, Optional, Union

from ..trees.average import TIE_MEANINGS
from .bundle import bundle_voting, load_model_file
from ..members import Member
from .safeio import format_ppl
from ..student.file import is_student


def describe_file(path: str, name: Optional[str] = None, *, as_dict: bool = False,
                  verify: bool = True) -> Union[str, Dict[str, Any]]:
    """The description of the checkpoint or bundle at ``path`` (``name``: how it is called in
    the text, default the path): printable text, or with ``as_dict`` the config, metadata,
    members and models as plain values (``onparse info --json``).  OnparseError for a file that
    is not a model; ``verify=False`` skips the weights' checksums."""
    blob = load_model_file(path, verify=verify)
    name = path if name is None else name
    if "models" in blob:
        return bundle_summary(blob, name, path) if as_dict else printable(describe_bundle(blob, name, path))
    if as_dict:
        return {"model": name, "path": path, "kind": _kind(blob),
                "config": blob["config"], "vocab_size": len(blob["vocab"]), "metadata": blob.get("metadata", {})}
    return printable(describe(blob, name, path))


#: Score keys recorded per (gold set, layer, decoder), in the order they are printed.
SCORE_KEYS = (("sentence_f1_onlstm", "sent. F1 ON-LSTM"), ("sentence_f1_kim", "sent. F1 Kim"),
              ("corpus_f1", "corpus F1"), ("corpus_f1_evalb", "EVALB F1"))


def printable(text: str) -> str:
    """``text`` without control characters (a checkpoint's metadata may hold a BEL or an escape
    sequence), line breaks kept.

    >>> printable("a\\x07b\\x1b[31mc\\nd")
    'ab[31mc\\nd'
    """
    return "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch) != "Cc")


def describe(blob: dict, name: str, path: str) -> str:
    """A human-readable description of a checkpoint dict (see :mod:`onparse.files.checkpoint`).

    The config has been validated by the loader; the metadata is free-form, so a field of an
    unexpected type is left out (with a note) rather than stopping the description."""
    meta = blob.get("metadata") if isinstance(blob.get("metadata"), dict) else {}
    lines = [f"model: {name}"]
    skipped = 0
    sections = ((_file_lines, _student_lines) if is_student(blob) else
                (_file_lines, _architecture_lines, _origin_lines, _perplexity_lines, _score_lines))
    for section in sections:
        try:
            lines += section(blob, meta, path)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            skipped += 1
    if skipped:
        lines.append(f"note: {skipped} part(s) of the metadata have unexpected types and are not shown")
    return "\n".join(lines)


def _field(meta: dict, key: str, types, default=None):
    """``meta[key]`` when it has one of ``types`` (bool is not a number here), else ``default``."""
    value = meta.get(key)
    return value if isinstance(value, types) and not isinstance(value, bool) else default


def _file_lines(blob, meta, path):
    weights = _field(meta, "weights", str, "float32")
    return [f"file: {path} ({os.path.getsize(path) / 1e6:.1f} MB, {weights} weights)"]


def _architecture_lines(blob, meta, path):
    config = blob["config"]
    sizes = [config["hidden_size"]] * (config["n_layers"] - 1) + [config["embedding_size"]]
    n_params = _field(meta, "parameters", int) or sum(t.numel() for t in blob["state_dict"].values())
    return [f"architecture: {config['n_layers']} ON-LSTM layers of {'/'.join(map(str, sizes))} units, chunk size "
            f"{config['chunk_size']}, embedding {config['embedding_size']} tied to the decoder, vocabulary "
            f"{len(blob['vocab']):,}; {n_params:,} parameters"]


def _origin_lines(blob, meta, path):
    lines = []
    if _field(meta, "onparse_version", str):
        lines.append(f"written by: onparse {meta['onparse_version']}")
    train = _field(meta, "train_config", dict, {})
    corpus = _field(_field(meta, "corpus", dict, {}), "source", str)
    if train or corpus:
        epoch, step, seed = _field(meta, "epoch", int), _field(meta, "step", int), _field(train, "seed", int)
        parts = [f"corpus {corpus}" if corpus else None,
                 f"preset {meta['preset']}" if _field(meta, "preset", str) else None,
                 f"seed {seed}" if seed is not None else None,
                 f"{epoch} epochs" if epoch is not None else None,
                 f"{step:,} steps" if step is not None else None,
                 "averaged SGD weights" if meta.get("averaged") is True else None]
        lines.append("training: " + ", ".join(p for p in parts if p))
    init = _field(meta, "init_from", dict)
    if init is not None:
        source = _field(_field(init, "corpus", dict, {}), "source", str)
        lines.append(f"started from: {init.get('checkpoint')}"
                     + (f" (corpus {source}, epoch {init.get('epoch')}, seed {init.get('seed')})" if source else ""))
    return lines


def _student_lines(blob, meta, path):
    """A student (onparse distill): its sizes, teachers, text and training."""
    config = blob["config"]
    n_params = sum(t.numel() for t in blob["state_dict"].values())
    lines = [f"architecture: a student parser (onparse distill): {config['n_layers']} BiLSTM layers of "
             f"{config['hidden_size']} units per direction, embedding {config['embedding_size']}, span scorer "
             f"{config['mlp_size']}, vocabulary {len(blob['vocab']):,}; {n_params:,} parameters; trees by CYK"]
    if _field(meta, "onparse_version", str):
        lines.append(f"written by: onparse {meta['onparse_version']}")
    teachers = _field(meta, "teachers", dict, {})
    if teachers:
        models = [str(m.get("name")) for m in teachers.get("models", []) if isinstance(m, dict)]
        voters = ", ".join(map(str, teachers.get("voters") or [])) or "none"
        lines.append(f"teachers: {'; '.join(models)} (members: {'; '.join(map(str, teachers.get('members', [])))}; "
                     f"voters: {voters}; ties: {teachers.get('ties')})")
    text = _field(meta, "text", dict, {})
    if text:
        lines.append(f"text: {text.get('path')} ({text.get('sentences', 0):,} sentences, {text.get('words', 0):,} "
                     f"words; sha256 {str(text.get('sha256'))[:16]}...)")
    settings = _field(meta, "distill", dict, {})
    epochs = [e for e in _field(meta, "epochs", list, []) if isinstance(e, dict)]
    if settings:
        lines.append(f"training: {len(epochs)} of {settings.get('epochs')} epochs, batches of "
                     f"{settings.get('batch_size')}, lr {settings.get('lr')}, seed {settings.get('seed')}, sentences of "
                     f"at most {settings.get('max_words')} words")
    if epochs:
        lines.append("agreement with the teacher on held-out sentences, by epoch: "
                     + ", ".join(f"{100 * e['agreement']:.1f}%" for e in epochs)
                     + f" ({epochs[-1].get('minutes')} min in all)")
    return lines


def _perplexity_lines(blob, meta, path):
    lines = []
    ppl = [f"{split} {format_ppl(float(meta[key]))}" for split, key in (("valid", "valid_ppl"), ("test", "test_ppl"))
           if _field(meta, key, (int, float)) is not None]
    if ppl:
        note = _field(meta, "perplexity_note", str)
        lines.append("perplexity: " + ", ".join(ppl) + (f" ({note})" if note else ""))
    for key, title in (("selection", "selected by"), ("recipe", "recipe")):
        if _field(meta, key, str):
            lines.append(f"{title}: {meta[key]}")
    return lines


def _score_lines(blob, meta, path):
    scores = [r for r in _field(meta, "scores", list, []) if isinstance(r, dict)]
    if not scores:
        return []
    lines = ["", f"unlabeled F1 (%) on {_field(meta, 'scores_gold', str, 'the gold sets')}:",
             f"  {'gold':8}{'layer':>6}  {'decoder':8}" + "".join(f"{title:>18}" for _, title in SCORE_KEYS)]
    for r in scores:
        lines.append(f"  {str(r.get('gold')):8}{str(r.get('layer')):>6}  {str(r.get('decoder')):8}"
                     + "".join(f"{_percent(r.get(key)):>18}" for key, _ in SCORE_KEYS))
    return lines


def _percent(value) -> str:
    return f"{100 * value:.1f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def bundle_summary(blob: dict, name: str, path: str) -> dict:
    """What ``info --json`` prints for a bundle: its metadata, members and models."""
    voters, ties = bundle_voting(blob)
    return {"model": name, "path": path, "metadata": blob.get("metadata", {}), "members": blob["members"],
            "voters": list(voters), "ties": ties,
            "models": [{"kind": _kind(m), "config": m["config"], "vocab_size": len(m["vocab"]),
                        "metadata": m.get("metadata", {})} for m in blob["models"]]}


def _kind(blob: dict) -> str:
    return "student" if is_student(blob) else "language model"


def describe_bundle(blob: dict, name: str, path: str) -> str:
    """A human-readable description of a bundle: its recipe, members, models and scores."""
    meta = blob.get("metadata", {})
    models = blob["models"]
    members = [Member.from_dict(m) for m in blob["members"]]
    weights = (models[0].get("metadata") or {}).get("weights", "float32")
    voters, ties = bundle_voting(blob)
    lines = [f"model: {name}",
             f"file: {path} ({os.path.getsize(path) / 1e6:.1f} MB, {weights} weights): a bundle of "
             f"{len(models)} models whose trees are averaged over {len(members)} members"
             + (f" and {len(voters)} voter{'s' if len(voters) > 1 else ''}" if voters else "")]
    for key, title in (("recipe", "recipe"), ("note", "note"), ("selection", "selected by"),
                       ("members_rule", "members chosen by"), ("weights_check", "weights")):
        if meta.get(key):
            lines.append(f"{title}: {meta[key]}")
    lines += ["", "members (in tie-breaking order): " + "; ".join(m.label(len(models)) for m in members)]
    lines.append("voters: " + (", ".join(f"{v}-branching tree" for v in voters) if voters else "none"))
    lines += [f"ties: {ties} ({TIE_MEANINGS[ties]})", ""]
    seeds = meta.get("seeds") or []
    for i, entry in enumerate(models):
        extra = seeds[i] if i < len(seeds) and isinstance(seeds[i], dict) else {}
        test = f", test ppl {format_ppl(extra['test_ppl'])} ({extra.get('test_set', 'test')})" if isinstance(
            extra.get("test_ppl"), (int, float)) else ""
        lines.append(f"model {i + 1}:{test.replace(', test', ' test', 1)}")
        lines += ["  " + line for line in describe(entry, name, path).splitlines()[2:]]
    scores = meta.get("scores") or []
    if scores:
        g = max(len("gold"), *(len(str(r["gold"])) for r in scores))
        t = max(len("trees"), *(len(str(r["trees"])) for r in scores))
        lines += ["", f"unlabeled F1 (%) on {meta.get('scores_gold', 'the gold sets')}:",
                  f"  {'gold':{g}}  {'trees':{t}}" + "".join(f"{title:>18}" for _, title in SCORE_KEYS)]
        for r in scores:
            lines.append(f"  {r['gold']:{g}}  {r['trees']:{t}}"
                         + "".join(f"{100 * r[key]:>18.1f}" for key, _ in SCORE_KEYS))
    return "\n".join(lines)

"""Student files: a student parser (:mod:`onparse.student.model`) as ``onparse distill`` writes it.

Layout (plain values and tensors only, so ``torch.load(weights_only=True)`` reads it)::

    {"format": "onparse-student", "version": 1,
     "config": StudentConfig.to_dict(),
     "vocab": [words...],                   # the first teacher's vocabulary: same tokens, same <unk>
     "state_dict": {...},
     "metadata": {"teachers": [...],        # the files, members, voters and tie rule it learnt from
                  "text": {...},            # the training text: path, SHA-256, sentences, words
                  "training": {...},        # epochs, batch, learning rate, seed, threads, minutes
                  "environment": {...},     # torch's threads, device and version (docs/reproducibility.md)
                  "weights_sha256": ...},
     "training": {...} or absent}           # optimiser and RNG state for --resume (last.pt only)

A bundle (:mod:`onparse.files.bundle`) stores a student as a model entry with ``"kind": "student"``.
Loading checks the config, the vocabulary, the weights' shapes (computed, not allocated), their
checksum and that they are finite, as :mod:`onparse.files.checkpoint` does for language models.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Optional

import torch

from ..files.checkpoint import DIGEST_KEY, STUDENT_FORMAT, check_model_file, write_atomically
from .model import StudentConfig
from ..files.record import training_summary
from ..files.weights import weights_digest

VERSION = 1
#: How :func:`onparse.api.load` names the models of a bundle: ``bundle.pt [2]``.
_IN_BUNDLE = re.compile(r"^(.*) \[(\d+)\]$")
#: The ``kind`` of a student's entry in a bundle.
STUDENT_KIND = "student"


def save_student(path, *, config: Dict[str, Any], vocab, state_dict, metadata: Optional[Dict[str, Any]] = None,
                 training: Optional[Dict[str, Any]] = None) -> None:
    """Write a student file atomically (layout in the module docstring); ``vocab`` is a
    :class:`~onparse.text.vocab.Vocabulary` or a list of words.  The metadata records the
    ``environment`` the weights were computed in (torch's threads, the device, torch's version:
    docs/reproducibility.md)."""
    device = str(next(iter(state_dict.values())).device) if state_dict else "cpu"
    state_dict = {k: t.detach().cpu() for k, t in state_dict.items()}
    environment = {"threads": torch.get_num_threads(), "device": device, "torch": str(torch.__version__)}
    blob = {"format": STUDENT_FORMAT, "version": VERSION, "config": dict(config),
            "vocab": vocab.to_list() if hasattr(vocab, "to_list") else list(vocab),
            "state_dict": state_dict,
            "metadata": {"environment": environment, **dict(metadata or {}), DIGEST_KEY: weights_digest(state_dict)}}
    if training is not None:
        blob["training"] = training
    write_atomically(path, blob)


def check_student(blob: Dict[str, Any], path, *, verify: bool = True) -> Dict[str, Any]:
    """``blob`` when it is a valid student file's dict (or a bundle's student entry) read from
    ``path``; a one-line OnparseError at the first problem."""
    return check_model_file(blob, path, what="student", file_format=STUDENT_FORMAT, version=VERSION,
                            config_class=StudentConfig, verify=verify)


def teachers_record(parser) -> Dict[str, Any]:
    """What a student records of its teacher, a :class:`onparse.api.Parser`: each model's
    ``name`` (where it came from: ``runs/s4/best.pt``, ``model 2 of the bundled model``),
    ``about`` (its kind and what its metadata says of its training: ``a language model: corpus
    conll2000, preset small, seed 4, epoch 8``) and weights' checksum, then the members, voters
    and tie rule."""
    models = []
    for i, model in enumerate(parser.models):
        name = parser.names[i] if i < len(parser.names) else f"model {i + 1}"
        found = _IN_BUNDLE.match(name)
        summary = training_summary(model.metadata)
        models.append({"name": f"model {found.group(2)} of {found.group(1)}" if found else name,
                       "about": f"a {model.kind}" + (f": {summary}" if summary else ""),
                       "weights_sha256": model.metadata.get("weights_sha256")})
    return {"models": models, "members": [m.label(len(parser.models)) for m in parser.members],
            "voters": list(parser.voters), "ties": parser.ties}


def same_teachers(a: Any, b: Any) -> bool:
    """Whether two :func:`teachers_record` records name the same teacher: the same weights,
    members, voters and tie rule (how the models are named may differ between versions)."""
    def key(record):
        if not isinstance(record, dict):
            return record
        models = record.get("models")
        if isinstance(models, list):
            models = [m.get("weights_sha256") for m in models if isinstance(m, dict)]
        return {**record, "models": models}

    return key(a) == key(b)

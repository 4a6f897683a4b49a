"""Student files: a student parser (:mod:`onparse.student.model`) as ``onparse distill`` writes it.

Layout (plain values and tensors only, so ``torch.load(weights_only=True)`` reads it)::

    {"format": "onparse-student", "version": 1,
     "config": StudentConfig.to_dict(),
     "vocab": [words...],                   # the first teacher's vocabulary: same tokens, same <unk>
     "state_dict": {...},
     "metadata": {"teachers": [...],        # the files, members, voters and tie rule it learnt from
                  "text": {...},            # the training text: path, SHA-256, sentences, words
                  "training": {...},        # epochs, batch, learning rate, seed, threads, minutes
                  "weights_sha256": ...},
     "training": {...} or absent}           # optimiser and RNG state for --resume (last.pt only)

A bundle (:mod:`onparse.files.bundle`) stores a student as a model entry with ``"kind": "student"``.
Loading checks the config, the vocabulary, the weights' shapes (computed, not allocated), their
checksum and that they are finite, as :mod:`onparse.files.checkpoint` does for language models.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..files.checkpoint import DIGEST_KEY, STUDENT_FORMAT, check_parts, first_line, write_atomically
from ..errors import OnparseError
from .model import StudentConfig
from ..files.weights import weights_digest

VERSION = 1
#: The ``kind`` of a student's entry in a bundle.
STUDENT_KIND = "student"


def save_student(path, *, config: Dict[str, Any], vocab, state_dict, metadata: Optional[Dict[str, Any]] = None,
                 training: Optional[Dict[str, Any]] = None) -> None:
    """Write a student file atomically (layout in the module docstring); ``vocab`` is a
    :class:`~onparse.text.vocab.Vocabulary` or a list of words."""
    state_dict = {k: t.detach().cpu() for k, t in state_dict.items()}
    blob = {"format": STUDENT_FORMAT, "version": VERSION, "config": dict(config),
            "vocab": vocab.to_list() if hasattr(vocab, "to_list") else list(vocab),
            "state_dict": state_dict,
            "metadata": {**dict(metadata or {}), DIGEST_KEY: weights_digest(state_dict)}}
    if training is not None:
        blob["training"] = training
    write_atomically(path, blob)


def check_student(blob: Dict[str, Any], path, *, verify: bool = True) -> Dict[str, Any]:
    """``blob`` when it is a valid student file's dict (or a bundle's student entry) read from
    ``path``; a one-line OnparseError at the first problem."""
    if blob.get("format") == STUDENT_FORMAT and blob.get("version") != VERSION:
        raise OnparseError(f"{path}: unsupported student version {blob.get('version')!r}")
    for key in ("config", "vocab", "state_dict"):
        if key not in blob:
            raise OnparseError(f"{path}: student file lacks '{key}'")
    try:
        config = StudentConfig.from_dict(blob["config"])
    except (TypeError, ValueError) as err:
        raise OnparseError(f"{path}: unusable student config ({first_line(err)})") from None
    check_parts(blob, config.vocab_size, config.parameter_shapes, path, verify=verify)
    return blob

"""Grammar files: a neural PCFG (:mod:`onparse.grammar.model`) as ``onparse train --family grammar``
writes it.

Layout (plain values and tensors only, so ``torch.load(weights_only=True)`` reads it)::

    {"format": "onparse-grammar", "version": 1,
     "config": GrammarConfig.to_dict(),
     "vocab": [words...],                   # built from the training split: <unk>, <eos>, words
     "state_dict": {...},
     "metadata": {"corpus": {...},          # CorpusSpec.to_dict() of the training text
                  "preset": "small" or None,
                  "training": {...},        # GrammarTraining.to_dict()
                  "epoch", "step", "valid_ppl", "valid_loss", "epochs": [...],
                  "weights_sha256": ...},
     "training": {...} or absent}           # optimiser, RNG, position in the epoch (last.pt only)

A bundle (:mod:`onparse.files.bundle`) stores a grammar as a model entry with ``"kind": "grammar"``.
Loading checks the config (its bounds: :mod:`onparse.grammar.config`), the vocabulary, the
weights' shapes (computed, not allocated), their checksum and that they are finite, as
:mod:`onparse.files.checkpoint` does for language models; building the grammar
(:meth:`onparse.grammar.kind.Grammar.from_blob`) then checks that the rules they give are
finite (huge finite weights overflow).
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..files.checkpoint import DIGEST_KEY, GRAMMAR_FORMAT, check_model_file, write_atomically
from ..files.weights import weights_digest
from .config import GrammarConfig

VERSION = 1
#: The ``kind`` of a grammar's entry in a bundle.
GRAMMAR_KIND = "grammar"


def save_grammar(path, *, config: Dict[str, Any], vocab, state_dict, metadata: Optional[Dict[str, Any]] = None,
                 training: Optional[Dict[str, Any]] = None) -> None:
    """Write a grammar file atomically (layout in the module docstring); ``vocab`` is a
    :class:`~onparse.text.vocab.Vocabulary` or a list of words.  Cost: one pass over the
    weights for the checksum, one write."""
    state_dict = {k: t.detach().cpu() for k, t in state_dict.items()}
    blob = {"format": GRAMMAR_FORMAT, "version": VERSION, "config": dict(config),
            "vocab": vocab.to_list() if hasattr(vocab, "to_list") else list(vocab),
            "state_dict": state_dict,
            "metadata": {**dict(metadata or {}), DIGEST_KEY: weights_digest(state_dict)}}
    if training is not None:
        blob["training"] = training
    write_atomically(path, blob)


def check_grammar(blob: Dict[str, Any], path, *, verify: bool = True) -> Dict[str, Any]:
    """``blob`` when it is a valid grammar file's dict (or a bundle's grammar entry) read from
    ``path``; a one-line OnparseError at the first problem.  Allocates no weights."""
    return check_model_file(blob, path, what="grammar", file_format=GRAMMAR_FORMAT, version=VERSION,
                            config_class=GrammarConfig, verify=verify)

"""A recurrent baseline's file, as ``onparse train --family lstm`` (or ``gru``) writes it: the
layout of a language model's checkpoint (:mod:`onparse.files.checkpoint`) under a format of its
own, ``onparse-lstm`` or ``onparse-gru``::

    {"format": "onparse-lstm", "version": 1,
     "config": RecurrentConfig.to_dict(),   # its cell among them
     "vocab": [words...], "state_dict": {...},
     "metadata": {"preset", "train_config", "corpus", "epoch", "step", "valid_ppl", ...,
                  "weights_sha256": ...},
     "training": {...} or absent}           # what --resume needs (last.pt only)

Loading checks the config, the vocabulary, the weights' shapes (computed, not allocated), their
checksum and that they are finite (:func:`onparse.files.checkpoint.check_model_file`).
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..errors import OnparseError
from ..files.checkpoint import DIGEST_KEY, FORMAT_PREFIX, check_model_file, read_file, write_atomically
from ..files.weights import weights_digest
from .config import CELLS, RecurrentConfig
from .model import RecurrentLM

VERSION = 1
#: The format (and a bundle entry's ``kind``) of each cell's files.
FORMATS = {cell: FORMAT_PREFIX + cell for cell in CELLS}


def save_recurrent(path, *, config: Dict[str, Any], vocab, state_dict, metadata: Optional[Dict[str, Any]] = None,
                   training: Optional[Dict[str, Any]] = None) -> None:
    """Write a recurrent baseline's file atomically (layout in the module docstring)."""
    state_dict = {k: t.detach().cpu() for k, t in state_dict.items()}
    blob = {"format": FORMATS[config["cell"]], "version": VERSION, "config": dict(config),
            "vocab": vocab.to_list() if hasattr(vocab, "to_list") else list(vocab), "state_dict": state_dict,
            "metadata": {**dict(metadata or {}), DIGEST_KEY: weights_digest(state_dict)}}
    if training is not None:
        blob["training"] = training
    write_atomically(path, blob)


def check_recurrent(blob: Any, path, *, verify: bool = True, cell: Optional[str] = None) -> Dict[str, Any]:
    """``blob`` when it is a valid file (or bundle entry) of a recurrent baseline read from
    ``path`` (of ``cell``, when given); a one-line OnparseError at the first problem."""
    cells = [cell] if cell else list(CELLS)
    if not isinstance(blob, dict) or not any(blob.get("format") == FORMATS[c] or blob.get("kind") == FORMATS[c]
                                             for c in cells):
        raise OnparseError(f"{path} is not an onparse {' or '.join(c.upper() for c in cells)} language model "
                           f"(onparse train --family {cells[0]} writes them)")
    what = f"{cell.upper() if cell else 'recurrent'} language model"
    check_model_file(blob, path, what=what, file_format=blob.get("format"), version=VERSION,
                     config_class=RecurrentConfig, verify=verify)
    if cell and blob["config"].get("cell") != cell:
        raise OnparseError(f"{path}: its config says {blob['config'].get('cell')!r}, its format {cell!r}")
    return blob


def load_recurrent(path, device="cpu", *, verify: bool = True):
    """The module of the recurrent baseline saved at ``path``, on ``device``, in eval mode."""
    blob = check_recurrent(read_file(path), path, verify=verify)
    model = RecurrentLM(RecurrentConfig.from_dict(blob["config"]))
    model.load_state_dict(blob["state_dict"])
    return model.to(device).eval()

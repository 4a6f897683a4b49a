"""Checkpoint files: plain values and tensors only, so ``torch.load(weights_only=True)`` reads them.

Layout of the saved dict::

    {"format": "onparse-checkpoint", "version": 1,
     "config": ModelConfig.to_dict(),          # rebuilds the model
     "vocab": [words...],                      # Vocabulary.to_list()
     "state_dict": {...},                      # model weights (averaged weights after ASGD)
     "metadata": {...},                        # corpus, preset, seed, metrics, onparse version
     "training": {...} or absent}              # optimiser/schedule/RNG state for --resume

Files are written atomically (temporary file in the same folder, then rename).
"""
import os
import tempfile
from typing import Any, Dict, NamedTuple, Optional

from .errors import OnparseError

FORMAT = "onparse-checkpoint"
VERSION = 1
#: Several models in one file, with the member trees to average (:mod:`onparse.bundle`).
BUNDLE_FORMAT = "onparse-bundle"


def save_checkpoint(path, *, config: Dict[str, Any], vocab, state_dict, metadata=None,
                    training: Optional[Dict[str, Any]] = None) -> None:
    """Write a checkpoint atomically.  ``config`` is ``ModelConfig.to_dict()``, ``vocab`` a
    :class:`~onparse.vocab.Vocabulary` or list of words."""
    blob = {
        "format": FORMAT,
        "version": VERSION,
        "config": dict(config),
        "vocab": vocab.to_list() if hasattr(vocab, "to_list") else list(vocab),
        "state_dict": state_dict,
        "metadata": dict(metadata or {}),
    }
    if training is not None:
        blob["training"] = training
    write_atomically(path, blob)


def write_atomically(path, blob: Dict[str, Any]) -> None:
    """``torch.save`` ``blob`` to ``path`` through a temporary file in the same folder and a
    rename, so a reader never sees half a file."""
    import torch

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".onparse-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(blob, handle)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_checkpoint(path, map_location="cpu", *, bundles: bool = False) -> Dict[str, Any]:
    """Read and validate a checkpoint; a missing, corrupt or foreign file is a one-line OnparseError.

    With ``bundles``, a bundle file (:mod:`onparse.bundle`) is accepted too and returned as read."""
    import torch

    if not os.path.isfile(path):
        raise OnparseError(f"checkpoint not found: {path}")
    try:
        blob = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # torch raises many types for a bad file
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise OnparseError(f"cannot read checkpoint {path}: not an onparse checkpoint ({reason[:120]})")
    if bundles and isinstance(blob, dict) and blob.get("format") == BUNDLE_FORMAT:
        from .bundle import check_bundle

        return check_bundle(blob, path)
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise OnparseError(f"{path} is not an onparse checkpoint")
    if blob.get("version") != VERSION:
        raise OnparseError(f"{path}: unsupported checkpoint version {blob.get('version')!r}")
    for key in ("config", "vocab", "state_dict"):
        if key not in blob:
            raise OnparseError(f"{path}: checkpoint lacks '{key}'")
    return blob


class LoadedModel(NamedTuple):
    model: Any        # onparse.model.ONLSTMLanguageModel, in eval mode
    vocab: Any        # onparse.vocab.Vocabulary
    metadata: Dict[str, Any]


def load_model(path, device="cpu") -> LoadedModel:
    """Rebuild the model saved in ``path`` on ``device``, in eval mode."""
    return model_from_blob(load_checkpoint(path, map_location="cpu"), path, device)


def model_from_blob(blob: Dict[str, Any], path, device="cpu") -> LoadedModel:
    """Build the model a checkpoint dict (or one model entry of a bundle) describes, in eval
    mode on ``device``; ``path`` names the file in errors.  int8 weights are dequantised."""
    from .bundle import dequantize
    from .model import ModelConfig, ONLSTMLanguageModel
    from .vocab import Vocabulary

    try:
        config = ModelConfig.from_dict(blob["config"])
        model = ONLSTMLanguageModel(config)
        model.load_state_dict(dequantize(blob["state_dict"]))
    except (TypeError, ValueError, KeyError, RuntimeError) as err:
        raise OnparseError(f"{path}: checkpoint does not match this onparse version's model ({str(err).splitlines()[0][:120]})")
    model.to(device).eval()
    return LoadedModel(model, Vocabulary(blob["vocab"]), blob.get("metadata", {}))


def export_checkpoint(source, target, *, half: bool = True, metadata: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Write a slim copy of checkpoint ``source`` to ``target`` for distribution: the weights
    (in float16 when ``half``; :func:`load_model` reads them back into float32), the config and
    vocabulary, and the metadata updated with ``metadata``.  The training state that
    ``--resume`` needs is left out.  Returns the metadata written."""
    blob = load_checkpoint(source)
    weights = {name: (t.half() if half and t.is_floating_point() else t) for name, t in blob["state_dict"].items()}
    merged = {**blob.get("metadata", {}), **(metadata or {}), "weights": "float16" if half else "float32"}
    save_checkpoint(target, config=blob["config"], vocab=blob["vocab"], state_dict=weights, metadata=merged)
    return merged

"""A language model's own file, the checkpoint (layout: :mod:`onparse.files.checkpoint`): reading
and checking it against :class:`onparse.lm.config.ModelConfig` before any model is built.

The check is the kind's, not the file layer's, as the student's (:mod:`onparse.student.file`)
and the grammar's (:mod:`onparse.grammar.file`) are: :mod:`onparse.files` reads and writes files
of any kind and imports none of them.
"""
from typing import Any, Dict

from ..errors import OnparseError
from ..files.checkpoint import FORMAT, VERSION, check_parts, first_line, read_file
from .config import ModelConfig


def load_checkpoint(path, map_location="cpu", *, verify: bool = True) -> Dict[str, Any]:
    """Read and validate a checkpoint; a missing, corrupt or foreign file is a one-line
    OnparseError.  ``verify=False`` skips the weights' checksum (to rescue a damaged file)."""
    return check_checkpoint(read_file(path, map_location), path, verify=verify)


def check_checkpoint(blob: Any, path, *, verify: bool = True) -> Dict[str, Any]:
    """``blob`` if it is a valid checkpoint dict read from ``path`` (see :func:`check_contents`)."""
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise OnparseError(f"{path} is not an onparse checkpoint")
    if blob.get("version") != VERSION:
        raise OnparseError(f"{path}: unsupported checkpoint version {blob.get('version')!r}")
    for key in ("config", "vocab", "state_dict"):
        if key not in blob:
            raise OnparseError(f"{path}: checkpoint lacks '{key}'")
    check_contents(blob, path, verify=verify)
    return blob


def check_contents(blob: Dict[str, Any], path, *, verify: bool = True) -> None:
    """Validate a checkpoint dict before anything is built from it (see the module docstring);
    OnparseError naming ``path`` at the first problem.  ``verify``: compare the weights with
    their recorded checksum."""
    try:
        config = ModelConfig.from_dict(blob["config"])
    except (TypeError, ValueError) as err:
        raise OnparseError(f"{path}: unusable model config ({first_line(err)})") from None

    def shapes():                # called once the weights are known to be a dict of tensors
        if config.n_layers > len(blob["state_dict"]):    # bounds the work of parameter_shapes()
            raise OnparseError(f"{path}: config says {config.n_layers:,} layers, the file holds "
                               f"{len(blob['state_dict'])} tensors")
        return config.parameter_shapes()

    check_parts(blob, config.vocab_size, shapes, path, verify=verify)


"""How weights are stored in a file: float32, float16 or int8 with per-row scales, and the
checksum that catches a damaged file.  Torch is imported inside the functions (the command line
imports this module at start-up through :mod:`onparse.files.checkpoint`).
"""
import hashlib
from typing import Any, Dict

#: Suffix of the entry holding the per-row scales of an int8 matrix ``name``.
SCALE_SUFFIX = ":int8-scale"
#: How a bundle may store its weights (:func:`convert_weights`).
WEIGHT_KINDS = ("float32", "float16", "int8")


def quantize_int8(state_dict: Dict[str, Any]) -> Dict[str, Any]:
    """int8 copy of a state dict: every floating matrix ``w`` (rows x ...) becomes
    ``round(w / s)`` with ``s = max|row| / 127`` per row (``name`` -> int8, ``name:int8-scale``
    -> float32 scales); floating vectors become float16; other tensors are kept.

    The rounding error of an entry is at most half a step, ``max|row| / 254``.
    """
    import torch

    out: Dict[str, Any] = {}
    for name, t in state_dict.items():
        if not t.is_floating_point():
            out[name] = t
        elif t.dim() >= 2:
            w = t.detach().float().reshape(t.shape[0], -1)
            scale = w.abs().amax(dim=1) / 127.0
            scale = torch.where(scale > 0, scale, torch.ones_like(scale))
            out[name] = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8).reshape(t.shape)
            out[name + SCALE_SUFFIX] = scale
        else:
            out[name] = t.detach().half()
    return out


def dequantize(state_dict: Dict[str, Any]) -> Dict[str, Any]:
    """The float32 state dict behind :func:`quantize_int8` (other state dicts pass through)."""
    if not any(name.endswith(SCALE_SUFFIX) for name in state_dict):
        return state_dict
    out: Dict[str, Any] = {}
    for name, t in state_dict.items():
        if name.endswith(SCALE_SUFFIX):
            continue
        scale = state_dict.get(name + SCALE_SUFFIX)
        if scale is not None:
            shape = t.shape
            out[name] = (t.float().reshape(shape[0], -1) * scale.float()[:, None]).reshape(shape)
        else:
            out[name] = t
    return out


def convert_weights(state_dict: Dict[str, Any], kind: str) -> Dict[str, Any]:
    """``state_dict`` stored as ``kind`` (one of :data:`WEIGHT_KINDS`)."""
    if kind == "int8":
        return quantize_int8(state_dict)
    if kind == "float16":
        return {k: (t.half() if t.is_floating_point() else t) for k, t in state_dict.items()}
    if kind == "float32":
        return {k: (t.float() if t.is_floating_point() else t) for k, t in state_dict.items()}
    raise ValueError(f"unknown weight kind {kind!r}; choose from {', '.join(WEIGHT_KINDS)}")


def stored_as(state_dict: Dict[str, Any]) -> str:
    """How ``state_dict``'s weights are stored, read off its tensors: ``int8`` (with the scales
    of :func:`quantize_int8`), ``float16`` or ``float32`` (every floating tensor so), else
    ``mixed``; what a file's ``weights`` tag must say (:func:`onparse.files.checkpoint.check_parts`)."""
    if any(name.endswith(SCALE_SUFFIX) for name in state_dict):
        return "int8"
    kinds = {str(t.dtype).replace("torch.", "") for t in state_dict.values() if t.is_floating_point()}
    return kinds.pop() if len(kinds) == 1 and kinds <= {"float16", "float32"} else "mixed"


def weights_digest(state_dict) -> str:
    """SHA-256 (hex) of a state dict: every tensor's name, dtype, shape and bytes, in name order.

    Stored in the metadata by :func:`save_checkpoint` and compared by :func:`load_checkpoint`,
    so that a flipped byte in the weights is caught.  Cost: one pass over the weights
    (about 0.1 s per 100 MB)."""
    import torch

    digest = hashlib.sha256()
    for name in sorted(state_dict):
        tensor = state_dict[name]
        digest.update(f"{name}\0{tensor.dtype}\0{tuple(tensor.shape)}\0".encode())
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(flat.view(torch.uint8).numpy())
    return digest.hexdigest()

"""Checkpoint files: plain values and tensors only, so ``torch.load(weights_only=True)`` reads them.

Layout of the saved dict::

    {"format": "onparse-checkpoint", "version": 1,
     "config": ModelConfig.to_dict(),          # rebuilds the model
     "vocab": [words...],                      # Vocabulary.to_list()
     "state_dict": {...},                      # model weights (averaged weights after ASGD)
     "metadata": {...},                        # corpus, preset, seed, metrics, onparse version,
                                               # "weights_sha256": weights_digest(state_dict)
     "training": {...} or absent}              # optimiser/schedule/RNG state for --resume

Files are written atomically (:func:`onparse.files.safeio.atomic_output`: a temporary file
``.onparse-PID-*.tmp`` in the same folder, then a rename).

Loading checks, before any model is built: the config is a valid config of its kind whose sizes
fit the file's tensors (a small file cannot make onparse allocate a huge model), the vocabulary
has ``vocab_size`` words, the weights match their recorded SHA-256 (files written before the
checksum existed have none and still load) and hold no NaN or infinity (:func:`check_parts`).
Each kind reads its own config: a language model's checkpoint in :mod:`onparse.lm.file`, the
others through :func:`check_model_file`, so that this file layer imports no kind.
"""
import os
import re
import textwrap
import zipfile
from typing import Any, Dict, Optional

from ..errors import OnparseError
from . import unpickle
from .safeio import atomic_output, not_a_file, write_failure
from .weights import SCALE_SUFFIX, WEIGHT_KINDS, stored_as, weights_digest

FORMAT = "onparse-checkpoint"
VERSION = 1
#: Several models in one file, with the member trees to average (:mod:`onparse.files.bundle`); named
#: here so that :func:`holds_model` knows every format.
BUNDLE_FORMAT = "onparse-bundle"
#: A student parser (:mod:`onparse.student.file`), likewise.
STUDENT_FORMAT = "onparse-student"
#: A neural PCFG (:mod:`onparse.grammar.file`), likewise.
GRAMMAR_FORMAT = "onparse-grammar"
#: How every format's name begins (a kind with a file of its own names it ``onparse-KIND``):
#: :func:`holds_model` knows a model file by it, so that a new kind's format need not be listed here.
FORMAT_PREFIX = "onparse-"
#: Metadata key of the weights' checksum (:func:`weights_digest`).
DIGEST_KEY = "weights_sha256"



def save_checkpoint(path, *, config: Dict[str, Any], vocab, state_dict, metadata=None,
                    training: Optional[Dict[str, Any]] = None) -> None:
    """Write a checkpoint atomically.  ``config`` is ``ModelConfig.to_dict()``, ``vocab`` a
    :class:`~onparse.text.vocab.Vocabulary` or list of words."""
    blob = {
        "format": FORMAT,
        "version": VERSION,
        "config": dict(config),
        "vocab": vocab.to_list() if hasattr(vocab, "to_list") else list(vocab),
        "state_dict": state_dict,
        "metadata": {**dict(metadata or {}), DIGEST_KEY: weights_digest(state_dict)},
    }
    if training is not None:
        blob["training"] = training
    write_atomically(path, blob)


def holds_model(path) -> bool:
    """True when the file at ``path`` is an onparse model file of any kind, or a bundle, whichever run wrote it
    (a format name, :data:`FORMAT_PREFIX`, at the head of its pickle; reads a few hundred bytes, not the weights)."""
    try:
        if not os.path.isfile(path) or not zipfile.is_zipfile(path):
            return False
        with zipfile.ZipFile(path) as archive:
            name = next((n for n in archive.namelist() if n.endswith("/data.pkl")), None)
            if name is None:
                return False
            with archive.open(name) as handle:
                head = handle.read(256)
    except (OSError, zipfile.BadZipFile):
        return False
    return FORMAT_PREFIX.encode() in head


def write_atomically(path, blob: Dict[str, Any]) -> None:
    """``torch.save`` ``blob`` to ``path`` through :func:`onparse.files.safeio.atomic_output` (a
    temporary file beside it, then a rename, so a reader never sees half a file; straight into a
    special file such as ``/dev/null`` or a pipe); a failure is a one-line OnparseError."""
    import torch

    try:
        with atomic_output(path) as target, open(target, "wb") as handle:
            torch.save(blob, handle)
    except RuntimeError as err:                 # torch reports a full disk as RuntimeError
        folder = os.path.dirname(os.path.abspath(path))
        raise OnparseError(f"cannot write {path}: {write_failure(err, folder)}") from None


def read_file(path, map_location="cpu") -> Any:
    """What ``torch.load`` reads from ``path``, no code run: only containers and tensors are built
    (:mod:`onparse.files.unpickle`); a missing or unreadable file is a one-line OnparseError."""
    import torch

    what = not_a_file(path)
    if what == "not found":
        raise OnparseError(f"checkpoint not found: {path}")
    if what is not None:
        raise OnparseError(f"{path} is {what}, not a model file" if what.startswith("a ") else
                           f"cannot read {path}: {what}")
    try:
        # weights_only=False only because the pickle module is onparse's own: it builds nothing
        # but containers and tensors (files/unpickle.py), four times as fast as torch's reader.
        return torch.load(path, map_location=map_location, weights_only=False, pickle_module=unpickle)
    except Exception as err:  # torch raises many types for a bad file
        raise OnparseError(f"cannot read checkpoint {path}: not an onparse checkpoint ({_load_failure(err)})") from None


def _short(line: str, width: int = 200) -> str:
    """``line`` cut to ``width`` characters at a word boundary, never mid-word."""
    return textwrap.shorten(line, width, placeholder=" ...")


def first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return _short(lines[0]) if lines else type(err).__name__


# Lines of torch's weights-only message that say how to bypass the check, not what failed.
_BOILERPLATE = ("weights only load failed", "weights_only", "check the documentation", "please file an issue")


def _load_failure(err: BaseException) -> str:
    """The useful part of torch.load's error: for a file that would run code, what it calls
    (``unsupported GLOBAL posix.system``), which torch states after paragraphs of advice."""
    text = str(err)
    match = re.search(r"GLOBAL ([\w.]+)", text)
    if match:
        return f"unsupported GLOBAL {match.group(1)}: loading it would run code"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [line for line in lines if not any(b in line.lower() for b in _BOILERPLATE)]
    return _short((useful or lines or [type(err).__name__])[0])


def check_model_file(blob: Dict[str, Any], path, *, what: str, file_format: str, version: int, config_class,
                     verify: bool = True) -> Dict[str, Any]:
    """``blob`` when it is a valid file of one model of a kind (``what``: ``student``,
    ``grammar``; its own ``file_format`` and ``version``), or that kind's entry of a bundle, read
    from ``path``: its layout, its config (``config_class.from_dict``) and :func:`check_parts`.
    A one-line OnparseError at the first problem; no weights are allocated."""
    if blob.get("format") == file_format and blob.get("version") != version:
        raise OnparseError(f"{path}: unsupported {what} version {blob.get('version')!r}")
    for key in ("config", "vocab", "state_dict"):
        if key not in blob:
            raise OnparseError(f"{path}: {what} file lacks '{key}'")
    try:
        config = config_class.from_dict(blob["config"])
    except (TypeError, ValueError) as err:
        raise OnparseError(f"{path}: unusable {what} config ({first_line(err)})") from None
    check_parts(blob, config.vocab_size, config.parameter_shapes, path, verify=verify)
    return blob


def check_parts(blob: Dict[str, Any], vocab_size: int, shapes, path, *, verify: bool = True) -> None:
    """The checks every model file shares, after its config was read: the vocabulary is
    ``vocab_size`` distinct words, the metadata a dict, the weights tensors of the ``shapes()`` the config
    gives (name -> shape), matching their recorded checksum (unless not ``verify``), finite."""
    vocab, meta = blob["vocab"], blob.get("metadata", {})
    if not isinstance(vocab, (list, tuple)) or not set(map(type, vocab)) <= {str}:     # map: 40,000 words fast
        raise OnparseError(f"{path}: the vocabulary is not a list of words")
    if len(set(vocab)) != len(vocab):
        seen: set = set()
        twice = next(w for w in vocab if w in seen or seen.add(w))
        raise OnparseError(f"{path}: the vocabulary has duplicate words ({twice!r} twice)")
    if len(vocab) != vocab_size:
        raise OnparseError(f"{path}: the vocabulary has {len(vocab):,} words but the config says "
                           f"vocab_size {vocab_size:,}")
    if not isinstance(meta, dict):
        raise OnparseError(f"{path}: metadata is a {type(meta).__name__}, not a dict")
    weights = _checked_tensors(blob["state_dict"], path)
    _check_shapes(shapes(), weights, path)
    tag = meta.get("weights")
    if tag in WEIGHT_KINDS and tag != stored_as(weights):
        # info reads the tag: a file saying float16 over int8 tensors misleads whoever reads it
        # (a tag that names no precision is odd metadata, which info leaves out).
        raise OnparseError(f"{path}: its metadata says {tag!r} weights but its tensors are stored as "
                           f"{stored_as(weights)}: the file was altered or damaged")
    recorded = meta.get(DIGEST_KEY)
    if recorded is not None and verify and recorded != weights_digest(weights):
        raise OnparseError(f"{path}: the weights do not match their checksum (the file is damaged or was "
                           "altered); pass --no-verify to load it anyway")
    bad = [name for name, t in weights.items() if t.is_floating_point() and not bool(t.isfinite().all())]
    if bad:
        raise OnparseError(f"{path}: {len(bad)} weight tensor(s) hold NaN or infinite values ({bad[0]}, ...): "
                           "the run that wrote it diverged")


def _checked_tensors(state_dict, path) -> Dict[str, Any]:
    """``state_dict`` if it maps names to tensors that each own their elements (a tensor with
    zero strides could claim billions of elements from a few bytes)."""
    import torch

    if not isinstance(state_dict, dict) or not state_dict:
        raise OnparseError(f"{path}: the weights are not a dict of tensors")
    for name, tensor in state_dict.items():
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            raise OnparseError(f"{path}: weight {name!r} is not a tensor")
        if tensor.numel() * tensor.element_size() > tensor.untyped_storage().nbytes():
            raise OnparseError(f"{path}: weight {name} claims more elements than the file holds")
    return state_dict


def _check_shapes(shapes: Dict[str, tuple], weights: Dict[str, Any], path) -> None:
    """The config's parameter shapes (computed, not allocated) against the file's tensors: each
    one there, of its shape, and no tensor besides them and their int8 scales."""
    import torch

    extra = [name for name in weights if name not in shapes and name.removesuffix(SCALE_SUFFIX) not in shapes]
    if extra:
        more = f" and {len(extra) - 1} more" if len(extra) > 1 else ""
        raise OnparseError(f"{path}: the weights hold {extra[0]}{more}, which the config has no place for")
    for name, shape in shapes.items():
        if name not in weights:
            raise OnparseError(f"{path}: the weights lack {name}")
        if tuple(weights[name].shape) != shape:
            raise OnparseError(f"{path}: the config does not fit the weights: {name} is "
                               f"{tuple(weights[name].shape)} in the file, {shape} by the config")
        tensor, scale = weights[name], weights.get(name + SCALE_SUFFIX)
        # Weights are floating point, or int8 with one float scale per row (onparse.files.bundle).
        if scale is None and not tensor.is_floating_point():
            raise OnparseError(f"{path}: weight {name} is {tensor.dtype}, not floating point")
        if scale is not None and (tensor.dtype != torch.int8 or not scale.is_floating_point()
                                  or tuple(scale.shape) != (shape[0],)):
            raise OnparseError(f"{path}: weight {name} is {tensor.dtype} with scales of shape {tuple(scale.shape)}: "
                               f"expected int8 with {shape[0]} floating-point scales")

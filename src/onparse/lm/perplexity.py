"""Perplexity of a language model on a corpus: the validation measure of ``onparse train`` and
the report of ``onparse perplexity``.

The text is read as the trainer reads it: sentences joined with ``<eos>`` into one id sequence,
cut into ``batch_size`` parallel streams, and run window by window (``bptt`` steps) with the
recurrent state carried across windows, in evaluation mode (no dropout).  Perplexity is
``exp(total cross-entropy / predicted tokens)``; the few ids that do not fill a last row are
left out, as in the AWD-LSTM recipe, so a different ``batch_size`` gives a slightly different
figure.
"""
import contextlib
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Optional, Tuple

import torch

from ..text.corpora import NAMES, SPLITS, CorpusSpec, batchify, encode_stream, load_corpus, make_spec, read_sentences
from ..errors import OnparseError
from ..progress import Progress
from ..files.safeio import perplexity_of

#: The AWD-LSTM recipe's evaluation batch: 10 streams.
DEFAULT_BATCH_SIZE = 10
DEFAULT_BPTT = 70


@dataclass(frozen=True)
class PerplexityResult:
    """Cross-entropy ``loss`` (nats per token) and ``perplexity = exp(loss)`` over ``tokens``
    predicted tokens of ``sentences`` sentences; ``corpus`` says what was measured (``"wsj
    test"``, ``"ptb.test.txt"``) when the caller named it, ``model`` which model (where it came
    from) when it is one of several (:func:`onparse.perplexity`)."""

    loss: float
    perplexity: float
    tokens: int
    sentences: int
    corpus: Optional[str] = None
    model: Optional[str] = field(default=None, compare=False)     # a label, not part of the measurement

    def to_dict(self) -> dict:
        return asdict(self)


def fit_streams(n_ids: int, batch_size: int) -> int:
    """Number of streams to use for ``n_ids`` ids: ``batch_size``, fewer when the text is too
    short to give every stream at least two ids (one input, one target)."""
    if n_ids < 2:
        raise OnparseError(f"too little text to measure perplexity ({n_ids} tokens)")
    return max(1, min(batch_size, n_ids // 2))


def autocast_context(device: torch.device, enabled: bool = True):
    """bf16 autocast on CUDA (when ``enabled``), nothing elsewhere."""
    if enabled and device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


@torch.no_grad()
def stream_loss(model, data: torch.Tensor, bptt: int, amp: bool = True,
                progress: Optional[Callable[[int], None]] = None) -> Tuple[float, int]:
    """Summed cross-entropy (nats) and number of predicted tokens over ``data`` (N, B) ids.

    ``model`` is an :class:`~onparse.lm.model.ONLSTMLanguageModel` (put in eval mode here and left
    so); ``data`` is on the model's device.  Rows are read in windows of ``bptt`` steps with the
    state carried over; the targets of row ``t`` are row ``t + 1``.  ``progress(n)`` is called
    with the tokens of each window.
    """
    if bptt < 1:
        raise ValueError(f"bptt must be positive, got {bptt}")
    model.eval()
    n_rows, n_streams = data.shape
    if n_rows < 2 or n_streams == 0:
        return 0.0, 0
    total = torch.zeros((), dtype=torch.float64, device=data.device)
    state = model.init_state(n_streams)
    for start in range(0, n_rows - 1, bptt):
        length = min(bptt, n_rows - 1 - start)
        inputs = data[start:start + length]
        targets = data[start + 1:start + 1 + length]
        with autocast_context(data.device, amp):
            out = model(inputs, state)
            loss = model.loss(out.output, targets)
        total += loss.double() * targets.numel()
        state = out.state
        if progress is not None:
            progress(targets.numel())
    return float(total), (n_rows - 1) * n_streams


def corpus_perplexity(model, vocab, sentences, batch_size: int = DEFAULT_BATCH_SIZE, bptt: int = 70,
                      device: Optional[torch.device] = None, amp: bool = True, quiet: bool = True,
                      desc: str = "perplexity") -> PerplexityResult:
    """Perplexity of ``model`` on ``sentences`` (lists of normalised words; unknown words are
    ``<unk>``).  ``device`` defaults to the model's.  Unless ``quiet``, progress on stderr
    (:mod:`onparse.progress`), named ``desc``."""


    if batch_size < 1:
        raise OnparseError(f"batch size must be positive, got {batch_size}")
    if device is None:
        device = next(model.parameters()).device
    stream = encode_stream(sentences, vocab)
    data = batchify(stream, fit_streams(stream.numel(), batch_size)).to(device)
    with Progress(desc, (data.shape[0] - 1) * data.shape[1], "tokens", quiet) as bar:
        total, count = stream_loss(model, data, bptt, amp, bar.update)
    loss = total / count
    return PerplexityResult(loss, perplexity_of(loss), count, len(sentences))


def measure_model(loaded, corpus: Optional[str] = None, split: Optional[str] = None, fmt: str = "auto",
                  batch_size: Optional[int] = None, bptt: Optional[int] = None,
                  name: str = "the model", quiet: bool = False) -> PerplexityResult:
    """Perplexity of a loaded model (:class:`onparse.lm.kind.LanguageModel`: model, vocabulary
    and metadata), on the model's device; the result's ``corpus`` describes what was measured.

    ``corpus`` None: the corpus recorded in the model's metadata, ``split`` test by default.  A
    built-in name: its held-out split (test by default).  A file: the whole file by default
    (``split="all"``); another split applies the held-out rule of :mod:`onparse.text.corpora`.
    ``batch_size`` and ``bptt`` default to the evaluation settings of the run that wrote the
    checkpoint (so the figure matches the trainer's), else 10 and 70.  ``name`` names the model
    in errors and in the progress shown on stderr (none when ``quiet``).

    Cost: one forward pass over the text (no gradients) in ``batch_size`` streams of ``bptt``
    steps; memory of the order of ``batch_size x bptt x vocabulary`` for the logits.
    """
    sentences, described = text_to_measure(loaded.metadata, corpus, split, fmt, name)
    run = loaded.metadata.get("train_config") or {}
    if batch_size is None:
        batch_size = run.get("eval_batch_size", DEFAULT_BATCH_SIZE)
    if bptt is None:
        bptt = run.get("bptt", DEFAULT_BPTT)
    result = corpus_perplexity(loaded.model, loaded.vocab, sentences, batch_size=batch_size, bptt=bptt,
                               quiet=quiet, desc=f"perplexity of {name} on {described}")
    return replace(result, corpus=described)


def text_to_measure(metadata: dict, corpus: Optional[str], split: Optional[str], fmt: str,
                    name: str) -> Tuple[list, str]:
    """The sentences a perplexity is measured on, and what they are (``"wsj test"``): the
    choice of corpus and split :func:`measure_model` describes, shared by every kind of model
    with a perplexity; ``metadata`` is the model file's (its recorded corpus)."""
    import os

    _check_split(split)
    if corpus is None:
        recorded = metadata.get("corpus")
        if recorded is None:
            raise OnparseError(f"{name} does not record its training corpus; pass --corpus")
        try:
            spec = CorpusSpec.from_dict(recorded)
        except (TypeError, ValueError):
            raise OnparseError(f"{name}: unreadable corpus record {recorded!r}; pass --corpus") from None
        if not spec.is_named:
            # A model file may come from anyone: it names a corpus, it does not choose what is read.
            raise OnparseError(f"{name} was trained on the file {spec.source!r}; onparse opens no path that a "
                               f"model names: pass --corpus FILE (with --split test for its held-out test part)")
        split = split or "test"
    else:
        spec = make_spec(corpus, fmt)
        split = split or ("test" if corpus in NAMES else "all")
    if not spec.is_named and split == "all" and spec.valid is None:
        sentences = read_sentences(spec.source, spec.format)   # the whole file: no split needed
    else:
        sentences = load_corpus(spec).split(split)
    label = spec.source if spec.is_named else os.path.basename(spec.source)
    described = label if split == "all" and not spec.is_named else f"{label} {split}"
    if not sentences:
        raise OnparseError(f"{described} holds no sentences" + (
            " (the run had a --valid file but no --test file; pass --corpus FILE)" if split == "test" else ""))
    return sentences, described


def _check_split(split: Optional[str]) -> None:

    if split is not None and split not in SPLITS:
        raise OnparseError(f"unknown split '{split}'; known: {', '.join(SPLITS)}")

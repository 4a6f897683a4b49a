"""Tree induction from raw text, streaming: lines -> words -> ids -> distances -> trees -> lines.

One output line per input line, in input order, whatever the batching:

- an input line is split on whitespace (or by NLTK's Treebank tokenizer with ``tokenize=True``);
  punctuation (:func:`onparse.text.is_punct`) is dropped before the model sees it, as in the
  evaluation protocol; with ``keep_punct=True`` a punctuation token is kept when the vocabulary
  has it (normalised), and still dropped otherwise (the model would only see ``<unk>``);
- the remaining tokens are normalised (:func:`onparse.text.normalize_word`) and looked up,
  unknown words becoming ``<unk>``; the trees show the user's original tokens;
- a line with no words left (an empty line, or only punctuation) gives an empty output line in
  the ``brackets`` and ``ptb`` formats, and ``{"tokens": [], "tree": null, "distances": []}`` in
  ``json`` (JSON Lines has no empty records);
- a one-word sentence is written ``(word)`` / ``(X (W word))``, so every non-empty output line
  is a bracketed tree that ``nltk.Tree.fromstring`` reads.

Memory stays constant in the corpus size: lines are read ``window`` at a time, the window's
sentences are batched by length (:mod:`onparse.distances`), and the window's output is written
before the next one is read.

Sharding: :class:`Shard` ``K/N`` reads the K-th of N contiguous line ranges of a file, cut at
line starts nearest to equal byte offsets, so that the N parts, concatenated in order, are
exactly the single-process output (no part needs to read the others' lines).
"""
import json
import os
import stat
import sys
from dataclasses import dataclass
from typing import IO, Callable, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from .decode import DECODERS, decode
from .errors import OnparseError
from .text import is_punct, normalize_word

FORMATS = ("brackets", "ptb", "json")
DISTANCE_FORMATS = ("tsv", "jsonl")
#: Lines read, sorted and parsed together; bounds the memory in the corpus size.
WINDOW = 4096


# --------------------------------------------------------------------------------------
# Reading lines
# --------------------------------------------------------------------------------------


class Shard(NamedTuple):
    """The ``index``-th (1-based) of ``count`` contiguous parts of a file."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        """``"2/8"`` -> ``Shard(2, 8)``; ValueError unless ``1 <= K <= N``."""
        try:
            k, n = (int(part) for part in text.split("/"))
        except ValueError:
            raise ValueError(f"expected K/N such as 1/4, got {text!r}") from None
        if not 1 <= k <= n:
            raise ValueError(f"K/N needs 1 <= K <= N, got {text!r}")
        return cls(k, n)

    def byte_range(self, size: int) -> Tuple[int, int]:
        """``[start, end)``: this part holds the lines whose first byte lies in the range."""
        return size * (self.index - 1) // self.count, size * self.index // self.count


def _line_number_at(path: str, offset: int) -> int:
    """1-based number of the line starting at byte ``offset`` (counts newlines before it)."""
    count = 0
    with open(path, "rb") as handle:
        remaining = offset
        while remaining > 0:
            block = handle.read(min(remaining, 1 << 20))
            if not block:
                break
            count += block.count(b"\n")
            remaining -= len(block)
    return count + 1


def read_lines(path: str, shard: Optional[Shard] = None, max_line_bytes: Optional[int] = None) -> Iterator[str]:
    """Yield the lines of ``path`` (``-`` = standard input) as text without their line ending.

    Lines end at ``\\n`` (a ``\\r`` before it is dropped too); a last line without a newline
    counts.  Input must be UTF-8 (a byte-order mark at the start is skipped): other bytes raise
    :class:`OnparseError` naming the line, as does a line longer than ``max_line_bytes``
    (default: :func:`onparse.safeio.line_limit`) or a read error.  ``shard`` needs a regular file.
    """
    from .safeio import bounded_lines

    name = "<stdin>" if path == "-" else path
    if shard is not None and shard.count == 1:
        shard = None
    if path == "-":
        if shard is not None:
            raise OnparseError("--shard needs a FILE: standard input cannot be split")
        if sys.stdin is None:
            raise OnparseError("standard input is closed; pass a FILE instead of -")
        handle, close = sys.stdin.buffer, False
    else:
        try:
            handle, close = open(path, "rb"), True
        except OSError as err:
            raise OnparseError(f"cannot read {path}: {err.strerror}") from None
    try:
        offset, end = 0, None
        if shard is not None and path != "-":
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise OnparseError(f"--shard needs a regular file: {path} cannot be split")
            size = info.st_size
            start, end = shard.byte_range(size)
            if start > 0:
                # Skip to the first line that starts at or after `start`: the line holding byte
                # start - 1 belongs to the previous part.
                handle.seek(start - 1)
                handle.readline()
            offset = handle.tell()
        first_offset = offset
        number = 0  # lines read so far in this part

        def where(n):  # the line's number in the file, counted only when an error needs it
            return f"line {n if first_offset == 0 else _line_number_at(path, offset)}"

        for raw in bounded_lines(handle, name, max_line_bytes, where):
            if end is not None and offset >= end:
                break
            number += 1
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                line = number if first_offset == 0 else _line_number_at(path, offset)
                raise OnparseError(
                    f"{name} line {line}: not valid UTF-8 (byte {err.start + 1} of the line); "
                    f"onparse reads UTF-8 text") from None
            offset += len(raw)
            if text.endswith("\n"):
                text = text[:-1]
                if text.endswith("\r"):
                    text = text[:-1]
            if number == 1 and first_offset == 0 and text.startswith("\ufeff"):
                text = text[1:]  # byte-order mark of a file saved as "UTF-8 with BOM"
            yield text
    finally:
        if close:
            handle.close()


# --------------------------------------------------------------------------------------
# Sentences
# --------------------------------------------------------------------------------------


class Sentence(NamedTuple):
    """One input line after preprocessing: the user's tokens the model reads, and their ids."""

    tokens: List[str]
    ids: List[int]


@dataclass(frozen=True)
class Preprocessor:
    """Turns a line of text into a :class:`Sentence` (see the module docstring for the rules)."""

    vocab: object                  # onparse.vocab.Vocabulary
    tokenize: bool = False
    keep_punct: bool = False

    def tokens(self, line: str) -> List[str]:
        if self.tokenize:
            return _treebank_tokenizer().tokenize(line)
        return line.split()

    def __call__(self, line: str) -> Sentence:
        vocab = self.vocab
        tokens, ids = [], []
        for token in self.tokens(line):
            word = normalize_word(token)
            if is_punct(token) and not (self.keep_punct and word in vocab):
                continue
            tokens.append(token)
            ids.append(vocab.index(word))
        return Sentence(tokens, ids)


_TOKENIZER = None


def _treebank_tokenizer():
    global _TOKENIZER
    if _TOKENIZER is None:
        from nltk.tokenize import TreebankWordTokenizer  # pure regular expressions, no data

        _TOKENIZER = TreebankWordTokenizer()
    return _TOKENIZER


# --------------------------------------------------------------------------------------
# The streaming pipeline
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InferenceOptions:
    """How sentences are batched through the model."""

    batch_size: int = 64           # sentences per batch (at most)
    max_tokens: int = 8192         # padded tokens per batch (at most)
    window: int = WINDOW           # lines sorted and parsed together


def _windows(lines: Iterable[str], size: int) -> Iterator[List[str]]:
    window: List[str] = []
    for line in lines:
        window.append(line)
        if len(window) >= size:
            yield window
            window = []
    if window:
        yield window


def _distance_stream(lines: Iterable[str], model, prep: Preprocessor, n_layers: int,
                     options: InferenceOptions) -> Iterator[List[Tuple[Sentence, object]]]:
    """Per window, ``[(sentence, distances (n_layers, 2, n)), ...]`` in input order."""
    from .distances import sentence_distances

    eos = prep.vocab.eos_id
    for window in _windows(lines, options.window):
        sentences = [prep(line) for line in window]
        dists = sentence_distances(model, [s.ids for s in sentences], eos, n_layers,
                                   options.batch_size, options.max_tokens)
        yield list(zip(sentences, dists))


def format_tree(tree, fmt: str) -> str:
    """One output line for a decoded tree (a leaf for one-word sentences)."""
    from .trees import to_brackets, to_ptb

    if fmt == "ptb":
        return to_ptb(tree)
    # A one-word tree is written "(word)" so that every line is a bracketed tree.
    return to_brackets((tree,) if isinstance(tree, str) else tree)


def induce_lines(lines: Iterable[str], model, vocab, *, layer: int = 2, decoder: str = "onlstm",
                 fmt: str = "brackets", tokenize: bool = False, keep_punct: bool = False,
                 options: InferenceOptions = InferenceOptions()) -> Iterator[List[str]]:
    """Induce a tree for each line; yield the output lines (no newline) window by window.

    ``model``: a loaded ON-LSTM LM (on any device); ``layer``: 1-based layer whose master-forget
    distances are decoded; ``decoder``: one of :data:`onparse.decode.DECODERS`; ``fmt``: one of
    :data:`FORMATS`.
    """
    _check_choice(decoder, DECODERS, "decoder")
    _check_choice(fmt, FORMATS, "format")
    _check_layer(model, layer)  # checked here, not at the first line read
    prep = Preprocessor(vocab, tokenize, keep_punct)
    return _induce(_distance_stream(lines, model, prep, layer, options), layer, decoder, fmt)


def _induce(stream, layer, decoder, fmt) -> Iterator[List[str]]:
    for pairs in stream:
        out = []
        for sentence, dist in pairs:
            d_f = dist[layer - 1, 0]
            if fmt == "json":
                tree = format_tree(decode(d_f, sentence.tokens, decoder), "brackets") if sentence.tokens else None
                out.append(json.dumps({"tokens": sentence.tokens, "tree": tree,
                                       "distances": [round(float(x), 6) for x in d_f]},
                                      ensure_ascii=False))
            elif sentence.tokens:
                out.append(format_tree(decode(d_f, sentence.tokens, decoder), fmt))
            else:
                out.append("")
        yield out


def distance_lines(lines: Iterable[str], model, vocab, *, layers: Sequence[int], gate: str = "forget",
                   fmt: str = "tsv", tokenize: bool = False, keep_punct: bool = False,
                   options: InferenceOptions = InferenceOptions()) -> Iterator[List[str]]:
    """Per-word distances of each line; yield output lines window by window.

    ``layers``: 1-based layers to report; ``gate``: ``forget`` (d_f, used for parsing) or
    ``input`` (d_i).  ``tsv``: one ``token<TAB>value...`` row per word (one value per layer)
    and a blank line after every sentence (so an empty sentence is just a blank line);
    ``jsonl``: ``{"tokens": [...], "gate": "forget", "distances": {"2": [...]}}`` per line.
    """
    from .distances import GATES

    _check_choice(gate, tuple(GATES), "gate")
    _check_choice(fmt, DISTANCE_FORMATS, "format")
    if not layers:
        raise ValueError("no layers to report")
    for layer in layers:
        _check_layer(model, layer)
    prep = Preprocessor(vocab, tokenize, keep_punct)
    return _distances(_distance_stream(lines, model, prep, max(layers), options), layers, GATES[gate], gate, fmt)


def _distances(stream, layers, g, gate, fmt) -> Iterator[List[str]]:
    for pairs in stream:
        out = []
        for sentence, dist in pairs:
            if fmt == "jsonl":
                values = {str(k): [round(float(x), 6) for x in dist[k - 1, g]] for k in layers}
                out.append(json.dumps({"tokens": sentence.tokens, "gate": gate, "distances": values},
                                      ensure_ascii=False))
                continue
            for position, token in enumerate(sentence.tokens):
                values = "\t".join(f"{dist[k - 1, g, position]:.6f}" for k in layers)
                out.append(f"{token}\t{values}")
            out.append("")
        yield out


def write_stream(chunks: Iterable[List[str]], out: IO[str],
                 progress: Optional[Callable[[int], None]] = None) -> int:
    """Write each chunk's lines (adding newlines) and flush; return the number of lines written.

    Flushing here, inside the command, makes a closed pipe (``| head``) raise BrokenPipeError
    where the CLI group handles it, instead of at interpreter exit.
    """
    written = 0
    for chunk in chunks:
        if chunk:
            out.write("\n".join(chunk))
            out.write("\n")
        out.flush()  # a window at a time: a reader (or a person at a terminal) sees results early
        written += len(chunk)
        if progress is not None:
            progress(len(chunk))
    out.flush()
    return written


def steady_memory() -> bool:
    """Keep the resident memory of a long stream flat; True when the setting took effect.

    glibc raises its mmap threshold whenever a large block is freed; after that, the per-batch
    tensors (a few MB, a different size every batch) come from the heap, fragment it, and the
    resident size creeps up by tens of MB over a long run before levelling off.  A fixed
    threshold of 1 MiB keeps those blocks in mmap, returned to the system when freed.  Other C
    libraries: a no-op.  Called once by the CLI commands (it affects the whole process).
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not sys.platform.startswith("linux") or not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        return bool(libc.mallopt(-3, 1 << 20))  # -3 = M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        return False


def _check_choice(value, choices, what):
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}; choose from {', '.join(choices)}")


def _check_layer(model, layer: int) -> None:
    n = model.config.n_layers
    if not 1 <= layer <= n:
        raise OnparseError(f"layer {layer} does not exist: the model has {n} layers (1..{n})")


# --------------------------------------------------------------------------------------
# Scoring a model on a gold set
# --------------------------------------------------------------------------------------


def score_model(model, gold, layers: Optional[Sequence[int]] = (2,),
                decoders: Optional[Sequence[str]] = ("onlstm",), ptb_root=None, device="cpu",
                options: InferenceOptions = InferenceOptions()):
    """Induce trees for the sentences of a gold set and score them, per layer and decoder.

    ``model``: a checkpoint path or a :class:`~onparse.checkpoint.LoadedModel`; ``gold``: a
    gold name (``wsj10``, ...), a path, or a :class:`~onparse.treebank.Gold`; ``layers``:
    1-based layers (None = every layer); ``decoders``: names from :data:`DECODERS` (None = all).
    The model reads the gold sentences' kept words (punctuation is already gone), normalised,
    unknown words as ``<unk>``; the distances are computed once for all requested layers.

    Returns ``{(layer, decoder): onparse.metrics.EvalResult}`` in the order requested.
    """
    from .checkpoint import LoadedModel, load_model
    from .distances import sentence_distances
    from .metrics import evaluate
    from .treebank import Gold, load_gold

    if not isinstance(model, LoadedModel):
        model = load_model(str(model), device)
    net, vocab = model.model, model.vocab
    layers = list(range(1, net.config.n_layers + 1)) if layers is None else list(layers)
    decoders = list(DECODERS) if decoders is None else list(decoders)
    for layer in layers:
        _check_layer(net, layer)
    for decoder in decoders:
        _check_choice(decoder, DECODERS, "decoder")
    if not isinstance(gold, Gold):
        gold = load_gold(str(gold), ptb_root)
    ids = [[vocab.index(normalize_word(w)) for w in s.words] for s in gold]
    dists = sentence_distances(net, ids, vocab.eos_id, max(layers), options.batch_size, options.max_tokens)
    results = {}
    for layer in layers:
        for decoder in decoders:
            trees = [decode(d[layer - 1, 0], list(s.tokens), decoder) for d, s in zip(dists, gold)]
            results[(layer, decoder)] = evaluate(trees, gold)
    return results

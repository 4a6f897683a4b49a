"""Tree induction from raw text, streaming: lines -> words -> ids -> distances -> trees -> lines.

One output line per input line, in input order, whatever the batching:

- an input line is tokenised and its punctuation dropped by :class:`onparse.text.tokens.Preprocessor`
  (NLTK's word tokenizer, or whitespace for pre-tokenised text; the Unicode word rule, with the
  symbols the model's vocabulary holds as words kept), the remaining tokens normalised and
  looked up, unknown words becoming ``<unk>``; the trees show the user's original tokens;
- a parser with several members writes their average tree (:mod:`onparse.trees.average`);
- a line with no words left (an empty line, or only punctuation) gives an empty output line in
  the ``brackets`` and ``ptb`` formats, and ``{"tokens": [], "tree": null, ...}`` in ``jsonl``
  (JSON Lines has no empty records);
- a one-word sentence is written ``(word)`` / ``(W word)``, so every non-empty output line
  is a bracketed tree: ``onparse.read_trees`` reads either format back as the parser's nltk
  trees; ``nltk.Tree.fromstring`` reads ``ptb`` lines but takes a ``brackets`` line's first word
  for a label;
- with a sentence splitter (``--split-sentences``) each sentence of a line gets its tree, and
  :func:`onparse.text.sentences.by_line` says how the output lines map back to the input lines.

Memory stays constant in the corpus size: lines are read ``window`` at a time, the window's
sentences are batched by length (:mod:`onparse.lm.distances`), and the window's output is written
before the next one is read.

Sharding: :class:`Shard` ``K/N`` reads the K-th of N contiguous line ranges of a file, cut at
line starts nearest to equal byte offsets, so that the N parts, concatenated in order, are
exactly the single-process output (no part needs to read the others' lines).

:func:`onparse.pictures.show.views_from_lines` gives ``onparse show`` its views the same way, one
line at a time; :mod:`onparse.text.coverage` counts how well a text suits the model.
"""
import json
import os
import stat
import sys
from typing import IO, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from .errors import OnparseError
from .members import DEFAULT_DECODER, DEFAULT_LAYER, GATES, Member, first_of, labelling
from .files.safeio import MAX_LINE_BYTES, bounded_lines
from .progress import Portion
from .text.coverage import VocabularyCheck  # noqa: F401 (read from here by the CLI)
from .text.sentences import by_line
from .text.tokens import BOM, DEFAULT_PUNCT, normalize_word, text_problem
from .trees import average
from .trees.tree import to_brackets, to_ptb

FORMATS = ("brackets", "ptb", "jsonl")
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

    def first_line(self, path: str) -> int:
        """The number in the file at ``path`` of this part's first line (counts the newlines before it)."""
        start = self.byte_range(os.path.getsize(path))[0]
        if not start:
            return 1
        with open(path, "rb") as handle:         # as read_lines skips to it
            handle.seek(start - 1)
            handle.readline()
            return _line_number_at(path, handle.tell())


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


def read_lines(path: str, shard: Optional[Shard] = None, max_line_bytes: int = MAX_LINE_BYTES,
               digest=None) -> Iterator[str]:
    """Yield the lines of ``path`` (``-`` = standard input) as text without their line ending.
    ``digest`` (a :mod:`hashlib` object) takes every byte read, as it is read: the hash of a
    stream (a pipe, ``<(...)``, standard input) that cannot be read twice.

    Lines end at ``\\n`` (a ``\\r`` before it is dropped too); a last line without a newline
    counts.  Input must be UTF-8 (a byte-order mark at the start is skipped): other bytes raise
    :class:`OnparseError` naming the line, as does a line holding a NUL character
    (:func:`onparse.text.tokens.text_problem`), a line longer than ``max_line_bytes``
    (``--max-line-bytes``) or a read error.  ``shard`` needs a regular file.  An input that
    cannot be opened (a missing file, standard input closed) is refused at the call, before a
    command writes anything.
    """
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
    return _read_lines(handle, close, path, name, shard, max_line_bytes, digest)


def _read_lines(handle, close: bool, path: str, name: str, shard: Optional[Shard], max_line_bytes: int,
                digest) -> Iterator[str]:
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
            if digest is not None:
                digest.update(raw)
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
            if number == 1 and first_offset == 0 and text.startswith(BOM):
                text = text[1:]  # byte-order mark of a file saved as "UTF-8 with BOM"
            problem = text_problem(text)
            if problem:
                line = number if first_offset == 0 else _line_number_at(path, offset - len(raw))
                raise OnparseError(f"{name} line {line} {problem}")
            yield text
    finally:
        if close:
            handle.close()


# --------------------------------------------------------------------------------------
# The streaming pipeline
# --------------------------------------------------------------------------------------


def _windows(lines: Iterable[str], size: int) -> Iterator[List[str]]:
    window: List[str] = []
    for line in lines:
        window.append(line)
        if len(window) >= size:
            yield window
            window = []
    if window:
        yield window


def format_tree(tree, fmt: str, labels=None) -> str:
    """One output line for a decoded tree (a leaf for one-word sentences); ``ptb`` writes each
    span's label from ``labels`` (span -> label), ``X`` where it has none."""
    if fmt == "ptb":
        return to_ptb(tree, labels=labels)
    # A one-word tree is written "(word)" so that every line is a bracketed tree.
    return to_brackets((tree,) if isinstance(tree, str) else tree)


def too_long_note(parser) -> Optional[str]:
    """Lines for stderr when some of ``parser``'s sentences were too long for a model to parse
    whole (:attr:`onparse.api.Parser.in_pieces`) or too long to average
    (:attr:`onparse.api.Parser.too_long`; :mod:`onparse.trees.average`), else None."""
    notes = [f"note: {n:,} sentence(s) were too long for the {kind} to parse whole: each got a tree built in "
             "pieces, joined by a tree over them" for kind, n in parser.in_pieces.items()]
    if parser.too_long:
        notes.append(f"note: {parser.too_long:,} sentence(s) of more than {average.MAX_WORDS:,} words were too "
                     "long to average: each got its first member's tree")
    return "\n".join(notes) or None


def tree_labels(parser, token_lists: Sequence[Sequence[str]], trees: Sequence[object]) -> Optional[List[Optional[Dict]]]:
    """Span -> label for each of ``parser``'s ``trees`` of ``token_lists`` (averaged ones too), from
    the model of its members that labels them (:func:`onparse.members.labelling`: the first
    grammar among them, which names each span of ANY tree over the words by its most probable
    nonterminal, ``NT-12``); None when no member's model names spans (a student alone, the bundled
    model's fast reading), whatever else its file carries: the trees are written with ``X``.
    Cost: the labelling kind's (a grammar: its labelled marginals, about one more parse)."""
    member = labelling(parser.members, parser.models)
    return None if member is None else parser.models[member.model].labels(
        token_lists, trees, member=member, batch_size=parser.batch_size)


def induce_lines(lines: Iterable[str], parser, *, fmt: str = "brackets", tokenize: bool = True,
                 punct: str = DEFAULT_PUNCT, window: int = WINDOW, check: Optional[VocabularyCheck] = None,
                 split=None, progress: Optional[Callable[[int], None]] = None, first_line: int = 1) -> Iterator[List[str]]:
    """Induce a tree for each line; yield the output lines (no newline) window by window.

    ``parser``: an :class:`onparse.api.Parser` (its members' trees are averaged when it has
    several); ``fmt``: one of :data:`FORMATS`; ``tokenize`` / ``punct``: see
    :class:`onparse.text.tokens.Preprocessor`.  ``json`` records hold the tokens, the tree, the first
    member's distances and ``oov``: per token, whether the (first) model's vocabulary lacks it.
    When a grammar is among the members (:func:`tree_labels`), ``ptb`` writes its symbols
    instead of ``X`` and ``json`` records add ``labels``: ``[start, end, label]`` per
    span, outermost first.
    ``check``: a :class:`VocabularyCheck` that counts every sentence's tokens.  ``split``: a
    :class:`onparse.text.sentences.SentenceSplitter`: each sentence of a line gets its tree
    (:func:`onparse.text.sentences.by_line`: how output lines map to input lines; records carry
    their input line's number, counted from ``first_line``, a shard's).  ``progress(k)``: told of
    the lines done as the parser's batches finish, not only at the end of a window.
    """
    _check_choice(fmt, FORMATS, "format")
    prep = parser.preprocessor(tokenize, punct)
    known = parser.vocab.stoi
    first = first_of(parser.members, parser.models, layered=True)       # whose distances jsonl shows
    passes = len({m.model for m in parser.members})                     # each model reports its batches
    for group in _windows(lines if split is None else split.lines(lines), window):
        texts = group if split is None else [s for sentences in group for s in sentences]
        tokens = [prep(text).tokens for text in texts]
        if check is not None:
            for toks in tokens:
                check.add(toks)
        share = Portion(progress, len(group), passes * len(texts))
        dists = parser.model_distances(tokens, progress=share)
        trees = parser.trees(tokens, dists, progress=share)
        share.finish()
        labels = None if fmt == "brackets" else tree_labels(parser, tokens, trees)
        out = []
        for i, (toks, tree) in enumerate(zip(tokens, trees)):
            if fmt == "jsonl":
                d_f = None if first is None else dists[first.model][i][first.layer - 1, 0]
                record = {"tokens": toks, "tree": None if tree is None else format_tree(tree, "brackets"),
                          "distances": None if d_f is None else [round(float(x), 6) for x in d_f],
                          "oov": [normalize_word(t) not in known for t in toks]}
                if labels is not None:
                    record["labels"] = None if labels[i] is None else [
                        [a, b, name] for (a, b), name in sorted(labels[i].items(), key=lambda s: (s[0][0], -s[0][1]))]
                out.append(record)
            else:
                out.append("" if tree is None else format_tree(tree, fmt, labels[i] if labels else None))
        if split is not None:
            empty = {"tokens": [], "tree": None, "distances": None if first is None else [], "oov": [],
                     **({} if labels is None else {"labels": None})}
            out = by_line(out, tokens, [len(sentences) for sentences in group], fmt == "jsonl", empty, first_line)
        first_line += len(group)
        yield [json.dumps(x, ensure_ascii=False) for x in out] if fmt == "jsonl" else out


def distance_columns(parser, layers: Optional[Sequence[int]] = None):
    """The parser that reads the distances of ``layers`` (a list or ``"all"``; None: the layer
    each language-model member reads, a bundle's own) and its columns ``(model, layer, name)``:
    ``layer 2`` with one model, ``model 1 layer 2`` with several.  OnparseError when no model has
    distances, :class:`onparse.members.MemberError` for a layer a model lacks."""
    own = list(dict.fromkeys(Member(m.model, m.layer, DEFAULT_DECODER) for m in parser.members
                             if parser.models[m.model].layered))
    if not any(model.layered for model in parser.models):      # no distances: the first model's kind says why
        parser.models[0].distances([], 1, name=parser.name(0), batch_size=1, max_tokens=1)
    reader = parser.with_members(own) if layers is None and own else parser.with_grid(
        layers or [DEFAULT_LAYER], [DEFAULT_DECODER])
    several = len(parser.models) > 1
    return reader, [(m.model, m.layer, f"model {m.model + 1} layer {m.layer}" if several else f"layer {m.layer}")
                    for m in reader.members if parser.models[m.model].layered]


def distance_lines(lines: Iterable[str], parser, *, layers: Optional[Sequence[int]] = None, gate: str = "forget",
                   fmt: str = "tsv", tokenize: bool = True, punct: str = DEFAULT_PUNCT, header: bool = True,
                   window: int = WINDOW, split=None, progress: Optional[Callable[[int], None]] = None,
                   first_line: int = 1) -> Iterator[List[str]]:
    """Per-word distances of each line, for the layers :func:`distance_columns` chooses; yield
    output lines window by window.

    ``gate``: ``forget`` (d_f, used for parsing) or ``input`` (d_i).  ``tsv``: a header row
    ``token<TAB>layer 2 ...`` (with ``header``; ``model 1 layer 2`` with several models), then
    one ``token<TAB>value...`` row per word and a blank line after every sentence (so an empty
    sentence is just a blank line); ``jsonl``: ``{"tokens": [...], "gate": "forget",
    "distances": {"2": [...]}}`` per line, keyed by layer (``"model 1 layer 2"`` with several
    models).  ``split``, ``progress`` and ``first_line`` as for :func:`induce_lines`.
    """
    _check_choice(gate, tuple(GATES), "gate")
    _check_choice(fmt, DISTANCE_FORMATS, "format")
    if layers is not None and not layers:
        raise ValueError("no layers to report")
    reader, columns = distance_columns(parser, layers)
    prep = parser.preprocessor(tokenize, punct)
    g = GATES[gate]
    keys = [name if len(parser.models) > 1 else str(layer) for _, layer, name in columns]
    if fmt == "tsv" and header:
        yield ["token\t" + "\t".join(name for _, _, name in columns)]
    passes = len({m for m, _, _ in columns})
    for group in _windows(lines if split is None else split.lines(lines), window):
        texts = group if split is None else [s for sentences in group for s in sentences]
        tokens = [prep(text).tokens for text in texts]
        share = Portion(progress, len(group), passes * len(texts))
        dists = reader.model_distances(tokens, progress=share)
        share.finish()
        out = []
        for i, toks in enumerate(tokens):
            if fmt == "jsonl":
                values = {key: [round(float(x), 6) for x in dists[m][i][layer - 1, g]]
                          for key, (m, layer, _) in zip(keys, columns)}
                out.append({"tokens": toks, "gate": gate, "distances": values})
                continue
            rows = [f"{token}\t" + "\t".join(f"{dists[m][i][layer - 1, g, position]:.6f}" for m, layer, _ in columns)
                    for position, token in enumerate(toks)]
            out.append("\n".join(rows + [""]))
        if split is not None:
            out = by_line(out, tokens, [len(sentences) for sentences in group], fmt == "jsonl",
                          {"tokens": [], "gate": gate, "distances": {key: [] for key in keys}}, first_line)
        first_line += len(group)
        yield ([json.dumps(x, ensure_ascii=False) for x in out] if fmt == "jsonl"
               else [line for block in out for line in block.split("\n")])


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

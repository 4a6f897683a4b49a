"""``onparse distances`` and ``onparse induce``: distances and trees for raw text, streamed.

Thin commands: they parse options, load the model and hand the lines to
:mod:`onparse.induce`.  torch is imported only when a command runs.
"""
import sys

import click

from .common import device_option, layer_list, line_limit_option, load_model, model_option



class _ShardType(click.ParamType):
    name = "K/N"

    def convert(self, value, param, ctx):
        from ..induce import Shard

        if isinstance(value, Shard):
            return value
        try:
            return Shard.parse(value)
        except ValueError as err:
            self.fail(str(err), param, ctx)


def _common_options(func):
    """Options shared by both commands (input handling, batching, device)."""
    options = [
        click.argument("file", type=click.Path(allow_dash=True, dir_okay=False), default="-"),
        model_option,
        click.option("--tokenize", is_flag=True,
                     help="Split raw text with NLTK's Treebank tokenizer instead of on whitespace."),
        click.option("--keep-punct", is_flag=True,
                     help="Keep punctuation tokens that the model's vocabulary has "
                          "(by default punctuation is removed, as in the evaluation protocol)."),
        click.option("--batch-size", type=click.IntRange(min=1), default=None,
                     help="Sentences per batch, sorted by length within a window of 4096 lines  "
                          "[default: 64 on CPU, 512 on GPU]."),
        click.option("--shard", type=_ShardType(), default=None,
                     help="Process only the K-th of N contiguous parts of FILE (1-based, e.g. 2/8); "
                          "the N outputs concatenated in order equal the whole output."),
        device_option,
        line_limit_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _run(chunks, total_hint: str):
    """Write the output chunks to stdout, with a progress bar on stderr when it is a terminal."""
    from ..induce import steady_memory, write_stream

    steady_memory()
    if not sys.stderr.isatty():
        return write_stream(chunks, sys.stdout)
    from tqdm import tqdm

    with tqdm(unit=" lines", desc=total_hint, file=sys.stderr, dynamic_ncols=True) as bar:
        return write_stream(chunks, sys.stdout, progress=bar.update)


def _options(batch_size, file, model):
    from ..induce import InferenceOptions, WINDOW

    if batch_size is None:
        # A GPU needs wide batches to be busy; on a CPU, 64 sentences already make the matrix
        # products efficient and wider ones only add padding.
        batch_size = 512 if next(model.parameters()).device.type == "cuda" else 64
    # Typing sentences at a terminal: answer each line at once instead of waiting for a window.
    window = 1 if file == "-" and sys.stdin.isatty() else WINDOW
    return InferenceOptions(batch_size=batch_size, max_tokens=max(8192, 128 * batch_size), window=window)


@click.command("induce")
@click.option("--layer", default=2, show_default=True, type=click.IntRange(min=1),
              help="Layer (1-based) whose master-forget distances are decoded; the paper reads layer 2.")
@click.option("--decode", "decoder", type=click.Choice(["onlstm", "split"]), default="onlstm",
              show_default=True,
              help="onlstm: the paper's greedy top-down rule; split: the unbiased binary split.")
@click.option("--format", "fmt", type=click.Choice(["brackets", "ptb", "json"]), default="brackets",
              show_default=True,
              help="brackets: ((the cat) (sat down)); ptb: placeholder labels, for EVALB and nltk; "
                   "json: tokens, tree and distances.")
@_common_options
def induce_command(file, model_path, tokenize, keep_punct, batch_size, shard, device, layer, decoder, fmt):
    """Induce one binary tree per line of FILE (default: standard input).

    One output line per input line, in order: a line with no words (empty, or only
    punctuation) gives an empty line (a record with "tree": null in json).

    \b
    onparse induce corpus.txt --model lm.pt > trees.txt
    onparse induce raw.txt --model lm.pt --tokenize --decode split --format ptb
    onparse induce big.txt --model lm.pt --shard 3/8 > part3.txt
    """
    from ..induce import induce_lines, read_lines

    loaded = load_model(model_path, device)
    layer_list(str(layer), loaded.model.config.n_layers, allow_all=False)
    chunks = induce_lines(read_lines(file, shard), loaded.model, loaded.vocab, layer=layer,
                          decoder=decoder, fmt=fmt, tokenize=tokenize, keep_punct=keep_punct,
                          options=_options(batch_size, file, loaded.model))
    _run(chunks, "induce")


@click.command("distances")
@click.option("--layer", default="2", show_default=True,
              help="Layer to report (1-based), or `all` for every layer (one column / key each).")
@click.option("--gate", type=click.Choice(["forget", "input"]), default="forget", show_default=True,
              help="forget: master-forget distance d_f (used for parsing); input: master-input distance d_i.")
@click.option("--format", "fmt", type=click.Choice(["tsv", "jsonl"]), default="tsv", show_default=True,
              help="tsv: `token<TAB>value...` per word, a blank line after each sentence; "
                   "jsonl: one {tokens, gate, distances: {layer: [...]}} object per line.")
@_common_options
def distances_command(file, model_path, tokenize, keep_punct, batch_size, shard, device, layer, gate, fmt):
    """Print the syntactic distance of every word of each line of FILE (default: standard input).

    Each sentence is read as `<eos> w1 .. wn <eos>` from a zero state; the values at w1 .. wn
    are printed.  Punctuation is removed first unless --keep-punct.

    \b
    onparse distances corpus.txt --model lm.pt --layer all
    echo "the cat sat down" | onparse distances - --model lm.pt --format jsonl
    """
    from ..induce import distance_lines, read_lines

    loaded = load_model(model_path, device)
    layers = layer_list(layer, loaded.model.config.n_layers, allow_all=True)
    chunks = distance_lines(read_lines(file, shard), loaded.model, loaded.vocab, layers=layers,
                            gate=gate, fmt=fmt, tokenize=tokenize, keep_punct=keep_punct,
                            options=_options(batch_size, file, loaded.model))
    _run(chunks, "distances")


def register(group: click.Group) -> None:
    """Add ``induce`` and ``distances`` to the ``onparse`` command group."""
    group.add_command(induce_command)
    group.add_command(distances_command)


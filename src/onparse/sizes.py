"""Bounds on a model's sizes, checked before anything is allocated (a typo such as
``--hidden-size 1000000000``, or a damaged checkpoint, is a one-line error instead of gigabytes
and a MemoryError).  No torch: ``onparse train`` checks its options before importing it.
"""

MAX_LAYERS = 64
MAX_WIDTH = 1 << 16
MAX_VOCAB = 10_000_000
MAX_PARAMETERS = 2_000_000_000


def parameter_count(vocab_size: int, embedding_size: int, hidden_size: int, n_layers: int, chunk_size: int) -> int:
    """The number of weights of an ON-LSTM language model of these sizes (tied decoder), computed.

    >>> parameter_count(10000, 200, 400, 3, 10)
    4874400
    """
    count = vocab_size * (embedding_size + 1)
    n_in = embedding_size
    for layer in range(n_layers):
        n_out = embedding_size if layer == n_layers - 1 else hidden_size
        gates = 2 * (n_out // chunk_size) + 4 * n_out
        count += gates * (n_in + n_out + 2)
        n_in = n_out
    return count


def check_sizes(vocab_size: int, embedding_size: int, hidden_size: int, n_layers: int, chunk_size: int) -> None:
    """ValueError naming the first size over its bound, or a model too large altogether."""
    for name, value, bound in (("n_layers", n_layers, MAX_LAYERS), ("embedding_size", embedding_size, MAX_WIDTH),
                               ("hidden_size", hidden_size, MAX_WIDTH), ("chunk_size", chunk_size, MAX_WIDTH),
                               ("vocab_size", vocab_size, MAX_VOCAB)):
        if value > bound:
            raise ValueError(f"{name} {value:,} is larger than onparse allows ({bound:,})")
    count = parameter_count(vocab_size, embedding_size, hidden_size, n_layers, chunk_size)
    if count > MAX_PARAMETERS:
        raise ValueError(f"a model of {count:,} parameters is larger than onparse allows ({MAX_PARAMETERS:,}); "
                         "choose smaller sizes")

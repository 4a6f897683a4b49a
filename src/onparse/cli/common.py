"""Options and helpers that several command modules share (one definition each)."""
import click

MODEL_HELP = ("Model checkpoint written by `onparse train`, or a bundle of several; repeat to average the "
              "trees of several models [default: the model bundled with onparse; see `onparse info`].")


def model_option(func):
    """``--model/-m PATH``, repeatable; the values arrive as ``model_paths`` (a tuple; empty:
    the bundled model)."""
    return click.option("--model", "-m", "model_paths", type=click.Path(dir_okay=False), multiple=True,
                        metavar="CHECKPOINT", help=MODEL_HELP)(func)


def members_options(func):
    """``--layer`` and ``--decode`` as lists; the values arrive as ``layer`` and ``decoder``
    (None: the model's own members: a bundle's, or layer 2 with the paper's decoder)."""
    func = click.option("--decode", "decoder", default=None, metavar="NAME[,NAME]",
                        help="Decoder(s): onlstm (the paper's greedy top-down rule), split (the unbiased "
                             "binary split), a comma-separated list, or all  [default: onlstm, or a "
                             "bundle's own members].")(func)
    func = click.option("--layer", default=None, metavar="N[,N]",
                        help="Layer(s) (1-based) whose master-forget distances are decoded: a number, a "
                             "comma-separated list, or all; with several, the trees of every model x "
                             "layer x decoder are averaged  [default: 2, or a bundle's own members].")(func)
    return func


def decoder_list(text: str):
    """``--decode`` value -> list of decoder names; a bad value is a usage error (exit 2)."""
    from ..decode import DECODERS

    if text == "all":
        return list(DECODERS)
    names = [part.strip() for part in text.split(",") if part.strip()]
    bad = [n for n in names if n not in DECODERS]
    if bad or not names:
        raise click.BadParameter(f"expected {', '.join(DECODERS)}, a comma-separated list or all, got {text!r}",
                                 param_hint="--decode")
    return list(dict.fromkeys(names))


def load_parser(model_paths, device, layer=None, decoder=None, batch_size=None):
    """An :class:`onparse.api.Parser` over ``model_paths`` (empty: the bundled model) on
    ``device``; ``layer`` / ``decoder``: the option strings (None: the models' own members).
    Errors are one-line OnparseErrors (files) or usage errors (option values)."""
    from ..api import load
    from ..bundle import default_members

    parser = load(list(model_paths) or None, device, batch_size=batch_size)
    if layer is None and decoder is None:
        return parser
    n_layers = min(m.model.config.n_layers for m in parser.models)
    layers = layer_list(layer or "2", n_layers, allow_all=True)
    decoders = decoder_list(decoder or "onlstm")
    return parser.with_members(default_members(len(parser.models), layers, decoders))


def device_option(func):
    """``--device auto|cpu|cuda|cuda:N``."""
    return click.option("--device", default="auto", show_default=True,
                        help="auto (a GPU when there is one), cpu, cuda or cuda:N.")(func)


def model_name(model_paths) -> str:
    """How the models are named in captions and reports."""
    from ..pretrained import DEFAULT_NAME

    return DEFAULT_NAME if not model_paths else " + ".join(str(p) for p in model_paths)


def layer_list(text: str, n_layers: int, allow_all: bool = True):
    """``--layer`` value -> list of 1-based layers: a number, a comma-separated list, or
    ``all`` when allowed; a bad value is a usage error (exit 2)."""
    text = str(text)
    if allow_all and text == "all":
        return list(range(1, n_layers + 1))
    layers = []
    for part in text.split(","):
        try:
            layer = int(part)
        except ValueError:
            raise click.BadParameter(f"expected a layer number, a comma-separated list{' or all' if allow_all else ''}, "
                                     f"got {text!r}", param_hint="--layer") from None
        if not 1 <= layer <= n_layers:
            raise click.BadParameter(f"layer {layer} does not exist: the model has {n_layers} layers (1..{n_layers})",
                                     param_hint="--layer")
        layers.append(layer)
    return list(dict.fromkeys(layers))

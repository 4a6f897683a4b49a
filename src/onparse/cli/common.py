"""Options and helpers that several command modules share (one definition each)."""
import click

MODEL_HELP = ("Model checkpoint written by `onparse train` "
              "[default: the model bundled with onparse; see `onparse info`].")


def model_option(func):
    """``--model/-m PATH``; the value arrives as ``model_path`` (None: the bundled model)."""
    return click.option("--model", "-m", "model_path", type=click.Path(dir_okay=False), default=None,
                        metavar="CHECKPOINT", help=MODEL_HELP)(func)


def device_option(func):
    """``--device auto|cpu|cuda|cuda:N``."""
    return click.option("--device", default="auto", show_default=True,
                        help="auto (a GPU when there is one), cpu, cuda or cuda:N.")(func)


def load_model(model_path, device):
    """Load ``model_path`` (None: the bundled model) on ``device``; a LoadedModel.  Errors are
    one-line OnparseErrors."""
    from ..checkpoint import load_model as load
    from ..distances import resolve_device
    from ..pretrained import resolve

    return load(resolve(model_path), resolve_device(device))


def model_name(model_path) -> str:
    """How a model is named in captions and reports."""
    from ..pretrained import DEFAULT_NAME

    return DEFAULT_NAME if model_path is None else str(model_path)


def layer_list(text: str, n_layers: int, allow_all: bool):
    """``--layer`` value -> list of 1-based layers: a number, or ``all`` when allowed; a bad
    value is a usage error (exit 2)."""
    if allow_all and text == "all":
        return list(range(1, n_layers + 1))
    try:
        layer = int(text)
    except ValueError:
        raise click.BadParameter(f"expected a layer number{' or all' if allow_all else ''}, got {text!r}",
                                 param_hint="--layer") from None
    if not 1 <= layer <= n_layers:
        raise click.BadParameter(f"layer {layer} does not exist: the model has {n_layers} layers (1..{n_layers})",
                                 param_hint="--layer")
    return [layer]

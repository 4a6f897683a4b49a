"""Options and helpers that several command modules share (one definition each)."""
import os
import re

import click

MODEL_HELP = ("Model checkpoint written by `onparse train` "
              "[default: the model bundled with onparse; see `onparse info`].")


def model_option(func):
    """``--model/-m PATH``; the value arrives as ``model_path`` (None: the bundled model).
    Brings ``--no-verify`` along: every command that loads a model can skip its checksum."""
    func = no_verify_option(func)
    return click.option("--model", "-m", "model_path", type=click.Path(dir_okay=False), default=None,
                        metavar="CHECKPOINT", help=MODEL_HELP)(func)


def _skip_checksums(ctx, param, value):
    # Scoped to the command's context: the next command (or test) verifies again.
    if value:
        from ..checkpoint import checksums_unverified

        ctx.with_resource(checksums_unverified())
    return value


def no_verify_option(func):
    """``--no-verify``: load checkpoints whose weights do not match their recorded checksum.
    Takes effect for the command it is given to; no parameter reaches the function."""
    return click.option("--no-verify", is_flag=True, expose_value=False, callback=_skip_checksums,
                        help="Load the model even if its weights do not match the checksum recorded "
                             "in it (a damaged file; the results may be wrong).")(func)


def _limit_lines(ctx, param, value):
    from ..safeio import line_limit_set

    ctx.with_resource(line_limit_set(value))
    return value


def line_limit_option(func):
    """``--max-line-bytes N``: the longest input line the command reads (a longer one is an
    error naming it, instead of memory growing on a file without newlines)."""
    from ..safeio import MAX_LINE_BYTES

    return click.option("--max-line-bytes", type=click.IntRange(min=1), default=MAX_LINE_BYTES,
                        show_default=True, expose_value=False, callback=_limit_lines,
                        help="Longest input line, in bytes; a longer line is an error naming it.")(func)


_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


class DeviceType(click.ParamType):
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N``; anything else (``meta``, ``mps``) is a usage
    error, since onparse runs on those only."""

    name = "DEVICE"

    def convert(self, value, param, ctx):
        if isinstance(value, str) and _DEVICE.fullmatch(value.strip().lower()):
            return value.strip().lower()
        self.fail(f"{value!r} is not a device onparse runs on: use auto, cpu, cuda or cuda:N", param, ctx)


def device_option(func):
    """``--device auto|cpu|cuda|cuda:N``."""
    return click.option("--device", type=DeviceType(), default="auto", show_default=True,
                        help="auto (a GPU when there is one), cpu, cuda or cuda:N.")(func)


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name the same file (through links and ``..``); ``-`` and
    None name no file."""
    if a in (None, "-") or b in (None, "-"):
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:                          # one does not exist (yet): compare the names
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_overwrite(target, option: str, inputs) -> None:
    """A usage error when the output ``target`` of ``option`` is one of ``inputs`` (pairs of a
    description and a path): writing it would destroy what is being read."""
    for what, path in inputs:
        if same_file(target, path):
            raise click.BadParameter(f"{target} is the {what}; writing there would destroy it",
                                     param_hint=option)


def check_writable(target, option: str) -> None:
    """A usage error, before any work, when the file ``target`` cannot be written."""
    if target in (None, "-"):
        return
    if os.path.isdir(target):
        raise click.BadParameter(f"{target} is a folder", param_hint=option)
    folder = os.path.dirname(os.path.abspath(target))
    if os.path.exists(target):
        writable = os.access(target, os.W_OK)
    else:
        writable = os.path.isdir(folder) and os.access(folder, os.W_OK)
    if not writable:
        raise click.BadParameter(f"cannot write {target}", param_hint=option)


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

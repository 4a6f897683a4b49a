"""``onparse info``: what a model is (the bundled one by default): :func:`onparse.describe_file`."""
import click

from ..files.safeio import dumps
from .common import model_option


@click.command("info")
@model_option(help_text="The model to describe: a checkpoint, a run folder (best.pt, else last.pt) or a bundle "
                        "[default: the model bundled with onparse].")
@click.option("--json", "as_json", is_flag=True, help="Print the config and metadata as JSON.")
def info_command(model_paths, no_verify, as_json):
    """Describe a model: architecture, training corpus and recipe, perplexity and recorded
    parsing scores.  Without --model: the model bundled with onparse (the one `onparse induce`
    and `onparse eval` use by default).

    \b
    onparse info
    onparse info --model runs/small/best.pt --json
    """
    from .. import describe_file

    if len(model_paths) > 1:
        raise click.UsageError("onparse info describes one model file at a time")
    described = describe_file(model_paths[0] if model_paths else None, as_dict=as_json, verify=not no_verify)
    # default=str: metadata may hold values JSON has no type for (tensors, from other tools).
    click.echo(dumps(described, indent=2, default=str) if as_json else described)


def register(group: click.Group) -> None:
    group.add_command(info_command)

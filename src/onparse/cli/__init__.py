"""The ``onparse`` command group.  Commands live in the modules of this package, one per
concern; each is a thin shell over a Python function of the library.

Exit codes: 0 success, 1 data errors (:class:`~onparse.errors.OnparseError`, one line on
stderr), 2 usage errors (click's own).  A closed stdout (``onparse induce big.txt | head``)
ends the program quietly with status 0.
"""
import os
import sys

import click

from .. import __version__
from ..errors import OnparseError


class _Group(click.Group):
    """A click group that reports OnparseError in one line and exits quietly on a broken pipe."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OnparseError as err:
            click.echo(f"error: {err}", err=True)
            ctx.exit(1)
        except BrokenPipeError:
            _quiet_broken_pipe()
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)


def _quiet_broken_pipe():
    # The reader went away (`| head`): point stdout at devnull so the interpreter's final
    # flush does not raise again, and exit 0 as other Unix filters do.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(0)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="onparse")
def main():
    """Unsupervised constituency parsing with Ordered-Neurons LSTMs (ON-LSTM).

    \b
    Induce trees:    onparse induce corpus.txt > trees.txt
    Score a model:   onparse eval --gold wsj10 --layer all --decode all
    Score trees:     onparse eval --gold wsj10 trees.txt
    Baselines:       onparse baseline --gold wsj10 --kind right --score
    Train a model:   onparse train --preset small --out runs/small
    The bundled model: onparse info
    """


def _register():
    # Each command module adds its commands to `main` (imported here, after `main` exists).
    from . import figures, info, parsing, scoring, training

    for module in (scoring, training, parsing, figures, info):
        module.register(main)


_register()

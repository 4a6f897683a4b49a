"""How ``onparse train --family lm`` trains a language model: :data:`FAMILY` (see
:class:`onparse.training.family.Family`), listed in :mod:`onparse.registry`.

A module of its own, torch-free, that the training loop does not import: the command line reads
the declaration at start-up, and the loop (:mod:`onparse.lm.training.train`) is imported only
when a run starts.
"""
from typing import Any, Dict, Optional

from ...training.family import Family
from .config import PRESETS, TrainConfig


def start(preset: Optional[str], spec, values: Dict[str, Any], options):
    """:attr:`onparse.training.family.Family.start` of the language model: the run's settings
    (:func:`onparse.lm.training.train.settings`; ValueError for a bad one), then its training."""
    from . import train as run             # torch, once a run starts

    config, spec, name = run.settings(preset, spec, values, resume_from=options.out if options.resume else None,
                                      verify=options.verify)
    return lambda: run.train(config, spec, options, name)


#: ``onparse train --family lm``: its presets are whole settings.
FAMILY = Family("lm", PRESETS, TrainConfig, start, noun="language model")

"""How ``onparse train --family grammar`` trains a neural PCFG: :data:`FAMILY` (see
:class:`onparse.training.family.Family`), listed in :mod:`onparse.registry`.

A module of its own, torch-free, that the training loop does not import: the command line reads
the declaration at start-up, and the loop (:mod:`onparse.grammar.train`) is imported only when a
run starts.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..training.family import Family
from .config import GRAMMAR_PRESETS, SIZE_OPTIONS, GrammarConfig
from .health import collapse_alarm
from .settings import GrammarTraining


def start(preset: Optional[str], spec, values: Dict[str, Any], options):
    """:attr:`onparse.training.family.Family.start` of the grammar: its sizes and settings
    (:func:`onparse.grammar.train.run_settings`; ValueError for a bad one), then its training."""
    from . import train as run                 # torch, once a run starts

    sizes = {k: v for k, v in values.items() if k in SIZE_OPTIONS}
    overrides = {k: v for k, v in values.items() if k not in SIZE_OPTIONS}
    sizes, settings, spec, preset = run.run_settings(preset, spec, sizes, overrides,
                                                     resume_from=options.out if options.resume else None,
                                                     verify=options.verify)
    return lambda: run.train(sizes, settings, spec, options, preset)


#: ``onparse train --family grammar``: its presets are sizes; its loop neither starts from a
#: checkpoint (``--init-from``) nor autocasts (``--amp``), so it refuses both.
FAMILY = Family("grammar", GRAMMAR_PRESETS, GrammarTraining, start, label="Grammar", noun="grammar",
                alarm=collapse_alarm, sizes=SIZE_OPTIONS, size_fields=GrammarConfig, folder="runs/grammar-{preset}",
                refuses=("init_from", "amp"))

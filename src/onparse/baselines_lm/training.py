"""A recurrent baseline as the language model's training run trains it
(:class:`onparse.lm.training.start.Architecture`): this package's model, presets and file."""
from typing import Any, Dict, Optional

from ..lm.training.start import Architecture
from ..lm.training.train import settings, train
from .config import presets
from .file import check_recurrent, load_recurrent, save_recurrent
from .model import RecurrentLM


def architecture(settings_class: type) -> Architecture:
    """What a run of ``settings_class`` (:class:`~onparse.baselines_lm.config.LSTMTraining` or
    :class:`~onparse.baselines_lm.config.GRUTraining`) builds, writes and reads back."""
    cell = settings_class.CELL

    def check(blob, path, *, verify: bool = True):
        return check_recurrent(blob, path, verify=verify, cell=cell)
    return Architecture(presets(settings_class), settings_class, RecurrentLM, save_recurrent, check, load_recurrent)


def start(settings_class: type, preset: Optional[str], spec, values: Dict[str, Any], options):
    """The checked settings of a run of ``settings_class`` (new, or the saved run's with
    ``--resume``), then the function that trains it."""
    arch = architecture(settings_class)
    config, spec, name = settings(preset, spec, values, resume_from=options.out if options.resume else None,
                                  verify=options.verify, arch=arch)
    return lambda: train(config, spec, options, name, arch)

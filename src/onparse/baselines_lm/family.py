"""How ``onparse train --family lstm`` and ``--family gru`` train a recurrent baseline:
:data:`LSTM_FAMILY` and :data:`GRU_FAMILY` (see :class:`onparse.training.family.Family`), listed in
:mod:`onparse.registry`.  Their presets are the language model's (the same sizes, text and
budget), their run is the language model's (:mod:`onparse.lm.training.train`) with this
package's model and file.  Torch-free: the run is imported when one starts.
"""
from typing import Any, Dict, Optional

from ..training.family import Family
from .config import GRUTraining, LSTMTraining, presets


def _start(settings_class: type):
    """:attr:`onparse.training.family.Family.start` of ``settings_class``'s family."""
    def start(preset: Optional[str], spec, values: Dict[str, Any], options):
        return _run(settings_class, preset, spec, values, options)
    return start


def _run(settings_class: type, preset: Optional[str], spec, values: Dict[str, Any], options):
    """The run's settings (ValueError for a bad one), then its training by the language model's recipe."""
    from . import training                     # torch, once a run starts

    return training.start(settings_class, preset, spec, values, options)


#: ``onparse train --family lstm`` / ``gru``: the language model's presets; no --init-from.
LSTM_FAMILY = Family("lstm", presets(LSTMTraining), LSTMTraining, _start(LSTMTraining), label="LSTM",
                     noun="LSTM language model", folder="runs/lstm-{preset}", refuses=("init_from",))
GRU_FAMILY = Family("gru", presets(GRUTraining), GRUTraining, _start(GRUTraining), label="GRU",
                    noun="GRU language model", folder="runs/gru-{preset}", refuses=("init_from",))

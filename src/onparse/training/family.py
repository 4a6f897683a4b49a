"""What ``onparse train --family NAME`` needs to know of a kind that trains itself: :class:`Family`.

Each trainable kind declares one, torch-free, in its own package (its presets, its settings
class, its sizes if presets hold sizes, its run folder, its ``start`` entry), and
:data:`onparse.registry.FAMILIES` lists them; the command line builds its options and refusals
from those declarations and never asks which family it holds.  No torch here: the command line
reads the declarations at start-up.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, Dict, Mapping, Optional, Tuple


@dataclass(frozen=True)
class Family:
    """One trainable kind, as ``onparse train`` sees it.

    ``start(preset, spec, values, options)`` checks a run's settings (``preset``: a name, or None
    on a resume that keeps the run's own; ``spec``: the corpus, or None likewise; ``values``: the
    option values given, by field name; ``options``: :class:`onparse.training.options.RunOptions`)
    and returns the function that trains it, so that a bad setting is a ``ValueError`` before any
    training (a usage error) and nothing that training raises is taken for one.
    """

    #: The ``--family`` value.
    name: str
    #: Preset name -> the preset (a settings object, or the sizes of the model: :attr:`sizes`).
    presets: Mapping[str, Any]
    #: The dataclass of its settings: one ``--field-name`` option per field.
    settings: type
    #: See the class docstring.
    start: Callable[..., Callable[[], Any]]
    #: How its options are introduced in ``--help`` when another family's come first (``Grammar``).
    label: str = ""
    #: What one run trains, in words (``fit``'s plan: "about 3 epoch(s) per language model").
    noun: str = "model"
    #: ``alarm(epoch_record, grace=...)``: why an epoch of its run is not learning (a line), or None;
    #: read by a selection to leave such an epoch out (None: the kind has no such check).
    alarm: Optional[Callable[..., Optional[str]]] = None
    #: Size field -> its option (``n_nonterminals`` -> ``--nonterminals``), for presets that are sizes.
    sizes: Mapping[str, str] = field(default_factory=dict)
    #: The dataclass declaring those sizes (their help and checks).
    size_fields: Optional[type] = None
    #: The default run folder (``runs/{preset}``).
    folder: str = "runs/{preset}"
    #: Options of ``onparse train`` beyond the settings that it does not take (``init_from``, ``amp``).
    refuses: Tuple[str, ...] = ()
    #: Settings that name a model file (a student's ``teacher``): the command line loads each as
    #: ``-m`` does and hands ``start`` the loaded :class:`onparse.api.Parser` in its place.
    models: Tuple[str, ...] = ()

    def setting_fields(self) -> Dict[str, Any]:
        """Its settings' dataclass fields, by name."""
        return {f.name: f for f in fields(self.settings)}

    def option_names(self) -> Tuple[str, ...]:
        """Its settings' names and then its sizes', as its ``onparse train`` options are named."""
        return (*self.setting_fields(), *self.sizes)

    def default_epochs(self, preset: str) -> Optional[int]:
        """The epochs a run of ``preset`` trains when not told: the preset's own (a preset that is
        whole settings), else its settings' default (None: neither says)."""
        chosen = self.presets.get(preset)
        epochs = getattr(chosen, "epochs", None)
        return epochs if epochs is not None else getattr(self.settings(), "epochs", None)

    def out(self, preset: str) -> str:
        """The run folder when ``--out`` is not given."""
        return self.folder.format(preset=preset)

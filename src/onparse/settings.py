"""One way to declare a setting of a config dataclass, and one check of every setting.

Every config onparse stores or takes from options (a model's sizes, a training run's
hyperparameters, a student's sizes and training, a grammar's sizes and training) declares each
field with :func:`setting`: its default, its help text (which ``--help`` shows) and what values
it takes (:data:`CHECKS`).  :func:`check_settings` then checks every field the same way and raises
:class:`SettingError`, which is both a ``ValueError`` (for code that builds configs) and an
:class:`onparse.errors.OnparseError` (a one-line message on the command line).
:class:`DictConfig` gives a config its ``to_dict`` / ``from_dict`` as files store it.  No torch.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, Optional, Tuple

from .errors import OnparseError

#: What values a setting takes: ``count`` an integer of at least ``least`` (1 unless given) and
#: at most ``most`` when given; ``probability`` a number in [0, 1); ``fraction`` in [0, 1];
#: ``positive`` a finite number above 0; ``non_negative`` a finite number (an integer for an int
#: field) of at least 0; ``choice`` one of the strings ``choices``.
CHECKS = ("count", "probability", "fraction", "positive", "non_negative", "choice")


class SettingError(OnparseError, ValueError):
    """A setting with a value it does not take (one line, naming the setting)."""


@dataclass(frozen=True)
class Spec:
    """A setting's default, help and check, declared once and given to every config that has
    the setting (:meth:`field`)."""

    default: Any
    help: str
    check: str
    least: Optional[float] = None
    most: Optional[float] = None
    choices: Tuple[str, ...] = ()

    def field(self, **metadata):
        return field(default=self.default, metadata={"help": self.help, "check": self.check, "least": self.least,
                                                     "most": self.most, "choices": self.choices, **metadata})


def setting(default: Any, help: str, check: str, least: Optional[float] = None, most: Optional[float] = None,
            choices: Tuple[str, ...] = ()):
    """A dataclass field declared as a setting (module docstring); ``default`` may be
    ``dataclasses.MISSING`` for a setting that must be given."""
    if check not in CHECKS:
        raise ValueError(f"unknown check {check!r}")
    if (check == "choice") != bool(choices):
        raise ValueError("a choice setting, and only one, names its choices")
    return Spec(default, help, check, least, most, tuple(choices)).field()


def check_settings(config: Any) -> None:
    """Check every setting of the frozen dataclass ``config`` by its declared check, turning
    integral numbers of any type into ``int`` and real ones into ``float``; SettingError at the
    first value it does not take."""
    for f in fields(config):
        check = f.metadata.get("check")
        if check is None:
            continue
        value = getattr(config, f.name)
        if check == "choice":
            if value not in f.metadata["choices"]:
                raise SettingError(f"{f.name} must be one of {', '.join(f.metadata['choices'])}, got {value!r}")
            continue
        object.__setattr__(config, f.name, _checked(f.name, value, check, f.metadata.get("least"),
                                                    f.metadata.get("most"), f.type in (int, "int")))


def _checked(name: str, value: Any, check: str, least, most, integral: bool):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SettingError(f"{name} must be {'an integer' if integral else 'a number'}, got {value!r}")
    if check == "count" or integral:
        if not isinstance(value, numbers.Integral):
            raise SettingError(f"{name} must be an integer, got {value!r}")
        value = int(value)
    elif not math.isfinite(value):          # inf and nan pass every comparison below
        raise SettingError(f"{name} must be a finite number, got {value!r}")
    else:
        value = float(value)
    if check == "count":
        least = 1 if least is None else least
        if value < least or (most is not None and value > most):
            bound = f"an integer in {least:,}..{most:,}" if most is not None else f"at least {least:,}"
            raise SettingError(f"{name} must be {bound}, got {value!r}")
    elif check == "probability" and not 0.0 <= value < 1.0:
        raise SettingError(f"{name} must be a probability in [0, 1), got {value!r}")
    elif check == "fraction" and not 0.0 <= value <= 1.0:
        raise SettingError(f"{name} must be in [0, 1], got {value!r}")
    elif check == "positive" and not value > 0:
        raise SettingError(f"{name} must be positive, got {value!r}")
    elif check == "non_negative" and value < 0:
        raise SettingError(f"{name} must not be negative, got {value!r}")
    return value


def help_of(config_class: Any, name: str) -> str:
    """The help text a setting declares (for ``--help``)."""
    return next(f.metadata["help"] for f in fields(config_class) if f.name == name)


def defaults_of(config_class: Any) -> dict:
    """Setting name -> default, for the settings that have one."""
    return {f.name: f.default for f in fields(config_class) if f.default is not MISSING}


class DictConfig:
    """``to_dict`` / ``from_dict`` of a config dataclass as a file or a checkpoint stores it;
    ``WHAT`` names the config in errors (``"model config must be a dict"``, ``"unknown model
    config keys: ..."``)."""

    WHAT = "config"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d):
        """Inverse of :meth:`to_dict`; ``ValueError`` for something not a dict, unknown keys, or
        values the config refuses."""
        if not isinstance(d, dict):
            raise SettingError(f"{cls.WHAT} must be a dict, got {type(d).__name__}")
        missing = sorted(f.name for f in fields(cls) if f.default is MISSING and f.name not in d)
        if missing:
            raise SettingError(f"missing {cls.WHAT} keys: {', '.join(missing)}")
        return cls(**known_fields(cls, d, f"{cls.WHAT} keys"))


def known_fields(cls, values: dict, what: str) -> dict:
    """``values`` if every key names a field of the dataclass ``cls``, else SettingError
    naming ``what`` (a config read from a file or from options)."""
    unknown = sorted(set(values) - {f.name for f in fields(cls)})
    if unknown:
        raise SettingError(f"unknown {what}: {', '.join(map(str, unknown))}")
    return values

"""The shapes of JSON records read back from files (a fit's ``fit.json``, the rows of its tree
cache), and the one check of a record against its shape: a record damaged by hand or by a
crafted file is refused where it is read, in words naming the field, never a ``KeyError`` or a
``TypeError`` later.  No torch.

A shape is a Python type (``int``, ``str``, ``bool``; a ``bool`` is never a number), a tuple of
them, or one of the classes below; ``None`` is accepted only where :class:`Opt` says so.

>>> check({"runs": ["lm-1"], "parallel": 2}, Obj({"runs": ListOf(str), "parallel": int}))
>>> check({"runs": "lm-1"}, Obj({"runs": ListOf(str)}))
Traceback (most recent call last):
...
onparse.files.schema.ShapeError: runs: expected a list, got 'lm-1'
"""
from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Optional

#: A number: an int or a float (not a bool).
NUMBER = (int, float)
_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "a whole number",
          float: "a number", type(None): "null"}


def decode(text) -> Any:
    """The JSON value of ``text`` (str or bytes); ValueError for anything that is not one, a crafted
    value nested too deep for the decoder among them (it would raise RecursionError), so that
    every reader of a record treats it as the damaged record it is.

    >>> decode('{"a": [1]}')
    {'a': [1]}
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deep to be a record") from None


class ShapeError(ValueError):
    """A record that does not have its shape; the message says where (``plan.runs[2]``) and what."""


class Opt:
    """``shape``, or null."""

    def __init__(self, shape: Any):
        self.shape = shape


class ListOf:
    """A list whose items have ``shape``."""

    def __init__(self, shape: Any):
        self.shape = shape


class MapOf:
    """An object whose values have ``shape`` (and whose keys pass ``key``, when given)."""

    def __init__(self, shape: Any, key: Optional["Where"] = None):
        self.shape, self.key = shape, key


class Obj:
    """An object with the ``required`` keys and perhaps the ``optional`` ones, each of its shape
    (other keys are let through: a newer version may record more)."""

    def __init__(self, required: Mapping[str, Any], optional: Optional[Mapping[str, Any]] = None):
        self.required, self.optional = dict(required), dict(optional or {})


class Where:
    """A value of ``shape`` for which ``test`` holds (``what`` says what it must be)."""

    def __init__(self, shape: Any, test: Callable[[Any], bool], what: str):
        self.shape, self.test, self.what = shape, test, what


def check(value: Any, shape: Any, where: str = "") -> None:
    """ShapeError when ``value`` (read from JSON) does not have ``shape``."""
    if isinstance(shape, Opt):
        if value is not None:
            check(value, shape.shape, where)
    elif isinstance(shape, Where):
        check(value, shape.shape, where)
        if not shape.test(value):
            raise ShapeError(f"{where or 'the record'}: expected {shape.what}, got {_show(value)}")
    elif isinstance(shape, ListOf):
        _expect(value, list, where)
        for i, item in enumerate(value):
            check(item, shape.shape, f"{where}[{i}]")
    elif isinstance(shape, MapOf):
        _expect(value, dict, where)
        for key, item in value.items():
            if shape.key is not None:
                check(key, shape.key, f"{_join(where, key)} (a key)")
            check(item, shape.shape, _join(where, key))
    elif isinstance(shape, Obj):
        _expect(value, dict, where)
        for key, item_shape in shape.required.items():
            if key not in value:
                raise ShapeError(f"{_join(where, key)}: missing")
            check(value[key], item_shape, _join(where, key))
        for key, item_shape in shape.optional.items():
            if key in value:
                check(value[key], item_shape, _join(where, key))
    else:
        _expect(value, shape, where)


def _expect(value: Any, types: Any, where: str) -> None:
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        wanted = " or ".join(dict.fromkeys(_NAMES.get(t, t.__name__) for t in types))
        raise ShapeError(f"{where or 'the record'}: expected {wanted}, got {_show(value)}")


def _show(value: Any) -> str:
    if isinstance(value, (dict, list, str, bool, type(None))):
        return _NAMES[type(value)] if not isinstance(value, str) or len(value) > 20 else repr(value)
    return repr(value)[:20]


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else str(key)

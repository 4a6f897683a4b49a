"""What the Python API is given, checked in one place: each argument's type and value.

A wrong argument is refused before any work, by an error that names the argument and says what
it takes (``batch takes a list of sentences ..., not a str``), never by an AttributeError from deep
inside.  A wrong type is an :class:`ArgumentTypeError` (a ``TypeError``), a wrong value an
:class:`ArgumentValueError` (a ``ValueError``); both are :class:`onparse.OnparseError` too, so the
command line reports them in one line and ``except onparse.OnparseError`` still catches them.

A sentence is raw text (a ``str``, tokenised as ``onparse induce`` does) or a list of tokens used
as given; a token holds at least one character that is not whitespace.  Text holding a NUL
character is refused (:func:`onparse.text.tokens.text_problem`).
"""
from collections.abc import Iterable, Mapping
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

from .errors import OnparseError
from .text.tokens import text_problem


class ArgumentTypeError(OnparseError, TypeError):
    """An API argument of the wrong type."""


class ArgumentValueError(OnparseError, ValueError):
    """An API argument of the right type but a value the function cannot use."""


#: What a sentence is, as the messages say it.
SENTENCE = "a str of raw text or a list of str tokens"
_BYTES = (bytes, bytearray, memoryview)


def _type_name(value: Any) -> str:
    return type(value).__name__


def _decode_hint(value: Any) -> str:
    return ": decode it first (data.decode('utf-8'))" if isinstance(value, _BYTES) else ""


def sentence(value: Any, name: str = "sentence") -> Union[str, List[str]]:
    """``value`` as a sentence: the str itself, or its tokens as a list.

    >>> sentence("The cat sat."), sentence(("The", "cat"))
    ('The cat sat.', ['The', 'cat'])
    """
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            raise ArgumentValueError(f"{name} {problem}")
        return value
    if isinstance(value, _BYTES) or isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"{name} must be {SENTENCE}, not {_type_name(value)}{_decode_hint(value)}")
    tokens = list(value)
    for position, token in enumerate(tokens, 1):
        if not isinstance(token, str):
            raise ArgumentTypeError(f"{name}: token {position} is a {_type_name(token)}; a token list holds str "
                                    f"tokens{_decode_hint(token)}")
        if not token.strip():
            raise ArgumentValueError(f"{name}: token {position} is {'empty' if not token else 'only whitespace'}; "
                                     "every token needs a character that is not whitespace")
        problem = text_problem(token)
        if problem:
            raise ArgumentValueError(f"{name}: token {position} {problem}")
    return tokens


def sentences(value: Any, name: str) -> Iterator[Any]:
    """An iterator over ``value``, a collection of sentences (each checked later by
    :func:`sentence`); a str, bytes or a mapping is refused, since iterating over it would parse
    each character or key as a sentence."""
    if isinstance(value, (str,) + _BYTES) or isinstance(value, Mapping) or not isinstance(value, Iterable):
        hint = " (one sentence: parse_one(sentence), or wrap it in a list)" if isinstance(value, str) else ""
        raise ArgumentTypeError(f"{name} takes a list (or any iterable) of sentences, each {SENTENCE}; "
                                f"not a {_type_name(value)}{hint}{_decode_hint(value)}")
    return iter(value)


def whole(value: Any, name: str, minimum: int = 0, maximum: Optional[int] = None) -> int:
    """``value`` when it is an int (not a bool) within ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{name} must be an int, not {_type_name(value)} ({value!r})")
    if value < minimum or (maximum is not None and value > maximum):
        top = "" if maximum is None else f" and at most {maximum}"
        raise ArgumentValueError(f"{name} must be at least {minimum}{top}, got {value}")
    return value


def choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices``."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a str, one of {', '.join(choices)}; not {_type_name(value)}")
    if value not in choices:
        raise ArgumentValueError(f"unknown {name} {value!r}; choose from {', '.join(choices)}")
    return value


def listed(value: Any, name: str, item: type, example: str, word: Optional[str] = None) -> Optional[Tuple[Any, ...]]:
    """``value`` (None, a list of ``item``, or the one str ``word`` such as ``"all"``) as a
    tuple (or None, or ``word``); a bare str or number is refused with ``example`` as the fix."""
    if value is None or (word is not None and value == word):
        return value
    if isinstance(value, (str,) + _BYTES) or isinstance(value, Mapping) or not isinstance(value, Iterable):
        also = f" or {word!r}" if word is not None else ""
        raise ArgumentTypeError(f"{name} takes a list such as {example}{also}, not a {_type_name(value)} ({value!r})")
    out = tuple(value)
    for v in out:
        if isinstance(v, bool) or not isinstance(v, item):
            raise ArgumentTypeError(f"{name} takes a list of {item.__name__}s such as {example}; "
                                    f"{v!r} is a {_type_name(v)}")
    return out

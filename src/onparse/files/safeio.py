"""Input and output that cannot hurt the user: strict JSON, bounded input lines, short numbers.

* JSON is written without ``NaN`` or ``Infinity`` (strict parsers, ``jq`` and browsers reject
  them): a non-finite number becomes ``null``.
* Input lines are read with a cap on their length, so that a file without newlines
  (``/dev/zero``) is an error naming the line instead of memory growing without bound.
* A perplexity is computed without overflow (:func:`perplexity_of`) and printed with two
  decimals, or in scientific notation when it is huge (a diverging run), never as a 300-digit
  number (:func:`format_ppl`).
* Files are written whole or not at all (:func:`atomic_output`, the one atomic writer), through
  temporary files of one name pattern that one sweep removes (:func:`remove_stale_temp_files`).

No torch here: the command line imports this module at start-up.
"""
import contextlib
import errno
import json
import math
import os
import re
import stat
import tempfile
import textwrap
from typing import IO, Any, Callable, Iterator, List, Optional

from ..errors import OnparseError

#: Default cap on the length of one input line, in bytes (about 150,000 words of English).
MAX_LINE_BYTES = 1_000_000


# -- JSON -------------------------------------------------------------------------------------
def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float (inside dicts, lists and tuples) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):     # keys JSON cannot hold (tuples) are written as text
        return {k if k is None or isinstance(k, (str, int)) else str(k): json_safe(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def dumps(value: Any, **kwargs) -> str:
    """``json.dumps`` that writes strict JSON: non-finite numbers become ``null``.

    ``allow_nan=False`` makes any number that slipped past :func:`json_safe` (a numpy float in
    a custom ``default``) an error here rather than invalid JSON in a file."""
    return json.dumps(json_safe(value), allow_nan=False, **kwargs)


# -- numbers ----------------------------------------------------------------------------------
def perplexity_of(loss: float) -> float:
    """``exp(loss)``, the perplexity of a mean cross-entropy in nats, without overflow: ``inf``
    from a loss of 700 on (``math.exp`` raises past about 709), and for a NaN loss.

    >>> round(perplexity_of(math.log(27.0)), 6), perplexity_of(800.0), perplexity_of(float("nan"))
    (27.0, inf, inf)
    """
    return math.exp(loss) if loss < 700 else math.inf


def format_ppl(value: Optional[float]) -> str:
    """A perplexity for people: ``27.01``, ``3.2e+14`` when huge, ``inf``/``nan``, ``-`` for None.

    >>> format_ppl(27.0123), format_ppl(1e300), format_ppl(float("inf")), format_ppl(None)
    ('27.01', '1e+300', 'inf', '-')
    """
    if value is None:
        return "-"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.2f}" if abs(value) < 1e6 else f"{value:.3g}"


# -- bounded lines ----------------------------------------------------------------------------
def bounded_lines(handle: IO[bytes], name: str, limit: int = MAX_LINE_BYTES,
                  where: Optional[Callable[[int], str]] = None) -> Iterator[bytes]:
    """The raw lines of a binary ``handle`` (line endings kept), each at most ``limit`` bytes
    (``--max-line-bytes``); a longer line is an OnparseError naming it.  A read error
    after the file was opened (``/proc/self/mem``, a failing disk) is an OnparseError too.
    ``where(n)`` names the n-th line read (1-based) in messages [default: ``line n``]."""
    where = where or (lambda n: f"line {n}")
    number = 1
    while True:
        try:
            raw = handle.readline(limit + 1)    # never more than limit + 1 bytes in memory
        except OSError as err:
            raise OnparseError(f"cannot read {name} ({where(number)}): {err.strerror or err}") from None
        if not raw:
            return
        if len(raw) > limit and not raw.endswith(b"\n"):   # limit bytes and still no newline
            raise OnparseError(f"{name} {where(number)}: longer than {limit:,} bytes; pass "
                               f"--max-line-bytes to raise the limit (or split the line)")
        yield raw
        number += 1


def new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0666 less the process umask."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:    # Linux: no umask race
            mask = next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def not_a_file(path) -> Optional[str]:
    """What ``path`` is, in words, when it names no regular file that can be read (None when it
    does): ``not found``, ``a folder``, ``a device``, ``a named pipe (FIFO)``, ``a socket``, ``a
    loop of symbolic links``, ``a broken symbolic link to X``; so that an error says what the
    path is instead of "not found".  Cost: one ``stat``; nothing is opened."""
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "a loop of symbolic links"
        if os.path.islink(path):
            try:
                return f"a broken symbolic link to {os.readlink(path)}"
            except OSError:
                return "a broken symbolic link"
        return "not found" if err.errno == errno.ENOENT else (err.strerror or str(err)).lower()
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def special_file(path) -> bool:
    """Whether ``path`` names something that is neither a regular file nor a folder (a device
    such as ``/dev/null`` or ``/dev/full``, a named pipe).  Output goes straight into it: a
    temporary file renamed onto it would replace the device itself."""
    return os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path)


#: The name of every temporary file onparse writes (:func:`atomic_output`):
#: ``.onparse-PID-NAME.XXXXXXXX.tmp`` beside its target, the writer's pid inside so that
#: :func:`remove_stale_temp_files` knows whose it is.  Names without a pid (``.onparse-X.tmp``)
#: and ``.teacher-trees.XXXXXXXX.tmp.txt`` are those older versions wrote.
TEMP_PREFIX = ".onparse-"
TEMP_PATTERN = re.compile(r"\.onparse-(?:(\d+)-)?.*\.tmp|\.teacher-trees\.\w{8}\.tmp\.txt")


@contextlib.contextmanager
def atomic_output(path) -> Iterator[str]:
    """Write ``path`` all at once or not at all: yields a temporary path in the same folder
    (:data:`TEMP_PATTERN`), renamed onto ``path`` when the block ends without error and removed
    otherwise, with the old file's mode (or the one ``open()`` gives a new file).  A full disk
    leaves the old file, or none: never a truncated one.  A :func:`special_file` (``/dev/null``,
    a pipe) is yielded itself: a rename would replace the device.  An OSError in the block (a full
    disk, a reader gone) is a one-line OnparseError naming ``path``.  The one atomic writer of
    onparse: :func:`onparse.files.checkpoint.write_atomically` ``torch.save``s through it."""
    path = os.fspath(path)
    folder, name = os.path.split(os.path.abspath(path))
    if special_file(path):
        with _naming(path, folder):
            yield path
        return
    with _naming(path, folder):
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-{name[:40]}.", suffix=".tmp", dir=folder)
        os.close(fd)
    try:
        with _naming(path, folder):
            yield tmp
            # mkstemp's 0600 would hide the file from the group: the old file's mode, or open()'s.
            os.chmod(tmp, os.stat(path).st_mode & 0o7777 if os.path.exists(path) else new_file_mode())
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@contextlib.contextmanager
def _naming(path: str, folder: str) -> Iterator[None]:
    """An OSError in the block becomes ``cannot write PATH: why``."""
    try:
        yield
    except OSError as err:
        raise OnparseError(f"cannot write {path}: {write_failure(err, folder)}") from None


def write_failure(err: BaseException, folder: str) -> str:
    """Why writing into ``folder`` failed, in a few words (torch reports a full disk as a
    RuntimeError holding a C++ stack)."""
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    try:
        stats = os.statvfs(folder)
        if stats.f_bavail * stats.f_frsize < (1 << 20):
            return "no space left on device"
    except OSError:
        pass
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    failed = [line for line in lines if "failed" in line]   # torch: "... file write failed"
    line = (failed[-1:] or lines[:1] or [type(err).__name__])[0]
    return textwrap.shorten(line, 200, placeholder=" ...")


def remove_stale_temp_files(folder: str) -> List[str]:
    """Delete the temporary files (:data:`TEMP_PATTERN`) that writers no longer running left in
    ``folder`` (killed during a save); returns their names.  Files of live writers stay, and
    so do those whose pid belongs to another user's process."""
    removed = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return removed
    for name in names:
        match = TEMP_PATTERN.fullmatch(name)
        if match and not (match.group(1) and _alive(int(match.group(1)))):
            try:
                os.unlink(os.path.join(folder, name))
                removed.append(name)
            except OSError:
                pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False                     # ours from before an exec cannot be in progress
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True                      # someone else's process: leave its file alone
    return True


#: The largest text file read whole (gold trees, training logs): far above any treebank.
MAX_TEXT_BYTES = 1 << 30


def read_text(path, name: Optional[str] = None, limit: int = MAX_TEXT_BYTES,
              line_limit: int = MAX_LINE_BYTES) -> str:
    """The UTF-8 text of the file at ``path`` (or of a binary handle), read in bounded pieces:
    each line at most ``line_limit`` bytes and the whole at most ``limit`` bytes, so that
    ``/dev/zero`` or a link to it is a one-line OnparseError naming it, not a process that grows
    until the kernel kills it.  The one reading rule of onparse's inputs: a byte-order mark at
    the start is skipped, and bytes that are not UTF-8 are an OnparseError naming the line."""
    name = name or str(path)
    if hasattr(path, "readline"):
        data = _read_bounded(path, name, limit, line_limit)
    else:
        try:
            with open(path, "rb") as handle:
                data = _read_bounded(handle, name, limit, line_limit)
        except OSError as err:
            raise OnparseError(f"cannot read {name}: {err.strerror or err}") from None
    return decode_utf8(data, name)


class NotUTF8Error(OnparseError):
    """Raised by :func:`decode_utf8` (a one-line OnparseError naming the line)."""


def decode_utf8(data: bytes, name: str) -> str:
    """``data`` as text (a leading byte-order mark dropped); OnparseError naming the line of the
    first byte that is not UTF-8.

    >>> decode_utf8(b"\\xef\\xbb\\xbfa\\nb", "f")
    'a\\nb'
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise NotUTF8Error(f"{name} line {line}: not UTF-8 text (byte 0x{data[err.start]:02x}); "
                           "convert the file to UTF-8") from None


def _read_bounded(handle, name: str, limit: int, line_limit: int) -> bytes:
    parts, total = [], 0
    for line in bounded_lines(handle, name, line_limit):
        total += len(line)
        if total > limit:
            raise OnparseError(f"{name} is larger than {limit:,} bytes: not a file onparse reads whole")
        parts.append(line)
    return b"".join(parts)


def format_duration(seconds: float) -> str:
    """``45s``, ``12m05s``, ``2h03m``; ``?`` when unknown (not finite).

    >>> format_duration(45.2), format_duration(725), format_duration(7380), format_duration(float("nan"))
    ('45s', '12m05s', '2h03m', '?')
    """
    if not math.isfinite(seconds):
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"

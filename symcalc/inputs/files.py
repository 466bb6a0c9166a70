"""Reading a file a user named, safely: one helper for every config.json, ``.toml`` spec,
CSV table, preset, family file and hub-cache file symcalc reads.

- only regular files (``os.stat`` + ``S_ISREG`` before reading, checked again on the open
  descriptor): a FIFO, a device (``/dev/zero``), a socket or a folder is refused, never read;
- at most :data:`FILE_LIMIT` bytes (4 MiB; a config.json is kilobytes);
- UTF-8 text only (an error names the line and column of the first bad byte);
- parsed JSON and TOML nest at most :data:`DEPTH_LIMIT` levels (deeper input, which would
  end in a RecursionError, is refused the same way).

Every failure is one :class:`SymcalcError` naming the file. No pathlib here: presets use it
on the quick path.
"""
from __future__ import annotations

import errno
import os
import stat
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any

from ..errors import SymcalcError

FILE_LIMIT = 4 * 1024 * 1024  # bytes
DEPTH_LIMIT = 100  # nesting levels of a JSON or TOML document


def label_of(path: Any) -> str:
    """The path as shown in an error: at most 100 characters."""
    text = os.fspath(path) if not isinstance(path, str) else path
    text = str(text)
    return text if len(text) <= 100 else text[:48] + "..." + text[-48:]


def _reason(err: OSError) -> str:
    if err.errno == errno.ENAMETOOLONG:
        return "its name is longer than the system allows (File name too long)"
    return err.strerror or str(err)


def read_text(path: Any, label: str | None = None, limit: int = FILE_LIMIT) -> str:
    """The text of the regular file ``path`` (UTF-8, at most ``limit`` bytes)."""
    label = label or label_of(path)
    try:
        st = os.stat(path)
    except OSError as err:
        raise SymcalcError(label, f"cannot be read ({_reason(err)})") from None
    except ValueError:  # an embedded NUL character
        raise SymcalcError(label, "cannot be read (the path holds a NUL character)") from None
    _check_stat(label, st, limit)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as err:
        raise SymcalcError(label, f"cannot be read ({_reason(err)})") from None
    try:
        _check_stat(label, os.fstat(fd), limit)  # the file opened is the file checked
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            raw = f.read(limit + 1)
    except OSError as err:
        raise SymcalcError(label, f"cannot be read ({_reason(err)})") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(raw) > limit:
        raise SymcalcError(label, f"is larger than {_size(limit)}, the limit for files "
                                  "symcalc reads")
    return decode(raw, label)


def decode(raw: bytes, label: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        column = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        raise SymcalcError(label, f"is not UTF-8 text (byte {raw[err.start]:#04x} at line "
                                  f"{line}, column {column})") from None


def _check_stat(label: str, st: os.stat_result, limit: int) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise SymcalcError(label, "is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise SymcalcError(label, "is not a regular file (a FIFO, device or socket); "
                                  "symcalc reads only regular files")
    if st.st_size > limit:
        raise SymcalcError(label, f"is {st.st_size:,} bytes; symcalc reads files of at most "
                                  f"{_size(limit)}")


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n:,} bytes"


def _too_deep(label: str) -> SymcalcError:
    return SymcalcError(label, f"nests deeper than {DEPTH_LIMIT} levels, the limit for files "
                               "symcalc reads")


def check_depth(data: Any, label: str) -> Any:
    """``data`` (parsed JSON or TOML), refused when it nests deeper than DEPTH_LIMIT."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        elif not isinstance(value, list):
            continue
        if depth > DEPTH_LIMIT:
            raise _too_deep(label)
        stack.extend((v, depth + 1) for v in value if isinstance(v, (dict, list)))
    return data


def _parse(loads, text: str, label: str, kind: str) -> Any:
    """``loads(text)`` with its errors as one line naming ``label``; nesting checked."""
    try:
        data = loads(text)
    except RecursionError:
        raise _too_deep(label) from None
    except ValueError as err:  # JSONDecodeError / TOMLDecodeError, and integers over the digit limit
        if "integer string conversion" in str(err):  # Python's advice is not for users
            raise SymcalcError(label, f"is not valid {kind} for symcalc (an integer of more "
                                      "than 4,300 digits; sizes are at most 10**15)") from None
        raise SymcalcError(label, f"is not valid {kind} ({err})") from None
    return check_depth(data, label)


def parse_json(text: str, label: str) -> Any:
    import json

    return _parse(json.loads, text, label, "JSON")


def parse_toml(text: str, label: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return _parse(tomllib.loads, text, label, "TOML")


def read_json(path: Any, label: str | None = None) -> Any:
    label = label or label_of(path)
    return parse_json(read_text(path, label), label)


def read_toml(path: Any, label: str | None = None) -> dict[str, Any]:
    label = label or label_of(path)
    return parse_toml(read_text(path, label), label)

"""symcalc's data files, compiled ahead of time: the parsed, checked form of each TOML file the
report path reads (spec.toml's rules, implementation.toml, the family files, the presets) as
JSON, so that a run reads a few kilobytes of JSON instead of importing a TOML parser and
parsing expressions.

A store (``symcalc/algebra/compiled.store``, ``symcalc/inputs/compiled.store``) is one line
of JSON, an index ``{name: [crc, start, length]}``, followed by the entries' JSON texts (the
byte range ``start``, ``length`` after that line), so a run reads the index line and then
only the entries it uses.
``crc`` is the CRC-32 of the source file's bytes: :func:`load` uses an entry only while its
source file is unchanged; an edited file (or one without an entry) is compiled afresh, so a
store is a cache that cannot be stale in effect. ``python -m symcalc.inputs.compile_data``
rewrites the stores; ``--check`` (run by the tests) names the stale entries. No sympy, no
TOML parser here.
"""
from __future__ import annotations

import gc
import json
import os
import zlib
from functools import lru_cache
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ALGEBRA_STORE = os.path.join(HERE, "algebra", "compiled.store")
INPUTS_STORE = os.path.join(HERE, "inputs", "compiled.store")


def _slice(path: str, start: int, length: int) -> bytes:
    """``length`` bytes of the store at ``path`` from byte ``start`` (a store holds every
    family and every row set; a report reads a few dozen kilobytes of it)."""
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(length)


def decode(raw: bytes) -> Any:
    """JSON bytes as Python values, with the cyclic garbage collector paused: decoding makes
    tens of thousands of lists and dicts, none of them in a cycle, and the collections their
    allocations trigger cost a report several milliseconds (bench/run.py)."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return json.loads(raw)
    finally:
        if paused:
            gc.enable()


@lru_cache(maxsize=None)
def index(path: str) -> tuple[dict[str, list[int]], int]:
    """A store's index and the byte offset of its first entry ({} when it is missing)."""
    try:
        with open(path, "rb") as f:
            head = f.readline()
    except OSError:
        return {}, 0
    try:
        table = decode(head) if head.endswith(b"\n") else {}
    except ValueError:
        return {}, 0
    return (table if isinstance(table, dict) else {}), len(head)


def crc(raw: bytes) -> int:
    return zlib.crc32(raw)


def entry(path: str, name: str, source_crc: int) -> Any:
    """The entry ``name`` of the store at ``path`` if it was compiled from a source with this
    CRC, else None."""
    table, base = index(path)
    found = table.get(name)
    if not found or found[0] != source_crc:
        return None
    start = base + found[1]
    return decode(_slice(path, start, found[2]))


def load(store_path: str, name: str, source: str, build: Callable[[bytes], Any]) -> Any:
    """The compiled form of the file ``source``: the store's entry ``name`` while the file is
    unchanged, else ``build(the file's bytes)`` (which must give the same JSON value)."""
    with open(source, "rb") as f:
        raw = f.read()
    found = entry(store_path, name, crc(raw))
    return build(raw) if found is None else found


def store_bytes(entries: dict[str, tuple[int, Any]]) -> bytes:
    """A store's bytes: ``entries`` maps a name to (source CRC, JSON value)."""
    table: dict[str, list[int]] = {}
    body = bytearray()
    for name in sorted(entries):
        source_crc, value = entries[name]
        text = json.dumps(value, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8")
        table[name] = [source_crc, len(body), len(text)]
        body += text + b"\n"
    head = json.dumps(table, separators=(",", ":"), sort_keys=True).encode("utf-8") + b"\n"
    return head + bytes(body)


def write(path: str, entries: dict[str, tuple[int, Any]]) -> None:
    """Write a store (see :func:`store_bytes`)."""
    with open(path, "wb") as f:
        f.write(store_bytes(entries))
    forget()


def forget() -> None:
    """Drop what was read of the stores (after one is rewritten)."""
    index.cache_clear()


def read(path: str, name: str) -> Any:
    """Entry ``name`` of the store at ``path``, whatever its CRC (KeyError when absent)."""
    table, base = index(path)
    _, start, length = table[name]
    start += base
    return decode(_slice(path, start, length))


def read_toml_bytes(raw: bytes, label: str) -> dict[str, Any]:
    """One of symcalc's own TOML files, parsed (a broken one is a bug, named by its label)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    from .errors import SymcalcError

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise SymcalcError(label, f"is not valid TOML ({err})") from None

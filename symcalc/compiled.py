"""symcalc's data files, compiled ahead of time: the parsed, checked form of each TOML file the
report path reads (spec.toml's rules, implementation.toml, the family files, the presets) as
plain JSON, so that a run reads one JSON file instead of importing a TOML parser and parsing
expressions.

Each store (``symcalc/algebra/compiled.json``, ``symcalc/inputs/compiled.json``) maps an
entry name to ``{"crc": <CRC-32 of the source file's bytes>, "data": <compiled form>}``.
:func:`load` uses an entry only while its source file is unchanged: an edited file (or one
without an entry) is read and compiled afresh, so the stores are a cache that cannot be
stale in effect. ``python -m symcalc.inputs.compile_data`` rewrites them; ``--check`` (run by
the tests) says which entries are stale. No sympy, no TOML parser here.
"""
from __future__ import annotations

import json
import os
import zlib
from functools import lru_cache
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ALGEBRA_STORE = os.path.join(HERE, "algebra", "compiled.json")
INPUTS_STORE = os.path.join(HERE, "inputs", "compiled.json")


@lru_cache(maxsize=None)
def store(path: str) -> dict[str, Any]:
    """A store's entries ({} when it is missing or unreadable)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def crc(raw: bytes) -> int:
    return zlib.crc32(raw)


def read_toml_bytes(raw: bytes) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(raw.decode("utf-8"))


def load(store_path: str, name: str, source: str,
         build: Callable[[dict[str, Any]], Any]) -> Any:
    """The compiled form of the TOML file ``source``: the store's entry ``name`` while the
    file is unchanged, else ``build(parsed TOML)``."""
    with open(source, "rb") as f:
        raw = f.read()
    entry = store(store_path).get(name)
    if isinstance(entry, dict) and entry.get("crc") == crc(raw):
        return entry["data"]
    return build(read_toml_bytes(raw))

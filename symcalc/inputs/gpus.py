"""Accelerators as data: ``symcalc/inputs/gpus.toml`` (its grammar is at its top) and the
files a user adds with ``--gpus FILE``. No sympy here.

An :class:`Accelerator` holds the memory of one device in bytes, exactly as its vendor states
it (``"80 GB"`` = 80 * 10^9, ``"32 GiB"`` = 32 * 2^30), and its peak dense bf16 FLOP/s.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable

from ..algebra.units import parse_amount
from ..errors import SymcalcError
from .files import label_of, read_toml

BUILT_IN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpus.toml")
NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,39}")
FIELDS = ("description", "memory", "bf16", "source", "aliases")
AMOUNT_LIMIT = 40  # characters of a memory or bf16 amount ("80 GB", "989.4 TFLOPs")


@dataclass(frozen=True)
class Accelerator:
    name: str
    description: str
    memory: str  # as the vendor states it, e.g. "80 GB"
    memory_bytes: int
    bf16: str
    bf16_flops: int  # FLOP/s, dense
    source: str

    def fits(self, n_bytes: int) -> bool:
        return n_bytes <= self.memory_bytes


def _whole(field: str, value: Fraction) -> int:
    """A device's bytes or FLOP/s: whole and positive (0 bytes fits nothing, 0 FLOP/s makes
    every time infinite), at most 10**30."""
    if value.denominator != 1:
        raise SymcalcError(field, f"must come to a whole number (got {float(value)})")
    if value <= 0:
        raise SymcalcError(field, f"must be more than 0 (got {int(value)})")
    if value > 10**30:
        raise SymcalcError(field, "must be at most 10**30")
    return int(value)


def _entry(label: str, name: str, table) -> tuple[Accelerator, list[str]]:
    where = f"{label}: [{name}]"
    if not NAME.fullmatch(name):
        raise SymcalcError(where, "a name is a letter then up to 39 letters, digits, '.', '-' "
                                  "or '_'")
    if not isinstance(table, dict):
        raise SymcalcError(where, "must be a table with memory, bf16 and source")
    unknown = sorted(set(table) - set(FIELDS))
    if unknown:
        raise SymcalcError(f"{where} {unknown[0]}", f"is not a field (fields: {', '.join(FIELDS)})")
    for key in ("memory", "bf16", "source"):
        if not isinstance(table.get(key), str) or not table[key].strip():
            raise SymcalcError(f"{where} {key}", "is required, as text (e.g. memory = \"80 GB\", "
                                                 "bf16 = \"989.4 TFLOPs\")")
    for key in ("memory", "bf16"):  # before any number is read: 5,000 digits end here
        if len(table[key].strip()) > AMOUNT_LIMIT:
            raise SymcalcError(f"{where} {key}", f"is {len(table[key].strip()):,} characters "
                                                 f"long; an amount is at most {AMOUNT_LIMIT} "
                                                 "(e.g. \"80 GB\", \"989.4 TFLOPs\")")
    memory = parse_amount(f"{where} memory", table["memory"])
    if memory.kind != "bytes":
        raise SymcalcError(f"{where} memory", f"needs a byte unit, GB or GiB as the vendor "
                                              f"states it (got {table['memory']!r})")
    flops = parse_amount(f"{where} bf16", table["bf16"])
    if flops.kind != "flops":
        raise SymcalcError(f"{where} bf16", f"needs a FLOPs unit, e.g. \"989.4 TFLOPs\" "
                                            f"(got {table['bf16']!r})")
    aliases = table.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and NAME.fullmatch(a)
                                                for a in aliases):
        raise SymcalcError(f"{where} aliases", "must be a list of names")
    acc = Accelerator(name, str(table.get("description", "")), table["memory"].strip(),
                      _whole(f"{where} memory", memory.value), table["bf16"].strip(),
                      _whole(f"{where} bf16", flops.value), table["source"].strip())
    return acc, aliases


def load(files: Iterable[str] = ()) -> dict[str, Accelerator]:
    """Every accelerator by lower-cased name and alias: the built-in ones, then each user
    file's (a user entry of the same name replaces the built-in one)."""
    out: dict[str, Accelerator] = {}
    for path in (BUILT_IN, *files):
        if not str(path).strip():
            raise SymcalcError("--gpus", f"must name a TOML file of accelerators (got {path!r})")
        label = "gpus.toml" if path == BUILT_IN else f"--gpus {label_of(path)}"
        data = read_toml(path, label)
        for name, table in data.items():
            acc, aliases = _entry(label, name, table)
            for key in (name, *aliases):
                out[key.lower()] = acc
    return out


def accelerator(name: str, files: Iterable[str] = ()) -> Accelerator:
    table = load(files)
    found = table.get(str(name).strip().lower())
    if found is None:
        names = sorted({a.name for a in table.values()})
        raise SymcalcError("--gpu", f"unknown accelerator {name!r:.60} (known: {', '.join(names)}; "
                                    "add your own with --gpus FILE)")
    return found


def unique(table: dict[str, Accelerator]) -> list[Accelerator]:
    """The accelerators of a loaded table, each once, in file order."""
    seen: dict[str, Accelerator] = {}
    for acc in table.values():
        seen.setdefault(acc.name, acc)
    return list(seen.values())

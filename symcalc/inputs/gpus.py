"""Accelerators as data: ``symcalc/inputs/gpus.toml`` (its grammar is at its top) and the
files a user adds with ``--gpus FILE``. No sympy here.

An :class:`Accelerator` holds one device's memory in bytes (as its vendor states it), the
bandwidth of that memory, its peak dense FLOP/s per dtype, the links within and across nodes,
and the source of each field. The built-in file states every amount as an exact integer, so
loading it reads no unit; a user file may also write an amount as text with a unit ("80 GB",
"989.4 TFLOPs"), read by :func:`symcalc.algebra.units.parse_amount` (which loads pint), and the
old form (``memory = "80 GB"``, ``bf16 = "989.4 TFLOPs"``, one ``source``).
"""
from __future__ import annotations

import os
import re
from functools import lru_cache

from .. import compiled, records
from fractions import Fraction
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any, Iterable, Optional

from ..errors import SymcalcError
from .files import label_of, read_toml

BUILT_IN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpus.toml")
LABEL = "gpus.toml"
NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,39}")
FIELDS = ("description", "memory", "memory_bandwidth", "flops", "bf16", "within_node",
          "across_nodes", "sources", "source", "aliases")
# dtypes a chip's peak may be given for, in the order reports list them
DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")
LINKS = ("within_node", "across_nodes")
LINK_FIELDS = {"within_node": ("name", "bandwidth", "devices"),
               "across_nodes": ("name", "bandwidth")}
AMOUNT_LIMIT = 40  # characters of an amount written as text ("80 GB", "989.4 TFLOPs")
LIMIT = 10**30


class Link(records.Record):
    """An interconnect: bytes per second one device sends (one direction) and, within a
    node, how many devices it joins."""

    name: str
    bandwidth: int
    devices: Optional[int] = None


class Accelerator(records.Record):
    name: str
    description: str
    memory: str  # as the vendor states it, e.g. "80 GB"
    memory_bytes: int
    bf16: str  # the bf16 peak as text, e.g. "989.5 TFLOPs" ("" when the chip has none)
    bf16_flops: int  # FLOP/s, dense (0 when the chip has no bf16 peak)
    source: str  # every field's source, one text
    memory_bandwidth: Optional[int] = None  # bytes/s
    flops: dict = records.default_factory(dict)  # dtype -> FLOP/s, dense
    within_node: Optional[Link] = None
    across_nodes: Optional[Link] = None
    sources: dict = records.default_factory(dict)  # field -> its source

    def fits(self, n_bytes: int) -> bool:
        return n_bytes <= self.memory_bytes

    def peak(self, dtype: str) -> int:
        """Peak dense FLOP/s for ``dtype`` (fp16 falls back to bf16, the same rate on every
        chip listed); refused, naming the dtypes it has, when the chip has none."""
        if dtype in self.flops:
            return self.flops[dtype]
        if dtype == "fp16" and "bf16" in self.flops:
            return self.flops["bf16"]
        have = ", ".join(d for d in DTYPES if d in self.flops) or "none"
        raise SymcalcError("--compute-dtype", f"{self.name} has no {dtype} peak in its data "
                                              f"(it has: {have}; add one with --gpus FILE)")

    def as_dict(self) -> dict[str, Any]:
        """The accelerator as the report's JSON gives it (exact integers)."""
        out: dict[str, Any] = {"name": self.name, "description": self.description,
                               "memory": self.memory, "memory_bytes": self.memory_bytes,
                               "memory_bandwidth": self.memory_bandwidth,
                               "flops": dict(self.flops)}
        for key in LINKS:
            link = getattr(self, key)
            out[key] = None if link is None else {f.name: getattr(link, f.name) for f in records.fields(link)
                                                  if getattr(link, f.name) is not None}
        out["sources"] = dict(self.sources)
        return out


def _whole(field: str, value: Fraction) -> int:
    """A device's bytes, bytes per second or FLOP/s: whole and positive (0 bytes fits
    nothing, 0 FLOP/s makes every time infinite), at most 10**30."""
    if value.denominator != 1:
        raise SymcalcError(field, f"must come to a whole number (got {float(value)})")
    if value <= 0:
        raise SymcalcError(field, f"must be more than 0 (got {int(value)})")
    if value > LIMIT:
        raise SymcalcError(field, "must be at most 10**30")
    return int(value)


def _amount(field: str, value: Any, kind: str, example: str) -> tuple[int, Optional[str]]:
    """(exact integer, the text as written or None) of an amount: an integer in base units,
    or text with a unit of ``kind`` (read by the unit parser)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise SymcalcError(field, f"must be an integer ({example[0]}) or text with a unit "
                                  f"({example[1]}); a TOML float is not exact "
                                  f"(got {value!r:.40})")
    if isinstance(value, int):
        if abs(value) > LIMIT:  # before any digit is turned into text
            raise SymcalcError(field, "must be at most 10**30")
        return _whole(field, Fraction(value)), None
    text = value.strip()
    if not text:
        raise SymcalcError(field, f"is required, e.g. {example[0]} or {example[1]}")
    if len(text) > AMOUNT_LIMIT:  # before any number is read: 5,000 digits end here
        raise SymcalcError(field, f"is {len(text):,} characters long; an amount is at most "
                                  f"{AMOUNT_LIMIT} (e.g. {example[1]})")
    from ..algebra.units import parse_amount

    amount = parse_amount(field, text)
    if amount.kind != kind:
        unit = {"bytes": "a byte unit, GB or GiB as the vendor states it",
                "flops": "a FLOPs unit"}[kind]
        raise SymcalcError(field, f"needs {unit}, e.g. {example[1]} (got {text!r})")
    return _whole(field, amount.value), text


MEMORY = ("80_000_000_000", '"80 GB"')
BANDWIDTH = ("3_350_000_000_000", '"3.35 TB" (bytes per second)')
FLOPS = ("989_500_000_000_000", '"989.5 TFLOPs"')


def memory_text(n: int) -> str:
    """A byte count as vendors state memory: GB when a whole number of 10^9, GiB when a
    whole number of 2^30, else bytes."""
    if n % 10**9 == 0:
        return f"{n // 10**9} GB"
    if n % 2**30 == 0:
        return f"{n // 2**30} GiB"
    return f"{n:,} bytes"


def flops_text(n: int) -> str:
    """FLOP/s with the largest SI prefix that leaves a number of at least 1, exact."""
    for prefix, scale in (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9)):
        if n >= scale:
            q = Fraction(n, scale)
            digits = str(q.numerator // q.denominator)
            rest = q - q.numerator // q.denominator
            frac = ""
            while rest and len(frac) < 12:
                rest *= 10
                frac += str(rest.numerator // rest.denominator)
                rest -= rest.numerator // rest.denominator
            return f"{digits}{'.' + frac if frac else ''} {prefix}FLOPs"
    return f"{n} FLOPs"


def _link(where: str, key: str, table: Any) -> Link:
    if not isinstance(table, dict):
        raise SymcalcError(f"{where} {key}", "must be a table with name and bandwidth"
                                             + (" and devices" if key == "within_node" else ""))
    allowed = LINK_FIELDS[key]
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise SymcalcError(f"{where} {key}.{unknown[0]}", f"is not a field (fields: "
                                                          f"{', '.join(allowed)})")
    name = table.get("name", key.replace("_", " "))
    if not isinstance(name, str) or len(name) > 200:
        raise SymcalcError(f"{where} {key}.name", "must be text of at most 200 characters")
    bandwidth, _ = _amount(f"{where} {key}.bandwidth", table.get("bandwidth", ""), "bytes",
                           BANDWIDTH)
    devices = None
    if key == "within_node":
        devices = table.get("devices")
        if isinstance(devices, bool) or not isinstance(devices, int) or not 1 <= devices <= 10**6:
            raise SymcalcError(f"{where} {key}.devices", "must be a whole number of devices "
                                                         f"from 1 to 1000000 (got {devices!r:.40})")
    return Link(name.strip(), bandwidth, devices)


def _entry(label: str, name: str, table) -> tuple[Accelerator, list[str]]:
    where = f"{label}: [{name}]"
    if not NAME.fullmatch(name):
        raise SymcalcError(where, "a name is a letter then up to 39 letters, digits, '.', '-' "
                                  "or '_'")
    if not isinstance(table, dict):
        raise SymcalcError(where, "must be a table with memory, flops and sources")
    unknown = sorted(set(table) - set(FIELDS))
    if unknown:
        raise SymcalcError(f"{where} {unknown[0]}", f"is not a field (fields: {', '.join(FIELDS)})")
    if "memory" not in table:
        raise SymcalcError(f"{where} memory", f"is required (e.g. memory = {MEMORY[0]} or "
                                              f"{MEMORY[1]})")
    memory, memory_as_written = _amount(f"{where} memory", table["memory"], "bytes", MEMORY)
    bandwidth = None
    if "memory_bandwidth" in table:
        bandwidth, _ = _amount(f"{where} memory_bandwidth", table["memory_bandwidth"],
                               "bytes", BANDWIDTH)
    flops: dict[str, int] = {}
    given = table.get("flops", {})
    if not isinstance(given, dict):
        raise SymcalcError(f"{where} flops", "must be a table of dtype = FLOP/s, e.g. "
                                             f"bf16 = {FLOPS[0]}")
    for dtype, value in given.items():
        if dtype not in DTYPES:
            raise SymcalcError(f"{where} flops.{dtype}", f"is not a dtype (dtypes: "
                                                         f"{', '.join(DTYPES)})")
        flops[dtype] = _amount(f"{where} flops.{dtype}", value, "flops", FLOPS)[0]
    bf16_as_written = None
    if "bf16" in table:  # the old form
        if "bf16" in given:
            raise SymcalcError(f"{where} bf16", "is given twice (here and in flops.bf16)")
        flops["bf16"], bf16_as_written = _amount(f"{where} bf16", table["bf16"], "flops", FLOPS)
    if not flops:
        raise SymcalcError(f"{where} flops", f"is required: at least one peak, e.g. "
                                             f"[{name}.flops] bf16 = {FLOPS[0]}")
    links = {key: _link(where, key, table[key]) for key in LINKS if key in table}
    sources = table.get("sources", {})
    if not isinstance(sources, dict) or not all(isinstance(v, str) and v.strip()
                                                for v in sources.values()):
        raise SymcalcError(f"{where} sources", "must be a table of field = \"where it comes "
                                               "from\"")
    fields = ["memory"] + (["memory_bandwidth"] if bandwidth else []) \
        + [f"flops.{d}" for d in flops] + list(links)
    stray = sorted(set(sources) - set(fields))
    if stray:
        raise SymcalcError(f"{where} sources.{stray[0]}", f"names no field of this accelerator "
                                                          f"(fields: {', '.join(fields)})")
    common = table.get("source")
    if common is not None and (not isinstance(common, str) or not common.strip()):
        raise SymcalcError(f"{where} source", "must be text")
    missing = [f for f in fields if f not in sources]
    if missing and not common:
        raise SymcalcError(f"{where} source", f"is required: where {missing[0]} comes from "
                                              f"(one source = \"...\", or [{name}.sources])")
    every = {f: (sources.get(f) or common).strip() for f in fields}
    aliases = table.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and NAME.fullmatch(a)
                                                for a in aliases):
        raise SymcalcError(f"{where} aliases", "must be a list of names")
    description = table.get("description", "")
    if not isinstance(description, str):
        raise SymcalcError(f"{where} description", "must be text")
    joined = common.strip() if common and not sources else "; ".join(
        dict.fromkeys(every.values()))
    bf16 = flops.get("bf16", 0)
    acc = Accelerator(name, description, memory_as_written or memory_text(memory), memory,
                      bf16_as_written or (flops_text(bf16) if bf16 else ""), bf16, joined,
                      bandwidth, {d: flops[d] for d in DTYPES if d in flops},
                      links.get("within_node"), links.get("across_nodes"), every)
    return acc, aliases


def load(files: Iterable[str] = ()) -> dict[str, Accelerator]:
    """Every accelerator by lower-cased name and alias: the built-in ones, then each user
    file's (a user entry of the same name replaces the built-in one)."""
    out: dict[str, Accelerator] = {}
    for path in (BUILT_IN, *files):
        if not str(path).strip():
            raise SymcalcError("--gpus", f"must name a TOML file of accelerators (got {path!r})")
        if path == BUILT_IN:
            out.update(_built_in())
            continue
        label = f"--gpus {label_of(path)}"
        for name, table in read_toml(path, label).items():
            acc, aliases = _entry(label, name, table)
            for key in (name, *aliases):
                out[key.lower()] = acc
    return out


@lru_cache(maxsize=None)
def _built_in() -> tuple[tuple[str, Accelerator], ...]:
    """The built-in accelerators by lower-cased name and alias, checked once per process
    (a report with --gpu looks its accelerator up more than once; accelerators are frozen
    records). The file is parsed ahead of time (python -m symcalc.inputs.compile_data)."""
    data = compiled.load(compiled.INPUTS_STORE, "gpus", BUILT_IN,
                         lambda raw: compiled.read_toml_bytes(raw, LABEL))
    out = []
    for name, table in data.items():
        acc, aliases = _entry(LABEL, name, table)
        out += [(key.lower(), acc) for key in (name, *aliases)]
    return tuple(out)


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

"""Amounts as typed in a target or a budget: a number and an optional unit, read exactly.

Every unit is explicit and means one thing (no sympy here):

* counts: ``K`` = 10^3, ``M`` = 10^6, ``B`` = 10^9 (billion, as in "7B parameters"),
  ``T`` = 10^12 (case-sensitive: ``m`` and ``b`` are not units);
* bytes, decimal: ``KB`` ``MB`` ``GB`` ``TB`` ``PB`` (10^3 .. 10^15);
* bytes, binary: ``KiB`` ``MiB`` ``GiB`` ``TiB`` ``PiB`` (2^10 .. 2^50);
* FLOPs: ``FLOPs`` (or ``FLOP``) with an SI prefix: ``GFLOPs`` = 10^9 .. ``EFLOPs`` = 10^18.

Byte and FLOP units may be written in any case (``gb``, ``Gib``). A number is digits with an
optional decimal part and exponent (``7e9``, ``1.5``, ``80``), read as an exact fraction.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from ..errors import SymcalcError

COUNT_UNITS = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
BYTE_UNITS = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "pb": 10**15,
              "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50}
FLOP_PREFIXES = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15,
                 "e": 10**18}
# the kind of quantity a unit measures; a count unit only scales
KINDS = ("count", "bytes", "flops")

NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_UNIT = re.compile(r"\s*([A-Za-z]+)")
EXPONENT_LIMIT = 30  # 1e30 is far above any budget; larger exponents are refused


@dataclass(frozen=True)
class Amount:
    value: Fraction
    kind: str  # "count", "bytes" or "flops"
    unit: str  # as typed ("" for a bare number)


def unit_factor(word: str) -> tuple[int, str] | None:
    """(factor, kind) of a unit word, or None when ``word`` is not a unit."""
    if word in COUNT_UNITS:
        return COUNT_UNITS[word], "count"
    low = word.lower()
    if low in BYTE_UNITS:
        return BYTE_UNITS[low], "bytes"
    m = re.fullmatch(r"([kmgtpe]?)flops?", low)
    if m:
        return FLOP_PREFIXES[m[1]], "flops"
    return None


def read_number(field: str, text: str) -> Fraction:
    """The exact value of a number token (``7e9`` -> 7000000000)."""
    mantissa, _, exponent = text.lower().partition("e")
    if exponent and abs(int(exponent)) > EXPONENT_LIMIT:
        raise SymcalcError(field, f"{text} is out of range (exponents up to {EXPONENT_LIMIT})")
    return Fraction(mantissa) * Fraction(10) ** int(exponent or 0)


def read_amount(field: str, text: str, pos: int = 0) -> tuple[Amount, int] | None:
    """The amount starting at ``text[pos]`` (a number and, right after it, an optional unit)
    and the position after it; None when no number starts there."""
    m = NUMBER.match(text, pos)
    if not m:
        return None
    value = read_number(field, m[0])
    end = m.end()
    u = _UNIT.match(text, end)
    if u:
        found = unit_factor(u[1])
        if found is None and end == u.start(1):  # "80Gb" would be a typo, "80 d" is a product
            raise SymcalcError(field, f"unknown unit {u[1]!r} after {m[0]} (units: K M B T, "
                                      "KB MB GB TB, KiB MiB GiB TiB, GFLOPs TFLOPs PFLOPs ...)")
        if found is not None:
            factor, kind = found
            return Amount(value * factor, kind, u[1]), u.end()
    return Amount(value, "count", ""), end


def parse_amount(field: str, text: str) -> Amount:
    """A whole string as one amount: ``80GB``, ``7e9``, ``70 B``, ``24 GiB``."""
    raw = str(text).strip()
    got = read_amount(field, raw)
    if got is None or got[1] != len(raw):
        raise SymcalcError(field, f"must be a number with an optional unit, e.g. 7e9, 7B, "
                                  f"80GB, 24GiB (got {raw!r:.60})")
    return got[0]

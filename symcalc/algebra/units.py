"""Amounts as typed in a target or a budget: a number and an optional unit, read exactly.

Units are read by pint from symcalc's own definitions (``units.txt`` beside this module:
bytes, bits and FLOPs with SI and IEC prefixes), loaded the first time a unit word is read,
so that a path that reads no unit (the quick report) never imports pint. No sympy here.

* counts: ``K`` = 10^3, ``M`` = 10^6, ``B`` = 10^9 (billion, as in "7B parameters"),
  ``T`` = 10^12 -- suffixes read before pint, case-sensitive (``m`` and ``b`` are not counts);
* bytes, decimal: ``kB`` (or ``KB``) ``MB`` ``GB`` ``TB`` ``PB`` ``EB`` (10^3 .. 10^18);
* bytes, binary: ``KiB`` ``MiB`` ``GiB`` ``TiB`` ``PiB`` (2^10 .. 2^50);
* bits, said on purpose: ``bit`` with a prefix (``80Gbit`` = 10 GB); the symbol ``b``
  (``80Gb``) is refused: it is a bit to SI and pint, and a typo for ``GB`` to most people;
* FLOPs: ``FLOP``, ``FLOPs``, ``FLOPS`` (or ``flop``, ``flops``) with an SI prefix:
  ``GFLOPs`` = 10^9 .. ``EFLOPs`` = 10^18.

Spellings are case-sensitive (``gb``, ``tflops`` are refused as unknown units). A number is
digits with an optional decimal part and exponent (``7e9``, ``1.5``, ``80``), read as an
exact fraction.

Units also give each part of an expression its dimension (:func:`dimension_of`, used by
:mod:`symcalc.algebra.expression`): bytes, FLOPs, or none (counts, sizes, plain numbers).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from ..errors import SymcalcError

COUNT_UNITS = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
# the kind of quantity a unit measures; a count unit only scales
KINDS = ("count", "bytes", "flops")
BASE = {"bytes": "byte", "flops": "FLOP"}  # the pint unit each kind is counted in
DEFINITIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "units.txt")

NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_UNIT = re.compile(r"(\s*)([A-Za-z]+)")
EXPONENT_LIMIT = 30  # 1e30 is far above any budget; larger exponents are refused
DIGIT_LIMIT = 100  # digits of one number; a budget of 10^100 bytes is no budget
# unit-like words in any case: after a space they are refused when not a unit ("80 gb")
UNIT_LIKE = {p + u for p in ("", "k", "m", "g", "t", "p", "e")
             for u in ("b", "ib", "bit", "bits", "byte", "bytes", "flop", "flops")} - {"b"}
UNIT_HELP = "units: K M B T, kB MB GB TB, KiB MiB GiB TiB, Gbit, GFLOPs TFLOPs PFLOPs"


@dataclass(frozen=True)
class Amount:
    value: Fraction
    kind: str  # "count", "bytes" or "flops"
    unit: str  # as typed ("" for a bare number)


@lru_cache(maxsize=1)
def registry():
    """pint's registry of symcalc's units (exact: magnitudes are Fractions)."""
    import pint

    reg = pint.UnitRegistry(None, non_int_type=Fraction, cache_folder=None,
                            on_redefinition="raise")
    reg.load_definitions(DEFINITIONS)
    return reg


def _kind_of(dimensionality) -> str | None:
    reg = registry()
    for kind, base in BASE.items():
        if dimensionality == reg.Unit(base).dimensionality:
            return kind
    return "count" if not dimensionality else None


@lru_cache(maxsize=256)
def _pint_unit(word: str) -> tuple[Fraction, str, bool] | None:
    """(factor to the kind's base unit, kind, spelled with the bit symbol b) of a unit
    word pint knows, or None."""
    import pint

    reg = registry()
    try:
        unit = reg.parse_units(word)
    except (pint.errors.PintError, AttributeError, TypeError, ValueError, SyntaxError):
        return None
    kind = _kind_of(unit.dimensionality)
    if kind is None or kind == "count":
        return None
    factor = Fraction(reg.Quantity(Fraction(1), unit).to(BASE[kind]).magnitude)
    return factor, kind, kind == "bytes" and word.endswith("b")  # "Gbit" ends in t


def unit_factor(word: str) -> tuple[Fraction, str] | None:
    """(factor, kind) of a unit word, or None when ``word`` is not a unit. A byte unit
    spelled with the bit symbol (``Gb``) is returned too; :func:`read_amount` refuses it."""
    if word in COUNT_UNITS:
        return Fraction(COUNT_UNITS[word]), "count"
    if len(word) > 12:
        return None
    found = _pint_unit(word)
    return None if found is None else found[:2]


def read_number(field: str, text: str) -> Fraction:
    """The exact value of a number token (``7e9`` -> 7000000000)."""
    mantissa, _, exponent = text.lower().partition("e")
    if exponent and abs(int(exponent)) > EXPONENT_LIMIT:
        raise SymcalcError(field, f"{text} is out of range (exponents up to {EXPONENT_LIMIT})")
    if sum(c.isdigit() for c in mantissa) > DIGIT_LIMIT:
        raise SymcalcError(field, f"a number has at most {DIGIT_LIMIT} digits (got "
                                  f"{sum(c.isdigit() for c in mantissa):,})")
    return Fraction(mantissa) * Fraction(10) ** int(exponent or 0)


def read_amount(field: str, text: str, pos: int = 0) -> tuple[Amount, int] | None:
    """The amount starting at ``text[pos]`` (a number and, right after it, an optional unit)
    and the position after it; None when no number starts there. A word right after the
    number must be a unit; after a space it is a unit when it is one (``80 GB``), else the
    next factor (``80 d`` is 80 times d; a single letter after a space, ``2 b``, is always
    a name, except the count suffixes)."""
    m = NUMBER.match(text, pos)
    if not m:
        return None
    value = read_number(field, m[0])
    end = m.end()
    u = _UNIT.match(text, end)
    if u:
        spaced, word = bool(u[1]), u[2]
        found = None if spaced and len(word) == 1 and word not in COUNT_UNITS \
            else unit_factor(word)
        if found is None and (not spaced or word.lower() in UNIT_LIKE):
            # "80XB" and "80 gb" are typos; "80 d" is a product
            raise SymcalcError(field, f"unknown unit {word!r:.20} after {m[0]} ({UNIT_HELP}; "
                                      "case matters: B is a byte, b a bit)")
        if found is not None:
            factor, kind = found
            if kind == "bytes" and _pint_unit(word)[2]:
                raise SymcalcError(field, f"{m[0]}{word} is {m[0]} {registry().parse_units(word)}s "
                                          f"(b is a bit, B a byte): write {m[0]}{word[:-1]}B "
                                          f"for bytes, or {m[0]}{word[:-1]}bit for bits")
            return Amount(value * factor, kind, word), u.end()
    return Amount(value, "count", ""), end


def parse_amount(field: str, text: str) -> Amount:
    """A whole string as one amount: ``80GB``, ``7e9``, ``70 B``, ``24 GiB``."""
    raw = str(text).strip()
    got = read_amount(field, raw)
    if got is None or got[1] != len(raw):
        raise SymcalcError(field, f"must be a number with an optional unit, e.g. 7e9, 7B, "
                                  f"80GB, 24GiB (got {raw!r:.60})")
    return got[0]


def dimension_of(kind: str):
    """The pint unit of a kind (``bytes`` -> byte, ``flops`` -> FLOP, ``count`` ->
    dimensionless): the dimension algebra of :mod:`symcalc.algebra.expression`."""
    reg = registry()
    return reg.Unit(BASE[kind]) if kind in BASE else reg.dimensionless


def kind_of(unit) -> str | None:
    """The kind a pint unit measures (``count`` for none), or None for a product such as
    byte²  or byte·FLOP that no quantity measures."""
    return _kind_of(unit.dimensionality)

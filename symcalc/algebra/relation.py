"""A relation as typed by a user: ``params.total = 7e9``,
``memory.weights_bytes + memory.kv_cache_bytes <= 80GB``,
``flops:layer/attention/scores >= flops:layer/ffn``.

It is read by the one parser of user expressions, :func:`symcalc.algebra.expression.parse`
(its grammar and limits are there; user text never reaches ``sympify`` or ``eval``), with
units carried through the arithmetic: both sides must measure the same thing. A NAME is
looked up by the caller's ``lookup`` (a quantity such as ``params.total``, a breakdown path
such as ``flops:layer/ffn``, a size such as ``d``, an accelerator such as ``H100``), which
returns a sympy expression and the kind it measures (``count``, ``bytes`` or ``flops``), or
None.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass

import sympy

from .expression import OPS, Lookup, parse

COMPARE = {"=": operator.eq, "<=": operator.le, ">=": operator.ge, "<": operator.lt,
           ">": operator.gt}
UNKNOWN = ("a quantity such as params.total, a part such as flops:layer/ffn, a size such as d, "
           "or an accelerator such as H100")


@dataclass(frozen=True)
class Relation:
    lhs: sympy.Expr
    op: str  # "=", "<=", ">=", "<", ">"
    rhs: sympy.Expr
    text: str
    names: tuple[tuple[str, str], ...]  # every NAME used and the kind it measures, in order
    unit_kinds: tuple[str, ...]  # the kinds of the units typed after numbers

    @property
    def lhs_text(self) -> str:
        """The left side as typed."""
        return re.split(r"<=|>=|==|=|<|>", self.text, maxsplit=1)[0].strip()

    def difference(self) -> sympy.Expr:
        return self.lhs - self.rhs

    def holds(self, lhs_value, rhs_value) -> bool:
        """Does the relation hold between two numbers (exact sympy numbers or ints)?"""
        return bool(COMPARE[self.op](lhs_value, rhs_value))


def parse_relation(text: str, field: str, lookup: Lookup, ops: tuple[str, ...] = OPS,
                   extra_names: dict[str, str] | None = None) -> Relation:
    """The relation ``text`` (one of ``ops``), names resolved by ``lookup``. Names holding
    characters a NAME cannot (``A100-80GB``) are matched first from ``extra_names``."""
    got = parse(text, field, lookup, ops, extra_names, dimensions=True, unknown=UNKNOWN)
    return Relation(got.sides[0], got.op, got.sides[1], text.strip(), got.names, got.unit_kinds)

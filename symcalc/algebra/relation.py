"""A relation as typed by a user: ``params.total = 7e9``,
``memory.weights_bytes + memory.kv_cache_bytes <= 80GB``,
``flops:layer/attention/scores >= flops:layer/ffn``.

Grammar (a small recursive-descent parser; user text never reaches ``sympify`` or ``eval``)::

    relation := expr OP expr           OP: = == <= >= < >
    expr     := term (('+' | '-') term)*
    term     := factor (('*' | '/') factor)*
    factor   := ('+' | '-') factor | atom [('**' | '^') INTEGER]
    atom     := NUMBER [UNIT] | NAME | '(' expr ')'

NUMBER and UNIT are read by :mod:`symcalc.algebra.units`. A NAME is looked up by the caller's
``lookup`` (a quantity such as ``params.total``, a breakdown path such as
``flops:layer/ffn``, a size such as ``d``, an accelerator such as ``H100``), which returns a
sympy expression and the kind it measures (``count``, ``bytes`` or ``flops``), or None.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

import sympy

from ..errors import SymcalcError
from .units import read_amount

TEXT_LIMIT = 500
POWER_LIMIT = 4
OPS = ("<=", ">=", "==", "=", "<", ">")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?(?::[A-Za-z0-9_/]+)?")
Lookup = Callable[[str], Optional[tuple[sympy.Expr, str]]]


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
        return {"=": lhs_value == rhs_value, "<=": lhs_value <= rhs_value,
                ">=": lhs_value >= rhs_value, "<": lhs_value < rhs_value,
                ">": lhs_value > rhs_value}[self.op]


class _Parser:
    def __init__(self, text: str, field: str, lookup: Lookup, extra_names: dict[str, str]):
        self.text, self.field, self.lookup = text, field, lookup
        self.extra = extra_names  # lower-cased name with characters NAME lacks -> as written
        self.pos = 0
        self.names: list[tuple[str, str]] = []
        self.kinds: list[str] = []

    def fail(self, rule: str):
        raise SymcalcError(self.field, f"{rule} at character {self.pos + 1} of {self.text!r:.120}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, *options: str) -> Optional[str]:
        self.skip()
        for o in options:
            if self.text.startswith(o, self.pos):
                return o
        return None

    def take(self, *options: str) -> Optional[str]:
        got = self.peek(*options)
        if got:
            self.pos += len(got)
        return got

    def expr(self) -> sympy.Expr:
        out = self.term()
        while (op := self.take("+", "-")):
            out = out + self.term() if op == "+" else out - self.term()
        return out

    def term(self) -> sympy.Expr:
        out = self.factor()
        while (op := self.peek("**", "*", "/")) in ("*", "/"):
            self.pos += 1
            right = self.factor()
            if op == "/" and right == 0:
                self.fail("division by zero")
            out = out * right if op == "*" else out / right
        return out

    def factor(self) -> sympy.Expr:
        sign = self.take("+", "-")
        if sign:
            inner = self.factor()
            return -inner if sign == "-" else inner
        base = self.atom()
        if self.take("**", "^"):
            self.skip()
            m = re.match(r"[0-9]+", self.text[self.pos:])
            if not m or not 0 <= int(m[0]) <= POWER_LIMIT:
                self.fail(f"a power must be a whole number 0 to {POWER_LIMIT}")
            self.pos += len(m[0])
            return base ** int(m[0])
        return base

    def atom(self) -> sympy.Expr:
        self.skip()
        if self.take("("):
            out = self.expr()
            if not self.take(")"):
                self.fail("')' expected")
            return out
        amount = read_amount(self.field, self.text, self.pos)
        if amount is not None:
            self.pos = amount[1]
            if amount[0].unit:
                self.kinds.append(amount[0].kind)
            return sympy.Rational(amount[0].value.numerator, amount[0].value.denominator)
        name = self._name()
        if name is None:
            self.fail("a number, a name or '(' expected")
        found = self.lookup(name)
        if found is None:
            self.fail(f"unknown name {name!r} (a quantity such as params.total, a part such "
                      "as flops:layer/ffn, a size such as d, or an accelerator such as H100)")
        self.names.append((name, found[1]))
        return found[0]

    def _name(self) -> Optional[str]:
        rest = self.text[self.pos:]
        for low in sorted(self.extra, key=len, reverse=True):  # H100-PCIe before H100
            if rest[:len(low)].lower() == low and not re.match(r"[A-Za-z0-9_.:/-]", rest[len(low):]):
                self.pos += len(low)
                return self.extra[low]
        m = NAME.match(self.text, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return m[0]


def parse_relation(text: str, field: str, lookup: Lookup, ops: tuple[str, ...] = OPS,
                   extra_names: dict[str, str] | None = None) -> Relation:
    """The relation ``text`` (one of ``ops``), names resolved by ``lookup``. Names holding
    characters a NAME cannot (``A100-80GB``) are matched first from ``extra_names``."""
    text = str(text)
    if len(text) > TEXT_LIMIT:
        raise SymcalcError(field, f"must be at most {TEXT_LIMIT} characters (got {len(text):,})")
    p = _Parser(text, field, lookup, {k.lower(): v for k, v in (extra_names or {}).items()})
    lhs = p.expr()
    op = p.take(*OPS)
    if op is None:
        p.fail(f"a comparison ({' '.join(o for o in ops if o != '==')}) expected")
    op = "=" if op == "==" else op
    if op not in ops:
        p.fail(f"must compare with {' or '.join(o for o in ops if o != '==')}, not {op}")
    rhs = p.expr()
    p.skip()
    if p.pos != len(text):
        p.fail("unexpected text")
    return Relation(lhs, op, rhs, text.strip(), tuple(p.names), tuple(p.kinds))

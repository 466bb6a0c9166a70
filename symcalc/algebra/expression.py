"""The one parser of user expressions: every string that becomes a sympy expression --
``solve --target/--fit/--when``, ``closed-form --diff``, the forms of
:func:`symcalc.testing.assert_closed_form` -- is read here, by :func:`parse`. User text
never reaches ``eval``, ``sympify`` or sympy's parser.

Grammar (recursive descent; whitespace between tokens is ignored)::

    relation := expr OP expr                OP: = == <= >= < >  (only where the caller asks)
    expr     := term (('+' | '-') term)*
    term     := factor (('*' | '/') factor)*
    factor   := ('+' | '-') factor | atom [('**' | '^') INTEGER]
    atom     := NUMBER [UNIT] | FUNC '(' expr (',' expr)* ')' | NAME | '(' expr ')'
    FUNC     := Min | Max

NUMBER and UNIT are read by :mod:`symcalc.algebra.units` (``7e9``, ``1.5``, ``80GB``,
``7B``), exactly. A NAME (``params.total``, ``communication.tp.step_bytes``,
``flops:layer/ffn``, ``d``, ``H100``: letters, digits and ``_``, at most three parts joined by
dots, then an optional ``:PATH``) is looked up by the caller's ``lookup``, which returns a sympy expression and the kind it measures
(``count``, ``bytes`` or ``flops``), or None: only the names a caller allows exist.

Limits, each refused with one ``FIELD: RULE`` line: at most :data:`TEXT_LIMIT` characters,
parentheses, signs and calls nested at most :data:`DEPTH_LIMIT` deep, an exponent a whole
number 0 to :data:`POWER_LIMIT`, at most :data:`DEGREE_LIMIT` names multiplied together
(a power counts its exponent times: ``((d**4)**4)**4`` is 64), at most :data:`TERM_LIMIT`
terms once multiplied out (counted from the names' own terms, before sympy expands
anything), numbers of at most 100 digits and exponents up to 30.

With ``dimensions=True`` every part carries its unit through the arithmetic (pint's unit
algebra, :func:`symcalc.algebra.units.dimension_of`): bytes times bytes is bytes², and a sum
or a comparison of parts whose dimensions differ is refused (``memory.weights_bytes *
memory.kv_cache_bytes <= 80GB`` compares bytes² with bytes). A plain number (no unit, no
name) takes the dimension of what it is added to or compared with (``<= 8e10``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

import sympy

from ..errors import SymcalcError
from .units import dimension_of, kind_of, read_amount

TEXT_LIMIT = 2000
DEPTH_LIMIT = 40
POWER_LIMIT = 4
DEGREE_LIMIT = 12
TERM_LIMIT = 5_000
OPS = ("<=", ">=", "==", "=", "<", ">")
FUNCTIONS = {"Min": sympy.Min, "Max": sympy.Max}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2}(?::[A-Za-z0-9_/]+)?")
Lookup = Callable[[str], Optional[tuple[sympy.Expr, str]]]


@dataclass(frozen=True)
class Node:
    """A parsed part: its expression, unit (pint, with ``dimensions``), whether it is a
    plain number, how many names it multiplies, and a bound on its terms expanded."""
    expr: sympy.Expr
    unit: Any
    plain: bool
    degree: int
    terms: int


@dataclass(frozen=True)
class Parsed:
    """What :func:`parse` read: ``sides`` (one expression, or two around ``op``)."""
    sides: tuple[sympy.Expr, ...]
    op: Optional[str]
    names: tuple[tuple[str, str], ...]  # every NAME used and the kind it measures, in order
    unit_kinds: tuple[str, ...]  # the kinds of the units typed after numbers
    kind: Optional[str]  # what the sides measure (dimensions only): count, bytes, flops

    @property
    def expr(self) -> sympy.Expr:
        return self.sides[0]


DIMENSION_WORDS = {"[information]": "bytes", "[compute]": "FLOPs"}


def describe(unit) -> str:
    """A unit's dimension in words: ``counts``, ``bytes``, ``bytes^2``, ``bytes·FLOPs^-1``."""
    parts = []
    for dim, exp in sorted(unit.dimensionality.items()):
        exp = int(exp) if exp == int(exp) else exp
        parts.append(DIMENSION_WORDS.get(dim, dim) + ("" if exp == 1 else f"^{exp}"))
    return "·".join(parts) or "counts"


def _terms(expr: sympy.Expr) -> int:
    return len(sympy.Add.make_args(sympy.expand(expr)))


class _Parser:
    def __init__(self, text: str, field: str, lookup: Lookup, extra: dict[str, str],
                 dimensions: bool):
        self.text, self.field, self.lookup, self.extra = text, field, lookup, extra
        self.dimensions = dimensions
        self.pos = self.depth = 0
        self.names: list[tuple[str, str]] = []
        self.kinds: list[str] = []
        self.seen: dict[str, tuple[sympy.Expr, str, int]] = {}

    # -- tokens ---------------------------------------------------------------------------
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

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > DEPTH_LIMIT:
            self.fail(f"nests parentheses, signs and calls more than {DEPTH_LIMIT} deep")

    # -- dimensions -----------------------------------------------------------------------
    def unit_name(self, unit) -> str:
        return describe(unit)

    def same(self, a: Node, b: Node, doing: str):
        """The unit of a sum or comparison of ``a`` and ``b``."""
        if not self.dimensions:
            return None
        if a.unit.dimensionality == b.unit.dimensionality:
            return a.unit
        if a.plain or b.plain:
            return b.unit if a.plain else a.unit
        self.fail(f"{doing} {self.unit_name(a.unit)} with {self.unit_name(b.unit)} (use "
                  f"quantities of one kind: memory.* in bytes, flops.* and flops: parts in "
                  f"FLOPs, params.* and sizes as counts, or a number without a unit)")

    def checked(self, node: Node) -> Node:
        if node.degree > DEGREE_LIMIT:
            self.fail(f"multiplies more than {DEGREE_LIMIT} names together")
        if node.terms > TERM_LIMIT:
            self.fail(f"would have more than {TERM_LIMIT:,} terms multiplied out")
        return node

    # -- grammar --------------------------------------------------------------------------
    def expr(self) -> Node:
        out = self.term()
        while (op := self.take("+", "-")):
            right = self.term()
            unit = self.same(out, right, "adds" if op == "+" else "subtracts")
            out = self.checked(Node(out.expr + right.expr if op == "+" else out.expr - right.expr,
                                    unit, out.plain and right.plain,
                                    max(out.degree, right.degree), out.terms + right.terms))
        return out

    def term(self) -> Node:
        out = self.factor()
        while (op := self.peek("**", "*", "/")) in ("*", "/"):
            self.pos += 1
            right = self.factor()
            if op == "/" and (right.expr == 0 or (right.expr.free_symbols and right.terms <= 2000
                                                    and sympy.expand(right.expr) == 0)):
                self.fail("division by zero")
            unit = None if not self.dimensions else \
                out.unit * right.unit if op == "*" else out.unit / right.unit
            out = self.checked(Node(out.expr * right.expr if op == "*" else out.expr / right.expr,
                                    unit, out.plain and right.plain, out.degree + right.degree,
                                    out.terms * right.terms))
        return out

    def factor(self) -> Node:
        sign = self.take("+", "-")
        if sign:
            self.deeper()
            inner = self.factor()
            self.depth -= 1
            return inner if sign == "+" else Node(-inner.expr, inner.unit, inner.plain,
                                                  inner.degree, inner.terms)
        base = self.atom()
        if self.take("**", "^"):
            self.skip()
            m = re.match(r"[0-9]+(?:\.[0-9]*)?", self.text[self.pos:self.pos + 20])
            if not m or not m[0].isdigit() or len(m[0]) > 2 or not 0 <= int(m[0]) <= POWER_LIMIT:
                self.fail(f"a power must be a whole number 0 to {POWER_LIMIT}")
            self.pos += len(m[0])
            n = int(m[0])
            if self.peek("**", "^"):
                self.fail("a power of a power needs parentheses, e.g. (d**2)**2")
            return self.checked(Node(base.expr ** n, base.unit ** n if self.dimensions else None,
                                     base.plain, base.degree * n, base.terms ** n))
        return base

    def atom(self) -> Node:
        self.skip()
        if self.take("("):
            self.deeper()
            out = self.expr()
            if not self.take(")"):
                self.fail("')' expected")
            self.depth -= 1
            return out
        amount = read_amount(self.field, self.text, self.pos)
        if amount is not None:
            got, self.pos = amount
            if got.unit:
                self.kinds.append(got.kind)
            unit = dimension_of(got.kind) if self.dimensions else None
            return Node(sympy.Rational(got.value.numerator, got.value.denominator), unit,
                        got.kind == "count", 0, 1)
        start = self.pos
        name = self._name()
        if name is None:
            self.fail("a number, a name or '(' expected")
        if name in FUNCTIONS and self.peek("("):
            return self.call(name)
        return self.named(name, start)

    def call(self, name: str) -> Node:
        self.take("(")
        self.deeper()
        args = [self.expr()]
        while self.take(","):
            args.append(self.expr())
        if not self.take(")"):
            self.fail("')' expected")
        self.depth -= 1
        unit = args[0].unit
        for a in args[1:]:
            unit = self.same(Node(args[0].expr, unit, args[0].plain, 0, 1), a, f"{name} of")
        return self.checked(Node(FUNCTIONS[name](*[a.expr for a in args]), unit,
                                 all(a.plain for a in args), max(a.degree for a in args),
                                 sum(a.terms for a in args)))

    def named(self, name: str, start: int) -> Node:
        if name not in self.seen:
            found = self.lookup(name)
            if found is None:
                self.pos = start
                self.fail(f"unknown name {name!r:.60}")
            self.seen[name] = (found[0], found[1], _terms(found[0]))
        expr, kind, terms = self.seen[name]
        self.names.append((name, kind))
        return self.checked(Node(expr, dimension_of(kind) if self.dimensions else None, False,
                                 1, terms))

    def _name(self) -> Optional[str]:
        rest = self.text[self.pos:self.pos + 60]
        for low in sorted(self.extra, key=len, reverse=True):  # H100-PCIe before H100
            if rest[:len(low)].lower() == low and not re.match(r"[A-Za-z0-9_.:/-]", rest[len(low):]):
                self.pos += len(low)
                return self.extra[low]
        m = NAME.match(self.text, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return m[0]


def parse(text: Any, field: str, lookup: Lookup, ops: tuple[str, ...] = (),
          extra_names: dict[str, str] | None = None, dimensions: bool = False,
          unknown: str = "") -> Parsed:
    """``text`` read by the grammar above: an expression, or (``ops`` given) a relation
    ``expr OP expr`` with OP one of ``ops``. Names are resolved by ``lookup``; names holding
    characters a NAME cannot (``A100-80GB``) are matched first from ``extra_names``.
    ``unknown`` is added to the message for a name ``lookup`` does not know."""
    if not isinstance(text, str):
        raise SymcalcError(field, f"must be text (got {type(text).__name__})")
    if len(text) > TEXT_LIMIT:
        raise SymcalcError(field, f"must be at most {TEXT_LIMIT:,} characters (got {len(text):,})")
    p = _Parser(text, field, lookup, {k.lower(): v for k, v in (extra_names or {}).items()},
                dimensions)
    try:
        return _read(p, ops)
    except SymcalcError as err:
        if unknown and "unknown name" in err.rule:
            raise SymcalcError(err.field, f"{err.rule} ({unknown})") from None
        raise


def _read(p: _Parser, ops: tuple[str, ...]) -> Parsed:
    lhs = p.expr()
    op = rhs = None
    if ops:
        op = p.take(*OPS)
        if op is None:
            p.fail(f"a comparison ({' '.join(o for o in ops if o != '==')}) expected")
        op = "=" if op == "==" else op
        if op not in ops:
            p.fail(f"must compare with {' or '.join(o for o in ops if o != '==')}, not {op}")
        rhs = p.expr()
    p.skip()
    if p.pos != len(p.text):
        p.fail("unexpected text")
    kind = None
    if p.dimensions:
        kind = kind_of(p.same(lhs, rhs, "compares") if rhs is not None else lhs.unit)
    sides = (lhs.expr,) if rhs is None else (lhs.expr, rhs.expr)
    return Parsed(sides, op, tuple(p.names), tuple(p.kinds), kind)

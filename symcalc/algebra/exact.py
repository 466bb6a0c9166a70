"""The few operations the speed, serving and utilization rules need, on any of the three kinds
of value they are evaluated with: exact rationals (``int``, :class:`fractions.Fraction`) on the
quick path, sympy expressions in derivations, closed forms and solving, and :class:`Rec`, which
records the arithmetic as a tree of JSON values for the calculator page (its ``speed.js``
walks the tree with exact rationals, so the page runs the same rule without re-implementing
it). A rule written with these is written once (:mod:`symcalc.algebra.roofline`,
:mod:`symcalc.algebra.serving`, :mod:`symcalc.algebra.utilization`). Imports sympy only when
given a sympy value.

A tree is a name (a string), an exact number as ``["q", "p/q"]`` (or a JSON integer), or
``[op, args...]`` with op ``+ - * /`` (two arguments), ``^`` (base, whole exponent),
``max``, ``min`` (any number), ``ceil``, ``floor`` (one).
"""
from __future__ import annotations

from fractions import Fraction
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any


class Rec:
    """A value that records what is computed with it (see the module docstring)."""

    __slots__ = ("tree",)

    def __init__(self, tree: Any):
        self.tree = tree

    @staticmethod
    def of(x: Any) -> Any:
        if isinstance(x, Rec):
            return x.tree
        x = q(x)
        return x.numerator if x.denominator == 1 else ["q", f"{x.numerator}/{x.denominator}"]

    def _op(self, op: str, other: Any, swap: bool = False) -> "Rec":
        a, b = Rec.of(self), Rec.of(other)
        return Rec([op, b, a] if swap else [op, a, b])

    def __add__(self, o): return self._op("+", o)
    def __radd__(self, o): return self._op("+", o, True)
    def __sub__(self, o): return self._op("-", o)
    def __rsub__(self, o): return self._op("-", o, True)
    def __mul__(self, o): return self._op("*", o)
    def __rmul__(self, o): return self._op("*", o, True)
    def __truediv__(self, o): return self._op("/", o)
    def __rtruediv__(self, o): return self._op("/", o, True)
    def __neg__(self): return Rec(["-", 0, self.tree])
    def __pow__(self, n): return self._op("^", n)


def recorded(*xs: Any) -> bool:
    return any(isinstance(x, Rec) for x in xs)


def symbolic(*xs: Any) -> bool:
    """Whether any value is a sympy expression or a recorded one (a rule then takes its
    formula, not a shortcut for numbers)."""
    return any(hasattr(x, "free_symbols") or isinstance(x, Rec) for x in xs)


def q(x: Any) -> Any:
    """``x`` as an exact value: an int or a decimal text becomes a Fraction, a sympy value
    stays as it is (never a float)."""
    if isinstance(x, bool):
        raise TypeError("a bool is not a number")
    if isinstance(x, (int, str)):
        return Fraction(x)
    if isinstance(x, float):
        raise TypeError(f"{x!r} is a float; symcalc's figures are exact")
    return x


def _tree(op: str, *xs: Any) -> Rec:
    return Rec([op, *(Rec.of(x) for x in xs)])


def maximum(*xs: Any) -> Any:
    if recorded(*xs):
        return _tree("max", *xs)
    if symbolic(*xs):
        import sympy

        return sympy.Max(*xs)
    return max(q(x) for x in xs)


def minimum(*xs: Any) -> Any:
    if recorded(*xs):
        return _tree("min", *xs)
    if symbolic(*xs):
        import sympy

        return sympy.Min(*xs)
    return min(q(x) for x in xs)


def ceil(x: Any) -> Any:
    if recorded(x):
        return _tree("ceil", x)
    if symbolic(x):
        import sympy

        return sympy.ceiling(x)
    x = q(x)
    return -((-x.numerator) // x.denominator)


def floor(x: Any) -> Any:
    if recorded(x):
        return _tree("floor", x)
    if symbolic(x):
        import sympy

        return sympy.floor(x)
    x = q(x)
    return x.numerator // x.denominator


def at_least(a: Any, b: Any) -> Any:
    """1 when ``a`` >= ``b``, else 0 (recorded: the tree's ``ge``)."""
    if recorded(a, b):
        return _tree("ge", a, b)
    if symbolic(a, b):
        import sympy

        return sympy.Piecewise((1, sympy.Ge(a, b)), (0, True))
    return int(q(a) >= q(b))


def power(base: Any, n: Any) -> Any:
    if recorded(base, n):
        return _tree("^", base, n)
    if symbolic(base, n):
        import sympy

        return sympy.Pow(base, n)
    return q(base) ** n


def whole(x: Any) -> Any:
    """An exact value as an int when it is whole (JSON prints it as one)."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return x.numerator
    return x

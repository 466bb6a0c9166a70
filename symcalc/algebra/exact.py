"""The few operations the speed, serving and utilization rules need, on either kind of value
they are evaluated with: exact rationals (``int``, :class:`fractions.Fraction`) on the quick
path, sympy expressions in derivations, closed forms and solving. A rule written with these is
written once (:mod:`symcalc.algebra.roofline`, :mod:`symcalc.algebra.serving`,
:mod:`symcalc.algebra.utilization`). Imports sympy only when given a sympy value.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any


def symbolic(*xs: Any) -> bool:
    """Whether any value is a sympy expression."""
    return any(hasattr(x, "free_symbols") for x in xs)


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


def maximum(*xs: Any) -> Any:
    if symbolic(*xs):
        import sympy

        return sympy.Max(*xs)
    return max(q(x) for x in xs)


def minimum(*xs: Any) -> Any:
    if symbolic(*xs):
        import sympy

        return sympy.Min(*xs)
    return min(q(x) for x in xs)


def ceil(x: Any) -> Any:
    if symbolic(x):
        import sympy

        return sympy.ceiling(x)
    x = q(x)
    return -((-x.numerator) // x.denominator)


def floor(x: Any) -> Any:
    if symbolic(x):
        import sympy

        return sympy.floor(x)
    x = q(x)
    return x.numerator // x.denominator


def power(base: Any, n: Any) -> Any:
    if symbolic(base, n):
        import sympy

        return sympy.Pow(base, n)
    return q(base) ** n


def whole(x: Any) -> Any:
    """An exact value as an int when it is whole (JSON prints it as one)."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return x.numerator
    return x

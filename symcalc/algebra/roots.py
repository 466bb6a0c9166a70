"""Exact positive real roots of one-variable expressions, and the nearest valid integers.

An expression may hold ``Min(x, c)`` / ``Max(x, c)`` (a sliding window caps the cache at W
tokens): it is split into the pieces on either side of ``c`` and each piece solved on its own
interval. Each piece is a rational function; its numerator is a polynomial whose real roots
sympy gives exactly (radicals up to degree 2, ``CRootOf`` above).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

import sympy

SEARCH_LIMIT = 10_000  # integer candidates tried on each side of a root


class Unsplittable(ValueError):
    """A Min/Max that is not between the variable and a number."""


@dataclass(frozen=True)
class Piece:
    expr: sympy.Expr
    lo: sympy.Expr  # open below
    hi: sympy.Expr  # closed above


def pieces(expr: sympy.Expr, x: sympy.Symbol, lo=sympy.Integer(0), hi=sympy.oo) -> list[Piece]:
    """``expr`` on (lo, hi] as pieces free of Min/Max in ``x``."""
    caps = [a for a in expr.atoms(sympy.Min, sympy.Max) if x in a.free_symbols]
    if not caps:
        return [Piece(expr, lo, hi)]
    cap = caps[0]
    others = [a for a in cap.args if a != x]
    if len(cap.args) != 2 or len(others) != 1 or not others[0].is_number:
        raise Unsplittable(f"cannot solve through {cap}: a Min or Max is split only between "
                           f"{x} itself and a number")
    c = others[0]
    small, large = (x, c) if isinstance(cap, sympy.Min) else (c, x)
    out = []
    if c > lo:
        out += pieces(expr.xreplace({cap: small}), x, lo, sympy.Min(hi, c))
    if c < hi:
        out += pieces(expr.xreplace({cap: large}), x, sympy.Max(lo, c), hi)
    return out


def positive_roots(expr: sympy.Expr, x: sympy.Symbol) -> list[sympy.Expr]:
    """Every real root > 0 of ``expr`` (exact), in increasing order; a piece that is zero
    everywhere has no root of its own."""
    found = []
    for piece in pieces(sympy.sympify(expr), x):
        num, den = sympy.fraction(sympy.together(piece.expr))
        num = sympy.expand(num)
        if num == 0 or x not in num.free_symbols:
            continue
        poly = sympy.Poly(num, x)
        if poly.degree() <= 2:
            candidates = [r for r in sympy.roots(poly, filter="R")]
        else:
            candidates = list(sympy.real_roots(poly))
        for r in candidates:
            if r > piece.lo and r <= piece.hi and r > 0 and den.xreplace({x: r}) != 0:
                found.append(sympy.nsimplify(r) if r.is_Float else r)
    return sorted(set(found), key=lambda r: float(r))


def evaluator(expr: sympy.Expr, x: sympy.Symbol) -> Callable[[int], object]:
    """n -> ``expr`` at x = n, exactly: for a rational function of ``x`` alone (split at its
    Min/Max) a Fraction from the pieces' integer coefficients (microseconds, where sympy's
    xreplace takes a millisecond: the candidate search calls it thousands of times); else
    sympy's own substitution."""
    def slow(n: int):
        return expr.xreplace({x: sympy.Integer(n)})

    def edge(b) -> float | Fraction:
        return math.inf if b == sympy.oo else Fraction(int(b.p), int(b.q))

    def coefficients(poly_expr) -> list[Fraction]:
        return [Fraction(int(c.p), int(c.q)) for c in sympy.Poly(poly_expr, x).all_coeffs()]

    try:
        parts = []
        for piece in pieces(expr, x):
            num, den = sympy.fraction(sympy.together(piece.expr))
            lo, hi = sympy.Rational(piece.lo) if piece.lo != sympy.oo else piece.lo, \
                sympy.Rational(piece.hi) if piece.hi != sympy.oo else piece.hi
            parts.append((edge(lo), edge(hi), coefficients(num), coefficients(den)))
    except (Unsplittable, sympy.PolynomialError, TypeError, AttributeError, ValueError):
        return slow

    def horner(coeffs: list[Fraction], n: int) -> Fraction:
        out = Fraction(0)
        for c in coeffs:
            out = out * n + c
        return out

    def at(n: int):
        for lo, hi, num, den in parts:
            if lo < n <= hi:
                d = horner(den, n)
                return slow(n) if d == 0 else horner(num, n) / d
        return slow(n)

    return at


def whole(root: sympy.Expr, below: bool) -> int:
    """floor (``below``) or ceiling of a positive real ``root``, exactly. Where sympy's
    numerical refinement gives up (an integer written as radicals sympy cannot compare),
    the nearest integer is checked by simplifying the difference."""
    try:
        return int(sympy.floor(root) if below else sympy.ceiling(root))
    except (sympy.core.evalf.PrecisionExhausted, TypeError, ValueError):
        n = int(round(float(root)))
        if sympy.simplify(root - n) == 0:
            return n
        return math.floor(float(root)) if below else math.ceil(float(root))


def nearest(root: sympy.Expr, valid: Callable[[int], bool], step: int = 1,
            below: bool = True, limit: int | None = None) -> Optional[int]:
    """The nearest integer multiple of ``step`` at or below (``below``) / above ``root`` for
    which ``valid`` holds; None when none within SEARCH_LIMIT candidates, none >= 1, or
    (``limit``) none at most ``limit``."""
    n = whole(root / step, below) * step
    if limit is not None and below:
        n = min(n, limit // step * step)
    for _ in range(SEARCH_LIMIT):
        if n < 1:
            if below:
                return None
            n = step
            continue
        if limit is not None and n > limit:
            return None
        if valid(n):
            return n
        n += -step if below else step
    return None

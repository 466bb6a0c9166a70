"""A length capped by another, min(K, s) (DeBERTa's relative positions: the attention span
is min(max_relative_positions, s)), taken on one side of its cap so that an expression
becomes a polynomial in s: min(K, s) = K where s >= K, = s where s <= K. Both are exact on
their side. No formatting.
"""
from __future__ import annotations

import sympy

from ..algebra.symbols import s


def caps(expr) -> set:
    """The lengths that cap s in ``expr`` (K of each min(K, s))."""
    return {a for m in sympy.sympify(expr).atoms(sympy.Min) if s in m.args
            for a in m.args if a != s}


def capped(expr, long: bool):
    """``expr`` on one side of its caps: min(K, s) as K (``long``: s at least K) or as s (s at
    most K); a min without s as it is."""
    def side(m):
        rest = [a for a in m.args if a != s]
        if len(rest) == len(m.args):
            return m
        return sympy.Min(*rest) if long else s
    return sympy.sympify(expr).replace(lambda e: isinstance(e, sympy.Min), side)

"""``Min`` and ``Max`` of sympy expressions, built once per argument list.

sympy's ``Min(a, b)`` and ``Max(a, b)`` compare their arguments when they are built: for two
symbolic ones (``Min(s, W)``, a rank's share ``Min(start + n, (rank + 1) ceiling(n / t))``)
it factors their difference and asks its sign, which costs milliseconds. The expressions of a
report build the same few caps again and again (one per layer stack, stage, rank and
quantity: 9,212 constructions of 733 distinct caps in two test modules, 28 s of CPU), so the
component functions build them through :func:`min_of` and :func:`max_of`, which keep each
result by its arguments. The result is sympy's own (the same object for the same
arguments), so expressions, numbers and rendering are unchanged."""
from __future__ import annotations

from functools import lru_cache

import sympy


@lru_cache(maxsize=4096)
def min_of(*args) -> sympy.Expr:
    """``sympy.Min(*args)``, kept per argument list."""
    return sympy.Min(*args)


@lru_cache(maxsize=4096)
def max_of(*args) -> sympy.Expr:
    """``sympy.Max(*args)``, kept per argument list."""
    return sympy.Max(*args)

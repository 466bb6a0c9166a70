"""sympy -> LaTeX with the canonical LaTeX names (the only place sympy.latex is called)."""
from __future__ import annotations

import sympy

from ..algebra.symbols import latex_names


def to_latex(expr, **settings) -> str:
    opts = {"symbol_names": latex_names(), "mul_symbol": "dot"}
    opts.update(settings)
    return sympy.latex(expr, **opts)

"""sympy expressions as the term table's JSON trees (:mod:`symcalc.fast.build_terms` and
:mod:`symcalc.fast.build_parallel` write rows and coefficients with it)."""
from __future__ import annotations

import sympy


def tree(expr: sympy.Expr):
    """``expr`` (integer or rational coefficients, symbols, Min, Max, ceiling, floor) as a
    JSON tree: an int, a symbol name, or ``[op, args...]`` with op ``+``, ``*``, ``^``
    (positive integer power), ``/`` (exact division), ``min``, ``max``, ``cd`` (ceiling of a
    quotient) and ``fd`` (floor of a quotient)."""
    if isinstance(expr, sympy.Integer):
        return _int(int(expr))
    if isinstance(expr, sympy.Rational):
        return ["/", _int(int(expr.p)), _int(int(expr.q))]
    if isinstance(expr, sympy.Symbol):
        return expr.name
    if isinstance(expr, sympy.Add):
        return ["+", *(tree(a) for a in sympy.Add.make_args(expr))]
    if isinstance(expr, sympy.Mul):
        num, den = [], []
        for f in sympy.Mul.make_args(expr):
            if isinstance(f, sympy.Rational) and not isinstance(f, sympy.Integer):
                num.append(sympy.Integer(f.p))
                den.append(sympy.Integer(f.q))
            elif isinstance(f, sympy.Pow) and f.exp.is_Integer and f.exp < 0:
                den.append(f.base ** -f.exp)
            else:
                num.append(f)
        out = ["*", *(tree(f) for f in num if f != 1)]
        out = out if len(out) > 2 else (out[1] if len(out) == 2 else 1)
        if den:
            d = ["*", *(tree(f) for f in den)] if len(den) > 1 else tree(den[0])
            return ["/", out, d]
        return out
    if isinstance(expr, sympy.Pow):
        base, exp = expr.args
        if exp.is_Integer and exp > 0:
            return ["^", tree(base), int(exp)]
        if exp.is_Integer and exp < 0:
            return ["/", 1, tree(base ** -exp)]
        raise ValueError(f"not an integer power: {expr}")
    if isinstance(expr, sympy.Min):
        out = tree(expr.args[0])
        for a in expr.args[1:]:
            out = ["min", out, tree(a)]
        return out
    if isinstance(expr, sympy.Max):
        out = tree(expr.args[0])
        for a in expr.args[1:]:
            out = ["max", out, tree(a)]
        return out
    if isinstance(expr, (sympy.ceiling, sympy.floor)):
        num, den = sympy.together(expr.args[0]).as_numer_denom()
        op = "cd" if isinstance(expr, sympy.ceiling) else "fd"
        return [op, tree(sympy.expand(num)), tree(sympy.expand(den))]
    raise ValueError(f"cannot write {type(expr).__name__} as a term tree: {expr}")


def _int(x: int):
    return x if abs(x) < 2**53 else f"#{x}"  # JSON numbers are doubles in the page



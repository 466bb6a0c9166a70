"""Closed forms: a quantity of a spec's architecture with its sizes left as symbols,
simplified, optionally under a named assumption set, and its dominant term."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from . import quantities as q
from .assumptions import assumption
from .options import Options, workload_values
from .spec import Spec, size_values
from .symbols import L, L_dec, L_dense, L_local


@dataclass(frozen=True)
class ClosedForm:
    quantity: str
    assumption: str
    expression: sympy.Expr  # simplified
    expanded: sympy.Expr
    dominant: Optional[sympy.Expr]  # the largest term at the model's sizes
    dominant_share: Optional[sympy.Rational]


def simplify(expr: sympy.Expr) -> sympy.Expr:
    """Expanded, then collected by layer count: ``L*(...) + rest``; a stack with a layer group
    (L_dense dense layers of an MoE stack, L_local sliding layers) reads
    ``(L - L_dense)*(one MoE layer) + L_dense*(one dense layer) + rest``."""
    expanded = sympy.expand(expr)
    group = next((g for g in (L_dense, L_local) if g in expanded.free_symbols), None)
    if group is not None and L in expanded.free_symbols:
        rest = sympy.Dummy("rest", positive=True, integer=True)  # L - group
        split = sympy.expand(expanded.xreplace({L: rest + group}))
        return sympy.collect(split, [rest, group, L_dec]).xreplace({rest: L - group})
    return sympy.collect(expanded, [L, L_dec]) if expanded.free_symbols & {L, L_dec} else expanded


def terms_by_value(expr: sympy.Expr, values: dict[str, int]) -> list[tuple[sympy.Expr, sympy.Rational]]:
    """The terms of the expanded expression with their values, largest first."""
    out = []
    for term in sympy.Add.make_args(sympy.expand(expr)):
        out.append((term, q.value(term, values)))
    return sorted(out, key=lambda tv: -tv[1])


def closed_form(spec: Spec, quantity: str = "params.total", assume: str = "none",
                opts: Options = Options()) -> ClosedForm:
    a = assumption(assume)
    shaped = a.apply_spec(spec)
    expr = a.apply_expr(q.expression(quantity, shaped, opts))
    values = {**size_values(shaped), **workload_values(shaped, opts)}
    ranked = terms_by_value(expr, values) if expr != 0 else []
    total = sum(v for _, v in ranked)
    dominant, share = (ranked[0][0], ranked[0][1] / total) if ranked and total else (None, None)
    return ClosedForm(quantity, assume, simplify(expr), sympy.expand(expr), dominant, share)

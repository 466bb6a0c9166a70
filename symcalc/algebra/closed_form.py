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
from .symbols import L, L_attn, L_conv, L_dec, L_dense, L_ffn, L_lin, L_local, L_ssm

HYBRID_COUNTS = (L_attn, L_lin, L_ssm, L_conv)


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
    ``(L - L_dense)*(one MoE layer) + L_dense*(one dense layer) + rest``; a hybrid stack reads
    ``L_attn*(attention) + L_lin*(linear attention) + ... + L*(every layer's parts)``, with
    ``(L_ffn - L_dense)*(MoE FFN) + L_dense*(dense FFN)`` where some blocks have no FFN."""
    expanded = sympy.expand(expr)
    counts = [c for c in HYBRID_COUNTS + (L_ffn,) if c in expanded.free_symbols]
    if counts:
        ffn = L_ffn if L_ffn in expanded.free_symbols else L
        rest = sympy.Dummy("rest", positive=True, integer=True)  # ffn layers - L_dense
        if L_dense in expanded.free_symbols and ffn in expanded.free_symbols:
            expanded = sympy.expand(expanded.xreplace({ffn: rest + L_dense}))
            order = [rest, L_dense] + [c for c in counts if c is not L_ffn] + [L, L_local]
            return sympy.collect(expanded, order).xreplace({rest: ffn - L_dense})
        return sympy.collect(expanded, counts + [L, L_dense, L_local])
    group = next((g for g in (L_dense, L_local) if g in expanded.free_symbols), None)
    if group is not None and L in expanded.free_symbols:
        rest = sympy.Dummy("rest", positive=True, integer=True)  # L - group
        split = sympy.expand(expanded.xreplace({L: rest + group}))
        return sympy.collect(split, [rest, group, L_dec]).xreplace({rest: L - group})
    return sympy.collect(expanded, [L, L_dec]) if expanded.free_symbols & {L, L_dec} else expanded


def terms_by_value(expr: sympy.Expr, values: dict[str, int]) -> list[tuple[sympy.Expr, sympy.Rational]]:
    """The terms of the expanded expression with their values, largest first (when a term is
    negative, as (L - L_dense) expanded gives, :func:`closed_form` ranks the layer groups of
    the simplified form instead)."""
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
    simplified = simplify(expr)
    if any(v < 0 for _, v in ranked):  # (L - L_dense)*(...) expanded: rank the layer groups
        ranked = sorted(((t, q.value(t, values)) for t in sympy.Add.make_args(simplified)),
                        key=lambda tv: -tv[1])
    total = sum(v for _, v in ranked)
    dominant, share = (ranked[0][0], ranked[0][1] / total) if ranked and total else (None, None)
    return ClosedForm(quantity, assume, simplified, sympy.expand(expr), dominant, share)

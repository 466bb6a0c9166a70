"""Which sizes follow the one being solved for (or differentiated by).

A model's own relations, the ones ``--set`` keeps too (:func:`symcalc.algebra.spec.with_overrides`):
the head width d_h = d / n_h when the model has it so, n_kv = n_h for multi-head attention,
d_ff = 4 d when the model has it so. ``--keep A/B`` adds one: A stays A0/B0 times B. Every
other size keeps the model's value.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import SymcalcError
from .spec import Spec
from .symbols import SIZES

WORKLOAD = {"b", "s", "s_dec", "N_d", "t"}


@dataclass(frozen=True)
class Tie:
    """``name`` follows ``expr`` (sizes as symbols); ``why`` says where the relation is from."""
    name: str
    expr: sympy.Expr
    why: str


def _s(name: str) -> sympy.Symbol:
    return SIZES[name].symbol


def model_ties(spec: Spec) -> list[Tie]:
    out = []
    if not spec.mla and spec.d_h is not None and spec.d_h * spec.n_h == spec.d:
        out.append(Tie("d_h", _s("d") / _s("n_h"), "the head width is d / n_h"))
    if spec.n_kv == spec.n_h:
        out.append(Tie("n_kv", _s("n_h"), "multi-head attention: n_kv = n_h"))
    if spec.d_ff == 4 * spec.d:
        out.append(Tie("d_ff", 4 * _s("d"), "the model's FFN width is 4 d"))
    return out


def keep_ties(keeps, values: dict[str, int], size: str, known=None) -> list[Tie]:
    """``--keep A/B``: A = (A0 / B0) B at the model's values A0, B0; written B = (B0 / A0) A
    when A is the size solved for, so that the tie always points away from it."""
    out = []
    for text in keeps:
        field = f"--keep {text}"
        a, slash, b = str(text).partition("/")
        a, b = a.strip(), b.strip()
        if not slash or not a or not b:
            raise SymcalcError(field, "must be a ratio of two sizes, e.g. d_ff/d")
        known = set(values) if known is None else set(known)
        for n in (a, b):
            if n not in SIZES or n not in values or n not in known:
                raise SymcalcError(field, f"{n!r:.40} is not a size of this model "
                                          f"(sizes: {', '.join(sorted(known))})")
        if a == b:
            raise SymcalcError(field, "names the same size twice")
        ratio = sympy.Rational(values[a], values[b])
        if a == size:
            out.append(Tie(b, _s(a) / ratio, f"--keep {a}/{b} = {ratio}"))
        else:
            out.append(Tie(a, ratio * _s(b), f"--keep {a}/{b} = {ratio}"))
    return out


def all_ties(spec: Spec, keeps, values: dict[str, int], size: str) -> list[Tie]:
    """The model's ties and the kept ratios (a kept ratio replaces a model tie of the same
    size); ties of the size solved for are dropped: it is the one that moves."""
    kept = keep_ties(keeps, values, size, set(spec.sizes()) | (set(values) & WORKLOAD))
    names = {t.name for t in kept}
    if len(names) != len(kept):
        raise SymcalcError("--keep", "two ratios make the same size follow")
    ties = [t for t in model_ties(spec) if t.name not in names] + kept
    return [t for t in ties if t.name != size and t.name in values]


def substitution(ties: list[Tie]) -> dict[sympy.Symbol, sympy.Expr]:
    """symbol -> its expression with every chain resolved (n_kv = n_h, d_h = d / n_h)."""
    sub = {_s(t.name): t.expr for t in ties}
    for _ in range(len(sub) + 1):
        new = {k: v.xreplace(sub) for k, v in sub.items()}
        if new == sub:
            return sub
        sub = new
    raise SymcalcError("--keep", "the kept ratios make a size follow itself")


def apply(expr: sympy.Expr, ties: list[Tie]) -> sympy.Expr:
    return sympy.sympify(expr).xreplace(substitution(ties)) if ties else sympy.sympify(expr)

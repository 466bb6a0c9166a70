"""How a quantity moves with one size, at the model's sizes.

For a quantity Q and a size x (the sizes that follow x follow it, :mod:`.ties`):

* ``derivative``  dQ/dx with the sizes as symbols;
* ``slope``       dQ/dx at the model's sizes (exact); at a kink -- x = W, where a sliding
                  window starts to cap the cache, ``Min(s, W)`` -- the slope from the left
                  (x -> W from below: the cache still grows there), never sympy's average
                  of the two sides (``Heaviside(0) = 1/2``);
* ``elasticity``  (x / Q) dQ/dx there, an exact rational: Q grows locally as x^elasticity;
* ``step``        Q(x + 1) - Q(x): what one more unit of x (one more layer) adds, exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import SymcalcError
from . import quantities as q
from .deadline import SOLVE_LIMIT, cpu_limit, undecided
from .options import Options, workload_values
from .roots import Unsplittable, pieces
from .solve import solvable
from .spec import Spec, size_values
from .symbols import SIZES
from .ties import Tie, all_ties, apply


@dataclass(frozen=True)
class Sensitivity:
    model: str
    quantity: str
    size: str
    ties: tuple[Tie, ...]
    expression: sympy.Expr  # Q with the ties applied
    derivative: sympy.Expr
    at: int  # the size's value in the model
    value: sympy.Rational  # Q there
    slope: sympy.Expr
    elasticity: sympy.Expr
    step: sympy.Rational  # Q(at + 1) - Q(at)

    def to_json(self) -> dict:
        return {"quantity": self.quantity, "size": self.size, "at": self.at,
                "follows": {t.name: str(t.expr) for t in self.ties},
                "derivative": str(self.derivative), "value": _num(self.value),
                "slope": _num(self.slope), "elasticity": _num(self.elasticity),
                "elasticity_float": _float(self.elasticity), "step": _num(self.step)}


def _num(x):
    x = x if isinstance(x, sympy.Basic) else sympy.Integer(x)
    if x.is_Integer:
        return int(x)
    return str(x)


def _float(x):
    """A float for JSON, or None where there is none (Q = 0: no elasticity)."""
    x = x if isinstance(x, sympy.Basic) else sympy.Integer(x)
    return float(x) if x.is_finite and x.is_real else None


def left_slope(expr: sympy.Expr, x: sympy.Symbol, at: int) -> sympy.Expr:
    """d expr / dx at x = ``at`` (expr has no other symbol), from the left at a kink:
    ``expr`` is split at its Min/Max into pieces on (lo, hi], and the piece that holds
    ``at`` (the lower one at an edge) is differentiated."""
    try:
        for piece in pieces(expr, x):
            if piece.lo < at <= piece.hi:
                return sympy.diff(piece.expr, x).xreplace({x: sympy.Integer(at)})
    except Unsplittable:
        pass
    derivative = sympy.diff(expr, x)
    slope = derivative.xreplace({x: sympy.Integer(at)})
    if slope.is_number and not slope.has(sympy.Heaviside, sympy.DiracDelta, sympy.nan):
        return slope
    return sympy.limit(derivative, x, at, "-")


def sensitivity(spec: Spec, quantity: str, size: str, opts: Options = Options(),
                keep=(), field: str = "--diff") -> Sensitivity:
    """See the module docstring; errors name ``field`` (the option that named the size)."""
    opts = opts.checked()
    values = {k: v for k, v in {**size_values(spec), **workload_values(spec, opts)}.items()
              if k in SIZES}
    size = solvable(spec, size, values, field)
    x = SIZES[size].symbol
    every = all_ties(spec, keep, values, size)
    ties = [t for t in every if x in apply(SIZES[t.name].symbol, every).free_symbols]
    with cpu_limit(SOLVE_LIMIT, field, "differentiating"), undecided(field, quantity):
        expr = sympy.expand(apply(q.expression(quantity, spec, opts), ties))
        if x not in expr.free_symbols:
            raise SymcalcError(field, f"{quantity} does not depend on {size} for {spec.name}")
        derivative = sympy.expand(sympy.diff(expr, x))
        subs = {SIZES[k].symbol: sympy.Integer(v) for k, v in values.items()}
        at = values[size]
        value = expr.xreplace(subs)
        slope = left_slope(expr.xreplace({k: v for k, v in subs.items() if k != x}), x, at)
        elasticity = at * slope / value if value != 0 else sympy.zoo
        step = expr.xreplace({**subs, x: sympy.Integer(at + 1)}) - value
    return Sensitivity(spec.name, quantity, size, tuple(ties), expr, derivative, at, value,
                       slope, elasticity, step)

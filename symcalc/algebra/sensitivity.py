"""How a quantity moves with one size, at the model's sizes.

For a quantity Q and a size x (the sizes that follow x follow it, :mod:`.ties`):

* ``derivative``  dQ/dx with the sizes as symbols;
* ``slope``       dQ/dx at the model's sizes (exact);
* ``elasticity``  (x / Q) dQ/dx there: Q grows locally as x^elasticity;
* ``step``        Q(x + 1) - Q(x): what one more unit of x (one more layer) adds, exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import SymcalcError
from . import quantities as q
from .options import Options, workload_values
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
                "elasticity_float": float(self.elasticity), "step": _num(self.step)}


def _num(x):
    x = sympy.nsimplify(x) if getattr(x, "is_Float", False) else sympy.sympify(x)
    if x.is_Integer:
        return int(x)
    return str(x)


def sensitivity(spec: Spec, quantity: str, size: str, opts: Options = Options(),
                keep=()) -> Sensitivity:
    opts = opts.checked()
    values = {k: v for k, v in {**size_values(spec), **workload_values(spec, opts)}.items()
              if k in SIZES}
    solvable(spec, size, values)
    x = SIZES[size].symbol
    every = all_ties(spec, keep, values, size)
    ties = [t for t in every if x in apply(SIZES[t.name].symbol, every).free_symbols]
    expr = sympy.expand(apply(q.expression(quantity, spec, opts), ties))
    if x not in expr.free_symbols:
        raise SymcalcError("--diff", f"{quantity} does not depend on {size} for {spec.name}")
    derivative = sympy.expand(sympy.diff(expr, x))
    subs = {SIZES[k].symbol: sympy.Integer(v) for k, v in values.items()}
    at = values[size]
    value = expr.xreplace(subs)
    slope = derivative.xreplace(subs)
    if getattr(slope, "is_number", False) is not True:  # Min(s, W) at s = W: take the left slope
        slope = sympy.limit(derivative.xreplace({k: v for k, v in subs.items() if k != x}), x, at, "-")
    elasticity = sympy.nsimplify(at * slope / value) if value != 0 else sympy.zoo
    step = expr.xreplace({**subs, x: sympy.Integer(at + 1)}) - value
    return Sensitivity(spec.name, quantity, size, tuple(ties), expr, derivative, at, value,
                       slope, elasticity, step)

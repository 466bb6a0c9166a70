"""The report of one model: exact numbers by substitution into the sympy expressions.

The result is plain data (the JSON object of the command-line contract); renderers format
it. :mod:`symcalc.fast.quick` produces the same object without sympy.
"""
from __future__ import annotations

from typing import Any

from .algebra import accounting, quantities as q
from .algebra.breakdown import Breakdown
from .algebra.options import Options
from .fast.quick import assemble, conventions  # noqa: F401  (conventions re-exported)
from .algebra.spec import Spec


class SympyNumbers:
    """The report's numbers by substituting into the sympy expressions (the reference the
    generated evaluators of :mod:`symcalc.fast.quick` are tested against)."""

    def __init__(self, spec: Spec, opts: Options):
        self.spec, self.opts = spec, opts

    def number(self, name: str, v: dict[str, int]) -> int:
        opts = self.opts
        if self.spec.mla and "sw_mla_expanded" in v:  # the MLA cache convention asked for
            opts = opts.with_(mla_cache="expanded" if v["sw_mla_expanded"] else "latent")
        return q.whole(q.value(q.expression(name, self.spec, opts), v))

    def leaves(self, kind: str, v: dict[str, int]) -> Breakdown:
        if kind == "params":
            bd = accounting.params(self.spec)
        elif kind == "matmul":
            bd = q.matmul_breakdown(self.spec, self.opts.with_(causal="full"))
        else:
            bd = accounting.per_layer(self.spec)[kind.split(":", 1)[1]]
        return accounting.numbers(bd, v)

    def layer_prefixes(self) -> list[str]:
        return list(accounting.per_layer(self.spec))


def report(spec: Spec, opts: Options = Options()) -> dict[str, Any]:
    """The full report: params, flops and memory, exact integers, by substitution."""
    return assemble(spec, opts, SympyNumbers(spec, opts))

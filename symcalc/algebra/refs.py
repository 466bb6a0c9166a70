"""The names a relation may use, and what each stands for.

* a quantity: ``params.total``, ``flops.forward_matmul``, ``memory.kv_cache_bytes`` ... (any
  name of :data:`symcalc.algebra.quantities.QUANTITIES`);
* a part of a breakdown, ``KIND:PATH``: ``params:PATH`` is the parameters under PATH of the
  report's ``params.breakdown`` (``params:layer/attention``, ``params:embedding/token``),
  ``flops:PATH`` the forward matmul FLOPs under PATH of ``flops.breakdown``
  (``flops:layer/attention/scores``, ``flops:layer/ffn``, ``flops:head``) under the chosen
  causal convention. Values under ``layer/`` are totals over all layers;
* a size or workload symbol: ``d``, ``L``, ``n_h``, ``s``, ``b`` ...;
* a named constant the caller passes (accelerators: ``H100`` is its memory in bytes).
"""
from __future__ import annotations

from typing import Callable, Optional

import sympy

from ..errors import SymcalcError
from . import accounting, quantities as q
from .options import Options
from .spec import Spec
from .symbols import SIZES

KINDS = {"params": "count", "flops": "flops", "memory": "bytes"}
PART_KINDS = {"params": "count", "flops": "flops"}


def part_breakdown(spec: Spec, kind: str, opts: Options):
    if kind == "params":
        return accounting.params(spec)
    return q.matmul_breakdown(spec, opts)


def part(spec: Spec, kind: str, path: str, opts: Options, bd=None) -> sympy.Expr:
    """The expression of ``KIND:PATH`` (a parent path sums its children); ``bd``: the
    breakdown of ``kind`` when the caller has it."""
    bd = part_breakdown(spec, kind, opts) if bd is None else bd
    if path not in bd:
        top = ", ".join(bd.children(""))
        raise SymcalcError(f"{kind}:{path}", f"is not a part of {spec.name}'s {kind} breakdown "
                                             f"(its parts: {top}; deeper ones as in report --json)")
    return bd.value(path)


def lookup_for(spec: Spec, opts: Options, constants: dict) -> tuple[Callable, dict[str, str]]:
    """(lookup, names to match first): ``lookup(name)`` -> (expression, kind) or None."""
    by_lower = {k.lower(): v for k, v in constants.items()}
    breakdowns: dict = {}  # one breakdown per kind, however many parts a relation names

    def lookup(name: str) -> Optional[tuple[sympy.Expr, str]]:
        if name.lower() in by_lower:
            value, kind = by_lower[name.lower()]
            return sympy.Integer(value), kind
        if ":" in name:
            kind, _, path = name.partition(":")
            if kind not in PART_KINDS:
                raise SymcalcError(name, f"a part is params:PATH or flops:PATH (got {kind}:)")
            if kind not in breakdowns:
                breakdowns[kind] = part_breakdown(spec, kind, opts)
            return part(spec, kind, path, opts, breakdowns[kind]), PART_KINDS[kind]
        if name in q.QUANTITIES:
            return q.expression(name, spec, opts), KINDS[name.split(".")[0]]
        if name in SIZES:
            return SIZES[name].symbol, "count"
        return None

    return lookup, {k: k for k in constants}

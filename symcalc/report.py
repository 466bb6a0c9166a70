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
from .algebra.symbols import SIZES

import sympy


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
        # a part whose value is 0 at these sizes (DeepSeek-V4's 128-token HCA windows at s < 128)
        # is left out, as the quick report leaves it (symcalc.fast.quick.Numbers.leaves)
        return accounting.numbers(bd, v).where(lambda leaf: leaf.value != 0)

    def layer_prefixes(self, v: dict[str, int]) -> list[str]:
        return list(accounting.per_layer(self.spec))

    # -- per rank, from symcalc.algebra.parallel and communication -----------------------------
    def _stage(self, stage: int):
        lay = self.opts.layout()
        return "first" if stage == 0 else "last" if stage == lay.pp - 1 else stage

    def _plan(self):
        from .algebra.tp_plans import plan_entries
        from .fast.plans import plan_rows

        return plan_entries(plan_rows(self.spec, "hf"))

    def stage_number(self, name: str, v: dict[str, int], stage: int, memo: dict) -> int:
        """A per-rank quantity of the stage by substitution into the per-rank expressions."""
        key = ("sympy", name, stage)
        if key not in memo:
            memo[key] = q.whole(q.value(self.stage_expression(name, stage, memo), v))
        return memo[key]

    def stage_expression(self, name: str, stage: int, memo: dict):
        from .algebra import communication as C, parallel as P

        lay = self.opts.layout()
        where = self._stage(stage)
        mem = memo.get(("sympy-memory", stage))
        if mem is None:
            mem = memo[("sympy-memory", stage)] = P.rank_memory(self.spec, self.opts, lay,
                                                                self._plan(), where)
        if name.startswith("per_rank."):
            kind = name.split(".", 1)[1]
            return {"params": lambda: P.total(mem.params),
                    "weights_bytes": lambda: P.total(mem.weights),
                    "gradients_bytes": lambda: P.total(mem.gradients),
                    "optimizer_bytes": lambda: P.total(mem.optimizer),
                    "states_bytes": mem.model_states,
                    "activations_bytes": lambda: P.total(mem.activations),
                    "kv_cache_bytes": lambda: P.total(mem.kv_cache)}[kind]()
        comm = memo.get(("sympy-comm", stage))
        if comm is None:
            comm = memo[("sympy-comm", stage)] = C.communication(self.spec, self.opts, lay,
                                                                 self._plan(), where)
        _, dim, kind = name.split(".")
        by = comm[dim]
        if kind == "forward_bytes":
            return C.comm_bytes(by["forward"])
        if kind == "step_bytes":
            return C.comm_bytes(by["step"])
        if kind == "step_wire_bytes":
            return C.comm_bytes(by["step"], wire=True)
        if kind == "decode_bytes_per_token":
            return C.comm_bytes(by["decode"])
        if kind == "forward_wire_bytes":
            return C.comm_bytes(by["forward"], wire=True)
        if kind == "decode_wire_bytes_per_token":
            return C.comm_bytes(by["decode"], wire=True)
        reduces = [x for x in by["forward"] if x.kind == "all_reduce"]
        if kind == "forward_allreduce_count":
            return sympy.Add(*[x.count for x in reduces])
        return C.comm_bytes(reduces)

    def stage_leaves(self, v: dict[str, int], stage: int):
        from fractions import Fraction

        from .algebra import parallel as P
        from .algebra.tp_plans import is_routed_expert

        lay = self.opts.layout()
        terms = P.rank_params(self.spec, lay, self._plan(), self._stage(stage))
        subs = {SIZES[k].symbol: sympy.Integer(x) for k, x in v.items() if k in SIZES}
        zs = P.zero_switches(lay)
        out = []
        for expert in (False, True):
            leaves = {}
            for x in terms:
                if is_routed_expert(x.path) == expert:
                    leaves[x.path] = leaves.get(x.path, 0) + int(x.expr.xreplace(subs))
            share = P._zero_share("zero_w", expert).xreplace(zs).xreplace(subs)
            out.append((leaves, Fraction(int(sympy.fraction(share)[0]),
                                         int(sympy.fraction(share)[1]))))
        return out


def report(spec: Spec, opts: Options = Options()) -> dict[str, Any]:
    """The full report: params, flops and memory, exact integers, by substitution."""
    return assemble(spec, opts, SympyNumbers(spec, opts))

"""Questions about how fast (issue 23 item 5), answered by exact search on the quick path:
the largest (or smallest) batch or sequence length at which a relation of the speed,
capacity or utilization figures holds, and the fewest accelerators (over layouts) at which it
holds. ``solve`` reads the relation with the one expression parser and passes a test of the
figures (:data:`FIGURES` by name); no sympy here.

The figures move one way with a batch or a sequence length (times and memory grow with
both), so the answer is the edge of the range where the relation holds: from 1 up, doubling
until it changes, then halving the gap.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, Optional

from ..algebra.layout import Layout
from ..algebra.options import Options, heads_split_badly
from ..algebra.spec import Spec
from ..errors import SymcalcError
from . import speed as SP
from .quick import quick_report

# name in a relation -> where the figure sits in the blocks
FIGURES = {
    "speed.prefill_seconds": ("speed", "prefill_seconds"),
    "speed.decode_seconds_per_token": ("speed", "decode_seconds_per_token"),
    "speed.prefill_tokens_per_second": ("speed", "tokens_per_second", "prefill"),
    "speed.decode_tokens_per_second": ("speed", "tokens_per_second", "decode"),
    "capacity.kv_budget_bytes": ("capacity", "kv_budget_bytes"),
    "capacity.blocks": ("capacity", "blocks"),
    "capacity.max_sequences": ("capacity", "max_sequences"),
    "capacity.deployment_max_sequences": ("capacity", "deployment_max_sequences"),
    "utilization.mfu": ("utilization", "mfu"),
    "utilization.hfu": ("utilization", "hfu"),
}
SIZES = {"b": "batch", "s": "seq_len"}
LIMITS = {"b": 2**20, "s": 2**24}
GPU_LIMIT = 4096
Test = Callable[[dict], bool]


def figures(spec: Spec, opts: Options, sopts: SP.SpeedOptions) -> dict[str, Fraction]:
    """The figures a relation may name, exact, for one model, workload and layout."""
    rep = quick_report(spec, opts)
    out = SP.blocks(spec, opts, rep, sopts, compute_bound_batch=False)
    values = {}
    for name, where in FIGURES.items():
        x: Any = out
        for key in where:
            x = x.get(key) if isinstance(x, dict) else None
        if x is not None:
            values[name] = Fraction(x)
    return values


@dataclass(frozen=True)
class Answer:
    size: str  # b, s or gpus
    value: int
    edge: str  # "largest" or "smallest"
    figures: dict  # the named figures at the answer
    beyond: Optional[dict]  # ... at the next value out (None: the limit)
    layout: Layout

    @property
    def note(self) -> Optional[str]:
        """A batch larger than the KV cache holds is said so (the relation did not ask)."""
        held = self.figures.get("capacity.max_sequences")
        if self.size == "b" and held is not None and self.value > held:
            return (f"the KV cache holds {int(held)} sequences of this length per replica: "
                    f"b = {self.value} does not fit")
        return None

    def to_json(self) -> dict:
        return {"for": self.size, "answer": self.value, "edge": self.edge, "note": self.note,
                "figures": {k: float(v) for k, v in self.figures.items()},
                "beyond": None if self.beyond is None else
                {"at": self.beyond["at"], "figures": {k: float(v) for k, v
                                                      in self.beyond["figures"].items()}},
                "layout": {k: getattr(self.layout, k) for k in ("tp", "pp", "ep", "cp", "dp")},
                "gpus": self.layout.tp * self.layout.pp * self.layout.cp * self.layout.dp}


def _at(spec: Spec, opts: Options, sopts: SP.SpeedOptions, size: str, x: int) -> dict:
    return figures(spec, opts.with_(**{SIZES[size]: x}), sopts)


def solve_size(spec: Spec, opts: Options, sopts: SP.SpeedOptions, size: str,
               test: Test) -> Answer:
    """The largest ``size`` (b or s) at which ``test`` holds when it holds at 1, else the
    smallest at which it does."""
    if size not in SIZES:
        raise SymcalcError("--for", f"how-fast questions solve for b, s or gpus (got {size!r})")
    limit = LIMITS[size]
    cache: dict[int, dict] = {}

    def holds(x: int) -> bool:
        if x not in cache:
            cache[x] = _at(spec, opts, sopts, size, x)
        return test(cache[x])

    first = holds(1)
    lo, hi = 1, 2
    while holds(hi) == first:  # lo holds as 1 does; find where it changes
        lo = hi
        if hi >= limit:
            if first:
                return Answer(size, limit, "largest", cache[limit], None, sopts.layout)
            raise SymcalcError("--for", f"no {size} up to {limit:,} meets the relation")
        hi = min(2 * hi, limit)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid) == first:
            lo = mid
        else:
            hi = mid
    if first:  # lo is the largest that holds, hi the first that does not
        return Answer(size, lo, "largest", cache[lo], {"at": hi, "figures": cache[hi]},
                      sopts.layout)
    return Answer(size, hi, "smallest", cache[hi], {"at": lo, "figures": cache[lo]},
                  sopts.layout)


def layouts(spec: Spec, gpus: int, sopts: SP.SpeedOptions) -> list[Layout]:
    """Layouts of ``gpus`` accelerators: tensor parallelism within a node (t dividing the
    heads as the plan needs), pipeline stages of at most L layers, the rest data-parallel
    replicas, the other layout options as given; fewest pipeline stages first."""
    inside = sopts.gpu.within_node.devices if sopts.gpu.within_node else 1
    out = []
    for t in range(1, min(gpus, inside) + 1):
        if gpus % t or heads_split_badly(spec.n_h, spec.n_kv or spec.n_h, t):
            continue
        for p in range(1, min(gpus // t, spec.L) + 1):
            if (gpus // t) % p:
                continue
            out.append(sopts.layout.with_(tp=t, pp=p, vpp=1, ep=1, etp=None, cp=1,
                                          dp=gpus // (t * p)))
    return sorted(out, key=lambda lay: (lay.pp, -lay.tp))


def solve_gpus(spec: Spec, opts: Options, sopts: SP.SpeedOptions, test: Test) -> Answer:
    """The fewest accelerators, over their layouts (:func:`layouts`), at which ``test``
    holds; the layout that first meets it."""
    for gpus in range(1, GPU_LIMIT + 1):
        for layout in layouts(spec, gpus, sopts):
            try:
                got = figures(spec, opts.with_layout(layout), replace(sopts, layout=layout))
            except SymcalcError:  # a layout the model cannot take (pipeline stages of a hybrid)
                continue
            if test(got):
                return Answer("gpus", gpus, "smallest", got, None, layout)
    raise SymcalcError("--for", f"no layout of up to {GPU_LIMIT} accelerators meets the relation")

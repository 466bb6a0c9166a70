"""Sweeps of how fast (issue 23 item 5): the speed, capacity and utilization figures (and any
report quantity) over a grid whose axes may be accelerators (``gpu=H100,B200``), layout
degrees (``tp``, ``pp``, ``dp``, ``ep``, ``cp``), the workload (``batch``, ``seq_len``,
``context``) and the model's sizes. Point by point on the quick path, exact, printed as
floats (no numpy, no sympy: a layout's per-rank figures are the report's).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Iterable

from ..algebra.layout import Layout
from ..algebra.options import Options
from ..algebra.spec import SIZE_FIELDS, Spec, with_overrides
from ..errors import SymcalcError
from ..inputs.gpus import accelerator
from . import speed as SP
from .quick import QUANTITIES, evaluate
from .speed_solve import FIGURES, figures

LAYOUT_KEYS = ("tp", "pp", "dp", "ep", "cp")
WORKLOAD_KEYS = ("batch", "seq_len", "context")
KEYS = ("gpu",) + LAYOUT_KEYS + WORKLOAD_KEYS + SIZE_FIELDS
POINT_LIMIT = 10_000  # each point is a report and its speed blocks


def is_speed_sweep(keys: Iterable[str], quantities: Iterable[str]) -> bool:
    return any(k in ("gpu",) + LAYOUT_KEYS + ("context",) for k in keys) or \
        any(q in FIGURES for q in quantities)


@dataclass
class SpeedSweepResult:
    model: str
    keys: list[str]
    quantities: list[str]
    rows: list[dict[str, Any]]

    def to_csv(self, out) -> None:
        names = self.keys + self.quantities
        out.write(",".join(names) + "\n")
        for row in self.rows:
            out.write(",".join("" if row[n] is None else str(row[n]) for n in names) + "\n")

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "numbers": "float", "keys": self.keys,
                "quantities": self.quantities, "rows": self.rows}


def _plain(x: Any) -> Any:
    if isinstance(x, Fraction):
        return x.numerator if x.denominator == 1 else float(x)
    return x


def sweep_speed(spec: Spec, grid: dict[str, list], quantities: list[str], opts: Options,
                sopts: SP.SpeedOptions, files: tuple = ()) -> SpeedSweepResult:
    """Every point of the grid (Cartesian product, first key slowest)."""
    for key in grid:
        if key not in KEYS:
            raise SymcalcError(f"--grid {key}", f"is not a grid key (known: {', '.join(KEYS)})")
    for name in quantities:
        if name not in FIGURES and name not in QUANTITIES:
            raise SymcalcError("quantity", f"must be one of {', '.join((*QUANTITIES, *FIGURES))} "
                                           f"(got {name!r})")
    points = 1
    for values in grid.values():
        points *= len(values)
    if points > POINT_LIMIT:
        raise SymcalcError("--grid", f"has {points:,} points; a sweep of how fast evaluates at "
                                     f"most {POINT_LIMIT:,}")
    gpus = {name: accelerator(name, files) for name in grid.get("gpu", [])}
    rows = []
    for combo in itertools.product(*grid.values()):
        point = dict(zip(grid, combo))
        sizes = {k: v for k, v in point.items() if k in SIZE_FIELDS}
        p_spec = with_overrides(spec, sizes) if sizes else spec
        layout = replace(sopts.layout, **{k: v for k, v in point.items() if k in LAYOUT_KEYS})
        p_opts = opts.with_(**{k: v for k, v in point.items() if k in WORKLOAD_KEYS}
                            ).with_layout(layout)
        p_sopts = replace(sopts, layout=layout.checked(),
                          gpu=gpus[point["gpu"]] if "gpu" in point else sopts.gpu)
        figs = figures(p_spec, p_opts, p_sopts) if any(q in FIGURES for q in quantities) else {}
        row = dict(point)
        for name in quantities:
            row[name] = _plain(figs.get(name)) if name in FIGURES else \
                evaluate(name, p_spec, p_opts)
        rows.append(row)
    return SpeedSweepResult(spec.name, list(grid), list(quantities), rows)

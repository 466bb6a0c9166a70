"""Which parallel layouts fit: ``solve MODEL --fit 'per_rank.peak_bytes <= 80GB' --for tp``
(the smallest degree of one dimension that meets the relation, the others as given) and
``solve MODEL --layouts N`` (every layout of N GPUs, t p c N_d = N with expert parallelism
inside the data- and context-parallel ranks, that meets it, sorted by per-rank peak, then by
the bytes each rank sends per step).

The relation is read by the one parser of user expressions
(:func:`symcalc.algebra.relation.parse_relation`); each name in it -- a per-rank or
communication figure, a whole-model quantity, an accelerator -- is evaluated for each
candidate layout by the term table (:mod:`symcalc.fast.quick`, :mod:`symcalc.fast.per_rank`),
exactly. The search is bounded: the candidates of each degree are those a model can take (t
up to the query heads, p up to the layers, c dividing the sequence, e up to the experts) and
at most :data:`MAX_CANDIDATES` layouts, within :data:`TIME_LIMIT` seconds.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional

from ..algebra.layout import DIMENSIONS, PER_RANK
from ..algebra.options import Options, seq_len_of
from ..errors import SymcalcError

MAX_CANDIDATES = 5_000
TIME_LIMIT = 30.0  # seconds of wall time for one search
FOR = {"tp": "tp", "pp": "pp", "ep": "ep", "cp": "cp", "dp": "dp", "t": "tp", "p": "pp",
       "e": "ep", "c": "cp", "N_d": "dp"}
DEFAULT_FIT = "per_rank.peak_bytes <= {gpu}"


def parallel_names(text: str) -> bool:
    """Does a relation read a per-rank or communication figure?"""
    return "per_rank." in text or "communication." in text


def figures(spec, opts: Options) -> dict[str, int]:
    """Every figure a relation may name for one layout: the report's (whole model, per rank,
    communication), exact."""
    from .quick import quick_report

    rep = quick_report(spec, opts.with_(per_stage=False))
    out = {f"params.{k}": rep["params"][k] for k in ("total", "active", "embedding",
                                                   "non_embedding")}
    out.update({f"flops.{k}": rep["flops"][k] for k in ("forward_matmul", "forward", "training",
                                                      "decode_per_token")})
    for k in ("weights_bytes", "kv_cache_bytes", "activations_bytes", "training_bytes",
              "recurrent_state_bytes"):
        if k in rep["memory"]:
            out[f"memory.{k}"] = rep["memory"][k]
    rank = rep.get("per_rank")
    if rank is None:  # a layout of one rank: the whole model's figures, nothing sent
        rank = {"params": out["params.total"], "weights_bytes": out["memory.weights_bytes"],
                "activations_bytes": out["memory.activations_bytes"],
                "kv_cache_bytes": out["memory.kv_cache_bytes"],
                "states_bytes": out["memory.training_bytes"],
                "peak_bytes": rep["memory"]["training_peak_bytes"]}
        comm = {d: {} for d in DIMENSIONS}
    else:
        comm = rep["communication"]
    for k, x in rank.items():
        if isinstance(x, int) and not isinstance(x, bool):
            out[f"per_rank.{k}"] = x
    for dim in DIMENSIONS:
        for k in ("forward_bytes", "step_bytes", "step_wire_bytes", "decode_bytes_per_token",
                  "forward_wire_bytes", "decode_wire_bytes_per_token",
                  "forward_allreduce_count", "forward_allreduce_bytes"):
            if dim == "tp" or not k.startswith("forward_allreduce"):
                out[f"communication.{dim}.{k}"] = comm[dim].get(k, 0)
    return out


KINDS = {"params": "count", "flops": "flops", "memory": "bytes"}


def relation_of(text: str, field: str, constants: dict):
    """The relation with every figure a symbol (its value found per layout)."""
    import sympy

    from ..algebra.relation import parse_relation

    known = set(PER_RANK) | {"per_rank.peak_bytes", "per_rank.serving_peak_bytes"}
    by_lower = {k.lower(): v for k, v in constants.items()}

    def lookup(name: str):
        if name.lower() in by_lower:
            value, kind = by_lower[name.lower()]
            return sympy.Integer(value), kind
        head = name.split(".", 1)[0]
        if name in known or (head in KINDS and "." in name and ":" not in name):
            kind = "count" if name.endswith(("params", "_count")) else \
                "flops" if head == "flops" else "count" if head == "params" else "bytes"
            return sympy.Symbol(name), kind
        return None

    return parse_relation(text, field, lookup, ("<=", "<", ">=", ">", "="), {k: k for k in constants})


def holds(relation, values: dict[str, int]) -> tuple[bool, Any, Any]:
    import sympy

    subs = {}
    for sym in relation.lhs.free_symbols | relation.rhs.free_symbols:
        if sym.name not in values:
            raise SymcalcError(sym.name, "is not a figure of this model (see report --json)")
        subs[sym] = sympy.Integer(values[sym.name])
    lhs, rhs = relation.lhs.xreplace(subs), relation.rhs.xreplace(subs)
    return relation.holds(lhs, rhs), lhs, rhs


def candidates(spec, opts: Options, dim: str) -> list[int]:
    """The degrees of ``dim`` a model can take, smallest first."""
    s = seq_len_of(spec, opts)
    n_kv = spec.n_kv or spec.n_h
    if dim == "tp":
        top = spec.n_h
        return [t for t in range(1, top + 1)
                if spec.n_h % t == 0 and (n_kv % t == 0 or t % n_kv == 0)]
    if dim == "pp":
        return list(range(1, spec.L + 1))
    if dim == "ep":
        return [e for e in range(1, (spec.E or 1) + 1)]
    if dim == "cp":
        return [c for c in range(1, min(s, 4096) + 1) if s % c == 0]
    if dim == "dp":
        return [2 ** i for i in range(0, 21)]
    raise SymcalcError("--for", f"must be a layout dimension ({', '.join(sorted(FOR))}) or a "
                                f"size (got {dim!r})")


@dataclass
class Tried:
    layout: dict[str, int]
    fits: Optional[bool]  # None: the model cannot take it (why)
    lhs: Any = None
    rhs: Any = None
    why: str = ""
    figures: Optional[dict[str, int]] = None


def try_layout(spec, opts: Options, relation) -> Tried:
    lay = {k: getattr(opts, k) for k in ("tp", "pp", "cp", "dp", "ep")}
    try:
        values = figures(spec, opts)
    except SymcalcError as err:
        return Tried(lay, None, why=str(err))
    ok, lhs, rhs = holds(relation, values)
    return Tried(lay, ok, lhs, rhs, figures=values)


def smallest(spec, opts: Options, dim: str, relation) -> dict[str, Any]:
    """The smallest degree of ``dim`` (the other options as given) whose layout meets the
    relation, and the largest smaller one tried that does not."""
    dim = FOR[dim]
    start = time.monotonic()
    below, found, tried = None, None, 0
    for x in candidates(spec, opts, dim)[:MAX_CANDIDATES]:
        if time.monotonic() - start > TIME_LIMIT:
            raise SymcalcError("--for", f"no {dim} up to {x} meets the relation within "
                                        f"{TIME_LIMIT:.0f} s")
        tried += 1
        t = try_layout(spec, opts.with_(**{dim: x}), relation)
        if t.fits is None:
            continue
        if t.fits:
            found = (x, t)
            break
        below = (x, t)
    return {"equation": relation.text, "size": dim, "exact": None,
            "below": below[0] if below else None, "above": found[0] if found else None,
            "value_below": str(below[1].lhs) if below else None,
            "value_above": str(found[1].lhs) if found else None,
            "tried": tried,
            "layout": found[1].layout if found else None}


def layouts(spec, opts: Options, gpus: int, relation) -> dict[str, Any]:
    """Every layout of ``gpus`` ranks (t p c N_d = gpus; e dividing N_d c, at most E) that
    meets the relation, sorted by the per-rank peak, then the bytes sent per step."""
    if gpus <= 0 or gpus > 10**6:
        raise SymcalcError("--layouts", f"must be a number of GPUs, 1 to 1000000 (got {gpus})")
    start = time.monotonic()
    divisors = [x for x in range(1, gpus + 1) if gpus % x == 0]
    s = seq_len_of(spec, opts)
    out, refused, tried = [], 0, 0
    for t in candidates(spec, opts, "tp"):
        if gpus % t:
            continue
        for p in [x for x in divisors if (gpus // t) % x == 0 and x <= spec.L]:
            for c in [x for x in divisors if (gpus // (t * p)) % x == 0 and s % x == 0]:
                dp = gpus // (t * p * c)
                experts = [e for e in divisors if (dp * c) % e == 0 and e <= (spec.E or 1)] \
                    if spec.moe else [1]
                for e in experts:
                    tried += 1
                    if tried > MAX_CANDIDATES or time.monotonic() - start > TIME_LIMIT:
                        raise SymcalcError("--layouts", f"more than {MAX_CANDIDATES} layouts "
                                                        f"or {TIME_LIMIT:.0f} s")
                    got = try_layout(spec, opts.with_(tp=t, pp=p, cp=c, dp=dp, ep=e), relation)
                    if got.fits is None:
                        refused += 1
                        continue
                    if got.fits:
                        f = got.figures
                        out.append({**got.layout, "peak_bytes": f["per_rank.peak_bytes"],
                                    "params": f["per_rank.params"],
                                    "step_bytes": {d: f[f"communication.{d}.step_bytes"]
                                                   for d in DIMENSIONS},
                                    "step_wire_bytes": sum(f[f"communication.{d}.step_wire_bytes"]
                                                           for d in DIMENSIONS),
                                    "value": str(got.lhs)})
    out.sort(key=lambda x: (x["peak_bytes"], x["step_wire_bytes"]))
    return {"model": spec.name, "gpus": gpus, "equation": relation.text, "tried": tried,
            "refused": refused, "layouts": out}

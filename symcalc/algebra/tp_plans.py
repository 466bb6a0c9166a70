"""Tensor-parallel plans: what each style does to a module's parameters and collectives,
the shape of every part a plan can split, and the two plans symcalc knows -- a family's
``base_model_tp_plan`` (data: the ``[tp_plan]`` of its family file, read by
:func:`symcalc.inputs.family_data.tp_plan`, rows turned into :class:`PlanEntry` by
:func:`plan_entries`) and Megatron-LM's layer (:func:`megatron_plan`). No formatting here;
:mod:`symcalc.algebra.parallel` splits the parameters with them, docs/conventions.md states
the conventions with their sources (``torch_tp``, ``hf_tp_plan``, ``shoeybi2019``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

import sympy

from ..errors import SymcalcError
from . import components as comp
from .layout import Layout
from .tp_styles import (ACTIVATION_REGIONS, BIAS_ONLY, LOCAL_OUTPUT, MEGATRON_MODULES,  # noqa: F401
                        STYLES, Style)
from .symbols import (SWITCHES, E, E_s, K_cb, V, V_x, Z_e, d, d_ai, d_ff, d_g, d_h, d_lv, d_nope, d_rope, d_v, n_h,
                      n_kv, n_lv, r_kv, r_q)


def _sw(name: str) -> sympy.Symbol:
    return SWITCHES["sw_" + name].symbol


@dataclass(frozen=True)
class PlanEntry:
    """One entry of a tensor-parallel plan: a module (transformers' name pattern, or
    Megatron-LM's), its style, and the symcalc parts it holds (breakdown paths such as
    ``layer/attention/q``; a fused module lists each part it fuses). ``transposed``: the
    module stores its weight as (input, output) (Llama 4's experts), so the style's dimension
    names the other width. ``per_expert``: the module's output holds every token once per
    expert (Llama 4's experts run all E on every token), so its collectives carry E times the
    tokens."""

    module: str
    style: str
    parts: tuple[str, ...]
    transposed: bool = False
    per_expert: bool = False


@dataclass(frozen=True)
class Linear:
    """How a layer part is built, for splitting it: ``copies`` matrices (E routed experts)
    of ``n_in`` x ``n_out`` plus ``bias`` elements (a colwise split takes its share of them, a
    rowwise split keeps them whole) plus ``extra`` elements that belong to no projection
    (kept whole). The part's parameters are copies (n_in n_out + bias) + extra."""

    n_in: sympy.Expr
    n_out: sympy.Expr
    bias: sympy.Expr = sympy.Integer(0)
    copies: sympy.Expr = sympy.Integer(1)
    extra: sympy.Expr = sympy.Integer(0)


def linears() -> dict[str, Linear]:
    """Every part a plan may split (breakdown paths), as :class:`Linear` built from the
    component widths of :mod:`symcalc.algebra.components` (``layer/`` parts are per layer;
    their breakdown values are these times the layers holding them)."""
    mla, std = _sw("mla"), 1 - _sw("mla")
    q_out = std * n_h * d_h + mla * n_h * (d_nope + d_rope)
    ffn_b = _sw("ffn_bias")
    w_e, w_s = comp.expert_width(), E_s * comp.shared_width()
    width = comp.embedding_width()
    lin_o = {
        # (the standard q, k, v read d_ai inputs: 2d in Zamba's shared blocks)
        "attention/q": Linear(std * d_ai + mla * d, q_out, _sw("bias_q") * q_out),
        "attention/q_gate": Linear(d, n_h * d_g, _sw("gate_bias") * n_h * d_g),
        "attention/gate_bias": Linear(1, n_h),  # one per head, split with the heads
        "attention/q_a": Linear(d, r_q, _sw("bias_q") * r_q),
        "attention/q_b": Linear(comp.q_b_width(), n_h * (d_nope + d_rope + _sw("mla_gate") * d_v)),
        "attention/k": Linear(d_ai, n_kv * d_h, _sw("bias_k") * n_kv * d_h),
        "attention/v": Linear(d_ai, n_kv * d_h, _sw("bias_v") * n_kv * d_h),
        "attention/kv_a": Linear(d, r_kv + d_rope, _sw("bias_k") * (r_kv + d_rope)),
        "attention/kv_b": Linear(r_kv, n_h * (d_nope + d_v)),
        "attention/o": Linear(n_h * comp.value_width(), d, _sw("bias_o") * d),
        "attention/sinks": Linear(1, n_h),  # one logit per head, split with the heads
        # Doge's dynamic mask: dt_proj over the values (n_kv d_h -> n_kv) and A (n_kv)
        "attention/dyn_mask": Linear(n_kv * d_h, n_kv, _sw("bias_v") * n_kv, extra=n_kv),
        "ffn/gate": Linear(d, d_ff, ffn_b * d_ff),
        "ffn/up": Linear(d, d_ff, ffn_b * d_ff),
        "ffn/down": Linear(d_ff, d, ffn_b * d),
        # (LongCat-Flash: gate_up holds rows for the zero-computation experts too)
        "moe/experts/gate": Linear(d, w_e, copies=E + _sw("zx") * Z_e),
        "moe/experts/up": Linear(d, w_e, copies=E + _sw("zx") * Z_e),
        "moe/experts/down": Linear(w_e, d, copies=E),
        "moe/shared/gate": Linear(d, w_s, ffn_b * w_s),
        "moe/shared/up": Linear(d, w_s, ffn_b * w_s),
        "moe/shared/down": Linear(w_s, d, ffn_b * E_s * d),
        # Gated DeltaNet (Qwen3-Next, Qwen3.5): fused in_proj_qkvz / in_proj_ba, out_proj
        "linear_attention/qkv": Linear(d, comp.linear_qkv_width()),
        "linear_attention/output_gate": Linear(d, n_lv * d_lv),
        "linear_attention/beta": Linear(d, n_lv),
        "linear_attention/decay": Linear(d, n_lv, extra=2 * n_lv),
        "linear_attention/o": Linear(n_lv * d_lv, d),
    }
    out = {f"layer/{k}": x for k, x in lin_o.items()}
    out["embedding/token"] = Linear(V + V_x, width, copies=K_cb)  # its rows (Mllama: V + 8)
    out["head/weight"] = Linear(comp.head_width(), V, copies=K_cb)  # RemBERT: d_out wide
    out["head/bias"] = Linear(0, V, V, copies=K_cb)
    return out


def megatron_plan() -> tuple[PlanEntry, ...]:
    return tuple(PlanEntry(mod, style, parts) for mod, style, parts in MEGATRON_MODULES)


def plan_for(layout: Layout, hf_plan: Optional[Iterable[PlanEntry]]) -> tuple[PlanEntry, ...]:
    """The plan the layout's convention uses: Megatron-LM's, or the one given (a family's,
    :func:`symcalc.fast.plans.plan_rows` of a spec; none: every part whole)."""
    if layout.tp_plan == "megatron":
        return megatron_plan()
    return tuple(hf_plan or ())


def is_routed_expert(path: str) -> bool:
    return path.startswith("layer/moe/experts/")


def part_styles(plan: Iterable[PlanEntry]) -> dict[str, tuple[PlanEntry, Style]]:
    """part -> (entry, style) of the entry that splits its parameters (styles that split
    nothing are left out; a part split by two entries is refused)."""
    out: dict[str, tuple[PlanEntry, Style]] = {}
    for entry in plan:
        style = STYLES.get(entry.style)
        if style is None:
            raise SymcalcError("tp-plan", f"{entry.module}: style must be one of "
                                          f"{', '.join(STYLES)} (got {entry.style!r})")
        if not style.split:
            continue
        for part in entry.parts:
            if part in out:
                raise SymcalcError("tp-plan", f"{part} is split by {out[part][0].module} and "
                                              f"{entry.module}")
            out[part] = (entry, style)
    return out


def split_regions(plan: Iterable[PlanEntry]) -> dict[str, bool]:
    """Which regions of a layer run split over t under the plan: those whose first
    projection is column-parallel with its output left split (a gathered output, or no entry,
    leaves the region whole on every rank)."""
    styles = part_styles(plan)
    out = {}
    for region, parts in ACTIVATION_REGIONS.items():
        out[region] = any(x in styles and styles[x][0].style in LOCAL_OUTPUT for x in parts)
    return out


def plan_entries(rows) -> tuple[PlanEntry, ...]:
    """A family file's ``[tp_plan]`` rows (:func:`symcalc.inputs.family_data.tp_plan`) as
    :class:`PlanEntry`."""
    return tuple(PlanEntry(module, style, tuple(parts), bool(transposed), bool(per_expert))
                 for module, style, parts, transposed, per_expert in rows)

def fixed(expr, key: dict):
    """``expr`` with a structure (switch values) substituted, expanded."""
    from .accounting import put

    return put(sympy.sympify(expr), key)


def linear_form(shapes: dict[str, Linear], path: str, key: dict) -> Linear:
    if path not in shapes:
        raise SymcalcError("tp-plan", f"{path} is not a part a plan can split (splittable: "
                                      f"{', '.join(sorted(shapes))})")
    f = shapes[path]
    return Linear(*(fixed(getattr(f, n), key) for n in ("n_in", "n_out", "bias", "copies",
                                                          "extra")))

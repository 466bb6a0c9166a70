"""A spec's tensor-parallel plan and its plan facts, for the term table's per-rank rows
(no sympy). The plan a layout's convention uses:

* ``megatron``: Megatron-LM's layer, embedding and output layer
  (:data:`symcalc.algebra.tp_styles.MEGATRON_MODULES`);
* ``hf``: the plan the spec's ``tp_plan`` implementation value names (its family file's
  ``[tp_plan]`` and, for ``MODEL_TYPE:ROLE``, the role's entries: what transformers'
  ``tp_plan="auto"`` applies); for a model type without a plan (the value empty), Megatron-LM's
  layer alone, as the field's meaning says (an encoder-decoder stack: none, every part whole).

The facts (:func:`symcalc.algebra.tp_styles.plan_facts`) are cached per plan and convention.
"""
from __future__ import annotations

from functools import lru_cache

from ..algebra.tp_styles import megatron_rows, plan_facts


@lru_cache(maxsize=64)
def rows_named(name: str, shape: str, convention: str) -> tuple:
    if convention == "megatron":
        return megatron_rows()
    rows: tuple = ()
    if name:
        from ..inputs.family_data import tp_plan

        rows = tuple(tp_plan(name))
    if not rows and shape == "single":
        rows = megatron_rows(layer_only=True)
    return rows


def plan_rows(spec, convention: str) -> tuple:
    """The plan rows ``(module, style, parts, transposed, per_expert)`` of the spec under the
    convention."""
    return rows_named(spec.implementation.get("tp_plan", "") or "", spec.shape, convention)


@lru_cache(maxsize=64)
def _facts(name: str, shape: str, convention: str) -> tuple:
    return tuple(sorted(plan_facts(rows_named(name, shape, convention), convention).items()))


def facts(spec, convention: str) -> dict[str, int]:
    """The plan facts of the spec under the convention (those that are 1)."""
    return dict(_facts(spec.implementation.get("tp_plan", "") or "", spec.shape, convention))


def all_facts() -> dict[str, dict[str, int]]:
    """Every plan's facts by ``<tp_plan value>|<shape>|<convention>`` (the page reads them as
    data): each family's plans with and without their roles' entries, the empty plan, and
    Megatron-LM's."""
    from ..inputs.family_data import load_families

    names = {""}
    for mt, fam in load_families().items():
        if fam.tp_plan:
            names.add(mt)
        for role, r in fam.roles.items():
            if r.tp_plan:
                names.add(f"{mt}:{role}")
    out = {}
    for shape in ("single", "encoder-decoder"):
        for name in sorted(names):
            out[f"{name}|{shape}|hf"] = dict(_facts(name, shape, "hf"))
        out[f"|{shape}|megatron"] = dict(_facts("", shape, "megatron"))
    return out

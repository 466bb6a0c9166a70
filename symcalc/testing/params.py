"""``assert_param_count``: a module's parameters against symcalc's breakdown, component by
component, and on a mismatch the component and the size that explain it."""
from __future__ import annotations

from math import prod
from typing import Any

from .groups import Group
from .names import targets

def _numel(param) -> tuple[tuple[int, ...], int]:
    shape = tuple(int(s) for s in getattr(param, "shape", ()))
    numel = getattr(param, "numel", None)
    return shape, int(numel()) if callable(numel) else prod(shape)


def _spec(model_or_spec, sets=()):
    from symcalc.model import Model

    from .closed import with_sets

    if isinstance(model_or_spec, Model):
        return with_sets(model_or_spec.spec, sets)
    if isinstance(model_or_spec, str):
        from symcalc.inputs.resolver import resolve

        return resolve(model_or_spec, tuple(sets))
    return with_sets(model_or_spec, sets)


def symcalc_leaves(spec) -> dict[str, int]:
    """symcalc's parameter breakdown, leaves only (quick path: no sympy)."""
    from symcalc.fast.quick import quick_report

    bd = quick_report(spec)["params"]["breakdown"]
    return {p: v for p, v in bd.items() if not any(q.startswith(p + "/") for q in bd)}


def param_groups(module, spec, name_map: dict | None = None):
    """(groups, unmatched parameter names): every parameter of ``module`` put in the group
    of the symcalc leaves it counts toward (groups sharing a leaf are merged)."""
    from .checks import module_arg, name_map_arg

    name_map = name_map_arg("assert_param_count", name_map)
    params = module_arg("assert_param_count", module)
    leaves = symcalc_leaves(spec)
    groups: list[Group] = []
    unmatched = []
    for name, param in params:
        shape, n = _numel(param)
        paths = targets(name, name_map, spec.shape == "encoder-decoder")
        if paths is None:
            unmatched.append((name, shape, n))
            continue
        under = {leaf for leaf in leaves for p in paths if leaf == p or leaf.startswith(p + "/")}
        under = under or {f"{p} (absent)" for p in paths}
        merged = Group(set(under), [(name, shape, n)])
        for g in [g for g in groups if g.leaves & merged.leaves]:
            groups.remove(g)
            merged.leaves |= g.leaves
            merged.params = g.params + merged.params
        groups.append(merged)
    return groups, unmatched, leaves


def assert_param_count(module: Any, model_or_spec: Any, name_map: dict | None = None,
                       sets=()) -> None:
    """Assert that ``module`` (anything with ``named_parameters()`` yielding names and tensors
    with ``shape``) holds exactly the parameters symcalc counts for ``model_or_spec`` (a preset
    name, config path, spec or :class:`symcalc.Model`), in total and per component.

    ``name_map`` maps glob patterns of parameter names to symcalc breakdown paths (or lists
    of paths), for models not named like transformers' (``{"blocks.*.attn.wk.*":
    "layer/attention/k"}``); the built-in rules cover the names of transformers' decoders and
    encoders (:mod:`symcalc.testing.names`)."""
    __tracebackhide__ = True
    from .checks import clear, model_arg, module_arg, name_map_arg, sets_arg

    where = "assert_param_count"
    module_arg(where, module)
    name_map_arg(where, name_map)
    model_or_spec, sets = model_arg(where, model_or_spec), sets_arg(where, sets)
    with clear(where):  # an unknown preset or --set field
        spec = _spec(model_or_spec, sets)
        groups, unmatched, leaves = param_groups(module, spec, name_map)
    found = sum(g.found for g in groups) + sum(n for _, _, n in unmatched)
    expected = sum(leaves.values())
    covered = set().union(*(g.leaves for g in groups)) if groups else set()
    bad = [g for g in groups if g.found != sum(leaves.get(p, 0) for p in g.leaves)]
    if found == expected and not bad:
        return
    from .explain import report

    raise AssertionError(report(module, spec, groups, unmatched, leaves, covered, bad,
                                found, expected))

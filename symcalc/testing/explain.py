"""The failure message of ``assert_param_count``: each component that differs, the shapes the
module has against the shapes symcalc's sizes give, and the size whose value would explain
the count (sympy solves the component's formula for each size in turn)."""
from __future__ import annotations

import sympy

from .groups import SUSPECTS, first_layer, layers_in


def _shape(shape) -> str:
    return "×".join(str(s) for s in shape) if shape else "scalar"


def explaining_size(expr, values: dict[str, int], found: int):
    """(size, value) for the first size in SUSPECTS that, alone changed, makes ``expr``
    equal ``found``; None when no single size does."""
    from symcalc.algebra.symbols import SIZES

    subs = {SIZES[k].symbol: sympy.Integer(v) for k, v in values.items() if k in SIZES}
    for name in SUSPECTS:
        sym = SIZES[name].symbol
        if sym not in expr.free_symbols or name not in values:
            continue
        partial = expr.xreplace({k: v for k, v in subs.items() if k != sym})
        for root in sympy.solve(sympy.Eq(partial, found), sym):
            if root.is_Integer and root > 0 and int(root) != values[name]:
                return name, int(root)
    return None


def _expected_shape(shape, want: int):
    """``shape`` (2-D) with one dimension changed so that it holds ``want`` elements: the
    first dimension (a Linear's outputs) if that works, else the second."""
    if len(shape) != 2 or want <= 0:
        return None
    a, b = shape
    if want % b == 0:
        return (want // b, b)
    if want % a == 0:
        return (a, want // a)
    return None


def _group_lines(group, spec, exprs, values, leaves) -> list[str]:
    want = sum(leaves.get(p, 0) for p in group.leaves)
    lines = [f"  {group.label()}: module {group.found:,}, symcalc {want:,} "
             f"({group.found - want:+,})"]
    layers = [i for i in layers_in(group) if i is not None]
    per_layer = len(layers) or 1
    first = first_layer(group)
    matrices = [p for p in first if len(p[1]) >= 2]
    vectors = sum(n for _, s, n in first if len(s) < 2)
    for name, shape, n in first:
        text = f"    {name} has {_shape(shape)}" + (" per layer" if layers else "")
        if len(matrices) == 1 and len(shape) >= 2 and want % per_layer == 0:
            other = _expected_shape(shape, want // per_layer - vectors)
            if other and other != tuple(shape):
                text += f"; symcalc's sizes give {_shape(other)}"
        lines.append(text)
    expr = sympy.Add(*[exprs[p] for p in group.leaves if p in exprs])
    if expr != 0:
        lines.append(f"    symcalc counts {expr} (= {want:,} at the model's sizes)")
        why = explaining_size(expr, values, group.found)
        if why:
            name, v = why
            lines.append(f"    {name} = {v} would explain it (symcalc has {name} = {values[name]})")
    return lines


def report(module, spec, groups, unmatched, leaves, covered, bad, found, expected) -> str:
    from symcalc.algebra import accounting
    from symcalc.algebra.spec import size_values

    exprs = {leaf.path: leaf.value for leaf in accounting.params(spec)}
    values = size_values(spec)
    kind = type(module).__name__
    lines = [f"parameters of {kind} do not match symcalc's {spec.name}: module {found:,}, "
             f"symcalc {expected:,} ({found - expected:+,})"]
    for g in sorted(bad, key=lambda g: -abs(g.found - sum(leaves.get(p, 0) for p in g.leaves))):
        lines += _group_lines(g, spec, exprs, values, leaves)
    missing = [p for p in leaves if p not in covered and leaves[p]]
    if missing:
        lines.append("  in symcalc's count, no parameter of the module mapped to: "
                     + ", ".join(f"{p} ({leaves[p]:,})" for p in missing))
    if unmatched:
        shown = sorted({normalised_name(n) for n, _, _ in unmatched})
        lines.append("  parameters no rule maps (give name_map={glob: path}): "
                     + ", ".join(shown[:12]) + (" ..." if len(shown) > 12 else ""))
    return "\n".join(lines)


def normalised_name(name: str) -> str:
    from .names import normalised

    return normalised(name)

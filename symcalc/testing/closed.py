"""``assert_closed_form``: a quantity of a model equals an expected formula, symbolically."""
from __future__ import annotations

from typing import Any

__tracebackhide__ = True


def _spec(model: Any, sets=()):
    from symcalc.model import Model

    if isinstance(model, Model):
        return with_sets(model.spec, sets), model.options
    from symcalc.algebra.options import Options

    if isinstance(model, str):
        from symcalc.inputs.resolver import resolve

        return resolve(model, tuple(sets)), Options()
    return with_sets(model, sets), Options()


def with_sets(spec, sets=()):
    """A spec with ``sets`` (``KEY=VALUE``) applied: never silently left out."""
    if not sets:
        return spec
    from symcalc.algebra.spec import with_overrides
    from symcalc.inputs.resolver import parse_sets

    return with_overrides(spec, parse_sets(sets))


def _expected(expected):
    """A sympy expression, or text in the canonical size names (``12*L*d**2``), read by
    symcalc's one expression parser (:func:`symcalc.algebra.expression.parse`): numbers,
    the canonical symbols, ``+ - * /``, powers 0 to 4, ``Min``/``Max``; nothing is run."""
    import sympy

    if isinstance(expected, sympy.Basic):
        return sympy.expand(expected)
    if isinstance(expected, (int, float)):
        return sympy.nsimplify(expected)
    from symcalc.algebra.expression import parse
    from symcalc.algebra.symbols import ALL
    from symcalc.errors import SymcalcError

    def lookup(name: str):
        info = ALL.get(name)
        return None if info is None else (info.symbol, "count")

    got = parse(expected, "expected", lookup, unknown="the canonical size names are L, d, "
                "n_h, d_ff, s, b ... (docs/architecture.md)")
    if got.unit_kinds:
        raise SymcalcError("expected", f"a closed form takes numbers without units (got a "
                                       f"{got.unit_kinds[0]} unit in {expected!r:.80})")
    return sympy.expand(got.expr)


def _parts(spec, quantity: str, assume: str, opts):
    """(path, expanded expression) of each component of ``quantity`` under ``assume``: the
    parameter breakdown for params.*, the matmul breakdown for flops.forward_matmul."""
    import sympy

    from symcalc.algebra import accounting, quantities as q
    from symcalc.algebra.assumptions import assumption

    a = assumption(assume)
    shaped = a.apply_spec(spec)
    if quantity.startswith("params."):
        bd = accounting.params(shaped)
    elif quantity == "flops.forward_matmul":
        bd = q.matmul_breakdown(shaped, opts.with_(causal="full"))
    else:
        return []
    return [(leaf.path, sympy.expand(a.apply_expr(leaf.value))) for leaf in bd]


def explain(difference, parts) -> list[str]:
    """Each term of ``difference`` and the components whose expressions hold its monomial."""
    import sympy

    lines = []
    for term in sympy.Add.make_args(sympy.expand(difference)):
        coeff, monomial = term.as_coeff_Mul()
        sources = []
        for path, expr in parts:
            held = sympy.Add(*[t for t in sympy.Add.make_args(expr)
                               if t.as_coeff_Mul()[1] == monomial])
            if held != 0:
                sources.append(f"{path} ({held})")
        sign = "+" if coeff > 0 else "-"
        where = "from " + ", ".join(sources) if sources else "in no component of symcalc's count " \
            "(only in the expected form)" if coeff < 0 else "from no single component"
        lines.append(f"    {sign} {abs(coeff) * monomial}   {where}")
    return lines


def assert_closed_form(model: Any, expected: Any, quantity: str = "params.total",
                       assume: str = "none", sets=()) -> None:
    """Assert that ``quantity`` of ``model`` (a preset name, config path, spec or
    :class:`symcalc.Model`) under the assumption set ``assume`` equals ``expected`` (a sympy
    expression or text in the canonical names, e.g. ``"12*L*d**2"``) for every size."""
    __tracebackhide__ = True
    import sympy

    from symcalc.algebra.closed_form import closed_form

    from .checks import clear, expected_arg, model_arg, sets_arg, text_arg

    where = "assert_closed_form"
    model, sets = model_arg(where, model), sets_arg(where, sets)
    text_arg(where, "quantity", quantity, "'params.total'")
    text_arg(where, "assume", assume, "'kaplan'")
    expected_arg(where, expected)
    with clear(where):  # an unknown preset, --set field, quantity or assumption set
        spec, opts = _spec(model, sets)
        actual = closed_form(spec, quantity, assume, opts).expanded
        want = _expected(expected)
    difference = sympy.expand(actual - want)
    if difference == 0:
        return
    lines = [f"{quantity} of {spec.name} (assumptions: {assume}) is not the expected form",
             f"  symcalc:  {sympy.collect(actual, sorted(actual.free_symbols, key=str)[:1])}",
             f"  expected: {want}",
             "  difference (symcalc - expected), term by term:"]
    lines += explain(difference, _parts(spec, quantity, assume, opts))
    raise AssertionError("\n".join(lines))

"""Derivations that compare: a closed form under a named assumption set against the exact
one, two models component by component, and a published formula against symcalc's count.
Built from the engine's expressions, as data (no formatting here)."""
from __future__ import annotations

import sympy

from ..algebra import accounting
from ..algebra.assumptions import assumption
from ..algebra.closed_form import closed_form, simplify
from .derivation import Compose, Derivation, Evaluate, Formula, Section, Simplify, part_symbol
from .derive import result_section, with_sizes, chain, defines, meaning, model_values, numbers, substitute
from ..algebra.options import Options
from ..algebra.spec import Spec, size_values


def derive_closed_form(spec: Spec, assume: str = "kaplan", quantity: str = "params.total",
                       opts: Options = Options()) -> Derivation:
    """The exact closed form, the form under ``assume``, and the exact correction between
    them (symbolic and at the model's sizes)."""
    a = assumption(assume)
    exact = closed_form(spec, quantity, "none", opts)
    approx = closed_form(spec, quantity, assume, opts)
    values = model_values(spec, opts)
    subs = numbers(values)
    letter = {"params": "N", "flops": "C", "memory": "M"}[quantity.split(".")[0]]
    first, exact_value = chain(Formula("exact", letter, exact.expression, "hf_transformers",
                                       "exact, sizes as symbols"), subs)
    second, approx_value = chain(Formula(assume, letter, approx.expression, a.source,
                                         a.description), subs)
    second[0] = Simplify(assume, letter, exact.expression, approx.expression, assume,
                         a.description, a.source)
    correction = sympy.expand(exact.expanded - approx.expanded)
    third, corr_value = chain(Formula("correction", letter, correction, "",
                                      "exact minus the assumed form"), subs)
    body = with_sizes([Section("Exact", tuple(first)),
                        Section(f"Under the assumptions '{assume}'", tuple(second)),
                        Section("Correction", tuple(third))],
                       [exact.expression, approx.expression], values)
    body += (result_section("correction", letter, corr_value, "exact minus assumed"),)
    meta = {"exact": exact_value, "approx": approx_value, "correction": corr_value,
            "relations": tuple(a.describe_relations()), "assumption": assume}
    return Derivation(spec.name, quantity, f"Closed form of {spec.name} under '{assume}'",
                      letter, body, (a.description,), meta)


def derive_difference(base: Spec, other: Spec) -> Derivation:
    """Parameters of ``other`` minus those of ``base``, component by component: every path
    whose count differs, its formula difference, the numbers, the value, and the total."""
    subs_b, subs_o = numbers(size_values(base)), numbers(size_values(other))
    a, b = accounting.params(base), accounting.params(other)
    va, vb = accounting.numbers(a, size_values(base)), accounting.numbers(b, size_values(other))
    da, db = va.as_dict(), vb.as_dict()
    leaves = {l.path: l for l in a}
    steps, parts = [], {}
    for leaf in list(b) + [l for l in a if l.path not in db]:
        before, after = da.get(leaf.path, 0), db.get(leaf.path, 0)
        if before == after:
            continue
        old = leaves[leaf.path].value if leaf.path in leaves else sympy.Integer(0)
        new = leaf.value if leaf.path in db else sympy.Integer(0)
        expr = sympy.expand(new - old) if subs_b == subs_o else new - old
        formula = Formula(leaf.path, "N", expr, leaf.source, meaning(leaf.path))
        value = after - before
        steps += [formula] + ([substitute(leaf.path, "N", expr, subs_o)]
                              if not expr.is_Atom else []) + [Evaluate(leaf.path, "N", value)]
        parts[part_symbol("N", leaf.path)] = value
    more, total = chain(Compose("difference", "N", sympy.Add(*parts, evaluate=False), "the sum of the differences"),
                        parts)
    totals = (Evaluate(f"{base.name}", "N", va.total), Evaluate(f"{other.name}", "N", vb.total))
    body = (Section("Sizes", tuple(defines([s.expr for s in steps if isinstance(s, Formula)],
                                           size_values(other)))),
            Section("Totals", totals),
            Section("Component by component", tuple(steps)),
            Section("Total difference", tuple(more)),
            result_section("difference", "N", total, f"{other.name} minus {base.name}"))
    return Derivation(other.name, "params.total", f"{other.name} against {base.name}", "N", body,
                      (), {"base": base.name, "other": other.name})


def derive_published(name: str, spec: Spec, opts: Options = Options()) -> Derivation:
    """A published formula (:mod:`symcalc.derivations.published`) at a model's sizes beside symcalc's
    own count under the same counting convention, and their exact difference."""
    from . import published

    form = published.form(name)
    values = model_values(spec, opts)
    subs = numbers(values)
    letter = "N" if form.unit.startswith("parameters") else "C"
    pub = form.published(spec)
    mine = form.symcalc(spec)
    first, pub_value = chain(Formula(name, letter, pub, form.source, "as published"), subs)
    second, mine_value = chain(Formula("symcalc", letter, simplify(mine), "hf_transformers",
                                       "symcalc's components, same counting"), subs)
    diff = form.relate(mine - pub)
    third, diff_value = chain(Formula("difference", letter, diff, "",
                                      "symcalc minus published, under the form's relations"),
                              subs)
    body = with_sizes([Section("The published formula", tuple(first)),
                        Section("From the components", tuple(second)),
                        Section("Difference", tuple(third))], [pub, mine], values)
    body += (result_section(name, letter, pub_value, form.unit),)
    return Derivation(spec.name, name, f"{form.description} ({spec.name})", letter, body,
                      form.assumptions, {"published": pub_value, "symcalc": mine_value,
                                         "difference": diff_value})

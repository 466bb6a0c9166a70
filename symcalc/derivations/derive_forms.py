"""Derivations that compare: a closed form under a named assumption set against the exact
one, two models component by component, and a published formula against symcalc's count.
Built from the engine's expressions, as data (no formatting here)."""
from __future__ import annotations

import sympy

from ..algebra import accounting
from ..algebra.assumptions import assumption
from ..algebra.closed_form import closed_form, simplify
from .citations import component_source
from .derivation import (ASSUMPTION_NAMES, Compose, Derivation, Evaluate, Formula, Section,
                         Simplify, part_symbol)
from .derive import result_section, with_sizes, chain, defines, meaning, model_values, numbers, substitute
from ..algebra.options import Options
from ..algebra.spec import Spec, size_values
from ..algebra.symbols import SIZES


KAPLAN_FORM = 12 * SIZES["L"].symbol * SIZES["d"].symbol**2  # Kaplan et al. 2020, eq. 2.1

# assumption sets that describe the non-embedding parameters only: their closed form is
# compared with the exact non-embedding count, and the embeddings and head get a line apart
NON_EMBEDDING_FORMS = ("kaplan",)


def assumption_misfit(spec: Spec, assume: str) -> str:
    """Why an assumption set does not describe this model ('' when it does)."""
    if assume != "kaplan":
        return ""
    why = []
    if spec.moe:
        why.append(f"it is a mixture of experts ({spec.k} of {spec.E} experts per token): "
                   "12 L d^2 assumes one dense FFN per layer, so it neither counts the stored "
                   "experts nor the active ones")
    if spec.hybrid:
        why.append("some layers mix with linear attention, an SSM or a convolution instead of "
                   "attention")
    if spec.mla:
        why.append("its attention is multi-head latent attention (low-rank K/V)")
    return "; ".join(why)


def derive_closed_form(spec: Spec, assume: str = "kaplan", quantity: str = "params.total",
                       opts: Options = Options()) -> Derivation:
    """The exact closed form, the form under ``assume``, and the exact correction between
    them (symbolic and at the model's sizes). Kaplan et al.'s form counts non-embedding
    parameters: for a parameter quantity it is compared with the exact non-embedding count,
    and the embeddings and output head are a line of their own."""
    a = assumption(assume)
    split = assume in NON_EMBEDDING_FORMS and quantity in ("params.total", "params.non_embedding")
    exact = closed_form(spec, "params.non_embedding" if split else quantity, "none", opts)
    approx = closed_form(spec, quantity, assume, opts)
    values = model_values(spec, opts)
    subs = numbers(values)
    letter = {"params": "N", "flops": "C", "memory": "M"}[quantity.split(".")[0]]
    # Kaplan et al.'s form is 12 L d^2; where their relations leave other terms (MLA, hybrid
    # mixers) the result is symcalc's substitution, not their form, and is named so
    own = assume == "kaplan" and split and sympy.expand(approx.expanded - KAPLAN_FORM) != 0
    if own:
        assume = "kaplan_relations"
    label = ASSUMPTION_NAMES.get(assume, assume)
    exact_path = "params.non_embedding" if split else "exact"
    first, exact_value = chain(Formula(exact_path, letter, exact.expression, "hf_transformers",
                                       "exact non-embedding parameters, sizes as symbols" if split
                                       else "exact, sizes as symbols"), subs)
    second, approx_value = chain(Formula(assume, letter, approx.expression, a.source,
                                         a.description), subs)
    second[0] = Simplify(assume, letter, exact.expression, approx.expression, assume,
                         a.description, "" if own else a.source)
    correction = sympy.expand(exact.expanded - approx.expanded)
    third, corr_value = chain(Formula("correction", letter, correction, "",
                                      "exact minus the assumed form: what the assumptions "
                                      "leave out" + (" (biases, norms, GQA, gated FFN ...)"
                                                     if split else "")), subs)
    sections = [Section("Exact non-embedding count" if split else "Exact", tuple(first)),
                Section(label[0].upper() + label[1:] if own else f"Under {label}", tuple(second)),
                Section("Correction", tuple(third))]
    formulas = [exact.expression, approx.expression]
    meta = {"exact": exact_value, "approx": approx_value, "correction": corr_value,
            "relations": tuple(a.describe_relations()), "assumption": assume}
    if split:
        emb = closed_form(spec, "params.embedding", "none", opts)
        fourth, emb_value = chain(Formula("params.embedding", letter, emb.expression,
                                          "hf_transformers", "embedding tables" + (
                                              " and the untied head" if spec.head == "untied"
                                              else "") + ": not in the assumed form, counted "
                                          "apart"), subs)
        N_ne, N_e = part_symbol(letter, "params.non_embedding"), part_symbol(letter, "params.embedding")
        fifth, total_value = chain(Compose("params.total", letter, sympy.Add(N_ne, N_e, evaluate=False),
                                           "all parameters"), {N_ne: exact_value, N_e: emb_value})
        sections.append(Section("Embeddings and output head, apart", tuple(fourth + fifth)))
        formulas.append(emb.expression)
        meta.update(embedding=emb_value, total=total_value,
                    share=sympy.Rational(corr_value, exact_value) if exact_value else 0)
    misfit = assumption_misfit(spec, "kaplan" if own else assume)
    conventions = (a.description,) + ((f"the assumed form does not fit {spec.name}: {misfit}",)
                                      if misfit else ())
    if own:
        conventions += ("Kaplan et al.'s assumptions do not give 12 L d^2 for these layers: "
                        "what follows substitutes their relations into symcalc's exact count, "
                        "it is not their form",)
    meta.update(misfit=misfit, kaplan_form=not own)
    body = with_sizes(sections, formulas, values)
    share = (f"{float(100 * meta['share']):.2f} % of the exact non-embedding count"
             if split and exact_value else "")
    body += (result_section("correction", letter, corr_value, "exact minus assumed"
                            + (" (non-embedding)" if split else ""), share),)
    title = (f"Closed form of {spec.name}: {label}" if own
             else f"Closed form of {spec.name} under {label}")
    return Derivation(spec.name, quantity, title, letter, body, conventions, meta)


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
        formula = Formula(leaf.path, "N", expr, component_source(other, leaf.path, leaf.source),
                          meaning(leaf.path))
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
    letter = ("N" if form.unit.startswith("parameters")
              else "M" if form.unit.startswith("bytes") else "C")
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

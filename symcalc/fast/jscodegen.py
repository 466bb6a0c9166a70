"""JavaScript evaluators for the calculator page (``symcalc page``), generated from the same
general expressions as the Python ones: ``python -m symcalc.fast.jscodegen`` writes
``symcalc/page/_generated.js`` (committed; ``tests/test_page.py`` regenerates it and fails
when the two differ).

The general expression of each quantity and each breakdown leaf comes from
:mod:`symcalc.fast.codegen` (one per model shape, switches and options as symbols), is split
into an integer numerator over a denominator and grouped by its monomial in switches and
options exactly as there. The printer here writes every integer as a ``BigInt`` literal, so the
page computes every count exactly at any size (a 10^25 FLOP figure keeps all its digits):
only ``+ - *``, a ceiling division and a ``min`` are used, all on BigInts.

Each group also carries its polynomial in MathML (sympy's presentation printer), so that the
page can show the formula of a figure for whatever switches are on: the sum of the groups
whose switch product is not 0, each times that product's value.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import sympy
from sympy.printing.mathml import MathMLPresentationPrinter

from . import codegen
from ..algebra.quantities import QUANTITIES
from ..algebra.symbols import ALL

TARGET = Path(__file__).resolve().parent.parent / "page" / "_generated.js"
# quantities whose derivation the page shows as a formula: every figure it shows
FORMULAS = tuple(QUANTITIES)


def js(expr: sympy.Expr) -> str:
    """``expr`` (integer coefficients, sizes and switches, Min, ceiling) as a BigInt
    JavaScript expression."""
    if isinstance(expr, sympy.Integer):
        return f"{int(expr)}n"
    if isinstance(expr, sympy.Symbol):
        return str(expr)
    if isinstance(expr, sympy.Add):
        return "(" + " + ".join(js(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Mul):
        coeff, rest = expr.as_coeff_Mul()
        if not coeff.is_Integer:
            raise ValueError(f"not an integer coefficient: {expr}")
        parts = [js(f) for f in sympy.Mul.make_args(rest)]
        if coeff == -1:
            return "-(" + "*".join(parts) + ")"
        return "*".join(([js(coeff)] if coeff != 1 else []) + parts)
    if isinstance(expr, sympy.Pow):
        base, exp = expr.args
        if not (exp.is_Integer and exp > 0):
            raise ValueError(f"not a positive integer power: {expr}")
        return "(" + "*".join([js(base)] * int(exp)) + ")"
    if isinstance(expr, sympy.Min):
        args = [js(a) for a in expr.args]
        out = args[0]
        for a in args[1:]:
            out = f"_min({out}, {a})"
        return out
    if isinstance(expr, sympy.ceiling):
        num, den = expr.args[0].as_numer_denom()
        return f"_cd({js(sympy.expand(num))}, {js(den)})"
    raise ValueError(f"cannot print {type(expr).__name__} as BigInt JavaScript: {expr}")


class _MathML(MathMLPresentationPrinter):
    def _print_Symbol(self, sym, style="plain"):  # sizes by their LaTeX-like names: d_ff -> d_{ff}
        name = str(sym)
        base, _, sub = name.partition("_")
        x = self.dom.createElement("mi")
        x.appendChild(self.dom.createTextNode(base))
        if not sub:
            return x
        msub = self.dom.createElement("msub")
        s = self.dom.createElement("mi")
        s.appendChild(self.dom.createTextNode(sub.replace("_", " ")))
        msub.appendChild(x)
        msub.appendChild(s)
        return msub


_mathml = _MathML({"order": "none"})


def mathml(expr: sympy.Expr) -> str:
    return _mathml.doprint(expr)


def _reads(exprs, shape: str) -> list[str]:
    names = sorted({str(x) for e in exprs for x in e.free_symbols})
    lets = [n for n in names if n in codegen.LETS]
    plain = [n for n in names if n not in codegen.LETS]
    out = [f"  const {{{', '.join(plain)}}} = v;"] if plain else []
    out += [f"  const {n} = {codegen._ident(shape, codegen.LETS[n])}__num(v);" for n in lets]
    return out


def quantity_js(fname: str, expr: sympy.Expr, shape: str, formula: bool) -> tuple[str, str]:
    """The functions ``fname__num`` and ``fname``, and the quantity's table entry:
    ``[value, denominator MathML, groups, numerator, denominator]``. With ``formula`` each
    group is ``[switch product, polynomial, its MathML, its symbols]`` (both functions of the
    values) and the numerator is their sum, so that a derivation shows what the figure adds."""
    num, den = codegen.split_fraction(expr)
    groups, entries = [], []
    for const, poly in codegen.groups(num):
        groups.append((const, sympy.factor_terms(poly)))
    if formula:
        for k, (const, poly) in enumerate(groups):
            names = sorted(str(x) for x in poly.free_symbols)
            creads = _reads([const], shape)
            preads = _reads([poly], shape)
            entries.append(
                f"[(v) => {{{' '.join(r.strip() for r in creads)} return {js(const)}; }}, "
                f"(v) => {{{' '.join(r.strip() for r in preads)} return {js(poly)}; }}, "
                f"{json.dumps(mathml(poly))}, {json.dumps(names)}]")
        lines = [f"const {fname}__groups = [\n  " + ",\n  ".join(entries) + "];",
                 f"function {fname}__num(v) {{", "  let out = 0n;",
                 f"  for (const g of {fname}__groups) {{ const c = g[0](v); if (c) out += c*g[1](v); }}"]
    else:
        lines = [f"function {fname}__num(v) {{", *_reads([num], shape), "  let out = 0n, c;"]
        for const, poly in groups:
            lines.append(f"  c = {js(const)}; if (c) out += c*({js(poly)});")
    lines += ["  return out;", "}", f"function {fname}__den(v) {{",
              *_reads([den], shape), f"  return {js(den)};", "}", f"function {fname}(v) {{"]
    lines += ([f"  return {fname}__num(v);"] if den == 1 else
              [f"  return _cd({fname}__num(v), {fname}__den(v));"])
    lines.append("}")
    entry = (f"[{fname}, {json.dumps(mathml(den))}, " + (f"{fname}__groups" if formula else "null")
             + f", {fname}__num, {fname}__den]")
    return "\n".join(lines) + "\n", entry


def leaves_js(fname: str, items) -> str:
    values = []
    for _, expr in items:
        num, den = codegen.split_fraction(expr)
        values.append(js(num) if den == 1 else f"_cd({js(num)}, {js(den)})")
    body = _reads([e for _, e in items], "")
    return "\n".join([f"function {fname}(v) {{", *body, "  return [",
                      *[f"    {x}," for x in values], "  ];", "}"]) + "\n"


def vision_js() -> str:
    """The parts a multimodal checkpoint holds around its language model
    (:mod:`symcalc.algebra.vision`): per role and kind, each breakdown path as a BigInt
    function of the ``v_*`` sizes, and the part's total in MathML with its symbols."""
    from ..algebra import vision as vis

    rows = []
    for role, table in (("vision_tower", vis.TOWERS), ("projector", vis.PROJECTORS)):
        for kind, make in table.items():
            part = make()
            terms = []
            for path, e in part.terms.items():
                e = sympy.expand(e)
                names = sorted(str(x) for x in e.free_symbols)
                reads = f"const {{{', '.join(names)}}} = v; " if names else ""
                terms.append(f"[{json.dumps(path)}, (v) => {{ {reads}return {js(e)}; }}]")
            total = sympy.factor_terms(sympy.expand(part.total))
            rows.append(f"  [{json.dumps(role)}, {json.dumps(kind)}, {json.dumps(part.description)}, "
                        f"{json.dumps(part.source)}, {json.dumps(sorted(part.symbols))}, "
                        f"{json.dumps(mathml(total))}, [\n    " + ",\n    ".join(terms) + "]],\n")
    return "const VISION = [\n" + "".join(rows) + "];\n"


HEADER = """// GENERATED by `python -m symcalc.fast.jscodegen` from the sympy expressions; do not edit.
// BigInt evaluators of every quantity and breakdown leaf, per model shape, for the
// calculator page (symcalc page). `v` maps symbol names to BigInt values.
"use strict";
const SYMCALC_GEN = (() => {
function _min(a, b) { return a < b ? a : b; }
function _cd(n, d) { let q = n / d; if (q * d !== n && ((n > 0n) === (d > 0n))) q += 1n; return q; }
"""


def generate() -> str:
    out = [HEADER]
    table_q, table_l = [], []
    for shape in codegen.SHAPES:
        for name in QUANTITIES:
            fname = codegen._ident(shape, name)
            src, entry = quantity_js(fname, codegen.general_with_lets(name, shape), shape,
                                     name in FORMULAS)
            out.append(src)
            table_q.append(f"  [{json.dumps(shape)}, {json.dumps(name)}, {entry}],\n")
        for kind in codegen.leaf_kinds(shape):
            fname = codegen._ident(shape, f"leaves_{kind}")
            items = codegen.leaves(kind, shape)
            out.append(leaves_js(fname, items))
            table_l.append(f"  [{json.dumps(shape)}, {json.dumps(kind)}, "
                           f"{json.dumps([p for p, _ in items])}, {fname}],\n")
    symbols = {name: {"meaning": info.meaning} for name, info in sorted(ALL.items())}
    out.append("const QUANTITIES = " + json.dumps(list(QUANTITIES)) + ";\n")
    out.append("const EVALUATORS = [\n" + "".join(table_q) + "];\n")
    out.append("const LEAVES = [\n" + "".join(table_l) + "];\n")
    out.append("const SYMBOLS = " + json.dumps(symbols, indent=0) + ";\n")
    out.append(vision_js())
    out.append("return {QUANTITIES, EVALUATORS, LEAVES, SYMBOLS, VISION, _min, _cd};\n})();\n"
               "if (typeof module !== 'undefined') module.exports = SYMCALC_GEN;\n")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    return codegen.write_or_check(TARGET, generate(), "symcalc.fast.jscodegen",
                          sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())

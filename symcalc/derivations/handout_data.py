"""Everything a teaching handout shows, computed (no formatting): per model its dimensions,
the parameter breakdown by kind of component, the derivation of its parameters, its closed
form under Kaplan's assumptions with the exact correction, and its forward FLOPs as
``a s^2 + c s`` with the sequence length ``s*`` where the quadratic attention term overtakes
the linear terms, computed exactly. The renderer in :mod:`symcalc.render.handout` reads it.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..algebra import accounting, quantities as q
from ..algebra.closed_form import simplify
from .derivation import Derivation, Evaluate, Formula, Section, Substitute
from .derive import chain, defines, derive, model_values, numbers
from .derive_forms import derive_closed_form
from ..algebra.options import Options
from ..algebra.spec import Spec
from ..algebra.symbols import SIZES, b, s, s_dec

CATEGORIES = ("embeddings", "attention", "FFN", "norms", "output head", "other")
DIMENSIONS = ("L", "L_dec", "d", "n_h", "n_kv", "d_h", "d_ff", "E", "k", "V", "P", "T", "R", "W")


def category(path: str) -> str:
    """The kind of component a breakdown path belongs to."""
    last = path.split("/")
    # the per-layer norms (layer/norm/attention, layer/norm/ffn) are norms, as the
    # derivation groups them, not part of the block they sit in front of
    if "norm" in last or last[-1] in ("final_norm", "embedding_norm"):
        return "norms"
    if "attention" in last or "cross_attention" in last or last[-1] == "relative_bias":
        return "attention"
    if "ffn" in last:
        return "FFN"
    if last[0] == "embedding":
        return "embeddings"
    if last[0] == "head":
        return "output head"
    return "other"


def attention_kind(spec: Spec) -> str:
    if spec.n_kv == spec.n_h:
        return f"MHA: {spec.n_h} heads, each with its own K and V"
    if spec.n_kv == 1:
        return f"MQA: {spec.n_h} query heads share one K/V head"
    return f"GQA: {spec.n_h} query heads share {spec.n_kv} K/V heads ({spec.n_h // spec.n_kv} each)"


@dataclass(frozen=True)
class Curve:
    """Forward matmul FLOPs of one sequence (b = 1) as quadratic * s^2 + linear * s + rest."""
    quadratic: int
    linear: int
    constant: int
    crossover: sympy.Rational  # s* = linear / quadratic
    points: tuple[tuple[int, int, int], ...]  # (s, linear * s, quadratic * s^2)


@dataclass(frozen=True)
class Sheet:
    spec: Spec
    dims: dict[str, int]
    attention: str
    total: int
    categories: dict[str, int]
    params: Derivation
    closed: Derivation
    flops: Derivation
    curve: Curve


@dataclass(frozen=True)
class Handout:
    title: str
    sheets: tuple[Sheet, ...]
    dimensions: tuple[str, ...]  # the size symbols any model has, in display order
    points: tuple[int, ...]  # sequence lengths of the FLOPs table and figure


def _poly(spec: Spec, opts: Options) -> sympy.Poly:
    expr = q.expression("flops.forward_matmul", spec, opts).xreplace({b: 1, s_dec: s})
    return sympy.Poly(sympy.expand(expr), s)


def crossover_derivation(spec: Spec, opts: Options) -> tuple[Derivation, Curve]:
    """C(s) = a s^2 + c s (+ e): a from the attention scores and scores x V, c from every
    projection, the FFN and the head; s* = c / a where the two are equal."""
    poly = _poly(spec, opts)
    a_sym, c_sym, e_sym = (poly.coeff_monomial(s**2), poly.coeff_monomial(s),
                           poly.coeff_monomial(1))
    values = model_values(spec, opts)
    subs = numbers(values)
    quad, a = chain(Formula("quadratic", "C", simplify(a_sym), "vaswani2017",
                            "attention scores and context"), subs)
    lin, c = chain(Formula("linear", "C", simplify(c_sym), "torch_flop_counter",
                           "projections, FFN and head"), subs)
    e = q.value(e_sym, values) if e_sym != 0 else sympy.Integer(0)
    star_expr = c_sym / a_sym
    star = sympy.Rational(c, a)
    star_expr = sympy.factor(star_expr)
    cross = [Formula("crossover", "s", star_expr, "",
                     "where quadratic = linear"),
             Substitute("crossover", "s", star_expr, tuple((k, v) for k, v in subs.items()
                                                           if k in star_expr.free_symbols)),
             Evaluate("crossover", "s", star)]
    body = (Section("Sizes", tuple(defines([a_sym, c_sym], values))),
            Section("The coefficients a and c of C(s), one sequence", tuple(quad + lin)),
            Section("Crossover", tuple(cross)))
    derivation = Derivation(spec.name, "flops.forward_matmul",
                            f"Forward FLOPs of {spec.name} against the sequence length", "C", body,
                            ("matmul FLOPs of one sequence (b = 1)" + (
                                "; decoder tokens s_dec = s" if spec.shape != "single" else ""),)
                            + ((f"a sliding window (W = {spec.W}) masks scores, but the matrix "
                                "products still cover all s x s pairs, as eager attention computes them",)
                               if spec.W else ()),
                            {"a": int(a), "c": int(c), "e": int(e), "crossover": star})
    return derivation, Curve(int(a), int(c), int(e), star, ())


def _points(stars: list[sympy.Rational]) -> tuple[int, ...]:
    top = max(int(sympy.ceiling(x)) for x in stars)
    hi = 8
    while 2**hi < 4 * top:
        hi += 1
    lo = max(7, hi - 10)
    return tuple(2**k for k in range(lo, hi + 1))


def sheet(spec: Spec, opts: Options) -> Sheet:
    values = accounting.numbers(accounting.params(spec), model_values(spec, opts))
    cats = {c: 0 for c in CATEGORIES}
    for leaf in values:
        cats[category(leaf.path)] += leaf.value
    flops, curve = crossover_derivation(spec, opts)
    dims = {n: v for n, v in spec.sizes().items() if n in DIMENSIONS}
    return Sheet(spec, dims, attention_kind(spec), values.total,
                 {c: v for c, v in cats.items() if v}, derive(spec, "params.total", opts),
                 derive_closed_form(spec, "kaplan", "params.total", opts), flops, curve)


def handout(specs: list[Spec], title: str | None = None, opts: Options = Options()) -> Handout:
    sheets = [sheet(spec, opts) for spec in specs]
    points = _points([sh.curve.crossover for sh in sheets])
    sheets = [Sheet(sh.spec, sh.dims, sh.attention, sh.total, sh.categories, sh.params, sh.closed,
                    sh.flops, Curve(sh.curve.quadratic, sh.curve.linear, sh.curve.constant,
                                    sh.curve.crossover,
                                    tuple((p, sh.curve.linear * p, sh.curve.quadratic * p * p)
                                          for p in points)))
              for sh in sheets]
    used = [n for n in DIMENSIONS if any(n in sh.dims for sh in sheets)]
    names = " and ".join(sp.name for sp in specs) if len(specs) < 3 else ", ".join(sp.name for sp in specs)
    return Handout(title or f"Counting {names}: parameters and compute, step by step",
                   tuple(sheets), tuple(used), points)


def dimension_meaning(name: str) -> str:
    return SIZES[name].meaning

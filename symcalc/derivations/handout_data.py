"""Everything a teaching handout shows, computed (no formatting): per model its dimensions,
the parameter breakdown by kind of component, the derivation of its parameters, its closed
form under Kaplan's assumptions with the exact correction, and its forward FLOPs as
``a s^2 + c s`` with the sequence length ``s*`` where the quadratic attention term overtakes
the linear terms, computed exactly. The renderer in :mod:`symcalc.render.handout` reads it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

import sympy

from ..algebra import accounting, quantities as q
from ..algebra.closed_form import simplify
from .derivation import Define, Derivation, Evaluate, Formula, Section, Substitute, part_symbol
from .derive import chain, defines, derive, model_values, numbers
from .derive_forms import derive_closed_form
from ..algebra.options import LAYOUT_FIELDS, Options
from dataclasses import fields as dataclass_fields
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
class Budget:
    """The whole budget of one model at the handout's workload (b sequences of s tokens):
    exact integers (bytes rounded up), with the derivations that show how."""
    params: int
    active: int | None  # MoE: parameters one token passes through
    weights_bytes: int
    kv_bytes: int
    kv_mha_bytes: int | None  # the same model with n_kv = n_h (GQA/MQA only)
    training_bytes: int
    forward_flops: int  # matmul FLOPs of one forward pass over b x s tokens
    training_flops: int
    six_nd: int  # 6 N D with D = b s tokens (N = active parameters for an MoE)
    tokens: int
    batch: int
    seq: int
    derivations: tuple[Derivation, ...]
    notes: tuple[str, ...]


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
    budget: Budget | None = None
    context: int | None = None  # the context length the checkpoint was built for


SECTIONS = ("breakdown", "params", "closed", "budget", "compute", "parallel")
# the sections of a handout when none are named ("parallel" joins them when a parallel layout
# option is given)
DEFAULT_SECTIONS = SECTIONS[:-1]
SECTION_MEANINGS = {"breakdown": "where the parameters are (table and chart)",
                    "params": "parameters step by step",
                    "closed": "closed forms under Kaplan et al.'s assumptions",
                    "budget": "the whole budget: weights, KV cache, training memory and compute",
                    "compute": "forward FLOPs against the sequence length",
                    "parallel": "splitting the model across GPUs: memory per rank and "
                                "communication of tensor, pipeline and data parallelism"}

# the layouts the section tabulates (the handout's own layout first, when it has one)
SPLIT_LAYOUTS = (("tp 2", dict(tp=2)), ("tp 8", dict(tp=8)),
                 ("tp 8, pp 2", dict(tp=8, pp=2, microbatches=8)),
                 ("tp 4, pp 2, dp 4, ZeRO-1", dict(tp=4, pp=2, dp=4, zero=1, microbatches=8)))
SPLIT_FIGURES = ("per_rank.params", "per_rank.weights_bytes", "per_rank.peak_bytes",
                 "communication.tp.step_bytes", "communication.pp.step_bytes",
                 "communication.dp.step_bytes")


@dataclass(frozen=True)
class Splitting:
    """The section "Splitting the model across GPUs": per layout and model the per-rank
    figures (None: the model cannot take the layout, with why), the derivation of each
    model's weights per rank at the worked layout, and an exercise with its answers."""
    layouts: tuple[tuple[str, dict], ...]
    figures: tuple[tuple[tuple[Optional[dict], str], ...], ...]  # [model][layout]
    worked: str  # the label of the layout the derivations work out
    derivations: tuple[Derivation, ...]
    exercise_layout: str
    exercise_answers: tuple[tuple[str, Optional[int], Optional[int]], ...]  # model, params, bytes


@dataclass(frozen=True)
class Handout:
    title: str
    sheets: tuple[Sheet, ...]
    dimensions: tuple[str, ...]  # the size symbols any model has, in display order
    points: tuple[int, ...]  # sequence lengths of the FLOPs table and figure
    sections: tuple[str, ...] = SECTIONS
    options: Options = Options()
    coincide: tuple[tuple[str, ...], ...] = ()  # models whose FLOPs curves are the same
    exercises: bool = False  # an exercise sheet: every computed number left blank
    splitting: Optional[Splitting] = None  # the "parallel" section


# max_position_embeddings (n_positions) of the published checkpoints' config.json; a model
# with a learned position table uses its size P
CONTEXT_LENGTHS = {
    "llama-2-7b": 4096, "llama-2-13b": 4096, "llama-3-8b": 8192, "mistral-7b": 32768,
    "mixtral-8x7b": 32768, "gemma-7b": 8192, "gemma-2-9b": 8192, "gemma-3-1b": 32768,
    "qwen3-8b": 40960, "qwen3-30b-a3b": 40960, "opt-6.7b": 2048, "phi-2": 2048,
    "phi-3-mini-4k": 4096, "olmo-2-7b": 4096, "olmoe-1b-7b": 4096, "gpt-j-6b": 2048,
    "pythia-6.9b": 2048, "deepseek-v2-lite": 163840, "deepseek-v3": 163840,
    "gpt-oss-20b": 131072, "command-r": 8192, "granite-3.1-8b": 131072,
}


def context_length(spec: Spec) -> int | None:
    return CONTEXT_LENGTHS.get(spec.name, spec.P)


def _poly(spec: Spec, opts: Options) -> sympy.Poly:
    """Forward matmul FLOPs of one sequence as a polynomial in s; the chunked scans of a
    hybrid stack (ceiling(s / Q_c) chunks) taken at s a whole number of chunks."""
    expr = q.expression("flops.forward_matmul", spec, opts).xreplace({b: 1, s_dec: s})
    expr = expr.replace(sympy.ceiling, lambda x: x)
    return sympy.Poly(sympy.expand(expr), s)


def _whole(x):
    """An exact coefficient: an int when whole (a chunked scan's s^2/Q_c^2 may not be)."""
    x = sympy.Rational(x)
    return int(x) if x.q == 1 else x


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
    star = sympy.Rational(c, a)
    # s* = c / a with the two coefficients just derived (their formulas are above)
    C_lin, C_quad = part_symbol("C", "linear"), part_symbol("C", "quadratic")
    star_expr = sympy.Mul(C_lin, sympy.Pow(C_quad, -1, evaluate=False), evaluate=False)
    cross = [Formula("crossover", "s", star_expr, "", "where quadratic = linear"),
             Substitute("crossover", "s", star_expr, ((C_lin, c), (C_quad, a))),
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
                               if spec.W else ())
                            + (("chunked scans (linear attention, Mamba-2) counted at s a whole "
                                "number of Q_c-token chunks",) if spec.L_lin or spec.L_ssm else ()),
                            {"a": _whole(a), "c": _whole(c), "e": _whole(e), "crossover": star})
    return derivation, Curve(_whole(a), _whole(c), _whole(e), star, ())


def _points(stars: list[sympy.Rational], context: int = 0) -> tuple[int, ...]:
    top = max(int(sympy.ceiling(x)) for x in stars)
    hi = 8
    while 2**hi < max(4 * top, context):
        hi += 1
    lo = max(7, hi - 10)
    return tuple(2**k for k in range(lo, hi + 1))


def _value(quantity: str, spec: Spec, opts: Options, values: dict) -> int:
    return int(q.whole(q.value(q.expression(quantity, spec, opts), values)))


def six_nd_derivation(spec: Spec, opts: Options, n_value: int, moe: bool, exact: int) -> Derivation:
    """Training FLOPs as the rule of thumb 6 N D (D tokens of one step, N the parameters a
    token passes through) beside the exact count of every matrix product."""
    values = model_values(spec, opts)
    tokens = values["b"] * values["s"]
    N, D = sympy.Symbol("N", positive=True), sympy.Symbol("D", positive=True)
    rule = 6 * N * D
    steps = [Formula("6ND", "C", rule, "kaplan2020", "6 FLOPs per parameter and token: 2 forward, "
                     "4 backward" + (" (N = active parameters)" if moe else "")),
             Substitute("6ND", "C", rule, ((D, tokens), (N, n_value))),
             Evaluate("6ND", "C", 6 * n_value * tokens)]
    gap = exact - 6 * n_value * tokens
    diff = [Formula("rule_gap", "C", sympy.Symbol("C_exact", positive=True) - rule, "",
                    "exact training FLOPs minus 6 N D: attention scores and context, the head "
                    "over every position, and what N counts but no matrix product uses"),
            Substitute("rule_gap", "C", sympy.Symbol("C_exact", positive=True) - rule,
                       ((sympy.Symbol("C_exact", positive=True), exact), (N, n_value), (D, tokens))),
            Evaluate("rule_gap", "C", gap)]
    body = (Section("Sizes", (Define(D, tokens, "tokens in one step (b s)"),
                              Define(N, n_value, "active parameters" if moe else "parameters"))),
            Section("The rule of thumb", tuple(steps)),
            Section("Against the exact count", tuple(diff)))
    return Derivation(spec.name, "flops.training", f"Training compute of {spec.name}: 6 N D",
                      "C", body, ("one training step over b sequences of s tokens",),
                      {"six_nd": 6 * n_value * tokens, "exact": exact, "gap": gap})


def budget(spec: Spec, opts: Options) -> Budget:
    values = model_values(spec, opts)
    n = _value("params.total", spec, opts, values)
    active = _value("params.active", spec, opts, values) if spec.moe else None
    kv = _value("memory.kv_cache_bytes", spec, opts, values)
    notes = []
    kv_mha = None
    n_kv = spec.n_kv if spec.n_kv is not None else spec.n_h
    if n_kv != spec.n_h and not spec.mla and spec.family != "encoder":
        mha = replace(spec, n_kv=spec.n_h)
        kv_mha = _value("memory.kv_cache_bytes", mha, opts, model_values(mha, opts))
        notes.append(f"with {n_kv} K/V heads instead of {spec.n_h}, the cache is "
                     f"{spec.n_h // n_kv if spec.n_h % n_kv == 0 else spec.n_h / n_kv}x smaller "
                     f"than multi-head attention's of the same shape; the K and V projections "
                     f"shrink by the same factor, but they are a small share of the parameters")
    fwd = _value("flops.forward_matmul", spec, opts, values)
    train = _value("flops.training", spec, opts, values)
    tokens = values["b"] * values["s"]
    derivs = [derive(spec, "memory.weights_bytes", opts)]
    if spec.family != "encoder":
        derivs.append(derive(spec, "memory.kv_cache_bytes", opts))
    derivs.append(derive(spec, "memory.training_bytes", opts))
    six = six_nd_derivation(spec, opts, active or n, spec.moe, train)
    derivs.append(six)
    return Budget(n, active, _value("memory.weights_bytes", spec, opts, values), kv, kv_mha,
                  _value("memory.training_bytes", spec, opts, values), fwd, train,
                  six.meta["six_nd"], tokens, values["b"], values["s"], tuple(derivs),
                  tuple(notes))


def sheet(spec: Spec, opts: Options, with_budget: bool = True) -> Sheet:
    values = accounting.numbers(accounting.params(spec), model_values(spec, opts))
    cats = {c: 0 for c in CATEGORIES}
    for leaf in values:
        cats[category(leaf.path)] += leaf.value
    flops, curve = crossover_derivation(spec, opts)
    dims = {n: v for n, v in spec.sizes().items() if n in DIMENSIONS}
    return Sheet(spec, dims, attention_kind(spec), values.total,
                 {c: v for c, v in cats.items() if v}, derive(spec, "params.total", opts),
                 derive_closed_form(spec, "kaplan", "params.total", opts), flops, curve,
                 budget(spec, opts) if with_budget else None, context_length(spec))


def check_sections(sections) -> tuple[str, ...]:
    """The handout's sections in their order; an unknown name is refused, naming the choices."""
    from ..errors import SymcalcError

    chosen = tuple(sections)
    for name in chosen:
        if name not in SECTIONS:
            raise SymcalcError("--sections", f"{name!r} is not a section; choose from "
                                             f"{', '.join(SECTIONS)} (comma-separated)")
    if not chosen:
        raise SymcalcError("--sections", f"names at least one of {', '.join(SECTIONS)}")
    return tuple(s for s in SECTIONS if s in chosen)


def splitting(specs: list[Spec], opts: Options, figures: Callable, derive_rank: Callable
              ) -> Splitting:
    """The "parallel" section: ``figures(spec, opts)`` gives a layout's per-rank figures by
    name (the report's, from the term table) or raises SymcalcError when the model cannot
    take it; ``derive_rank(spec, quantity, opts)`` works a figure out step by step. The
    worked layout is the handout's own when it has one, else tp 8."""
    from ..errors import SymcalcError

    own = tuple((f.name, getattr(opts, f.name)) for f in dataclass_fields(Options)
                if f.name in LAYOUT_FIELDS and getattr(opts, f.name) != getattr(Options(), f.name))
    layouts = list(SPLIT_LAYOUTS)
    if own:
        layouts = [(", ".join(f"{k} {v}" for k, v in own), dict(own))] + [
            x for x in layouts if x[1] != dict(own)]
    table = []
    for spec in specs:
        row = []
        for _label, lay in layouts:
            try:
                row.append((figures(spec, opts.with_(**lay)), ""))
            except SymcalcError as err:
                row.append((None, str(err)))
        table.append(tuple(row))
    worked_label, worked = layouts[0] if own else layouts[1]
    derivations = []
    for spec in specs:
        try:
            derivations.append(derive_rank(spec, "per_rank.weights_bytes", opts.with_(**worked)))
        except SymcalcError:
            continue
    exercise = dict(tp=4)
    answers = []
    for spec in specs:
        try:
            f = figures(spec, opts.with_(**exercise))
            answers.append((spec.name, f["per_rank.params"], f["per_rank.weights_bytes"]))
        except SymcalcError:
            answers.append((spec.name, None, None))
    return Splitting(tuple(layouts), tuple(table), worked_label, tuple(derivations), "tp 4",
                     tuple(answers))


def handout(specs: list[Spec], title: str | None = None, opts: Options = Options(),
            sections=DEFAULT_SECTIONS, exercises: bool = False,
            figures: Optional[Callable] = None, derive_rank: Optional[Callable] = None
            ) -> Handout:
    sections = check_sections(sections)
    sheets = [sheet(spec, opts, "budget" in sections) for spec in specs]
    contexts = [sh.context for sh in sheets if sh.context]
    points = _points([sh.curve.crossover for sh in sheets], max(contexts, default=0))
    sheets = [replace(sh, curve=Curve(sh.curve.quadratic, sh.curve.linear, sh.curve.constant,
                                      sh.curve.crossover,
                                      tuple((p, int(sympy.ceiling(sh.curve.linear * p)),
                                             int(sympy.ceiling(sh.curve.quadratic * p * p)))
                                            for p in points)))
              for sh in sheets]
    used = [n for n in DIMENSIONS if any(n in sh.dims for sh in sheets)]
    names = " and ".join(sp.name for sp in specs) if len(specs) < 3 else ", ".join(sp.name for sp in specs)
    groups: dict[tuple[int, int], list[str]] = {}
    for sh in sheets:
        groups.setdefault((sh.curve.quadratic, sh.curve.linear), []).append(sh.spec.name)
    coincide = tuple(tuple(g) for g in groups.values() if len(g) > 1)
    split = None
    if "parallel" in sections:
        if figures is None or derive_rank is None:
            from ..errors import SymcalcError

            raise SymcalcError("--sections", "parallel needs the per-rank figures (symcalc "
                                             "handout gives them)")
        split = splitting(specs, opts, figures, derive_rank)
    return Handout(title or f"Counting {names}: parameters and compute, step by step",
                   tuple(sheets), tuple(used), points, sections, opts, coincide, exercises,
                   split)


def dimension_meaning(name: str) -> str:
    return SIZES[name].meaning

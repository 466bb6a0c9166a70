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
from .capped import capped, caps
from .derivation import Define, Derivation, Evaluate, Formula, Section, Substitute, part_symbol
from .derive import chain, defines, derive, meaning, model_values, numbers
from .derive_forms import derive_closed_form
from .handout_budget import Budget, budget
from .handout_models import CATEGORIES, attention_kind, category, in_size_order, sizes_used
from ..algebra.options import LAYOUT_FIELDS, Options
from ..records import fields as record_fields
from ..algebra.spec import Spec
from ..algebra.symbols import b, s, s_dec

@dataclass(frozen=True)
class Curve:
    """Forward matmul FLOPs of one sequence (b = 1) as quadratic * s^2 + linear * s + rest."""
    quadratic: int
    linear: int
    constant: int
    crossover: Optional[sympy.Rational]  # s* = linear / quadratic; None: no s^2 term
    points: tuple[tuple[int, int, int], ...]  # (s, linear * s, quadratic * s^2)


@dataclass(frozen=True)
class Sheet:
    spec: Spec
    dims: dict[str, Define]  # every size its derivations use, by symbol name
    attention: str
    total: int
    categories: dict[str, int]
    params: Derivation
    closed: Derivation
    flops: Derivation
    curve: Curve
    budget: Budget | None = None
    context: int | None = None  # the context length the checkpoint was built for
    speed: object | None = None  # handout_speed.SpeedSheet: how fast, on the handout's --gpu


DEFAULT_SECTIONS = ("breakdown", "params", "closed", "budget", "compute")
SECTIONS = DEFAULT_SECTIONS + ("speed",)  # speed: with an accelerator (handout --gpu)
# every section a handout may have: "parallel" joins the default ones when a parallel layout
# option is given (it needs the per-rank figures from the caller: handout's figures= and
# derive_rank=)
ALL_SECTIONS = SECTIONS + ("parallel",)
SECTION_MEANINGS = {"speed": "how fast: the roofline of prefill and decode on an accelerator",
                    "breakdown": "where the parameters are (table and chart)",
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
    dimensions: tuple[str, ...]  # the sizes any model's derivations use, in display order
    points: tuple[int, ...]  # sequence lengths of the FLOPs table and figure
    sections: tuple[str, ...] = DEFAULT_SECTIONS
    options: Options = Options()
    # lines of the FLOPs figure that coincide: (term, models), term both, quadratic or linear
    coincide: tuple[tuple[str, tuple[str, ...]], ...] = ()
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
    "qwen3-next-80b-a3b": 262144,
    "gpt-oss-20b": 131072, "command-r": 8192, "granite-3.1-8b": 131072,
}


def context_length(spec: Spec) -> int | None:
    return CONTEXT_LENGTHS.get(spec.name, spec.P)


def _whole_chunks(expr):
    """``expr`` at s a whole number of chunks: ceiling(s / Q_c) and floor(s / Q_c) (the
    chunked scans of a hybrid stack, xLSTM's chunks, the QSA indexer's key blocks of C_ix
    tokens) taken as s / Q_c."""
    return expr.replace(sympy.ceiling, lambda x: x).replace(sympy.floor, lambda x: x)


def _poly(spec: Spec, opts: Options) -> sympy.Poly:
    """Forward matmul FLOPs of one sequence as a polynomial in s; the chunked scans of a
    hybrid stack (ceiling(s / Q_c) chunks) taken at s a whole number of chunks, DeepSeek-V4's
    compressed entries (floor(s / m)) at s a whole number of windows, a capped length
    min(K, s) at s >= K (:func:`_cap`)."""
    expr = q.expression("flops.forward_matmul", spec, opts).xreplace({b: 1, s_dec: s})
    return sympy.Poly(sympy.expand(capped(_whole_chunks(expr), long=True)), s)


def _whole(x):
    """An exact coefficient: an int when whole (a chunked scan's s^2/Q_c^2 may not be)."""
    x = sympy.Rational(x)
    return int(x) if x.q == 1 else x


def _cap(spec: Spec, opts: Options, values: dict) -> Optional[int]:
    """The cap K on s of a capped length min(K, s) in the forward FLOPs (DeBERTa's relative
    positions, K_rel), or None. The handout counts C(s) at s >= K, where the relative terms
    are linear in s and add 2 K to s* (the c2p and p2c products add 8 L n_h d_h K s to c
    against 4 L n_h d_h s^2 in a), so s* always lies on that side."""
    found = caps(q.expression("flops.forward_matmul", spec, opts))
    return int(q.value(sympy.Min(*found), values)) if found else None


def _constant_parts(spec: Spec, opts: Options) -> list[str]:
    """The matrix products whose FLOPs have a part that does not grow with s (one sequence;
    a capped length at s >= K, as :func:`_poly`)."""
    out = []
    for leaf in q.matmul_breakdown(spec, opts.with_(causal="full")):
        expr = sympy.expand(capped(_whole_chunks(leaf.value.xreplace({b: 1, s_dec: s})), long=True))
        if expr != 0 and sympy.Poly(expr, s).coeff_monomial(1) != 0:
            out.append(meaning(leaf.path))
    return list(dict.fromkeys(out))


def crossover_derivation(spec: Spec, opts: Options) -> tuple[Derivation, Curve]:
    """C(s) = a s^2 + c s (+ e): a from the attention scores and scores x V, c from every
    projection, the FFN and the head; s* = c / a where the two are equal. A stack with no
    term in s^2 (Mamba, RWKV, xLSTM, FNet's Fourier mixing: no attention scores) has
    a = 0 and no crossover: the section is left out and a convention says why."""
    values = model_values(spec, opts)
    cap = _cap(spec, opts, values)
    poly = _poly(spec, opts)
    a_sym, c_sym, e_sym = (poly.coeff_monomial(s**2), poly.coeff_monomial(s),
                           poly.coeff_monomial(1))
    subs = numbers(values)
    quad, a = chain(Formula("quadratic", "C", simplify(a_sym), "vaswani2017",
                            "attention scores and context"), subs)
    lin, c = chain(Formula("linear", "C", simplify(c_sym), "torch_flop_counter",
                           "projections, FFN and head"), subs)
    const = []
    if e_sym != 0:  # e.g. BERT's pooler on the first token: said, and left out of s*
        const, _ = chain(Formula("constant", "C", simplify(e_sym), "torch_flop_counter",
                                 "what does not grow with s, left out of s*: "
                                 + ", ".join(_constant_parts(spec, opts))), subs)
    e = q.value(e_sym, values) if e_sym != 0 else sympy.Integer(0)
    star = sympy.Rational(c, a) if a != 0 else None
    cross = ()
    if star is not None:
        # s* = c / a with the two coefficients just derived (their formulas are above)
        C_lin, C_quad = part_symbol("C", "linear"), part_symbol("C", "quadratic")
        star_expr = sympy.Mul(C_lin, sympy.Pow(C_quad, -1, evaluate=False), evaluate=False)
        cross = (Section("Crossover", (
            Formula("crossover", "s", star_expr, "", "where quadratic = linear"),
            Substitute("crossover", "s", star_expr, ((C_lin, c), (C_quad, a))),
            Evaluate("crossover", "s", star))),)
    body = (Section("Sizes", tuple(defines([a_sym, c_sym, e_sym], values))),
            Section("The coefficients a, c and e of C(s) = a s^2 + c s + e, one sequence"
                    if const else "The coefficients a and c of C(s), one sequence",
                    tuple(quad + lin + const))) + cross
    derivation = Derivation(spec.name, "flops.forward_matmul",
                            f"Forward FLOPs of {spec.name} against the sequence length", "C", body,
                            ("matmul FLOPs of one sequence (b = 1)" + (
                                "; decoder tokens s_dec = s" if spec.shape != "single" else ""),)
                            + ((f"a sliding window (W = {spec.W}) masks scores, but the matrix "
                                "products still cover all s x s pairs, as eager attention computes them",)
                               if spec.W else ())
                            + (("chunked scans (linear attention, Mamba-2) counted at s a whole "
                                "number of Q_c-token chunks",) if spec.L_lin or spec.L_ssm else ())
                            + ((f"the QSA indexer's key blocks counted at s a whole number of "
                                f"{spec.C_ix}-token blocks",) if spec.C_ix else ())
                            + (("compressed entries (DeepSeek-V4's CSA and HCA) counted at s a whole "
                                "number of m_csa- and m_hca-token windows",) if spec.m_csa else ())
                            + ((f"relative positions capped (min(K_rel, s)): C(s) counted at s "
                                f"of at least K_rel = {cap}",) if cap is not None else ())
                            + (("no term grows with s^2 (no attention scores): C(s) is linear "
                                "in s and has no crossover s*",) if star is None else ()),
                            {"a": _whole(a), "c": _whole(c), "e": _whole(e), "crossover": star})
    return derivation, Curve(_whole(a), _whole(c), _whole(e), star, ())


# where the FLOPs table and figure end when no model has a crossover (all linear in s)
LINEAR_TOP = 4096


def _points(stars: list[Optional[sympy.Rational]], context: int = 0) -> tuple[int, ...]:
    """Sequence lengths, powers of 2, past every crossover (a model without one, None,
    sets no bound) and the longest context."""
    top = max((int(sympy.ceiling(x)) for x in stars if x is not None), default=LINEAR_TOP)
    hi = 8
    while 2**hi < 4 * top or 2**hi <= context:  # the context line inside the plot
        hi += 1
    lo = max(7, hi - 10)
    return tuple(2**k for k in range(lo, hi + 1))


def sheet(spec: Spec, opts: Options, with_budget: bool = True, speed=None) -> Sheet:
    values = accounting.numbers(accounting.params(spec), model_values(spec, opts))
    cats = {c: 0 for c in CATEGORIES}
    for leaf in values:
        cats[category(leaf.path, spec)] += leaf.value
    flops, curve = crossover_derivation(spec, opts)
    params = derive(spec, "params.total", opts)
    closed = derive_closed_form(spec, "kaplan", "params.total", opts)
    money = budget(spec, opts) if with_budget else None
    shown = [params, closed, flops] + (list(money.derivations) if money else [])
    return Sheet(spec, sizes_used(shown), attention_kind(spec), values.total,
                 {c: v for c, v in cats.items() if v}, params, closed, flops, curve, money,
                 context_length(spec), speed(spec, opts) if speed else None)


def coinciding(sheets) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The lines of the FLOPs figure that lie on one another: ("both", models) where two
    models have the same a and c, else ("quadratic", models) for the same a (the solid lines)
    and ("linear", models) for the same c (the dashed ones)."""
    out = []
    for term, key in (("both", lambda c: (c.quadratic, c.linear)),
                      ("quadratic", lambda c: c.quadratic), ("linear", lambda c: c.linear)):
        groups: dict = {}
        for sh in sheets:
            groups.setdefault(key(sh.curve), []).append(sh.spec.name)
        for names in groups.values():
            if len(names) > 1 and not any(set(names) <= set(g) for _, g in out):
                out.append((term, tuple(names)))
    return tuple(out)


def check_sections(sections) -> tuple[str, ...]:
    """The handout's sections in their order; an unknown name is refused, naming the choices."""
    from ..errors import SymcalcError

    chosen = tuple(sections)
    for name in chosen:
        if name not in ALL_SECTIONS:
            raise SymcalcError("--sections", f"{name!r} is not a section; choose from "
                                             f"{', '.join(ALL_SECTIONS)} (comma-separated)")
    if not chosen:
        raise SymcalcError("--sections", f"names at least one of {', '.join(ALL_SECTIONS)}")
    return tuple(s for s in ALL_SECTIONS if s in chosen)


def splitting(specs: list[Spec], opts: Options, figures: Callable, derive_rank: Callable
              ) -> Splitting:
    """The "parallel" section: ``figures(spec, opts)`` gives a layout's per-rank figures by
    name (the report's, from the term table) or raises SymcalcError when the model cannot
    take it; ``derive_rank(spec, quantity, opts)`` works a figure out step by step. The
    worked layout is the handout's own when it has one, else tp 8."""
    from ..errors import SymcalcError

    own = tuple((f.name, getattr(opts, f.name)) for f in record_fields(Options)
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
            sections=DEFAULT_SECTIONS, exercises: bool = False, speed=None,
            figures: Optional[Callable] = None, derive_rank: Optional[Callable] = None
            ) -> Handout:
    """``speed``: the "speed" section's data of one model, ``speed(spec, opts)`` ->
    handout_speed.SpeedSheet or None (the command line builds it from the quick path:
    symcalc.commands.handout.speed_of). ``figures`` and ``derive_rank``: the "parallel"
    section's (:func:`splitting`)."""
    sections = check_sections(sections)
    if "speed" in sections and speed is None:
        from ..errors import SymcalcError

        raise SymcalcError("--sections", "speed needs an accelerator's figures (handout --gpu NAME)")
    sheets = [sheet(spec, opts, "budget" in sections, speed if "speed" in sections else None)
              for spec in specs]
    contexts = [sh.context for sh in sheets if sh.context]
    points = _points([sh.curve.crossover for sh in sheets], max(contexts, default=0))
    sheets = [replace(sh, curve=Curve(sh.curve.quadratic, sh.curve.linear, sh.curve.constant,
                                      sh.curve.crossover,
                                      tuple((p, int(sympy.ceiling(sh.curve.linear * p)),
                                             int(sympy.ceiling(sh.curve.quadratic * p * p)))
                                            for p in points)))
              for sh in sheets]
    used = in_size_order(n for sh in sheets for n in sh.dims)
    names = " and ".join(sp.name for sp in specs) if len(specs) < 3 else ", ".join(sp.name for sp in specs)
    coincide = coinciding(sheets)
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

"""Training compute against the rule of thumb 6 N D (Kaplan et al. 2020), with the gap
between them derived: one training step costs 3 forward passes of matrix products, and a
forward pass costs 2 FLOPs per token for every weight a matrix product multiplies, plus the
products of activations with activations (attention scores and context, chunked scans).
So

    C_exact - 6 N D = 3 C_act (+ 3 C_edge) - 6 D N_idle,

where N_idle are the parameters no matrix product uses (embedding tables a lookup reads,
biases, norms) and C_edge the few positions a causal convolution pads. The output head is a
matrix product like any other and is not part of the gap. Data only, no formatting.
"""
from __future__ import annotations

import sympy

from ..algebra import accounting, quantities as q
from ..algebra.closed_form import simplify
from ..algebra.options import Options
from ..algebra.spec import Spec
from ..algebra.symbols import SIZES
from .capped import capped, caps
from .derivation import Compose, Derivation, Formula, Section, part_symbol
from .derive import chain, model_values, numbers, with_sizes
from .handout_models import category

IDLE_KINDS = {"embedding": "embedding tables no matrix product multiplies (a lookup costs "
                           "no FLOPs)",
              "bias": "biases and other vectors no matrix product multiplies",
              "norm": "norm weights and biases"}


def _head_target(params: dict) -> str | None:
    """The parameters the output head's product multiplies: its own weight, or the token
    table it is tied to."""
    return "head/weight" if "head/weight" in params else (
        "embedding/token" if "embedding/token" in params else None)


def _idle_kind(path: str, spec: Spec) -> str:
    kind = category(path, spec)
    if kind == "embeddings":
        return "embedding"
    if kind == "norms" or "norm" in path.split("/")[-1]:
        return "norm"
    return "bias"


def gap_parts(spec: Spec, opts: Options, long: bool = True
              ) -> tuple[sympy.Expr, sympy.Expr, dict[str, sympy.Expr]]:
    """(C_act, C_edge, N_idle by kind) as expressions: the forward pass's products of
    activations with activations, the padded positions of the convolutions and the products
    over capped relative positions (the constant part of their products), and per kind the
    active parameters that no matrix product multiplies (each leaf's parameters less half
    its per-token matmul FLOPs). A length capped at K, min(K, s), is taken on the side
    ``long`` says (s >= K, else s <= K: :mod:`.capped`)."""
    s, b = SIZES["s"].symbol, SIZES["b"].symbol
    E, k = SIZES["E"].symbol, SIZES["k"].symbol
    params = {leaf.path: leaf.value for leaf in accounting.params(spec)}
    used: dict[str, sympy.Expr] = {}
    act, edge = sympy.Integer(0), sympy.Integer(0)
    for leaf in q.matmul_breakdown(spec, opts.with_(causal="full")):
        value = capped(leaf.value, long)
        target = leaf.path if leaf.path in params else (
            _head_target(params) if leaf.path == "head" else None)
        if target is None:  # scores, context, a scan's chunk products: no weight
            act += value
            continue
        poly = sympy.Poly(sympy.expand(value), s)
        if poly.degree() > 1:
            raise AssertionError(f"a weight's product quadratic in s: {leaf.path}")
        used[target] = used.get(target, 0) + sympy.expand(poly.coeff_monomial(s) / (2 * b))
        edge += poly.coeff_monomial(1)
    idle: dict[str, sympy.Expr] = {kind: sympy.Integer(0) for kind in IDLE_KINDS}
    for path, value in params.items():
        if accounting.is_routed_expert(path):
            value = value.xreplace({E: k})
        idle[_idle_kind(path, spec)] += sympy.expand(value - used.get(path, 0))
    return sympy.expand(act), sympy.expand(edge), {k_: v for k_, v in idle.items() if v != 0}


def _sign_change(act, edge, idle, values: dict) -> int | None:
    """The sequence length above which the gap turns positive (chunked scans and key blocks
    taken at whole chunks: ceiling and floor of s / Q_c as s / Q_c), or None when it never does."""
    s = SIZES["s"].symbol
    fixed = {SIZES[n].symbol: sympy.Integer(v) for n, v in values.items() if n in SIZES and n != "s"}
    gap = (3 * act + 3 * edge).replace(sympy.ceiling, lambda x: x).replace(sympy.floor, lambda x: x) \
        - 6 * SIZES["b"].symbol * s * idle
    roots = [r for r in sympy.Poly(sympy.expand(gap.xreplace(fixed)), s).nroots() if r.is_real and r > 0]
    return int(sympy.ceiling(max(roots))) if roots else None


def six_nd_derivation(spec: Spec, opts: Options, n_value: int, forward: int,
                      exact: int) -> Derivation:
    """Training FLOPs of one step, derived as 3 forward passes, against 6 N D (N the
    parameters a token passes through, D the tokens of the step), and the gap between them
    derived from attention's products and the parameters no matrix product uses."""
    values = model_values(spec, opts)
    subs = numbers(values)
    b, s = SIZES["b"].symbol, SIZES["s"].symbol
    moe = bool(spec.moe)
    tokens, D_value = chain(Formula("", "D", b * s, "", "tokens in one training step: b "
                                    "sequences of s tokens"), subs)
    C_fwd, C_train = part_symbol("C", "flops.forward_matmul"), part_symbol("C", "flops.training")
    sections = [Section("Tokens", tuple(tokens))]
    threefold = exact == 3 * forward
    if threefold:
        train, _ = chain(Compose("flops.training", "C", sympy.Mul(3, C_fwd, evaluate=False),
                                 "forward and backward: the backward pass costs twice the "
                                 "forward"), {C_fwd: forward})
        sections.append(Section("Exact training FLOPs", tuple(train)))
    N = part_symbol("N", "params.active" if moe else "params.total")
    D = part_symbol("D", "")
    rule = 6 * N * D
    six, six_value = chain(Formula("6ND", "C", rule, "kaplan2020", "6 FLOPs per parameter and "
                                   "token: 2 forward, 4 backward" + (" (N = active parameters)"
                                                                     if moe else "")),
                           {N: n_value, D: D_value})
    sections.append(Section("The rule of thumb", tuple(six)))
    C_six = part_symbol("C", "6ND")
    gap_steps, gap = chain(Compose("gap", "C", sympy.Add(C_train, -C_six, evaluate=False),
                                   "exact training FLOPs minus 6 N D"),
                           {C_train: exact, C_six: six_value})
    sections.append(Section("Against the exact count", tuple(gap_steps)))
    meta = {"six_nd": int(six_value), "exact": exact, "gap": int(gap), "negative": ""}
    formulas = [b * s]
    if threefold:
        # a length capped at K (DeBERTa's relative positions): the side the workload's s is on
        long = all(values["s"] >= q.value(K, values) for K in caps(
            q.expression("flops.forward_matmul", spec, opts)))
        act, edge, idle = gap_parts(spec, opts, long)
        steps, parts = [], {}
        shown = sympy.Add(*[sympy.factor_terms(term) for term in simplify(act).as_ordered_terms()])
        more, parts["act"] = chain(Formula("act", "C", shown, "vaswani2017", "products of "
                                           "activations with activations in one forward pass: "
                                           "attention scores and context" + (
                                               ", chunked scans" if spec.L_lin or spec.L_ssm
                                               else "")), subs)
        steps += more
        formulas.append(act)
        if edge != 0:
            more, parts["edge"] = chain(Formula("edge", "C", simplify(edge), "", (
                "the products over the relative positions, capped at K_rel (they do not grow "
                "with s), one forward pass" if edge.has(SIZES["K_rel"].symbol) else
                "the positions a causal convolution pads, one forward pass")), subs)
            steps += more
            formulas.append(edge)
        for kind, expr in idle.items():
            more, parts[f"idle/{kind}"] = chain(Formula(f"idle/{kind}", "N", simplify(expr),
                                                        "hf_transformers", IDLE_KINDS[kind]), subs)
            steps += more
            formulas.append(expr)
        N_idle = part_symbol("N", "idle")
        more, idle_value = chain(Compose("idle", "N", sympy.Add(
            *[part_symbol("N", f"idle/{kind}") for kind in idle], evaluate=False),
            "parameters no matrix product uses"),
            {part_symbol("N", f"idle/{kind}"): parts[f"idle/{kind}"] for kind in idle})
        steps += more
        C_act, C_edge = part_symbol("C", "act"), part_symbol("C", "edge")
        terms = [sympy.Mul(3, C_act, evaluate=False)] + (
            [sympy.Mul(3, C_edge, evaluate=False)] if "edge" in parts else []) + [
            sympy.Mul(-6, D, N_idle, evaluate=False)]
        more, explained = chain(Compose("gap", "C", sympy.Add(*terms, evaluate=False),
                                        "3 forward passes of attention's products, less "
                                        "6 D times the parameters no product uses"),
                                {C_act: parts["act"], C_edge: parts.get("edge", 0), D: D_value,
                                 N_idle: idle_value})
        if explained != gap:
            raise AssertionError("the 6 N D gap does not add up")
        steps += more
        sections.append(Section("Where the difference comes from", tuple(steps)))
        meta.update(act=int(parts["act"]), idle=int(idle_value))
        if gap < 0:
            turn = _sign_change(act, edge, sum(idle.values()), values)
            meta["negative"] = (
                f"6 N D overestimates {spec.name} at s = {values['s']:,}: it charges 6 FLOPs per "
                f"token to each of the {int(idle_value):,} parameters no matrix product uses "
                "(embedding tables a lookup reads, biases, norms), more than attention's "
                "products add" + (f"; the gap turns positive above s = {turn:,} "
                                              "tokens" if turn else ""))
    conventions = ("one training step over b sequences of s tokens",
                   "the output head is a matrix product like any other (2 V d FLOPs per token "
                   "for its V d weights), so 6 N D counts it exactly: it is not part of the gap")
    body = with_sizes(sections, formulas, values)
    return Derivation(spec.name, "flops.training", f"Training compute of {spec.name}: 6 N D",
                      "C", body, conventions, meta)

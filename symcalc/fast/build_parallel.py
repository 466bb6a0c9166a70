"""The term table's per-rank and communication rows (part of :mod:`symcalc.fast.build_terms`).

One table serves every plan and layout: the rows are guarded by *plan facts*
(:func:`symcalc.algebra.tp_styles.plan_facts`: which width of each part the plan splits,
which collectives each module runs, which regions run split), their coefficients are trees
in the layout symbols (t, p, v, m, e, t_e, c, N_d, the stage index i_p) and the options
(ZeRO one-hots, sequence parallelism, the schedule), and a set may be summed at a *view*:
the sizes substituted by trees first (a stage's layers, the sequence over c, a rank's
key/value heads, the experts of one expert-parallel rank). Rows that only repeat another
set's row with more guards are *references* ``[set, index, guards(, path)]``.

Every expression comes from the functions of :mod:`symcalc.algebra.parallel`,
:mod:`symcalc.algebra.communication`, :mod:`symcalc.algebra.stages` and
:mod:`symcalc.algebra.tp_plans`; tests/test_terms_parallel.py holds the evaluated rows equal
to them (docs/evaluators.md).
"""
from __future__ import annotations

import sympy

from ..algebra import accounting, components as comp, parallel, stages
from ..algebra.communication import wire_factor
from ..algebra.symbols import ALL, SIZES, SWITCHES
from ..algebra.tp_plans import Linear, linears
from ..algebra.tp_styles import (BIAS_ONLY, EXPERTS_MODULE, FACT_KINDS, PARAMETERS,
                                 fusable_group, is_routed_expert, short)

S = {n: SIZES[n].symbol for n in SIZES}
L, L_attn, L_ffn, L_dense = S["L"], S["L_attn"], S["L_ffn"], S["L_dense"]
b, s, s_dec, d, E, k = S["b"], S["s"], S["s_dec"], S["d"], S["E"], S["k"]
t, p, v, m, e, t_e, c, N_d, i_p = (S[n] for n in ("t", "p", "v", "m", "e", "t_e", "c", "N_d",
                                                  "i_p"))
# the layout's symbols: constants folded once per layout (i_p: one stage, given per stage)
LAYOUT_NAMES = ("t", "p", "v", "m", "e", "t_e", "c", "N_d", "i_p")

OPTION_MEANINGS = {
    "sw_sp": "sequence parallelism (with tensor parallelism)",
    "sw_il": "the interleaved pipeline schedule (v > 1), else 1F1B",
    "sw_meg": "the megatron convention (--tp-plan megatron)",
    "sw_ulysses": "context parallelism by DeepSpeed-Ulysses all-to-alls (else ring attention)",
    "sw_tied": "the head is tied to the token table",
}


def fact(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True, nonnegative=True)


def _o(name: str) -> sympy.Symbol:
    """An option symbol (as build_terms.OPTIONS makes it: the same symbol)."""
    return sympy.Symbol(name, integer=True, nonnegative=True)


def _sw(name: str) -> sympy.Symbol:
    return SWITCHES[name].symbol


def cmin(a, b_):
    return sympy.Min(a, b_, evaluate=False)


# -- views: sizes substituted before a set is summed -------------------------------------------
def stage_layers(n):
    """Layers of a stack of ``n`` on stage i_p: ceil((n - i_p)/p) (transformers' split, the
    first n mod p stages one more; n/p each when p divides n, as Megatron-LM and the
    interleaved schedule need: :func:`symbols.stages.layers_on_stage`)."""
    return sympy.ceiling((n - i_p) / p)


def stage_start():
    """Index of the stage's first layer: i_p floor(L/p) + min(i_p, L mod p)."""
    q = sympy.floor(L / p)
    return i_p * q + cmin(i_p, L - p * q)


def views() -> dict[str, dict]:
    """name -> {size: expression}: the stage's layers (``stage``), with one expert-parallel
    rank's experts (``experts``), with the sequence split by context parallelism (``act``),
    with rank 0's key/value heads (``heads``, ``kv``), one decoded token (``decode``)."""
    stage = {L: stage_layers(L), L_attn: stage_layers(L_attn), L_ffn: stage_layers(L_ffn),
             S["L_idx"]: stage_layers(S["L_idx"]),
             # the weight copies (Zamba's shared blocks are refused with stages: a hybrid stack)
             S["L_attn_w"]: stage_layers(S["L_attn_w"]), S["L_ffn_w"]: stage_layers(S["L_ffn_w"]),
             L_dense: sympy.Min(sympy.Max(L_dense - stage_start(), 0), stage_layers(L))}
    attention = fact("tpr:attention")
    heads = {S["n_kv"]: S["n_kv"] + attention * (sympy.ceiling(S["n_kv"] / t) - S["n_kv"]),
             S["n_kvg"]: S["n_kvg"] + attention * (sympy.ceiling(S["n_kvg"] / t) - S["n_kvg"]),
             S["n_h"]: S["n_h"] + attention * (sympy.ceiling(S["n_h"] / t) - S["n_h"])}
    seq = {s: sympy.floor(s / c), s_dec: sympy.floor(s_dec / c)}
    return {
        "stage": stage,
        "experts": {**stage, E: sympy.ceiling(E / e)},
        "act": {**stage, **seq},
        "heads": {**stage, **heads},
        "kv": {**stage, **heads, **seq},
        "decode": {**stage, s: sympy.Integer(1), s_dec: sympy.Integer(1)},
    }


# -- per-part rows --------------------------------------------------------------------------------
def compact_row(strings, path: str, expr, source: str, constants=frozenset()):
    """``expr`` as one row without expanding it: its symbol factors among the constants
    (facts, switches) as the guard, the rest as a tree of products and sums (the split rows
    are products of a layer count, a width and a share; expanded they would be several times
    longer). None when it is 0."""
    from .trees import tree

    if expr == 0:
        return None
    guard, rest = [], []
    for f in sympy.Mul.make_args(expr):
        if isinstance(f, sympy.Symbol) and (f.name in constants or _is_fact(f.name)):
            guard.append(f.name)
        else:
            rest.append(f)
    body = sympy.Mul(*rest)
    num, den = body.as_numer_denom()
    if not den.is_Integer:
        raise ValueError(f"a row must not divide by a symbol: {expr}")
    return [strings(path), strings(source), sorted(guard), tree(num), int(den)]


def _is_fact(name: str) -> bool:
    return name.split(":", 1)[0] in FACT_KINDS



def _guards(row_tree_fn, expr) -> list[str]:
    made = row_tree_fn(expr)
    return made[0] if made else []


def presence(leaf, row_tree_fn) -> sympy.Expr:
    """The part is in the model: the product of its row's guard switches."""
    return sympy.Mul(*[sympy.Symbol(g, integer=True, nonnegative=True)
                       for g in _guards(row_tree_fn, leaf.value)])


def part_count(path: str):
    """Layers holding the part (1 for a table or the head)."""
    if path.startswith("layer/"):
        return accounting.group_count(path[len("layer/"):], L, hybrid=True, params=True)
    return sympy.Integer(1)


def run_count(path: str):
    """Layers running the part's module (1 for a table or the head): each run collects, so a
    looped or shared layer (B_sh copies run L times) counts its runs, not its copies, as
    communication.tp_comm does."""
    if path.startswith("layer/"):
        return accounting.group_count(path[len("layer/"):], L, hybrid=True)
    return sympy.Integer(1)


def _per_module(f, direction: str, x) -> sympy.Expr:
    """One module of ``f`` with its split width at ``x``."""
    if direction == "out":
        b1 = sympy.cancel(f.bias / f.n_out) if f.n_out != 0 else 0
        return f.copies * (f.n_in + b1) * x + f.extra
    return f.copies * (x * f.n_out + f.bias) + f.extra


# the splits of the global layers' own shape (sw_gshape) the table holds: q, k, v by output
# rows and o by input columns, as transformers' plans and Megatron-LM's layer split them
GLOBAL_SPLITS = {"layer/attention/q": "out", "layer/attention/k": "out",
                 "layer/attention/v": "out", "layer/attention/o": "in"}


def split_value(path: str, f, direction: str, share, fused: bool = False) -> sympy.Expr:
    """The part over its layers with one split width at ``share`` (parallel.sharded_params's
    rule: output rows carry their bias, input columns leave it whole); a dense FFN whose
    widths differ by layer (sw_ff_sum) sums its widths instead (accounting.stack_value)."""
    def per(x):
        if direction == "out":
            b1 = sympy.cancel(f.bias / f.n_out) if f.n_out != 0 else 0
            return f.copies * (f.n_in + b1) * x + f.extra
        return f.copies * (x * f.n_out + f.bias) + f.extra

    count = part_count(path)
    inner = path[len("layer/"):]
    if path.startswith("layer/") and accounting.windowed(inner) and not fused:
        # the sliding layers at their own MLA shape (dots.llm3: sw_mlaw), split on their own
        w, off = accounting.window_shape(), accounting.WINDOW_OFF
        base = Linear(*(sympy.sympify(getattr(f, a)).xreplace(off)
                        for a in ("n_in", "n_out", "bias", "copies", "extra")))
        at = Linear(*(getattr(base, a).xreplace(w)
                      for a in ("n_in", "n_out", "bias", "copies", "extra")))
        x = sympy.sympify(share).xreplace(off)
        window = _sw("sw_mlaw") * S["L_local"] * (_per_module(at, direction, x.xreplace(w))
                                                   - _per_module(base, direction, x))
    else:
        window = 0
    return window + _split_value(path, f, direction, share, fused, count, inner, per)


def _split_value(path, f, direction, share, fused, count, inner, per) -> sympy.Expr:
    if GLOBAL_SPLITS.get(path) == direction and not fused:
        # the sliding and global layers at their own shapes (Gemma 4, MiMo-V2-Flash: sw_gshape),
        # each shape split on its own
        local, held = accounting.global_counts(inner)
        at = [_per_module(Linear(*(accounting.at_layer_shape(inner, getattr(f, a), g)
                                   for a in ("n_in", "n_out", "bias", "copies", "extra"))),
                          direction, accounting.at_layer_shape(inner, share, g))
              for g in (False, True)]
        return count * per(share) + _sw("sw_gshape") * (local * at[0] + held * at[1]
                                                        - count * per(share))
    if path.startswith("layer/ffn/"):
        ff = _sw("sw_ff_sum")
        alpha = per(0)
        beta = sympy.expand(per(1) - alpha)
        summed = share.xreplace({S["d_ff"]: S["d_ff_sum"]})
        return count * alpha + beta * ((1 - ff) * count * share + ff * summed)
    return count * per(share)


def rank_rows(shape: str, strings, params_rows: list, leaves, row_tree_fn, constants):
    """Sets ``rp:layers``, ``rp:experts``, ``rp:first``, ``rp:last``, ``rp:tied``: every
    parameter leaf as tensor-parallel rank 0 holds it, by plan fact (whole, output rows,
    input columns, part of a fused module, Megatron-LM's padded vocabulary)."""
    shapes = linears()
    index = {strings.items[row[0]]: i for i, row in enumerate(params_rows)}
    present = {leaf.path: leaf for leaf in leaves if leaf.path in index}
    sets = {k: [] for k in ("rp:layers", "rp:experts", "rp:first", "rp:last", "rp:tied")}
    widths = {x: shapes[x].n_out for x in shapes}

    for path, leaf in present.items():
        holder = parallel.holder(path)
        expert = is_routed_expert(path)
        target = "rp:experts" if expert else {"layers": "rp:layers", "first": "rp:first",
                                                "last": "rp:last"}[holder]
        if path not in shapes:
            sets[target].append(["params", index[path], []])
            continue
        name = short(path)
        f = shapes[path]
        deg = t_e if expert else t
        sets[target].append(["params", index[path], [f"tpn:{name}"]])
        items = []
        vocab_in = sympy.Integer(128) * sympy.ceiling(f.n_in / (128 * deg))
        vocab_out = sympy.Integer(128) * sympy.ceiling(f.n_out / (128 * deg))
        if path != "head/bias":
            items.append(("tpi", split_value(path, f, "in", sympy.ceiling(f.n_in / deg))))
        items.append(("tpo", split_value(path, f, "out", sympy.ceiling(f.n_out / deg))))
        if path == "embedding/token":
            items.append(("tpv", split_value(path, f, "in", vocab_in)))
        elif path in ("head/weight", "head/bias"):
            items.append(("tpv", split_value(path, f, "out", vocab_out)))
        group = [y for y in fusable_group(path) if y != path and y not in BIAS_ONLY
                 and y in present]
        if group and path not in BIAS_ONLY:
            total = widths[path] + sympy.Add(*[fact(f"tpw:{name}:{short(y)}")
                                               * presence(present[y], row_tree_fn) * widths[y]
                                               for y in group])
            offset = sympy.Add(*[fact(f"tpb:{name}:{short(y)}")
                                 * presence(present[y], row_tree_fn) * widths[y]
                                 for y in group])
            share = sympy.Min(widths[path], sympy.Max(0, sympy.ceiling(total / deg) - offset))
            items.append(("tpl", split_value(path, f, "out", share, fused=True)))
        guard = presence(leaf, row_tree_fn)
        for kind, value in items:
            row = compact_row(strings, path, fact(f"{kind}:{name}") * guard * value, leaf.source,
                              constants)
            if row is not None:
                sets[target].append(row)
    # the tied head's copy of the token table on the last stage (pipeline parallelism):
    # the first stage's token rows again
    for i, row in enumerate(sets["rp:first"]):
        if _path_of(row, strings, params_rows) == "embedding/token":
            sets["rp:tied"].append(["rp:first", i, ["sw_tied"], strings("head/tied_copy")])
    return sets


def _path_of(row, strings, params_rows) -> str:
    if isinstance(row[0], str):
        return strings.items[params_rows[row[1]][0]]
    return strings.items[row[0]]


# -- communication rows ------------------------------------------------------------------------
def comm_rows(shape: str, strings, params_rows: list, leaves, row_tree_fn, constants):
    """Tensor-parallel payloads per module (led by its first part) per holder, referenced with
    the fact of each collective; pipeline, expert and context payloads."""
    shapes = linears()
    index = {strings.items[row[0]]: i for i, row in enumerate(params_rows)}
    present = {leaf.path: leaf for leaf in leaves if leaf.path in index}
    H = {"layers": "L", "first": "F", "last": "T"}
    sets: dict[str, list] = {}

    def add(name, rows):
        sets.setdefault(name, []).extend(rows)

    def make(path, expr, source):
        row = compact_row(strings, path, expr, source, constants)
        return [row] if row is not None else []

    tokens = b * s
    leads = [x for x in shapes if x in present or (x == "head/weight" and shape == "single")]
    if shape == "single" and any(is_routed_expert(x) for x in present):
        leads.append(EXPERTS_MODULE)
    for x in leads:
        if x in BIAS_ONLY or x in PARAMETERS:  # no module of its own: no collective
            continue
        name = short(x)
        hold = H["layers" if x == EXPERTS_MODULE else parallel.holder(x)]
        if x == EXPERTS_MODULE:
            count = accounting.moe_count(L_ffn)
            pres, n_out, n_in = sympy.Integer(1), d, d
            pe = 1 + fact(f"tpe:{name}") * (E - 1)
        else:
            # a module led by x (its first part): in the model when any of its parts is
            f = shapes[x]
            count = run_count(x)
            group = [y for y in fusable_group(x) if y != x and y not in BIAS_ONLY
                     and y in present]
            if x == "head/weight":
                mine = pres = _sw("sw_head")  # a tied head runs on the token table
            else:
                mine = presence(present[x], row_tree_fn) if x in present else 0
                absent = (1 - mine) * sympy.Mul(*[
                    1 - fact(f"tpw:{name}:{short(y)}") * presence(present[y], row_tree_fn)
                    for y in group])
                pres = 1 - absent if absent != 1 - mine else mine
            n_out = f.n_out * mine + sympy.Add(*[fact(f"tpw:{name}:{short(y)}")
                                                 * presence(present[y], row_tree_fn)
                                                 * shapes[y].n_out for y in group])
            if x == "head/weight":
                n_out, pres = f.n_out, pres
            n_in, pe = f.n_in, sympy.Integer(1)
        where = {}
        for base_set, value in (("tc:out", pres * count * tokens * n_out * pe),
                                ("tc:in", pres * count * tokens * n_in * pe),
                                ("tc:n", pres * count)):
            key = f"{base_set}:{hold}"
            where[base_set] = len(sets.setdefault(key, []))
            made = make(x, value, "torch_tp")
            add(key, made)
            if not made:
                where.pop(base_set)
        for ref, base_set, fct in (("tc:fo:ar", "tc:out", "tfa"), ("tc:fo:ag", "tc:out", "tfg"),
                                   ("tc:bi:ar", "tc:in", "tba"), ("tc:bi:ag", "tc:in", "tbg"),
                                   ("tc:fn", "tc:n", "tfa")):
            if base_set in where:
                add(f"{ref}:{hold}", [[f"{base_set}:{hold}", where[base_set], [f"{fct}:{name}"]]])
    # the backward's other all-reduces: a replicated part's gradient, MLA's rotary key, the
    # routing weights
    for path, leaf in present.items():
        if path.startswith("layer/") and path not in shapes and not is_routed_expert(path):
            add("tc:bw:L", [["params", index[path], [f"tbw:{short(path)}"]]])
    if "layer/attention/kv_a" in present:
        add("tc:bx:L", make("layer/attention/kv_a", fact("tbr:attention/kv_a")
                            * run_count("layer/attention/kv_a") * tokens * S["d_rope"],
                            "torch_tp"))
    if shape == "single":
        add("tc:bx:L", make(EXPERTS_MODULE, fact(f"tbk:{short(EXPERTS_MODULE)}")
                            * accounting.moe_count(L_ffn) * tokens * k, "torch_tp"))
        add("tc:ce:T", make("vocab_parallel_cross_entropy", _sw("sw_head") * tokens,
                            "megatron_lm"))
        add("tc:cen:T", make("vocab_parallel_cross_entropy", _sw("sw_head") * 1, "megatron_lm"))
        add("pp:act", make("pp/send", tokens * d, "narayanan2021pp"))
        add("ep:a2a", make("ep/all_to_all", accounting.moe_count(L_ffn) * tokens * k * d,
                           "lepikhin2021"))
        mla = _sw("sw_mla")
        layers = accounting.group_count("attention/q", L, hybrid=True)
        d_h, n_h, n_kv = S["d_h"], S["n_h"], S["n_kv"]
        kv_vals = (1 - mla) * 2 * n_kv * d_h + mla * n_h * (S["d_nope"] + S["d_rope"] + S["d_v"])
        q_vals = (1 - mla) * n_h * d_h + mla * n_h * (S["d_nope"] + S["d_rope"])
        o_vals = n_h * comp.value_width()
        for name, vals, src in (("cp:kv", kv_vals, "liu2023ring"), ("cp:q", q_vals, "jacobs2023"),
                                ("cp:o", o_vals, "jacobs2023")):
            add(name, make(name.replace(":", "/"), layers * tokens * vals, src))
    return sets


# -- quantities ---------------------------------------------------------------------------------
def _sum(name: str, view: str | None = None) -> sympy.Symbol:
    return sympy.Symbol("S:" + name + (f"@{view}" if view else ""))


def let(name: str) -> sympy.Symbol:
    """A named coefficient (the table's ``lets``: computed once per model, options and stage,
    then read by the coefficients like a constant)."""
    return sympy.Symbol("$" + name)


def cmin_(a, b_):
    return sympy.Min(a, b_, evaluate=False)


def active(n):
    """1 when the integer n exceeds 1, else 0 (a dimension of one rank sends nothing)."""
    return cmin_(n - 1, 1)


def inflight():
    """stages.inflight with the schedule a one-hot (sw_il), per chunk of the interleaved
    schedule (L/(p v) layers: the stage view holds L/p)."""
    il = _o("sw_il")
    return ((1 - il) * cmin_(p - i_p, m)
            + il * cmin_(2 * (p - i_p - 1) + (v - 1) * p + 1, m * v) / v)


REGIONS = {"attention": ("tpr:attention", "t"), "ffn": ("tpr:ffn", "t"),
           "moe": ("tpr:moe", "t"), "experts": ("tpr:moe", "t_e"),
           "linear_attention": ("tpr:linear_attention", "t"), "other": (None, "t")}


def lets() -> list[tuple[str, sympy.Expr]]:
    """The named coefficients, in order (each may read the ones before it): the stage's
    flags, the ZeRO shares of a dense and of an expert parameter (parallel._zero_share), what
    each activation region keeps per rank, the microbatches in flight (stages.inflight), the
    activation bytes on the wire, which dimensions have more than one rank."""
    z1, z2, z3 = _o("sw_zero1"), _o("sw_zero2"), _o("sw_zero3")
    on = {"zero_w": z3, "zero_g": z2 + z3, "zero_o": z1 + z2 + z3}
    sp = _o("sw_sp")
    out = [("first", 1 - cmin_(i_p, 1)), ("last", 1 - cmin_(p - 1 - i_p, 1)),
           ("tied", let("last") * (1 - let("first"))),
           ("A", _o("w_num") / _o("w_den")),
           ("sp", 1 - sp + sp / t)]
    for expert, tag in ((False, "d"), (True, "e")):
        for name in ("zero_w", "zero_g", "zero_o"):
            share = parallel._zero_share(name, expert).xreplace({_sw("sw_" + name): on[name]})
            out.append((f"{name[-1]}{tag}", share))
    for region, (f, deg) in REGIONS.items():
        if f is not None:
            out.append((f"div_{region}", fact(f) / S[deg] + (1 - fact(f)) * let("sp")))
    out += [("inflight", inflight()), ("on_t", active(t)), ("on_e", active(e)),
            ("on_d", active(N_d * c)),
            ("on_xd", cmin_(sympy.ceiling(N_d * c * t / (e * t_e)) - 1, 1))]
    # data parallelism per step: without ZeRO one all-reduce of the gradients, ZeRO-1 a
    # reduce-scatter of them and an all-gather of the weights, ZeRO-2 the reduce-scatter at
    # every microbatch, ZeRO-3 the all-gather before every forward and backward too
    z0 = 1 - z1 - z2 - z3
    g_b, w_b = _o("opt_g"), _o("opt_w")
    n_ar, n_rs, n_ag = z0, z1 + m * (z2 + z3), z1 + z2 + 2 * m * z3
    out.append(("dp", g_b * (n_ar + n_rs) + w_b * n_ag))
    for expert, tag in ((False, "d"), (True, "e")):
        g = parallel.dp_group(expert)
        out.append((f"dpw_{tag}", g_b * (wire_factor("all_reduce", g) * n_ar
                                         + wire_factor("reduce_scatter", g) * n_rs)
                    + w_b * wire_factor("all_gather", g) * n_ag))
    return out


def dense_params():
    return (_sum("rp:layers", "stage") + let("first") * _sum("rp:first")
            + let("last") * _sum("rp:last") + let("tied") * _sum("rp:tied"))


def expert_params():
    return _sum("rp:experts", "experts")


def activation_formula(models) -> "Times":
    """Per-rank activations of the stage: each region's terms divided where it runs split,
    the rest by sequence parallelism, at the stage's layers and s/c tokens, times the
    microbatches in flight (parallel.rank_activations)."""
    opt = _o
    total = sympy.Integer(0)
    div = {r: (let(f"div_{r}") if f else let("sp")) for r, (f, _) in REGIONS.items()}
    for model in models:
        w = opt(f"ac_{model}") * opt("ac_keep")
        part = _sum(f"act:{model}:rep", "act") * let("sp")
        for region in REGIONS:
            part += _sum(f"act:{model}:s:{region}", "act") * div[region]
            if region in ("attention", "other"):
                part += opt("ac_keep_core") * _sum(f"act:{model}:core:{region}", "act") * div[region]
        total += w * part
    total += opt("ac_full") * _sum("act_input", "act") * let("sp")
    return Times(total, let("inflight"))


class Times(tuple):
    """(combination, common factor): a quantity whose every coefficient has the same factor
    (the microbatches in flight), written once in the table's ``times``."""

    def __new__(cls, expr, factor):
        return super().__new__(cls, (expr, factor))


def comm_formulas() -> dict[str, sympy.Expr]:
    """Communication of one rank of the stage, per dimension (communication.communication)."""
    A, first, last = let("A"), let("first"), let("last")
    flags = {"L": 1, "F": first, "T": last}
    sp = _o("sw_sp")
    tce = fact("tce:loss")

    def tp_sum(name, view="stage"):
        # the stage's layers for the layer modules; the tables and the head at one decoded
        # token too
        return sum((flags[h] * _sum(f"{name}:{h}", view if h == "L" or view != "stage" else None)
                    for h in ("L", "F", "T")), sympy.Integer(0))

    on_t = let("on_t")
    fo_ar, fo_ag = tp_sum("tc:fo:ar"), tp_sum("tc:fo:ag")
    bi_ar, bi_ag, bx = tp_sum("tc:bi:ar"), tp_sum("tc:bi:ag"), _sum("tc:bx:L", "stage")
    bw = c * _sum("tc:bw:L", "stage")  # a gradient of parameters: not per token (not / c)
    ce = 12 * tce * last * _sum("tc:ce:T")
    # sequence parallelism: each all-reduce of an activation is a reduce-scatter and an
    # all-gather of the same payload (communication.tp_comm): twice the payload, the same
    # bytes on the wire
    tp_fwd = on_t * (A * ((1 + sp) * fo_ar + fo_ag) + ce) / c
    tp_bwd = on_t * A * ((1 + sp) * bi_ar + bi_ag + bx + bw) / c
    ar_wire, ag_wire = wire_factor("all_reduce", t), wire_factor("all_gather", t)
    tp_wire = on_t * (A * (ar_wire * (fo_ar + bi_ar + bx + bw) + ag_wire * (fo_ag + bi_ag))
                      + ar_wire * ce) / c
    tp_decode_ar, tp_decode_ag = tp_sum("tc:fo:ar", "decode"), tp_sum("tc:fo:ag", "decode")
    out = {
        "communication.tp.forward_bytes": tp_fwd,
        "communication.tp.step_bytes": m * (tp_fwd + tp_bwd),
        "communication.tp.step_wire_bytes": m * tp_wire,
        "communication.tp.decode_bytes_per_token": on_t * A * ((1 + sp) * tp_decode_ar
                                                               + tp_decode_ag),
        "communication.tp.forward_wire_bytes": on_t * (A * (ar_wire * fo_ar + ag_wire * fo_ag)
                                                       + ar_wire * ce) / c,
        "communication.tp.decode_wire_bytes_per_token": on_t * A * (ar_wire * tp_decode_ar
                                                                    + ag_wire * tp_decode_ag),
        "communication.tp.forward_allreduce_count": on_t * ((1 - sp) * tp_sum("tc:fn")
                                                            + 3 * tce * last * _sum("tc:cen:T")),
        "communication.tp.forward_allreduce_bytes": on_t * ((1 - sp) * A * fo_ar + ce) / c,
    }
    # pipeline: b s d values a send, over t with sequence parallelism or Megatron's scatter
    meg = _o("sw_meg")
    q = sp + meg - sp * meg
    il = _o("sw_il")
    n_f = (1 - il) * (1 - last) + il * (v - last)
    n_b = (1 - il) * (1 - first) + il * (v - first)
    per = A * (1 - q + q / t)
    out.update({
        "communication.pp.forward_bytes": per * n_f * _sum("pp:act") / c,
        "communication.pp.step_bytes": m * per * (n_f + n_b) * _sum("pp:act") / c,
        "communication.pp.step_wire_bytes": m * per * (n_f + n_b) * _sum("pp:act") / c,
        "communication.pp.decode_bytes_per_token": per * n_f * _sum("pp:act", "decode"),
        # point to point: the rank sends each payload once
        "communication.pp.forward_wire_bytes": per * n_f * _sum("pp:act") / c,
        "communication.pp.decode_wire_bytes_per_token": per * n_f * _sum("pp:act", "decode"),
    })
    # data parallelism: per step, over each parameter's data-parallel group
    payload = wire = sympy.Integer(0)
    for expert, params in ((False, dense_params()), (True, expert_params())):
        gate = let("on_d") * (let("on_xd") if expert else 1)
        payload += gate * let("dp") * params
        wire += gate * let("dpw_e" if expert else "dpw_d") * params
    out.update({
        "communication.dp.forward_bytes": sympy.Integer(0),
        "communication.dp.step_bytes": payload,
        "communication.dp.step_wire_bytes": wire,
        "communication.dp.decode_bytes_per_token": sympy.Integer(0),
        "communication.dp.forward_wire_bytes": sympy.Integer(0),
        "communication.dp.decode_wire_bytes_per_token": sympy.Integer(0),
    })
    # expert parallelism: dispatch and combine all-to-alls per MoE layer
    ep = let("on_e") * 2 * A * (1 - sp + sp / t)
    out.update({
        "communication.ep.forward_bytes": ep * _sum("ep:a2a", "stage") / c,
        "communication.ep.step_bytes": 2 * m * ep * _sum("ep:a2a", "stage") / c,
        "communication.ep.step_wire_bytes": 2 * m * ep * wire_factor("all_to_all", e)
        * _sum("ep:a2a", "stage") / c,
        "communication.ep.decode_bytes_per_token": ep * _sum("ep:a2a", "decode"),
        "communication.ep.forward_wire_bytes": ep * wire_factor("all_to_all", e)
        * _sum("ep:a2a", "stage") / c,
        "communication.ep.decode_wire_bytes_per_token": ep * wire_factor("all_to_all", e)
        * _sum("ep:a2a", "decode"),
    })
    # context parallelism: ring passes of the key/value blocks, or Ulysses' all-to-alls
    ul = _o("sw_ulysses")
    ring = (1 - ul) * (c - 1) * A * _sum("cp:kv", "heads") / c
    uly = ul * active(c) * A * (_sum("cp:q", "heads") + _sum("cp:kv", "heads")
                                + _sum("cp:o", "heads")) / c
    out.update({
        "communication.cp.forward_bytes": ring + uly,
        "communication.cp.step_bytes": m * (3 * ring + 2 * uly),
        "communication.cp.step_wire_bytes": m * (3 * ring + 2 * uly * wire_factor("all_to_all", c)),
        "communication.cp.decode_bytes_per_token": sympy.Integer(0),
        "communication.cp.forward_wire_bytes": ring + uly * wire_factor("all_to_all", c),
        "communication.cp.decode_wire_bytes_per_token": sympy.Integer(0),
    })
    return out


def formulas(shape: str, models) -> dict[str, sympy.Expr]:
    """Every per-rank and communication quantity of one stage (i_p) as a combination of set
    sums (some at a view), its coefficients in the lets."""
    opt = _o
    dense, experts = dense_params(), expert_params()

    def states(kind):
        return let(f"{kind}d") * dense + let(f"{kind}e") * experts

    out = {
        "per_rank.params": dense + experts,
        "per_rank.weights_bytes": let("A") * states("w"),
        "per_rank.gradients_bytes": opt("opt_g") * states("g"),
        "per_rank.optimizer_bytes": opt("opt_o") * states("o"),
        "per_rank.states_bytes": opt("opt_w") * states("w") + opt("opt_g") * states("g")
        + opt("opt_o") * states("o"),
        "per_rank.activations_bytes": activation_formula(models),
        "per_rank.kv_cache_bytes": opt("kv_num") / opt("kv_den") * _sum("kv", "kv"),
    }
    out.update(comm_formulas())
    return out

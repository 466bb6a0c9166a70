"""Memory per rank of a parallel layout, as sympy expressions: parameters, weights,
gradients, optimizer state, activations, KV cache and recurrent state of the most-loaded rank
of each pipeline stage.

A layout (:class:`symcalc.algebra.layout.Layout`) splits the model over tensor (t), pipeline
(p, v chunks, m microbatches), expert (e, t_e), context (c) and data (N_d) parallel ranks.
Every function here returns **terms**: a named piece of one quantity on one rank (a slash path,
the expression in the canonical symbols, the key of its source, and the rule that divided it),
so that a per-rank figure is the sum of its terms and each term can be shown, derived or
evaluated on its own. Nothing here formats anything. The communication is in
:mod:`symcalc.algebra.communication`, the plans in :mod:`symcalc.algebra.tp_plans`, the stages
in :mod:`symcalc.algebra.stages`.

Which rank: the most-loaded one. Along t that is tensor-parallel rank 0 (``torch.chunk`` gives
the first ranks ceil(n/t) rows where t does not divide n); along e expert-parallel rank 0 (it
holds ceil(E/e) experts); along p every stage is built and the caller evaluates them all
(:func:`most_loaded`). The first stage holds the embeddings and the most microbatches in
flight, the last the final norm and the head.

Two named conventions for what tensor parallelism splits (``Layout.tp_plan``):

* ``hf`` -- the family's ``base_model_tp_plan`` as PyTorch's ``parallelize_module`` applies
  it: colwise modules split their output rows and bias, rowwise their input columns (bias
  whole), an embedding_rowwise table its vocabulary rows, everything outside the plan whole;
  uneven widths as ``torch.chunk`` splits them (rank 0: ceil(n/t));
* ``megatron`` -- Megatron-LM's layer: fused q/k/v and the MLP's first matrix column-parallel,
  the output projections row-parallel, norms and routers whole, the embedding and the head
  vocabulary-parallel over a vocabulary padded to a multiple of 128 t, the layers split evenly.

Sources: ``torch_tp``, ``hf_tp_plan``, ``shoeybi2019``, ``megatron_lm``, ``narayanan2021pp``,
``korthikanti2022sp``, ``rajbhandari2020``, ``deepspeed_estimate``
(:mod:`symcalc.derivations.sources`; docs/conventions.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Optional

import sympy

from .caps import max_of, min_of
from ..errors import SymcalcError
from . import accounting, activations, memory
from .breakdown import Breakdown
from .layout import Layout, check_spec, forward_problems
from .options import Options, convention_switches
from .spec import Spec
from .stages import Stage, inflight, stage_counts, stage_flags
from .symbols import (ALL, SWITCHES, E, N_d, c, d_ff, d_ff_sum, e, i_p, n_h, n_kv, n_kvg, s, s_dec, t,
                      t_e, v)
from .tp_plans import (Linear, PlanEntry, fixed, is_routed_expert, linear_form, linears, part_styles,
                       plan_for, split_regions)
from .tp_styles import BIAS_ONLY

# Megatron-LM pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) times t
# (megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding)
MEGATRON_VOCAB_MULTIPLE = 128


def _sw(name: str) -> sympy.Symbol:
    return SWITCHES["sw_" + name].symbol


@dataclass(frozen=True)
class Term:
    """One piece of a per-rank quantity: ``path`` names it (``layer/attention/q``,
    ``optimizer/state``, ``tp/forward/all_reduce/o``), ``expr`` is its value on the rank,
    ``source`` the key of its source, ``rule`` how the layout divided it (the divisor kind a
    row evaluator applies: ``colwise``, ``rowwise``, ``vocab``, ``experts``, ``whole``,
    ``zero``, ``layers``, ...)."""

    path: str
    expr: sympy.Expr
    source: str
    rule: str


def total(terms: Iterable[Term]) -> sympy.Expr:
    return sympy.Add(*[x.expr for x in terms])


# -- parameters per rank --------------------------------------------------------------------

def _split(n, degree, layout: Layout, vocab: bool = False, rank=0):
    """Rank ``rank``'s share of n rows split over ``degree`` ranks: as torch.chunk splits
    them (hf), chunks of ceil(n / degree) rows, the last ones shorter or empty -- rank 0, the
    most loaded, holds ceil(n / degree); n / degree each (megatron: it requires
    divisibility), and for the vocabulary Megatron-LM's padded rows, 128 ceil(V / (128 t))
    each."""
    if layout.tp_plan == "megatron":
        if vocab:
            return MEGATRON_VOCAB_MULTIPLE * sympy.ceiling(n / (MEGATRON_VOCAB_MULTIPLE * degree))
        return n / degree
    if rank == 0:
        return sympy.ceiling(n / degree)
    return _rows(n, sympy.ceiling(n / degree), rank)


def _rows(n, chunk, rank, start=0):
    """Rows of [start, start + n) that fall in rank's chunk [rank chunk, (rank + 1) chunk)
    of a torch.chunk split."""
    lo = max_of(start, rank * chunk)
    hi = min_of(start + n, (rank + 1) * chunk)
    return max_of(0, hi - lo)


def _quotient(a, b_) -> sympy.Expr:
    """a / b as a polynomial (a part whose parameters are not a multiple of its split width
    means the plan names a part it cannot split)."""
    num, den = sympy.fraction(sympy.cancel(sympy.expand(a) / sympy.expand(b_)))
    if den != 1:
        raise SymcalcError("tp-plan", f"a part of {sympy.expand(a)} parameters does not split "
                                      f"along {b_}")
    return sympy.expand(num)




def sharded_params(spec: Spec, layout: Layout, plan: Iterable[PlanEntry],
                   bd: Optional[Breakdown] = None, tp_rank: int = 0,
                   ep_rank: int = 0) -> list[Term]:
    """:func:`_sharded_params`, cached per spec, layout, plan and ranks for the spec's own
    breakdown (every stage of a layout reads the same shards)."""
    if bd is None:
        return list(_sharded_cached(spec, layout, tuple(plan), tp_rank, ep_rank))
    return _sharded_params(spec, layout, plan, bd, tp_rank, ep_rank)


@lru_cache(maxsize=128)
def _sharded_cached(spec: Spec, layout: Layout, plan: tuple, tp_rank: int,
                    ep_rank: int) -> tuple:
    return tuple(_sharded_params(spec, layout, plan, None, tp_rank, ep_rank))


def _sharded_params(spec: Spec, layout: Layout, plan: Iterable[PlanEntry],
                    bd: Optional[Breakdown] = None, tp_rank: int = 0,
                    ep_rank: int = 0) -> list[Term]:
    """Every parameter leaf of the whole model (``bd``: the spec's breakdown) as one rank
    holds it along t and e (``tp_rank``, ``ep_rank``: 0, the most loaded, unless asked): split
    by its plan entry (a fused module splits its parts together, over the sum of their
    widths), the routed experts spread over e ranks and each split over t_e, everything else
    whole. Layer parts keep their layer counts (see :func:`rank_params` for the stages)."""
    bd = accounting.params(spec) if bd is None else bd
    key = dict(accounting.structure_key(spec))
    shapes = linears()
    styles = part_styles(plan)
    values = {leaf.path: leaf.value for leaf in bd}
    out = []
    done = set()
    for leaf in bd:
        if leaf.path in done:
            continue
        hit = styles.get(leaf.path)
        expert = is_routed_expert(leaf.path)
        experts_share = (_split(E, e, layout, rank=ep_rank) / E) if expert else 1
        if hit is None:
            rule = "experts" if expert else "whole"
            out.append(Term(leaf.path, sympy.expand(leaf.value * experts_share), leaf.source,
                            rule))
            continue
        entry, style = hit
        fused = [x for x in entry.parts if x in values]
        degree = t_e if expert else t
        split = style.split
        if entry.transposed:
            split = {"in": "out", "out": "in"}[split]
        forms = [linear_form(shapes, x, key) for x in fused]
        summed = key.get(_sw("ff_sum")) == 1 and all(x.startswith("layer/ffn/") for x in fused)
        if summed:
            # FFN widths that differ by layer (Gemma 3n): the spec holds only their sum, so
            # the stack is one module of width d_ff_sum, split evenly (t dividing each width)
            forms = [Linear(*(sympy.sympify(getattr(f, n)).xreplace({d_ff: d_ff_sum})
                              for n in LINEAR_FIELDS))
                     for f in forms]
        widths = [getattr(f, "n_out" if split == "out" else "n_in") for f in forms]
        vocab = entry.style in ("embedding_rowwise", "vocab_colwise") \
            and layout.tp_plan == "megatron"
        # Megatron-LM interleaves a fused module's parts so that each rank holds its share of
        # each; a packed style splits each part on its own; torch.chunk gives rank 0 the first
        # ceil(W/t) rows of a fused weight, part by part in order
        # (a bias vector listed with its weight, the head's, is no width of its own)
        rows_of = [w for x, w in zip(fused, widths) if x not in BIAS_ONLY]
        literal = len(rows_of) > 1 and layout.tp_plan == "hf" \
            and not entry.style.startswith("packed")
        chunk = sympy.ceiling(sympy.Add(*rows_of) / degree) if literal else None
        offset = sympy.Integer(0)
        for x, f, width in zip(fused, forms, widths):
            # the part over all the layers holding it: that count times one module
            one = f.copies * (f.n_in * f.n_out + f.bias) + f.extra
            # a part whose layers come in two shapes, each split on its own: Gemma 4's global
            # layers (their own head dimension), dots.llm3's sliding layers (their own MLA sizes)
            two, tag = None, ""
            inner = x[len("layer/"):]
            if key.get(_sw("gshape")) == 1 and inner in accounting.GLOBAL_SHAPE:
                local, glob = (fixed(n, key) for n in accounting.global_counts(inner))
                two = [(n, Linear(*(accounting.at_layer_shape(inner, getattr(f, a), g)
                                    for a in LINEAR_FIELDS)))
                       for n, g in ((local, False), (glob, True))]
                tag = "global_shape"
            elif key.get(_sw("mlaw")) == 1 and x.startswith("layer/") and accounting.windowed(inner):
                local = fixed(accounting.SIZES["L_local"].symbol, key)
                held = fixed(accounting.group_count(inner, accounting.L, hybrid=True,
                                                    params=True), key)
                w = accounting.window_shape()
                two = [(n, Linear(*(sympy.sympify(getattr(f, a)).xreplace(shape)
                                    for a in LINEAR_FIELDS)))
                       for n, shape in ((held - local, {}), (local, w))]
                tag = "window_shape"
            if two is not None:
                for n, g_f in two:
                    share = _split(getattr(g_f, "n_out" if split == "out" else "n_in"), degree,
                                   layout, vocab=vocab, rank=tp_rank)
                    out.append(Term(x, sympy.expand(n * _per_module(g_f, share, split)
                                                    * experts_share),
                                    leaf.source if x == leaf.path else _source_of(bd, x),
                                    f"{entry.style}+{tag}"))
                done.add(x)
                continue
            count = _quotient(values[x], one)
            if literal and x not in BIAS_ONLY:
                share = _rows(width, chunk, tp_rank, offset)
                offset = offset + width
            elif summed:
                share = width / degree
            else:
                share = _split(width, degree, layout, vocab=vocab, rank=tp_rank)
            expr = count * _per_module(f, share, split) * experts_share
            rule = f"{entry.style}{'+experts' if expert else ''}"
            out.append(Term(x, sympy.expand(expr), leaf.source if x == leaf.path else
                            _source_of(bd, x), rule))
            done.add(x)
    return out


LINEAR_FIELDS = ("n_in", "n_out", "bias", "copies", "extra")


def _per_module(f: Linear, share, split: str):
    """Parameters one rank holds of one module of form ``f``, its split width cut to
    ``share``: a colwise split (``out``) takes its share of the rows and of a bias that
    follows them, a rowwise split (``in``) its share of the columns and the whole bias; the
    extra elements stay whole."""
    if split == "out":
        return f.copies * (f.n_in + _quotient(f.bias, f.n_out)) * share + f.extra
    return f.copies * (share * f.n_out + f.bias) + f.extra


def _source_of(bd: Breakdown, path: str) -> str:
    return next(l.source for l in bd if l.path == path)




FIRST_STAGE = ("embedding/", "embedding_norm", "per_layer_input/", "altup/projections",
               "relative_bias", "relative_logits", "relative_embeddings")
LAST_STAGE = ("final_norm", "head/", "pooler", "mlm_head", "contact_head", "entity_head", "altup/unembed_projections",
              "backbone/post_projection")


def holder(path: str) -> str:
    if path.startswith("layer/"):
        return "layers"
    if any(path == x or path.startswith(x) for x in FIRST_STAGE):
        return "first"
    if any(path == x or path.startswith(x) for x in LAST_STAGE):
        return "last"
    return "first"


def rank_params(spec: Spec, layout: Layout, plan: Iterable[PlanEntry] = (),
                stage: Stage = "first", tp_rank: int = 0, ep_rank: int = 0) -> list[Term]:
    """Parameters one rank of the stage holds: its layers' parts (counts of the stage), the
    embeddings on the first stage, final norm and head on the last; with a tied head and more
    than one stage the last stage keeps its own copy of the token table (Megatron-LM's shared
    word embeddings, transformers' pipeline) as ``head/tied_copy``."""
    layout = layout.checked()
    check(spec, layout)
    first, last = stage_flags(stage, layout)
    counts = stage_counts(spec, layout, stage)
    sharded = sharded_params(spec, layout, plan_for(layout, plan), tp_rank=tp_rank,
                             ep_rank=ep_rank)
    out = []
    for term in sharded:
        where = holder(term.path)
        if where == "layers":
            expr = sympy.expand(term.expr.xreplace(counts)) if counts else term.expr
            rule = term.rule if layout.pp == 1 else f"{term.rule}+layers"
            out.append(Term(term.path, expr, term.source, rule))
        elif (where == "first" and first) or (where == "last" and last):
            out.append(term)
    if last and not first and spec.head == "tied" and any(
            x.path == "embedding/token" for x in sharded):
        token = next(x for x in sharded if x.path == "embedding/token")
        out.append(Term("head/tied_copy", token.expr, "megatron_lm", token.rule))
    return [x for x in out if x.expr != 0]


# -- weights, gradients, optimizer state ----------------------------------------------------

# Bytes per parameter of (weights, gradients, optimizer state) of mixed-precision Adam as
# each accounting counts them: Megatron-LM keeps fp32 main gradients (2 + 4 + 12 = 18,
# theoretical_memory_usage.py); DeepSpeed's estimates count 2 + 2 and 16 bytes of fp32 state
# (weights, momentum, variance and gradients)
STATE_BYTES = {"megatron": (2, 4, 12), "deepspeed": (2, 2, 16)}


def state_bytes(opts: Options, layout: Layout) -> tuple[int, int, int, str]:
    """(weights, gradients, optimizer state) bytes per parameter under the layout's
    accounting, and its source."""
    if layout.state_accounting in STATE_BYTES:
        if opts.optimizer != "adam-mixed":
            raise SymcalcError("state-accounting", f"{layout.state_accounting}'s bytes are "
                                                   "those of mixed-precision Adam (got "
                                                   f"--optimizer {opts.optimizer})")
        w_b, g_b, o_b = STATE_BYTES[layout.state_accounting]
        return w_b, g_b, o_b, {"megatron": "megatron_lm",
                               "deepspeed": "deepspeed_estimate"}[layout.state_accounting]
    opt = memory.optimizer(opts.optimizer)
    return opt.weights, opt.gradients, opt.state, "rajbhandari2020"


def dp_group(expert: bool):
    """Ranks a parameter is replicated over (and ZeRO partitions it over): the data- and
    context-parallel ranks, N_d c; a routed expert's, the ranks left once e t_e split the
    experts, N_d c t / (e t_e) (Megatron-LM's expert data parallelism)."""
    return N_d * c * t / (e * t_e) if expert else N_d * c


def zero_switches(layout: Layout) -> dict[sympy.Symbol, sympy.Integer]:
    """sw_zero_w/g/o of the layout: ZeRO-1 (or Megatron's distributed optimizer) shards the
    optimizer state, ZeRO-2 the gradients too, ZeRO-3 (FSDP) the weights too."""
    z = 1 if layout.distributed_optimizer else layout.zero
    return {_sw("zero_w"): sympy.Integer(int(z >= 3)), _sw("zero_g"): sympy.Integer(int(z >= 2)),
            _sw("zero_o"): sympy.Integer(int(z >= 1))}


def _zero_share(switch: str, expert: bool):
    """Share of a state a rank keeps: whole, or 1/(its data-parallel group) when sharded."""
    on = _sw(switch)
    return 1 - on + on / dp_group(expert)


def model_states(params: list[Term], opts: Options, layout: Layout,
                 largest: Optional[sympy.Expr] = None) -> dict[str, list[Term]]:
    """Weights, gradients and optimizer state of the rank's parameters (terms of
    :func:`rank_params`) under the layout's ZeRO stage, each term sharded over its
    data-parallel group. ``paper`` (Rajbhandari et al. 2020): the optimizer's bytes per
    parameter (--optimizer), stage 1 shards the state, 2 the gradients too, 3 the weights too;
    ``megatron``: 2 + 4 + 12 bytes, the same sharding (its distributed optimizer is stage 1);
    ``deepspeed``: DeepSpeed's estimates, 2 + 2 + 16 bytes, stage 2 keeping the 16-bit weights
    and gradients whole, stage 3 counting no 16-bit gradients but the largest layer's 16-bit
    weights and gradients gathered (4 bytes per parameter of ``largest``)."""
    zs = zero_switches(layout)
    w_b, g_b, o_b, source = state_bytes(opts, layout)
    out: dict[str, list[Term]] = {"weights": [], "gradients": [], "optimizer": []}
    for term in params:
        expert = is_routed_expert(term.path)
        w_share = _zero_share("zero_w", expert).xreplace(zs)
        g_share = _zero_share("zero_g", expert).xreplace(zs)
        o_share = _zero_share("zero_o", expert).xreplace(zs)
        if layout.state_accounting == "deepspeed":
            g_share = sympy.Integer(0) if layout.zero == 3 else sympy.Integer(1)
            w_share = _zero_share("zero_w", expert).xreplace(zs)
            o_share = 1 / dp_group(expert)
        rule = "zero" if layout.zero or layout.distributed_optimizer else "whole"
        out["weights"].append(Term(term.path, term.expr * w_b * w_share, source, rule))
        out["gradients"].append(Term(term.path, term.expr * g_b * g_share, source, rule))
        out["optimizer"].append(Term(term.path, term.expr * o_b * o_share, source, rule))
    if layout.state_accounting == "deepspeed" and layout.zero == 3:
        if largest is None:
            raise SymcalcError("state-accounting", "DeepSpeed's ZeRO-3 estimate needs the "
                                                   "largest layer")
        out["working_set"] = [Term("largest_layer", 4 * largest, "deepspeed_estimate", "whole")]
    return {k: [x for x in xs if x.expr != 0] for k, xs in out.items()}


def weights_bytes(params: list[Term], opts: Options, layout: Layout, spec: Spec) -> list[Term]:
    """Weights of the rank's parameters at --dtype (a quantized format per leaf, as
    :mod:`symcalc.algebra.quantized` counts it), ZeRO-3 / FSDP sharding them over the
    data-parallel group."""
    from . import quantized

    zs = zero_switches(layout)
    fmt = quantized.parse(opts.dtype)
    out = []
    for term in params:
        if fmt is not None:
            per = quantized.total_bytes({term.path: term.expr}, spec, fmt)
        else:
            per = term.expr * memory.dtype_bytes(opts.dtype)
        share = _zero_share("zero_w", is_routed_expert(term.path)).xreplace(zs)
        out.append(Term(term.path, sympy.expand(per * share), term.source, term.rule))
    return out


def largest_layer(spec: Spec, plan: Iterable[PlanEntry] = ()) -> sympy.Expr:
    """Parameters of the largest module (DeepSpeed's ``model_to_params``: the most parameters
    any one module holds directly): one layer's part, or a table or head; the routed experts of
    a layer are one module (transformers' experts interface), and so is each fused module of
    the plan."""
    bd = accounting.params(spec)
    per_layer = accounting.per_layer(spec)
    groups: dict[str, sympy.Expr] = {}
    fused = {}
    for entry in plan:
        for part in entry.parts:
            fused[part] = entry.module
    for prefix, layer in per_layer.items():
        for leaf in layer:
            path = f"layer/{leaf.path}"
            name = "layer/moe/experts" if is_routed_expert(path) else fused.get(path, path)
            groups[f"{prefix}:{name}"] = groups.get(f"{prefix}:{name}", 0) + leaf.value
    for leaf in bd:
        if not leaf.path.startswith("layer/"):
            groups[leaf.path] = leaf.value
    return max_of(*groups.values())


# -- activations, KV cache, recurrent state -------------------------------------------------

def _conventions(spec: Spec, opts: Options) -> dict:
    key = accounting.structure(spec)
    key.update({ALL[n].symbol: sympy.Integer(x) for n, x in convention_switches(spec, opts).items()})
    return key


def rank_activations(spec: Spec, opts: Options, layout: Layout,
                     plan: Iterable[PlanEntry] = (), stage: Stage = "first") -> list[Term]:
    """Activations one rank of the stage keeps for backward: every term of the chosen
    activation model (:func:`symcalc.algebra.activations.kept_terms`, b the microbatch size)
    for the stage's layers, split over t where its region runs split (the experts' over t_e),
    the terms outside the regions split over t too with sequence parallelism (Korthikanti et
    al. 2022, Sec. 4.2); context parallelism holds s/c of the sequence; times the microbatches
    in flight on the stage (:func:`inflight`; the interleaved schedule's chunks hold L/(p v)
    layers each)."""
    layout = layout.checked()
    check(spec, layout)
    if layout.vpp > 1 and spec.dense_layers:
        raise SymcalcError("vpp", "the interleaved schedule's activations of a stack whose "
                                  "layers differ (dense and MoE) are not modelled")
    regions = split_regions(plan_for(layout, plan))
    facts = activations.facts_of(spec, opts.dtype, opts.batch)
    key = _conventions(spec, opts)
    counts = stage_counts(spec, layout, stage)
    sp = layout.sequence_parallel
    chunks = inflight(layout, stage)
    per_chunk = sympy.Integer(1)
    if layout.vpp > 1:  # counts hold the stage's L/p layers: one chunk is 1/v of them
        per_chunk = 1 / v
    out = []
    for stack, term, bytes_ in activations.kept_terms(opts.activations, facts, spec.shape,
                                                      recompute=opts.recompute):
        value = accounting.put(sympy.sympify(bytes_), key)
        if value == 0:
            continue
        region = term.name.split("/", 1)[0]
        expert = term.name.startswith("moe/experts/")
        if term.split and regions.get(region, False):
            div, rule = (t_e if expert else t), "tp"
        elif sp and layout.tp > 1:
            div, rule = t, "sp"
        else:
            div, rule = 1, "whole"
        value = value.xreplace(counts) if counts else value
        if layout.cp > 1:
            value = value.xreplace({s: s / c, s_dec: s_dec / c})
            rule += "+cp"
        if layout.pp > 1:
            rule += "+inflight"
        out.append(Term(f"{stack}/{term.name}", sympy.expand(value * chunks * per_chunk / div),
                        term.source, rule))
    return out


def kv_heads_per_rank(layout: Layout, plan: Iterable[PlanEntry] = ()) -> sympy.Expr:
    """Key/value heads one rank caches: ceil(n_kv / t) where the plan splits the keys (t
    dividing n_kv, or one head replicated on t / n_kv ranks when t exceeds n_kv), else all
    n_kv."""
    if layout.tp == 1 or not split_regions(plan_for(layout, plan))["attention"]:
        return n_kv
    return sympy.ceiling(n_kv / t)


def rank_kv_cache(spec: Spec, opts: Options, layout: Layout, plan: Iterable[PlanEntry] = (),
                  stage: Stage = "first") -> list[Term]:
    """KV cache one rank of the stage holds for b sequences of s tokens: its layers' keys and
    values, heads split by t (:func:`kv_heads_per_rank`); MLA's latent and shared rotary key
    whole on every rank (its expanded keys and values split by heads); context parallelism
    keeps s/c of the tokens."""
    layout = layout.checked()
    check(spec, layout)
    key = _conventions(spec, opts)
    expr = memory.kv_cache_bytes(spec.family, memory.dtype_bytes(opts.kv_dtype, "kv-dtype"))
    expr = accounting.put(sympy.sympify(expr), key)
    split = split_regions(plan_for(layout, plan))["attention"] and layout.tp > 1
    subs = {n_kv: kv_heads_per_rank(layout, plan)}
    if layout.tp > 1 and split:  # the global layers' own key/value heads (Gemma 4)
        subs[n_kvg] = sympy.ceiling(n_kvg / t)
    if split:
        subs[n_h] = sympy.ceiling(n_h / t)  # MLA's expanded cache: rank 0's query heads
    expr = expr.xreplace(subs)
    counts = stage_counts(spec, layout, stage)
    if counts:
        expr = expr.xreplace(counts)
    if layout.cp > 1:
        expr = expr.xreplace({s: s / c, s_dec: s_dec / c})
    rule = "heads" if split else "whole"
    return [Term("kv_cache", sympy.expand(expr), "pope2022", rule)] if expr != 0 else []


def rank_recurrent_state(spec: Spec, opts: Options, layout: Layout,
                         stage: Stage = "first") -> list[Term]:
    """Recurrent state of the linear-attention, SSM and short-convolution layers: whole on
    every tensor-parallel rank (no ``base_model_tp_plan`` leaves those mixers split: they are
    outside the plan or their projections gather their outputs)."""
    layout = layout.checked()
    check(spec, layout)
    key = _conventions(spec, opts)
    expr = memory.recurrent_state_bytes(spec.family,
                                        memory.dtype_bytes(opts.kv_dtype, "kv-dtype"),
                                        memory.dtype_bytes(opts.state_dtype, "state-dtype"))
    expr = accounting.put(sympy.sympify(expr), key)
    return [Term("recurrent_state", expr, "hf_transformers", "whole")] if expr != 0 else []


# -- the whole rank ---------------------------------------------------------------------------

@dataclass(frozen=True)
class RankMemory:
    """Every per-rank quantity of one stage, as terms (sum each with :func:`total`)."""

    stage: Stage
    params: list[Term]
    weights: list[Term]  # at --dtype (what serving holds)
    training_weights: list[Term]  # at the optimizer's (accounting's) bytes per parameter
    gradients: list[Term]
    optimizer: list[Term]
    working_set: list[Term]
    activations: list[Term]
    kv_cache: list[Term]
    recurrent_state: list[Term]

    def model_states(self) -> sympy.Expr:
        """Training weights, gradients, optimizer state and a ZeRO-3 working set."""
        return total(self.training_weights + self.gradients + self.optimizer + self.working_set)

    def training_peak(self) -> sympy.Expr:
        """Model states and activations."""
        return self.model_states() + total(self.activations)

    def serving_peak(self) -> sympy.Expr:
        """Weights, KV cache and recurrent state."""
        return total(self.weights + self.kv_cache + self.recurrent_state)


def rank_memory(spec: Spec, opts: Options, layout: Layout, plan: Iterable[PlanEntry] = (),
                stage: Stage = "first") -> RankMemory:
    layout = layout.checked()
    the_plan = plan_for(layout, plan)
    params = rank_params(spec, layout, plan, stage)
    largest = largest_layer(spec, the_plan) if layout.state_accounting == "deepspeed" else None
    states = model_states(params, opts, layout, largest)
    return RankMemory(stage, params, weights_bytes(params, opts, layout, spec),
                      states["weights"], states["gradients"], states["optimizer"],
                      states.get("working_set", []),
                      rank_activations(spec, opts, layout, plan, stage),
                      rank_kv_cache(spec, opts, layout, plan, stage),
                      rank_recurrent_state(spec, opts, layout, stage))


# -- checks -----------------------------------------------------------------------------------

def check(spec: Spec, layout: Layout) -> None:
    """:func:`symcalc.algebra.layout.check_spec` (the refusals, without sympy)."""
    check_spec(spec, layout)


def tp_forward_problems(spec: Spec, layout: Layout, plan: Iterable[PlanEntry] = ()) -> list[str]:
    """:func:`symcalc.algebra.layout.forward_problems` under the plan."""
    return forward_problems(spec, layout, split_regions(plan_for(layout, plan))["attention"])


def assume_divisible(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with every ceiling and floor of a quotient dropped: its closed form when the
    layout's degrees divide the widths they split (the form a derivation shows beside the
    exact one)."""
    return expr.replace(lambda x: isinstance(x, (sympy.ceiling, sympy.floor)),
                        lambda x: x.args[0])


def stage_memories(spec: Spec, opts: Options, layout: Layout, plan: Iterable[PlanEntry] = ()
                   ) -> list[tuple[Stage, RankMemory]]:
    """The per-rank memory of every kind of stage: the first, the middle ones as one
    expression of :data:`i_p` (1 <= i_p <= p - 2), the last (just one with p = 1)."""
    if layout.pp == 1:
        return [("first", rank_memory(spec, opts, layout, plan, "first"))]
    out = [("first", rank_memory(spec, opts, layout, plan, "first"))]
    if layout.pp > 2:
        out.append((i_p, rank_memory(spec, opts, layout, plan, i_p)))
    out.append(("last", rank_memory(spec, opts, layout, plan, "last")))
    return out


def most_loaded(spec: Spec, opts: Options, layout: Layout, plan: Iterable[PlanEntry],
                values: dict, serving: bool = False) -> tuple[int, RankMemory, sympy.Expr]:
    """(stage index, its memory, its peak) of the stage whose rank needs the most memory,
    ``values`` substituting every size and layout symbol: the training peak (model states
    and activations) or, with ``serving``, weights, KV cache and recurrent state. Ties go to
    the earlier stage."""
    best = None
    for stage, mem in stage_memories(spec, opts, layout, plan):
        peak = mem.serving_peak() if serving else mem.training_peak()
        if stage == "first":
            indices = [0]
        elif stage == "last":
            indices = [layout.pp - 1]
        else:
            indices = range(1, layout.pp - 1)
        for i in indices:
            value = sympy.sympify(peak).xreplace({**values, i_p: sympy.Integer(i)})
            if best is None or value > best[2]:
                best = (i, mem, value)
    return best

"""Memory per rank and communication per rank of a parallel layout, as sympy expressions.

A layout (:class:`symcalc.algebra.layout.Layout`) splits the model over tensor (t), pipeline
(p, v chunks, m microbatches), expert (e, t_e), context (c) and data (N_d) parallel ranks.
Every function here returns **terms**: a named piece of one quantity on one rank (a slash path,
the expression in the canonical symbols, the key of its source, and the rule that divided it),
so that a per-rank figure is the sum of its terms and each term can be shown, derived or
evaluated on its own. Nothing here formats anything.

Which rank: the most-loaded one. Along t that is tensor-parallel rank 0 (``torch.chunk`` gives
the first ranks ceil(n/t) rows where t does not divide n); along e expert-parallel rank 0 (it
holds ceil(E/e) experts); along p every stage is built (``stage`` = ``"first"``, ``"last"``,
an index, or :data:`symbols.i_p` for the middle stages) and the caller evaluates them all
(:func:`stage_indices`). The first stage holds the embeddings and the most microbatches in
flight, the last the final norm and the head.

Two named conventions for what tensor parallelism splits (``Layout.tp_plan``):

* ``hf`` -- the family's ``base_model_tp_plan`` (data: ``[tp_plan]`` of its family file, passed
  in as :class:`PlanEntry` rows) as PyTorch's ``parallelize_module`` applies it: colwise
  modules split their output rows and bias, rowwise their input columns (bias whole), an
  embedding_rowwise table its vocabulary rows, everything outside the plan whole; uneven widths
  as ``torch.chunk`` splits them (rank 0: ceil(n/t)); layers over stages as transformers'
  pipeline splits them (the first L mod p stages one more);
* ``megatron`` -- Megatron-LM's layer: fused q/k/v and the MLP's first matrix column-parallel,
  the output projections row-parallel, norms and routers whole, the embedding and the head
  vocabulary-parallel over a vocabulary padded to a multiple of 128 t, the layers split evenly.

Sources: ``torch_tp``, ``hf_tp_plan``, ``shoeybi2019``, ``megatron_lm``, ``narayanan2021pp``,
``korthikanti2022sp``, ``rajbhandari2020``/``rajbhandari2020comm``, ``deepspeed_estimate``,
``lepikhin2021``, ``liu2023ring``, ``jacobs2023``, ``thakur2005``
(:mod:`symcalc.derivations.sources`; docs/conventions.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Union

import sympy

from ..errors import SymcalcError
from . import accounting, activations, memory
from . import components as comp
from .breakdown import Breakdown, Leaf
from .layout import Layout
from .options import Options, convention_switches
from .spec import Spec
from .symbols import (ALL, SWITCHES, E, E_s, L, L_dec, L_dense, N_d, V, b, c, d, d_ff, d_ff_sum, d_h,
                      d_nope, d_rope, d_v, e, i_p, k, m, n_h, n_kv, n_lv, d_lv, p, r_kv, r_q,
                      s, s_dec, t, t_e, v)

Stage = Union[str, int, sympy.Expr]

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


# -- the tensor-parallel plan -------------------------------------------------------------

@dataclass(frozen=True)
class PlanEntry:
    """One entry of a tensor-parallel plan: a module (transformers' name pattern, or
    Megatron-LM's), its style, and the symcalc parts it holds (breakdown paths such as
    ``layer/attention/q``; a fused module lists each part it fuses). ``transposed``: the
    module stores its weight as (input, output) (Llama 4's experts), so the style's dimension
    names the other width. ``per_expert``: the module's output holds every token once per
    expert (Llama 4's experts run all E on every token), so its collectives carry E times the
    tokens."""

    module: str
    style: str
    parts: tuple[str, ...]
    transposed: bool = False
    per_expert: bool = False


@dataclass(frozen=True)
class Style:
    """What a tensor-parallel style does: which width of its parameters it splits (``out``:
    the output rows, ``in``: the input columns, ``""``: none), and the collectives of one
    forward and one backward of the module, each ``(kind, tensor)`` with kind
    ``all_reduce``/``all_gather`` and tensor ``output``, ``input``, ``weight_grad`` (the
    parameters' gradient), ``rope`` (MLA's shared rotary key) or ``routing`` (the top-k
    weights). ``hooks``: the style runs on a module (its collectives happen); a style given to
    a parameter only shards it."""

    split: str
    forward: tuple[tuple[str, str], ...]
    backward: tuple[tuple[str, str], ...]
    meaning: str
    hooks: bool = True


STYLES: dict[str, Style] = {
    "colwise": Style("out", (), (("all_reduce", "input"),),
                     "output rows split (weight and bias), input replicated, output left split"),
    "colwise_gather_output": Style(
        "out", (("all_gather", "output"),), (("all_reduce", "input"),),
        "output rows split, the output gathered whole on every rank"),
    "rowwise": Style("in", (("all_reduce", "output"),), (),
                     "input columns split (bias whole), the partial outputs all-reduced"),
    "rowwise_split_input": Style(
        "in", (("all_reduce", "output"),), (("all_gather", "input"),),
        "input columns split from a whole input, the partial outputs all-reduced"),
    "packed_colwise": Style("out", (), (("all_reduce", "input"),),
                            "fused gate/up rows split gate by gate and up by up"),
    "packed_rowwise": Style("in", (), (), "fused gate/up columns split gate by gate and up by up"),
    "embedding_rowwise": Style("in", (("all_reduce", "output"),), (),
                               "vocabulary rows split, the partial lookups all-reduced"),
    "replicated_with_grad_allreduce": Style(
        "", (), (("all_reduce", "weight_grad"),),
        "whole on every rank, its gradient all-reduced (it sees only this rank's heads)"),
    "mla_kv_a_proj": Style("", (), (("all_reduce", "rope"),),
                           "whole; the gradient of the shared rotary key all-reduced"),
    "moe_tp_experts": Style("", (("all_reduce", "output"),),
                            (("all_reduce", "input"), ("all_reduce", "routing")),
                            "every rank runs its slice of every expert; outputs all-reduced"),
    # Megatron-LM's vocabulary-parallel output layer: rows of the padded vocabulary split,
    # the logits left split for the vocabulary-parallel cross entropy
    "vocab_colwise": Style("out", (), (("all_reduce", "input"),),
                           "vocabulary rows of the head split, logits left split"),
}


@dataclass(frozen=True)
class Linear:
    """How a layer part is built, for splitting it: ``copies`` matrices (E routed experts)
    of ``n_in`` x ``n_out`` plus ``bias`` elements (a colwise split takes its share of them, a
    rowwise split keeps them whole) plus ``extra`` elements that belong to no projection
    (kept whole). The part's parameters are copies (n_in n_out + bias) + extra."""

    n_in: sympy.Expr
    n_out: sympy.Expr
    bias: sympy.Expr = sympy.Integer(0)
    copies: sympy.Expr = sympy.Integer(1)
    extra: sympy.Expr = sympy.Integer(0)


def linears() -> dict[str, Linear]:
    """Every part a plan may split (breakdown paths), as :class:`Linear` built from the
    component widths of :mod:`symcalc.algebra.components` (``layer/`` parts are per layer;
    their breakdown values are these times the layers holding them)."""
    mla, std = _sw("mla"), 1 - _sw("mla")
    q_out = std * n_h * d_h + mla * n_h * (d_nope + d_rope)
    ffn_b = _sw("ffn_bias")
    w_e, w_s = comp.expert_width(), E_s * comp.shared_width()
    width = comp.embedding_width()
    lin_o = {
        "attention/q": Linear(d, q_out, _sw("bias_q") * q_out),
        "attention/q_gate": Linear(d, n_h * d_h, _sw("bias_q") * n_h * d_h),
        "attention/q_a": Linear(d, r_q, _sw("bias_q") * r_q),
        "attention/q_b": Linear(r_q, n_h * (d_nope + d_rope)),
        "attention/k": Linear(d, n_kv * d_h, _sw("bias_k") * n_kv * d_h),
        "attention/v": Linear(d, n_kv * d_h, _sw("bias_v") * n_kv * d_h),
        "attention/kv_a": Linear(d, r_kv + d_rope, _sw("bias_k") * (r_kv + d_rope)),
        "attention/kv_b": Linear(r_kv, n_h * (d_nope + d_v)),
        "attention/o": Linear(n_h * comp.value_width(), d, _sw("bias_o") * d),
        "ffn/gate": Linear(d, d_ff, ffn_b * d_ff),
        "ffn/up": Linear(d, d_ff, ffn_b * d_ff),
        "ffn/down": Linear(d_ff, d, ffn_b * d),
        "moe/experts/gate": Linear(d, w_e, copies=E),
        "moe/experts/up": Linear(d, w_e, copies=E),
        "moe/experts/down": Linear(w_e, d, copies=E),
        "moe/shared/gate": Linear(d, w_s, ffn_b * w_s),
        "moe/shared/up": Linear(d, w_s, ffn_b * w_s),
        "moe/shared/down": Linear(w_s, d, ffn_b * E_s * d),
        # Gated DeltaNet (Qwen3-Next, Qwen3.5): fused in_proj_qkvz / in_proj_ba, out_proj
        "linear_attention/qkv": Linear(d, comp.linear_qkv_width()),
        "linear_attention/output_gate": Linear(d, n_lv * d_lv),
        "linear_attention/beta": Linear(d, n_lv),
        "linear_attention/decay": Linear(d, n_lv, extra=2 * n_lv),
        "linear_attention/o": Linear(n_lv * d_lv, d),
    }
    out = {f"layer/{k}": x for k, x in lin_o.items()}
    out["embedding/token"] = Linear(V, width)  # V rows of the table: its "input" width
    out["head/weight"] = Linear(width, V)
    out["head/bias"] = Linear(0, V, V)
    return out


# Parts Megatron-LM's layer splits, and how (megatron/core/transformer: linear_qkv and
# linear_fc1 column-parallel, linear_proj and linear_fc2 row-parallel; MLA's down projections
# whole, its up projections column-parallel)
MEGATRON_MODULES = (
    ("linear_qkv", "colwise", ("layer/attention/q", "layer/attention/q_gate",
                               "layer/attention/k", "layer/attention/v")),
    ("linear_q_up_proj", "colwise", ("layer/attention/q_b",)),
    ("linear_kv_up_proj", "colwise", ("layer/attention/kv_b",)),
    ("linear_proj", "rowwise", ("layer/attention/o",)),
    ("linear_fc1", "colwise", ("layer/ffn/gate", "layer/ffn/up")),
    ("linear_fc2", "rowwise", ("layer/ffn/down",)),
    ("experts.linear_fc1", "colwise", ("layer/moe/experts/gate", "layer/moe/experts/up")),
    ("experts.linear_fc2", "rowwise", ("layer/moe/experts/down",)),
    ("shared_experts.linear_fc1", "colwise", ("layer/moe/shared/gate", "layer/moe/shared/up")),
    ("shared_experts.linear_fc2", "rowwise", ("layer/moe/shared/down",)),
    ("word_embeddings", "embedding_rowwise", ("embedding/token",)),
    ("output_layer", "vocab_colwise", ("head/weight",)),
    ("output_layer.bias", "vocab_colwise", ("head/bias",)),
)


def megatron_plan() -> tuple[PlanEntry, ...]:
    return tuple(PlanEntry(mod, style, parts) for mod, style, parts in MEGATRON_MODULES)


def plan_for(layout: Layout, hf_plan: Optional[Iterable[PlanEntry]]) -> tuple[PlanEntry, ...]:
    """The plan the layout's convention uses: Megatron-LM's, or the family's (none: every
    part whole, as a family without a ``base_model_tp_plan`` runs)."""
    if layout.tp_plan == "megatron":
        return megatron_plan()
    return tuple(hf_plan or ())


def is_routed_expert(path: str) -> bool:
    return path.startswith("layer/moe/experts/")


def part_styles(plan: Iterable[PlanEntry]) -> dict[str, tuple[PlanEntry, Style]]:
    """part -> (entry, style) of the entry that splits its parameters (styles that split
    nothing are left out; a part split by two entries is refused)."""
    out: dict[str, tuple[PlanEntry, Style]] = {}
    for entry in plan:
        style = STYLES.get(entry.style)
        if style is None:
            raise SymcalcError("tp-plan", f"{entry.module}: style must be one of "
                                          f"{', '.join(STYLES)} (got {entry.style!r})")
        if not style.split:
            continue
        for part in entry.parts:
            if part in out:
                raise SymcalcError("tp-plan", f"{part} is split by {out[part][0].module} and "
                                              f"{entry.module}")
            out[part] = (entry, style)
    return out


# -- layers over pipeline stages ------------------------------------------------------------

def stage_index(stage: Stage):
    """The stage's index: 0 for ``first``, p - 1 for ``last``, else as given (an int or
    :data:`i_p`)."""
    if stage == "first":
        return sympy.Integer(0)
    if stage == "last":
        return p - 1
    return sympy.sympify(stage)


def stage_flags(stage: Stage, layout: Layout) -> tuple[int, int]:
    """(first, last): whether the stage holds the embeddings / the head (both with p = 1)."""
    if layout.pp == 1:
        return 1, 1
    if stage == "first" or stage == 0:
        return 1, 0
    if stage == "last" or stage == layout.pp - 1:
        return 0, 1
    return 0, 0


def stage_indices(layout: Layout) -> list[Stage]:
    """Every stage to evaluate for the most-loaded one: ``first``, the middle ones by index,
    ``last``."""
    if layout.pp == 1:
        return ["first"]
    return ["first", *range(1, layout.pp - 1), "last"]


def layers_on_stage(layout: Layout, stage: Stage) -> tuple[sympy.Expr, sympy.Expr]:
    """(layers the stage holds, index of its first layer). ``hf``: transformers' split, the
    first L mod p stages one layer more (floor((L + p - 1 - i) / p)); ``megatron``: L/p each.
    The interleaved schedule holds v chunks of L/(p v) layers (Megatron-LM's split; both
    conventions), the first index is then that of its first chunk."""
    i = stage_index(stage)
    if layout.tp_plan == "megatron" or layout.vpp > 1:
        return L / p, i * L / (p * v)
    if stage == "first":
        return sympy.ceiling(L / p), sympy.Integer(0)
    n = sympy.floor((L + p - 1 - i) / p)
    return n, i * sympy.floor(L / p) + sympy.Min(i, sympy.Mod(L, p))


def dense_on_stage(layout: Layout, stage: Stage) -> sympy.Expr:
    """Dense-FFN layers of an MoE stack on the stage, the dense layers leading the stack
    (DeepSeek's first_k_dense_replace): those of its layers before L_dense."""
    n, start = layers_on_stage(layout, stage)
    if layout.vpp > 1:  # chunks j p + i, each L/(p v) layers
        i, chunk = stage_index(stage), L / (p * v)
        return sympy.Add(*[sympy.Min(sympy.Max(L_dense - (j * p + i) * chunk, 0), chunk)
                           for j in range(layout.vpp)])
    return sympy.Min(sympy.Max(L_dense - start, 0), n)


def stage_counts(spec: Spec, layout: Layout, stage: Stage) -> dict[sympy.Symbol, sympy.Expr]:
    """The layer counts of the stage, to substitute for the model's (L, L_dense), after the
    spec's structure. Stacks whose layer groups are not given by their counts alone (hybrid
    mixers, sliding and global layers, KV sharing, an encoder-decoder) are refused with more
    than one stage: their order is not in the spec."""
    if layout.pp == 1:
        return {}
    why = None
    if spec.shape != "single":
        why = "an encoder-decoder model"
    elif spec.hybrid or spec.L_ffn is not None:
        why = "a hybrid stack (its mixers' order is not in the spec)"
    elif spec.L_local is not None:
        why = "a stack of sliding and global layers (their order is not in the spec)"
    elif spec.kv_shared_layers:
        why = "a stack with KV-sharing layers"
    if why:
        raise SymcalcError("pp", f"pipeline stages of {why} are not modelled")
    n, _ = layers_on_stage(layout, stage)
    out = {L: n}
    if spec.dense_layers:
        out[L_dense] = dense_on_stage(layout, stage)
    return out


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
    lo = sympy.Max(start, rank * chunk)
    hi = sympy.Min(start + n, (rank + 1) * chunk)
    return sympy.Max(0, hi - lo)


def _quotient(a, b_) -> sympy.Expr:
    """a / b as a polynomial (a part whose parameters are not a multiple of its split width
    means the plan names a part it cannot split)."""
    num, den = sympy.fraction(sympy.cancel(sympy.expand(a) / sympy.expand(b_)))
    if den != 1:
        raise SymcalcError("tp-plan", f"a part of {sympy.expand(a)} parameters does not split "
                                      f"along {b_}")
    return sympy.expand(num)


def _fixed(expr, key: dict):
    return sympy.expand(sympy.sympify(expr).xreplace(key))


def sharded_params(spec: Spec, layout: Layout, plan: Iterable[PlanEntry],
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
        forms = [_linear_form(shapes, x, key) for x in fused]
        summed = key.get(_sw("ff_sum")) == 1 and all(x.startswith("layer/ffn/") for x in fused)
        if summed:
            # FFN widths that differ by layer (Gemma 3n): the spec holds only their sum, so
            # the stack is one module of width d_ff_sum, split evenly (t dividing each width)
            forms = [Linear(*(sympy.sympify(getattr(f, n)).xreplace({d_ff: d_ff_sum})
                              for n in ("n_in", "n_out", "bias", "copies", "extra")))
                     for f in forms]
        widths = [getattr(f, "n_out" if split == "out" else "n_in") for f in forms]
        vocab = entry.style in ("embedding_rowwise", "vocab_colwise") \
            and layout.tp_plan == "megatron"
        # Megatron-LM interleaves a fused module's parts so that each rank holds its share of
        # each; a packed style splits each part on its own; torch.chunk gives rank 0 the first
        # ceil(W/t) rows of a fused weight, part by part in order
        literal = len(fused) > 1 and layout.tp_plan == "hf" and not entry.style.startswith("packed")
        chunk = sympy.ceiling(sympy.Add(*widths) / degree) if literal else None
        offset = sympy.Integer(0)
        for x, f, width in zip(fused, forms, widths):
            # the part over all the layers holding it: that count times one module
            one = f.copies * (f.n_in * f.n_out + f.bias) + f.extra
            count = _quotient(values[x], one)
            if literal:
                share = _rows(width, chunk, tp_rank, offset)
                offset = offset + width
            elif summed:
                share = width / degree
            else:
                share = _split(width, degree, layout, vocab=vocab, rank=tp_rank)
            if split == "out":
                per = f.copies * (f.n_in + _quotient(f.bias, f.n_out)) * share + f.extra
            else:
                per = f.copies * (share * f.n_out + f.bias) + f.extra
            expr = count * per * experts_share
            rule = f"{entry.style}{'+experts' if expert else ''}"
            out.append(Term(x, sympy.expand(expr), leaf.source if x == leaf.path else
                            _source_of(bd, x), rule))
            done.add(x)
    return out


def _source_of(bd: Breakdown, path: str) -> str:
    return next(l.source for l in bd if l.path == path)


def _linear_form(shapes: dict[str, Linear], path: str, key: dict) -> Linear:
    if path not in shapes:
        raise SymcalcError("tp-plan", f"{path} is not a part a plan can split (splittable: "
                                      f"{', '.join(sorted(shapes))})")
    f = shapes[path]
    return Linear(*(_fixed(getattr(f, n), key) for n in ("n_in", "n_out", "bias", "copies",
                                                          "extra")))


FIRST_STAGE = ("embedding/", "embedding_norm", "per_layer_input/", "altup/projections",
               "relative_bias")
LAST_STAGE = ("final_norm", "head/", "pooler", "mlm_head", "altup/unembed_projections")


def _holder(path: str) -> str:
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
        holder = _holder(term.path)
        if holder == "layers":
            expr = sympy.expand(term.expr.xreplace(counts)) if counts else term.expr
            rule = term.rule if layout.pp == 1 else f"{term.rule}+layers"
            out.append(Term(term.path, expr, term.source, rule))
        elif (holder == "first" and first) or (holder == "last" and last):
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
    return sympy.Max(*groups.values())


# -- activations, KV cache, recurrent state -------------------------------------------------

ACTIVATION_REGIONS = {
    # region of a saved term (the first part of its name) -> parts whose split makes its split
    # terms split (the region's first projections run column-parallel with their outputs left
    # split)
    "attention": ("layer/attention/q", "layer/attention/q_b", "layer/attention/k"),
    "ffn": ("layer/ffn/up",),
    "moe": ("layer/moe/experts/up", "layer/moe/shared/up"),
    "linear_attention": ("layer/linear_attention/qkv",),
}
LOCAL_OUTPUT = ("colwise", "packed_colwise", "packed_rowwise")


def split_regions(plan: Iterable[PlanEntry]) -> dict[str, bool]:
    """Which regions of a layer run split over t under the plan: those whose first
    projection is column-parallel with its output left split (a gathered output, or no entry,
    leaves the region whole on every rank)."""
    styles = part_styles(plan)
    out = {}
    for region, parts in ACTIVATION_REGIONS.items():
        out[region] = any(x in styles and styles[x][0].style in LOCAL_OUTPUT for x in parts)
    return out


def inflight(layout: Layout, stage: Stage) -> sympy.Expr:
    """Microbatches (1F1B) or model chunks (interleaved) whose activations stage i holds at
    once: min(p - i, m) under 1F1B (PipeDream-Flush: p - i - 1 warm-up forwards and the one in
    its steady state); interleaved, min(2 (p - i - 1) + (v - 1) p + 1, m v) chunks of L/(p v)
    layers (Megatron-LM's schedule with microbatch groups of p)."""
    i = stage_index(stage)
    if layout.pp == 1:
        return sympy.Integer(1)
    if layout.vpp > 1:
        return sympy.Min(2 * (p - i - 1) + (v - 1) * p + 1, m * v)
    return sympy.Min(p - i, m)


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
        value = sympy.expand(sympy.sympify(bytes_).xreplace(key))
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
    expr = sympy.expand(sympy.sympify(expr).xreplace(key))
    split = split_regions(plan_for(layout, plan))["attention"] and layout.tp > 1
    subs = {n_kv: kv_heads_per_rank(layout, plan)}
    if split:
        subs[n_h] = n_h / t  # MLA's expanded cache: query heads split by t
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
    expr = sympy.expand(sympy.sympify(expr).xreplace(key))
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
    """Refuse what a layout cannot do with the spec, naming the field: Megatron-LM needs t to
    divide the heads, the widths it splits and (with p) the layers; both conventions need e to
    be at most E and p at most L; Megatron's convention models attention/FFN/MoE layers only."""
    if layout.ep > 1 and not spec.moe:
        raise SymcalcError("ep", f"expert parallelism needs an MoE model ({spec.name} has no "
                                 "experts)")
    if layout.ep > 1 and layout.ep > spec.E:
        raise SymcalcError("ep", f"must be at most the experts per layer (E={spec.E}, "
                                 f"ep={layout.ep})")
    if layout.pp > spec.L:
        raise SymcalcError("pp", f"must be at most the layers (L={spec.L}, pp={layout.pp})")
    if layout.tp_plan != "megatron":
        return
    if spec.hybrid or spec.shape != "single" or spec.L_ffn is not None:
        raise SymcalcError("tp-plan", "the megatron convention models decoder stacks of "
                                      "attention, FFN and MoE layers")
    n_kv_ = spec.n_kv or spec.n_h
    rules = [("tp", spec.n_h, layout.tp, "the query heads"),
             ("tp", n_kv_, layout.tp, "the key/value heads"),
             ("tp", spec.d_ff, layout.tp, "the FFN width")]
    if spec.moe:
        rules.append(("ep", spec.E, layout.ep, "the experts"))
        rules.append(("etp", spec.d_moe or spec.d_ff, layout.expert_tp, "the expert width"))
    if layout.pp > 1:
        rules.append(("pp", spec.L, layout.pp * layout.vpp, "the layers (p v)"))
    for field, n, deg, what in rules:
        if n % deg:
            raise SymcalcError(field, f"Megatron-LM needs {deg} to divide {what} ({n})")


def tp_forward_problems(spec: Spec, layout: Layout, plan: Iterable[PlanEntry] = ()) -> list[str]:
    """Why the layout's tensor-parallel forward cannot run (empty when it can): a split
    attention needs t to divide the query and the key/value heads, and q/k norms over all
    heads (Cohere's n_h d_h-wide norms) need every head on each rank. The per-rank
    parameters stand either way (rank 0 holds ceil(n/t) rows)."""
    if layout.tp == 1 or not split_regions(plan_for(layout, plan))["attention"]:
        return []
    out = []
    n_kv_ = spec.n_kv or spec.n_h
    if spec.n_h % layout.tp or (n_kv_ % layout.tp and not spec.mla):
        out.append(f"t must divide the query and the key/value heads (n_h={spec.n_h}, "
                   f"n_kv={n_kv_}, t={layout.tp})")
    if spec.qk_norm == "all_heads":
        out.append("q/k norms over all heads need every head on each rank")
    return out


# -- communication ----------------------------------------------------------------------------

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p")


def wire_factor(kind: str, n) -> sympy.Expr:
    """Bytes each rank sends per byte of payload under the ring algorithms (Thakur et al.
    2005): all-reduce 2(n - 1)/n, reduce-scatter, all-gather and all-to-all (n - 1)/n (the
    payload being the whole tensor: the all-gather's result, the reduce-scatter's input);
    point-to-point 1."""
    if kind == "all_reduce":
        return 2 * (n - 1) / n
    if kind in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    if kind == "p2p":
        return sympy.Integer(1)
    raise ValueError(kind)


@dataclass(frozen=True)
class Comm:
    """Collectives of one kind that one rank joins: ``path`` names them
    (``tp/forward/all_reduce/layers.*.self_attn.o_proj``), ``count`` how many, ``payload`` the
    bytes of each (the whole tensor), ``group`` the ranks taking part, ``phase`` ``forward``
    (one microbatch), ``backward`` (one microbatch), ``step`` (once per step) or ``decode``
    (one generated token)."""

    path: str
    kind: str
    phase: str
    count: sympy.Expr
    payload: sympy.Expr
    group: sympy.Expr
    source: str

    @property
    def bytes(self) -> sympy.Expr:
        """Payload bytes of all of them."""
        return self.count * self.payload

    @property
    def wire(self) -> sympy.Expr:
        """Bytes this rank sends for them (:func:`wire_factor`)."""
        return self.bytes * wire_factor(self.kind, self.group)


def _act_bytes(opts: Options) -> sympy.Expr:
    """Bytes of one activation value on the wire: the model's compute dtype (16 bits for a
    quantized weight format)."""
    from . import quantized

    if quantized.parse(opts.dtype) is not None:
        return sympy.Integer(2)
    return memory.dtype_bytes(opts.dtype)


def _module_layers(spec: Spec, entry: PlanEntry, counts: dict, present: set) -> sympy.Expr:
    """How many layers of the stage hold the module (that of its first present part), or 1
    for a model-level module; 0 when none of its parts is present."""
    if entry.parts and not entry.parts[0].startswith("layer/"):
        return sympy.Integer(1)
    parts = [x for x in entry.parts if x in present]
    if not parts:
        return sympy.Integer(0)
    part = parts[0]
    key = dict(accounting.structure_key(spec))
    n = sympy.sympify(accounting.group_count(part[len("layer/"):], L, hybrid=True)).xreplace(key)
    return sympy.expand(n.xreplace(counts)) if counts else sympy.expand(n)


def tp_comm(spec: Spec, opts: Options, layout: Layout, plan: Iterable[PlanEntry] = (),
            stage: Stage = "first", tokens=None) -> list[Comm]:
    """Tensor-parallel collectives of one microbatch (``tokens`` = b s / c per rank) on the
    stage, module by module of the plan: each style's forward and backward collectives
    (:data:`STYLES`) of its output, input or gradient, times the layers holding the module.
    With sequence parallelism (Korthikanti et al. 2022) each all-reduce of an activation is a
    reduce-scatter and an all-gather of the same payload. A module that exists only as a
    parameter entry (transformers' routed experts) has no collectives of its own. Megatron's
    vocabulary-parallel cross entropy all-reduces three fp32 values per token (the maximum
    logit, the sum of exponentials, the target logit)."""
    if layout.tp == 1:
        return []
    layout = layout.checked()
    the_plan = plan_for(layout, plan)
    bd = accounting.params(spec)
    present = {leaf.path for leaf in bd}
    counts = stage_counts(spec, layout, stage)
    first, last = stage_flags(stage, layout)
    key = dict(accounting.structure_key(spec))
    shapes = linears()
    tokens = b * s / c if tokens is None else tokens
    A = _act_bytes(opts)
    src = "megatron_lm" if layout.tp_plan == "megatron" else "torch_tp"
    out: list[Comm] = []
    for entry in the_plan:
        style = STYLES[entry.style]
        parts = [x for x in entry.parts if x in present]
        if entry.style == "moe_tp_experts":
            parts = [x for x in present if is_routed_expert(x)][:1]
        if entry.style == "vocab_colwise" and entry.parts == ("head/weight",) \
                and spec.head == "tied":
            parts = ["head/weight"]  # the output layer runs on the shared table
        if not parts:
            continue
        holder = _holder(parts[0])
        if (holder == "first" and not first) or (holder == "last" and not last):
            continue
        if all(is_routed_expert(x) for x in parts) and layout.tp_plan == "hf" \
                and entry.style != "moe_tp_experts":
            continue  # a parameter entry: transformers runs the experts module's hooks
        n_layers = _module_layers(spec, PlanEntry(entry.module, entry.style, tuple(parts)),
                                  counts, present)
        if n_layers == 0:
            continue
        forms = {x: _linear_form(shapes, x, key) for x in parts if x in shapes}
        if "head/bias" in parts:  # no collective of its own: its module's are the weight's
            continue
        width_in = next((f.n_in for f in forms.values()), d)
        width_out = sympy.Add(*[f.n_out for f in forms.values()]) if forms else d
        if entry.style == "moe_tp_experts":
            width_in = width_out = d
        if entry.style == "embedding_rowwise":
            width_in, width_out = sympy.Integer(1), comp.embedding_width().xreplace(key)
        for phase, collectives in (("forward", style.forward), ("backward", style.backward)):
            for kind, tensor in collectives:
                if tensor == "weight_grad":
                    payload = sympy.Add(*[sympy.expand(
                        bd.value(x).xreplace(counts) if counts else bd.value(x)) / n_layers
                        for x in parts]) * A
                elif tensor == "rope":
                    payload = tokens * d_rope * A
                elif tensor == "routing":
                    payload = tokens * k * A
                else:
                    width = width_out if tensor == "output" else width_in
                    payload = tokens * width * A
                if entry.per_expert and tensor in ("output", "input"):
                    payload = payload * E
                path = f"tp/{phase}/{kind}/{entry.module}"
                if layout.sequence_parallel and kind == "all_reduce" and tensor in (
                        "output", "input"):
                    out.append(Comm(path.replace("all_reduce", "reduce_scatter"),
                                    "reduce_scatter", phase, n_layers, sympy.expand(payload), t,
                                    "korthikanti2022sp"))
                    out.append(Comm(path.replace("all_reduce", "all_gather"), "all_gather",
                                    phase, n_layers, sympy.expand(payload), t,
                                    "korthikanti2022sp"))
                else:
                    out.append(Comm(path, kind, phase, n_layers, sympy.expand(payload), t, src))
    if layout.tp_plan == "megatron" and last and spec.head != "none":
        out.append(Comm("tp/forward/all_reduce/vocab_parallel_cross_entropy", "all_reduce",
                        "forward", sympy.Integer(3), tokens * 4, t, "megatron_lm"))
    return [x for x in out if x.count != 0 and x.payload != 0]


def pp_comm(spec: Spec, opts: Options, layout: Layout, stage: Stage = "first",
            tokens=None) -> list[Comm]:
    """Point-to-point traffic of one microbatch on the stage (Narayanan et al. 2021): it sends
    its output activations forward unless it is the last stage and the gradient of its input
    backward unless it is the first, b s d values each (s/c with context parallelism, and
    split over t with sequence parallelism, or Megatron's scatter/gather); the interleaved
    schedule sends once per chunk (v times)."""
    if layout.pp == 1:
        return []
    first, last = stage_flags(stage, layout)
    tokens = b * s / c if tokens is None else tokens
    payload = tokens * d * _act_bytes(opts)
    if layout.sequence_parallel or layout.tp_plan == "megatron":
        payload = payload / t
    chunks = v if layout.vpp > 1 else sympy.Integer(1)
    out = []
    # with v chunks every rank sends on at each chunk boundary but the model's last
    if not last or layout.vpp > 1:
        n = chunks if not last else chunks - 1
        out.append(Comm("pp/forward/send_activations", "p2p", "forward", n, payload, 2,
                        "narayanan2021pp"))
    if not first or layout.vpp > 1:
        n = chunks if not first else chunks - 1
        out.append(Comm("pp/backward/send_gradients", "p2p", "backward", n, payload, 2,
                        "narayanan2021pp"))
    return [x for x in out if x.count != 0]


def dp_comm(params: list[Term], opts: Options, layout: Layout) -> list[Comm]:
    """Data-parallel traffic of one step for the rank's parameters, over each parameter's
    data-parallel group (:func:`dp_group`): without ZeRO one all-reduce of the gradients;
    ZeRO-1 (and Megatron's distributed optimizer) a reduce-scatter of the gradients and an
    all-gather of the updated weights; ZeRO-2 the reduce-scatter at every microbatch (it keeps
    only its shard of the gradients); ZeRO-3 / FSDP also all-gathers the weights before every
    microbatch's forward and again before its backward (Rajbhandari et al. 2020, Sec. 7)."""
    if layout.dp * layout.cp == 1:
        return []
    w_b, g_b, _, _ = state_bytes(opts, layout)
    z = 1 if layout.distributed_optimizer else layout.zero
    out = []
    for expert in (False, True):
        n = sympy.Add(*[x.expr for x in params if is_routed_expert(x.path) == expert])
        if n == 0:
            continue
        group = dp_group(expert)
        tag = "experts" if expert else "dense"
        grads, weights = n * g_b, n * w_b
        if z == 0:
            out.append(Comm(f"dp/step/all_reduce/gradients/{tag}", "all_reduce", "step", 1,
                            grads, group, "rajbhandari2020comm"))
            continue
        out.append(Comm(f"dp/step/reduce_scatter/gradients/{tag}", "reduce_scatter", "step",
                        m if z >= 2 else sympy.Integer(1), grads, group, "rajbhandari2020comm"))
        if z < 3:
            out.append(Comm(f"dp/step/all_gather/weights/{tag}", "all_gather", "step", 1,
                            weights, group, "rajbhandari2020comm"))
        else:
            out.append(Comm(f"dp/step/all_gather/weights/{tag}", "all_gather", "step", 2 * m,
                            weights, group, "rajbhandari2020comm"))
    return out


def _moe_layers(spec: Spec, counts: dict) -> sympy.Expr:
    if not spec.moe:
        return sympy.Integer(0)
    key = dict(accounting.structure_key(spec))
    n = sympy.sympify(accounting.group_count("moe/router", L, hybrid=True)).xreplace(key)
    return sympy.expand(n.xreplace(counts)) if counts else sympy.expand(n)


def ep_comm(spec: Spec, opts: Options, layout: Layout, stage: Stage = "first",
            tokens=None) -> list[Comm]:
    """Expert-parallel all-to-alls of one microbatch on the stage (GShard): per MoE layer one
    dispatch of every token's k copies (tokens k d values) and one combine of as many outputs
    in the forward, the same two in the backward; a rank keeps the share for its own experts
    (the all-to-all's (e - 1)/e on the wire, under uniform routing)."""
    if layout.ep == 1:
        return []
    counts = stage_counts(spec, layout, stage)
    n = _moe_layers(spec, counts)
    tokens = b * s / c if tokens is None else tokens
    if layout.sequence_parallel:
        tokens = tokens / t
    payload = tokens * k * d * _act_bytes(opts)
    out = []
    for phase in ("forward", "backward"):
        for what in ("dispatch", "combine"):
            out.append(Comm(f"ep/{phase}/all_to_all/{what}", "all_to_all", phase, n, payload, e,
                            "lepikhin2021"))
    return [x for x in out if x.count != 0]


def cp_comm(spec: Spec, opts: Options, layout: Layout, plan: Iterable[PlanEntry] = (),
            stage: Stage = "first") -> list[Comm]:
    """Context-parallel traffic of one microbatch on the stage, per attention layer. ``ring``
    (Ring Attention; Megatron-LM's context parallelism): c - 1 passes of the rank's key/value
    block, b (s/c) 2 n_kv d_h values (the heads of its tensor-parallel rank; MLA sends expanded
    keys and values), in the forward; the backward passes them again with their gradients.
    ``ulysses`` (DeepSpeed-Ulysses): all-to-alls of q, k, v and the attention output in the
    forward, four more in the backward."""
    if layout.cp == 1:
        return []
    key = dict(accounting.structure_key(spec))
    counts = stage_counts(spec, layout, stage)
    layers = sympy.sympify(accounting.group_count("attention/q", L, hybrid=True)).xreplace(key)
    layers = sympy.expand(layers.xreplace(counts)) if counts else layers
    A = _act_bytes(opts)
    split = split_regions(plan_for(layout, plan))["attention"] and layout.tp > 1
    heads_kv = kv_heads_per_rank(layout, plan)
    heads_q = n_h / t if split else n_h
    mla = _sw("mla").xreplace(key)
    kv_vals = (1 - mla) * 2 * heads_kv * d_h + mla * heads_q * (d_nope + d_rope + d_v)
    q_vals = (1 - mla) * heads_q * d_h + mla * heads_q * (d_nope + d_rope)
    o_vals = heads_q * _fixed(comp.value_width(), key)
    block = b * s / c
    out = []
    if layout.cp_algorithm == "ring":
        payload = sympy.expand(block * kv_vals * A)
        out.append(Comm("cp/forward/p2p/kv_blocks", "p2p", "forward", layers * (c - 1), payload,
                        c, "liu2023ring"))
        out.append(Comm("cp/backward/p2p/kv_blocks", "p2p", "backward", layers * (c - 1),
                        payload, c, "liu2023ring"))
        out.append(Comm("cp/backward/p2p/kv_gradients", "p2p", "backward", layers * (c - 1),
                        payload, c, "liu2023ring"))
    else:  # each all-to-all's whole tensor: the rank's s/c tokens of every head
        for phase in ("forward", "backward"):
            for name, vals in (("q", q_vals), ("kv", kv_vals), ("output", o_vals)):
                out.append(Comm(f"cp/{phase}/all_to_all/{name}", "all_to_all", phase, layers,
                                sympy.expand(block * vals * A), c, "jacobs2023"))
    return [x for x in out if x.count != 0 and x.payload != 0]


DIMENSIONS = ("tp", "pp", "dp", "ep", "cp")


def communication(spec: Spec, opts: Options, layout: Layout, plan: Iterable[PlanEntry] = (),
                  stage: Stage = "first") -> dict[str, dict[str, list[Comm]]]:
    """Per dimension, the collectives of one training step (``step``: m microbatches' forward
    and backward, and the per-step data-parallel traffic), of one microbatch's forward
    (``forward``), and of one decoded token (``decode``: b sequences, one token each, no
    backward; context parallelism and data parallelism send nothing then)."""
    layout = layout.checked()
    params = rank_params(spec, layout, plan, stage)
    micro = {"tp": tp_comm(spec, opts, layout, plan, stage),
             "pp": pp_comm(spec, opts, layout, stage),
             "dp": [], "ep": ep_comm(spec, opts, layout, stage),
             "cp": cp_comm(spec, opts, layout, plan, stage)}
    decode = {"tp": [x for x in tp_comm(spec, opts, layout, plan, stage, tokens=b)
                     if x.phase == "forward"],
              "pp": [x for x in pp_comm(spec, opts, layout, stage, tokens=b)
                     if x.phase == "forward"],
              "dp": [], "ep": [x for x in ep_comm(spec, opts, layout, stage, tokens=b)
                               if x.phase == "forward"],
              "cp": []}
    steps = dp_comm(params, opts, layout)
    out = {}
    for dim in DIMENSIONS:
        forward = [x for x in micro[dim] if x.phase == "forward"]
        step = [Comm(x.path, x.kind, "step", x.count * m, x.payload, x.group, x.source)
                for x in micro[dim]]
        if dim == "dp":
            step = steps
        out[dim] = {"forward": forward, "step": step, "decode": decode[dim]}
    return out


def comm_bytes(comms: Iterable[Comm], wire: bool = False) -> sympy.Expr:
    """Payload bytes (or bytes on the wire) of collectives."""
    return sympy.Add(*[(x.wire if wire else x.bytes) for x in comms])


def assume_divisible(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with every ceiling and floor of a quotient dropped: its closed form when the
    layout's degrees divide the widths they split (the form a derivation shows beside the
    exact one)."""
    return expr.replace(lambda x: isinstance(x, (sympy.ceiling, sympy.floor)),
                        lambda x: x.args[0])


def plan_entries(rows) -> tuple[PlanEntry, ...]:
    """A family file's ``[tp_plan]`` rows (:func:`symcalc.inputs.family_data.tp_plan`) as
    :class:`PlanEntry`."""
    return tuple(PlanEntry(module, style, tuple(parts), bool(transposed), bool(per_expert))
                 for module, style, parts, transposed, per_expert in rows)


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

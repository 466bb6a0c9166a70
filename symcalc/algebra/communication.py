"""Communication per rank of a parallel layout, as sympy expressions: the collectives of each
dimension (tensor, pipeline, data, expert, context parallelism) for one microbatch's forward
and backward, one training step and one decoded token, each with its payload, the ranks taking
part and its source; bytes on the wire under the ring algorithms (``thakur2005``). Sources:
``torch_tp``, ``shoeybi2019``, ``megatron_lm``, ``korthikanti2022sp``, ``narayanan2021pp``,
``rajbhandari2020comm``, ``lepikhin2021``, ``liu2023ring``, ``jacobs2023``
(docs/conventions.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import sympy

from . import accounting, memory
from . import components as comp
from .layout import Layout
from .options import Options
from .parallel import Term, dp_group, holder, kv_heads_per_rank, rank_params, state_bytes
from .spec import Spec
from .stages import Stage, stage_counts, stage_flags
from .symbols import SWITCHES, E, L, b, c, d, d_h, d_nope, d_rope, d_v, e, k, m, n_h, s, t, v
from .tp_styles import PARAMETERS, distinct_parts
from .tp_plans import (STYLES, PlanEntry, fixed, is_routed_expert, linear_form, linears,
                       plan_for, split_regions)


def _sw(name: str) -> sympy.Symbol:
    return SWITCHES["sw_" + name].symbol


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
    # a module holding alternative parts (LongCat-Flash's MLP: the dense FFN in some layers,
    # the shared expert in the others) runs in the layers of each
    leads = {}
    for x in parts:
        leads.setdefault(x.startswith("layer/moe/shared/"), x)
    key = dict(accounting.structure_key(spec))
    n = sympy.Add(*[sympy.sympify(accounting.group_count(x[len("layer/"):], L, hybrid=True))
                    for x in leads.values()]).xreplace(key)
    return sympy.expand(n.xreplace(counts)) if counts else sympy.expand(n)


def tp_comm(spec: Spec, opts: Options, layout: Layout, plan: Iterable[PlanEntry] = (),
            stage: Stage = "first", tokens=None, loss: bool = True) -> list[Comm]:
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
        if "head/weight" in entry.parts and spec.head == "tied":
            parts = ["head/weight"]  # the output layer runs on the shared (token) table
        parts = [x for x in parts if x != "head/bias"]  # the weight's module: no width of its own
        if not parts:
            continue
        where = holder(parts[0])
        if (where == "first" and not first) or (where == "last" and not last):
            continue
        if all(is_routed_expert(x) for x in parts) and layout.tp_plan == "hf" \
                and entry.style != "moe_tp_experts":
            continue  # a parameter entry: transformers runs the experts module's hooks
        if all(x in PARAMETERS for x in parts):
            continue  # a bare parameter (attention sinks): sharded, no collective
        n_layers = _module_layers(spec, PlanEntry(entry.module, entry.style, tuple(parts)),
                                  counts, present)
        if n_layers == 0:
            continue
        # (one of alternative parts: the module is as wide in the layers of each)
        forms = {x: linear_form(shapes, x, key) for x in distinct_parts(parts) if x in shapes}
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
    if layout.tp_plan == "megatron" and last and spec.head != "none" and loss:
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
        if n == 0 or (expert and layout.dp * layout.cp * layout.tp
                      <= layout.ep * layout.expert_tp):
            continue  # the experts' data-parallel group is one rank: nothing to send
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
    heads_q = sympy.ceiling(n_h / t) if split else n_h
    mla = _sw("mla").xreplace(key)
    kv_vals = (1 - mla) * 2 * heads_kv * d_h + mla * heads_q * (d_nope + d_rope + d_v)
    q_vals = (1 - mla) * heads_q * d_h + mla * heads_q * (d_nope + d_rope)
    o_vals = heads_q * fixed(comp.value_width(), key)
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
    decode = {"tp": [x for x in tp_comm(spec, opts, layout, plan, stage, tokens=b, loss=False)
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

"""Tensor-parallel styles and plans as plain data, and the *plan facts* the term table reads.
No sympy here: the quick path (:mod:`symcalc.fast.quick`) and the page read the same facts.

A plan is a list of rows ``(module, style, parts, transposed, per_expert)`` (a family file's
``[tp_plan]`` and its role's ``[roles.<role>.tp_plan]``, read by
:func:`symcalc.inputs.family_data.tp_plan`, or Megatron-LM's layer, :data:`MEGATRON_MODULES`).
:data:`STYLES` says what each style does. :func:`plan_facts` turns a plan into named 0/1
values, one per part and kind (which width of the part is split, whether its module is fused,
which collectives the module runs); the term table's per-rank and communication rows are
guarded by them (:mod:`symcalc.fast.build_terms`), so that one table serves every plan.
docs/conventions.md states the conventions with their sources (``torch_tp``, ``hf_tp_plan``,
``shoeybi2019``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..errors import SymcalcError

PlanRow = tuple  # (module, style, parts, transposed, per_expert)


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
    # a module whose own parameter entries shard bare parameters (attention sinks): its
    # forward runs on the local shards, no collective of its own
    "local_params": Style("", (), (), "runs its forward on the local shards of its parameters "
                                      "(a bare parameter such as attention sinks is split by its "
                                      "own entry)"),
    # LongCat-Flash's zero-computation experts: the identity's input divided by t on each rank
    # (the experts' all-reduce sums it back): nothing split, no collective of its own
    "moe_identity_expert": Style("", (), (), "the zero-computation experts' input divided by t "
                                             "on each rank; nothing split"),
    # transformers' AllReduceParallel (Inkling's shared experts): the module's partial output
    # all-reduced, nothing of its own split
    "all_reduce": Style("", (("all_reduce", "output"),), (),
                        "nothing split; the module's partial output all-reduced"),
    # transformers' replicate (the base TensorParallelLayer: Inkling 2's embedding): nothing
    # split, no collective
    "replicate": Style("", (), (), "whole on every rank; no collective"),
    "moe_tp_experts": Style("", (("all_reduce", "output"),),
                            (("all_reduce", "input"), ("all_reduce", "routing")),
                            "every rank runs its slice of every expert; outputs all-reduced"),
    # Megatron-LM's vocabulary-parallel output layer: rows of the padded vocabulary split,
    # the logits left split for the vocabulary-parallel cross entropy
    "vocab_colwise": Style("out", (), (("all_reduce", "input"),),
                           "vocabulary rows of the head split, logits left split"),
}

# Parts Megatron-LM's layer splits, and how (megatron/core/transformer: linear_qkv and
# linear_fc1 column-parallel, linear_proj and linear_fc2 row-parallel; MLA's down projections
# whole, its up projections column-parallel), then its vocabulary-parallel embedding and
# output layer
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

# Every part a plan may split (symcalc.algebra.tp_plans.linears builds their shapes; a test
# holds the two equal): a part the plan leaves whole has the fact tpn:<part>
SPLITTABLE = tuple(f"layer/{x}" for x in (
    "attention/q", "attention/q_gate", "attention/q_a", "attention/q_b", "attention/k",
    "attention/v", "attention/kv_a", "attention/kv_b", "attention/o", "attention/sinks",
    "attention/gate_bias",
    "ffn/gate", "ffn/up",
    "ffn/down", "moe/experts/gate", "moe/experts/up", "moe/experts/down", "moe/shared/gate",
    "moe/shared/up", "moe/shared/down", "linear_attention/qkv", "linear_attention/output_gate",
    "linear_attention/beta", "linear_attention/decay", "linear_attention/o")) + (
    "embedding/token", "head/weight", "head/bias")
# Parts that are bare parameters, no module of their own (GraniteSWA's attention sinks, one
# logit per head): an entry naming one shards it and runs no collective (its owner's
# local_params entry runs the attention on the local heads)
PARAMETERS = ("layer/attention/sinks", "layer/attention/gate_bias")
# Parts that are a bias vector of their module's output (no width of their own in a fused
# module: split with the output rows)
BIAS_ONLY = ("head/bias",)
# Parts that hold the vocabulary (Megatron-LM pads it to a multiple of 128 t)
VOCAB_PARTS = ("embedding/token", "head/weight", "head/bias")
# Parts a module may fuse with each other (their output rows concatenated): a fused module of
# transformers' plans is split as one weight by torch.chunk (rank 0 takes the first rows, part
# by part). A plan fusing parts of two groups is refused.
FUSABLE = (
    ("layer/attention/q", "layer/attention/q_gate", "layer/attention/k", "layer/attention/v"),
    ("layer/ffn/gate", "layer/ffn/up"),
    ("layer/moe/shared/gate", "layer/moe/shared/up"),
    ("layer/moe/experts/gate", "layer/moe/experts/up", "layer/moe/experts/down"),
    ("layer/linear_attention/qkv", "layer/linear_attention/output_gate",
     "layer/linear_attention/beta", "layer/linear_attention/decay"),
    ("head/weight", "head/bias"),
)
# The module of transformers' routed experts (its moe_tp_experts forward), a pseudo-part of
# the communication rows
EXPERTS_MODULE = "layer/moe/experts"

# region of a saved activation term (the first part of its name) -> parts whose split makes
# its split terms split (the region's first projections run column-parallel with their
# outputs left split)
ACTIVATION_REGIONS = {
    "attention": ("layer/attention/q", "layer/attention/q_b", "layer/attention/k"),
    "ffn": ("layer/ffn/up",),
    "moe": ("layer/moe/experts/up", "layer/moe/shared/up"),
    "linear_attention": ("layer/linear_attention/qkv",),
}
LOCAL_OUTPUT = ("colwise", "packed_colwise", "packed_rowwise")


def megatron_rows(layer_only: bool = False) -> tuple[PlanRow, ...]:
    """Megatron-LM's plan as plan rows; ``layer_only``: its layer alone (what ``--tp-plan hf``
    splits for a model type without a plan of its own)."""
    return tuple((m, s, p, False, False) for m, s, p in MEGATRON_MODULES
                 if not layer_only or all(x.startswith("layer/") for x in p))


def is_routed_expert(path: str) -> bool:
    return path.startswith("layer/moe/experts/")


def alternative(path: str) -> str:
    """The part a module holds in one model and another part in another: Gemma 4's dense MLP
    is the dense FFN, or with its MoE block the shared expert (one module listing both holds
    whichever the model has: they are not fused)."""
    return path.replace("layer/moe/shared/", "layer/ffn/")


def distinct_parts(parts) -> list[str]:
    """``parts`` with each set of alternatives (:func:`alternative`) kept once."""
    seen, out = set(), []
    for x in parts:
        if alternative(x) not in seen:
            seen.add(alternative(x))
            out.append(x)
    return out


def fusable_group(path: str) -> tuple[str, ...]:
    return next((g for g in FUSABLE if path in g), (path,))


def split_styles(rows: Iterable[PlanRow]) -> dict[str, tuple[PlanRow, Style]]:
    """part -> (row, style) of the entry that splits its parameters (styles that split
    nothing are left out; a part split by two entries, or an unknown style, is refused)."""
    out: dict[str, tuple[PlanRow, Style]] = {}
    for row in rows:
        module, style_name, parts = row[0], row[1], row[2]
        style = STYLES.get(style_name)
        if style is None:
            raise SymcalcError("tp-plan", f"{module}: style must be one of {', '.join(STYLES)} "
                                          f"(got {style_name!r})")
        if not style.split:
            continue
        for part in parts:
            if part in out:
                raise SymcalcError("tp-plan", f"{part} is split by {out[part][0][0]} and {module}")
            out[part] = (row, style)
    return out


def regions(rows: Iterable[PlanRow]) -> dict[str, bool]:
    """Which regions of a layer run split over t under the plan: those whose first projection
    is column-parallel with its output left split (a gathered output, or no entry, leaves the
    region whole on every rank)."""
    styles = split_styles(rows)
    return {region: any(x in styles and styles[x][0][1] in LOCAL_OUTPUT for x in parts)
            for region, parts in ACTIVATION_REGIONS.items()}


def short(path: str) -> str:
    """A part's name in fact names: its path without ``layer/``."""
    return path[len("layer/"):] if path.startswith("layer/") else path


# -- plan facts --------------------------------------------------------------------------------
# Each fact is "<kind>:<part>" (or "<kind>:<part>:<other part>"), 0 or 1:
FACT_KINDS = {
    "tpo": "tensor parallelism splits the output rows of {0}",
    "tpi": "tensor parallelism splits the input columns of {0}",
    "tpl": "{0} is split as part of a fused module (torch.chunk over the module's rows)",
    "tpv": "{0}'s vocabulary rows are split, padded to a multiple of 128 t (Megatron-LM)",
    "tpn": "tensor parallelism leaves {0} whole",
    "tpw": "{0}'s module holds {1} too",
    "tpb": "{1} comes before {0} in their fused module",
    "tfa": "the module led by {0} all-reduces its output in the forward",
    "tfg": "the module led by {0} all-gathers its output in the forward",
    "tba": "the module led by {0} all-reduces its input's gradient in the backward",
    "tbg": "the module led by {0} all-gathers its input's gradient in the backward",
    "tbw": "the gradient of {0} is all-reduced in the backward",
    "tbr": "the module led by {0} all-reduces the shared rotary key's gradient (MLA)",
    "tbk": "the module led by {0} all-reduces the routing weights' gradient",
    "tpe": "the module led by {0} runs every expert on every token (its payloads E times)",
    "tpr": "the {0} region of each layer runs split over t",
    "tce": "Megatron-LM's vocabulary-parallel cross entropy ({0}: three fp32 values per token)",
}


def fact_meaning(name: str) -> str:
    kind, _, rest = name.partition(":")
    return FACT_KINDS[kind].format(*rest.split(":")) if rest else FACT_KINDS[kind]


def _module_facts(out: dict, module: str, style, parts, name: str) -> None:
    """The collective facts of the module led by the part ``name`` (:func:`plan_facts`)."""
    for phase, collectives in (("f", style.forward), ("b", style.backward)):
        for kind, tensor in collectives:
            fact = {("f", "all_reduce", "output"): "tfa", ("f", "all_gather", "output"): "tfg",
                    ("b", "all_reduce", "input"): "tba", ("b", "all_gather", "input"): "tbg",
                    ("b", "all_reduce", "weight_grad"): "tbw",
                    ("b", "all_reduce", "rope"): "tbr",
                    ("b", "all_reduce", "routing"): "tbk"}.get((phase, kind, tensor))
            if fact is None:
                raise SymcalcError("tp-plan", f"{module}: a {kind} of the {tensor} is not "
                                              "modelled")
            if fact == "tbw":
                for x in parts:
                    out[f"tbw:{short(x)}"] = 1
            else:
                out[f"{fact}:{name}"] = 1


def plan_facts(rows: Iterable[PlanRow], convention: str) -> dict[str, int]:
    """The plan's facts (only those that are 1; every other fact the table names is 0):
    per part that the plan splits, how (``tpo``/``tpi`` its output rows or input columns on
    their own, ``tpl`` as part of a fused module whose other parts are ``tpw`` and, before
    it, ``tpb``, ``tpv`` over Megatron-LM's padded vocabulary); per module with collectives,
    which ones its first part leads (``tfa``, ``tfg``, ``tba``, ``tbg``, ``tbw``, ``tbr``,
    ``tbk``, ``tpe``); per region whether it runs split (``tpr``); ``tce`` under Megatron-LM.
    ``convention``: ``hf`` (torch.chunk splits a fused module's rows as one weight) or
    ``megatron`` (each part of a fused module split on its own)."""
    rows = tuple(rows)
    out: dict[str, int] = {}
    split = split_styles(rows)
    for part, (row, style) in split.items():
        module, style_name, parts, transposed = row[0], row[1], row[2], row[3]
        direction = {"in": "out", "out": "in"}[style.split] if transposed else style.split
        widths = [x for x in parts if x not in BIAS_ONLY]
        literal = (convention == "hf" and len(distinct_parts(widths)) > 1 and part not in BIAS_ONLY
                   and not style_name.startswith("packed"))
        vocab = convention == "megatron" and style_name in ("embedding_rowwise", "vocab_colwise")
        name = short(part)
        if vocab:
            out[f"tpv:{name}"] = 1
        elif literal:
            if direction != "out":
                raise SymcalcError("tp-plan", f"{module}: a fused module split along its input "
                                              "columns is not modelled")
            out[f"tpl:{name}"] = 1
            before = True
            for other in widths:
                if other == part:
                    before = False
                elif before:
                    out[f"tpb:{name}:{short(other)}"] = 1
        else:
            out[f"tp{'o' if direction == 'out' else 'i'}:{name}"] = 1
    for row in rows:  # the parts each module fuses with each of its parts
        if row[1] == "moe_tp_experts":
            # the experts module's entry names its three weights for its hooks; it fuses none
            # (a gate_up entry of its own says what gate and up share: Inkling's colwise one
            # counted down's width in the gate and up rows torch.chunk gives each rank)
            continue
        module, parts = row[0], [x for x in row[2] if x not in BIAS_ONLY]
        for part in parts:
            for other in parts:
                if other == part or alternative(other) == alternative(part):
                    continue
                if other not in fusable_group(part):
                    raise SymcalcError("tp-plan", f"{module}: fuses {part} and {other}, which "
                                                  "symcalc does not fuse (tp_styles.FUSABLE)")
                out[f"tpw:{short(part)}:{short(other)}"] = 1
    for row in rows:
        module, style_name, parts, per_expert = row[0], row[1], row[2], row[4]
        style = STYLES[style_name]
        routed = [x for x in parts if is_routed_expert(x)]
        if parts and all(x in PARAMETERS for x in parts):
            continue  # a bare parameter: sharded, no hooks
        if style_name == "moe_tp_experts":
            lead = EXPERTS_MODULE
        elif routed and len(routed) == len(parts) and convention == "hf":
            continue  # a parameter entry: transformers runs the experts module's hooks
        else:
            lead = next((x for x in parts if x not in BIAS_ONLY), None)
            if lead is None:
                continue  # a bias alone: its module's collectives are the weight's
        # a module holding one of alternative parts (Gemma 4's dense MLP or shared expert)
        # is led by whichever the model has
        names = [short(lead)] + [short(x) for x in parts if x != lead
                                 and alternative(x) == alternative(lead)]
        for name in names:
            _module_facts(out, module, style, parts, name)
        if per_expert:
            out[f"tpe:{short(lead)}"] = 1
    for part in SPLITTABLE:
        if part not in split:
            out[f"tpn:{short(part)}"] = 1
    for region, on in regions(rows).items():
        if on:
            out[f"tpr:{region}"] = 1
    if convention == "megatron":
        out["tce:loss"] = 1
    return out

"""The report's ``per_rank`` and ``communication`` blocks (and ``per_stage`` with
``--per-stage``): the layout's figures for the most-loaded rank, from the term table's
per-rank quantities (:mod:`symcalc.fast.build_parallel`) evaluated stage by stage. No sympy
here; :class:`symcalc.report.SympyNumbers` gives the same numbers from
:mod:`symcalc.algebra.parallel` and :mod:`symcalc.algebra.communication` (tests compare them).

Which rank: tensor- and expert-parallel rank 0 (the fullest where a width does not split
evenly), and of the p pipeline stages the one whose training peak (model states and
activations, each rounded up) is largest, the earlier one on a tie (docs/conventions.md).
"""
from __future__ import annotations

import math
from typing import Any

from ..algebra import quantized
from ..algebra.layout import DIMENSIONS, check_spec
from ..algebra.options import Options, seq_len_of

# the per_rank block: report key -> table quantity
RANK_KEYS = {
    "params": "per_rank.params",
    "weights_bytes": "per_rank.weights_bytes",
    "gradients_bytes": "per_rank.gradients_bytes",
    "optimizer_bytes": "per_rank.optimizer_bytes",
    "states_bytes": "per_rank.states_bytes",
    "activations_bytes": "per_rank.activations_bytes",
    "kv_cache_bytes": "per_rank.kv_cache_bytes",
}
COMM_KEYS = ("forward_bytes", "step_bytes", "step_wire_bytes", "decode_bytes_per_token",
             "forward_wire_bytes", "decode_wire_bytes_per_token")
TP_KEYS = ("forward_allreduce_count", "forward_allreduce_bytes")
PEAK = ("per_rank.states_bytes", "per_rank.activations_bytes")


def comm_quantities() -> list[str]:
    out = []
    for dim in DIMENSIONS:
        out += [f"communication.{dim}.{k}" for k in COMM_KEYS]
        if dim == "tp":
            out += [f"communication.tp.{k}" for k in TP_KEYS]
    return out


def most_loaded(src, v: dict[str, Any], pp: int, memo: dict) -> tuple[int, int, list[int]]:
    """(stage, its training peak, every stage's peak): the stage whose rank needs the most
    memory for training, the earlier one on a tie."""
    peaks = []
    for i in range(pp):
        peaks.append(sum(src.stage_number(q, v, i, memo) for q in PEAK))
    best = max(range(pp), key=lambda i: (peaks[i], -i))
    return best, peaks[best], peaks


def stage_block(spec, opts: Options, src, v: dict[str, Any], stage: int, memo: dict,
                memory: dict) -> dict[str, Any]:
    """Every per-rank figure of one stage."""
    out: dict[str, Any] = {"stage": stage}
    for key, q in RANK_KEYS.items():
        out[key] = src.stage_number(q, v, stage, memo)
    if quantized.parse(opts.dtype):
        out["weights_bytes"] = quantized_rank_weights(spec, opts, src, v, stage)
    out["peak_bytes"] = out["states_bytes"] + out["activations_bytes"]
    state = memory.get("recurrent_state_bytes", 0)
    if spec.hybrid:
        out["recurrent_state_bytes"] = state  # whole on every rank
    out["serving_peak_bytes"] = out["weights_bytes"] + out["kv_cache_bytes"] + state
    return out


def quantized_rank_weights(spec, opts: Options, src, v: dict[str, Any], stage: int) -> int:
    """The rank's weights in a quantized format: its leaves (dense and routed experts) at
    the format's bytes, ZeRO-3 sharding each over its data-parallel group."""
    from fractions import Fraction

    fmt = quantized.parse(opts.dtype)
    total = Fraction(0)
    for leaves, share in src.stage_leaves(v, stage):
        total += Fraction(quantized.total_bytes(leaves, spec, fmt)) * share
    return math.ceil(total)


def communication_block(src, v: dict[str, Any], stage: int, memo: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dim in DIMENSIONS:
        keys = COMM_KEYS + (TP_KEYS if dim == "tp" else ())
        out[dim] = {k: src.stage_number(f"communication.{dim}.{k}", v, stage, memo) for k in keys}
    return out


def layout_block(spec, opts: Options) -> dict[str, Any]:
    lay = opts.layout()
    return {"tp": lay.tp, "pp": lay.pp, "vpp": lay.vpp, "schedule": lay.schedule,
            "microbatches": lay.microbatches, "ep": lay.ep, "etp": lay.expert_tp, "cp": lay.cp,
            "dp": lay.dp, "zero": opts.zero_stage,
            "distributed_optimizer": lay.distributed_optimizer,
            "sequence_parallel": lay.sequence_parallel, "tp_plan": lay.tp_plan,
            "cp_algorithm": lay.cp_algorithm,
            "plan": spec.implementation.get("tp_plan", "") if lay.tp_plan == "hf" else "megatron",
            "ranks": lay.tp * lay.pp * lay.cp * lay.dp}


def conventions_text(spec, opts: Options) -> dict[str, str]:
    """What the per-rank figures assume, in words (conventions.toml's ``per_rank`` texts)."""
    from ..algebra import conventions as words

    return words.texts(words.values(spec, opts), "per_rank")


def parallel_report(spec, opts: Options, src, v: dict[str, Any], memory: dict) -> dict[str, Any]:
    """``per_rank``, ``communication`` (and ``per_stage``) of the report."""
    lay = opts.layout().checked()
    dec = v.get("s_dec") if spec.family == "encoder-decoder" else None
    check_spec(spec, lay, seq_len_of(spec, opts), dec)
    memo: dict = {}
    stage, _peak, _ = most_loaded(src, v, lay.pp, memo)
    block = stage_block(spec, opts, src, v, stage, memo, memory)
    per_rank = {k: block[k] for k in ("params", "weights_bytes", "gradients_bytes",
                                      "optimizer_bytes", "activations_bytes", "kv_cache_bytes",
                                      "peak_bytes", "stage")}
    per_rank.update({k: block[k] for k in block if k not in per_rank})
    per_rank["layout"] = layout_block(spec, opts)
    per_rank["conventions"] = conventions_text(spec, opts)
    out = {"per_rank": per_rank, "communication": communication_block(src, v, stage, memo)}
    if opts.per_stage:
        out["per_stage"] = []
        for i in range(lay.pp):
            one = stage_block(spec, opts, src, v, i, memo, memory)
            one["communication"] = communication_block(src, v, i, memo)
            out["per_stage"].append(one)
    return out

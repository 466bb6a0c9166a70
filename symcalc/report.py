"""The report of one model: exact numbers by substitution into the sympy expressions.

The result is plain data (the JSON object of the command-line contract); renderers format
it. :mod:`symcalc.quick` produces the same object without sympy.
"""
from __future__ import annotations

from typing import Any

from . import accounting, quantities as q
from .options import Options, seq_len_of, workload_values
from .quick import conventions  # sympy-free; re-exported here
from .spec import Spec, size_values


def params_report(spec: Spec) -> dict[str, Any]:
    values = size_values(spec)
    bd = accounting.numbers(accounting.params(spec), values)
    total = bd.total
    embedding = q.whole(q.value(q.expression("params.embedding", spec), values))
    per_layer: dict[str, int] = {}
    for prefix, layer in accounting.per_layer(spec).items():
        nums = accounting.numbers(layer, values).as_dict()
        head = prefix.split("/")[0] + "/" if "/" in prefix else ""
        per_layer[f"{head}total" if head else "total"] = sum(nums[p] for p in nums if "/" not in p)
        per_layer.update({f"{head}{p}": v for p, v in nums.items()})
    out = {
        "total": total,
        "embedding": embedding,
        "non_embedding": total - embedding,
        "active": q.whole(q.value(q.expression("params.active", spec), values)),
        "head_dim": spec.d_h,
        "per_layer": per_layer,
        "breakdown": bd.as_dict(),
    }
    return out


def report(spec: Spec, opts: Options = Options()) -> dict[str, Any]:
    """The full report: params, flops and memory, exact integers."""
    opts = opts.checked()
    values = {**size_values(spec), **workload_values(spec, opts)}
    decode_values = dict(values, s=opts.context or values["s"])

    def num(name: str, at: dict[str, int] = values) -> int:
        return q.whole(q.value(q.expression(name, spec, opts), at))

    flops = {"batch": opts.batch, "seq_len": seq_len_of(spec, opts)}
    if spec.family == "encoder-decoder":
        flops["dec_seq_len"] = values["s_dec"]
    flops.update({
        "forward_matmul": num("flops.forward_matmul"),
        "forward": num("flops.forward"),
        "training": num("flops.training"),
        "decode_per_token": num("flops.decode_per_token", decode_values),
        "decode_context": decode_values["s"],
        "breakdown": accounting.numbers(q.matmul_breakdown(spec, opts.with_(causal="full")),
                                        values).as_dict(),
    })
    memory = {
        "dtype": opts.dtype,
        "kv_dtype": opts.kv_dtype,
        "weights_bytes": num("memory.weights_bytes"),
        "kv_cache_bytes": num("memory.kv_cache_bytes"),
        "activations_bytes": num("memory.activations_bytes"),
        "training_bytes": num("memory.training_bytes"),
    }
    conv = conventions(spec, opts)
    flops["conventions"] = conv["flops"]
    memory["conventions"] = conv["memory"]
    return {"model": spec.name, "params": params_report(spec), "flops": flops, "memory": memory}

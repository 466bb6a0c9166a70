"""Every quantity symcalc reports, as a sympy expression of one spec under one set of
options: the single source of truth for numbers, closed forms and derivations.

Quantity names are the report's keys: ``params.total``, ``params.active``,
``flops.forward_matmul``, ``flops.forward``, ``flops.training``,
``flops.decode_per_token``, ``memory.weights_bytes``, ``memory.kv_cache_bytes``,
``memory.activations_bytes``, ``memory.training_bytes``.
"""
from __future__ import annotations

from functools import lru_cache

import sympy

from . import accounting, activations, flops, memory, quantized
from .breakdown import Breakdown
from ..errors import SymcalcError
from .options import Options, convention_switches
from .spec import Spec
from .symbols import ALL, SIZES

QUANTITIES = {
    "params.total": "parameters",
    "params.active": "parameters a token passes through (MoE: k of E experts)",
    "params.embedding": "vocabulary and position tables, untied head weight",
    "params.non_embedding": "all other parameters",
    "flops.forward_matmul": "matmul FLOPs of one forward pass (contract convention)",
    "flops.forward": "forward FLOPs under the chosen conventions",
    "flops.training": "forward + backward (2x forward) [+ recomputation]",
    "flops.decode_per_token": "matmul FLOPs to generate one token per sequence at --context",
    "memory.weights_bytes": "weights at --dtype",
    "memory.kv_cache_bytes": "KV cache at --kv-dtype for batch x seq_len tokens",
    "memory.recurrent_state_bytes": "linear-attention, SSM and short-convolution state of "
                                    "batch sequences (state at --state-dtype, conv windows at --kv-dtype; "
                                    "does not grow with length)",
    "memory.activations_bytes": "activations every layer keeps for backward (--activations: "
                                "paper, eager or sdpa)",
    "memory.training_bytes": "weights, gradients and optimizer state per rank",
}


def check_quantity(name: str) -> str:
    if name not in QUANTITIES:
        raise SymcalcError("quantity", f"must be one of {', '.join(QUANTITIES)} (got {name!r})")
    return name


def _fix(expr_or_bd, spec: Spec, opts: Options):
    """The spec's structure and the options' convention switches put in: the structure once
    per spec and expression (:func:`_structured`), the few switches after it."""
    fixed = {ALL[n].symbol: sympy.Integer(v) for n, v in convention_switches(spec, opts).items()}
    structured = _structured(expr_or_bd, accounting.structure_key(spec))
    if isinstance(structured, Breakdown):
        return accounting.substitute(structured, fixed)
    return accounting.put(structured, fixed)


@lru_cache(maxsize=256)
def _structured(expr_or_bd, key: tuple):
    """A shape's breakdown or expression with a structure (:func:`accounting.structure_key`)
    put in and expanded (structure values are numbers and sizes, never convention switches,
    so the switches can follow)."""
    if isinstance(expr_or_bd, Breakdown):
        return accounting.substitute(expr_or_bd, dict(key))
    return accounting.put(expr_or_bd, dict(key))


def matmul_breakdown(spec: Spec, opts: Options = Options()) -> Breakdown:
    """Forward matmul FLOPs by component under the options' causal convention."""
    return _fix(flops.shape_matmul(spec.shape), spec, opts)


def nonmatmul_breakdown(spec: Spec, opts: Options = Options()) -> Breakdown:
    return _fix(flops.shape_nonmatmul(spec.shape), spec, opts)


def attention_core(spec: Spec, opts: Options = Options()) -> sympy.Expr:
    """Forward FLOPs of every layer's attention core (scores, softmax, weighted sum of V)
    under the conventions: what selective recomputation runs again."""
    return sympy.expand(_forward(spec, opts, flops.attention_core))


def _forward(spec: Spec, opts: Options, part) -> sympy.Expr:
    """``part`` (a function of a breakdown) of the forward FLOPs under the conventions."""
    return flops.forward_total(part(matmul_breakdown(spec, opts)),
                               part(nonmatmul_breakdown(spec, opts)),
                               int(opts.macs), int(opts.nonmatmul))


def expression(name: str, spec: Spec, opts: Options = Options()) -> sympy.Expr:
    """The sympy expression of quantity ``name`` for ``spec`` under ``opts``."""
    check_quantity(name)
    return _cached(name, spec, opts)


@lru_cache(maxsize=512)
def _cached(name: str, spec: Spec, opts: Options) -> sympy.Expr:
    params = accounting.params(spec)
    if name == "params.total":
        return params.total
    if name == "params.active":
        return accounting.active_params(spec)
    if name == "params.embedding":
        return accounting.embedding_total(params)
    if name == "params.non_embedding":
        return sympy.expand(params.total - accounting.embedding_total(params))
    if name == "flops.forward_matmul":
        return matmul_breakdown(spec, opts.with_(causal="full")).total
    if name == "flops.forward":
        return sympy.expand(_forward(spec, opts, lambda bd: bd.total))
    if name == "flops.training":
        return sympy.expand(flops.training_total(
            _cached("flops.forward", spec, opts), attention_core(spec, opts),
            int(opts.recompute == "full"), int(opts.recompute == "selective")))
    if name == "flops.decode_per_token":
        context = SIZES["s"].symbol
        return _fix(flops.decode_matmul_per_token(spec.shape, context), spec, opts)
    if name == "memory.weights_bytes":
        fmt = quantized.parse(opts.dtype)
        if fmt is not None:  # quantized tensors, their scales, the rest at 16 bits
            return sympy.expand(quantized.total_bytes(weight_leaves(spec), spec, fmt))
        return sympy.expand(params.total * memory.dtype_bytes(opts.dtype))
    if name == "memory.kv_cache_bytes":
        return _fix(memory.kv_cache_bytes(spec.family, memory.dtype_bytes(opts.kv_dtype, "kv-dtype")),
                    spec, opts)
    if name == "memory.recurrent_state_bytes":
        return _fix(memory.recurrent_state_bytes(
            spec.family, memory.dtype_bytes(opts.kv_dtype, "kv-dtype"),
            memory.dtype_bytes(opts.state_dtype, "state-dtype")), spec, opts)
    if name == "memory.activations_bytes":
        return _fix(activations.activations_bytes(
            opts.activations, activations.facts_of(spec, opts.dtype, opts.batch), spec.shape,
            recompute=opts.recompute, tensor_parallel=opts.tp > 1,
            sequence_parallel=opts.sequence_parallel), spec, opts)
    if name == "memory.training_bytes":
        return sympy.expand(memory.training_bytes(params.total, memory.optimizer(opts.optimizer),
                                                  opts.zero_stage))
    raise AssertionError(name)


def weight_leaves(spec: Spec) -> dict[str, sympy.Expr]:
    """Parameters of each breakdown leaf (what a quantized format sorts into groups)."""
    return {leaf.path: leaf.value for leaf in accounting.params(spec)}


def value(expr: sympy.Expr, values: dict[str, int]) -> sympy.Rational:
    """Exact value of ``expr`` at the given sizes (by canonical name)."""
    subs = {SIZES[n].symbol: sympy.Integer(v) for n, v in values.items() if n in SIZES}
    out = sympy.sympify(expr).xreplace(subs)
    if not out.is_number:
        raise ValueError(f"unsubstituted symbols in {out}")
    return sympy.nsimplify(out) if out.is_Float else out


def whole(x) -> int:
    """Round an exact rational value up to a whole number (bytes of a packed or partitioned
    tensor); integers pass through."""
    return int(sympy.ceiling(x))

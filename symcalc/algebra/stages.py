"""Pipeline stages: which layers a stage holds (transformers' split, the first L mod p stages
one more; Megatron-LM's L/p; the interleaved schedule's chunks of L/(p v)), and how many
microbatches' activations it keeps in flight (1F1B and the interleaved schedule;
``narayanan2021pp``). A stage is ``"first"``, ``"last"``, an index, or the symbol ``i_p`` for
the middle ones.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Union

import sympy

from .caps import max_of, min_of
from ..errors import SymcalcError
from .layout import Layout, check_spec
from .spec import Spec
from .symbols import L, L_dense, m, p, v

Stage = Union[str, int, sympy.Expr]


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


@lru_cache(maxsize=None)  # pure; Min and Max of symbols cost sympy milliseconds
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
    return n, i * sympy.floor(L / p) + min_of(i, sympy.Mod(L, p))


@lru_cache(maxsize=None)  # pure; Min and Max of symbols cost sympy milliseconds
def dense_on_stage(layout: Layout, stage: Stage) -> sympy.Expr:
    """Dense-FFN layers of an MoE stack on the stage, the dense layers leading the stack
    (DeepSeek's first_k_dense_replace): those of its layers before L_dense."""
    n, start = layers_on_stage(layout, stage)
    if layout.vpp > 1:  # chunks j p + i, each L/(p v) layers
        i, chunk = stage_index(stage), L / (p * v)
        return sympy.Add(*[min_of(max_of(L_dense - (j * p + i) * chunk, 0), chunk)
                           for j in range(layout.vpp)])
    return min_of(max_of(L_dense - start, 0), n)


def stage_counts(spec: Spec, layout: Layout, stage: Stage) -> dict[sympy.Symbol, sympy.Expr]:
    """The layer counts of the stage, to substitute for the model's (L, L_dense), after the
    spec's structure. Stacks whose layer groups are not given by their counts alone (hybrid
    mixers, sliding and global layers, KV sharing, an encoder-decoder) are refused with more
    than one stage: their order is not in the spec."""
    if layout.pp == 1:
        return {}
    check_spec(spec, layout)
    n, _ = layers_on_stage(layout, stage)
    out = {L: n}
    if spec.dense_layers:
        out[L_dense] = dense_on_stage(layout, stage)
    return out


@lru_cache(maxsize=None)  # pure; Min and Max of symbols cost sympy milliseconds
def inflight(layout: Layout, stage: Stage) -> sympy.Expr:
    """Microbatches (1F1B) or model chunks (interleaved) whose activations stage i holds at
    once: min(p - i, m) under 1F1B (PipeDream-Flush: p - i - 1 warm-up forwards and the one in
    its steady state); interleaved, min(2 (p - i - 1) + (v - 1) p + 1, m v) chunks of L/(p v)
    layers (Megatron-LM's schedule with microbatch groups of p)."""
    i = stage_index(stage)
    if layout.pp == 1:
        return sympy.Integer(1)
    if layout.vpp > 1:
        return min_of(2 * (p - i - 1) + (v - 1) * p + 1, m * v)
    return min_of(p - i, m)

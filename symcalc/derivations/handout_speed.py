"""The handout's "How fast" section, computed (no formatting): for each model on one
accelerator, the roofline of its prefill and decode (arithmetic intensity, attainable FLOP/s,
time, what bounds it), the batch at which decode turns compute-bound, the sequences vLLM's
KV cache holds, the derivation of the decode time and an exercise with its answer. The
renderer (:mod:`symcalc.render.handout_speed`) reads it.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from ..algebra import roofline as RL
from ..algebra.spec import Spec
from .derivation import Derivation
from .derive_speed import derive_phase

DEFAULT_GPU = "H100"


@dataclass(frozen=True)
class Point:
    """One phase on the roofline."""

    intensity: Fraction  # FLOPs per byte
    attainable: Fraction  # FLOP/s the roofline allows at that intensity
    seconds: Fraction
    bound: str
    tokens_per_second: Fraction


@dataclass(frozen=True)
class SpeedSheet:
    gpu: str
    peak: int  # FLOP/s
    bandwidth: int  # bytes/s
    ridge: Fraction
    prefill: Point
    decode: Point
    compute_bound_batch: Optional[int]
    max_sequences: Optional[int]  # vLLM's KV cache at the handout's sequence length
    decode_flops_per_sequence: Fraction  # c: decode FLOPs of one sequence
    decode_bytes_fixed: Fraction  # W: bytes decode reads whatever the batch (weights)
    decode_bytes_per_sequence: Fraction  # m: bytes each sequence adds (KV cache, state)
    derivation: Derivation  # the decode time, step by step


def _point(fig, phase) -> Point:
    return Point(phase.intensity, RL.attainable(phase.intensity, fig.peak,
                                                fig.gpu.memory_bandwidth, fig.eta_c, fig.eta_m),
                 phase.seconds, phase.bound, Fraction(phase.tokens) / phase.seconds)


def speed_sheet(spec: Spec, fig, cap) -> SpeedSheet:
    """How fast ``spec`` runs: ``fig`` its figures on the accelerator at the handout's workload
    (symcalc.fast.speed.Figures), ``cap`` its capacity block."""
    gpu = fig.gpu
    pre, dec = fig.phase("prefill"), fig.phase("decode")
    one = fig.phase("decode", 1)
    two = fig.phase("decode", 2)
    per_seq = two.moved - one.moved  # the bytes one more sequence adds (weights aside)
    return SpeedSheet(gpu.name, int(fig.peak), gpu.memory_bandwidth, fig.ridge(),
                      _point(fig, pre), _point(fig, dec), fig.compute_bound_batch(),
                      cap["max_sequences"] if cap else None, one.flops, one.moved - per_seq,
                      per_seq, derive_phase(spec, fig, "decode"))

"""How well a measured run uses its accelerators: model and hardware FLOPs utilization, and
how long training on D tokens takes. Rules written once, evaluated with exact rationals or
sympy symbols (:mod:`symcalc.algebra.exact`); no sympy here.

* MFU = (model FLOPs per token x tokens per second) / (accelerators x peak FLOP/s). The model
  FLOPs per token are a named convention (``NUMERATORS``):

  - ``megatron`` (default): what Megatron-LM logs, its num_floating_point_operations
    (``megatron_flops``): forward and backward of every matmul, the causal half of the
    attention scores, no recomputation. symcalc's ``flops.training`` with ``--causal half``
    and ``--recompute none`` is that count for any model (and equals Megatron's formula
    where the formula's assumptions hold: dense, no biases counted; tests/test_speed.py);
  - ``palm``: 6N + 12 L n_h d_h s per token (Chowdhery et al. 2022, Appendix B; nanoGPT),
    N every parameter but a learned position table, the full score matrix;

* HFU (Korthikanti et al. 2022, Sec. 6.3) divides the FLOPs the hardware executes instead:
  ``flops.training`` under the run's own conventions, recomputation included;
* training time for D tokens: D over the measured tokens per second, or, without a
  measurement, D over the rate the compute bound allows at efficiency eta_c (the MFU you
  assume); GPU-hours = seconds x accelerators / 3600.
"""
from __future__ import annotations

from typing import Any

from . import exact as X

NUMERATORS = ("megatron", "palm")


def tokens_per_second(tokens_per_step: Any, step_seconds: Any) -> Any:
    return X.q(tokens_per_step) / X.q(step_seconds)


def utilization(flops_per_token: Any, tokens_per_second_: Any, gpus: Any, peak: Any) -> Any:
    """FLOPs per token x tokens per second over what the accelerators could do at peak."""
    return X.q(flops_per_token) * X.q(tokens_per_second_) / (X.q(gpus) * X.q(peak))


def palm_flops_per_token(N: Any, L: Any, n_h: Any, d_h: Any, s: Any) -> Any:
    """PaLM's model FLOPs per token: 6N + 12 L n_h d_h s (``chowdhery2022``)."""
    return 6 * X.q(N) + 12 * X.q(L) * X.q(n_h) * X.q(d_h) * X.q(s)


def compute_bound_rate(flops_per_token: Any, gpus: Any, peak: Any, eta: Any = 1) -> Any:
    """Tokens per second the accelerators allow at compute efficiency ``eta``."""
    return X.q(gpus) * X.q(eta) * X.q(peak) / X.q(flops_per_token)


def training_seconds(tokens: Any, tokens_per_second_: Any) -> Any:
    return X.q(tokens) / X.q(tokens_per_second_)


def gpu_hours(seconds: Any, gpus: Any) -> Any:
    return X.q(seconds) * X.q(gpus) / 3600

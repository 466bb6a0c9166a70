"""Saved tensors of the token mixers of hybrid stacks besides softmax attention: linear
attention (Gated DeltaNet, Kimi Delta Attention), LFM2's short convolution, and the SSMs
(Mamba-1/2), under each activation model (paper: the inputs and outputs of the mixer's
projections at A bytes; eager: what transformers' torch fallback keeps, measured with
tests/saved_tensors.describe; sdpa: the same as eager, the mixers have no softmax core).

Each function returns the terms of ONE mixer layer over ``tokens`` = b s rows;
:func:`symcalc.algebra.activations.layer_terms` weights them by the layer counts (L_lin,
L_conv, L_ssm). Helpers append their own mixers' functions here.
"""
from __future__ import annotations

from .saved import Saved  # noqa: F401

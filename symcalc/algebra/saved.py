"""A tensor a layer keeps for backward (:class:`Saved`), and the norms' saved tensors.

Sources are keys of :mod:`symcalc.derivations.citations`; ``torch_autograd`` means what
PyTorch's autograd saves for the operation, measured with saved-tensor hooks
(tests/saved_tensors.py).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import sympy

from .symbols import d


@dataclass(frozen=True)
class Saved:
    """One tensor (or one kind of tensor) a layer keeps for backward."""

    name: str
    elements: sympy.Expr
    bytes_per: sympy.Expr
    source: str
    choice: str  # the implementation choice it depends on
    split: bool = True  # tensor parallelism splits it (else only sequence parallelism)
    core: bool = False  # part of the attention core that selective recomputation drops

    @property
    def bytes(self) -> sympy.Expr:
        return self.elements * self.bytes_per

    def times(self, factor) -> "Saved":
        """The same term held ``factor`` times (layers holding it, a 0/1 switch)."""
        return replace(self, elements=factor * self.elements)


def norm_terms(f, A, tokens, tag: str, width=d, count=None, weight=None) -> list[Saved]:
    """One norm over ``tokens`` rows of ``width`` (its output is the next consumer's input,
    counted there); ``count`` is its element count when not written ``tokens * width``,
    ``weight`` its weight's (default ``width``)."""
    rows = tokens
    elements = rows * width if count is None else count
    weight = width if weight is None else weight
    ln32 = f["ac_ln32"]
    # OLMo-2's RMSNorm multiplies its weight in float32: the normalized values stay float32
    normalized = A + f["ac_norm_w32"] * (4 - A)
    # OLMo's LayerNorm runs on a float32 copy: its input and statistics are float32
    ln_width = A + f["ac_ln_up"] * (4 - A)
    return [
        Saved(f"{tag}/input", f["ac_ln"] * elements, ln_width, "ba2016",
              "LayerNorm keeps its input (float32 where it runs on a float32 copy)",
              split=False),
        Saved(f"{tag}/stats", f["ac_ln"] * 2 * rows, ln_width, "torch_autograd",
              "LayerNorm mean and reciprocal std (CPU: activation dtype; float32 where it "
              "runs on a float32 copy)", split=False),
        Saved(f"{tag}/weight_plus_one", f["ac_ln_w1"] * weight, A, "torch_autograd",
              "LayerNorm weight 1 + w made at each call (Nemotron), kept by the norm",
              split=False),
        Saved(f"{tag}/input_fp32", f["ac_rms32"] * elements, 4,
              "torch_autograd", "RMSNorm squares a float32 copy of its input", split=False),
        Saved(f"{tag}/input_16bit", f["ac_t5_16"] * elements, A,
              "torch_autograd", "T5's RMSNorm multiplies its 16-bit input by the float32 root",
              split=False),
        Saved(f"{tag}/centered", ln32 * 2 * elements, 4, "torch_autograd",
              "LayerNorm written out in float32 (Cohere): x - mean, computed twice, kept by "
              "the square and by the product with the reciprocal root", split=False),
        Saved(f"{tag}/rsqrt", (f["ac_rms32"] + ln32 + f["ac_rms_pow"]) * rows, 4, "torch_autograd",
              "RMSNorm reciprocal root, float32", split=False),
        Saved(f"{tag}/weight_fp32", f["ac_norm_wcopy"] * weight, 4, "torch_autograd",
              "float32 weight the normalized values multiply (Gemma's 1 + w; Cohere's cast "
              "at 16 bits), one per call", split=False),
        Saved(f"{tag}/normalized", (f["ac_rms32"] + ln32) * elements, normalized,
              "torch_autograd", "normalized values that the weight multiplies (float32 where "
              "the weight multiplies in float32)", split=False),
    ]

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


def norm_terms(f, A, tokens, tag: str, width=d) -> list[Saved]:
    """One norm over ``tokens`` rows of ``width`` (its output is the next consumer's input,
    counted there)."""
    rows = tokens
    return [
        Saved(f"{tag}/input", f["ac_ln"] * rows * width, A, "ba2016", "LayerNorm keeps its input",
              split=False),
        Saved(f"{tag}/stats", f["ac_ln"] * 2 * rows, A, "torch_autograd",
              "LayerNorm mean and reciprocal std (CPU: activation dtype)", split=False),
        Saved(f"{tag}/input_fp32", f["ac_rms32"] * rows * width, 4,
              "torch_autograd", "RMSNorm squares a float32 copy of its input", split=False),
        Saved(f"{tag}/input_16bit", f["ac_t5_16"] * rows * width, A,
              "torch_autograd", "T5's RMSNorm multiplies its 16-bit input by the float32 root",
              split=False),
        Saved(f"{tag}/rsqrt", f["ac_rms32"] * rows, 4, "torch_autograd",
              "RMSNorm reciprocal root, float32", split=False),
        Saved(f"{tag}/normalized", f["ac_rms32"] * rows * width, A,
              "torch_autograd", "normalized values that the weight multiplies", split=False),
    ]

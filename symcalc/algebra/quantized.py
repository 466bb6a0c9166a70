"""Quantized weight formats for ``--dtype``: which tensors a format quantizes, how many bits
each quantized weight takes, and the scales (and zero points) stored beside them.

No sympy here: the same functions run on the report's exact ints (the quick path) and on
sympy expressions (quantities, derivations), so that both give one number.

Formats (``--dtype`` names):

* ``int8-gG``, ``int4-gG``: integers in groups of G weights along a row, one 16-bit scale
  (fp16 or bf16: both 2 bytes) per group (GPTQ, Frantar et al. 2023; AWQ, Lin et al. 2024);
  ``-zp`` adds a zero point per group at the weights' own width (GPTQ/AWQ asymmetric
  checkpoints pack 4-bit zeros eight to an int32).
* ``fp8-tensor``: fp8 e4m3 weights with one fp32 scale per weight matrix
  (Micikevicius et al. 2022); ``fp8-blockN``: one fp32 scale per N x N block
  (DeepSeek-V3's 128 x 128 weight blocks).
* ``mxfp4``: fp4 e2m1 in blocks of 32 sharing one 8-bit E8M0 scale, 4.25 bits per weight
  (OCP Microscaling Formats v1.0). Recipe of GPT-OSS's published checkpoint: in an MoE model
  only the routed experts' weight matrices are quantized; in a dense model every weight
  matrix of the layers.
* ``nvfp4``: fp4 e2m1 in blocks of 16 with one fp8 e4m3 scale each (4.5 bits per weight)
  and one fp32 scale per weight matrix (NVIDIA's NVFP4).

The weight matrices of the layers (attention, cross-attention, FFN, experts, shared
experts, linear-attention and Mamba in/out projections) are quantized; everything else stays
at 16 bits: embeddings, the head, norms, routers, biases kept in their own breakdown leaf,
attention sinks, convolutions and the small gating projections. A projection's bias that the
breakdown keeps in the same leaf as its weight (q/k/v of Qwen2, GPT-2, GPT-OSS) is counted
with the weight (at most its output width per matrix). Groups and blocks are counted as
elements / G: the formats need (or pad) rows to whole groups.
"""
from __future__ import annotations

from ..errors import SymcalcError
from ..records import Record

TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from fractions import Fraction
    from typing import Any, Optional


class Format(Record):
    name: str
    bits: int  # bits of one quantized weight
    group: Optional[int]  # weights sharing one scale (None: no group scales)
    scale_bytes: Fraction  # bytes of one group's scale
    zero_bytes: Fraction  # bytes of one group's zero point (0: symmetric)
    tensor_bytes: int  # bytes of the scale each weight matrix has (0: none)
    experts_only: bool  # an MoE model quantizes only its routed experts (GPT-OSS's recipe)
    sources: tuple[str, ...]
    meaning: str

    def bits_per_weight(self) -> Fraction:
        """Bits one quantized weight costs with its share of the group scale and zero point."""
        from fractions import Fraction

        extra = Fraction(0) if self.group is None else \
            8 * (self.scale_bytes + self.zero_bytes) / self.group
        return self.bits + extra


NAMES = ("int8-g<G>[-zp]", "int4-g<G>[-zp]", "fp8-tensor", "fp8-block<N>", "mxfp4", "nvfp4")
_INT = r"int(8|4)-g([0-9]{1,7})(-zp)?"  # ASCII digits: \d also takes '１２８', '٣٢'
_BLOCK = r"fp8-block([0-9]{1,4})"
_PREFIXES = ("int8-g", "int4-g", "fp8-", "mxfp4", "nvfp4")


def parse(name: str, field: str = "dtype") -> Optional[Format]:
    """The quantized format ``name`` names, or None for a plain dtype name."""
    key = str(name).strip().lower()
    if not key.startswith(_PREFIXES):  # a plain dtype: no regular expression, no Fraction
        return None
    import re
    from fractions import Fraction

    m = re.fullmatch(_INT, key)
    if m:
        bits, group, zp = int(m.group(1)), int(m.group(2)), bool(m.group(3))
        if group < 1:
            raise SymcalcError(field, f"group size must be a positive integer (got {name!r})")
        return Format(key, bits, group, Fraction(2), Fraction(bits, 8) if zp else Fraction(0), 0,
                      False, ("frantar2023", "lin2024"),
                      f"int{bits} weights in groups of {group}, one fp16/bf16 scale per group"
                      + (f" and an int{bits} zero point" if zp else " (symmetric)"))
    if key == "fp8-tensor":
        return Format(key, 8, None, Fraction(0), Fraction(0), 4, False, ("micikevicius2022",),
                      "fp8 e4m3 weights, one fp32 scale per weight matrix")
    m = re.fullmatch(_BLOCK, key)
    if m:
        n = int(m.group(1))
        if n < 1:
            raise SymcalcError(field, f"block size must be a positive integer (got {name!r})")
        return Format(key, 8, n * n, Fraction(4), Fraction(0), 0, False,
                      ("micikevicius2022", "deepseek2024v3"),
                      f"fp8 e4m3 weights, one fp32 scale per {n} x {n} block")
    if key.startswith(("int8-g", "int4-g", "fp8-block")):
        raise SymcalcError(field, f"must be int8-gG or int4-gG [-zp] or fp8-blockN with G, N "
                                  f"written in ASCII digits 0-9 (got {name!r:.40})")
    if key == "mxfp4":
        return Format(key, 4, 32, Fraction(1), Fraction(0), 0, True, ("ocp_mx2023",),
                      "MXFP4: fp4 e2m1 in blocks of 32, one E8M0 scale byte per block")
    if key == "nvfp4":
        return Format(key, 4, 16, Fraction(1), Fraction(0), 4, False, ("nvidia_nvfp4",),
                      "NVFP4: fp4 e2m1 in blocks of 16, one fp8 e4m3 scale per block and one "
                      "fp32 scale per weight matrix")
    return None


# breakdown leaves (parent, name) that hold weight matrices of the layers
_MATRICES = {
    "attention": {"q", "k", "v", "o", "q_gate", "q_a", "q_b", "kv_a", "kv_b"},
    "indexer": {"q", "k", "weights"},
    "cross_attention": {"q", "k", "v", "o"},
    "ffn": {"gate", "up", "down"},
    "experts": {"gate", "up", "down"},
    "shared": {"gate", "up", "down"},
    "linear_attention": {"qkv", "output_gate", "o"},
    "ssm": {"in_proj", "out_proj"},
    "short_conv": {"in_proj", "out_proj"},
}


def _parent_name(path: str) -> tuple[str, str]:
    parts = path.split("/")
    return (parts[-2] if len(parts) > 1 else ""), parts[-1]


def quantized(path: str, fmt: Format, moe: bool) -> bool:
    """Whether format ``fmt`` quantizes the breakdown leaf ``path``."""
    parent, name = _parent_name(path)
    if name not in _MATRICES.get(parent, ()):
        return False
    if fmt.experts_only and moe:
        return parent == "experts"
    return True


def matrices(path: str, spec) -> int:
    """Weight matrices the leaf ``path`` holds over the model: one per layer that has it,
    one per expert and layer for routed experts (the unfused layout of most checkpoints)."""
    parent, _ = _parent_name(path)
    if spec.family == "encoder-decoder":
        layers = spec.L_dec if path.startswith("decoder/") else spec.L
        return layers
    moe_layers = spec.ffn_layers - spec.dense_layers if spec.moe else 0
    return {
        "attention": spec.attention_layers,
        "ffn": spec.dense_layers if spec.moe else spec.ffn_layers,
        "experts": moe_layers * (spec.E or 0),
        "shared": moe_layers,
        "linear_attention": spec.L_lin or 0,
        "ssm": spec.L_ssm or 0,
        "short_conv": spec.L_conv or 0,
    }[parent]


def leaf_paths(paths) -> list[str]:
    """The leaves of a breakdown's path list (paths no other path lies under)."""
    paths = list(paths)
    return [p for p in paths if not any(o.startswith(p + "/") for o in paths)]


GROUPS = ("quantized", "scales", "zero_points", "tensor_scales", "unquantized")
GROUP_MEANING = {
    "quantized": "quantized weights",
    "scales": "group scales",
    "zero_points": "group zero points",
    "tensor_scales": "per-matrix fp32 scales",
    "unquantized": "tensors kept at 16 bits",
}


def weight_groups(leaves: dict[str, Any], spec, fmt: Format) -> dict[str, tuple[Any, Any]]:
    """{group: (elements or matrices, bytes)} of the weights under ``fmt``: ``leaves`` maps
    breakdown leaf paths to element counts (ints or sympy expressions)."""
    from fractions import Fraction

    q_paths = [p for p in leaves if quantized(p, fmt, bool(spec.moe))]
    q = sum((leaves[p] for p in q_paths), 0)
    rest = sum((leaves[p] for p in leaves if p not in q_paths), 0)
    out: dict[str, tuple[Any, Any]] = {"quantized": (q, q * Fraction(fmt.bits, 8))}
    if fmt.group is not None:
        out["scales"] = (q * Fraction(1, fmt.group), q * fmt.scale_bytes / fmt.group)
        if fmt.zero_bytes:
            out["zero_points"] = (q * Fraction(1, fmt.group), q * fmt.zero_bytes / fmt.group)
    if fmt.tensor_bytes:
        count = sum(matrices(p, spec) for p in q_paths)
        out["tensor_scales"] = (count, count * fmt.tensor_bytes)
    out["unquantized"] = (rest, rest * 2)
    return out


def total_bytes(leaves: dict[str, Any], spec, fmt: Format) -> Any:
    return sum((b for _n, b in weight_groups(leaves, spec, fmt).values()), 0)


def check(name: str, field: str = "dtype") -> None:
    """Refuse a quantized format where only an element dtype makes sense."""
    if parse(name, field) is not None:
        raise SymcalcError(field, f"a quantized weight format ({name}) applies to --dtype only")

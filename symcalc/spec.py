"""An architecture, with every switch explicit. No sympy here: the quick path uses it too.

A :class:`Spec` holds the sizes (canonical symbol names: ``L``, ``d``, ``n_h`` ...) and the
structural switches of one model. :func:`make_spec` fills the derived defaults (``d_h`` from
``d / n_h``, ``n_kv`` from ``n_h``) and checks every rule, raising :class:`SymcalcError` with
the field and the rule it broke.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Optional

from .errors import SymcalcError

FAMILIES = ("encoder", "decoder", "encoder-decoder")
FFN_KINDS = ("plain", "gated")
NORMS = ("layernorm", "layernorm_nobias", "rmsnorm", "none")
HEADS = ("none", "tied", "untied")
POSITIONS = ("learned", "rotary", "relative", "none")
PROJECTIONS = ("q", "k", "v", "o")

SIZE_FIELDS = ("L", "d", "n_h", "n_kv", "d_h", "d_ff", "V", "P", "T", "E", "k", "R", "L_dec", "W")


@dataclass(frozen=True)
class Spec:
    """One architecture. Sizes that do not apply are ``None``."""

    name: str
    family: str
    L: int
    d: int
    n_h: int
    d_ff: int
    V: Optional[int] = None  # vocabulary (needed by a token table or a head)
    n_kv: Optional[int] = None
    d_h: Optional[int] = None
    P: Optional[int] = None  # learned position table rows
    T: Optional[int] = None  # token-type vocabulary
    E: Optional[int] = None  # experts per layer (MoE only)
    k: Optional[int] = None  # experts per token (MoE only)
    R: Optional[int] = None  # relative-attention buckets (T5)
    L_dec: Optional[int] = None  # decoder layers (encoder-decoder only)
    W: Optional[int] = None  # sliding attention window (caps the KV cache)
    attention_bias: str = "none"  # any of q,k,v,o: "all", "none", "qkv", "o", "q,k"
    attention_output: bool = True
    ffn: str = "plain"
    ffn_bias: bool = False
    norm: str = "layernorm"
    final_norm: bool = True
    embedding_norm: bool = False
    token_embedding: bool = True
    position: str = "none"
    head: str = "tied"
    head_bias: bool = False
    pooler: bool = False
    mlm_head: bool = False
    source: str = ""

    # -- derived views -------------------------------------------------------------------
    @property
    def moe(self) -> bool:
        return self.E is not None

    @property
    def biased_projections(self) -> frozenset[str]:
        return parse_bias(self.attention_bias)

    @property
    def shape(self) -> str:
        """``single`` (one stack: encoder-only or decoder-only) or ``encoder-decoder``."""
        return "encoder-decoder" if self.family == "encoder-decoder" else "single"

    def sizes(self) -> dict[str, int]:
        """The sizes that apply to this model, by canonical name."""
        return {f: getattr(self, f) for f in SIZE_FIELDS if getattr(self, f) is not None}

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


FIELD_NAMES = tuple(f.name for f in fields(Spec))


def parse_bias(text: str) -> frozenset[str]:
    text = str(text).strip().lower()
    if text == "all":
        return frozenset(PROJECTIONS)
    if text in ("none", ""):
        return frozenset()
    parts = [p.strip() for p in text.replace(",", " ").split()]
    if len(parts) == 1 and parts[0] not in PROJECTIONS:
        parts = list(parts[0])  # "qkv" -> q, k, v
    bad = [p for p in parts if p not in PROJECTIONS]
    if bad:
        raise SymcalcError("attention_bias", "must be 'all', 'none' or a list of q, k, v, o")
    return frozenset(parts)


def _positive_int(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer() and value > 0:
            return int(value)
        raise SymcalcError(field, f"must be a positive integer (got {value!r})")
    if value <= 0:
        raise SymcalcError(field, f"must be a positive integer (got {value})")
    return value


def _choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise SymcalcError(field, f"must be one of {', '.join(allowed)} (got {value!r})")
    return value


def _flag(field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SymcalcError(field, f"must be true or false (got {value!r})")
    return value


def make_spec(**values: Any) -> Spec:
    """Build a checked :class:`Spec`; derived sizes are filled in."""
    unknown = sorted(set(values) - set(FIELD_NAMES))
    if unknown:
        raise SymcalcError(unknown[0], "is not a symcalc spec field")
    for required in ("name", "family", "L", "d", "n_h", "d_ff"):
        if values.get(required) is None:
            raise SymcalcError(required, "is required")
    v = dict(values)
    for f in ("name", "source"):
        if f in v and not isinstance(v[f], str):
            raise SymcalcError(f, f"must be text (got {v[f]!r})")
    for f in SIZE_FIELDS:
        if v.get(f) is not None:
            v[f] = _positive_int(f, v[f])
    _choice("family", v["family"], FAMILIES)
    _choice("ffn", v.get("ffn", "plain"), FFN_KINDS)
    _choice("norm", v.get("norm", "layernorm"), NORMS)
    _choice("head", v.get("head", "tied"), HEADS)
    _choice("position", v.get("position", "none"), POSITIONS)
    for f in ("attention_output", "ffn_bias", "final_norm", "embedding_norm", "token_embedding",
              "head_bias", "pooler", "mlm_head"):
        if f in v:
            _flag(f, v[f])
    parse_bias(v.get("attention_bias", "none"))

    if v.get("d_h") is None:
        if v["d"] % v["n_h"]:
            raise SymcalcError("d", f"must be divisible by n_h ({v['d']} % {v['n_h']} != 0) "
                                    "unless d_h (head_dim) is given")
        v["d_h"] = v["d"] // v["n_h"]
    if v.get("n_kv") is None:
        v["n_kv"] = v["n_h"]
    if v["n_h"] % v["n_kv"]:
        raise SymcalcError("n_kv", f"must divide n_h ({v['n_h']} % {v['n_kv']} != 0)")
    if (v.get("E") is None) != (v.get("k") is None):
        raise SymcalcError("k", "E (experts) and k (experts per token) come together")
    if v.get("E") is not None and v["k"] > v["E"]:
        raise SymcalcError("k", f"top-k must not exceed the number of experts ({v['k']} > {v['E']})")
    if v.get("position") == "learned" and v.get("P") is None:
        raise SymcalcError("P", "is required with learned positions")
    if v.get("position") == "relative" and v.get("R") is None:
        raise SymcalcError("R", "is required with relative positions")
    if v["family"] == "encoder-decoder":
        v.setdefault("L_dec", v["L"])
        if v["L_dec"] is None:
            v["L_dec"] = v["L"]
    elif v.get("L_dec") is not None:
        raise SymcalcError("L_dec", "applies only to encoder-decoder models")
    if v.get("V") is None and (v.get("token_embedding", True) or v.get("head", "tied") != "none"):
        raise SymcalcError("V", "is required with a token embedding or an output head")
    if v.get("head", "tied") == "none" and v.get("head_bias"):
        raise SymcalcError("head_bias", "needs an output head")
    if v.get("head", "tied") == "tied" and not v.get("token_embedding", True):
        raise SymcalcError("head", "a tied head needs a token embedding")
    return Spec(**v)


def with_overrides(spec: Spec, overrides: dict[str, Any]) -> Spec:
    """``--set key=value`` on an existing spec, re-checked. Sizes that followed from others
    keep following them unless set too: d_h = d / n_h, n_kv = n_h, and d_ff = 4 d (so
    ``gpt2 --set L=24 --set d=1024 --set n_h=16`` is GPT-2 medium)."""
    base = asdict(spec)
    for key in overrides:
        if key not in FIELD_NAMES:
            raise SymcalcError(f"--set {key}", "is not a symcalc spec field "
                               f"(known: {', '.join(FIELD_NAMES)})")
    base.update(overrides)
    new_d = overrides.get("d")
    if "d_ff" not in overrides and spec.d_ff == 4 * spec.d and type(new_d) is int and new_d > 0:
        base["d_ff"] = 4 * new_d
    if "d" in overrides or "n_h" in overrides:
        if "d_h" not in overrides and spec.d_h == spec.d // spec.n_h and spec.d % spec.n_h == 0:
            base["d_h"] = None  # keep d_h = d / n_h when it was derived
    if "n_h" in overrides and "n_kv" not in overrides and spec.n_kv == spec.n_h:
        base["n_kv"] = None
    return make_spec(**base)


def coerce_text(key: str, text: str) -> Any:
    """Turn the text of ``--set key=value`` into the field's type."""
    if key in SIZE_FIELDS:
        try:
            return int(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise SymcalcError(f"--set {key}", f"must be a positive integer (got {text!r})") from None
    lowered = text.strip().lower()
    if lowered in ("true", "yes", "on", "1"):
        return True if key not in ("attention_bias",) else text
    if lowered in ("false", "no", "off", "0"):
        return False if key not in ("attention_bias",) else text
    return text


def switch_values(spec: Spec) -> dict[str, int]:
    """The 0/1 indicator for every structural switch symbol of :mod:`symcalc.symbols`."""
    bias = spec.biased_projections
    return {
        "sw_bias_q": int("q" in bias),
        "sw_bias_k": int("k" in bias),
        "sw_bias_v": int("v" in bias),
        "sw_bias_o": int("o" in bias and spec.attention_output),
        "sw_attn_out": int(spec.attention_output),
        "sw_gated": int(spec.ffn == "gated"),
        "sw_ffn_bias": int(spec.ffn_bias),
        "sw_norm_w": int(spec.norm != "none"),
        "sw_norm_b": int(spec.norm == "layernorm"),
        "sw_final_norm": int(spec.final_norm and spec.norm != "none"),
        "sw_emb_norm": int(spec.embedding_norm and spec.norm != "none"),
        "sw_tok_emb": int(spec.token_embedding),
        "sw_pos_emb": int(spec.position == "learned"),
        "sw_type_emb": int(spec.T is not None),
        "sw_rel_bias": int(spec.position == "relative"),
        "sw_head": int(spec.head != "none"),
        "sw_head_untied": int(spec.head == "untied"),
        "sw_head_bias": int(spec.head_bias),
        "sw_pooler": int(spec.pooler),
        "sw_mlm": int(spec.mlm_head),
        "sw_router": int(spec.moe),
    }


def size_values(spec: Spec) -> dict[str, int]:
    """Values for every size symbol of the spec's shape; sizes that do not apply get 1
    (they only ever appear multiplied by a switch that is off)."""
    out = {name: 1 for name in ("V", "P", "T", "E", "k", "R")}
    out.update(spec.sizes())
    out.pop("W", None)
    if spec.shape == "single":
        out.pop("L_dec", None)
    return out

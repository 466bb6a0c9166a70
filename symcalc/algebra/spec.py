"""An architecture, with every switch explicit. No sympy here: the quick path uses it too.

A :class:`Spec` holds the sizes (canonical symbol names: ``L``, ``d``, ``n_h`` ...) and the
structural switches of one model. :func:`make_spec` fills the derived defaults (``d_h`` from
``d / n_h``, ``n_kv`` from ``n_h``) and checks every rule, raising :class:`SymcalcError` with
the field and the rule it broke.
"""
from __future__ import annotations


from dataclasses import asdict, dataclass, fields
from typing import Any, Optional

from ..errors import SymcalcError
from . import implementation as impl
from .limits import SIZE_LIMIT, SIZE_LIMIT_TEXT, check_limit, parse_int  # noqa: F401

FAMILIES = ("encoder", "decoder", "encoder-decoder")
FFN_KINDS = ("plain", "gated")
NORMS = ("layernorm", "layernorm_nobias", "rmsnorm", "none")
QK_NORMS = ("none", "head", "all_heads")
HEADS = ("none", "tied", "untied")
POSITIONS = ("learned", "rotary", "relative", "none")
PROJECTIONS = ("q", "k", "v", "o")
LINEAR_ATTNS = ("none", "gated_deltanet", "kda")
SSMS = ("none", "mamba", "mamba2")

SIZE_FIELDS = ("L", "d", "n_h", "n_kv", "d_h", "d_ff", "V", "P", "T", "E", "k", "R", "L_dec", "W",
               "d_moe", "E_s", "d_sh", "r_q", "r_kv", "d_nope", "d_rope", "d_v", "d_emb",
               "n_lk", "n_lv", "d_lk", "d_lv", "K_conv", "d_in", "N_s", "G_s", "H_s", "R_dt",
               "Q_c", "n_alt", "r_laurel", "d_ple", "V_ple", "d_ff_sum")
# layer counts that may be zero
COUNT_FIELDS = ("L_dense", "L_local", "L_attn", "L_lin", "L_ssm", "L_conv", "L_ffn",
                "L_kv_shared", "L_kv_shared_local")
HYBRID_COUNTS = ("L_attn", "L_lin", "L_ssm", "L_conv", "L_ffn")
FLAG_FIELDS = ("attention_output", "ffn_bias", "final_norm", "embedding_norm", "token_embedding",
               "head_bias", "pooler", "mlm_head", "mla", "norm_attn_in", "norm_ffn_in",
               "norm_attn_out", "norm_ffn_out", "parallel", "shared_gate", "expert_bias",
               "qk_norm_bias", "router_bias", "sinks", "attn_gate", "ssm_bias", "conv_bias",
               "ssm_norm", "ssm_inner_norms", "ssm_out_bias")
MLA_FIELDS = ("r_kv", "d_nope", "d_rope", "d_v")


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
    L_local: Optional[int] = None  # layers that slide (None with W: all of them)
    d_moe: Optional[int] = None  # expert FFN width (None: d_ff)
    E_s: Optional[int] = None  # shared experts per MoE layer
    d_sh: Optional[int] = None  # width of each shared expert (None: d_moe)
    L_dense: Optional[int] = None  # dense-FFN layers of an MoE stack (None: 0)
    r_q: Optional[int] = None  # MLA query rank (None: direct query projection)
    r_kv: Optional[int] = None  # MLA key/value latent rank
    d_nope: Optional[int] = None  # MLA non-rotary query/key head dim
    d_rope: Optional[int] = None  # MLA decoupled rotary head dim
    d_v: Optional[int] = None  # MLA value head dim
    d_emb: Optional[int] = None  # token-embedding width (OPT word_embed_proj_dim; None: d)
    # hybrid stacks: layers by mixer (None: L_attn = L_ffn = L, the others 0)
    L_attn: Optional[int] = None  # layers with softmax attention
    L_lin: Optional[int] = None  # layers with a linear-attention mixer
    L_ssm: Optional[int] = None  # layers with a Mamba mixer
    L_conv: Optional[int] = None  # layers with LFM2's short-convolution mixer
    L_ffn: Optional[int] = None  # layers with an FFN (dense or MoE)
    n_lk: Optional[int] = None  # linear-attention query/key heads
    n_lv: Optional[int] = None  # linear-attention value heads
    d_lk: Optional[int] = None  # linear-attention query/key head dim
    d_lv: Optional[int] = None  # linear-attention value head dim
    K_conv: Optional[int] = None  # depthwise convolution width
    d_in: Optional[int] = None  # Mamba inner width
    N_s: Optional[int] = None  # SSM state size
    G_s: Optional[int] = None  # Mamba-2 groups
    H_s: Optional[int] = None  # Mamba-2 heads
    R_dt: Optional[int] = None  # Mamba-1 dt rank
    Q_c: Optional[int] = None  # chunk length of the chunked scans (None: 64)
    # Gemma 3n (None: the part is absent)
    n_alt: Optional[int] = None  # AltUp streams
    r_laurel: Optional[int] = None  # LAuReL rank
    d_ple: Optional[int] = None  # per-layer input width
    V_ple: Optional[int] = None  # per-layer input table rows
    L_kv_shared: Optional[int] = None  # last attention layers reusing earlier keys/values (0)
    L_kv_shared_local: Optional[int] = None  # sliding layers among them (0)
    d_ff_sum: Optional[int] = None  # dense-FFN widths summed over the layers (None: L_ffn d_ff)
    linear_attn: str = "none"
    ssm: str = "none"
    attn_gate: bool = False
    ssm_bias: bool = False  # Mamba in_proj and (unless ssm_out_bias says) out_proj biases
    ssm_out_bias: Optional[bool] = None  # Falcon-H1: out_proj bias on its own (None: ssm_bias)
    conv_bias: bool = False
    ssm_norm: bool = False
    ssm_inner_norms: bool = False
    mla: bool = False
    qk_norm: str = "none"
    qk_norm_bias: bool = False
    norm_attn_in: bool = True
    norm_ffn_in: bool = True
    norm_attn_out: bool = False
    norm_ffn_out: bool = False
    parallel: bool = False
    shared_gate: bool = False
    expert_bias: bool = False
    router_bias: bool = False
    sinks: bool = False
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
    # how its transformers implementation computes, which decides what it keeps for backward:
    # the fields of symcalc/algebra/implementation.toml (a hand-written spec keeps their
    # defaults, Korthikanti et al.'s assumptions: GeLU-like activation, both dropouts)
    implementation: impl.Implementation = impl.Implementation()
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

    @property
    def projected_embedding(self) -> bool:
        return self.d_emb is not None and self.d_emb != self.d

    @property
    def dense_layers(self) -> int:
        """Layers with a dense FFN in an MoE stack (0 when every layer is MoE)."""
        return self.L_dense or 0

    @property
    def attention_layers(self) -> int:
        """Layers with softmax attention (all of them unless the stack is hybrid)."""
        return self.L if self.L_attn is None else self.L_attn

    @property
    def ffn_layers(self) -> int:
        """Layers with an FFN (all of them unless some blocks hold only a mixer)."""
        return self.L if self.L_ffn is None else self.L_ffn

    @property
    def hybrid(self) -> bool:
        """Some layers mix tokens by linear attention, an SSM or a short convolution, or
        some blocks lack attention or an FFN."""
        return any(getattr(self, f) is not None for f in HYBRID_COUNTS)

    @property
    def kv_shared_layers(self) -> int:
        """Attention layers that reuse an earlier layer's keys and values (Gemma 3n)."""
        return self.L_kv_shared or 0

    @property
    def local_layers(self) -> int:
        """Layers whose KV cache the window W caps."""
        if self.W is None:
            return 0
        return self.attention_layers if self.L_local is None else self.L_local

    def sizes(self) -> dict[str, int]:
        """The sizes that apply to this model, by canonical name."""
        return {f: getattr(self, f) for f in SIZE_FIELDS + COUNT_FIELDS
                if getattr(self, f) is not None}

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None}
        out["implementation"] = self.implementation.given()
        return out


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
    """A size: an int (never a float, even 2.0, nor a bool), 1 to SIZE_LIMIT."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SymcalcError(field, f"must be a positive integer (got {value!r:.60})")
    if value <= 0:
        raise SymcalcError(field, f"must be a positive integer (got {value})")
    check_limit(field, value)
    return value


def _choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise SymcalcError(field, f"must be one of {', '.join(allowed)} (got {value!r})")
    return value


def _flag(field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SymcalcError(field, f"must be true or false (got {value!r})")
    return value


def _count(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SymcalcError(field, f"must be a whole number, zero or more (got {value!r:.60})")
    check_limit(field, value)
    return value


def _check_moe(v: dict[str, Any]) -> None:
    """Rules of the MoE fields: they need experts, and the dense layers leave some MoE."""
    moe_only = ("d_moe", "E_s", "d_sh", "L_dense", "shared_gate", "expert_bias", "router_bias")
    if v.get("E") is None:
        for f in moe_only:
            if v.get(f) not in (None, False):
                raise SymcalcError(f, "applies only to mixture-of-experts models (E experts)")
        return
    ffn = v["L"] if v.get("L_ffn") is None else v["L_ffn"]
    if v.get("L_dense") is not None and v["L_dense"] >= ffn:
        what = "the layers L" if v.get("L_ffn") is None else "the FFN layers L_ffn"
        raise SymcalcError("L_dense", f"dense layers must be fewer than {what} "
                                      f"({v['L_dense']} >= {ffn})")
    if v.get("E_s") is None and (v.get("d_sh") is not None or v.get("shared_gate")):
        raise SymcalcError("E_s", "is required with a shared-expert width or gate")


def _check_mla(v: dict[str, Any]) -> None:
    """MLA needs its four sizes; they mean nothing without it."""
    if v.get("mla"):
        for f in MLA_FIELDS:
            if v.get(f) is None:
                raise SymcalcError(f, "is required with multi-head latent attention (mla)")
        return
    for f in MLA_FIELDS + ("r_q",):
        if v.get(f) is not None:
            raise SymcalcError(f, "applies only to multi-head latent attention (mla = true)")


CHUNK = 64  # transformers' chunk length of the chunked delta rule (not a config key)
LINEAR_FIELDS = ("n_lk", "n_lv", "d_lk", "d_lv", "K_conv")
SSM_FIELDS = {"mamba": ("d_in", "N_s", "K_conv", "R_dt"),
              "mamba2": ("d_in", "N_s", "K_conv", "G_s", "H_s")}


def _check_hybrid(v: dict[str, Any]) -> None:
    """Rules of the hybrid-stack fields: decoder stacks only; each group at most L layers;
    layers of a mixer kind need the kind and its sizes; a kind, its sizes and switches need
    its layer count (which may be 0: a drawn config without such layers)."""
    counts = [f for f in HYBRID_COUNTS if v.get(f) is not None]
    if counts and v["family"] != "decoder":
        raise SymcalcError(counts[0], "applies only to decoder-only stacks")
    for f in counts:
        if v[f] > v["L"]:
            raise SymcalcError(f, f"must not exceed the layers L ({v[f]} > {v['L']})")
    if counts and all((v["L"] if v.get(f) is None and f in ("L_attn", "L_ffn") else v.get(f) or 0)
                      == 0 for f in HYBRID_COUNTS):
        raise SymcalcError(counts[0], "leaves every layer empty: a decoder needs a mixer "
                                      "(L_attn, L_lin, L_ssm, L_conv) or an FFN (L_ffn) in "
                                      "some layer")
    lin, ssm = v.get("linear_attn", "none"), v.get("ssm", "none")
    has = {f: v.get(f) is not None for f in ("L_lin", "L_ssm", "L_conv")}
    if v.get("L_lin"):
        if lin == "none":
            raise SymcalcError("linear_attn", "must be gated_deltanet or kda with L_lin "
                                              "linear-attention layers")
        for f in LINEAR_FIELDS:
            if v.get(f) is None:
                raise SymcalcError(f, "is required with linear-attention layers (L_lin)")
    elif lin != "none" and not has["L_lin"]:
        raise SymcalcError("L_lin", f"is required with linear_attn = {lin}")
    if v.get("L_ssm"):
        if ssm == "none":
            raise SymcalcError("ssm", "must be mamba or mamba2 with L_ssm state-space layers")
        for f in SSM_FIELDS[ssm]:
            if v.get(f) is None:
                raise SymcalcError(f, f"is required with {ssm} layers (L_ssm)")
        if ssm == "mamba2" and v["d_in"] % v["H_s"]:
            raise SymcalcError("H_s", f"must divide d_in ({v['d_in']} % {v['H_s']} != 0)")
        if ssm == "mamba2" and v["H_s"] % v["G_s"]:
            raise SymcalcError("G_s", f"the Mamba-2 groups must divide the heads H_s "
                                      f"({v['H_s']} % {v['G_s']} != 0)")
    elif ssm != "none" and not has["L_ssm"]:
        raise SymcalcError("L_ssm", f"is required with ssm = {ssm}")
    if v.get("L_conv") and v.get("K_conv") is None:
        raise SymcalcError("K_conv", "is required with short-convolution layers (L_conv)")
    if not any(has.values()):
        for f in ("n_lk", "n_lv", "d_lk", "d_lv", "K_conv", "d_in", "N_s", "G_s", "H_s", "R_dt",
                  "Q_c"):
            if v.get(f) is not None:
                raise SymcalcError(f, "applies only to linear-attention, SSM or "
                                      "short-convolution layers (L_lin, L_ssm, L_conv)")
    if not has["L_ssm"]:
        for f in ("ssm_bias", "ssm_out_bias", "ssm_norm", "ssm_inner_norms"):
            if v.get(f):
                raise SymcalcError(f, "applies only to SSM layers (L_ssm)")
    if v.get("conv_bias") and not (has["L_ssm"] or has["L_conv"]):
        raise SymcalcError("conv_bias", "applies only to SSM or short-convolution layers")
    if v.get("attn_gate") and v.get("mla"):
        raise SymcalcError("attn_gate", "is not modelled with multi-head latent attention")


GEMMA3N_SIZES = ("n_alt", "r_laurel", "d_ple", "V_ple", "L_kv_shared", "L_kv_shared_local",
                 "d_ff_sum")


def _check_gemma3n(v: dict[str, Any]) -> None:
    """Rules of Gemma 3n's fields (AltUp, LAuReL, per-layer inputs, KV sharing, per-layer FFN
    widths): decoder stacks only; the per-layer table comes with its width; sharing layers
    leave a layer that computes keys and values, and their sliding ones are sliding layers;
    d_ff_sum is the sum of dense widths of which d_ff is the widest (normalised away when
    every layer has d_ff)."""
    given = [f for f in GEMMA3N_SIZES if v.get(f) is not None]
    if given and v["family"] != "decoder":
        raise SymcalcError(given[0], "applies only to decoder-only stacks")
    if (v.get("d_ple") is None) != (v.get("V_ple") is None):
        if v.get("d_ple") is None:
            raise SymcalcError("V_ple", "applies only with per-layer inputs (d_ple)")
        raise SymcalcError("V_ple", "is required with per-layer inputs (d_ple)")
    shared, shared_local = v.get("L_kv_shared") or 0, v.get("L_kv_shared_local")
    attn = v["L"] if v.get("L_attn") is None else v["L_attn"]
    if shared and shared > attn - 1:
        raise SymcalcError("L_kv_shared", "must leave at least one attention layer that computes "
                                          f"keys and values ({shared} > {attn} - 1)")
    if shared_local:
        if not shared:
            raise SymcalcError("L_kv_shared_local", "needs KV-sharing layers (L_kv_shared)")
        if v.get("W") is None:
            raise SymcalcError("L_kv_shared_local", "needs a sliding window W")
        if shared_local > shared:
            raise SymcalcError("L_kv_shared_local", f"must not exceed L_kv_shared "
                                                    f"({shared_local} > {shared})")
    if shared and v.get("W") is not None:
        local = attn if v.get("L_local") is None else v["L_local"]
        if v.get("L_local") is None and shared_local not in (None, shared):
            raise SymcalcError("L_kv_shared_local", "must equal L_kv_shared when every layer "
                                                    f"slides ({shared_local} != {shared})")
        if (shared_local or 0) > local:
            raise SymcalcError("L_kv_shared_local", f"must not exceed the sliding layers "
                                                    f"L_local ({shared_local} > {local})")
        if shared - (shared_local or 0) > attn - local and v.get("L_local") is not None:
            raise SymcalcError("L_kv_shared_local", "leaves more global sharing layers than "
                                                    f"global layers ({shared - (shared_local or 0)} "
                                                    f"> {attn - local})")
    if v.get("d_ff_sum") is not None:
        if v.get("E") is not None:
            raise SymcalcError("d_ff_sum", "applies only to dense-FFN stacks (no experts E)")
        ffn = v["L"] if v.get("L_ffn") is None else v["L_ffn"]
        low, high = v["d_ff"] + max(ffn - 1, 0), ffn * v["d_ff"]
        if not low <= v["d_ff_sum"] <= high:
            raise SymcalcError("d_ff_sum", f"must be between d_ff + L_ffn - 1 and L_ffn d_ff "
                                           f"(d_ff the widest layer): {low} to {high} "
                                           f"(got {v['d_ff_sum']})")
        if v["d_ff_sum"] == high:
            v["d_ff_sum"] = None  # every layer has d_ff: the closed form keeps L_ffn d_ff


def make_spec(**values: Any) -> Spec:
    """Build a checked :class:`Spec`; derived sizes are filled in."""
    unknown = sorted(set(values) - set(FIELD_NAMES))
    if unknown:
        if unknown[0] in impl.field_names():
            raise SymcalcError(unknown[0], "is an implementation field: give it in the "
                                           "[implementation] table")
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
    for f in COUNT_FIELDS:
        if v.get(f) is not None:
            v[f] = _count(f, v[f])
    got = v.get("implementation")
    if got is not None and not isinstance(got, (dict, impl.Implementation)):
        raise SymcalcError("implementation", f"must be a table of implementation fields "
                                             f"(got {got!r:.60})")
    v["implementation"] = impl.make(got)
    _choice("family", v["family"], FAMILIES)
    _choice("ffn", v.get("ffn", "plain"), FFN_KINDS)
    _choice("norm", v.get("norm", "layernorm"), NORMS)
    _choice("head", v.get("head", "tied"), HEADS)
    _choice("position", v.get("position", "none"), POSITIONS)
    _choice("qk_norm", v.get("qk_norm", "none"), QK_NORMS)
    _choice("linear_attn", v.get("linear_attn", "none"), LINEAR_ATTNS)
    _choice("ssm", v.get("ssm", "none"), SSMS)
    for f in FLAG_FIELDS:
        if f in v and not (f == "ssm_out_bias" and v[f] is None):
            _flag(f, v[f])
    parse_bias(v.get("attention_bias", "none"))

    if v.get("d_h") is None and v.get("mla") and v.get("d_nope") and v.get("d_rope"):
        v["d_h"] = v["d_nope"] + v["d_rope"]  # MLA: the query/key head width
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
    _check_hybrid(v)
    _check_gemma3n(v)
    _check_moe(v)
    _check_mla(v)
    if v.get("L_local") is not None:
        if v.get("W") is None:
            raise SymcalcError("L_local", "needs a sliding window W")
        attn = v["L"] if v.get("L_attn") is None else v["L_attn"]
        if v["L_local"] > attn:
            what = "the layers L" if v.get("L_attn") is None else "the attention layers L_attn"
            raise SymcalcError("L_local", f"must not exceed {what} ({v['L_local']} > {attn})")
    if v.get("qk_norm_bias") and v.get("qk_norm", "none") == "none":
        raise SymcalcError("qk_norm_bias", "needs q/k norms (qk_norm head or all_heads)")
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
    ``gpt2 --set L=24 --set d=1024 --set n_h=16`` is GPT-2 medium). A key may also be an
    implementation field (``--set act=relu``)."""
    base = asdict(spec)
    implementation = spec.implementation.given()
    for key in overrides:
        if key in impl.field_names():
            continue
        if key not in FIELD_NAMES or key == "implementation":
            raise SymcalcError(f"--set {key}", "is not a symcalc spec field "
                               f"(known: {', '.join(f for f in FIELD_NAMES if f != 'implementation')}"
                               f"; implementation: {', '.join(impl.field_names())})")
    spec_overrides = {k: x for k, x in overrides.items() if k not in impl.field_names()}
    implementation.update({k: x for k, x in overrides.items() if k in impl.field_names()})
    base.update(spec_overrides)
    base["implementation"] = implementation
    new_d = spec_overrides.get("d")
    if "d_ff" not in overrides and spec.d_ff == 4 * spec.d and type(new_d) is int and new_d > 0:
        base["d_ff"] = 4 * new_d
    if "d" in overrides or "n_h" in overrides:
        if "d_h" not in overrides and spec.d_h == spec.d // spec.n_h and spec.d % spec.n_h == 0:
            base["d_h"] = None  # keep d_h = d / n_h when it was derived
    if "n_h" in overrides and "n_kv" not in overrides and spec.n_kv == spec.n_h:
        base["n_kv"] = None
    return make_spec(**base)


def coerce_text(key: str, text: str) -> Any:
    """Turn the text of ``--set key=value`` into the field's type: sizes and counts are
    integers (:func:`parse_int`), switches true/false (also yes/no, on/off, 1/0), an
    implementation field as it takes it, and every other field -- a name, a source, a
    choice -- is the text as typed, whatever it looks like."""
    if key in SIZE_FIELDS or key in COUNT_FIELDS:
        return parse_int(f"--set {key}", text, zero=True)  # make_spec refuses 0 for a size
    if key in FLAG_FIELDS:
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        raise SymcalcError(f"--set {key}", f"must be true or false (got {text!r:.60})")
    if key in impl.field_names():
        return impl.coerce_text(key, text)
    return text


def switch_values(spec: Spec) -> dict[str, int]:
    """The 0/1 indicator for every structural switch symbol of :mod:`symcalc.algebra.symbols`."""
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
        "sw_router_bias": int(spec.moe and spec.router_bias),
        # ffn_bias: the dense FFN and shared experts (DeepSeek-V2 mlp_bias); expert_bias: the
        # routed experts (GPT-OSS)
        "sw_expert_bias": int(spec.moe and spec.expert_bias),
        "sw_shared": int(spec.moe and spec.E_s is not None),
        "sw_shared_gate": int(spec.moe and spec.E_s is not None and spec.shared_gate),
        "sw_moe_width": int(spec.moe and spec.d_moe is not None),
        "sw_sh_width": int(spec.moe and spec.d_sh is not None),
        "sw_mla": int(spec.mla),
        "sw_q_lora": int(spec.mla and spec.r_q is not None),
        "sw_qk_head": int(spec.qk_norm == "head"),
        "sw_qk_all": int(spec.qk_norm == "all_heads"),
        "sw_qk_bias": int(spec.qk_norm != "none" and spec.qk_norm_bias),
        "sw_norm_attn_in": int(spec.norm_attn_in),
        "sw_norm_ffn_in": int(spec.norm_ffn_in),
        "sw_norm_attn_out": int(spec.norm_attn_out),
        "sw_norm_ffn_out": int(spec.norm_ffn_out),
        "sw_sinks": int(spec.sinks),
        "sw_proj_emb": int(spec.projected_embedding),
        "sw_window": int(spec.W is not None and spec.family != "encoder"),
        "sw_window_all": int(spec.W is not None and spec.L_local is None),
        "sw_attn_gate": int(spec.attn_gate),
        "sw_gdn": int(spec.linear_attn == "gated_deltanet"),
        "sw_mamba1": int(spec.ssm == "mamba"),
        "sw_ssm_bias": int(spec.ssm_bias),
        "sw_ssm_out_bias": int(spec.ssm_bias if spec.ssm_out_bias is None else spec.ssm_out_bias),
        "sw_conv_bias": int(spec.conv_bias),
        "sw_ssm_norm": int(spec.ssm_norm),
        "sw_ssm_inner": int(spec.ssm_inner_norms),
        "sw_altup": int(spec.n_alt is not None),
        "sw_laurel": int(spec.r_laurel is not None),
        "sw_ple": int(spec.d_ple is not None),
        "sw_ff_sum": int(spec.d_ff_sum is not None),
    }


def layer_views(prefixes, spec: Spec) -> list[str]:
    """The per-layer views of ``prefixes`` that apply to ``spec``: ``dense_layer`` only for
    an MoE stack that has dense layers (shared by the sympy and the generated reports)."""
    keep = {"dense_layer": bool(spec.moe and spec.dense_layers),
            "linear_mixer": bool(spec.L_lin), "ssm_mixer": bool(spec.L_ssm),
            "conv_mixer": bool(spec.L_conv)}
    return [p for p in prefixes if keep.get(p, True)]


def size_values(spec: Spec) -> dict[str, int]:
    """Values for every size symbol of the spec's shape; sizes that do not apply get 1
    (they only ever appear multiplied by a switch that is off)."""
    out = {name: 1 for name in ("V", "P", "T", "E", "k", "R", "E_s", "r_q", "r_kv", "d_nope",
                                "d_rope", "d_v", "n_lk", "n_lv", "d_lk", "d_lv", "K_conv",
                                "d_in", "N_s", "G_s", "H_s", "R_dt", "n_alt", "r_laurel",
                                "d_ple", "V_ple", "d_ff_sum")}
    out["Q_c"] = spec.Q_c or CHUNK
    out.update(spec.sizes())
    out.pop("W", None)
    out["d_moe"] = spec.d_moe or 1  # used only when sw_moe_width is on
    out["d_sh"] = spec.d_sh or 1
    out["d_emb"] = spec.d_emb or spec.d
    out["L_dense"] = spec.dense_layers
    out["L_local"] = spec.L_local or 0
    out["L_attn"] = spec.attention_layers
    out["L_ffn"] = spec.ffn_layers
    for f in ("L_lin", "L_ssm", "L_conv", "L_kv_shared", "L_kv_shared_local"):
        out[f] = getattr(spec, f) or 0
    if spec.shape == "single":
        out.pop("L_dec", None)
    return out

"""What an implementation keeps for backward, as plain facts (no sympy: the quick path reads
them too). :mod:`symcalc.algebra.activations` turns them into saved-tensor terms.

A spec carries four fields for this: ``impl`` (the transformers ``model_type`` whose eager code
runs; empty for a hand-written spec), ``act`` (the FFN activation as transformers names it),
``dropout_attn`` and ``dropout_hidden`` (a nonzero dropout probability on the attention
probabilities and on the sublayer outputs). :func:`config_fields` reads them from a
config.json; the facts below follow from them.
"""
from __future__ import annotations

from typing import Any

ACTIVATION_MODELS = ("paper", "eager", "sdpa")
DEFAULT_ACTIVATIONS = "paper"

# transformers 5.24 implementations whose eager attention runs softmax in the model dtype
# (everything else that uses the shared eager_attention_forward upcasts it to float32)
SOFTMAX_IN_MODEL_DTYPE = frozenset({"gpt2", "bert", "t5", "roberta", "distilbert", "mt5",
                                    "falcon",  # F.softmax(..., dtype=hidden_states.dtype)
                                    "gpt_oss", "llama4_text"})  # gpt-oss: softmax over scores and sinks
# T5's LayerNorm multiplies the 16-bit input by the float32 reciprocal root, so it keeps the
# 16-bit input besides its float32 copy
T5_NORM = frozenset({"t5", "mt5"})
# RMSNorms that multiply their weight in float32 before casting back ((w * x).to(dtype)), so
# the normalized values the weight multiplies stay float32 (OLMo-2, OLMo-3)
NORM_WEIGHT_FP32 = frozenset({"olmo2", "olmo3", "gpt_oss", "nemotron_h", "gemma3n_text"})
# RMSNorms that cast their weight to float32 first ((w.to(float32) * x).to(dtype): Nemotron-H):
# a 16-bit model keeps that float32 copy of the weight, one per call
NORM_WEIGHT_CAST32 = frozenset({"nemotron_h", "gemma3n_text"})
# Gemma 3n: its RMSNorm takes pow(mean square + eps, -0.5), keeping the mean square and the
# root; AltUp, LAuReL and the per-layer inputs around every layer (saved_gemma3n)
GEMMA3N = frozenset({"gemma3n_text"})
# Gemma's RMSNorm computes x_hat (1 + w) in float32: the normalized values stay float32 and
# each call keeps 1 + w, a float32 vector of the norm's width
GEMMA_NORM = frozenset({"gemma", "gemma2", "gemma3_text",
                        # Qwen3-Next and Qwen3.5 write the same norm (zero-initialised w)
                        "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"})
# Gated DeltaNet with one fused q/k/v/z projection (Qwen3-Next): with as many key as value
# heads, z is a view of that projection, which float32 SiLU keeps whole (Qwen3.5 projects z
# alone)
GDN_FUSED_QKVZ = frozenset({"qwen3_next"})
# Cohere's LayerNorm written out in float32 without bias: it keeps x - mean twice (two
# subtractions), the reciprocal root, the float32 normalized values and, at 16 bits, the
# float32 copy of its weight; its q/k norms normalize each head (weight n_h x d_h)
LAYERNORM_FP32 = frozenset({"cohere", "cohere2"})
# transformers 5.24 config defaults of attn_logit_softcapping where set (else None)
SOFTCAP_DEFAULTS = {"gemma2": 50.0}
# sliding layers rotate by their own cos/sin table (local rope_theta), the others by the global
ROPE_LOCAL_TABLE = frozenset({"gemma3_text", "gemma3n_text",
                              # OLMo-3 builds one table per layer type present in layer_types
                              "olmo3"})
# rotary tables left in float32 whatever the model's dtype (OLMo-2/3's rotary embedding does not
# cast cos and sin back; the product with them casts to Q's dtype)
ROPE_TABLE_FP32 = frozenset({"olmo2", "olmo3"})
# T5 applies its dropout inside the FFN too, between the activation and the output matrix
DROPOUT_INSIDE_FFN = frozenset({"t5", "mt5"})
# OPT's norms without elementwise affine (norm "none": no parameters) still run LayerNorm
LAYERNORM_WITHOUT_PARAMS = frozenset({"opt"})
# Parallel blocks, and where their attention's output is dropped (transformers 5.24):
# GPT-J, GPT-NeoX and Phi drop attention's and the FFN's outputs apart (two masks); Falcon
# adds them and drops the sum once (its FFN's mask, by hidden_dropout). Sequential Falcon drops
# attention's output by attention_dropout; StableLM never drops attention's output.
ATTN_OUT_DROPOUT_NONE = frozenset({"stablelm"})
ATTN_OUT_DROPOUT_BY_ATTENTION = frozenset({"falcon"})  # sequential blocks; none when parallel
# Falcon drops its attention probabilities only on the ALiBi path (none with rotary)
PROB_DROPOUT_ONLY_WITH_ALIBI = frozenset({"falcon"})
# GPT-J's eager attention casts Q and K to float32 for the score product (both kept float32)
# and rebuilds its interleaved sin/cos tables in every layer (repeat_interleave for Q and for
# K: four tables of s x rotary_dim, position ids of batch 1)
QK_FP32 = frozenset({"gptj"})
ROTARY_TABLES_PER_LAYER = frozenset({"gptj"})
# GLM-4 rebuilds cos and sin in every layer too (repeat_interleave of their first half), one
# pair for Q and K, each 2 ceil(rotary_dim / 2) wide: counted as GPT-J's four tables of half
# that width (rotary_dim = head_dim x partial_rotary_factor, default 0.5)
ROTARY_PAIR_PER_LAYER = {"glm4": 0.5}
# Queries multiplied in every layer by a scale per position, 1 + beta log(1 + floor(pos / n))
# (Ministral 3's llama_4_scaling_beta, applied whatever beta is): the product keeps the scale
QUERY_POSITION_SCALE = frozenset({"ministral3"})
# Partial rotary positions joined by cat (GPT-NeoX, Phi, StableLM): the query is built
# (b, n_h, s, d_h) contiguous, so is the sdpa kernel's output, and o_proj's input is a copy
# (GPT-J transposes after its cat, Llama-style rotary keeps the projection's layout)
ROTARY_CAT_HEADS_FIRST = frozenset({"gpt_neox", "phi", "stablelm", "glm4", "phi3", "glm4_moe",
                                    "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"})
# q/k norms over all heads that normalize each head apart (StableLM: one LayerNorm per head)
QK_NORM_PER_HEAD = frozenset({"stablelm"})
# Hybrids whose Mamba-2 runs beside attention on the same normed input (Falcon-H1: one norm
# before both mixers, their outputs summed)
SSM_BESIDE_ATTENTION = frozenset({"falcon_h1"})
# Stacks of single-purpose blocks, each behind its own norm (Nemotron-H: the FFN and MoE
# blocks have one too, though no FFN follows attention)
BLOCK_NORMS = frozenset({"nemotron_h"})

# MoE routers (transformers 5.24). Routers that cast their input and weight to float32 for
# the router matmul (in a 16-bit model both copies are kept):
ROUTER_FP32 = frozenset({"deepseek_v2", "deepseek_v3", "glm4_moe", "dots1", "ernie4_5_moe",
                         "nemotron_h", "kimi_linear"})
# MoE blocks that always run their shared MLP, zero wide when the config has no shared expert
# (its input projection still keeps the block's input)
SHARED_MLP_ALWAYS = frozenset({"deepseek_v2", "deepseek_v3", "glm4_moe", "dots1", "kimi_linear"})
# Group-limited routers: model_type -> (int64 indices kept per group when scoring the groups,
# the class defaults of n_group, topk_group and norm_topk_prob). DeepSeek-V3's sigmoid router
# scores a group by its top-2 experts (topk(2) keeps 2 indices per group); DeepSeek-V2's
# group_limited_greedy by its best expert (max keeps 1); both keep topk_group group indices
# and the boolean expert mask. DeepSeek-V2 never renormalises its top-k weights.
GROUP_ROUTERS = {"deepseek_v3": (2, 8, 4, True), "glm4_moe": (2, 1, 1, True),
                 "dots1": (2, 1, 1, False), "deepseek_v2": (1, None, None, False),
                 "nemotron_h": (2, 1, 1, True), "kimi_linear": (2, 1, 1, True)}
# config.json keys a group router's config class maps onto n_group / norm_topk_prob
# (Kimi-Linear's hub config writes num_expert_group and moe_renormalize)
GROUP_ROUTER_ALIASES = {"kimi_linear": {"n_group": "num_expert_group",
                                        "norm_topk_prob": "moe_renormalize"}}
# Routers that renormalise by a clamped sum (ERNIE 4.5: the sum and its clamp are both kept)
ROUTER_CLAMPED_SUM = frozenset({"ernie4_5_moe"})
# Rotary tables an implementation rebuilds in every layer, float32, s x d_h each (ERNIE 4.5
# interleaves cos and sin again inside apply_rotary_pos_emb; the products keep them)
ROPE_TABLES_PER_LAYER = {"ernie4_5_moe": 2}
# Routers whose top-k weights reach the experts in the model's dtype (else float32)
ROUTING_WEIGHTS_IN_MODEL_DTYPE = frozenset({"hunyuan_v1_moe", "ernie4_5_moe", "qwen3_next",
                                            "qwen3_5_moe_text", "qwen2_moe",
                                            "qwen3_moe", "olmoe", "granitemoe", "phimoe",
                                            "gpt_oss", "dbrx", "llama4_text",
                                            "granitemoehybrid", "jamba"})
# Routers that renormalise their top-k weights only under the config's norm_topk_prob:
# model_type -> its class default
NORM_TOPK_DEFAULTS = {"qwen2_moe": False, "qwen3_moe": False, "olmoe": False}
# Routers that never renormalise their top-k softmax weights, whatever the config (Jamba)
ROUTER_NO_RENORM = frozenset({"jamba"})
# Routers that take the top k of the logits and a softmax over those k (GraniteMoE): no
# softmax over all experts is kept, the k float32 weights are (by their softmax), no sum
ROUTER_TOPK_SOFTMAX = frozenset({"granitemoe", "gpt_oss", "granitemoehybrid"})
# Routers whose probabilities (softmax over the experts or over the top k, and the
# renormalisation's sum) are in the model's dtype, not float32 (gpt-oss, DBRX)
ROUTER_IN_MODEL_DTYPE = frozenset({"gpt_oss", "dbrx"})
# Experts that loop over the experts a token picked (DBRX: torch.where's (n, 2) int64 indices
# per expert, gate and up as two matmuls, index_add_ of the weighted outputs, which it
# keeps), not transformers' grouped_mm (sort, offsets, scatter back)
EXPERTS_LOOP = frozenset({"dbrx"})
# gpt-oss's clamped SwiGLU on interleaved gate/up: clamp(gate) * sigmoid(alpha gate) *
# (clamp(up) + 1) keeps the sigmoid, the clamped gate, up + 1 and the glu besides the product
GLU_CLAMPED = frozenset({"gpt_oss"})
# MoE blocks whose eager forward runs every expert on every token (Llama 4: the input repeated
# E times, each copy multiplied by its sigmoid score, zero off the top k, then batched
# matmuls): the experts' tensors cover E b s rows, not the k b s routed pairs
EXPERTS_ALL = frozenset({"llama4_text"})
# One fused q/k/v projection whose V is a view of it (DBRX's Wqkv, split after the clamp):
# where neither repeat_kv (n_kv = n_h, or one KV head at batch 1) nor the V product (batch 1
# or one head) copies it, and in the fused kernel, the whole q/k/v output is kept
FUSED_QKV_V_VIEW = frozenset({"dbrx", "phi3"})  # Phi-3: V sliced from qkv_proj's output
# Queries left head-major contiguous before the fused kernel (MiniMax-M2's rotary ends in a
# torch.cat): the kernel's output is head-major too, so the output projection's input is a
# transposed copy of it, kept besides the kernel's own
SDPA_OUTPUT_COPY = frozenset({"minimax_m2"})
# PhiMoE's sparsemixer: two picks per token (Gumbel sampling in training), each keeping a
# boolean mask and a softmax over the experts, two int64 indices and its multiplier
SPARSEMIXER = frozenset({"phimoe"})
# MoE blocks whose input is multiplied in place by uniform noise in training when the
# config's jitter is nonzero: model_type -> (config key, how many times the noise multiplies)
INPUT_JITTER = {"mixtral": ("router_jitter_noise", 1), "phimoe": ("input_jitter_noise", 2),
                "dbrx": ("moe_jitter_eps", 1)}  # DBRX: whenever ffn_config sets it (0.0 too)

# Activation functions by what their backward needs: the input (torch's gelu, silu), the
# output (relu), or four intermediates of the tanh formula written out in Python
# (transformers' NewGELUActivation: x, tanh(...), 0.5 x and 1 + tanh(...)).
ACT_SAVES_INPUT = frozenset({"gelu", "silu", "swish", "gelu_pytorch_tanh", "gelu_python", "",
                             "quick_gelu_torch"})
ACT_SAVES_OUTPUT = frozenset({"relu"})
ACT_TANH_FORMULA = frozenset({"gelu_new", "gelu_fast", "gelu_accurate"})
ACTS = ACT_SAVES_INPUT | ACT_SAVES_OUTPUT | ACT_TANH_FORMULA

# Config keys, first present wins, and the config class's default when none is present.
ACT_KEYS = ("hidden_act", "activation_function", "hidden_activation")
ATTN_DROPOUT_KEYS = ("attention_dropout", "attn_pdrop", "attention_probs_dropout_prob",
                     "dropout_rate")
HIDDEN_DROPOUT_KEYS = ("resid_pdrop", "hidden_dropout_prob", "hidden_dropout", "dropout_rate",
                       "residual_dropout")
# transformers 5.24 config defaults of the dropout probabilities (attention, hidden) where
# nonzero; every other family defaults to 0.0
DROPOUT_DEFAULTS = {"gpt2": (0.1, 0.1), "bert": (0.1, 0.1), "t5": (0.1, 0.1), "mt5": (0.1, 0.1),
                    # families whose layers drop their sublayer outputs when the config says
                    # so (listed to read the hidden key; OPT's dropout defaults to 0.1)
                    "opt": (0.0, 0.1), "falcon": (0.0, 0.0), "gptj": (0.0, 0.0),
                    "gpt_neox": (0.0, 0.0), "phi": (0.0, 0.0), "stablelm": (0.0, 0.0),
                    "mpt": (0.0, 0.0),
                    # residual_dropout after o_proj and down_proj (Seed-OSS defaults 0.1),
                    # resid_pdrop (Phi-3), hidden_dropout (BLOOM)
                    "seed_oss": (0.1, 0.1), "starcoder2": (0.0, 0.0), "phi3": (0.0, 0.0),
                    "bloom": (0.0, 0.0)}
# Config keys of families that name them otherwise: model_type -> (attention dropout key,
# hidden dropout key); a dotted key is read inside a nested config (MPT's attn_config.attn_pdrop
# drops the probabilities, attention's output and the FFN's output alike)
DROPOUT_KEYS_OF = {"opt": ("attention_dropout", "dropout"),
                   "mpt": ("attn_config.attn_pdrop", "attn_config.attn_pdrop")}
# Activation key of families that name it otherwise, or the activation they hard-code
ACT_KEY_OF = {"falcon": "activation"}
ACT_FIXED = {"mpt": "gelu"}  # MptMLP: nn.GELU(approximate="none") whatever the config says
ACT_DEFAULTS = {"gpt2": "gelu_new", "bert": "gelu", "t5": "relu", "mt5": "gelu_new",
                "gemma": "gelu_pytorch_tanh", "gemma2": "gelu_pytorch_tanh",
                "gemma3_text": "gelu_pytorch_tanh", "opt": "relu", "falcon": "gelu",
                "gptj": "gelu_new", "gpt_neox": "gelu", "phi": "gelu_new"}


def _first(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if data.get(key) is not None:
            return data[key]
    return None


def config_fields(model_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """``impl``, ``act``, ``dropout_attn`` and ``dropout_hidden`` of a config.json (keys
    missing from it take the config class's defaults)."""
    act = _first(data, (ACT_KEY_OF[model_type],) if model_type in ACT_KEY_OF else ACT_KEYS)
    act = ACT_FIXED.get(model_type, act)
    if model_type in T5_NORM:  # feed_forward_proj: "relu", "gated-gelu" (gelu_new)
        proj = str(data.get("feed_forward_proj") or "relu")
        act = proj.split("-")[-1]
        act = "gelu_new" if act == "gelu" else act
    if not isinstance(act, str):
        act = ACT_DEFAULTS.get(model_type, "silu")
    attn_default, hidden_default = DROPOUT_DEFAULTS.get(model_type, (0.0, 0.0))
    p_attn = _first(data, ATTN_DROPOUT_KEYS)
    p_hidden = _first(data, HIDDEN_DROPOUT_KEYS)
    if model_type in DROPOUT_KEYS_OF:
        p_attn, p_hidden = (_dotted(data, key) for key in DROPOUT_KEYS_OF[model_type])
    if model_type in T5_NORM or model_type == "bert":
        p_hidden = p_hidden if p_hidden is not None else hidden_default
    return {
        "impl": model_type,
        "act": act if act in ACTS else "",
        "dropout_attn": _positive(p_attn, attn_default),
        "dropout_hidden": _positive(p_hidden, hidden_default) if model_type in DROPOUT_DEFAULTS else False,
        "softcap": _positive(data.get("attn_logit_softcapping", SOFTCAP_DEFAULTS.get(model_type)), 0.0),
        "bidirectional": data.get("use_bidirectional_attention") is True,
        **router_fields(model_type, data),
        **layout_fields(model_type, data),
    }


def _dotted(data: dict[str, Any], key: str) -> Any:
    """``data[key]``, where ``a.b`` reads ``b`` inside the nested dict ``a`` (None if absent)."""
    for part in key.split(".")[:-1]:
        data = data.get(part) if isinstance(data.get(part), dict) else {}
    return data.get(key.split(".")[-1])


def layout_fields(model_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """Layout details that change what a layer keeps and that the parameter fields do not
    carry: ``fused_qkv`` (the layout of a fused q/k/v projection the heads are views of:
    Falcon's "grouped" under new_decoder_architecture, "mqa" under multi_query, else "mha",
    as GPT-NeoX's),
    ``rotary_tables`` (GPT-J rebuilds its sin/cos tables in every layer, rotary_dim wide)
    and ``clip_qkv`` (MPT clamps its fused q/k/v output when attn_config.clip_qkv is set)."""
    out: dict[str, Any] = {}
    if model_type == "falcon":
        out["fused_qkv"] = ("grouped" if data.get("new_decoder_architecture")
                            else "mqa" if data.get("multi_query") else "mha")
    if model_type == "gpt_neox":
        out["fused_qkv"] = "mha"
    if model_type in ROTARY_TABLES_PER_LAYER:
        width = data.get("rotary_dim") or data.get("hidden_size") or data.get("n_embd")
        out["rotary_tables"] = width if isinstance(width, int) and not isinstance(width, bool) else 0
    if model_type in ROTARY_PAIR_PER_LAYER:
        rope = data.get("rope_parameters") if isinstance(data.get("rope_parameters"), dict) else {}
        factor = rope.get("partial_rotary_factor", data.get("partial_rotary_factor"))
        factor = ROTARY_PAIR_PER_LAYER[model_type] if factor is None else factor
        heads = data.get("num_attention_heads")
        head_dim = data.get("head_dim") or (data.get("hidden_size") // heads
                                            if isinstance(heads, int) and heads > 0 else 0)
        try:
            out["rotary_tables"] = (int(int(head_dim) * float(factor)) + 1) // 2
        except (TypeError, ValueError):
            out["rotary_tables"] = 0
    if model_type == "mpt":
        out["clip_qkv"] = bool(_dotted(data, "attn_config.clip_qkv"))
    return out


def llama4_layer_counts(data: dict[str, Any]) -> dict[str, int]:
    """Llama 4's ``qk_l2_layers`` (rotary layers with the L2 q/k norm, use_qk_norm) and
    ``temp_layers`` (NoPE layers with attention temperature tuning), from no_rope_layers or,
    when absent or empty, every no_rope_layer_interval-th layer without rotary positions
    (Llama4TextConfig.__post_init__)."""
    n = data.get("num_hidden_layers")
    interval = data.get("no_rope_layer_interval") or 4
    if not isinstance(n, int) or isinstance(n, bool) or n < 0 or not isinstance(interval, int):
        return {}
    rope = data.get("no_rope_layers")
    if not isinstance(rope, list) or not rope:
        rope = [int((i + 1) % interval != 0) for i in range(n)]
    rotary = sum(1 for x in rope[:n] if x)
    qk = data.get("use_qk_norm", True)
    temp = data.get("attn_temperature_tuning", True)
    return {"qk_l2_layers": rotary if qk else 0, "temp_layers": (n - rotary) if temp else 0}


def router_fields(model_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """``router_groups``, ``router_topk_groups`` and ``router_norm`` of a group-limited
    router's config (:data:`GROUP_ROUTERS`; nothing for other routers); ``router_norm``
    also where norm_topk_prob decides (:data:`NORM_TOPK_DEFAULTS`; never for GraniteMoE's
    and PhiMoE's routers), ``moe_jitter`` where the block multiplies its input by noise in
    training (:data:`INPUT_JITTER`)."""
    out: dict[str, Any] = {}
    if model_type in INPUT_JITTER:
        out["moe_jitter"] = _positive(data.get(INPUT_JITTER[model_type][0]), 0.0)
    if model_type == "llama4_text":
        out.update(router_norm=False, **llama4_layer_counts(data))
    if model_type == "dbrx":  # nested sub-configs; jitter and normalisation unless None
        ffn = data.get("ffn_config") if isinstance(data.get("ffn_config"), dict) else {}
        attn = data.get("attn_config") if isinstance(data.get("attn_config"), dict) else {}
        out["moe_jitter"] = ffn.get("moe_jitter_eps") is not None
        out["router_norm"] = ffn.get("moe_normalize_expert_weights", 1.0) is not None
        out["clip_qkv"] = attn.get("clip_qkv") is not None
    if model_type == "olmoe":  # clamps q and k after their norms and v, in place
        out["clip_qkv"] = data.get("clip_qkv") is not None
    if model_type in NORM_TOPK_DEFAULTS:
        norm = data.get("norm_topk_prob")
        out["router_norm"] = bool(NORM_TOPK_DEFAULTS[model_type] if norm is None else norm)
    if model_type in ROUTER_TOPK_SOFTMAX | SPARSEMIXER | ROUTER_NO_RENORM:
        out["router_norm"] = False
    if model_type not in GROUP_ROUTERS:
        return out
    _, groups, topk_groups, norm = GROUP_ROUTERS[model_type]
    data = {**{key: data[alias] for key, alias in GROUP_ROUTER_ALIASES.get(model_type, {}).items()
               if alias in data}, **data}
    groups = data.get("n_group", groups)
    topk_groups = data.get("topk_group", topk_groups)
    if model_type == "deepseek_v2":  # groups only under topk_method group_limited_greedy
        norm = False
        if (data.get("topk_method") or "greedy") != "group_limited_greedy":
            groups = topk_groups = 0
    else:
        norm = data.get("norm_topk_prob", norm)
    ok = all(isinstance(x, int) and not isinstance(x, bool) and x >= 0
             for x in (groups, topk_groups))
    return {**out, "router_groups": groups if ok else 0,
            "router_topk_groups": topk_groups if ok else 0, "router_norm": bool(norm)}


def _positive(value: Any, default: float) -> bool:
    value = default if value is None else value
    try:
        return float(value) > 0
    except (TypeError, ValueError):
        return False


def activation_width(dtype: str) -> int:
    """Bytes of one activation element: 4 when the model runs in float32, else 2 (fp16, bf16,
    and the 16-bit compute of a quantized checkpoint)."""
    return 4 if str(dtype).strip().lower() in ("fp32", "float32") else 2


def facts(spec, dtype: str, batch: int = 2) -> dict[str, int]:
    """The implementation facts of a spec's eager code at activation dtype ``dtype`` and
    ``batch`` sequences, each a small non-negative int (:data:`FACT_MEANINGS`)."""
    impl, act = spec.impl, spec.act
    width = activation_width(dtype)
    f32 = width == 4
    # T5's scale-only norm is an RMSNorm in float32 whatever the spec calls it
    rms = spec.norm == "rmsnorm" or impl in T5_NORM
    layernorm = (spec.norm in ("layernorm", "layernorm_nobias")
                 or spec.norm == "none" and impl in LAYERNORM_WITHOUT_PARAMS) and not rms
    ln32 = layernorm and impl in LAYERNORM_FP32
    soft32 = impl not in SOFTMAX_IN_MODEL_DTYPE
    drop_attn, drop_hidden = bool(spec.dropout_attn), bool(spec.dropout_hidden)
    drop_ffn = drop_hidden and impl in DROPOUT_INSIDE_FFN
    # the attention dropout on the probabilities (Falcon: only on its ALiBi path) and the
    # dropout of attention's output (ATTN_OUT_DROPOUT_*: hidden dropout unless listed)
    drop_probs = drop_attn and not (impl in PROB_DROPOUT_ONLY_WITH_ALIBI
                                    and spec.position == "rotary")
    drop_out = (False if impl in ATTN_OUT_DROPOUT_NONE
                else drop_attn and not spec.parallel if impl in ATTN_OUT_DROPOUT_BY_ATTENTION
                else drop_hidden)
    act_out = act in ACT_SAVES_OUTPUT
    gated = spec.ffn == "gated"
    return {
        "ac_width": width,
        "ac_ln": int(layernorm and not ln32),
        "ac_ln32": int(ln32),
        "ac_rms32": int(rms),
        "ac_t5_16": int(rms and impl in T5_NORM and not f32),
        "ac_norm_w32": int(rms and impl in NORM_WEIGHT_FP32 | GEMMA_NORM or ln32),
        "ac_norm_wcopy": int(rms and impl in GEMMA_NORM
                             or (ln32 or rms and impl in NORM_WEIGHT_CAST32) and not f32),
        "ac_qk_head_stats": int(ln32 or impl in QK_NORM_PER_HEAD),
        "ac_softcap": int(bool(spec.softcap)),
        "ac_rms_pow": int(rms and impl in GEMMA3N),
        "ac_g3n": int(impl in GEMMA3N),
        # sdpa: a layer with a mask (sliding with s >= W, every layer when bidirectional) gets
        # repeat_kv's keys and values, a copy unless one KV head expands as a view
        "ac_bidir": int(bool(spec.bidirectional)),
        "ac_sdpa_kv_copy": int(spec.n_kv != 1),
        "ac_rope_local": int(impl in ROPE_LOCAL_TABLE and spec.position == "rotary"),
        "ac_rope_bytes": 4 if impl in ROPE_TABLE_FP32 else width,
        # a parallel block with one norm: the FFN reads the very tensor attention reads
        "ac_parallel_in": int(spec.parallel and not spec.norm_ffn_in),
        # a parallel block with two norms: both norms read the block's input (kept once)
        "ac_parallel_norms": int(spec.parallel and spec.norm_ffn_in),
        "ac_qk32": int(impl in QK_FP32),
        "ac_sdpa_out_copy": int(impl in ROTARY_CAT_HEADS_FIRST and spec.n_h > 1),
        "ac_q_pos_scale": int(impl in QUERY_POSITION_SCALE),
        "ac_rot_tables": (spec.rotary_tables if impl in ROTARY_TABLES_PER_LAYER
                          or impl in ROTARY_PAIR_PER_LAYER else 0),
        "ac_kv_gather": 2 * int(spec.fused_qkv in ("mqa", "grouped")),
        **fused_qkv_facts(spec, batch),
        "ac_drop_attn_out": int(drop_out),
        "ac_soft_bytes": 4 if soft32 else width,
        "ac_cast": int(soft32 and not f32 and not drop_probs),
        "ac_drop_attn": int(drop_probs),
        "ac_drop_hidden": int(drop_hidden),
        "ac_drop_ffn": int(drop_ffn),
        "ac_act_in": int(not act_out),
        "ac_act_tanh": int(act in ACT_TANH_FORMULA),
        "ac_act_kept": int(act_out or gated or not drop_ffn),
        "ac_prod": int(gated and not drop_ffn),
        # repeat_kv of a single key/value head is a stride-0 view, and at batch 1 the score
        # and value products fold it without copying: K and V stay one head wide
        "ac_kv_rep": int(not (spec.n_kv == 1 and batch == 1)),
        # (and the V product folds batch and heads without a copy: batch 1 or one head)
        "ac_v_qkv": int(impl in FUSED_QKV_V_VIEW and ((spec.n_kv or spec.n_h) == spec.n_h
                                                       or spec.n_kv == 1 and batch == 1)
                        and (batch == 1 or spec.n_h == 1)),
        "ac_fused_qkv": int(impl in FUSED_QKV_V_VIEW),
        "ac_sdpa_o_copy": int(impl in SDPA_OUTPUT_COPY),
        # MLA's V is a slice of the key/value up-projection; at batch 1 or with one head the
        # V product folds it without a copy and keeps the whole projection (d_nope + d_v)
        "ac_mla_v_view": int(bool(spec.mla) and (batch == 1 or spec.n_h == 1)),
        "ac_rope_tables": ROPE_TABLES_PER_LAYER.get(impl, 0),
        # one sequence: the Mamba-2 scan's einsums read B and C in place (with one chunk)
        "ac_b1": int(batch == 1),
        "ac_ssm_beside_attn": int(impl in SSM_BESIDE_ATTENTION),
        "ac_block_norm": int(impl in BLOCK_NORMS),
        "ac_gdn_zview": int(f32 and impl in GDN_FUSED_QKVZ and spec.n_lk is not None
                            and spec.n_lk == spec.n_lv),
        # float32 q and k reach the chunked kernel as views of the conv's output (.to(float32)
        # copies nothing; with n_lk < n_lv repeat_interleave copies them)
        "ac_lin_qkview": int(f32 and spec.n_lk is not None and spec.n_lk == spec.n_lv),
        **router_facts(spec, f32, width),
    }


def fused_qkv_facts(spec, batch: int) -> dict[str, int]:
    """Views of a fused q/k/v projection (``spec.fused_qkv``: Falcon, GPT-NeoX). The score
    and value products fold batch and heads into one dimension; at batch 1 or with one head that needs
    no copy, so a tensor that is still a view of the projection keeps all of it: V under
    rotary positions in the "mha" layout, Q under ALiBi in the "mqa" layout and in the
    "grouped" one when its heads need no copy (one key/value head, or one query per group).
    In the "grouped" layout the rotary positions turn K, broadcast to the query heads, into
    a full n_h heads even where repeating it costs nothing (one key/value head at batch 1)."""
    layout, rotary = spec.fused_qkv, spec.position == "rotary"
    fold = batch == 1 or spec.n_h == 1
    n_kv = spec.n_kv or spec.n_h
    q_view = (layout == "mqa" or layout == "grouped" and (n_kv == 1 or n_kv == spec.n_h))
    view = fold and (layout == "mha" and rotary or q_view and not rotary)
    return {"ac_fused_view": int(view),
            # sdpa reads V as it is: in the "mha" layout a view of the whole projection
            "ac_sdpa_fused_view": int(layout == "mha"),
            "ac_k_bcast": int(layout == "grouped" and rotary and n_kv == 1 and batch == 1)}


def router_facts(spec, f32: bool, width: int) -> dict[str, int]:
    """What the MoE router keeps (:data:`ROUTER_FP32` ... :data:`ROUTING_WEIGHTS_IN_MODEL_DTYPE`)."""
    impl = spec.impl
    r32 = impl in ROUTER_FP32
    shared_module = spec.E_s is not None or impl in SHARED_MLP_ALWAYS
    per_group = GROUP_ROUTERS.get(impl, (0,))[0]
    groups = spec.router_groups if per_group else 0
    norm = int(bool(spec.router_norm))
    return {
        "ac_f32": int(f32),
        "ac_router32": int(r32),
        "ac_moe_in": int(not r32 or f32 or shared_module),
        "ac_group_idx": per_group * groups + (spec.router_topk_groups if groups else 0),
        "ac_group_mask": int(groups > 0),
        "ac_topk_norm": int(norm or impl in ROUTER_TOPK_SOFTMAX),
        "ac_topk_sums": norm * (2 if impl in ROUTER_CLAMPED_SUM else 1),
        "ac_rw_bytes": width if impl in ROUTING_WEIGHTS_IN_MODEL_DTYPE else 4,
        "ac_router_probs": int(impl not in ROUTER_TOPK_SOFTMAX | SPARSEMIXER),
        "ac_sparsemixer": int(impl in SPARSEMIXER),
        "ac_jitter": INPUT_JITTER.get(impl, ("", 0))[1] * int(bool(spec.moe_jitter)),
        "ac_router_bytes": width if impl in ROUTER_IN_MODEL_DTYPE else 4,
        "ac_moe_loop": int(impl in EXPERTS_LOOP),
        "ac_glu_clamp": int(impl in GLU_CLAMPED),
        "ac_clip_qkv": int(bool(spec.clip_qkv)),
        "ac_sinks": int(bool(spec.sinks)),
        "ac_moe_all": int(impl in EXPERTS_ALL),
        # one expert: the score column is a view of the float32 sigmoid (nothing new kept)
        "ac_score_col": int(not (f32 and spec.E == 1)),
        "ac_l2qk_layers": spec.qk_l2_layers,
        "ac_temp_layers": spec.temp_layers,
    }


FACT_MEANINGS = {
    "ac_width": "bytes of one activation element (4 for fp32, else 2)",
    "ac_ln": "norms are LayerNorms (input, mean and reciprocal std kept)",
    "ac_rms32": "RMSNorm computed in float32 (float32 input copy, reciprocal root, normalized)",
    "ac_t5_16": "T5's RMSNorm also keeps its 16-bit input (16-bit activations only)",
    "ac_norm_w32": "RMSNorm multiplies its weight in float32 (normalized values kept float32)",
    "ac_ln32": "LayerNorm written out in float32 (Cohere: x - mean twice, reciprocal root, "
               "normalized, all float32)",
    "ac_norm_wcopy": "each norm keeps a float32 copy of its weight (Gemma's 1 + w; Cohere's "
                     "weight cast at 16 bits)",
    "ac_qk_head_stats": "q/k norms over all heads' weights normalize each head (Cohere)",
    "ac_softcap": "attention logits soft-capped: the tanh output is kept too",
    "ac_rms_pow": "RMSNorm keeps the mean square besides its root (Gemma 3n's pow(., -0.5))",
    "ac_g3n": "Gemma 3n's eager layer: AltUp, LAuReL, per-layer inputs, v norm, rotary per layer",
    "ac_bidir": "attention is bidirectional (EmbeddingGemma): sdpa masks every layer",
    "ac_sdpa_kv_copy": "sdpa with a mask repeats K and V by a copy (more than one KV head)",
    "ac_rope_local": "sliding layers rotate by a second cos/sin table (Gemma 3), kept once",
    "ac_rope_bytes": "bytes of one rotary table element (4 where cos/sin stay float32: OLMo-2/3)",
    "ac_parallel_in": "parallel block with one norm: the FFN input is attention's input",
    "ac_parallel_norms": "parallel block with two norms: the FFN norm's input is the attention "
                         "norm's (the block's input, kept once)",
    "ac_qk32": "the score product keeps Q and K cast to float32 (GPT-J)",
    "ac_q_pos_scale": "queries are scaled per position in every layer (Ministral 3): the scale "
                      "vector is kept",
    "ac_rot_tables": "width of the sin/cos tables rebuilt in every layer (GPT-J's rotary_dim: "
                     "four tables of s x width; GLM-4's cos/sin pair as four of half its width), 0 "
                     "where they are built once per forward",
    "ac_kv_gather": "int64 indices kept per layer by taking K and V out of the fused "
                    "projection with index lists (Falcon: 2 under multi_query or the new "
                    "decoder architecture)",
    "ac_fused_view": "Q (ALiBi) or V (rotary) reaches the score or value product as a view of "
                     "the fused q/k/v projection, which it keeps whole: 2 n_kv b s d_h more "
                     "(Falcon at batch 1 or with one head)",
    "ac_sdpa_fused_view": "sdpa keeps V as a view of the fused q/k/v projection, all of it: "
                          "2 n_kv b s d_h more (GPT-NeoX, Falcon's per-head layout)",
    "ac_sdpa_out_copy": "the sdpa kernel's output is heads-first (the query came from cat, "
                        "partial rotary), so o_proj's input is a copy (more than one head)",
    "ac_k_bcast": "K is kept at n_h heads though one key/value head at batch 1 needs no "
                  "repeat (Falcon's new decoder architecture rotates the broadcast K)",
    "ac_drop_attn_out": "dropout on attention's output (the hidden dropout; Falcon: the "
                        "attention dropout, sequential blocks only; StableLM: none)",
    "ac_soft_bytes": "bytes of the kept softmax output (4 where upcast to float32)",
    "ac_cast": "the float32 probabilities cast back for the V product are kept too",
    "ac_drop_attn": "dropout on the attention probabilities",
    "ac_drop_hidden": "dropout on each sublayer's output",
    "ac_drop_ffn": "dropout inside the FFN, before its output matrix (T5)",
    "ac_act_in": "the FFN activation's backward needs its input (GeLU, SiLU; not ReLU)",
    "ac_act_tanh": "the FFN activation is the tanh formula written out (gelu_new)",
    "ac_act_kept": "the activation output is kept (by ReLU, the gate product or the next matrix)",
    "ac_prod": "the gate product is kept by the next matrix (gated FFN, no dropout between)",
    "ac_kv_rep": "eager keeps K and V repeated to n_h heads (not for one KV head at batch 1)",
    "ac_v_qkv": "eager's V is a view of the fused q/k/v output (DBRX, not repeated): the whole "
                "output is kept",
    "ac_fused_qkv": "V is a view of one fused q/k/v output (DBRX): the fused kernel keeps all of it",
    "ac_sdpa_o_copy": "the fused kernel's head-major output is copied for the output projection "
                      "(MiniMax-M2), both kept",
    "ac_b1": "one sequence in the batch (b = 1): Mamba-2's scan reads B and C in place when "
             "the sequence fits one chunk, Jamba's x_proj reads the conv output in place",
    "ac_ssm_beside_attn": "the SSM mixer runs beside attention on its normed input (Falcon-H1): "
                          "no norm of its own",
    "ac_block_norm": "every block has its own norm, the FFN and MoE blocks too (Nemotron-H)",
    "ac_gdn_zview": "float32 Gated DeltaNet keeps its whole fused qkvz projection for the "
                    "gate's SiLU (z a view of it: Qwen3-Next with n_lk = n_lv)",
    "ac_lin_qkview": "float32 linear attention with n_lk = n_lv: the l2 norms of q and k keep "
                     "the conv output's whole storage (q, k and v), not copies of q and k",
    "ac_mla_v_view": "MLA at batch 1 or with one head: the eager V product keeps the whole "
                     "key/value up-projection (non-rotary keys too), not a copy of V",
    "ac_rope_tables": "float32 rotary tables (s x d_h, shared by the batch) rebuilt and kept "
                      "in every layer (ERNIE 4.5: cos and sin)",
    "ac_f32": "activations are float32 (1) or 16-bit (0)",
    "ac_router32": "the MoE router casts its input and weight to float32 (DeepSeek, GLM-4.5, "
                   "dots1, ERNIE 4.5): 16-bit models keep both copies",
    "ac_moe_in": "the MoE block's input is kept at the activation width (by the router or the "
                 "shared MLP; not when only a float32 router copy reads it)",
    "ac_group_idx": "int64 indices per token of group-limited routing (group scores and the "
                    "chosen groups: 2 n_group + topk_group for DeepSeek-V3, n_group + "
                    "topk_group for DeepSeek-V2)",
    "ac_group_mask": "group-limited routing keeps a boolean expert mask per token",
    "ac_topk_norm": "the top-k weights are renormalised, or are a softmax over the top-k "
                    "logits (GraniteMoE): their float32 values are kept",
    "ac_topk_sums": "float32 sums per token kept by the renormalisation (ERNIE's clamp: two)",
    "ac_rw_bytes": "bytes of the routing weight the experts' outputs multiply (4: float32)",
    "ac_router_probs": "the router keeps its float32 softmax over all experts (not GraniteMoE's "
                       "softmax over the top k, not PhiMoE's sparsemixer)",
    "ac_sparsemixer": "PhiMoE's sparsemixer router: two picks, each keeping a boolean mask, a "
                      "softmax over the experts, two int64 indices and its multiplier",
    "ac_jitter": "noise tensors the MoE block multiplies its input by in training (Mixtral 1, "
                 "PhiMoE 2; 0 without jitter)",
    "ac_router_bytes": "bytes of the router's probabilities, top-k values and sums (4: float32; "
                       "the model's dtype for gpt-oss and DBRX)",
    "ac_moe_loop": "experts run in a loop over the picked experts (DBRX), not grouped_mm: no "
                   "offsets or scatter index, the weighted outputs kept by index_add_",
    "ac_glu_clamp": "gpt-oss's clamped SwiGLU keeps three more expert-wide tensors (sigmoid, "
                    "clamped gate, up + 1)",
    "ac_clip_qkv": "the fused q/k/v projection's output is clamped (DBRX clip_qkv) and kept",
    "ac_sinks": "attention-sink logits (gpt-oss): the softmax keeps a sink column and max() "
                "its int64 row-maximum indices",
    "ac_moe_all": "every expert runs on every token (Llama 4): E b s expert rows, the repeated "
                  "input and the score column kept, no sort or scatter",
    "ac_l2qk_layers": "layers with Llama 4's weightless L2 q/k norm (float32 copies of q and k, "
                      "reciprocal roots per head)",
    "ac_score_col": "Llama 4's score column is a new tensor (not with one expert in float32)",
    "ac_temp_layers": "layers whose queries Llama 4's attention temperature tuning scales (a "
                      "float32 scale per position kept)",
}


RECOMPUTE = ("none", "selective", "full")


def choice_weights(model: str, recompute: str, tensor_parallel: bool,
                   sequence_parallel: bool) -> dict[str, int]:
    """One-hot weights of the activation model, recomputation and parallelism choices
    (:func:`symcalc.algebra.activations.weighted_bytes`)."""
    out = {f"ac_{m}": int(m == model) for m in ACTIVATION_MODELS}
    out.update(ac_keep=int(recompute != "full"), ac_keep_core=int(recompute == "none"),
               ac_full=int(recompute == "full"),
               ac_p0=int(not tensor_parallel and not sequence_parallel),
               ac_ptp=int(tensor_parallel and not sequence_parallel),
               ac_psp=int(bool(sequence_parallel)))
    return out


def choices(opts) -> dict[str, int]:
    """:func:`choice_weights` of one set of options."""
    return choice_weights(opts.activations, opts.recompute, opts.tp > 1, opts.sequence_parallel)


# -- the activation model in words (the report's convention note; derivations say the same) --
ACTIVATION_TEXT = {
    "paper": "paper: Korthikanti et al. 2022 term by term with this model's d_ff, gate, n_kv "
             "and dropouts (1-byte masks)",
    "eager": "eager: what transformers' eager attention keeps on CPU (float32 norm/softmax "
             "upcasts, masks at the activation dtype)",
    "sdpa": "sdpa: a fused attention kernel (no s^2 scores; float32 log-sum-exp)",
}


def activations_text(opts) -> str:
    """The activation model used (default paper), its width and the choices applied."""
    width = 4 if opts.dtype.strip().lower() in ("fp32", "float32") else 2
    return (f"--activations {ACTIVATION_TEXT[opts.activations]}; every layer, {width}-byte "
            "activations, "
            + (f"tensor parallel t={opts.tp}, " if opts.tp > 1 else "no parallelism, ")
            + ("sequence parallel, " if opts.sequence_parallel else "")
            + f"recompute {opts.recompute}")

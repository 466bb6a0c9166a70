"""Saved tensors of self- and cross-attention under each activation model (paper, eager,
sdpa): Q, K, V, the score core, the output projection's input and the dropout after it."""
from __future__ import annotations

from dataclasses import replace

from .components import qk_width, sw, value_width
from .saved import Saved, norm_terms
from .symbols import b, d, d_g, d_h, d_nope, d_rope, n_h, n_kv, r_kv, r_q


def attention_terms(model: str, f, A, q_tokens, kv_tokens, q_len, kv_len, tag: str,
                     cross: bool = False) -> list[Saved]:
    """Self- (or cross-) attention: its input, Q, K, V, the score core, the output
    projection's input and the dropout mask after it. ``q_tokens``/``kv_tokens`` are b s."""
    qk, vw = qk_width(), value_width()
    # the dropout after attention is the hidden dropout unless the family says otherwise
    drop_a, drop_h = f["ac_drop_attn"], f["ac_drop_attn_out"]
    heads = n_h * q_len * kv_len * b
    out: list[Saved] = [Saved(f"{tag}/input", q_tokens * d, A, "korthikanti2022",
                              "the Q/K/V projections keep their input", split=False)]
    if cross:  # keys and values come from the encoder output: one storage for all layers
        out[0] = Saved(f"{tag}/input", q_tokens * d, A, "korthikanti2022",
                       "the query projection keeps its input", split=False)
    if model == "paper":
        qk_norms = sw("qk_head") + sw("qk_all")
        mla, lora = sw("mla"), sw("q_lora")
        out.append(clip_term(f, A, q_tokens, tag, "korthikanti2022"))
        out += [
            Saved(f"{tag}/latents", 2 * (mla * lora * r_q + mla * r_kv) * q_tokens, A,
                  "deepseek2024", "MLA: each latent's norm input and up-projection input",
                  split=False),
            Saved(f"{tag}/qk_norm_input", qk_norms * (q_tokens * n_h + kv_tokens * n_kv) * d_h, A,
                  "korthikanti2022", "the q and k norms keep their inputs (as each LayerNorm)"),
            Saved(f"{tag}/q", q_tokens * n_h * qk, A, "korthikanti2022", "QK^T keeps Q"),
            Saved(f"{tag}/query_scale", f["ac_q_pos_scale"] * q_len, A, "korthikanti2022",
                  "query scale per position (Ministral 3), kept by its product with Q",
                  split=False),
            Saved(f"{tag}/k", kv_tokens * n_kv * qk, A, "korthikanti2022",
                  "QK^T keeps K (n_kv heads)"),
            Saved(f"{tag}/softcap_tanh", f["ac_softcap"] * heads, A, "gemma2024",
                  "soft-capped scores (the tanh output)", core=True),
            Saved(f"{tag}/softmax", heads, A, "korthikanti2022", "softmax output", core=True),
            Saved(f"{tag}/softmax_sinks", f["ac_sinks"] * n_h * q_tokens, A, "korthikanti2022",
                  "softmax output's sink column (one sink logit per head)", core=True),
            Saved(f"{tag}/dropout_mask", drop_a * heads, 1, "korthikanti2022",
                  "attention dropout mask, 1 byte", core=True),
            Saved(f"{tag}/dropout_out", drop_a * heads, A, "korthikanti2022",
                  "dropped probabilities for the V product", core=True),
            Saved(f"{tag}/v", kv_tokens * n_kv * vw, A, "korthikanti2022", "V (n_kv heads)"),
            Saved(f"{tag}/o_input", q_tokens * n_h * vw, A, "korthikanti2022",
                  "output projection input"),
            Saved(f"{tag}/o_dropout_mask", drop_h * q_tokens * d, 1, "korthikanti2022",
                  "dropout mask after attention, 1 byte", split=False),
        ]
        return out + output_gate_terms(model, f, A, q_tokens, tag)
    soft = f["ac_soft_bytes"]
    out += qk_norm_terms(f, A, q_tokens, kv_tokens, tag)
    out.append(clip_term(f, A, q_tokens, tag, "torch_autograd"))
    out += mla_terms(f, A, q_tokens, tag)
    if not cross:  # position ids shared by the batch (none passed): one table per sequence position
        out.append(Saved(f"{tag}/rope_tables", f["ac_rope_tables"] * q_len * d_h, 4,
                         "torch_autograd", "rotary cos and sin rebuilt in the layer (ERNIE 4.5), "
                         "float32", split=False))
    # GPT-J's eager scores are a float32 product: Q and K are kept cast to float32
    qk_bytes = A + f["ac_qk32"] * (4 - A) if model == "eager" else A
    out += [
        Saved(f"{tag}/q", q_tokens * n_h * qk, qk_bytes, "torch_autograd",
              "the score product keeps Q (after rotary positions; float32 where cast)"),
        Saved(f"{tag}/rotary_tables", 4 * q_len * f["ac_rot_tables"], A, "torch_autograd",
              "sin and cos rebuilt for Q and for K in every layer (GPT-J: repeat_interleave "
              "of rotary_dim wide tables, position ids of batch 1)", split=False),
        Saved(f"{tag}/query_scale", f["ac_q_pos_scale"] * q_len, A, "torch_autograd",
              "query scale per position (Ministral 3's Llama-4 scaling, position ids of "
              "batch 1), kept by the product with Q", split=False),
        Saved(f"{tag}/kv_index", f["ac_kv_gather"], 8, "torch_autograd",
              "int64 index lists that take K and V out of the fused projection (Falcon)",
              split=False),
        Saved(f"{tag}/fused_view", (1 if model == "eager" else 0) * f["ac_fused_view"]
              * 2 * n_kv * q_tokens * d_h, A,
              "torch_autograd", "Q or V kept as a view of the fused q/k/v projection: the "
              "projection's other 2 n_kv heads stay allocated (Falcon)"),
    ]
    if model == "eager":
        kv_heads = n_kv + f["ac_kv_rep"] * (n_h - n_kv)
        k_heads = kv_heads + f["ac_k_bcast"] * (n_h - n_kv)
        out += [
            Saved(f"{tag}/k", kv_tokens * k_heads * qk, qk_bytes, "torch_autograd",
                  "the score product keeps K, repeated to n_h heads (repeat_kv)"),
            Saved(f"{tag}/softcap_tanh", f["ac_softcap"] * heads, A, "gemma2024",
                  "soft-capped scores: the tanh output c tanh(scores / c) keeps", core=True),
            Saved(f"{tag}/clamped_scores", f["ac_score_clamp"] * heads, A, "torch_autograd",
                  "masked scores kept by their clamp to the dtype's minimum (XGLM)", core=True),
            Saved(f"{tag}/clamp_floor", f["ac_score_clamp"], 4, "torch_autograd",
                  "the float32 scalar the scores are clamped by (XGLM)", core=True,
                  split=False),
            Saved(f"{tag}/softmax", heads, soft, "torch_autograd",
                  "softmax output (float32 where upcast)", core=True),
            Saved(f"{tag}/softmax_cast", f["ac_cast"] * heads, A,
                  "torch_autograd", "probabilities cast back for the V product", core=True),
            # gpt-oss, Flint: the softmax runs over the scores and one sink logit per head and
            # query; gpt-oss subtracts the row maximum first, whose int64 indices max() keeps
            Saved(f"{tag}/softmax_sinks", f["ac_sinks"] * n_h * q_tokens, soft, "torch_autograd",
                  "softmax output's sink column", core=True),
            Saved(f"{tag}/max_index", f["ac_sinks_max"] * n_h * q_tokens, 8, "torch_autograd",
                  "indices of the row maximum subtracted before the softmax (int64)", core=True),
            # Granite SWA: the sinks scale the output by sigmoid(logsumexp(scores) - sink)
            Saved(f"{tag}/lse_scores", f["ac_sinks_lse"] * heads, A, "torch_autograd",
                  "scores kept by the logsumexp of the sink scale", core=True),
            Saved(f"{tag}/lse", f["ac_sinks_lse"] * n_h * q_tokens, A, "torch_autograd",
                  "logsumexp of each score row", core=True),
            Saved(f"{tag}/sink_sigmoid", f["ac_sinks_lse"] * n_h * q_tokens, 4, "torch_autograd",
                  "sink scale sigmoid(lse - sink), float32", core=True),
            Saved(f"{tag}/sink_scale_cast", f["ac_sinks_lse"] * (1 - f["ac_f32"]) * n_h * q_tokens,
                  A, "torch_autograd", "sink scale cast back to the activation dtype", core=True),
            Saved(f"{tag}/unscaled_output", f["ac_sinks_lse"] * q_tokens * n_h * vw, A,
                  "torch_autograd", "attention output before the sink scale", core=True),
            Saved(f"{tag}/dropout_mask", drop_a * heads, A, "torch_autograd",
                  "attention dropout mask (CPU: the input's dtype)", core=True),
            Saved(f"{tag}/dropout_out", drop_a * heads, A, "torch_autograd",
                  "dropped probabilities for the V product", core=True),
            Saved(f"{tag}/v", kv_tokens * kv_heads * vw, A, "torch_autograd",
                  "the V product keeps V, repeated to n_h heads"),
            Saved(f"{tag}/kv_cache_copies", f["ac_cache_kv"] * 2 * kv_tokens * n_kv * d_h, A,
                  "torch_autograd", "K and V as the KV cache's copies (torch.cat), besides the "
                  "fused projection Q keeps as a view (use_cache)"),
            Saved(f"{tag}/v_view_qkv", f["ac_v_qkv"] * q_tokens * (n_h + n_kv) * qk, A,
                  "torch_autograd", "V not repeated is a view of the fused q/k/v output (DBRX): "
                  "its q and k part stays allocated"),
            Saved(f"{tag}/v_view_keys", sw("mla") * f["ac_mla_v_view"] * kv_tokens * n_h * d_nope,
                  A, "torch_autograd", "MLA, batch 1 or one head: V stays a view of the key/value "
                  "up-projection, whose non-rotary keys are kept with it"),
            Saved(f"{tag}/o_input", q_tokens * n_h * vw, A, "torch_autograd",
                  "output projection input"),
        ]
    else:  # sdpa: fused kernel
        out += [
            Saved(f"{tag}/k", kv_tokens * n_kv * qk, A, "dao2022", "K at n_kv heads (GQA in-kernel)"),
            Saved(f"{tag}/v", kv_tokens * n_kv * vw, A, "dao2022", "V at n_kv heads"),
            Saved(f"{tag}/o_input_copy", f["ac_sdpa_o_copy"] * q_tokens * n_h * vw, A,
                  "torch_autograd", "the output projection's input, a copy of the head-major "
                  "kernel output"),
            Saved(f"{tag}/v_view_qkv", f["ac_fused_qkv"] * q_tokens * (n_h + n_kv) * qk, A,
                  "torch_autograd", "V is a view of the fused q/k/v output (DBRX): its q and k "
                  "part stays allocated"),
            Saved(f"{tag}/logsumexp", n_h * q_tokens, 4, "dao2022",
                  "float32 log-sum-exp per query and head", core=True),
            Saved(f"{tag}/output", q_tokens * n_h * vw, A, "dao2022",
                  "kernel output, also the output projection's input"),
            Saved(f"{tag}/o_copy", f["ac_sdpa_out_copy"] * q_tokens * n_h * vw, A,
                  "torch_autograd", "output projection's input copied from a heads-first "
                  "kernel output (query built by cat: partial rotary)"),
            Saved(f"{tag}/v_fused_view", f["ac_sdpa_fused_view"] * 2 * n_kv * q_tokens * d_h, A,
                  "torch_autograd", "V is a view of the fused q/k/v projection: its q and k "
                  "heads stay allocated (GPT-NeoX, Falcon)"),
        ]
    out += output_gate_terms(model, f, A, q_tokens, tag)
    out.append(Saved(f"{tag}/o_dropout_mask", drop_h * q_tokens * d, A, "torch_autograd",
                     "dropout mask after attention (CPU: activation dtype)", split=False))
    return out


def output_gate_terms(model: str, f, A, q_tokens, tag: str) -> list[Saved]:
    """Qwen3-Next's and Qwen3.5's output gate (``sw_attn_gate``): q_proj also gives a gate per
    query channel, and o_proj reads attention's output times sigmoid(gate). The product keeps
    the sigmoid output (the attention output it multiplies is the o_input term) and o_proj
    its result. In float32 the q norm's input is a view of q_proj's output, query and gate
    interleaved per head, so the norm keeps that whole storage, the gate's half too."""
    gate = sw("attn_gate")
    src = "qwen2025next" if model == "paper" else "torch_autograd"
    out = [Saved(f"{tag}/gate", gate * q_tokens * n_h * (d_g + d_h), A, src,
                 "output gate: sigmoid(gate), d_g per head, and the gated product (o_proj's "
                 "input)")]
    if model != "paper":
        out.append(Saved(f"{tag}/q_norm/gate_half", gate * f["ac_f32"] * f["ac_rms32"]
                         * (sw("qk_head") + sw("qk_all")) * q_tokens * n_h * d_h, 4,
                         "torch_autograd", "float32: the q norm keeps q_proj's whole output, "
                         "the gate's half too"))
    return out


def qk_norm_terms(f, A, q_tokens, kv_tokens, tag: str) -> list[Saved]:
    """The q and k norms before the score product: one per head of width d_h (``sw_qk_head``:
    Qwen3, EXAONE 4) or one over the whole projection, n_h d_h and n_kv d_h wide
    (``sw_qk_all``: OLMo-2); each keeps what the model's other norms keep, its rows being
    tokens x heads or tokens (Cohere's norm over all heads' weights still normalizes each
    head: ``ac_qk_head_stats``)."""
    head, whole = sw("qk_head"), sw("qk_all")
    per_head = f["ac_qk_head_stats"]
    out: list[Saved] = []
    for name, tokens, heads in (("q_norm", q_tokens, n_h), ("k_norm", kv_tokens, n_kv)):
        rows = head * heads + whole * (1 + per_head * (heads - 1))
        out += norm_terms(f, A, tokens * rows, f"{tag}/{name}",
                          count=(head + whole) * tokens * heads * d_h,
                          weight=(head + whole * heads) * d_h)
    # Persimmon: q and k are views of the fused per-head q/k/v output, which the norms keep whole
    out.append(Saved(f"{tag}/qkv_view", f["ac_qk_fused_view"] * kv_tokens * n_kv * d_h, A,
                     "torch_autograd", "the v third of the fused q/k/v output the q/k norms "
                     "keep as views (Persimmon)"))
    # the norms sit inside the tensor-parallel region (per head), unlike the layer norms
    return [replace(x, split=True) for x in out]


def mla_terms(f, A, tokens, tag: str) -> list[Saved]:
    """Multi-head latent attention's latents (DeepSeek-V2/V3): the query latent's norm (rank
    r_q, ``sw_q_lora``) and the key/value latent's norm (rank r_kv), each with the input of the
    up-projection after it. The key/value latent is a view of the d -> r_kv + d_rope
    projection: in float32 the norm keeps that whole storage, the rotary key's d_rope too."""
    mla, lora = sw("mla"), sw("q_lora")
    out = [x.times(mla * lora) for x in norm_terms(f, A, tokens, f"{tag}/q_a_norm", width=r_q)]
    out.append(Saved(f"{tag}/q_b_input", mla * lora * tokens * r_q, A, "deepseek2024",
                     "the query up-projection keeps the normalized query latent", split=False))
    out += [x.times(mla) for x in norm_terms(f, A, tokens, f"{tag}/kv_a_norm", width=r_kv)]
    out.append(Saved(f"{tag}/kv_a_norm/rope_view", mla * f["ac_rms32"] * f["ac_f32"] * tokens * d_rope,
                     4, "torch_autograd", "float32: the latent is a view of the projection that "
                     "also holds the rotary key, whose storage the norm keeps", split=False))
    out.append(Saved(f"{tag}/kv_b_input", mla * tokens * r_kv, A, "deepseek2024",
                     "the key/value up-projection keeps the normalized latent", split=False))
    return out


def rope_table_terms(model: str, f, A) -> list[Saved]:
    """Rotary tables are computed once per forward and kept once by the first layer that
    rotates with them: like the embeddings they are left out, except the second table of a
    stack whose sliding layers rotate by their own (``ac_rope_local``: Gemma 3's local and
    global cos/sin, OLMo-3's per layer type, one (1, s, d_h) pair each, kept once both kinds
    of layer are there; float32 where ``ac_rope_bytes`` says so)."""
    from .caps import min_of
    from .symbols import L_attn, L_local, s

    if model == "paper":
        return []
    local = sw("window") * (sw("window_all") * L_attn + (1 - sw("window_all")) * L_local)
    kinds = min_of(1, local) + min_of(1, L_attn - local)
    return [Saved("rotary/second_table", f["ac_rope_local"] * (kinds - 1) * 2 * s * d_h,
                  f["ac_rope_bytes"],
                  "torch_autograd", "cos and sin of the second rotary table (sliding layers "
                  "rotate by their own), position batch 1", split=False)]


def clip_term(f, A, q_tokens, tag: str, source: str) -> Saved:
    """DBRX's clip_qkv: the clamp of the fused q/k/v projection keeps its input (q, k and v
    of every token, before the rotary positions); ``ac_clip_qkv`` is 0 elsewhere."""
    width = n_h * qk_width() + n_kv * (qk_width() + value_width())
    return Saved(f"{tag}/qkv_clamp", f["ac_clip_qkv"] * q_tokens * width, A, source,
                 "the clamp of the fused q/k/v output keeps its input (clip_qkv)")


def layer_kind_terms(model: str, f, A) -> list[Saved]:
    """Attention tensors only some layers keep, already times the layers that keep them
    (Llama 4): the weightless L2 q/k norm of the rotary layers (a float32 copy of q and of k,
    a float32 reciprocal root per head and token; ``ac_l2qk_layers`` layers) and the float32
    query scale per position of attention temperature tuning on the NoPE layers
    (``ac_temp_layers``)."""
    from .symbols import s

    tokens = b * s
    l2, temp = f["ac_l2qk_layers"], f["ac_temp_layers"]
    if model == "paper":
        return [Saved("attention/l2_qk_norm_input", l2 * tokens * (n_h + n_kv) * d_h, A,
                      "korthikanti2022", "the L2 q and k norms keep their inputs")]
    return [
        Saved("attention/l2_qk_norm_input_fp32", l2 * tokens * (n_h + n_kv) * d_h, 4,
              "torch_autograd", "L2 q/k norm: float32 copies of q and k (after rotary)"),
        Saved("attention/l2_qk_norm_rsqrt", l2 * tokens * (n_h + n_kv), 4, "torch_autograd",
              "L2 q/k norm: float32 reciprocal root per head and token"),
        Saved("attention/temperature_scales", temp * s, 4, "torch_autograd",
              "attention temperature tuning: float32 query scale per position", split=False),
    ]


def sdpa_mask_terms(model: str, f, A) -> list[Saved]:
    """sdpa layers that get a mask: the sliding ones once s >= W (transformers cannot hand
    the window to is_causal then), every layer when attention is bidirectional (``ac_bidir``).
    Such a layer does not use the kernel's GQA: K and V are repeated to n_h heads (a copy
    unless one KV head expands as a view: ``ac_sdpa_kv_copy``), and the CPU kernel keeps the
    boolean mask converted to the activation dtype, b s^2."""
    from .caps import min_of
    from .components import qk_width, value_width
    from .symbols import L_attn, L_local, W, s

    if model != "sdpa":
        return []
    local = sw("window") * (sw("window_all") * L_attn + (1 - sw("window_all")) * L_local)
    slides = min_of(1, s - min_of(s, W - 1))  # 1 when s >= W
    bidir = f["ac_bidir"]
    masked = bidir * L_attn + (1 - bidir) * local * slides
    extra = f["ac_sdpa_kv_copy"] * (n_h - n_kv) * b * s
    return [
        Saved("attention/sdpa_mask", masked * b * s * s, A, "torch_autograd",
              "the mask converted to the activation dtype (masked layers)", core=True),
        Saved("attention/sdpa_k_repeated", masked * extra * qk_width(), A, "torch_autograd",
              "masked layers: K repeated to n_h heads (repeat_kv)"),
        Saved("attention/sdpa_v_repeated", masked * extra * value_width(), A, "torch_autograd",
              "masked layers: V repeated to n_h heads (repeat_kv)"),
    ]

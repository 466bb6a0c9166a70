"""Parameter counts of every transformer component, as sympy expressions.

Each function returns a list of :class:`Part` (a name relative to the component, the
expression and the key of its source in :mod:`symcalc.derivations.sources`). Structural switches appear
as 0/1 indicator symbols (``sw_*``); see :mod:`symcalc.algebra.symbols`. Nothing here formats
anything.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from .symbols import (SWITCHES, K_cb, L_x, V_pr, V_sp, V_x, d_ad, d_cat, d_pr, d_sp, n_ad, E, E_s, G_s, H_s, K_conv, L, N_s, P, R, R_dt, T, V, V_ple, d,
                      Z_e, d_emb, d_ff, d_g, d_h, d_ih, d_in, d_lk, d_lv, d_moe, d_nope, d_ple,
                      d_out, d_rope, d_sh, d_v, n_alt, n_h, n_ih, n_kv, n_lk, n_lv, r_g, r_kv, r_laurel,
                      r_q, d_ai, r_ad, d_bk, d_rel, X_rel, K_g, d_r, n_kvg, Q_in, n_hc,
                      d_bb, V_c, K_rel, P_2d, d_ph, V_ent, d_ent, r_hc, L_ple, V_ng,
                      d_ng, d_pe, K_pe,
                      m_csa, m_hca, g_o, r_o)


def sw(name: str) -> sympy.Symbol:
    return SWITCHES["sw_" + name].symbol


# switches of parts no encoder-decoder stack has (spec.toml refuses them there: most belong
# to decoder-only stacks; mixtures of experts and q/k norms to encoder-only ones as well): an
# encoder-decoder shape builds its stacks with them off, so its rows stay as they were
DECODER_ONLY = ("zx", "pmoe", "xielu", "attn_sub", "ffn_sub", "diff", "moa", "nscale", "rsh",
                "rmlp", "krope", "mlaw", "router", "router_bias", "expert_bias", "shared",
                "shared_gate", "moe_width", "sh_width", "moe_norm", "qk_head", "qk_all",
                "qk_bias")


def decoder_only_off() -> dict:
    return {sw(name): 0 for name in DECODER_ONLY}


# switches of the embeddings and head that only single-stack models have (spec.toml refuses
# them in an encoder-decoder, whose rows are built with them off)
SINGLE_ONLY = ("emb_stage", "d_out", "rot_table", "side", "cat", "skip", "cmask", "contact",
               "box", "hmlp", "ent", "entp", "enth", "entu")


def single_only_off() -> dict:
    """The single-stack switches off, one codebook (K_cb) and no extra token rows (V_x)."""
    return {**{sw(name): 0 for name in SINGLE_ONLY}, K_cb: 1, V_x: 0}


@dataclass(frozen=True)
class Part:
    name: str
    expr: sympy.Expr
    source: str


def linear(n_in, n_out, bias) -> sympy.Expr:
    """A dense layer: an n_in x n_out weight, plus n_out biases when ``bias`` is 1."""
    return n_in * n_out + bias * n_out


def qk_width():
    """Width of one query/key head: d_h, or d_nope + d_rope under MLA."""
    return d_h + sw("mla") * (d_nope + d_rope - d_h)


def value_width():
    """Width of one value head: d_h, or d_v under MLA."""
    return d_h + sw("mla") * (d_v - d_h)


def q_b_width():
    """Input width of MLA's query up-projection: the query latent r_q, or with ``sw_mla_gate``
    (A.X-K2's q_gate_proj) the latent and its normed copy, 2 r_q; that projection also gives an
    output gate per value channel, n_h d_v more outputs."""
    return r_q * (1 + sw("mla_gate"))


def attention_params(decoder: bool = False) -> list[Part]:
    """Q, K, V, O projections with n_h query heads and n_kv key/value heads of width d_h.

    Q maps d -> n_h*d_h and O maps n_h*d_h -> d; K and V map d -> n_kv*d_h, so n_kv = n_h is
    multi-head, 1 < n_kv < n_h grouped-query and n_kv = 1 multi-query attention. d_h need not
    equal d/n_h (it is an explicit head_dim in Llama/Mistral configs and d_kv in T5).

    Under multi-head latent attention (``sw_mla``, DeepSeek-V2 Sec. 2.1) keys and values come
    from one latent of rank r_kv: a down-projection d -> r_kv + d_rope (the extra d_rope is a
    rotary key shared by all heads), a norm on the latent, and an up-projection
    r_kv -> n_h (d_nope + d_v). Queries go d -> n_h (d_nope + d_rope) directly, or through a
    rank r_q with its own norm (``sw_q_lora``). Per-head q/k norms (Qwen3, Gemma-3: one d_h
    vector each; OLMo-2, Cohere: over all heads; Phi's LayerNorms add as many biases) and
    GPT-OSS's sink logits (one per head) are weights. An output-gated attention (``sw_attn_gate``,
    Qwen3-Next) has a query projection twice as wide: per head a query and a sigmoid gate, biased
    as the query is (``sw_gate_bias``: AFMoE's separate gate_proj never is); LFM3's and
    Laguna's gate is one scalar per head (d_g = 1: d -> n_h; else d_g = d_h), Beam's adds one
    bias per head (``sw_gate_hbias``, a decoder stack's ``attention/gate_bias``). In a decoder
    stack (``decoder``) MLA's query up-projection may also give an output gate (:func:`q_b_width`),
    and the standard q, k, v read d_ai inputs (d, but 2d in Zamba's shared blocks, which
    attend over the hidden state and the embeddings concatenated).
    """
    mla, lora, std, moa = sw("mla"), sw("q_lora"), 1 - sw("mla"), sw("moa")
    q_out = n_h * (d_nope + d_rope)
    d_in_ = d_ai if decoder else d
    return [
        # JetMoE's mixture of attention heads (sw_moa): q and o are E experts of n_kv heads each
        # (n_h = n_kv k heads run per token), routed by a d x E router of their own
        Part("router", moa * d * E, "shen2024jetmoe"),
        Part("q", std * (1 - moa) * linear(d_in_, n_h * d_h, sw("bias_q")) + moa * E * d * n_kv * d_h
             + mla * (1 - lora) * linear(d, q_out, sw("bias_q")), "vaswani2017"),
        # (beside MLA, Ling's hybrids: one gate per head, d -> n_h)
        Part("q_gate", sw("attn_gate") * linear(d, n_h * d_g, sw("gate_bias")), "qwen2025next"),
        Part("q_a", mla * lora * linear(d, r_q, sw("bias_q")), "deepseek2024"),
        Part("q_norm", mla * lora * r_q, "deepseek2024"),
        Part("q_b", mla * lora * (q_b_width() * (q_out + sw("mla_gate") * n_h * d_v) if decoder
                                  else r_q * q_out), "deepseek2024"),
        Part("k", std * linear(d_in_, n_kv * d_h, sw("bias_k")), "ainslie2023"),
        Part("v", std * linear(d_in_, n_kv * d_h, sw("bias_v")), "ainslie2023"),
        Part("kv_a", mla * linear(d, r_kv + d_rope, sw("bias_k")), "deepseek2024"),
        Part("kv_norm", mla * r_kv, "deepseek2024"),
        # dots.llm3: the shared rotary key RMS-normed (k_rope_only_layernorm)
        Part("k_rope_norm", sw("krope") * d_rope, "dots2026llm3"),
        # (sw_kvb: MLA's but DeepSeek-V4's, whose latent and rotary key are the key and value)
        Part("kv_b", (sw("kvb") if decoder else mla) * r_kv * n_h * (d_nope + d_v),
             "deepseek2024"),
        # (Inkling 2: a learned scale per query channel of every head, sw_hsc)
        Part("q_head_norm", (1 + sw("qk_bias")) * (sw("qk_head") * d_h + sw("qk_all") * n_h * d_h)
             + (sw("hsc") * n_h * d_h if decoder else 0), "henry2020"),
        Part("k_head_norm", (1 + sw("qk_bias")) * (sw("qk_head") * d_h + sw("qk_all") * n_kv * d_h),
             "henry2020"),
        # sw_sinks_local: sliding layers only; Inkling 2's sink_proj d -> n_h (sw_skp)
        Part("sinks", sw("sinks") * n_h + (sw("skp") * d * n_h if decoder else 0), "openai2025"),
        # differential attention (DiffLlama): lambda_q1, lambda_k1, lambda_q2, lambda_k2; in a
        # decoder stack Dory's per-channel query and output-gate scales (sqk, s_gate)
        Part("lambdas", sw("diff") * 4 * d_h + (sw("nscale") * 2 * n_h * d_h if decoder else 0),
             "ye2025diff"),
        # BitNet: a norm of width d on the attention output before o
        Part("sub_norm", sw("attn_sub") * norm_params(), "wang2023bitnet"),
        Part("o", sw("attn_out") * (linear(n_h * value_width(), d, sw("bias_o"))
                                    + moa * (E * n_kv - n_h) * d_h * d), "vaswani2017"),
    ] + ([  # DeepSeek-V4's grouped output projection (sw_ogrp, o replaced: attention_output
        # false; needs MLA): g_o groups of n_h d_v / g_o outputs each to r_o (o_a_proj), then g_o r_o -> d
        # (o_b_proj), no biases
        Part("o_a", sw("ogrp") * n_h * d_v * r_o, "deepseek2026v4"),
        Part("o_b", sw("ogrp") * g_o * r_o * d, "deepseek2026v4"),
        # Doge's dynamic mask: dt_proj over the values (biased as v) and A, per k/v head
        Part("dyn_mask", sw("dmask") * (linear(n_kv * d_h, n_kv, sw("bias_v")) + n_kv),
             "shi2024doge"),
        # Inkling: depthwise convolutions of width K_conv (no bias) on the keys and the values
        # and on the layer's attention and MLP outputs (k_sconv, v_sconv, attn_sconv, mlp_sconv)
        Part("short_convs", sw("sconv") * K_conv * (2 * n_kv * d_h + 2 * d), "inkling2026"),
        # Inkling: r_proj, d -> n_h d_rel relative states (the profile bank: relative_bias)
        # (Inkling 2: with a learned scale per relative-state channel of every head, sw_hsc)
        Part("rel_proj", sw("rlog") * d * n_h * d_rel + sw("hsc") * n_h * d_rel, "inkling2026"),
        # DeBERTa-v2: pos_key_proj and pos_query_proj of the relative-position table (biased;
        # none with share_att_key, which reuses key_proj and query_proj)
        Part("pos_k", sw("dpk") * d * n_h * d_h + sw("dpkb") * n_h * d_h, "he2021deberta"),
        # Nystromformer: a (K_conv x 1) kernel per head over its values (groups = heads, no bias)
        Part("value_conv", sw("vconv") * n_h * K_conv, "xiong2021nystromformer"),
        # LUKE: entity-aware attention's w2e, e2w and e2e queries (biased; run with entities)
        Part("entity_q", sw("entq") * 3 * linear(d, n_h * d_h, 1), "yamada2020luke"),
        Part("pos_q", sw("dpq") * linear(d, n_h * d_h, 1), "he2021deberta"),
        # Inkling 2's global layers (accounting.group_count): weight_proj d -> n_kvg K_conv for
        # the keys and for the values, and two more input norms (q, k and v each have one)
        Part("dyn_convs", sw("dcv") * (2 * d * n_kvg * K_conv + 2 * d), "inkling2026"),
        # ZAYA's compressed convolutional attention over the C = (n_h + n_kv) d_h query and key
        # channels: a depthwise convolution of width K_conv and a grouped one of width K_g
        # (n_h + n_kv groups of d_h), both biased, and a key scale per key/value head (its
        # value halves, current and delayed, are the v part)
        Part("cca", sw("cca") * ((n_h + n_kv) * d_h * (K_conv + 1 + d_h * K_g + 1) + n_kv),
             "zyphra2025cca")] if decoder else [])


def shared_block_params() -> list[Part]:
    """Zamba's shared attention+MLP blocks (``sw_shblk``; Glorioso et al. 2024, Zamba;
    transformers' ZambaHybridLayer): beside the block's attention and MLP (the layer's
    attention and FFN parts, held by L_attn_w = B_sh copies), a norm of the d_ai-wide
    attention input per copy, and in every layer that runs a block a d x d projection of its
    output of its own (``linear``, no bias). Zamba2 (Glorioso et al. 2024, Zamba2-7B;
    transformers' Zamba2MLP, Zamba2Attention) adds per use a low-rank adapter d -> r_ad ->
    2 d_ff to the MLP's fused gate and up projection (``sw_shad``) and, with
    use_shared_attention_adapter (``sw_shaa``), d_ai -> r_ad -> d_ai to each of q, k, v."""
    on = sw("shblk")
    return [
        Part("norm", on * (sw("norm_w") + sw("norm_b")) * d_ai, "glorioso2024zamba"),
        Part("linear", on * d * d, "glorioso2024zamba"),
        Part("ffn_adapter", sw("shad") * r_ad * (d + 2 * d_ff), "glorioso2024zamba2"),
        Part("attn_adapter", sw("shaa") * 6 * d_ai * r_ad, "glorioso2024zamba2"),
    ]


def indexer_params() -> list[Part]:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-AI 2025, DeepSeek-V3.2 Sec. 2.1;
    transformers' DeepseekV32Indexer), beside MLA in each of the L_idx layers that run it: n_ih
    indexer queries of width d_ih from the low-rank query (wq_b: r_q -> n_ih d_ih), one key
    shared by the heads (wk: d -> d_ih, then a LayerNorm of width d_ih with its bias, whatever
    the model's norm), and a weight per head (weights_proj: d -> n_ih). No biases."""
    on = sw("dsa")
    return [
        Part("q", on * r_q * n_ih * d_ih, "deepseek2025v32"),
        Part("k", on * d * d_ih, "deepseek2025v32"),
        Part("k_norm", on * 2 * d_ih, "deepseek2025v32"),
        Part("weights", on * d * n_ih, "deepseek2025v32"),
    ] + qsa_indexer_params() + msa_indexer_params()


def qsa_indexer_params() -> list[Part]:
    """Qwen4-Exp's QSA indexer (``sw_qsa``; transformers 5.24 Qwen4ExpTextQSAIndexer), beside
    softmax attention in each of the L_idx layers that run it: one projection of the hidden
    state to n_ih queries and one key of width d_ih (index_qk_proj: d -> (n_ih + 1) d_ih, no
    bias) and an RMSNorm of width d_ih on the queries and one on the pooled keys."""
    on = sw("qsa")
    return [
        Part("qk", on * d * (n_ih + 1) * d_ih, "qwen2026qwen4exp"),
        Part("qk_norms", on * 2 * d_ih, "qwen2026qwen4exp"),
    ]


def msa_indexer_params() -> list[Part]:
    """MiniMax-M3's lightning indexer (``sw_msa``; transformers 5.24 MiniMaxM3VLIndexer), beside
    softmax attention in each of the L_idx sparse-attention layers: queries of n_ih heads and
    one key of width d_ih projected from the layer input (q_proj: d -> n_ih d_ih, k_proj:
    d -> d_ih, no biases) and an RMSNorm of width d_ih on each (q_norm, k_norm). No value
    branch, no head weights."""
    on = sw("msa")
    return [
        Part("q_k_proj", on * d * (n_ih + 1) * d_ih, "minimax2026m3"),
        Part("q_k_norm", on * 2 * d_ih, "minimax2026m3"),
    ]


def compressor_params() -> list[Part]:
    """DeepSeek-V4's KV compressors (``sw_kvc``; DeepSeek-AI 2026, DeepSeek-V4 report Sec. 2.3;
    transformers 5.24 DeepseekV4CSACompressor, DeepseekV4Indexer, DeepseekV4HCACompressor),
    at the head width d_v (the one key/value head's): in each of the L_csa compressed sparse
    attention layers kv_proj and gate_proj d -> 2 d_v (two overlapping series), a float32
    position_bias (m_csa x 2 d_v) and an RMSNorm of d_v, and its lightning indexer with a
    compressor of its own at d_ih (kv_proj and gate_proj d -> 2 d_ih, position_bias
    m_csa x 2 d_ih, an RMSNorm of d_ih), its queries from the low-rank query (q_b_proj:
    r_q -> n_ih d_ih) and a weight per head (weights_proj: d -> n_ih); in each of the L_hca
    heavily compressed attention layers kv_proj and gate_proj d -> d_v, position_bias
    m_hca x d_v and an RMSNorm of d_v. No biases."""
    on = sw("kvc")
    return [
        Part("csa/compressor", on * (4 * d * d_v + 2 * m_csa * d_v + d_v), "deepseek2026v4"),
        Part("csa/indexer/compressor", on * (4 * d * d_ih + 2 * m_csa * d_ih + d_ih),
             "deepseek2026v4"),
        Part("csa/indexer/q", on * r_q * n_ih * d_ih, "deepseek2026v4"),
        Part("csa/indexer/weights", on * d * n_ih, "deepseek2026v4"),
        Part("hca/compressor", on * (2 * d * d_v + m_hca * d_v + d_v), "deepseek2026v4"),
    ]


def hyper_connection_params() -> list[Part]:
    """HY-V4's hyper-connections (``sw_hc``; Zhu et al. 2024, Hyper-Connections, in the form of
    transformers 5.24's HYV4HyperConnection): before the attention and before the FFN block of
    every layer a mixer reads the n_hc residual streams flattened (n_hc d) and gives per
    stream a weight to fold them into the block's input and a weight to spread its output back
    (fn: n_hc d -> 2 n_hc), with a bias per weight (base, 2 n_hc) and two scales (scale)."""
    return [Part("mixers", sw("hc") * 2 * (2 * n_hc * n_hc * d + 2 * n_hc + 2), "tencent2026hyv4"),
            # Qwen4-Exp's gated residuals (sw_ghc; Qwen4ExpTextGatedResidual), before the
            # attention and before the MoE block of every layer: an RMSNorm of each stream
            # (n_hc d weights), the input mixer n_hc d -> r_hc -> n_hc d and the injection
            # weights n_hc d -> n_hc, no biases
            Part("input_mix_down", sw("ghc") * 2 * n_hc * d * r_hc, "qwen2026qwen4exp"),
            Part("gates", sw("ghc") * 2 * (n_hc * d + r_hc * n_hc * d + n_hc * n_hc * d),
                 "qwen2026qwen4exp"),
            # DeepSeek-V4's manifold-constrained hyper-connections (sw_hcm; DeepseekV4HyperConnection):
            # each mixer also gives the n_hc x n_hc residual mix, made doubly stochastic by
            # Sinkhorn-Knopp iterations (n_hc^2 more outputs of fn, n_hc^2 biases, a third scale)
            Part("residual_mix", sw("hcm") * 2 * (n_hc**3 * d + n_hc**2 + 1), "deepseek2026v4")]


def hyper_head_params():
    """HY-V4's hyper head (``sw_hc``; HYV4HyperHead): before the final norm the n_hc streams
    fold into one by weights from the flattened streams (hc_fn: n_hc d -> n_hc), a bias per
    stream (hc_base) and one scale (hc_scale)."""
    return sw("hc") * (n_hc * n_hc * d + n_hc + 1)


def gated_mixer_params():
    """Qwen4-Exp's final mixer (``sw_ghc``; transformers 5.24 Qwen4ExpTextModel
    .hyper_connection_mixer, a gated residual without injection weights): the streams' norm
    (n_hc d) and the input mixer n_hc d -> r_hc -> n_hc d that folds them into one."""
    return sw("ghc") * (n_hc * d + 2 * n_hc * d * r_hc)


def ngram_ple_params() -> list[Part]:
    """Qwen4-Exp's hashed n-gram per-layer embeddings (``sw_ngp``; transformers 5.24
    Qwen4ExpTextPLELayer, Qwen4ExpTextNGramEmbedding), in L_ple layers: the n-gram tables, V_ng
    rows of d_ng summed over those layers (each layer's heads sized by primes, padded: the
    family file computes V_ng), and per layer a key projection d_pe -> n_hc d, a value
    projection d_pe -> d (no biases), three grouped RMSNorms of n_hc d and a depthwise
    convolution of K_pe taps over the n_hc d stream channels (no bias)."""
    on = sw("ngp")
    return [
        Part("tables", on * V_ng * d_ng, "qwen2026qwen4exp"),
        Part("layers", on * L_ple * (d_pe * (n_hc + 1) * d + (3 + K_pe) * n_hc * d),
             "qwen2026qwen4exp"),
    ]


def ffn_params() -> list[Part]:
    """Dense position-wise FFN, plain (up, down) or gated (gate, up, down), of width d_ff;
    an xIELU activation (``sw_xielu``, Apertus) learns two scalars (alpha_p, alpha_n); BitNet
    normalizes the d_ff-wide product before the down projection (``sw_ffn_sub``)."""
    bias = sw("ffn_bias")
    return [
        Part("gate", sw("gated") * linear(d, d_ff, bias), "shazeer2020"),
        Part("up", linear(d, d_ff, bias), "vaswani2017"),
        # (GTE: the down projection alone biased, sw_down_bias)
        Part("down", linear(d_ff, d, bias) + sw("down_bias") * d, "vaswani2017"),
        # Dory: per-channel scales of the gate and up projections (suv_gate, suv_up)
        # (Inkling: the dense MLP's global output scale, sw_rsh)
        Part("act", sw("xielu") * 2 + sw("nscale") * 2 * d_ff + sw("rsh"), "huang2025"),
        # BitNet: a norm of width d_ff on the gated product before down
        Part("sub_norm", sw("ffn_sub") * (sw("norm_w") + sw("norm_b")) * d_ff, "wang2023bitnet"),
    ]


def expert_width():
    """Width of a routed expert: d_moe where the config gives one, else d_ff (Mixtral)."""
    return d_ff + sw("moe_width") * (d_moe - d_ff)


def shared_width():
    """Width of a shared expert: d_sh where given, else the routed experts' width."""
    return expert_width() + sw("sh_width") * (d_sh - expert_width())


def moe_params() -> list[Part]:
    """A mixture-of-experts FFN: a d x E router (GPT-OSS: with a bias), E experts of width
    d_moe (GPT-OSS: with biases), and E_s always-on shared experts of width d_sh
    (DeepSeekMoE), which Qwen2-MoE scales by a sigmoid gate d -> 1; A.X-K1 norms the block's
    output (``sw_moe_norm``)."""
    moe, gated, bias = sw("router"), sw("gated"), sw("ffn_bias")
    shared = moe * sw("shared") * E_s
    d_moe, d_sh = expert_width(), shared_width()
    return [
        # LongCat-Flash: the router scores Z_e zero-computation experts too (sw_zx); Inkling
        # the E_s shared experts (sw_rsh)
        # ZAYA (sw_rmlp): down_proj d -> d_r (biased), then an MLP on the d_r state: its
        # RMSNorm, fc1 and fc2 (d_r x d_r, biased) and out_proj d_r -> E + 1 (a class that
        # skips the experts)
        Part("router", moe * ((1 - sw("rmlp")) * d * (E + sw("zx") * Z_e + sw("rsh") * E_s)
                              + sw("rmlp") * (d * d_r + 2 * d_r**2 + 4 * d_r + d_r * (E + 1))),
             "shazeer2017"),
        Part("router_bias", moe * sw("router_bias") * E, "openai2025"),
        # LongCat-Flash: transformers allocates the fused gate_up rows of the Z_e
        # zero-computation experts too, which no token uses (sw_zx)
        Part("experts/gate", moe * (E + sw("zx") * Z_e) * gated * d * d_moe, "shazeer2020"),
        Part("experts/up", moe * (E + sw("zx") * Z_e) * d * d_moe, "fedus2022"),
        Part("experts/down", moe * E * d_moe * d, "fedus2022"),
        Part("experts/bias", moe * sw("expert_bias") * E * ((1 + gated) * d_moe + d), "openai2025"),
        Part("shared/gate", shared * gated * linear(d, d_sh, bias), "dai2024"),
        Part("shared/up", shared * linear(d, d_sh, bias), "dai2024"),
        Part("shared/down", shared * linear(d_sh, d, bias), "dai2024"),
        Part("shared_gate", moe * sw("shared_gate") * d, "qwen2024moe"),
        # Gemma 4: the experts beside a dense MLP (the shared expert): a norm before the
        # experts and one after each branch, and a router that scales its input (d) and each
        # expert's weight (E)
        Part("branch_norms", moe * sw("pmoe") * 3 * norm_params(), "gemma4_2026"),
        # (Inkling: the router's global scale, sw_rsh)
        # (ZAYA: the scale of the state carried from the previous layer's router, d_r, in
        # every MoE layer but the first: accounting.stack_value)
        Part("router_scales", moe * (sw("pmoe") * (d + E) + sw("rsh") + sw("rmlp") * d_r),
             "gemma4_2026"),
        Part("norm", moe * sw("moe_norm") * norm_params(), "skt2026axk1"),
        Part("norm_gate", moe * sw("gnorm") * 2 * d * r_g, "skt2026axk2"),
        Part("bias", moe * sw("moa") * d, "shen2024jetmoe"),  # JetMoE's MoE output bias
    ]


NORM_SOURCE = "ba2016"


def norm_params(width=d) -> sympy.Expr:
    """One LayerNorm (scale and shift: 2 width), scale-only LayerNorm as in T5 (width) or
    RMSNorm (width), over ``width`` channels (d unless said)."""
    return sw("norm_w") * width + sw("norm_b") * width


def embedding_width():
    """Width of the token table and the tied head: d, or d_emb where OPT projects it in and
    out or ELECTRA's, RoFormer's and RemBERT's embedding stage has that width (``sw_proj_emb``)."""
    return d + sw("proj_emb") * (d_emb - d)


def stage_width():
    """Width of the position and token-type tables and the norm after the embeddings: d, or
    d_emb in ELECTRA's, RoFormer's and RemBERT's embedding stage (``sw_emb_stage``)."""
    return d + sw("emb_stage") * (d_emb - d)


def head_width():
    """Width the output head reads (and the masked-LM transform gives): the token table's, or
    RemBERT's output_embedding_size d_out (``sw_d_out``, only beside its embedding stage)."""
    return embedding_width() + sw("d_out") * (d_out - d_emb)


def embedding_params() -> list[Part]:
    """Token table V x d (V x d_emb with OPT's projections d_emb -> d in and d -> d_emb out,
    no bias; with ELECTRA's embedding stage the position and token-type tables are d_emb wide
    too and one biased projection d_emb -> d follows), learned position table P x d (or
    RoFormer's frozen rotary table P x d_h),
    token-type table T x d (BERT), and Gemma 3n's per-layer input table, V_ple rows of L d_ple
    (``sw_ple``)."""
    return [
        Part("token", sw("tok_emb") * K_cb * (V + V_x) * embedding_width(), "vaswani2017"),
        Part("project_in", sw("proj_emb") * d_emb * d + sw("emb_stage") * d, "zhang2022"),
        Part("project_out", sw("proj_emb") * (1 - sw("emb_stage")) * d * d_emb, "zhang2022"),
        # (RoFormer: its rotary table, frozen, P x d_h)
        Part("position", sw("pos_emb") * P * stage_width() + sw("rot_table") * P * d_h,
             "devlin2019"),
        Part("token_type", sw("type_emb") * T * stage_width(), "devlin2019"),
        # LayoutLM: the x, y, height and width tables of each token's box, P_2d rows each
        Part("box", sw("box") * 4 * P_2d * stage_width(), "xu2020layoutlm"),
        # LUKE: the entity table (V_ent x d_ent, projected to d when narrower, no bias) with
        # position and token-type tables of its own and a LayerNorm
        Part("entity", sw("ent") * (V_ent * d_ent + P * d + T * d + 2 * d) + sw("entp") * d_ent * d,
             "yamada2020luke"),
        Part("per_layer", sw("ple") * V_ple * L * d_ple, "gemma3n2025"),
        # RoCBERT: pronunciation and shape tables, and the map of the concatenated inputs
        Part("side", sw("side") * (V_pr * d_pr + V_sp * d_sp), "su2022rocbert"),
        Part("map_in", sw("cat") * ((d + d_cat) * d + d), "su2022rocbert"),
    ]


def backbone_params() -> list[Part]:
    """Gemma 4's assistant (Gemma4AssistantForCausalLM): its input, the target model's token
    embedding and last hidden state concatenated (2 d_bb), projected into d, and its output
    projected back to the target's width d_bb for the next draft step; bias-free, 0 when d_bb
    is 0 (every other model)."""
    return [Part("pre_projection", 2 * d_bb * d, "gemma4_assistant_2026"),
            Part("post_projection", d * d_bb, "gemma4_assistant_2026")]


def relative_bias_params() -> sympy.Expr:
    """T5's relative-attention bias: R buckets x n_h scalars, held by the first layer of a stack."""
    return sw("rel_bias") * R * n_h


def block_residual_params() -> sympy.Expr:
    """Inkling 2's block attention residuals (``sw_bres``, decoder stacks): Q_in learned
    queries of width d (the MLP input's in every layer, the attention input's in every layer
    but the first, three in a global layer, the final input's)."""
    return sw("bres") * Q_in * d


def relative_logits_params() -> sympy.Expr:
    """Inkling's relative-position logits (``sw_rlog``, decoder stacks): each attention layer's
    bank of d_rel profiles over its backward distances (rel_logits_proj.proj: d_rel x the
    window in a sliding layer, d_rel x rel_extent in a global one), X_rel distances summed
    over the layers; each layer's r_proj is the attention part ``rel_proj``."""
    return sw("rlog") * d_rel * X_rel


def head_params() -> list[Part]:
    """Output head -> V: its own V x (its input width) weight only when untied (a tied head
    reuses the token table), plus an optional V bias; MusicGen has one per codebook (K_cb)."""
    return [
        Part("weight", sw("head") * sw("head_untied") * K_cb * V * head_width(), "press2017"),
        Part("bias", sw("head") * sw("head_bias") * K_cb * V, "vaswani2017"),
        # Gemma 4's assistants (use_ordered_embeddings): the centroid layer, d -> V_c, no bias
        Part("centroids", sw("cmask") * d * V_c, "gemma4_assistant_2026"),
    ]


def pooler_params() -> sympy.Expr:
    """BERT pooler: a d x d dense layer with bias applied to the first token."""
    return sw("pooler") * linear(d, d, 1)


def relative_embedding_params() -> sympy.Expr:
    """DeBERTa-v2's relative-position table (``sw_dis``): 2 K_rel embeddings of width d held
    once by the encoder, and its LayerNorm (``sw_disn``, norm_rel_ebd layer_norm)."""
    return sw("dis") * 2 * K_rel * d + sw("disn") * 2 * d


def entity_head_params() -> sympy.Expr:
    """LUKE's entity prediction head (``sw_enth``): a transform d -> d_ent (biased) and a
    LayerNorm, then a decoder tied to the entity table with a bias of V_ent; run only on
    entity inputs."""
    return sw("enth") * (linear(d, d_ent, 1) + 2 * d_ent + V_ent) + sw("entu") * V_ent * d_ent


def contact_head_params() -> sympy.Expr:
    """ESM's contact-prediction head (``sw_contact``): a logistic regression, biased, over the
    L n_h attention maps of every layer and head; held by every EsmModel, run only by
    predict_contacts (no forward FLOPs)."""
    return sw("contact") * linear(L * n_h, 1, 1)


def mlm_transform_params() -> sympy.Expr:
    """BERT masked-LM head transform: dense d x d with bias (``sw_mlm_bias``; ModernBERT's
    classifier_bias leaves it out), then LayerNorm (2d). Its decoder weight is tied to the token
    table; its V-bias is the head bias. ELECTRA's generator and RoFormer's transform end at the
    token table's width d_emb, RemBERT's at d_out (:func:`head_width`)."""
    return (sw("mlm") * (linear(d, head_width(), sw("mlm_bias")) + norm_params(head_width()))
            # UltraBERT: linear1 d -> d_ph and linear2 d_ph -> d, bias-free (sw_hmlp)
            + sw("hmlp") * 2 * d * d_ph)


# -- mixers of hybrid stacks ---------------------------------------------------------------

def linear_qkv_width():
    """Channels of a linear-attention layer's queries, keys and values: n_lk heads of d_lk
    for q and k, n_lv heads of d_lv for v (the depthwise convolution runs over all three)."""
    return 2 * n_lk * d_lk + n_lv * d_lv


def linear_attention_params() -> list[Part]:
    """A linear-attention mixer, Gated DeltaNet (``sw_gdn``: Qwen3-Next, Qwen3.5) or Kimi Delta
    Attention (Kimi-Linear):

    * q, k, v: d -> 2 n_lk d_lk + n_lv d_lv (one fused in_proj or three projections);
    * a depthwise causal convolution of width K_conv over those channels (no bias);
    * beta, the delta rule's write strength: d -> n_lv;
    * the decay: Gated DeltaNet a d -> n_lv projection with dt_bias and A_log (n_lv each);
      KDA a channel-wise forget gate, low-rank d -> d_lk -> n_lv d_lk, with dt_bias
      (n_lv d_lk) and A_log (n_lv);
    * the output gate: Gated DeltaNet z, d -> n_lv d_lv; KDA low-rank d -> d_lv -> n_lv d_lv;
    * a norm of width d_lv shared by the heads, and out d <- n_lv d_lv.

    Lightning attention (``sw_light``, MiniMax-01; transformers' MiniMaxLightningAttention)
    has the q, k, v projection, Gated DeltaNet's output gate, a norm over all n_lv d_lv
    channels and out, and no convolution, beta or decay parameters (its decay rates are
    fixed buffers).

    RWKV-4's time mixing (``sw_rwkv``; Peng et al. 2023; transformers' RwkvSelfAttention) is
    one head of d_lk = d_lv: receptance, key and value (the q, k, v rows) and output (o), the
    decays time_decay and time_first (d_lv each), no convolution, beta, output gate or norm;
    ``mix`` holds the time-mix coefficients of the layer's two blocks (3d + 2d) and its
    channel mixing's receptance gate, d x d (RwkvFeedForward; its key and value are the FFN's
    up and down).

    xLSTM's mLSTM (``sw_mlstm``; Beck et al. 2024; transformers' xLSTMLayer) has q, k, v
    (n_lk = n_lv heads), an output gate per channel (ogate_preact, the output_gate row), the
    input and forget gates (igate_preact, fgate_preact: d -> n_lv with biases, in ``decay``), a
    norm over all n_lv d_lv channels and out; no convolution or beta.

    Ling's hybrids (``sw_lfg``, with KDA; transformers' BailingHybridDeltaAttention) make KDA's
    forget gate (f_proj d -> n_lv d_lk) and output gate (g_proj d -> n_lv d_lv) full-rank
    projections.
    """
    light, rwkv, full, ml = sw("light"), sw("rwkv"), sw("lfg"), sw("mlstm")
    gdn, kda, conv = sw("gdn"), 1 - sw("gdn") - light - rwkv - ml, 1 - light - rwkv - ml
    return [
        Part("qkv", d * linear_qkv_width(), "yang2025"),
        Part("conv", conv * linear_qkv_width() * K_conv, "yang2025"),
        Part("beta", conv * d * n_lv, "yang2025"),
        # (xLSTM's mLSTM: the input and forget gates, d -> n_lv each with biases)
        Part("decay", gdn * (d * n_lv + 2 * n_lv) + rwkv * 2 * d_lv + ml * 2 * (d * n_lv + n_lv)
             + kda * ((1 - full) * (d * d_lk + d_lk * n_lv * d_lk) + full * d * n_lv * d_lk
                      + n_lv * d_lk + n_lv), "kimi2025"),
        Part("mix", rwkv * (5 * d + d * d), "peng2023rwkv"),
        Part("output_gate", (gdn + light + kda * full + ml) * d * n_lv * d_lv
             + kda * (1 - full) * (d * d_lv + d_lv * n_lv * d_lv), "yang2025"),
        Part("norm", (1 - rwkv) * (d_lv + (light + ml) * (n_lv - 1) * d_lv), "yang2025"),
        Part("o", n_lv * d_lv * d, "yang2025"),
    ]


def ssm_conv_width():
    """Channels of a Mamba mixer's depthwise convolution: x (d_in) for Mamba-1; x, B and C
    (d_in + 2 G_s N_s) for Mamba-2."""
    return d_in + (1 - sw("mamba1")) * 2 * G_s * N_s


def ssm_in_width():
    """Outputs of a Mamba mixer's in_proj: x and z (2 d_in); Mamba-2 adds B, C (2 G_s N_s)
    and dt (H_s)."""
    return 2 * d_in + (1 - sw("mamba1")) * (2 * G_s * N_s + H_s)


def ssm_params() -> list[Part]:
    """A Mamba mixer. Mamba-1 (``sw_mamba1``, Jamba): in_proj d -> 2 d_in, a depthwise conv
    over d_in channels, x_proj d_in -> R_dt + 2 N_s (dt, B, C), dt_proj R_dt -> d_in with
    bias, A (d_in x N_s) and D (d_in), Jamba's RMSNorms on dt, B and C, out_proj d_in -> d.
    Mamba-2 (Nemotron-H, Falcon-H1, Granite-4): in_proj d -> 2 d_in + 2 G_s N_s + H_s, a
    depthwise conv over x, B and C, dt_bias, A_log and D (H_s each), a gated RMSNorm over d_in
    (``sw_ssm_norm``), out_proj d_in -> d.

    Griffin's recurrent block (``sw_rglru``, with ``sw_mamba1``; De et al. 2024,
    RecurrentGemma; transformers' RecurrentGemmaRecurrentBlock) keeps Mamba-1's in_proj (its
    linear_x and linear_y), conv and out_proj, and in place of x_proj, dt_proj, A and D the
    RG-LRU's input and recurrent gates, d_in / d_bk blocks of d_bk^2 with biases, and its
    recurrence parameter (d_in): 2 d_in d_bk + 3 d_in, in ``decay``."""
    m1, m2, rg = sw("mamba1"), 1 - sw("mamba1"), sw("rglru")
    return [
        Part("in_proj", linear(d, ssm_in_width(), sw("ssm_bias")), "dao2024"),
        Part("conv", linear(K_conv, ssm_conv_width(), sw("conv_bias")), "dao2024"),
        Part("x_proj", m1 * (1 - rg) * d_in * (R_dt + 2 * N_s), "gu2023"),
        Part("dt_proj", m1 * (1 - rg) * linear(R_dt, d_in, 1), "gu2023"),
        Part("decay", m1 * (1 - rg) * (d_in * N_s + d_in) + m2 * 3 * H_s
             + rg * (2 * d_in * d_bk + 3 * d_in), "de2024griffin"),
        Part("inner_norms", m1 * sw("ssm_inner") * (R_dt + 2 * N_s), "gu2023"),
        Part("norm", m2 * sw("ssm_norm") * d_in, "dao2024"),
        Part("out_proj", linear(d_in, d, sw("ssm_out_bias")), "dao2024"),
    ]


def short_conv_params() -> list[Part]:
    """LFM2's short-convolution mixer: in_proj d -> 3d (gates B, C and the input x), a
    depthwise causal conv of width K_conv over d channels, out_proj d -> d; ``sw_conv_bias``
    gives all three biases."""
    bias = sw("conv_bias")
    return [
        Part("in_proj", linear(d, 3 * d, bias), "liquid2025"),
        Part("conv", linear(K_conv, d, bias), "liquid2025"),
        Part("out_proj", linear(d, d, bias), "liquid2025"),
    ]


# -- Gemma 3n: AltUp, LAuReL, per-layer inputs ---------------------------------------------

def altup_params() -> list[Part]:
    """Per layer, AltUp's bookkeeping around the one computed stream of n_alt (Baykal et al.
    2023; transformers' Gemma3nTextAltUp): a d -> n_alt router with its norm, prediction
    coefficients n_alt -> n_alt^2 and correction coefficients n_alt -> n_alt (no biases), and a
    d-wide output scale (made whether or not the config applies it)."""
    on = sw("altup")
    return [
        Part("correct_output_scale", on * d, "baykal2023"),
        Part("correction_coefs", on * n_alt**2, "baykal2023"),
        Part("prediction_coefs", on * n_alt**3, "baykal2023"),
        Part("modality_router", on * d * n_alt, "baykal2023"),
        Part("router_norm", on * norm_params(), "baykal2023"),
    ]


def laurel_params() -> list[Part]:
    """LAuReL's low-rank residual beside attention: d -> r_laurel -> d without biases, then a
    norm (Menghani et al. 2024)."""
    on = sw("laurel")
    return [
        Part("left", on * d * r_laurel, "menghani2024"),
        Part("right", on * r_laurel * d, "menghani2024"),
        Part("norm", on * norm_params(), "menghani2024"),
    ]


def skipped_layer_params() -> sympy.Expr:
    """Mllama's cross-attention layers, which a forward without cross-attention states skips
    (parameters only): per layer q d -> n_h d_h, k and v d -> n_kv d_h, o back to d (biased as
    the self-attention's), q and k norms of head width, the norm before the FFN, the dense FFN
    and two tanh gates of one scalar each; L_x of them. (The norm before a layer's mixer is
    counted in all L layers of a stack, these included.)"""
    bias = sw("ffn_bias")
    one = (linear(d, n_h * d_h, sw("bias_q")) + linear(d, n_kv * d_h, sw("bias_k"))
           + linear(d, n_kv * d_h, sw("bias_v")) + linear(n_h * d_h, d, sw("bias_o"))
           + 2 * norm_params(d_h) + norm_params() + sw("gated") * linear(d, d_ff, bias)
           + linear(d, d_ff, bias) + linear(d_ff, d, bias) + 2)
    return sw("skip") * L_x * one


def adapter_params() -> list[Part]:
    """X-MOD's per-language adapters after a layer's FFN: n_ad bottlenecks d -> d_ad -> d with
    biases (each token runs the one of its language), and their own LayerNorm where
    adapter_layer_norm asks (else they reuse the output's)."""
    return [
        Part("bottlenecks", sw("adapter") * n_ad * (2 * d * d_ad + d_ad + d), "pfeiffer2022xmod"),
        Part("norm", sw("ad_norm") * norm_params(), "pfeiffer2022xmod"),
    ]


def per_layer_input_params() -> list[Part]:
    """Per layer, the gate that mixes the layer's slice of the per-layer input in: d -> d_ple,
    d_ple -> d (no biases) and a norm of width d (Gemma 3n)."""
    on = sw("ple")
    return [
        Part("gate", on * d * d_ple, "gemma3n2025"),
        Part("projection", on * d_ple * d, "gemma3n2025"),
        Part("norm", on * norm_params(), "gemma3n2025"),
    ]


def per_layer_model_params() -> list[Part]:
    """Once per model: the d -> L d_ple projection of the token embedding and its norm of width
    d_ple (the per-layer input table itself is an embedding: :func:`embedding_params`)."""
    on = sw("ple")
    return [
        Part("model_projection", on * d * L * d_ple, "gemma3n2025"),
        Part("model_norm", on * (sw("norm_w") + sw("norm_b")) * d_ple, "gemma3n2025"),
    ]


def altup_model_params() -> list[Part]:
    """Once per model: n_alt - 1 d x d projections that make the extra streams from the
    embedding, and n_alt - 1 that bring them back before the final norm (no biases)."""
    on = sw("altup")
    return [
        Part("projections", on * (n_alt - 1) * d**2, "baykal2023"),
        Part("unembed_projections", on * (n_alt - 1) * d**2, "baykal2023"),
    ]

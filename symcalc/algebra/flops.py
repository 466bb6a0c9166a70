"""Forward-pass FLOPs of every component, as sympy expressions.

The matmul count follows the command-line contract: 2 FLOPs per multiply-accumulate of
every matrix product (``torch.utils.flop_counter.FlopCounterMode`` on the transformers
model with eager attention), embedding lookups free, each token through exactly its top-k
experts, the head over every position. Attention scores cover
``s**2 - sw_causal*(s**2 - sw_causal_exact*s)/2`` query-key pairs, so the full matrix
(contract), half of it, or the exact lower triangle s(s+1)/2 is one substitution away.

Non-matmul work (softmax, norms, activations, residual adds) is a separate breakdown with
the per-element costs of :data:`NONMATMUL_COSTS`, a stated convention.
"""
from __future__ import annotations

from functools import lru_cache

import sympy

from .breakdown import Breakdown, Leaf
from . import accounting, memory
from .caps import max_of, min_of
from .components import (decoder_only_off, expert_width, head_width,
                         linear_qkv_width, stage_width,
                         q_b_width, qk_width, shared_width, single_only_off, ssm_conv_width,
                         ssm_in_width, sw,
                         value_width)
from .symbols import (SIZES, K_cb, d_ad, d_cat, E, E_s, H_s, K_conv, L, L_attn, L_conv, L_dec, L_idx, L_lin, L_ssm, N_s,
                      Q_c, R_dt, A_g, A_l, L_local, W, Z_e, d_ai, r_ad, d_bk, d_bb, V_c, V_sel,
                      V, b, d,
                      d_emb, d_ff, d_g, d_h, d_ih, d_in, d_lk, d_lv, d_moe, d_nope, d_ple, d_rope,
                      d_sh, d_v, k, n_alt, n_h, n_ih, n_kv, n_lv, r_g, r_kv, r_laurel, r_q, s,
                      s_dec, d_rel, X_rel, S_k, K_g, d_r, n_hc, n_kvg, X_res, K_rel, d_ph, r_hc,
                      C_ix, L_ple, d_pe, K_pe,
                      m_csa, m_hca, L_csa, L_hca, g_o, r_o)

# FLOPs per element for work that is not a matrix product (a convention, shown in
# derivations): softmax = max, subtract, exp, sum, divide; the score scaling 1/sqrt(d_h);
# LayerNorm = mean, centre, variance, normalise, scale-and-shift (RMSNorm drops the mean and
# the shift); the activation and the gate's product one each; a residual add one.
NONMATMUL_COSTS = {"softmax": 5, "scale": 1, "layernorm": 5, "rmsnorm": 3, "activation": 1,
                   "gate_product": 1, "residual": 1}


def pairs(n) -> sympy.Expr:
    """Query-key pairs of self-attention over n tokens under the causal switches."""
    return n**2 - sw("causal") * (n**2 - sw("causal_exact") * n) / 2


def _attention(tokens_q, tokens_kv, batch_pairs, decoder: bool = False, seq=s) -> list[Leaf]:
    """Q from the query tokens; K, V from the key/value tokens (encoder output for
    cross-attention); scores Q.K^T and the weighted sum of V over ``batch_pairs``. Under MLA
    (DeepSeek-V2) the projections are the low-rank ones of
    :func:`symcalc.algebra.components.attention_params`, and heads are d_nope + d_rope wide for
    scores, d_v for values."""
    mla, lora, std = sw("mla"), sw("q_lora"), 1 - sw("mla")
    q_out = n_h * (d_nope + d_rope)
    d_in_ = d_ai if decoder else d  # Zamba's shared blocks: q, k, v read 2d inputs
    # DeBERTa's relative-position span: K_rel each side (v2), min(seq, K_rel) in v1 (sw_dv1)
    span = K_rel + sw("dv1") * (min_of(seq, K_rel) - K_rel)
    return [
        Leaf("router", sw("moa") * 2 * tokens_q * d * E, "shen2024jetmoe"),
        Leaf("q", 2 * tokens_q * (std * d_in_ * n_h * d_h + mla * (1 - lora) * d * q_out),
             "vaswani2017"),
        Leaf("q_gate", sw("attn_gate") * 2 * tokens_q * d * n_h * d_g, "qwen2025next"),
        Leaf("q_a", mla * lora * 2 * tokens_q * d * r_q, "deepseek2024"),
        Leaf("q_b", mla * lora * 2 * tokens_q * (q_b_width() * (q_out + sw("mla_gate") * n_h * d_v)
                                                 if decoder else r_q * q_out), "deepseek2024"),
        Leaf("k", std * 2 * tokens_kv * d_in_ * n_kv * d_h, "ainslie2023"),
        Leaf("v", std * 2 * tokens_kv * d_in_ * n_kv * d_h, "ainslie2023"),
        Leaf("kv_a", mla * 2 * tokens_kv * d * (r_kv + d_rope), "deepseek2024"),
        Leaf("kv_b", (sw("kvb") if decoder else mla) * 2 * tokens_kv * r_kv * n_h
             * (d_nope + d_v), "deepseek2024"),
        Leaf("scores", 2 * n_h * qk_width() * batch_pairs, "vaswani2017"),
        Leaf("context", 2 * n_h * value_width() * batch_pairs, "vaswani2017"),
        Leaf("o", sw("attn_out") * 2 * tokens_q * n_h * value_width() * d, "vaswani2017"),
    ] + ([  # DeepSeek-V4's grouped output projection: o_a_proj as a batched product per group,
        # then o_b_proj
        Leaf("o_a", sw("ogrp") * 2 * tokens_q * n_h * d_v * r_o, "deepseek2026v4"),
        Leaf("o_b", sw("ogrp") * 2 * tokens_q * g_o * r_o * d, "deepseek2026v4"),
        # Doge's dynamic mask: dt_proj over every value
        Leaf("dyn_mask", sw("dmask") * 2 * tokens_kv * n_kv * d_h * n_kv, "shi2024doge"),
        # Inkling: the four depthwise convolutions (keys, values, attention and MLP outputs)
        # as conv_flops runs them, tokens_q = b seq
        Leaf("short_convs", sw("sconv") * 2 * (tokens_q + b * (K_conv - 1))
             * (2 * n_kv * d_h + 2 * d) * K_conv, "inkling2026"),
        Leaf("rel_proj", sw("rlog") * 2 * tokens_q * d * n_h * d_rel, "inkling2026"),
        # DeBERTa-v2: the 2 K_rel relative-position embeddings projected to keys and queries
        # (once per layer, whatever the batch; share_att_key projects both with key_proj and
        # query_proj), then the queries against the position keys (c2p) and the keys against
        # the position queries (p2c), 2 K_rel distances each
        Leaf("pos_k", (sw("dpk") + sw("dsh")) * 2 * 2 * span * d * n_h * d_h, "he2021deberta"),
        Leaf("pos_q", (sw("dpq") + sw("dsh")) * 2 * 2 * span * d * n_h * d_h, "he2021deberta"),
        # Nystromformer: the value convolution, K_conv taps per value channel of every head
        Leaf("value_conv", sw("vconv") * 2 * tokens_kv * n_h * d_h * K_conv, "xiong2021nystromformer"),
        Leaf("c2p", sw("c2p") * 2 * tokens_q * n_h * d_h * 2 * span, "he2021deberta"),
        Leaf("p2c", sw("p2c") * 2 * tokens_kv * n_h * d_h * 2 * span, "he2021deberta"),
        # Inkling 2: sink_proj d -> n_h, and in the global layers (accounting.group_count) the
        # key and value convolutions' weight_proj, d -> n_kvg K_conv each
        Leaf("sinks", sw("skp") * 2 * tokens_q * d * n_h, "inkling2026"),
        Leaf("dyn_convs", sw("dcv") * 2 * 2 * tokens_q * d * n_kvg * K_conv, "inkling2026"),
        # ZAYA: the depthwise convolution over the queries and keys padded by K_conv + K_g - 2
        # (seq + K_g - 1 outputs), the grouped one (seq outputs, d_h inputs each), and the
        # delayed value projection of the zero state before the first token (b rows)
        Leaf("cca", sw("cca") * (2 * (tokens_q + b * (K_g - 1)) * (n_h + n_kv) * d_h * K_conv
                                 + 2 * tokens_q * (n_h + n_kv) * d_h * d_h * K_g
                                 + b * d * n_kv * d_h), "zyphra2025cca")]
        if decoder else [])


def qsa_blocks(seq) -> sympy.Expr:
    """(query, key block) pairs the QSA indexer scores over ``seq`` tokens of one sequence
    (transformers 5.24 Qwen4ExpTextQSAIndexer, without a cache): query i sees i + 1 tokens and
    scores their floor((i + 1) / C_ix) complete blocks, so the sum over the sequence is
    q (seq + 1) - C_ix q (q + 1) / 2 with q = floor(seq / C_ix)."""
    q = sympy.floor(seq / C_ix)
    return q * (seq + 1) - C_ix * q * (q + 1) / 2


def _indexer(tokens, batch_pairs, seq) -> list[Leaf]:
    """DeepSeek Sparse Attention's lightning indexer (:func:`symcalc.algebra.components
    .indexer_params`) as transformers' eager DeepseekV32Indexer runs it: its three projections
    on every token, then per query-key pair the n_ih indexer scores q.k over d_ih and their
    sum weighted by the n_ih head weights (one more product per head), over every pair the
    attention mask covers (the top-k selection only masks the attention that follows)."""
    on = sw("dsa")
    return [
        Leaf("attention/indexer/q", on * 2 * tokens * r_q * n_ih * d_ih, "deepseek2025v32"),
        Leaf("attention/indexer/k", on * 2 * tokens * d * d_ih, "deepseek2025v32"),
        Leaf("attention/indexer/weights", on * 2 * tokens * d * n_ih, "deepseek2025v32"),
        Leaf("attention/indexer/logits", on * 2 * n_ih * (d_ih + 1) * batch_pairs,
             "deepseek2025v32"),
        # Qwen4-Exp's QSA indexer (sw_qsa): its projection d -> (n_ih + 1) d_ih on every
        # token, then per query one (n_ih x d_ih) by (d_ih x blocks) product over the complete
        # key blocks it sees (the pooling, norm and rotation of the blocks are elementwise)
        Leaf("attention/indexer/qk", sw("qsa") * 2 * tokens * d * (n_ih + 1) * d_ih,
             "qwen2026qwen4exp"),
        Leaf("attention/indexer/blocks", sw("qsa") * 2 * n_ih * d_ih * b * qsa_blocks(seq), "qwen2026qwen4exp"),
        # MiniMax-M3's indexer (sw_msa): q_proj and k_proj on every token, then every query of
        # the n_ih heads against every key, one (seq x d_ih) by (d_ih x seq) product per head
        # over the pairs the attention covers (masking, max-pooling into key blocks and the
        # top-k are no matmuls)
        Leaf("attention/indexer/q_k_proj", sw("msa") * 2 * tokens * d * (n_ih + 1) * d_ih,
             "minimax2026m3"),
        Leaf("attention/indexer/token_scores", sw("msa") * 2 * n_ih * d_ih * batch_pairs,
             "minimax2026m3"),
    ]


def _compressors(seq) -> list[Leaf]:
    """DeepSeek-V4's KV compressors (:func:`symcalc.algebra.components.compressor_params`) as
    transformers' eager DeepseekV4Attention runs them on b sequences of ``seq`` tokens without a
    cache: kv_proj and gate_proj on every token (the gated sum over each window is elementwise),
    C = floor(seq / m) compressed entries of width d_v appended to the sliding keys and values of
    every query (the block bias only masks them: scores and context over seq x C more pairs per
    head), and in a CSA layer its indexer's projections and its scores of the n_ih queries against
    the C indexer keys (the head weights are summed elementwise)."""
    on, tokens = sw("kvc"), b * seq
    c_csa, c_hca = sympy.floor(seq / m_csa), sympy.floor(seq / m_hca)
    return [
        Leaf("attention/csa/compressor", on * 2 * tokens * d * 4 * d_v, "deepseek2026v4"),
        Leaf("attention/csa/indexer/compressor", on * 2 * tokens * d * 4 * d_ih, "deepseek2026v4"),
        Leaf("attention/csa/indexer/q", on * 2 * tokens * r_q * n_ih * d_ih, "deepseek2026v4"),
        Leaf("attention/csa/indexer/weights", on * 2 * tokens * d * n_ih, "deepseek2026v4"),
        Leaf("attention/csa/indexer/logits", on * 2 * tokens * n_ih * d_ih * c_csa, "deepseek2026v4"),
        Leaf("attention/csa/scores", on * 2 * n_h * d_v * tokens * c_csa, "deepseek2026v4"),
        Leaf("attention/csa/context", on * 2 * n_h * d_v * tokens * c_csa, "deepseek2026v4"),
        Leaf("attention/hca/compressor", on * 2 * tokens * d * 2 * d_v, "deepseek2026v4"),
        Leaf("attention/hca/scores", on * 2 * n_h * d_v * tokens * c_hca, "deepseek2026v4"),
        Leaf("attention/hca/context", on * 2 * n_h * d_v * tokens * c_hca, "deepseek2026v4"),
    ]


def _ffn(tokens) -> list[Leaf]:
    """A dense FFN layer (width d_ff) on every token."""
    return [
        Leaf("ffn/gate", sw("gated") * 2 * tokens * d * d_ff, "shazeer2020"),
        Leaf("ffn/up", 2 * tokens * d * d_ff, "vaswani2017"),
        Leaf("ffn/down", 2 * tokens * d_ff * d, "vaswani2017"),
    ]


def _moe(tokens) -> list[Leaf]:
    """An MoE layer: the router sees every token, each token goes through its k experts of
    width d_moe and the E_s shared experts of width d_sh (and Qwen2-MoE's d -> 1 gate)."""
    moe, gated = sw("router"), sw("gated")
    shared = moe * sw("shared") * E_s
    d_moe, d_sh = expert_width(), shared_width()
    return [
        Leaf("moe/router", moe * 2 * tokens * ((1 - sw("rmlp")) * d * (E + sw("zx") * Z_e
                                                                  + sw("rsh") * E_s)
                                               + sw("rmlp") * (d * d_r + 2 * d_r**2
                                                               + d_r * (E + 1))),
             "shazeer2017"),
        Leaf("moe/experts/gate", moe * gated * 2 * tokens * k * d * d_moe, "shazeer2020"),
        Leaf("moe/experts/up", moe * 2 * tokens * k * d * d_moe, "fedus2022"),
        Leaf("moe/experts/down", moe * 2 * tokens * k * d_moe * d, "fedus2022"),
        Leaf("moe/shared/gate", shared * gated * 2 * tokens * d * d_sh, "dai2024"),
        Leaf("moe/shared/up", shared * 2 * tokens * d * d_sh, "dai2024"),
        Leaf("moe/shared/down", shared * 2 * tokens * d_sh * d, "dai2024"),
        Leaf("moe/shared_gate", moe * sw("shared_gate") * 2 * tokens * d, "qwen2024moe"),
        Leaf("moe/norm_gate", moe * sw("gnorm") * 2 * tokens * 2 * d * r_g, "skt2026axk2"),
    ]


def conv_flops(seq, channels) -> sympy.Expr:
    """A depthwise causal convolution of width K_conv over ``channels``, as transformers'
    torch path runs it: nn.Conv1d with padding K_conv - 1 computes seq + K_conv - 1 outputs
    per channel (the last K_conv - 1 are cut off afterwards), K_conv multiply-adds each;
    FlopCounterMode counts all of them."""
    return 2 * b * (seq + K_conv - 1) * channels * K_conv


def chunks(seq) -> sympy.Expr:
    """Chunks of Q_c tokens a chunked scan pads ``seq`` to: ceiling(seq / Q_c)."""
    return sympy.ceiling(seq / Q_c)


def linear_core(seq) -> sympy.Expr:
    """The matmuls of transformers' chunked delta rule (torch_chunk_gated_delta_rule for
    Gated DeltaNet, chunk_kimi_delta_attention for KDA) over b sequences padded to whole
    chunks of Q_c = 64, per value head and chunk: Gated DeltaNet two Q_c x Q_c score blocks
    over d_lk and one over d_lv, KDA one over d_lk and two over d_lv (its q.k scores are
    elementwise), then three products with the d_lk x d_lv state (read by the keys and the
    queries, written by the new values). The triangular solve is not a counted matmul."""
    gdn, light, ml = sw("gdn"), sw("light"), sw("mlstm")
    blocks = gdn * (2 * Q_c * d_lk + Q_c * d_lv) + (1 - gdn) * (Q_c * d_lk + 2 * Q_c * d_lv)
    # RWKV's WKV recurrence (sw_rwkv) is elementwise: no matmul
    return (1 - light - sw("rwkv") - ml) * 2 * b * n_lv * chunks(seq) * Q_c \
        * (blocks + 3 * d_lk * d_lv) + light * lightning_core(seq) + ml * mlstm_core(seq)


def mlstm_core(seq) -> sympy.Expr:
    """The matmuls of transformers' native mLSTM kernels (xLSTM, inference mode) over b
    sequences, per head: the first Q_c floor(seq / Q_c) tokens in chunks of Q_c
    (mlstm_chunkwise_fw: per chunk K^T V into the d_lk x d_lv state, Q K^T and its product with
    V over the chunk, the queries' reads of the state and of the normalizer), the rest one
    token at a time (mlstm_recurrent_step_native: k v^T, q C, q n). Over the sequence:
    b n_lv (4 seq d_lk d_lv + 2 seq d_lk + 2 floor(seq / Q_c) Q_c^2 (d_lk + d_lv))
    (Beck et al. 2024, xLSTM)."""
    return b * n_lv * (4 * seq * d_lk * d_lv + 2 * seq * d_lk
                       + 2 * sympy.floor(seq / Q_c) * Q_c**2 * (d_lk + d_lv))


def lightning_core(seq) -> sympy.Expr:
    """The matmuls of transformers' MiniMaxLightningAttention over b sequences in blocks of
    Q_c tokens (block_size; the last block holds what is left, r = seq - Q_c floor(seq / Q_c)),
    per head: within a block of c tokens Q K^T (c x c over d_lk) and its product with V (over
    d_lv); across blocks the queries read the d_lk x d_lv state and the block's keys and values
    write it (c d_lk d_lv each). Over the sequence: 2 b n_lv ((q Q_c^2 + r^2)(d_lk + d_lv)
    + 2 seq d_lk d_lv) (Qin et al. 2024, Lightning Attention-2)."""
    q = sympy.floor(seq / Q_c)
    r = seq - Q_c * q
    return 2 * b * n_lv * ((q * Q_c**2 + r**2) * (d_lk + d_lv) + 2 * seq * d_lk * d_lv)


def ssm_core(seq) -> sympy.Expr:
    """The matmuls of transformers' torch scans over b sequences. Mamba-1 (Jamba's slow path)
    one (d_in x N_s) by N_s product per token; Mamba-2's chunked SSD (mamba2_chunk_scan:
    sequences padded to c = ceiling(s / Q_c) chunks) the Q_c x Q_c blocks C B^T over N_s and
    their product with x over the head dim, the chunk states and their read by C (Q_c d_in N_s
    each), and the recurrence between the c + 1 chunk states ((c + 1)^2 d_in N_s)."""
    m1 = sw("mamba1")
    c = chunks(seq)
    mamba2 = 2 * b * (c * Q_c**2 * (H_s * N_s + d_in) + 2 * c * Q_c * d_in * N_s
                      + (c + 1)**2 * d_in * N_s)
    # the RG-LRU's recurrence (sw_rglru) is elementwise: no matmul
    return (m1 - sw("rglru")) * 2 * b * seq * d_in * N_s + (1 - m1) * mamba2


def _mixers(seq) -> list[Leaf]:
    """The non-attention mixers of a hybrid stack (:func:`symcalc.algebra.components
    .linear_attention_params`, ``ssm_params``, ``short_conv_params``) on b sequences of
    ``seq`` tokens: projections, depthwise convolutions, and the matmuls of the recurrence as
    transformers' torch path runs it (:func:`linear_core`, :func:`ssm_core`)."""
    tokens = b * seq
    gdn, kda = sw("gdn"), 1 - sw("gdn") - sw("light") - sw("rwkv") - sw("mlstm")
    conv = 1 - sw("light") - sw("rwkv") - sw("mlstm")
    full = sw("lfg")  # Ling's hybrids: KDA's gates as full-rank projections
    m1 = sw("mamba1")
    return [
        Leaf("linear_attention/qkv", 2 * tokens * d * linear_qkv_width(), "yang2025"),
        Leaf("linear_attention/conv", conv * conv_flops(seq, linear_qkv_width()), "yang2025"),
        Leaf("linear_attention/beta", conv * 2 * tokens * d * n_lv, "yang2025"),
        # RWKV: the channel mixing's receptance gate
        Leaf("linear_attention/mix", sw("rwkv") * 2 * tokens * d * d, "peng2023rwkv"),
        Leaf("linear_attention/decay", 2 * tokens * (
            gdn * d * n_lv + sw("mlstm") * 2 * d * n_lv
            + kda * ((1 - full) * (d * d_lk + d_lk * n_lv * d_lk)
                                    + full * d * n_lv * d_lk)), "kimi2025"),
        Leaf("linear_attention/output_gate",
             2 * tokens * ((gdn + sw("light") + kda * full + sw("mlstm")) * d * n_lv * d_lv
                           + kda * (1 - full) * (d * d_lv + d_lv * n_lv * d_lv)),
             "yang2025"),
        Leaf("linear_attention/core", linear_core(seq), "yang2025"),  # (mLSTM: beck2024xlstm)
        Leaf("linear_attention/o", 2 * tokens * n_lv * d_lv * d, "yang2025"),
        Leaf("ssm/in_proj", 2 * tokens * d * ssm_in_width(), "dao2024"),
        Leaf("ssm/conv", conv_flops(seq, ssm_conv_width()), "dao2024"),
        # (the RG-LRU's two block-diagonal gates, batched products of d_bk-wide blocks)
        Leaf("ssm/x_proj", m1 * (1 - sw("rglru")) * 2 * tokens * d_in * (R_dt + 2 * N_s)
             + sw("rglru") * 4 * tokens * d_in * d_bk, "gu2023"),
        Leaf("ssm/dt_proj", m1 * (1 - sw("rglru")) * 2 * tokens * R_dt * d_in, "gu2023"),
        Leaf("ssm/core", ssm_core(seq), "dao2024"),
        Leaf("ssm/out_proj", 2 * tokens * d_in * d, "dao2024"),
        Leaf("short_conv/in_proj", 2 * tokens * d * 3 * d, "liquid2025"),
        Leaf("short_conv/conv", conv_flops(seq, d), "liquid2025"),
        Leaf("short_conv/out_proj", 2 * tokens * d * d, "liquid2025"),
    ]


def _layer_extras(tokens) -> list[Leaf]:
    """Gemma 3n's per-layer matmuls (:func:`symcalc.algebra.components.altup_params`,
    ``laurel_params``, ``per_layer_input_params``) on ``tokens``. AltUp's router runs twice
    (predict and correct); predict turns its n_alt^2 coefficients per token into a mix of the
    streams, a (d x n_alt) by (n_alt x n_alt) product per token that torch counts as a batched
    matmul; LAuReL's two low-rank products; the per-layer input's gate and projection."""
    altup, laurel, ple = sw("altup"), sw("laurel"), sw("ple")
    return [
        Leaf("norm/attention_gate", sw("gnorm") * 2 * tokens * 2 * d * r_g, "skt2026axk2"),
        Leaf("altup/router", altup * 2 * 2 * tokens * d * n_alt, "baykal2023"),
        Leaf("altup/prediction_coefs", altup * 2 * tokens * n_alt * n_alt**2, "baykal2023"),
        Leaf("altup/correction_coefs", altup * 2 * tokens * n_alt * n_alt, "baykal2023"),
        Leaf("altup/mix", altup * 2 * tokens * d * n_alt**2, "baykal2023"),
        Leaf("laurel/left", laurel * 2 * tokens * d * r_laurel, "menghani2024"),
        Leaf("laurel/right", laurel * 2 * tokens * r_laurel * d, "menghani2024"),
        Leaf("per_layer_input/gate", ple * 2 * tokens * d * d_ple, "gemma3n2025"),
        Leaf("per_layer_input/projection", ple * 2 * tokens * d_ple * d, "gemma3n2025"),
        # X-MOD: every token through one adapter, down and up
        Leaf("adapter/bottlenecks", sw("adapter") * 2 * tokens * 2 * d * d_ad, "pfeiffer2022xmod"),
        # HY-V4: the mixers before attention and before the FFN, each n_hc d -> 2 n_hc on every
        # token (folding and spreading the streams is elementwise)
        Leaf("hyper_connections/mixers", sw("hc") * 2 * 2 * tokens * n_hc * d * 2 * n_hc, "tencent2026hyv4"),
        # Qwen4-Exp: the gated residuals before attention and before the MoE block, each
        # n_hc d -> r_hc -> n_hc d and n_hc d -> n_hc on every token
        Leaf("hyper_connections/input_mix_down", sw("ghc") * 2 * 2 * tokens * n_hc * d * r_hc,
             "qwen2026qwen4exp"),
        Leaf("hyper_connections/gates", sw("ghc") * 2 * 2 * tokens * (r_hc * n_hc * d
                                                                     + n_hc * n_hc * d),
             "qwen2026qwen4exp"),
        # DeepSeek-V4: each mixer's n_hc^2 more outputs, and the residual streams mixed by the
        # n_hc x n_hc matrix (a batched product per token: comb^T times the n_hc x d streams)
        Leaf("hyper_connections/residual_mix", sw("hcm") * 2 * (2 * tokens * n_hc * d * n_hc**2
                                                                + 2 * tokens * n_hc**2 * d),
             "deepseek2026v4"),
    ]


def _prefix(prefix: str, leaves: list[Leaf], times=1) -> list[Leaf]:
    return [Leaf(f"{prefix}/{l.path}", times * l.value, l.source) for l in leaves]


def self_pairs(seq, causal: bool, local: bool = False) -> sympy.Expr:
    """(query, key) pairs of a stack's self-attention over ``seq`` tokens: causal, or all of
    them; with ``local`` (an encoder-decoder's encoder) LongT5's local attention where
    ``sw_lblk`` is on: each of the ceiling(seq / B_l) blocks of B_l queries scores its own
    and both neighbouring blocks, padded (3 B_l keys)."""
    if causal:
        return pairs(seq)
    if not local:
        return seq**2
    blocks = sw("lblk")
    B_l = SIZES["B_l"].symbol
    return (1 - blocks) * seq**2 + blocks * 3 * B_l**2 * sympy.ceiling(seq / B_l)


def layer_matmul(seq, cross_seq=None, causal: bool = True, local: bool = False) -> Breakdown:
    """One layer's matmul FLOPs over b sequences of ``seq`` tokens; with ``cross_seq``, a
    decoder layer attending to ``cross_seq`` encoder tokens. An encoder stack of an
    encoder-decoder model is never causal; a single stack is causal when its family is
    decoder (the switch is 0 for encoder-only models)."""
    leaves = _prefix("attention", _attention(b * seq, b * seq, b * self_pairs(seq, causal, local),
                                             decoder=causal and cross_seq is None, seq=seq))
    if cross_seq is not None:
        leaves += _prefix("cross_attention", _attention(b * seq, b * cross_seq, b * seq * cross_seq))
    elif causal:  # a decoder stack, which may be hybrid
        leaves += _indexer(b * seq, b * self_pairs(seq, causal), seq)
        leaves += _compressors(seq)
        leaves += _mixers(seq) + _layer_extras(b * seq)
        # Zamba: each use of a shared block projects its output by a d x d matrix of its own
        leaves.append(Leaf("shared_block/linear", sw("shblk") * 2 * b * seq * d * d,
                           "glorioso2024zamba"))
        # Zamba2: each use's own low-rank adapters on the MLP's gate/up and on q, k, v
        leaves.append(Leaf("shared_block/ffn_adapter", sw("shad") * 2 * b * seq * r_ad
                           * (d + 2 * d_ff), "glorioso2024zamba2"))
        leaves.append(Leaf("shared_block/attn_adapter", sw("shaa") * 2 * b * seq * 6 * d_ai
                           * r_ad, "glorioso2024zamba2"))
        # differential attention (DiffLlama) runs the eager core again, on the other half of
        # the values (no MLA beside it)
        leaves += [Leaf(f"attention/diff/{x}", sw("diff") * 2 * n_h * d_h * b * self_pairs(seq, causal),
                        "ye2025diff") for x in ("scores", "context")]
    leaves += _ffn(b * seq) + _moe(b * seq)
    return Breakdown(leaves)


def _stacks(shape: str, layer_fn) -> tuple[list[Leaf], sympy.Expr]:
    """``layer_fn`` applied to each stack of ``shape`` and multiplied by its layer count,
    and the number of tokens the output side sees."""
    if shape == "single":
        return _times_layers("layer", layer_fn(s), L, hybrid=True), b * s
    leaves = _times_layers("encoder/layer", layer_fn(s, causal=False, local=True), L)
    leaves += _times_layers("decoder/layer", layer_fn(s_dec, cross_seq=s), L_dec)
    off = decoder_only_off()  # the decoder-only parts (components.DECODER_ONLY)
    return [Leaf(l.path, sympy.sympify(l.value).xreplace(off), l.source) for l in leaves], b * s_dec


def _times_layers(prefix: str, layer: Breakdown, layers, hybrid: bool = False) -> list[Leaf]:
    """Each part of one layer times the layers of the stack that hold it (attention and the
    other mixers, dense FFN, MoE FFN: :func:`symcalc.algebra.accounting.stack_value`; the
    attention core's softmax goes with attention)."""
    return [Leaf(f"{prefix}/{l.path}", accounting.stack_value(l.path, l.value, layers, hybrid),
                 l.source) for l in layer]


@lru_cache(maxsize=None)
def shape_matmul(shape: str) -> Breakdown:
    """Forward matmul FLOPs of a model of ``shape``, switches as symbols."""
    leaves, out_tokens = _stacks(shape, layer_matmul)
    if shape == "single":  # OPT: embeddings of width d_emb projected in and out; ELECTRA's
        # embedding stage projected in only (its generator head leads back to d_emb)
        leaves += [Leaf(f"project_{side}", on * 2 * b * s * d_emb * d, "zhang2022")
                   for side, on in (("in", sw("proj_emb")),
                                    ("out", sw("proj_emb") * (1 - sw("emb_stage"))))]
        # RoCBERT: the token embedding and d_cat concatenated channels mapped into d
        leaves.append(Leaf("map_in", sw("cat") * 2 * b * s * (d + d_cat) * d, "su2022rocbert"))
        # Gemma 3n: the token embedding projected to every layer's input, AltUp's streams
        # made from it and folded back at the end
        leaves += [Leaf("per_layer_input/model_projection",
                        sw("ple") * 2 * b * s * d * L * d_ple, "gemma3n2025")]
        leaves += [Leaf(f"altup/{name}", sw("altup") * 2 * b * s * (n_alt - 1) * d**2,
                        "baykal2023") for name in ("projections", "unembed_projections")]
        # Gemma 4's assistant: 2 d_bb -> d in, d -> d_bb out (d_bb = 0 elsewhere)
        leaves += [Leaf(f"backbone/{name}", 2 * b * s * n * d_bb * d, "gemma4_assistant_2026")
                   for name, n in (("pre_projection", 2), ("post_projection", 1))]
    if shape == "single":  # Inkling: each token's relative states times every layer's bank
        leaves.append(Leaf("relative_logits", sw("rlog") * 2 * b * s * n_h * d_rel * X_rel,
                           "inkling2026"))
        # Inkling 2: every learned query's scores over its stacked states and their weighted
        # sum (eager attention over the stack: 2 b s d per query and state, twice)
        leaves.append(Leaf("block_residuals", sw("bres") * 4 * b * s * d * X_res, "inkling2026"))
    if shape == "single":  # HY-V4: the hyper head's n_hc d -> n_hc on every token
        leaves.append(Leaf("hyper_head", sw("hc") * 2 * b * s * n_hc * d * n_hc,
                           "tencent2026hyv4"))
        # Qwen4-Exp: the final mixer's n_hc d -> r_hc -> n_hc d on every token; in each of
        # the L_ple layers the n-gram embedding's key (d_pe -> n_hc d) and value (d_pe -> d)
        # projections and the depthwise convolution of K_pe taps over the n_hc d channels
        # (padded by its dilated window: one output per token)
        leaves.append(Leaf("hyper_mixer", sw("ghc") * 2 * b * s * 2 * n_hc * d * r_hc,
                           "qwen2026qwen4exp"))
        leaves.append(Leaf("ngram_ple/layers", sw("ngp") * L_ple * 2 * b * s
                           * (d_pe * (n_hc + 1) * d + n_hc * d * K_pe), "qwen2026qwen4exp"))
    leaves += [
        # (Gemma 4's assistants with centroids: only the V_sel rows they pick, after the centroid
        # layer d -> V_c)
        Leaf("head", sw("head") * 2 * out_tokens * head_width() * K_cb
             * (V + sw("cmask") * (V_sel - V)), "press2017"),
        Leaf("centroids", sw("cmask") * 2 * out_tokens * d * V_c, "gemma4_assistant_2026"),
        Leaf("pooler", sw("pooler") * 2 * b * d * d, "devlin2019"),
        Leaf("mlm_head", sw("mlm") * 2 * out_tokens * d * head_width()
             + sw("hmlp") * 2 * out_tokens * 2 * d * d_ph, "devlin2019"),
    ]
    return Breakdown(_single_only(shape, leaves))


def _single_only(shape: str, leaves: list[Leaf]) -> list[Leaf]:
    """``leaves`` with the single-stack switches off in an encoder-decoder shape."""
    if shape == "single":
        return leaves
    off = single_only_off()
    return [Leaf(l.path, sympy.sympify(l.value).xreplace(off), l.source) for l in leaves]


def _norm_cost():
    c = NONMATMUL_COSTS
    # sw_norm_b is 1 for LayerNorm, 0 for RMSNorm and T5's scale-only norm.
    return sw("norm_w") * (c["rmsnorm"] + sw("norm_b") * (c["layernorm"] - c["rmsnorm"]))


def layer_nonmatmul(seq, cross_seq=None, causal: bool = True, local: bool = False) -> Breakdown:
    c = NONMATMUL_COSTS
    tokens = b * seq
    norms = sum(sw(switch) for _, switch in accounting.LAYER_NORMS)
    norms += 1 if cross_seq is not None else 0
    if cross_seq is None and causal:  # Gemma 3n: AltUp's router norm (predict and correct),
        norms += 2 * sw("altup") + sw("laurel") + sw("ple")  # LAuReL's, the per-layer input's
        # Qwen4-Exp: the gated residuals' norms of the n_hc streams, before each block
        norms += 2 * sw("ghc") * n_hc
    residuals = 3 if cross_seq is not None else 2
    score_elems = n_h * b * self_pairs(seq, causal, local) + (n_h * b * seq * cross_seq if cross_seq is not None else 0)
    act = c["activation"] + sw("gated") * c["gate_product"]
    return Breakdown([
        Leaf("softmax", (c["softmax"] + c["scale"]) * score_elems, "hoffmann2022"),
        Leaf("norm", norms * _norm_cost() * tokens * d, "ba2016"),
        Leaf("ffn/activation", tokens * d_ff * act, "shazeer2020"),
        Leaf("per_layer_input/activation", sw("ple") * (c["activation"] + c["gate_product"])
             * tokens * d_ple, "gemma3n2025"),
        Leaf("moe/activation", sw("router") * tokens * act
             * (k * expert_width() + sw("shared") * E_s * shared_width()),
             "shazeer2020"),
        Leaf("residual", residuals * c["residual"] * tokens * d, "vaswani2017"),
    ])


@lru_cache(maxsize=None)
def shape_nonmatmul(shape: str) -> Breakdown:
    leaves, tokens = _stacks(shape, layer_nonmatmul)
    # (Qwen4-Exp: the final mixer's norm of the n_hc streams in place of a final norm)
    leaves.append(Leaf("final_norm", (sw("final_norm") + sw("ghc") * n_hc) * _norm_cost()
                       * tokens * d, "ba2016"))
    if shape == "single":
        # BERT: the norm after the embeddings, the pooler's tanh on the first token, the
        # masked-LM transform's activation and norm on every position.
        c = NONMATMUL_COSTS
        leaves += [
            Leaf("embedding_norm", sw("emb_norm") * _norm_cost() * tokens * stage_width(),
                 "devlin2019"),
            Leaf("per_layer_input/model_norm", sw("ple") * _norm_cost() * tokens * L * d_ple,
                 "gemma3n2025"),
            Leaf("pooler", sw("pooler") * c["activation"] * b * d, "devlin2019"),
            Leaf("mlm_head", sw("mlm") * (c["activation"] + _norm_cost()) * tokens * head_width(),
                 "devlin2019"),
        ]
    return Breakdown(_single_only(shape, leaves))


def decode_terms(shape: str, context) -> list[tuple[str, sympy.Expr, str]]:
    """(path, FLOPs, source) of generating one token per sequence with a KV cache holding
    ``context`` tokens: every projection on the one new token, scores and context over
    ``context + 1`` keys, at most W in a sliding layer (single shape; for encoder-decoder the
    decoder side with an encoder output of s). With MLA's latent cache the key/value
    up-projection runs over every cached token again at each step (transformers'
    DeepseekV2/V3 attention); with the expanded cache only over the new one."""
    one = shape_matmul(shape)
    if shape == "single":
        subs = {s: 1}
        keys = memory.cached_layer_tokens(L_attn, context + 1)
        per_head = n_h * (qk_width() + value_width())
        over_cache = r_kv * n_h * (d_nope + d_v)
        extra = [
            ("layer/attention/scores_and_context",
             2 * b * n_h * (qk_width() + value_width()) * keys
             # the global layers at their own head width (Gemma 4), over every cached token
             # the global and sliding layers at their own widths (Gemma 4, MiMo-V2-Flash)
             + sw("gshape") * 2 * b * n_h * ((L_attn - L_local) * (context + 1) * (A_g - 2 * d_h)
                                             + L_local * min_of(context + 1, W)
                                             * (A_l - 2 * d_h))
             # the sliding layers at their own MLA shape (dots.llm3)
             + sw("mlaw") * L_local * min_of(context + 1, W) * 2 * b
             * (per_head.xreplace(accounting.window_shape()) - per_head),
             "pope2022"),
            # differential attention: the core again over the other half of the values
            ("layer/attention/diff/scores_and_context", sw("diff") * 2 * b * n_h * 2 * d_h * keys,
             "ye2025diff"),
            # the indexer scores the new token's query against every cached indexer key
            ("layer/attention/indexer/logits_step",
             sw("dsa") * L_idx * 2 * b * n_ih * (d_ih + 1) * (context + 1), "deepseek2025v32"),
            # the QSA indexer scores the complete key blocks of the context + 1 tokens
            ("layer/attention/indexer/blocks_step",
             sw("qsa") * L_idx * 2 * b * n_ih * d_ih * sympy.floor((context + 1) / C_ix),
             "qwen2026qwen4exp"),
            # MiniMax-M3's indexer scores the new token's queries against every cached key
            ("layer/attention/indexer/token_scores_step",
             sw("msa") * L_idx * 2 * b * n_ih * d_ih * (context + 1), "minimax2026m3"),
            # DeepSeek-V4: the new token's query against the compressed entries of the context
            # and the new token (floor((context + 1) / m) in each CSA and HCA layer), and the
            # CSA indexer's scores against its compressed keys
            ("layer/attention/compressed/scores_and_context_step",
             sw("kvc") * 2 * b * n_h * 2 * d_v * (L_csa * sympy.floor((context + 1) / m_csa)
                                                  + L_hca * sympy.floor((context + 1) / m_hca)),
             "deepseek2026v4"),
            ("layer/attention/csa/indexer/logits_step",
             sw("kvc") * L_csa * 2 * b * n_ih * d_ih * sympy.floor((context + 1) / m_csa),
             "deepseek2026v4"),
            ("layer/attention/kv_b_over_cache",
             sw("kvb") * (1 - sw("mla_expanded")) * 2 * b * context
             * (L_attn * over_cache
                + sw("mlaw") * L_local * (over_cache.xreplace(accounting.window_shape())
                                          - over_cache)), "deepseek2024"),
            # one convolution output per channel from the cached window (not s + K_conv - 1);
            # the state read by the key and the query and the output read (linear attention),
            # the state read by C (Mamba): the recurrent update of one token, not a padded chunk
            ("layer/linear_attention/conv_step",
             (1 - sw("light") - sw("rwkv") - sw("mlstm")) * L_lin * 2 * b * linear_qkv_width()
             * K_conv,
             "yang2025"),
            # (the RG-LRU steps its conv and recurrence elementwise)
            ("layer/ssm/conv_step", (1 - sw("rglru")) * L_ssm * 2 * b * ssm_conv_width() * K_conv,
             "dao2024"),
            ("layer/short_conv/conv_step", L_conv * 2 * b * d * K_conv, "liquid2025"),
            ("layer/linear_attention/state_step",
             (1 - sw("rwkv")) * L_lin * 2 * b * n_lv * 2 * d_lk * d_lv
             + sw("mlstm") * L_lin * 2 * b * n_lv * d_lk, "yang2025"),  # (mLSTM: q n too)
            ("layer/ssm/state_step", (1 - sw("rglru")) * L_ssm * 2 * b * d_in * N_s, "dao2024"),
        ]
        drop = ("layer/attention/scores", "layer/attention/context", "layer/attention/diff/scores",
                "layer/attention/diff/context", "pooler", "layer/attention/indexer/logits",
                "layer/attention/indexer/blocks", "layer/attention/indexer/token_scores",
                "layer/attention/csa/scores", "layer/attention/csa/context",
                "layer/attention/hca/scores", "layer/attention/hca/context",
                "layer/attention/csa/indexer/logits",
                "layer/linear_attention/conv", "layer/ssm/conv", "layer/short_conv/conv",
                "layer/linear_attention/core", "layer/ssm/core")
    else:
        subs = {s_dec: 1}
        extra = [("decoder/layer/attention/scores_and_context",
                  L_dec * 2 * b * n_h * (qk_width() + value_width()) * (context + 1),
                  "pope2022")]
        drop = ("decoder/layer/attention/scores", "decoder/layer/attention/context",
                "decoder/layer/cross_attention/k", "decoder/layer/cross_attention/v", "pooler")
    # Inkling's convolutions step like LFM2's: one output per channel from the cached window
    step = {"layer/attention/short_convs": K_conv}
    kept = [(l.path, sympy.expand(l.value.xreplace(subs) / step[l.path]) if l.path in step
             else l.value.xreplace(subs), l.source)
            for l in one if not l.path.startswith("encoder/") and l.path not in drop]
    return kept + extra


@lru_cache(maxsize=None)
def decode_matmul_per_token(shape: str, context) -> sympy.Expr:
    """Matmul FLOPs to generate one token per sequence (:func:`decode_terms` summed)."""
    return sympy.expand(sympy.Add(*[e for _, e, _ in decode_terms(shape, context)]))


# -- conventions on top of the breakdowns -------------------------------------------------
ATTENTION_CORE = ("scores", "context", "softmax")


def attention_core(bd: Breakdown) -> sympy.Expr:
    """The attention core of every layer (scores Q.K^T, softmax, weighted sum of V; self- and
    cross-attention): what selective recomputation runs again (Korthikanti et al. 2022, Sec. 5)."""
    return sympy.Add(*[l.value for l in bd if l.path.rsplit("/", 1)[-1] in ATTENTION_CORE])


def forward_total(matmul, nonmatmul, macs, with_nonmatmul) -> sympy.Expr:
    """Forward work under the conventions: matmul FLOPs, halved when counting
    multiply-accumulates (``macs`` = 1), plus the non-matmul FLOPs when ``with_nonmatmul`` = 1.
    The flags are 0/1 integers or symbols."""
    return matmul - macs * matmul / 2 + with_nonmatmul * nonmatmul


def training_total(forward, core, full, selective) -> sympy.Expr:
    """One training step: the forward, a backward of twice its work, and the recomputation:
    one more forward with full recomputation (``full`` = 1), the attention core's forward
    with selective recomputation (``selective`` = 1)."""
    return (3 + full) * forward + selective * core

"""Saved tensors of the token mixers of hybrid stacks besides softmax attention: linear
attention (Gated DeltaNet, Kimi Delta Attention), LFM2's short convolution, and the SSMs
(Mamba-1/2), under each activation model (paper: the inputs and outputs of the mixer's
projections at A bytes; eager: what transformers' torch fallback keeps, measured with
tests/saved_tensors.describe; sdpa: the same as eager, the mixers have no softmax core).

Each ``*_terms`` function returns the terms of ONE mixer layer over ``tokens`` = b s rows;
:func:`mixer_terms` weights them by the layer counts (L_lin, L_conv, L_ssm) for
:func:`symcalc.algebra.activations.stack_terms`. Helpers append their own mixers' functions
here and one line each in :func:`mixer_terms`.
"""
from __future__ import annotations

import sympy

from .caps import max_of, min_of
from .components import linear_qkv_width, ssm_conv_width, ssm_in_width, sw
from .saved import Saved, norm_terms
from .symbols import (G_s, H_s, K_conv, L_conv, L_lin, L_ssm, N_s, Q_c, R_dt, b, d, d_in, d_lk,
                      d_lv, n_lk, n_lv, s)


def mixer_terms(model: str, f, A, seq=s) -> list[Saved]:
    """Every mixer layer of a decoder stack besides softmax attention, each term already
    multiplied by the layers that hold it (with the norm before the mixer)."""
    tokens = b * seq
    out: list[Saved] = []
    pre = sw("norm_attn_in")
    # Falcon-H1's Mamba-2 runs beside attention on attention's normed input: no norm of its own
    ssm_norms = L_ssm * (1 - f["ac_ssm_beside_attn"])
    for count, tag, terms, normed in (
            (L_lin, "linear_attention", linear_attention_terms, L_lin),
            (L_conv, "short_conv", short_conv_terms, L_conv),
            (L_ssm, "ssm", ssm_terms, ssm_norms)):
        if model != "paper":
            out += [x.times(pre * normed) for x in norm_terms(f, A, tokens, f"norm/{tag}")]
        else:
            out.append(Saved(f"norm/{tag}/input", pre * normed * tokens * d, A, "korthikanti2022",
                             "each LayerNorm keeps its input", split=False))
        out += [x.times(count) for x in terms(model, f, A, tokens, seq)]
    return [x for x in out if x.elements != 0]


def short_conv_terms(model: str, f, A, tokens, seq) -> list[Saved]:
    """LFM2's gated short convolution (Lfm2ShortConv, torch fallback of causal_conv1d):
    in_proj d -> 3d (B, C, x), B x, a depthwise causal conv of width K_conv, C times its
    output, out_proj. Eager keeps the in_proj output (B and x for their product, C for the
    last one), the conv input, the conv output over s + K_conv - 1 positions (the padded
    output whose first s the product reads) and out_proj's input."""
    tag = "short_conv"
    padded = tokens if model == "paper" else b * (seq + K_conv - 1)
    src = "liquid2025" if model == "paper" else "torch_autograd"
    return [
        Saved(f"{tag}/input", tokens * d, A, "liquid2025", "in_proj keeps its input", split=False),
        Saved(f"{tag}/bcx", tokens * 3 * d, A, src, "in_proj output: B, C and x"),
        Saved(f"{tag}/conv_input", tokens * d, A, src, "the conv keeps its input B x"),
        Saved(f"{tag}/conv_output", padded * d, A, src,
              "conv output (eager: the padded s + K_conv - 1 positions) kept by C times it"),
        Saved(f"{tag}/out_input", tokens * d, A, src, "out_proj input"),
    ]


def linear_attention_terms(model: str, f, A, tokens, seq) -> list[Saved]:
    """A linear-attention mixer: Gated DeltaNet (``sw_gdn``) or Kimi Delta Attention."""
    gdn = sw("gdn")
    return ([x.times(gdn) for x in gated_deltanet_terms(model, f, A, tokens, seq)]
            + [x.times(1 - gdn) for x in kda_terms(model, f, A, tokens, seq)])


def gated_deltanet_terms(model: str, f, A, tokens, seq) -> list[Saved]:
    """Gated DeltaNet (Qwen3-Next, Qwen3.5: transformers' torch_chunk_gated_delta_rule).

    paper: the projections' inputs and outputs at A bytes (input; q, k, v and the conv
    output; beta and the decay; z; the gated norm's output). eager: the projections, the
    causal conv (its input, and its output over s + K_conv - 1 positions kept by SiLU),
    beta, the float32 decay, and the chunked kernel in float32 over the sequence padded to
    c = ceiling(s / Q_c) chunks of Q_c, values heads H = n_lv (q and k repeated to them):
    l2-normed q and k, the padded q, k, v, beta, k beta, the chunk's Q_c x Q_c blocks
    (pairwise decay, the two products and the triangular system), its solutions, the
    decays, the chunk states (one per chunk) and the gated RMSNorm of width d_lv."""
    tag = "linear_attention"
    qkv = linear_qkv_width()
    rows = tokens * n_lv  # rows of the per-head gated norm
    if model == "paper":
        src = "yang2025"
        return [
            Saved(f"{tag}/input", tokens * d, A, src, "in_proj keeps its input", split=False),
            Saved(f"{tag}/qkv", tokens * qkv, A, src, "q, k, v (the conv's input)"),
            Saved(f"{tag}/conv_output", tokens * qkv, A, src, "conv output, the kernel's q, k, v"),
            Saved(f"{tag}/beta_decay", tokens * 2 * n_lv, A, src, "beta and the decay"),
            Saved(f"{tag}/z", rows * d_lv, A, src, "output gate z"),
            Saved(f"{tag}/core_output", rows * d_lv, A, src, "the kernel's output (norm input)"),
            Saved(f"{tag}/out_input", rows * d_lv, A, src, "out_proj input"),
        ]
    c = sympy.ceiling(seq / Q_c)
    S = c * Q_c  # padded length
    H = b * n_lv  # (batch, value head) pairs of the kernel
    src = "torch_autograd"
    return [
        Saved(f"{tag}/input", tokens * d, A, "yang2025", "the projections keep their input",
              split=False),
        Saved(f"{tag}/conv_input", tokens * qkv, A, src, "the conv keeps q, k, v"),
        Saved(f"{tag}/conv_output", b * (seq + K_conv - 1) * qkv, A, src,
              "conv output over s + K_conv - 1 positions, kept by SiLU"),
        Saved(f"{tag}/beta", tokens * n_lv, A, src, "sigmoid(b), its output"),
        Saved(f"{tag}/decay_rate", 2 * n_lv, 4, src, "exp(A_log) and its negation, float32"),
        Saved(f"{tag}/decay_softplus", 2 * tokens * n_lv, 4, src,
              "softplus input and output of the decay, float32"),
        Saved(f"{tag}/qk_l2norm", 2 * H * seq * (d_lk + 1), 4, src,
              "l2norm of q and k: float32 input and inverse norm"),
        Saved(f"{tag}/qk_l2norm_view", f["ac_lin_qkview"] * (tokens * qkv - 2 * H * seq * d_lk),
              4, src, "float32, n_lk = n_lv: q and k are views of the conv output, whose whole "
              "storage (v too) the l2 norms keep"),
        Saved(f"{tag}/padded", H * S * (d_lv + 1 + 3 * d_lk), 4, src,
              "padded v, beta, k, q and k beta, float32"),
        Saved(f"{tag}/mask", Q_c**2, 1, src, "the chunk's strictly upper mask (bool)"),
        Saved(f"{tag}/blocks", 5 * H * c * Q_c**2, 4, src,
              "pairwise decay, k beta k^T and q k^T products, the triangular system, the "
              "intra-chunk attention, float32"),
        Saved(f"{tag}/decays", H * (3 * S + c), 4, src, "exponentiated decays, float32"),
        Saved(f"{tag}/solved", H * S * (d_lv + d_lk), 4, src,
              "the UT solutions: new values, decayed k beta, float32"),
        Saved(f"{tag}/states", c * H * d_lk * d_lv, 4, src, "the state read by each chunk"),
        Saved(f"{tag}/chunk_values", H * S * (d_lv + d_lk), 4, src,
              "each chunk's corrected values and decayed keys"),
        Saved(f"{tag}/decayed_q", min_of(c - 1, 1) * H * S * d_lk, 4, src,
              "decayed queries (kept once a later chunk reads a state that needs grad)"),
    ] + aligned_fp32_terms(f, tokens, seq, tag) + [
        Saved(f"{tag}/norm_input_fp32", rows * d_lv, 4, src, "gated RMSNorm: float32 input"),
        Saved(f"{tag}/norm_rsqrt", rows, 4, src, "gated RMSNorm: reciprocal root"),
        Saved(f"{tag}/norm_normalized", 2 * rows * d_lv, A, src,
              "gated RMSNorm: normalized values and their weighted product"),
        Saved(f"{tag}/gate", rows * d_lv + f["ac_gdn_zview"] * tokens * (2 * n_lk * d_lk + n_lv * d_lv),
              4, src, "SiLU of the float32 gate z (in float32 Qwen3-Next's z is a view of "
              "the whole qkvz projection when n_lk = n_lv)"),
        Saved(f"{tag}/gate_silu", rows * d_lv, 4, src, "SiLU output, float32"),
        Saved(f"{tag}/out_input", rows * d_lv, A, src, "out_proj input"),
    ]


def aligned_fp32_terms(f, tokens, seq, tag: str) -> list[Saved]:
    """Float32 chunked delta rule over a sequence that fills its chunks (s a multiple of Q_c,
    the usual case): padding nothing, F.pad clones q and k in the strided layout they came
    in (.to(float32) copied nothing), so the batched products copy q, k (twice) and k beta
    into contiguous blocks: with n_lk < n_lv (q, k repeated per value head) always, with
    n_lk = n_lv (views of the conv output) once there are two chunks or more; with n_lk <
    n_lv each later chunk also copies its decayed queries instead of keeping them whole."""
    c = sympy.ceiling(seq / Q_c)
    aligned = sympy.ceiling((seq + 1) / Q_c) - c  # 1 when Q_c divides s, else 0
    H, S = b * n_lv, c * Q_c
    grouped = f["ac_f32"] - f["ac_lin_qkview"]  # float32 with n_lk < n_lv
    later = min_of(c - 1, 1)
    return [
        Saved(f"{tag}/aligned_copies", aligned * (grouped + f["ac_lin_qkview"] * later)
              * 4 * H * S * d_lk, 4, "torch_autograd",
              "float32, Q_c divides s: contiguous copies of q, k (twice) and k beta"),
        Saved(f"{tag}/aligned_chunk_q", aligned * grouped * ((c - 1) * H * Q_c * d_lk
                                                              - later * H * S * d_lk), 4,
              "torch_autograd", "float32, Q_c divides s, n_lk < n_lv: each later chunk's "
              "decayed queries copied (instead of the whole decayed queries kept)"),
    ]


def kda_terms(model: str, f, A, tokens, seq) -> list[Saved]:
    """Kimi Delta Attention (Kimi-Linear: transformers' chunk_kimi_delta_attention), n_lv heads
    of d_lk keys and d_lv values (n_lk = n_lv), a channel-wise forget gate.

    paper: the projections' inputs and outputs at A bytes (input; q, k, v and the conv
    output; the low-rank forget and output gates' middles; the decay, beta, the output gate,
    the kernel's output and out_proj's input). eager: as Gated DeltaNet's, but the decay is
    per channel, so the chunk's pairwise decays and the intra-chunk products are Q_c x Q_c x
    d_lk per head, and the UT system is solved by forward substitution (rows 1 .. Q_c - 1:
    each row and the block above it cloned, sum (i + i^2) = (Q_c^3 - Q_c) / 3 per head and
    chunk); the forget gate's softplus is written out (exp, 1 + exp, the where's mask); the
    gated RMSNorm multiplies by sigmoid(gate) in float32."""
    tag = "linear_attention"
    qkv = linear_qkv_width()
    rows = tokens * n_lv
    if model == "paper":
        src = "kimi2025"
        return [
            Saved(f"{tag}/input", tokens * d, A, src, "the projections keep their input", split=False),
            Saved(f"{tag}/qkv", tokens * qkv, A, src, "q, k, v (the conv's input)"),
            Saved(f"{tag}/conv_output", tokens * qkv, A, src, "conv output, the kernel's q, k, v"),
            Saved(f"{tag}/low_rank", tokens * (d_lk + d_lv), A, src,
                  "the low-rank forget and output gates' middle widths", split=False),
            Saved(f"{tag}/decay_beta", rows * (d_lk + 1), A, src, "channel-wise decay and beta"),
            Saved(f"{tag}/gate", rows * d_lv, A, src, "output gate"),
            Saved(f"{tag}/core_output", rows * d_lv, A, src, "the kernel's output (norm input)"),
            Saved(f"{tag}/out_input", rows * d_lv, A, src, "out_proj input"),
        ]
    c = sympy.ceiling(seq / Q_c)
    S = c * Q_c
    H = b * n_lv
    src = "torch_autograd"
    return [
        Saved(f"{tag}/input", tokens * d, A, "kimi2025", "the projections keep their input",
              split=False),
        Saved(f"{tag}/conv_input", tokens * qkv, A, src, "the conv keeps q, k, v"),
        Saved(f"{tag}/conv_output", b * (seq + K_conv - 1) * qkv, A, src,
              "conv output over s + K_conv - 1 positions, kept by SiLU"),
        Saved(f"{tag}/low_rank", tokens * (d_lk + d_lv), A, src,
              "f_b and g_b keep the low-rank middles (d_lk, d_lv)", split=False),
        Saved(f"{tag}/forget_softplus", 3 * rows * d_lk, 4, src,
              "forget gate: exp(g), 1 + exp(g) and the softplus, float32"),
        Saved(f"{tag}/forget_mask", rows * d_lk, 1, src, "forget gate: the where's mask (bool)"),
        Saved(f"{tag}/decay_rate", 2 * n_lv, 4, src, "exp(A_log) and its negation, float32"),
        Saved(f"{tag}/beta", rows, A, src, "sigmoid(b), its output"),
        Saved(f"{tag}/qk_l2norm", 2 * H * seq * (d_lk + 1), 4, src,
              "l2norm of q and k: float32 input and norm"),
        Saved(f"{tag}/padded", H * S * (d_lv + 1 + 2 * d_lk), 4, src,
              "padded v, beta, k and k beta, float32"),
        Saved(f"{tag}/masks", 3 * Q_c**2, 1, src, "the chunk's triangular masks (bool)"),
        Saved(f"{tag}/channel_blocks", 3 * H * c * Q_c**2 * d_lk, 4, src,
              "per-channel pairwise decays and the two products over them (k beta k, q k), "
              "float32"),
        Saved(f"{tag}/substitution", H * c * (Q_c**3 - Q_c) / 3, 4, src,
              "forward substitution: each row and the block above it, cloned, float32"),
        Saved(f"{tag}/blocks", 2 * H * c * Q_c**2, 4, src,
              "the solved system and the masked intra-chunk attention, float32"),
        Saved(f"{tag}/solved", H * S * (d_lv + 2 * d_lk), 4, src,
              "v beta, exp(g) and k beta exp(g) the products read, float32"),
        Saved(f"{tag}/chunk_terms", H * S * (4 * d_lk + d_lv) + H * c * d_lk, 4, src,
              "per chunk: exp(g), the scaled queries, the decayed keys and their exp, the new "
              "values, the state decay, float32"),
        Saved(f"{tag}/states", c * H * d_lk * d_lv, 4, src, "the state read by each chunk"),
        Saved(f"{tag}/decayed_q", (c - 1) * H * Q_c * d_lk, 4, src,
              "decayed queries of each later chunk (its state needs grad)"),
        Saved(f"{tag}/k_cumdecay", min_of(c - 1, 1) * H * S * d_lk, 4, src,
              "the decayed k beta the later chunks' state reads multiply (kept once a state "
              "needs grad)"),
        Saved(f"{tag}/norm", rows * (4 * d_lv + 1), 4, src,
              "gated RMSNorm in float32: input, reciprocal root, normalized, sigmoid(gate) and "
              "the weighted values"),
        Saved(f"{tag}/norm_weight", (1 - f["ac_f32"]) * d_lv, 4, src,
              "16-bit: the norm's weight cast to float32"),
        Saved(f"{tag}/out_input", rows * d_lv, A, src, "out_proj input"),
    ]


def ssm_terms(model: str, f, A, tokens, seq) -> list[Saved]:
    """A Mamba mixer: Mamba-1 (``sw_mamba1``: Jamba) or Mamba-2 (Nemotron-H, Falcon-H1,
    Granite-4). paper: the projections' inputs and outputs at A bytes."""
    m1 = sw("mamba1")
    if model == "paper":
        src = "gu2023"
        return [
            Saved("ssm/input", tokens * d, A, src, "in_proj keeps its input", split=False),
            Saved("ssm/in_proj_output", tokens * ssm_in_width(), A, src,
                  "in_proj output: x and z (Mamba-2: B, C and dt too), the conv's input"),
            Saved("ssm/conv_output", tokens * ssm_conv_width(), A, src,
                  "conv output, the scan's x (Mamba-2: B and C too)"),
            Saved("ssm/x_proj_output", m1 * tokens * (R_dt + 2 * N_s), A, src,
                  "Mamba-1: x_proj output (dt, B, C)"),
            Saved("ssm/dt", m1 * tokens * d_in, A, src, "Mamba-1: dt_proj output"),
            Saved("ssm/scan_output", tokens * d_in, A, src, "the scan's output, gated"),
            Saved("ssm/out_input", tokens * d_in, A, src, "out_proj input"),
        ]
    return ([x.times(m1) for x in mamba1_terms(f, A, tokens, seq)]
            + [x.times(1 - m1) for x in mamba2_terms(f, A, tokens, seq)])


def mamba1_terms(f, A, tokens, seq) -> list[Saved]:
    """Mamba-1 as Jamba's slow torch path runs it (JambaMambaMixer, mamba_selective_scan's
    loop over the s positions; Mamba's and Falcon Mamba's mixers run the same code),
    measured with saved-tensor hooks: the conv and SiLU, x_proj, the RMSNorms on dt, B and C
    (``sw_ssm_inner``: Jamba's, with weights; ``ac_ssm_inner_wl``: Falcon Mamba's, without),
    dt_proj and softplus, the float32 discretized A and B x (d_in x N_s per token), one state
    per position (b d_in N_s; its cast to the activation dtype for the read-out by C at 16
    bits), the D skip and the SiLU(z) gate. Without the norms, dt and C are views of x_proj's
    output: at 16 bits its whole storage stays (B's slice too; at fp32 B's float() is that
    storage)."""
    src = "torch_autograd"
    f32 = f["ac_f32"]
    inner = sw("ssm_inner")
    normed = inner + f["ac_ssm_inner_wl"]  # one or the other
    xbc = R_dt + 2 * N_s
    state = b * d_in * N_s
    return [
        Saved("ssm/input", tokens * d, A, "gu2023", "in_proj keeps its input", split=False),
        Saved("ssm/decay_rate", 2 * d_in * N_s, 4, src, "exp(A_log) and its negation A, float32"),
        Saved("ssm/conv_input", tokens * ssm_in_width(), A, src,
              "the conv keeps in_proj's whole output (x and z)"),
        Saved("ssm/conv_output", b * (seq + K_conv - 1) * d_in, A, src,
              "conv output over s + K_conv - 1 positions, kept by SiLU"),
        Saved("ssm/x_proj_input", (1 - f["ac_b1"]) * tokens * d_in, A, src,
              "x_proj input, a contiguous copy of SiLU's transposed output (at one sequence "
              "x_proj reads it in place, and that storage is kept anyway)"),
        Saved("ssm/inner_norm_input", normed * tokens * xbc, 4, src,
              "RMSNorms on dt, B, C: float32 inputs (x_proj's output)"),
        Saved("ssm/inner_norm_rsqrt", normed * 3 * tokens, 4, src,
              "RMSNorms on dt, B, C: reciprocal roots"),
        Saved("ssm/inner_norm_normalized", inner * tokens * xbc, A, src,
              "RMSNorms on dt, B, C: normalized values the weights multiply"),
        Saved("ssm/dt_proj_input", tokens * R_dt, A, src, "dt_proj input"),
        Saved("ssm/dt_softplus", 2 * tokens * d_in, A, src,
              "softplus input dt + bias and its output"),
        Saved("ssm/discrete_a", tokens * d_in * N_s, 4, src, "exp(A dt), float32"),
        Saved("ssm/b_fp32", tokens * N_s, 4, src, "B in float32"),
        Saved("ssm/x_fp32", tokens * d_in, 4, src, "x in float32 for B x"),
        Saved("ssm/discrete_b", tokens * d_in * N_s, 4, src, "dt B, float32"),
        Saved("ssm/states", state * (A + seq * A + (seq - 1) * 4 * (1 - f32)), 1, src,
              "the zero initial state and one state per position (16-bit: float32 states "
              "and their casts read by C)"),
        Saved("ssm/c", tokens * N_s, A, src, "C read by each position"),
        Saved("ssm/x_proj_b", (1 - normed) * (1 - f32) * tokens * N_s, A, src,
              "16-bit without the norms: B's slice of x_proj's output, whose storage dt_proj's "
              "input and C keep whole"),
        Saved("ssm/d_skip", (1 - f32) * (d_in * 4 + tokens * d_in * A), 1, src,
              "16-bit: D in float32 and x for the skip x D"),
        Saved("ssm/scan_output", tokens * d_in, 4, src, "scan output (float32) the gate multiplies"),
        Saved("ssm/gate_silu", tokens * d_in, A, src, "SiLU(z)"),
        Saved("ssm/out_input", tokens * d_in, A, src, "out_proj input"),
    ]


def mamba2_terms(f, A, tokens, seq) -> list[Saved]:
    """Mamba-2 as transformers' torch fallback runs it (mamba2_chunk_scan: the SSD scan over
    c = ceiling(s / Q_c) chunks of Q_c, float32), measured with saved-tensor hooks.

    H = H_s heads of P = d_in / H_s, G = G_s groups of B and C (repeated to the heads),
    N = N_s. The einsums keep permuted float32 copies of their operands, except where the
    batched dimensions fold into a view: at one sequence in one chunk (``ac_b1`` and c = 1)
    C and B are read in place, and with one chunk the chunk-state product reads the states
    in place too."""
    src = "torch_autograd"
    f32 = f["ac_f32"]
    c = sympy.ceiling(seq / Q_c)
    S = b * c * Q_c  # padded positions of all sequences
    multi = min_of(c - 1, 1)  # 1 once there are two chunks or more
    one_view = f["ac_b1"] * (1 - multi)  # one sequence, one chunk: C and B read in place
    conv = ssm_conv_width()
    heads_state = H_s * N_s
    out = [
        Saved("ssm/input", tokens * d, A, "dao2024", "in_proj keeps its input", split=False),
        Saved("ssm/decay_rate", 2 * H_s, 4, src, "exp(A_log) and its negation A, float32"),
        Saved("ssm/conv_input", tokens * ssm_in_width(), A, src,
              "the conv keeps in_proj's whole output (x, B, C are a view of it)"),
        Saved("ssm/conv_output", b * (seq + K_conv - 1) * conv, A, src,
              "conv output over s + K_conv - 1 positions, kept by SiLU"),
        Saved("ssm/dt_softplus", 2 * tokens * H_s, A, src,
              "softplus input dt + dt_bias and its output (kept by the clamp)"),
        Saved("ssm/dt_fp32", (2 - f32) * tokens * H_s, 4, src,
              "the clamped dt in float32 (16-bit: two copies, for x dt and for A dt)"),
        Saved("ssm/x_fp32", tokens * (d_in + f32 * 2 * G_s * N_s), 4, src,
              "x in float32 for x dt (float32: SiLU's whole output, B and C included)"),
        Saved("ssm/x_padded", S * d_in, 4, src, "padded x for the D skip"),
        Saved("ssm/masks", 2 * Q_c**2 + 2 * (c + 1)**2, 1, src,
              "segment-sum masks (bool) within a chunk and across chunks"),
        Saved("ssm/decay_blocks", H_s * S * Q_c, 4, src,
              "L = exp(segsum(A dt)) per chunk: Q_c x Q_c per head"),
        Saved("ssm/cb_operands", 2 * S * heads_state, 4, src,
              "C and B (repeated to the heads, padded) for C B^T"),
        Saved("ssm/scores", 2 * H_s * S * Q_c, 4, src,
              "C B^T, and its product with L (the einsum's copy)"),
        Saved("ssm/x_dt", S * d_in * (1 + multi), 4, src,
              "x dt for the diagonal blocks (and again for the chunk states once c > 1)"),
        Saved("ssm/chunk_decays", 2 * H_s * S, 4, src,
              "exp of the cumulative decays: to each chunk's end and from its start"),
        Saved("ssm/b_padded", (1 - one_view) * S * heads_state, 4, src,
              "padded B times the decays (read in place at one sequence and one chunk)"),
        Saved("ssm/b_decay", S * heads_state, 4, src, "decayed B for the chunk states"),
        Saved("ssm/chunk_decay", b * H_s * (c + 1)**2, 4, src,
              "decays between chunks, (c + 1) x (c + 1) per head"),
        Saved("ssm/states", b * (c + 1) * d_in * N_s + b * (c + 1 - multi) * d_in * N_s, 4,
              src, "the chunk states with the initial zero state, and the states each chunk "
              "reads (the whole storage with one chunk)"),
        Saved("ssm/c_copy", (1 - one_view) * S * heads_state, 4, src,
              "C for the state read-out"),
        Saved("ssm/y_off", S * d_in, 4, src, "C times the states, before their decay"),
    ]
    out += gated_norm_terms(f, A, tokens, S)
    return out


def gated_norm_terms(f, A, tokens, S) -> list[Saved]:
    """Mamba-2's output: the float32 scan output y (padded storage) times SiLU(z) then a
    grouped RMSNorm (``sw_ssm_norm``, G_s groups; Falcon-H1 normalizes before the gate, the
    same tensors), or y times SiLU(z) at the activation width without a norm (Falcon-H1
    without mamba_rms_norm); and out_proj's input."""
    src = "torch_autograd"
    f32 = f["ac_f32"]
    norm = sw("ssm_norm")
    return [
        Saved("ssm/gate_fp32", norm * (1 - f32) * tokens * d_in, 4, src,
              "z in float32 for SiLU (a view of in_proj's output in float32)"),
        Saved("ssm/gate_silu", tokens * d_in, 4 - (1 - norm) * (4 - A), src,
              "SiLU(z) (float32 before the norm)"),
        Saved("ssm/scan_output", S * d_in, 4, src, "the scan output y (padded storage)"),
        Saved("ssm/norm_input", norm * tokens * d_in, 4, src,
              "gated RMSNorm: y SiLU(z), float32"),
        Saved("ssm/norm_rsqrt", norm * tokens * G_s, 4, src,
              "gated RMSNorm: reciprocal root per group"),
        Saved("ssm/norm_normalized", norm * tokens * d_in, 4, src,
              "gated RMSNorm: normalized values the weight multiplies, float32"),
        Saved("ssm/out_input", tokens * d_in, A, src, "out_proj input"),
    ]

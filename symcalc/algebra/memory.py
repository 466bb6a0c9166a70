"""Memory in bytes, as sympy expressions: weights, KV cache, activations, training state.

Byte counts may be fractional in the algebra (int4 weights, a ZeRO partition over N_d
ranks); the numbers reported round up to whole bytes (a partition or a packed tensor needs
its last byte).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from .caps import max_of, min_of
from ..errors import SymcalcError
from .options import check_dtype, dtype_fraction
from .components import linear_qkv_width, ssm_conv_width, sw
from .symbols import (K_conv, L, L_attn, L_conv, L_dec, L_idx, L_kv_shared, L_kv_shared_local,
                      L_lin, L_local, L_ssm, N_d, N_s, W, b, d,
                      d_h, A_g, A_l, n_kvg, d_ih, d_in, d_lk, d_lv, d_nope, d_rope, d_v, n_h, n_kv,
                      n_lv, r_kv, s, s_dec, t, S_k, K_g, L_ple, n_hc, K_pe, N_g,
                      m_csa, m_hca, L_csa, L_hca)

GB = 10**9
GiB = 2**30


def dtype_bytes(name: str, field: str = "dtype") -> sympy.Rational:
    """Bytes per element of a dtype name (fp32 4, fp16/bf16 2, fp8/int8 1, int4 1/2), or of a
    bit width ``bitsN`` / ``N`` (N/8)."""
    check_dtype(field, name)
    return sympy.Rational(*dtype_fraction(name))


@dataclass(frozen=True)
class Optimizer:
    """Bytes per parameter of weights, gradients and optimizer state (Rajbhandari et al.)."""
    name: str
    weights: int
    gradients: int
    state: int
    meaning: str


OPTIMIZERS = {
    o.name: o
    for o in (
        Optimizer("adam-mixed", 2, 2, 12, "mixed-precision Adam: fp16/bf16 weights and gradients, "
                  "fp32 master weights, momentum and variance (2 + 2 + 12 = 16 bytes)"),
        Optimizer("adam-fp32", 4, 4, 8, "fp32 Adam: weights, gradients, momentum, variance (16 bytes)"),
        Optimizer("sgd-momentum", 4, 4, 4, "fp32 SGD with momentum (12 bytes)"),
    )
}


def optimizer(name: str) -> Optimizer:
    if name not in OPTIMIZERS:
        raise SymcalcError("optimizer", f"must be one of {', '.join(OPTIMIZERS)} (got {name!r})")
    return OPTIMIZERS[name]


def weights_bytes(n_params, bytes_per) -> sympy.Expr:
    return n_params * bytes_per


def training_bytes(n_params, opt: Optimizer, zero_stage: int) -> sympy.Expr:
    """Weights, gradients and optimizer state per data-parallel rank under ZeRO stage 0-3:
    stage 1 partitions the optimizer state over N_d ranks, stage 2 the gradients too, stage 3
    the weights too (Rajbhandari et al. 2020, Sec. 5)."""
    if zero_stage not in (0, 1, 2, 3):
        raise SymcalcError("zero", f"stage must be 0, 1, 2 or 3 (got {zero_stage})")
    w, g, o = opt.weights, opt.gradients, opt.state
    whole, split = {0: (w + g + o, 0), 1: (w + g, o), 2: (w, g + o), 3: (0, w + g + o)}[zero_stage]
    return n_params * (whole + sympy.Rational(1, 1) * split / N_d)


def kv_width():
    """Elements cached per token and layer: keys and values of n_kv heads, 2 n_kv d_h (Pope
    et al. 2022). Under MLA (``sw_mla``) the cache holds the key/value latent and the shared
    rotary key, r_kv + d_rope (DeepSeek-V2 Sec. 2.1.2; what transformers 5.24's
    DeepseekV2/V3 attention and serving engines keep); with ``sw_mla_expanded`` it holds the
    up-projected keys and values instead, n_h (d_nope + d_rope) + n_h d_v, as an implementation
    that caches ordinary keys and values would."""
    mla, expanded = sw("mla"), sw("mla_expanded")
    full = n_h * (d_nope + d_rope) + n_h * d_v
    return (1 - mla) * 2 * n_kv * d_h + mla * (expanded * full + (1 - expanded) * (r_kv + d_rope))


def cached_layer_tokens(layers, seq, shared_local=0):
    """Layer-tokens held by the cache: ``seq`` tokens in each global layer, at most W in each
    sliding one (all layers slide with ``sw_window_all``, else L_local of them, less the
    ``shared_local`` sliding layers left out of ``layers``)."""
    local = sw("window") * (sw("window_all") * layers
                            + (1 - sw("window_all")) * (L_local - shared_local))
    return (layers - local) * seq + local * min_of(seq, W)


def kv_cache_bytes(family: str, bytes_per) -> sympy.Expr:
    """Keys and values of every layer for b sequences; a sliding window caps the tokens of
    the layers that slide at W. An encoder-decoder caches its decoder's self-attention (s_dec
    tokens) and cross-attention (s encoder tokens); an encoder-only model keeps no cache."""
    if family == "encoder":
        return sympy.Integer(0)
    per_token = kv_width() * b * bytes_per
    if family == "encoder-decoder":
        return L_dec * per_token * (s_dec + s)
    # attention layers only, less Gemma 3n's sharing layers: they read an earlier layer's
    # keys and values and keep none (transformers 5.24 puts a weightless placeholder there)
    # the global layers with their own shape (Gemma 4, MiMo-V2-Flash) cache s tokens of
    # n_kvg A_g values each, the sliding ones n_kv A_l (attention_k_eq_v caches the values all
    # the same: the v-normed keys); DeepSeek Sparse Attention's indexer keeps its own key
    # cache, one key of width d_ih per token in each layer that runs it (transformers 5.24
    # DynamicIndexedLayer.indexer_keys; Qwen4-Exp's QSA indexer the same, its raw keys;
    # MiniMax-M3's its normed, rotated keys, MiniMaxM3VLSparseCacheLayer.idx_keys)
    glob = (L_attn - L_kv_shared) - (L_local - L_kv_shared_local)
    local = L_local - L_kv_shared_local
    wider = sw("gshape") * b * bytes_per * (glob * s * (n_kvg * A_g - 2 * n_kv * d_h)
                                            + local * min_of(s, W) * n_kv * (A_l - 2 * d_h))
    # the sliding layers' own MLA shape (dots.llm3): their latent and rotary key widths
    from .accounting import window_shape
    window = sw("mlaw") * b * bytes_per * L_local * min_of(s, W) \
        * (kv_width().xreplace(window_shape()) - kv_width())
    return (per_token * cached_layer_tokens(L_attn - L_kv_shared, s, L_kv_shared_local) + wider
            + window + (sw("dsa") + sw("qsa") + sw("msa")) * L_idx * d_ih * b * bytes_per * s
            + sw("kvc") * b * bytes_per * compressor_cache())


def compressor_cache() -> sympy.Expr:
    """What DeepSeek-V4's compressors keep per sequence after s tokens (transformers 5.24
    DeepseekV4CSACache, DeepseekV4HCACache): in each CSA layer, for its compressor (width d_v)
    and its indexer's (d_ih), the floor(s / m_csa) compressed entries, the s mod m_csa tokens of
    an unfinished window (their kv and gate projections, 2 x 2 channels each) and, once a window
    has closed, the last window's first series again (kv and gate, m_csa tokens each); in each
    HCA layer its floor(s / m_hca) entries and the s mod m_hca unfinished tokens (kv and gate).
    The cache layers of both hold the one key/value head once (values is keys); a sliding layer
    without a compressor is transformers' DynamicSlidingWindowLayer, which keeps the values as a
    second copy of the keys: d_v more per token in its window."""
    c_csa, c_hca = sympy.floor(s / m_csa), sympy.floor(s / m_hca)
    return (L_csa * (d_v + d_ih) * (c_csa + 4 * (s - m_csa * c_csa)
                                    + 2 * m_csa * min_of(1, c_csa))
            + L_hca * d_v * (c_hca + 2 * (s - m_hca * c_hca))
            + (L - L_csa - L_hca) * d_v * min_of(s, W))


def kv_cache_terms(shape: str) -> list[tuple[str, sympy.Expr, str]]:
    """(path, elements, source) of the KV cache of a model of ``shape``; times the bytes per
    element they are :func:`kv_cache_bytes` (a single stack keeps a cache only as a decoder:
    ``sw_decoder``, 1 unless it is an encoder)."""
    if shape == "encoder-decoder":
        return [("decoder/kv_cache", kv_cache_bytes("encoder-decoder", 1), "pope2022")]
    return [("kv_cache", sympy.Symbol("sw_decoder", integer=True, nonnegative=True)
             * kv_cache_bytes("decoder", 1), "pope2022")]


def recurrent_state_terms(shape: str) -> list[tuple[str, sympy.Expr, str]]:
    """(path, elements, source) of the recurrent state of b sequences, per mixer: its state
    (``<mixer>/state``, kept at the state dtype) and its convolution window
    (``<mixer>/conv``, at the KV-cache dtype)."""
    if shape != "single":
        return []
    counts = {"linear_attention": L_lin, "ssm": L_ssm, "short_conv": L_conv}
    sources = {"linear_attention": "yang2025", "ssm": "dao2024", "short_conv": "liquid2025"}
    out = []
    for mixer, (state, conv) in recurrent_state_elements().items():
        out.append((f"{mixer}/state", b * counts[mixer] * state, sources[mixer]))
        out.append((f"{mixer}/conv", b * counts[mixer] * conv, sources[mixer]))
    out.append(("attention/short_convs/state", b * short_conv_windows(), "inkling2026"))
    out.append(("attention/cca/conv", b * cca_windows(), "zyphra2025cca"))
    out.append(("ngram_ple/conv", b * ngram_ple_windows(), "qwen2026qwen4exp"))
    out.append(("ngram_ple/ids", b * ngram_ple_ids(), "qwen2026qwen4exp"))
    return out


# bytes of one cached token id (int64, whatever the model's dtype)
ID_BYTES = 8


def ngram_ple_windows() -> sympy.Expr:
    """Qwen4-Exp's n-gram per-layer embeddings (``sw_ngp``), one sequence: in each of the L_ple
    layers the last (K_pe - 1) N_g inputs of the dilated convolution over the n_hc d stream
    channels, in the model's dtype (transformers 5.24: conv_states[1] of the layer's cache)."""
    return sw("ngp") * L_ple * n_hc * d * (K_pe - 1) * N_g


def ngram_ple_ids() -> sympy.Expr:
    """The last N_g - 1 token ids each of the L_ple layers keeps to hash the next n-grams
    (conv_states[2]; int64, :data:`ID_BYTES` each)."""
    return sw("ngp") * L_ple * (N_g - 1)


def cca_windows() -> sympy.Expr:
    """ZAYA's convolutional attention (``sw_cca``), one sequence, every attention layer: the
    last K_conv + K_g - 2 query and key inputs of its two convolutions ((n_h + n_kv) d_h
    channels) and the last token's delayed value half (n_kv d_h / 2), in the model's dtype
    (transformers 5.24's conv_states and recurrent_states)."""
    return sw("cca") * L_attn * ((n_h + n_kv) * d_h * (K_conv + K_g - 2) + n_kv * d_h / 2)


def short_conv_windows() -> sympy.Expr:
    """Inkling's convolution windows (``sw_sconv``), one sequence, every attention layer: the
    last K_conv inputs of its four depthwise convolutions, keys and values (n_kv d_h channels
    each; the global layers at their own shape with ``sw_gshape``, S_k summed) and the
    attention and MLP outputs (d each). transformers 5.24 keeps them in float32 whatever the
    model's dtype (the convolutions run in float32), so they count at the state dtype."""
    keys = L_attn * n_kv * d_h + sw("gshape") * (S_k - L_attn * n_kv * d_h)
    return sw("sconv") * K_conv * (2 * keys + 2 * L_attn * d)


def recurrent_state_elements() -> dict[str, tuple[sympy.Expr, sympy.Expr]]:
    """(state, convolution window) elements one sequence keeps per layer of each
    non-attention mixer, whatever its length (the cache objects of transformers 5.24,
    ``transformers_cache``: conv_states of K_conv columns, recurrent_states):

    * linear attention: a d_lk x d_lv state per value head (n_lv d_lk d_lv) and the last
      K_conv inputs of its convolution over q, k and v (lightning attention has none);
    * Mamba: a d_in x N_s state and the last K_conv inputs of its convolution (x for Mamba-1;
      x, B and C for Mamba-2);
    * LFM2's short convolution: no state, the last K_conv inputs of its d channels.
    """
    return {
        # RWKV-4 (sw_rwkv): the WKV numerator, denominator and running maximum (3 d_lv) and the
        # last token's input of each block's time shift (2d) (transformers' RwkvModel state)
        # xLSTM's mLSTM (sw_mlstm): its d_lk x d_lv state, normalizer (d_lk) and maximum per
        # head, which xLSTMCache keeps in the model's dtype: counted with the conv windows
        "linear_attention": ((1 - sw("rwkv") - sw("mlstm")) * n_lv * d_lk * d_lv
                             + sw("rwkv") * 3 * d_lv,
                             (1 - sw("light") - sw("rwkv") - sw("mlstm")) * linear_qkv_width()
                             * K_conv + sw("rwkv") * 2 * d
                             + sw("mlstm") * n_lv * (d_lk * d_lv + d_lk + 1)),
        # the RG-LRU (sw_rglru): a d_in state and the last K_conv - 1 inputs of its conv
        "ssm": ((1 - sw("rglru")) * d_in * N_s + sw("rglru") * d_in,
                ssm_conv_width() * K_conv - sw("rglru") * d_in),
        "short_conv": (sympy.Integer(0), d * K_conv),
    }


def recurrent_state_bytes(family: str, conv_bytes, state_bytes) -> sympy.Expr:
    """State of the linear-attention, SSM and short-convolution layers for b sequences: it
    replaces those layers' KV cache and does not grow with the sequence. The recurrent
    state is kept at ``state_bytes`` per element (fp32 in transformers' torch paths), the
    convolution windows at ``conv_bytes`` (the model's dtype)."""
    if family != "decoder":
        return sympy.Integer(0)
    per = recurrent_state_elements()
    counts = {"linear_attention": L_lin, "ssm": L_ssm, "short_conv": L_conv}
    return b * (sympy.Add(*[counts[k] * (state * state_bytes + conv * conv_bytes)
                            for k, (state, conv) in per.items()])
                + short_conv_windows() * state_bytes + cca_windows() * conv_bytes
                + ngram_ple_windows() * conv_bytes + ngram_ple_ids() * ID_BYTES)


RECOMPUTE = ("none", "selective", "full")


def activation_bytes_per_layer(seq, recompute: str = "none", tensor_parallel: bool = False,
                               sequence_parallel: bool = False) -> sympy.Expr:
    """Korthikanti et al. 2022, Sec. 4: bytes of activations one layer stores for the
    backward pass at 16 bits with 1-byte dropout masks:

    * no parallelism: s b d (34 + 5 n_h s / d)
    * tensor parallel over t: s b d (10 + 24/t + 5 n_h s / (d t))
    * tensor + sequence parallel: s b d (34/t + 5 n_h s / (d t))
    * selective recompute (attention core recomputed): s b d 34/t (with sequence parallel),
      s b d (10 + 24/t) without
    * full recompute: only the layer input, 2 s b d (divided by t with sequence parallel)
    """
    if recompute not in RECOMPUTE:
        raise SymcalcError("recompute", f"must be one of {', '.join(RECOMPUTE)} (got {recompute!r})")
    tp = t if tensor_parallel or sequence_parallel else sympy.Integer(1)
    sbd = seq * b * d
    attn_core = 5 * n_h * seq**2 * b / tp
    if recompute == "full":
        return 2 * sbd / (tp if sequence_parallel else 1)
    if sequence_parallel:
        linear_part = 34 * sbd / tp
    elif tensor_parallel:
        linear_part = sbd * (10 + 24 / tp)
    else:
        linear_part = 34 * sbd
    return linear_part if recompute == "selective" else linear_part + attn_core


def activations_bytes(family: str, **options) -> sympy.Expr:
    """Per-layer activations times the number of layers (each stack at its own length)."""
    if family == "encoder-decoder":
        return (L * activation_bytes_per_layer(s, **options)
                + L_dec * activation_bytes_per_layer(s_dec, **options))
    return L * activation_bytes_per_layer(s, **options)


def seed_activation_bytes(family: str) -> sympy.Expr:
    """The layer calculator's baseline (seeds/000): s d 4 bytes per layer (fp32 hidden
    states only), times b sequences."""
    if family == "encoder-decoder":
        return 4 * b * d * (L * s + L_dec * s_dec)
    return 4 * b * s * d * L

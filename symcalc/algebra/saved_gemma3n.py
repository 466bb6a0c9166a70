"""Saved tensors of Gemma 3n's eager layer beyond a Gemma layer (transformers 5.24
Gemma3nTextDecoderLayer): AltUp's predict and correct steps around the layer, LAuReL beside
attention, the per-layer input gated into every layer, the value norm (its rotary tables as
Gemma 3's: saved_attention.rope_table_terms). Not exact (tests/reference/test_activations_families.py NOT_EXACT): KV sharing and
the activation-sparsity FFN of the first layers are left out."""
from __future__ import annotations

from .saved import Saved, norm_terms
from .symbols import d, d_h, d_ple, n_alt, n_kv, r_laurel


def gemma3n_terms(model: str, f, A, tokens) -> list[Saved]:
    """One Gemma 3n layer's extra terms over ``tokens`` = b s rows (``ac_g3n`` 0 elsewhere)."""
    g = f["ac_g3n"]
    bits16 = 1 - f["ac_f32"]  # in float32 the casts are no copies: fewer storages
    if model == "paper":  # the inputs of the extra matrices and norms at A bytes
        return [Saved("gemma3n/inputs", g * tokens * (5 * d + r_laurel + 2 * d_ple), A,
                      "gemma3n2025", "AltUp router inputs, LAuReL, per-layer input gate and "
                      "projection, their norms' inputs", split=False)]
    src = "gemma3n2025"
    out: list[Saved] = []
    # d-wide norms beyond the four of a Gemma layer: AltUp's router norm (predict and correct),
    # LAuReL's post norm, the per-layer input's post norm
    for name in ("altup_predict_norm", "altup_correct_norm", "laurel_norm", "ple_norm"):
        out += [x.times(g) for x in norm_terms(f, A, tokens, f"gemma3n/{name}")]
    out += [
        Saved("gemma3n/altup_router_inputs", g * 2 * tokens * d, A, src,
              "AltUp: the modality router's input (predict and correct)", split=False),
        Saved("gemma3n/altup_tanh", g * 2 * tokens * n_alt, 4, src,
              "AltUp: tanh of the routed modalities, float32 (predict and correct)", split=False),
        Saved("gemma3n/altup_modalities", g * bits16 * 2 * tokens * n_alt, A, src,
              "AltUp: the coefficient projections' input, cast back from the float32 tanh "
              "(predict and correct)", split=False),
        Saved("gemma3n/altup_coefs", g * tokens * (n_alt * n_alt + n_alt), A, src,
              "AltUp: prediction and correction coefficients per token", split=False),
        Saved("gemma3n/altup_clamped", g * n_alt * n_alt, A, src,
              "AltUp: the clamped correction weight (training)", split=False),
        Saved("gemma3n/altup_streams", g * (1 + bits16) * tokens * d * n_alt, A, src,
              "AltUp: the repeated innovation and, at 16 bits, the permuted streams the "
              "prediction matmul reads (in float32 a storage already kept)", split=False),
        Saved("gemma3n/altup_stream_views", g * f["ac_f32"] * 2 * (n_alt - 1) * tokens * d, 4,
              src, "float32: the router norm and the input norm read views of the n_alt "
              "streams (the layer's input, the predictions) and keep those whole storages",
              split=False),
        Saved("gemma3n/altup_scaled", g * tokens * d, A, src,
              "AltUp: the corrected output the output scale multiplies", split=False),
        Saved("gemma3n/ple_gate_input", g * tokens * d, A, src,
              "per-layer input gate's input", split=False),
        Saved("gemma3n/laurel_right", g * tokens * r_laurel, A, src,
              "LAuReL: the right matrix's input (rank r)", split=False),
        Saved("gemma3n/ple", g * 4 * tokens * d_ple, A, src,
              "per-layer input: gate output, activation, its slice of the per-layer inputs, "
              "the projection's input", split=False),
        Saved("gemma3n/ple_norm_model", g * 2 * tokens * (d_ple + 1), 4, src,
              "the per-layer inputs' norm (float32 input and normalized, mean square and root)",
              split=False),
        Saved("gemma3n/v_norm", g * (tokens * n_kv * d_h + 2 * tokens * n_kv), 4, src,
              "value norm without scale: float32 input, mean square and root"),
    ]
    return out


def gemma3n_shared_kv_terms(model: str, f, A, tokens) -> list[Saved]:
    """What a KV-sharing layer does not keep (to be held L_kv_shared times): it reads an
    earlier layer's keys and values, so it has no k norm and no v norm (its score and value
    products still keep their own K and V copies)."""
    g = f["ac_g3n"]
    if model == "paper":
        return []
    out = [x.times(-g) for x in norm_terms(f, A, tokens * n_kv, "gemma3n/shared_k_norm",
                                            width=d_h)]
    out.append(Saved("gemma3n/shared_v_norm", -g * (tokens * n_kv * d_h + 2 * tokens * n_kv), 4,
                     "gemma3n2025", "no value norm in a KV-sharing layer"))
    return out

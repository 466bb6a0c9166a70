"""Activations kept for the backward pass, built from components like parameters and FLOPs.

Each tensor a layer saves is a :class:`Saved` term: a name, its element count, the bytes of
one element, the key of its source, the implementation choice it depends on, and whether
tensor parallelism splits it (inside the column/row-parallel region) or only sequence
parallelism does. Three named models:

* ``paper`` -- Korthikanti et al. 2022, Sec. 4, term by term (every activation at the model's
  activation width A bytes, dropout masks 1 byte), with the model's own d_ff, gate, n_kv
  and dropouts; for a GPT-shaped layer it is exactly 34 s b d + 5 n_h s^2 b at 16 bits;
* ``eager`` -- what transformers' eager code keeps on CPU (measured with autograd's
  saved-tensor hooks: tests/saved_tensors.py): float32 upcasts of RMSNorm and softmax where
  the implementation does them, LayerNorm statistics and dropout masks at the activation
  width (CPU dropout multiplies by a mask of the input's dtype), repeated GQA keys and values,
  the routed token copies of the MoE experts (transformers' default ``grouped_mm``);
* ``sdpa`` -- the same layer with a fused scaled-dot-product attention kernel: no s^2 score
  matrix, a float32 log-sum-exp per query and head instead; keys and values at n_kv heads.

The implementation facts (which norm, softmax upcast, dropouts, activation) are the
``ac_*`` values of :func:`symcalc.algebra.implementation.facts`; here they may be numbers
(one spec) or symbols (the term table's rows of :mod:`symcalc.fast.build_terms`).
"""
from __future__ import annotations

import sympy

from ..errors import SymcalcError
from . import implementation, options
from .options import ACTIVATION_MODELS
from .components import sw
from .saved import Saved, norm_terms
from .saved_attention import (attention_terms, layer_kind_terms, rope_table_terms,
                              sdpa_mask_terms)
from .saved_gemma3n import gemma3n_shared_kv_terms, gemma3n_terms
from .saved_ffn import adapter_terms, ffn_terms, moe_terms
from .saved_mixers import mixer_terms
from .symbols import L_kv_shared
from .symbols import L, L_attn, L_dec, L_ffn, b, d, d_ff, s, s_dec, t

RECOMPUTE = ("none", "selective", "full")


def layer_terms(model: str, facts: dict, A, q_len=s, kv_len=None, cross: bool = False,
                attention=1, dense=1, moe=0) -> list[Saved]:
    """Every term one layer keeps: self-attention over ``q_len`` tokens, cross-attention to
    ``kv_len`` encoder tokens when ``cross``, and ``dense``/``moe`` FFNs (0/1 weights).
    ``facts`` maps the ``ac_*`` names and ``f32`` (activations are float32) to 0/1 values."""
    if model not in ACTIVATION_MODELS:
        raise SymcalcError("activations", f"must be one of {', '.join(ACTIVATION_MODELS)} (got {model!r})")
    f = dict(facts)
    tokens = b * q_len
    paper = model == "paper"
    mask_bytes = 1 if paper else A
    norms: list[Saved] = []
    if not paper:  # the paper counts each LayerNorm's input as 2 s b d, nothing else
        n_attn = sw("norm_attn_in") + sw("norm_attn_out")
        # Nemotron-H's FFN and MoE blocks have a norm of their own (ac_block_norm)
        n_ffn = sw("norm_ffn_in") + sw("norm_ffn_out") + f["ac_block_norm"]
        norms += [x.times(n_attn * attention) for x in norm_terms(f, A, tokens, "norm/attention")]
        # a parallel block's two norms read the same block input: kept once (ac_parallel_norms)
        norms += [x.times(n_ffn * (dense + moe)
                          * (1 - f["ac_parallel_norms"] if x.name.endswith("/input") else 1))
                  for x in norm_terms(f, A, tokens, "norm/ffn")]
        if cross:
            norms += norm_terms(f, A, tokens, "norm/cross_attention")
    else:
        # as many norms as the layer has (Gemma 2's four, Cohere's one parallel norm)
        n = ((sw("norm_attn_in") + sw("norm_attn_out")) * attention
             + (sw("norm_ffn_in") + sw("norm_ffn_out")) * (dense + moe) + (1 if cross else 0))
        norms.append(Saved("norm/input", n * tokens * d, A, "korthikanti2022",
                           "each LayerNorm keeps its input", split=False))
    out = list(norms)
    out += [x.times(attention) for x in attention_terms(model, f, A, tokens, tokens, q_len, q_len, "attention")]
    if cross:
        out += attention_terms(model, f, A, tokens, b * kv_len, q_len, kv_len,
                                "cross_attention", cross=True)
    gated = sw("gated")
    out += [x.times(dense) for x in ffn_terms(model, f, A, tokens, d_ff, "ffn", gated,
                                              f["ac_drop_ffn_out"], mask_bytes)]
    if moe != 0:
        out += [x.times(moe) for x in moe_terms(model, f, A, tokens, "moe")]
        out.append(Saved("moe/dropout_mask_out", moe * f["ac_drop_ffn_out"] * tokens * d,
                         mask_bytes, "torch_autograd", "dropout mask after the FFN", split=False))
    return [x for x in out if x.elements != 0]


def facts_of(spec, dtype: str, batch: int = 2) -> dict:
    """The spec's implementation facts (:func:`implementation.facts`) as sympy integers."""
    return {n: sympy.Integer(v) for n, v in implementation.facts(spec, dtype, batch).items()}


def stack_terms(model: str, facts: dict, shape: str) -> list[tuple[str, list[Saved]]]:
    """(stack, terms) with each term already multiplied by the layers that hold it: a single
    stack of L layers (attention in L_attn, FFN in L_ffn: dense or MoE, the other mixers in
    L_lin, L_conv, L_ssm: :func:`saved_mixers.mixer_terms`), or T5's encoder (L
    layers over s tokens) and decoder (L_dec layers over s_dec tokens with cross-attention)."""
    from .accounting import dense_count, moe_count

    A = facts["ac_width"]
    if shape == "encoder-decoder":
        return [("encoder", layer_terms(model, facts, A, s, attention=L, dense=L)),
                ("decoder", [x.times(L_dec)
                             for x in layer_terms(model, facts, A, s_dec, s, cross=True)])]
    return [("layers", layer_terms(model, facts, A, s, attention=L_attn,
                                   dense=dense_count(L_ffn), moe=moe_count(L_ffn))
             + mixer_terms(model, facts, A, s) + rope_table_terms(model, facts, A)
             + sdpa_mask_terms(model, facts, A)
             + layer_kind_terms(model, facts, A)
             + [x.times(L_attn) for x in gemma3n_terms(model, facts, A, b * s)]
             + [x.times(L) for x in adapter_terms(model, facts, A, b * s,
                                                  1 if model == "paper" else A)]
             + [x.times(L_kv_shared) for x in gemma3n_shared_kv_terms(model, facts, A, b * s)])]


def choice_weights(model: str, recompute: str, tensor_parallel: bool,
                   sequence_parallel: bool) -> dict[str, int]:
    """One-hot weights of the choices (see :func:`weighted_bytes`), the names checked."""
    if model not in ACTIVATION_MODELS:
        raise SymcalcError("activations", f"must be one of {', '.join(ACTIVATION_MODELS)} (got {model!r})")
    if recompute not in RECOMPUTE:
        raise SymcalcError("recompute", f"must be one of {', '.join(RECOMPUTE)} (got {recompute!r})")
    return options.choice_weights(model, recompute, tensor_parallel, sequence_parallel)


CHOICE_MEANINGS = {
    "ac_paper": "activation model paper (one-hot with ac_eager, ac_sdpa)",
    "ac_eager": "activation model eager",
    "ac_sdpa": "activation model sdpa",
    "ac_keep": "no full recomputation: the layers keep their terms",
    "ac_keep_core": "no recomputation at all: the attention core is kept too",
    "ac_full": "full recomputation: only each layer's input is kept",
    "ac_p0": "neither tensor nor sequence parallelism",
    "ac_ptp": "tensor parallelism over t ranks without sequence parallelism",
    "ac_psp": "sequence parallelism (with tensor parallelism) over t ranks",
}


def divisors(w: dict) -> tuple:
    """(div_t, div_r): what tensor parallelism leaves of a term inside its region
    (p0 + (ptp + psp)/t) and of a term outside it, which only sequence parallelism divides
    (p0 + ptp + psp/t) (Korthikanti et al. 2022, Sec. 4.2-5)."""
    return (w["ac_p0"] + (w["ac_ptp"] + w["ac_psp"]) / t,
            w["ac_p0"] + w["ac_ptp"] + w["ac_psp"] / t)


def weighted_sums(sums: dict, inputs, w: dict) -> sympy.Expr:
    """Activation bytes from per-model sums ``sums[model] = (split, replicated, core)`` and
    the layer inputs ``inputs`` kept under full recomputation, with the choices as weights
    ``w`` (:func:`choice_weights` values, or symbols): per model, keep x (split terms x div_t
    + replicated terms x div_r), the attention core only with keep_core; with full
    recomputation the layer inputs (x div_r)."""
    div_t, div_r = divisors(w)
    total = sympy.Integer(0)
    for model, (split, rep, core) in sums.items():
        if w[f"ac_{model}"] * w["ac_keep"] == 0:  # a model not chosen (numbers, not symbols)
            continue
        total += w[f"ac_{model}"] * w["ac_keep"] * (
            (split + w["ac_keep_core"] * core) * div_t + rep * div_r)
    return total + w["ac_full"] * inputs * div_r


def layer_inputs(facts: dict, shape: str) -> sympy.Expr:
    """Bytes of every layer's input, A b d per token: all that full recomputation keeps."""
    tokens = L * s + (L_dec * s_dec if shape == "encoder-decoder" else 0)
    return facts["ac_width"] * b * d * tokens


def model_sums(model: str, facts: dict, shape: str) -> tuple:
    """(split, replicated, core) bytes of ``model``'s terms over every layer."""
    split, rep, core = [], [], []  # one Add each at the end (adding term by term is quadratic)
    for _, terms in stack_terms(model, facts, shape):
        for term in terms:
            (core if term.core else split if term.split else rep).append(term.bytes)
    return sympy.Add(*split), sympy.Add(*rep), sympy.Add(*core)


def weighted_bytes(facts: dict, shape: str, w: dict) -> sympy.Expr:
    """Activation bytes of every layer with the choices as weights ``w``
    (:func:`weighted_sums` over every model's terms)."""
    sums = {m: model_sums(m, facts, shape) for m in ACTIVATION_MODELS
            if w[f"ac_{m}"] * w["ac_keep"] != 0}
    return weighted_sums(sums, layer_inputs(facts, shape), w)


def activations_bytes(model: str, facts: dict, shape: str, recompute: str = "none",
                      tensor_parallel: bool = False, sequence_parallel: bool = False) -> sympy.Expr:
    """Bytes every layer of the model keeps (no embeddings, head or loss) under the
    recomputation and parallelism choices."""
    w = {k: sympy.Integer(v) for k, v in
         choice_weights(model, recompute, tensor_parallel, sequence_parallel).items()}
    return weighted_bytes(facts, shape, w)


def kept_terms(model: str, facts: dict, shape: str, recompute: str = "none",
               tensor_parallel: bool = False,
               sequence_parallel: bool = False) -> list[tuple[str, Saved, sympy.Expr]]:
    """(stack, term, bytes) of every term the chosen model keeps under the choices, each
    term's bytes over all the layers holding it and divided as :func:`weighted_bytes`
    divides it; under full recomputation the one term is each layer's input. Their sum is
    :func:`activations_bytes` (the derivation lists them one by one)."""
    w = {k: sympy.Integer(v) for k, v in
         choice_weights(model, recompute, tensor_parallel, sequence_parallel).items()}
    div_t, div_r = divisors(w)
    if w["ac_full"]:
        term = Saved("layer_input", layer_inputs(facts, shape) / facts["ac_width"],
                     facts["ac_width"], "korthikanti2022",
                     "full recomputation: each layer keeps only its input", split=False)
        return [("layers", term, term.bytes * div_r)]
    out = []
    for stack, terms in stack_terms(model, facts, shape):
        for term in terms:
            if term.core and not w["ac_keep_core"]:
                continue
            out.append((stack, term, term.bytes * (div_t if term.split else div_r)))
    return out

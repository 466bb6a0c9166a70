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
``ac_*`` values of :func:`symcalc.algebra.activation_profiles.facts`; here they may be numbers
(one spec) or symbols (the general expressions of :mod:`symcalc.fast.codegen`).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..errors import SymcalcError
from . import activation_profiles as profiles
from .activation_profiles import ACTIVATION_MODELS, FACT_MEANINGS
from .components import expert_width, qk_width, shared_width, sw, value_width
from .symbols import E, E_s, L, L_attn, L_dec, L_ffn, b, d, d_ff, k, n_h, n_kv, s, s_dec, t

RECOMPUTE = ("none", "selective", "full")


@dataclass(frozen=True)
class Saved:
    """One tensor (or one kind of tensor) a layer keeps for backward."""

    name: str
    elements: sympy.Expr
    bytes_per: sympy.Expr
    source: str
    choice: str  # the implementation choice it depends on
    split: bool = True  # tensor parallelism splits it (else only sequence parallelism)
    core: bool = False  # part of the attention core that selective recomputation drops

    @property
    def bytes(self) -> sympy.Expr:
        return self.elements * self.bytes_per


def _norm_terms(f, A, tokens, tag: str, width=d) -> list[Saved]:
    """One norm over ``tokens`` rows of ``width`` (its output is the next consumer's input,
    counted there)."""
    rows = tokens
    return [
        Saved(f"{tag}/input", f["ac_ln"] * rows * width, A, "ba2016", "LayerNorm keeps its input",
              split=False),
        Saved(f"{tag}/stats", f["ac_ln"] * 2 * rows, A, "torch_autograd",
              "LayerNorm mean and reciprocal std (CPU: activation dtype)", split=False),
        Saved(f"{tag}/input_fp32", f["ac_rms32"] * rows * width, 4,
              "torch_autograd", "RMSNorm squares a float32 copy of its input", split=False),
        Saved(f"{tag}/input_16bit", f["ac_t5_16"] * rows * width, A,
              "torch_autograd", "T5's RMSNorm multiplies its 16-bit input by the float32 root",
              split=False),
        Saved(f"{tag}/rsqrt", f["ac_rms32"] * rows, 4, "torch_autograd",
              "RMSNorm reciprocal root, float32", split=False),
        Saved(f"{tag}/normalized", f["ac_rms32"] * rows * width, A,
              "torch_autograd", "normalized values that the weight multiplies", split=False),
    ]


def _attention_terms(model: str, f, A, q_tokens, kv_tokens, q_len, kv_len, tag: str,
                     cross: bool = False) -> list[Saved]:
    """Self- (or cross-) attention: its input, Q, K, V, the score core, the output
    projection's input and the dropout mask after it. ``q_tokens``/``kv_tokens`` are b s."""
    mla = sw("mla")
    qk, vw = qk_width(), value_width()
    drop_a, drop_h = f["ac_drop_attn"], f["ac_drop_hidden"]
    heads = n_h * q_len * kv_len * b
    out: list[Saved] = [Saved(f"{tag}/input", q_tokens * d, A, "korthikanti2022",
                              "the Q/K/V projections keep their input", split=False)]
    if cross:  # keys and values come from the encoder output: one storage for all layers
        out[0] = Saved(f"{tag}/input", q_tokens * d, A, "korthikanti2022",
                       "the query projection keeps its input", split=False)
    if model == "paper":
        out += [
            Saved(f"{tag}/q", q_tokens * n_h * qk, A, "korthikanti2022", "QK^T keeps Q"),
            Saved(f"{tag}/k", kv_tokens * n_kv * qk, A, "korthikanti2022",
                  "QK^T keeps K (n_kv heads)"),
            Saved(f"{tag}/softmax", heads, A, "korthikanti2022", "softmax output", core=True),
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
        return out
    soft = f["ac_soft_bytes"]
    out += [
        Saved(f"{tag}/q", q_tokens * n_h * qk, A, "torch_autograd",
              "the score product keeps Q (after rotary positions)"),
    ]
    if model == "eager":
        kv_heads = n_kv + f["ac_kv_rep"] * (n_h - n_kv)
        out += [
            Saved(f"{tag}/k", kv_tokens * kv_heads * qk, A, "torch_autograd",
                  "the score product keeps K, repeated to n_h heads (repeat_kv)"),
            Saved(f"{tag}/softmax", heads, soft, "torch_autograd",
                  "softmax output (float32 where upcast)", core=True),
            Saved(f"{tag}/softmax_cast", f["ac_cast"] * heads, A,
                  "torch_autograd", "probabilities cast back for the V product", core=True),
            Saved(f"{tag}/dropout_mask", drop_a * heads, A, "torch_autograd",
                  "attention dropout mask (CPU: the input's dtype)", core=True),
            Saved(f"{tag}/dropout_out", drop_a * heads, A, "torch_autograd",
                  "dropped probabilities for the V product", core=True),
            Saved(f"{tag}/v", kv_tokens * kv_heads * vw, A, "torch_autograd",
                  "the V product keeps V, repeated to n_h heads"),
            Saved(f"{tag}/o_input", q_tokens * n_h * vw, A, "torch_autograd",
                  "output projection input"),
        ]
    else:  # sdpa: fused kernel
        out += [
            Saved(f"{tag}/k", kv_tokens * n_kv * qk, A, "dao2022", "K at n_kv heads (GQA in-kernel)"),
            Saved(f"{tag}/v", kv_tokens * n_kv * vw, A, "dao2022", "V at n_kv heads"),
            Saved(f"{tag}/logsumexp", n_h * q_tokens, 4, "dao2022",
                  "float32 log-sum-exp per query and head", core=True),
            Saved(f"{tag}/output", q_tokens * n_h * vw, A, "dao2022",
                  "kernel output, also the output projection's input"),
        ]
    out.append(Saved(f"{tag}/o_dropout_mask", drop_h * q_tokens * d, A, "torch_autograd",
                     "dropout mask after attention (CPU: activation dtype)", split=False))
    del mla
    return out


def _ffn_terms(model: str, f, A, tokens, width, tag: str, gated, drop_h, mask_bytes) -> list[Saved]:
    """A position-wise FFN of ``width`` over ``tokens`` rows (its input included)."""
    out = [Saved(f"{tag}/input", tokens * d, A, "korthikanti2022", "first matrix's input",
                 split=False)]
    rows = tokens * width
    if model == "paper":
        out += [
            Saved(f"{tag}/act_input", rows, A, "korthikanti2022", "activation input"),
            Saved(f"{tag}/gate_other", gated * 2 * rows, A, "shazeer2020",
                  "gated FFN: the other branch and the product"),
            Saved(f"{tag}/act_output", rows, A, "korthikanti2022", "second matrix's input"),
        ]
    else:
        tanh, drop_ffn = f["ac_act_tanh"], f["ac_drop_ffn"]
        # the activation output is kept by ReLU itself, by the gate product, or by the
        # second matrix when no dropout stands between them
        out += [
            Saved(f"{tag}/act_input", f["ac_act_in"] * rows, A, "torch_autograd",
                  "activation input (GeLU, SiLU)"),
            Saved(f"{tag}/act_tanh", tanh * 3 * rows, A, "torch_autograd",
                  "tanh GeLU written out: tanh(.), 0.5 x and 1 + tanh(.)"),
            Saved(f"{tag}/act_output", f["ac_act_kept"] * rows, A, "torch_autograd",
                  "activation output"),
            Saved(f"{tag}/up", gated * rows, A, "shazeer2020", "gated FFN: the up branch"),
            Saved(f"{tag}/product", f["ac_prod"] * rows, A, "shazeer2020",
                  "gated FFN: the product, second matrix's input"),
            Saved(f"{tag}/dropout_mask", drop_ffn * rows, A, "torch_autograd",
                  "dropout inside the FFN (T5)"),
            Saved(f"{tag}/dropout_out", drop_ffn * rows, A, "torch_autograd",
                  "dropped activations, second matrix's input"),
        ]
    out.append(Saved(f"{tag}/dropout_mask_out", drop_h * tokens * d, mask_bytes,
                     "korthikanti2022" if model == "paper" else "torch_autograd",
                     "dropout mask after the FFN", split=False))
    return out


def _moe_terms(model: str, f, A, tokens, tag: str) -> list[Saved]:
    """An MoE FFN: router, routed token copies (transformers' default grouped_mm experts) and
    shared experts. ``paper`` counts the top-k expert FFNs as dense FFNs on k b s rows."""
    gated = sw("gated")
    pairs = tokens * k
    if model == "paper":
        out = _ffn_terms(model, f, A, pairs, expert_width(), f"{tag}/experts", gated,
                         sympy.Integer(0), 1)
        out[0] = Saved(f"{tag}/input", tokens * d, A, "korthikanti2022", "router and experts' input",
                       split=False)
        out.append(Saved(f"{tag}/router_probs", tokens * E, A, "shazeer2017", "router softmax"))
    else:
        w = expert_width()
        out = [
            Saved(f"{tag}/input", tokens * d, A, "torch_autograd", "router input", split=False),
            Saved(f"{tag}/router_probs", tokens * E, 4, "torch_autograd", "router softmax, float32"),
            Saved(f"{tag}/topk_index", pairs, 8, "torch_autograd", "top-k indices (int64)"),
            Saved(f"{tag}/topk_values", pairs, 4, "torch_autograd", "top-k probabilities, float32"),
            Saved(f"{tag}/topk_sum", tokens, 4, "torch_autograd", "their sum (renormalised)"),
            Saved(f"{tag}/sort_perm", 2 * pairs, 8, "torch_autograd",
                  "sort permutation and its token index (int64)"),
            Saved(f"{tag}/offsets", E, 4, "torch_autograd", "tokens per expert (int32 offsets)"),
            Saved(f"{tag}/routed_input", pairs * d, A, "torch_autograd",
                  "token copies, one per (token, expert) pair"),
            Saved(f"{tag}/gate_up", pairs * (1 + gated) * w, A, "torch_autograd",
                  "up (and gate) projection output"),
            Saved(f"{tag}/act_output", pairs * w, A, "torch_autograd", "activation output"),
            Saved(f"{tag}/product", gated * pairs * w, A, "shazeer2020", "gate product"),
            Saved(f"{tag}/routing_weights", pairs, 4, "torch_autograd",
                  "routing weight per pair, float32"),
            Saved(f"{tag}/expert_output", pairs * d, A, "torch_autograd",
                  "expert outputs the routing weights multiply"),
            Saved(f"{tag}/scatter_index", pairs, 8, "torch_autograd",
                  "index of the scatter back to tokens (int64)"),
        ]
    shared = sw("shared") * E_s
    for t in _ffn_terms(model, f, A, tokens, shared_width(), f"{tag}/shared", gated,
                        sympy.Integer(0), 1)[1:]:
        out.append(Saved(t.name, shared * t.elements, t.bytes_per, "dai2024", t.choice, t.split))
    return out


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
        n_ffn = sw("norm_ffn_in") + sw("norm_ffn_out")
        for t in _norm_terms(f, A, tokens, "norm/attention"):
            norms.append(Saved(t.name, n_attn * attention * t.elements, t.bytes_per, t.source,
                               t.choice, t.split))
        for t in _norm_terms(f, A, tokens, "norm/ffn"):
            norms.append(Saved(t.name, n_ffn * (dense + moe) * t.elements, t.bytes_per,
                               t.source, t.choice, t.split))
        if cross:
            norms += _norm_terms(f, A, tokens, "norm/cross_attention")
    else:
        n = attention + dense + moe + (1 if cross else 0)
        norms.append(Saved("norm/input", n * tokens * d, A, "korthikanti2022",
                           "each LayerNorm keeps its input", split=False))
    out = list(norms)
    out += [Saved(t.name, attention * t.elements, t.bytes_per, t.source, t.choice, t.split, t.core)
            for t in _attention_terms(model, f, A, tokens, tokens, q_len, q_len, "attention")]
    if cross:
        out += _attention_terms(model, f, A, tokens, b * kv_len, q_len, kv_len,
                                "cross_attention", cross=True)
    gated = sw("gated")
    out += [Saved(t.name, dense * t.elements, t.bytes_per, t.source, t.choice, t.split)
            for t in _ffn_terms(model, f, A, tokens, d_ff, "ffn", gated, f["ac_drop_hidden"],
                                mask_bytes)]
    if moe != 0:
        out += [Saved(t.name, moe * t.elements, t.bytes_per, t.source, t.choice, t.split)
                for t in _moe_terms(model, f, A, tokens, "moe")]
        out.append(Saved("moe/dropout_mask_out", moe * f["ac_drop_hidden"] * tokens * d,
                         mask_bytes, "torch_autograd", "dropout mask after the FFN", split=False))
    return [t for t in out if t.elements != 0]


def facts_of(spec, dtype: str, batch: int = 2) -> dict:
    """The spec's implementation facts (:func:`activation_profiles.facts`) as sympy integers."""
    return {n: sympy.Integer(v) for n, v in profiles.facts(spec, dtype, batch).items()}


def stack_terms(model: str, facts: dict, shape: str) -> list[tuple[str, list[Saved]]]:
    """(stack, terms) with each term already multiplied by the layers that hold it: a single
    stack of L layers (attention in L_attn, FFN in L_ffn: dense or MoE), or T5's encoder (L
    layers over s tokens) and decoder (L_dec layers over s_dec tokens with cross-attention)."""
    from .accounting import dense_count, moe_count

    A = facts["ac_width"]
    if shape == "encoder-decoder":
        return [("encoder", layer_terms(model, facts, A, s, attention=L, dense=L)),
                ("decoder", [Saved(x.name, L_dec * x.elements, x.bytes_per, x.source, x.choice,
                                   x.split, x.core)
                             for x in layer_terms(model, facts, A, s_dec, s, cross=True)])]
    return [("layers", layer_terms(model, facts, A, s, attention=L_attn,
                                   dense=dense_count(L_ffn), moe=moe_count(L_ffn)))]


def choice_weights(model: str, recompute: str, tensor_parallel: bool,
                   sequence_parallel: bool) -> dict[str, int]:
    """One-hot weights of the choices (see :func:`weighted_bytes`), the names checked."""
    if model not in ACTIVATION_MODELS:
        raise SymcalcError("activations", f"must be one of {', '.join(ACTIVATION_MODELS)} (got {model!r})")
    if recompute not in RECOMPUTE:
        raise SymcalcError("recompute", f"must be one of {', '.join(RECOMPUTE)} (got {recompute!r})")
    return profiles.choice_weights(model, recompute, tensor_parallel, sequence_parallel)


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


def weighted_bytes(facts: dict, shape: str, w: dict) -> sympy.Expr:
    """Activation bytes of every layer with the choices as weights ``w``
    (:func:`choice_weights` values, or symbols): per model,
    keep x (split terms x div_t + replicated terms x div_r), the attention core only with
    keep_core; with full recomputation the layer inputs A s b d (x div_r). Tensor
    parallelism divides the terms inside its region by t (div_t = p0 + (ptp + psp)/t);
    sequence parallelism divides the rest too (div_r = p0 + ptp + psp/t)
    (Korthikanti et al. 2022, Sec. 4.2-5)."""
    A = facts["ac_width"]
    div_t = w["ac_p0"] + (w["ac_ptp"] + w["ac_psp"]) / t
    div_r = w["ac_p0"] + w["ac_ptp"] + w["ac_psp"] / t
    total = sympy.Integer(0)
    for model in ACTIVATION_MODELS:
        split = core = rep = sympy.Integer(0)
        for _, terms in stack_terms(model, facts, shape):
            for term in terms:
                if term.core:
                    core += term.bytes
                elif term.split:
                    split += term.bytes
                else:
                    rep += term.bytes
        total += w[f"ac_{model}"] * w["ac_keep"] * (
            (split + w["ac_keep_core"] * core) * div_t + rep * div_r)
    inputs = L * s + (L_dec * s_dec if shape == "encoder-decoder" else 0)
    return total + w["ac_full"] * A * b * d * inputs * div_r


def activations_bytes(model: str, facts: dict, shape: str, recompute: str = "none",
                      tensor_parallel: bool = False, sequence_parallel: bool = False) -> sympy.Expr:
    """Bytes every layer of the model keeps (no embeddings, head or loss) under the
    recomputation and parallelism choices."""
    w = {k: sympy.Integer(v) for k, v in
         choice_weights(model, recompute, tensor_parallel, sequence_parallel).items()}
    return weighted_bytes(facts, shape, w)

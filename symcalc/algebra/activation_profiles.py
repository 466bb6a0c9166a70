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
SOFTMAX_IN_MODEL_DTYPE = frozenset({"gpt2", "bert", "t5", "roberta", "distilbert", "mt5"})
# T5's LayerNorm multiplies the 16-bit input by the float32 reciprocal root, so it keeps the
# 16-bit input besides its float32 copy
T5_NORM = frozenset({"t5", "mt5"})
# T5 applies its dropout inside the FFN too, between the activation and the output matrix
DROPOUT_INSIDE_FFN = frozenset({"t5", "mt5"})

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
DROPOUT_DEFAULTS = {"gpt2": (0.1, 0.1), "bert": (0.1, 0.1), "t5": (0.1, 0.1), "mt5": (0.1, 0.1)}
ACT_DEFAULTS = {"gpt2": "gelu_new", "bert": "gelu", "t5": "relu", "mt5": "gelu_new"}


def _first(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if data.get(key) is not None:
            return data[key]
    return None


def config_fields(model_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """``impl``, ``act``, ``dropout_attn`` and ``dropout_hidden`` of a config.json (keys
    missing from it take the config class's defaults)."""
    act = _first(data, ACT_KEYS)
    if model_type in T5_NORM:  # feed_forward_proj: "relu", "gated-gelu" (gelu_new)
        proj = str(data.get("feed_forward_proj") or "relu")
        act = proj.split("-")[-1]
        act = "gelu_new" if act == "gelu" else act
    if not isinstance(act, str):
        act = ACT_DEFAULTS.get(model_type, "silu")
    attn_default, hidden_default = DROPOUT_DEFAULTS.get(model_type, (0.0, 0.0))
    p_attn = _first(data, ATTN_DROPOUT_KEYS)
    p_hidden = _first(data, HIDDEN_DROPOUT_KEYS)
    if model_type in T5_NORM or model_type == "bert":
        p_hidden = p_hidden if p_hidden is not None else hidden_default
    return {
        "impl": model_type,
        "act": act if act in ACTS else "",
        "dropout_attn": _positive(p_attn, attn_default),
        "dropout_hidden": _positive(p_hidden, hidden_default) if model_type in DROPOUT_DEFAULTS else False,
    }


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
    layernorm = spec.norm in ("layernorm", "layernorm_nobias") and not rms
    soft32 = impl not in SOFTMAX_IN_MODEL_DTYPE
    drop_attn, drop_hidden = bool(spec.dropout_attn), bool(spec.dropout_hidden)
    drop_ffn = drop_hidden and impl in DROPOUT_INSIDE_FFN
    act_out = act in ACT_SAVES_OUTPUT
    gated = spec.ffn == "gated"
    return {
        "ac_width": width,
        "ac_ln": int(layernorm),
        "ac_rms32": int(rms),
        "ac_t5_16": int(rms and impl in T5_NORM and not f32),
        "ac_soft_bytes": 4 if soft32 else width,
        "ac_cast": int(soft32 and not f32 and not drop_attn),
        "ac_drop_attn": int(drop_attn),
        "ac_drop_hidden": int(drop_hidden),
        "ac_drop_ffn": int(drop_ffn),
        "ac_act_in": int(not act_out),
        "ac_act_tanh": int(act in ACT_TANH_FORMULA),
        "ac_act_kept": int(act_out or gated or not drop_ffn),
        "ac_prod": int(gated and not drop_ffn),
        # repeat_kv of a single key/value head is a stride-0 view, and at batch 1 the score
        # and value products fold it without copying: K and V stay one head wide
        "ac_kv_rep": int(not (spec.n_kv == 1 and batch == 1)),
    }


FACT_MEANINGS = {
    "ac_width": "bytes of one activation element (4 for fp32, else 2)",
    "ac_ln": "norms are LayerNorms (input, mean and reciprocal std kept)",
    "ac_rms32": "RMSNorm computed in float32 (float32 input copy, reciprocal root, normalized)",
    "ac_t5_16": "T5's RMSNorm also keeps its 16-bit input (16-bit activations only)",
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

"""Saved tensors of self- and cross-attention under each activation model (paper, eager,
sdpa): Q, K, V, the score core, the output projection's input and the dropout after it."""
from __future__ import annotations

from .components import qk_width, value_width
from .saved import Saved
from .symbols import b, d, n_h, n_kv


def attention_terms(model: str, f, A, q_tokens, kv_tokens, q_len, kv_len, tag: str,
                     cross: bool = False) -> list[Saved]:
    """Self- (or cross-) attention: its input, Q, K, V, the score core, the output
    projection's input and the dropout mask after it. ``q_tokens``/``kv_tokens`` are b s."""
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
    return out

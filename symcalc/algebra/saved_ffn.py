"""Saved tensors of the position-wise FFN (plain or gated) and of the MoE FFN (router,
routed token copies, experts, shared experts) under each activation model."""
from __future__ import annotations

import sympy

from .components import expert_width, shared_width, sw
from .saved import Saved
from .symbols import E, E_s, d, k


def ffn_terms(model: str, f, A, tokens, width, tag: str, gated, drop_h, mask_bytes) -> list[Saved]:
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


def moe_terms(model: str, f, A, tokens, tag: str) -> list[Saved]:
    """An MoE FFN: router, routed token copies (transformers' default grouped_mm experts) and
    shared experts. ``paper`` counts the top-k expert FFNs as dense FFNs on k b s rows."""
    gated = sw("gated")
    pairs = tokens * k
    if model == "paper":
        out = ffn_terms(model, f, A, pairs, expert_width(), f"{tag}/experts", gated,
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
    for t in ffn_terms(model, f, A, tokens, shared_width(), f"{tag}/shared", gated,
                        sympy.Integer(0), 1)[1:]:
        out.append(Saved(t.name, shared * t.elements, t.bytes_per, "dai2024", t.choice, t.split))
    return out

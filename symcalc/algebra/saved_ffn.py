"""Saved tensors of the position-wise FFN (plain or gated) and of the MoE FFN (router,
routed token copies, experts, shared experts) under each activation model."""
from __future__ import annotations

import sympy

from .components import expert_width, shared_width, sw
from .saved import Saved, norm_terms
from .symbols import E, E_s, b, d, d_ad, k, n_ad


def ffn_terms(model: str, f, A, tokens, width, tag: str, gated, drop_h, mask_bytes) -> list[Saved]:
    """A position-wise FFN of ``width`` over ``tokens`` rows (its input included, unless a
    parallel block's one norm feeds attention the same tensor: ``ac_parallel_in``)."""
    shared_in = 0 if model == "paper" else f["ac_parallel_in"]
    out = [Saved(f"{tag}/input", (1 - shared_in) * tokens * d, A, "korthikanti2022",
                 "first matrix's input (attention's own in a parallel block)", split=False)]
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
        loop = f["ac_moe_loop"]
        # rows through the experts: the k b s routed pairs, or E b s where every expert runs
        every = f["ac_moe_all"]
        rows = (1 - every) * pairs + every * E * tokens
        out = [
            Saved(f"{tag}/input", f["ac_moe_in"] * tokens * d, A, "torch_autograd",
                  "router (or shared MLP) input", split=False),
            # a router in float32 (DeepSeek, GLM-4.5, dots1, ERNIE 4.5) keeps float32 copies
            # of its input and, in a 16-bit model, of its weight
            Saved(f"{tag}/router_input_fp32", f["ac_router32"] * (1 - f["ac_f32"]) * tokens * d, 4,
                  "torch_autograd", "float32 copy of the router input", split=False),
            Saved(f"{tag}/router_weight_fp32", f["ac_router32"] * (1 - f["ac_f32"]) * E * d, 4,
                  "torch_autograd", "float32 copy of the router weight", split=False),
            Saved(f"{tag}/jitter_noise", f["ac_jitter"] * tokens * d, A, "torch_autograd",
                  "uniform noise multiplying the block's input in training (Mixtral, PhiMoE)",
                  split=False),
            Saved(f"{tag}/router_probs", f["ac_router_probs"] * tokens * E, f["ac_router_bytes"],
                  "torch_autograd", "router scores (softmax or sigmoid), float32 (gpt-oss, "
                  "DBRX: the model's dtype)"),
            Saved(f"{tag}/group_index", f["ac_group_idx"] * tokens, 8, "deepseek2024",
                  "group-limited routing: group-scoring and chosen-group indices (int64)"),
            Saved(f"{tag}/group_mask", f["ac_group_mask"] * tokens * E, 1, "deepseek2024",
                  "group-limited routing: boolean mask of the experts in chosen groups"),
            Saved(f"{tag}/topk_index", (1 - f["ac_sparsemixer"]) * pairs, 8, "torch_autograd",
                  "top-k indices (int64)"),
            Saved(f"{tag}/topk_values", f["ac_topk_norm"] * pairs, f["ac_router_bytes"],
                  "torch_autograd",
                  "top-k probabilities, float32 (renormalised, or GraniteMoE's softmax over "
                  "the top k)"),
            # PhiMoE's sparsemixer, once per pick (two): the mask of experts too far below the
            # best, the masked softmax (model dtype), the sampled pick's argmax index, the
            # softmax's own argmax index and the pick's multiplier
            Saved(f"{tag}/sparsemixer_mask", f["ac_sparsemixer"] * 2 * tokens * E, 1,
                  "liu2024grin", "boolean masks of the masked softmax"),
            Saved(f"{tag}/sparsemixer_softmax", f["ac_sparsemixer"] * 2 * tokens * E, A,
                  "liu2024grin", "masked softmax over the experts, per pick"),
            Saved(f"{tag}/sparsemixer_index", f["ac_sparsemixer"] * 4 * tokens, 8,
                  "liu2024grin", "sampled pick and softmax argmax per pick (int64)"),
            Saved(f"{tag}/sparsemixer_multiplier", f["ac_sparsemixer"] * 2 * tokens, A,
                  "liu2024grin", "the pick's softmax value (its multiplier)"),
            Saved(f"{tag}/topk_sum", f["ac_topk_sums"] * tokens, f["ac_router_bytes"],
                  "torch_autograd",
                  "their sum (renormalised; ERNIE also keeps its clamp)"),
            Saved(f"{tag}/sort_perm", (1 - every) * 2 * pairs, 8, "torch_autograd",
                  "sort permutation and its token index (int64)"),
            Saved(f"{tag}/offsets", (1 - loop) * (1 - every) * E, 4, "torch_autograd",
                  "tokens per expert (int32 offsets)"),
            # grouped_mm gathers the experts' biases per row by the sorted expert ids (gpt-oss)
            Saved(f"{tag}/bias_index", (1 - loop) * (1 - every) * sw("expert_bias") * pairs, 8,
                  "torch_autograd", "sorted expert id per pair, the bias gather's index (int64)"),
            # Llama 4: the input repeated once per expert, kept by its product with the scores
            Saved(f"{tag}/repeated_input", every * E * tokens * d, A, "torch_autograd",
                  "the input repeated for every expert (all experts run)"),
            Saved(f"{tag}/routed_input", rows * d, A, "torch_autograd",
                  "token copies, one per (token, expert) pair (every expert's: scaled by its "
                  "score)"),
            Saved(f"{tag}/gate_up", rows * (1 + gated) * w, A, "torch_autograd",
                  "up (and gate) projection output"),
            Saved(f"{tag}/act_output", rows * w, A, "torch_autograd", "activation output"),
            Saved(f"{tag}/product", gated * rows * w, A, "shazeer2020", "gate product"),
            Saved(f"{tag}/glu_clamp", f["ac_glu_clamp"] * 3 * pairs * w, A, "torch_autograd",
                  "gpt-oss's clamped SwiGLU: sigmoid output, clamped gate and up + 1"),
            Saved(f"{tag}/routing_weights", rows - every * (1 - f["ac_score_col"]) * E * tokens,
                  f["ac_rw_bytes"], "torch_autograd",
                  "routing weight per pair (float32 unless cast to the model's dtype; every "
                  "expert's score column where all run)"),
            Saved(f"{tag}/expert_output", (1 - every) * pairs * d, A, "torch_autograd",
                  "expert outputs the routing weights multiply"),
            Saved(f"{tag}/scatter_index", (1 - loop) * (1 - every) * pairs, 8, "torch_autograd",
                  "index of the scatter back to tokens (int64)"),
            # DBRX's loop: index_add_ keeps the weighted outputs it adds (torch.where's (n, 2)
            # int64 indices per expert stand for the sort permutation and its token index)
            Saved(f"{tag}/weighted_output", loop * pairs * d, A, "torch_autograd",
                  "weighted expert outputs index_add_ keeps (experts in a loop)"),
        ]
    shared = sw("shared") * E_s
    for t in ffn_terms(model, f, A, tokens, shared_width(), f"{tag}/shared", gated,
                        sympy.Integer(0), 1)[1:]:
        out.append(Saved(t.name, shared * t.elements, t.bytes_per, "dai2024", t.choice, t.split))
    # Qwen2-MoE's sigmoid gate on the shared expert: the product keeps the sigmoid output and
    # the shared expert's output (every model: the gate's inputs)
    gate = sw("shared") * sw("shared_gate")
    out += [Saved(f"{tag}/shared_gate", gate * tokens, A, "qwen2024moe",
                  "sigmoid of the shared expert's gate", split=False),
            Saved(f"{tag}/shared_output", gate * tokens * d, A, "qwen2024moe",
                  "shared expert output the gate multiplies", split=False)]
    # A.X-K1's RMSNorm of the block's output (its input: the routed and shared outputs' sum;
    # spec.toml refuses moe_out_norm with another norm, so the RMSNorm's terms are all it keeps)
    if model != "paper":
        out += [x.times(sw("moe_norm")) for x in norm_terms(f, A, tokens, f"{tag}/out_norm")
                if x.name.rsplit("/", 1)[1] in ("input_fp32", "rsqrt", "weight_fp32", "normalized")]
    return out


def adapter_terms(model: str, f, A, tokens, mask_bytes) -> list[Saved]:
    """X-MOD's language adapters after one layer's FFN (``sw_adapter``), every token through
    one adapter (transformers modeling_xmod.py XmodOutput.lang_adapter): a LayerNorm call of
    their own (the output's reused, or adapter_layer_norm's: input and statistics), the
    gathered tokens (the first matrix's input), the activation's input and output (the second
    matrix's), the dropout after them; and each adapter's boolean mask of its language's
    sequences."""
    on = sw("adapter")
    if model == "paper":  # the inputs of the norm, both matrices and the activation
        return [Saved("adapter/inputs", on * tokens * (2 * d + 2 * d_ad), A, "pfeiffer2022xmod",
                      "language adapters", split=False)]
    kept = (f["ac_ln"] * (d + 2) + d + f["ac_drop_hidden"] * d + f["ac_act_in"] * d_ad + d_ad)
    return [Saved("adapter/tensors", on * tokens * kept, A, "pfeiffer2022xmod",
                  "language adapters", split=False),
            Saved("adapter/lang_masks", on * n_ad * b, 1, "torch_autograd", "language adapters",
                  split=False)]

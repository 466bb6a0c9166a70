"""Which symcalc component a parameter name belongs to, for the names transformers uses.

A name is first normalised: every index (``layers.3.``, ``experts.7.``) becomes ``*``. A
parameter inside a layer (its name has an index) maps to a ``layer/...`` path, any other to a
top-level path. The first rule whose pattern matches wins; a rule may name several paths (a
fused ``c_attn`` is the query, key and value at once) or a parent (``layer/norm`` covers
every norm of a layer). In an encoder-decoder model (T5) a name under ``encoder.`` or
``decoder.`` maps under ``encoder/`` or ``decoder/``; a target starting with ``^`` belongs to
the stack, not its layers (T5's relative-attention bias sits in its first block).
"""
from __future__ import annotations

import fnmatch
import re
from typing import Optional

QKV = ("attention/q", "attention/k", "attention/v")

LAYER_RULES: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (pattern, targets if isinstance(targets, tuple) else (targets,)) for pattern, targets in (
        (r"\bpos_key_proj\.", "attention/pos_k"),  # DeBERTa-v2
        (r"\b(w2e|e2w|e2e)_query\.", "attention/entity_q"),  # LUKE
        (r"\battention\.self\.conv\.", "attention/value_conv"),  # Nystromformer
        (r"\bpos_query_proj\.", "attention/pos_q"),
        (r"\bSelfAttention\.(q)\.", "attention/q"),
        (r"\bSelfAttention\.(k)\.", "attention/k"),
        (r"\bSelfAttention\.(v)\.", "attention/v"),
        (r"\bSelfAttention\.(o)\.", "attention/o"),
        (r"\bEncDecAttention\.(q)\.", "cross_attention/q"),
        (r"\bEncDecAttention\.(k)\.", "cross_attention/k"),
        (r"\bEncDecAttention\.(v)\.", "cross_attention/v"),
        (r"\bEncDecAttention\.(o)\.", "cross_attention/o"),
        (r"\brelative_attention_bias\.", "^relative_bias"),
        (r"\bDenseReluDense\.wi_0\.", "ffn/gate"),
        (r"\bDenseReluDense\.wi(_1)?\.", "ffn/up"),
        (r"\bDenseReluDense\.wo\.", "ffn/down"),
        (r"\bshared_expert_gate\.", "moe/shared_gate"),
        (r"\b(shared_experts?|shared_mlp)\.", "moe/shared"),
        (r"\bexperts\b", "moe/experts"),
        (r"\b(block_sparse_moe|mlp|moe|feed_forward)\.(gate|router)\.weight$", "moe/router"),
        (r"\b(block_sparse_moe|mlp|moe|feed_forward)\.(gate|router)\.bias$", "moe/router_bias"),
        (r"\bq_a_proj\.", "attention/q_a"),
        (r"\bq_a_layernorm\.", "attention/q_norm"),
        (r"\bq_b_proj\.", "attention/q_b"),
        (r"\bkv_a_proj_with_mqa\.", "attention/kv_a"),
        (r"\bkv_a_layernorm\.", "attention/kv_norm"),
        (r"\bkv_b_proj\.", "attention/kv_b"),
        (r"\b(qkv_proj|c_attn|query_key_value|Wqkv|wqkv)\.(weight|bias)$", QKV),
        (r"\b(q_proj|query|wq|q_lin)\.(weight|bias)$", "attention/q"),
        (r"\b(k_proj|key|wk|k_lin)\.(weight|bias)$", "attention/k"),
        (r"\b(v_proj|value|wv|v_lin)\.(weight|bias)$", "attention/v"),
        (r"\b(q_norm|query_layernorm)\.", "attention/q_head_norm"),
        (r"\b(k_norm|key_layernorm)\.", "attention/k_head_norm"),
        (r"\bsinks$", "attention/sinks"),
        (r"(attn|attention)[^.]*\.(output\.)?(o_proj|out_proj|c_proj|dense|wo|out_lin)\.(weight|bias)$",
         "attention/o"),
        (r"(norm|ln_[0-9a-z]+|LayerNorm|layernorm)[^.]*\.(weight|bias)$", "norm"),
        (r"\bgate_up_proj\.", ("ffn/gate", "ffn/up")),
        (r"\b(gate_proj|wi_0|w1)\.", "ffn/gate"),
        (r"\b(up_proj|c_fc|fc1|fc_in|wi|wi_1|w3|dense_h_to_4h|intermediate\.dense)\.", "ffn/up"),
        (r"\b(down_proj|c_proj|fc2|fc_out|wo|w2|dense_4h_to_h|output\.dense)\.", "ffn/down"),
    ))

TOP_RULES: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (pattern, (target,)) for pattern, target in (
        (r"^shared\.weight$", "embedding/token"),
        (r"\b(embed_tokens|wte|word_embeddings|tok_embeddings|embed_in|tok_emb)\.weight$",
         "embedding/token"),
        (r"\b(wpe|position_embeddings|embed_positions|pos_emb)\.weight$", "embedding/position"),
        (r"\btoken_type_embeddings\.weight$", "embedding/token_type"),
        (r"\b[xyhw]_position_embeddings\.weight$", "embedding/box"),  # LayoutLM
        (r"\bproject_in\.", "embedding/project_in"),
        (r"\bproject_out\.", "embedding/project_out"),
        (r"\bembeddings\.(LayerNorm|norm)\.|\bemb(edding)?_(ln|norm)\.|\bword_embeddings_layernorm\.",
         "embedding_norm"),
        (r"\bpooler\.", "pooler"),
        (r"\bcontact_head\.", "contact_head"),
        (r"\bentity_embeddings\.", "embedding/entity"),  # LUKE
        (r"\bentity_predictions\.", "entity_head"),
        (r"\bencoder\.rel_embeddings\.", "relative_embeddings"),
        (r"\bcls\.predictions\.transform\.", "mlm_head"),
        (r"\bcls\.predictions\.bias$|\b(lm_head|embed_out)\.bias$", "head/bias"),
        (r"\b(lm_head|embed_out|output|head)\.weight$|cls\.predictions\.decoder\.weight$",
         "head/weight"),
        (r"(norm|ln_f|final_layer_norm|final_layernorm|norm_f)\.(weight|bias)$", "final_norm"),
    ))

_INDEX = re.compile(r"(?<=\.)[0-9]+(?=\.)|^[0-9]+(?=\.)")


def normalised(name: str) -> str:
    """``model.layers.3.mlp.experts.7.w1.weight`` -> ``model.layers.*.mlp.experts.*.w1.weight``."""
    return _INDEX.sub("*", name)


def layer_of(name: str) -> Optional[int]:
    """The first index in the name (the layer), or None outside the layers."""
    m = _INDEX.search(name)
    return int(m[0]) if m else None


def targets(name: str, name_map: dict | None = None, stacked: bool = False) -> Optional[tuple[str, ...]]:
    """The symcalc paths the parameter ``name`` counts toward, or None when no rule knows it.
    ``name_map``: glob pattern (``fnmatch``, matched against the full name) -> a path or a
    list of paths; tried before the built-in rules. ``stacked``: the model is an
    encoder-decoder (paths under ``encoder/`` and ``decoder/``)."""
    for pattern, paths in (name_map or {}).items():
        if fnmatch.fnmatchcase(name, pattern):
            return (paths,) if isinstance(paths, str) else tuple(paths)
    norm = normalised(name)
    stack = ""
    if stacked and norm.split(".")[0] in ("encoder", "decoder"):
        stack = norm.split(".")[0] + "/"
    if layer_of(name) is not None:
        for pattern, paths in LAYER_RULES:
            if re.search(pattern, norm):
                return tuple(stack + (p[1:] if p.startswith("^") else f"layer/{p}") for p in paths)
        return None
    for pattern, paths in TOP_RULES:
        if re.search(pattern, norm):
            return tuple(stack + p if p != "embedding/token" else p for p in paths)
    return None

"""Tiny family configs redrawn with new sizes and switches (hypothesis), for the tests that
compare symcalc with transformers family by family (test_family_reference.py: parameters and
FLOPs; test_activations_families.py: saved activations). Plain helper module, no tests."""
from __future__ import annotations

import ast
import copy
import functools
from pathlib import Path

from hypothesis import strategies as st

import hf_reference as H

FAMILY_FILES = H.family_files()
TINY = [(cid, cfg) for cid, cfg in H.family_configs() if not Path(cid).name.startswith("hub-")]

_LAYERS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")
_HEADS = ("num_attention_heads", "n_head", "n_heads", "num_heads")
_KV_HEADS = ("num_key_value_heads", "num_kv_heads")
_HIDDEN = ("hidden_size", "n_embd", "n_embed", "d_model")
_WIDTHS = ("intermediate_size", "ffn_dim", "n_inner", "d_ff", "moe_intermediate_size",
           "shared_expert_intermediate_size", "ffn_hidden_size")
_EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts")
_NAMES_NOT_KEYS = {"null", "true", "false", "None", "True", "False"}


def _expression_names(text) -> set[str]:
    if not isinstance(text, str):
        return set()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return set()
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - calls - _NAMES_NOT_KEYS


def keys_read(model_type: str) -> set[str]:
    """Config keys the family file's expressions read ([spec], [roles.*.spec], [checks])."""
    family = FAMILY_FILES[model_type]
    texts = list(family.get("spec", {}).values())
    for role in family.get("roles", {}).values():
        texts += list(role.get("spec", {}).values())
    checks = family.get("checks", [])
    for check in checks if isinstance(checks, list) else checks.values():
        if isinstance(check, dict):
            texts += list(check.values())
        else:
            texts.append(check)
    return set().union(*(_expression_names(t) for t in texts)) if texts else set()


def _first(cfg: dict, keys: tuple[str, ...], read: set[str] = frozenset()) -> str | None:
    """The first of ``keys`` the config sets to an integer, else the first the family reads."""
    present = next((k for k in keys if isinstance(cfg.get(k), int) and not isinstance(cfg.get(k), bool)), None)
    return present or next((k for k in keys if k in read), None)


@functools.lru_cache(maxsize=None)
def small_templates(model_type: str) -> tuple[dict, ...]:
    """Tiny configs of the family small enough to redraw (class-default configs are huge).
    The recorded parameter count decides where there is one: building a class-defaults model
    (billions of parameters, even on the meta device) only to learn that it is too big cost
    seconds. Shared: do not modify them."""
    recorded = {r["config"]: r["params"] for r in H.recorded_rows(model_type)
                if "params" in r and "config_json" not in r}
    out = []
    for cid, cfg in TINY:
        if cfg["model_type"] != model_type:
            continue
        params = recorded.get(Path(cid).name + ".json")
        if (params if params is not None else H.reference_params(cfg)) <= 2_000_000:
            out.append(cfg)
    return tuple(out)


@st.composite
def drawn_config(draw, model_type: str) -> dict:
    """One of the family's tiny configs with redrawn sizes and switches."""
    cfg = copy.deepcopy(draw(st.sampled_from(small_templates(model_type))))
    family = FAMILY_FILES[model_type]
    read = keys_read(model_type)
    defaults = family.get("defaults", {})

    # layers and what depends on their number
    L = draw(st.integers(1, 3))
    if (key := _first(cfg, _LAYERS, read)) is not None:
        cfg[key] = L
    for key in ("layer_types", "layers_block_type"):  # (Zamba2 validates the field's length)
        if isinstance(cfg.get(key), list) and cfg[key]:
            kinds = sorted(set(cfg[key]))
            cfg[key] = draw(st.lists(st.sampled_from(kinds), min_size=L, max_size=L))
    if isinstance(cfg.get("attention_types"), list):  # GPT-Neo: [[kinds, count], ...] expands to L
        cfg["attention_types"] = [[draw(st.lists(st.sampled_from(["global", "local"]), min_size=L,
                                                 max_size=L)), 1]]
    if isinstance(cfg.get("no_rope_layers"), list):  # SmolLM3: one 0/1 flag per layer
        cfg["no_rope_layers"] = draw(st.lists(st.sampled_from([0, 1]), min_size=L, max_size=L))
    if isinstance(cfg.get("num_blocks"), int):  # xLSTM: the blocks built, as many as the layers
        cfg["num_blocks"] = L
    if isinstance(cfg.get("mlp_layer_types"), list) and cfg["mlp_layer_types"]:  # one per layer
        kinds = sorted(set(cfg["mlp_layer_types"]))
        cfg["mlp_layer_types"] = draw(st.lists(st.sampled_from(kinds), min_size=L, max_size=L))
    if isinstance(cfg.get("local_layer_ids"), list):  # Inkling: the sliding layers' indices
        cfg["local_layer_ids"] = sorted(draw(st.sets(st.integers(0, L - 1), max_size=L)))
    if isinstance(cfg.get("dense_mlp_idx"), int):  # Inkling: the first layers dense
        cfg["dense_mlp_idx"] = draw(st.integers(0, L))
    if isinstance(cfg.get("mlp_only_layers"), list):
        cfg["mlp_only_layers"] = sorted(draw(st.sets(st.integers(0, L - 1), max_size=L)))
    if isinstance(cfg.get("first_k_dense_replace"), int):
        cfg["first_k_dense_replace"] = draw(st.integers(0, L - 1))
    if isinstance(cfg.get("max_window_layers"), int):
        cfg["max_window_layers"] = draw(st.integers(0, L))

    # heads: keep the template's kind (MHA, MQA or GQA)
    h_key, kv_key = _first(cfg, _HEADS, read), _first(cfg, _KV_HEADS, read)
    n_h0 = cfg.get(h_key, defaults.get(h_key)) if h_key else None
    n_kv0 = cfg.get(kv_key, defaults.get(kv_key)) if kv_key else None
    if n_kv0 == 1:
        n_kv, n_h = 1, draw(st.integers(1, 4))
    elif n_kv0 is not None and n_kv0 == n_h0:
        n_kv = n_h = draw(st.integers(1, 4))
    else:
        n_kv = draw(st.integers(1, 3))
        n_h = n_kv * draw(st.integers(1, 3))
    if h_key:
        cfg[h_key] = n_h
    if kv_key:
        cfg[kv_key] = n_kv
    same_width = cfg.get("swa_head_dim") == cfg.get("head_dim")  # (Inkling 2 needs them equal)
    if isinstance(cfg.get("swa_num_attention_heads"), int):  # Inkling: the sliding layers'
        cfg["swa_num_attention_heads"] = n_h  # heads (a count of their own is refused), their
        cfg["swa_num_key_value_heads"] = draw(st.sampled_from(  # key/value heads and width
            [x for x in range(1, n_h + 1) if n_h % x == 0]))
        cfg["swa_head_dim"] = draw(st.sampled_from([6, 8, 16]))
    # even head dims that stay even under partial rotary factors of 1/2 and 1/4
    d_h = draw(st.sampled_from([8, 16]))
    if (key := _first(cfg, _HIDDEN, read)) is not None and n_h0:
        cfg[key] = n_h * d_h
        if isinstance(cfg.get("word_embed_proj_dim"), int):  # OPT
            cfg["word_embed_proj_dim"] = cfg[key] if cfg["word_embed_proj_dim"] == cfg.get(key) \
                else draw(st.integers(4, 40))
    if isinstance(cfg.get("head_dim"), int):
        cfg["head_dim"] = draw(st.sampled_from([8, 16, 24]))
        if same_width and isinstance(cfg.get("swa_head_dim"), int):
            cfg["swa_head_dim"] = cfg["head_dim"]
    if isinstance(cfg.get("rotary_dim"), int):  # GPT-J
        cfg["rotary_dim"] = draw(st.sampled_from([2, 4, d_h]))
    if isinstance(cfg.get("kv_lora_rank"), int):  # MLA
        # even sizes: DeepSeek-V2's complex rotary needs the rope slices at even strides
        even = st.integers(1, 6).map(lambda n: 2 * n)
        cfg["kv_lora_rank"] = draw(even)
        cfg["qk_nope_head_dim"] = draw(even)
        cfg["qk_rope_head_dim"] = draw(st.sampled_from([2, 4, 8]))
        cfg["v_head_dim"] = draw(even)
        if isinstance(cfg.get("q_lora_rank"), int):
            cfg["q_lora_rank"] = draw(even)
        if isinstance(cfg.get("head_dim"), int):
            cfg["head_dim"] = cfg["qk_rope_head_dim"]

    # widths and vocabulary
    for key in _WIDTHS:
        if isinstance(cfg.get(key), int) and not isinstance(cfg.get(key), bool):
            cfg[key] = draw(st.integers(2, 48))
    if isinstance(cfg.get("expansion_ratio"), int):  # MPT
        cfg["expansion_ratio"] = draw(st.integers(1, 4))
    V = draw(st.integers(16, 128))
    cfg["vocab_size"] = V
    if isinstance(cfg.get("src_vocab_size"), int):  # FSMT: the encoder's, which symcalc reads as V
        cfg["src_vocab_size"] = V
    if isinstance(cfg.get("unpadded_vocab_size"), int):  # Inkling 2: the head's rows, at most V
        cfg["unpadded_vocab_size"] = draw(st.integers(max(2, V - 8), V))
    for key, value in list(cfg.items()):
        if key.endswith("_token_id") and isinstance(value, int):
            cfg[key] = min(value, V - 1)
        elif key.endswith("_token_id") and isinstance(value, list):
            cfg[key] = [min(v, V - 1) for v in value]

    # experts (DeepSeek: groups divide the experts, top-k within the chosen groups)
    if (key := _first(cfg, _EXPERTS, read)) is not None:
        groups = cfg.get("n_group") if isinstance(cfg.get("n_group"), int) else 1
        # DeepSeek-V3 scores a group by its top-2 experts: at least 2 experts per group
        per_group = draw(st.integers(2 if "n_group" in cfg else 1, max(2, 6 // groups)))
        E = groups * per_group
        cfg[key] = E
        if isinstance(cfg.get("topk_group"), int):
            cfg["topk_group"] = draw(st.integers(1, groups))
            reachable = cfg["topk_group"] * (E // groups)
        else:
            reachable = E
        if isinstance(cfg.get("num_experts_per_tok"), int) or "num_experts_per_tok" in read:
            cfg["num_experts_per_tok"] = draw(st.integers(1, reachable))
        if isinstance(cfg.get("n_shared_experts"), int) and cfg["n_shared_experts"] > 0:
            cfg["n_shared_experts"] = draw(st.integers(1, 2))

    # the true/false keys the family file reads
    for key in sorted(read):
        value = cfg.get(key, defaults.get(key))
        if isinstance(value, bool):
            cfg[key] = draw(st.booleans())
    cfg["tie_word_embeddings"] = draw(st.booleans())
    if "sliding_window" in cfg and isinstance(cfg["sliding_window"], int):
        cfg["sliding_window"] = draw(st.integers(2, 9))
    return cfg

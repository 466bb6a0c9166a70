"""Test data that needs no torch: the family files and test configs on disk, the hub
configs of the presets (PRESET_CONFIGS) and the tiny generated configs of the first seven
families. tests/hf_reference.py (the transformers side) re-exports them."""
from __future__ import annotations

import copy
import functools
import json
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FAMILY_CONFIG_DIR = REPO / "tests" / "families"
FAMILY_FILE_DIR = REPO / "symcalc" / "inputs" / "families"

# The first seven families (the hand-written generated configs below cover exactly these classes).
SUPPORTED_CLASSES: dict[str, tuple[str, ...]] = {
    "bert": ("BertModel", "BertForMaskedLM"),
    "gpt2": ("GPT2Model", "GPT2LMHeadModel"),
    "llama": ("LlamaModel", "LlamaForCausalLM"),
    "mistral": ("MistralModel", "MistralForCausalLM"),
    "qwen2": ("Qwen2Model", "Qwen2ForCausalLM"),
    "mixtral": ("MixtralModel", "MixtralForCausalLM"),
    "t5": ("T5Model", "T5ForConditionalGeneration", "T5EncoderModel"),
}
BARE_MODEL_CLASS = {mt: classes[0] for mt, classes in SUPPORTED_CLASSES.items()}


@functools.lru_cache(maxsize=1)
def family_files() -> dict[str, dict]:
    """``symcalc/inputs/families/<model_type>.toml`` read as TOML, by model_type (empty if none
    yet). Read once per process (collection asks for it hundreds of times); do not modify it."""
    out = {}
    for path in sorted(FAMILY_FILE_DIR.glob("*.toml")):
        with path.open("rb") as f:
            data = tomllib.load(f)
        out[data.get("model_type", path.stem)] = data
    return out


RECORDED_DIR = REPO / "tests" / "data" / "reference"


@functools.lru_cache(maxsize=None)
def recorded_rows(model_type: str) -> tuple[dict, ...]:
    """The rows tests/record_reference.py recorded for a model type
    (``tests/data/reference/<model_type>.jsonl``; empty if none). Do not modify them."""
    path = RECORDED_DIR / f"{model_type}.jsonl"
    if not path.exists():
        return ()
    return tuple(json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip())


def family_configs() -> list[tuple[str, dict]]:
    """Every ``tests/families/<model_type>/*.json`` as (``<model_type>/<file stem>``, dict)."""
    out = []
    for path in sorted(FAMILY_CONFIG_DIR.glob("*/*.json")):
        out.append((f"{path.parent.name}/{path.stem}", json.loads(path.read_text(encoding="utf-8"))))
    return out


# --------------------------------------------------------------------------------------------
# Real hub configs (the fields that matter; values as in the published config.json files).
# --------------------------------------------------------------------------------------------

PRESET_CONFIGS: dict[str, dict] = {
    "bert-base-uncased": {
        "model_type": "bert", "architectures": ["BertForMaskedLM"],
        "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
        "intermediate_size": 3072, "hidden_act": "gelu", "max_position_embeddings": 512,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0,
    },
    "bert-large-uncased": {
        "model_type": "bert", "architectures": ["BertForMaskedLM"],
        "vocab_size": 30522, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
        "intermediate_size": 4096, "hidden_act": "gelu", "max_position_embeddings": 512,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0,
    },
    "gpt2": {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
        "vocab_size": 50257, "n_positions": 1024, "n_ctx": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12,
        "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
        "bos_token_id": 50256, "eos_token_id": 50256,
    },
    "gpt2-medium": {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
        "vocab_size": 50257, "n_positions": 1024, "n_ctx": 1024, "n_embd": 1024, "n_layer": 24, "n_head": 16,
        "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
        "bos_token_id": 50256, "eos_token_id": 50256,
    },
    "gpt2-large": {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
        "vocab_size": 50257, "n_positions": 1024, "n_ctx": 1024, "n_embd": 1280, "n_layer": 36, "n_head": 20,
        "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
        "bos_token_id": 50256, "eos_token_id": 50256,
    },
    "gpt2-xl": {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
        "vocab_size": 50257, "n_positions": 1024, "n_ctx": 1024, "n_embd": 1600, "n_layer": 48, "n_head": 25,
        "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
        "bos_token_id": 50256, "eos_token_id": 50256,
    },
    "t5-small": {
        "model_type": "t5", "architectures": ["T5ForConditionalGeneration"],
        "vocab_size": 32128, "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6,
        "num_decoder_layers": 6, "num_heads": 8, "relative_attention_num_buckets": 32,
        "feed_forward_proj": "relu", "layer_norm_epsilon": 1e-6, "dropout_rate": 0.1,
        "is_encoder_decoder": True, "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
    },
    "t5-base": {
        "model_type": "t5", "architectures": ["T5ForConditionalGeneration"],
        "vocab_size": 32128, "d_model": 768, "d_kv": 64, "d_ff": 3072, "num_layers": 12,
        "num_decoder_layers": 12, "num_heads": 12, "relative_attention_num_buckets": 32,
        "feed_forward_proj": "relu", "layer_norm_epsilon": 1e-6, "dropout_rate": 0.1,
        "is_encoder_decoder": True, "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
    },
    "Llama-2-7b": {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"],
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "hidden_act": "silu",
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
        "attention_bias": False, "bos_token_id": 1, "eos_token_id": 2,
    },
    "Llama-2-13b": {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"],
        "vocab_size": 32000, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40,
        "num_attention_heads": 40, "num_key_value_heads": 40, "hidden_act": "silu",
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
        "attention_bias": False, "bos_token_id": 1, "eos_token_id": 2,
    },
    "Meta-Llama-3-8B": {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"],
        "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu",
        "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
        "tie_word_embeddings": False, "attention_bias": False,
        "bos_token_id": 128000, "eos_token_id": 128001,
    },
    "Mistral-7B-v0.1": {
        "model_type": "mistral", "architectures": ["MistralForCausalLM"],
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu",
        "max_position_embeddings": 32768, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "sliding_window": 4096, "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
    },
    "Mixtral-8x7B-v0.1": {
        "model_type": "mixtral", "architectures": ["MixtralForCausalLM"],
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu",
        "max_position_embeddings": 32768, "rms_norm_eps": 1e-5, "rope_theta": 1000000.0,
        "sliding_window": None, "num_local_experts": 8, "num_experts_per_tok": 2,
        "router_aux_loss_coef": 0.02, "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
    },
    "Qwen2-0.5B": {
        "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"],
        "vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
        "num_attention_heads": 14, "num_key_value_heads": 2, "hidden_act": "silu",
        "max_position_embeddings": 131072, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
        "use_sliding_window": False, "sliding_window": 131072, "max_window_layers": 24,
        "tie_word_embeddings": True, "bos_token_id": 151643, "eos_token_id": 151643,
    },
}


# --------------------------------------------------------------------------------------------
# Tiny generated configs
# --------------------------------------------------------------------------------------------

# Smallest position table among generated configs is 40 (BERT/GPT-2); use seq_len <= 40.
GENERATED_MAX_SEQ_LEN = 40


def _bert(i, cls, d, L, h, ff, V, P, tv, tie=True):
    return f"bert-{i:02d}-{cls}", {
        "model_type": "bert", "architectures": [cls], "vocab_size": V, "hidden_size": d,
        "num_hidden_layers": L, "num_attention_heads": h, "intermediate_size": ff,
        "max_position_embeddings": P, "type_vocab_size": tv, "tie_word_embeddings": tie,
        "hidden_act": "gelu", "pad_token_id": 0,
    }


def _gpt2(i, cls, d, L, h, V, P, n_inner=None, tie=True):
    return f"gpt2-{i:02d}-{cls}", {
        "model_type": "gpt2", "architectures": [cls], "vocab_size": V, "n_embd": d, "n_layer": L,
        "n_head": h, "n_positions": P, "n_inner": n_inner, "tie_word_embeddings": tie,
        "activation_function": "gelu_new", "bos_token_id": V - 1, "eos_token_id": V - 1,
    }


def _decoder(mt, i, cls, d, L, h, kv, ff, V, tie, head_dim=None, **extra):
    cfg = {
        "model_type": mt, "architectures": [cls], "vocab_size": V, "hidden_size": d,
        "num_hidden_layers": L, "num_attention_heads": h, "num_key_value_heads": kv,
        "intermediate_size": ff, "max_position_embeddings": 64, "tie_word_embeddings": tie,
        "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2,
    }
    if head_dim is not None:
        cfg["head_dim"] = head_dim
    cfg.update(extra)
    return f"{mt}-{i:02d}-{cls}", cfg


def _t5(i, cls, d, kv, h, ff, L, Ld, V, ffp="relu", buckets=32, tie=True, max_dist=128):
    return f"t5-{i:02d}-{cls}", {
        "model_type": "t5", "architectures": [cls], "vocab_size": V, "d_model": d, "d_kv": kv,
        "num_heads": h, "d_ff": ff, "num_layers": L, "num_decoder_layers": Ld,
        "feed_forward_proj": ffp, "relative_attention_num_buckets": buckets,
        "relative_attention_max_distance": max_dist, "tie_word_embeddings": tie,
        "is_encoder_decoder": True, "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
    }


def generated_configs() -> list[tuple[str, dict]]:
    """Deterministic tiny configs (id, config.json-style dict); fresh copies on every call."""
    B, BM = "BertModel", "BertForMaskedLM"
    G, GL = "GPT2Model", "GPT2LMHeadModel"
    out = [
        # ---- BERT: classes, type_vocab_size, max_position_embeddings, intermediate_size, tie
        _bert(0, B, 32, 1, 4, 48, 101, 40, 2),
        _bert(1, BM, 32, 1, 4, 48, 101, 40, 2),
        _bert(2, BM, 32, 1, 4, 48, 101, 40, 2, tie=False),
        _bert(3, B, 48, 2, 3, 80, 211, 64, 1),
        _bert(4, BM, 48, 2, 3, 80, 211, 64, 1),
        _bert(5, B, 64, 3, 8, 100, 307, 100, 5),
        _bert(6, BM, 64, 3, 8, 100, 307, 100, 5, tie=False),
        _bert(7, B, 24, 2, 2, 36, 77, 48, 3),
        _bert(8, BM, 80, 1, 5, 120, 499, 128, 4),
        _bert(9, B, 96, 2, 6, 200, 150, 72, 2, tie=False),
        _bert(10, BM, 40, 3, 4, 64, 333, 56, 7),
        # ---- GPT-2: n_inner None vs explicit, tie False on the LM head
        _gpt2(0, G, 32, 1, 4, 101, 40),
        _gpt2(1, GL, 32, 1, 4, 101, 40),
        _gpt2(2, GL, 32, 1, 4, 101, 40, tie=False),
        _gpt2(3, G, 48, 2, 3, 211, 64, n_inner=72),
        _gpt2(4, GL, 48, 2, 3, 211, 64, n_inner=72),
        _gpt2(5, GL, 64, 3, 8, 307, 96, n_inner=100, tie=False),
        _gpt2(6, G, 24, 2, 2, 77, 48),
        _gpt2(7, GL, 96, 1, 6, 450, 128),
        _gpt2(8, GL, 40, 3, 5, 150, 50, n_inner=24),
        _gpt2(9, G, 80, 2, 4, 499, 80, n_inner=56),
    ]
    LM, LC = "LlamaModel", "LlamaForCausalLM"
    out += [
        # ---- Llama: attention_bias, mlp_bias, MHA/GQA/MQA, explicit head_dim, tie
        _decoder("llama", 0, LM, 32, 1, 4, 4, 48, 101, False),
        _decoder("llama", 1, LC, 32, 1, 4, 4, 48, 101, False),
        _decoder("llama", 2, LC, 32, 1, 4, 4, 48, 101, True),
        _decoder("llama", 3, LC, 48, 2, 6, 2, 80, 211, False, attention_bias=True),
        _decoder("llama", 4, LC, 48, 2, 6, 2, 80, 211, False, mlp_bias=True),
        _decoder("llama", 5, LC, 48, 2, 6, 2, 80, 211, False, attention_bias=True, mlp_bias=True),
        _decoder("llama", 6, LM, 64, 2, 8, 1, 112, 307, False),  # MQA
        _decoder("llama", 7, LC, 64, 2, 8, 1, 112, 307, True),  # MQA, tied
        _decoder("llama", 8, LC, 32, 2, 4, 2, 56, 150, False, head_dim=12),  # 4*12 != 32
        _decoder("llama", 9, LM, 40, 3, 4, 4, 72, 77, False, head_dim=6, attention_bias=True),
        _decoder("llama", 10, LC, 96, 1, 12, 4, 160, 499, True, mlp_bias=True),
        _decoder("llama", 11, LC, 80, 3, 10, 5, 144, 250, False, head_dim=16, attention_bias=True),
        _decoder("llama", 12, LC, 24, 2, 2, 1, 40, 60, False, head_dim=20, mlp_bias=True),
        _decoder("llama", 13, LM, 56, 1, 7, 7, 90, 333, True),
    ]
    MM, MC = "MistralModel", "MistralForCausalLM"
    out += [
        # ---- Mistral: head_dim, GQA, sliding_window (3 < seq_len, 4096, None)
        _decoder("mistral", 0, MM, 32, 1, 4, 2, 48, 101, False, sliding_window=4096),
        _decoder("mistral", 1, MC, 32, 1, 4, 2, 48, 101, False, sliding_window=4096),
        _decoder("mistral", 2, MC, 48, 2, 6, 3, 72, 211, False, sliding_window=3),
        _decoder("mistral", 3, MC, 48, 2, 6, 6, 72, 211, True, sliding_window=None),
        _decoder("mistral", 4, MC, 64, 2, 8, 2, 96, 307, False, head_dim=12, sliding_window=5),
        _decoder("mistral", 5, MM, 40, 3, 4, 1, 88, 150, False, head_dim=14, sliding_window=None),
        _decoder("mistral", 6, MC, 96, 1, 8, 4, 136, 450, False, sliding_window=2),
        _decoder("mistral", 7, MC, 24, 3, 3, 1, 44, 77, True, head_dim=10, sliding_window=4096),
    ]
    QM, QC = "Qwen2Model", "Qwen2ForCausalLM"
    out += [
        # ---- Qwen2: tie on/off, GQA, head_dim
        _decoder("qwen2", 0, QM, 32, 1, 4, 2, 48, 101, True),
        _decoder("qwen2", 1, QC, 32, 1, 4, 2, 48, 101, True),
        _decoder("qwen2", 2, QC, 32, 1, 4, 2, 48, 101, False),
        _decoder("qwen2", 3, QC, 48, 2, 6, 1, 88, 211, False),
        _decoder("qwen2", 4, QC, 64, 2, 8, 8, 120, 307, True),
        _decoder("qwen2", 5, QC, 40, 3, 4, 2, 72, 150, False, head_dim=16),
        _decoder("qwen2", 6, QM, 96, 2, 6, 3, 176, 499, False),
        _decoder("qwen2", 7, QC, 56, 1, 7, 1, 96, 77, True, head_dim=6),
    ]
    XM, XC = "MixtralModel", "MixtralForCausalLM"
    out += [
        # ---- Mixtral: num_local_experts, num_experts_per_tok (1, 2, E), head_dim, tie
        _decoder("mixtral", 0, XM, 32, 1, 4, 2, 48, 101, False, num_local_experts=4, num_experts_per_tok=2),
        _decoder("mixtral", 1, XC, 32, 1, 4, 2, 48, 101, False, num_local_experts=4, num_experts_per_tok=2),
        _decoder("mixtral", 2, XC, 32, 1, 4, 2, 48, 101, False, num_local_experts=4, num_experts_per_tok=1),
        _decoder("mixtral", 3, XC, 32, 1, 4, 2, 48, 101, False, num_local_experts=4, num_experts_per_tok=4),
        _decoder("mixtral", 4, XC, 48, 2, 6, 3, 40, 211, True, num_local_experts=8, num_experts_per_tok=2),
        _decoder("mixtral", 5, XC, 40, 2, 4, 1, 64, 150, False, head_dim=14, num_local_experts=3,
                 num_experts_per_tok=1),
        _decoder("mixtral", 6, XM, 64, 3, 8, 4, 24, 307, False, num_local_experts=2, num_experts_per_tok=2),
        _decoder("mixtral", 7, XC, 24, 2, 2, 2, 56, 77, False, head_dim=16, num_local_experts=6,
                 num_experts_per_tok=3),
        _decoder("mixtral", 8, XC, 56, 1, 7, 7, 36, 333, True, num_local_experts=5, num_experts_per_tok=5),
        _decoder("mixtral", 9, XC, 80, 1, 8, 2, 100, 499, False, num_local_experts=8, num_experts_per_tok=1),
    ]
    TM, TC, TE = "T5Model", "T5ForConditionalGeneration", "T5EncoderModel"
    out += [
        # ---- T5: relu / gated-gelu, decoder depth, d_kv*heads != d_model, tie, buckets, classes
        _t5(0, TM, 32, 8, 4, 48, 1, 1, 101),
        _t5(1, TC, 32, 8, 4, 48, 1, 1, 101),
        _t5(2, TE, 32, 8, 4, 48, 1, 1, 101),
        _t5(3, TC, 32, 8, 4, 48, 1, 1, 101, tie=False),
        _t5(4, TC, 48, 8, 4, 96, 2, 3, 211, ffp="gated-gelu"),  # 8*4 != 48
        _t5(5, TM, 48, 8, 4, 96, 2, 3, 211, ffp="gated-gelu", buckets=16),
        _t5(6, TE, 48, 8, 4, 96, 2, 3, 211, ffp="gated-gelu", buckets=8),
        _t5(7, TC, 64, 12, 6, 80, 3, 1, 307, ffp="gated-gelu", tie=False, buckets=8),
        _t5(8, TM, 24, 6, 2, 40, 2, 1, 77, buckets=16, max_dist=20),
        _t5(9, TC, 96, 16, 3, 128, 1, 2, 499, buckets=12),
        _t5(10, TE, 80, 10, 8, 160, 3, 3, 150, ffp="gated-gelu", buckets=20),
        _t5(11, TC, 40, 5, 4, 72, 2, 2, 250, ffp="gated-gelu", buckets=24, tie=False),
        _t5(12, TM, 56, 7, 7, 100, 1, 3, 333, buckets=32, tie=False),
    ]
    ids = [i for i, _ in out]
    assert len(ids) == len(set(ids)), "duplicate ids"
    return copy.deepcopy(out)

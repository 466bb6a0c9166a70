"""Decoding state of the linear-attention hybrids (qwen3_next, qwen3_5_text, qwen3_5_moe_text,
kimi_linear): symcalc's memory.recurrent_state_bytes and memory.kv_cache_bytes against the cache a
real forward pass leaves behind.

Each case builds a tiny config of tests/families/ on CPU with random weights, casts it to fp32 or
bf16, runs one forward pass with ``use_cache=True`` over ``batch x seq_len`` tokens and adds up
``numel * element_size`` of the tensors in ``out.past_key_values``:

* linear-attention layers (``LinearAttentionLayer``): ``conv_states`` and ``recurrent_states``;
* softmax / MLA layers (``DynamicLayer``): ``keys`` and ``values``.

symcalc is asked with ``kv_dtype`` equal to the model's dtype (the dtype transformers stores its
keys, values and conv states in).  What transformers 5.24 holds (checked by
``test_what_transformers_stores``): per linear layer a conv state (b, channels, K_conv) in the
model dtype -- K_conv columns, not K_conv - 1 -- and a recurrent state (b, n_lv, d_lk, d_lv) in
float32 whatever the model dtype (the chunked kernel computes in fp32 and the cache keeps that
tensor's dtype; Kimi even casts it explicitly); per softmax layer keys and values
(b, n_kv, s, d_h); per MLA layer the latent, keys (b, 1, s, r_kv) and values (b, 1, s, d_rope).
Neither state grows with the sequence: seq_len 70 (two 64-token chunks) holds as much as 5.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import hf_reference as H
from symcalc.hf import spec_from_config
from symcalc.options import Options
from symcalc.report import report

FAMILIES = Path(__file__).parent / "families"
# (config file, batch, seq_len): each family at a short and a two-chunk sequence
CONFIGS = [
    ("qwen3_next/causal-lm-default-interval-moe.json", 2, 5),
    ("qwen3_next/causal-lm-layer-types-sparse-step-bias.json", 1, 70),
    ("qwen3_next/causal-lm-interval-2-dense-tied.json", 2, 3),
    ("qwen3_5_text/causal-lm-default-interval.json", 2, 5),
    ("qwen3_5_text/model-interval-2.json", 1, 70),
    ("qwen3_5_moe_text/causal-lm-layer-types-bias-tied.json", 2, 5),
    ("kimi_linear/causal-lm-default-layers.json", 2, 5),
    ("kimi_linear/causal-lm-layer-lists-q-lora-bias.json", 1, 70),
]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
CASES = [pytest.param(f, b, s, dt, id=f"{f.removesuffix('.json')}-{b}x{s}-{dt}")
         for f, b, s in CONFIGS for dt in DTYPES]

_HELD: dict[tuple, dict] = {}


def _config(name: str) -> dict:
    return json.loads((FAMILIES / name).read_text())


def transformers_cache(name: str, batch: int, seq_len: int, dtype: str) -> dict:
    """Bytes and shapes of what one forward pass leaves in the cache, by kind of layer."""
    key = (name, batch, seq_len, dtype)
    if key not in _HELD:
        torch.manual_seed(0)
        model = H.build_model(_config(name), device="cpu", experts_implementation="eager")
        model = model.to(DTYPES[dtype]).eval()
        with torch.no_grad():
            out = model(**H.forward_inputs(model, batch, seq_len, "cpu", mask=True, use_cache=True))
        held = {"state": 0, "kv": 0, "conv": [], "recurrent": [], "keys": [], "values": []}
        for layer in out.past_key_values.layers:
            conv = getattr(layer, "conv_states", None)
            if conv:  # a linear-attention layer
                for kind, states in (("conv", conv), ("recurrent", layer.recurrent_states)):
                    for t in states.values():
                        held["state"] += t.numel() * t.element_size()
                        held[kind].append((tuple(t.shape), t.dtype))
                continue
            for kind in ("keys", "values"):
                t = getattr(layer, kind)
                held["kv"] += t.numel() * t.element_size()
                held[kind].append((tuple(t.shape), t.dtype))
        _HELD[key] = held
    return _HELD[key]


def symcalc_memory(name: str, batch: int, seq_len: int, dtype: str) -> dict:
    return report(spec_from_config(_config(name)),
                  Options(batch=batch, seq_len=seq_len, dtype=dtype, kv_dtype=dtype))["memory"]


@pytest.mark.parametrize("name,batch,seq_len,dtype", CASES)
def test_recurrent_state_bytes_equal_the_cache(name, batch, seq_len, dtype):
    held = transformers_cache(name, batch, seq_len, dtype)
    assert held["state"] > 0
    assert symcalc_memory(name, batch, seq_len, dtype)["recurrent_state_bytes"] == held["state"]


@pytest.mark.parametrize("name,batch,seq_len,dtype", CASES)
def test_kv_cache_bytes_count_only_attention_layers(name, batch, seq_len, dtype):
    held = transformers_cache(name, batch, seq_len, dtype)
    assert symcalc_memory(name, batch, seq_len, dtype)["kv_cache_bytes"] == held["kv"]


def test_what_transformers_stores():
    """The shapes and dtypes the docstring states, on one config of each layout."""
    # Qwen3-Next tiny: 3 linear layers (n_lk 2 x d_lk 8, n_lv 6 x d_lv 10, kernel 3), 1 softmax
    # layer (n_kv 2 x d_h 12); bf16 model
    held = transformers_cache("qwen3_next/causal-lm-default-interval-moe.json", 2, 5, "bf16")
    assert held["conv"] == [((2, 2 * 2 * 8 + 6 * 10, 3), torch.bfloat16)] * 3
    assert held["recurrent"] == [((2, 6, 8, 10), torch.float32)] * 3
    assert held["keys"] == held["values"] == [((2, 2, 5, 12), torch.bfloat16)]
    # Kimi tiny: 4 KDA layers (3 heads x 8, kernel 3), 1 MLA layer (r_kv 16, d_rope 4)
    held = transformers_cache("kimi_linear/causal-lm-default-layers.json", 2, 5, "bf16")
    assert held["conv"] == [((2, 3 * 3 * 8, 3), torch.bfloat16)] * 4
    assert held["recurrent"] == [((2, 3, 8, 8), torch.float32)] * 4
    assert held["keys"] == [((2, 1, 5, 16), torch.bfloat16)]
    assert held["values"] == [((2, 1, 5, 4), torch.bfloat16)]


def test_state_does_not_grow_with_the_sequence():
    name = "qwen3_5_text/model-interval-2.json"
    short, long = (transformers_cache(name, 1, s, "fp32") for s in (5, 70))
    assert short["state"] == long["state"] > 0
    assert long["kv"] == 14 * short["kv"] > 0
    mem = {s: symcalc_memory(name, 1, s, "fp32") for s in (5, 70)}
    assert mem[5]["recurrent_state_bytes"] == mem[70]["recurrent_state_bytes"]
    assert mem[70]["kv_cache_bytes"] == 14 * mem[5]["kv_cache_bytes"]

"""Decoding state of the hybrids: symcalc's memory.recurrent_state_bytes and
memory.kv_cache_bytes against the cache a real forward pass leaves behind.

Each case builds a tiny config of tests/families/ on CPU with random weights, casts it to fp32 or
bf16, runs one forward pass with ``use_cache=True`` over ``batch x seq_len`` tokens and adds up
``numel * element_size`` of the tensors in ``out.past_key_values``:

* linear-attention, Mamba and short-convolution layers (``LinearAttentionLayer``):
  ``conv_states`` and ``recurrent_states`` (LFM2's short convolution keeps no recurrent state);
* softmax / MLA attention layers (``DynamicLayer``): ``keys`` and ``values`` (and Qwen4-Exp's
  ``DynamicIndexedLayer`` its QSA indexer's ``indexer_keys``);
* Falcon-H1 layers (``LinearAttentionAndFullAttentionLayer``) hold both;
* Nemotron-H's MLP and MoE blocks (``DummyLayer``) hold nothing.

symcalc is asked with ``kv_dtype`` equal to the model's dtype (the dtype transformers stores its
keys, values and conv windows in) and its default state dtype (fp32). What transformers 5.24
holds (checked by the ``test_what_*_stores`` tests):

* per linear-attention layer (Gated DeltaNet, Kimi Delta Attention) a conv window
  (b, channels, K_conv) in the model dtype -- K_conv columns, not K_conv - 1 -- and a recurrent
  state (b, n_lv, d_lk, d_lv) in float32 whatever the model dtype (the chunked kernel computes in
  fp32 and the cache keeps that tensor's dtype; Kimi even casts it explicitly);
* per Mamba layer a conv window (b, channels, K_conv), zero-padded on the left when the prompt is
  shorter, with channels d_in (Mamba-1) or d_in + 2 G_s N_s (Mamba-2), and an SSM state in float32:
  (b, d_in, N_s) for Mamba-1, (b, H_s, d_in / H_s, N_s) for Mamba-2;
* per short-convolution layer a window (b, d, K_conv);
* per softmax layer keys and values (b, n_kv, s, d_h); per MLA layer the latent, keys
  (b, 1, s, r_kv) and values (b, 1, s, d_rope).

Neither state grows with the sequence (seq_len 70: two 64-token chunks, holds as much as 5).

A stack without any attention layer (jamba/tiny-tied-no-attention, granitemoehybrid/
tiny-bare-dense-all-mamba, lfm2/tiny-all-conv) cannot run a cached forward in transformers 5.24:
DynamicCache.get_seq_length raises "can only be called on Attention layers". Those configs are
left out here; symcalc sizes their state all the same. The attention-free Mamba models (mamba,
falcon_mamba, mamba2) run a cached forward of their own and return the cache as ``out.cache``.

GraniteMoeHybridForCausalLM.forward has no ``use_cache`` parameter, so ``use_cache=True`` is
passed through its keyword arguments (its tiny configs set ``use_cache`` false for the FLOP
tests, which must run uncached).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import hf_reference as H
from symcalc.inputs.hf import spec_from_config
from symcalc.algebra.options import Options
from symcalc.fast.quick import quick_report

FAMILIES = Path(__file__).resolve().parents[1] / "families"
# (config file, batch, seq_len): linear-attention hybrids at a short and a two-chunk sequence
LINEAR_CONFIGS = [
    ("qwen3_next/causal-lm-default-interval-moe.json", 2, 5),
    ("qwen3_next/causal-lm-layer-types-sparse-step-bias.json", 1, 70),
    ("qwen3_next/causal-lm-interval-2-dense-tied.json", 2, 3),
    ("qwen3_5_text/causal-lm-default-interval.json", 2, 5),
    ("qwen3_5_text/model-interval-2.json", 1, 70),
    ("qwen3_5_moe_text/causal-lm-layer-types-bias-tied.json", 2, 5),
    ("kimi_linear/causal-lm-default-layers.json", 2, 5),
    ("kimi_linear/causal-lm-layer-lists-q-lora-bias.json", 1, 70),
    ("olmo_hybrid/bare-model.json", 2, 5),
    ("olmo_hybrid/causal-lm-layer-types-bias-tied-kernel-3.json", 1, 70),
    ("lara_mini/bare-model-default-pattern.json", 2, 3),  # within the window (W - 1 = 3)
    ("lara_mini/causal-lm-layer-types-bias-untied.json", 1, 70),
    # Qwen4-Exp: beside the Gated DeltaNet states, the QSA indexer's raw keys (b, s, d_ih) in
    # each attention layer and, in each PLE layer, its dilated convolution's window (b, n_hc d,
    # (K_pe - 1) N_g) and the last N_g - 1 token ids (int64)
    ("qwen4_exp_text/causal-lm-ple-indexer.json", 2, 5),
    ("qwen4_exp_text/causal-lm-full-attention-names-tied.json", 1, 9),
    ("qwen4_exp_text/model-default-interval-bias.json", 2, 7),
]
# state-space and short-convolution hybrids: a prompt shorter than the conv window, and one
# spanning several chunks of the Mamba-2 scan
SSM_CONFIGS = [
    ("jamba/tiny-moe-biases.json", 2, 5),
    ("jamba/tiny-bare-dense-auto-rank.json", 1, 2),
    ("jamba/tiny-moe-biases.json", 1, 2),
    ("nemotron_h/tiny-pattern-moe-biases.json", 2, 3),
    ("nemotron_h/tiny-bare-dense-pattern-legacy-keys.json", 1, 19),
    ("nemotron_h/tiny-list-tied.json", 2, 5),
    ("falcon_h1/tiny-all-biases-norm-head-dim.json", 2, 20),
    ("falcon_h1/tiny-bare-expand-no-bias.json", 1, 2),
    ("granitemoehybrid/tiny-moe-biases-rope.json", 2, 5),
    ("granitemoehybrid/tiny-moe-biases-rope.json", 1, 2),
    ("granitemoehybrid/tiny-tied-new-names-head-dim.json", 2, 17),
    ("lfm2/tiny-conv-bias-pattern.json", 2, 5),
    ("lfm2/tiny-bare-attn-idxs-legacy.json", 1, 2),
    ("lfm2/tiny-conv-bias-pattern.json", 1, 9),
    ("lfm2_moe/bare-model.json", 2, 5),
    ("lfm2_moe/causal-lm-conv-bias-untied-legacy-key.json", 1, 2),
    # Ling's hybrids: Kimi Delta Attention with full-rank gates beside MLA
    ("bailing_hybrid/causal-lm-mla-direct-q.json", 2, 5),
    ("bailing_hybrid/model-q-lora-biases-lists.json", 1, 9),
    ("bamba/causal-lm-attention-biases.json", 2, 5),
    ("bamba/causal-lm-attention-biases.json", 1, 17),
    # Zamba: a multi-head Mamba-1 mixer in every layer, keys and values in its hybrid layers
    ("zamba/tiny-tied-period.json", 2, 5),
    ("zamba/tiny-untied-layer-types.json", 1, 2),
    # Zamba2: a Mamba-2 mixer in every layer, keys and values in its hybrid layers
    ("zamba2/tiny-mem-blocks-attn-adapters.json", 2, 5),
    ("zamba2/tiny-bare-biases-gqa.json", 1, 7),
    # Inkling: four float32 convolution windows per layer beside keys and values (prompts
    # within W - 1)
    ("inkling_text/causal-lm-layer-types-dense-sparse.json", 2, 5),
    ("inkling_text/model-checkpoint-keys.json", 1, 4),
    # ZAYA: the convolutional attention's query/key window and delayed value half per layer,
    # beside keys and values (prompts within W - 1)
    ("zaya/causal-lm-window-biases-untied.json", 2, 4),
    ("zaya/model-mha-kernels.json", 1, 6),
    # xLSTM: the mLSTM's matrix memory, normalizer and maximum per head in xLSTMCache's
    # rnn_state, at the model's dtype (two chunks of 4 and one token by itself)
    ("xlstm/causal-lm-chunks-4.json", 2, 9),
    ("xlstm/model-blocks.json", 1, 5),
    # attention-free stacks whose own forward keeps a cache (returned as ``out.cache``)
    ("mamba/tiny-tied.json", 2, 5),
    ("mamba/tiny-untied-biases-rank.json", 1, 2),
    ("falcon_mamba/tiny-tied.json", 2, 5),
    ("mamba2/tiny-untied.json", 2, 5),
    ("mamba2/tiny-tied-biases.json", 1, 9),
    # RWKV-4: its model returns a list of five (b, d, L) tensors as ``out.state``
    ("rwkv/tiny-untied.json", 2, 5),
    ("rwkv/tiny-tied.json", 1, 2),
    # RecurrentGemma: RG-LRU blocks and sliding-window attention (prompts within W - 1)
    ("recurrent_gemma/tiny-gqa-window.json", 2, 5),
    ("recurrent_gemma/tiny-bare-lru-width-biases.json", 1, 9),
]
# softmax stacks whose global layers cache keys and values of their own shape (Gemma 4's
# global_head_dim, num_global_key_value_heads, attention_k_eq_v; MiMo-V2-Flash's sliding layers
# with twice the key/value heads, values of v_head_dim) beside KV-sharing layers that cache
# none; prompts within the sliding window (W - 1 = 3)
ATTENTION_CONFIGS = [
    ("gemma4_text/causal-lm-moe-k-eq-v-shared-kv.json", 2, 3),
    ("gemma4_text/causal-lm-shared-kv-double-wide.json", 1, 3),
    ("gemma4_text/causal-lm-k-eq-v-untied-bias.json", 2, 3),
    ("gemma4_text/text-model-default-pattern.json", 2, 3),
    ("gemma4_unified/causal-lm-untied-vision-defaults.json", 2, 3),
    ("gemma4_unified/model-audio-shared-kv.json", 1, 3),
    ("mimo_v2_flash/causal-lm-default-patterns.json", 2, 3),
    ("mimo_v2_flash/causal-lm-layer-types-dense-bias-tied.json", 1, 3),
    ("mimo_v2_flash/model-window-size-mixed-mlp.json", 2, 3),
    ("longcat_flash/causal-lm-zero-experts.json", 2, 3),
    ("longcat_flash/model-no-zero-experts-bias.json", 1, 5),
    # Dory: the recurrent layers keep a cache per loop (recurrent_kv_cache_mode per_loop)
    ("dory/causal-lm-loops-window.json", 2, 3),
    ("dory/model-layer-types-biases.json", 1, 5),
]
# lightning attention (MiniMax-01): its state (b, n_h, d_h, d_h) is MiniMaxCache's linear_cache,
# kept in the model's dtype, so only fp32 matches symcalc's default state dtype; a prompt within
# one block, one spanning two blocks and a shorter last one
LIGHTNING_CONFIGS = [
    ("minimax/causal-lm-layer-types-block-3-head-dim.json", 2, 5),
    ("minimax/model-default-pattern.json", 1, 3),
    ("minimax/causal-lm-window-tied-alias.json", 2, 3),
]
# models whose forward transformers 5.24 cannot run once cast to bf16 with .to(): Inkling 2's
# router keeps a float32 weight it multiplies by float32 states (a cast weight fails); four
# float32 convolution windows per layer (the global layers' dynamic ones too) beside keys and
# values (prompts within W - 1)
FP32_CONFIGS = [
    ("inkling2_text/causal-lm-layer-types-blocks-2.json", 2, 5),
    ("inkling2_text/model-first-global-aliases.json", 1, 4),
]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
# each config in one dtype, the two taken in turn (every family meets both over its configs;
# a CPU forward with a cache per case is this file's cost); SYMCALC_REFERENCE_ALL=1: both
CASES = [pytest.param(f, b, s, dt, id=f"{f.removesuffix('.json')}-{b}x{s}-{dt}")
         for i, (f, b, s) in enumerate(LINEAR_CONFIGS + SSM_CONFIGS + ATTENTION_CONFIGS)
         for dt in (DTYPES if H.REFERENCE_ALL else [list(DTYPES)[i % 2]])]
CASES += [pytest.param(f, b, s, "fp32", id=f"{f.removesuffix('.json')}-{b}x{s}-fp32")
          for f, b, s in LIGHTNING_CONFIGS + FP32_CONFIGS]

_HELD: dict[tuple, dict] = {}


def _config(name: str) -> dict:
    return json.loads((FAMILIES / name).read_text())


def transformers_cache(name: str, batch: int, seq_len: int, dtype: str) -> dict:
    """Bytes and shapes of what one forward pass leaves in the cache, by kind of tensor."""
    key = (name, batch, seq_len, dtype)
    if key not in _HELD:
        torch.manual_seed(0)
        model = H.build_model(_config(name), device="cpu", experts_implementation="eager")
        model = model.to(DTYPES[dtype]).eval()
        inputs = H.forward_inputs(model, batch, seq_len, "cpu", mask=True)
        inputs["use_cache"] = True  # also for a forward that takes it only as a keyword argument
        with torch.no_grad():
            out = model(**inputs)
        held = {"state": 0, "kv": 0, "conv": [], "recurrent": [], "keys": [], "values": [],
                "indexer_keys": []}
        # the Mamba models return their DynamicCache as ``cache``, not ``past_key_values``
        cache = getattr(out, "past_key_values", None) or getattr(out, "cache", None)
        if cache is None and not isinstance(getattr(out, "state", None), list):
            # RecurrentGemma returns no cache: its attention layers fill one passed in, its
            # recurrent blocks keep their state themselves (conv1d_state, recurrent_states)
            from transformers import DynamicCache

            torch.manual_seed(0)
            cache = DynamicCache(config=model.config)
            with torch.no_grad():
                model(**inputs, cache=cache)
            for module in model.modules():
                for kind, name in (("conv", "conv1d_state"), ("recurrent", "recurrent_states")):
                    t = getattr(module, name, None)
                    if isinstance(t, torch.Tensor):
                        held["state"] += t.numel() * t.element_size()
                        held[kind].append((tuple(t.shape), t.dtype))
        rwkv_state = getattr(out, "state", None)  # RWKV: token shifts, then the WKV state
        for i, t in enumerate(rwkv_state if isinstance(rwkv_state, list) else []):
            held["state"] += t.numel() * t.element_size()
            held["conv" if i < 2 else "recurrent"].append((tuple(t.shape), t.dtype))
        if isinstance(rwkv_state, list):
            _HELD[key] = held
            return held
        for states in (getattr(cache, "rnn_state", None) or {}).values():  # xLSTMCache
            for t in states:
                held["state"] += t.numel() * t.element_size()
                held["recurrent"].append((tuple(t.shape), t.dtype))
        if hasattr(cache, "rnn_state"):
            _HELD[key] = held
            return held
        for t in getattr(cache, "linear_cache", None) or []:  # MiniMaxCache's lightning states
            if isinstance(t, torch.Tensor):
                held["state"] += t.numel() * t.element_size()
                held["recurrent"].append((tuple(t.shape), t.dtype))
        for layer in cache.layers:
            for kind in ("conv", "recurrent"):
                for t in (getattr(layer, f"{kind}_states", None) or {}).values():
                    if t is not None:
                        held["state"] += t.numel() * t.element_size()
                        held[kind].append((tuple(t.shape), t.dtype))
            for kind in ("keys", "values", "indexer_keys"):  # (Qwen4-Exp's QSA indexer)
                t = getattr(layer, kind, None)
                if isinstance(t, torch.Tensor):
                    held["kv"] += t.numel() * t.element_size()
                    held[kind].append((tuple(t.shape), t.dtype))
        _HELD[key] = held
    return _HELD[key]


def symcalc_memory(name: str, batch: int, seq_len: int, dtype: str) -> dict:
    """The memory figures `symcalc report` prints (the quick report; tests/test_quick.py holds
    it equal to the sympy report)."""
    return quick_report(spec_from_config(_config(name)),
                  Options(batch=batch, seq_len=seq_len, dtype=dtype, kv_dtype=dtype))["memory"]


STATE_CASES = [c for c in CASES if not c.values[0].startswith(
    tuple(f"{f.split('/')[0]}/" for f, _, _ in ATTENTION_CONFIGS))]


@pytest.mark.parametrize("name,batch,seq_len,dtype", STATE_CASES)
def test_recurrent_state_bytes_equal_the_cache(name, batch, seq_len, dtype):
    held = transformers_cache(name, batch, seq_len, dtype)
    assert held["state"] > 0
    assert symcalc_memory(name, batch, seq_len, dtype)["recurrent_state_bytes"] == held["state"]


@pytest.mark.parametrize("name,batch,seq_len,dtype", CASES)
def test_kv_cache_bytes_count_only_attention_layers(name, batch, seq_len, dtype):
    held = transformers_cache(name, batch, seq_len, dtype)
    assert symcalc_memory(name, batch, seq_len, dtype)["kv_cache_bytes"] == held["kv"]


def test_what_linear_attention_layers_store():
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


def test_what_ssm_and_conv_layers_store():
    """The shapes and dtypes the docstring states, on one config of each layout (bf16 models)."""
    bf16, fp32 = torch.bfloat16, torch.float32
    # Jamba tiny: layers mamba, mamba, attention, mamba; d_in 64, N_s 8, K_conv 4; n_kv 2 x d_h 8.
    # The prompt (5) is longer than the window: only the last 4 columns are kept.
    held = transformers_cache("jamba/tiny-moe-biases.json", 2, 5, "bf16")
    assert held["conv"] == [((2, 64, 4), bf16)] * 3
    assert held["recurrent"] == [((2, 64, 8), fp32)] * 3
    assert held["keys"] == held["values"] == [((2, 2, 5, 8), bf16)]
    # Nemotron-H tiny "M*-EM": conv over d_in 24 + 2 groups x 8 = 40 + 16; state 6 heads x 4 x 8;
    # the MLP and MoE blocks keep nothing. The prompt (3) is shorter than the window (4).
    held = transformers_cache("nemotron_h/tiny-pattern-moe-biases.json", 2, 3, "bf16")
    assert held["conv"] == [((2, 24 + 2 * 2 * 8, 4), bf16)] * 2
    assert held["recurrent"] == [((2, 6, 4, 8), fp32)] * 2
    assert held["keys"] == held["values"] == [((2, 2, 3, 8), bf16)]
    # Falcon-H1 tiny: both layers keep keys and values (head_dim 12) AND a Mamba-2 state.
    held = transformers_cache("falcon_h1/tiny-all-biases-norm-head-dim.json", 2, 20, "bf16")
    assert held["conv"] == [((2, 48 + 2 * 2 * 8, 4), bf16)] * 2
    assert held["recurrent"] == [((2, 6, 8, 8), fp32)] * 2
    assert held["keys"] == held["values"] == [((2, 2, 20, 12), bf16)] * 2
    # LFM2 tiny: two short-conv layers (d 32, K_conv 3), no recurrent state; one attention layer.
    held = transformers_cache("lfm2/tiny-conv-bias-pattern.json", 2, 5, "bf16")
    assert held["conv"] == [((2, 32, 3), bf16)] * 2
    assert held["recurrent"] == []
    assert held["keys"] == held["values"] == [((2, 2, 5, 8), bf16)]


def test_linear_state_does_not_grow_with_the_sequence():
    name = "qwen3_5_text/model-interval-2.json"
    short, long = (transformers_cache(name, 1, s, "fp32") for s in (5, 70))
    assert short["state"] == long["state"] > 0
    assert long["kv"] == 14 * short["kv"] > 0
    mem = {s: symcalc_memory(name, 1, s, "fp32") for s in (5, 70)}
    assert mem[5]["recurrent_state_bytes"] == mem[70]["recurrent_state_bytes"]
    assert mem[70]["kv_cache_bytes"] == 14 * mem[5]["kv_cache_bytes"]


def test_ssm_state_does_not_grow_with_the_sequence():
    name = "granitemoehybrid/tiny-moe-biases-rope.json"
    short, long = (transformers_cache(name, 1, s, "fp32") for s in (2, 20))
    assert short["state"] == long["state"] > 0
    assert long["kv"] == 10 * short["kv"] > 0
    mem = {s: symcalc_memory(name, 1, s, "fp32") for s in (2, 20)}
    assert mem[2]["recurrent_state_bytes"] == mem[20]["recurrent_state_bytes"] == short["state"]
    assert mem[20]["kv_cache_bytes"] == 10 * mem[2]["kv_cache_bytes"]

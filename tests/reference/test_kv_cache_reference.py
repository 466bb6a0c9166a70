"""The KV cache in transformers' convention: bytes of the tensors a real forward pass leaves in
the returned cache, against symcalc's memory.kv_cache_bytes.

Each case runs one forward pass on CPU (fp32, random weights, tiny config) with
``use_cache=True`` over ``batch x seq_len`` tokens and sums ``numel * element_size`` over the keys
and values of every layer of ``out.past_key_values`` (a ``DynamicCache(config=...)`` built by the
model).  What transformers 5.24 stores there (cache_utils.py, checked by
``test_what_transformers_stores``):

* a full-attention layer (``DynamicLayer``): keys and values ``(b, n_kv, s, d_h)`` each;
* a sliding layer (``DynamicSlidingWindowLayer``) keeps only the LAST ``W - 1`` tokens
  (``full_key_states[:, :, -self.sliding_window + 1:, :]``): ``min(s, W - 1)`` tokens, so already
  at s == W one token less than the window.  (The static cache's ``StaticSlidingWindowLayer``
  instead preallocates ``min(W, max_cache_len)``.)  Which layers slide: ``config.layer_types``,
  else every layer whose ``sliding_window`` is set (Mistral: all);
* MLA (DeepSeek-V2 and V3): the COMPRESSED latent -- keys ``(b, 1, s, r_kv)`` (after
  kv_a_layernorm) and values ``(b, 1, s, d_rope)`` (the shared rotary key), i.e. r_kv + d_rope
  elements per token and layer, not the up-projected n_h (d_nope + d_rope) + n_h d_v;
* Gemma 3n's KV-sharing layers (``config.kv_sharing_modes`` "reuse": the last
  num_kv_shared_layers) hold a ``DummyLayer`` with no keys or values;
* DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): a ``DynamicIndexedLayer`` holds MLA's latent
  and, in each layer that runs its indexer, the indexer's keys ``(b, s, index_head_dim)``
  (``indexer_keys``); a GLM-5 layer that reuses the previous selection keeps none; MiniMax-M3's
  sparse-attention layers (``MiniMaxM3VLSparseCacheLayer``) keep theirs, ``(b, 1, s,
  index_head_dim)``, as ``idx_keys``;
* DeepSeek-V4: every layer slides over one key/value head of head_dim (a sliding-only layer's
  ``DynamicSlidingWindowLayer`` keeps keys and values apart; the compressor layers'
  ``DeepseekV4CSACache`` / ``DeepseekV4HCACache`` one tensor for both), and each compressor (a
  CSA layer's and its indexer's, an HCA layer's) keeps its floor(s / m) compressed entries, the
  kv and gate projections of the s mod m tokens of its unfinished window (two series, 2 x the
  width, in CSA) and, in CSA once a window has closed, the last window's first series (kv and
  gate, m tokens each). Every tensor is counted once.
"""
from __future__ import annotations

import pytest
import torch

import hf_reference as H
from symcalc.inputs.hf import spec_from_config
from symcalc.algebra.options import Options
from symcalc.report import report
from conftest import sympy_number

_BASE = {"vocab_size": 97, "hidden_size": 32, "intermediate_size": 40, "num_attention_heads": 4,
         "num_key_value_heads": 2, "max_position_embeddings": 64, "pad_token_id": 0,
         "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False}
_MLA = {"num_key_value_heads": 4, "n_routed_experts": 4, "num_experts_per_tok": 2,
        "moe_intermediate_size": 16, "n_shared_experts": 1, "first_k_dense_replace": 1,
        "kv_lora_rank": 12, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 6,
        "n_group": 1, "topk_group": 1}

_V4 = {"intermediate_size": 8, "head_dim": 16, "q_lora_rank": 12, "n_routed_experts": 4,
       "num_experts_per_tok": 2, "o_groups": 2, "o_lora_rank": 6, "index_n_heads": 2,
       "index_head_dim": 8, "hc_mult": 2, "sliding_window": 8,
       "layer_types": ["sliding_attention", "compressed_sparse_attention",
                       "heavily_compressed_attention", "compressed_sparse_attention"],
       "compress_rates": {"compressed_sparse_attention": 2, "heavily_compressed_attention": 3}}

# two sharing layers (one sliding, one full) at the end of six alternating ones
_GEMMA3N = {"head_dim": 8, "vocab_size_per_layer_input": 50, "hidden_size_per_layer_input": 4,
            "altup_num_inputs": 2, "laurel_rank": 3, "num_kv_shared_layers": 2,
            "layer_types": ["sliding_attention", "full_attention"] * 3}


def _cfg(model_type: str, cls: str, L: int, **extra) -> dict:
    return dict(_BASE, model_type=model_type, architectures=[cls], num_hidden_layers=L, **extra)


def _mha(cfg: dict) -> dict:
    """A multi-head family's config without the num_key_value_heads key it does not read."""
    return {k: v for k, v in cfg.items() if k != "num_key_value_heads"}


def _s2s(model_type: str, cls: str, **extra) -> dict:
    """The decoder of an encoder-decoder run alone (its cross-attention unused). The encoder's
    sizes equal the decoder's: transformers 5.24 sizes the decoder's DynamicCache by
    num_hidden_layers, which the BART-like configs alias to encoder_layers."""
    return dict(model_type=model_type, architectures=[cls], vocab_size=97, d_model=32, decoder_layers=2,
                decoder_attention_heads=4, decoder_ffn_dim=40, encoder_layers=2, encoder_attention_heads=4,
                encoder_ffn_dim=8, max_position_embeddings=24, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                decoder_start_token_id=2, **extra)


# (config, batch, seq_len): sliding cases at s < W - 1, s == W and s > W
CASES = {
    "llama-no-window": (_cfg("llama", "LlamaForCausalLM", 2), 2, 9),
    "mistral-all-sliding-short": (_cfg("mistral", "MistralForCausalLM", 2, sliding_window=6), 2, 4),
    "mistral-all-sliding-at-window": (_cfg("mistral", "MistralForCausalLM", 2, sliding_window=6), 2, 6),
    "mistral-all-sliding-long": (_cfg("mistral", "MistralForCausalLM", 2, sliding_window=4), 2, 9),
    "gemma2-alternating-short": (_cfg("gemma2", "Gemma2ForCausalLM", 4, head_dim=8, sliding_window=6), 2, 4),
    "gemma2-alternating-long": (_cfg("gemma2", "Gemma2ForCausalLM", 4, head_dim=8, sliding_window=4), 2, 9),
    "gpt_oss-layer-types-long": (_cfg("gpt_oss", "GptOssForCausalLM", 3, head_dim=8, sliding_window=4,
                                      num_local_experts=4, num_experts_per_tok=2,
                                      layer_types=["sliding_attention", "full_attention",
                                                   "sliding_attention"]), 1, 10),
    "qwen2-max-window-layers-long": (_cfg("qwen2", "Qwen2ForCausalLM", 3, use_sliding_window=True,
                                          sliding_window=4, max_window_layers=1), 2, 9),
    "olmo3-default-pattern-short": (_cfg("olmo3", "Olmo3ForCausalLM", 4, sliding_window=6), 2, 4),
    "olmo3-default-pattern-long": (_cfg("olmo3", "Olmo3ForCausalLM", 5, sliding_window=4), 2, 9),
    "cohere2-default-pattern-long": (_cfg("cohere2", "Cohere2ForCausalLM", 5, sliding_window=4), 2, 9),
    "cohere2-legacy-pattern-2-long": (_cfg("cohere2", "Cohere2ForCausalLM", 4, sliding_window=3,
                                           sliding_window_pattern=2), 1, 7),
    "cohere_compass_text-full": (_cfg("cohere_compass_text", "CohereCompassForCausalLM", 2, rope_parameters={
        "full_attention": {"rope_type": "default", "rope_theta": 10000.0}}), 2, 9),
    # HRM-Text: a cache slot per stack run, num_layers_per_stack H_cycles (L_cycles + 1) of them
    "hrm_text-cycles": (_mha(_cfg("hrm_text", "HrmTextForCausalLM", 2, head_dim=8, H_cycles=2,
                                  L_cycles=2)), 2, 5),
    "smollm3-nope-layers-slide-long": (_cfg("smollm3", "SmolLM3ForCausalLM", 5, use_sliding_window=True,
                                            sliding_window=3), 2, 9),
    "smollm3-layer-types-without-switch-long": (_cfg("smollm3", "SmolLM3ForCausalLM", 3, sliding_window=4,
                                                     layer_types=["sliding_attention", "full_attention",
                                                                  "sliding_attention"]), 1, 8),
    "exaone4-default-pattern-short": (_cfg("exaone4", "Exaone4ForCausalLM", 4, sliding_window=6), 2, 4),
    "exaone4-default-pattern-long": (_cfg("exaone4", "Exaone4ForCausalLM", 5, sliding_window=4), 2, 9),
    "deepseek_v3-mla-q-lora": (_cfg("deepseek_v3", "DeepseekV3ForCausalLM", 2, q_lora_rank=10, **_MLA), 2, 9),
    "deepseek_v2-mla-direct-q": (_cfg("deepseek_v2", "DeepseekV2ForCausalLM", 2, q_lora_rank=None,
                                      topk_method="greedy", **_MLA), 2, 9),
    "gemma3n_text-shared-kv-short": (_cfg("gemma3n_text", "Gemma3nForCausalLM", 6, **_GEMMA3N, sliding_window=6), 2, 4),
    "gemma3n_text-shared-kv-long": (_cfg("gemma3n_text", "Gemma3nForCausalLM", 6, **_GEMMA3N, sliding_window=4), 2, 9),
    # families added from issue 21 (one case each: what their cache holds)
    "glm4_moe_lite-mla-layer-list": (_cfg("glm4_moe_lite", "Glm4MoeLiteForCausalLM", 3, q_lora_rank=10,
                                          mlp_layer_types=["dense", "sparse", "sparse"],
                                          **{k: v for k, v in _MLA.items() if k != "first_k_dense_replace"}), 2, 9),
    "exaone-gqa": (_cfg("exaone", "LlamaForCausalLM", 2, head_dim=12), 2, 9),
    "internlm3-gqa-biases": (_cfg("internlm3", "LlamaForCausalLM", 2, head_dim=16, qkv_bias=True, bias=True), 2, 9),
    "iquestcoder-gqa": (_cfg("iquestcoder", "LlamaForCausalLM", 2, head_dim=8), 1, 9),
    "sarvam_moe-gqa": (_cfg("sarvam_moe", "Glm4MoeForCausalLM", 3, head_dim=8, moe_intermediate_size=16,
                            n_routed_experts=4, num_experts_per_tok=2), 2, 9),
    "sarvam_mla-direct-q": (_cfg("sarvam_mla", "DeepseekV3ForCausalLM", 2,
                                 **{k: v for k, v in _MLA.items() if k != "n_routed_experts"},
                                 num_local_experts=4), 2, 9),
    "solar_open-gqa-head-dim": (_cfg("solar_open", "SolarOpenForCausalLM", 2, head_dim=12, moe_intermediate_size=8,
                                     n_routed_experts=4, num_experts_per_tok=2), 2, 9),
    "cohere2_moe-dense-prefix-long": (_cfg("cohere2_moe", "Cohere2MoeForCausalLM", 5, head_dim=8, sliding_window=4,
                                           num_experts=4, first_k_dense_replace=1), 2, 9),
    "exaone_moe-default-pattern-short": (_cfg("exaone_moe", "ExaoneMoeForCausalLM", 5, sliding_window=6,
                                              moe_intermediate_size=8, num_experts=4, num_experts_per_tok=2), 2, 4),
    "hy_v3-gqa-head-dim": (_cfg("hy_v3", "HYV3ForCausalLM", 2, head_dim=12, moe_intermediate_size=8, num_experts=4,
                                num_experts_per_tok=2), 2, 9),
    "ernie4_5-gqa-head-dim": (_cfg("ernie4_5", "Ernie4_5ForCausalLM", 2, head_dim=12), 2, 9),
    "helium-gqa": (_cfg("helium", "HeliumForCausalLM", 2, head_dim=8), 2, 9),
    "doge-gqa": (_cfg("doge", "DogeForCausalLM", 2), 2, 9),
    "doge-all-sliding-short": (_cfg("doge", "DogeForCausalLM", 2, sliding_window=6), 2, 4),
    "olmo-gqa": (_cfg("olmo", "OlmoForCausalLM", 2), 2, 9),
    "granite_swa-default-pattern-long": (_cfg("granite_swa", "GraniteSWAForCausalLM", 5, sliding_window=4), 2, 9),
    "cwm-default-pattern-short": (_cfg("cwm", "CwmForCausalLM", 5, head_dim=8, sliding_window=6), 2, 4),
    "vaultgemma-alternating-long": (_cfg("vaultgemma", "VaultGemmaForCausalLM", 4, head_dim=8, sliding_window=4), 2, 9),
    "youtu-mla-q-lora": (_cfg("youtu", "YoutuForCausalLM", 2, q_lora_rank=10,
                              **{k: v for k, v in _MLA.items() if k in ("num_key_value_heads", "kv_lora_rank",
                                                                         "qk_nope_head_dim", "qk_rope_head_dim",
                                                                         "v_head_dim")}), 2, 9),
    "hunyuan_v1_dense-gqa-head-dim": (_cfg("hunyuan_v1_dense", "HunYuanDenseV1ForCausalLM", 2, head_dim=12), 2, 9),
    "arcee-gqa": (_cfg("arcee", "ArceeForCausalLM", 2), 2, 9),
    "jais2-gqa": (_cfg("jais2", "Jais2ForCausalLM", 2, head_dim=12), 1, 9),
    "flex_olmo-gqa": (_cfg("flex_olmo", "FlexOlmoForCausalLM", 2, num_experts=4, num_experts_per_tok=2), 2, 9),
    # the existing-component families of issue 21 (one case each)
    "biogpt-mha": (_mha(_cfg("biogpt", "BioGptForCausalLM", 2)), 2, 9),
    "xglm-mha": (_mha(_cfg("xglm", "XGLMForCausalLM", 2)), 2, 9),
    "ctrl-mha": (_mha(_cfg("ctrl", "CTRLLMHeadModel", 2, dff=40)), 2, 9),
    "persimmon-qk-norm": (_mha(_cfg("persimmon", "PersimmonForCausalLM", 2)), 2, 9),
    "nemotron-gqa-head-dim": (_cfg("nemotron", "NemotronForCausalLM", 2, head_dim=12), 2, 9),
    "glm-gqa-head-dim": (_cfg("glm", "GlmForCausalLM", 2, head_dim=12), 2, 9),
    "minicpm3-mla-q-lora": (_cfg("minicpm3", "MiniCPM3ForCausalLM", 2, q_lora_rank=10,
                                 **{k: v for k, v in _MLA.items() if k in ("num_key_value_heads", "kv_lora_rank",
                                                                            "qk_nope_head_dim", "qk_rope_head_dim",
                                                                            "v_head_dim")}), 2, 9),
    "emu3-text-gqa": (_cfg("emu3_text_model", "Emu3ForCausalLM", 2), 2, 9),
    "ministral-layer-types-long": (_cfg("ministral", "MinistralForCausalLM", 3, head_dim=8, sliding_window=4,
                                        layer_types=["sliding_attention", "full_attention",
                                                     "sliding_attention"]), 2, 9),
    "mellum-sliding-dense-short": (_cfg("mellum", "MellumForCausalLM", 3, head_dim=8, sliding_window=6,
                                        moe_intermediate_size=8, num_experts=4, num_experts_per_tok=2,
                                        layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                                        mlp_layer_types=["dense", "sparse", "sparse"]), 2, 4),
    "kolibri1-default-pattern-long": (_cfg("kolibri1", "Kolibri1ForCausalLM", 5, head_dim=8, sliding_window=4,
                                           moe_intermediate_size=8, shared_expert_intermediate_size=8,
                                           num_experts=4, num_experts_per_tok=2), 2, 9),
    "aria_text-gqa": (_cfg("aria_text", "AriaTextForCausalLM", 2, moe_num_experts=4, moe_topk=2), 2, 9),
    "hyperclovax-gqa": (_cfg("hyperclovax", "HyperCLOVAXForCausalLM", 2), 2, 9),
    # JetMoE: the cache keeps the n_kv shared key/value heads, before their top_k repeat
    "jetmoe-moa": (_cfg("jetmoe", "JetMoeForCausalLM", 2, kv_channels=8, num_local_experts=4,
                        num_experts_per_tok=2), 2, 9),
    "nanochat-gqa": (_cfg("nanochat", "NanoChatForCausalLM", 2), 2, 9),
    # Apertus 1.5 with its head pruned to the first output_vocab_size tokens: the cache is GQA's
    "apertus1p5_text-pruned-head": (_cfg("apertus1p5_text", "Apertus1p5TextForCausalLM", 2,
                                         output_vocab_size=61), 2, 9),
    "minimax_m3_vl_text-gqa": (_cfg("minimax_m3_vl_text", "MiniMaxM3VLForCausalLM", 2, head_dim=8, rotary_dim=4,
                                    num_local_experts=4, num_experts_per_tok=2, dense_intermediate_size=40,
                                    shared_intermediate_size=8, mlp_layer_types=["dense", "sparse"]), 2, 9),
    # MiniMax-M3's sparse-attention layer: its cache layer also keeps the indexer's keys (idx_keys)
    "minimax_m3_vl_text-sparse-layer": (_cfg("minimax_m3_vl_text", "MiniMaxM3VLForCausalLM", 2, head_dim=8,
                                             rotary_dim=4, num_local_experts=4, num_experts_per_tok=2,
                                             dense_intermediate_size=40, shared_intermediate_size=8,
                                             mlp_layer_types=["dense", "sparse"],
                                             layer_types=["full_attention", "minimax_m3_sparse"],
                                             index_n_heads=2, index_head_dim=6, index_block_size=4), 2, 9),
    "modernbert-decoder-default-pattern-short": (_mha(_cfg("modernbert-decoder", "ModernBertDecoderForCausalLM", 4,
                                                           local_attention=12)), 2, 5),
    # GPT-Neo's local layers mask the scores; the cache keeps every token (no sliding_window)
    "gpt_neo-local-layers-long": (_mha(_cfg("gpt_neo", "GPTNeoForCausalLM", 2, window_size=4,
                                            attention_types=[[["global", "local"], 1]])), 2, 9),
    "gpt_neox_japanese-mha": (_mha(_cfg("gpt_neox_japanese", "GPTNeoXJapaneseForCausalLM", 2)), 2, 9),
    # BERT-shaped decoders (is_decoder): keys and values of every layer, the embedding stage aside
    "electra-decoder-narrow-embeddings": (_mha(_cfg("electra", "ElectraForCausalLM", 2, embedding_size=16,
                                                    is_decoder=True)), 2, 9),
    "rembert-decoder": (_mha(_cfg("rembert", "RemBertForCausalLM", 2, input_embedding_size=16,
                                  output_embedding_size=24, is_decoder=True)), 2, 9),
    "roformer-decoder": (_mha(_cfg("roformer", "RoFormerForCausalLM", 2, embedding_size=16,
                                   is_decoder=True)), 2, 9),
    "roc_bert-decoder": (_mha(_cfg("roc_bert", "RoCBertForCausalLM", 2, pronunciation_vocab_size=30,
                                   pronunciation_embed_dim=12, shape_vocab_size=50, shape_embed_dim=8,
                                   is_decoder=True)), 2, 9),
    "xmod-decoder": (_mha(_cfg("xmod", "XmodForCausalLM", 2, languages=["en_XX", "de_DE"],
                               default_language="en_XX", is_decoder=True)), 2, 9),
    "big_bird-decoder": (_mha(_cfg("big_bird", "BigBirdForCausalLM", 2, block_size=4, num_random_blocks=1,
                                   is_decoder=True)), 2, 9),
    # Fuyu: Persimmon's cache under the patch embedding
    "fuyu-persimmon": (dict(model_type="fuyu", architectures=["FuyuForCausalLM"], patch_size=4,
                            text_config=_mha(_cfg("persimmon", "PersimmonForCausalLM", 2))), 2, 9),
    # Mllama's language model: the cross-attention layers a text-only forward skips hold nothing
    "mllama_text_model-gqa-cross-layers": (_cfg("mllama_text_model", "MllamaForCausalLM", 3,
                                                cross_attention_layers=[1]), 2, 9),
    # Moshi's text decoder: every layer slides in the cache (sliding_window, no layer_types)
    "moshi-gqa-sliding-short": (_cfg("moshi", "MoshiForCausalLM", 2, ffn_dim=80, sliding_window=16), 2, 9),
    "moshi-gqa-sliding-long": (_cfg("moshi", "MoshiForCausalLM", 2, ffn_dim=80, sliding_window=6), 2, 9),
    # MusicGen's decoder: one cache for the summed codebooks (its cross-attention unused)
    "musicgen_decoder-codebooks": (dict(model_type="musicgen_decoder", architectures=["MusicgenForCausalLM"],
                                        vocab_size=96, hidden_size=32, num_hidden_layers=2,
                                        num_attention_heads=4, ffn_dim=40, num_codebooks=2,
                                        pad_token_id=96, bos_token_id=96), 2, 9),
    "musicgen_melody_decoder-codebooks": (dict(model_type="musicgen_melody_decoder",
                                               architectures=["MusicgenMelodyForCausalLM"], vocab_size=96,
                                               hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                               ffn_dim=40, num_codebooks=2, pad_token_id=96,
                                               bos_token_id=96), 2, 9),
    "bart-decoder-alone": (_s2s("bart", "BartForCausalLM"), 2, 9),
    "whisper-decoder-alone": (_s2s("whisper", "WhisperForCausalLM", max_target_positions=24), 2, 9),
    "afmoe-default-pattern-long": (_cfg("afmoe", "AfmoeForCausalLM", 5, head_dim=8, sliding_window=4,
                                        moe_intermediate_size=8, num_experts=4, num_experts_per_tok=2,
                                        num_dense_layers=1, global_attn_every_n_layers=2), 2, 9),
    # Flint's default pattern: full attention in layers 0, 1, every i % 4 == 1 and the last
    "flint-default-pattern-short": (_cfg("flint", "FlintForCausalLM", 5, head_dim=8, sliding_window=6,
                                         moe_intermediate_size=8, shared_expert_intermediate_size=12,
                                         num_experts=4, num_experts_per_tok=2), 2, 4),
    "flint-default-pattern-long": (_cfg("flint", "FlintForCausalLM", 7, head_dim=8, sliding_window=4,
                                        moe_intermediate_size=8, shared_expert_intermediate_size=12,
                                        num_experts=4, num_experts_per_tok=2), 1, 9),
    # per-head output gates (no cache of their own): Laguna's sliding layers, Beam's default pattern
    "laguna-sliding-short": (_cfg("laguna", "LagunaForCausalLM", 3, head_dim=8, sliding_window=6, num_experts=4,
                                  num_experts_per_tok=2, moe_intermediate_size=8, shared_expert_intermediate_size=8,
                                  layer_types=["sliding_attention", "full_attention", "sliding_attention"]), 2, 4),
    "beam-default-pattern-short": (_cfg("beam", "BeamForCausalLM", 4, head_dim=8, sliding_window=6, num_experts=4,
                                        num_experts_per_tok=2, n_group=2, topk_group=1, moe_intermediate_size=8), 2, 4),
    "axk1-mla-moe-norm": (_cfg("axk1", "AXK1ForCausalLM", 2, q_lora_rank=10,
                               **{k: v for k, v in _MLA.items() if k != "first_k_dense_replace"}), 2, 9),
    # DeepSeek Sparse Attention: the indexer's own key cache beside MLA's latent
    "deepseek_v32-mla-indexer": (_cfg("deepseek_v32", "DeepseekV32ForCausalLM", 2, q_lora_rank=10, index_n_heads=3,
                                      index_head_dim=6, **_MLA), 2, 9),
    "axk2-mla-indexer-gated": (_cfg("axk2", "AXK2ForCausalLM", 2, q_lora_rank=10, index_n_heads=3, index_head_dim=6,
                                    gated_norm_rank=3, **{k: v for k, v in _MLA.items()
                                                         if k not in ("first_k_dense_replace", "n_group", "topk_group")}), 2, 9),
    "glm_moe_dsa-mla-shared-indexer": (_cfg("glm_moe_dsa", "GlmMoeDsaForCausalLM", 3, q_lora_rank=10, index_n_heads=3,
                                            index_head_dim=6, indexer_types=["full", "shared", "full"],
                                            **_MLA), 2, 9),
    # HY-V4: the same caches; its hyper-connections keep nothing between steps
    # DeepSeek-V4: sliding, CSA and HCA layers (rates 2 and 3), prompts within the window
    # (W = 8): s = 1 (no window closed), 5 (an unfinished window each), 6 (none unfinished)
    **{f"deepseek_v4-compressors-s{s}": (_cfg("deepseek_v4", "DeepseekV4ForCausalLM", 4, **_V4), 2, s)
       for s in (1, 5, 6)},
    "hy_v4-mla-indexer-hyper": (_cfg("hy_v4", "HYV4ForCausalLM", 3, q_lora_rank=10, index_n_heads=3,
                                     index_head_dim=6, hc_mult=2, indexer_types=["full", "shared", "full"],
                                     **{k: v for k, v in _MLA.items() if k != "first_k_dense_replace"}), 2, 9),
    # dots.llm3: the sliding layers' latent and rotary key at their own MLA sizes (prompts
    # within the window: the gap of a full window is not the key/value heads' here)
    "dots3_note_text-sliding-mla-window": (_cfg("dots3_note_text", "Dots3NoteForCausalLM", 4, q_lora_rank=10,
                                                index_n_heads=3, index_head_dim=6, sliding_window=7,
                                                swa_num_attention_heads=2, swa_num_key_value_heads=2,
                                                swa_kv_lora_rank=9, swa_head_dim=10, swa_qk_nope_head_dim=6,
                                                swa_v_head_dim=5, **_MLA), 2, 5),
    "dots3_note_text-no-dsa": (_cfg("dots3_note_text", "Dots3NoteForCausalLM", 3, q_lora_rank=10, use_dsa=False,
                                    sliding_window=8, **_MLA), 1, 6),
}
# encoder-decoders (issue 21 item 4): every decoder layer caches its self-attention's keys and
# values over the decoder's tokens and its cross-attention's over the encoder's (the same s
# here); transformers returns both halves in an EncoderDecoderCache
ENCODER_DECODER = {
    "bart-seq2seq": (dict(_s2s("bart", "BartForConditionalGeneration"), encoder_ffn_dim=40,
                          encoder_layers=3), 2, 9),
    "mt5-seq2seq": (dict(model_type="mt5", architectures=["MT5ForConditionalGeneration"], vocab_size=96,
                         d_model=32, d_kv=8, num_heads=4, d_ff=48, num_layers=2, num_decoder_layers=2,
                         feed_forward_proj="gated-gelu", relative_attention_num_buckets=8), 2, 9),
    "m2m_100-seq2seq": (dict(_s2s("m2m_100", "M2M100ForConditionalGeneration"), encoder_ffn_dim=40), 1, 7),
    # a sliding decoder layer within its window (s < W - 1): symcalc caches the encoder-decoder's
    # decoder at full length (t5gemma.toml's not_modelled)
    "t5gemma-seq2seq-gqa-short": (dict(model_type="t5gemma", architectures=["T5GemmaForConditionalGeneration"],
                                       vocab_size=96,
                                       **{stack: dict(vocab_size=96, hidden_size=32, intermediate_size=48,
                                                      num_hidden_layers=2, num_attention_heads=4,
                                                      num_key_value_heads=2, head_dim=8, sliding_window=6,
                                                      pad_token_id=0) for stack in ("encoder", "decoder")}),
                                  2, 4),
}
CASES.update(ENCODER_DECODER)
IDS = sorted(CASES)

_HELD: dict[str, tuple[int, list]] = {}


def transformers_cache(case: str) -> tuple[int, list]:
    """(bytes held, per-layer (cache layer class, key shape, value shape)) after one forward."""
    if case not in _HELD:
        cfg, batch, seq_len = CASES[case]
        torch.manual_seed(0)
        model = H.build_model(cfg, device="cpu", experts_implementation="eager")
        assert next(model.parameters()).dtype == torch.float32
        with torch.no_grad():
            out = model(**H.forward_inputs(model, batch, seq_len, "cpu", mask=True, use_cache=True))
        cache = out.past_key_values
        # a BERT-shaped decoder run alone (RemBERT) returns an EncoderDecoderCache: its
        # self-attention half holds the keys and values (the cross-attention half stays empty);
        # an encoder-decoder's cross-attention half follows, one layer per decoder layer
        layers = list(getattr(cache, "self_attention_cache", cache).layers)
        if case in ENCODER_DECODER:
            layers += cache.cross_attention_cache.layers
        held = sum(t.numel() * t.element_size() for t in _held_tensors(layers))
        shapes = [(type(layer).__name__, *(None if t is None else tuple(t.shape)
                                           for t in (layer.keys, layer.values))) for layer in layers]
        _HELD[case] = (held, shapes)
    return _HELD[case]


def _held_tensors(layers) -> list:
    """Every tensor the cache layers hold, each once: keys, values (DeepSeek-V4's compressor
    layers hold one tensor as both), the indexer's keys, and DeepSeek-V4's compressor states
    (DeepseekV4HCACache / DeepseekV4CSACache: compressed entries, the unfinished window's kv and
    gate, CSA's overlap series; per compressor and indexer). A KV-sharing layer's DummyLayer
    holds None."""
    out, seen = [], set()
    for layer in layers:
        tensors = [layer.keys, layer.values, getattr(layer, "indexer_keys", None),
                   getattr(layer, "idx_keys", None)]
        for name in ("compressed_kv", "buffer_kv", "buffer_gate", "overlap_kv", "overlap_gate"):
            tensors += list(getattr(layer, name, {}).values())
        for t in tensors:
            if t is not None and id(t) not in seen:
                seen.add(id(t))
                out.append(t)
    return out


def _sliding(config, i: int) -> bool:
    types = getattr(config, "layer_types", None)
    if types is not None:
        return types[i] == "sliding_attention"
    return getattr(config, "sliding_window", None) is not None


@pytest.mark.parametrize("case", IDS)
def test_what_transformers_stores(case):
    """The convention above, as a formula over the model's config, equals what the cache holds."""
    cfg, batch, seq_len = CASES[case]
    held, shapes = transformers_cache(case)
    if case in ENCODER_DECODER:
        want, want_shapes = _encoder_decoder_cache(cfg, batch, seq_len)
        assert shapes == want_shapes
        assert held == want
        return
    config = H.hf_config(cfg).get_text_config()  # (Fuyu: its Persimmon config)
    want, want_shapes = 0, []
    sharing = getattr(config, "kv_sharing_modes", None) or [None] * config.num_hidden_layers
    for i in range(config.num_hidden_layers):
        if sharing[i] == "reuse":  # Gemma 3n: reads an earlier layer's keys and values
            want_shapes.append(("DummyLayer", None, None))
            continue
        if i in (getattr(config, "cross_attention_layers", None) or ()):
            want_shapes.append(("DynamicLayer", None, None))  # Mllama: skipped without images
            continue
        if config.model_type == "deepseek_v4":  # one key/value head, the compressors' states
            want_shapes.append(_deepseek_v4_layer(config, i, batch, seq_len))
            want += _deepseek_v4_held(config, i, batch, seq_len)
            continue
        per_layer = getattr(config, "per_layer_config", None)
        layer = per_layer[i] if per_layer is not None else config
        if getattr(layer, "kv_lora_rank", None):  # MLA: the latent and the shared rotary key
            # (dots.llm3: at the layer's own sizes, a sliding layer within its window, no
            # indexer in a full_attention layer)
            kind_of = (getattr(config, "layer_types", None) or [None] * config.num_hidden_layers)[i]
            tokens, kind = seq_len, "DynamicLayer"
            if kind_of == "sliding_attention":
                tokens, kind = min(seq_len, config.sliding_window - 1), "DynamicSlidingWindowLayer"
            elif getattr(config, "index_n_heads", None) and kind_of != "full_attention":
                kind = "DynamicIndexedLayer"  # DSA: the indexer's keys, where it runs
                if (getattr(config, "indexer_types", None) or ["full"] * (i + 1))[i] == "full":
                    want += 4 * batch * seq_len * config.index_head_dim
            k, v = (batch, 1, tokens, layer.kv_lora_rank), (batch, 1, tokens, layer.qk_rope_head_dim)
        else:
            slides = _sliding(config, i)
            tokens = min(seq_len, config.sliding_window - 1) if slides else seq_len
            head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
            kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
            k = v = (batch, kv_heads, tokens, head_dim)
            kind = "DynamicSlidingWindowLayer" if slides else "DynamicLayer"
            if (getattr(config, "layer_types", None) or [None] * (i + 1))[i] == "minimax_m3_sparse":
                kind = "MiniMaxM3VLSparseCacheLayer"  # MiniMax-M3: the indexer's keys too
                want += 4 * batch * seq_len * config.index_head_dim
        want_shapes.append((kind, k, v))
        want += 4 * (torch.Size(k).numel() + torch.Size(v).numel())  # fp32
    assert shapes == want_shapes
    assert held == want


def _deepseek_v4_layer(config, i: int, batch: int, seq_len: int) -> tuple:
    """DeepSeek-V4's layer i: its sliding window of the one key/value head (W - 1 tokens at
    most), in a DynamicSlidingWindowLayer or its compressor's cache layer."""
    kind = {"sliding_attention": "DynamicSlidingWindowLayer",
            "compressed_sparse_attention": "DeepseekV4CSACache",
            "heavily_compressed_attention": "DeepseekV4HCACache"}[config.layer_types[i]]
    k = (batch, 1, min(seq_len, config.sliding_window - 1), config.head_dim)
    return kind, k, k


def _deepseek_v4_held(config, i: int, batch: int, seq_len: int) -> int:
    """fp32 bytes of DeepSeek-V4's layer i after one forward of seq_len tokens: a sliding layer
    keeps keys and values apart, a compressor's layer one tensor for both, plus per compressor
    (and, in a CSA layer, its indexer's) the floor(s / m) entries, kv and gate of the s mod m
    unfinished tokens (two series in CSA) and, once a CSA window closed, its overlap series."""
    kind = config.layer_types[i]
    window = min(seq_len, config.sliding_window - 1) * config.head_dim
    if kind == "sliding_attention":
        return 4 * batch * 2 * window
    m = config.compress_rates[kind]
    series = 2 if kind == "compressed_sparse_attention" else 1
    widths = [config.head_dim] + ([config.index_head_dim] if series == 2 else [])
    held = window
    for w in widths:
        held += (seq_len // m) * w + 2 * (seq_len % m) * series * w
        held += 2 * m * w if series == 2 and seq_len >= m else 0
    return 4 * batch * held


def _encoder_decoder_cache(cfg: dict, batch: int, seq_len: int) -> tuple[int, list]:
    """The convention for an encoder-decoder: the decoder's self-attention layers (sliding
    ones within W - 1 tokens), then one cross-attention layer per decoder layer over the
    encoder's seq_len tokens, each at the decoder's key/value heads and head width."""
    config = H.hf_config(cfg)
    config = getattr(config, "decoder", None) or config  # (T5Gemma: its decoder's module config)
    layers = (getattr(config, "num_decoder_layers", None) or getattr(config, "decoder_layers", None)
              or config.num_hidden_layers)
    heads = getattr(config, "decoder_attention_heads", None) or config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    self_half, cross_half = [], []
    for i in range(layers):
        slides = getattr(config, "layer_types", None) is not None and _sliding(config, i)
        tokens = min(seq_len, config.sliding_window - 1) if slides else seq_len
        k = (batch, kv_heads, tokens, head_dim)
        self_half.append(("DynamicSlidingWindowLayer" if slides else "DynamicLayer", k, k))
        cross_half.append(("DynamicLayer", (batch, kv_heads, seq_len, head_dim),
                           (batch, kv_heads, seq_len, head_dim)))
    shapes = self_half + cross_half
    return sum(4 * 2 * torch.Size(k).numel() for _, k, _ in shapes), shapes


def test_sliding_layers_keep_window_minus_one_tokens():
    """At s == W a sliding layer already holds W - 1 tokens, a full layer s."""
    _, shapes = transformers_cache("mistral-all-sliding-at-window")
    assert {s[1][2] for s in shapes} == {5}  # W = 6
    _, shapes = transformers_cache("gemma2-alternating-long")  # W = 4, s = 9
    assert [s[1][2] for s in shapes] == [3, 9, 3, 9]


def test_mla_caches_the_latent():
    _, shapes = transformers_cache("deepseek_v3-mla-q-lora")
    r_kv, d_rope = _MLA["kv_lora_rank"], _MLA["qk_rope_head_dim"]
    assert all(k[1:] == (1, 9, r_kv) and v[1:] == (1, 9, d_rope) for _, k, v in shapes)


# Where symcalc deliberately differs from transformers' dynamic cache (docs/conventions.md):
# symcalc caps a sliding layer at W tokens, the window's definition and Mistral's rolling
# buffer (algebra/memory.py cached_layer_tokens: Min(s, W)); transformers'
# DynamicSlidingWindowLayer keeps the last W - 1 (the new token is the W-th key). Asserted as
# an exact relation in test_symcalc_window_gap_is_one_token_per_sliding_layer.
WINDOW_DEVIATION = ("gemma3n_text-shared-kv-long", "mistral-all-sliding-at-window", "mistral-all-sliding-long",
                    "gemma2-alternating-long", "gpt_oss-layer-types-long",
                    "qwen2-max-window-layers-long", "olmo3-default-pattern-long",
                    "cohere2-default-pattern-long", "cohere2-legacy-pattern-2-long",
                    "smollm3-nope-layers-slide-long", "smollm3-layer-types-without-switch-long",
                    "exaone4-default-pattern-long", "cohere2_moe-dense-prefix-long",
                    "granite_swa-default-pattern-long", "vaultgemma-alternating-long",
                    "ministral-layer-types-long", "kolibri1-default-pattern-long", "afmoe-default-pattern-long",
                    "flint-default-pattern-long", "moshi-gqa-sliding-long")


@pytest.mark.parametrize("case", [c for c in IDS if c not in WINDOW_DEVIATION])
def test_symcalc_kv_cache_equals_transformers(case):
    cfg, batch, seq_len = CASES[case]
    held, _ = transformers_cache(case)
    assert sympy_number("memory.kv_cache_bytes", spec_from_config(cfg),
                        Options(batch=batch, seq_len=seq_len, kv_dtype="fp32")) == held


def test_window_deviation_list_is_exactly_the_full_windows():
    """The deviation shows exactly where a sliding layer's cache is full (s >= W)."""
    full = {c for c in IDS if CASES[c][0].get("sliding_window")
            and CASES[c][2] >= CASES[c][0]["sliding_window"]}
    assert full == set(WINDOW_DEVIATION)


def _sliding_layers(case: str) -> int:
    return sum(kind == "DynamicSlidingWindowLayer" for kind, _, _ in transformers_cache(case)[1])


@pytest.mark.parametrize("case", WINDOW_DEVIATION)
def test_symcalc_window_gap_is_one_token_per_sliding_layer(case):
    """symcalc holds exactly one token more than transformers in each sliding layer (W, not
    W - 1) -- so its count of sliding layers (L_local) and its widths are right."""
    cfg, batch, seq_len = CASES[case]
    held, shapes = transformers_cache(case)
    _, (b, n_kv, _, d_h), _ = shapes[0]
    got = sympy_number("memory.kv_cache_bytes", spec_from_config(cfg),
                       Options(batch=batch, seq_len=seq_len, kv_dtype="fp32"))
    assert got - held == _sliding_layers(case) * 2 * b * n_kv * d_h * 4


@pytest.mark.parametrize("case", [c for c in IDS if "-mla-" in c])
def test_symcalc_mla_latent_option_is_what_transformers_caches(case):
    cfg, batch, seq_len = CASES[case]
    assert sympy_number("memory.kv_cache_bytes", spec_from_config(cfg),
                        Options(batch=batch, seq_len=seq_len, kv_dtype="fp32", mla_cache="latent")) \
        == transformers_cache(case)[0]


FALCON_NEW_ARCH = {"model_type": "falcon", "architectures": ["FalconForCausalLM"],
                   "vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 2,
                   "num_attention_heads": 4, "num_kv_heads": 2,
                   "new_decoder_architecture": True, "bias": False}


def test_falcon_new_architecture_caches_keys_repeated_to_every_head():
    """The other named deviation: Falcon's new decoder architecture writes keys and values to
    the cache after repeating them to n_h heads, so transformers holds n_h / n_kv times the
    n_kv heads symcalc counts (what the attention needs)."""
    torch.manual_seed(0)
    model = H.build_model(FALCON_NEW_ARCH, device="cpu", experts_implementation="eager")
    with torch.no_grad():
        out = model(**H.forward_inputs(model, 2, 7, "cpu", mask=True, use_cache=True))
    held = sum(t.numel() * t.element_size() for layer in out.past_key_values.layers
               for t in (layer.keys, layer.values))
    spec = spec_from_config(FALCON_NEW_ARCH)
    rep = report(spec, Options(batch=2, seq_len=7, kv_dtype="fp32"))
    assert spec.n_kv == 2 and spec.n_h == 4
    assert held == rep["memory"]["kv_cache_bytes"] * spec.n_h // spec.n_kv


@pytest.mark.parametrize("context", [3, 4, 5, 9])
def test_deepseek_v4_decode_step_flops_equal_flop_counter(context):
    """One decoded token after a prefill of ``context`` tokens (W = 6, CSA and HCA rates 2 and 3):
    FlopCounterMode over the cached step equals symcalc's flops.decode_per_token -- the window
    (W - 1 cached keys and the new one), every compressed entry floor((context + 1) / m) and the
    CSA indexer's scores against its compressed keys, besides the projections of one token."""
    cfg = _cfg("deepseek_v4", "DeepseekV4ForCausalLM", 4, **dict(_V4, sliding_window=6))
    assert sympy_number("flops.decode_per_token", spec_from_config(cfg),
                        Options(batch=2, seq_len=1, context=context)) == \
        _decode_step_flops(cfg, context)


def _decode_step_flops(cfg: dict, context: int) -> int:
    """FlopCounterMode's count of one decoded token per sequence (batch 2) after a prefill of
    ``context`` tokens, through the cache the prefill left."""
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    model = H.build_model(cfg, device="cpu", experts_implementation="eager")
    ids = torch.randint(0, cfg["vocab_size"], (2, context + 1))
    counter = FlopCounterMode(display=False)
    with torch.no_grad():
        cache = model(input_ids=ids[:, :context], use_cache=True).cache
        with counter:
            model(input_ids=ids[:, context:], cache=cache, use_cache=True)
    return counter.get_total_flops()


@pytest.mark.parametrize("context", [3, 8])
def test_minimax_m3_decode_step_flops_equal_flop_counter(context):
    """One decoded token after a prefill of ``context`` tokens through MiniMax-M3's
    sparse-attention layer: FlopCounterMode over the cached step equals symcalc's
    flops.decode_per_token -- the indexer's projections of the one token and its queries
    against every cached indexer key (context + 1), besides the attention and MLPs."""
    cfg = CASES["minimax_m3_vl_text-sparse-layer"][0]
    assert sympy_number("flops.decode_per_token", spec_from_config(cfg),
                        Options(batch=2, seq_len=1, context=context)) == \
        _decode_step_flops(cfg, context)

"""Every sympy symbol symcalc uses, created once, with its meaning and LaTeX name.

Two kinds of symbol live here:

* **sizes** (``L``, ``d``, ``n_h`` ...): positive integers that describe a model's
  dimensions or a workload (batch, sequence length). Their names are the canonical names
  that appear in sympy output (``12*L*d**2``) and are part of the public contract.
* **switches**: 0/1 indicators (and a few small rational conventions) that turn a
  component on or off. Expressions are built with them as symbols so that one polynomial
  per model shape covers every architecture; for display they are replaced by their values
  first, so a closed form never shows a switch that is off.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional

import sympy


@dataclass(frozen=True)
class SymbolInfo:
    name: str
    meaning: str
    latex: str
    symbol: sympy.Symbol


def _size(name: str, meaning: str, latex: str) -> SymbolInfo:
    return SymbolInfo(name, meaning, latex, sympy.Symbol(name, positive=True, integer=True))


def _count(name: str, meaning: str, latex: str) -> SymbolInfo:
    """A layer count that may be zero (a layer group that is empty in some models)."""
    return SymbolInfo(name, meaning, latex, sympy.Symbol(name, nonnegative=True, integer=True))


def _switch(name: str, meaning: str, latex: str) -> SymbolInfo:
    return SymbolInfo(name, meaning, latex, sympy.Symbol(name, nonnegative=True, integer=True))


SIZES: dict[str, SymbolInfo] = {
    info.name: info
    for info in (
        _size("L", "layers (encoder layers for encoder-decoder models)", "L"),
        _size("L_dec", "decoder layers of an encoder-decoder model", "L_{\\mathrm{dec}}"),
        _size("d", "hidden size d_model", "d"),
        _size("d_ff", "FFN intermediate width", "d_{\\mathrm{ff}}"),
        _size("n_h", "attention (query) heads", "n_h"),
        _size("n_kv", "key/value heads", "n_{\\mathrm{kv}}"),
        _size("d_h", "head dimension", "d_h"),
        _size("V", "vocabulary size", "V"),
        _size("P", "learned position table size", "P"),
        _size("T", "token-type vocabulary", "T"),
        _size("V_ent", "entities in LUKE's entity vocabulary", "V_{\\mathrm{ent}}"),
        _size("d_ent", "width of LUKE's entity embeddings", "d_{\\mathrm{ent}}"),
        _size("d_ph", "width of the two-layer MLP before the decoder of UltraBERT's prediction "
              "head", "d_{\\mathrm{ph}}"),
        _size("P_2d", "rows of each of LayoutLM's four 2D position tables (box x, y, height, "
              "width)", "P_{\\mathrm{2D}}"),
        _size("E", "MoE experts per layer", "E"),
        _size("k", "experts active per token", "k"),
        _size("R", "relative-attention buckets", "R"),
        _size("s", "sequence length", "s"),
        _size("s_dec", "decoder sequence length", "s_{\\mathrm{dec}}"),
        _size("b", "batch size", "b"),
        _size("W", "sliding attention window", "W"),
        _size("B_l", "block length of an encoder's local attention (LongT5: local_radius + 1)",
              "B_{\\ell}"),
        _size("d_moe", "expert FFN width (moe_intermediate_size)", "d_{\\mathrm{moe}}"),
        _size("E_s", "shared experts per MoE layer", "E_s"),
        _size("d_sh", "width of each shared expert", "d_{\\mathrm{sh}}"),
        _size("Z_e", "zero-computation (identity) experts per MoE layer", "Z_e"),
        _count("L_dense", "layers with a dense FFN in an MoE stack", "L_{\\mathrm{dense}}"),
        _count("L_local", "sliding-window layers of a mixed stack", "L_{\\mathrm{local}}"),
        _size("r_q", "MLA query low rank (q_lora_rank)", "r_q"),
        _size("r_kv", "MLA key/value latent rank (kv_lora_rank)", "r_{\\mathrm{kv}}"),
        _size("d_nope", "MLA non-rotary query/key head dim", "d_{\\mathrm{nope}}"),
        _size("d_rope", "MLA decoupled rotary head dim", "d_{\\mathrm{rope}}"),
        _size("d_v", "value head dim where it differs from d_h (MLA, MiMo-V2-Flash)", "d_v"),
        _size("d_emb", "token-embedding width where it differs from d (OPT)", "d_{\\mathrm{emb}}"),
        _size("d_out", "head input width (RemBERT's output_embedding_size)", "d_{\\mathrm{out}}"),
        # hybrid stacks: layer groups by mixer, and the sizes of the non-attention mixers
        _count("L_attn", "layers with softmax attention (L unless the stack is hybrid)",
               "L_{\\mathrm{attn}}"),
        _count("L_lin", "layers with a linear-attention mixer", "L_{\\mathrm{lin}}"),
        _count("L_ssm", "layers with a state-space (Mamba) mixer", "L_{\\mathrm{ssm}}"),
        _count("L_conv", "layers with a short-convolution mixer (LFM2)", "L_{\\mathrm{conv}}"),
        _count("L_ffn", "layers with an FFN, dense or MoE (L unless some blocks have none)",
               "L_{\\mathrm{ffn}}"),
        _size("n_lk", "linear-attention query/key heads", "n_{\\mathrm{lk}}"),
        _size("n_lv", "linear-attention value heads", "n_{\\mathrm{lv}}"),
        _size("d_lk", "linear-attention query/key head dim", "d_{\\mathrm{lk}}"),
        _size("d_lv", "linear-attention value head dim", "d_{\\mathrm{lv}}"),
        _size("K_conv", "depthwise causal convolution kernel width", "K_{\\mathrm{conv}}"),
        _size("d_in", "Mamba inner width (expand x d)", "d_{\\mathrm{in}}"),
        _size("N_s", "SSM state size per channel (d_state)", "N_s"),
        _size("G_s", "Mamba-2 groups sharing B and C (n_groups)", "G_s"),
        _size("H_s", "Mamba-2 heads", "H_s"),
        _size("R_dt", "Mamba-1 rank of the time-step projection (dt_rank)", "R_{\\Delta}"),
        _size("Q_c", "chunk length of a chunked scan (Mamba-2 chunk_size; 64 for linear "
              "attention in transformers)", "Q_c"),
        # Gemma 3n: AltUp streams, LAuReL rank, per-layer inputs, KV sharing, per-layer FFN widths
        _size("n_alt", "AltUp streams (copies of the hidden state)", "n_{\\mathrm{alt}}"),
        _size("r_laurel", "LAuReL low-rank residual width", "r_{\\mathrm{lr}}"),
        _size("d_ple", "width of each layer's per-layer input", "d_{\\mathrm{ple}}"),
        _size("V_ple", "rows of the per-layer input table", "V_{\\mathrm{ple}}"),
        _count("L_kv_shared", "last attention layers that reuse an earlier layer's keys and "
               "values (no k/v projections, no cache)", "L_{\\mathrm{kvs}}"),
        _count("L_kv_shared_local", "sliding-window layers among the L_kv_shared",
               "L_{\\mathrm{kvs,loc}}"),
        _size("d_ff_sum", "dense-FFN width summed over the layers when they differ",
              "D_{\\mathrm{ff}}"),
        # the global layers of a mixed sliding/global stack with their own attention shape
        _size("d_hg", "head dimension of the global (non-sliding) attention layers",
              "d_{h,\\mathrm{g}}"),
        _size("n_kvg", "key/value heads of the global (non-sliding) attention layers",
              "n_{\\mathrm{kv,g}}"),
        # their widths summed over the layers (spec.toml's [values]: the rows stay short)
        _size("S_q", "query head widths summed over the attention layers (d_h or d_hg each)",
              "S_q"),
        _size("S_k", "key widths n_kv d_h summed over the layers computing keys", "S_k"),
        _size("S_v", "value widths n_kv d_h summed over the layers with a v projection", "S_v"),
        _size("S_kn", "key head widths summed over the layers computing keys", "S_{kn}"),
        _size("S_o", "value head widths summed over the attention layers", "S_o"),
        _size("A_l", "a sliding layer's query/key plus value head width", "A_l"),
        _size("A_g", "a global layer's query/key plus value head width", "A_g"),
        # a sparse-attention indexer: DeepSeek's beside MLA, MiniMax-M3's beside GQA
        _size("n_ih", "indexer heads of a sparse-attention indexer (DeepSeek's, MiniMax-M3's: "
              "index_n_heads)", "n_{\\mathrm{ih}}"),
        _size("d_ih", "indexer head dim of a sparse-attention indexer (DeepSeek's, MiniMax-M3's: "
              "index_head_dim)",
              "d_{\\mathrm{ih}}"),
        _size("r_g", "rank of the low-rank MLP gating a norm's output (A.X-K2's gated_norm_rank)",
              "r_g"),
        _size("d_g", "width of each head's attention output gate: d_h, or 1 for one scalar per "
              "head (LFM3, Laguna)", "d_g"),
        _count("L_idx", "attention layers that run their own indexer (GLM-5's shared layers "
               "reuse an earlier layer's selection; MiniMax-M3's full-attention layers run none)",
               "L_{\\mathrm{idx}}"),
        # Zamba's shared attention+MLP blocks: the hybrid layers run them, B_sh copies hold
        # the weights; their attention reads the hidden state and the embeddings concatenated
        _size("d_ai", "input width of the attention projections (Zamba: the hidden state and "
              "the embeddings concatenated, 2d)", "d_{\\mathrm{ai}}"),
        _count("L_attn_w", "attention blocks holding weights of their own (L_attn unless the "
               "layers share blocks: Zamba's B_sh)", "L_{\\mathrm{attn,w}}"),
        _count("L_ffn_w", "FFN blocks holding weights of their own (L_ffn unless the layers "
               "share blocks: Zamba's B_sh)", "L_{\\mathrm{ffn,w}}"),
        _size("d_bk", "width of each block of the RG-LRU's block-diagonal gates (RecurrentGemma: "
              "lru_width // num_attention_heads)", "d_{\\mathrm{bk}}"),
        # DeBERTa-v2: the disentangled attention's span, 2 K_rel relative-position embeddings
        _size("K_rel", "relative distances on each side of DeBERTa's disentangled attention "
              "(its table holds 2 K_rel embeddings)", "K_{\\mathrm{rel}}"),
        # Inkling: relative-position logits, a bank of d_rel profiles per attention layer
        _size("d_rel", "width of each head's relative-position state (Inkling's d_rel)",
              "d_{\\mathrm{rel}}"),
        _count("X_rel", "backward distances of the relative-position logits summed over the "
               "attention layers (Inkling: the window in a sliding layer, rel_extent in a global "
               "one)", "X_{\\mathrm{rel}}"),
        # Inkling 2: block attention residuals (learned queries over stacked block outputs)
        _count("Q_in", "learned input queries of the block attention residuals (Inkling 2: one "
               "per MLP input, one or three per attention input, one before the final norm)",
               "Q_{\\mathrm{in}}"),
        _count("X_res", "stacked states the block attention residuals' queries read, summed over "
               "every query (Inkling 2)", "X_{\\mathrm{res}}"),
        # HY-V4: hyper-connections
        _size("n_hc", "residual streams of the hyper-connections (HY-V4's hc_mult)",
              "n_{\\mathrm{hc}}"),
        # Qwen4-Exp: gated residuals (a low-rank input mixer over the streams), the QSA
        # indexer's key blocks, the hashed n-gram per-layer embeddings (PLE)
        _size("r_hc", "rank of each gated residual's input mixer over the n_hc streams "
              "(Qwen4-Exp's hc_lowrank)", "r_{\\mathrm{hc}}"),
        _size("C_ix", "tokens averaged into one key block of the QSA indexer (Qwen4-Exp's "
              "indexer_compress_ratio)", "C_{\\mathrm{ix}}"),
        _count("L_ple", "layers with an n-gram per-layer embedding (Qwen4-Exp's ple_layer_ids)",
               "L_{\\mathrm{ple}}"),
        _size("V_ng", "rows of the hashed n-gram tables summed over the PLE layers (each padded "
              "to make_ngram_vocab_size_divisible_by)", "V_{\\mathrm{ng}}"),
        _size("d_ng", "width of each n-gram table row (ple_embed_dim over the n-gram heads)",
              "d_{\\mathrm{ng}}"),
        _size("d_pe", "width of a PLE layer's concatenated n-gram embedding (ple_embed_dim)",
              "d_{\\mathrm{pe}}"),
        _size("K_pe", "kernel width of a PLE layer's dilated depthwise convolution "
              "(ple_conv_kernel_size)", "K_{\\mathrm{pe}}"),
        _size("N_g", "largest n-gram order of the PLE tables (ngram_size; the convolution's "
              "dilation)", "N_{\\mathrm{g}}"),
        # DeepSeek-V4: KV compressors (CSA, HCA) and the grouped output projection
        _size("m_csa", "source tokens per compressed entry of the compressed sparse attention "
              "layers (DeepSeek-V4's CSA compress rate m)", "m_{\\mathrm{csa}}"),
        _size("m_hca", "source tokens per compressed entry of the heavily compressed attention "
              "layers (DeepSeek-V4's HCA compress rate m')", "m_{\\mathrm{hca}}"),
        _count("L_csa", "attention layers with a compressed sparse attention (CSA) compressor "
               "and its indexer (DeepSeek-V4)", "L_{\\mathrm{csa}}"),
        _count("L_hca", "attention layers with a heavily compressed attention (HCA) compressor "
               "(DeepSeek-V4)", "L_{\\mathrm{hca}}"),
        _size("g_o", "head groups of the grouped output projection (DeepSeek-V4's o_groups)",
              "g_{\\mathrm{o}}"),
        _size("r_o", "rank of each group of the grouped output projection (DeepSeek-V4's "
              "o_lora_rank)", "r_{\\mathrm{o}}"),
        # ZAYA: compressed convolutional attention and an MLP router
        _size("K_g", "kernel width of the grouped convolution mixing queries and keys (ZAYA's "
              "cca_time1; the depthwise one's is K_conv)", "K_{\\mathrm{g}}"),
        _size("d_r", "width of the router's own hidden state (ZAYA's router_hidden_size)",
              "d_{\\mathrm{r}}"),
        _size("r_ad", "rank of the per-use low-rank adapters of a shared block (Zamba2's "
              "adapter_rank)", "r_{\\mathrm{ad}}"),
        # RoCBERT: pronunciation and shape tables beside the word table, concatenated to it
        _size("V_pr", "pronunciation vocabulary (RoCBERT)", "V_{\\mathrm{pr}}"),
        _size("d_pr", "pronunciation embedding width (RoCBERT)", "d_{\\mathrm{pr}}"),
        _size("V_sp", "shape vocabulary (RoCBERT)", "V_{\\mathrm{sp}}"),
        _size("d_sp", "shape embedding width (RoCBERT)", "d_{\\mathrm{sp}}"),
        # Mllama's language model: cross-attention layers a text-only forward skips, and token
        # rows beyond the head's vocabulary
        _count("L_x", "layers skipped without cross-attention states (Mllama)", "L_{\\mathrm{x}}"),
        # Gemma 4's assistant: the target model's width (0: no such model)
        _count("d_bb", "width of the target model an assistant drafts for (Gemma 4: 2 d_bb in, "
               "d_bb out)", "d_{\\mathrm{bb}}"),
        # dots.llm3: the sliding layers' own MLA shape
        _size("n_hw", "query heads of the sliding MLA layers (dots.llm3)", "n_{h,w}"),
        _size("r_qw", "query latent rank of the sliding MLA layers", "r_{q,w}"),
        _size("r_kvw", "key/value latent rank of the sliding MLA layers", "r_{\\mathrm{kv},w}"),
        _size("d_nw", "non-rotary query/key head dim of the sliding MLA layers",
              "d_{\\mathrm{nope},w}"),
        _size("d_rw", "rotary query/key head dim of the sliding MLA layers", "d_{\\mathrm{rope},w}"),
        _size("d_vw", "value head dim of the sliding MLA layers", "d_{v,w}"),
        _count("V_c", "centroids that choose the head rows scored (Gemma 4 assistant)",
               "V_{\\mathrm{c}}"),
        _count("V_sel", "head rows scored per token under centroids (Gemma 4 assistant)",
               "V_{\\mathrm{sel}}"),
        _count("V_x", "token rows beyond the head's vocabulary (Mllama: 8)",
               "V_{\\mathrm{x}}"),
        # MusicGen's decoder: parallel codebooks, each with its token table and head
        _size("K_cb", "parallel codebooks, a token table and head each (MusicGen)", "K_{\\mathrm{cb}}"),
        # X-MOD: per-language bottleneck adapters after each layer's FFN
        _size("n_ad", "adapters per layer, one per language (X-MOD)", "n_{\\mathrm{ad}}"),
        _size("d_ad", "adapter bottleneck width (X-MOD)",
              "d_{\\mathrm{ad}}"),
        _count("d_cat", "channels concatenated before the input map (RoCBERT)", "d_{\\mathrm{cat}}"),
        _size("N_d", "data-parallel ranks", "N_d"),
        _size("t", "tensor-parallel degree", "t"),
        # parallel layouts (symcalc.algebra.parallel): the degrees of each dimension, the
        # pipeline's schedule, and one stage of it
        _size("p", "pipeline-parallel stages", "p"),
        _size("v", "model chunks per pipeline rank (virtual stages of the interleaved "
              "schedule; 1 for 1F1B)", "v"),
        _size("m", "microbatches per step on each pipeline", "m"),
        _size("e", "expert-parallel degree (ranks the routed experts are spread over)", "e"),
        _size("t_e", "tensor-parallel degree inside each expert (expert tensor parallelism)",
              "t_e"),
        _size("c", "context-parallel degree (ranks the sequence is split over)", "c"),
        _count("i_p", "index of a pipeline stage (0 is the first)", "i_p"),
    )
}

SWITCHES: dict[str, SymbolInfo] = {
    info.name: info
    for info in (
        _switch("sw_bias_q", "query projection has a bias", "\\beta_q"),
        _switch("sw_bias_k", "key projection has a bias", "\\beta_k"),
        _switch("sw_bias_v", "value projection has a bias", "\\beta_v"),
        _switch("sw_bias_o", "output projection has a bias", "\\beta_o"),
        _switch("sw_attn_out", "attention has an output projection", "\\omega"),
        _switch("sw_gated", "FFN is gated (three matrices)", "\\gamma"),
        _switch("sw_ffn_bias", "FFN linear layers have biases", "\\beta_f"),
        _switch("sw_down_bias", "only the FFN's down projection has a bias (GTE)",
                "\\beta_{f,\\mathrm{down}}"),
        _switch("sw_norm_w", "norms have a weight (scale) vector", "\\nu_w"),
        _switch("sw_norm_b", "norms have a bias vector", "\\nu_b"),
        _switch("sw_final_norm", "a norm after the last layer", "\\phi"),
        _switch("sw_emb_norm", "a norm after the embeddings", "\\epsilon_n"),
        _switch("sw_tok_emb", "token embedding table", "\\tau"),
        _switch("sw_pos_emb", "learned position table", "\\pi"),
        _switch("sw_type_emb", "token-type embedding table", "\\theta"),
        _switch("sw_rel_bias", "relative-attention bias table", "\\rho"),
        _switch("sw_lblk", "the encoder attends locally: each block of B_l queries to 3 B_l keys "
                           "(LongT5)", "\\lambda_b"),
        _switch("sw_rel_layers", "every layer's self-attention holds its own relative-attention "
                                 "bias table (UMT5)", "\\rho_{\\ell}"),
        _switch("sw_head", "an output head (projection to the vocabulary)", "\\eta"),
        _switch("sw_head_untied", "output head has its own weight (untied)", "\\eta_u"),
        _switch("sw_head_bias", "output head has a bias", "\\eta_b"),
        _switch("sw_pooler", "BERT pooler (dense d x d with bias on the first token)", "\\kappa"),
        _switch("sw_mlm", "BERT masked-LM head transform", "\\mu"),
        _switch("sw_ent", "LUKE's entity embeddings: a V_ent x d_ent table with its own position "
                "and token-type tables and norm", "\\epsilon_{\\mathrm{ent}}"),
        _switch("sw_entp", "LUKE's entity embeddings projected d_ent -> d (narrower than d)",
                "\\epsilon_{\\mathrm{proj}}"),
        _switch("sw_entq", "three more query projections per layer for entity-aware attention "
                "(LUKE)", "\\epsilon_{q}"),
        _switch("sw_enth", "LUKE's entity prediction head: a transform d -> d_ent with a norm and "
                "an entity bias, its decoder tied to the entity table", "\\epsilon_{h}"),
        _switch("sw_entu", "LUKE's entity decoder holds its own V_ent x d_ent weight (untied)",
                "\\epsilon_{u}"),
        _switch("sw_hmlp", "a two-layer MLP, d -> d_ph -> d without biases, before the decoder "
                "(UltraBERT's prediction head)", "\\mu_{\\mathrm{ph}}"),
        _switch("sw_fnob", "the final LayerNorm has no bias, unlike the layers' (ESM C)",
                "\\phi_{\\mathrm{nb}}"),
        _switch("sw_box", "LayoutLM's four 2D position tables of the token boxes",
                "\\beta_{\\mathrm{box}}"),
        _switch("sw_dis", "DeBERTa's disentangled attention: a table of 2 K_rel "
                "relative-position embeddings shared by the layers", "\\delta_{\\mathrm{rel}}"),
        _switch("sw_disn", "a LayerNorm for DeBERTa's relative-position table",
                "\\delta_{\\mathrm{norm}}"),
        _switch("sw_c2p", "content-to-position scores: the queries against the projected "
                "relative-position keys (DeBERTa's c2p)", "\\delta_{\\mathrm{c2p}}"),
        _switch("sw_p2c", "position-to-content scores: the keys against the projected "
                "relative-position queries (DeBERTa's p2c)", "\\delta_{\\mathrm{p2c}}"),
        _switch("sw_dsh", "the relative-position table is projected by the layer's own key and "
                "query projections (DeBERTa's share_att_key)", "\\delta_{\\mathrm{sh}}"),
        _switch("sw_dpk", "a projection of its own for the relative-position keys in every "
                "layer (DeBERTa's pos_key_proj)", "\\delta_{\\mathrm{pk}}"),
        _switch("sw_dpkb", "a bias on the relative-position key projection (DeBERTa-v2's "
                "pos_key_proj; v1's pos_proj has none)", "\\delta_{\\mathrm{pkb}}"),
        _switch("sw_dv1", "DeBERTa v1's span: min(s, K_rel) relative distances each side",
                "\\delta_{\\mathrm{v1}}"),
        _switch("sw_dpq", "a projection of its own for the relative-position queries in every "
                "layer (DeBERTa's pos_query_proj)", "\\delta_{\\mathrm{pq}}"),
        _switch("sw_vconv", "a depthwise convolution of width K_conv over each head's values, "
                "added to the context (Nystromformer)", "\\kappa_v"),
        _switch("sw_contact", "ESM's contact-prediction regression over every layer's attention "
                "maps (L n_h + 1 parameters)", "\\gamma_{\\mathrm{ct}}"),
        _switch("sw_router", "MoE layers (router d x E, experts)", "\\varrho"),
        _switch("sw_router_bias", "MoE router has a bias", "\\varrho_b"),
        _switch("sw_expert_bias", "MoE experts' matrices have biases", "\\beta_e"),
        _switch("sw_shared", "MoE layers have shared experts", "\\sigma"),
        _switch("sw_moe_width", "experts have their own width d_moe (else d_ff)", "\\mu_e"),
        _switch("sw_sh_width", "shared experts have their own width d_sh (else the experts')",
                "\\mu_s"),
        _switch("sw_shared_gate", "sigmoid gate on the shared expert (d x 1)", "\\sigma_g"),
        _switch("sw_mla", "multi-head latent attention", "\\lambda"),
        _switch("sw_q_lora", "MLA queries through a low-rank r_q", "\\lambda_q"),
        _switch("sw_qk_head", "one q and one k norm of width d_h", "\\nu_h"),
        _switch("sw_qk_bias", "the q and k norms have biases too (Phi, Persimmon)", "\\nu_q"),
        _switch("sw_qk_all", "q and k norms over all heads (n_h d_h, n_kv d_h)", "\\nu_a"),
        _switch("sw_norm_attn_in", "a norm before attention", "\\nu_1"),
        _switch("sw_norm_ffn_in", "a norm before the FFN", "\\nu_2"),
        _switch("sw_norm_attn_out", "a norm after attention", "\\nu_3"),
        _switch("sw_norm_ffn_out", "a norm after the FFN", "\\nu_4"),
        _switch("sw_sinks", "attention-sink logits, one per head", "\\varsigma"),
        _switch("sw_proj_emb", "embeddings of width d_emb projected in and out", "\\psi"),
        _switch("sw_emb_stage", "embeddings d_emb wide, one biased map into d (ELECTRA)", "\\psi_e"),
        _switch("sw_d_out", "masked-LM transform and head d_out wide (RemBERT)", "\\psi_o"),
        _switch("sw_side", "pronunciation and shape tables (RoCBERT)",
                "\\tau_s"),
        _switch("sw_cat", "biased input map of concatenated embeddings (RoCBERT)", "\\tau_c"),
        _switch("sw_adapter", "language adapters after each FFN (X-MOD)", "\\alpha_l"),
        _switch("sw_ad_norm", "the adapters' own LayerNorm (X-MOD)", "\\alpha_n"),
        _switch("sw_skip", "skipped cross-attention layers, parameters only (Mllama)", "\\xi_l"),
        _switch("sw_rot_table", "rotary table held as a P x d_h parameter (RoFormer)", "\\rho_t"),
        _switch("sw_window", "a sliding window W caps some layers' cache", "\\omega_w"),
        _switch("sw_window_all", "every layer slides (else L_local of them)", "\\omega_a"),
        _switch("sw_attn_gate", "attention output gated by a second query-wide projection",
                "\\gamma_o"),
        _switch("sw_gate_bias", "the attention's output gate has a bias (as the query)",
                "\\beta_g"),
        _switch("sw_gate_hbias", "the attention's output gate has one bias per head", "\\beta_h"),
        _switch("sw_cross", "each decoder layer holds a cross-attention block no forward without "
                            "an encoder runs (weights only)", "\\xi"),
        _switch("sw_stack_tab", "the encoder and the decoder each hold a token table of their own "
                                "beside the shared one", "\\tau_{ed}"),
        _switch("sw_shared_tab", "beside the stacks' own token tables a shared one", "\\tau_{sh}"),
        _switch("sw_first_attn_norm_off", "the first layer has no norm before attention "
                                          "(ModernBERT)", "\\nu_0"),
        _switch("sw_mlm_bias", "the masked-LM head's dense layer has a bias", "\\mu_b"),
        _switch("sw_last_o_bias", "the last layer's attention output alone has a bias "
                                  "(GPT-NeoX-Japanese)", "\\beta_{o,L}"),
        _switch("sw_rwkv", "linear attention is RWKV-4's time mixing (receptance, key, value, "
                "output; the WKV recurrence has no matmul), with its channel mixing's receptance "
                "gate beside the FFN", "\\rho_w"),
        _switch("sw_mlstm", "linear attention is xLSTM's mLSTM: q, k, v, an output gate per "
                "channel, input and forget gates per head (biased), a norm over all heads; no "
                "convolution; its state kept in the model's dtype", "\\mu_l"),
        _switch("sw_light", "linear attention is lightning attention (MiniMax-01: no "
                "convolution, beta or decay parameters)", "\\lambda_a"),
        _switch("sw_gdn", "linear attention is Gated DeltaNet (else Kimi Delta Attention)",
                "\\delta_g"),
        _switch("sw_mamba1", "the SSM mixer is Mamba-1 or RG-LRU (else Mamba-2)", "\\mu_1"),
        _switch("sw_rglru", "the SSM mixer is Griffin's RG-LRU block (RecurrentGemma): Mamba-1's "
                "in_proj, conv and out_proj, block-diagonal input and recurrent gates instead of "
                "x_proj, dt_proj, A and D", "\\mu_r"),
        _switch("sw_ssm_bias", "Mamba in_proj has a bias", "\\beta_s"),
        _switch("sw_ssm_out_bias", "Mamba out_proj has a bias", "\\beta_{so}"),
        _switch("sw_conv_bias", "the depthwise convolution (and LFM2's projections) has biases",
                "\\beta_c"),
        _switch("sw_ssm_norm", "Mamba-2 gated RMSNorm over d_in", "\\nu_s"),
        _switch("sw_ssm_inner", "Jamba's RMSNorms on dt, B and C", "\\nu_i"),
        _switch("sw_altup", "AltUp: n_alt streams, predicted and corrected around each layer",
                "\\alpha"),
        _switch("sw_laurel", "LAuReL low-rank residual beside attention", "\\lambda_r"),
        _switch("sw_ple", "per-layer input embeddings gated into every layer", "\\pi_l"),
        _switch("sw_ff_sum", "dense-FFN widths differ by layer (their sum d_ff_sum)", "\\varphi"),
        _switch("sw_gshape", "the global attention layers have their own head dimension d_hg "
                "and key/value heads n_kvg (Gemma 4)", "\\gamma_g"),
        _switch("sw_gkv", "the global attention layers' values are their keys: no v "
                "projection (Gemma 4's attention_k_eq_v)", "\\gamma_v"),
        _switch("sw_sinks_local", "the attention sinks are on the sliding layers only "
                "(MiMo-V2-Flash)", "\\sigma_l"),
        _switch("sw_xielu", "the dense FFN's xIELU activation learns two scalars per layer "
                "(Apertus)", "\\xi_a"),
        _switch("sw_attn_sub", "a norm of width d on the attention output before its output "
                "projection (BitNet's attn_sub_norm)", "\\nu_o"),
        _switch("sw_ffn_sub", "a norm of width d_ff before the dense FFN's down projection "
                "(BitNet's ffn_sub_norm)", "\\nu_f"),
        _switch("sw_diff", "differential attention: the eager core runs twice (two value "
                "halves) and each layer learns four head-width lambdas (DiffLlama)", "\\delta_a"),
        _switch("sw_zx", "the router also picks zero-computation experts (LongCat-Flash)",
                "\\zeta_x"),
        _switch("sw_pmoe", "the experts run beside a dense MLP with three norms of their own "
                "and a router with input and per-expert scales (Gemma 4)", "\\gamma_m"),
        _switch("sw_mla_expanded", "MLA cache holds up-projected keys and values", "\\lambda_c"),
        _switch("sw_moe_norm", "a norm on the MoE block's output, in MoE layers only (A.X-K1)",
                "\\nu_m"),
        _switch("sw_mla_gate", "MLA's query up-projection reads the latent and its normed copy "
                "and also gives an output gate per value channel (A.X-K2)", "\\lambda_g"),
        _switch("sw_gnorm", "norms gated by a low-rank MLP of their output (A.X-K2)", "\\nu_g"),
        _switch("sw_moa", "query and output projections as E experts of n_kv heads, k per token, "
                "with their own router, and an output bias on attention and MoE (JetMoE)", "\\mu_a"),
        _switch("sw_dsa", "a sparse-attention indexer (DSA) beside the attention", "\\iota"),
        _switch("sw_shblk", "the hybrid layers share attention+MLP blocks, each use with a d x d "
                "output projection of its own (Zamba)", "\\sigma_b"),
        _switch("sw_dmask", "dynamic mask attention: the values projected to one mask logit per "
                "key/value head (dt_proj) with a learned rate A (Doge)", "\\delta_m"),
        _switch("sw_rscale", "two learned d-wide scales of the residual stream per layer (Doge)",
                "\\rho_s"),
        _switch("sw_mlaw", "the sliding MLA layers have a shape of their own (dots.llm3)",
                "\\mu_w"),
        _switch("sw_krope", "an RMSNorm of MLA's shared rotary key (dots.llm3)", "\\kappa_r"),
        _switch("sw_kvb", "MLA's key/value up-projection kv_b (none where the latent and rotary "
                "key are the one key and value head: DeepSeek-V4's shared-KV multi-query "
                "attention)", "\\mu_{\\mathrm{kv}}"),
        _switch("sw_ogrp", "the grouped low-rank output projection: g_o head groups each to r_o, "
                "then g_o r_o -> d (DeepSeek-V4)", "\\omega_g"),
        _switch("sw_kvc", "KV compressors: the CSA layers' (with their indexer's) and the HCA "
                "layers' compressed entries beside the sliding window (DeepSeek-V4)", "\\gamma_c"),
        _switch("sw_hcm", "the hyper-connections' n_hc x n_hc residual mix (DeepSeek-V4's mHC)",
                "\\xi_m"),
        _switch("sw_cmask", "the head scores only the rows its centroids pick (Gemma 4 "
                "assistant's use_ordered_embeddings)", "\\chi_c"),
        _switch("sw_zinit", "a learned d-wide initial state of a recurrent stack (HRM-Text's "
                "z_L_init)", "\\zeta_0"),
        _switch("sw_lfg", "Kimi Delta Attention's forget and output gates are full-rank "
                "projections (Ling's hybrids, bailing_hybrid)", "\\kappa_f"),
        _switch("sw_nscale", "learned per-channel scales of the queries, the output gate and the "
                "MLP's gate and up (Dory)", "\\nu_c"),
        _switch("sw_sconv", "depthwise causal convolutions of width K_conv on the keys and values "
                "and on the attention and MLP outputs (Inkling)", "\\kappa_s"),
        _switch("sw_rlog", "relative-position logits: a d -> n_h d_rel projection per attention "
                "layer mixing a bank of d_rel profiles over X_rel distances (Inkling)", "\\rho_l"),
        _switch("sw_rsh", "the router also scores the shared experts and learns a global scale, "
                "and each dense MLP learns a global output scale (Inkling)", "\\varrho_s"),
        _switch("sw_hsc", "learned per-head scales of the queries and of the relative states "
                "(Inkling 2)", "\\nu_p"),
        _switch("sw_skp", "a sink logit per head projected from the layer input, d -> n_h "
                "(Inkling 2)", "\\varsigma_p"),
        _switch("sw_dcv", "the global layers' key and value convolutions take per-token weights "
                "projected from their input (d -> n_kv K_conv each) and their q, k, v inputs "
                "have norms of their own (Inkling 2)", "\\kappa_d"),
        _switch("sw_bres", "block attention residuals: learned queries read the stacked outputs "
                "of earlier blocks before each sublayer and the final norm (Inkling 2)",
                "\\beta_r"),
        _switch("sw_hc", "hyper-connections: n_hc residual streams, mixed before and after "
                "every attention and FFN block and folded into one before the final norm (HY-V4)",
                "\\xi_h"),
        _switch("sw_ghc", "gated residuals over n_hc streams: a grouped norm, a rank-r_hc input "
                "mixer and n_hc injection weights around every attention and MoE block, and a "
                "final mixer (Qwen4-Exp)", "\\xi_g"),
        _switch("sw_qsa", "the QSA indexer: one projection to n_ih queries and a key, the keys "
                "averaged in blocks of C_ix tokens that each query scores (Qwen4-Exp)",
                "\\chi_q"),
        _switch("sw_msa", "MiniMax-M3's lightning indexer beside softmax attention: n_ih queries "
                "and one key projected from the layer input, RMSNorms on both, every query "
                "scored against every key", "\\chi_m"),
        _switch("sw_ngp", "hashed n-gram per-layer embeddings gating every stream of L_ple "
                "layers (Qwen4-Exp's PLE)", "\\eta_g"),
        _switch("sw_cca", "compressed convolutional attention: queries and keys mixed by a "
                "depthwise and a grouped causal convolution with biases, half of each value head "
                "from the previous token, a learned key scale per key/value head (ZAYA)",
                "\\kappa_c"),
        _switch("sw_rmlp", "the router is an MLP on a d_r-wide state carried from layer to layer, "
                "with a class that skips the experts (ZAYA)", "\\varrho_m"),
        _switch("sw_raff", "learned scales and biases on the residual stream and on each "
                "sublayer's output (ZAYA)", "\\rho_a"),
        _switch("sw_shad", "each use of a shared block adds a low-rank adapter to its MLP's "
                "gate and up projections (Zamba2)", "\\sigma_f"),
        _switch("sw_shaa", "each use of a shared block adds low-rank adapters to its q, k and v "
                "(Zamba2's use_shared_attention_adapter)", "\\sigma_a"),
        # parallel layouts (symcalc.algebra.parallel): which state ZeRO / FSDP shards over the
        # data-parallel ranks
        _switch("sw_zero_w", "ZeRO-3 / FSDP shards the weights over the data-parallel ranks",
                "\\zeta_w"),
        _switch("sw_zero_g", "ZeRO-2/3 shards the gradients over the data-parallel ranks",
                "\\zeta_g"),
        _switch("sw_zero_o", "ZeRO-1/2/3 (or Megatron's distributed optimizer) shards the "
                "optimizer state over the data-parallel ranks", "\\zeta_o"),
        # FLOP conventions, all integers so that generated code stays exact.
        _switch("sw_causal", "skip the masked half of causal attention scores", "\\chi"),
        _switch("sw_causal_exact", "count the diagonal when skipping (s(s+1)/2)", "\\chi_e"),
    )
}

ALL: dict[str, SymbolInfo] = {**SIZES, **SWITCHES}


def _rate(name: str, meaning: str, latex: str) -> SymbolInfo:
    """A positive real of the hardware or a measurement (not a size: never in the term
    table)."""
    return SymbolInfo(name, meaning, latex, sympy.Symbol(name, positive=True))


# How fast (symcalc.algebra.roofline, serving, utilization): the accelerator, the measured run
# and the serving engine's settings. Kept out of ALL: the term table lists only sizes and
# switches.
RATES: dict[str, SymbolInfo] = {
    info.name: info
    for info in (
        _rate("pi_c", "peak dense FLOP/s of the compute dtype, one device", "\\pi"),
        _rate("beta_m", "memory bandwidth of one device, bytes per second", "\\beta"),
        _rate("beta_n", "link bandwidth one device sends, bytes per second, one direction",
              "\\beta_{\\mathrm{net}}"),
        _rate("eta_c", "compute efficiency: achieved over peak FLOP/s (1: a bound)", "\\eta_c"),
        _rate("eta_m", "memory efficiency: achieved over peak bandwidth (1: a bound)",
              "\\eta_m"),
        _rate("eta_n", "network efficiency: achieved over link bandwidth (1: a bound)",
              "\\eta_n"),
        _rate("M_gpu", "memory of one device, bytes", "M_{\\mathrm{gpu}}"),
        _rate("u_mem", "share of the memory the serving engine may use "
              "(--gpu-memory-utilization)", "u"),
        _rate("T_step", "measured seconds of one training step", "T_{\\mathrm{step}}"),
        _rate("R_tok", "measured tokens per second", "R"),
        _size("N_gpu", "accelerators of the run", "N_{\\mathrm{gpu}}"),
        _size("B_blk", "tokens per KV-cache block (--block-size)", "B_{\\mathrm{blk}}"),
        _size("N_tok", "tokens of the serving engine's largest batch "
              "(--max-num-batched-tokens)", "N_{\\mathrm{tok}}"),
        _size("D_tok", "training tokens", "D"),
    )
}

_by_symbol = {info.symbol: info for info in (*ALL.values(), *RATES.values())}


def sym(name: str) -> sympy.Symbol:
    """The canonical sympy Symbol named ``name``."""
    return ALL[name].symbol


def info_of(symbol: sympy.Symbol) -> SymbolInfo:
    return _by_symbol[symbol]


def latex_names() -> Mapping[sympy.Symbol, str]:
    """symbol -> LaTeX name, for printers (``symbol_names=``): one read-only mapping, built
    the first time (every step of a derivation makes a printer)."""
    global _LATEX_NAMES
    if _LATEX_NAMES is None:
        _LATEX_NAMES = MappingProxyType({info.symbol: info.latex
                                         for info in (*ALL.values(), *RATES.values())})
    return _LATEX_NAMES


_LATEX_NAMES: Optional[Mapping[sympy.Symbol, str]] = None


(L, L_dec, d, d_ff, n_h, n_kv, d_h, V, P, T, E, k, R, s, s_dec, b, W, N_d, t) = (
    SIZES[n].symbol
    for n in ("L", "L_dec", "d", "d_ff", "n_h", "n_kv", "d_h", "V", "P", "T", "E", "k", "R",
              "s", "s_dec", "b", "W", "N_d", "t")
)
(d_moe, E_s, d_sh, L_dense, L_local, r_q, r_kv, d_nope, d_rope, d_v, d_emb, Z_e) = (
    SIZES[n].symbol
    for n in ("d_moe", "E_s", "d_sh", "L_dense", "L_local", "r_q", "r_kv", "d_nope", "d_rope",
              "d_v", "d_emb", "Z_e")
)
(L_attn, L_lin, L_ssm, L_conv, L_ffn, n_lk, n_lv, d_lk, d_lv, K_conv, d_in, N_s, G_s, H_s,
 R_dt, Q_c) = (
    SIZES[n].symbol
    for n in ("L_attn", "L_lin", "L_ssm", "L_conv", "L_ffn", "n_lk", "n_lv", "d_lk", "d_lv",
              "K_conv", "d_in", "N_s", "G_s", "H_s", "R_dt", "Q_c")
)
(p, v, m, e, t_e, c, i_p) = (
    SIZES[n].symbol for n in ("p", "v", "m", "e", "t_e", "c", "i_p")
)
(n_alt, r_laurel, d_ple, V_ple, L_kv_shared, L_kv_shared_local, d_ff_sum, d_hg, n_kvg, S_q, S_k,
 S_v, S_kn, S_o, A_l, A_g) = (
    SIZES[n].symbol
    for n in ("n_alt", "r_laurel", "d_ple", "V_ple", "L_kv_shared", "L_kv_shared_local",
              "d_ff_sum", "d_hg", "n_kvg", "S_q", "S_k", "S_v", "S_kn", "S_o", "A_l", "A_g")
)
(d_ai, L_attn_w, L_ffn_w, r_ad, d_bk) = (SIZES[n].symbol
                                        for n in ("d_ai", "L_attn_w", "L_ffn_w", "r_ad", "d_bk"))
(d_rel, X_rel, K_g, d_r, Q_in, X_res, n_hc, K_rel, P_2d, d_ph, V_ent, d_ent) = (
    SIZES[n].symbol for n in ("d_rel", "X_rel", "K_g", "d_r", "Q_in", "X_res", "n_hc", "K_rel",
                              "P_2d", "d_ph", "V_ent", "d_ent"))
(r_hc, C_ix, L_ple, V_ng, d_ng, d_pe, K_pe, N_g) = (
    SIZES[n].symbol for n in ("r_hc", "C_ix", "L_ple", "V_ng", "d_ng", "d_pe", "K_pe", "N_g"))
(m_csa, m_hca, L_csa, L_hca, g_o, r_o) = (SIZES[n].symbol for n in ("m_csa", "m_hca", "L_csa",
                                                                    "L_hca", "g_o", "r_o"))
(n_ih, d_ih, L_idx, d_g, r_g, d_out) = (SIZES[n].symbol for n in ("n_ih", "d_ih", "L_idx", "d_g",
                                                                   "r_g", "d_out"))
(n_hw, r_qw, r_kvw, d_nw, d_rw, d_vw) = (SIZES[n].symbol for n in ("n_hw", "r_qw", "r_kvw", "d_nw",
                                                                   "d_rw", "d_vw"))
(V_pr, d_pr, V_sp, d_sp, d_cat, n_ad, d_ad, L_x, V_x, K_cb, d_bb, V_c, V_sel) = (
    SIZES[n].symbol for n in ("V_pr", "d_pr", "V_sp", "d_sp", "d_cat", "n_ad", "d_ad", "L_x", "V_x",
                              "K_cb", "d_bb", "V_c", "V_sel"))
(pi_c, beta_m, beta_n, eta_c, eta_m, eta_n, M_gpu, u_mem, T_step, R_tok, N_gpu, B_blk, N_tok,
 D_tok) = (RATES[n].symbol for n in ("pi_c", "beta_m", "beta_n", "eta_c", "eta_m", "eta_n",
                                     "M_gpu", "u_mem", "T_step", "R_tok", "N_gpu", "B_blk",
                                     "N_tok", "D_tok"))

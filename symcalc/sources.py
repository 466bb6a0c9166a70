"""Where each formula comes from. Components and conventions cite these keys; renderers
print the citation beside the derivation step and in a handout's references."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    key: str
    citation: str
    where: str  # section, equation or file


SOURCES: dict[str, Source] = {
    s.key: s
    for s in (
        Source("vaswani2017", "Vaswani et al. 2017, Attention Is All You Need",
               "Sec. 3.2-3.4: multi-head attention, position-wise FFN, embeddings"),
        Source("shazeer2019", "Shazeer 2019, Fast Transformer Decoding: One Write-Head is All You Need",
               "multi-query attention: one K/V head"),
        Source("ainslie2023", "Ainslie et al. 2023, GQA: Training Generalized Multi-Query Transformer Models",
               "grouped-query attention: n_kv K/V heads shared by n_h/n_kv query heads"),
        Source("shazeer2020", "Shazeer 2020, GLU Variants Improve Transformer",
               "gated FFN (SwiGLU/GeGLU): three d x d_ff matrices"),
        Source("shazeer2017", "Shazeer et al. 2017, Outrageously Large Neural Networks (sparsely-gated MoE)",
               "router d x E, top-k experts per token"),
        Source("jiang2024", "Jiang et al. 2024, Mixtral of Experts",
               "8 SwiGLU experts per layer, top-2 routing, bias-free router"),
        Source("ba2016", "Ba et al. 2016, Layer Normalization", "scale and shift vectors of size d"),
        Source("zhang2019", "Zhang & Sennrich 2019, Root Mean Square Layer Normalization",
               "RMSNorm: scale vector only"),
        Source("raffel2020", "Raffel et al. 2020, Exploring the Limits of Transfer Learning (T5)",
               "Sec. 2.1: bias-free layers, scale-only LayerNorm, relative position buckets"),
        Source("devlin2019", "Devlin et al. 2019, BERT",
               "Sec. 3: token, segment and position embeddings; pooler; masked-LM head"),
        Source("radford2019", "Radford et al. 2019, Language Models are Unsupervised Multitask Learners (GPT-2)",
               "Sec. 2.3: pre-norm layers, final LayerNorm, tied output head"),
        Source("press2017", "Press & Wolf 2017, Using the Output Embedding to Improve Language Models",
               "weight tying of input embedding and output head"),
        Source("touvron2023", "Touvron et al. 2023, Llama 2",
               "pre-norm RMSNorm, SwiGLU, rotary positions, untied head"),
        Source("hf_transformers", "Hugging Face transformers 5.x",
               "modeling_{bert,gpt2,llama,mistral,qwen2,mixtral,t5}.py: the module tree counted"),
        Source("torch_flop_counter", "PyTorch torch.utils.flop_counter.FlopCounterMode",
               "2 FLOPs per multiply-accumulate of mm/bmm/addmm; elementwise work not counted"),
        Source("kaplan2020", "Kaplan et al. 2020, Scaling Laws for Neural Language Models",
               "Table 1, eq. 2.1: N = 2 d L (2 d_attn + d_ff); C_fwd = 2N + 2 L n_ctx d_attn"),
        Source("hoffmann2022", "Hoffmann et al. 2022, Training Compute-Optimal LLMs (Chinchilla)",
               "Appendix F: FLOPs per forward pass by operation"),
        Source("narayanan2021", "Narayanan et al. 2021, Efficient Large-Scale Language Model Training "
               "on GPU Clusters Using Megatron-LM", "eq. 2 (parameters), eq. 3 (FLOPs, full recompute)"),
        Source("korthikanti2022", "Korthikanti et al. 2022, Reducing Activation Recomputation in "
               "Large Transformer Models", "Sec. 4 activation bytes, eq. 7-8 FLOPs"),
        Source("chowdhery2022", "Chowdhery et al. 2022, PaLM", "Appendix B: 6N + 12 L H Q T model FLOPs"),
        Source("rajbhandari2020", "Rajbhandari et al. 2020, ZeRO", "Sec. 3-5: 2+2+12 bytes per parameter"),
        Source("pope2022", "Pope et al. 2022, Efficiently Scaling Transformer Inference",
               "KV cache: 2 L n_kv d_h bytes per token"),
        Source("beltagy2020", "Beltagy et al. 2020, Longformer; Jiang et al. 2023, Mistral 7B",
               "sliding-window attention caps the cache at W tokens"),
        Source("seed_layer_calculator", "Transformer layer calculator (seed 000)",
               "per layer 4d^2 + 2 d d_ff + 4d; FLOPs 4sd^2 + 2s^2d + 4sd d_ff"),
        Source("seed_scratch_guide", "From-scratch PyTorch GPT parameter guide (seed 001)",
               "P = 2VE + V + (C+2)E + B(11E^2 + 9E)"),
        Source("seed_decoder_calculator", "Decoder parameter calculator (seed 003)",
               "GQA, gated FFN, RMSNorm breakdown"),
        Source("seed_estimator", "Transformer parameter estimator (seed 004)", "12 L d^2 + V d in 10^8"),
    )
}


def cite(key: str) -> Source:
    return SOURCES[key]

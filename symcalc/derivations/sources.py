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
        Source("liu2024grin", "Liu et al. 2024, GRIN: GRadient-INformed MoE (Phi-3.5-MoE)",
               "SparseMixer-v2 routing: two sampled picks per token, each a masked softmax "
               "and a multiplier (arXiv:2409.12136)"),
        Source("ba2016", "Ba et al. 2016, Layer Normalization", "scale and shift vectors of size d"),
        Source("zhang2019", "Zhang & Sennrich 2019, Root Mean Square Layer Normalization",
               "RMSNorm: scale vector only"),
        Source("raffel2020", "Raffel et al. 2020, Exploring the Limits of Transfer Learning (T5)",
               "Sec. 2.1: bias-free layers, scale-only LayerNorm, relative position buckets"),
        Source("guo2022longt5", "Guo et al. 2022, LongT5: Efficient Text-To-Text Transformer for Long Sequences",
               "Sec. 3.1.1: local attention, each block of queries to its own and the two "
               "neighbouring blocks of keys (arXiv:2112.07916)"),
        Source("devlin2019", "Devlin et al. 2019, BERT",
               "Sec. 3: token, segment and position embeddings; pooler; masked-LM head"),
        Source("radford2019", "Radford et al. 2019, Language Models are Unsupervised Multitask Learners (GPT-2)",
               "Sec. 2.3: pre-norm layers, final LayerNorm, tied output head"),
        Source("press2017", "Press & Wolf 2017, Using the Output Embedding to Improve Language Models",
               "weight tying of input embedding and output head"),
        Source("touvron2023", "Touvron et al. 2023, Llama 2",
               "pre-norm RMSNorm, SwiGLU, rotary positions, untied head"),
        Source("hf_transformers", "Hugging Face transformers 5.x",
               "models/<model_type>/modeling_*.py: the module tree counted (docs/families.md)"),
        Source("torch_autograd", "PyTorch autograd, tools/autograd/derivatives.yaml (torch 2.13)",
               "what each operator saves for its backward; CPU dropout keeps a mask of the "
               "input's dtype; measured with torch.autograd.graph.saved_tensors_hooks"),
        Source("dao2022", "Dao et al. 2022, FlashAttention: Fast and Memory-Efficient Exact "
               "Attention with IO-Awareness", "Sec. 3.1: no s x s matrix kept; the softmax "
               "statistics (log-sum-exp) per query are kept for the backward pass"),
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
               "KV cache: 2 L n_kv d_h values per token (keys and values), times the bytes "
               "per value"),
        Source("beltagy2020", "Beltagy et al. 2020, Longformer; Jiang et al. 2023, Mistral 7B",
               "sliding-window attention caps the cache at W tokens"),
        Source("deepseek2024", "DeepSeek-AI 2024, DeepSeek-V2: A Strong, Economical, and Efficient "
               "Mixture-of-Experts Language Model",
               "Sec. 2.1: multi-head latent attention, low-rank key/value latent and decoupled rotary key"),
        Source("dai2024", "Dai et al. 2024, DeepSeekMoE",
               "Sec. 3: fine-grained experts and always-on shared experts"),
        Source("fedus2022", "Fedus et al. 2022, Switch Transformers",
               "Sec. 2: each token through its selected experts; expert FFN weights"),
        Source("qwen2024moe", "Qwen team 2024, Qwen1.5-MoE / Qwen2 technical report",
               "shared expert scaled by a sigmoid gate (transformers modeling_qwen2_moe.py)"),
        Source("henry2020", "Henry et al. 2020, Query-Key Normalization for Transformers",
               "norms on queries and keys (per head in Qwen3/Gemma-3, over all heads in OLMo-2)"),
        Source("ocp_mx2023", "Open Compute Project 2023, OCP Microscaling Formats (MX) Specification v1.0",
               "Sec. 5: MXFP4 = 32 FP4 (E2M1) elements sharing one 8-bit E8M0 scale"),
        Source("nvidia_nvfp4", "NVIDIA 2025, NVFP4 (Transformer Engine and TensorRT Model Optimizer docs; "
               "'Introducing NVFP4 for Efficient and Accurate Low-Precision Inference')",
               "16 FP4 (E2M1) elements per FP8 E4M3 block scale, plus one FP32 scale per tensor"),
        Source("frantar2023", "Frantar et al. 2023, GPTQ: Accurate Post-Training Quantization for "
               "Generative Pre-trained Transformers",
               "Sec. 4-5: 3/4-bit weights of the layers' linear maps in groups with a scale and zero point each"),
        Source("lin2024", "Lin et al. 2024, AWQ: Activation-aware Weight Quantization for LLM "
               "Compression and Acceleration", "INT4 weights in groups of 128 with a scale per group"),
        Source("micikevicius2022", "Micikevicius et al. 2022, FP8 Formats for Deep Learning",
               "E4M3 and E5M2 encodings; a scale per tensor"),
        Source("deepseek2024v3", "DeepSeek-AI 2024, DeepSeek-V3 Technical Report",
               "Sec. 3.3.2: FP8 weights with one scale per 128 x 128 block"),
        Source("shen2024jetmoe", "Shen et al. 2024, JetMoE: Reaching Llama2 Performance with 0.1M Dollars",
               "a mixture of attention heads (query and output projections as routed experts sharing "
               "one key/value projection) beside the MoE MLP, each mixture with an output bias "
               "(transformers modeling_jetmoe.py JetMoeMoA, JetMoeMoE)"),
        Source("deepseek2025v32", "DeepSeek-AI 2025, DeepSeek-V3.2-Exp: Boosting Long-Context "
               "Efficiency with DeepSeek Sparse Attention (DeepSeek-V3.2 technical report)",
               "the lightning indexer: indexer queries from the low-rank query, one shared key, a "
               "weight per head, ReLU scores summed over the heads pick the top-k keys "
               "(transformers modeling_deepseek_v32.py DeepseekV32Indexer)"),
        Source("minimax2026m3", "MiniMax 2026, MiniMax-M3 (MiniMaxAI/MiniMax-M3 model card); "
               "Hugging Face transformers 5.24 modeling_minimax_m3_vl.py",
               "the lightning indexer of the sparse-attention layers: a few query heads and one "
               "key projected from the layer input and RMS-normed, every query scored against "
               "every key, the scores max-pooled into key blocks of which each query keeps the "
               "top-k and its local ones (MiniMaxM3VLIndexer, MiniMaxM3VLSparseCacheLayer)"),
        Source("deepseek2026v4", "DeepSeek-AI 2026, DeepSeek-V4 technical report (compressed sparse "
               "attention, heavily compressed attention, manifold-constrained hyper-connections); "
               "Hugging Face transformers 5.24 modeling_deepseek_v4.py",
               "KV compressors that pool every m tokens into one entry by a softmax gate with a "
               "position bias (CSA: two overlapping series and a lightning indexer of its own; "
               "HCA: one series), attention over the sliding window and the compressed entries, "
               "the grouped low-rank output projection and the hyper-connections' doubly-"
               "stochastic residual mix (DeepseekV4CSACompressor, DeepseekV4Indexer, "
               "DeepseekV4HCACompressor, DeepseekV4Attention, DeepseekV4GroupedLinear, "
               "DeepseekV4HyperConnection)"),
        Source("glorioso2024zamba", "Glorioso et al. 2024, Zamba: A Compact 7B SSM Hybrid Model "
               "(arXiv:2405.16712)",
               "one attention+MLP block shared by the hybrid layers, reading the hidden state and "
               "the embeddings concatenated, each use followed by a linear projection of its own "
               "(transformers modeling_zamba.py ZambaHybridLayer, ZambaAttentionDecoderLayer)"),
        Source("glorioso2024zamba2", "Glorioso et al. 2024, The Zamba2 Suite: Technical Report "
               "(arXiv:2411.15242)",
               "shared attention+MLP blocks alternating over num_mem_blocks copies, each use with "
               "its own low-rank (LoRA-like) adapters on the MLP and, optionally, on q, k and v "
               "(transformers modeling_zamba2.py Zamba2MLP, Zamba2Attention, Zamba2Model.get_layers)"),
        Source("beck2024xlstm", "Beck et al. 2024, xLSTM: Extended Long Short-Term Memory "
               "(arXiv:2405.04517); NX-AI xLSTM-7b model card",
               "the mLSTM block (q, k, v, exponential input and forget gates, an output gate, a "
               "matrix memory read by the queries) and its chunkwise kernels (transformers "
               "modeling_xlstm.py xLSTMLayer, mlstm_chunkwise_fw, mlstm_recurrent_step_native)"),
        Source("peng2023rwkv", "Peng et al. 2023, RWKV: Reinventing RNNs for the Transformer Era "
               "(arXiv:2305.13048)",
               "RWKV-4's time mixing (receptance, key, value, output, time decay and bonus, token "
               "shift) and channel mixing (receptance gate, squared-ReLU key, value) "
               "(transformers modeling_rwkv.py RwkvSelfAttention, RwkvFeedForward)"),
        Source("de2024griffin", "De et al. 2024, Griffin: Mixing Gated Linear Recurrences with "
               "Local Attention for Efficient Language Models (arXiv:2402.19427); Botev et al. 2024, "
               "RecurrentGemma",
               "the recurrent block: two branches from the input, a temporal conv and the RG-LRU "
               "with block-diagonal input and recurrent gates (transformers "
               "modeling_recurrent_gemma.py RecurrentGemmaRecurrentBlock, RecurrentGemmaRglru)"),
        Source("shi2024doge", "Shi et al. 2024, Wonderful Matrices: Combining for a More Efficient "
               "and Effective Foundation Model Architecture (arXiv:2412.11834); SmallDoge Doge model "
               "cards",
               "dynamic mask attention (the values projected to a mask logit per key/value head with "
               "a learned rate) and learned residual scales (transformers modeling_doge.py "
               "DogeAttention, DogeDecoderLayer)"),
        Source("beam2026", "Reflection AI 2026, Beam-1.0 model card (reflection/Beam-1.0-501B-A23B)",
               "a sigmoid output gate per channel with one learned bias per head (transformers "
               "modeling_beam.py BeamAttention.gate_bias)"),
        Source("skt2026axk1", "SK Telecom, A.X-K1 model card (skt/A.X-K1)",
               "DeepSeek-V3's MLA and MoE with an RMSNorm on the MoE block's output (transformers "
               "modeling_axk1.py AXK1MoE.post_mlp_layernorm)"),
        Source("skt2026axk2", "SK Telecom, A.X-K2 model card (skt/A.X-K2)",
               "MLA's q_gate_proj over the query latent and its normed copy (queries and an output "
               "gate), and RMSNorms gated by a low-rank MLP of their output (transformers "
               "modeling_axk2.py AXK2Attention, AXK2GatedRMSNorm)"),
        Source("openai2025", "OpenAI 2025, gpt-oss-120b & gpt-oss-20b model card",
               "attention sinks per head, biased experts and router (transformers modeling_gpt_oss.py)"),
        Source("zhang2022", "Zhang et al. 2022, OPT: Open Pre-trained Transformer Language Models",
               "project_in/project_out when word_embed_proj_dim differs (transformers modeling_opt.py)"),
        Source("xiong2021nystromformer", "Xiong et al. 2021, Nystromformer: A Nystrom-Based "
               "Algorithm for Approximating Self-Attention (AAAI 2021; arXiv:2102.03902)",
               "the depthwise convolution over each head's values added to the attention's "
               "context (transformers modeling_nystromformer.py NystromformerSelfAttention.conv)"),
        Source("yamada2020luke", "Yamada et al. 2020, LUKE: Deep Contextualized Entity "
               "Representations with Entity-aware Self-attention (EMNLP 2020; arXiv:2010.01057)",
               "entity embeddings, entity-aware query projections and the entity prediction head "
               "(transformers modeling_luke.py LukeEntityEmbeddings, LukeSelfAttention, "
               "EntityPredictionHead)"),
        Source("xu2020layoutlm", "Xu et al. 2020, LayoutLM: Pre-training of Text and Layout for "
               "Document Image Understanding (KDD 2020; arXiv:1912.13318)",
               "2D position embeddings: tables of the x, y, height and width of each token's box "
               "added to the token embedding (transformers modeling_layoutlm.py "
               "LayoutLMEmbeddings)"),
        Source("he2021deberta", "He et al. 2021, DeBERTa: Decoding-enhanced BERT with "
               "Disentangled Attention (ICLR 2021; arXiv:2006.03654)",
               "disentangled attention: a shared table of relative-position embeddings projected "
               "to keys and queries that score the content queries (c2p) and keys (p2c) "
               "(transformers modeling_deberta_v2.py DisentangledSelfAttention)"),
        Source("rives2021esm", "Rives et al. 2021, Biological structure and function emerge from "
               "scaling unsupervised learning to 250 million protein sequences (PNAS 118(15); "
               "ESM-1b)",
               "the contact-prediction head: a biased logistic regression over every layer's and "
               "head's attention map (transformers modeling_esm.py EsmContactPredictionHead)"),
        Source("su2022rocbert", "Su et al. 2022, RoCBert: Robust Chinese Bert with Multimodal "
               "Contrastive Pretraining (ACL 2022)",
               "pronunciation and shape embeddings concatenated to the word embedding and mapped "
               "into the hidden size (transformers modeling_roc_bert.py RoCBertEmbeddings)"),
        Source("pfeiffer2022xmod", "Pfeiffer et al. 2022, Lifting the Curse of Multilinguality "
               "by Pre-training Modular Transformers (NAACL 2022)",
               "X-MOD: a bottleneck adapter per language after each layer's FFN, each token through "
               "its language's (transformers modeling_xmod.py XmodOutput.lang_adapter)"),
        Source("radford2022whisper", "Radford et al. 2022, Robust Speech Recognition via "
               "Large-Scale Weak Supervision (Whisper; arXiv:2212.04356)",
               "the audio encoder: two 1-D convolutions over log-mel frames, learned positions, "
               "pre-norm layers whose key projection has no bias (transformers "
               "modeling_moss_transcribe_diarize.py MossTranscribeDiarizeAudioModel)"),
        Source("moss2025transcribe", "MOSS-Transcribe-Diarize as transformers 5.24 implements "
               "it (models/moss_transcribe_diarize; checkpoint hf-audio/MOSS-Transcribe-Diarize-HF)",
               "the audio projector: merged encoder frames through two linear layers and a "
               "LayerNorm into the language model's width (MossTranscribeDiarizeMultiModalProjector)"),
        Source("gulati2020conformer", "Gulati et al. 2020, Conformer: Convolution-augmented "
               "Transformer for Speech Recognition (arXiv:2005.08100)",
               "conformer blocks: two half-step feed-forward modules around self-attention and a "
               "convolution module (transformers modeling_phi4_multimodal.py "
               "Phi4MultimodalAudioModel, with a convolutional subsampling and a relative "
               "attention bias table)"),
        Source("microsoft2025phi4mm", "Microsoft 2025, Phi-4-Mini Technical Report: Compact "
               "yet Powerful Multimodal Language Models via Mixture-of-LoRAs (arXiv:2503.01743)",
               "Phi-4-multimodal: image and speech features projected into the language model's "
               "width by two linear layers each, with learned image separators (transformers "
               "modeling_phi4_multimodal.py Phi4MultimodalImageEmbedding, "
               "Phi4MultimodalAudioEmbedding)"),
        Source("radford2021clip", "Radford et al. 2021, Learning Transferable Visual Models "
               "From Natural Language Supervision (CLIP; arXiv:2103.00020)",
               "CLIP's vision transformer: a class token, patch and position embeddings, "
               "LayerNorms before and after pre-norm layers (transformers modeling_git.py "
               "GitVisionModel)"),
        Source("wang2022git", "Wang et al. 2022, GIT: A Generative Image-to-text Transformer "
               "for Vision and Language (arXiv:2205.14100)",
               "a BERT-shaped text decoder over image tokens projected by a linear layer and a "
               "LayerNorm (transformers modeling_git.py GitProjection, GitForCausalLM)"),
        Source("kirillov2023", "Kirillov et al. 2023, Segment Anything (ICCV 2023; "
               "arXiv:2304.02643)",
               "SAM's image encoder: a ViT with windowed and global attention layers, learned "
               "relative-position tables per attention and a convolutional neck (transformers "
               "modeling_got_ocr2.py GotOcr2VisionEncoder)"),
        Source("wei2024got", "Wei et al. 2024, General OCR Theory: Towards OCR-2.0 via a Unified "
               "End-to-end Model (GOT-OCR 2.0; arXiv:2409.01704)",
               "the projector from the SAM encoder into the language model: two stride-2 "
               "convolutions and a linear layer (transformers GotOcr2MultiModalProjector)"),
        Source("adept2023fuyu", "Adept 2023, Fuyu-8B: A Multimodal Architecture for AI Agents "
               "(blog post, adept.ai/blog/fuyu-8b)",
               "image patches flattened and linearly projected into the decoder's width, no image "
               "encoder (transformers modeling_fuyu.py FuyuModel.vision_embed_tokens)"),
        Source("meta2024mllama", "Meta 2024, Llama 3.2 Vision model card (meta-llama/"
               "Llama-3.2-11B-Vision); Llama Team 2024, The Llama 3 Herd of Models, Sec. 7",
               "cross-attention layers with q/k norms and tanh gates between the self-attention "
               "layers, skipped without image states (transformers modeling_mllama.py "
               "MllamaCrossAttentionDecoderLayer, MllamaTextModel)"),
        Source("gemma2024", "Gemma Team 2024, Gemma 2: Improving Open Language Models at a Practical Size",
               "Sec. 2: local sliding-window and global layers alternate; norms before and after each block"),
        Source("wang2021", "Wang & Komatsuzaki 2021, GPT-J-6B; Black et al. 2022, GPT-NeoX-20B",
               "parallel attention and FFN reading one input"),
        Source("yang2025", "Yang, Kautz & Hatamizadeh 2025, Gated Delta Networks (ICLR 2025); "
               "Qwen team 2025, Qwen3-Next",
               "gated delta rule: q, k, v, output gate z, beta and decay a per value head, short "
               "causal convolutions, a d_k x d_v state per value head (transformers "
               "modeling_qwen3_next.py Qwen3NextGatedDeltaNet)"),
        Source("kimi2025", "Kimi Team 2025, Kimi Linear: An Expressive, Efficient Attention "
               "Architecture",
               "Kimi Delta Attention: channel-wise decay through a low-rank forget gate, low-rank "
               "output gate (transformers modeling_kimi_linear.py KimiDeltaAttention)"),
        Source("qwen2025next", "Qwen team 2025, Qwen3-Next model card; Qiu et al. 2025, Gated "
               "Attention for Large Language Models",
               "a sigmoid output gate per head: q_proj emits queries and gates, twice as wide"),
        Source("gu2023", "Gu & Dao 2023, Mamba: Linear-Time Sequence Modeling with Selective "
               "State Spaces",
               "Sec. 3: in/out projections, depthwise conv, x_proj to dt (rank R) and B, C, "
               "dt_proj, A (d_in x N) and D; a d_in x N state (transformers modeling_jamba.py)"),
        Source("dao2024", "Dao & Gu 2024, Transformers are SSMs (Mamba-2)",
               "Sec. 7-8: one in_proj to z, x, B, C (G groups) and dt (H heads), conv over x, B, "
               "C, scalar A per head, gated RMSNorm; a d_in x N state (transformers "
               "modeling_nemotron_h.py, modeling_falcon_h1.py, modeling_granitemoehybrid.py)"),
        Source("inkling2026", "Thinking Machines Lab 2026, Inkling model card "
               "(thinkingmachines/Inkling); Hugging Face transformers 5.24 modeling_inkling.py",
               "short convolutions on keys, values and the sublayer outputs, relative-position "
               "logits (r_proj, rel_logits_proj), a router over the routed and shared experts "
               "with global scales (InklingAttention, InklingShortConvolution, InklingTopkRouter, "
               "InklingMLP)"),
        Source("tencent2026hyv4", "Zhu et al. 2024, Hyper-Connections (arXiv:2409.19606), in the "
               "form of the Tencent Hy4-preview model card (tencent/Hy4-preview); Hugging Face "
               "transformers 5.24 modeling_hy_v4.py",
               "n residual streams, each block's input folded from them and its output spread "
               "back by weights computed from the flattened streams, and a final fold before the "
               "last norm (HYV4HyperConnection, HYV4HyperHead); an output gate per value channel "
               "beside MLA (HYV4Attention.gate_proj)"),
        Source("qwen2026qwen4exp", "Qwen Team 2026, Qwen4-Exp (Qwen/Qwen4-Exp model card); "
               "Hugging Face transformers 5.24 modeling_qwen4_exp.py",
               "gated residuals over n residual streams: a grouped RMSNorm, a low-rank sigmoid "
               "input mixer and per-stream injection weights around every attention and MoE "
               "block, and a final mixer (Qwen4ExpTextGatedResidual); the QSA indexer, whose "
               "queries score keys averaged over blocks of tokens (Qwen4ExpTextQSAIndexer); "
               "hashed n-gram per-layer embeddings gating every stream, with a dilated "
               "depthwise convolution (Qwen4ExpTextPLELayer, Qwen4ExpTextNGramEmbedding)"),
        Source("zyphra2025cca", "Zyphra 2025, Compressed Convolutional Attention "
               "(arXiv:2510.04476) and the ZAYA1 model card (Zyphra/ZAYA1-8B); Hugging Face "
               "transformers 5.24 modeling_zaya.py",
               "queries and keys mixed by a depthwise and a grouped causal convolution, half of "
               "each value head delayed by a token, an MLP router on a state carried between "
               "layers, residual scales and biases (ZayaCCAProjection, ZayaQKNorm, ZayaRouter, "
               "ZayaResidualScaling)"),
        Source("liquid2025", "Liquid AI 2025, LFM2 technical report and model card",
               "short-convolution block: in_proj d -> 3d (B, C, x), depthwise conv of width K, "
               "out_proj (transformers modeling_lfm2.py Lfm2ShortConv)"),
        Source("transformers_cache", "Hugging Face transformers 5.24 cache classes",
               "what a forward pass with use_cache keeps per layer: keys/values of attention "
               "layers, conv and recurrent state of linear-attention and SSM layers"),
        Source("dosovitskiy2021", "Dosovitskiy et al. 2021, An Image is Worth 16x16 Words (ViT)",
               "patch embedding (a p x p convolution of stride p), learned position table, "
               "pre-norm encoder layers"),
        Source("zhai2023", "Zhai et al. 2023, Sigmoid Loss for Language Image Pre-Training (SigLIP)",
               "the SigLIP vision tower: biased attention and MLP, LayerNorms, attention-pooling "
               "head (transformers 5.24 models/siglip)"),
        Source("gemma2025", "Gemma Team 2025, Gemma 3 Technical Report (arXiv:2503.19786)",
               "the multimodal projector: an RMSNorm of the pooled SigLIP tokens and one "
               "d_vision x d_text matrix (Gemma3MultiModalProjector)"),
        Source("modernvbert2025", "ModernVBERT 2025, ModernVBERT model card (ModernVBERT/modernvbert)",
               "the connector: a pixel shuffle of pixel_shuffle_factor^2 patches and one bias-free "
               "linear to the text width (transformers modeling_modernvbert.py "
               "ModernVBertConnector)"),
        Source("agrawal2024", "Agrawal et al. 2024, Pixtral 12B (arXiv:2410.07073)",
               "the Pixtral vision encoder (bias-free patch convolution, RMSNorm, SwiGLU layers, "
               "2D rotary positions) and Mistral 3's projector (RMSNorm, m x m patch merger, two "
               "linear layers)"),
        Source("meta2025llama4", "Meta 2025, The Llama 4 herd (Llama-4-Scout-17B-16E model card; "
               "transformers 5.24 models/llama4)",
               "the Llama 4 vision encoder (unfolded patch projection, class token, learned "
               "positions, biased layers, pixel-shuffle MLP adapter) and its one-matrix projector"),
        Source("qwen2025vl", "Qwen team 2025, Qwen2.5-VL / Qwen3.5 vision encoder "
               "(transformers 5.24 models/qwen3_5 Qwen3_5VisionModel)",
               "3D patch convolution, learned positions, biased pre-norm ViT blocks, and a merger "
               "of m x m neighbouring patches (LayerNorm and two linear layers) into the text width"),
        Source("baykal2023", "Baykal et al. 2023, Alternating Updates for Efficient Transformers "
               "(AltUp), NeurIPS 2023",
               "n_alt streams of width d, one computed per layer: a predict step mixing the streams "
               "(n_alt x n_alt coefficients per token from a router) and a correct step (n_alt "
               "gains) around it (transformers 5.24 Gemma3nTextAltUp)"),
        Source("menghani2024", "Menghani et al. 2024, LAuReL: Learned Augmented Residual Layer "
               "(arXiv:2411.07501)",
               "a low-rank learned residual, d -> r -> d, added beside the layer's main branch"),
        Source("gemma3n2025", "Google 2025, Gemma 3n model card and developer guide; transformers "
               "5.24 models/gemma3n (Gemma3nTextModel, Gemma3nTextDecoderLayer, "
               "Gemma3nTextAttention)",
               "per-layer embeddings (a V_ple x L d_ple table and a projection of the token "
               "embedding, gated into each layer), the last layers reusing earlier layers' keys "
               "and values, MatFormer per-layer FFN widths"),
        Source("wang2023bitnet", "Wang et al. 2023, BitNet: Scaling 1-bit Transformers for Large "
               "Language Models (arXiv:2310.11453); Ma et al. 2024, The Era of 1-bit LLMs "
               "(BitNet b1.58, arXiv:2402.17764); transformers 5.24 models/bitnet",
               "ternary weight matrices; a norm on the attention output before its projection and "
               "one on the FFN's product before its down projection (sub-norms)"),
        Source("ye2025diff", "Ye et al. 2025, Differential Transformer (ICLR 2025, "
               "arXiv:2410.05258); transformers 5.24 models/diffllama (DiffLlamaAttention)",
               "two softmax maps subtracted with a learned lambda (four head-width vectors per "
               "layer); transformers runs the eager core twice, on the two halves of the values"),
        Source("longcat2025", "Meituan LongCat Team 2025, LongCat-Flash Technical Report "
               "(arXiv:2509.01322); transformers 5.24 models/longcat_flash",
               "zero-computation (identity) experts beside the routed ones, scored by the router; "
               "two attention and MLP sublayers per layer with a shortcut MoE"),
        Source("huang2025", "Huang & Schlag 2025, Deriving Activation Functions Using Integration "
               "(arXiv:2411.13010); transformers 5.24 activations.py XIELUActivation",
               "xIELU: an activation with two learned scalars, alpha_p and alpha_n, per layer"),
        Source("gemma4_2026", "Google DeepMind 2026, Gemma 4 model card; transformers 5.24 "
               "models/gemma4 (Gemma4TextConfig, Gemma4TextAttention, Gemma4TextRouter, "
               "Gemma4TextDecoderLayer)",
               "global layers with their own head width (global_head_dim) and key/value heads, "
               "their values taken from the keys (attention_k_eq_v); an MoE block beside the "
               "dense MLP with three norms and a router scaling its input and each expert"),
        Source("dots2026llm3", "rednote hilab 2026, dots.llm3 / dots3-note model card "
               "(dots-studio/dots3-note-prev); transformers 5.24 models/dots3_note "
               "(Dots3NoteTextConfig, Dots3NoteTextAttention)",
               "multi-head latent attention whose sliding layers have their own heads, latent "
               "ranks and head widths (per_layer_config), with the shared rotary key RMS-normed "
               "(k_rope_only_layernorm) and a sigmoid gate per head"),
        Source("wang2025hrm", "Wang et al. 2025, Hierarchical Reasoning Model (arXiv:2506.21734); "
               "transformers 5.24 models/hrm_text (HrmTextModel)",
               "two stacks run in nested cycles (L_cycles low-level runs per high-level one), "
               "the low-level one from a learned initial state z_L_init"),
        Source("gemma4_assistant_2026", "Google DeepMind 2026, Gemma 4 model card (assistant "
               "models for speculative decoding); transformers 5.24 models/gemma4_assistant "
               "(Gemma4AssistantForCausalLM)",
               "a drafter whose layers all attend over the target model's keys and values, "
               "between a projection of the target's embedding and hidden state (2 d_bb -> d) "
               "and one back to its width (d -> d_bb)"),
        Source("gemma4_unified_2026", "Google DeepMind 2026, Gemma 4 model card (google/gemma-4-12B); "
               "transformers 5.24 models/gemma4_unified (Gemma4UnifiedVisionEmbedder, "
               "Gemma4UnifiedMultimodalEmbedder)",
               "encoder-free embedders: raw merged patches through LayerNorms, a dense layer and a "
               "factorized 2-D position table, raw audio frames, each mapped into the text width"),
        # parallel layouts (symcalc.algebra.parallel, docs/conventions.md)
        Source("shoeybi2019", "Shoeybi et al. 2019, Megatron-LM: Training Multi-Billion Parameter "
               "Language Models Using Model Parallelism",
               "Sec. 3: column-parallel then row-parallel projections, one all-reduce after "
               "attention and one after the MLP in the forward (two in the backward); "
               "vocabulary-parallel embedding and output layer"),
        Source("megatron_lm", "NVIDIA Megatron-LM (megatron/training/theoretical_memory_usage.py, "
               "megatron/core/tensor_parallel, megatron/training/tokenizer)",
               "vocabulary padded to a multiple of make_vocab_size_divisible_by (128) x t; the "
               "most-loaded shard holds L/p layers and the embedding over t; 18 bytes per "
               "parameter (6 + 12/N_d with the distributed optimizer); the first stage keeps "
               "the in-flight microbatches' activations"),
        Source("torch_tp", "PyTorch 2.13 torch.distributed.tensor.parallel (parallelize_module, "
               "ColwiseParallel, RowwiseParallel) and DTensor's Shard placement",
               "colwise shards a weight's output rows and its bias, rowwise its input columns "
               "with the bias replicated, a Shard placement splits as torch.chunk (rank 0 holds "
               "ceil(n/t)); a rowwise output is a partial sum all-reduced to every rank"),
        Source("hf_tp_plan", "Hugging Face transformers 5.24, base_model_tp_plan of each "
               "configuration and transformers/distributed/tensor_parallel.py",
               "which module each tensor-parallel style applies to; packed and expert styles; "
               "the pipeline split (remainder layers to the first stages)"),
        Source("narayanan2021pp", "Narayanan et al. 2021, Efficient Large-Scale Language Model "
               "Training on GPU Clusters Using Megatron-LM",
               "Sec. 2.2: 1F1B keeps at most p microbatches in flight on the first stage; the "
               "interleaved schedule with v chunks per rank; point-to-point activations and "
               "gradients between stages; scatter/gather of the sent activations over t"),
        Source("korthikanti2022sp", "Korthikanti et al. 2022, Reducing Activation Recomputation in "
               "Large Transformer Models",
               "Sec. 4.2.2: sequence parallelism turns each all-reduce into a reduce-scatter and "
               "an all-gather of the same bytes on the wire and splits the remaining activations "
               "over t"),
        Source("rajbhandari2020comm", "Rajbhandari et al. 2020, ZeRO",
               "Sec. 7: data parallelism all-reduces 2 Psi per step; ZeRO-1/2 a reduce-scatter "
               "of the gradients and an all-gather of the weights (same volume); ZeRO-3 adds "
               "an all-gather of the weights in the forward and again in the backward "
               "(3 Psi)"),
        Source("deepspeed_estimate", "DeepSpeed, deepspeed/runtime/zero/stage_1_and_2.py "
               "estimate_zero2_model_states_mem_needs and stage3.py "
               "estimate_zero3_model_states_mem_needs (no offload)",
               "ZeRO-2: 4 bytes per parameter whole + 16 partitioned; ZeRO-3: 18 partitioned "
               "+ 4 bytes per parameter of the largest layer"),
        Source("lepikhin2021", "Lepikhin et al. 2021, GShard; Fedus et al. 2022, Switch "
               "Transformers",
               "expert parallelism: an all-to-all dispatches each token to the ranks of its "
               "experts and another combines the outputs, twice more in the backward"),
        Source("liu2023ring", "Liu et al. 2023, Ring Attention with Blockwise Transformers for "
               "Near-Infinite Context",
               "context parallelism: each rank keeps s/c tokens and passes its key/value block "
               "around a ring of c ranks (c - 1 steps per layer)"),
        Source("jacobs2023", "Jacobs et al. 2023, DeepSpeed Ulysses",
               "sequence-parallel attention by all-to-alls of q, k, v and the output (four per "
               "layer in the forward)"),
        Source("thakur2005", "Thakur et al. 2005, Optimization of Collective Communication "
               "Operations in MPICH; Patarasuk & Yuan 2009, bandwidth optimal all-reduce",
               "ring algorithms: an all-reduce sends 2(n-1)/n of its payload per rank, a "
               "reduce-scatter or all-gather (n-1)/n, an all-to-all (n-1)/n"),
        # how fast (issue 23): roofline, utilization, serving capacity
        Source("williams2009", "Williams, Waterman & Patterson 2009, Roofline: An Insightful "
               "Visual Performance Model for Multicore Architectures",
               "attainable FLOP/s = min(peak, arithmetic intensity x memory bandwidth); the "
               "ridge point peak / bandwidth separates memory- from compute-bound work"),
        Source("pope2022time", "Pope et al. 2022, Efficiently Scaling Transformer Inference",
               "Sec. 2-3: a step takes at least the larger of its FLOPs over peak and its "
               "bytes (weights, KV cache) over memory bandwidth, plus its communication; "
               "decode is memory-bound at small batch"),
        Source("uniform_routing", "symcalc: experts a batch reads under uniform routing",
               "n tokens each picking k of E experts at random touch E (1 - (1 - k/E)^n) "
               "experts on average (the occupancy count), rounded up to whole experts"),
        Source("megatron_flops", "NVIDIA Megatron-LM, megatron/training/training.py, "
               "num_floating_point_operations",
               "12 B s L d^2 ((1 + n_kv/n_h + s/(2d)) n_h d_h / d + (d_ff/d) (3/2 if gated) "
               "+ V_pad / (2 L d)) per step: the FLOPs Megatron-LM logs and divides by time "
               "for its throughput per GPU (no recomputation, causal half of the scores)"),
        Source("korthikanti2022hfu", "Korthikanti et al. 2022, Reducing Activation "
               "Recomputation in Large Transformer Models",
               "Sec. 6.3: model FLOPs utilization counts the model's FLOPs; hardware FLOPs "
               "utilization also counts the recomputed ones"),
        Source("vllm_worker", "vLLM, vllm/v1/worker/gpu_worker.py (determine_available_memory) "
               "and vllm/utils/mem_utils.py (memory_profiling)",
               "KV cache memory = total memory x gpu_memory_utilization - (weights + peak "
               "activations of a profile run over max_num_batched_tokens tokens + memory "
               "outside torch)"),
        Source("vllm_kv_cache_utils", "vLLM, vllm/v1/core/kv_cache_utils.py (get_num_blocks, "
               "get_kv_cache_groups, get_max_concurrency_for_kv_cache_config)",
               "blocks = available // page_size // layers per group; layer types split into "
               "groups of equal size (the smallest type's layer count, or the largest's when "
               "below 1.5 times it); max concurrency = blocks / blocks one request needs"),
        Source("vllm_kv_cache_interface", "vLLM, vllm/v1/kv_cache_interface.py "
               "(FullAttentionSpec, SlidingWindowSpec, MLAAttentionSpec, MambaSpec)",
               "page = block_size x kv heads x (head size + value head size) x dtype bytes "
               "(MLA: one latent of r_kv + d_rope); a request needs cdiv(max_model_len, "
               "block_size) pages of a full-attention layer, cdiv(min(W - 1 + "
               "max_num_batched_tokens, max_model_len), block_size) + 1 of a sliding one, one "
               "of a recurrent (Mamba) layer"),
        Source("vllm_hybrid_block", "vLLM, HybridAttentionMambaModelConfig."
               "verify_and_update_config (vllm/model_executor/models/config.py)",
               "with recurrent layers the attention block size rises to the smallest multiple "
               "of the kernel alignment whose page holds one layer's state; the state's page "
               "is padded to the attention page"),
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

"""Parameter counts of what a multimodal checkpoint puts around its language model: the vision
tower that turns an image into patch vectors, and the projector that maps those into the
language model's width. Math only: sympy expressions over the vision config's sizes, each
part citing its source (a key of :mod:`symcalc.derivations.sources`).

The language model itself is the text spec (:mod:`symcalc.algebra.accounting`); a family file
with a ``[wrapper]`` table (docs/families.md, "Nested configs") names a tower and a projector
of this module and gives their sizes as expressions over the config. FLOPs and memory of these
parts are not modelled.

The symbols are local to this module (prefixed ``v_``) so they never meet the language model's:

| symbol | meaning |
|---|---|
| ``v_L`` | vision encoder layers |
| ``v_d`` | vision hidden width |
| ``v_a`` | attention width (heads x head dim) where it may differ from ``v_d`` (Llama 4) |
| ``v_ff`` | vision MLP width |
| ``v_C`` | image channels |
| ``v_p`` | patch side (pixels) |
| ``v_np`` | learned position rows (patches per image) |
| ``v_head`` | 1 when SigLIP's attention-pooling head is built |
| ``v_dt`` | the language model's hidden width (the projector's output) |
| ``v_m`` | Mistral 3 patch merger: m x m neighbouring patches merged into one |
| ``v_nf`` | vision feature layers concatenated into the projector (Mistral 3) |
| ``v_pb`` | 1 when the projector's linear layers have biases |
| ``v_pin``, ``v_pout`` | Llama 4 pixel-shuffle adapter widths (projector_input_dim, projector_output_dim) |
| ``v_out`` | Llama 4 vision_output_dim (the projector's input) |
| ``v_T`` | Qwen3.5 temporal patch size (frames per patch) |
| ``v_mo`` | Qwen3.5 merger output width (out_hidden_size) |
| ``v_hd`` | vision head width (hidden // heads), the width of SAM's relative-position rows |
| ``v_rp`` | SAM's relative-position rows over all layers: 2 (2 w - 1) per windowed layer (window w), 2 (2 n - 1) per global layer (n patches a side) |
| ``v_oc`` | SAM's neck output channels (output_channels) |
| ``v_qb`` | 1 when SAM's fused q/k/v projection has a bias (qkv_bias) |
| ``v_abs`` | 1 when SAM learns an absolute position table (use_abs_pos) |
| ``v_rel`` | 1 when SAM learns relative-position rows (use_rel_pos) |
| ``v_M`` | mel bins of an audio encoder's input (num_mel_bins) |
| ``v_sp`` | an audio encoder's learned position rows (max_source_positions) |
| ``v_am`` | audio encoder frames concatenated into one projector input (MOSS: audio_merge_size) |
| ``v_cL``, ``v_cd``, ``v_cff`` | Phi-4's conformer: blocks, width, feed-forward width |
| ``v_ca``, ``v_ch`` | the conformer's attention width (heads x head dim) and heads |
| ``v_cE``, ``v_cS`` | the conformer's point-wise (ext_pw_out_channel) and depth-wise separable output channels |
| ``v_cm``, ``v_ck`` | the conformer's depth-wise multiplier and kernel size |
| ``v_cC``, ``v_cn``, ``v_cF`` | the conformer's subsampling: channels, stride-2 stages after the first (int(log2 time_reduction) - 1, may be 0), frequency rows left (nemo_final_size) |
| ``v_cB`` | the conformer's relative attention bias buckets |
| ``v_vis``, ``v_aud`` | 1 when Gemma 4 unified builds its vision or its audio embedder |
| ``v_au`` | Gemma 4 unified audio frame width (audio_embed_dim) |

An audio tower (Whisper's encoder) is read the same way, from the config under the wrapper's
``audio_config`` key; its sizes share these names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

v_L, v_d, v_a, v_ff, v_C, v_p, v_np, v_dt, v_m, v_nf, v_pin, v_pout, v_out = sp.symbols(
    "v_L v_d v_a v_ff v_C v_p v_np v_dt v_m v_nf v_pin v_pout v_out", positive=True, integer=True)
v_T, v_mo, v_hd, v_rp, v_oc = sp.symbols("v_T v_mo v_hd v_rp v_oc", positive=True, integer=True)
v_M, v_sp, v_am, v_au = sp.symbols("v_M v_sp v_am v_au", positive=True, integer=True)
v_cL, v_cd, v_cff, v_ca, v_ch, v_cE, v_cS, v_cm, v_ck, v_cC, v_cF, v_cB = sp.symbols(
    "v_cL v_cd v_cff v_ca v_ch v_cE v_cS v_cm v_ck v_cC v_cF v_cB", positive=True, integer=True)
v_cn = sp.Symbol("v_cn", nonnegative=True, integer=True)
v_head, v_pb, v_qb, v_abs, v_rel, v_vis, v_aud = sp.symbols(
    "v_head v_pb v_qb v_abs v_rel v_vis v_aud", nonnegative=True, integer=True)

SYMBOLS: dict[str, sp.Symbol] = {s.name: s for s in (
    v_L, v_d, v_a, v_ff, v_C, v_p, v_np, v_dt, v_m, v_nf, v_pin, v_pout, v_out, v_T, v_mo, v_hd,
    v_rp, v_oc, v_M, v_sp, v_am, v_au, v_head, v_pb, v_qb, v_abs, v_rel, v_vis, v_aud, v_cL, v_cd,
    v_cff, v_ca, v_ch, v_cE, v_cS, v_cm, v_ck, v_cC, v_cn, v_cF, v_cB)}
SWITCHES = frozenset({"v_head", "v_pb", "v_qb", "v_abs", "v_rel", "v_vis", "v_aud"})
# counts that may be 0 (every other size that is not a switch is a positive integer)
COUNTS = frozenset({"v_cn"})


@dataclass(frozen=True)
class Part:
    """One part around the language model: its breakdown (path -> expression) and source."""

    kind: str
    role: str  # "vision_tower", "audio_tower" or "projector"
    description: str
    source: str
    terms: dict[str, sp.Expr]

    @property
    def total(self) -> sp.Expr:
        return sp.Add(*self.terms.values())

    @property
    def symbols(self) -> frozenset[str]:
        return frozenset(s.name for e in self.terms.values() for s in e.free_symbols)


def _layer_norm(width: sp.Expr) -> sp.Expr:
    return 2 * width  # scale and shift


def _linear(n_in: sp.Expr, n_out: sp.Expr, bias: sp.Expr = 1) -> sp.Expr:
    return n_in * n_out + bias * n_out


def siglip() -> Part:
    """SigLIP's vision transformer (transformers SiglipVisionModel): a biased p x p patch
    convolution, a learned position row per patch, pre-norm layers with biased q/k/v/o and a
    biased two-layer MLP, a final LayerNorm and, when ``vision_use_head``, the attention-pooling
    head (a probe vector, torch's MultiheadAttention with packed in-projection, a LayerNorm and
    another MLP)."""
    mlp = _linear(v_d, v_ff) + _linear(v_ff, v_d)
    layer = 4 * _linear(v_d, v_d) + mlp + 2 * _layer_norm(v_d)
    head = v_d + _linear(v_d, 3 * v_d) + _linear(v_d, v_d) + _layer_norm(v_d) + mlp
    return Part("siglip", "vision_tower", "SigLIP vision transformer", "zhai2023", {
        "vision_tower/patch_embedding": v_C * v_p**2 * v_d + v_d,
        "vision_tower/position_embedding": v_np * v_d,
        "vision_tower/layers": v_L * layer,
        "vision_tower/post_norm": _layer_norm(v_d),
        "vision_tower/head": v_head * head,
    })


def pixtral() -> Part:
    """Pixtral's vision encoder (transformers PixtralVisionModel): a bias-free patch
    convolution, an RMSNorm before the layers, then layers of bias-free attention, a SwiGLU
    MLP and two RMSNorms; positions are 2D rotary (no parameters), no final norm."""
    layer = 4 * v_d**2 + 3 * v_d * v_ff + 2 * v_d
    return Part("pixtral", "vision_tower", "Pixtral vision encoder", "agrawal2024", {
        "vision_tower/patch_embedding": v_C * v_p**2 * v_d,
        "vision_tower/pre_norm": v_d,
        "vision_tower/layers": v_L * layer,
    })


def llama4_vision() -> Part:
    """Llama 4's vision encoder (transformers Llama4VisionModel): an unfold + bias-free linear
    patch projection, a class token and a learned position row per patch (plus one for the
    class token), LayerNorms before and after the layers, layers with biased attention of width
    heads x head_dim and a biased two-layer MLP, then the pixel-shuffle adapter (two bias-free
    linear layers: v_ff -> v_pin, v_pout -> v_pout)."""
    layer = (3 * _linear(v_d, v_a) + _linear(v_a, v_d) + _linear(v_d, v_ff) + _linear(v_ff, v_d)
             + 2 * _layer_norm(v_d))
    return Part("llama4", "vision_tower", "Llama 4 vision encoder", "meta2025llama4", {
        "vision_tower/patch_embedding": v_C * v_p**2 * v_d,
        "vision_tower/class_embedding": v_d,
        "vision_tower/position_embedding": v_np * v_d,
        "vision_tower/norms": 2 * _layer_norm(v_d),
        "vision_tower/layers": v_L * layer,
        "vision_tower/adapter": v_ff * v_pin + v_pout**2,
    })


def qwen3_5_vision() -> Part:
    """Qwen3.5's vision encoder (transformers Qwen3_5VisionModel, the same in Qwen3.5-MoE): a
    biased 3D patch convolution over v_T frames of v_p x v_p pixels, a learned position row
    per patch, pre-norm blocks (two LayerNorms, a fused biased q/k/v, a biased output, a biased
    two-layer MLP), and the merger that is its projector: a LayerNorm, then v_m x v_m
    neighbouring patches concatenated (m^2 v_d) through two biased linear layers into
    v_mo (out_hidden_size, the text width)."""
    merged = v_m**2 * v_d
    layer = (2 * _layer_norm(v_d) + _linear(v_d, 3 * v_d) + _linear(v_d, v_d)
             + _linear(v_d, v_ff) + _linear(v_ff, v_d))
    return Part("qwen3_5", "vision_tower", "Qwen3.5 vision encoder with patch merger",
                "qwen2025vl", {
                    "vision_tower/patch_embedding": v_C * v_T * v_p**2 * v_d + v_d,
                    "vision_tower/position_embedding": v_np * v_d,
                    "vision_tower/layers": v_L * layer,
                    "vision_tower/merger": _layer_norm(v_d) + _linear(merged, merged)
                    + _linear(merged, v_mo),
                })


def clip_vision() -> Part:
    """CLIP's vision transformer as GIT builds it (transformers GitVisionModel): a class token,
    a bias-free patch convolution, a learned position row per patch plus one for the class
    token, a LayerNorm before and after the layers, and pre-norm layers with biased q/k/v/o
    and a biased two-layer MLP."""
    layer = 4 * _linear(v_d, v_d) + _linear(v_d, v_ff) + _linear(v_ff, v_d) + 2 * _layer_norm(v_d)
    return Part("clip_vit", "vision_tower", "CLIP vision transformer (GIT)", "radford2021clip", {
        "vision_tower/class_embedding": v_d,
        "vision_tower/patch_embedding": v_C * v_p**2 * v_d,
        "vision_tower/position_embedding": v_np * v_d,
        "vision_tower/norms": 2 * _layer_norm(v_d),
        "vision_tower/layers": v_L * layer,
    })


def git_projector() -> Part:
    """GIT's visual projection (GitProjection): one biased v_d x v_dt linear and a LayerNorm of
    the text width."""
    return Part("git", "projector", "GIT visual projection", "wang2022git", {
        "projector/linear": _linear(v_d, v_dt),
        "projector/norm": _layer_norm(v_dt),
    })


def sam_vision() -> Part:
    """GOT-OCR 2.0's vision encoder, SAM's ViT (transformers GotOcr2VisionEncoder): a biased
    p x p patch convolution, a learned absolute position table of n x n patches
    (``use_abs_pos``), pre-norm layers with a fused q/k/v (biased when ``qkv_bias``), a biased
    output, a biased two-layer MLP and two LayerNorms, each layer's attention with a pair of
    relative-position tables (``use_rel_pos``: 2 w - 1 rows of head width per axis, w its
    window, n for the global layers), then the neck: a 1 x 1 and a 3 x 3 convolution without
    bias, each followed by a LayerNorm over the channels."""
    layer = (2 * _layer_norm(v_d) + _linear(v_d, 3 * v_d, v_qb) + _linear(v_d, v_d)
             + _linear(v_d, v_ff) + _linear(v_ff, v_d))
    return Part("sam_vit", "vision_tower", "SAM vision encoder (GOT-OCR 2.0)", "kirillov2023", {
        "vision_tower/patch_embedding": v_C * v_p**2 * v_d + v_d,
        "vision_tower/position_embedding": v_abs * v_np * v_d,
        "vision_tower/layers": v_L * layer,
        "vision_tower/relative_positions": v_rel * v_rp * v_hd,
        "vision_tower/neck": v_d * v_oc + 9 * v_oc**2 + 2 * _layer_norm(v_oc),
    })


def got_ocr2_projector() -> Part:
    """GOT-OCR 2.0's projector (GotOcr2MultiModalProjector): two 3 x 3 stride-2 convolutions
    without bias (v_oc -> 2 v_oc -> v_dt channels), then one biased v_dt x v_dt linear."""
    return Part("got_ocr2", "projector", "GOT-OCR 2.0 projector", "wei2024got", {
        "projector/upsampler_1": 9 * v_oc * 2 * v_oc,
        "projector/upsampler_2": 9 * 2 * v_oc * v_dt,
        "projector/linear": _linear(v_dt, v_dt),
    })


def whisper_encoder() -> Part:
    """Whisper's audio encoder as MOSS-Transcribe-Diarize builds it
    (MossTranscribeDiarizeAudioModel): two biased 1-D convolutions of width 3 (v_M mel bins ->
    v_d, v_d -> v_d), a learned position row per source frame, pre-norm layers whose attention
    has biased q, v and output projections and a key projection without bias, a biased
    two-layer MLP and two LayerNorms, and a final LayerNorm."""
    layer = (3 * _linear(v_d, v_d) + v_d**2 + _linear(v_d, v_ff) + _linear(v_ff, v_d)
             + 2 * _layer_norm(v_d))
    return Part("whisper", "audio_tower", "Whisper audio encoder", "radford2022whisper", {
        "audio_tower/conv1": 3 * v_M * v_d + v_d,
        "audio_tower/conv2": 3 * v_d * v_d + v_d,
        "audio_tower/position_embedding": v_sp * v_d,
        "audio_tower/layers": v_L * layer,
        "audio_tower/norm": _layer_norm(v_d),
    })


def moss_audio_projector() -> Part:
    """MOSS-Transcribe-Diarize's projector (MossTranscribeDiarizeMultiModalProjector): v_am
    consecutive encoder frames concatenated, two linear layers into the language model's width
    (biased when ``projector_bias``) and a LayerNorm."""
    return Part("moss_audio", "projector", "MOSS audio projector", "moss2025transcribe", {
        "projector/linear_1": _linear(v_am * v_d, v_dt, v_pb),
        "projector/linear_2": _linear(v_dt, v_dt, v_pb),
        "projector/norm": _layer_norm(v_dt),
    })


def phi4_conformer() -> Part:
    """Phi-4-multimodal's speech encoder (transformers Phi4MultimodalAudioModel), a conformer:
    the mean-variance normalisation holds buffers only; the subsampling runs stride-2 stages,
    the first a biased 3 x 3 convolution from one channel to v_cC, each of the v_cn others a
    depth-wise 3 x 3 and a point-wise convolution (both biased), then a biased linear from the
    v_cC v_cF flattened rows to v_cd; a relative attention bias table (v_cB buckets by v_ch
    heads); then v_cL blocks, each two feed-forward modules (a LayerNorm, a biased fused
    gate/up linear into 2 v_cff, a biased down linear), biased q/k/v/o of width v_ca, a
    convolution module (a LayerNorm, a biased point-wise GLU convolution into 2 v_cE with two
    extra bias vectors of v_cE, a biased depth-wise convolution of kernel v_ck and multiplier
    v_cm, a biased point-wise convolution into v_cS, a biased point-wise convolution into
    v_cE) and two LayerNorms."""
    ffn = _layer_norm(v_cd) + _linear(v_cd, 2 * v_cff) + _linear(v_cff, v_cd)
    attention = 3 * _linear(v_cd, v_ca) + _linear(v_ca, v_cd)
    conv = (_layer_norm(v_cd) + _linear(v_cd, 2 * v_cE) + 2 * v_cE
            + v_cd * v_cm * v_ck + v_cd * v_cm + _linear(v_cd * v_cm, v_cS) + _linear(v_cd, v_cE))
    layer = 2 * ffn + attention + conv + 2 * _layer_norm(v_cd)
    return Part("phi4_conformer", "audio_tower", "Phi-4-multimodal conformer speech encoder",
                "gulati2020conformer", {
                    "audio_tower/subsampling": 10 * v_cC + v_cn * (11 * v_cC + v_cC**2)
                    + _linear(v_cC * v_cF, v_cd),
                    "audio_tower/relative_attention_bias": v_cB * v_ch,
                    "audio_tower/layers": v_cL * layer,
                })


def phi4_projector() -> Part:
    """Phi-4-multimodal's embedders around its towers (Phi4MultimodalImageEmbedding,
    Phi4MultimodalAudioEmbedding): the image's biased up (v_d -> v_dt) and down (v_dt -> v_dt)
    projections with the global and sub-image separators (glb_GN, sub_GN: v_d each), and two
    pairs of biased up (v_am v_cd -> v_dt) and down projections for speech, one for speech
    alone, one for speech beside an image."""
    speech = _linear(v_am * v_cd, v_dt) + _linear(v_dt, v_dt)
    return Part("phi4_mm", "projector", "Phi-4-multimodal image and speech projections",
                "microsoft2025phi4mm", {
                    "projector/image": _linear(v_d, v_dt) + _linear(v_dt, v_dt),
                    "projector/image_separators": 2 * v_d,
                    "projector/speech": 2 * speech,
                })


def gemma3_projector() -> Part:
    """Gemma 3's projector (Gemma3MultiModalProjector): average pooling (no parameters), an
    RMSNorm of the vision width, one v_d x v_dt matrix without bias."""
    return Part("gemma3", "projector", "Gemma 3 multimodal projector", "gemma2025", {
        "projector/norm": v_d,
        "projector/linear": v_d * v_dt,
    })


def mistral3_projector() -> Part:
    """Mistral 3's projector (Mistral3MultiModalProjector): an RMSNorm of the vision width, the
    patch merger (one bias-free (m^2 v_d) x v_d matrix), then linear_1 (v_nf v_d -> v_dt) and
    linear_2 (v_dt -> v_dt), biased when ``multimodal_projector_bias``."""
    return Part("mistral3", "projector", "Mistral 3 projector with patch merger", "agrawal2024", {
        "projector/norm": v_d,
        "projector/patch_merger": v_m**2 * v_d * v_d,
        "projector/linear_1": _linear(v_nf * v_d, v_dt, v_pb),
        "projector/linear_2": _linear(v_dt, v_dt, v_pb),
    })


def modernvbert_projector() -> Part:
    """ModernVBERT's connector (ModernVBertConnector): a pixel shuffle folding each v_m x v_m
    block of patches into one token of v_m^2 v_d channels (no parameters), then one bias-free
    (v_m^2 v_d) x v_dt matrix."""
    return Part("modernvbert", "projector", "ModernVBERT connector (pixel shuffle and one linear)",
                "modernvbert2025", {
                    "projector/modality_projection": v_m**2 * v_d * v_dt,
                })


def ultravbert_projector() -> Part:
    """UltraVBERT's connector (UltraVBertConnector): ModernVBERT's pixel shuffle and bias-free
    (v_m^2 v_d) x v_dt matrix, then an RMSNorm of the text width (UltraBERT has no embedding
    norm to set the image tokens' scale)."""
    return Part("ultravbert", "projector",
                "UltraVBERT connector (pixel shuffle, one linear and an RMSNorm)", "modernvbert2025", {
                    "projector/modality_projection": v_m**2 * v_d * v_dt,
                    "projector/norm": v_dt,
                })


def llama4_projector() -> Part:
    """Llama 4's projector (Llama4MultiModalProjector): one bias-free v_out x v_dt matrix."""
    return Part("llama4", "projector", "Llama 4 multimodal projector", "meta2025llama4", {
        "projector/linear": v_out * v_dt,
    })


def fuyu_projector() -> Part:
    """Fuyu's patch embedding (FuyuModel.vision_embed_tokens): each image patch of v_p x v_p
    pixels in v_C channels flattened and mapped by one biased linear into the decoder's width
    v_dt; there is no vision tower."""
    return Part("fuyu", "projector", "Fuyu linear patch embedding", "adept2023fuyu", {
        "projector/linear": _linear(v_p**2 * v_C, v_dt),
    })


def gemma4_unified_projector() -> Part:
    """Gemma 4 unified's encoder-free embedders (Gemma4UnifiedVisionEmbedder and the audio
    Gemma4UnifiedMultimodalEmbedder), each built only when its config is given (``v_vis``,
    ``v_aud``). Vision: a merged patch of v_C x v_p^2 raw values (v_p = patch_size x
    pooling_kernel_size), a LayerNorm, one biased linear into v_d (mm_embed_dim), a LayerNorm,
    a factorized position table of v_np rows for each of the two axes, a LayerNorm, then a
    weightless RMSNorm and one bias-free v_out x v_dt matrix (output_proj_dims into the text
    width). Audio: raw frames of v_au samples through a weightless RMSNorm and one bias-free
    v_au x v_dt matrix."""
    patch = v_C * v_p**2
    return Part("gemma4_unified", "projector", "Gemma 4 unified vision and audio embedders",
                "gemma4_unified_2026", {
                    "projector/vision_patch": v_vis * (_layer_norm(patch) + _linear(patch, v_d)
                                                       + _layer_norm(v_d)),
                    "projector/vision_position": v_vis * (2 * v_np * v_d + _layer_norm(v_d)),
                    "projector/vision_linear": v_vis * v_out * v_dt,
                    "projector/audio_linear": v_aud * v_au * v_dt,
                })


TOWERS: dict[str, Callable[[], Part]] = {
    "siglip": siglip, "pixtral": pixtral, "llama4": llama4_vision, "qwen3_5": qwen3_5_vision,
    "sam_vit": sam_vision, "clip_vit": clip_vision}
PROJECTORS: dict[str, Callable[[], Part]] = {
    "gemma3": gemma3_projector, "mistral3": mistral3_projector, "llama4": llama4_projector,
    "fuyu": fuyu_projector, "got_ocr2": got_ocr2_projector, "moss_audio": moss_audio_projector,
    "git": git_projector, "gemma4_unified": gemma4_unified_projector, "phi4_mm": phi4_projector,
    "modernvbert": modernvbert_projector, "ultravbert": ultravbert_projector}
AUDIO_TOWERS: dict[str, Callable[[], Part]] = {"whisper": whisper_encoder,
                                               "phi4_conformer": phi4_conformer}
TABLES: dict[str, dict[str, Callable[[], Part]]] = {
    "vision_tower": TOWERS, "audio_tower": AUDIO_TOWERS, "projector": PROJECTORS}


def part(role: str, kind: str) -> Part:
    """The tower (``role="vision_tower"`` or ``"audio_tower"``) or projector of ``kind``."""
    return TABLES[role][kind]()


def numbers(p: Part, sizes: dict[str, int]) -> dict[str, int]:
    """Each breakdown path of ``p`` as an exact integer at ``sizes`` (symbol name -> value)."""
    subs = {SYMBOLS[k]: v for k, v in sizes.items() if k in SYMBOLS}
    out: dict[str, int] = {}
    for path, expr in p.terms.items():
        value = sp.Integer(expr.xreplace(subs))
        out[path] = int(value)
    return out

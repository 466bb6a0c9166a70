"""Reference ("ground truth") parameter and matmul-FLOP counts taken from Hugging Face transformers.

Plain helper module for the symcalc tests (no test functions here).  Given a config.json-style dict
(with "model_type" and usually "architectures"), it builds the transformers model and asks it:

* ``reference_params(config)`` -> ``model.num_parameters()`` of the model built on the meta device
  (tied weights counted once).
* ``reference_forward_matmul_flops(config, batch, seq_len)`` -> total of
  ``torch.utils.flop_counter.FlopCounterMode`` over one eager-attention forward pass
  (eval, ``torch.no_grad()``, ``use_cache=False``), on the meta device when the model runs there
  (every family checked so far), else on CPU with small real weights (see below).
* ``generated_configs()`` -> 74 tiny deterministic configs of the first seven families;
  ``PRESET_CONFIGS`` -> their real hub configs; ``family_configs()`` -> every
  ``tests/families/<model_type>/*.json``; ``family_files()`` -> ``symcalc/inputs/families/*.toml`` read
  as TOML.

Works for any ``model_type`` transformers knows (verified against transformers 5.24.0 / torch
2.13.0 CPU for bert, gpt2, t5, llama, mistral, qwen2, mixtral, gemma, gemma2, gemma3_text, qwen3,
qwen3_moe, qwen2_moe, phi, phi3, falcon, gpt_neox, gptj, opt, olmo2, starcoder2, granite, cohere,
stablelm, bloom, mpt, deepseek_v2, deepseek_v3, gpt_oss):

The model
  The class is ``getattr(transformers, architectures[0])``; without ``architectures`` it is the
  family file's ``bare_class`` (symcalc/inputs/families/<model_type>.toml), else the bare class of the
  first seven, else transformers' own ``MODEL_MAPPING_NAMES[model_type]``.  The config is
  ``AutoConfig.for_model(model_type, **keys)`` without the metadata keys (``_DROP_KEYS``: dtype
  keys are dropped so everything is fp32), with ``attn_implementation="eager"`` and
  ``experts_implementation="batched_mm"`` (ignored by models without experts).

How the forward pass is run
  Inputs: ``input_ids`` (zeros on meta, random ids on CPU), ``decoder_input_ids`` too when the
  config is an encoder-decoder (``is_encoder_decoder``) and the class's forward takes them,
  ``use_cache=False`` when the forward takes ``use_cache``.  Masks: first WITH an explicit all-ones
  ``attention_mask``; if that raises "Tensor.item() cannot be called on meta tensors" (BERT, T5:
  a given mask makes ``masking_utils`` call ``padding_mask.all()``), again WITHOUT one.  The
  decoders are the other way round: without a mask ``masking_utils.find_packed_sequence_indices``
  calls ``.all()`` on the position ids (fails on meta) -- true for gemma*, qwen*, phi*, falcon,
  gpt_neox, gptj, olmo2, starcoder2, granite, cohere, stablelm, deepseek*, llama, mistral,
  mixtral, gpt2; opt, bloom, mpt and gpt_oss run on meta either way.  Which way worked is kept per
  class (``_MASK_MODE``).  Masks add no matmul: with and without a mask give the same count on CPU
  for every family above.
  4-D mask: the linear-attention hybrids (qwen3_next, qwen3_5*, kimi_linear) fail both ways on
  meta (a 2-D mask reaches ``create_recurrent_attention_mask``'s ``torch.all(mask == 1)``; no mask
  reaches the packed-sequence check).  A third try passes an additive ``(b, 1, s, s)`` zeros mask:
  ``create_causal_mask`` uses a 4-D mask as given and the recurrent mask is skipped for it, so they
  run on meta, with the same FlopCounterMode total as a CPU run with the 2-D mask (checked on tiny
  configs of all four).
  Decoder mask: FSMT's encoder-decoder fails both ways on meta (without a decoder_attention_mask
  ``_prepare_fsmt_decoder_inputs`` calls ``.any()`` on the decoder's padding mask). A try before
  the 4-D one passes an all-ones ``decoder_attention_mask`` beside the 2-D mask where the forward
  takes one; FSMT then runs on meta, with the CPU run's total (checked on its tiny configs).

MoE experts (every MoE family in 5.24: mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3,
gpt_oss -- their ``*Experts`` classes are decorated with ``@use_experts_implementation``)
  The expert forward is chosen by ``config._experts_implementation`` (config.json / kwarg key
  ``experts_implementation``): ``"eager"`` (per-expert loop over ``nonzero()`` hits, ``F.linear``
  = ``aten.mm``), ``"batched_mm"`` (gathers ``gate_up_proj[expert_ids]`` per token-expert pair and
  uses ``aten.bmm``) or ``"grouped_mm"``.  Default when unset is ``"grouped_mm"``, which calls
  ``torch.nn.functional.grouped_mm``; FlopCounterMode has NO formula for grouped_mm, so with the
  default the experts count 0 FLOPs (only attention + router + lm_head are counted).  ``"eager"``
  fails on meta (data-dependent ``nonzero``/``.item()``).  We therefore use
  ``experts_implementation="batched_mm"`` on meta: shapes are data independent, exactly
  T*k (token, expert) pairs each do gate_up (2*I x d) and down (d x I) bmm's (GPT-OSS:
  ``is_transposed=True, has_bias=True``, interleaved gate/up -- same bmm shapes; its biases are
  adds, not counted).  What is counted per MoE layer is: router ``2*T*d*E`` (aten.mm) +
  ``2*T*k*(2*I*d + d*I)`` experts (aten.bmm), i.e. exactly top-k experts per token, never all E;
  shared experts (qwen2_moe, deepseek) are plain MLPs on every token.  Cross-checked: equal to
  ``"eager"`` on CPU with real random weights (whatever the routing, the loop covers T*k rows in
  total) -- ``count_forward_flops(..., device="cpu", experts_implementation="eager")``.
  A model that cannot run on meta at all (an MoE whose experts are not on the experts interface:
  DBRX's ``DbrxExperts`` loops over ``nonzero()`` hits) is run on CPU with real random weights and
  eager experts when it has at most ``CPU_FALLBACK_MAX_PARAMS`` parameters (fine for tiny configs);
  ``FORWARD_DEVICE`` records which device each class used.  A larger one (a hub config) runs on
  meta with its expert class's forward replaced by a stand-in from ``META_STANDINS`` whose
  matmuls add up to the eager loop's (T*k rows through each expert matrix);
  tests/reference/test_meta_standins.py checks each stand-in against the eager loop on CPU.  Parameters
  are frozen (``requires_grad_(False)``): DBRX's per-expert views of its fused weights would
  otherwise trip FlopCounterMode's module tracker.

Findings
  (a) Qwen2: ``Qwen2Attention`` uses ``getattr(config, "head_dim", hidden//heads)`` and the
      config keeps an extra ``head_dim`` key, so config.json ``head_dim`` IS honoured.  q/k/v_proj
      have bias=True (hard coded), o_proj bias=False; MLP has no bias; lm_head bias=False.
  (b) Llama: ``attention_bias=True`` puts a bias on q, k, v AND o_proj.  ``mlp_bias`` covers
      gate/up/down.
  (c) Mixtral: router is ``MixtralTopKRouter`` with a raw Parameter ``gate.weight`` of shape (E, d)
      used through ``F.linear`` without bias (same count as Linear(d, E, bias=False)).  Experts are
      fused 3-D Parameters: ``experts.gate_up_proj`` (E, 2*I, d) and ``experts.down_proj`` (E, d, I),
      no biases.
  (d) BertForMaskedLM builds ``BertModel(add_pooling_layer=False)``: no pooler.  Head =
      transform dense (d*d+d) + LayerNorm (2d) + ``cls.predictions.bias`` (V).  When tied (default),
      ``decoder.weight`` is the word embedding and ``decoder.bias`` IS ``cls.predictions.bias``, so
      the head adds d*d+3d+V.  With ``tie_word_embeddings=False`` the decoder gets its own weight
      AND its own bias while ``cls.predictions.bias`` stays a separate (unused) parameter:
      + V*d + V more.  bert-base-uncased: BertForMaskedLM 109,514,298 vs BertModel 109,482,240.
  (e) T5: ``T5Config.__post_init__`` pops ``tie_word_embeddings`` and FORCES it to True;
      ``tie_word_embeddings=False`` only sets ``scale_decoder_outputs=False`` (no d_model**-0.5
      rescale).  So in 5.24 ``lm_head`` (Linear(d, V, bias=False)) is always tied to ``shared`` and
      T5ForConditionalGeneration params do not change with tie_word_embeddings.  encoder/decoder
      ``embed_tokens`` are tied to ``shared`` too.  Relative bias: one Embedding(num_buckets, heads)
      in block 0 of encoder self-attn and block 0 of decoder self-attn only (not cross-attn).
  (f) FlopCounterMode counts only mm/addmm/bmm/baddbmm (+ conv, sdpa kernels), 2*M*N*K each;
      addmm bias adds are NOT counted.  GPT-2 Conv1D is ``torch.addmm``: counted as 2*T*in*out,
      bias free.  BERT pooler: dense on ``hidden[:, 0]`` only -> 2*B*d*d.  T5 relative position
      bias is an embedding lookup: no matmul.  Eager attention: QK^T and PV are bmm's after
      ``repeat_kv``, so each costs 2*B*n_heads*s*s*head_dim (n_heads = query heads, not kv heads);
      sliding_window only changes the mask, not the FLOPs.  Causal LM heads compute logits for
      all positions (logits_to_keep=0): 2*B*s*d*V.  Softmax/norms/activations are not counted.
  (g) DeepSeek-V2/V3 (MLA) need ``num_key_value_heads == num_attention_heads`` in the config
      (otherwise the eager attention's shapes do not match: "size of tensor a (4) must match the
      size of tensor b (8)"); Phi-3's default ``pad_token_id`` is 32000, so tiny vocabularies
      need their own ``pad_token_id`` (``nn.Embedding``'s padding_idx must be in range).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

from configs import (BARE_MODEL_CLASS, FAMILY_CONFIG_DIR, FAMILY_FILE_DIR,  # noqa: F401
                     GENERATED_MAX_SEQ_LEN, PRESET_CONFIGS, REPO, SUPPORTED_CLASSES,
                     family_configs, family_files, generated_configs, recorded_rows)

__all__ = [
    "SUPPORTED_CLASSES",
    "BARE_MODEL_CLASS",
    "PRESET_CONFIGS",
    "FAMILY_CONFIG_DIR",
    "FAMILY_FILE_DIR",
    "model_class_name",
    "transformers_class",
    "hf_config",
    "build_model",
    "reference_params",
    "reference_forward_matmul_flops",
    "count_forward_flops",
    "forward_inputs",
    "generated_configs",
    "family_configs",
    "family_files",
    "recorded_rows",
    "clear_cache",
    "deliberate_param_difference",
    "deliberate_flops_difference",
]


# Keys of a hub config.json that are metadata only (or would change dtype/implementation).
_DROP_KEYS = ("architectures", "model_type", "transformers_version", "torch_dtype", "dtype", "_name_or_path",
              "attn_implementation", "experts_implementation", "quantization_config", "auto_map")

# Models that cannot run on meta are run on CPU with real random weights up to this size.
CPU_FALLBACK_MAX_PARAMS = 50_000_000

_META_ERRORS = ("meta tensors", "meta tensor", "on meta", "device='meta'", "'meta'", "register_meta")



@functools.lru_cache(maxsize=None)  # the family file's TOML, parsed once per model type
def _bare_class(model_type: str) -> str:
    path = FAMILY_FILE_DIR / f"{model_type}.toml"
    if path.exists():
        with path.open("rb") as f:
            bare = tomllib.load(f).get("bare_class")
        if bare:
            return bare
    if model_type in BARE_MODEL_CLASS:
        return BARE_MODEL_CLASS[model_type]
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    if model_type in MODEL_MAPPING_NAMES:
        return MODEL_MAPPING_NAMES[model_type]
    raise ValueError(f"no bare model class known for model_type {model_type!r}")


def transformers_class(model_type: str, name: str) -> str | None:
    """``name`` if transformers has it, else the class of the family file with the same role
    whose name differs only in case (remote-code spellings such as MosaicML's
    ``MPTForCausalLM`` for transformers' ``MptForCausalLM``), else None."""
    if hasattr(getattr(transformers, name, None), "config_class"):
        return name
    classes = family_files().get(model_type, {}).get("classes", {})
    for other, role in classes.items():
        if other.lower() == name.lower() and role == classes.get(name) and \
                hasattr(getattr(transformers, other, None), "config_class"):
            return other
    return None


def model_class_name(config: dict) -> str:
    """``architectures[0]``, else the bare class of the model_type, as a transformers class."""
    model_type = config["model_type"]
    archs = config.get("architectures") or [_bare_class(model_type)]
    name = transformers_class(model_type, archs[0])
    if name is None:
        raise ValueError(f"transformers {transformers.__version__} has no model class {archs[0]!r}")
    return name


def class_defaults(model_type: str, **kwargs):
    """transformers' config class of ``model_type`` built with its defaults (and ``kwargs``).
    A class that refuses its own defaults (Gemma4AssistantConfig validates its default
    text_config, whose per-layer inputs it forbids) is built with the text_config of the
    family's first tests/families config that has one: its own fields keep their defaults."""
    cls = transformers.CONFIG_MAPPING[model_type]
    try:
        return cls(**kwargs)
    except Exception:
        for _, cfg in family_configs():
            if cfg["model_type"] == model_type and cfg.get("text_config"):
                return cls(text_config=copy.deepcopy(cfg["text_config"]), **kwargs)
        raise


def hf_config(config: dict, experts_implementation: str | None = "batched_mm"):
    """The transformers config object (eager attention; experts as asked, None = default)."""
    kwargs = {k: copy.deepcopy(v) for k, v in config.items() if k not in _DROP_KEYS}
    kwargs["attn_implementation"] = "eager"
    if experts_implementation is not None:
        kwargs["experts_implementation"] = experts_implementation
    cfg = transformers.AutoConfig.for_model(config["model_type"], **kwargs)
    # No cache in the counted forward, also for classes whose forward takes no use_cache
    # (Qwen3.5 and Granite-4 wrappers): with a cache the short convolutions left-pad a prompt
    # shorter than their kernel to K_conv before convolving, which adds outputs to the count.
    for sub in (cfg, getattr(cfg, "text_config", None)):
        if sub is not None and hasattr(sub, "use_cache"):
            sub.use_cache = False
    return cfg


def build_model(config: dict, device: str = "meta", experts_implementation: str | None = "batched_mm"):
    """Instantiate the class named by ``config`` on ``device`` (eval mode, eager attention)."""
    cls = getattr(transformers, model_class_name(config))
    cfg = hf_config(config, experts_implementation)
    # A class of the language model alone on a multimodal config (the causal-LM mapping of
    # qwen3_5, qwen3_5_moe, llama4): built from the text config, as
    # AutoModelForCausalLM.from_config builds it.
    # A class whose config is one sub-config of the checkpoint's (MusicgenForCausalLM on a
    # musicgen config: text_encoder and decoder make get_text_config ambiguous) reads that
    # sub-config, as its from_pretrained does (the one whose model_type is its own).
    wants = getattr(cls, "config_class", None)
    if wants is not None and not isinstance(cfg, wants):
        own = [v for v in vars(cfg).values() if isinstance(v, wants)]
        if len(own) == 1:
            cfg = own[0]
        elif hasattr(cfg, "get_text_config"):
            text = cfg.get_text_config()
            if isinstance(text, wants):
                cfg = text
    with torch.device(device):
        model = cls(cfg)
    model.eval()
    # No parameter needs a gradient: a view of a parameter taken under no_grad (DBRX slices
    # its fused expert weights per expert) would otherwise carry requires_grad without a
    # grad_fn, which FlopCounterMode's module tracker refuses.
    model.requires_grad_(False)
    return model


_META_MODELS: dict[str, Any] = {}  # the last few meta models (a hub-sized model takes seconds to build)
_META_MODELS_KEPT = 3


def _meta_model(config: dict):
    """``build_model(config)`` on meta with batched_mm experts, reused for the last few configs."""
    key = _key(config)
    if key in _META_MODELS:
        _META_MODELS[key] = _META_MODELS.pop(key)  # most recently used last
    else:
        _META_MODELS[key] = build_model(config, "meta")
        while len(_META_MODELS) > _META_MODELS_KEPT:
            del _META_MODELS[next(iter(_META_MODELS))]
    return _META_MODELS[key]


def uses_experts_interface(model) -> bool:
    """True when some module's forward is dispatched by ``@use_experts_implementation``."""
    return any(hasattr(m, "is_concatenated") and hasattr(m, "has_post_expert_norm") for m in model.modules())


def _key(config: dict) -> str:
    return json.dumps(config, sort_keys=True)


_PARAMS_CACHE: dict[str, int] = {}
_FLOPS_CACHE: dict[tuple, int] = {}
_MASK_MODE: dict[str, bool | str] = {}  # class name -> attention_mask given: True, False, "decoder" or "4d"
FORWARD_DEVICE: dict[str, str] = {}  # class name -> "meta" or "cpu" (reference_forward_matmul_flops)


def clear_cache() -> None:
    _PARAMS_CACHE.clear()
    _FLOPS_CACHE.clear()
    _META_MODELS.clear()


# Gemma 3n checkpoints (model_type gemma3n): symcalc counts the language model and the head,
# not the vision tower, the audio encoder or their embedders into the text width. The wrapper
# is built with its timm vision tower (timm is not a test dependency) replaced by a module
# without parameters, and the parameters under these modules (of Gemma3nModel, which
# Gemma3nForConditionalGeneration holds as ``model``) are left out of the count.
GEMMA3N_LEFT_OUT = ("vision_tower.", "audio_tower.", "embed_vision.", "embed_audio.")


def _gemma3n_text_side_params(config: dict) -> int:
    from unittest import mock
    from transformers.models.gemma3n import modeling_gemma3n as g3n

    build = g3n.AutoModel.from_config

    def no_timm(cfg, *args, **kwargs):
        if cfg.model_type == "gemma3n_vision":
            return torch.nn.Module()
        return build(cfg, *args, **kwargs)

    with mock.patch.object(g3n.AutoModel, "from_config", no_timm):
        model = build_model(config, "meta")
    return sum(p.numel() for name, p in model.named_parameters()  # tied weights once
               if not name.removeprefix("model.").startswith(GEMMA3N_LEFT_OUT))


def _gemma3n_language_model(config: dict) -> dict:
    """A text-only forward of a gemma3n wrapper is its language model on text_config (plus the
    embedders' projections, left out: GEMMA3N_LEFT_OUT)."""
    text = dict(config.get("text_config") or {})
    bare = model_class_name(config) == "Gemma3nModel"
    return {**text, "model_type": "gemma3n_text",
            "architectures": ["Gemma3nTextModel" if bare else "Gemma3nForCausalLM"]}


def reference_params(config: dict) -> int:
    """``model.num_parameters()`` (tied weights de-duplicated) of the model built on meta
    (of a gemma3n wrapper, the parameters outside GEMMA3N_LEFT_OUT)."""
    key = _key(config)
    if config.get("model_type") == "gemma3n" and key not in _PARAMS_CACHE:
        _PARAMS_CACHE[key] = _gemma3n_text_side_params(config)
    if key not in _PARAMS_CACHE:
        _PARAMS_CACHE[key] = int(_meta_model(config).num_parameters())
    return _PARAMS_CACHE[key]


def forward_inputs(model, batch: int, seq_len: int, device: str, mask: bool | str = True,
                   use_cache: bool | None = False) -> dict[str, Any]:
    """Keyword inputs for ``model(**inputs)`` (see the module docstring)."""
    cfg = model.config
    vocab = getattr(cfg, "vocab_size", None) or 2
    # MusicGen's decoders read batch x num_codebooks rows of codes (one per codebook of each
    # sequence) and mask batch x seq_len positions
    rows = batch * cfg.num_codebooks if type(model).__name__.startswith("Musicgen") else batch
    if device == "meta":
        ids = torch.zeros((rows, seq_len), dtype=torch.long, device=device)
        dec_ids = ids
    else:
        g = torch.Generator().manual_seed(1234)
        ids = torch.randint(0, vocab, (rows, seq_len), generator=g).to(device)
        dec_ids = torch.randint(0, vocab, (rows, seq_len), generator=g).to(device)
    params = inspect.signature(model.forward).parameters
    if "shared_kv_states" in params:  # Gemma 4's assistants: see _assistant_inputs
        return _assistant_inputs(model, batch, seq_len, device)
    inputs: dict[str, Any] = {"input_ids": ids}
    if getattr(cfg, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        inputs["decoder_input_ids"] = dec_ids
    if mask == "4d":  # an additive (b, 1, s, s) mask: see "4-D mask" in the module docstring
        inputs["attention_mask"] = torch.zeros((batch, 1, seq_len, seq_len), device=device)
    elif mask:
        inputs["attention_mask"] = torch.ones((batch, seq_len), dtype=torch.long, device=device)
    if mask == "decoder" and "decoder_attention_mask" in params:  # see "Decoder mask" above
        inputs["decoder_attention_mask"] = torch.ones((batch, seq_len), dtype=torch.long, device=device)
    if use_cache is not None and "use_cache" in params:
        inputs["use_cache"] = use_cache
    return inputs


def _assistant_inputs(model, batch: int, seq_len: int, device: str) -> dict[str, Any]:
    """Inputs of a Gemma 4 assistant (Gemma4AssistantForCausalLM and its unified twin), whose
    forward takes no token ids: the target model's embeddings and last hidden states
    concatenated (b, s, 2 backbone_hidden_size), and the target's keys and values of the last
    layer of each type (shared_kv_states), here of the same s tokens, each of its layer type's
    key/value heads and head width. The hidden states are asked for: without them and with
    s > 1 the text model slices its absent per-layer inputs for logits_to_keep and fails (the
    slice keeps every position, so the matmuls are the same)."""
    cfg = model.config
    text = cfg.get_text_config()
    shared = {}
    for i, kind in enumerate(text.layer_types):
        if kind not in shared:
            layer = text.per_layer_config[i]
            zeros = torch.zeros((batch, layer.num_key_value_heads, seq_len, layer.head_dim),
                                device=device)
            shared[kind] = (zeros, zeros)
    embeds = torch.zeros((batch, seq_len, 2 * cfg.backbone_hidden_size), device=device)
    return {"inputs_embeds": embeds, "shared_kv_states": shared, "output_hidden_states": True}


def _is_meta_error(err: BaseException) -> bool:
    text = str(err)
    return isinstance(err, (RuntimeError, NotImplementedError)) and any(s in text for s in _META_ERRORS)


def _run_counted(model, inputs) -> int:
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(**inputs)
    return int(counter.get_total_flops())


def count_forward_flops(
    config: dict,
    batch: int,
    seq_len: int,
    device: str = "meta",
    experts_implementation: str | None = "batched_mm",
) -> int:
    """FlopCounterMode total of one forward pass (uncached).

    ``device="meta"`` (default) needs no memory and works for every family listed in the module
    docstring as long as the experts path is ``"batched_mm"``.  ``device="cpu"`` builds real random
    weights (only for small configs); there ``experts_implementation="eager"`` gives the same total.
    ``experts_implementation=None`` means the transformers default (``"grouped_mm"``), whose expert
    matmuls are invisible to FlopCounterMode.
    """
    class_name = model_class_name(config)
    torch.manual_seed(0)
    if device == "meta" and experts_implementation == "batched_mm":
        model = _meta_model(config)
    else:
        model = build_model(config, device, experts_implementation)
    modes = [_MASK_MODE[class_name]] if class_name in _MASK_MODE else [True, False, "decoder", "4d"]
    for i, mask in enumerate(modes):
        try:
            flops = _run_counted(model, forward_inputs(model, batch, seq_len, device, mask=mask))
        except Exception as err:  # noqa: BLE001 - only the meta-device complaint moves on
            if device != "meta" or not _is_meta_error(err) or i == len(modes) - 1:
                raise
            continue
        if device == "meta":
            _MASK_MODE[class_name] = mask
        return flops
    raise AssertionError("unreachable")


def reference_forward_matmul_flops(config: dict, batch: int, seq_len: int) -> int:
    """Matmul FLOPs counted by FlopCounterMode for one eager forward on (batch, seq_len) input ids.

    Runs on the meta device with ``experts_implementation="batched_mm"`` so that each token is
    counted through exactly its top-k experts (see module docstring); a model that cannot run on
    meta and is small is run on CPU with real weights and eager experts instead.  Cached per process.
    """
    if config.get("model_type") == "llama4":
        # Llama4ForConditionalGeneration.forward without pixel_values fails in 5.24 (it reads
        # image_outputs off the language model's output); a text-only forward is its
        # language_model, Llama4ForCausalLM on the text_config, so that is what is counted.
        text = dict(config.get("text_config") or {})
        config = {**text, "model_type": "llama4_text", "architectures": ["Llama4ForCausalLM"]}
    if config.get("model_type") == "gemma3n":
        config = _gemma3n_language_model(config)
    key = (_key(config), int(batch), int(seq_len))
    if key not in _FLOPS_CACHE:
        class_name = model_class_name(config)
        try:
            if FORWARD_DEVICE.get(class_name) == "cpu":
                raise RuntimeError("known not to run on meta tensors")
            flops = count_forward_flops(config, batch, seq_len)
            FORWARD_DEVICE[class_name] = "meta"
        except Exception as err:  # noqa: BLE001
            if not _is_meta_error(err):
                raise
            if reference_params(config) > CPU_FALLBACK_MAX_PARAMS:
                flops = count_forward_flops_with_standins(config, batch, seq_len)
            else:
                flops = count_forward_flops(config, batch, seq_len, device="cpu", experts_implementation="eager")
                FORWARD_DEVICE[class_name] = "cpu"
        _FLOPS_CACHE[key] = flops
    return _FLOPS_CACHE[key]


def _dbrx_experts_on_meta(self, hidden_states, top_k_index, top_k_weights):
    """``DbrxExperts.forward`` without its data-dependent loop, for the meta device.

    The eager loop sends the n_e rows routed to expert e through ``w1``, ``v1`` (d -> f each)
    and ``w2`` (f -> d); summed over the experts that is T*k rows through each of the three,
    whatever the routing.  Here every (token, slot) pair goes through expert 0's slices: the
    same matmul FLOPs in total, on shapes known without the routing."""
    batch_size = hidden_states.shape[0]
    rows = hidden_states.reshape(-1, self.hidden_size)
    top_k = top_k_index.shape[-1]
    pairs = rows.repeat_interleave(top_k, dim=0)
    shape = (-1, self.ffn_hidden_size, self.hidden_size)
    w1, v1, w2 = (w.view(shape)[0] for w in (self.mlp.w1, self.mlp.v1, self.mlp.w2))
    out = self.mlp(pairs, w1, v1, w2).view(-1, top_k, self.hidden_size)
    out = (out * top_k_weights.unsqueeze(-1)).sum(dim=1)
    return out.view(batch_size, -1, self.hidden_size)


def _jetmoe_gating_on_meta(self, hidden_states):
    """``JetMoeTopKGating.forward`` without its data-dependent ``expert_size.tolist()``, for
    the meta device.

    The gate's router matmul (d -> E) is kept; the experts that follow (JetMoeParallelExperts)
    run one F.linear per expert on the rows routed to it, T*k rows in all whatever the routing.
    Here every (token, slot) pair is routed to expert 0: the same matmul FLOPs in total, on
    shapes known without the routing."""
    logits = self.layer(hidden_states).float()
    top_k_logits, _ = logits.topk(self.top_k, dim=1)
    gates = torch.softmax(top_k_logits, dim=1).type_as(hidden_states).flatten()
    rows = hidden_states.shape[0] * self.top_k
    index_sorted_experts = torch.arange(rows, device=hidden_states.device)
    batch_index = index_sorted_experts.div(self.top_k, rounding_mode="trunc")
    expert_size = [rows] + [0] * (self.num_experts - 1)
    return index_sorted_experts, batch_index, gates, expert_size, logits


# Expert modules whose eager forward loops over routing found with nonzero() (so they cannot run
# on meta) and that are not on transformers' experts interface, each with a meta stand-in whose
# matmuls add up to the eager loop's.  Used only for models too large for the CPU fallback (hub
# configs); tests/reference/test_meta_standins.py checks every stand-in against the real eager forward on
# CPU for the family's tiny configs.
# (JetMoE's gate hands its routing to the experts as a Python list: the gate is replaced)
META_STANDINS = {"DbrxExperts": _dbrx_experts_on_meta, "JetMoeTopKGating": _jetmoe_gating_on_meta}


def count_forward_flops_with_standins(config: dict, batch: int, seq_len: int) -> int:
    """``count_forward_flops`` on meta with the ``META_STANDINS`` forwards patched in (uncached)."""
    model = _meta_model(config)
    patched = {type(m) for m in model.modules() if type(m).__name__ in META_STANDINS}
    if not patched:
        raise RuntimeError(f"{model_class_name(config)} cannot run on meta and has no stand-in "
                           f"(too large for the CPU fallback: > {CPU_FALLBACK_MAX_PARAMS:,} parameters)")
    with contextlib.ExitStack() as stack:
        for cls in patched:
            stack.enter_context(_patched_forward(cls, META_STANDINS[cls.__name__]))
        return count_forward_flops(config, batch, seq_len)


@contextlib.contextmanager
def _patched_forward(cls, forward):
    original = cls.__dict__.get("forward")  # None: the class inherits its forward
    cls.forward = forward
    try:
        yield
    finally:
        if original is None:
            del cls.forward
        else:
            cls.forward = original


# The T5-shaped classes whose config class forces tie_word_embeddings = True (T5Config and
# its copies MT5Config, UMT5Config, LongT5Config): symcalc counts the separate lm_head their checkpoints ship.
T5_FORCED_TIE = ("T5ForConditionalGeneration", "MT5ForConditionalGeneration",
                 "UMT5ForConditionalGeneration", "LongT5ForConditionalGeneration")


def deliberate_param_difference(cfg: dict) -> int:
    """symcalc's count minus transformers' for the two deliberate deviations (0 otherwise).

    (a) T5ForConditionalGeneration (and mT5's, UMT5's: ``T5_FORCED_TIE``) with
        tie_word_embeddings false: transformers 5.24's T5Config.__post_init__ forces tying, but the issue asks for an untied head as T5 v1.1
        checkpoints have (their lm_head is its own V x d matrix): symcalc = transformers + V*d.
    (b) BertForMaskedLM (and BertLMHeadModel, the same head; and every class whose family role
        fixes mlm_head: RoBERTa's lm_head and its kin) with tie_word_embeddings false: transformers gives the decoder its own
        weight and bias and keeps cls.predictions.bias as a separate parameter that the forward
        pass never reads; symcalc counts the head the forward pass uses: transformers - V.
    """
    if cfg.get("tie_word_embeddings", True):
        return 0
    cls = model_class_name(cfg)
    if cls in T5_FORCED_TIE:
        model_cfg = hf_config(cfg)  # the sizes after transformers' defaults
        return model_cfg.vocab_size * model_cfg.d_model
    if _mlm_head(cfg["model_type"], cls):  # BERT's cls.predictions head and its copies
        return -hf_config(cfg).vocab_size
    return 0


def _mlm_head(model_type: str, cls: str) -> bool:
    """The class's role in the family file fixes ``mlm_head`` true: BERT's masked-LM head
    (BertForMaskedLM, BertLMHeadModel) and the heads that copy it (RoBERTa's lm_head and its
    kin), whose untied bias transformers keeps twice."""
    if cls == "BertGenerationDecoder":  # BertGenerationOnlyLMHead: decoder bias and lm_head.bias
        return True
    if cls in ("ModernBertDecoderForCausalLM", "ModernBertForMaskedLM",  # an untied decoder
               "DistilBertForMaskedLM", "GteForMaskedLM", "EsmForMaskedLM", "EsmcForMaskedLM",
               "ElectraForMaskedLM", "ElectraForCausalLM",                  # keeps one bias
               "RemBertForMaskedLM", "RemBertForCausalLM"):
        return False
    family = family_files().get(model_type, {})
    role = family.get("classes", {}).get(cls)
    fixed = family.get("roles", {}).get(role, {}).get("fixed", {})
    return fixed.get("mlm_head") is True


def _longcat_expert_matrix(cfg: dict) -> int:
    """d x moe_intermediate_size of a LongCat-Flash config (as transformers reads it)."""
    c = hf_config(cfg)
    return c.hidden_size * c.expert_ffn_hidden_size


def _longcat_zero_picks(cfg: dict, batch: int, seq_len: int) -> int:
    """(token, expert) picks of LongCat-Flash's routers that go to a zero-computation expert in
    the CPU forward reference_forward_matmul_flops runs for ``cfg`` (same seed, same weights,
    same inputs, eager experts): the picks that run no matmul."""
    torch.manual_seed(0)
    model = build_model(cfg, "cpu", "eager")
    routed = model.config.n_routed_experts
    picks = []

    def keep(module, args, out):
        picks.append(int((out[2] >= routed).sum()))

    for m in model.modules():
        if type(m).__name__ == "LongcatFlashTopkRouter":
            m.register_forward_hook(keep)
    mask = _MASK_MODE.get(model_class_name(cfg), True)
    with torch.no_grad():
        model(**forward_inputs(model, batch, seq_len, "cpu", mask=mask))
    return sum(picks)


def deliberate_flops_difference(cfg: dict, batch: int, seq_len: int) -> int:
    """transformers' forward matmul FLOPs minus symcalc's where transformers computes more
    than the model needs (0 otherwise): Llama 4's Llama4TextMoe (not on the experts interface)
    runs every one of the E experts on every token and zeroes the unrouted outputs by their
    router score, where symcalc counts the top-k experts a token is routed to:
    2 * tokens * (E - k) * 3 * d * I per MoE layer (llama4_text, and llama4's text_config).
    Or less: LongCat-Flash's picks of a zero-computation expert run no matmul, where symcalc
    counts every one of the top-k picks as a routed expert: minus 2 * 3 * d * I per such pick
    of the measured CPU run (it depends on the routing of that run's random weights)."""
    if cfg["model_type"] == "longcat_flash":
        return -_longcat_zero_picks(cfg, batch, seq_len) * 2 * 3 * _longcat_expert_matrix(cfg)
    if cfg["model_type"] not in ("llama4", "llama4_text"):
        return 0
    model_cfg = hf_config(cfg)
    text = model_cfg.get_text_config() if cfg["model_type"] == "llama4" else model_cfg
    n_moe = sum(1 for i in range(text.num_hidden_layers) if i in text.moe_layers)
    idle = text.num_local_experts - text.num_experts_per_tok
    return 2 * batch * seq_len * idle * 3 * text.hidden_size * text.intermediate_size * n_moe


# -- which configs the reference lane builds live ------------------------------------------------
# Every tests/families config is held torch-free to its recorded transformers numbers
# (tests/test_family_numbers.py; tests/record_reference.py measures them the way these helpers
# do). Live, the reference lane builds a sample that still reaches every family: each family's
# first config and, for the drawn-config tests, fresh variants. The class-defaults configs
# (hub-sized: seconds each on meta) and the rest are built live with SYMCALC_REFERENCE_ALL=1
# (more than twice the lane's time).
REFERENCE_ALL = os.environ.get("SYMCALC_REFERENCE_ALL") == "1"


def live_sample(named: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The ``(config id, ...)`` pairs built live: all with SYMCALC_REFERENCE_ALL=1, else the
    first of each family (the id's folder) that is not a class-defaults config."""
    if REFERENCE_ALL:
        return list(named)
    seen: set[str] = set()
    out = []
    for cid, x in named:
        family = cid.split("/")[0]
        if family not in seen and "class-defaults" not in cid:
            out.append((cid, x))
            seen.add(family)
    return out

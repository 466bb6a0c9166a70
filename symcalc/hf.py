"""Hugging Face ``config.json`` -> :class:`Spec`, without importing transformers.

Keys missing from a file take the defaults of transformers' config class for its
``model_type`` (``DEFAULTS`` below, checked against transformers 5 in the tests). The model
class is ``architectures[0]``, or the bare model of the ``model_type`` when none is named.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from .errors import SymcalcError
from .spec import Spec, make_spec

# Defaults of transformers' config classes for the keys symcalc reads (transformers 5.x).
DEFAULTS: dict[str, dict[str, Any]] = {
    "bert": {"vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
             "num_attention_heads": 12, "intermediate_size": 3072,
             "max_position_embeddings": 512, "type_vocab_size": 2, "tie_word_embeddings": True},
    "gpt2": {"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12,
             "n_head": 12, "n_inner": None, "tie_word_embeddings": True},
    "llama": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": None,
              "head_dim": None, "attention_bias": False, "mlp_bias": False,
              "tie_word_embeddings": False},
    "mistral": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "head_dim": None, "sliding_window": 4096, "tie_word_embeddings": False},
    "qwen2": {"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
              "head_dim": None, "use_sliding_window": False, "sliding_window": 4096,
              "max_window_layers": 28, "tie_word_embeddings": False},
    "mixtral": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "head_dim": None, "num_local_experts": 8, "num_experts_per_tok": 2,
                "sliding_window": None, "tie_word_embeddings": False},
    "t5": {"vocab_size": 32128, "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6,
           "num_decoder_layers": None, "num_heads": 8, "relative_attention_num_buckets": 32,
           "feed_forward_proj": "relu", "tie_word_embeddings": True},
}

# class name -> (model_type, what the class adds to the bare model)
CLASSES: dict[str, tuple[str, str]] = {
    "BertModel": ("bert", "pooler"),
    "BertForMaskedLM": ("bert", "mlm"),
    "GPT2Model": ("gpt2", "bare"),
    "GPT2LMHeadModel": ("gpt2", "lm_head"),
    "LlamaModel": ("llama", "bare"),
    "LlamaForCausalLM": ("llama", "lm_head"),
    "MistralModel": ("mistral", "bare"),
    "MistralForCausalLM": ("mistral", "lm_head"),
    "Qwen2Model": ("qwen2", "bare"),
    "Qwen2ForCausalLM": ("qwen2", "lm_head"),
    "MixtralModel": ("mixtral", "bare"),
    "MixtralForCausalLM": ("mixtral", "lm_head"),
    "T5Model": ("t5", "bare"),
    "T5ForConditionalGeneration": ("t5", "lm_head"),
    "T5EncoderModel": ("t5", "encoder"),
}
BARE = {"bert": "BertModel", "gpt2": "GPT2Model", "llama": "LlamaModel",
        "mistral": "MistralModel", "qwen2": "Qwen2Model", "mixtral": "MixtralModel",
        "t5": "T5Model"}


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a config.json (or the config.json inside a folder) as a JSON object."""
    from pathlib import Path  # here: pathlib costs a preset's quick report 3 ms of imports

    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise SymcalcError(str(path), f"cannot be read ({err.strerror or err})") from None
    try:
        data = json.loads(text)
    except ValueError as err:
        raise SymcalcError(p.name, f"is not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise SymcalcError(p.name, f"must be a JSON object, not {type(data).__name__}")
    return data


class _Config:
    """Key access with transformers' defaults and positive-integer checks."""

    def __init__(self, data: dict[str, Any], model_type: str):
        self.data = data
        self.defaults = DEFAULTS[model_type]

    def get(self, key: str) -> Any:
        """The file's value (an explicit ``null`` stays ``None``, as transformers keeps it:
        ``"sliding_window": null`` means no window), else the class default."""
        return self.data[key] if key in self.data else self.defaults.get(key)

    def size(self, key: str, optional: bool = False) -> int | None:
        value = self.get(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise SymcalcError(key, f"must be a positive integer (got {value!r})")
        return value

    def flag(self, key: str) -> bool:
        value = self.get(key)
        if value is None:
            value = self.defaults.get(key)
        if not isinstance(value, bool):
            raise SymcalcError(key, f"must be true or false (got {value!r})")
        return value


def spec_from_config(data: dict[str, Any], name: str = "config.json") -> Spec:
    model_type = data.get("model_type")
    if not isinstance(model_type, str) or model_type not in DEFAULTS:
        raise SymcalcError("model_type", f"must be one of {', '.join(DEFAULTS)} (got {model_type!r})")
    archs = data.get("architectures") or [BARE[model_type]]
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs):
        raise SymcalcError("architectures", "must be a list of class names")
    cls = archs[0]
    if cls not in CLASSES or CLASSES[cls][0] != model_type:
        known = ", ".join(c for c, (mt, _) in CLASSES.items() if mt == model_type)
        raise SymcalcError("architectures[0]", f"must be a {model_type} class symcalc knows "
                                               f"({known}); got {cls!r}")
    cfg = _Config(data, model_type)
    builder = _BUILDERS[model_type]
    fields = builder(cfg, CLASSES[cls][1])
    fields.setdefault("name", name)
    fields["source"] = f"Hugging Face config ({model_type}, {cls})"
    try:
        return make_spec(**fields)
    except SymcalcError as err:  # name the config.json key beside the symcalc field
        key = HF_KEYS[model_type].get(err.field)
        if key is None:
            raise
        raise SymcalcError(f"{key} ({err.field})", err.rule) from None


# symcalc size field -> the config.json key it comes from, per model_type (error messages)
_LLAMA_KEYS = {"L": "num_hidden_layers", "d": "hidden_size", "n_h": "num_attention_heads",
               "n_kv": "num_key_value_heads", "d_h": "head_dim", "d_ff": "intermediate_size",
               "V": "vocab_size", "k": "num_experts_per_tok", "E": "num_local_experts",
               "W": "sliding_window"}
HF_KEYS: dict[str, dict[str, str]] = {
    "bert": {"L": "num_hidden_layers", "d": "hidden_size", "n_h": "num_attention_heads",
             "d_ff": "intermediate_size", "V": "vocab_size", "P": "max_position_embeddings",
             "T": "type_vocab_size"},
    "gpt2": {"L": "n_layer", "d": "n_embd", "n_h": "n_head", "d_ff": "n_inner",
             "V": "vocab_size", "P": "n_positions"},
    "llama": _LLAMA_KEYS, "mistral": _LLAMA_KEYS, "qwen2": _LLAMA_KEYS, "mixtral": _LLAMA_KEYS,
    "t5": {"L": "num_layers", "L_dec": "num_decoder_layers", "d": "d_model", "n_h": "num_heads",
           "d_h": "d_kv", "d_ff": "d_ff", "V": "vocab_size", "R": "relative_attention_num_buckets"},
}


def _lm_head(cfg: _Config, role: str) -> dict[str, Any]:
    if role != "lm_head":
        return {"head": "none"}
    return {"head": "tied" if cfg.flag("tie_word_embeddings") else "untied"}


def _bert(cfg: _Config, role: str) -> dict[str, Any]:
    out = dict(family="encoder", L=cfg.size("num_hidden_layers"), d=cfg.size("hidden_size"),
               n_h=cfg.size("num_attention_heads"), d_ff=cfg.size("intermediate_size"),
               V=cfg.size("vocab_size"), P=cfg.size("max_position_embeddings"),
               T=cfg.size("type_vocab_size"), position="learned", attention_bias="all",
               ffn="plain", ffn_bias=True, norm="layernorm", final_norm=False,
               embedding_norm=True, head="none")
    if role == "pooler":
        out["pooler"] = True
    elif role == "mlm":
        out.update(mlm_head=True, head_bias=True,
                   head="tied" if cfg.flag("tie_word_embeddings") else "untied")
    return out


def _gpt2(cfg: _Config, role: str) -> dict[str, Any]:
    d = cfg.size("n_embd")
    return dict(family="decoder", L=cfg.size("n_layer"), d=d, n_h=cfg.size("n_head"),
                d_ff=cfg.size("n_inner", optional=True) or 4 * d, V=cfg.size("vocab_size"),
                P=cfg.size("n_positions"), position="learned", attention_bias="all",
                ffn="plain", ffn_bias=True, norm="layernorm", final_norm=True,
                **_lm_head(cfg, role))


def _llama_like(cfg: _Config, role: str, model_type: str) -> dict[str, Any]:
    out = dict(family="decoder", L=cfg.size("num_hidden_layers"), d=cfg.size("hidden_size"),
               n_h=cfg.size("num_attention_heads"), d_ff=cfg.size("intermediate_size"),
               V=cfg.size("vocab_size"), n_kv=cfg.size("num_key_value_heads", optional=True),
               d_h=cfg.size("head_dim", optional=True), position="rotary", ffn="gated",
               norm="rmsnorm", final_norm=True, **_lm_head(cfg, role))
    if model_type == "llama":
        out["attention_bias"] = "all" if cfg.flag("attention_bias") else "none"
        out["ffn_bias"] = cfg.flag("mlp_bias")
    elif model_type == "qwen2":
        out["attention_bias"] = "qkv"
        # transformers: layers i >= max_window_layers slide, the others attend fully; symcalc
        # caps every layer's cache at W only when every layer slides (max_window_layers 0).
        if cfg.flag("use_sliding_window") and cfg.get("max_window_layers") == 0:
            out["W"] = cfg.size("sliding_window", optional=True)
    else:  # mistral, mixtral
        out["W"] = cfg.size("sliding_window", optional=True)
    if model_type == "mixtral":
        out["E"] = cfg.size("num_local_experts")
        out["k"] = cfg.size("num_experts_per_tok")
    return out


def _t5(cfg: _Config, role: str) -> dict[str, Any]:
    proj = cfg.get("feed_forward_proj")
    parts = proj.split("-") if isinstance(proj, str) else []
    # transformers' rule (T5Config.validate_architecture): ACT or gated-ACT, any activation
    if (not parts or parts[-1] in ("", "gated") or len(parts) > 2
            or len(parts) == 2 and parts[0] != "gated"):
        raise SymcalcError("feed_forward_proj", f"must be 'ACT' or 'gated-ACT' (got {proj!r})")
    gated = proj.startswith("gated-")
    L = cfg.size("num_layers")
    out = dict(family="encoder-decoder", L=L, d=cfg.size("d_model"), n_h=cfg.size("num_heads"),
               d_h=cfg.size("d_kv"), d_ff=cfg.size("d_ff"), V=cfg.size("vocab_size"),
               R=cfg.size("relative_attention_num_buckets"), position="relative",
               ffn="gated" if gated else "plain", norm="layernorm_nobias", final_norm=True,
               L_dec=cfg.size("num_decoder_layers", optional=True) or L, **_lm_head(cfg, role))
    if role == "encoder":
        out["family"] = "encoder"
        del out["L_dec"]
    return out


_BUILDERS: dict[str, Callable[[_Config, str], dict[str, Any]]] = {
    "bert": _bert,
    "gpt2": _gpt2,
    "llama": lambda cfg, role: _llama_like(cfg, role, "llama"),
    "mistral": lambda cfg, role: _llama_like(cfg, role, "mistral"),
    "qwen2": lambda cfg, role: _llama_like(cfg, role, "qwen2"),
    "mixtral": lambda cfg, role: _llama_like(cfg, role, "mixtral"),
    "t5": _t5,
}

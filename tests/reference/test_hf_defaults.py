"""Every family file's [defaults] against transformers' config classes, and configs that lean
on them."""
from __future__ import annotations

import json

import pytest
import transformers

import hf_reference as H
from symcalc.inputs.family_data import load_families
from symcalc.inputs.hf import spec_from_config

CONFIG_CLASS = {"bert": "BertConfig", "gpt2": "GPT2Config", "llama": "LlamaConfig",
                "mistral": "MistralConfig", "qwen2": "Qwen2Config", "mixtral": "MixtralConfig",
                "t5": "T5Config"}
FAMILIES = load_families()
# Keys whose default is "derived from another key" (absent from the family file, so null):
# transformers fills in the effective value, which test_effective_sizes compares.
DERIVED = {("llama", "num_key_value_heads"), ("llama", "head_dim"), ("mistral", "head_dim"),
           ("qwen2", "head_dim"), ("mixtral", "head_dim"), ("t5", "num_decoder_layers")}
# transformers attribute names of the sizes, per family: (L, d, n_h, n_kv, d_h, d_ff, V)
SIZE_ATTRS = {
    "bert": ("num_hidden_layers", "hidden_size", "num_attention_heads", None, None,
             "intermediate_size", "vocab_size"),
    "gpt2": ("n_layer", "n_embd", "n_head", None, None, "n_inner", "vocab_size"),
    "t5": ("num_layers", "d_model", "num_heads", None, "d_kv", "d_ff", "vocab_size"),
}
LLAMA_ATTRS = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
               "head_dim", "intermediate_size", "vocab_size")


def config_class(model_type: str):
    return transformers.CONFIG_MAPPING[model_type]


def test_every_family_is_a_transformers_model_type():
    assert set(CONFIG_CLASS) <= set(FAMILIES)
    assert set(H.SUPPORTED_CLASSES) <= set(FAMILIES)
    for model_type in CONFIG_CLASS:
        assert config_class(model_type).__name__ == CONFIG_CLASS[model_type]
    for model_type in FAMILIES:
        assert model_type in transformers.CONFIG_MAPPING, model_type


# one test per family, every key of its [defaults] checked (one test per key was 2,836 tests,
# about 4 ms of pytest's own time each)
@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_defaults_equal_transformers(model_type):
    """Each key of the family file's [defaults] is the config class's default."""
    differ, kept = {}, 0
    for key, ours in FAMILIES[model_type].defaults.items():
        # sliding_window keeps its class default only while use_sliding_window is on (Qwen)
        switched = ({"use_sliding_window": True} if key == "sliding_window"
                    and "use_sliding_window" in FAMILIES[model_type].defaults else {})
        hf = H.class_defaults(model_type, **switched)
        # a per-layer attribute (Gemma 4's head_dim) refuses plain access: its stored global
        # value; a key __init__ reads but does not keep has nothing to compare
        stored = vars(hf)
        if key not in stored and not hasattr(hf, key):
            continue
        kept += 1
        theirs = stored[key] if key in stored else getattr(hf, key)
        # a tuple default (X-MOD's languages) is a list in TOML and in a saved config.json
        if ours != (list(theirs) if isinstance(theirs, tuple) else theirs):
            differ[key] = (ours, theirs)
    assert not differ, f"{model_type}.toml [defaults] (ours, transformers'): {differ}"
    assert kept or not FAMILIES[model_type].defaults, f"{model_type}: no default is kept by the class"


@pytest.mark.parametrize("model_type,key", sorted(DERIVED))
def test_derived_keys_have_no_default(model_type, key):
    """Resolved from other keys (checked in test_effective_sizes), so absent: null."""
    assert key not in FAMILIES[model_type].defaults


@pytest.mark.parametrize("model_type", sorted(CONFIG_CLASS))
def test_effective_sizes(model_type):
    """A config.json with only the model_type: every size as transformers resolves it."""
    spec = spec_from_config({"model_type": model_type})
    hf = config_class(model_type)()
    attrs = SIZE_ATTRS.get(model_type, LLAMA_ATTRS)
    L, d, n_h, n_kv, d_h, d_ff, V = (getattr(hf, a, None) if a else None for a in attrs)
    assert (spec.L, spec.d, spec.n_h, spec.V) == (L, d, n_h, V)
    assert spec.d_ff == (d_ff or 4 * d)  # GPT-2: n_inner None means 4 d
    assert spec.n_kv == (n_kv or n_h)
    assert spec.d_h == (d_h or d // n_h)
    if model_type == "t5":
        assert spec.L_dec == hf.num_decoder_layers
    if model_type == "mixtral":
        assert (spec.E, spec.k) == (hf.num_local_experts, hf.num_experts_per_tok)


@pytest.mark.parametrize("model_type", sorted(CONFIG_CLASS))
def test_bare_default_model_count(model_type):
    """No architectures key: the bare model class with every default."""
    cfg = {"model_type": model_type}
    assert H.model_class_name(cfg) == FAMILIES[model_type].bare_class
    from symcalc.report import report
    from symcalc.algebra.options import Options

    assert report(spec_from_config(cfg), Options(seq_len=4))["params"]["total"] == H.reference_params(cfg)


def test_llama_only_model_type_via_cli(cli, write_config):
    want = H.reference_params({"model_type": "llama"})
    assert want == 6_607_343_616  # Llama-2-7B's 6,738,415,616 without its 32000 x 4096 head
    path = write_config({"model_type": "llama"})
    assert cli("report", path, "--json").json()["params"]["total"] == want
    assert cli("report", path.parent, "--json").json()["params"]["total"] == want  # a folder


def test_folder_with_config_json(cli, tmp_path):
    cfg = H.PRESET_CONFIGS["Mistral-7B-v0.1"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    out = cli("report", tmp_path, "--json").json()
    assert out["params"]["total"] == 7_241_732_096
    assert out["model"] == tmp_path.name


@pytest.mark.parametrize("extra,window", [
    ({}, 4096),
    ({"sliding_window": None}, None),  # explicit null: no window, as transformers keeps it
    ({"sliding_window": 17}, 17),
])
def test_mistral_sliding_window(extra, window):
    cfg = {"model_type": "mistral", **extra}
    assert spec_from_config(cfg).W == window
    assert transformers.MistralConfig(**extra).sliding_window == window


@pytest.mark.parametrize("extra,window,local", [
    ({}, None, None),
    ({"use_sliding_window": True}, 4096, 0),  # layers >= max_window_layers (28) slide: none here
    ({"use_sliding_window": True, "max_window_layers": 0}, 4096, 4),
    ({"use_sliding_window": True, "max_window_layers": 1}, 4096, 3),
    ({"use_sliding_window": True, "max_window_layers": 0, "sliding_window": 9}, 9, 4),
    ({"use_sliding_window": True, "sliding_window": None}, None, None),
    ({"use_sliding_window": False, "max_window_layers": 0}, None, None),
    ({"use_sliding_window": True, "layer_types": ["full_attention", "sliding_attention"] * 2},
     4096, 2),  # an explicit layer_types wins over max_window_layers
])
def test_qwen2_sliding_window(extra, window, local):
    """W and the number of sliding layers L_local, as transformers' Qwen2Config decides them."""
    cfg = {"model_type": "qwen2", "num_hidden_layers": 4, **extra}
    spec = spec_from_config(cfg)
    assert (spec.W, spec.L_local) == (window, local)
    hf = transformers.Qwen2Config(**{k: v for k, v in cfg.items() if k != "model_type"})
    assert hf.sliding_window == window
    assert sum(t == "sliding_attention" for t in hf.layer_types) == (local or 0)


@pytest.mark.parametrize("key,value", [("num_key_value_heads", None), ("head_dim", None),
                                       ("num_decoder_layers", None), ("n_inner", None)])
def test_explicit_null_means_derived(key, value):
    family = {"num_key_value_heads": "llama", "head_dim": "mistral", "num_decoder_layers": "t5",
              "n_inner": "gpt2"}[key]
    cfg = {"model_type": family, key: value}
    assert spec_from_config(cfg) == spec_from_config({"model_type": family})
    assert H.reference_params(cfg) == H.reference_params({"model_type": family})


@pytest.mark.parametrize("proj,gated", [("relu", False), ("gelu_new", False), ("gated-gelu", True),
                                        ("gated-silu", True), ("gelu", False)])
def test_t5_feed_forward_proj(proj, gated):
    """Any activation in transformers' form ACT or gated-ACT; gated means three matrices."""
    cfg = {"model_type": "t5", "architectures": ["T5EncoderModel"], "d_model": 16, "d_kv": 4,
           "num_heads": 4, "d_ff": 24, "num_layers": 1, "vocab_size": 50,
           "feed_forward_proj": proj}
    spec = spec_from_config(cfg)
    assert spec.ffn == ("gated" if gated else "plain")
    from symcalc.algebra.options import Options
    from symcalc.report import report

    assert report(spec, Options(seq_len=3))["params"]["total"] == H.reference_params(cfg)

"""Config keys as transformers reads them, without transformers (issue 21 item 3, issue 26
item 1): the aliases of a family file's ``[aliases]``, trunc() for LFM2's float multiplier,
head widths floored where transformers floors them. The same configs against transformers
live: tests/reference/test_config_keys_reference.py."""
from __future__ import annotations

import pytest

from symcalc.algebra.options import Options
from symcalc.errors import SymcalcError
from symcalc.fast.quick import quick_report
from symcalc.inputs.family_data import canonical_config, parse_family
from symcalc.inputs.hf import spec_from_config

QWEN3_MOE = {"model_type": "qwen3_moe", "hidden_size": 64, "intermediate_size": 128,
             "moe_intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
             "num_key_value_heads": 4, "head_dim": 16, "vocab_size": 100,
             "num_experts_per_tok": 1}


def params(cfg: dict) -> int:
    return quick_report(spec_from_config(cfg), Options(batch=1, seq_len=4))["params"]["total"]


def test_qwen3_moe_saved_by_transformers_counts_its_experts():
    """Issue 26 item 1: Qwen3MoeConfig saves num_local_experts; 64,384 is what transformers
    builds (2 experts), with either spelling."""
    assert params({**QWEN3_MOE, "num_local_experts": 2}) == 64_384
    assert params({**QWEN3_MOE, "num_experts": 2}) == 64_384
    assert params(QWEN3_MOE) != 64_384  # the class default: 128 experts


def test_the_alias_wins_over_the_field():
    """transformers sets the config class's fields first and the other keys after them."""
    both = {**QWEN3_MOE, "num_experts": 5, "num_local_experts": 2}
    assert spec_from_config(both).E == 2
    both = {**QWEN3_MOE, "num_local_experts": 2, "num_experts": 5}
    assert spec_from_config(both).E == 2
    gpt2 = {"model_type": "gpt2", "n_embd": 64, "hidden_size": 32, "n_head": 4}
    assert spec_from_config(gpt2).d == 32


def test_an_explicit_null_alias_is_null():
    cfg = {"model_type": "mixtral", "num_local_experts": 4, "num_experts": None}
    with pytest.raises(SymcalcError):
        spec_from_config(cfg)


def test_the_error_names_the_key_as_spelled():
    with pytest.raises(SymcalcError) as err:
        spec_from_config({"model_type": "gpt2", "hidden_size": 30, "n_head": 4})
    assert str(err.value).startswith("hidden_size (d): ")
    with pytest.raises(SymcalcError) as err:
        spec_from_config({**QWEN3_MOE, "num_local_experts": "x"})
    assert str(err.value).startswith("num_local_experts: ")


def test_canonical_config_keeps_a_config_without_aliases():
    data = {"a": 1}
    assert canonical_config({"x": "a"}, data) == (data, {})
    assert canonical_config({"x": "a", "y": "a"}, {"a": 1, "y": 3, "x": 2}) == (
        {"a": 2}, {"a": "x"})  # the later alias in the file wins


FAMILY = '''model_type = "fam"
description = "d"
sources = ["s"]
not_modelled = []
bare_class = "M"
[classes]
M = "bare"
[roles.bare.fixed]
head = "none"
'''


@pytest.mark.parametrize("table,spec,message", [
    ('[aliases]\nx = 3\n', 'L = "a"', "aliases.x: must name another config key"),
    ('[aliases]\nx = "x"\n', 'L = "a"', "aliases.x: must name another config key"),
    ('[aliases]\nx = "y"\ny = "z"\n', 'L = "z"', "aliases.x: 'y' is an alias itself"),
    ('[aliases]\nx = "a"\n[defaults]\nx = 1\n', 'L = "a"', "aliases.x: is in [defaults]"),
    ('[aliases]\nx = "a"\n', 'L = "x or a"', "aliases.x: is read by 'x or a'"),
])
def test_bad_aliases_are_refused_when_loaded(table, spec, message):
    text = FAMILY + table + "[spec]\n" + spec + "\n"
    with pytest.raises(SymcalcError) as err:
        parse_family(text, "families/fam.toml", "fam")
    assert message in str(err.value)


LFM2 = {"model_type": "lfm2", "architectures": ["Lfm2ForCausalLM"], "vocab_size": 64,
        "hidden_size": 32, "intermediate_size": 200, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "block_multiple_of": 16,
        "block_auto_adjust_ff_dim": True}


@pytest.mark.parametrize("multiplier,width", [
    (1.0, 144),  # int(2 * 200 / 3) = 133, up to a multiple of 16
    (1.3, 176),  # int(1.3 * 133) = 172 -> 176
    (0.5, 80),   # int(66.5) = 66 -> 80
    (2, 272),    # an integer multiplier: 266 -> 272
])
def test_lfm2_width_multiplier(multiplier, width):
    assert spec_from_config({**LFM2, "block_ffn_dim_multiplier": multiplier}).d_ff == width


@pytest.mark.parametrize("value,message", [
    (None, "must be a number (Lfm2Config refuses null)"),
    ([1.5], "must be a number (got [1.5]"),
    (float("inf"), "must be a finite number"),
])
def test_lfm2_width_multiplier_refusals(value, message):
    with pytest.raises(SymcalcError) as err:
        spec_from_config({**LFM2, "block_ffn_dim_multiplier": value})
    assert message in str(err.value) and str(err.value).startswith("block_ffn_dim_multiplier")


@pytest.mark.parametrize("cfg,d_h", [
    ({"model_type": "glm4_moe"}, 42),  # the class defaults: 4096 // 96
    ({"model_type": "jamba", "hidden_size": 50, "num_attention_heads": 4,
      "num_key_value_heads": 2}, 12),
    ({"model_type": "jamba", "hidden_size": 50, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 10}, 10),  # a config.json head_dim counts
    ({"model_type": "qwen3_moe", "hidden_size": 65, "num_attention_heads": 8,
      "num_key_value_heads": 4}, 8),
])
def test_head_width_floored_as_transformers_builds_it(cfg, d_h):
    assert spec_from_config(cfg).d_h == d_h


def test_llama_refuses_what_llama_config_refuses():
    with pytest.raises(SymcalcError) as err:
        spec_from_config({"model_type": "llama", "hidden_size": 34, "num_attention_heads": 4})
    assert str(err.value).startswith("hidden_size: must be a multiple of num_attention_heads")
    with pytest.raises(SymcalcError):  # also with a head width (LlamaConfig's validator)
        spec_from_config({"model_type": "llama", "hidden_size": 34, "num_attention_heads": 4,
                          "head_dim": 8})


@pytest.mark.parametrize("cfg,ok", [
    # MarianConfig saves decoder_vocab_size = vocab_size; TrOCRConfig may save
    # cross_attention_hidden_size = d_model: both read as the key left out
    ({"model_type": "marian", "vocab_size": 97, "decoder_vocab_size": 97}, True),
    ({"model_type": "marian", "vocab_size": 97, "decoder_vocab_size": None}, True),
    ({"model_type": "marian", "vocab_size": 97, "decoder_vocab_size": 96}, False),
    ({"model_type": "trocr", "d_model": 64, "cross_attention_hidden_size": 64}, True),
    ({"model_type": "trocr", "d_model": 64, "cross_attention_hidden_size": 32}, False),
])
def test_a_key_saved_equal_to_the_one_it_must_equal_is_read(cfg, ok):
    if ok:
        assert spec_from_config(cfg).d == cfg.get("d_model", 1024)
    else:
        with pytest.raises(SymcalcError, match="must"):
            spec_from_config(cfg)

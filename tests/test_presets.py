"""Every preset: its expected total, and for presets with a transformers class, the exact
parameter count and forward matmul FLOPs of transformers (computed live, meta device)."""
from __future__ import annotations

import copy

import pytest

import configs
from symcalc.inputs import presets
from symcalc.algebra import quantities as q
from symcalc.inputs.hf import spec_from_config
from symcalc.algebra.options import Options
from symcalc.fast.quick import quick_report
from symcalc.report import report
from symcalc.algebra.spec import size_values

# preset name -> key of hf_reference.PRESET_CONFIGS (the published config.json); the class is
# the preset's own ``reference`` (BERT presets are the bare BertModel with its pooler, while
# the hub config names BertForMaskedLM).
HF_CONFIG_OF = {
    "bert-base": "bert-base-uncased",
    "bert-large": "bert-large-uncased",
    "gpt2": "gpt2",
    "gpt2-medium": "gpt2-medium",
    "gpt2-large": "gpt2-large",
    "gpt2-xl": "gpt2-xl",
    "t5-small": "t5-small",
    "t5-base": "t5-base",
    "llama-2-7b": "Llama-2-7b",
    "llama-2-13b": "Llama-2-13b",
    "llama-3-8b": "Meta-Llama-3-8B",
    "mistral-7b": "Mistral-7B-v0.1",
    "mixtral-8x7b": "Mixtral-8x7B-v0.1",
    "qwen2-0.5b": "Qwen2-0.5B",
}
REQUIRED = set(HF_CONFIG_OF) | {
    "seed-layer-calculator-bert-base", "seed-scratch-guide", "seed-scratch-guide-formula",
    "seed-kaplan-12x768", "seed-decoder-calculator-default", "seed-estimator-12x768"}
ALL = [p.name for p in presets.all_presets()]


def hf_config(name: str) -> dict:
    cfg = copy.deepcopy(configs.PRESET_CONFIGS[HF_CONFIG_OF[name]])
    cfg["architectures"] = [presets.load(name).reference]
    return cfg


def test_the_issue_presets_exist():
    assert REQUIRED <= set(ALL)


# Presets of the families as data: the hub config is tests/families/<model_type>/hub-<preset>.json,
# checked against transformers and the preset in tests/reference/test_family_reference.py.
HUB_PRESETS = {cid.split("/")[1][len("hub-"):] for cid, _ in configs.family_configs()
               if cid.split("/")[1].startswith("hub-")}


def test_every_preset_with_a_class_is_checked_against_transformers():
    with_class = {p.name for p in presets.all_presets() if p.reference}
    unchecked = with_class - set(HF_CONFIG_OF) - HUB_PRESETS
    assert not unchecked, f"presets with a reference class but no hub config: {sorted(unchecked)}"
    assert set(HF_CONFIG_OF) <= with_class


@pytest.mark.parametrize("name", ALL)
def test_expected_total(name):
    preset = presets.load(name)
    # what `symcalc report` prints (the quick report) and the sympy expression's value
    rep = quick_report(preset.spec, Options(batch=1, seq_len=16))
    assert rep["params"]["total"] == preset.expected_total
    total = q.value(q.expression("params.total", preset.spec), size_values(preset.spec))
    assert total == preset.expected_total


@pytest.mark.reference
@pytest.mark.parametrize("name", sorted(HF_CONFIG_OF))
def test_params_equal_transformers(name):
    import hf_reference as H

    preset = presets.load(name)
    assert H.reference_params(hf_config(name)) == preset.expected_total


@pytest.mark.reference
@pytest.mark.parametrize("name", sorted(HF_CONFIG_OF))
def test_forward_matmul_equals_flop_counter(name):
    import hf_reference as H

    preset = presets.load(name)
    rep = report(preset.spec, Options(batch=1, seq_len=128))
    assert rep["flops"]["forward_matmul"] == H.reference_forward_matmul_flops(hf_config(name), 1, 128)


@pytest.mark.parametrize("name", sorted(HF_CONFIG_OF))
def test_hub_config_reads_as_the_preset(name):
    """The published config.json through the HF reader gives the preset's numbers."""
    preset = presets.load(name)
    spec = spec_from_config(hf_config(name))
    opts = Options(batch=1, seq_len=128)
    got, want = report(spec, opts), report(preset.spec, opts)
    assert got["params"]["breakdown"] == want["params"]["breakdown"]
    assert got["flops"]["forward_matmul"] == want["flops"]["forward_matmul"]
    assert spec.W == preset.spec.W


def test_mixtral_active_parameters():
    preset = presets.load("mixtral-8x7b")
    active = q.value(q.expression("params.active", preset.spec), size_values(preset.spec))
    assert active == 12_879_925_248 == preset.expected_active
    assert report(preset.spec)["params"]["active"] == 12_879_925_248
    assert report(preset.spec)["params"]["total"] == 46_702_792_704


def test_dense_presets_have_active_equal_total():
    for preset in presets.all_presets():
        if not preset.spec.moe:  # the quick path (test_quick holds it to the sympy report)
            assert quick_report(preset.spec, Options(seq_len=8))["params"]["active"] == preset.expected_total

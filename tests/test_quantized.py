"""Quantized weight formats of --dtype (issue 12 item 5) and the training peak (item 4)."""
from __future__ import annotations

import json
from fractions import Fraction

import pytest

from symcalc.algebra import quantized
from symcalc.algebra.options import Options
from symcalc.derivations.derive import derive
from symcalc.fast import quick
from symcalc.inputs.resolver import resolve
from symcalc.report import report

FORMATS = ("int8-g128", "int4-g128", "int4-g64-zp", "fp8-tensor", "fp8-block128", "mxfp4", "nvfp4")
MODELS = ("llama-3-8b", "gpt-oss-20b", "mixtral-8x7b", "t5-small", "deepseek-v3",
          "qwen3-next-80b-a3b", "jamba-1.5-mini", "gpt2")


def _leaves(rep):
    bd = rep["params"]["breakdown"]
    return {p: bd[p] for p in quantized.leaf_paths(bd)}


def test_gpt_oss_20b_mxfp4_matches_the_published_checkpoint():
    """GPT-OSS ships its routed experts in MXFP4 and everything else in bf16; the model card
    gives the 20b checkpoint as 12.8 GiB."""
    rep = quick.quick_report(resolve("gpt-oss-20b"), Options(dtype="mxfp4"))
    bd = rep["params"]["breakdown"]
    experts = sum(bd[f"layer/moe/experts/{m}"] for m in ("gate", "up", "down"))
    assert experts == 3 * 32 * 24 * 2880 * 2880
    rest = rep["params"]["total"] - experts
    assert rep["memory"]["weights_bytes"] == experts * Fraction(17, 32) + 2 * rest == 13_761_264_768
    assert round(rep["memory"]["weights_bytes"] / 2**30, 1) == 12.8
    q = rep["memory"]["weights_quantized"]
    assert q["bits_per_quantized_weight"] == "17/4" and q["quantized_params"] == experts
    assert q["bytes_by_group"] == {"quantized": experts // 2, "scales": experts // 32,
                                   "unquantized": 2 * rest}


def test_gpt_oss_120b_mxfp4_matches_the_model_card():
    """36 layers of 128 experts (the 120b's config on the 20b's widths): 116.83B parameters
    and a 60.8 GiB checkpoint in the model card."""
    spec = resolve("gpt-oss-20b", ["L=36", "E=128", "L_local=18"])
    rep = quick.quick_report(spec, Options(dtype="mxfp4"))
    assert rep["params"]["total"] == 116_829_156_672
    assert rep["memory"]["weights_bytes"] == 65_248_815_744
    assert round(rep["memory"]["weights_bytes"] / 2**30, 1) == 60.8


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_groups_add_up_and_quick_equals_sympy_and_derivation(model, fmt):
    spec = resolve(model)
    opts = Options(dtype=fmt, seq_len=64)
    rep = quick.quick_report(spec, opts)
    m, f = rep["memory"], quantized.parse(fmt)
    leaves = _leaves(rep)
    q = sum(v for p, v in leaves.items() if quantized.quantized(p, f, bool(spec.moe)))
    assert 0 < q < rep["params"]["total"]
    expect = q * Fraction(f.bits, 8) + 2 * (rep["params"]["total"] - q)
    if f.group:
        expect += q * (f.scale_bytes + f.zero_bytes) / f.group
    if f.tensor_bytes:
        expect += 4 * m["weights_quantized"]["tensor_scales"]
    assert m["weights_bytes"] == -(-expect // 1)
    assert m["weights_bytes"] < rep["params"]["total"] * 2
    assert quick.evaluate("memory.weights_bytes", spec, opts) == m["weights_bytes"]
    assert report(spec, opts)["memory"] == m
    assert derive(spec, "memory.weights_bytes", opts).result.value == m["weights_bytes"]


def test_which_tensors_stay_16_bit():
    f = quantized.parse("int4-g128")
    assert quantized.quantized("layer/attention/q", f, False)
    assert quantized.quantized("decoder/layer/cross_attention/k", f, False)
    for path in ("embedding/token", "head/weight", "layer/norm/ffn", "layer/moe/router",
                 "layer/moe/experts/bias", "layer/attention/sinks", "final_norm",
                 "layer/ssm/conv"):
        assert not quantized.quantized(path, f, True), path
    mx = quantized.parse("mxfp4")
    assert not quantized.quantized("layer/attention/q", mx, True)  # MoE: experts only
    assert quantized.quantized("layer/attention/q", mx, False)  # dense: every matrix


def test_nvfp4_counts_one_fp32_scale_per_weight_matrix():
    rep = quick.quick_report(resolve("mixtral-8x7b"), Options(dtype="nvfp4"))
    # 4 attention matrices per layer and 3 per expert, 8 experts, 32 layers
    assert rep["memory"]["weights_quantized"]["tensor_scales"] == 32 * (4 + 3 * 8)
    assert rep["memory"]["weights_quantized"]["bytes_by_group"]["tensor_scales"] == 4 * 32 * 28


def test_existing_dtypes_keep_their_numbers():
    spec = resolve("llama-3-8b")
    total = quick.quick_report(spec)["params"]["total"]
    for name, per in (("bf16", 2), ("fp32", 4), ("int8", 1), ("fp8", 1), ("int4", Fraction(1, 2))):
        rep = quick.quick_report(spec, Options(dtype=name))
        assert rep["memory"]["weights_bytes"] == total * per
        assert "weights_quantized" not in rep["memory"]


@pytest.mark.parametrize("args, line", [
    (["--dtype", "int4-g0"], "symcalc: error: dtype: group size must be a positive integer"),
    (["--kv-dtype", "mxfp4"], "symcalc: error: kv-dtype: a quantized weight format (mxfp4) "
                              "applies to --dtype only"),
    (["--dtype", "int3-g128"], "symcalc: error: dtype: must be one of"),
])
def test_bad_formats_are_one_line(cli, args, line):
    out = cli("report", "llama-3-8b", *args)
    assert out.returncode == 2 and out.stderr.startswith(line) and len(out.stderr.strip().splitlines()) == 1


def test_report_and_derive_show_the_format(cli):
    out = cli("report", "gpt-oss-20b", "--dtype", "mxfp4")
    assert out.returncode == 0 and "13,761,264,768 B = 13.76 GB / 12.82 GiB" in out.stdout
    assert "routed experts' weight matrices" in out.stdout
    out = cli("derive", "gpt-oss-20b", "--quantity", "memory.weights_bytes", "--dtype", "mxfp4")
    assert out.returncode == 0 and "597{,}196{,}800" in out.stdout and "ocp_mx2023" in out.stdout


def test_sweep_refuses_a_quantized_format():
    from symcalc.errors import SymcalcError
    from symcalc.fast.sweep import sweep

    with pytest.raises(SymcalcError, match="quantized format"):
        sweep("llama-3-8b", {"L": [2, 4]}, ["memory.weights_bytes"], Options(dtype="nvfp4"))


@pytest.mark.parametrize("activations", ["paper", "eager", "sdpa"])
def test_training_peak_is_state_plus_activations(cli, activations):
    out = cli("report", "llama-3-8b", "--seq-len", "512", "--activations", activations,
              "--zero", "3", "--dp", "8", "--json")
    m = json.loads(out.stdout)["memory"]
    assert m["training_peak_bytes"] == m["training_bytes"] + m["activations_bytes"]
    assert m["training_bytes"] == 16 * 8_030_261_248 // 8
    assert f"--activations {activations}" in m["conventions"]["training_peak_bytes"]
    table = cli("report", "llama-3-8b", "--seq-len", "512", "--activations", activations,
                "--zero", "3", "--dp", "8").stdout
    gb = f"{m['training_peak_bytes'] / 1e9:.2f} GB / {m['training_peak_bytes'] / 2**30:.2f} GiB"
    assert "training peak" in table and gb in table


@pytest.mark.parametrize("fmt", ["nvfp4", "fp8-tensor", "int4-g32-zp"])
def test_derivation_renders_in_markdown_and_tex(cli, fmt):
    for form in ("md", "tex"):
        out = cli("derive", "mixtral-8x7b", "--quantity", "memory.weights_bytes", "--dtype", fmt,
                  "--format", form)
        assert out.returncode == 0, out.stderr
        assert "weights.unquantized" in out.stdout or "unquantized" in out.stdout
    if fmt != "int4-g32-zp":  # one fp32 scale per matrix: 32 layers x (4 + 3 x 8)
        assert "896 weight matrices" in out.stdout or "896" in out.stdout

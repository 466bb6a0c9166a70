"""Memory against the published examples: ZeRO, KV cache (GQA, sliding window, OPT-13B),
Korthikanti et al.'s activations and selective recomputation, weights by dtype."""
from __future__ import annotations

import json

import pytest
import sympy

from symcalc.algebra import memory
from symcalc.algebra import quantities as q
from symcalc.cli import main
from symcalc.algebra.options import Options
from symcalc.inputs.presets import load
from symcalc.render.numbers import bytes_both
from symcalc.algebra.spec import size_values
from symcalc.algebra.symbols import L, N_d, b, d, n_h, s, t


def report(capsys, *args):
    assert main(["report", *map(str, args), "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


# -- training state: ZeRO (Rajbhandari et al. 2020, Sec. 5, the 7.5B example) -------------

PSI = sympy.Integer(7_500_000_000)
ZERO_BYTES = {0: 120_000_000_000, 1: 31_406_250_000, 2: 16_640_625_000, 3: 1_875_000_000}
ZERO_GB = {0: "120.0", 1: "31.4", 2: "16.6", 3: "1.9"}


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_zero_stages_7_5b_on_64_ranks(stage):
    expr = memory.training_bytes(PSI, memory.optimizer("adam-mixed"), stage)
    value = expr.xreplace({N_d: 64})
    assert value == ZERO_BYTES[stage]
    assert f"{value / 10**9:.1f}" == ZERO_GB[stage]


def test_zero_formulas_symbolic():
    psi = sympy.Symbol("Psi", positive=True)
    adam = memory.optimizer("adam-mixed")
    forms = {0: 16 * psi, 1: 4 * psi + 12 * psi / N_d, 2: 2 * psi + 14 * psi / N_d, 3: 16 * psi / N_d}
    for stage, form in forms.items():
        assert sympy.simplify(memory.training_bytes(psi, adam, stage) - form) == 0
    assert memory.training_bytes(psi, memory.optimizer("adam-fp32"), 0) == 16 * psi
    assert memory.training_bytes(psi, memory.optimizer("sgd-momentum"), 0) == 12 * psi


def test_training_bytes_default_is_16_per_parameter_and_zero_in_report(capsys):
    total = 6_738_415_616
    rep = report(capsys, "llama-2-7b", "--batch", 1, "--seq-len", 16)
    assert rep["params"]["total"] == total
    assert rep["memory"]["training_bytes"] == 16 * total
    rep3 = report(capsys, "llama-2-7b", "--zero", 3, "--dp", 64, "--seq-len", 16)
    assert rep3["memory"]["training_bytes"] == -(-16 * total // 64)  # whole bytes, rounded up
    rep1 = report(capsys, "llama-2-7b", "--zero", 1, "--dp", 8, "--optimizer", "adam-fp32",
                  "--seq-len", 16)
    assert rep1["memory"]["training_bytes"] == 8 * total + 8 * total // 8


# -- KV cache ---------------------------------------------------------------------------

def test_kv_cache_per_token_cli(cli):
    """Pope et al.: 2 L n_kv d_h bytes-per-element per token."""
    llama = cli("report", "llama-2-7b", "--batch", "1", "--seq-len", "1", "--json").json()
    mistral = cli("report", "mistral-7b", "--batch", "1", "--seq-len", "1", "--json").json()
    assert llama["memory"]["kv_cache_bytes"] == 524_288 == 2 * 32 * 32 * 128 * 2
    assert mistral["memory"]["kv_cache_bytes"] == 131_072 == 2 * 32 * 8 * 128 * 2


@pytest.mark.parametrize("model,per_token", [("llama-2-7b", 524_288), ("mistral-7b", 131_072),
                                             ("llama-3-8b", 131_072), ("gpt2", 36_864)])
def test_kv_cache_per_token_api(model, per_token):
    spec = load(model).spec
    expr = q.expression("memory.kv_cache_bytes", spec, Options(kv_dtype="bf16"))
    assert q.value(expr, {**size_values(spec), "b": 1, "s": 1, "W": spec.W or 1}) == per_token
    big = q.value(expr, {**size_values(spec), "b": 3, "s": 1000, "W": spec.W or 10**9})
    assert big == 3000 * per_token
    fp8 = q.expression("memory.kv_cache_bytes", spec, Options(kv_dtype="fp8"))
    assert q.value(fp8, {**size_values(spec), "b": 1, "s": 1, "W": spec.W or 1}) == per_token // 2


def test_mistral_sliding_window_caps_the_cache(capsys):
    at = {n: report(capsys, "mistral-7b", "--batch", 2, "--seq-len", n)["memory"]["kv_cache_bytes"]
          for n in (2048, 4096, 8192)}
    assert at[2048] == 2 * 2048 * 131_072
    assert at[4096] == at[8192] == 2 * 4096 * 131_072
    no_window = report(capsys, "llama-3-8b", "--seq-len", 8192)["memory"]["kv_cache_bytes"]
    assert no_window == 8192 * 131_072


OPT_13B = """
name = "opt-13b"
source = "Zhang et al. 2022, OPT, Table 1; facebook/opt-13b config.json"
family = "decoder"
L = 40
d = 5120
n_h = 40
d_ff = 20480
V = 50272
P = 2050
position = "learned"
norm = "layernorm"
attention_bias = "all"
ffn = "plain"
ffn_bias = true
final_norm = true
head = "tied"
"""


def test_opt_13b_kv_cache_about_800_kb_per_token(tmp_path, capsys):
    path = tmp_path / "opt-13b.toml"
    path.write_text(OPT_13B, encoding="utf-8")
    rep = report(capsys, path, "--batch", 1, "--seq-len", 1)
    assert rep["memory"]["kv_cache_bytes"] == 819_200 == 2 * 40 * 5120 * 2
    assert round(rep["memory"]["kv_cache_bytes"] / 1000) == 819  # "about 800 KB"
    per_layer = 4 * (5120**2 + 5120) + 2 * 5120 * 20480 + 20480 + 5120 + 2 * 2 * 5120
    assert rep["params"]["total"] == 40 * per_layer + (50272 + 2050) * 5120 + 2 * 5120
    at_2k = report(capsys, path, "--batch", 4, "--seq-len", 2048)["memory"]["kv_cache_bytes"]
    assert at_2k == 4 * 2048 * 819_200


def test_encoder_keeps_no_cache_and_t5_caches_both_sides(capsys):
    assert report(capsys, "bert-base", "--seq-len", 128)["memory"]["kv_cache_bytes"] == 0
    t5 = report(capsys, "t5-small", "--seq-len", 64, "--dec-seq-len", 16)
    assert t5["memory"]["kv_cache_bytes"] == 6 * 2 * 8 * 64 * 2 * (16 + 64)


# -- activations (Korthikanti et al. 2022, Sec. 4) --------------------------------------

def test_activations_default_is_korthikanti_no_parallelism(capsys):
    gpt2 = load("gpt2").spec
    expr = q.expression("memory.activations_bytes", gpt2, Options())
    gpt_shape = {sympy.Symbol("d_ff", positive=True, integer=True): 4 * d,
                 sympy.Symbol("d_h", positive=True, integer=True): d / n_h,
                 sympy.Symbol("n_kv", positive=True, integer=True): n_h}
    assert sympy.expand(expr.xreplace(gpt_shape) - L * (34 * s * b * d + 5 * n_h * s**2 * b)) == 0
    rep = report(capsys, "gpt2", "--batch", 2, "--seq-len", 128)
    assert rep["memory"]["activations_bytes"] == 12 * (34 * 128 * 2 * 768 + 5 * 12 * 128**2 * 2)


GPT3 = dict(L=96, d=12288, n_h=96, s=2048, b=1)


def _per_layer(**options):
    expr = memory.activation_bytes_per_layer(s, **options)
    return sympy.nsimplify(expr.xreplace({sympy.Symbol(k, positive=True, integer=True): v
                                          for k, v in GPT3.items()} | {t: 8}))


def test_korthikanti_parallel_forms():
    a_s_h = sympy.Rational(5 * 96 * 2048, 12288)  # 5 a s / h = 80
    sbd = 2048 * 12288
    assert _per_layer() == sbd * (34 + a_s_h)
    assert _per_layer(tensor_parallel=True) == sbd * (10 + sympy.Rational(24, 8) + a_s_h / 8)
    assert _per_layer(sequence_parallel=True) == sbd * (sympy.Rational(34, 8) + a_s_h / 8)
    assert _per_layer(recompute="selective", sequence_parallel=True) == sbd * sympy.Rational(34, 8)
    assert _per_layer(recompute="full") == 2 * sbd
    assert _per_layer(recompute="full", sequence_parallel=True) == 2 * sbd // 8


def test_gpt3_selective_recompute_saves_about_70_percent(capsys):
    """GPT-3 175B, t = 8 with sequence parallelism: (34/t) against (34/t + 5as/(ht))."""
    none = _per_layer(sequence_parallel=True)
    selective = _per_layer(recompute="selective", sequence_parallel=True)
    saving = 1 - selective / none
    assert saving == 1 - sympy.Rational(34, 114)
    assert f"{float(saving):.0%}" == "70%"
    args = ["gpt2", "--set", "L=96", "--set", "d=12288", "--set", "n_h=96", "--set", "d_ff=49152",
            "--set", "P=2048", "--seq-len", 2048, "--tp", 8, "--sequence-parallel"]
    full_rep = report(capsys, *args)["memory"]["activations_bytes"]
    sel_rep = report(capsys, *args, "--recompute", "selective")["memory"]["activations_bytes"]
    assert full_rep == 96 * none and sel_rep == 96 * selective
    assert "recompute selective" in json.dumps(report(capsys, *args, "--recompute", "selective"))


def test_seed_baseline_activations():
    """seeds/000: s d 4 bytes per layer: BERT-base at s = 512 1,572,864 per layer, 18,874,368."""
    expr = memory.seed_activation_bytes("encoder")
    values = {L: 12, d: 768, s: 512, b: 1}
    assert expr.xreplace(values) == 18_874_368
    assert (expr / L).xreplace(values) == 1_572_864


# -- weights by dtype, GB vs GiB --------------------------------------------------------

@pytest.mark.parametrize("dtype,num,den", [("fp32", 4, 1), ("fp16", 2, 1), ("bf16", 2, 1),
                                           ("int8", 1, 1), ("fp8", 1, 1), ("int4", 1, 2),
                                           ("bits3", 3, 8), ("bits6", 6, 8)])
def test_weights_bytes_by_dtype(dtype, num, den, capsys):
    total = 124_439_808
    rep = report(capsys, "gpt2", "--dtype", dtype, "--seq-len", 8)
    assert rep["memory"]["weights_bytes"] == -(-total * num // den)
    assert memory.dtype_bytes(dtype) == sympy.Rational(num, den)


def test_gb_and_gib_are_both_named(capsys):
    assert main(["report", "mistral-7b", "--seq-len", "4096"]) == 0
    out = capsys.readouterr().out
    weights = 2 * 7_241_732_096
    assert bytes_both(weights) == "14.48 GB / 13.49 GiB"
    assert f"{weights:,} B = 14.48 GB / 13.49 GiB" in out
    assert bytes_both(2**30) == "1.07 GB / 1.00 GiB"


@pytest.mark.parametrize("args,field", [(["--zero", "4"], "zero"), (["--dtype", "fp5"], "dtype"),
                                        (["--kv-dtype", "int3x"], "kv-dtype"),
                                        (["--tp", "5"], "tp"), (["--batch", "0"], "batch")])
def test_bad_memory_options_exit_2(args, field, capsys):
    assert main(["report", "llama-2-7b", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and field in err

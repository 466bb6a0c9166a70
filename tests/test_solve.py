"""symcalc solve / symcalc.solve, closed-form --diff, accelerators and report --gpu: every
answer checked against the report computed at the size found (not against itself)."""
from __future__ import annotations

import json
from fractions import Fraction

import pytest

import symcalc
from symcalc.algebra.options import Options
from symcalc.algebra.units import parse_amount
from symcalc.cli import main
from symcalc.errors import SymcalcError
from symcalc.fast.quick import quick_report
from symcalc.inputs.resolver import resolve


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def total(model, **sets):
    return quick_report(resolve(model, [f"{k}={v}" for k, v in sets.items()]))["params"]["total"]


# -- the four examples of the issue --------------------------------------------------------------
def test_hidden_size_for_7b(capsys):
    code, out, _ = run(capsys, "solve", "llama-2-7b", "--for", "d", "--target",
                       "params.total=7e9", "--json")
    got = json.loads(out)
    assert code == 0 and set(got) == {"equation", "exact", "below", "above", "value_below",
                                      "value_above"}
    assert got["exact"] == "-1120833/256 + sqrt(4840266613889)/256"
    assert (got["below"], got["above"]) == (4192, 4224)  # d divisible by n_h = 32
    assert got["value_below"] == total("llama-2-7b", d=4192) < 7e9 < got["value_above"] \
        == total("llama-2-7b", d=4224)


def test_longest_context_on_80gb(capsys):
    # Mistral's sliding window caps the cache: every s fits; the uncapped answer is shown too
    code, out, _ = run(capsys, "solve", "mistral-7b", "--for", "s", "--fit",
                       "memory.weights_bytes + memory.kv_cache_bytes <= 80GB", "--batch", "8")
    assert code == 0 and "holds for every s >= 1" in out
    assert "s = 999703/16" in out and "s = 62,481" in out and "s = 62,482" in out
    code, out, _ = run(capsys, "solve", "mistral-7b", "--for", "s", "--fit",
                       "memory.weights_bytes + memory.kv_cache_bytes <= 80GB", "--batch", "8",
                       "--json")
    assert json.loads(out)["below"] is None and json.loads(out)["exact"] is None


def test_longest_context_that_fits_an_h100(capsys):
    code, out, _ = run(capsys, "solve", "llama-2-7b", "--for", "s", "--fit",
                       "memory.weights_bytes + memory.kv_cache_bytes <= H100", "--batch", "8",
                       "--json")
    got = json.loads(out)
    assert got["exact"] == "1015063/64" and got["below"] == 15860
    spec = resolve("llama-2-7b", [])
    for s, fits in ((15860, True), (15861, False)):
        mem = quick_report(spec, Options(batch=8, seq_len=s))["memory"]
        assert (mem["weights_bytes"] + mem["kv_cache_bytes"] <= 80 * 10**9) is fits


def test_attention_ffn_crossover(capsys):
    code, out, _ = run(capsys, "solve", "gpt2", "--for", "s", "--when",
                       "flops:layer/attention/scores + flops:layer/attention/context >= "
                       "flops:layer/ffn")
    assert code == 0 and "s = d*d_ff/(d_h*n_h)" in out and "= 4*d" in out
    assert "s = 3072" in out and "position table P = 1024" in out
    spec = resolve("gpt2", [])
    for s, sign in ((3071, -1), (3072, 0), (3073, 1)):
        bd = quick_report(spec, Options(seq_len=s))["flops"]["breakdown"]
        attn = bd["layer/attention/scores"] + bd["layer/attention/context"]
        assert (attn > bd["layer/ffn"]) - (attn < bd["layer/ffn"]) == sign


def test_layers_for_70b_keeping_a_ratio(capsys):
    code, out, _ = run(capsys, "solve", "llama-3-8b", "--for", "L", "--target",
                       "params.total=70e9", "--keep", "d_ff/d", "--json")
    got = json.loads(out)
    assert got["exact"] == "22444441/71000" and (got["below"], got["above"]) == (316, 317)
    assert got["value_below"] == total("llama-3-8b", L=316)


def test_keep_scales_a_follower_with_the_size():
    # d_ff follows d at 3.5 d: both change, d even so that d_ff is whole, d % 32 for d_h
    sol = symcalc.solve("llama-3-8b", "d", target="params.total=10B", keep=["d_ff/d"],
                        multiple_of=128)
    assert sol.below % 128 == 0 and sol.above == sol.below + 128
    assert sol.value_below == total("llama-3-8b", d=sol.below, d_ff=sol.below * 7 // 2)


# -- errors: one line, exit 2 -------------------------------------------------------------------
@pytest.mark.parametrize("argv, words", [
    (["gpt2", "--for", "s", "--target", "params.total=1e9"], "does not depend on s"),
    (["gpt2", "--for", "E", "--target", "params.total=1e9"], "has no size E"),
    (["gpt2", "--for", "zz", "--target", "params.total=1e9"], "is not a size"),
    (["gpt2", "--for", "d", "--fit", "params.total <= 1000"], "no positive d satisfies"),
    (["gpt2", "--for", "d", "--target", "params.total=80GB"], "compares counts with bytes"),
    (["gpt2", "--for", "d", "--target", "params.total=80XB"], "unknown unit"),
    (["gpt2", "--for", "d", "--fit", "params.total = 1e9"], "must compare with"),
    (["gpt2", "--for", "d", "--target", "flops:layer/nope >= 1"], "is not a part"),
    (["gpt2", "--for", "s", "--fit", "memory.kv_cache_bytes <= X200"], "unknown name"),
])
def test_refusals(capsys, argv, words):
    code, out, err = run(capsys, "solve", *argv)
    assert code == 2 and out == "" and words in err and err.count("\n") == 1


# -- units ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, value, kind", [
    ("80GB", 80 * 10**9, "bytes"), ("80 GB", 80 * 10**9, "bytes"), ("24GiB", 24 * 2**30, "bytes"),
    ("80Gbit", 10 * 10**9, "bytes"), ("1 KiB", 1024, "bytes"), ("3 EFLOPs", 3 * 10**18, "flops"),
    ("7B", 7 * 10**9, "count"), ("1.5T", 15 * 10**11, "count"), ("500M", 5 * 10**8, "count"),
    ("70e9", 70 * 10**9, "count"), ("2.25 PFLOPs", 225 * 10**13, "flops"), ("0.5", Fraction(1, 2), "count"),
])
def test_units(text, value, kind):
    got = parse_amount("x", text)
    assert (got.value, got.kind) == (value, kind)


@pytest.mark.parametrize("text", ["7b", "80 XB", "GB", "1e99", "", "80Gb", "80 gb", "80 tflops",
                                  "1" * 101])
def test_units_refused(text):
    with pytest.raises(SymcalcError):
        parse_amount("x", text)


# -- derivations ---------------------------------------------------------------------------------
def test_solution_as_derivation(capsys):
    code, out, _ = run(capsys, "derive", "llama-2-7b", "--for", "d", "--target",
                       "params.total=7e9", "--format", "md")
    assert code == 0 and "quadratic formula" in out and "$$ d = 4192 $$" in out
    assert "**d = 4,224**" in out  # the valid d whose Q is nearest 7e9 (7.018e9 vs 6.948e9)
    code, out, _ = run(capsys, "derive", "gpt2", "--for", "s", "--when",
                       "flops:layer/attention/scores + flops:layer/attention/context >= "
                       "flops:layer/ffn", "--format", "tex")
    assert code == 0 and r"Q &\ge 4 \cdot L" in out and r"\[ s = 3072 \]" in out


# -- sensitivities -------------------------------------------------------------------------------
def test_one_more_layer(capsys):
    code, out, _ = run(capsys, "closed-form", "llama-2-7b", "--diff", "L", "--json")
    got = json.loads(out)
    per_layer = total("llama-2-7b", L=33) - total("llama-2-7b", L=32)
    assert code == 0 and got["slope"] == got["step"] == per_layer == 202383360
    assert Fraction(got["elasticity"]) == Fraction(32 * per_layer, total("llama-2-7b"))


def test_elasticity_in_d_with_the_ffn_following():
    s = symcalc.sensitivity("llama-2-7b", "d", keep=["d_ff/d"])
    assert 1.9 < float(s.elasticity) < 2  # quadratic in d, minus the linear embeddings
    assert s.step > s.slope > 0  # convex: one more unit of d adds more than the slope
    assert s.value == total("llama-2-7b")


# -- accelerators --------------------------------------------------------------------------------
def test_report_fits_column(capsys):
    code, out, _ = run(capsys, "report", "llama-2-7b", "--gpu", "H100", "--gpu", "tpu-v4",
                       "--gpu", "RTX4090", "--batch", "8", "--seq-len", "4096")
    assert code == 0 and "H100 (80 GB)" in out and "TPU-v4 (32 GiB)" in out
    row = next(line for line in out.splitlines() if "weights + KV cache" in line)
    assert row.split()[-5:] == ["fits", "fits", "does", "not", "fit"]
    code, out, _ = run(capsys, "report", "llama-2-7b", "--gpu", "TPU-v4", "--json")
    fit = json.loads(out)["fits"]
    assert fit["gpus"][0]["memory_bytes"] == 32 * 2**30
    assert fit["budgets"]["weights"] == 2 * 6738415616 and fit["gpus"][0]["fits"]["weights"]


def test_user_accelerators(tmp_path, capsys):
    f = tmp_path / "mine.toml"
    f.write_text('[Lab-1]\nmemory = "12 GiB"\nbf16 = "100 TFLOPs"\nsource = "our lab"\n')
    code, out, _ = run(capsys, "solve", "gpt2", "--for", "b", "--fit",
                       "memory.weights_bytes + memory.kv_cache_bytes <= Lab-1",
                       "--seq-len", "1024", "--gpus", str(f), "--json")
    got = json.loads(out)
    kv_per_seq = quick_report(resolve("gpt2", []), Options(seq_len=1024))["memory"]["kv_cache_bytes"]
    assert code == 0 and got["below"] == (12 * 2**30 - 2 * 124439808) // kv_per_seq
    f.write_text('[Lab-1]\nmemory = "12"\nbf16 = "100 TFLOPs"\nsource = "x"\n')
    code, _, err = run(capsys, "report", "gpt2", "--gpu", "Lab-1", "--gpus", str(f))
    assert code == 2 and "needs a byte unit" in err


# -- issue 25 item 5: --for n_h with n_kv following it (AttributeError on is_integer) -------
@pytest.mark.parametrize("model,mode,relation", [
    ("gpt2", "--target", "memory.activations_bytes=1811939328"),
    ("gpt2", "--fit", "memory.activations_bytes <= 2e9"),
    ("llama-2-7b", "--fit", "memory.activations_bytes <= 80GB"),
])
def test_solving_for_n_h_with_n_kv_following(capsys, model, mode, relation):
    """n_kv = n_h follows n_h as the symbol itself: substituting a Python int gave back an
    int, and `.is_integer` ended in an AttributeError. Each integer answer is checked
    against the report at that n_h."""
    code, out, err = run(capsys, "solve", model, "--for", "n_h", mode, relation, "--json")
    assert code == 0 and err == "", err
    got = json.loads(out)
    for side in ("below", "above"):
        n_h = got[side]
        if n_h is None:
            continue
        rep = quick_report(resolve(model, [f"n_h={n_h}"]))
        assert rep["memory"]["activations_bytes"] == got[f"value_{side}"]
    assert got["below"] is not None and got["above"] is not None

"""FLOP conventions as switches: causal full / half / exact, MACs, training passes,
non-matmul costs, prefill and decode; and the report naming each convention."""
from __future__ import annotations

import json

import pytest
import sympy
from hypothesis import given, settings, strategies as st

from symcalc.algebra import quantities as q
from symcalc.cli import main
from symcalc.algebra.flops import NONMATMUL_COSTS
from symcalc.algebra.options import Options
from symcalc.inputs.presets import load
from symcalc.algebra.spec import size_values
from symcalc.algebra.symbols import L, V, b, d, d_ff, d_h, n_h, n_kv, s


def spec(name):
    return load(name).spec


def flops(name, model, **kw):
    return q.expression(name, spec(model), Options(**kw))


def num(expr, model, **workload):
    return q.value(expr, {**size_values(spec(model)), **workload})


def report(capsys, *args):
    assert main(["report", *map(str, args), "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


C = NONMATMUL_COSTS

# Attention core (scores + weighted sum of V) of a single-stack model with full s^2:
CORE = 4 * L * b * n_h * d_h * s**2


@pytest.mark.parametrize("model", ["gpt2", "llama-2-7b", "mistral-7b", "mixtral-8x7b"])
def test_causal_conventions_on_a_decoder(model):
    full = flops("flops.forward", model, causal="full")
    half = flops("flops.forward", model, causal="half")
    exact = flops("flops.forward", model, causal="exact")
    assert sympy.expand(full - half - CORE / 2) == 0
    # s(s+1)/2 pairs: the exact lower triangle keeps the diagonal
    assert sympy.expand(exact - half - 4 * L * b * n_h * d_h * s / 2) == 0
    assert sympy.expand(full - flops("flops.forward_matmul", model, causal="half")) == 0  # contract key stays full


def test_causal_numbers_gpt2(capsys):
    base = ("gpt2", "--batch", 2, "--seq-len", 128)
    full, half, exact = (report(capsys, *base, "--causal", c)["flops"] for c in ("full", "half", "exact"))
    core = 4 * 12 * 2 * 12 * 64 * 128**2
    assert full["forward"] == full["forward_matmul"] == half["forward_matmul"]
    assert full["forward"] - half["forward"] == core // 2
    assert exact["forward"] - half["forward"] == 4 * 12 * 2 * 12 * 64 * 128 // 2
    assert "s(s+1)/2" in exact["conventions"]["forward"]


def test_encoder_only_never_halves(capsys):
    for causal in ("half", "exact"):
        assert sympy.expand(flops("flops.forward", "bert-base", causal=causal)
                            - flops("flops.forward_matmul", "bert-base")) == 0
    rep = report(capsys, "bert-base", "--seq-len", 128, "--causal", "half")["flops"]
    assert rep["forward"] == rep["forward_matmul"]
    assert "bidirectional" in rep["conventions"]["forward"]


@pytest.mark.parametrize("model", ["gpt2", "bert-base", "mixtral-8x7b", "t5-small"])
def test_macs_are_half_the_matmul_flops(model, capsys):
    assert sympy.expand(2 * flops("flops.forward", model, macs=True)
                        - flops("flops.forward_matmul", model)) == 0
    rep = report(capsys, model, "--seq-len", 64, "--batch", 3, "--macs")["flops"]
    assert 2 * rep["forward"] == rep["forward_matmul"]
    assert rep["conventions"]["forward"].startswith("MACs")


@pytest.mark.parametrize("model", ["gpt2", "llama-3-8b", "t5-small"])
def test_training_three_or_four_forward_passes(model, capsys):
    fwd = flops("flops.forward", model)
    assert sympy.expand(flops("flops.training", model) - 3 * fwd) == 0
    assert sympy.expand(flops("flops.training", model, recompute="full") - 4 * fwd) == 0
    rep = report(capsys, model, "--seq-len", 32)["flops"]
    rec = report(capsys, model, "--seq-len", 32, "--recompute", "full")["flops"]
    assert rep["training"] == 3 * rep["forward"] and rec["training"] == 4 * rec["forward"]
    assert "recompute" in rec["conventions"]["training"]
    assert "2x forward" in rep["conventions"]["training"]


def test_selective_recompute_adds_one_attention_core(capsys):
    """Selective recomputation (Korthikanti et al. 2022, Sec. 5) runs the attention core's
    forward again: 3 forward passes plus scores, softmax and weighted sum of V."""
    fwd = flops("flops.forward", "gpt2", causal="half")
    sel = flops("flops.training", "gpt2", causal="half", recompute="selective")
    assert sympy.expand(sel - 3 * fwd - CORE / 2) == 0
    with_softmax = flops("flops.training", "gpt2", recompute="selective", nonmatmul=True)
    fwd_nm = flops("flops.forward", "gpt2", nonmatmul=True)
    softmax = (C["softmax"] + C["scale"]) * L * b * n_h * s**2
    assert sympy.expand(with_softmax - 3 * fwd_nm - CORE - softmax) == 0
    rep = report(capsys, "gpt2", "--seq-len", 128, "--batch", 2, "--recompute", "selective")["flops"]
    assert rep["training"] == 3 * rep["forward"] + 4 * 12 * 2 * 12 * 64 * 128**2
    assert "attention core" in rep["conventions"]["training"]


# Non-matmul work, counted by hand from the stated costs (flops.NONMATMUL_COSTS):
SOFTMAX = (C["softmax"] + C["scale"]) * L * b * n_h * s**2  # every score element
RESIDUAL = 2 * C["residual"] * L * b * s * d  # two residual adds per layer
NONMATMUL_BY_HAND = {
    # GPT-2: LayerNorm before attention, before FFN and at the end; GELU on d_ff
    "gpt2": SOFTMAX + RESIDUAL + C["layernorm"] * b * s * d * (2 * L + 1)
    + C["activation"] * L * b * s * d_ff,
    # Llama: RMSNorm x (2L + 1); SiLU on the gate and the gate x up product
    "llama-2-7b": SOFTMAX + RESIDUAL + C["rmsnorm"] * b * s * d * (2 * L + 1)
    + (C["activation"] + C["gate_product"]) * L * b * s * d_ff,
    # BERT: two post-norms per layer, the embedding norm, the pooler's tanh on one token
    "bert-base": SOFTMAX + RESIDUAL + C["layernorm"] * b * s * d * (2 * L + 1)
    + C["activation"] * L * b * s * d_ff + C["activation"] * b * d,
}


@pytest.mark.parametrize("model", list(NONMATMUL_BY_HAND))
def test_nonmatmul_adds_the_stated_costs(model):
    extra = flops("flops.forward", model, nonmatmul=True) - flops("flops.forward", model)
    assert sympy.expand(extra - NONMATMUL_BY_HAND[model]) == 0
    half = flops("flops.forward", model, nonmatmul=True, causal="half")
    if model != "bert-base":  # causal skipping halves the softmax work too
        assert sympy.expand(extra - (flops("flops.forward", model, nonmatmul=True) - half)
                            - NONMATMUL_BY_HAND[model] + SOFTMAX / 2 + CORE / 2) == 0


def test_nonmatmul_costs_are_the_stated_ones():
    assert NONMATMUL_COSTS == {"softmax": 5, "scale": 1, "layernorm": 5, "rmsnorm": 3,
                               "activation": 1, "gate_product": 1, "residual": 1}


def test_decode_per_token_gpt2_by_hand(capsys):
    """One new token with c tokens cached: every weight matmul once (2 x (12 L d^2 + V d)
    for GPT-2) and scores + weighted sum over c + 1 keys (4 L n_h d_h (c + 1))."""
    c = sympy.Symbol("c", positive=True, integer=True)
    decode = flops("flops.decode_per_token", "gpt2").xreplace({s: c})
    hand = b * (2 * (12 * L * d**2 + V * d) + 4 * L * n_h * d_h * (c + 1))
    gpt2 = {d_h: d / n_h, n_kv: n_h, d_ff: 4 * d}
    assert sympy.expand(decode.xreplace(gpt2) - hand.xreplace(gpt2)) == 0
    rep = report(capsys, "gpt2", "--seq-len", 1024, "--context", 1000)["flops"]
    assert rep["decode_context"] == 1000
    assert rep["decode_per_token"] == 2 * (12 * 12 * 768**2 + 50257 * 768) + 4 * 12 * 768 * 1001


@pytest.mark.parametrize("model", ["gpt2", "mistral-7b", "mixtral-8x7b", "qwen2-0.5b"])
def test_prefill_plus_one_decode_step_is_prefill_of_one_more_token(model):
    """With the exact causal count, prefill(c + 1) = prefill(c) + decode at context c (for a
    sliding-window model while the context still fits the window: W >= c + 1)."""
    exact = flops("flops.forward", model, causal="exact")
    decode = flops("flops.decode_per_token", model)  # s = context length here
    W = sympy.Symbol("W", positive=True, integer=True)
    decode = decode.xreplace({W: s + 1})  # Min(s + 1, W) = s + 1 inside the window
    c = sympy.Symbol("c", positive=True, integer=True)
    step = exact.xreplace({s: c + 1}) - exact.xreplace({s: c})
    assert sympy.expand(step - decode.xreplace({s: c})) == 0


def test_decode_attends_to_at_most_w_keys_in_sliding_layers():
    """Past the window a sliding layer's decode step no longer grows with the context: the
    cache holds the last W - 1 tokens, so the new token meets at most W keys."""
    from symcalc.inputs import presets
    from symcalc.fast.quick import evaluate
    from symcalc.algebra.options import Options

    spec = presets.load("mistral-7b").spec
    at = lambda c: evaluate("flops.decode_per_token", spec, Options(context=c))
    W_ = spec.W
    assert at(W_ + 100) == at(W_ - 1) == at(10 * W_)
    assert at(W_ - 1) - at(W_ - 2) == 4 * 32 * 4096 * 1  # one more key: scores + context
    llama = presets.load("llama-2-7b").spec
    grow = lambda c: evaluate("flops.decode_per_token", llama, Options(context=c))
    assert grow(5000) - grow(4999) == 4 * 32 * 4096


@settings(max_examples=30, deadline=None)
@given(seq=st.integers(1, 4096), batch=st.integers(1, 64))
def test_causal_pairs_property(seq, batch):
    """Numbers at random workloads: full - exact = (s^2 - s)/2 score pairs x 4 n_h d_h L b."""
    full = num(flops("flops.forward", "llama-2-7b"), "llama-2-7b", s=seq, b=batch)
    exact = num(flops("flops.forward", "llama-2-7b", causal="exact"), "llama-2-7b", s=seq, b=batch)
    assert full - exact == 4 * 32 * 32 * 128 * batch * (seq * seq - seq) // 2


def test_mistral_report_names_every_convention(capsys):
    """Issue 3's done-when: forward, training, weights, KV cache, activations and training
    memory, each with its convention named."""
    assert main(["report", "mistral-7b", "--batch", "1", "--seq-len", "4096"]) == 0
    out = capsys.readouterr().out
    L_, d_, s_, V_, ff = 32, 4096, 4096, 32000, 14336
    fwd = L_ * (2 * s_ * (2 * d_ * 4096 + 2 * d_ * 1024) + 4 * s_**2 * 4096 + 6 * s_ * d_ * ff) + 2 * s_ * d_ * V_
    assert fwd == 67_044_439_490_560
    expected = {
        "forward, matmul": (f"{fwd:,}", "2 FLOPs per multiply-accumulate"),
        "training step": (f"{3 * fwd:,}", "forward + backward (2x forward)"),
        "weights": (f"{2 * 7_241_732_096:,}", "bf16"),
        "KV cache": (f"{4096 * 131_072:,}", "window W=4096"),
        # the paper model term by term with Mistral's gated FFN, GQA and no dropout (the
        # GPT-shaped case, where it is L (34 s d + 5 n_h s^2), is checked below)
        "activations": (f"{56_371_445_760:,}", "Korthikanti"),
        "training state": (f"{16 * 7_241_732_096:,}", "ZeRO stage 0"),
    }
    lines = out.splitlines()
    assert main(["report", "mistral-7b", "--batch", "1", "--seq-len", "4096", "--set", "ffn=plain",
                 "--set", "n_kv=32", "--set", "d_ff=16384", "--set", "dropout_attn=true",
                 "--set", "dropout_hidden=true", "--json"]) == 0
    gpt_shaped = json.loads(capsys.readouterr().out)["memory"]["activations_bytes"]
    assert gpt_shaped == L_ * (34 * s_ * d_ + 5 * 32 * s_**2)
    for label, (value, convention) in expected.items():
        line = next((x for x in lines if x.strip().startswith(label) and value in x), None)
        assert line is not None, (label, value, out)
        assert convention in line or convention in lines[lines.index(line) + 1], (label, line)
    assert "GB" in out and "GiB" in out

"""Closed forms: Kaplan's 12 L d^2, Narayanan's GPT-2 shape, exact substitution, dominant
terms, and FLOP / KV-cache closed forms against hand-written sympy."""
from __future__ import annotations

import pytest
import sympy

from symcalc.inputs import presets
from symcalc.algebra import quantities as q
from symcalc.algebra.closed_form import closed_form
from symcalc.algebra.options import Options, workload_values
from conftest import sympy_number
from symcalc.algebra.spec import size_values
from symcalc.algebra.symbols import SIZES

S = {name: info.symbol for name, info in SIZES.items()}
L, L_dec, d, d_ff, d_h, n_h, n_kv = (S[n] for n in ("L", "L_dec", "d", "d_ff", "d_h", "n_h", "n_kv"))
V, P, E, k, s, s_dec, b, W = (S[n] for n in ("V", "P", "E", "k", "s", "s_dec", "b", "W"))
KAPLAN = 12 * L * d**2
KAPLAN_MODELS = ["gpt2", "bert-base", "llama-2-7b", "mistral-7b", "qwen2-0.5b"]


def parse(text: str) -> sympy.Expr:
    """sympy's str of an expression back into the canonical (positive integer) symbols."""
    return sympy.parse_expr(text, local_dict=dict(S, Min=sympy.Min))


def same(a, b) -> bool:
    return sympy.expand(a - b) == 0


@pytest.mark.parametrize("name", KAPLAN_MODELS + ["mixtral-8x7b", "gpt2-xl", "llama-3-8b"])
def test_kaplan_api(name):
    cf = closed_form(presets.load(name).spec, "params.total", "kaplan")
    assert str(cf.expression) == "12*L*d**2"
    assert same(cf.expression, KAPLAN)


@pytest.mark.parametrize("name", KAPLAN_MODELS)
def test_kaplan_cli(name, cli):
    out = cli("closed-form", name, "--assume", "kaplan", "--json").json()
    assert out["expression"] == "12*L*d**2"
    assert same(parse(out["expression"]), KAPLAN)
    # Kaplan's form counts non-embedding parameters: --json says so (issue 11)
    assert out["assumption"] == "kaplan" and out["quantity"] == "params.non_embedding"
    assert out["latex"] == "12 \\cdot L \\cdot d^{2}"


def test_kaplan_at_gpt2_sizes_is_the_seed_figure():
    cf = closed_form(presets.load("gpt2").spec, assume="kaplan")
    assert q.value(cf.expression, {"L": 12, "d": 768}) == 84_934_656
    assert presets.load("seed-kaplan-12x768").expected_total == 84_934_656


def test_kaplan_encoder_decoder_counts_cross_attention():
    """T5 under Kaplan: encoder layers 12 d^2, decoder layers 16 d^2 (cross-attention 4 d^2)."""
    cf = closed_form(presets.load("t5-small").spec, assume="kaplan")
    assert same(cf.expression, 12 * L * d**2 + 16 * L_dec * d**2)


def test_gpt2_textbook_is_narayanan():
    cf = closed_form(presets.load("gpt2").spec, "params.total", "textbook")
    narayanan = 12 * L * d**2 + 13 * L * d + (V + P) * d + 2 * d
    assert same(cf.expression, narayanan)
    # Narayanan et al. 2021 eq. 2 with s = P, plus GPT-2's final LayerNorm (2d)
    eq2 = 12 * L * d**2 * (1 + sympy.Rational(13, 12) / d + (V + P) / (12 * L * d)) + 2 * d
    assert same(cf.expression, eq2)
    assert cf.dominant == KAPLAN


def test_gpt2_textbook_cli(cli):
    out = cli("closed-form", "gpt2", "--assume", "textbook", "--json").json()
    assert same(parse(out["expression"]), 12 * L * d**2 + 13 * L * d + (V + P) * d + 2 * d)
    assert out["dominant"] == "12*L*d**2"
    assert 0.68 < out["dominant_share"] < 0.69  # 84,934,656 / 124,439,808


@pytest.mark.parametrize("name", [p.name for p in presets.all_presets()])
def test_closed_form_substituted_is_the_exact_total(name):
    preset = presets.load(name)
    cf = closed_form(preset.spec)
    values = size_values(preset.spec)
    assert q.value(cf.expression, values) == preset.expected_total
    assert q.value(cf.expanded, values) == preset.expected_total
    assert cf.expression.free_symbols <= set(S.values())  # no switch symbols left
    expanded_terms = [q.value(t, values) for t in sympy.Add.make_args(cf.expanded)]
    if min(expanded_terms) >= 0:
        assert cf.dominant in sympy.Add.make_args(cf.expanded)
        assert q.value(cf.dominant, values) == max(expanded_terms)
    else:  # (L - L_dense)*(...) expanded has negative terms: the layer groups are ranked
        groups = [q.value(t, values) for t in sympy.Add.make_args(cf.expression)]
        assert cf.dominant in sympy.Add.make_args(cf.expression)
        assert q.value(cf.dominant, values) == max(groups)
    assert 0 < cf.dominant_share <= 1


@pytest.mark.parametrize("name", ["gpt2", "gpt2-medium", "bert-base", "bert-large"])
def test_textbook_holds_where_the_relations_hold(name):
    """GPT-2 and BERT satisfy d_h = d/n_h, n_kv = n_h, d_ff = 4d: the textbook form is exact."""
    preset = presets.load(name)
    cf = closed_form(preset.spec, assume="textbook")
    assert q.value(cf.expression, size_values(preset.spec)) == preset.expected_total


def test_mistral_dominant_term():
    cf = closed_form(presets.load("mistral-7b").spec)
    assert cf.dominant == 3 * L * d * d_ff
    assert same(cf.expression, L * (3 * d * d_ff + 2 * d * d_h * n_h + 2 * d * d_h * n_kv + 2 * d)
                + 2 * V * d + d)


@pytest.mark.parametrize("model", [(), ("gpt2",)])
def test_list_assumptions(cli, model):
    run = cli("closed-form", *model, "--list-assumptions")
    assert run.returncode == 0
    names = [line.split()[0] for line in run.stdout.splitlines() if line.strip()]
    assert {"kaplan", "textbook", "none"} <= set(names)


def test_closed_form_without_model_is_one_error_line(cli):
    run = cli("closed-form")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "MODEL" in run.stderr


def mistral_forward_matmul():
    """By hand: Q and O 2 b s d n_h d_h each, K and V 2 b s d n_kv d_h each, scores and the
    weighted sum 2 b s^2 n_h d_h each, gated FFN 3 x 2 b s d d_ff; the head 2 b s d V."""
    layer = (2 * 2 * b * s * d * n_h * d_h + 2 * 2 * b * s * d * n_kv * d_h
             + 2 * 2 * b * s**2 * n_h * d_h + 3 * 2 * b * s * d * d_ff)
    return L * layer + 2 * b * s * d * V


def test_forward_matmul_closed_form_mistral(cli):
    spec = presets.load("mistral-7b").spec
    cf = closed_form(spec, "flops.forward_matmul")
    assert same(cf.expression, mistral_forward_matmul())
    out = cli("closed-form", "mistral-7b", "--quantity", "flops.forward_matmul", "--json").json()
    assert same(parse(out["expression"]), mistral_forward_matmul())
    opts = Options(batch=1, seq_len=128)
    values = {**size_values(spec), **workload_values(spec, opts)}
    assert q.value(cf.expression, values) == sympy_number("flops.forward_matmul", spec, opts)
    assert q.value(cf.expression, values) == 1_828_850_761_728  # ../shared/reference/mistral-7b


def test_forward_matmul_closed_form_mixtral():
    """Each token through k of E experts; the router d x E sees every token."""
    cf = closed_form(presets.load("mixtral-8x7b").spec, "flops.forward_matmul")
    moe = 2 * b * s * d * E + k * 3 * 2 * b * s * d * d_ff
    dense = mistral_forward_matmul().xreplace({d_ff: 0})
    assert same(cf.expression, dense + L * moe)


def test_forward_matmul_closed_form_t5():
    cf = closed_form(presets.load("t5-small").spec, "flops.forward_matmul")
    def attn_self(tokens):  # Q and O, K and V, scores and weighted sum
        return (2 * 2 * b * tokens * d * n_h * d_h + 2 * 2 * b * tokens * d * n_kv * d_h
                + 2 * 2 * b * tokens**2 * n_h * d_h)

    enc = attn_self(s) + 2 * 2 * b * s * d * d_ff
    # cross-attention: Q and O on the decoder tokens, K and V on the encoder's s tokens
    cross = (2 * 2 * b * s_dec * d * n_h * d_h + 2 * 2 * b * s * d * n_kv * d_h
             + 2 * 2 * b * s_dec * s * n_h * d_h)
    dec = attn_self(s_dec) + cross + 2 * 2 * b * s_dec * d * d_ff
    assert same(cf.expression, L * enc + L_dec * dec + 2 * b * s_dec * d * V)


@pytest.mark.parametrize("name,form,per_token", [
    ("mistral-7b", 2 * L * n_kv * d_h * b * 2 * sympy.Min(s, W), 131_072),
    ("llama-2-7b", 2 * L * n_kv * d_h * b * 2 * s, 524_288),
    ("t5-small", 2 * L_dec * n_kv * d_h * b * 2 * (s_dec + s), None),
    ("bert-base", sympy.Integer(0), None),
])
def test_kv_cache_closed_form(name, form, per_token, cli):
    spec = presets.load(name).spec
    cf = closed_form(spec, "memory.kv_cache_bytes")
    assert same(cf.expression, form)
    out = cli("closed-form", name, "--quantity", "memory.kv_cache_bytes", "--json").json()
    assert same(parse(out["expression"]), form)
    if per_token:
        values = {**size_values(spec), "b": 1, "s": 1, "W": spec.W or 1}
        assert q.value(cf.expression, values) == per_token


def test_kv_cache_int8_halves():
    spec = presets.load("llama-2-7b").spec
    cf = closed_form(spec, "memory.kv_cache_bytes", opts=Options(kv_dtype="int8"))
    assert same(cf.expression, 2 * L * n_kv * d_h * b * s)

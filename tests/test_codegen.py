"""The generated evaluators cannot drift from the sympy expressions:

* symcalc/_generated.py equals a fresh generation (run ``python -m symcalc.fast.codegen`` after
  changing any expression);
* each general expression, with a spec's and options' values substituted, is symbolically
  equal to ``quantities.expression`` (so the generator composes the same functions);
* the generated code agrees with sympy substitution on every preset and on
  hypothesis-drawn models and options, for every quantity.
"""
from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symcalc.algebra import accounting, quantities as q
from symcalc.fast import codegen, quick
from symcalc.inputs import presets
from symcalc.algebra.options import Options, convention_switches, workload_values
from symcalc.algebra.spec import make_spec, size_values, switch_values
from symcalc.algebra.symbols import ALL

PRESETS = presets.names()

OPTION_SETS = [
    Options(),
    Options(batch=3, seq_len=100, dtype="int4", kv_dtype="fp32", causal="exact", macs=True,
            nonmatmul=True, recompute="full", optimizer="sgd-momentum", zero=2, dp=7, context=333),
    Options(batch=2, seq_len=513, causal="half", recompute="selective", zero=3, dp=64, tp=2,
            sequence_parallel=True, dtype="bits3", macs=True),
    Options(nonmatmul=True, tp=4, zero=1, dp=3, kv_dtype="bits5", seq_len=77, dec_seq_len=13,
            optimizer="adam-fp32"),
]


def test_generated_file_is_fresh():
    assert codegen.TARGET.read_text(encoding="utf-8") == codegen.generate(), \
        "symcalc/_generated.py is stale: run `python -m symcalc.fast.codegen`"


def _substitution(spec, opts) -> dict:
    values = {**switch_values(spec), **convention_switches(spec, opts)}
    fixed = {ALL[n].symbol: sympy.Integer(x) for n, x in values.items()}
    fixed.update(accounting.structure(spec))
    opt = quick.option_values(spec, opts)
    fixed.update({codegen.OPTIONS[n]: sympy.Integer(x) for n, x in opt.items()})
    return fixed


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("opts", OPTION_SETS[:2], ids=["default", "options"])
def test_general_expressions_equal_quantities(name, opts):
    spec = presets.load(name).spec
    fixed = _substitution(spec, opts)
    for quantity in q.QUANTITIES:
        general = codegen.general(quantity, spec.shape).xreplace(fixed)
        assert sympy.expand(general - q.expression(quantity, spec, opts)) == 0, quantity


def _sympy_value(quantity, spec, opts) -> int:
    at = {**size_values(spec), **workload_values(spec, opts)}
    if quantity == "flops.decode_per_token":
        at["s"] = opts.context or at["s"]
    return q.whole(q.value(q.expression(quantity, spec, opts), at))


def _check_all(spec, opts):
    for quantity in q.QUANTITIES:
        assert quick.evaluate(quantity, spec, opts) == _sympy_value(quantity, spec, opts), quantity


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("opts", OPTION_SETS, ids=["default", "a", "b", "c"])
def test_evaluators_equal_sympy_on_presets(name, opts):
    spec = presets.load(name).spec
    if opts.tp > 1 and (spec.n_h % opts.tp or spec.n_kv % opts.tp and opts.tp % spec.n_kv):
        opts = opts.with_(tp=1)
    _check_all(spec, opts)


@st.composite
def models(draw):
    family = draw(st.sampled_from(["encoder", "decoder", "encoder-decoder"]))
    n_kv = draw(st.integers(1, 4))
    n_h = n_kv * draw(st.integers(1, 4))
    explicit_dh = draw(st.booleans())
    d = n_h * draw(st.integers(1, 64)) if not explicit_dh else draw(st.integers(1, 300))
    fields = dict(name="drawn", family=family, L=draw(st.integers(1, 50)), d=d, n_h=n_h,
                  n_kv=n_kv, d_ff=draw(st.integers(1, 5000)), V=draw(st.integers(1, 10**6)),
                  attention_bias=draw(st.sampled_from(["none", "all", "qkv", "o", "q,v"])),
                  attention_output=draw(st.booleans()),
                  ffn=draw(st.sampled_from(["plain", "gated"])), ffn_bias=draw(st.booleans()),
                  norm=draw(st.sampled_from(["layernorm", "layernorm_nobias", "rmsnorm", "none"])),
                  final_norm=draw(st.booleans()), embedding_norm=draw(st.booleans()),
                  head=draw(st.sampled_from(["none", "tied", "untied"])),
                  pooler=draw(st.booleans()), mlm_head=draw(st.booleans()))
    if explicit_dh:
        fields["d_h"] = draw(st.integers(1, 200))
    fields["head_bias"] = fields["head"] != "none" and draw(st.booleans())
    position = draw(st.sampled_from(["learned", "rotary", "relative", "none"]))
    fields["position"] = position
    if position == "learned":
        fields["P"] = draw(st.integers(1, 5000))
    if position == "relative":
        fields["R"] = draw(st.integers(1, 64))
    if draw(st.booleans()):
        fields["T"] = draw(st.integers(1, 4))
    if family == "encoder-decoder":
        fields["L_dec"] = draw(st.integers(1, 50))
    if draw(st.booleans()):
        fields["E"] = draw(st.integers(1, 16))
        fields["k"] = draw(st.integers(1, fields["E"]))
    if family == "decoder" and draw(st.booleans()):
        fields["W"] = draw(st.integers(1, 9000))
    return make_spec(**fields)


@st.composite
def workloads(draw, spec):
    tp = draw(st.sampled_from([t for t in (1, 2, 4) if spec.n_h % t == 0
                               and not (spec.n_kv % t and t % spec.n_kv)]))
    return Options(
        batch=draw(st.integers(1, 64)), seq_len=draw(st.none() | st.integers(1, 10**5)),
        dec_seq_len=draw(st.none() | st.integers(1, 4096)),
        dtype=draw(st.sampled_from(["fp32", "bf16", "int8", "int4", "bits3", "bits12"])),
        kv_dtype=draw(st.sampled_from(["fp16", "fp8", "int4", "bits5"])),
        causal=draw(st.sampled_from(["full", "half", "exact"])), macs=draw(st.booleans()),
        nonmatmul=draw(st.booleans()), recompute=draw(st.sampled_from(["none", "selective", "full"])),
        optimizer=draw(st.sampled_from(["adam-mixed", "adam-fp32", "sgd-momentum"])),
        zero=draw(st.integers(0, 3)), dp=draw(st.integers(1, 1024)), tp=tp,
        sequence_parallel=draw(st.booleans()), context=draw(st.none() | st.integers(1, 10**5)))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_evaluators_equal_sympy_on_drawn_models(data):
    spec = data.draw(models())
    _check_all(spec, data.draw(workloads(spec)))


def test_bound_is_an_upper_bound_of_the_value():
    spec = presets.load("mixtral-8x7b").spec
    v = quick.values(spec, Options(seq_len=32768))
    for quantity in q.QUANTITIES:
        value, bound = (f(v) for f in quick.evaluator(quantity, spec.shape))
        assert 0 <= value <= bound


def test_min_helper_is_min_on_ints():
    from symcalc.fast._generated import _min

    assert [_min(a, b) for a, b in [(1, 2), (2, 1), (3, 3), (10**30, 5)]] == [1, 1, 3, 5]

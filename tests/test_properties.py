"""Invariants over hypothesis-drawn architectures (no transformers): GQA/MHA, linearity in L,
tied against untied heads, MoE against dense, parents as sums, and the sympy numbers against
an independent plain-Python count.

The invariants read the quick path (symcalc.fast.quick, the term table), as the command line
does; the sympy report is held to an independent count and to its closed forms here, and to the
quick path on every preset and family config in tests/test_terms.py."""
from __future__ import annotations

import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symcalc.algebra import quantities as q
from symcalc.algebra.closed_form import closed_form
from symcalc.fast.quick import quick_report
from symcalc.algebra.options import Options
from conftest import sympy_number
from symcalc.algebra.spec import Spec, make_spec, size_values
from symcalc.records import replace

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
OPTS = Options(batch=2, seq_len=5)


@st.composite
def specs(draw, family=None, moe=None, mixable=False) -> Spec:
    """A drawn spec; ``moe=True`` or ``mixable`` (MoE may be added to it) keep to the stacks
    that can have experts (spec.toml refuses them in an encoder-decoder)."""
    stacks = ["decoder", "encoder"] if moe or mixable else ["decoder", "encoder", "encoder-decoder"]
    family = family or draw(st.sampled_from(stacks))
    n_kv = draw(st.integers(1, 4))
    n_h = n_kv * draw(st.integers(1, 4))
    d_h = draw(st.integers(1, 12))
    explicit_dh = draw(st.booleans())
    d = draw(st.integers(2, 64)) if explicit_dh else n_h * d_h
    # (no mixture of experts in an encoder-decoder stack: spec.toml refuses it)
    use_moe = (draw(st.booleans()) if moe is None else moe) and family != "encoder-decoder"
    E = draw(st.integers(1, 6)) if use_moe else None
    fields = dict(
        name="drawn", family=family, L=draw(st.integers(1, 6)), d=d, n_h=n_h, n_kv=n_kv,
        d_h=d_h if explicit_dh else None, d_ff=draw(st.integers(1, 80)),
        V=draw(st.integers(2, 300)),
        attention_bias=draw(st.sampled_from(["none", "all", "qkv", "o", "q,v"])),
        attention_output=draw(st.booleans()),
        ffn=draw(st.sampled_from(["plain", "gated"])), ffn_bias=draw(st.booleans()),
        norm=draw(st.sampled_from(["layernorm", "layernorm_nobias", "rmsnorm", "none"])),
        final_norm=draw(st.booleans()), embedding_norm=draw(st.booleans()),
        position=draw(st.sampled_from(["none", "rotary", "learned", "relative"])),
        head=draw(st.sampled_from(["none", "tied", "untied"])), head_bias=False,
        E=E, k=draw(st.integers(1, E)) if E else None,
        expert_bias=draw(st.booleans()) if E else False,
        T=draw(st.one_of(st.none(), st.integers(1, 4))),
    )
    if fields["position"] == "learned":
        fields["P"] = draw(st.integers(1, 64))
    if fields["position"] == "relative":
        fields["R"] = draw(st.integers(1, 16))
    if fields["head"] != "none":
        fields["head_bias"] = draw(st.booleans())
    if fields["head"] != "tied":
        fields["token_embedding"] = draw(st.booleans())
    fields["pooler"] = draw(st.booleans())
    fields["mlm_head"] = draw(st.booleans())
    if family == "encoder-decoder":
        fields["L_dec"] = draw(st.integers(1, 6))
    return make_spec(**fields)


def total(spec: Spec) -> int:
    return quick_report(spec, OPTS)["params"]["total"]


def matmul(spec: Spec, opts: Options = OPTS) -> int:
    return quick_report(spec, opts)["flops"]["forward_matmul"]


def plain_params(sp: Spec) -> int:
    """An independent count in plain Python (no sympy, no symcalc components)."""
    bias = sp.biased_projections
    qo, kv = sp.n_h * sp.d_h, sp.n_kv * sp.d_h
    d_in = sp.d
    attn = d_in * qo + 2 * d_in * kv + ("q" in bias) * qo + ("k" in bias) * kv + ("v" in bias) * kv
    if sp.attention_output:
        attn += qo * sp.d + ("o" in bias) * sp.d
    mats = 3 if sp.ffn == "gated" else 2
    biased = sp.expert_bias if sp.E else sp.ffn_bias  # routed experts: expert_bias only
    expert = mats * sp.d * sp.d_ff + biased * ((mats - 1) * sp.d_ff + sp.d)
    ffn = (sp.E or 1) * expert + (sp.d * sp.E if sp.E else 0)
    norm = {"layernorm": 2 * sp.d, "layernorm_nobias": sp.d, "rmsnorm": sp.d, "none": 0}[sp.norm]
    rel = sp.R * sp.n_h if sp.position == "relative" else 0
    stack = lambda layers, n_attn: layers * (n_attn * attn + (n_attn + 1) * norm + ffn) + rel \
        + sp.final_norm * norm
    # an encoder-decoder's encoder and decoder each hold a position table and an embedding
    # norm (BART's layout; T5 has neither), and untied BART-shaped models a token table each
    # beside (or instead of) the shared one
    stacks = 2 if sp.family == "encoder-decoder" else 1
    tables = sp.shared_token_table + 2 * sp.stack_token_tables if stacks == 2 else 1
    out = sp.token_embedding * tables * sp.V * sp.d \
        + stacks * (sp.P * sp.d if sp.position == "learned" else 0) + (sp.T or 0) * sp.d
    out += stacks * sp.embedding_norm * norm
    if sp.family == "encoder-decoder":
        out += stack(sp.L, 1) + stack(sp.L_dec, 2)
    else:
        out += stack(sp.L, 1)
    out += sp.pooler * (sp.d * sp.d + sp.d) + sp.mlm_head * (sp.d * sp.d + sp.d + norm)
    if sp.head != "none":
        out += (sp.head == "untied") * sp.V * sp.d + sp.head_bias * sp.V
    return out


@SETTINGS
@given(specs())
def test_numbers_equal_an_independent_count(spec):
    want = plain_params(spec)
    assert sympy_number("params.total", spec, OPTS) == want  # the sympy expressions
    assert total(spec) == want  # the quick path


@SETTINGS
@given(specs())
def test_closed_form_substitution_equals_report(spec):
    values = {**size_values(spec), "b": 2, "s": 5, "s_dec": 5}
    for quantity in ("params.total", "flops.forward_matmul", "memory.kv_cache_bytes"):
        form = closed_form(spec, quantity, opts=OPTS).expression
        assert q.value(form, values) == sympy_number(quantity, spec, OPTS), quantity


@SETTINGS
@given(specs(), st.integers(1, 4))
def test_gqa_with_n_kv_equal_n_h_is_mha(spec, extra):
    mha = make_spec(**{**spec.to_dict(), "n_kv": None})  # n_kv defaults to n_h: multi-head
    gqa = replace(spec, n_kv=spec.n_h)
    assert mha.n_kv == mha.n_h
    assert total(gqa) == total(mha) and matmul(gqa) == matmul(mha)
    # fewer key/value heads save exactly the K and V projections of the missing heads
    layers = spec.L + (spec.L_dec or 0) * 2  # decoder layers hold self- and cross-attention
    kv_bias = ("k" in spec.biased_projections) + ("v" in spec.biased_projections)
    saved = layers * (spec.n_h - spec.n_kv) * spec.d_h * (2 * spec.d + kv_bias)
    assert total(mha) - total(spec) == saved


@SETTINGS
@given(specs(), st.integers(1, 5))
def test_linear_in_layers(spec, a):
    at = lambda n: replace(spec, L=n)
    for measure in (total, matmul):
        assert measure(at(2 * a)) - measure(at(a)) == measure(at(3 * a)) - measure(at(2 * a))
    expr = q.expression("params.total", spec)
    L = sympy.Symbol("L", positive=True, integer=True)
    assert sympy.degree(expr, L) <= 1


@SETTINGS
@given(specs())
def test_breakdown_parents_are_sums(spec):
    rep = quick_report(spec, OPTS)
    for flat in (rep["params"]["breakdown"], rep["flops"]["breakdown"], rep["params"]["per_layer"]):
        for path, value in flat.items():
            depth = path.count("/") + 1
            kids = [v for p, v in flat.items() if p.startswith(path + "/") and p.count("/") == depth]
            assert not kids or value == sum(kids), path


@SETTINGS
@given(specs())
def test_tied_head_saves_v_times_d(spec):
    tied = replace(spec, head="tied", token_embedding=True)
    untied = replace(tied, head="untied")
    assert total(untied) - total(tied) == spec.V * spec.d
    assert matmul(untied) == matmul(tied)  # same product, only the weight is shared


@SETTINGS
@given(specs(moe=False, mixable=True))
def test_moe_with_one_expert_is_dense(spec):
    moe = make_spec(**{**spec.to_dict(), "E": 1, "k": 1, "expert_bias": spec.ffn_bias})
    layers = spec.L + (spec.L_dec or 0)
    router = layers * spec.d  # a d x 1 router per layer
    assert total(moe) - router == total(spec)
    tokens = OPTS.batch * OPTS.seq_len
    assert matmul(moe) - layers * 2 * tokens * spec.d == matmul(spec)
    values = size_values(moe)
    assert q.value(q.expression("params.active", moe), values) == total(moe)


@SETTINGS
@given(specs(moe=True))
def test_active_counts_k_of_e_experts(spec):
    """Active = total minus the E - k experts a token skips (the router stays)."""
    values = size_values(spec)
    active = q.value(q.expression("params.active", spec), values)
    bd = quick_report(spec, OPTS)["params"]["breakdown"]
    experts = sum(v for p, v in bd.items() if p.endswith("layer/moe/experts"))
    assert experts % spec.E == 0
    assert total(spec) - active == (spec.E - spec.k) * experts // spec.E
    assert sum(v for p, v in bd.items() if p.endswith("/moe/router")) == (
        spec.L + (spec.L_dec or 0)) * spec.d * spec.E

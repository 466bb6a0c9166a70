"""The components of current models (MLA, MoE beyond Mixtral, q/k norms, norms after blocks,
sinks, OPT's projections, mixed sliding-window stacks) against an independent plain-Python
count, on hypothesis-drawn decoders, and their closed forms."""
from __future__ import annotations

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symcalc.algebra import quantities as q
from symcalc.errors import SymcalcError
from symcalc.algebra.options import Options
from symcalc.fast.quick import quick_report
from conftest import sympy_number
from symcalc.algebra.spec import Spec, make_spec, size_values
from symcalc.algebra.symbols import sym

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
B, S = 2, 5
OPTS = Options(batch=B, seq_len=S)


@st.composite
def decoders(draw) -> Spec:
    n_kv = draw(st.integers(1, 3))
    n_h = n_kv * draw(st.integers(1, 3))
    L = draw(st.integers(1, 5))
    fields = dict(name="drawn", family="decoder", L=L, d=draw(st.integers(2, 40)), n_h=n_h,
                  n_kv=n_kv, d_h=draw(st.integers(1, 8)), d_ff=draw(st.integers(1, 50)),
                  V=draw(st.integers(2, 100)), position="rotary",
                  attention_bias=draw(st.sampled_from(["none", "all", "qkv", "o"])),
                  ffn=draw(st.sampled_from(["plain", "gated"])), ffn_bias=draw(st.booleans()),
                  norm=draw(st.sampled_from(["layernorm", "layernorm_nobias", "rmsnorm"])),
                  head=draw(st.sampled_from(["none", "tied", "untied"])),
                  qk_norm=draw(st.sampled_from(["none", "head", "all_heads"])),
                  qk_norm_bias=draw(st.booleans()),
                  norm_attn_in=draw(st.booleans()), norm_ffn_in=draw(st.booleans()),
                  norm_attn_out=draw(st.booleans()), norm_ffn_out=draw(st.booleans()),
                  sinks=draw(st.booleans()), embedding_norm=draw(st.booleans()))
    if draw(st.booleans()):
        fields["d_emb"] = draw(st.integers(1, 40))
    if draw(st.booleans()):
        fields.update(mla=True, r_kv=draw(st.integers(1, 16)), d_nope=draw(st.integers(1, 8)),
                      d_rope=draw(st.integers(1, 8)), d_v=draw(st.integers(1, 8)),
                      r_q=draw(st.one_of(st.none(), st.integers(1, 16))))
    if draw(st.booleans()):
        E = draw(st.integers(1, 6))
        fields.update(E=E, k=draw(st.integers(1, E)), expert_bias=draw(st.booleans()),
                      router_bias=draw(st.booleans()),
                      d_moe=draw(st.one_of(st.none(), st.integers(1, 30))),
                      L_dense=draw(st.one_of(st.none(), st.integers(0, L - 1))))
        if draw(st.booleans()):
            fields.update(E_s=draw(st.integers(1, 3)), shared_gate=draw(st.booleans()),
                          d_sh=draw(st.one_of(st.none(), st.integers(1, 30))))
    if draw(st.booleans()):
        fields.update(W=draw(st.integers(1, 8)),
                      L_local=draw(st.one_of(st.none(), st.integers(0, L))))
    if fields["qk_norm"] == "none":
        fields["qk_norm_bias"] = False
    return make_spec(**fields)


def plain_count(sp: Spec) -> tuple[int, int, int]:
    """(parameters, forward matmul FLOPs at B x S, KV-cache elements) counted directly."""
    d, T = sp.d, B * S
    bias = sp.biased_projections
    norm = {"layernorm": 2 * d, "layernorm_nobias": d, "rmsnorm": d}[sp.norm]
    if sp.mla:
        qk, dv = sp.d_nope + sp.d_rope, sp.d_v
        mats = []  # (n_in, n_out, biased)
        if sp.r_q:
            mats += [(d, sp.r_q, "q" in bias), (sp.r_q, sp.n_h * qk, False)]
        else:
            mats += [(d, sp.n_h * qk, "q" in bias)]
        mats += [(d, sp.r_kv + sp.d_rope, "k" in bias), (sp.r_kv, sp.n_h * (sp.d_nope + dv), False)]
        extra = sp.r_kv + (sp.r_q or 0)
    else:
        qk = dv = sp.d_h
        mats = [(d, sp.n_h * qk, "q" in bias), (d, sp.n_kv * qk, "k" in bias),
                (d, sp.n_kv * qk, "v" in bias)]
        extra = 0
    mats.append((sp.n_h * dv, d, "o" in bias))
    attn = sum(i * o + b * o for i, o, b in mats) + extra
    attn += (1 + sp.qk_norm_bias) * {"none": 0, "head": 2 * sp.d_h,
                                     "all_heads": (sp.n_h + sp.n_kv) * sp.d_h}[sp.qk_norm]
    attn += sp.sinks * sp.n_h
    attn_flops = sum(2 * T * i * o for i, o, _ in mats)
    attn_flops += 2 * B * S * S * sp.n_h * (qk + dv)
    norms = norm * (sp.norm_attn_in + sp.norm_ffn_in + sp.norm_attn_out + sp.norm_ffn_out)
    n_mats = 3 if sp.ffn == "gated" else 2

    def mlp(width, biased):
        return n_mats * d * width + biased * ((n_mats - 1) * width + d)

    dense = mlp(sp.d_ff, sp.ffn_bias)
    dense_flops = 2 * T * n_mats * d * sp.d_ff
    if sp.moe:
        width = sp.d_moe or sp.d_ff
        moe = sp.E * mlp(width, sp.expert_bias) + d * sp.E + sp.router_bias * sp.E
        moe_flops = 2 * T * (d * sp.E + sp.k * n_mats * d * width)
        if sp.E_s:
            sh = sp.d_sh or width
            moe += sp.E_s * mlp(sh, sp.ffn_bias) + sp.shared_gate * d
            moe_flops += 2 * T * (sp.E_s * n_mats * d * sh + sp.shared_gate * d)
        n_dense = sp.L_dense or 0
    else:
        moe = moe_flops = 0
        n_dense = sp.L
    n_moe = sp.L - n_dense
    params = sp.L * (attn + norms) + n_dense * dense + n_moe * moe + norm * sp.final_norm
    flops = sp.L * attn_flops + n_dense * dense_flops + n_moe * moe_flops
    width = sp.d_emb or d
    params += sp.V * width + norm * sp.embedding_norm
    if width != d:
        params += 2 * width * d
        flops += 2 * 2 * T * width * d
    if sp.head != "none":
        params += (sp.head == "untied") * sp.V * width
        flops += 2 * T * width * sp.V
    kv_width = sp.r_kv + sp.d_rope if sp.mla else 2 * sp.n_kv * sp.d_h
    local = sp.local_layers
    kv = B * kv_width * ((sp.L - local) * S + local * min(S, sp.W or S))
    return params, flops, kv


@SETTINGS
@given(decoders())
def test_current_components_equal_a_plain_count(spec):
    params, flops, kv = plain_count(spec)
    opts = OPTS.with_(kv_dtype="int8")
    rep = quick_report(spec, opts)
    assert rep["params"]["total"] == params == sympy_number("params.total", spec, opts)
    assert rep["flops"]["forward_matmul"] == flops == sympy_number("flops.forward_matmul", spec, opts)
    assert rep["memory"]["kv_cache_bytes"] == kv == sympy_number("memory.kv_cache_bytes", spec, opts)


@SETTINGS
@given(decoders())
def test_mla_latent_cache_is_r_kv_plus_d_rope(spec):
    if not spec.mla:
        spec = make_spec(**{**spec.to_dict(), "mla": True, "r_kv": 5, "d_nope": 3, "d_rope": 2,
                            "d_v": 4, "d_h": None})
    opts = OPTS.with_(kv_dtype="int8")
    local = spec.local_layers
    tokens = (spec.L - local) * S + local * min(S, spec.W or S)
    rep = quick_report(spec, opts)
    assert rep["memory"]["kv_cache_bytes"] == B * (spec.r_kv + spec.d_rope) * tokens
    assert rep["memory"]["kv_cache_bytes_by_convention"]["latent"] == rep["memory"]["kv_cache_bytes"]
    assert sympy_number("memory.kv_cache_bytes", spec, opts) == rep["memory"]["kv_cache_bytes"]
    expanded = quick_report(spec, opts.with_(mla_cache="expanded"))["memory"]
    assert sympy_number("memory.kv_cache_bytes", spec, opts.with_(mla_cache="expanded")) == \
        expanded["kv_cache_bytes"]
    assert expanded["kv_cache_bytes"] == B * spec.n_h * (spec.d_nope + spec.d_rope + spec.d_v) * tokens
    assert rep["memory"]["kv_cache_bytes_by_convention"]["expanded"] == expanded["kv_cache_bytes"]


def _llama_like(**extra) -> Spec:
    base = dict(name="x", family="decoder", L=4, d=64, n_h=8, d_ff=128, V=100, ffn="gated",
                norm="rmsnorm", position="rotary", head="untied")
    return make_spec(**{**base, **extra})


def test_mla_attention_closed_form():
    """DeepSeek-V2 Sec. 2.1 with a query rank: per layer d r_q + r_q n_h (d_nope + d_rope)
    + d (r_kv + d_rope) + r_kv n_h (d_nope + d_v) + n_h d_v d, plus the two latent norms."""
    spec = _llama_like(mla=True, r_q=16, r_kv=8, d_nope=4, d_rope=2, d_v=4)
    bd = q.accounting.params(spec)
    L, d, n_h = sym("L"), sym("d"), sym("n_h")
    r_q, r_kv, d_nope, d_rope, d_v = (sym(n) for n in ("r_q", "r_kv", "d_nope", "d_rope", "d_v"))
    expected = L * (d * r_q + r_q + r_q * n_h * (d_nope + d_rope) + d * (r_kv + d_rope) + r_kv
                    + r_kv * n_h * (d_nope + d_v) + n_h * d_v * d)
    assert sympy.expand(bd.value("layer/attention") - expected) == 0


def test_moe_groups_closed_form():
    """L attention layers, L_dense dense FFNs and L - L_dense MoE FFNs with shared experts."""
    spec = _llama_like(E=8, k=2, d_moe=16, E_s=2, L_dense=1)
    total = q.expression("params.total", spec)
    L, L_dense, d, d_ff, E, E_s, d_moe = (sym(n) for n in ("L", "L_dense", "d", "d_ff", "E", "E_s",
                                                          "d_moe"))
    ffn_part = L_dense * 3 * d * d_ff + (L - L_dense) * (d * E + 3 * E * d * d_moe
                                                         + 3 * E_s * d * d_moe)
    rest = sympy.expand(total - ffn_part)
    assert not rest.has(L_dense) and not rest.has(E) and not rest.has(d_moe)
    active = q.expression("params.active", spec)
    assert sympy.expand(total - active - (L - L_dense) * 3 * (E - sym("k")) * d * d_moe) == 0


def test_mixed_window_cache_closed_form():
    spec = _llama_like(n_kv=2, W=16, L_local=3)
    kv = q.expression("memory.kv_cache_bytes", spec, Options(kv_dtype="int8"))
    L, L_local, s, W, b = (sym(n) for n in ("L", "L_local", "s", "W", "b"))
    n_kv, d_h = sym("n_kv"), sym("d_h")
    expected = 2 * n_kv * d_h * b * ((L - L_local) * s + L_local * sympy.Min(s, W))
    assert sympy.expand(kv - expected) == 0


def test_dense_model_shows_no_group_symbols():
    """Dense Llama keeps its readable closed form: no L_dense, L_local or MLA sizes."""
    expr = q.expression("params.total", _llama_like())
    names = {s.name for s in expr.free_symbols}
    assert names == {"L", "d", "d_ff", "d_h", "n_h", "n_kv", "V"}


def test_size_values_of_a_plain_spec_leave_groups_empty():
    v = size_values(_llama_like())
    assert v["L_dense"] == 0 and v["L_local"] == 0


def test_rules_of_the_new_fields():
    for extra, field in [(dict(E=4, k=5), "k"), (dict(E=4, k=2, L_dense=4), "L_dense"),
                         (dict(L_dense=1), "L_dense"), (dict(mla=True, r_kv=4), "d_nope"),
                         (dict(r_kv=4), "r_kv"), (dict(L_local=2), "L_local"),
                         (dict(W=8, L_local=5), "L_local"), (dict(E=4, k=2, r_q=0), "r_q"),
                         (dict(qk_norm="both"), "qk_norm"), (dict(E=4, k=2, d_sh=3), "E_s")]:
        try:
            _llama_like(**extra)
        except SymcalcError as err:
            assert err.field == field, (extra, err)
        else:
            raise AssertionError(f"{extra} was accepted")


@SETTINGS
@given(decoders())
def test_closed_forms_of_layer_groups_equal_the_expression(spec):
    from symcalc.algebra.closed_form import closed_form

    for quantity in ("params.total", "memory.kv_cache_bytes", "flops.forward_matmul"):
        cf = closed_form(spec, quantity, opts=OPTS)
        assert sympy.expand(cf.expression - q.expression(quantity, spec, OPTS)) == 0


def test_moe_stack_closed_form_reads_by_layer_kind():
    from symcalc.algebra.closed_form import closed_form

    spec = _llama_like(E=8, k=2, d_moe=16, L_dense=1)
    expr = closed_form(spec).expression
    L, L_dense = sym("L"), sym("L_dense")
    factors = {a for term in sympy.Add.make_args(expr) for a in sympy.Mul.make_args(term)}
    assert L - L_dense in factors and L_dense in factors


def test_rules_of_the_gemma3n_fields():
    """Each Gemma 3n field refused with its own rule, in one line naming it."""
    for extra, field, says in [
            (dict(d_ple=4), "V_ple", "is required with per-layer inputs"),
            (dict(V_ple=50), "V_ple", "applies only with per-layer inputs"),
            (dict(L_kv_shared=4), "L_kv_shared", "must leave at least one attention layer"),
            (dict(L_kv_shared_local=1), "L_kv_shared_local", "needs KV-sharing layers"),
            (dict(L_kv_shared=2, L_kv_shared_local=1), "L_kv_shared_local", "needs a sliding window"),
            (dict(L_kv_shared=2, L_kv_shared_local=3, W=8, L_local=3), "L_kv_shared_local",
             "must not exceed L_kv_shared"),
            (dict(L_kv_shared=2, L_kv_shared_local=2, W=8, L_local=1), "L_kv_shared_local",
             "must not exceed the sliding layers"),
            (dict(L_kv_shared=3, W=8, L_local=3), "L_kv_shared_local", "more global sharing layers"),
            (dict(d_ff_sum=513), "d_ff_sum", "must be between"),
            (dict(d_ff_sum=130), "d_ff_sum", "must be between"),
            (dict(d_ff_sum=300, E=4, k=2), "d_ff_sum", "dense-FFN stacks")]:
        try:
            _llama_like(**extra)
        except SymcalcError as err:
            assert err.field == field and says in str(err) and "\n" not in str(err), (extra, err)
        else:
            raise AssertionError(f"{extra} was accepted")
    assert _llama_like(d_ff_sum=4 * 128).d_ff_sum is None  # uniform widths: the closed form keeps L d_ff


def test_kv_sharing_layers_hold_no_cache_and_no_key_value_projections():
    """L_kv_shared of the L layers reuse earlier keys and values: they keep no cache and have
    no k/v projections or k norm; L_kv_shared_local of them slide."""
    spec = _llama_like(n_kv=2, W=16, L_local=2, L_kv_shared=2, L_kv_shared_local=1,
                       qk_norm="head")
    kv = q.expression("memory.kv_cache_bytes", spec, Options(kv_dtype="int8"))
    L, L_local, s, W, b = (sym(n) for n in ("L", "L_local", "s", "W", "b"))
    n_kv, d_h, d = sym("n_kv"), sym("d_h"), sym("d")
    L_s, L_sl = sym("L_kv_shared"), sym("L_kv_shared_local")
    expected = 2 * n_kv * d_h * b * ((L - L_s - (L_local - L_sl)) * s + (L_local - L_sl) * sympy.Min(s, W))
    assert sympy.expand(kv - expected) == 0
    bd = q.accounting.params(spec)
    assert sympy.expand(bd.value("layer/attention/k") - (L - L_s) * d * n_kv * d_h) == 0
    assert sympy.expand(bd.value("layer/attention/k_head_norm") - (L - L_s) * d_h) == 0
    assert sympy.expand(bd.value("layer/attention/q_head_norm") - L * d_h) == 0
    # 4 layers, 2 sliding and 2 full, the last two (one of each) sharing: one full and one
    # sliding layer cache, 2 n_kv d_h = 32 int8 bytes per token each
    rep = quick_report(spec, Options(batch=1, seq_len=20, kv_dtype="int8"))
    assert rep["memory"]["kv_cache_bytes"] == 2 * 2 * 8 * (20 + 16)


@pytest.mark.parametrize("family,extra", [
    ("encoder", {}),  # MiniMax-M3's indexer (no MLA) beside an encoder's attention
    ("decoder", {"mla": True, "r_kv": 8, "d_nope": 8, "d_rope": 8, "d_v": 8}),  # DSA without r_q
])
def test_an_indexer_needs_mla_with_r_q_or_a_decoder_stack(family, extra):
    """spec.toml refuses an indexer that has nothing to read: DSA's needs MLA's low-rank
    query, MiniMax-M3's (no MLA) a decoder stack. (The rule's `or` was the language's
    null-coalescing one, so the encoder case passed.)"""
    with pytest.raises(SymcalcError, match="^n_ih: the sparse-attention indexer reads"):
        make_spec(name="x", family=family, L=2, d=64, n_h=4, d_ff=128, V=100, n_ih=2, d_ih=8,
                  **extra)
    assert make_spec(name="x", family="decoder", L=2, d=64, n_h=4, d_ff=128, V=100, n_ih=2,
                     d_ih=8, L_idx=1).n_ih == 2

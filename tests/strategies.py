"""Hypothesis strategies shared by the tests: drawn models (every switch, MoE, windows,
explicit head dims) and drawn workloads and conventions for them."""
from __future__ import annotations

from hypothesis import strategies as st

from symcalc.algebra.options import Options
from symcalc.algebra.spec import make_spec


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
    if family != "encoder-decoder" and draw(st.booleans()):  # (refused there: spec.toml)
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

"""Rendered derivations: golden files, every number parsed back equals the engine's value,
units, escaping of user text, user templates in the sandbox, Jupyter displays."""
from __future__ import annotations

import re

import pytest

from golden_files import check_golden
from symcalc.inputs import presets
from symcalc.derivations.derive import derive
from symcalc.derivations.derive_forms import derive_closed_form
from symcalc.model import model
from symcalc.algebra.options import Options
from symcalc.render.escape import latex_text, markdown_text
from symcalc.render.latex import derivation_latex
from symcalc.render.markdown import derivation_markdown
from symcalc.render.view import Units
from symcalc.report import report

GOLDEN_CASES = [
    ("mistral-7b", "params.total", "md"), ("mistral-7b", "params.total", "tex"),
    ("gpt2", "flops.forward_matmul", "md"), ("t5-small", "params.total", "tex"),
    ("mixtral-8x7b", "params.active", "md"), ("llama-2-7b", "memory.kv_cache_bytes", "tex"),
    # the components of current models: MLA with dense and MoE layer groups, a mixed
    # sliding-window cache, biased experts and sinks, OPT's projections
    ("deepseek-v2-lite", "params.total", "md"), ("deepseek-v3", "memory.kv_cache_bytes", "tex"),
    ("gemma-2-9b", "memory.kv_cache_bytes", "md"), ("gpt-oss-20b", "params.active", "md"),
    ("deepseek-v3", "flops.decode_per_token", "md"),
]


def spec(name):
    return presets.load(name).spec


def render(d, fmt, **kw):
    return derivation_markdown(d, **kw) if fmt == "md" else derivation_latex(d, **kw)


@pytest.mark.parametrize("name,quantity,fmt", GOLDEN_CASES)
def test_golden(name, quantity, fmt):
    text = render(derive(spec(name), quantity), fmt)
    check_golden(f"derive-{name}-{quantity}.{fmt}", text)


GROUPED = re.compile(r"(?<![\d.])\d{1,3}(?:(?:\{,\}|,)\d{3})+(?![\d.])|(?<![\d.,}])\d+(?![\d.,{])")


def numbers_in(text: str) -> set[int]:
    """Every integer written in the text (thousands grouped with ',' or '{,}')."""
    text = re.sub(r"\\mathrm\{[^}]*\}|\^\{\d+\}|\[\d+\]|\d+\.\d+", " ", text)
    return {int(m.replace("{,}", "").replace(",", "")) for m in GROUPED.findall(text)}


def engine_numbers(name: str, quantity: str) -> set[int]:
    """What the engine says, independently of the derivation: sizes, breakdown, per layer."""
    sp = spec(name)
    rep = report(sp)
    out = set(sp.sizes().values()) | {rep["params"]["total"]}
    if quantity.startswith("params"):
        out |= set(rep["params"]["breakdown"].values()) | set(rep["params"]["per_layer"].values())
    else:
        bd = rep["flops"]["breakdown"]
        out |= set(bd.values()) | {v // sp.L for v in bd.values()} | {rep["flops"]["forward_matmul"]}
        out |= {rep["flops"]["seq_len"], rep["flops"]["batch"]}
    return out


@pytest.mark.parametrize("name", ["mistral-7b", "bert-base", "gpt2", "llama-3-8b", "qwen2-0.5b"])
@pytest.mark.parametrize("quantity", ["params.total", "flops.forward_matmul"])
@pytest.mark.parametrize("fmt", ["md", "tex"])
def test_every_rendered_number_is_the_engines(name, quantity, fmt):
    text = render(derive(spec(name), quantity), fmt)
    body = text.split("References")[0].replace(name, " ")
    found = numbers_in(body)
    allowed = engine_numbers(name, quantity) | {1, 2, 3, 4, 6}  # small coefficients
    if quantity == "params.total" and spec(name).head == "tied":
        allowed.add(0)  # the tied head's own line: it adds 0
    # the per-layer sums and the sum over layers are parents in the engine's breakdown
    extra = found - allowed
    assert not extra, f"numbers not from the engine: {sorted(extra)[:10]}"
    total = report(spec(name))["params" if quantity.startswith("params") else "flops"]
    value = total["total"] if quantity.startswith("params") else total["forward_matmul"]
    assert value in found


def test_final_values_of_each_line():
    """The last number of each display line is the value of that component."""
    sp = spec("mistral-7b")
    text = derivation_markdown(derive(sp))
    per_layer = report(sp)["params"]["per_layer"]
    lines = {m.group(1): m.group(2) for m in re.finditer(
        r"\$\$ N_\{\\mathrm\{([a-z_\\,]+)\}\} = .* = ([\d{},]+) \$\$", text)}
    assert int(lines["attention,k"].replace("{,}", "")) == per_layer["attention/k"] == 4_194_304
    assert int(lines["ffn,gate"].replace("{,}", "")) == per_layer["ffn/gate"]
    assert int(lines["layer"].replace("{,}", "")) == per_layer["total"] == 218_112_000


def test_textbook_line():
    tex = derivation_latex(derive_closed_form(spec("seed-kaplan-12x768"), "kaplan"))
    assert r"12 \cdot L \cdot d^{2} = 12 \cdot 12 \cdot 768^{2} = 84{,}934{,}656" in tex
    md = derivation_markdown(derive(spec("mistral-7b")))
    assert r"d \cdot d_h \cdot n_h = 4096 \cdot 128 \cdot 32 = 16{,}777{,}216" in md


def test_units():
    est = spec("seed-estimator-12x768")
    body = derivation_markdown(derive(est, "params.non_embedding"), Units(params="yi"))
    emb = derivation_markdown(derive(est, "params.embedding"), Units(params="yi"))
    assert "0.849 亿" in body and "84,934,656" in body
    assert "0.384 亿" in emb and "38,400,000" in emb
    # 亿 itself in LaTeX too: the document is then set by xelatex with a CJK font
    assert "0.849 亿" in derivation_latex(derive(est, "params.non_embedding"),
                                         units=Units(params="yi"))
    flops = derive(spec("seed-layer-calculator-bert-base"), "flops.forward_matmul", Options(seq_len=512))
    assert "96.64 GFLOPs" in derivation_markdown(flops, Units(flops="G"))
    assert "0.10 TFLOPs" in derivation_markdown(flops, Units(flops="T"))
    w = derivation_markdown(derive(spec("seed-decoder-calculator-default"), "memory.weights_bytes"))
    assert "14,483,464,192 bytes" in w and "14.48 GB" in w and "13.49 GiB" in w


INJECTIONS = [r"\input{/etc/passwd}", r"\write18{touch /tmp/symcalc-pwned}", "a$b&c#d^e_f%g~h{i}"]


@pytest.mark.parametrize("text", INJECTIONS)
def test_latex_escaping(text):
    out = latex_text(text)
    assert "\\input{" not in out and "\\write18{" not in out
    bare = re.sub(r"\\text[a-z]+\{\}", "", out)
    for ch in "$&#_%{}^~":
        assert ch not in bare.replace("\\" + ch, ""), ch
    assert latex_text("Müller") == r'M{\"u}ller'
    assert latex_text("亿") == "亿"  # for xelatex (symcalc.render.fonts), never "[U+4EBF]"


def test_markdown_escaping():
    assert markdown_text("<script>*x*</script>") == "&lt;script&gt;\\*x\\*&lt;/script&gt;"


@pytest.mark.parametrize("text", INJECTIONS)
def test_injected_model_name_is_text(cli, text):
    res = cli("derive", "gpt2", "--set", f"name={text}", "--format", "tex", "--standalone")
    assert res.returncode == 0, res.stderr
    assert "\\input{" not in res.stdout and "\\write18" not in res.stdout.replace(
        "\\textbackslash{}write18", "")
    assert latex_text(text) in res.stdout


def test_user_template_is_sandboxed(cli, tmp_path):
    bad = tmp_path / "bad.md.j2"
    bad.write_text("{{ v.__class__.__mro__[1].__subclasses__() }}", encoding="utf-8")
    res = cli("derive", "gpt2", "--template", str(bad))
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and f"{bad}:1: not allowed" in res.stderr
    good = tmp_path / "good.md.j2"
    good.write_text("{{ v.title }}: {{ v.sections[-1].value }}\n", encoding="utf-8")
    res = cli("derive", "gpt2", "--template", str(good))
    assert res.stdout == "Parameters of gpt2: 124,439,808\n"


def test_standalone_needs_tex(cli):
    res = cli("derive", "gpt2", "--standalone")
    assert res.returncode == 2 and "--standalone" in res.stderr


def test_jupyter_displays():
    m = model("mistral-7b")
    assert "7,241,732,096" in m._repr_markdown_()
    assert "7{,}241{,}732{,}096" in m._repr_latex_()
    d = m.derive("params.total")
    assert d._repr_markdown_() == derivation_markdown(d)
    latex = d._repr_latex_()
    assert latex.startswith("$$\\begin{aligned}") and "7{,}241{,}732{,}096" in latex


@pytest.mark.parametrize("args,field", [
    (("--quantity", "params.bogus"), "quantity"),
    (("--format", "docx"), "--format"),
    (("--against", "no-such-model"), "MODEL"),
    (("--form", "no-such-form"), "--form"),
    (("--assume", "nonsense"), "--assume"),
    (("--unit", "furlongs"), "--unit"),
])
def test_bad_derive_input(cli, args, field):
    res = cli("derive", "gpt2", *args)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert field in res.stderr


from hypothesis import given, settings, strategies as st  # noqa: E402

from symcalc.algebra.spec import make_spec  # noqa: E402


@st.composite
def small_specs(draw):
    n_h = draw(st.integers(1, 8))
    n_kv = draw(st.sampled_from([k for k in range(1, n_h + 1) if n_h % k == 0]))
    d_h = draw(st.integers(1, 24))
    moe = draw(st.booleans())
    E = draw(st.integers(2, 8)) if moe else None
    position = draw(st.sampled_from(["learned", "rotary", "none"]))
    return make_spec(
        name="h", family=draw(st.sampled_from(["decoder", "encoder"])), L=draw(st.integers(1, 6)),
        d=draw(st.integers(1, 200)), n_h=n_h, n_kv=n_kv, d_h=d_h, d_ff=draw(st.integers(1, 300)),
        V=draw(st.integers(1, 5000)), E=E, k=draw(st.integers(1, E)) if moe else None,
        P=draw(st.integers(1, 600)) if position == "learned" else None, position=position,
        ffn=draw(st.sampled_from(["plain", "gated"])), ffn_bias=draw(st.booleans()),
        attention_bias=draw(st.sampled_from(["none", "all", "qkv", "o"])),
        norm=draw(st.sampled_from(["layernorm", "layernorm_nobias", "rmsnorm", "none"])),
        head=draw(st.sampled_from(["tied", "untied", "none"])))


@settings(max_examples=40, deadline=None)
@given(small_specs(), st.sampled_from(["md", "tex"]))
def test_rendered_numbers_equal_engine_on_random_models(sp, fmt):
    rep = report(sp)["params"]
    text = render(derive(sp, "params.total"), fmt).split("References")[0]
    found = numbers_in(text)
    allowed = (set(sp.sizes().values()) | set(rep["breakdown"].values())
               | set(rep["per_layer"].values()) | {rep["total"], 1, 2, 3})
    if sp.head == "tied" and sp.token_embedding:
        allowed.add(0)  # the tied head's own line: it adds 0
    assert found <= allowed, sorted(found - allowed)[:10]
    assert rep["total"] in found

"""What derivations and handouts teach: the right comparison for Kaplan's form, a breakdown
table that reconciles with the derivation, visible factors, the source each component of
each family comes from, the tied head said, readable headings, and readable reprs."""
from __future__ import annotations

import re

import pytest

from symcalc.derivations import derivation as dv
from symcalc.derivations.derive import derive
from symcalc.derivations.derive_forms import derive_closed_form
from symcalc.derivations.handout_data import handout
from symcalc.inputs import presets
from symcalc.model import Model
from symcalc.render.escape import latex_text
from symcalc.render.latex import derivation_latex
from symcalc.render.markdown import derivation_markdown


def spec(name):
    return presets.load(name).spec


def formula_sources(d) -> dict[str, str]:
    return {s.path: s.source for s in d.steps() if isinstance(s, dv.Formula)}


# -- Kaplan: non-embedding against non-embedding ---------------------------------------------
def test_kaplan_gpt2_compares_non_embedding():
    d = derive_closed_form(spec("gpt2"), "kaplan")
    assert d.meta["exact"] == 85_056_000  # exact non-embedding
    assert d.meta["approx"] == 12 * 12 * 768**2 == 84_934_656
    assert d.meta["correction"] == 121_344  # not 39.51 M: embeddings are not a "correction"
    assert d.meta["embedding"] == 39_383_808 and d.meta["total"] == 124_439_808
    assert f"{float(100 * d.meta['share']):.2f}" == "0.14"
    md = derivation_markdown(d)
    assert "Embeddings and output head, apart" in md and "39{,}383{,}808" in md
    assert "0.14 % of the exact non-embedding count" in md


def test_kaplan_says_when_it_does_not_fit():
    assert "mixture of experts" in derive_closed_form(spec("mixtral-8x7b"), "kaplan").meta["misfit"]
    assert not derive_closed_form(spec("gpt2"), "kaplan").meta["misfit"]
    md = derivation_markdown(derive_closed_form(spec("mixtral-8x7b"), "kaplan"))
    assert "does not fit mixtral-8x7b" in md


def test_closed_form_cli_kaplan(cli):
    out = cli("closed-form", "gpt2", "--assume", "kaplan")
    assert out.returncode == 0, out.stderr
    assert "100.0 %" not in out.stdout and "params.total" not in out.stdout
    assert "exact non-embedding 85,056,000; left out 121,344 (0.14%)" in out.stdout
    assert "embeddings and head (not in the form): 39,383,808" in out.stdout
    moe = cli("closed-form", "mixtral-8x7b", "--assume", "kaplan")
    assert "do not fit mixtral-8x7b" in moe.stdout


# -- the handout's table reconciles with the derivation ----------------------------------------
def test_breakdown_norms_reconcile_with_derivation():
    sheet = handout([spec("mistral-7b")]).sheets[0]
    per_layer = sheet.params.values()["layer/norm"]
    assert per_layer == 2 * 4096
    assert sheet.categories["norms"] == 32 * per_layer + 4096  # layers' norms and the final norm
    values = sheet.params.values()
    assert sheet.categories["attention"] == 32 * values["layer/attention"]
    assert sheet.categories["FFN"] == 32 * values["layer/ffn"]
    assert sum(sheet.categories.values()) == sheet.total


# -- visible factors -----------------------------------------------------------------------
def test_kv_cache_keeps_two_and_bytes_per_value():
    tex = derivation_latex(derive(spec("llama-2-7b"), "memory.kv_cache_bytes"))
    assert r"M_{\mathrm{KV}} &= 2 \cdot L \cdot b \cdot \beta_{\mathrm{kv}} \cdot d_h" in tex
    assert "4 \\cdot L" not in tex
    from symcalc.algebra.options import Options

    int4 = derivation_latex(derive(spec("llama-2-7b"), "memory.kv_cache_bytes",
                                   Options(kv_dtype="int4")))
    assert r"2 \cdot 32 \cdot 1 \cdot \frac{1}{2} \cdot 128" in int4
    assert "bytes per token" not in int4 and "values per token" in int4


# -- sources per component and family ----------------------------------------------------------
@pytest.mark.parametrize("name, path, key", [
    ("mistral-7b", "layer/norm/attention", "zhang2019"),
    ("mistral-7b", "final_norm", "zhang2019"),
    ("gpt2", "layer/norm/attention", "ba2016"),
    ("t5-small", "encoder/layer/norm/ffn", "raffel2020"),
    ("mistral-7b", "layer/attention/k", "ainslie2023"),
    ("llama-2-7b", "layer/attention/k", "vaswani2017"),
    ("llama-2-7b", "layer/attention/v", "vaswani2017"),
    ("gpt2", "embedding/position", "radford2019"),
    ("bert-base", "embedding/position", "devlin2019"),
    ("gpt2", "head/weight", "press2017"),  # the tied head's line
])
def test_component_sources(name, path, key):
    assert formula_sources(derive(spec(name)))[path] == key


def test_untied_head_does_not_cite_tying():
    sources = formula_sources(derive(spec("mistral-7b")))
    assert sources["head/weight"] != "press2017"
    assert "press2017" not in derive(spec("llama-2-7b")).sources()


def test_tied_head_says_it_adds_zero():
    d = derive(spec("gpt2"))
    assert d.values()["head/weight"] == 0
    md = derivation_markdown(d)
    assert "tied to the token table" in md and "adds 0 parameters" in md
    assert r"N_{\mathrm{head,weight}} = 0 $$" in md  # once, not "= 0 = 0"
    assert d.result.value == 124_439_808


# -- words -----------------------------------------------------------------------------------
def test_korthikanti_caveat_for_swiglu_gqa():
    md = derivation_markdown(derive(spec("mistral-7b"), "memory.activations_bytes"))
    assert "derived for GPT-3's layers" in md and "gated" in md and "8 heads, not 32" in md
    assert "derived for GPT-3" not in derivation_markdown(derive(spec("gpt2"),
                                                                 "memory.activations_bytes"))


@pytest.mark.parametrize("quantity", ["params.total", "params.active", "flops.forward_matmul",
                                      "memory.kv_cache_bytes", "memory.weights_bytes",
                                      "flops.decode_per_token"])
def test_headings_have_no_flags_or_internal_names(quantity):
    for text in (derivation_markdown(derive(spec("mixtral-8x7b"), quantity)),
                 derivation_latex(derive(spec("mixtral-8x7b"), quantity))):
        body = text.split("References")[0]
        assert not re.search(r"--[a-z]", body), re.search(r".{30}--[a-z].{30}", body)
        for bad in ("contract convention", "(moe:", "Kv cache", "layer/", "'kaplan'"):
            assert bad not in body, bad
    kaplan = derivation_markdown(derive_closed_form(spec("gpt2"), "kaplan"))
    assert "'kaplan'" not in kaplan and "Kaplan et al.'s assumptions" in kaplan


def test_double_hyphen_is_not_a_dash_in_latex():
    assert latex_text("--quantity") == "-{}-quantity"


# -- reprs -----------------------------------------------------------------------------------
def test_derivation_repr_is_one_readable_line():
    d = Model(spec("gpt2")).derive()
    text = repr(d)
    assert len(text) < 300 and "\n" not in text
    assert "Parameters of gpt2" in text and "124,439,808 parameters" in text and "vaswani2017" in text


def test_repr_latex_keeps_labels_sources_sizes_units():
    tex = Model(spec("gpt2")).derive()._repr_latex_()
    assert tex.startswith("$$\\begin{aligned}") and tex.endswith("\\end{aligned}$$")
    assert "\\text{Parameters of gpt2}" in tex
    assert "d &= 768 && \\text{hidden size" in tex  # sizes with meanings
    assert "\\text{query projection [1]}" in tex  # labels with their source numbers
    assert "\\text{124,439,808 parameters" in tex  # the unit
    assert "\\text{[1] Vaswani et al. 2017" in tex  # the sources
    texts = re.findall(r"\\text\{([^}]*)\}", tex)
    assert texts and not any("\\" in t for t in texts)  # MathJax's \text has no escapes


def test_closed_form_kaplan_json_compares_non_embedding(cli):
    """--json says the same as the text: Kaplan's form is a non-embedding count, set beside
    the exact non-embedding count (GPT-2: 121,344 left out), never called params.total."""
    import json

    out = json.loads(cli("closed-form", "gpt2", "--assume", "kaplan", "--json").stdout)
    assert out["quantity"] == "params.non_embedding"
    assert (out["at_model_sizes"], out["exact_non_embedding"], out["left_out"]) == \
        (84_934_656, 85_056_000, 121_344)
    assert out["embedding_and_head"] == 39_383_808 and out["misfit"] is None
    moe = json.loads(cli("closed-form", "mixtral-8x7b", "--assume", "kaplan", "--json").stdout)
    assert "mixture of experts" in moe["misfit"]

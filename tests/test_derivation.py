"""Derivations as data: every value in a derivation equals the engine's, every substituted
line evaluates to the value it claims, and the modules that build them never format."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import sympy

from symcalc.derivations import derivation as dv
from symcalc.inputs import presets
from symcalc.algebra import quantities as q
from symcalc.derivations.derive import derive
from symcalc.derivations.derive_forms import derive_closed_form, derive_difference, derive_published
from symcalc.derivations.handout_data import crossover_derivation, handout
from symcalc.algebra.options import Options
# derivations (sympy) are held to the report `symcalc report` prints: the quick report from the
# term table (tests/test_quick.py holds it equal to the sympy report)
from symcalc.fast.quick import quick_report as report

PRESETS = presets.names()
SYMCALC = Path(__file__).resolve().parent.parent / "symcalc"


def spec(name):
    return presets.load(name).spec


def check_chains(d: dv.Derivation) -> None:
    """Each substituted line, evaluated, is the value the next step states."""
    steps = d.steps()
    for i, step in enumerate(steps):
        if isinstance(step, dv.Substitute):
            value = steps[i + 1]
            assert isinstance(value, dv.Evaluate) and value.path == step.path
            assert sympy.sympify(step.unevaluated.doit()) == value.value, step.path


@pytest.mark.parametrize("name", PRESETS)
def test_params_derivation_equals_report(name):
    sp = spec(name)
    d = derive(sp, "params.total")
    rep = report(sp)["params"]
    assert d.result.value == rep["total"] == presets.load(name).expected_total
    values = d.values()
    check_chains(d)
    for path, value in rep["breakdown"].items():
        if path in values:  # leaves outside the layers, and the per-component leaves
            if "layer/" in path or path.endswith("layer"):
                continue
            assert values[path] == value, path
    per_layer = rep["per_layer"]
    for path, value in values.items():
        if path.startswith("layer/"):
            assert per_layer[path[len("layer/"):]] == value, path
    if "layer" in values:
        assert values["layer"] == per_layer["total"]
    if "layers" in values:  # a hybrid stack: each kind of part times the layers holding it
        assert values["layers"] == rep["breakdown"]["layer"]
    for view, prefix in (("linear_mixer", "linear_layer"), ("ssm_mixer", "ssm_layer"),
                         ("conv_mixer", "conv_layer")):
        if prefix in values:
            assert values[prefix] == per_layer[f"{view}/total"], view
    if "global_layer" in values and not sp.kv_shared_layers:  # global layers of their own
        # attention shape: each kind's attention as its per-layer view lists it (layers that
        # share keys and values put their key/value parts in a group of their own)
        assert values["sliding_layer"] == per_layer["attention"]
        assert values["global_layer"] == per_layer["global_attention/total"]


@pytest.mark.parametrize("name", ["mistral-7b", "bert-base", "t5-small", "mixtral-8x7b", "gpt2"])
@pytest.mark.parametrize("quantity", ["flops.forward_matmul", "flops.forward", "flops.training",
                                      "memory.weights_bytes", "memory.kv_cache_bytes",
                                      "memory.training_bytes", "memory.activations_bytes",
                                      "params.active", "params.embedding", "params.non_embedding"])
def test_every_quantity_equals_report(name, quantity):
    sp = spec(name)
    opts = Options(batch=2, seq_len=256)
    d = derive(sp, quantity, opts)
    check_chains(d)
    rep = report(sp, opts)
    kind, key = quantity.split(".")
    expected = rep[kind][key]
    assert d.result.value == expected


def test_flops_options_are_derived():
    sp = spec("llama-2-7b")
    opts = Options(seq_len=512, causal="exact", macs=True, nonmatmul=True, recompute="full")
    d = derive(sp, "flops.training", opts)
    check_chains(d)
    assert d.result.value == report(sp, opts)["flops"]["training"]
    assert any("multiply-accumulates" in c for c in d.conventions)


def test_mixtral_active_uses_k_of_E():
    d = derive(spec("mixtral-8x7b"), "params.active")
    assert d.result.value == 12_879_925_248
    assert any("k of the E" in c for c in d.conventions)


def test_decode_per_token():
    sp = spec("mistral-7b")
    opts = Options(seq_len=1024, context=300)
    d = derive(sp, "flops.decode_per_token", opts)
    assert d.result.value == report(sp, opts)["flops"]["decode_per_token"]


def test_textbook_substitution():
    d = derive_closed_form(spec("seed-kaplan-12x768"), "kaplan")
    sub = next(s for s in d.steps() if isinstance(s, dv.Substitute) and s.path == "kaplan")
    assert sympy.srepr(sub.unevaluated).count("UnevaluatedExpr") == 2  # L and d
    assert d.meta["approx"] == 12 * 12 * 768**2 == 84_934_656
    assert d.meta["correction"] == 0


def test_kaplan_correction_is_exact():
    """Kaplan's 12 L d^2 counts non-embedding parameters: it is compared with the exact
    non-embedding count, and the embeddings and head are a line apart."""
    sp = spec("mistral-7b")
    d = derive_closed_form(sp, "kaplan")
    rep = report(sp)["params"]
    total, emb = rep["total"], 2 * 32000 * 4096  # token table and untied head
    assert d.meta["exact"] == total - emb == 6_979_588_096
    assert d.meta["approx"] == 12 * 32 * 4096**2
    assert d.meta["correction"] == total - emb - 12 * 32 * 4096**2 == 537_137_152
    assert d.meta["embedding"] == emb and d.meta["total"] == total
    assert d.values()["params.embedding"] == emb and d.values()["params.total"] == total
    assert not d.meta["misfit"]
    simplify = next(s for s in d.steps() if isinstance(s, dv.Simplify))
    L, dd = sympy.symbols("L d", positive=True, integer=True)
    assert sympy.expand(simplify.after - 12 * L * dd**2) == 0


def test_bert_difference_itemised():
    d = derive_difference(spec("seed-layer-calculator-bert-base"), spec("bert-base"))
    values = d.values()
    assert d.result.value == 109_482_240 - 108_805_632 == 676_608
    assert values["pooler"] == 768 * 768 + 768
    assert values["embedding/token_type"] == 2 * 768
    assert values["embedding_norm"] == 2 * 768
    assert values["layer/attention/q"] == 12 * 768  # one bias vector per layer
    assert values["layer/ffn/up"] == 12 * 3072
    assert values["seed-layer-calculator-bert-base"] == 108_805_632
    assert values["bert-base"] == 109_482_240


def test_published_seed_forms():
    sp = spec("seed-layer-calculator-bert-base")
    opts = Options(seq_len=512)
    mixed = derive_published("seed-layer-mixed", sp, opts)
    flops = derive_published("seed-layer-flops", sp, opts)
    assert mixed.result.value == 77_309_411_328
    assert flops.result.value == 96_636_764_160
    assert mixed.meta["difference"] == flops.meta["difference"] == 0
    assert flops.result.value == report(sp, opts)["flops"]["forward_matmul"]


@pytest.mark.parametrize("name", ["mistral-7b", "llama-2-7b", "gpt2", "bert-base"])
def test_crossover_is_exact(name):
    sp = spec(name)
    d, curve = crossover_derivation(sp, Options())
    star = curve.crossover
    assert curve.quadratic * star**2 == curve.linear * star
    s = sympy.Symbol("s", positive=True, integer=True)
    total = report(sp, Options(seq_len=1000))["flops"]["forward_matmul"]
    assert curve.quadratic * 1000**2 + curve.linear * 1000 + curve.constant == total
    check_chains(d)


def test_mistral_and_llama_crossovers():
    h = handout([spec("mistral-7b"), spec("llama-2-7b")])
    stars = [sh.curve.crossover for sh in h.sheets]
    assert stars == [27124, 25204]
    assert h.sheets[0].categories["attention"] < h.sheets[1].categories["attention"]  # GQA < MHA
    assert sum(h.sheets[0].categories.values()) == 7_241_732_096


def test_sources_are_known():
    from symcalc.derivations.sources import SOURCES

    for name in ("mistral-7b", "t5-small", "bert-base"):
        for key in derive(spec(name)).sources():
            assert key in SOURCES


FORMAT_FREE = ["derivations/derivation.py", "derivations/derive.py", "derivations/derive_forms.py",
               "derivations/handout_data.py"]


@pytest.mark.parametrize("module", FORMAT_FREE)
def test_builders_do_not_format(module):
    tree = ast.parse((SYMCALC / module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
            assert not any("jinja2" in n for n in names), module
        if isinstance(node, ast.Attribute):
            assert node.attr not in ("latex",), f"{module} calls .{node.attr}"
        if isinstance(node, ast.Name):
            assert node.id not in ("latex",), module


@pytest.mark.parametrize("name", ["qwen3-next-80b-a3b", "jamba-1.5-mini", "nemotron-h-8b",
                                  "lfm2-1.2b", "kimi-linear-48b-a3b", "falcon-h1-7b"])
@pytest.mark.parametrize("quantity", ["flops.forward_matmul", "flops.forward",
                                      "flops.decode_per_token", "memory.kv_cache_bytes",
                                      "memory.recurrent_state_bytes", "memory.activations_bytes",
                                      "params.active"])
def test_hybrid_quantities_equal_report(name, quantity):
    """Every quantity of a hybrid stack derives to the report's figure (the FLOPs sections by
    kind of layer, the recurrent state with its two dtypes named)."""
    sp = spec(name)
    opts = Options(batch=2, seq_len=100)
    d = derive(sp, quantity, opts)
    check_chains(d)
    kind, key = quantity.split(".")
    assert d.result.value == report(sp, opts)[kind][key]
    if quantity == "memory.recurrent_state_bytes":
        assert any("fp32" in c and "bf16" in c for c in d.conventions)
        # the bytes per value are symbols of their own, not folded into the constants
        defined = {s.symbol.name for s in d.steps() if hasattr(s, "symbol")}
        assert {"beta_kv", "beta_state"} <= defined


def test_every_symbol_has_a_latex_name_of_its_own():
    """Two symbols set alike would make different formulas read the same in a derivation."""
    from symcalc.algebra.symbols import ALL

    names: dict[str, list[str]] = {}
    for name, info in ALL.items():
        names.setdefault(info.latex, []).append(name)
    assert {latex: n for latex, n in names.items() if len(n) > 1} == {}


def test_every_part_of_every_preset_has_a_meaning():
    """Each leaf of every preset's parameter and FLOP breakdowns has a meaning (derive.MEANINGS,
    which tests/test_i18n.py holds translated): a part without one was printed as its raw path
    in the handouts, untranslated in Russian and Chinese (Apertus's xIELU scalars, BitNet's
    sub-norms, Inkling's and ZAYA's router and residual scales)."""
    from symcalc.derivations.derive import meaning

    missing = {}
    for name in PRESETS:
        rep = report(spec(name))
        for kind in ("params", "flops"):
            flat = rep[kind]["breakdown"]
            for path in flat:
                if meaning(path) == path and not any(p.startswith(path + "/") for p in flat):
                    missing.setdefault(path, name)
    assert not missing, missing

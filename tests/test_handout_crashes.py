"""Handouts of the models whose handout once ended in a traceback: MLA caches that differ by
layer kind (HY-V4's indexer keys, the MLA layers of a hybrid stack), stacks with no term in
s^2 (Mamba, RWKV, xLSTM, FNet, an attention-free hybrid) and DeBERTa's capped relative span.
Each renders, and its figures are the report's."""
from __future__ import annotations

from pathlib import Path

import pytest

from symcalc import i18n
from symcalc.algebra.options import Options
from symcalc.derivations.handout_data import handout
from symcalc.inputs.resolver import resolve
from symcalc.render.handout import handout_latex, handout_markdown
# the report as `symcalc report` gives it (tests/test_quick.py holds it equal to the sympy
# report on every preset, tests/test_terms.py on drawn models)
from symcalc.fast.quick import quick_report as report

FAMILIES = Path(__file__).resolve().parent / "families"

# one config of every family whose handout crashed (tests/families/<type>/<file>)
CRASHED = {
    "hy_v4": "causal-lm-class-defaults.json",  # indexer keys on L_idx of the L layers
    "glm_moe_dsa": "causal-lm-indexer-types-bias-tied.json",
    "kimi_linear": "causal-lm-default-layers.json",  # MLA on the L_attn layers of a hybrid
    "bailing_hybrid": "causal-lm-class-defaults.json",
    "mamba": "causal-lm-class-defaults.json",  # no s^2 term from here on
    "falcon_mamba": "tiny-bare.json",
    "rwkv": "tiny-tied.json",
    "xlstm": "causal-lm-class-defaults.json",
    "fnet": "masked-lm-class-defaults.json",
    "jamba": "tiny-tied-no-attention.json",
    "lfm2": "tiny-all-conv.json",
    "qwen3_next": "model-all-linear.json",
    "deberta": "bare-model-relative-span-capped.json",  # min(K_rel, s)
}


def spec_of(family: str, name: str | None = None):
    return resolve(str(FAMILIES / family / (name or CRASHED[family])), [])


def headline(budget) -> dict:
    """A handout budget's figures under the names of the report's JSON."""
    out = {"params.total": budget.params, "memory.weights_bytes": budget.weights_bytes,
           "memory.training_bytes": budget.state_bytes,
           "memory.activations_bytes": budget.activations_bytes,
           "memory.training_peak_bytes": budget.peak_bytes,
           "flops.forward_matmul": budget.forward_flops, "flops.training": budget.training_flops}
    if budget.kv_bytes is not None:
        out["memory.kv_cache_bytes"] = budget.kv_bytes
    if budget.active is not None:
        out["params.active"] = budget.active
    return out


def reported(spec, opts: Options, names) -> dict:
    r = report(spec, opts)
    return {n: r[n.split(".")[0]][n.split(".")[1]] for n in names}


@pytest.mark.parametrize("family", sorted(CRASHED))
def test_handout_of_a_family_that_crashed_builds_with_the_reports_figures(family):
    """The handout's data builder over one config of each family that crashed: it builds,
    and its headline figures are the report's."""
    spec = spec_of(family)
    sheet = handout([spec]).sheets[0]
    mine = headline(sheet.budget)
    assert mine == reported(spec, Options(), mine)
    if family in NO_S2:
        _no_crossover(spec, sheet)
    assert sheet.total == mine["params.total"]


@pytest.mark.parametrize("model", ["hy4-preview", "kimi-linear-48b-a3b", "ling-3.0-flash"])
def test_mla_cache_that_differs_by_layer_kind(cli, tmp_path, model):
    """HY-V4 caches indexer keys on 21 of its 78 MLA layers; Kimi-Linear and Ling cache the
    latent on their attention layers only. The lesson counts values per token summed over
    the kinds of layer: times b s and the bytes per value, exactly the report's KV cache,
    with MLA's and multi-head attention's cache of the same shape (--mla-cache expanded)."""
    res = cli("handout", model, "-o", tmp_path / "h.md")
    assert res.returncode == 0 and not res.stderr, res.stderr
    spec = resolve(model, [])
    opts = Options()
    budget = handout([spec], sections=["budget"]).sheets[0].budget
    mla = next(d for d in budget.derivations if d.title.startswith("The latent cache"))
    assert mla.meta["per"] == "token"
    r = report(spec, opts)
    expanded = report(spec, opts.with_(mla_cache="expanded"))
    seqs = r["flops"]["batch"] * r["flops"]["seq_len"]
    assert budget.kv_bytes == r["memory"]["kv_cache_bytes"] == mla.meta["latent"] * seqs * 2
    assert budget.kv_mha_bytes == expanded["memory"]["kv_cache_bytes"] == mla.meta["mha"] * seqs * 2
    md = (tmp_path / "h.md").read_text(encoding="utf-8")
    latent = mla.meta["latent"]
    assert f"over all its layers the latent cache holds {latent:,} values per token" in md
    assert f"| {r['memory']['kv_cache_bytes']:,} |" in md


def test_mla_cache_alike_in_every_layer_keeps_its_per_layer_lesson():
    """DeepSeek-V3 caches the same latent in each of its 61 layers: 512 + 64 values per token
    and layer against 128 heads x (128 + 64 + 128) for multi-head attention."""
    budget = handout([resolve("deepseek-v3", [])], sections=["budget"]).sheets[0].budget
    mla = next(d for d in budget.derivations if d.title.startswith("The latent cache"))
    assert (mla.meta["per"], mla.meta["latent"], mla.meta["mha"]) == ("layer", 576, 40_960)
    assert [kind for kind, _ in budget.notes] == ["mla"]


NO_S2 = ("mamba", "rwkv", "xlstm", "fnet", "jamba", "lfm2")


def test_the_stacks_without_an_s2_term_are_among_the_crashed():
    assert set(NO_S2) <= set(CRASHED)


def _no_crossover(spec, sheet):
    """A stack without attention scores (checked on the crashed families' sheets above): a =
    0, no s* (no Crossover section, a convention says why), and c s + e is the report's
    forward FLOPs at s a whole number of scan chunks."""
    assert sheet.curve.quadratic == 0 and sheet.curve.crossover is None
    assert "Crossover" not in [sec.title for sec in sheet.flops.sections]
    assert any("no crossover s*" in c for c in sheet.flops.conventions)
    s = 4096
    want = report(spec, Options(seq_len=s))["flops"]["forward_matmul"]
    assert sheet.curve.linear * s + sheet.curve.constant == want


def test_xlstm_handout_renders_and_says_it_has_no_crossover(cli, tmp_path):
    """The reported crash: `symcalc handout` of xLSTM's class defaults (TypeError from s* =
    c / 0). Beside a model with a crossover, that model's s* bounds the table."""
    xlstm = FAMILIES / "xlstm" / "causal-lm-class-defaults.json"
    res = cli("handout", xlstm, "gpt2", "-o", tmp_path / "h.md")
    assert res.returncode == 0 and not res.stderr, res.stderr
    md = (tmp_path / "h.md").read_text(encoding="utf-8")
    assert "no term grows with $s^2$: no crossover." in md
    assert "$s^\\ast = 6{,}702.0$ tokens" in md  # gpt2's
    tex = handout_latex(handout([resolve(str(xlstm), [])], sections=["compute"]))
    legend = next(line for line in tex.splitlines() if line.startswith("\\addlegendentry"))
    assert "no term grows with $s^2$: no crossover" in legend
    assert "only marks" not in tex  # no dot for an s* there is not
    assert "(128,0.000000e+00)" not in tex  # no quadratic line of zeros on the log axis


@pytest.mark.parametrize("name,cap", [("bare-model-relative-span-capped.json", 4),
                                      ("masked-lm-relative-attention.json", 64)])
def test_deberta_capped_relative_span(name, cap):
    """min(K_rel, s) taken at s >= K_rel: the curve is the report's forward FLOPs from K_rel
    on, s* lies past K_rel, and the 6 N D gap adds up to the report's training FLOPs."""
    spec = spec_of("deberta", name)
    sheet = handout([spec]).sheets[0]
    c = sheet.curve
    for s in (cap, 128, 1000):
        want = report(spec, Options(seq_len=s))["flops"]["forward_matmul"]
        assert c.quadratic * s * s + c.linear * s + c.constant == want
    assert c.crossover > cap
    said = f"relative positions capped (min(K_rel, s)): C(s) counted at s of at least K_rel = "
    assert said + str(cap) in sheet.flops.conventions
    b = sheet.budget
    assert b.training_flops - b.six_nd == b.gap
    assert b.training_flops == report(spec, Options())["flops"]["training"]


@pytest.mark.parametrize("lang,word", [("ru", "токен"), ("zh", "词元")])
def test_the_new_texts_are_translated(lang, word):
    """The texts these handouts added (the MLA cache per token, no crossover, the capped
    span) in Russian and Chinese, the token a 词元 and not an untranslated token."""
    h = handout([resolve("kimi-linear-48b-a3b", []), spec_of("mamba"), spec_of("deberta")])
    i18n.missing.pop(lang, None)
    md = handout_markdown(h, lang=lang)
    assert not i18n.missing.get(lang), sorted(i18n.missing[lang])[:5]
    mla_note = next(line for line in md.splitlines()
                    if line.startswith("**kimi-linear-48b-a3b**") and "1/18" in line)
    assert word in mla_note and "token" not in mla_note
    assert "over all its layers" not in md and "no crossover" not in md
    assert "at least K" not in md


@pytest.mark.parametrize("family,name", [("kimi_linear", "model-all-dense.json"),
                                         ("jamba", "tiny-tied-no-attention.json"),
                                         ("qwen3_next", "model-all-linear.json"),
                                         ("lfm2", "tiny-all-conv.json")])
def test_a_stack_that_caches_nothing_has_no_cache_lesson(family, name):
    """No layer attends: the KV cache is 0 bytes, and no lesson sets it against multi-head
    attention's (Kimi-Linear's all-linear stack made the MLA ratio 0/0, a NaN the renderer
    refused; GQA's said a 0-byte cache was 2x smaller)."""
    spec = spec_of(family, name)
    h = handout([spec], sections=["budget"])
    b = h.sheets[0].budget
    assert b.kv_bytes == 0 == report(spec, Options())["memory"]["kv_cache_bytes"]
    assert b.kv_mha_bytes is None
    assert [kind for kind, _ in b.notes if kind in ("gqa", "mla", "mla_token")] == []
    assert "the lesson of MLA" not in handout_markdown(h)

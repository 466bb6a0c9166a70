"""The handouts of the architectures taught next (issue 24): MoE, MLA and hybrid stacks with every
part named, every size the derivations use, their lessons derived from symcalc's own numbers,
6 N D explained, training memory with its activations, and the smaller defects of the review."""
from __future__ import annotations

import re

import pytest

from symcalc import i18n
from symcalc.algebra.options import Options
from symcalc.derivations.derive import derive
from symcalc.derivations.handout_data import handout
from symcalc.inputs import presets
from symcalc.render.handout import handout_latex, handout_markdown
from symcalc.render.markdown import derivation_markdown
from symcalc.render.view import Units
from symcalc.report import report

NBSP = "\u00a0"


def spec(name):
    return presets.load(name).spec


@pytest.fixture(scope="module")
def next_ones():
    return {name: handout([spec(name)]).sheets[0]
            for name in ("mixtral-8x7b", "deepseek-v3", "qwen3-next-80b-a3b", "gpt2")}


def derivation(sheet, quantity, title_word=""):
    return next(d for d in sheet.budget.derivations
                if d.quantity == quantity and title_word in d.title)


def test_active_parameters_step_by_step(next_ones):
    """Active = total less the routed experts a token skips, for each MoE model, equal to
    the preset's published figure and the report's."""
    for name, active in (("mixtral-8x7b", 12_879_925_248), ("deepseek-v3", 37_552_282_624),
                         ("qwen3-next-80b-a3b", 3_874_929_408)):
        sh = next_ones[name]
        d = derivation(sh, "params.active")
        assert d.meta["active"] == sh.budget.active == active == presets.load(name).expected_active
        assert d.values()["params.active"] == active
        assert report(sh.spec, Options())["params"]["active"] == active


def test_hybrid_decode_memory_includes_the_recurrent_state(next_ones):
    b = next_ones["qwen3-next-80b-a3b"].budget
    assert b.recurrent_bytes == 77_856_768 and b.kv_bytes == 50_331_648
    dec = derivation(next_ones["qwen3-next-80b-a3b"], "memory.decode_bytes")
    assert dec.meta["decode"] == b.kv_bytes + b.recurrent_bytes
    assert round(100 * dec.meta["share"]) == 61
    assert any(kind == "hybrid" and "77,856,768 bytes, 61%" in text for kind, text in b.notes)


def test_mla_latent_cache_against_the_mha_cache(next_ones):
    sh = next_ones["deepseek-v3"]
    mla = derivation(sh, "memory.kv_cache_bytes", "latent cache")
    assert (mla.meta["latent"], mla.meta["mha"]) == (576, 40_960)  # r_kv + d_rope; n_h(d_nope + d_rope + d_v)
    assert round(mla.meta["ratio"]) == 71
    assert sh.budget.kv_mha_bytes * 576 == sh.budget.kv_bytes * 40_960
    assert "MLA:" in sh.attention and "each with its own K and V" not in sh.attention
    kv = derivation(sh, "memory.kv_cache_bytes", "KV-cache memory")
    assert any("latent" in c for c in kv.conventions)
    assert not any("n_kv" in c or "2 tensors" in c or "--mla" in c for c in kv.conventions)


def test_six_nd_gap_derived(next_ones):
    """The gap is 3 C_act - 6 D N_idle: attention's products against the parameters no matrix
    product uses (GPT-2's tied head is not among them)."""
    gpt2 = derivation(next_ones["gpt2"], "flops.training", "6 N D")
    assert (3 * gpt2.meta["act"], gpt2.meta["idle"]) == (115_964_116_992, 907_776)
    assert gpt2.meta["gap"] == 115_964_116_992 - 6 * 1024 * 907_776 == 110_386_741_248
    steps = [s for s in gpt2.steps() if s.kind != "define"]
    assert steps[0].letter == "D"  # D defined first
    assert [s.path for s in steps if s.kind == "compose"][0] == "flops.training"  # 3 x forward
    qwen = next_ones["qwen3-next-80b-a3b"].budget
    assert qwen.gap == qwen.training_flops - qwen.six_nd == -308_596_703_232
    assert any(kind == "negative" and "turns positive above s = 2,304" in text
               for kind, text in qwen.notes)
    for name in ("mixtral-8x7b", "deepseek-v3"):
        assert next_ones[name].budget.gap > 0 and not any(k == "negative" for k, _ in
                                                           next_ones[name].budget.notes)


def test_training_memory_includes_activations(next_ones):
    b = next_ones["gpt2"].budget
    r = report(spec("gpt2"), Options(seq_len=1024))["memory"]
    assert b.seq == 1024 and b.peak_bytes == r["training_peak_bytes"] == 3_066_875_904
    assert b.state_bytes == r["training_bytes"] == 1_991_036_928
    assert "paper activation model" in b.activation_model and "--activations" not in b.activation_model
    md = handout_markdown(handout([spec("gpt2")]))
    box = md.split("## The models")[0]
    assert "| training peak | 3.07 GB |" in box
    assert "| training peak (bytes) | 3,066,875,904 |" in md and "| activations (bytes) |" in md


def test_every_part_has_a_name(next_ones):
    for name in ("mixtral-8x7b", "deepseek-v3", "qwen3-next-80b-a3b"):
        cats = next_ones[name].categories
        assert "other" not in cats and {"router", "experts"} <= set(cats), (name, cats)
    assert "shared experts" in next_ones["deepseek-v3"].categories
    qwen = next_ones["qwen3-next-80b-a3b"].categories
    # the gated norm of the linear attention stays with its block, as the derivation groups it
    assert qwen["linear attention (Gated DeltaNet)"] == 1_213_864_704 and qwen["norms"] == 198_656


def test_models_table_has_the_symbols_the_derivations_use(next_ones):
    ds = set(next_ones["deepseek-v3"].dims)
    assert {"r_q", "r_kv", "d_nope", "d_rope", "d_v", "d_moe", "d_sh", "E_s", "L_dense"} <= ds
    qw = set(next_ones["qwen3-next-80b-a3b"].dims)
    assert {"L_attn", "L_lin", "d_lk", "n_lk", "d_lv", "n_lv", "K_conv", "Q_c", "beta_state"} <= qw
    assert "d_ff" not in qw  # every layer is MoE: no derivation uses it
    md = handout_markdown(handout([spec("qwen3-next-80b-a3b")]))
    table = md.split("## The models")[1].split("Attention:")[0]
    assert "d_{\\mathrm{ff}}" not in table and "5,120" not in table


def test_kaplan_form_only_where_it_is_kaplans(next_ones):
    assert next_ones["gpt2"].closed.meta["kaplan_form"]
    for name in ("deepseek-v3", "qwen3-next-80b-a3b"):
        closed = next_ones[name].closed
        assert not closed.meta["kaplan_form"]
        assert "not their form" in closed.title
        assert any("do not give 12 L d^2" in c for c in closed.conventions)
    md = handout_markdown(handout([spec("deepseek-v3")]))
    assert "deepseek-v3: Kaplan et al.'s form gives" not in md
    assert "deepseek-v3: Kaplan et al.'s assumptions do not give 12 L d^2" in md


def test_subscripts_are_words_not_paths():
    tex = handout_latex(handout([spec("qwen3-next-80b-a3b")], sections=["params", "budget"]))
    assert "every\\_layer" not in tex and "every_layer" not in tex
    assert "memory.recurrent" not in tex and "M_{\\mathrm{state}}" in tex
    assert "N_{\\mathrm{moe,shared\\ gate}}" in tex
    md = derivation_markdown(derive(spec("gpt2"), "params.non_embedding"))
    assert "N_{\\mathrm{non\\text{-}emb}}" in md
    six = handout_markdown(handout([spec("gpt2")], sections=["budget"]))
    assert "C_{exact}" not in six and "C_{\\mathrm{train}}" in six


def test_figure_lines_colours_and_labels():
    pair = handout([spec("mistral-7b"), spec("llama-2-7b")])
    assert pair.coincide == (("quadratic", ("mistral-7b", "llama-2-7b")),)
    tex = handout_latex(pair)
    assert "The quadratic terms of mistral-7b, llama-2-7b coincide" in tex
    assert "mark repeat" not in tex and tex.count("\\addlegendimage") == 2  # no stray marker
    # the bars carry the table's own strings
    md = handout_markdown(pair)
    shares = re.findall(r"\| attention \| [\d,]+ \| ([\d.]+)% \|", md)
    assert len(shares) == 1 and f"[{shares[0]}\\%]" in tex
    many = handout([spec(n) for n in ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl",
                                       "llama-2-7b", "llama-2-13b", "llama-3-8b", "qwen2-0.5b",
                                       "mistral-7b", "phi-2", "olmo-2-7b", "gemma-7b")],
                   sections=["compute"])
    colours = re.findall(r"\\addlegendimage\{([^,]+),", handout_latex(many))
    assert len(colours) == 12 == len(set(colours))


def test_context_line_where_promised():
    h = handout([spec("qwen3-next-80b-a3b")], sections=["compute"])
    assert h.sheets[0].context == 262_144 and h.points[-1] > 262_144
    tex = handout_latex(h)
    assert "(262144," in tex and "dotted, thick" in tex
    assert "marks the context length of qwen3-next-80b-a3b" in tex
    custom = handout([spec("gpt2")], sections=["compute"])
    assert "context length" in handout_latex(custom)  # P = 1,024: a learned table
    none = handout([presets.load("seed-estimator-12x768").spec], sections=["compute"])
    assert "context length" not in handout_latex(none)


def test_box_follows_the_units_asked_for():
    md = handout_markdown(handout([spec("gpt2")]), Units(params="yi"))
    assert "| parameters | 1.244" in md.split("## The models")[0]


def test_sources_said_right():
    # an untied head's product cites the implementation, not weight tying
    d = derive(spec("mistral-7b"), "flops.forward_matmul")
    assert "press2017" not in d.sources() and "hf_transformers" in d.sources()
    # eager activations are autograd's, not Korthikanti et al.'s
    eager = derive(spec("bert-base"), "memory.activations_bytes", Options(activations="eager"))
    assert "korthikanti2022" not in eager.sources()
    # Korthikanti's LayerNorm term on an RMSNorm model says RMSNorm
    paper = derive(spec("mistral-7b"), "memory.activations_bytes")
    said = [getattr(s, "meaning", "") for s in paper.steps()]
    assert "each RMSNorm keeps its input" in said and not any("LayerNorm" in m for m in said)
    # BERT's K/V are multi-head attention's, in a difference too
    diff = __import__("symcalc.derivations.derive_forms", fromlist=["x"]).derive_difference(
        spec("gpt2"), spec("bert-base"))
    assert "ainslie2023" not in diff.sources()


def test_bert_curve_says_its_pooler():
    h = handout([spec("bert-base")], sections=["compute"])
    d = h.sheets[0].flops
    assert h.sheets[0].curve.constant == 2 * 768 * 768
    assert any(getattr(s, "path", "") == "constant" and "BERT pooler" in getattr(s, "meaning", "")
               for s in d.steps())


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_native_terms(lang):
    cat = i18n.translations(lang)._catalog
    # a command-line flag (--max-num-batched-tokens) is spelled the same in every language
    texts = [v for v in cat.values() if isinstance(v, str) and not v.startswith("--")]
    if lang == "ru":
        bad = [t for t in texts if re.search(r"роторн|посл\.|\bгол\.|\bGB\b|\bGiB\b", t)]
    else:
        bad = [t for t in texts if re.search(r"\btokens?\b|升维|降维", t)]
    assert not bad, bad[:3]
    with i18n.using(lang):
        text = derivation_markdown(
            __import__("symcalc.derivations.derive_forms", fromlist=["x"]).derive_closed_form(
                spec("gpt2")), lang=lang)
    assert "допущениях: допущения" not in text and "假设下：" not in text


def test_russian_and_chinese_numbers():
    with i18n.using("ru"):
        md = handout_markdown(handout([spec("mistral-7b")], sections=["budget"]))
        assert f"{NBSP}ГБ" in md and "GB" not in md.split("## ")[0]
        assert "| 4096 |" in handout_markdown(handout([spec("mistral-7b")], sections=["params"]))
        assert "пересчёт: нет" in md
    with i18n.using("zh"):
        md = handout_markdown(handout([spec("deepseek-v3")], sections=["breakdown"]))
        assert "6,710亿" in md and "0.671万亿" not in md

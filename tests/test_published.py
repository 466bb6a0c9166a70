"""Published forms reproduced from symcalc's components (sympy ``expand(a - b) == 0``), the
seeds' worked figures, and the exact differences real models make."""
from __future__ import annotations

import json

import pytest
import sympy

from symcalc.derivations import published as pub
from symcalc.algebra import quantities as q
from symcalc.cli import main
from symcalc.algebra.options import Options
from symcalc.inputs.presets import load
from symcalc.algebra.spec import size_values
from symcalc.algebra.symbols import L, P, V, b, d, d_ff, d_h, n_h, n_kv, s

BASES = [None, "gpt2", "bert-base", "llama-2-7b", "llama-3-8b", "mistral-7b", "mixtral-8x7b",
         "qwen2-0.5b", "seed-kaplan-12x768", "seed-layer-calculator-bert-base"]


def spec(name):
    return load(name).spec


def at(expr, model, **workload):
    return q.value(expr, {**size_values(spec(model)), **workload})


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("name", list(pub.FORMS))
def test_every_form_is_reproduced_from_the_components(name, base):
    """Whatever the starting architecture, the form's assumptions make symcalc's exact
    expression equal to the published formula, term by term for Chinchilla's table."""
    proof = pub.derive(name, spec(base) if base else None)
    assert sympy.expand(proof.symcalc - proof.published) == 0
    assert proof.holds
    assert proof.symcalc != 0


# The published formulas, typed in again from the papers in expanded form, so that a slip
# in symcalc.derivations.published cannot hide behind an equally wrong derivation.
PAPER_EXPANDED = {
    "seed-layer-mixed": L * (4 * s * d**2 + 2 * s**2 * d + 4 * s * d * d_ff),
    "seed-layer-flops": L * (8 * s * d**2 + 4 * s**2 * d + 4 * s * d * d_ff),
    "seed-layer-params": 4 * L * d**2 + 2 * L * d * d_ff + 4 * L * d + V * d + s * d,
    "kaplan-params": 4 * d * L * n_h * d_h + 2 * d * L * d_ff,
    "kaplan-forward": 8 * d * L * n_h * d_h + 4 * d * L * d_ff + 2 * L * s * n_h * d_h,
    "kaplan-training": 24 * d * L * n_h * d_h + 12 * d * L * d_ff,
    "narayanan-params": 12 * L * d**2 + 13 * L * d + V * d + s * d,
    "narayanan-flops": 96 * b * s * L * d**2 + 16 * b * s**2 * L * d + 6 * b * s * d * V,
    "korthikanti-model": 72 * b * s * L * d**2 + 12 * b * s**2 * L * d + 6 * b * s * d * V,
    "korthikanti-selective": 72 * b * s * L * d**2 + 24 * b * s**2 * L * d + 6 * b * s * d * V,
    # Megatron-LM's num_floating_point_operations on the generic (plain-FFN) decoder
    "megatron-mfu": 12 * b * s * L * (d * n_h * d_h + d * n_kv * d_h + s * n_h * d_h / 2
                                      + d * d_ff) + 6 * b * s * d * V,
}


@pytest.mark.parametrize("name", list(PAPER_EXPANDED))
def test_formula_is_the_papers(name):
    assert sympy.expand(pub.form(name).published(pub.generic_spec()) - PAPER_EXPANDED[name]) == 0


def test_chinchilla_table_rows():
    """Appendix F row by row (MHA, d_ff general), and training = 3x forward."""
    proof = pub.derive("chinchilla-forward", spec("llama-2-7b"))
    a = d_h * n_h
    expected = {
        "embeddings": 2 * s * V * d,
        "attention: key, query and value projections": L * 6 * s * d * a,
        "attention: key @ query logits": L * 2 * s**2 * a,
        "attention: softmax": L * 3 * n_h * s**2,
        "attention: softmax @ query reductions": L * 2 * s**2 * a,
        "attention: final linear": L * 2 * s * a * d,
        "dense block": L * 4 * s * d * d_ff,
        "final logits": 2 * s * d * V,
    }
    assert {r[0]: r[1] for r in proof.rows} == expected
    assert all(sympy.expand(r[2] - expected[r[0]]) == 0 for r in proof.rows)
    train = pub.derive("chinchilla-training", spec("llama-2-7b"))
    assert sympy.expand(train.published - 3 * proof.published) == 0


def test_kaplan_reduces_to_12_L_d2_and_its_worked_example():
    f = pub.form("kaplan-params")
    textbook = {d_h: d / n_h, n_kv: n_h, d_ff: 4 * d}
    assert sympy.expand(f.published(pub.generic_spec()).xreplace(textbook)) == 12 * L * d**2
    kaplan = spec("seed-kaplan-12x768")
    assert at(f.published(kaplan), "seed-kaplan-12x768") == 84_934_656
    assert at(f.symcalc(kaplan), "seed-kaplan-12x768") == 84_934_656
    assert q.value(q.expression("params.total", kaplan), size_values(kaplan)) == 84_934_656


def test_kaplan_forward_is_causal_half_per_token():
    """C_fwd = 2N + 2 L n_ctx d_attn is symcalc's forward with half the score matrix, per
    token; with the full matrix the context term doubles."""
    kaplan = spec("seed-kaplan-12x768")
    n = pub.kaplan_n()
    mha = {n_kv: n_h}
    half = q.expression("flops.forward", kaplan, Options(causal="half")).xreplace(mha)
    full = q.expression("flops.forward", kaplan, Options(causal="full")).xreplace(mha)
    assert sympy.expand(half / (b * s) - (2 * n + 2 * L * s * n_h * d_h)) == 0
    assert sympy.expand(full / (b * s) - (2 * n + 4 * L * s * n_h * d_h)) == 0
    # 6N drops exactly the attention-score work of training: 3 x 2 L n_ctx d_attn.
    train_half = q.expression("flops.training", kaplan, Options(causal="half")).xreplace(mha) / (b * s)
    assert sympy.expand(train_half - 6 * n - 6 * L * s * n_h * d_h) == 0


def test_layer_calculator_bert_base_figures():
    """seeds/000: BERT-base at s = 512: 77.31 GFLOPs (mixed MACs/FLOPs) and 96.64 GFLOPs
    counted in FLOPs throughout; 7,080,960 per layer, 108,805,632 in all."""
    model = "seed-layer-calculator-bert-base"
    bert = spec(model)
    mixed, flops = pub.form("seed-layer-mixed"), pub.form("seed-layer-flops")
    assert at(mixed.published(bert), model, s=512) == 77_309_411_328
    assert at(mixed.symcalc(bert), model, s=512, b=1) == 77_309_411_328
    assert at(flops.published(bert), model, s=512) == 96_636_764_160
    report = q.value(q.expression("flops.forward_matmul", bert), {**size_values(bert), "b": 1, "s": 512})
    assert report == 96_636_764_160
    assert f"{77_309_411_328 / 1e9:.2f}" == "77.31" and f"{96_636_764_160 / 1e9:.2f}" == "96.64"
    params = pub.form("seed-layer-params")
    assert at(params.published(bert), model, s=512) == 108_805_632
    assert at(params.symcalc(bert), model) == 108_805_632
    per_layer = 4 * d**2 + 2 * d * d_ff + 4 * d
    assert at(per_layer, model) == 7_080_960


def test_korthikanti_selective_against_one_recomputed_core():
    """Eq. 8 doubles the s^2 term; one extra forward of the attention core (what selective
    recomputation runs) gives 1 + 2s/(9d): 8 b s^2 L d less than eq. 8."""
    gpt = pub.form("korthikanti-selective").shaped(spec("gpt2"))
    textbook = {d_h: d / n_h, n_kv: n_h, d_ff: 4 * d}
    one_core = sympy.expand(pub.selective_recompute_training(gpt).xreplace(textbook))
    two_ninths = 72 * b * s * L * d**2 * (1 + 2 * s / (9 * d) + V / (12 * d * L))
    assert sympy.expand(one_core - two_ninths) == 0
    eq8 = pub.form("korthikanti-selective").published(gpt)
    assert sympy.expand(eq8 - one_core) == 8 * b * s**2 * L * d


def test_narayanan_recomputes_layers_not_the_logit_layer():
    """Eq. 3's V/(16 L d): the logit layer runs 3 times. symcalc's flops.training with
    --recompute full runs every forward 4 times: 2 b s d V more."""
    gpt = pub.form("narayanan-flops").shaped(spec("gpt2"))
    full = q.expression("flops.training", gpt, Options(recompute="full"))
    eq3 = pub.form("narayanan-flops").published(gpt)
    textbook = {d_h: d / n_h, n_kv: n_h, d_ff: 4 * d}
    assert sympy.expand(full.xreplace(textbook) - eq3) == 2 * b * s * d * V


def test_gpt2_meets_the_megatron_flop_forms():
    """GPT-2 small has d_ff = 4d, MHA and a tied head: eq. 3, 7 and 8 and Chinchilla's table
    give symcalc's count with no difference at all; eq. 7 equals 3x the torch-verified
    forward_matmul."""
    gpt = spec("gpt2")
    for name in ("narayanan-flops", "korthikanti-model", "korthikanti-selective",
                 "chinchilla-forward", "palm"):
        reduced = pub.reduced_difference(name, gpt)
        assert (reduced == 0) == (name != "palm"), name
    eq7 = at(pub.form("korthikanti-model").published(gpt), "gpt2", b=8, s=1024)
    forward = at(q.expression("flops.forward_matmul", gpt), "gpt2", b=8, s=1024)
    assert eq7 == 3 * forward == 3 * 8 * (12 * (24 * 1024 * 768**2 + 4 * 1024**2 * 768)
                                          + 2 * 1024 * 768 * 50257)


# Differences for models that break the forms' assumptions, derived by hand:
# Mistral-7B / Llama-3-8B: gated FFN (3 d d_ff), GQA (K, V of n_kv d_h), RMSNorm (d per norm,
# two per layer plus a final one), untied head (a V x d table that is no matmul of its own
# input: the token lookup), rotary positions (no table).
ATTN = lambda kv: 2 * d * n_h * d_h + 2 * d * kv * d_h  # noqa: E731  Q, O and K, V weights
HAND = {
    "kaplan-params": L * (ATTN(n_kv) + 3 * d * d_ff + 2 * d) + d - 2 * d * L * (2 * n_h * d_h + d_ff),
    "kaplan-forward": 2 * (L * (ATTN(n_kv) + 3 * d * d_ff) + d * V)
    - 2 * d * L * 2 * (2 * n_h * d_h + d_ff),
    "palm": 6 * (L * (ATTN(n_kv) + 3 * d * d_ff) + d * V)
    - 6 * (L * (ATTN(n_kv) + 3 * d * d_ff + 2 * d) + d + 2 * V * d),
    "korthikanti-model": 3 * b * (L * (2 * s * ATTN(n_kv) + 4 * s**2 * n_h * d_h + 6 * s * d * d_ff)
                                  + 2 * s * d * V)
    - (72 * b * s * L * d**2 + 12 * b * s**2 * L * d + 6 * b * s * d * V),
    "chinchilla-forward": 2 * L * s * d * d_ff - 4 * L * s * d * d_h * (n_h - n_kv),
    "narayanan-params": L * (ATTN(n_kv) + 3 * d * d_ff + 2 * d) + d + 2 * V * d
    - (12 * L * d**2 + 13 * L * d + V * d + s * d),
}


@pytest.mark.parametrize("model", ["mistral-7b", "llama-3-8b"])
@pytest.mark.parametrize("name", list(HAND))
def test_difference_equals_the_hand_derivation(model, name):
    diff = pub.difference(name, spec(model), Options())
    assert diff != 0
    assert sympy.expand(diff - HAND[name]) == 0
    f = pub.form(name)
    values = dict(b=2, s=4096)
    assert at(diff, model, **values) == at(f.symcalc(spec(model)) - f.published(spec(model)),
                                           model, **values) != 0


def test_palm_difference_in_model_terms():
    """6N over-counts an untied model by its token table and its norms: -6 d (V + 2L + 1)."""
    for model in ("mistral-7b", "llama-3-8b", "llama-2-7b"):
        assert sympy.expand(pub.reduced_difference("palm", spec(model)) + 6 * d * (V + 2 * L + 1)) == 0


def test_encoder_decoder_is_refused(capsys):
    with pytest.raises(Exception) as err:
        pub.difference("palm", spec("t5-small"))
    assert "encoder-decoder" in str(err.value)
    assert main(["forms", "t5-small"]) == 2
    assert "encoder-decoder" in capsys.readouterr().err


def test_forms_command_json(capsys):
    assert main(["forms", "mistral-7b", "--batch", "1", "--seq-len", "4096", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "mistral-7b" and data["seq_len"] == 4096
    rows = {r["name"]: r for r in data["forms"]}
    assert set(rows) == set(pub.FORMS)
    k7 = rows["korthikanti-model"]
    assert k7["symcalc"] == 3 * 67_044_439_490_560  # 3 x forward_matmul of the report
    assert k7["published"] == 72 * 4096 * 32 * 4096**2 + 12 * 4096**2 * 32 * 4096 + 6 * 4096 * 4096 * 32000
    assert k7["difference"] == k7["symcalc"] - k7["published"] != 0
    assert sympy.sympify(k7["difference_expression"], locals={"L": L, "V": V}) != 0
    assert rows["palm"]["difference"] == -6 * 4096 * (32000 + 2 * 32 + 1)
    assert all(isinstance(r["published"], int) for r in rows.values())


def test_forms_command_text_names_sources(capsys):
    assert main(["forms", "seed-layer-calculator-bert-base", "--seq-len", "512",
                 "--form", "seed-layer-mixed", "--form", "seed-layer-flops"]) == 0
    out = capsys.readouterr().out
    assert "77,309,411,328" in out and "96,636,764,160" in out and "seed 000" in out
    assert main(["forms", "gpt2", "--form", "nope"]) == 2


def test_head_dim_not_d_over_n_h_shows_in_the_difference():
    """d_h = 256 with 32 heads (n_h d_h = 2 d): Megatron's forms assume n_h d_h = d and
    miss the wider attention; Chinchilla's table writes d_h n_h and does not."""
    from symcalc.algebra.spec import with_overrides

    wide = with_overrides(spec("llama-2-7b"), {"d_h": 256})
    assert wide.n_h * wide.d_h == 2 * wide.d
    k7 = pub.reduced_difference("korthikanti-model", wide)
    hand = (24 * b * s * L * d * n_h * d_h + 12 * b * s**2 * L * n_h * d_h
            + 18 * b * s * L * d * d_ff - 72 * b * s * L * d**2 - 12 * b * s**2 * L * d)
    assert sympy.expand(k7 - hand) == 0
    assert sympy.expand(pub.reduced_difference("chinchilla-forward", wide)
                        - 2 * L * s * d * d_ff) == 0  # the gate only

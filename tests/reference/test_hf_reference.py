"""Generated configurations of all seven families against transformers (meta device):
params.total equals ``num_parameters()`` and flops.forward_matmul equals FlopCounterMode, through
the library and through the command line."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hf_reference as H
from symcalc.inputs.hf import spec_from_config
from symcalc.algebra.options import Options
from symcalc.report import report
from conftest import sympy_number

CONFIGS = H.generated_configs()
IDS = [cid for cid, _ in CONFIGS]
WORKLOADS = [(2, 7), (3, 5)]


deliberate_param_difference = H.deliberate_param_difference


def test_enough_configs_across_every_family_and_class():
    assert len(CONFIGS) >= 70
    classes = {cfg["architectures"][0] for _, cfg in CONFIGS}
    assert classes == {c for group in H.SUPPORTED_CLASSES.values() for c in group}
    for family in H.SUPPORTED_CLASSES:
        assert sum(cfg["model_type"] == family for _, cfg in CONFIGS) >= 8


@pytest.mark.parametrize("cfg", [c for _, c in CONFIGS], ids=IDS)
def test_params_equal_transformers(cfg):
    spec = spec_from_config(cfg)
    got = sympy_number("params.total", spec, Options(batch=2, seq_len=7))
    assert got == H.reference_params(cfg) + deliberate_param_difference(cfg)


@pytest.mark.parametrize("batch,seq_len", WORKLOADS)
@pytest.mark.parametrize("cfg", [c for _, c in CONFIGS], ids=IDS)
def test_forward_matmul_equals_flop_counter(cfg, batch, seq_len):
    spec = spec_from_config(cfg)
    got = sympy_number("flops.forward_matmul", spec, Options(batch=batch, seq_len=seq_len))
    assert got == H.reference_forward_matmul_flops(cfg, batch, seq_len)


def test_deviations_are_exercised():
    """Both deliberate deviations occur among the generated configurations."""
    kinds = {cfg["architectures"][0] for _, cfg in CONFIGS if deliberate_param_difference(cfg)}
    assert kinds == {"T5ForConditionalGeneration", "BertForMaskedLM"}


def test_t5_untied_deviation_is_transformers_forcing_the_tie():
    """(a) transformers ties T5's head whatever the config says; symcalc does not."""
    cfg = dict(CONFIGS[IDS.index("t5-03-T5ForConditionalGeneration")][1])
    model = H.build_model(cfg)
    assert model.config.tie_word_embeddings is True
    assert model.lm_head.weight is model.shared.weight
    assert spec_from_config(cfg).head == "untied"
    tied = dict(cfg, tie_word_embeddings=True)
    assert H.reference_params(tied) == H.reference_params(cfg)


def test_bert_untied_deviation_is_an_unused_bias():
    """(b) transformers keeps cls.predictions.bias beside the untied decoder's own bias."""
    cfg = CONFIGS[IDS.index("bert-02-BertForMaskedLM")][1]
    names = dict(H.build_model(cfg).named_parameters())
    bias, decoder_bias = names["cls.predictions.bias"], names["cls.predictions.decoder.bias"]
    assert bias is not decoder_bias and bias.numel() == decoder_bias.numel() == cfg["vocab_size"]
    spec = spec_from_config(cfg)
    assert (spec.head, spec.head_bias) == ("untied", True)


def _sample() -> list[tuple[str, dict]]:
    """The first config of every class, and every deliberately deviating one."""
    seen, out = set(), []
    for cid, cfg in CONFIGS:
        cls = cfg["architectures"][0]
        if cls not in seen or deliberate_param_difference(cfg):
            seen.add(cls)
            out.append((cid, cfg))
    return out


SAMPLE = _sample()


@pytest.mark.parametrize("batch,seq_len", WORKLOADS)
@pytest.mark.parametrize("cfg", [c for _, c in SAMPLE], ids=[i for i, _ in SAMPLE])
def test_cli_report_equals_transformers(cfg, batch, seq_len, cli, write_config):
    path = write_config(cfg)
    out = cli("report", path, "--json", "--batch", batch, "--seq-len", seq_len).json()
    assert out["params"]["total"] == H.reference_params(cfg) + deliberate_param_difference(cfg)
    assert out["flops"]["forward_matmul"] == H.reference_forward_matmul_flops(cfg, batch, seq_len)
    assert (out["flops"]["batch"], out["flops"]["seq_len"]) == (batch, seq_len)
    assert out == report(spec_from_config(cfg, name=path.parent.name),
                         Options(batch=batch, seq_len=seq_len))


def test_shared_check_reference():
    """../shared/tools/check-reference (the reference cases) agrees on every case."""
    import subprocess
    import sys

    from conftest import SHARED

    tool = SHARED / "tools" / "check-reference"
    if not tool.exists():
        pytest.skip(f"{tool} not present (shared/ is not beside the repository)")
    done = subprocess.run([sys.executable, str(tool), sys.executable, "-m", "symcalc.cli"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all reference cases match" in done.stdout
    assert "MISMATCH" not in done.stdout


@st.composite
def hf_configs(draw) -> dict:
    """Small config.json objects transformers accepts (even head dims for rotary models)."""
    mt = draw(st.sampled_from(sorted(H.SUPPORTED_CLASSES)))
    n_kv = draw(st.integers(1, 3))
    n_h = n_kv * draw(st.integers(1, 3))
    d_h = 2 * draw(st.integers(1, 4))
    d, V, L = n_h * d_h, draw(st.integers(8, 90)), draw(st.integers(1, 3))
    ff, tie = draw(st.integers(2, 40)), draw(st.booleans())
    if mt == "bert":
        cfg = dict(hidden_size=d, num_hidden_layers=L, num_attention_heads=n_h, intermediate_size=ff,
                   vocab_size=V, max_position_embeddings=draw(st.integers(12, 40)),
                   type_vocab_size=draw(st.integers(1, 3)), pad_token_id=0)
    elif mt == "gpt2":
        cfg = dict(n_embd=d, n_layer=L, n_head=n_h, vocab_size=V, n_positions=draw(st.integers(12, 40)),
                   n_inner=draw(st.one_of(st.none(), st.integers(2, 40))), bos_token_id=0, eos_token_id=0)
    elif mt == "t5":
        cfg = dict(d_model=draw(st.integers(4, 40)), d_kv=d_h, num_heads=n_h, d_ff=ff, num_layers=L,
                   num_decoder_layers=draw(st.one_of(st.none(), st.integers(1, 3))), vocab_size=V,
                   feed_forward_proj=draw(st.sampled_from(["relu", "gated-gelu", "gelu_new", "gated-silu"])),
                   relative_attention_num_buckets=draw(st.integers(4, 32)), is_encoder_decoder=True,
                   pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    else:
        cfg = dict(hidden_size=d, num_hidden_layers=L, num_attention_heads=n_h, num_key_value_heads=n_kv,
                   intermediate_size=ff, vocab_size=V, max_position_embeddings=64, bos_token_id=1,
                   eos_token_id=2)
        if mt != "qwen2" and draw(st.booleans()):
            cfg["head_dim"] = 2 * draw(st.integers(1, 5))
        if mt == "llama":
            cfg.update(attention_bias=draw(st.booleans()), mlp_bias=draw(st.booleans()))
        if mt == "mixtral":
            E = draw(st.integers(1, 4))
            cfg.update(num_local_experts=E, num_experts_per_tok=draw(st.integers(1, E)))
        if mt in ("mistral", "mixtral"):
            cfg["sliding_window"] = draw(st.sampled_from([None, 3, 4096]))
    cfg.update(model_type=mt, architectures=[draw(st.sampled_from(H.SUPPORTED_CLASSES[mt]))],
               tie_word_embeddings=tie)
    return cfg


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hf_configs(), st.integers(1, 3), st.integers(1, 12))
def test_drawn_configs_equal_transformers(cfg, batch, seq_len):
    rep = report(spec_from_config(cfg), Options(batch=batch, seq_len=seq_len))
    assert rep["params"]["total"] == H.reference_params(cfg) + deliberate_param_difference(cfg)
    assert rep["flops"]["forward_matmul"] == H.reference_forward_matmul_flops(cfg, batch, seq_len)

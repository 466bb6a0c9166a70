"""memory.activations_bytes: the paper model reduces to Korthikanti et al.'s formula, and the
eager and sdpa models equal what autograd saves in a real training-mode forward pass
(tests/saved_tensors.py), per layer, exactly, on drawn tiny shapes in bf16 and fp32."""
from __future__ import annotations

import copy

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symcalc.algebra import activations, quantities as q
from symcalc.algebra.options import Options, workload_values
from symcalc.algebra.spec import make_spec, size_values
from symcalc.algebra.symbols import L, L_dec, b, d, d_ff, d_h, n_h, n_kv, s
from symcalc.errors import SymcalcError
from symcalc.fast.quick import evaluate
from symcalc.inputs.hf import spec_from_config


def test_paper_reduces_to_korthikanti_for_a_gpt_shaped_layer():
    gpt = make_spec(name="gpt", family="decoder", L=24, d=1024, n_h=16, d_ff=4096,
                    V=50257, P=1024, position="learned", norm="layernorm")
    expr = q.expression("memory.activations_bytes", gpt, Options())
    per_layer = sympy.diff(expr, L)
    shaped = sympy.expand(per_layer.xreplace({d_ff: 4 * d, d_h: d / n_h, n_kv: n_h}))
    assert shaped == 34 * s * b * d + 5 * n_h * s**2 * b
    # and the old selective / full recomputation figures (Korthikanti et al. Table 2)
    sel = q.expression("memory.activations_bytes", gpt, Options(recompute="selective"))
    assert sympy.expand(sympy.diff(sel, L).xreplace({d_ff: 4 * d, d_h: d / n_h, n_kv: n_h})) \
        == 34 * s * b * d
    full = q.expression("memory.activations_bytes", gpt, Options(recompute="full"))
    assert sympy.diff(full, L) == 2 * s * b * d
    tp = q.expression("memory.activations_bytes", gpt, Options(tp=8))
    t = sympy.Symbol("t", positive=True, integer=True)
    assert sympy.simplify(sympy.diff(tp, L).xreplace({d_ff: 4 * d, d_h: d / n_h, n_kv: n_h})
                          - s * b * d * (10 + sympy.Rational(24) / t + 5 * n_h * s / (d * t))) == 0


def test_paper_follows_the_real_components():
    """No dropout, a gated FFN of its own width and GQA: not the 34 + 5 of a GPT layer."""
    llama = make_spec(name="llama", family="decoder", L=2, d=64, n_h=8, n_kv=2, d_ff=176, V=100,
                      ffn="gated", norm="rmsnorm",
                      implementation={"dropout_attn": False, "dropout_hidden": False})
    per = sympy.diff(q.expression("memory.activations_bytes", llama, Options()), L)
    # 2 norms + QKV input + FFN input: 8 s b d; Q 2, K and V 2 n_kv d_h each, O input 2;
    # scores 2 n_h s^2 b; gate, up, activation output and product... 2 d_ff each
    expect = (8 * s * b * d + 4 * s * b * n_h * d_h + 4 * s * b * n_kv * d_h + 2 * n_h * s**2 * b
              + 8 * s * b * d_ff)
    assert sympy.expand(per - expect) == 0


def test_activation_dtype_changes_the_bytes():
    gpt = make_spec(name="gpt", family="decoder", L=2, d=64, n_h=4, d_ff=256, V=100)
    bf16 = evaluate("memory.activations_bytes", gpt, Options(seq_len=32))
    fp32 = evaluate("memory.activations_bytes", gpt, Options(seq_len=32, dtype="fp32"))
    assert bf16 == 2 * (34 * 32 * 64 + 5 * 4 * 32**2)
    assert fp32 > bf16


def test_bad_activation_model_is_one_line():
    with pytest.raises(SymcalcError) as err:
        Options(activations="flash").checked()
    assert err.value.field == "activations" and "paper, eager, sdpa" in err.value.rule


# -- against measurement ------------------------------------------------------------------

def _llama(mt, arch, d, h, kv, ff, **extra):
    return {"model_type": mt, "architectures": [arch], "vocab_size": 40, "hidden_size": d,
            "num_hidden_layers": 1, "num_attention_heads": h, "num_key_value_heads": kv,
            "intermediate_size": ff, "max_position_embeddings": 64, **extra}


def config(family: str, d: int, h: int, kv: int, ff: int) -> tuple[dict, str, sympy.Symbol]:
    """A tiny config of ``family`` with hidden d, h heads (kv of them for keys and values),
    FFN width ff; the config key of the layer count differenced and its symcalc size."""
    if family in ("llama", "mistral", "qwen2"):
        arch = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
                "qwen2": "Qwen2ForCausalLM"}[family]
        return _llama(family, arch, d, h, kv, ff, hidden_act="silu"), "num_hidden_layers", L
    if family == "mixtral":
        ff = -(-ff // 8) * 8  # grouped_mm needs 16-byte strides: d_moe a multiple of 8
        return (_llama("mixtral", "MixtralForCausalLM", d, h, kv, ff, num_local_experts=4,
                       num_experts_per_tok=2), "num_hidden_layers", L)
    if family == "gpt2":
        return ({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 40,
                 "n_embd": d, "n_layer": 1, "n_head": h, "n_inner": ff, "n_positions": 64,
                 "activation_function": "gelu_new", "bos_token_id": 1, "eos_token_id": 1},
                "n_layer", L)
    if family == "bert":
        return ({"model_type": "bert", "architectures": ["BertModel"], "vocab_size": 40,
                 "hidden_size": d, "num_hidden_layers": 1, "num_attention_heads": h,
                 "intermediate_size": ff, "max_position_embeddings": 64, "hidden_act": "gelu"},
                "num_hidden_layers", L)
    if family in ("t5-encoder", "t5-decoder"):
        cfg = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"],
               "vocab_size": 40, "d_model": d, "d_kv": max(d // h, 2), "num_heads": h, "d_ff": ff,
               "num_layers": 1, "num_decoder_layers": 1, "feed_forward_proj": "relu",
               "is_encoder_decoder": True, "decoder_start_token_id": 0, "pad_token_id": 0}
        if family == "t5-encoder":
            return cfg, "num_layers", L
        return cfg, "num_decoder_layers", L_dec
    raise AssertionError(family)


def symcalc_per_layer(cfg: dict, size: sympy.Symbol, batch: int, seq: int, dtype: str,
                      model: str) -> int:
    spec = spec_from_config(copy.deepcopy(cfg))
    opts = Options(batch=batch, seq_len=seq, dtype=dtype, activations=model)
    expr = q.expression("memory.activations_bytes", spec, opts)
    values = {**size_values(spec), **workload_values(spec, opts)}
    return int(q.value(sympy.diff(expr, size), values))


FAMILIES = ("llama", "qwen2", "mistral", "mixtral", "gpt2", "bert", "t5-encoder", "t5-decoder")
SDPA_FAMILIES = ("llama", "qwen2", "mistral", "mixtral")  # no attention dropout: CPU flash kernel


def shapes():
    return st.tuples(st.sampled_from([(16, 2, 1), (16, 4, 2), (24, 6, 3), (24, 4, 4), (32, 8, 2)]),
                     st.integers(8, 40), st.integers(1, 3), st.integers(2, 9))


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=2, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.reference
@given(shape=shapes())
def test_eager_equals_measured(family, dtype, shape):
    import saved_tensors

    (dim, heads, kv), ff, batch, seq = shape
    cfg, key, size = config(family, dim, heads, kv, ff)
    measured = saved_tensors.per_layer_bytes(cfg, batch, seq, dtype, layer_key=key)
    assert symcalc_per_layer(cfg, size, batch, seq, dtype, "eager") == measured


@pytest.mark.reference
@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
@pytest.mark.parametrize("family", SDPA_FAMILIES)
@settings(max_examples=2, deadline=None, derandomize=True)
@given(shape=shapes())
def test_sdpa_equals_measured(family, dtype, shape):
    import saved_tensors

    (dim, heads, kv), ff, batch, seq = shape
    cfg, key, size = config(family, dim, heads, kv, ff)
    measured = saved_tensors.per_layer_bytes(cfg, batch, seq, dtype, layer_key=key,
                                             attn_implementation="sdpa")
    assert symcalc_per_layer(cfg, size, batch, seq, dtype, "sdpa") == measured


@pytest.mark.reference
def test_measurement_counts_a_storage_once_and_skips_parameters():
    """The helper itself: a weight is never counted, and a tensor two nodes save is one
    storage."""
    import saved_tensors
    import torch

    lin = torch.nn.Linear(4, 4)
    x = torch.randn(3, 4, requires_grad=True)

    class Twice(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def forward(self, x):
            y = self.lin(x)  # saves x (48 bytes) and the weight
            return (y * y).sum()  # saves y twice: one storage (48 bytes)

    saved = saved_tensors.count_saved(Twice(), {"x": x})
    assert saved.total == 48 + 48


def test_selective_drops_the_attention_core_and_full_keeps_layer_inputs():
    cfg, _, _ = config("llama", 16, 4, 2, 24)
    spec = spec_from_config(cfg)
    base = Options(seq_len=10, batch=2, activations="eager")
    none = evaluate("memory.activations_bytes", spec, base)
    sel = evaluate("memory.activations_bytes", spec, base.with_(recompute="selective"))
    full = evaluate("memory.activations_bytes", spec, base.with_(recompute="full"))
    # llama bf16: float32 softmax output and its bf16 cast, n_h s^2 b each
    assert none - sel == 4 * 10 * 10 * 2 * (4 + 2)
    assert full == 1 * 2 * 10 * 2 * 16
    terms = activations.stack_terms("eager", activations.facts_of(spec, "bf16"), "single")
    assert {t.name for _, ts in terms for t in ts if t.core} == {"attention/softmax",
                                                                  "attention/softmax_cast"}

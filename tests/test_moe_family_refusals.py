"""Configs the olmoe, dbrx and glm4_moe family files refuse, each one that transformers 5.24
cannot run either: the refusal is one line naming the config key, and transformers fails on
the same config (so the family file refuses nothing that transformers would count)."""
from __future__ import annotations

import pytest

from symcalc.errors import SymcalcError
from symcalc.inputs.hf import spec_from_config

OLMOE_WIDE_HEADS = {"model_type": "olmoe", "architectures": ["OlmoeForCausalLM"], "hidden_size": 32,
                    "num_hidden_layers": 1, "num_attention_heads": 2, "head_dim": 8,
                    "intermediate_size": 8, "num_experts": 2, "num_experts_per_tok": 1,
                    "vocab_size": 40}
DBRX_TIED = {"model_type": "dbrx", "architectures": ["DbrxForCausalLM"], "d_model": 32, "n_heads": 2,
             "n_layers": 1, "vocab_size": 40, "tie_word_embeddings": True,
             "attn_config": {"clip_qkv": 8, "rope_theta": 10000}}
GLM_NULL_SHARED = {"model_type": "glm4_moe", "architectures": ["Glm4MoeForCausalLM"], "hidden_size": 32,
                   "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
                   "intermediate_size": 8, "moe_intermediate_size": 4, "n_routed_experts": 2,
                   "num_experts_per_tok": 1, "first_k_dense_replace": 0, "n_shared_experts": None,
                   "vocab_size": 40}

# (config, field, symcalc's rule, what transformers fails with)
CASES = [
    (OLMOE_WIDE_HEADS, "head_dim", "must be hidden_size / num_attention_heads or absent",
     "must match the size"),  # q_norm of width hidden_size on a 2 x 8 query
    (DBRX_TIED, "tie_word_embeddings", "must be false (transformers refuses tied embeddings for DBRX)",
     "tie_word_embeddings is not supported"),
    (GLM_NULL_SHARED, "n_shared_experts", "must be a whole number of shared experts",
     "n_shared_experts"),
]


@pytest.mark.parametrize("cfg,field,rule,_", CASES, ids=[c[0]["model_type"] for c in CASES])
def test_refused_with_the_config_key(cfg, field, rule, _):
    with pytest.raises(SymcalcError) as err:
        spec_from_config(cfg)
    assert err.value.field == field
    assert err.value.rule.startswith(rule)


@pytest.mark.reference
@pytest.mark.parametrize("cfg,fails", [(c[0], c[3]) for c in CASES], ids=[c[0]["model_type"] for c in CASES])
def test_transformers_cannot_run_it_either(cfg, fails):
    import hf_reference as H

    with pytest.raises(Exception, match=fails):  # the config class or the forward pass
        H.count_forward_flops(cfg, 1, 3, device="cpu", experts_implementation="eager")


@pytest.mark.reference
def test_the_olmoe_refusal_is_only_for_other_head_widths():
    """head_dim equal to hidden / heads is accepted and counted as transformers counts it."""
    import hf_reference as H
    cfg = dict(OLMOE_WIDE_HEADS, head_dim=16)
    assert spec_from_config(cfg).d_h == 16
    assert H.count_forward_flops(cfg, 1, 3, device="cpu", experts_implementation="eager") > 0

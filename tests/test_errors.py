"""Bad input: exit status 2, exactly one line on stderr naming the field, no traceback."""
from __future__ import annotations

import pytest

from symcalc.errors import SymcalcError
from symcalc.inputs.hf import spec_from_config
from symcalc.algebra.options import Options
from symcalc.report import report

SPEC_TOML = 'family = "decoder"\nL = 2\nd = 100\nn_h = 7\nd_ff = 64\nV = 50\n'

# id -> (config.json object or raw text or None, extra CLI args, field named on stderr)
CASES = {
    "unknown-model-type": ({"model_type": "gpt5"}, [], "model_type"),
    "non-text-model-type": ({"model_type": ["llama"]}, [], "model_type"),
    "non-text-class": ({"model_type": "llama", "architectures": [1]}, [], "architectures"),
    "null-json": ("null", [], "config.json"),
    "unknown-class": ({"model_type": "llama", "architectures": ["LlamaForSequenceClassification"]},
                      [], "architectures[0]"),
    "class-of-other-type": ({"model_type": "bert", "architectures": ["GPT2Model"]}, [],
                            "architectures[0]"),
    "d-not-divisible-hf": ({"model_type": "llama", "hidden_size": 100, "num_attention_heads": 7},
                           [], "hidden_size"),
    "kv-not-dividing-hf": ({"model_type": "mistral", "num_key_value_heads": 5}, [],
                           "num_key_value_heads"),
    "negative-size": ({"model_type": "llama", "hidden_size": -5}, [], "hidden_size"),
    "zero-size": ({"model_type": "gpt2", "n_layer": 0}, [], "n_layer"),
    "fractional-size": ({"model_type": "llama", "num_hidden_layers": 2.5}, [], "num_hidden_layers"),
    "text-size": ({"model_type": "llama", "vocab_size": "x"}, [], "vocab_size"),
    "bool-size": ({"model_type": "bert", "num_hidden_layers": True}, [], "num_hidden_layers"),
    "top-k-above-experts": ({"model_type": "mixtral", "num_local_experts": 4,
                             "num_experts_per_tok": 5}, [], "num_experts_per_tok"),
    "malformed-json": ('{"model_type": "llama",', [], "config.json"),
    "non-object-json": ("[1, 2]", [], "config.json"),
    "bad-feed-forward-proj": ({"model_type": "t5", "feed_forward_proj": "gated"}, [],
                              "feed_forward_proj"),
    "bad-feed-forward-proj-prefix": ({"model_type": "t5", "feed_forward_proj": "fancy-gelu"}, [],
                                     "feed_forward_proj"),
    "bad-tie-flag": ({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                      "tie_word_embeddings": "yes"}, [], "tie_word_embeddings"),
    # spec file (TOML) and --set
    "d-not-divisible-spec-file": (None, ["@spec.toml"], "d"),
    "d-not-divisible-set": (None, ["gpt2", "--set", "n_h=7"], "d"),
    "kv-not-dividing-set": (None, ["llama-2-7b", "--set", "n_kv=3"], "n_kv"),
    "top-k-above-experts-set": (None, ["mixtral-8x7b", "--set", "k=9"], "k"),
    "non-integer-set": (None, ["gpt2", "--set", "L=2.5"], "--set L"),
    "zero-set": (None, ["gpt2", "--set", "L=0"], "L"),
    "unknown-set-key": (None, ["gpt2", "--set", "layers=3"], "--set layers"),
    "set-without-equals": (None, ["gpt2", "--set", "L"], "--set L"),
    "bad-choice-set": (None, ["gpt2", "--set", "ffn=swiglu"], "ffn"),
    "unknown-preset": (None, ["gpt-7"], "MODEL"),
    "missing-json": (None, ["@missing/config.json"], "MODEL"),
    "missing-toml": (None, ["@missing.toml"], "MODEL"),
    "malformed-toml": (None, ["@bad.toml"], "bad.toml"),
    "name-not-text": (None, ["@named.toml"], "name"),
    # issue 3: workload and conventions
    "batch-zero": (None, ["gpt2", "--batch", "0"], "batch"),
    "batch-negative": (None, ["gpt2", "--batch", "-1"], "batch"),
    "batch-text": (None, ["gpt2", "--batch", "abc"], "batch"),
    "seq-len-zero": (None, ["gpt2", "--seq-len", "0"], "seq-len"),
    "seq-len-negative": (None, ["gpt2", "--seq-len", "-1"], "seq-len"),
    "seq-len-text": (None, ["gpt2", "--seq-len", "abc"], "seq-len"),
    "seq-len-fraction": (None, ["gpt2", "--seq-len", "1.5"], "seq-len"),
    "unknown-dtype": (None, ["gpt2", "--dtype", "fp7"], "dtype"),
    "unknown-kv-dtype": (None, ["gpt2", "--kv-dtype", "float8x"], "kv-dtype"),
    "zero-stage-4": (None, ["gpt2", "--zero", "4"], "zero"),
    "zero-stage-negative": (None, ["gpt2", "--zero", "-1"], "zero"),
    "tp-not-dividing-heads": (None, ["gpt2", "--tp", "5"], "tp"),
    "unknown-optimizer": (None, ["gpt2", "--optimizer", "lion"], "optimizer"),
    "unknown-causal": (None, ["gpt2", "--causal", "quarter"], "causal"),
}


def _args(case, tmp_path):
    config, extra, _ = CASES[case]
    (tmp_path / "spec.toml").write_text(SPEC_TOML)
    (tmp_path / "bad.toml").write_text("family = \n")
    (tmp_path / "named.toml").write_text(SPEC_TOML.replace("n_h = 7", "n_h = 4") + "name = 5\n")
    if config is not None:
        text = config if isinstance(config, str) else __import__("json").dumps(config)
        (tmp_path / "config.json").write_text(text)
        return [tmp_path / "config.json", *extra]
    return [str(tmp_path / a[1:]) if a.startswith("@") else a for a in extra]


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_one_line_exit_2(case, tmp_path, cli):
    run = cli("report", *_args(case, tmp_path))
    field = CASES[case][2]
    assert run.returncode == 2, run.stdout
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert lines[0].startswith("symcalc: error: ")
    named = lines[0][len("symcalc: error: "):].split(": ")[0]
    assert named == field or named.startswith(field + " ") or named.endswith(f"/{field}"), lines[0]


def test_good_input_is_not_an_error(tmp_path, cli):
    """The same paths with valid values succeed (so the cases above fail for their reason)."""
    (tmp_path / "spec.toml").write_text(SPEC_TOML.replace("n_h = 7", "n_h = 5"))
    assert cli("report", tmp_path / "spec.toml", "--json").returncode == 0
    assert cli("report", "gpt2", "--set", "n_h=16", "--tp", "4", "--zero", "3", "--batch", "2",
               "--seq-len", "9", "--dtype", "int4", "--json").returncode == 0


@pytest.mark.parametrize("config,field", [
    ({"model_type": "gpt5"}, "model_type"),
    ({"model_type": "mixtral", "num_experts_per_tok": 9}, "num_experts_per_tok (k)"),
    ({"model_type": "opt", "hidden_size": 100, "num_attention_heads": 7}, "hidden_size (d)"),
    # LlamaConfig's validator refuses it before any spec rule: the family's [checks] say so
    ({"model_type": "llama", "hidden_size": 100, "num_attention_heads": 7}, "hidden_size"),
    ({"model_type": "t5", "num_heads": 6, "num_key_value_heads": 4}, None),  # T5 has no n_kv key
    ({"model_type": "qwen3_moe", "mlp_only_layers": 3}, "mlp_only_layers"),  # was a TypeError
])
def test_library_raises_symcalc_error(config, field):
    if field is None:
        spec_from_config(config)  # unknown keys are ignored, as transformers stores them
        return
    with pytest.raises(SymcalcError) as err:
        spec_from_config(config)
    assert err.value.field == field
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("opts,field", [
    (Options(batch=0), "batch"), (Options(seq_len=-3), "seq-len"), (Options(dtype="fp7"), "dtype"),
    (Options(zero=4), "zero"), (Options(batch=True), "batch"),
])
def test_options_checked_in_the_library(opts, field):
    from symcalc.inputs import presets

    with pytest.raises(SymcalcError) as err:
        report(presets.load("gpt2").spec, opts)
    assert err.value.field == field


@pytest.mark.parametrize("command", [
    ["derive", "gpt2", "--quantity", "memory.activations_bytes"],
    ["handout", "gpt2", "-o", "@h.md"],
    ["forms", "gpt2"],
    ["sweep", "gpt2", "--grid", "L=1,2"],
    ["closed-form", "gpt2"],
])
def test_every_command_checks_tensor_parallel_heads(command, tmp_path, cli):
    """The rule sits where a spec meets its workload, so no command skips it."""
    args = [str(tmp_path / a[1:]) if a.startswith("@") else a for a in command]
    run = cli(*args, "--tp", "5")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().splitlines() == [run.stderr.strip()] and "tp:" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "h.md").exists()


# Inconsistent MoE and MLA keys in a real config.json (DeepSeek-V3 and Qwen3-MoE hub configs):
# one line naming the config key and the rule, exit 2 (issue 8).
_MOE_MLA_CASES = [
    ("deepseek_v3/hub-deepseek-v3.json", {"num_experts_per_tok": 300}, "num_experts_per_tok (k): top-k"),
    ("deepseek_v3/hub-deepseek-v3.json", {"kv_lora_rank": 0}, "kv_lora_rank (r_kv): must be a positive"),
    ("deepseek_v3/hub-deepseek-v3.json", {"q_lora_rank": -3}, "q_lora_rank (r_q): must be a positive"),
    ("deepseek_v3/hub-deepseek-v3.json", {"qk_rope_head_dim": 1.5}, "qk_rope_head_dim"),
    ("deepseek_v3/hub-deepseek-v3.json", {"first_k_dense_replace": 99}, "first_k_dense_replace: the leading dense"),
    ("deepseek_v2/hub-deepseek-v2-lite.json", {"first_k_dense_replace": 28}, "first_k_dense_replace: the leading dense"),
    ("qwen3_moe/hub-qwen3-30b-a3b.json", {"num_experts_per_tok": 200}, "num_experts_per_tok (k): top-k"),
    ("qwen3_moe/hub-qwen3-30b-a3b.json", {"moe_intermediate_size": "big"}, "moe_intermediate_size (d_moe)"),
    ("phimoe/hub-phi-3.5-moe-instruct.json", {"num_local_experts": 1}, "num_local_experts: must be at least 2"),
    ("ernie4_5_moe/hub-ernie-4.5-21b-a3b.json", {"moe_layer_interval": 0}, "moe_layer_interval: must be a positive"),
    ("hunyuan_v1_moe/hub-hunyuan-a13b-instruct.json", {"head_dim": None}, "head_dim: must be set"),
    ("hunyuan_v1_moe/hub-hunyuan-a13b-instruct.json", {"moe_topk": [8, 4]}, "moe_topk: must give every layer"),
    ("hunyuan_v1_moe/hub-hunyuan-a13b-instruct.json", {"num_experts": [64, 64]}, "num_experts: must be one integer"),
    ("dots1/hub-dots.llm1.inst.json", {"n_shared_experts": None}, "n_shared_experts: must be set when"),
    ("olmo3/hub-olmo-3-7b.json", {"num_hidden_layers": 30}, "layer_types: must give each of the num_hidden_layers"),
    ("exaone4/hub-exaone-4.0-32b.json", {"layer_types": None}, "a text pattern such as 'LLLG' needs layer_types) (got 'LLLG')"),
    ("exaone4/hub-exaone-4.0-32b.json", {"layer_types": None, "sliding_window_pattern": 0},
     "sliding_window_pattern: must be a positive number of layers"),
    ("cohere2/hub-command-r7b-12-2024.json", {"sliding_window_pattern": 0}, "sliding_window_pattern: must be a positive"),
    ("smollm3/hub-smollm3-3b.json", {"no_rope_layers": [1, 0]}, "no_rope_layers: must give one 0 or 1 per layer"),
]


@pytest.mark.parametrize("hub,change,message", _MOE_MLA_CASES)
def test_inconsistent_moe_and_mla_keys(hub, change, message, cli, write_config):
    import json
    from pathlib import Path

    cfg = json.loads((Path(__file__).parent / "families" / hub).read_text(encoding="utf-8"))
    cfg.update(change)
    run = cli("report", write_config(cfg))
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symcalc: error: ") and message in lines[0], lines
    assert "Traceback" not in run.stderr

"""Model families as data: the family-file interpreter (symcalc/family_data.py), its
expression language, malformed family files, and docs/families.md's table."""
from __future__ import annotations

import ast
from symcalc import records
import importlib.util
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from symcalc.inputs import family_data as fd
from symcalc.inputs import hf
from symcalc.errors import SymcalcError
from symcalc.inputs.hf import spec_from_config

REPO = Path(__file__).resolve().parent.parent
FAMILY_DIR = REPO / "symcalc" / "inputs" / "families"
DOCS = REPO / "docs" / "families.md"
SEVEN = ("bert", "gpt2", "llama", "mistral", "qwen2", "mixtral", "t5")
MISTRAL = (FAMILY_DIR / "mistral.toml").read_text(encoding="utf-8")


def ev(text: str, config: dict | None = None, defaults: dict | None = None):
    expr = fd.parse_expression(text, "test.toml", "spec.x")
    return fd.evaluate(expr, fd.Scope(config or {}, defaults or {}), "test.toml: x")[0]


# -- the expression language -----------------------------------------------------------------
@pytest.mark.parametrize("text,config,want", [
    ("a", {"a": 5}, 5),
    ("a", {}, None),                          # neither in the file nor in [defaults]: null
    ("a", {"a": None}, None),                 # an explicit null stays null
    ("a or b", {"a": None, "b": 3}, 3),
    ("a or b", {"a": 0, "b": 3}, 0),          # or: a unless a is NULL (0 is a value)
    ("a or b", {"a": False, "b": True}, False),
    ("a or b or 7", {}, 7),
    ("a or 4 * d", {"d": 8}, 32),
    ("a + b - c", {"a": 5, "b": 4, "c": 2}, 7),
    ("a // b", {"a": 9, "b": 2}, 4),
    ("-a + 1", {"a": 3}, -2),
    ("'x' if f else 'y'", {"f": True}, "x"),
    ("'x' if f else 'y'", {"f": False}, "y"),
    ("'x' if f else 'y'", {"f": None}, "y"),  # null as a condition is false
    ("f and g", {"f": True, "g": True}, True),
    ("f and g", {"f": True, "g": None}, False),
    ("f and g", {"f": False, "g": "not checked"}, False),  # short-circuit
    ("not f", {"f": False}, True),
    ("not f", {}, True),
    ("a == 0", {"a": 0}, True),
    ("a != null", {"a": None}, False),
    ("a is null", {}, True),
    ("a is not null", {"a": 3}, True),
    ("0 < a <= 4", {"a": 4}, True),
    ("0 < a <= 4", {"a": 5}, False),
    ("a in ['x', 'y']", {"a": "y"}, True),
    ("a not in [1, 2]", {"a": 3}, True),
    ("[a, 2]", {"a": 1}, [1, 2]),
    ("null", {}, None),
    ("true", {}, True),
    ("false", {}, False),
    ("count(t, 'sliding_attention')", {"t": ["sliding_attention", "full_attention"] * 3}, 3),
    ("count(t, 1)", {"t": []}, 0),
    ("len(t)", {"t": [1, 2, 3]}, 3),
    ("distinct(t)", {"t": [2, 1, 2, 1.0]}, [2, 1]),
    ("len(distinct(t))", {"t": []}, 0),
    ("min(a, b)", {"a": 3, "b": 2}, 2),
    ("max(a, 0)", {"a": -3}, 0),
    ("max(t)", {"t": [4, 9, 1]}, 9),
    ("max(0, L - w)", {"L": 24, "w": 28}, 0),
    ("max(0, L - w)", {"L": 32, "w": 28}, 4),
    ("matches(p, '(gated-)?[a-z_]+')", {"p": "gated-gelu"}, True),
    ("matches(p, '(gated-)?[a-z_]+')", {"p": "gated-"}, False),
    ("matches(p, 'x')", {"p": None}, False),   # not text: no match
    ("sparse_layers(L, 1, [])", {"L": 4}, 4),
    ("sparse_layers(L, 2, [])", {"L": 5}, 2),    # layers 1 and 3
    ("sparse_layers(L, 1, m)", {"L": 4, "m": [0, 3]}, 2),
    ("sparse_layers(L, 1, m)", {"L": 4, "m": None}, 4),
    ("deepseek_moe_layers(L, 1, 1)", {"L": 4}, 3),
    ("deepseek_moe_layers(L, k, 2)", {"L": 6, "k": 1}, 2),  # layers 2 and 4
    ("deepseek_moe_layers(L, k)", {"L": 6, "k": None}, 6),
    # Qwen4-Exp's n-gram tables: primes from the base on, each table rounded up to the divisor
    ("ngram_rows(b, h, n, m)", {"b": 50, "h": 4, "n": 2, "m": 16}, 560),  # 240, 306 -> 320
    ("ngram_rows(b, 1, 1, 1)", {"b": 53}, 53),  # a prime base is the first head's size
    ("ngram_rows(b, 2, 0, 8)", {"b": 40}, 0),   # no PLE layer
    # Qwen3.8-Flash-Next's one PLE layer: 16 primes from 20,000,000 on sum to 320,001,446
    ("ngram_rows(b, 16, 1, 128)", {"b": 20000000}, 320001536),
    ("any(f, g)", {"f": False, "g": True}, True),
    ("any(f, g)", {"f": False}, False),
    ("f or g", {"f": False, "g": True}, False),  # or is not boolean: f is not null
    ("any(a == null, a == 3)", {"a": 3}, True),
    # nested access: a constant key into an object, a constant index into a list
    ("c['num_heads']", {"c": {"num_heads": 8}}, 8),
    ("c['num_heads']", {"c": {}}, None),            # absent member: null
    ("c['num_heads']", {}, None),                   # absent object: null
    ("c['num_heads']", {"c": None}, None),          # explicit null object: null
    ("c['a']['b']", {"c": {"a": {"b": 2}}}, 2),
    ("c['a']['b']", {"c": {"a": None}}, None),
    ("c['x'] or 4", {"c": {"x": None}}, 4),
    ("r['type'] == 'yarn'", {"r": {"type": "yarn"}}, True),
    ("t[0]", {"t": ["full", "sliding"]}, "full"),
    ("t[2]", {"t": ["full", "sliding"]}, None),     # past the end: null
    ("len(c['l'])", {"c": {"l": [1, 2]}}, 2),
    ("len(f) if is_list(f) else 1", {"f": [-1, -2]}, 2),
    ("len(f) if is_list(f) else 1", {"f": -1}, 1),
    ("is_list(f)", {}, False),
])
def test_expressions(text, config, want):
    assert ev(text, config) == want


def test_names_read_file_then_defaults_then_null():
    assert ev("a", {}, {"a": 1}) == 1
    assert ev("a", {"a": 2}, {"a": 1}) == 2
    assert ev("a", {"a": None}, {"a": 1}) is None  # explicit null is not "missing"
    assert ev("a", {}, {"b": 1}) is None


def test_names_are_the_config_keys_read():
    expr = fd.parse_expression("count(layer_types, 'x') if max(a, b) > 0 else c or null",
                               "f", "k")
    assert expr.names == {"layer_types", "a", "b", "c"}
    nested = fd.parse_expression("linear_attn_config['num_heads'] or rope_scaling['type']", "f", "k")
    assert nested.names == {"linear_attn_config", "rope_scaling"}


def test_nested_defaults_come_from_the_family():
    """A nested object absent from the file is the [defaults] one (whole, not merged)."""
    assert ev("c['n']", {}, {"c": {"n": 4}}) == 4
    assert ev("c['n']", {"c": {"m": 1}}, {"c": {"n": 4}}) is None


@pytest.mark.parametrize("text,config,key,rule", [
    ("'x' if f else 'y'", {"f": "yes"}, "f", "must be true or false (got 'yes')"),
    ("'x' if f else 'y'", {"f": 1}, "f", "must be true or false (got 1)"),
    ("not f", {"f": "no"}, "f", "must be true or false (got 'no')"),
    ("f and g", {"f": True, "g": 0}, "g", "must be true or false (got 0)"),
    ("4 * d", {"d": "x"}, "d", "must be a number (got 'x'; in '4 * d')"),
    ("a + 1", {}, "a", "must be a number (got None; in 'a + 1')"),
    ("a + 1", {"a": True}, "a", "must be a number (got True; in 'a + 1')"),
    ("a // b", {"a": 4, "b": 0}, "b", "must not be 0 (divides in 'a // b')"),
    ("count(t, 1)", {"t": 5}, "t", "must be a list (got 5; in count())"),
    ("sparse_layers(L, s, [])", {"L": 4, "s": 0}, "s",
     "must be a positive integer (got 0; in sparse_layers())"),
    ("a < 3", {"a": "x"}, "a", "cannot be compared in 'a < 3' (got 'x')"),
    ("any(f, true)", {"f": 2}, "f", "must be true or false (got 2; in any())"),
    # nested values are named by their path
    ("c['n'] + 1", {"c": {"n": "x"}}, "c.n", "must be a number (got 'x'; in \"c['n'] + 1\")"),
    ("c['a']['n'] * 2", {"c": {"a": {}}}, "c.a.n",
     "must be a number (got None; in \"c['a']['n'] * 2\")"),
    ("t[1] + 1", {"t": [1, "x"]}, "t[1]", "must be a number (got 'x'; in 't[1] + 1')"),
    ("c['n']", {"c": 3}, "c", "must be an object to read 'n' (got 3; in \"c['n']\")"),
    ("t[0]", {"t": "ab"}, "t", "must be a list to read item 0 (got 'ab'; in 't[0]')"),
])
def test_value_errors_name_the_config_key(text, config, key, rule):
    with pytest.raises(SymcalcError) as err:
        ev(text, config)
    assert (err.value.field, err.value.rule) == (key, rule)


def test_literal_condition_names_the_file():
    with pytest.raises(SymcalcError) as err:
        ev("'x' if 5 else 'y'")
    assert str(err.value) == "test.toml: x: condition must be true or false (got 5)"


@pytest.mark.parametrize("text,says", [
    ("a +", "expression does not parse"),
    ("a b", "expression does not parse"),
    ("", "expression does not parse"),
    ("a.b", "forbidden construct Attribute"),
    ("a[b]", "a subscript takes one constant key"),
    ("a[-1]", "a subscript takes one constant key"),
    ("a[1:2]", "a subscript takes one constant key"),
    ("a[True]", "a subscript takes one constant key"),
    ("a[None]", "a subscript takes one constant key"),
    ("lambda: 1", "forbidden construct Lambda"),
    ("[x for x in a]", "forbidden construct ListComp"),
    ("{'a': 1}", "forbidden construct Dict"),
    ("(y := 3)", "forbidden construct NamedExpr"),
    ("a / 2", "forbidden construct Div"),
    ("a ** 2", "forbidden construct Pow"),
    ("f'{a}'", "forbidden construct JoinedStr"),
    ("1.5 * a", "forbidden literal 1.5"),
    ("__import__('os')", "unknown function '__import__'"),
    ("eval('1')", "unknown function 'eval'"),
    ("a.count(1)", "unknown function 'a.count'"),
    ("count(a)", "count() takes 2 arguments (got 1)"),
    ("max()", "max() takes 1 or more arguments (got 0)"),
    ("deepseek_moe_layers(1)", "deepseek_moe_layers() takes 2 to 3 arguments (got 1)"),
    ("max(a, key=b)", "max() takes positional arguments only"),
    ("max(*a)", "max() takes positional arguments only"),
])
def test_forbidden_expressions_refused_when_parsed(text, says):
    with pytest.raises(SymcalcError) as err:
        fd.parse_expression(text, "families/x.toml", "spec.d_ff")
    assert err.value.field == "families/x.toml"
    assert err.value.rule.startswith("spec.d_ff: " + says), err.value.rule
    assert "\n" not in str(err.value)


def test_interpreter_never_calls_eval_or_exec():
    tree = ast.parse(inspect.getsource(fd))
    called = {n.func.id for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert not called & {"eval", "exec", "compile", "__import__"}


# -- the functions against transformers' own layer rules ------------------------------------------
@pytest.mark.parametrize("L,step,mlp_only", [(4, 1, []), (6, 2, []), (5, 1, [0, 4]),
                                             (7, 3, [2]), (3, 4, [])])
@pytest.mark.reference  # imports transformers
def test_sparse_layers_matches_qwen2_moe(L, step, mlp_only):
    torch = pytest.importorskip("torch")
    import transformers
    from transformers.models.qwen2_moe import modeling_qwen2_moe as m

    cfg = transformers.Qwen2MoeConfig(
        vocab_size=10, hidden_size=8, intermediate_size=8, moe_intermediate_size=4,
        shared_expert_intermediate_size=4, num_hidden_layers=L, num_attention_heads=2,
        num_key_value_heads=2, num_experts=2, num_experts_per_tok=1, decoder_sparse_step=step,
        mlp_only_layers=mlp_only)
    with torch.device("meta"):
        model = m.Qwen2MoeModel(cfg)
    want = sum(isinstance(layer.mlp, m.Qwen2MoeSparseMoeBlock) for layer in model.layers)
    got = ev("sparse_layers(num_hidden_layers, decoder_sparse_step, mlp_only_layers)",
             {"num_hidden_layers": L, "decoder_sparse_step": step, "mlp_only_layers": mlp_only})
    assert got == want


@pytest.mark.parametrize("L,first", [(4, 0), (4, 1), (5, 3), (2, 2), (3, 7)])
@pytest.mark.reference  # imports transformers
def test_deepseek_moe_layers_matches_deepseek_v3(L, first):
    torch = pytest.importorskip("torch")
    import transformers
    from transformers.models.deepseek_v3 import modeling_deepseek_v3 as m

    cfg = transformers.DeepseekV3Config(
        vocab_size=10, hidden_size=8, intermediate_size=8, moe_intermediate_size=4,
        num_hidden_layers=L, num_attention_heads=2, num_key_value_heads=2, n_routed_experts=2,
        num_experts_per_tok=1, n_group=1, topk_group=1, first_k_dense_replace=first,
        q_lora_rank=4, kv_lora_rank=4, qk_nope_head_dim=2, qk_rope_head_dim=2, v_head_dim=2)
    with torch.device("meta"):
        model = m.DeepseekV3Model(cfg)
    want = sum(isinstance(layer.mlp, m.DeepseekV3MoE) for layer in model.layers)
    assert ev("deepseek_moe_layers(L, k, 1)", {"L": L, "k": first}) == want


# -- spec_from_config through family data ----------------------------------------------------------
def test_unknown_model_type_lists_every_family():
    with pytest.raises(SymcalcError) as err:
        spec_from_config({"model_type": "xyz"})
    names = ", ".join(sorted(p.stem for p in FAMILY_DIR.glob("*.toml")))
    assert str(err.value) == (f"model_type: must be one of {names} (got 'xyz'); "
                              "see docs/families.md")


def test_unknown_model_type_cli_one_line_exit_2(cli, write_config):
    run = cli("report", write_config({"model_type": "xyz"}), "--json")
    assert run.returncode == 2 and run.stdout == ""
    (line,) = run.stderr.splitlines()
    first = fd.family_names()[0]  # the known types, sorted
    assert line.startswith(f"symcalc: error: model_type: must be one of {first}, ")
    assert ", bert, " in line
    assert line.endswith("(got 'xyz'); see docs/families.md")


def test_unknown_class_message():
    with pytest.raises(SymcalcError) as err:
        spec_from_config({"model_type": "t5", "architectures": ["T5ForQuestionAnswering"]})
    assert str(err.value) == ("architectures[0]: must be a t5 class symcalc knows (T5Model, "
                              "T5ForConditionalGeneration, T5EncoderModel); "
                              "got 'T5ForQuestionAnswering'")


@pytest.mark.parametrize("config,field,rule", [
    ({"model_type": "gpt2", "n_inner": -5}, "n_inner (d_ff)", "must be a positive integer (got -5)"),
    ({"model_type": "gpt2", "n_embd": "x"}, "n_embd", "must be a number (got 'x'; in 'n_inner or 4 * n_embd')"),
    ({"model_type": "gpt2", "n_embd": 0}, "n_embd (d)", "must be a positive integer (got 0)"),
    ({"model_type": "t5", "num_decoder_layers": 0}, "num_decoder_layers (L_dec)",
     "must be a positive integer (got 0)"),
    ({"model_type": "t5", "num_layers": -1}, "num_layers (L)", "must be a positive integer (got -1)"),
    ({"model_type": "mistral", "sliding_window": -1}, "sliding_window (W)",
     "must be a positive integer (got -1)"),
    ({"model_type": "llama", "mlp_bias": "no"}, "mlp_bias (ffn_bias)", "must be true or false (got 'no')"),
    ({"model_type": "llama", "attention_bias": 1}, "attention_bias", "must be true or false (got 1)"),
    ({"model_type": "qwen2", "use_sliding_window": "on"}, "use_sliding_window",
     "must be true or false (got 'on')"),
    ({"model_type": "t5", "feed_forward_proj": "gated"}, "feed_forward_proj",
     "must be 'ACT' or 'gated-ACT' (got 'gated')"),
    ({"model_type": "t5", "feed_forward_proj": "gated-gated"}, "feed_forward_proj",
     "must be 'ACT' or 'gated-ACT' (got 'gated-gated')"),
    ({"model_type": "t5", "feed_forward_proj": 3}, "feed_forward_proj",
     "must be 'ACT' or 'gated-ACT' (got 3)"),
    ({"model_type": "bert", "architectures": ["BertForMaskedLM"], "tie_word_embeddings": "y"},
     "tie_word_embeddings", "must be true or false (got 'y')"),
    # MambaConfig and Mamba2Config type expand as an integer (a float is refused by transformers)
    ({"model_type": "mamba", "expand": 2.0}, "expand, hidden_size (d_ff)",
     "must be a positive integer (got 1536.0)"),
    ({"model_type": "mamba", "time_step_rank": "8"}, "time_step_rank (R_dt)",
     "must be a positive integer (got '8')"),
    ({"model_type": "mamba2", "num_heads": 64}, "num_heads",
     "times head_dim must equal expand * hidden_size (Mamba2Config refuses it) (got 64)"),
    # FlintConfig types head_dim and sliding_window as integers; its model masks two layer types
    ({"model_type": "flint", "head_dim": None}, "head_dim",
     "must be a whole number (FlintConfig refuses null) (got None)"),
    ({"model_type": "flint", "sliding_window": None}, "sliding_window",
     "must be a whole number (FlintConfig refuses null) (got None)"),
    ({"model_type": "flint", "num_hidden_layers": 2, "layer_types": ["full_attention", "chunked_attention"]},
     "layer_types", "must give each of the num_hidden_layers layers as sliding_attention or "
     "full_attention (got ['full_attention', 'chunked_attention'])"),
])
def test_config_errors_name_the_key(config, field, rule):
    with pytest.raises(SymcalcError) as err:
        spec_from_config(config)
    assert (err.value.field, err.value.rule) == (field, rule)


def test_roles_add_to_the_base():
    bert = spec_from_config({"model_type": "bert"})
    mlm = spec_from_config({"model_type": "bert", "architectures": ["BertForMaskedLM"],
                            "tie_word_embeddings": False})
    assert (bert.pooler, bert.mlm_head, bert.head) == (True, False, "none")
    assert (mlm.pooler, mlm.mlm_head, mlm.head, mlm.head_bias) == (False, True, "untied", True)
    enc = spec_from_config({"model_type": "t5", "architectures": ["T5EncoderModel"],
                            "num_decoder_layers": 3})
    full = spec_from_config({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"],
                             "num_decoder_layers": 3})
    assert (enc.family, enc.L_dec, enc.head) == ("encoder", None, "none")
    assert (full.family, full.L_dec, full.head) == ("encoder-decoder", 3, "tied")


def test_source_names_model_type_and_class():
    spec = spec_from_config({"model_type": "mixtral", "architectures": ["MixtralForCausalLM"]},
                            name="m")
    assert (spec.name, spec.source) == ("m", "Hugging Face config (mixtral, MixtralForCausalLM)")


def test_compat_views():
    assert hf.CLASSES["T5EncoderModel"] == ("t5", "encoder")
    assert hf.BARE["llama"] == "LlamaModel"
    assert hf.DEFAULTS["gpt2"]["n_embd"] == 768
    with pytest.raises(TypeError):
        hf.DEFAULTS["gpt2"]["n_embd"] = 1  # read-only
    with pytest.raises(AttributeError):
        hf.HF_KEYS  # noqa: B018 -- derived from the expressions now


@pytest.mark.parametrize("model_type", SEVEN)
def test_the_seven_original_families_are_files(model_type):
    family = fd.load_families()[model_type]
    assert family.label == f"families/{model_type}.toml"
    assert family.classes[family.bare_class]
    assert all(s.strip() for s in family.sources)


def test_family_files_cached():
    assert fd.load_families() is fd.load_families()


def test_preset_quick_path_never_loads_family_files():
    code = ("import sys, io, contextlib\nfrom symcalc.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(['report', 'gpt2', '--json'])\n"
            "    except SystemExit: pass\n"
            "print(sorted(m for m in sys.modules if m in ('symcalc.inputs.family_data', "
            "'symcalc.inputs.hf_cache', 'sympy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# -- malformed family files --------------------------------------------------------------------
def write_family(tmp_path: Path, text: str, name: str = "mistral") -> str:
    folder = tmp_path / "families"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.toml").write_text(text, encoding="utf-8")
    return str(folder)


def load_error(tmp_path: Path, text: str, name: str = "mistral") -> str:
    folder = write_family(tmp_path, text, name)
    with pytest.raises(SymcalcError) as err:
        fd.load_families(folder)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_an_injected_folder_works(tmp_path):
    folder = write_family(tmp_path, MISTRAL.replace('W = "sliding_window"', 'W = "17"'))
    spec = spec_from_config({"model_type": "mistral"}, folder=folder)
    assert spec.W == 17
    with pytest.raises(SymcalcError) as err:
        spec_from_config({"model_type": "llama"}, folder=folder)
    assert str(err.value) == ("model_type: must be one of mistral (got 'llama'); "
                              "see docs/families.md")


def test_the_packaged_mistral_file_loads_from_a_folder(tmp_path):
    folder = write_family(tmp_path, MISTRAL)
    assert spec_from_config({"model_type": "mistral"}, folder=folder) == \
        spec_from_config({"model_type": "mistral"})


def _drop_table(text: str, header: str) -> str:
    lines, out, skipping = text.splitlines(), [], False
    for line in lines:
        if line.startswith("["):
            skipping = line.strip() == header
        if not skipping:
            out.append(line)
    return "\n".join(out) + "\n"


MALFORMED = {
    "bad-toml": (lambda t: t + "\nthis is = = not toml\n", "families/mistral.toml: is not valid TOML ("),
    "no-model-type": (lambda t: t.replace('model_type = "mistral"\n', ""),
                      "families/mistral.toml: model_type: is required"),
    "model-type-not-file-name": (lambda t: t.replace('model_type = "mistral"', 'model_type = "mistrel"'),
                                 "families/mistral.toml: model_type: must match the file name"),
    "no-description": (lambda t: t.replace("description = ", "#"),
                       "families/mistral.toml: description: is required"),
    "no-sources": (lambda t: t.replace("sources = [", "#").replace('"Jiang et al. 2023, Mistral 7B"]', ""),
                   "families/mistral.toml: sources: is required"),
    "unknown-top-key": (lambda t: "colour = 3\n" + t, "families/mistral.toml: colour: is not a family-file key"),
    "no-not-modelled": (lambda t: re.sub(r"not_modelled = \[.*?\]\n", "", t, flags=re.S),
                        "families/mistral.toml: not_modelled: is required, a list of short phrases"),
    "not-modelled-text": (lambda t: re.sub(r"not_modelled = \[.*?\]\n", 'not_modelled = "x"\n', t, flags=re.S),
                          "families/mistral.toml: not_modelled: is required, a list of short phrases"),
    "not-modelled-blank": (lambda t: t.replace("not_modelled = [", 'not_modelled = [" ",'),
                           "families/mistral.toml: not_modelled: is required, a list of short phrases"),
    "no-classes": (lambda t: _drop_table(t, "[classes]"), "families/mistral.toml: classes: is required"),
    "bare-not-a-class": (lambda t: t.replace('bare_class = "MistralModel"', 'bare_class = "Foo"'),
                         "families/mistral.toml: bare_class: must be one of [classes]"),
    "no-spec": (lambda t: _drop_table(t, "[spec]"), "families/mistral.toml: spec: is required"),
    "unknown-spec-field": (lambda t: t.replace('V = "vocab_size"', 'V = "vocab_size"\nwidth = "hidden_size"'),
                           "families/mistral.toml: spec.width: is not a symcalc spec field"),
    "unknown-fixed-field": (lambda t: t.replace('family = "decoder"', 'family = "decoder"\nkind = "x"'),
                            "families/mistral.toml: fixed.kind: is not a symcalc spec field"),
    "spec-sets-name": (lambda t: t.replace('V = "vocab_size"', 'V = "vocab_size"\nname = "x"'),
                       "families/mistral.toml: spec.name: is not a symcalc spec field"),
    "fixed-float": (lambda t: t.replace('family = "decoder"', 'family = "decoder"\nL = 1.5'),
                    "families/mistral.toml: fixed.L: must be text, an integer or a boolean"),
    "expression-not-text": (lambda t: t.replace('d = "hidden_size"', "d = 4"),
                            "families/mistral.toml: spec.d: must be an expression in a string"),
    "does-not-parse": (lambda t: t.replace('d_ff = "intermediate_size"', 'd_ff = "intermediate_size *"'),
                       "families/mistral.toml: spec.d_ff: expression does not parse ("),
    "forbidden": (lambda t: t.replace('d_ff = "intermediate_size"', 'd_ff = "cfg.intermediate_size"'),
                  "families/mistral.toml: spec.d_ff: forbidden construct Attribute"),
    "unknown-function": (lambda t: t.replace('d_ff = "intermediate_size"', 'd_ff = "open(intermediate_size)"'),
                         "families/mistral.toml: spec.d_ff: unknown function 'open'"),
    "role-missing": (lambda t: t.replace('MistralForCausalLM = "causal_lm"',
                                         'MistralForCausalLM = "causal_lm"\nMistralForX = "x"'),
                     "families/mistral.toml: classes.MistralForX: role 'x' has no [roles.x] table"),
    "role-unused": (lambda t: t + '\n[roles.extra.fixed]\nhead = "none"\n',
                    "families/mistral.toml: roles.extra: no class in [classes] has this role"),
    "role-bad-key": (lambda t: t + '\n[roles.bare.defaults]\nx = 1\n',
                     "families/mistral.toml: roles.bare.defaults: is not a role key"),
    "role-expression": (lambda t: t.replace("'tied' if tie_word_embeddings else 'untied'", "tie_word_embeddings ?"),
                        "families/mistral.toml: roles.causal_lm.spec.head: expression does not parse"),
    "role-unknown-field": (lambda t: t.replace('[roles.bare.fixed]\nhead = "none"', '[roles.bare.fixed]\nhed = "none"'),
                           "families/mistral.toml: roles.bare.fixed.hed: is not a symcalc spec field"),
    "fixed-and-spec": (lambda t: t.replace('family = "decoder"', 'family = "decoder"\nd = 4'),
                       "families/mistral.toml: spec.d: is in fixed too"),
    "class-role-not-text": (lambda t: t.replace('MistralModel = "bare"', "MistralModel = 1"),
                            "families/mistral.toml: classes.MistralModel: must be a role name"),
    "bad-check": (lambda t: t + '\n[checks]\nsliding_window = "sliding_window > 0"\n',
                  "families/mistral.toml: checks.sliding_window: must be { require ="),
    "check-does-not-parse": (lambda t: t + '\n[checks]\nsliding_window = { require = "> 0", rule = "x" }\n',
                             "families/mistral.toml: checks.sliding_window.require: expression does not parse"),
    "role-spec-not-a-table": (lambda t: t.replace('[roles.causal_lm.spec]\nhead = ', '[roles.causal_lm]\nspec = '),
                              "families/mistral.toml: roles.causal_lm.spec: must be a table"),
    "spec-not-a-table": (lambda t: _drop_table(t, "[spec]").replace('bare_class =', 'spec = 3\nbare_class ='),
                         "families/mistral.toml: spec: must be a table"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_family_file_is_one_error(case, tmp_path):
    edit, start = MALFORMED[case]
    text = edit(MISTRAL)
    assert text != MISTRAL
    message = load_error(tmp_path, text)
    assert message.startswith(start), message


def test_malformed_family_through_the_cli(tmp_path, cli, write_config, monkeypatch):
    """A bad family file in the package folder: one line naming file and key, exit 2."""
    code = ("import sys\nimport symcalc.inputs.family_data as fd\n"
            f"fd.FAMILIES_DIR = __import__('pathlib').Path({str(tmp_path / 'families')!r})\n"
            "from symcalc.cli import main\nsys.exit(main(sys.argv[1:]))")
    write_family(tmp_path, MISTRAL.replace('d_ff = "intermediate_size"', 'd_ff = "x +"'))
    cfg = write_config({"model_type": "mistral"})
    out = subprocess.run([sys.executable, "-c", code, "report", str(cfg)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    (line,) = out.stderr.splitlines()
    assert line.startswith("symcalc: error: families/mistral.toml: spec.d_ff: "
                           "expression does not parse ("), line


def test_check_failing_uses_its_rule(tmp_path):
    folder = write_family(tmp_path, MISTRAL + '\n[checks]\nsliding_window = { require = '
                          '"true if sliding_window == null else sliding_window >= 16", rule = "must be at least 16" }\n')
    assert spec_from_config({"model_type": "mistral", "sliding_window": 16}, folder=folder).W == 16
    with pytest.raises(SymcalcError) as err:
        spec_from_config({"model_type": "mistral", "sliding_window": 8}, folder=folder)
    assert str(err.value) == "sliding_window: must be at least 16 (got 8)"


def test_every_family_file_loads():
    files = sorted(p.stem for p in FAMILY_DIR.glob("*.toml"))
    assert sorted(fd.load_families()) == files
    assert set(SEVEN) <= set(files)


# -- docs/families.md ------------------------------------------------------------------------------
def _table_module():
    spec = importlib.util.spec_from_file_location("families_table", REPO / "docs" / "families_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_table_is_current():
    """docs/families.md's table of model types is generated from the family files; when this
    fails run `python docs/families_table.py` (or pytest --update-golden) and commit."""
    table = _table_module()
    text = DOCS.read_text(encoding="utf-8")
    fresh = table.replace_table(text, table.render_table(fd.load_families()))
    if fresh != text and __import__("golden_files").updating():
        DOCS.write_text(fresh, encoding="utf-8")
        return
    assert fresh == text, "docs/families.md is stale: run `python docs/families_table.py`"


def test_not_modelled_is_read_and_listed(tmp_path):
    """not_modelled phrases reach the Family (whitespace folded) and the list under the table;
    an empty list is allowed and says so."""
    table = _table_module()
    folder = tmp_path / "families"
    folder.mkdir()
    one = MISTRAL.replace("not_modelled = [", 'not_modelled = ["a  buffer\\n that is no parameter",')
    (folder / "mistral.toml").write_text(one, encoding="utf-8")
    family = fd.load_families(str(folder))["mistral"]
    assert family.not_modelled[0] == "a buffer that is no parameter"
    assert len(family.not_modelled) == 2
    assert "  - a buffer that is no parameter\n" in table.render_not_modelled({"mistral": family})
    empty = records.replace(family, not_modelled=())
    assert ("- `mistral`: nothing beyond the shared conventions"
            in table.render_not_modelled({"mistral": empty}))


def test_docs_list_what_every_family_does_not_model():
    text = DOCS.read_text(encoding="utf-8")
    for model_type, family in fd.load_families().items():
        for phrase in family.not_modelled:
            assert f"  - {phrase}\n" in text, (model_type, phrase)


def test_docs_table_lists_every_model_type():
    text = DOCS.read_text(encoding="utf-8")
    for model_type, family in fd.load_families().items():
        assert f"| `{model_type}` |" in text
        assert family.bare_class in text


def test_docs_worked_example_is_the_real_file():
    """The worked example in docs/families.md is mistral.toml verbatim."""
    assert MISTRAL.strip() in DOCS.read_text(encoding="utf-8")


def test_docs_list_every_function():
    """The functions table of docs/families.md lists exactly the language's functions."""
    import re

    text = DOCS.read_text(encoding="utf-8")
    table = text[text.index("\nFunctions:\n"):text.index("The config keys an expression reads")]
    documented = {name for row in table.splitlines() if row.startswith("| `")
                  for name in re.findall(r"`(\w+)\(", row.split(" | ")[0])}
    assert documented == set(fd.FUNCTIONS)

"""symcalc.testing as users run it: pytest's pytester runs test files that use the plugin's
fixtures and assertions, passing and failing, on real transformers modules (meta device) and
on a hand-written PyTorch transformer with a deliberate GQA mistake."""
from __future__ import annotations

import re
import sys
from importlib.metadata import entry_points
from importlib.util import find_spec  # not import: torch must not load in this process
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)
REPO = Path(__file__).resolve().parent.parent


def plugin_args() -> list[str]:
    """Load the plugin by its module when the installed metadata does not register it yet
    (an install older than the entry point); the entry point itself is tested below."""
    registered = any(ep.value == "symcalc.testing.plugin" for ep in entry_points(group="pytest11"))
    return [] if registered else ["-p", "symcalc.testing.plugin"]


def run(pytester, source: str, *args, subprocess: bool = False):
    """Run ``source`` as a user's test file, in this process. The modules the inner session
    uses are imported here first: pytester drops the modules a run imported when it ends,
    and symcalc's caches must not outlive the module objects they hold. Files that import
    torch run in a ``subprocess`` (torch cannot be imported twice in one process).
    Hypothesis's plugin is left out of the inner session (its summary hook re-imports
    hypothesis there)."""
    import symcalc.algebra.closed_form  # noqa: F401
    import symcalc.fast.quick  # noqa: F401
    import symcalc.inputs.resolver  # noqa: F401
    import symcalc.model  # noqa: F401
    import symcalc.testing.explain  # noqa: F401
    import symcalc.testing.plugin  # noqa: F401

    pytester.makepyfile(test_user=source)
    runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    return runner(*plugin_args(), "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                  *args)


def test_entry_point_declared():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert data["project"]["entry-points"]["pytest11"] == {"symcalc": "symcalc.testing.plugin"}


def test_entry_point_loads_the_plugin(pytester):
    if plugin_args():
        pytest.skip("symcalc installed before the entry point: reinstall (pip install -e .)")
    pytester.makepyfile(test_user="def test_f(symcalc_factory):\n    assert symcalc_factory\n")
    pytester.runpytest("-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"
                       ).assert_outcomes(passed=1)


def test_closed_form_passing_and_failing(pytester):
    result = run(pytester, """
from symcalc.testing import assert_closed_form

def test_kaplan():
    assert_closed_form("gpt2", "12*L*d**2", assume="kaplan")

def test_textbook_llama_block_is_wrong():
    assert_closed_form("gpt2", "12*L*d**2 + V*d + P*d")
""")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*difference (symcalc - expected), term by term:*",
                                 "*+ 2*d   from final_norm (2*d)*",
                                 "*layer/norm/attention (2*L*d)*"])


def test_fixture_marker_and_indirect(pytester):
    result = run(pytester, """
import pytest

@pytest.mark.symcalc("mistral-7b", batch=8, seq_len=4096)
def test_kv(symcalc_model):
    assert symcalc_model.report["memory"]["kv_cache_bytes"] == 4 * 2**30
    assert symcalc_model.spec.n_kv == 8

@pytest.mark.parametrize("symcalc_model", ["gpt2", "bert-base"], indirect=True)
def test_totals(symcalc_model):
    assert symcalc_model.report["params"]["total"] in (124439808, 109482240)

def test_factory(symcalc_factory):
    assert symcalc_factory("gpt2", ["L=24", "d=1024", "n_h=16"]).report["params"]["total"] == 354823168

def test_no_model(symcalc_model):
    pass
""")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(["*symcalc_model needs @pytest.mark.symcalc*"])


TRANSFORMERS_FILE = """
import json
import torch
from transformers import AutoConfig, AutoModelForCausalLM
from symcalc.testing import assert_param_count

LLAMA = dict(hidden_size=64, intermediate_size=160, num_attention_heads=8,
             num_key_value_heads=2, num_hidden_layers=2, vocab_size=100)

def build(model_type, **keys):
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, **keys))

def config_file(tmp_path, model_type, arch, **keys):
    f = tmp_path / "config.json"
    f.write_text(json.dumps(dict(model_type=model_type, architectures=[arch], **keys)))
    return str(f)

def test_llama_matches(tmp_path):
    assert_param_count(build("llama", **LLAMA), config_file(tmp_path, "llama", "LlamaForCausalLM", **LLAMA))

def test_gpt2_preset_matches():
    assert_param_count(build("gpt2"), "gpt2")   # the fused c_attn is q, k and v at once

def test_llama_built_without_gqa(tmp_path):
    wrong = build("llama", **dict(LLAMA, num_key_value_heads=8))
    assert_param_count(wrong, config_file(tmp_path, "llama", "LlamaForCausalLM", **LLAMA))
"""


@pytest.mark.reference  # the test module it runs imports torch
def test_transformers_modules_on_meta(pytester):
    if not find_spec("transformers"):
        pytest.skip("transformers is not installed")
    result = run(pytester, TRANSFORMERS_FILE, subprocess=True)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*module 107,328, symcalc 95,040 (+12,288)*",
        "*layer/attention/k: module 8,192, symcalc 2,048 (+6,144)*",
        "*model.layers.*.self_attn.k_proj.weight has 64×64 per layer; symcalc's sizes give 16×64*",
        "*n_kv = 8 would explain it (symcalc has n_kv = 2)*",
    ])


SCRATCH_FILE = """
import pytest
import torch
from torch import nn
from symcalc.algebra.spec import make_spec
from symcalc.testing import assert_param_count

SPEC = make_spec(name="tiny-gqa", family="decoder", L=2, d=64, n_h=8, n_kv=2, d_ff=128,
                 V=100, ffn="gated", norm="rmsnorm", head="untied", position="rotary")

NAMES = {"tok_emb.weight": "embedding/token", "blocks.*.attn.wq.*": "layer/attention/q",
         "blocks.*.attn.wk.*": "layer/attention/k", "blocks.*.attn.wv.*": "layer/attention/v",
         "blocks.*.attn.wo.*": "layer/attention/o", "blocks.*.ffn.w1.*": "layer/ffn/gate",
         "blocks.*.ffn.w3.*": "layer/ffn/up", "blocks.*.ffn.w2.*": "layer/ffn/down",
         "blocks.*.norm*": "layer/norm", "norm_f.*": "final_norm", "lm_head.*": "head/weight"}


class Attention(nn.Module):
    def __init__(self, d, n_h, n_kv, gqa_mistake):
        super().__init__()
        d_h = d // n_h
        self.wq = nn.Linear(d, n_h * d_h, bias=False)
        # the mistake: keys and values as wide as the queries, not n_kv heads
        kv = d if gqa_mistake else n_kv * d_h
        self.wk = nn.Linear(d, kv, bias=False)
        self.wv = nn.Linear(d, kv, bias=False)
        self.wo = nn.Linear(n_h * d_h, d, bias=False)


class FFN(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.w1, self.w3 = nn.Linear(d, d_ff, bias=False), nn.Linear(d, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d, bias=False)


class Block(nn.Module):
    def __init__(self, gqa_mistake):
        super().__init__()
        self.norm1, self.norm2 = nn.RMSNorm(64), nn.RMSNorm(64)
        self.attn = Attention(64, 8, 2, gqa_mistake)
        self.ffn = FFN(64, 128)


class TinyGPT(nn.Module):
    def __init__(self, gqa_mistake=False):
        super().__init__()
        self.tok_emb = nn.Embedding(100, 64)
        self.blocks = nn.ModuleList(Block(gqa_mistake) for _ in range(2))
        self.norm_f = nn.RMSNorm(64)
        self.lm_head = nn.Linear(64, 100, bias=False)


def test_right():
    assert_param_count(TinyGPT(), SPEC, name_map=NAMES)

def test_gqa_mistake():
    assert_param_count(TinyGPT(gqa_mistake=True), SPEC, name_map=NAMES)

def test_builtin_rules_alone_find_it_too():
    assert_param_count(TinyGPT(gqa_mistake=True), SPEC)

def test_unknown_parameter_is_listed():
    model = TinyGPT()
    model.mystery = nn.Parameter(torch.zeros(5))
    assert_param_count(model, SPEC, name_map=NAMES)
"""


@pytest.mark.reference  # the test module it runs imports torch
def test_hand_written_transformer_with_a_gqa_mistake(pytester):
    if not find_spec("torch"):
        pytest.skip("torch is not installed")
    result = run(pytester, SCRATCH_FILE, subprocess=True)
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines([
        "*parameters of TinyGPT do not match symcalc's tiny-gqa*(+12,288)*",
        "*layer/attention/k: module 8,192, symcalc 2,048 (+6,144)*",
        "*blocks.*.attn.wk.weight has 64×64 per layer; symcalc's sizes give 16×64*",
        "*n_kv = 8 would explain it (symcalc has n_kv = 2)*",
        "*layer/attention/v: module 8,192, symcalc 2,048 (+6,144)*",
    ])
    # the built-in rules know wq/wk/w1 and norms as well as the name map does
    result.stdout.fnmatch_lines(["*test_builtin_rules_alone_find_it_too*",
                                 "*layer/attention/k: module 8,192, symcalc 2,048 (+6,144)*"])
    # a parameter no rule knows is named
    result.stdout.fnmatch_lines(["*module 82,757, symcalc 82,752 (+5)*",
                                 "*parameters no rule maps (give name_map={glob: path}): mystery*"])


# issue 25 item 5: bad arguments are clear failures, not errors from inside symcalc ---------

BAD_ARGUMENTS_FILE = """
import pytest
from symcalc.algebra.spec import make_spec
from symcalc.testing import assert_closed_form, assert_param_count

class Param:
    def __init__(self, *shape):
        self.shape = shape

class Module:  # shaped like torch.nn.Module, no torch
    def __init__(self, params):
        self.params = params
    def named_parameters(self):
        return iter(self.params)

GOOD = Module([("transformer.wte.weight", Param(50257, 768))])
SPEC = make_spec(name="tiny", family="decoder", L=2, d=64, n_h=4, d_ff=256, V=100)

def test_model_int():
    assert_closed_form(123, "12*L*d**2")

def test_model_none():
    assert_closed_form(None, "12*L*d**2")

def test_model_dict():
    assert_closed_form({"name": "gpt2"}, "12*L*d**2")

def test_model_unknown_preset():
    assert_closed_form("no-such-model", "12*L*d**2")

def test_quantity_unknown():
    assert_closed_form("gpt2", "12*L*d**2", quantity="params.nope")

def test_quantity_not_text():
    assert_closed_form("gpt2", "12*L*d**2", quantity=5)

def test_assume_unknown():
    assert_closed_form("gpt2", "12*L*d**2", assume="nope")

def test_sets_int():
    assert_closed_form("gpt2", "12*L*d**2", sets=5)

def test_sets_unknown_field():
    assert_closed_form("gpt2", "12*L*d**2", sets=["bogus=2"])

def test_expected_none():
    assert_closed_form("gpt2", None)

def test_module_not_a_module():
    assert_param_count(object(), "gpt2")

def test_module_parameter_without_shape():
    assert_param_count(Module([("a.weight", 5)]), "gpt2")

def test_module_items_not_pairs():
    assert_param_count(Module([5]), "gpt2")

def test_param_count_model_int():
    assert_param_count(GOOD, 123)

def test_name_map_not_a_mapping():
    assert_param_count(GOOD, "gpt2", name_map=["x"])

def test_name_map_values():
    assert_param_count(GOOD, "gpt2", name_map={"a*": 5})

@pytest.mark.symcalc(123)
def test_marker_model_int(symcalc_model):
    pass

@pytest.mark.symcalc("gpt2", bogus=1)
def test_marker_unknown_option(symcalc_model):
    pass

@pytest.mark.symcalc("gpt2", dtype=5)
def test_marker_option_of_the_wrong_type(symcalc_model):
    pass

@pytest.mark.symcalc("gpt2", 5)
def test_marker_sets_int(symcalc_model):
    pass

@pytest.mark.symcalc("gpt2", batch="x")
def test_marker_bad_batch(symcalc_model):
    pass

@pytest.mark.parametrize("symcalc_model", [{"sets": ["L=2"]}, ["gpt2"], 3.5], indirect=True)
def test_indirect_not_models(symcalc_model):
    pass

def test_factory_unknown_option(symcalc_factory):
    symcalc_factory("gpt2", seqlen=4)

def test_factory_not_a_model(symcalc_factory):
    symcalc_factory(object())

# what still works: a spec or a Model with sets, a string as one KEY=VALUE
def test_spec_with_sets_applies_them():  # a gated FFN: 3 d d_ff per layer, not 2
    assert_closed_form(SPEC, "L*(3*d*d_ff + 2*d*d_h*n_h + 2*d*d_h*n_kv + 4*d) + V*d + 2*d",
                       sets="ffn=gated")

def test_factory_sets_as_one_text(symcalc_factory):
    assert symcalc_factory("gpt2", "L=24").spec.L == 24

@pytest.mark.parametrize("symcalc_model", [{"name": "gpt2", "sets": ["L=3"], "batch": 2}],
                         indirect=True)
def test_indirect_dict(symcalc_model):
    assert symcalc_model.spec.L == 3 and symcalc_model.report["flops"]["batch"] == 2
"""

BAD = {  # test -> words of its one-line failure
    "test_model_int": "assert_closed_form: model: must be a preset name",
    "test_model_none": "assert_closed_form: model: must be a preset name",
    "test_model_dict": "assert_closed_form: model: must be a preset name",
    "test_model_unknown_preset": "assert_closed_form: MODEL: 'no-such-model' is not a preset",
    "test_quantity_unknown": "assert_closed_form: quantity: must be one of",
    "test_quantity_not_text": "assert_closed_form: quantity: must be text",
    "test_assume_unknown": "assert_closed_form: --assume: must be one of",
    "test_sets_int": "assert_closed_form: sets: must be KEY=VALUE texts",
    "test_sets_unknown_field": "assert_closed_form: --set bogus: is not a symcalc spec field",
    "test_expected_none": "assert_closed_form: expected: must be a formula",
    "test_module_not_a_module": "assert_param_count: module: must have named_parameters()",
    "test_module_parameter_without_shape": "assert_param_count: module: parameter 'a.weight' "
                                           "has no shape",
    "test_module_items_not_pairs": "assert_param_count: module: named_parameters() must give",
    "test_param_count_model_int": "assert_param_count: model: must be a preset name",
    "test_name_map_not_a_mapping": "assert_param_count: name_map: must map glob patterns",
    "test_name_map_values": "assert_param_count: name_map: maps glob patterns",
    "test_marker_model_int": "symcalc model: model: must be a preset name",
    "test_marker_unknown_option": "symcalc model: bogus: is not an option (options: batch,",
    "test_marker_option_of_the_wrong_type": "symcalc model: dtype: must be text",
    "test_marker_sets_int": "symcalc model: sets: must be KEY=VALUE texts",
    "test_marker_bad_batch": "symcalc model: batch: must be a positive integer",
    "test_indirect_not_models": "symcalc model: ",
    "test_factory_unknown_option": "symcalc model: seqlen: is not an option",
    "test_factory_not_a_model": "symcalc model: model: must be a preset name",
}


def test_bad_arguments_are_clear_failures(pytester):
    """Issue 25 item 5: each bad argument -- a model that is no model, an unknown option,
    sets that are not KEY=VALUE texts, a module without named_parameters(), a name_map of
    the wrong shape, an unknown preset -- fails its test with one line naming the argument
    and the rule; before, most ended in a TypeError, AttributeError or a traceback through
    symcalc's modules."""
    result = run(pytester, BAD_ARGUMENTS_FILE, "-rfE", subprocess=True)  # sympy's lazy
    # modules, dropped by an in-process run before, would be imported twice
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 3, result.stdout.str()[-3000:]
    assert outcomes.get("failed", 0) + outcomes.get("errors", 0) == len(BAD) + 2
    out = result.stdout.str()
    # each failure's section ("___ test_x ___" or "___ ERROR at setup of test_x ___") holds
    # its one line
    sections = re.split(r"\n_{3,} (?:ERROR at setup of )?(\S+) _{3,}\n", out)
    found = dict(zip(sections[1::2], sections[2::2]))
    for name, words in BAD.items():
        section = next((v for k, v in found.items() if k.split("[")[0] == name), "")
        assert words in section, (name, words, section[:500])
    for leak in ("TypeError", "AttributeError", "NameError", "Traceback",
                 "site-packages/symcalc", "symcalc/inputs/", "symcalc/algebra/"):
        assert leak not in out, (leak, out[-3000:])

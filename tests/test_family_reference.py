"""Every model family against transformers (issue 8 item 5).

For every test config ``tests/families/<model_type>/*.json`` (tiny configs, one per switch
combination, and ``hub-<preset>.json``, the real config.json of the family's flagship):
``symcalc.hf.spec_from_config`` -> params total == ``num_parameters()`` (meta device) and
flops.forward_matmul == FlopCounterMode (eager attention, experts through exactly their top-k)
at (batch, seq) = (2, 7) and (1, 5) (hub configs: (1, 5)).  How transformers is run:
tests/hf_reference.py.

Coverage rules (a family cannot be added without tests): every ``symcalc/inputs/families/*.toml`` has
a tiny test config, and every class in its ``[classes]`` is the class of some config (the tiny
configs here or, for the first seven families, ``hf_reference.generated_configs()``).  Every
``hub-<preset>.json`` names an existing preset whose expected_total is transformers' count and
which the hub config reads as (same Spec fields).

Hypothesis: per family, configs drawn from its tiny test configs with new sizes (layers 1-3,
heads and kv heads dividing, head dims, widths, vocabulary, experts) and new values of the
true/false keys its family file reads; each is compared with transformers.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import strategies as st

import hf_reference as H
from symcalc import presets
from symcalc.errors import SymcalcError
from symcalc.hf import read_model, spec_from_config
from symcalc.options import Options
from symcalc.report import report

WORKLOADS = [(2, 7), (1, 5)]
CONFIGS = H.family_configs()
IDS = [cid for cid, _ in CONFIGS]
FAMILY_FILES = H.family_files()
HUB = [(cid, cfg) for cid, cfg in CONFIGS if Path(cid).name.startswith("hub-")]
TINY = [(cid, cfg) for cid, cfg in CONFIGS if not Path(cid).name.startswith("hub-")]


def _report(cfg: dict, batch: int, seq_len: int) -> dict:
    return report(spec_from_config(cfg), Options(batch=batch, seq_len=seq_len))


def _outside_params(cfg: dict) -> int:
    """A multimodal config's vision tower and projector (0 for a text-only config): with
    them (``--part all``) the total is transformers' ForConditionalGeneration count."""
    return sum(o.params for o in read_model(cfg)[1])


# ---------------------------------------------------------------------------------------------
# Every config: params and forward matmul FLOPs equal transformers
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cfg", [c for _, c in CONFIGS], ids=IDS)
def test_params_equal_transformers(cfg):
    got = _report(cfg, 2, 7)["params"]["total"] + _outside_params(cfg)
    assert got == H.reference_params(cfg) + H.deliberate_param_difference(cfg)


# Tiny configs at both workloads; hub configs (a meta forward of a hub-sized model costs seconds
# of dispatch overhead) at (1, 5) only -- the same transformers count the preset is checked against.
FORWARD_CASES = [pytest.param(cfg, b, s, id=f"{cid}-{b}x{s}") for cid, cfg in TINY for b, s in WORKLOADS] + \
    [pytest.param(cfg, 1, 5, id=f"{cid}-1x5") for cid, cfg in HUB]


@pytest.mark.parametrize("cfg,batch,seq_len", FORWARD_CASES)
def test_forward_matmul_equals_flop_counter(cfg, batch, seq_len):
    got = _report(cfg, batch, seq_len)["flops"]["forward_matmul"]
    want = H.reference_forward_matmul_flops(cfg, batch, seq_len)
    assert got == want - H.deliberate_flops_difference(cfg, batch, seq_len)


# ---------------------------------------------------------------------------------------------
# Coverage: no family without configs, no class without a config
# ---------------------------------------------------------------------------------------------

def test_config_folders_are_families():
    """Each config sits in the folder of its model_type, and that family has a file."""
    assert CONFIGS, "no tests/families/*/*.json"
    for cid, cfg in CONFIGS:
        folder = cid.split("/")[0]
        assert cfg.get("model_type") == folder, f"{cid}: model_type {cfg.get('model_type')!r}"
        assert folder in FAMILY_FILES, f"{cid}: no symcalc/inputs/families/{folder}.toml"


def _exercised_classes() -> dict[str, set[str]]:
    """model_type -> classes some compared config names (no architectures = the bare class;
    a remote-code spelling such as MPTForCausalLM counts as itself)."""
    out: dict[str, set[str]] = {}
    for _, cfg in CONFIGS + H.generated_configs():
        named = (cfg.get("architectures") or [H.model_class_name(cfg)])[0]
        out.setdefault(cfg["model_type"], set()).add(named)
    return out


@pytest.mark.parametrize("model_type", sorted(FAMILY_FILES))
def test_every_family_file_has_tiny_configs(model_type):
    tiny = [cid for cid, _ in TINY if cid.startswith(model_type + "/")]
    generated = [cid for cid, cfg in H.generated_configs() if cfg["model_type"] == model_type]
    assert tiny or generated, f"symcalc/inputs/families/{model_type}.toml has no tests/families/{model_type}/*.json"


@pytest.mark.parametrize("model_type", sorted(FAMILY_FILES))
def test_every_class_of_a_family_is_exercised(model_type):
    family = FAMILY_FILES[model_type]
    listed = set(family.get("classes", {}))
    assert family.get("bare_class") in listed, f"bare_class {family.get('bare_class')!r} not in [classes]"
    missing = listed - _exercised_classes().get(model_type, set())
    assert not missing, f"classes of {model_type}.toml without a test config: {sorted(missing)}"
    for name in listed:
        assert H.transformers_class(model_type, name), f"transformers has no class {name} (nor one differing in case)"


# ---------------------------------------------------------------------------------------------
# Hub configs of the flagships: preset, expected total, transformers
# ---------------------------------------------------------------------------------------------

def _hub_preset(cid: str) -> str:
    return Path(cid).name[len("hub-"):]


def _as_preset_class(cid: str, cfg: dict) -> dict:
    """The hub config with the preset's ``reference`` class (as tests/test_presets.py does)."""
    out = copy.deepcopy(cfg)
    out["architectures"] = [presets.load(_hub_preset(cid)).reference]
    return out


# Spec fields that name or describe rather than size a model.
_NOT_COMPARED = ("name", "source")


@pytest.mark.parametrize("cid,cfg", HUB, ids=[c for c, _ in HUB])
def test_hub_config_is_a_preset(cid, cfg):
    name = _hub_preset(cid)
    assert name in presets.names(), f"{cid}: no symcalc/inputs/presets/{name}.toml"
    preset = presets.load(name)
    assert preset.reference, f"preset {name} has no reference class"
    assert preset.reference in FAMILY_FILES[cfg["model_type"]]["classes"]


@pytest.mark.parametrize("cid,cfg", HUB, ids=[c for c, _ in HUB])
def test_hub_expected_total_is_transformers(cid, cfg):
    preset = presets.load(_hub_preset(cid))
    full = _as_preset_class(cid, cfg)  # a multimodal preset is its language model
    assert H.reference_params(full) == preset.expected_total + _outside_params(full)
    assert report(preset.spec, Options(batch=1, seq_len=5))["params"]["total"] == preset.expected_total


@pytest.mark.parametrize("cid,cfg", HUB, ids=[c for c, _ in HUB])
def test_hub_config_reads_as_the_preset(cid, cfg):
    preset = presets.load(_hub_preset(cid))
    spec = spec_from_config(_as_preset_class(cid, cfg))
    got = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec) if f.name not in _NOT_COMPARED}
    want = {f.name: getattr(preset.spec, f.name) for f in dataclasses.fields(spec) if f.name not in _NOT_COMPARED}
    differ = {k: (got[k], want[k]) for k in got if got[k] != want[k]}
    assert not differ, f"spec field: (hub config, preset) {differ}"


@pytest.mark.parametrize("cid,cfg", HUB, ids=[c for c, _ in HUB])
def test_hub_preset_forward_matmul_is_transformers(cid, cfg):
    preset = presets.load(_hub_preset(cid))
    got = report(preset.spec, Options(batch=1, seq_len=5))["flops"]["forward_matmul"]
    full = _as_preset_class(cid, cfg)
    assert got == H.reference_forward_matmul_flops(full, 1, 5) - H.deliberate_flops_difference(full, 1, 5)


# ---------------------------------------------------------------------------------------------
# Hypothesis: drawn configs per family
# ---------------------------------------------------------------------------------------------

_LAYERS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")
_HEADS = ("num_attention_heads", "n_head", "n_heads", "num_heads")
_KV_HEADS = ("num_key_value_heads", "num_kv_heads")
_HIDDEN = ("hidden_size", "n_embd", "n_embed", "d_model")
_WIDTHS = ("intermediate_size", "ffn_dim", "n_inner", "d_ff", "moe_intermediate_size",
           "shared_expert_intermediate_size", "ffn_hidden_size")
_EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts")
_NAMES_NOT_KEYS = {"null", "true", "false", "None", "True", "False"}


def _expression_names(text) -> set[str]:
    if not isinstance(text, str):
        return set()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return set()
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - calls - _NAMES_NOT_KEYS


def keys_read(model_type: str) -> set[str]:
    """Config keys the family file's expressions read ([spec], [roles.*.spec], [checks])."""
    family = FAMILY_FILES[model_type]
    texts = list(family.get("spec", {}).values())
    for role in family.get("roles", {}).values():
        texts += list(role.get("spec", {}).values())
    checks = family.get("checks", [])
    for check in checks if isinstance(checks, list) else checks.values():
        if isinstance(check, dict):
            texts += list(check.values())
        else:
            texts.append(check)
    return set().union(*(_expression_names(t) for t in texts)) if texts else set()


def _first(cfg: dict, keys: tuple[str, ...], read: set[str] = frozenset()) -> str | None:
    """The first of ``keys`` the config sets to an integer, else the first the family reads."""
    present = next((k for k in keys if isinstance(cfg.get(k), int) and not isinstance(cfg.get(k), bool)), None)
    return present or next((k for k in keys if k in read), None)


def _small_templates(model_type: str) -> list[dict]:
    """Tiny configs of the family small enough to redraw (class-default configs are huge)."""
    out = []
    for _, cfg in TINY:
        if cfg["model_type"] == model_type and H.reference_params(cfg) <= 2_000_000:
            out.append(cfg)
    return out


@st.composite
def drawn_config(draw, model_type: str) -> dict:
    """One of the family's tiny configs with redrawn sizes and switches."""
    cfg = copy.deepcopy(draw(st.sampled_from(_small_templates(model_type))))
    family = FAMILY_FILES[model_type]
    read = keys_read(model_type)
    defaults = family.get("defaults", {})

    # layers and what depends on their number
    L = draw(st.integers(1, 3))
    if (key := _first(cfg, _LAYERS, read)) is not None:
        cfg[key] = L
    if isinstance(cfg.get("layer_types"), list) and cfg["layer_types"]:
        kinds = sorted(set(cfg["layer_types"]))
        cfg["layer_types"] = draw(st.lists(st.sampled_from(kinds), min_size=L, max_size=L))
    if isinstance(cfg.get("no_rope_layers"), list):  # SmolLM3: one 0/1 flag per layer
        cfg["no_rope_layers"] = draw(st.lists(st.sampled_from([0, 1]), min_size=L, max_size=L))
    if isinstance(cfg.get("mlp_only_layers"), list):
        cfg["mlp_only_layers"] = sorted(draw(st.sets(st.integers(0, L - 1), max_size=L)))
    if isinstance(cfg.get("first_k_dense_replace"), int):
        cfg["first_k_dense_replace"] = draw(st.integers(0, L - 1))
    if isinstance(cfg.get("max_window_layers"), int):
        cfg["max_window_layers"] = draw(st.integers(0, L))

    # heads: keep the template's kind (MHA, MQA or GQA)
    h_key, kv_key = _first(cfg, _HEADS, read), _first(cfg, _KV_HEADS, read)
    n_h0 = cfg.get(h_key, defaults.get(h_key)) if h_key else None
    n_kv0 = cfg.get(kv_key, defaults.get(kv_key)) if kv_key else None
    if n_kv0 == 1:
        n_kv, n_h = 1, draw(st.integers(1, 4))
    elif n_kv0 is not None and n_kv0 == n_h0:
        n_kv = n_h = draw(st.integers(1, 4))
    else:
        n_kv = draw(st.integers(1, 3))
        n_h = n_kv * draw(st.integers(1, 3))
    if h_key:
        cfg[h_key] = n_h
    if kv_key:
        cfg[kv_key] = n_kv
    # even head dims that stay even under partial rotary factors of 1/2 and 1/4
    d_h = draw(st.sampled_from([8, 16]))
    if (key := _first(cfg, _HIDDEN, read)) is not None and n_h0:
        cfg[key] = n_h * d_h
        if isinstance(cfg.get("word_embed_proj_dim"), int):  # OPT
            cfg["word_embed_proj_dim"] = cfg[key] if cfg["word_embed_proj_dim"] == cfg.get(key) \
                else draw(st.integers(4, 40))
    if isinstance(cfg.get("head_dim"), int):
        cfg["head_dim"] = draw(st.sampled_from([8, 16, 24]))
    if isinstance(cfg.get("rotary_dim"), int):  # GPT-J
        cfg["rotary_dim"] = draw(st.sampled_from([2, 4, d_h]))
    if isinstance(cfg.get("kv_lora_rank"), int):  # MLA
        # even sizes: DeepSeek-V2's complex rotary needs the rope slices at even strides
        even = st.integers(1, 6).map(lambda n: 2 * n)
        cfg["kv_lora_rank"] = draw(even)
        cfg["qk_nope_head_dim"] = draw(even)
        cfg["qk_rope_head_dim"] = draw(st.sampled_from([2, 4, 8]))
        cfg["v_head_dim"] = draw(even)
        if isinstance(cfg.get("q_lora_rank"), int):
            cfg["q_lora_rank"] = draw(even)
        if isinstance(cfg.get("head_dim"), int):
            cfg["head_dim"] = cfg["qk_rope_head_dim"]

    # widths and vocabulary
    for key in _WIDTHS:
        if isinstance(cfg.get(key), int) and not isinstance(cfg.get(key), bool):
            cfg[key] = draw(st.integers(2, 48))
    if isinstance(cfg.get("expansion_ratio"), int):  # MPT
        cfg["expansion_ratio"] = draw(st.integers(1, 4))
    V = draw(st.integers(16, 128))
    cfg["vocab_size"] = V
    for key, value in list(cfg.items()):
        if key.endswith("_token_id") and isinstance(value, int):
            cfg[key] = min(value, V - 1)
        elif key.endswith("_token_id") and isinstance(value, list):
            cfg[key] = [min(v, V - 1) for v in value]

    # experts (DeepSeek: groups divide the experts, top-k within the chosen groups)
    if (key := _first(cfg, _EXPERTS, read)) is not None:
        groups = cfg.get("n_group") if isinstance(cfg.get("n_group"), int) else 1
        # DeepSeek-V3 scores a group by its top-2 experts: at least 2 experts per group
        per_group = draw(st.integers(2 if "n_group" in cfg else 1, max(2, 6 // groups)))
        E = groups * per_group
        cfg[key] = E
        if isinstance(cfg.get("topk_group"), int):
            cfg["topk_group"] = draw(st.integers(1, groups))
            reachable = cfg["topk_group"] * (E // groups)
        else:
            reachable = E
        if isinstance(cfg.get("num_experts_per_tok"), int) or "num_experts_per_tok" in read:
            cfg["num_experts_per_tok"] = draw(st.integers(1, reachable))
        if isinstance(cfg.get("n_shared_experts"), int) and cfg["n_shared_experts"] > 0:
            cfg["n_shared_experts"] = draw(st.integers(1, 2))

    # the true/false keys the family file reads
    for key in sorted(read):
        value = cfg.get(key, defaults.get(key))
        if isinstance(value, bool):
            cfg[key] = draw(st.booleans())
    cfg["tie_word_embeddings"] = draw(st.booleans())
    if "sliding_window" in cfg and isinstance(cfg["sliding_window"], int):
        cfg["sliding_window"] = draw(st.integers(2, 9))
    return cfg


# Configs transformers builds and runs that a family file refuses on purpose, with one error
# line (message fragment -> why).  Drawn configs hitting these are discarded, not failed.
DELIBERATE_REFUSALS = {
    "zero shared experts with mlp_bias": "DeepSeek-V2/V3: without shared experts transformers still "
                                         "builds a lone shared down_proj bias that no Spec field models",
    "routes every token to two experts": "PhiMoE with one expert: sparsemixer still makes two picks, "
                                         "so the single expert runs twice (k = 2 > E = 1)",
}

# Examples per family (a deeper local run: SYMCALC_FAMILY_EXAMPLES=50 pytest -k drawn ...)
EXAMPLES = int(os.environ.get("SYMCALC_FAMILY_EXAMPLES", "4"))

HYPOTHESIS_FAMILIES = sorted({cfg["model_type"] for _, cfg in TINY})


def _accepted_by_transformers(cfg: dict, batch: int, seq_len: int) -> bool:
    """transformers builds the model and runs its forward pass (both cached for the check)."""
    try:
        H.reference_params(cfg)
        H.reference_forward_matmul_flops(cfg, batch, seq_len)
    except Exception:  # noqa: BLE001 - the drawn combination is not a model transformers runs
        return False
    return True


@pytest.mark.parametrize("model_type", HYPOTHESIS_FAMILIES)
def test_drawn_configs_equal_transformers(model_type):
    if not _small_templates(model_type):
        pytest.skip(f"{model_type}: no tiny config small enough to redraw")

    # no shrinking: a failing example is reported as drawn, and the file's time stays bounded
    @settings(max_examples=EXAMPLES, deadline=None, database=None, phases=(Phase.generate,),
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(cfg=drawn_config(model_type), batch=st.integers(1, 2), seq_len=st.integers(1, 6))
    def check(cfg, batch, seq_len):
        if not _accepted_by_transformers(cfg, batch, seq_len):
            reject()
        try:
            spec = spec_from_config(cfg)
        except SymcalcError as err:
            if any(text in str(err) for text in DELIBERATE_REFUSALS):
                reject()
            pytest.fail(f"transformers builds this config but symcalc refuses it: {err}\n{cfg}")
        rep = report(spec, Options(batch=batch, seq_len=seq_len))
        got = rep["params"]["total"] + _outside_params(cfg)
        assert got == H.reference_params(cfg) + H.deliberate_param_difference(cfg), cfg
        want = H.reference_forward_matmul_flops(cfg, batch, seq_len)
        assert rep["flops"]["forward_matmul"] == want - H.deliberate_flops_difference(cfg, batch, seq_len), cfg

    check()

"""Config keys as transformers reads them, against transformers' config classes (issue 21
item 3): every family's [aliases] is its config class's attribute_map, every key a family
file reads that the class defaults has that default, and every tests/families config
re-saved by transformers (``to_json_file``, as a diff and in full) reads as the original.
No model is built here: config objects only."""
from __future__ import annotations

import dataclasses
import json

import pytest

from symcalc import records

pytestmark = pytest.mark.reference

transformers = pytest.importorskip("transformers")

import hf_reference as H  # noqa: E402  (imports torch: reference lane only)
from symcalc.inputs.family_data import load_families  # noqa: E402
from symcalc.inputs.hf import spec_from_config  # noqa: E402

FAMILIES = load_families()
CONFIGS = H.family_configs()


def config_class(model_type: str):
    return transformers.CONFIG_MAPPING[model_type]


def oriented_attribute_map(model_type: str) -> dict[str, str]:
    """attribute_map as [aliases] holds it: the spelling that is not a dataclass field ->
    the field (pairs where both or neither are fields -- a read-only property such as
    Falcon-H1's layers_block_type -- are not aliases a config.json can use)."""
    cls = config_class(model_type)
    fields = {f.name for f in dataclasses.fields(cls)}
    out = {}
    for alias, target in (getattr(cls, "attribute_map", {}) or {}).items():
        if alias in fields and target not in fields:
            out[target] = alias
        elif target in fields and alias not in fields:
            out[alias] = target
    return out


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_aliases_are_the_attribute_map(model_type):
    assert FAMILIES[model_type].aliases == oriented_attribute_map(model_type)


def _read_keys(family) -> set[str]:
    exprs = list(family.spec.values()) + [c.require for c in family.checks.values()]
    for role in family.roles.values():
        exprs += list(role.spec.values())
    return {name for e in exprs for name in e.names}


def _field_default(field):
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return field.default_factory()  # type: ignore[misc]
    return None


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_every_key_read_has_the_class_default(model_type):
    """A key an expression reads whose dataclass field defaults to a number, text, boolean or
    list is in [defaults] with that value (a None default is absence: null; a default that
    __post_init__ replaces -- "auto", -1 -- is left out, as tests/reference/test_hf_defaults.py wants)."""
    family = FAMILIES[model_type]
    cls = config_class(model_type)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    built = H.class_defaults(model_type)
    missing, wrong = [], []
    for key in sorted(_read_keys(family) & set(fields)):
        want = _field_default(fields[key])
        if want is None or isinstance(want, dict) or not isinstance(
                want, (bool, int, float, str, list)):
            continue
        # (a per-layer attribute, Gemma 4's head_dim, refuses plain access: its stored value)
        if vars(built).get(key, getattr(built, key, want) if key not in vars(built) else None) != want:
            continue  # derived in __post_init__ ("auto", -1, a per-layer list): left out, null
        if key not in family.defaults:
            missing.append((key, want))
        elif family.defaults[key] != want:
            wrong.append((key, family.defaults[key], want))
    assert not missing and not wrong, f"missing {missing}, different {wrong}"


def _resaved(cfg: dict, use_diff: bool, tmp_path) -> dict:
    """``cfg`` through transformers' config class and back out with to_json_file."""
    kwargs = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures")}
    hf = transformers.AutoConfig.for_model(cfg["model_type"], **kwargs)
    if cfg.get("architectures"):
        hf.architectures = list(cfg["architectures"])
    path = tmp_path / f"config-{int(use_diff)}.json"
    hf.to_json_file(path, use_diff=use_diff)
    return json.loads(path.read_text(encoding="utf-8"))


def _fields(spec) -> dict:
    return {f.name: getattr(spec, f.name) for f in records.fields(spec)
            if f.name not in ("name", "source")}


@pytest.mark.parametrize("use_diff", [True, False], ids=["diff", "full"])
@pytest.mark.parametrize("cid,cfg", H.live_sample(CONFIGS), ids=[c for c, _ in H.live_sample(CONFIGS)])
def test_resaved_config_reads_as_the_original(cid, cfg, use_diff, tmp_path):
    saved = _resaved(cfg, use_diff, tmp_path)
    # the config class's own model_type (gpt-sw3 is read with GPT2Config and saved as gpt2)
    assert saved["model_type"] == config_class(cfg["model_type"]).model_type
    assert _fields(spec_from_config(saved)) == _fields(spec_from_config(cfg))

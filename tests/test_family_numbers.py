"""Every family against recorded transformers numbers, without torch or transformers.

tests/record_reference.py measured, the way the live reference tests do (tests/hf_reference.py),
each tests/families config, each generated and preset config of tests/hf_reference.py, and the
cached forwards of tests/reference/test_decode_state.py and tests/reference/test_kv_cache_reference.py; it wrote one
JSON line per measurement to tests/data/reference/<model_type>.jsonl. Here symcalc's report
(symcalc.fast.quick.quick_report, the numbers of ``symcalc report --json``) must give:

* params.total (with the vision tower and projector of a multimodal config) = ``params`` plus
  ``deliberate_params_difference``;
* flops.forward_matmul = ``forward_matmul_flops`` minus ``deliberate_flops_difference``;
* memory.kv_cache_bytes = ``kv_cache_bytes`` plus ``window_gap_bytes`` and
  memory.recurrent_state_bytes = ``recurrent_state_bytes``, with the model's dtype as the KV
  and weight dtype (the state at symcalc's default, fp32, as transformers keeps it).

And every family file and every tests/families config has recorded lines (a new config without
them fails here: run ``python tests/record_reference.py --types <model_type>``).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from symcalc.algebra.options import Options
from symcalc.fast.quick import quick_report
from symcalc.inputs.family_data import family_names
from symcalc.inputs.hf import read_model

TESTS = Path(__file__).parent
RECORDED = TESTS / "data" / "reference"
FAMILY_CONFIGS = TESTS / "families"


def _lines() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(RECORDED.glob("*.jsonl")):
        for text in path.read_text(encoding="utf-8").splitlines():
            if text.strip():
                out.append((path.stem, json.loads(text)))
    return out


LINES = _lines()


def _id(model_type: str, line: dict) -> str:
    extra = f"-{line['dtype']}" if "dtype" in line else ""
    return f"{model_type}/{line['config']}-{line['batch']}x{line['seq_len']}{extra}"


def _config(model_type: str, line: dict) -> dict:
    if "config_json" in line:
        return line["config_json"]
    path = FAMILY_CONFIGS / model_type / line["config"]
    return json.loads(path.read_text(encoding="utf-8"))


def _by_type() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for model_type, line in LINES:
        out.setdefault(model_type, []).append(line)
    return out


BY_TYPE = _by_type()


def _misses(model_type: str, line: dict) -> list[str]:
    """What symcalc's report gets wrong on one recorded line: ``"<figure>: <got> != <want>"``."""
    cfg = _config(model_type, line)
    assert cfg["model_type"] == model_type
    spec, outside = read_model(cfg)
    dtype = line.get("dtype", "bf16")
    rep = quick_report(spec, Options(batch=line["batch"], seq_len=line["seq_len"], dtype=dtype,
                                     kv_dtype=dtype))
    pairs = []
    if "params" in line:
        pairs.append(("params", rep["params"]["total"] + sum(o.params or 0 for o in outside),
                      line["params"] + line.get("deliberate_params_difference", 0)))
    if "forward_matmul_flops" in line:
        pairs.append(("forward_matmul_flops", rep["flops"]["forward_matmul"],
                      line["forward_matmul_flops"] - line.get("deliberate_flops_difference", 0)))
    if "kv_cache_bytes" in line:
        pairs.append(("kv_cache_bytes", rep["memory"]["kv_cache_bytes"],
                      line["kv_cache_bytes"] + line.get("window_gap_bytes", 0)))
    if "recurrent_state_bytes" in line:
        pairs.append(("recurrent_state_bytes", rep["memory"]["recurrent_state_bytes"],
                      line["recurrent_state_bytes"]))
    return [f"{k}: {got} != {want}" for k, got, want in pairs if got != want]


# one test per model type, each going through its lines (1,384 tests of one line each cost
# the lane about 9 s of pytest-xdist's per-test overhead); a miss names every line it is on
@pytest.mark.parametrize("model_type", sorted(BY_TYPE))
def test_symcalc_equals_the_recorded_numbers(model_type):
    misses = {}
    for line in BY_TYPE[model_type]:
        try:
            got = _misses(model_type, line)
        except Exception as err:  # noqa: BLE001 (a crash on one line is reported with the others)
            got = [f"{type(err).__name__}: {err}"]
        if got:
            misses[_id(model_type, line)] = got
    assert not misses, misses


def test_every_family_has_recorded_numbers():
    recorded = {m for m, _ in LINES}
    missing = sorted(set(family_names()) - recorded)
    assert not missing, f"no tests/data/reference/<model_type>.jsonl for {missing}"


def test_every_family_config_has_a_recorded_line():
    recorded = {(m, x["config"]) for m, x in LINES if "params" in x}
    missing = [f"{p.parent.name}/{p.name}" for p in sorted(FAMILY_CONFIGS.glob("*/*.json"))
               if (p.parent.name, p.name) not in recorded]
    assert not missing, f"run tests/record_reference.py for: {missing}"


def test_recorded_lines_name_existing_configs():
    stale = [_id(m, x) for m, x in LINES if "config_json" not in x
             and not (FAMILY_CONFIGS / m / x["config"]).exists()]
    assert not stale, f"recorded for configs that are gone: {stale}"


def test_survey_groups_cover_every_causal_lm_type():
    """tests/data/causal_lm_groups.json (from tests/survey_causal_lm.py): each of the 196
    causal-LM types is either read by a family file or in exactly one group of the types
    still to do (a new family file moves its type out of the groups)."""
    survey = json.loads((TESTS / "data" / "causal_lm_survey.json").read_text(encoding="utf-8"))
    groups = json.loads((TESTS / "data" / "causal_lm_groups.json").read_text(encoding="utf-8"))
    types = set(survey["types"])
    assert len(types) == survey["count"] == 196
    grouped = [t for g in groups["groups"].values() for t in g["types"]]
    assert len(grouped) == len(set(grouped))
    known = set(family_names())
    assert set(grouped) == types - known
    read = groups["read_by_symcalc"]
    assert set(read["exact"]) | set(read["transformers_fails"]) == types & known

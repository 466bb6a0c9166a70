"""Multimodal configs (issue 9 item 4): a config.json whose language model is nested under
text_config is read through its wrapper family file ([wrapper], docs/families.md), the report
says which part it covers and names the vision tower and projector it left out, and
``--part all`` adds their parameters (symcalc/algebra/vision.py) so that params.total is
transformers' ForConditionalGeneration count. The per-family configs (tests/families/gemma3,
mistral3, llama4) are compared with transformers in tests/reference/test_family_reference.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import sympy as sp

from symcalc.algebra import vision
from symcalc.derivations.sources import SOURCES
from symcalc.errors import SymcalcError
from symcalc.inputs import family_data as fd
from symcalc.inputs.hf import read_model, spec_from_config

REPO = Path(__file__).resolve().parent.parent
TINY_GEMMA3 = REPO / "tests" / "families" / "gemma3" / "tiny-conditional.json"
WRAPPERS = [name for name, f in fd.load_families().items() if f.wrapper is not None]


def _tiny() -> dict:
    return json.loads(TINY_GEMMA3.read_text(encoding="utf-8"))


# -- the parts: math and sources ------------------------------------------------------------------
@pytest.mark.parametrize("role,kind", [(role, kind) for role, table in vision.TABLES.items()
                                       if role != "projector" for kind in sorted(table)])
def test_every_tower_is_a_polynomial_in_its_sizes(role, kind):
    part = vision.part(role, kind)
    assert part.role == role and part.terms
    assert part.symbols <= set(vision.SYMBOLS)
    assert part.total.is_polynomial(*[vision.SYMBOLS[s] for s in sorted(part.symbols)])
    assert all(isinstance(c, sp.Integer) and c > 0 for c in sp.Poly(part.total).coeffs())


@pytest.mark.parametrize("role,table", list(vision.TABLES.items()))
def test_every_part_names_a_known_source(role, table):
    missing = {kind: vision.part(role, kind).source for kind in table
               if vision.part(role, kind).source not in SOURCES}
    assert not missing, f"source keys not in symcalc/derivations/sources.py: {missing}"


def test_siglip_matches_the_gemma3_4b_count():
    """The SigLIP tower of google/gemma-3-4b (27 layers of 1152, MLP 4304, 896 px, patch 14,
    no pooling head) is 416,866,032 parameters in transformers 5.24 (the preset's note)."""
    sizes = {"v_L": 27, "v_d": 1152, "v_ff": 4304, "v_C": 3, "v_p": 14, "v_np": 64 * 64,
             "v_head": 0}
    assert sum(vision.numbers(vision.siglip(), sizes).values()) == 416_866_032


@pytest.mark.parametrize("model_type", WRAPPERS)
def test_wrapper_files_name_parts_that_exist_and_give_their_sizes(model_type):
    w = fd.load_family(model_type).wrapper
    for role, kind in (("vision_tower", w.vision), ("audio_tower", w.audio),
                       ("projector", w.projector)):
        if kind:
            part = vision.part(role, kind)
            assert part.symbols <= set(w.sizes), (role, kind, part.symbols - set(w.sizes))
    assert w.text_model_type in fd.family_names()


# -- reading a multimodal config ------------------------------------------------------------------
def test_the_text_part_is_the_nested_language_model():
    cfg = _tiny()
    spec, outside = read_model(cfg)
    text = dict(cfg["text_config"], architectures=["Gemma3ForCausalLM"])
    alone = spec_from_config(text)
    assert (spec.L, spec.d, spec.V, spec.W, spec.L_local) == (alone.L, alone.d, alone.V, alone.W,
                                                              alone.L_local)
    assert [o.role for o in outside] == ["vision_tower", "projector"]
    assert all(isinstance(o.params, int) and o.params > 0 for o in outside)
    assert "language model gemma3_text under text_config" in spec.source


def test_the_wrappers_tie_flag_decides_the_head():
    """Gemma3ForConditionalGeneration ties lm_head by the top-level flag, not text_config's."""
    cfg = _tiny()
    cfg["text_config"]["tie_word_embeddings"] = False
    assert spec_from_config(cfg).head == "tied"
    cfg["tie_word_embeddings"] = False
    cfg["text_config"]["tie_word_embeddings"] = True
    assert spec_from_config(cfg).head == "untied"


@pytest.mark.reference
def test_absent_nested_configs_are_transformers_defaults():
    """No text_config and no vision_config: transformers builds Gemma3TextConfig() and
    SiglipVisionConfig() (with its attention-pooling head); so does symcalc."""
    import hf_reference as H
    from symcalc.algebra.options import Options
    from symcalc.report import report

    cfg = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"]}
    spec, outside = read_model(cfg)
    total = report(spec, Options(batch=1, seq_len=4))["params"]["total"]
    assert total + sum(o.params for o in outside) == H.reference_params(cfg)
    assert outside[0].breakdown["vision_tower/head"] > 0


@pytest.mark.parametrize("change,field,rule", [
    (lambda c: c.update(text_config=5), "text_config", "must be an object (a nested config; got 5)"),
    (lambda c: c["text_config"].update(model_type="nope"), "text_config.model_type",
     "must be one of"),
    (lambda c: c["text_config"].update(model_type="gemma3"), "text_config.model_type",
     "'gemma3' cannot be the language model of Gemma3ForConditionalGeneration"),
    (lambda c: c["text_config"].update(num_hidden_layers=0), "text_config.num_hidden_layers (L)",
     "must be a positive integer (got 0)"),
])
def test_bad_nested_configs_are_one_error_naming_the_key(change, field, rule):
    cfg = _tiny()
    change(cfg)
    with pytest.raises(SymcalcError) as err:
        read_model(cfg)
    assert err.value.field == field
    assert err.value.rule.startswith(rule), err.value.rule


@pytest.mark.parametrize("reduction", [2, 4, 8, 16, 6])
def test_phi4_conformer_subsampling_stages_as_transformers_counts_them(reduction):
    """time_reduction 2 leaves no stage after the first (v_cn = 0, a count that may be 0);
    6 runs int(log2 6) = 2 stages and ceil(input_size / 4) rows, as the config's loop does."""
    import math

    cfg = json.loads(Path("tests/families/phi4_multimodal/causal-lm-small.json").read_text())
    cfg["audio_config"].update(time_reduction=reduction, input_size=37)
    tower = {o.role: o for o in read_model(cfg)[1]}["audio_tower"]
    stages, rows = int(math.log2(reduction)), 37  # Phi4MultimodalAudioConfig.__post_init__
    for _ in range(stages):
        rows = math.floor((rows - 1) / 2 + 1)
    C, d = 16, 32  # nemo_conv_channels, hidden_size
    # Phi4MultimodalAudioNemoConvSubsampling: Conv2d(1, C, 3), then per later stage a
    # depth-wise Conv2d(C, C, 3, groups=C) and a Conv2d(C, C, 1), then Linear(C rows, d)
    want = (9 * C + C) + (stages - 1) * ((9 * C + C) + (C * C + C)) + (C * rows * d + d)
    assert tower.breakdown["audio_tower/subsampling"] == want


def test_phi4_time_reduction_not_a_multiple_of_two_is_refused():
    cfg = json.loads(Path("tests/families/phi4_multimodal/causal-lm-small.json").read_text())
    cfg["audio_config"]["time_reduction"] = 3
    with pytest.raises(SymcalcError) as err:
        read_model(cfg)
    assert err.value.field == "audio_config"
    assert err.value.rule.startswith("time_reduction must be a multiple of 2")


def test_sizes_the_config_does_not_give_leave_the_count_open():
    """An image_size given as [h, w] is not a size symcalc reads: the tower's count is None
    with the reason, the language model is still reported."""
    cfg = _tiny()
    cfg["vision_config"]["image_size"] = [32, 32]
    spec, outside = read_model(cfg)
    tower = outside[0]
    assert tower.params is None and "vision_config.image_size" in tower.why
    assert outside[1].params is not None  # the projector needs no image size


# -- the command line -----------------------------------------------------------------------------
def test_report_says_part_text_and_names_what_it_left_out(cli):
    run = cli("report", TINY_GEMMA3, "--json")
    assert run.returncode == 0, run.stderr
    rep = json.loads(run.stdout)
    spec, outside = read_model(_tiny())
    assert rep["part"] == "text"
    assert rep["left_out"] == ["vision_tower", "projector"]
    assert rep["parts"]["vision_tower"] == {
        "kind": "siglip", "description": "SigLIP vision transformer", "source": "zhai2023",
        "params": outside[0].params, "included": False}
    assert rep["parts"]["text"]["params"] == rep["params"]["total"]
    assert "FLOPs and memory cover the language model only" in rep["parts_note"]
    text = cli("report", TINY_GEMMA3)
    assert "part: text" in text.stdout and "left out: vision tower" in text.stdout


@pytest.mark.reference
def test_part_all_is_transformers_full_count(cli):
    import hf_reference as H

    run = cli("report", TINY_GEMMA3, "--json", "--part", "all")
    assert run.returncode == 0, run.stderr
    rep = json.loads(run.stdout)
    text = json.loads(cli("report", TINY_GEMMA3, "--json").stdout)
    assert rep["params"]["total"] == H.reference_params(_tiny())
    extra = rep["params"]["total"] - text["params"]["total"]
    assert extra == rep["parts"]["vision_tower"]["params"] + rep["parts"]["projector"]["params"]
    assert sum(v for k, v in rep["params"]["breakdown"].items()
               if k.startswith(("vision_tower/", "projector/"))) == extra
    assert rep["left_out"] == [] and rep["part"] == "all"
    # FLOPs and memory stay the language model's
    assert rep["flops"]["forward_matmul"] == text["flops"]["forward_matmul"]
    assert rep["memory"]["kv_cache_bytes"] == text["memory"]["kv_cache_bytes"]


def test_text_only_reports_keep_their_keys(cli):
    rep = json.loads(cli("report", "llama-2-7b", "--json", "--part", "all").stdout)
    assert "part" not in rep and "parts" not in rep
    assert rep["params"]["total"] == 6_738_415_616


def test_part_all_elsewhere_is_refused_in_one_line(cli):
    run = cli("derive", TINY_GEMMA3, "--part", "all")
    assert run.returncode == 2
    assert run.stderr == ("symcalc: error: --part: all is only for report (this command covers "
                          "the language model of a multimodal config)\n")


def test_part_all_without_the_sizes_is_refused(cli, write_config):
    cfg = _tiny()
    cfg["vision_config"]["image_size"] = [32, 32]
    path = write_config(cfg)
    assert cli("report", path).returncode == 0
    run = cli("report", path, "--part", "all")
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert run.stderr.startswith("symcalc: error: --part: all needs the vision tower's sizes")


# -- malformed [wrapper] tables ------------------------------------------------------------------
GEMMA3 = (REPO / "symcalc" / "inputs" / "families" / "gemma3.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("old,new,says", [
    ('text_model_type = "gemma3_text"\n', "", "wrapper.text_model_type: is required, as text"),
    ('vision = "siglip"\n', 'vision = "siglip"\ncolour = "blue"\n', "wrapper.colour: is not a wrapper key"),
    ('vision_config = "vision_config"\n', "", "wrapper.vision_config: is required with a vision tower"),
    ("v_L = \"vision_config['num_hidden_layers']\"", "v_L = \"vision_config.num_hidden_layers\"",
     "wrapper.sizes.v_L: forbidden construct Attribute"),
])
def test_malformed_wrapper_table_is_one_error(old, new, says):
    assert old in GEMMA3
    with pytest.raises(SymcalcError) as err:
        fd.parse_family(GEMMA3.replace(old, new, 1), "families/gemma3.toml", "gemma3")
    assert err.value.field == "families/gemma3.toml"
    assert err.value.rule.startswith(says), err.value.rule

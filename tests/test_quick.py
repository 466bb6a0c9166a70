"""The quick report (generated evaluators, no sympy) equals the sympy report exactly, and
`symcalc report --json` never imports sympy, jinja2 or pint."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from configs import PRESET_CONFIGS
from strategies import models, workloads
from symcalc.inputs import presets
from symcalc.fast import quick
from symcalc.inputs.hf import spec_from_config
from symcalc.algebra.options import Options
from symcalc.report import report
from symcalc.algebra.spec import with_overrides

OPTION_SETS = {
    "default": Options(),
    "workload": Options(batch=8, seq_len=4096, context=1000),
    "int4-exact-macs": Options(batch=3, seq_len=100, dtype="int4", kv_dtype="fp32",
                               causal="exact", macs=True, nonmatmul=True, recompute="full",
                               optimizer="sgd-momentum", zero=2, dp=7, context=333),
    "half-recompute-zero": Options(causal="half", recompute="full", optimizer="sgd-momentum",
                                   zero=2, dp=7),
    "tp-sp-selective": Options(batch=2, seq_len=513, causal="half", tp=2, sequence_parallel=True,
                               recompute="selective", zero=3, dp=64, dtype="bits3", macs=True,
                               activations="eager"),
    "tp-zero1": Options(tp=4, zero=1, dp=3, kv_dtype="bits5", seq_len=77, dec_seq_len=13,
                        optimizer="adam-fp32", nonmatmul=True, activations="sdpa"),
}


def _fits(spec, opts):
    return opts.tp == 1 or (spec.n_h % opts.tp == 0 and not (spec.n_kv % opts.tp and opts.tp % spec.n_kv))


def _cases() -> list:
    """Every preset under one of the option sets, taken in turn, so that each set (the
    defaults included) meets a sixth of the presets: each sympy report costs about 0.1 s of
    CPU, and 108 presets under two sets each took 22 s of the torch-free lane. What else holds
    every preset's quick report: tests/test_presets.py (its total against the sympy
    expression), tests/test_breakdown.py (its breakdowns add up), the page's core equals it
    (tests/test_page.py), tests/test_terms.py compares every quantity with its sympy
    expression on drawn models and workloads, and the drawn models below vary the workload
    further."""
    from conftest import in_turn

    return [pytest.param(name, OPTION_SETS[key], id=f"{key}-{name}")
            for name, (key,) in in_turn(presets.names(), list(OPTION_SETS))]


@pytest.mark.parametrize("name,opts", _cases())
def test_quick_report_equals_sympy_report(name, opts):
    spec = presets.load(name).spec
    if not _fits(spec, opts):
        opts = opts.with_(tp=1, sequence_parallel=False)
    expected, got = report(spec, opts), quick.quick_report(spec, opts)
    assert got == expected
    assert json.dumps(got) == json.dumps(expected)  # same keys in the same order


def test_looped_layers_collect_every_run():
    """HRM-Text's 32 layers of weights run 128 times: with tensor parallelism every run
    all-reduces its attention and FFN outputs (2 per run, and the embedding's once), in the
    quick report as in the sympy one (the table once counted the 32 copies)."""
    spec = presets.load("hrm-text-1b").spec
    assert (spec.B_sh, spec.L) == (32, 128)
    for sp in (False, True):
        opts = Options(batch=2, seq_len=9, tp=2, sequence_parallel=sp)
        got, expected = quick.quick_report(spec, opts), report(spec, opts)
        assert got["communication"] == expected["communication"]
    tp = quick.quick_report(spec, Options(batch=2, seq_len=9, tp=2))["communication"]["tp"]
    assert tp["forward_allreduce_count"] == 2 * spec.L + 1


@pytest.mark.parametrize("name", sorted(PRESET_CONFIGS))
def test_quick_report_of_configs(name):
    spec = spec_from_config(PRESET_CONFIGS[name], name=name)
    opts = Options(batch=2, seq_len=1024)
    assert quick.quick_report(spec, opts) == report(spec, opts)


@pytest.mark.parametrize("overrides", [{"L": 7, "d": 1000, "n_h": 10, "n_kv": 5}, {"W": 1024},
                                       {"ffn": "plain", "head": "tied"}, {"E": 4, "k": 3}])
def test_quick_report_with_overrides(overrides):
    spec = with_overrides(presets.load("mistral-7b").spec, overrides)
    opts = Options(seq_len=3000)
    assert quick.quick_report(spec, opts) == report(spec, opts)


def test_evaluate_gives_the_contract_numbers():
    spec = presets.load("mistral-7b").spec
    assert quick.evaluate("params.total", spec) == 7_241_732_096
    per_token = quick.evaluate("memory.kv_cache_bytes", spec, Options(seq_len=1))
    assert per_token == 131_072


def test_unknown_quantity_is_one_clear_error():
    from symcalc.errors import SymcalcError

    with pytest.raises(SymcalcError, match="quantity: must be one of"):
        quick.evaluate("params.nope", presets.load("gpt2").spec)


NO_SYMPY = textwrap.dedent("""
    import contextlib, io, json, sys
    from symcalc.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main({argv!r})
    assert status == 0, status
    text = out.getvalue()
    assert json.loads(text) if "--json" in {argv!r} else "7,241,732,096" in text
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("sympy", "jinja2", "numpy", "pint"))
    print(json.dumps(heavy))
""")


@pytest.mark.parametrize("argv", [
    ["report", "mistral-7b", "--json"],
    ["report", "t5-small", "--json", "--batch", "4", "--seq-len", "512", "--dtype", "int4"],
    ["report", "CONFIG", "--json"],
    ["report", "mistral-7b"],
])
def test_report_imports_no_sympy(argv, write_config):
    config = write_config(PRESET_CONFIGS["Mixtral-8x7B-v0.1"])
    argv = [str(config) if a == "CONFIG" else a for a in argv]
    done = subprocess.run([sys.executable, "-c", NO_SYMPY.format(argv=argv)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_quick_report_equals_sympy_report_on_drawn_models(data):
    spec = data.draw(models())
    opts = data.draw(workloads(spec))
    assert quick.quick_report(spec, opts) == report(spec, opts)


def test_registering_every_command_imports_no_sympy():
    code = ("import sys\nfrom symcalc.commands.parser import build_parser\nbuild_parser()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sympy', 'jinja2')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_fused_gate_up_split_colwise_beside_the_experts_module():
    """Inkling's plan splits the experts' fused gate_up with colwise (torch.chunk over the
    fused rows) beside the experts module's own entry, which names gate, up and down for its
    hooks only: rank 0 holds 250,353,971,778 parameters at t = 4 (the quick table once counted
    down's width among the fused rows, 409,804,632,642)."""
    spec = presets.load("inkling").spec
    for tp, want in ((2, 492_016_071_234), (4, 250_353_971_778)):
        assert quick.quick_report(spec, Options(tp=tp))["per_rank"]["params"] == want
    assert report(spec, Options(tp=4))["per_rank"]["params"] == 250_353_971_778


@settings(max_examples=60, deadline=None)
@given(activations=st.sampled_from(["paper", "eager", "sdpa"]),
       recompute=st.sampled_from(["none", "selective", "full"]),
       causal=st.sampled_from(["full", "half", "exact"]), tp=st.sampled_from([1, 2]),
       sp=st.booleans(), zero=st.integers(0, 3), dist=st.booleans(),
       family=st.sampled_from(["decoder", "encoder"]))
def test_option_switches_are_one_hot_where_the_choices_are(activations, recompute, causal, tp,
                                                          sp, zero, dist, family):
    """options.toml's [switches]: one activation model, one of no/tensor/sequence parallelism,
    at most one ZeRO stage (the distributed optimizer is stage 1), encoders never causal."""
    from symcalc.algebra.options import switches

    spec = with_overrides(presets.load("gpt2").spec, {"family": family})
    opts = Options(activations=activations, recompute=recompute, causal=causal, tp=tp,
                   sequence_parallel=sp, zero=0 if dist else zero, distributed_optimizer=dist)
    w = switches(spec, opts)
    assert [w[f"ac_{m}"] for m in ("paper", "eager", "sdpa")].count(1) == 1
    assert w[f"ac_{activations}"] == 1
    assert w["ac_p0"] + w["ac_ptp"] + w["ac_psp"] == 1 and w["ac_psp"] == int(sp)
    assert w["ac_keep"] == 1 - w["ac_full"] == int(recompute != "full")
    assert w["ac_keep_core"] == int(recompute == "none")
    stage = 1 if dist else zero
    assert [w["sw_zero1"], w["sw_zero2"], w["sw_zero3"]] == [int(stage == k) for k in (1, 2, 3)]
    assert w["sw_causal"] == int(causal != "full" and family == "decoder")
    assert w["sw_causal_exact"] == int(causal == "exact" and family == "decoder")
    assert w["sw_decoder"] == int(family == "decoder")


def test_convention_texts_join_their_parts_as_the_file_says(monkeypatch):
    """conventions.toml's forms: a plain part, a part with `when`, a list joined (or its
    `empty` text), a text with its own `when`, and lets; a malformed part is refused."""
    from symcalc.algebra import conventions as words
    from symcalc.errors import SymcalcError

    raw = b"""
[[rules]]
let = "twice"
value = "2 * n"

[texts."a.one"]
parts = ["n={n}", { text = " big", when = "n > 3" }, " [", { join = "; ", empty = "none", items = [
    { text = "x", when = "x" }, { text = "y{twice}", when = "y" }] }, "]"]

[texts."a.two"]
when = "y"
parts = ["only with y"]

[texts."b.three"]
parts = ["other block"]
"""
    compiled = words.compile_conventions(raw)
    monkeypatch.setattr(words, "load", lambda: compiled)
    assert words.texts({"n": 5, "x": True, "y": True}, "a") == {
        "one": "n=5 big [x; y10]", "two": "only with y"}
    assert words.texts({"n": 1, "x": False, "y": False}, "a") == {"one": "n=1 [none]"}
    assert words.texts({"n": 1, "x": False, "y": True}, "a", ("one",)) == {"one": "n=1 [y2]"}
    with pytest.raises(SymcalcError, match="a part has text and when"):
        words.compile_conventions(b'[texts."a.b"]\nparts = [{ text = "t", if = "x" }]\n')

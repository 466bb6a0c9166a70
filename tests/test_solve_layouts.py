"""solve over parallel layouts (issue 22): the smallest degree that fits, every layout of N
GPUs that fits, the relation read by the one parser (names with two dots:
communication.tp.step_bytes), each figure the report's."""
from __future__ import annotations

import json

import pytest

from symcalc.algebra.options import Options
from symcalc.fast import layouts as L
from symcalc.fast.quick import quick_report
from symcalc.inputs import gpus, resolve
from symcalc.questions import accelerator_constants


def peak(name, **layout):
    rep = quick_report(resolve(name), Options(**layout))
    return rep["per_rank"]["peak_bytes"] if "per_rank" in rep else rep["memory"]["training_peak_bytes"]


def test_smallest_tp_that_fits_80gb(cli):
    res = cli("solve", "llama-2-13b", "--fit", "per_rank.peak_bytes <= 80GB", "--for", "tp", "--json")
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert got["above"] == 4 and got["below"] == 2
    assert peak("llama-2-13b", tp=4) <= 80 * 10**9 < peak("llama-2-13b", tp=2)
    assert int(got["value_above"]) == peak("llama-2-13b", tp=4)


def test_gpu_names_the_budget(cli):
    res = cli("solve", "llama-2-13b", "--for", "pp", "--gpu", "H100", "--tp", "2", "--json")
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    h100 = gpus.accelerator("H100").memory_bytes
    p = got["above"]
    assert peak("llama-2-13b", tp=2, pp=p) <= h100 < peak("llama-2-13b", tp=2, pp=got["below"])


def test_every_layout_of_16_gpus_that_fits():
    spec = resolve("mixtral-8x7b")
    opts = Options(seq_len=1024, microbatches=4, zero=1)
    relation = L.relation_of("per_rank.peak_bytes <= H100", "--fit", accelerator_constants())
    got = L.layouts(spec, opts, 16, relation)
    assert got["layouts"]
    budget = gpus.accelerator("H100").memory_bytes
    for x in got["layouts"]:
        assert x["tp"] * x["pp"] * x["cp"] * x["dp"] == 16
        assert (x["dp"] * x["cp"]) % x["ep"] == 0
        assert x["peak_bytes"] == peak("mixtral-8x7b", seq_len=1024, microbatches=4, zero=1,
                                       **{k: x[k] for k in ("tp", "pp", "cp", "dp", "ep")})
        assert x["peak_bytes"] <= budget
    keys = [(x["peak_bytes"], x["step_wire_bytes"]) for x in got["layouts"]]
    assert keys == sorted(keys)
    assert len(got["layouts"]) < got["tried"]  # some layouts do not fit


def test_communication_names_with_two_dots(cli):
    res = cli("solve", "llama-2-7b", "--fit",
              "communication.tp.step_wire_bytes + per_rank.peak_bytes <= 90GB", "--for", "tp",
              "--json")
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    t = got["above"]
    rep = quick_report(resolve("llama-2-7b"), Options(tp=t))
    assert int(got["value_above"]) == (rep["communication"]["tp"]["step_wire_bytes"]
                                       + rep["per_rank"]["peak_bytes"])


@pytest.mark.parametrize("args,field", [
    (["--layouts", "8"], "--fit"),
    (["--for", "d", "--fit", "per_rank.peak_bytes <= 80GB"], "--for"),
    (["--for", "tp", "--target", "per_rank.peak_bytes = 80GB"], "--target"),
    (["--layouts", "0", "--gpu", "H100"], "--layouts"),
    (["--for", "tp", "--fit", "per_rank.nothing <= 80GB"], "--fit"),
])
def test_bad_layout_questions_are_one_line(cli, args, field):
    res = cli("solve", "llama-2-7b", *args)
    assert res.returncode == 2 and res.stderr.startswith(f"symcalc: error: {field}"), res.stderr

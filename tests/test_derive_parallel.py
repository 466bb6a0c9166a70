"""derive --quantity per_rank.* / communication.* (issue 22): each figure worked out from the
per-rank terms on the most-loaded stage; its result is the report's figure, its closed form
shows the layout symbols (weights per rank N/t where t splits every part), and it renders in
Markdown and LaTeX with every source cited."""
from __future__ import annotations

import pytest
import sympy

from symcalc.algebra.options import Options
from symcalc.algebra.symbols import SIZES
from symcalc.commands.derive import derive_per_rank
from symcalc.derivations import derivation as dv
from symcalc.derivations.derive_parallel import QUANTITIES
from symcalc.fast.quick import quick_report
from symcalc.inputs import resolve

CASES = [
    ("llama-2-13b", dict(tp=8)),
    ("llama-2-13b", dict(tp=8, tp_plan="megatron", pp=4, microbatches=8, dp=4, zero=1)),
    ("mixtral-8x7b", dict(tp=2, ep=4, dp=8, zero=3, pp=2, microbatches=4, sequence_parallel=True)),
    ("deepseek-v2-lite", dict(tp=2, ep=8, pp=3, microbatches=2, cp=2, cp_algorithm="ulysses")),
    ("gpt2", dict(tp=4, pp=2, vpp=2, microbatches=4, tp_plan="megatron", dp=2,
                  distributed_optimizer=True)),
]


def figure(rep, quantity):
    if quantity.startswith("per_rank."):
        return rep["per_rank"][quantity.split(".", 1)[1]]
    _, dim, key = quantity.split(".")
    return rep["communication"][dim][key]


@pytest.mark.parametrize("name,layout", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_every_figure_derives_to_the_reports(name, layout):
    spec = resolve(name)
    opts = Options(seq_len=256, batch=2, **layout)
    rep = quick_report(spec, opts)
    for quantity in QUANTITIES:
        d = derive_per_rank(spec, quantity, opts)
        assert d.result.value == figure(rep, quantity), quantity
        assert d.meta["stage"] == rep["per_rank"]["stage"]
        assert all(s.source for s in d.steps() if isinstance(s, dv.Formula)), quantity


def test_llama_2_13b_weights_per_rank_closed_form():
    """hf: every projection, the token table and the head split over t, norms whole."""
    d = derive_per_rank(resolve("llama-2-13b"), "per_rank.weights_bytes", Options(tp=8))
    assert d.result.value == 3_254_691_840
    closed = next(s for s in d.steps() if isinstance(s, dv.Simplify)).after
    L, dd, dff, nh, nkv, dh, V, t = (SIZES[n].symbol for n in
                                     ("L", "d", "d_ff", "n_h", "n_kv", "d_h", "V", "t"))
    assert sympy.expand(closed - 2 * ((3 * L * dd * dff + 2 * L * dd * dh * (nh + nkv)) / t
                                      + 2 * L * dd + dd + 2 * V * dd / t)) == 0


def test_closed_form_shows_pipeline_and_zero():
    """megatron over p stages with ZeRO-3: the weights of the first stage N/(t p) and the
    padded table, sharded over N_d c."""
    opts = Options(tp=8, pp=4, microbatches=4, tp_plan="megatron", dp=2, zero=3)
    d = derive_per_rank(resolve("llama-2-13b"), "per_rank.weights_bytes", opts)
    closed = next(s for s in d.steps() if isinstance(s, dv.Simplify)).after
    p, t, N_d = SIZES["p"].symbol, SIZES["t"].symbol, SIZES["N_d"].symbol
    assert p in closed.free_symbols and t in closed.free_symbols and N_d in closed.free_symbols


@pytest.mark.parametrize("fmt", ["md", "tex"])
def test_cli_derives_the_peak(cli, fmt):
    res = cli("derive", "llama-2-13b", "--quantity", "per_rank.peak_bytes", "--tp", "8",
              "--pp", "2", "--microbatches", "4", "--format", fmt)
    assert res.returncode == 0, res.stderr
    want = quick_report(resolve("llama-2-13b"), Options(tp=8, pp=2, microbatches=4))
    assert f"{want['per_rank']['peak_bytes']:,}" in res.stdout
    assert "torch" in res.stdout  # the split's source is cited


def test_unknown_per_rank_quantity_is_one_clear_error(cli):
    res = cli("derive", "llama-2-7b", "--quantity", "per_rank.nothing", "--tp", "2")
    assert res.returncode == 2 and res.stderr.startswith("symcalc: error: quantity: ")

"""Sweeps agree point by point with single evaluations (and with sympy), overflow is never
silent, and bad grids give one clear line."""
from __future__ import annotations

import io
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy")

from symcalc.inputs import presets  # noqa: E402
from symcalc.algebra import quantities as q
from symcalc.fast import quick
from symcalc.errors import SymcalcError  # noqa: E402
from symcalc.algebra.options import Options, workload_values  # noqa: E402
from symcalc.algebra.spec import size_values, with_overrides  # noqa: E402
from symcalc.fast.sweep import parse_values, sweep  # noqa: E402

ALL = list(q.QUANTITIES)
WORKLOAD = {"batch": "batch", "seq_len": "seq_len", "dec_seq_len": "dec_seq_len"}


def _single(spec, opts, point: dict, name: str) -> int:
    sizes = {k: v for k, v in point.items() if k not in WORKLOAD}
    work = {k: v for k, v in point.items() if k in WORKLOAD}
    one = with_overrides(spec, sizes) if sizes else spec
    return quick.evaluate(name, one, opts.with_(**work))


CASES = [
    ("mistral-7b", {"d": [2048, 4096], "n_h": [16, 32], "L": [1, 32], "seq_len": [100, 5000]},
     Options(context=7000)),
    ("mistral-7b", {"W": [10, 4096], "seq_len": [100, 5000], "batch": [1, 7]},
     Options(kv_dtype="int4", tp=2, sequence_parallel=True)),
    ("llama-2-7b", {"n_kv": [1, 8, 32], "d_ff": [11008, 1], "batch": [1, 3]}, Options()),
    ("mixtral-8x7b", {"E": [2, 8], "k": [1, 2], "d_ff": [10, 4096]},
     Options(seq_len=300, causal="exact", macs=True, nonmatmul=True)),
    ("t5-small", {"L": [1, 6], "L_dec": [2, 6], "dec_seq_len": [5, 512], "d_h": [64, 10]},
     Options(recompute="selective", zero=3, dp=8)),
    ("bert-base", {"P": [128, 512, 4096], "V": [1000, 30522]}, Options(nonmatmul=True)),
    ("gpt2", {"d": [768, 1600], "n_h": [12, 25], "seq_len": [1, 1024]},
     Options(dtype="int4", tp=1, recompute="full")),
    ("qwen2-0.5b", {"d": [896, 1024], "d_ff": [4864, 100], "V": [151936, 7]},
     Options(dtype="int4", tp=1, recompute="full")),
]


@pytest.mark.parametrize("model,grid,opts", CASES, ids=[c[0] for c in CASES])
def test_sweep_agrees_point_by_point(model, grid, opts):
    spec = presets.load(model).spec
    points = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())]
    valid = []
    for p in points:
        try:
            _single(spec, opts, p, "params.total")
            valid.append(p)
        except SymcalcError:
            pass
    table = {k: [p[k] for p in valid] for k in grid}
    result = sweep(model, table=table, quantities=ALL, options=opts)
    assert len(result) == len(valid) > 0
    for i, p in enumerate(valid):
        for name in ALL:
            assert int(result.columns[name][i]) == _single(spec, opts, p, name), (p, name)


def test_grid_is_the_cartesian_product_first_key_slowest():
    r = sweep("mistral-7b", grid={"d": [2048, 4096], "L": [16, 32]}, quantities=["params.total"])
    assert [(row["d"], row["L"]) for row in r.rows()] == [(2048, 16), (2048, 32), (4096, 16),
                                                          (4096, 32)]
    assert r.columns["params.total"].dtype == np.int64
    assert int(r.columns["params.total"][-1]) == 7_241_732_096


def test_sweep_agrees_with_sympy_substitution():
    spec = presets.load("llama-3-8b").spec
    r = sweep(spec, grid={"L": [3, 32], "seq_len": [10, 8192]},
              quantities=["flops.forward_matmul", "memory.activations_bytes"])
    for row in r.rows():
        one = with_overrides(spec, {"L": row["L"]})
        opts = Options(seq_len=row["seq_len"])
        at = {**size_values(one), **workload_values(one, opts)}
        for name in r.quantities:
            assert row[name] == q.whole(q.value(q.expression(name, one, opts), at))


def test_constant_quantity_is_broadcast():
    r = sweep("gpt2", grid={"seq_len": [1, 2, 3]}, quantities=["params.total"])
    assert list(r.columns["params.total"]) == [124_439_808] * 3


def test_overflow_is_never_silent():
    grid = {"V": [10**11], "d": [10**8]}
    with pytest.raises(SymcalcError, match="int64"):
        sweep("mistral-7b", grid=grid)
    exact = sweep("mistral-7b", grid=grid, numbers="exact")
    spec = with_overrides(presets.load("mistral-7b").spec, {"V": 10**11, "d": 10**8})
    value = quick.evaluate("params.total", spec)
    assert value > 2**63 and exact.columns["params.total"][0] == value
    assert type(next(exact.rows())["params.total"]) is int
    with pytest.raises(SymcalcError, match=r"--grid V: must be at most 10\*\*15"):
        sweep("gpt2", grid={"V": [10**20]})  # every size is at most 10**15 (issue 10)
    huge = sweep("gpt2", grid={"V": [10**15], "d": [12 * 10**13]}, numbers="exact")
    spec_huge = with_overrides(presets.load("gpt2").spec, {"V": 10**15, "d": 12 * 10**13})
    assert huge.columns["params.total"][0] == quick.evaluate("params.total", spec_huge)
    approx = sweep("mistral-7b", grid=grid, numbers="float")
    assert approx.columns["params.total"][0] == pytest.approx(value, rel=1e-12)


def test_float_and_exact_agree_with_int64_where_it_fits():
    grid = {"d": [512, 1024], "L": [2, 4]}
    names = ["params.total", "memory.kv_cache_bytes", "memory.training_bytes"]
    base = sweep("llama-2-7b", grid=grid, quantities=names, options=Options(zero=3, dp=7))
    for mode in ("exact", "float"):
        other = sweep("llama-2-7b", grid=grid, quantities=names, options=Options(zero=3, dp=7),
                      numbers=mode)
        for name in names:
            assert [float(x) for x in other.columns[name]] == [float(x) for x in base.columns[name]]


@pytest.mark.parametrize("text,expected", [
    ("512,1024,2048", [512, 1024, 2048]),
    ("512:2048:512", [512, 1024, 1536, 2048]),
    ("1:3", [1, 2, 3]),
    ("8, 16:32:8, 1_000", [8, 16, 24, 32, 1000]),
])
def test_parse_values(text, expected):
    assert parse_values("d", text) == expected


@pytest.mark.parametrize("text", ["", "a,b", "1:10:0", "1:2:3:4", "1.5"])
def test_parse_values_rejects(text):
    with pytest.raises(SymcalcError, match="--grid d"):
        parse_values("d", text)


@pytest.mark.parametrize("grid,match", [
    ({"d": [1000], "n_h": [3]}, "d: must be divisible by n_h"),
    ({"n_kv": [3]}, "n_kv: must divide n_h"),
    ({"bogus": [1]}, "--grid bogus: is not a grid key"),
    ({"E": [8]}, "--grid E: the model has no E"),
    ({"dec_seq_len": [8]}, "applies only to encoder-decoder"),
    ({"d": [0, 8]}, "positive integers"),
    ({"d": [1.5]}, "positive integers"),
])
def test_bad_grids(grid, match):
    with pytest.raises(SymcalcError, match=match):
        sweep("mistral-7b", grid=grid)


def test_topk_above_experts_is_rejected():
    with pytest.raises(SymcalcError, match="k: top-k must not exceed"):
        sweep("mixtral-8x7b", grid={"k": [1, 4], "E": [2]})


def test_table_from_csv(tmp_path):
    path = tmp_path / "configs.csv"
    path.write_text("L,d,n_h,d_ff\n12,768,12,3072\n24,1024,16,4096\n", encoding="utf-8")
    r = sweep("gpt2", table=path, quantities=["params.total"])
    assert list(r.columns["params.total"]) == [124_439_808, 354_823_168]  # GPT-2 small, medium
    out = io.StringIO()
    r.to_csv(out)
    assert out.getvalue().splitlines() == ["L,d,n_h,d_ff,params.total",
                                           "12,768,12,3072,124439808",
                                           "24,1024,16,4096,354823168"]


def test_cli_sweep_csv_and_json(cli):
    done = cli("sweep", "gpt2", "--grid", "L=12,24", "--grid", "d=768:1536:768",
               "--quantity", "params.total", "--quantity", "memory.kv_cache_bytes",
               "--seq-len", "1024")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "L,d,params.total,memory.kv_cache_bytes"
    assert len(lines) == 5
    data = cli("sweep", "gpt2", "--grid", "n_h=12", "--format", "json").json()
    assert data["rows"] == [{"n_h": 12, "params.total": 124_439_808}]


@pytest.mark.parametrize("args,field", [
    (["--grid", "d=1000", "--grid", "n_h=3"], "d:"),
    (["--grid", "d=1:5:0"], "--grid d:"),
    (["--grid", "V=100000000000", "--grid", "d=100000000"], "params.total: may exceed int64"),
    ([], "sweep:"),
    (["--grid", "d=8", "--quantity", "params.bogus"], "quantity:"),
])
def test_cli_sweep_bad_input(cli, args, field):
    done = cli("sweep", "mistral-7b", *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and field in done.stderr and "Traceback" not in done.stderr


def test_cli_sweep_exact(cli):
    done = cli("sweep", "mistral-7b", "--grid", "V=100000000000", "--grid", "d=100000000", "--exact")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "100000000000,100000000,20800137632100000000"


def test_cli_sweep_table_and_float(cli, tmp_path):
    path = tmp_path / "configs.csv"
    path.write_text("L,d,n_h\n12,768,12\n24,1024,16\n", encoding="utf-8")
    done = cli("sweep", "gpt2", "--table", path, "--quantity", "params.total")
    assert done.stdout.splitlines()[1:] == ["12,768,12,124439808", "24,1024,16,354823168"]
    done = cli("sweep", "gpt2", "--grid", "V=100000000000", "--grid", "d=120000000", "--float")
    v, d, total = done.stdout.splitlines()[1].split(",")
    assert (v, d) == ("100000000000", "120000000")
    assert float(total) == pytest.approx(14_073_600_141_840_000_000, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_drawn_sweeps_agree_point_by_point(data):
    name = data.draw(st.sampled_from(["mistral-7b", "gpt2", "t5-small", "bert-base",
                                      "mixtral-8x7b", "qwen2-0.5b"]))
    spec = presets.load(name).spec
    keys = ["L", "d_ff", "V", "batch", "seq_len"] + (["L_dec", "dec_seq_len"]
                                                     if spec.family == "encoder-decoder" else [])
    chosen = data.draw(st.lists(st.sampled_from(keys), min_size=1, max_size=3, unique=True))
    grid = {k: data.draw(st.lists(st.integers(1, 5000), min_size=1, max_size=3, unique=True))
            for k in chosen}
    opts = Options(causal=data.draw(st.sampled_from(["full", "half", "exact"])),
                   dtype=data.draw(st.sampled_from(["bf16", "int4", "bits3"])))
    try:
        result = sweep(spec, grid=grid, quantities=ALL, options=opts)
    except SymcalcError as err:  # large draws: int64 may not hold them, exact ints do
        assert "may exceed int64" in str(err)
        result = sweep(spec, grid=grid, quantities=ALL, options=opts, numbers="exact")
    points = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())]
    assert len(result) == len(points)
    for i, p in enumerate(points):
        for q_name in ALL:
            assert int(result.columns[q_name][i]) == _single(spec, opts, p, q_name), (p, q_name)


def test_sweep_imports_no_sympy():
    import subprocess
    import sys

    code = ("import sys, contextlib, io\nfrom symcalc.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['sweep', 'mistral-7b', '--grid', 'd=1024:4096:1024']) == 0\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sympy', 'jinja2')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_cli_quantity_all(cli):
    done = cli("sweep", "t5-small", "--grid", "L=1,2", "--quantity", "all")
    assert done.stdout.splitlines()[0] == "L," + ",".join(q.QUANTITIES)


def test_per_rank_figures_sweep_as_the_report_gives_them():
    """A layout's per-rank figures over a grid: at each point the most-loaded stage's, as the
    report finds them (issue 22)."""
    from symcalc.algebra.options import Options
    from symcalc.algebra.spec import with_overrides
    from symcalc.fast.quick import quick_report
    from symcalc.fast.sweep import sweep
    from symcalc.inputs import resolve

    opts = Options(tp=4, pp=3, microbatches=2, dp=2, zero=3, batch=2)
    names = ["per_rank.peak_bytes", "per_rank.stage", "per_rank.weights_bytes",
             "communication.tp.step_bytes", "communication.dp.step_wire_bytes"]
    r = sweep("llama-2-7b", grid={"L": [30, 31, 32], "seq_len": [256, 1024]}, quantities=names,
              options=opts)
    for row in r.rows():
        spec = with_overrides(resolve("llama-2-7b"), {"L": row["L"]})
        rep = quick_report(spec, opts.with_(seq_len=row["seq_len"]))
        assert row["per_rank.peak_bytes"] == rep["per_rank"]["peak_bytes"]
        assert row["per_rank.stage"] == rep["per_rank"]["stage"]
        assert row["per_rank.weights_bytes"] == rep["per_rank"]["weights_bytes"]
        assert row["communication.tp.step_bytes"] == rep["communication"]["tp"]["step_bytes"]
        assert row["communication.dp.step_wire_bytes"] == rep["communication"]["dp"]["step_wire_bytes"]


def test_widths_summed_over_the_layers_refuse_a_grid_of_their_sizes():
    """The global layers' own shape (Gemma 4) reaches the table as widths summed over the
    layers (spec.toml's [values]): a grid of a size they are made of is refused in one line,
    a grid of another size agrees with the model point by point."""
    from symcalc.algebra.spec import with_overrides
    from symcalc.errors import SymcalcError
    from symcalc.fast.quick import quick_report
    from symcalc.inputs.hf import read_model

    spec, _ = read_model({"model_type": "gemma4_text", "architectures": ["Gemma4ForCausalLM"],
                          "num_hidden_layers": 6, "hidden_size": 64, "intermediate_size": 96,
                          "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
                          "global_head_dim": 32, "vocab_size": 100,
                          "vocab_size_per_layer_input": 100, "hidden_size_per_layer_input": 4})
    for key in ("d_h", "L", "n_kv"):
        with pytest.raises(SymcalcError, match=f"^{key}: cannot vary"):
            sweep(spec, grid={key: [8, 16]}, quantities=["params.total"])
    r = sweep(spec, grid={"d": [64, 96]}, quantities=["params.total"])
    assert [int(x) for x in r.columns["params.total"]] == [
        quick_report(with_overrides(spec, {"d": d}), Options())["params"]["total"] for d in (64, 96)]

"""Benchmarks: prints a Markdown table of medians of repeated runs, measured on this machine
in one run, with the ratios and the targets of issues 5 and 20. Not a test.

    .venv/bin/python bench/run.py            # full run (a few minutes: transformers is slow)
    .venv/bin/python bench/run.py --fast     # fewer repetitions

Command-line timings are wall times of fresh subprocesses. They run with bytecode caching on
(``PYTHONPYCACHEPREFIX`` pointing at a temporary folder, one warm-up run first), as an
installed package has its ``.pyc`` files; one extra row shows the report without any cached
bytecode for symcalc's modules (``PYTHONDONTWRITEBYTECODE=1``, as in this checkout).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
CONFIG = BENCH / "mistral-7b" / "config.json"
CONFIG_MLA = BENCH / "deepseek-v3" / "config.json"
PY = sys.executable
_SCRIPT = Path(PY).with_name("symcalc")  # the installed console script, as users run it
SYMCALC = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "symcalc.cli"]


@dataclass
class Row:
    name: str
    seconds: Optional[float]  # median; None: not available
    runs: str
    ratio: str = ""
    target: str = ""
    met: str = ""
    note: str = ""


def _env(cache: Optional[str]) -> dict[str, str]:
    env = dict(os.environ)
    if cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def once(cmd: list[str], env: dict[str, str]) -> Optional[float]:
    """Wall time of one run of ``cmd`` in seconds; None (its last stderr line printed) if it
    fails."""
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        print(f"  {' '.join(cmd[1:])}: {last}", file=sys.stderr)
        return None
    return elapsed


def wall(cmd: list[str], runs: int, env: dict[str, str], warmup: int = 1) -> Optional[float]:
    """Median wall time of ``cmd`` in seconds; None if it fails."""
    times = []
    for i in range(warmup + runs):
        elapsed = once(cmd, env)
        if elapsed is None:
            return None
        if i >= warmup:
            times.append(elapsed)
    return statistics.median(times)


def paired(cmds: dict[str, list[str]], runs: int, env: dict[str, str]) -> dict[str, Optional[float]]:
    """Median wall time of each command, the commands run round-robin (one warm-up round),
    so that a ratio of two of them is measured under the same machine load."""
    times: dict[str, list[float]] = {k: [] for k in cmds}
    failed: set[str] = set()
    for i in range(runs + 1):
        for name, cmd in cmds.items():
            if name in failed:
                continue
            elapsed = once(cmd, env)
            if elapsed is None:
                failed.add(name)
            elif i:
                times[name].append(elapsed)
    return {k: None if k in failed else statistics.median(v) for k, v in times.items()}


def timed(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fmt(seconds: Optional[float]) -> str:
    if seconds is None:
        return "n/a"
    return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


# -- the 1,000,000-point sweep and its plain-Python peer ----------------------------------
DS = list(range(128, 128 * 101, 128))  # 100 widths, multiples of n_h = 32
LS = list(range(1, 101))  # 100 depths
SS = list(range(128, 128 * 101, 128))  # 100 sequence lengths
QUANTITIES = ["params.total", "flops.forward_matmul", "memory.kv_cache_bytes"]


def plain_point(d, L, s, V=32000, ff=14336, n_h=32, n_kv=8, W=4096, b=1, kv_bytes=2):
    """Mistral-shaped model by hand: parameters, forward matmul FLOPs, KV-cache bytes."""
    d_h = d // n_h
    attention = d * n_h * d_h + 2 * d * n_kv * d_h + n_h * d_h * d
    params = V * d + L * (attention + 3 * d * ff + 2 * d) + d + V * d
    per_layer = (2 * b * s * d * (n_h * d_h + 2 * n_kv * d_h) + 4 * b * n_h * d_h * s * s
                 + 2 * b * s * n_h * d_h * d + 6 * b * s * d * ff)
    flops = L * per_layer + 2 * b * s * d * V
    kv = 2 * L * n_kv * d_h * min(s, W) * b * kv_bytes
    return params, flops, kv


def plain_loop(points: int) -> list:
    out = []
    for d in DS:
        for L in LS:
            for s in SS[: max(1, points // (len(DS) * len(LS)))]:
                out.append(plain_point(d, L, s))
    return out


def sweep_rows(runs: int) -> list[Row]:
    from symcalc.fast.sweep import sweep

    grid = {"d": DS, "L": LS, "seq_len": SS}
    result = sweep("mistral-7b", grid=grid, quantities=QUANTITIES)
    n = len(result)
    for i in (0, 12345, n // 2, n - 1):  # the peer computes the same numbers
        d, L, s = (int(result.columns[k][i]) for k in ("d", "L", "seq_len"))
        assert plain_point(d, L, s) == tuple(int(result.columns[q][i]) for q in QUANTITIES)
    t_sweep = timed(lambda: sweep("mistral-7b", grid=grid, quantities=QUANTITIES), runs)
    sample = 100_000
    t_loop = timed(lambda: plain_loop(sample), max(1, runs // 2)) * n / sample
    from symcalc.inputs import presets
    from symcalc.fast import quick
    from symcalc.algebra.options import Options
    from symcalc.algebra.spec import with_overrides

    spec = presets.load("mistral-7b").spec

    def symcalc_loop(count=2_000):
        for i in range(count):
            one = with_overrides(spec, {"d": DS[i % 100], "L": LS[i // 100 % 100]})
            opts = Options(seq_len=SS[i % 7])
            [quick.evaluate(q, one, opts) for q in QUANTITIES]

    t_scalar = timed(symcalc_loop, 1) * n / 2_000

    # The grid above broadcasts each axis; a table of 1,000,000 independent rows (numpy
    # columns) makes every term touch every point.
    import numpy as np

    rng = np.random.default_rng(0)
    rows = {"d": rng.choice(DS, n), "L": rng.choice(LS, n), "seq_len": rng.choice(SS, n)}
    result = sweep("mistral-7b", table=rows, quantities=QUANTITIES)
    for i in (0, n // 3, n - 1):
        d, L, s = (int(rows[k][i]) for k in ("d", "L", "seq_len"))
        assert plain_point(d, L, s) == tuple(int(result.columns[q][i]) for q in QUANTITIES)
    t_table = timed(lambda: sweep("mistral-7b", table=rows, quantities=QUANTITIES), runs)
    return [
        Row(f"sweep, {n:,} configurations x 3 quantities (numpy int64)", t_sweep, f"{runs}",
            "1", "< 1 s, >= 20x faster than the loop",
            "yes" if t_sweep < 1 and t_loop / t_sweep >= 20 else "NO"),
        Row(f"sweep, a table of {n:,} random configurations (numpy columns)", t_table, f"{runs}",
            f"{t_loop / t_table:.0f}x faster than the loop", "< 1 s, >= 20x faster than the loop",
            "yes" if t_table < 1 and t_loop / t_table >= 20 else "NO"),
        Row("plain-Python loop calling a per-configuration function", t_loop,
            f"{max(1, runs // 2)}", f"{t_loop / t_sweep:.0f}x the sweep",
            note=f"timed on {sample:,} points, scaled x{n // sample}"),
        Row("loop of with_overrides + symcalc.fast.quick.evaluate per configuration", t_scalar, "1",
            f"{t_scalar / t_sweep:.0f}x the sweep", note="timed on 2,000 points, scaled x500"),
    ]


# -- command-line rows --------------------------------------------------------------------
def cli_rows(runs: int, cache: str) -> list[Row]:
    env = _env(cache)
    # the ratios of issues 20 and 23: each report beside its peer (a plain-Python script, or
    # the report without --gpu), run round-robin
    got = paired({"plain": [PY, str(BENCH / "plain_params.py"), str(CONFIG)],
                  "report": [*SYMCALC, "report", "mistral-7b", "--json"],
                  "report_cfg": [*SYMCALC, "report", str(CONFIG), "--json"],
                  "plain_mla": [PY, str(BENCH / "plain_params_mla.py"), str(CONFIG_MLA)],
                  "report_mla": [*SYMCALC, "report", str(CONFIG_MLA), "--json"],
                  "report_gpu": [*SYMCALC, "report", "mistral-7b", "--json", "--gpu", "H100"]},
                 runs, env)
    plain, report, report_cfg = got["plain"], got["report"], got["report_cfg"]
    plain_mla, report_mla = got["plain_mla"], got["report_mla"]
    report_nocache = wall([*SYMCALC, "report", "mistral-7b", "--json"], runs, _env(None), 0)
    report_gpu = got["report_gpu"]  # paired with the report it is compared with
    sympy_path = wall([PY, "-c", "import json; from symcalc.inputs import resolve; "
                       "from symcalc.report import report; "
                       "print(json.dumps(report(resolve('mistral-7b'))))"], max(3, runs // 2), env)
    hf = None
    try:
        import transformers  # noqa: F401
        hf = wall([PY, str(BENCH / "hf_meta.py"), str(CONFIG)], max(3, runs // 4), env)
    except ImportError:
        pass
    startup = wall([PY, "-c", "pass"], runs, env)

    def ratio(x):
        return "" if x is None or plain is None else f"{x / plain:.2f}x the peer"

    rows = [
        Row("python -c pass (interpreter start)", startup, f"{runs}", ratio(startup)),
        Row("peer: plain-Python script, params from config.json", plain, f"{runs}", "1"),
        Row("symcalc report mistral-7b --json", report, f"{runs}", ratio(report),
            "<= 2x the peer", "yes" if report and plain and report <= 2 * plain else "NO"),
        Row("symcalc report bench/mistral-7b/config.json --json", report_cfg, f"{runs}",
            ratio(report_cfg)),
        Row("symcalc report mistral-7b --json --gpu H100 (fits, speed, capacity)", report_gpu,
            f"{runs}", ratio(report_gpu), "<= 1.5x the report without --gpu",
            "yes" if report_gpu and report and report_gpu <= 1.5 * report else "NO",
            note="issue 23: accelerators as exact integers, no unit parser"),
        Row("peer: plain-Python script, params from DeepSeek-V3's config.json (MLA, MoE)",
            plain_mla, f"{runs}", ratio(plain_mla)),
        Row("symcalc report bench/deepseek-v3/config.json --json", report_mla, f"{runs}",
            "" if not (report_mla and plain_mla) else f"{report_mla / plain_mla:.2f}x its peer",
            "<= 2.5x its peer",
            "yes" if report_mla and plain_mla and report_mla <= 2.5 * plain_mla else "NO"),
        Row("symcalc report mistral-7b --json, PYTHONDONTWRITEBYTECODE=1", report_nocache,
            f"{runs}", ratio(report_nocache),
            note="this checkout's setting: modules without a .pyc are compiled on every run"),
        Row("the same report by sympy substitution (symcalc.report.report)", sympy_path,
            f"{max(3, runs // 2)}", ratio(sympy_path)),
        Row("transformers: model on the meta device, num_parameters()", hf,
            f"{max(3, runs // 4)}" if hf else "-", ratio(hf),
            note="" if hf else "transformers not installed"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        derive = wall([*SYMCALC, "derive", "mistral-7b", "--quantity", "params.total",
                       "--format", "tex"], max(3, runs // 2), env)
        handout = wall([*SYMCALC, "handout", "mistral-7b", "-o", str(Path(tmp) / "h.tex")],
                       max(3, runs // 2), env)
    rows += [
        Row("symcalc derive mistral-7b --quantity params.total --format tex", derive,
            f"{max(3, runs // 2)}", target="< 1 s",
            met="n/a" if derive is None else "yes" if derive < 1 else "NO"),
        Row("symcalc handout mistral-7b -o h.tex", handout, f"{max(3, runs // 2)}",
            target="< 2 s", met="n/a" if handout is None else "yes" if handout < 2 else "NO"),
    ]
    imp_symcalc = wall([PY, "-c", "import symcalc"], runs, env)
    imp_quick = wall([PY, "-c", "import symcalc.fast.quick, symcalc.inputs"], runs, env)
    imp_sympy = wall([PY, "-c", "import sympy"], runs, env)

    def vs_sympy(x):
        return "" if x is None or not imp_sympy else f"{x / imp_sympy:.2f}x import sympy"

    rows += [
        Row("import symcalc", imp_symcalc, f"{runs}", vs_sympy(imp_symcalc)),
        Row("import symcalc.fast.quick, symcalc.inputs (the report's path)", imp_quick, f"{runs}",
            vs_sympy(imp_quick)),
        Row("import sympy", imp_sympy, f"{runs}", "1"),
    ]
    return rows


def table(rows: list[Row]) -> str:
    lines = ["| measurement | median | runs | ratio | target | met | note |",
             "|---|---:|---:|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.name} | {fmt(r.seconds)} | {r.runs} | {r.ratio} | {r.target} | "
                     f"{r.met} | {r.note} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    runs = 7 if args.fast else 21
    cache = tempfile.mkdtemp(prefix="symcalc-bench-pycache-")
    try:
        rows = cli_rows(runs, cache) + sweep_rows(3 if args.fast else 7)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    import platform

    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
          f", {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

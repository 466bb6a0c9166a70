"""`symcalc sweep MODEL --grid NAME=VALUES ... --quantity Q ... [--format csv|json]`:
quantities over a grid or a table of configurations, vectorised (numpy; no sympy)."""
from __future__ import annotations

import json
import sys

from .common import add_model, add_workload, options_from


def register(sub) -> None:
    p = sub.add_parser("sweep", help="quantities over a grid of sizes (numpy, vectorised)")
    add_model(p)
    p.add_argument("--grid", action="append", default=[], metavar="NAME=VALUES",
                   help="a grid axis: sizes (L, d, n_h, n_kv, d_h, d_ff, V, ...), batch, seq_len "
                        "or dec_seq_len; VALUES like 512,1024,2048 or 512:4096:512 (stop included)")
    p.add_argument("--table", metavar="FILE.csv",
                   help="configurations, one per row, header = grid keys (instead of --grid)")
    p.add_argument("--quantity", action="append", default=[], metavar="Q",
                   help="params.total (default), flops.forward_matmul, memory.kv_cache_bytes, "
                        "... (repeatable; 'all' for every quantity); with a layout also "
                        "per_rank.peak_bytes, per_rank.stage, communication.tp.step_bytes ...")
    p.add_argument("--format", default="csv", choices=("csv", "json"))
    numbers = p.add_mutually_exclusive_group()
    numbers.add_argument("--exact", action="store_true",
                         help="exact Python integers when int64 may overflow (slower)")
    numbers.add_argument("--float", action="store_true",
                         help="float64 (approximate) when int64 may overflow")
    add_workload(p)
    from .speed import add_speed_args

    p.add_argument("--gpu", action="append", default=[], metavar="NAME",
                   help="accelerator of the how-fast quantities (speed.*, capacity.*, "
                        "utilization.*); or sweep several: --grid gpu=H100,B200")
    p.add_argument("--gpus", action="append", default=[], metavar="FILE",
                   help="your own accelerators (TOML, the form of symcalc/inputs/gpus.toml)")
    add_speed_args(p, exact=False)
    p.set_defaults(func=run)


def _grid(items: list[str]) -> dict[str, list[int]]:
    from ..errors import SymcalcError
    from ..fast.sweep import parse_values

    grid: dict[str, list[int]] = {}
    for item in items:
        name, eq, text = item.partition("=")
        if not eq:
            raise SymcalcError(f"--grid {item}", "must have the form NAME=VALUES")
        name = name.strip()
        if name in grid:
            raise SymcalcError(f"--grid {name}", "is given twice")
        if name == "gpu":  # accelerators by name
            values = [x.strip() for x in text.split(",") if x.strip()]
            if not values:
                raise SymcalcError("--grid gpu", "needs at least one accelerator name")
            grid[name] = values
            continue
        grid[name] = parse_values(name, text)
    return grid


def run_speed(args, grid) -> int:
    """A sweep with accelerators or layouts as axes, or how-fast quantities."""
    from ..errors import SymcalcError
    from ..fast.speed_sweep import sweep_speed
    from ..inputs.gpus import accelerator
    from ..inputs.resolver import resolve
    from .speed import speed_options

    if grid is None:
        raise SymcalcError("--table", "a sweep of how fast takes --grid axes")
    names = [n for n in (grid.get("gpu") or args.gpu)]
    if not names:
        raise SymcalcError("--gpu", "how-fast quantities need an accelerator: --gpu NAME or "
                                    "--grid gpu=NAME,...")
    opts = options_from(args)
    sopts = speed_options(args, opts, accelerator(names[0], tuple(args.gpus)))
    quantities = args.quantity or ["speed.decode_seconds_per_token"]
    result = sweep_speed(resolve(args.model, args.sets), grid, quantities, opts, sopts,
                         tuple(args.gpus))
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=1))
    else:
        result.to_csv(sys.stdout)
    return 0


def run(args) -> int:
    from ..errors import SymcalcError
    from ..fast.sweep import sweep

    if bool(args.grid) == bool(args.table):
        raise SymcalcError("sweep", "give --grid NAME=VALUES (one or more) or --table FILE.csv")
    from ..fast.quick import QUANTITIES

    from ..fast.speed_sweep import is_speed_sweep

    grid = _grid(args.grid) if args.grid else None
    if is_speed_sweep(grid or {}, args.quantity) or args.gpu:
        return run_speed(args, grid)
    numbers = "exact" if args.exact else "float" if args.float else "int64"
    names = list(QUANTITIES) if "all" in args.quantity else args.quantity or ["params.total"]
    result = sweep(args.model, grid=grid,
                   table=args.table, quantities=names,
                   options=options_from(args), numbers=numbers, sets=args.sets)
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=1))
    else:
        result.to_csv(sys.stdout)
    return 0

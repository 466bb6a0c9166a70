"""`symcalc report MODEL [--json]` and `symcalc presets`.

The report's numbers come from the generated evaluators (:mod:`symcalc.fast.quick`): this command
never imports sympy or jinja2.
"""
from __future__ import annotations

import json

from .common import add_model, add_workload, options_from
from .fits import add_gpu_args, with_fits


def register(sub) -> None:
    p = sub.add_parser("report", help="parameters, FLOPs and memory of a model")
    add_model(p)
    add_workload(p)
    p.add_argument("--json", action="store_true", help="one JSON object (the contract)")
    add_gpu_args(p)
    p.set_defaults(func=run)
    p = sub.add_parser("presets", help="list the built-in models")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_presets)


def run(args) -> int:
    from ..inputs.resolver import resolve
    from ..fast.quick import quick_report

    from .common import checked_names

    rep = quick_report(checked_names([resolve(args.model, args.sets)])[0], options_from(args))
    rep = with_fits(rep, args)
    if args.json:
        print(json.dumps(rep, indent=1))
    else:
        from ..render.text import report_table

        print(report_table(rep), end="")
    return 0


def run_presets(args) -> int:
    from ..inputs import presets
    from ..render.text import presets_table

    items = presets.all_presets()
    if args.json:
        print(json.dumps([{"name": p.name, "description": p.description, "source": p.source,
                           "expected_total": p.expected_total} for p in items], indent=1))
    else:
        print(presets_table(items), end="")
    return 0

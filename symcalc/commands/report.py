"""`symcalc report MODEL [--json]` and `symcalc presets`.

The report's numbers come from the term table's evaluator (:mod:`symcalc.fast.quick`): this
command never imports sympy or jinja2.
"""
from __future__ import annotations

import json

from .common import add_lang, add_model, add_workload, options_from
from .fits import add_gpu_args, with_fits


def register(sub) -> None:
    p = sub.add_parser("report", help="parameters, FLOPs and memory of a model")
    add_model(p)
    add_workload(p)
    p.add_argument("--json", action="store_true", help="one JSON object (the contract)")
    p.add_argument("--per-stage", action="store_true",
                   help="with --pp: every pipeline stage's per-rank figures too")
    add_gpu_args(p)
    from .speed import add_speed_args

    add_speed_args(p)
    add_lang(p)
    p.set_defaults(func=run, collect=False)  # short-lived: no cyclic garbage collection (cli.main)
    p = sub.add_parser("presets", help="list the built-in models")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_presets)


def run(args) -> int:
    from ..inputs.resolver import resolve_model
    from ..fast.quick import quick_report

    from .common import checked_names

    from .speed import with_speed

    spec, outside = resolve_model(args.model, args.sets)
    opts = options_from(args)
    rep = quick_report(checked_names([spec])[0], opts)
    if outside:
        rep = with_parts(rep, outside, args.part)
    rep = with_fits(rep, args)
    rep = with_speed(rep, spec, opts, args)
    if args.json:
        print(json.dumps(rep, indent=1))
    else:
        from ..render.text import report_table

        print(report_table(rep), end="")
    return 0


PARTS_NOTE = ("FLOPs and memory cover the language model only: the vision tower and projector "
              "are not modelled there (--part all adds their parameters to params)")


def with_parts(rep: dict, outside, part: str) -> dict:
    """The report of a multimodal config's language model, with what the checkpoint holds
    besides it: ``part`` "text" names those parts and leaves them out; "all" adds their
    parameters to params.total, non_embedding, active and breakdown."""
    params = rep["params"]
    parts = {"text": {"description": "language model", "params": params["total"],
                      "included": True}}
    for o in outside:
        parts[o.role] = {**{k: v for k, v in o.as_dict().items() if k != "part"},
                         "included": part == "all"}
    if part == "all":
        unknown = [o for o in outside if o.params is None]
        if unknown:
            from ..errors import SymcalcError

            raise SymcalcError("--part", f"all needs the {unknown[0].role.replace('_', ' ')}'s "
                                         f"sizes ({unknown[0].why})")
        extra = sum(o.params for o in outside)
        for key in ("total", "non_embedding", "active"):
            params[key] += extra
        for o in outside:
            params["breakdown"].update(o.breakdown)
    rep["part"] = part
    rep["parts"] = parts
    rep["left_out"] = [] if part == "all" else [o.role for o in outside]
    rep["parts_note"] = PARTS_NOTE
    return rep


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

"""`symcalc forms MODEL [--batch B --seq-len S] [--json]`: every published formula
(symcalc.derivations.published) next to symcalc's exact value under the same counting, and the exact
symbolic difference the model's architecture makes."""
from __future__ import annotations

import json

from .common import add_model, add_workload, options_from


def register(sub) -> None:
    p = sub.add_parser("forms", help="published FLOP and parameter formulas vs the exact count")
    add_model(p)
    add_workload(p)
    p.add_argument("--form", action="append", default=[], metavar="NAME",
                   help="only this form (repeatable); default: all")
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.set_defaults(func=run)


def _number(x):
    """Exact: an int when whole, else the fraction as a string."""
    return int(x) if x.is_integer else str(x)


def evaluate(spec, opts, names=()) -> dict:
    """The forms table of one model as plain data (exact numbers, expressions as text)."""
    from ..derivations import published as pub
    from ..algebra import quantities as q
    from ..algebra.options import seq_len_of, workload_values
    from ..derivations.sources import cite
    from ..algebra.spec import size_values

    values = {**size_values(spec), **workload_values(spec, opts)}
    rows = []
    for name in names or pub.FORMS:
        f = pub.form(name)
        published, exact = f.published(spec), f.symcalc(spec)
        src = cite(f.source)
        rows.append({
            "name": f.name, "source": f.source, "citation": f"{src.citation}, {src.where}",
            "description": f.description, "unit": f.unit, "assumptions": list(f.assumptions),
            "reproduced_by": f.reproduced_by,
            "formula": str(published),
            "published": _number(q.value(published, values)),
            "symcalc": _number(q.value(exact, values)),
            "difference": _number(q.value(exact - published, values)),
            "difference_expression": str(f.difference(spec, opts)),
            "difference_in_model_terms": str(pub.reduced_difference(name, spec)),
        })
    return {"model": spec.name, "batch": opts.batch, "seq_len": seq_len_of(spec, opts),
            "forms": rows}


def _text(data: dict) -> str:
    from ..render.escape import one_line
    from ..render.numbers import grouped

    def num(x):
        return grouped(x) if isinstance(x, int) else x

    lines = [f"published forms for {one_line(data['model'])} (batch {data['batch']}, "
             f"seq_len {data['seq_len']}); difference = symcalc - published", ""]
    for r in data["forms"]:
        lines += [f"{r['name']}  [{r['citation']}]", f"  {r['description']}  ({r['unit']})",
                  f"  published   {num(r['published'])}",
                  f"  symcalc     {num(r['symcalc'])}  [{r['reproduced_by']}]",
                  f"  difference  {num(r['difference'])}"
                  + ("" if r["difference"] == 0 else f"  = {r['difference_in_model_terms']}"),
                  ""]
    return "\n".join(lines)


def run(args) -> int:
    from ..inputs.resolver import resolve
    from ..derivations.published import _check_single

    from .common import checked_names

    spec = checked_names([resolve(args.model, args.sets)])[0]
    _check_single(spec)
    data = evaluate(spec, options_from(args), args.form)
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(_text(data), end="")
    return 0

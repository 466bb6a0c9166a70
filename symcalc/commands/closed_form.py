"""`symcalc closed-form MODEL [--assume NAME] [--quantity Q] [--json]`."""
from __future__ import annotations

import json

from .common import add_model, add_workload, options_from


def register(sub) -> None:
    # no sympy here: registering every command must stay cheap (assumptions load in run())
    p = sub.add_parser("closed-form", help="a quantity with sizes as symbols, simplified")
    add_model(p, optional=True)  # --list-assumptions needs none
    p.add_argument("--assume", default="none",
                   help="assumption set, e.g. kaplan (see --list-assumptions)")
    p.add_argument("--quantity", default="params.total",
                   help="params.total (default), params.active, flops.forward_matmul, "
                        "memory.kv_cache_bytes, ...")
    p.add_argument("--list-assumptions", action="store_true", help="list assumption sets and exit")
    p.add_argument("--diff", default=None, metavar="SIZE",
                   help="instead: dQ/dSIZE and the elasticity (SIZE/Q) dQ/dSIZE at the model's sizes")
    p.add_argument("--keep", action="append", default=[], metavar="A/B",
                   help="with --diff: keep the ratio of two sizes (repeatable), e.g. d_ff/d")
    p.add_argument("--json", action="store_true",
                   help='{"expression": ..., "latex": ..., "dominant": ...}')
    add_workload(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..algebra.assumptions import ASSUMPTIONS
    from ..algebra.closed_form import closed_form
    from ..errors import SymcalcError
    from ..inputs.resolver import resolve
    from ..render.latex_math import to_latex

    if args.list_assumptions:
        for a in ASSUMPTIONS.values():
            print(f"{a.name:10s} {a.description}")
        return 0
    if args.model is None:
        raise SymcalcError("MODEL", "is required (a preset, config.json or .toml spec)")
    from .common import checked_names

    if args.keep and args.diff is None:
        raise SymcalcError("--keep", "applies only with --diff (the ratio kept while "
                                     "differentiating: closed-form MODEL --diff SIZE --keep A/B)")
    spec = checked_names([resolve(args.model, args.sets)])[0]
    if args.diff is not None:
        return _diff(args, spec)
    cf = closed_form(spec, args.quantity, args.assume, options_from(args))
    if args.json:
        from ..derivations.derive_forms import NON_EMBEDDING_FORMS, assumption_misfit

        out = {
            "model": spec.name, "quantity": cf.quantity, "assumption": cf.assumption,
            "expression": str(cf.expression), "latex": to_latex(cf.expression),
            "expanded": str(cf.expanded),
            "dominant": None if cf.dominant is None else str(cf.dominant),
            "dominant_share": None if cf.dominant_share is None else float(cf.dominant_share),
        }
        if args.assume in NON_EMBEDDING_FORMS and cf.quantity in ("params.total",
                                                                   "params.non_embedding"):
            # a non-embedding form (Kaplan's 12 L d^2): compared with the exact
            # non-embedding count, never with the total
            out.update(_non_embedding_numbers(args, spec, cf))
            out["quantity"] = "params.non_embedding"
            out["misfit"] = assumption_misfit(spec, args.assume) or None
        print(json.dumps(out, indent=1))
    else:
        from ..render.escape import one_line

        from ..derivations.derive_forms import NON_EMBEDDING_FORMS, assumption_misfit

        if args.assume in NON_EMBEDDING_FORMS and cf.quantity in ("params.total",
                                                                   "params.non_embedding"):
            return _non_embedding(args, spec, cf, assumption_misfit(spec, args.assume))
        print(f"{cf.quantity} of {one_line(spec.name)} (assumptions: {cf.assumption})")
        print(f"  {cf.expression}")
        if cf.dominant is not None:
            print(f"  dominant term: {cf.dominant}  ({float(cf.dominant_share):.1%} at the model's sizes)")
    return 0


def _non_embedding_numbers(args, spec, cf) -> dict[str, int]:
    """The form at the model's sizes, the exact non-embedding count, what the form leaves
    out, and the embeddings and head (not in the form)."""
    from ..algebra import quantities as q
    from ..algebra.options import workload_values
    from ..algebra.spec import size_values

    opts = options_from(args)
    values = {**size_values(spec), **workload_values(spec, opts)}
    approx = int(q.value(cf.expanded, values))
    exact = int(q.value(q.expression("params.non_embedding", spec, opts), values))
    emb = int(q.value(q.expression("params.embedding", spec, opts), values))
    return {"at_model_sizes": approx, "exact_non_embedding": exact, "left_out": exact - approx,
            "embedding_and_head": emb}


def _non_embedding(args, spec, cf, misfit: str) -> int:
    """A form that counts non-embedding parameters (Kaplan's 12 L d^2) beside the exact
    non-embedding count, with the embeddings and head on a line of their own."""
    from ..render.escape import one_line

    n = _non_embedding_numbers(args, spec, cf)
    approx, exact, emb = n["at_model_sizes"], n["exact_non_embedding"], n["embedding_and_head"]
    print(f"non-embedding parameters of {one_line(spec.name)} (assumptions: {cf.assumption})")
    print(f"  {cf.expression}")
    print(f"  at the model's sizes: {approx:,}; exact non-embedding {exact:,}; "
          f"left out {exact - approx:,} ({(exact - approx) / exact:.2%})" if exact else "")
    print(f"  embeddings and head (not in the form): {emb:,}; all parameters {exact + emb:,}")
    if misfit:
        print(f"  the assumptions do not fit {one_line(spec.name)}: {misfit}")
    return 0


def _diff(args, spec) -> int:
    from ..algebra.sensitivity import sensitivity
    from ..errors import SymcalcError

    if args.assume != "none":
        raise SymcalcError("--assume", "does not apply with --diff (the derivative takes the "
                                       "architecture as it is)")
    s = sensitivity(spec, args.quantity, args.diff, options_from(args), tuple(args.keep),
                    field="--diff")
    if args.json:
        print(json.dumps({"model": spec.name, **s.to_json()}, indent=1))
    else:
        from ..render.solution import sensitivity_text

        print(sensitivity_text(s), end="")
    return 0

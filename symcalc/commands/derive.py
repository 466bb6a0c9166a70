"""`symcalc derive MODEL --quantity Q --format md|tex [--standalone] [-o FILE]`: a worked
example of one quantity, every component's formula with its source, the numbers
substituted, each intermediate value and the total."""
from __future__ import annotations

from .common import add_model, add_workload, options_from

PARAM_UNITS = ("auto", "exact", "K", "M", "B", "T", "yi")
FLOP_PREFIXES = ("auto", "K", "M", "G", "T", "P", "E")


def add_units(p) -> None:
    p.add_argument("--unit", default="auto", choices=PARAM_UNITS, metavar="UNIT",
                   help="parameters shown as: " + ", ".join(PARAM_UNITS) + " (yi = 10^8, 亿)")
    p.add_argument("--flops-unit", default="auto", choices=FLOP_PREFIXES, metavar="PREFIX",
                   help="SI prefix for FLOPs: " + ", ".join(FLOP_PREFIXES))
    p.add_argument("--template", default=None, metavar="FILE",
                   help="your own jinja2 template (run sandboxed) instead of the built-in one")


def register(sub) -> None:
    p = sub.add_parser("derive", help="a quantity worked out step by step (Markdown or LaTeX)")
    add_model(p)
    p.add_argument("--quantity", default="params.total",
                   help="params.total (default), params.active, flops.forward_matmul, "
                        "flops.training, memory.weights_bytes, memory.kv_cache_bytes, ...")
    p.add_argument("--format", default="md", choices=("md", "tex"), help="md (default) or tex")
    p.add_argument("--standalone", action="store_true",
                   help="with --format tex: a whole document that compiles with pdflatex")
    p.add_argument("--against", default=None, metavar="MODEL",
                   help="instead: the parameter difference of MODEL against this one, per component")
    p.add_argument("--assume", default=None, metavar="NAME",
                   help="instead: the closed form under an assumption set (kaplan, textbook) "
                        "and its exact correction")
    p.add_argument("--form", default=None, metavar="NAME",
                   help="instead: a published formula (see symcalc.published, e.g. "
                        "seed-layer-mixed) at the model's sizes against symcalc's count")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="write to FILE")
    add_units(p)
    add_workload(p)
    p.set_defaults(func=run)


def units_from(args):
    from ..render.view import Units

    return Units(params=args.unit, flops=args.flops_unit)


def build(args):
    from ..derivations import derive as dv, derive_forms as forms
    from ..inputs.resolver import resolve

    spec = resolve(args.model, args.sets)
    opts = options_from(args)
    if args.against:
        return forms.derive_difference(spec, resolve(args.against, args.sets))
    if args.form:
        from ..derivations.published import FORMS
        from ..errors import SymcalcError

        if args.form not in FORMS:
            raise SymcalcError("--form", f"must be one of {', '.join(FORMS)} (got {args.form!r})")
        return forms.derive_published(args.form, spec, opts)
    if args.assume:
        return forms.derive_closed_form(spec, args.assume, args.quantity, opts)
    return dv.derive(spec, args.quantity, opts)


def run(args) -> int:
    from ..errors import SymcalcError

    if args.standalone and args.format != "tex":
        raise SymcalcError("--standalone", "applies only with --format tex")
    derivation = build(args)
    units = units_from(args)
    if args.format == "md":
        from ..render.markdown import derivation_markdown

        text = derivation_markdown(derivation, units, args.template)
    else:
        from ..render.latex import derivation_latex

        text = derivation_latex(derivation, args.standalone, units, args.template)
    write(text, args.output)
    return 0


def write(text: str, output: str | None) -> None:
    from pathlib import Path

    from ..errors import SymcalcError

    if output is None:
        print(text, end="" if text.endswith("\n") else "\n")
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as err:
        raise SymcalcError("-o", f"cannot write {output!r} ({err.strerror or err})") from None

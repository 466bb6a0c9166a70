"""`symcalc solve MODEL --for SIZE (--target Q=AMOUNT | --fit 'REL' | --when 'REL')
[--keep A/B] [--multiple-of N] [--gpus FILE] [--json]`: the size that meets a target, fits a
budget or starts a crossover, exact and as the nearest valid integers."""
from __future__ import annotations

import json

from .common import add_model, add_workload, checked_names, options_from


def add_solve_args(p, required: bool = True) -> None:
    g = p.add_argument_group("solving for a size (docs/cli.md, 'solve')")
    g.add_argument("--for", dest="solve_for", required=False, metavar="SIZE",
                   help="the size to solve for: d, L, n_h, d_ff, V, ... or s, b (workload); "
                        "or a layout dimension tp, pp, ep, cp, dp (the smallest that fits)")
    what = g.add_mutually_exclusive_group(required=False)
    what.add_argument("--target", metavar="Q=AMOUNT",
                      help="an equation, e.g. params.total=7e9 (units: K M B T, GB GiB, TFLOPs ...)")
    what.add_argument("--fit", metavar="'REL'",
                      help="a budget, e.g. 'memory.weights_bytes + memory.kv_cache_bytes <= 80GB' "
                           "or '... <= H100'")
    what.add_argument("--when", metavar="'REL'",
                      help="an inequality, e.g. 'flops:layer/attention/scores >= flops:layer/ffn'")
    g.add_argument("--keep", action="append", default=[], metavar="A/B",
                   help="keep the ratio of two sizes at the model's value (repeatable), e.g. d_ff/d")
    g.add_argument("--multiple-of", default=None, metavar="N",
                   help="integer answers are multiples of N (e.g. 64 or 128; default 1)")
    g.add_argument("--gpus", action="append", default=[], metavar="FILE",
                   help="your own accelerators (TOML, the form of symcalc/inputs/gpus.toml)")


def register(sub) -> None:
    p = sub.add_parser("solve", help="solve for a size: a target, a budget that fits, a crossover")
    add_model(p)
    add_solve_args(p)
    p.add_argument("--layouts", default=None, metavar="N",
                   help="every parallel layout of N GPUs that meets --fit (default: "
                        "'per_rank.peak_bytes <= GPU' with --gpu), sorted by per-rank peak")
    p.add_argument("--json", action="store_true",
                   help='{"equation", "exact", "below", "above", "value_below", "value_above"}')
    add_workload(p)
    from .speed import add_speed_args

    p.add_argument("--gpu", action="append", default=[], metavar="NAME",
                   help="accelerator of a how-fast relation (speed.*, capacity.*, "
                        "utilization.*): --for b, s or gpus; with a layout search and no "
                        "--fit: fit per_rank.peak_bytes in its memory (names in "
                        "symcalc/inputs/gpus.toml)")
    add_speed_args(p)
    p.set_defaults(func=run)


LAYOUT_DIMENSIONS = ("tp", "pp", "ep", "cp", "dp")


def layout_question(args) -> bool:
    """A search over parallel layouts: --layouts, --for a layout dimension, or a relation
    that reads a per-rank or communication figure."""
    from ..fast.layouts import parallel_names

    text = " ".join(t for t in (args.target, args.fit, args.when) if t)
    return (getattr(args, "layouts", None) is not None or args.solve_for in LAYOUT_DIMENSIONS
            or parallel_names(text))


def layout_answer(args) -> dict:
    from ..errors import SymcalcError
    from ..fast import layouts as L
    from ..inputs.resolver import resolve
    from ..questions import accelerator_constants

    spec = checked_names([resolve(args.model, args.sets)])[0]
    opts = options_from(args)
    if args.target is not None or args.when is not None:
        raise SymcalcError("--fit" if args.target is None else "--target",
                           "a layout search takes a budget: --fit 'REL' (or --gpu NAME)")
    text = args.fit
    if text is None:
        if not getattr(args, "gpu", None):
            raise SymcalcError("--fit", "give the budget, e.g. --fit 'per_rank.peak_bytes <= "
                                        "80GB', or --gpu NAME")
        if len(args.gpu) > 1:
            raise SymcalcError("--gpu", "a layout search fits one accelerator (got "
                                        f"{', '.join(args.gpu)})")
        text = L.DEFAULT_FIT.format(gpu=args.gpu[0])
    relation = L.relation_of(text, "--fit", accelerator_constants(tuple(args.gpus)))
    if getattr(args, "layouts", None) is not None:
        from ..algebra.spec import parse_int

        return L.layouts(spec, opts, parse_int("--layouts", args.layouts), relation)
    if args.solve_for is None:
        raise SymcalcError("--for", "names the layout dimension to search (tp, pp, ep, cp, dp), "
                                    "or give --layouts N")
    if args.solve_for not in L.FOR:
        raise SymcalcError("--for", f"a per-rank relation is solved for a layout dimension "
                                    f"(tp, pp, ep, cp, dp; got {args.solve_for!r})")
    return L.smallest(spec, opts, args.solve_for, relation)


def relation_of(args) -> tuple[str, str]:
    """(mode, relation text) of the parsed arguments."""
    from ..errors import SymcalcError

    for mode in ("target", "fit", "when"):
        text = getattr(args, mode)
        if text is not None:
            if not text.strip():
                raise SymcalcError(f"--{mode}", "must be a relation, e.g. params.total=7e9")
            return mode, text
    raise SymcalcError("--target", "give one of --target, --fit or --when")


def solution_from(args, latex: bool = False):
    from ..algebra.spec import parse_int
    from ..inputs.resolver import resolve
    from ..questions import solve_spec

    spec = checked_names([resolve(args.model, args.sets)], latex)[0]
    mode, text = relation_of(args)
    return solve_spec(spec, args.solve_for, text, mode, options_from(args), tuple(args.keep),
                      parse_int("--multiple-of", "1" if args.multiple_of is None
                                else args.multiple_of), tuple(args.gpus))


SPEED_PREFIXES = ("speed.", "capacity.", "utilization.")


def is_speed_question(args) -> bool:
    return any(p in (getattr(args, m) or "") for m in ("target", "fit", "when")
               for p in SPEED_PREFIXES)


def speed_answer(args):
    """A how-fast relation: exact search on the quick path (fast.speed_solve)."""
    from ..algebra.relation import parse_relation
    from ..errors import SymcalcError
    from ..fast import speed_solve as SS
    from ..inputs.gpus import accelerator
    from ..inputs.resolver import resolve
    from .speed import speed_options

    import sympy

    mode, text = relation_of(args)
    if mode == "target":
        raise SymcalcError("--target", "a how-fast figure is met with --fit or --when "
                                       "(an inequality), e.g. 'speed.decode_seconds_per_token <= 0.05'")
    if not args.gpu:
        raise SymcalcError("--gpu", "a how-fast relation needs an accelerator: name one with --gpu")
    symbols = {name: sympy.Symbol(name.replace(".", "__"), positive=True) for name in SS.FIGURES}

    def lookup(name):
        return (symbols[name], "count") if name in symbols else None

    rel = parse_relation(text, f"--{mode}", lookup)
    used = [n for n, _k in rel.names if n in symbols]
    if not used:
        raise SymcalcError(f"--{mode}", "names no how-fast figure (" + ", ".join(SS.FIGURES) + ")")
    spec = checked_names([resolve(args.model, args.sets)])[0]
    opts = options_from(args)
    sopts = speed_options(args, opts, accelerator(args.gpu[0], tuple(args.gpus)))

    def test(figs: dict) -> bool:
        if any(n not in figs for n in used):
            missing = next(n for n in used if n not in figs)
            raise SymcalcError(f"--{mode}", f"{missing} is not a figure of this model and run "
                                            "(utilization needs --step-time or --tokens-per-second)")
        subs = {symbols[n]: sympy.Rational(figs[n].numerator, figs[n].denominator) for n in used}
        return rel.holds(rel.lhs.xreplace(subs), rel.rhs.xreplace(subs))

    if args.solve_for == "gpus":
        answer = SS.solve_gpus(spec, opts, sopts, test)
    else:
        answer = SS.solve_size(spec, opts, sopts, args.solve_for, test)
    return text, answer


def run(args) -> int:
    if layout_question(args):
        answer = layout_answer(args)
        if args.json:
            print(json.dumps(answer, indent=1))
        else:
            from ..render.solution import layouts_text

            print(layouts_text(answer), end="")
        return 0
    from ..errors import SymcalcError

    if args.solve_for is None:
        raise SymcalcError("--for", "is required")
    if args.target is None and args.fit is None and args.when is None:
        raise SymcalcError("--target", "give one of --target, --fit or --when")
    if is_speed_question(args):
        from ..render.solution import speed_answer_text

        text, answer = speed_answer(args)
        if args.json:
            print(json.dumps({"relation": text, **answer.to_json()}, indent=1))
        else:
            print(speed_answer_text(text, answer.to_json()), end="")
        return 0
    solution = solution_from(args)
    if args.json:
        print(json.dumps(solution.to_json(), indent=1))
    else:
        from ..render.solution import solution_text

        print(solution_text(solution), end="")
    return 0

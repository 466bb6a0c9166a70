"""`symcalc handout MODEL [MODEL ...] [--title TEXT] [--sections LIST] [--exercises]
-o FILE.md|FILE.tex|FILE.pdf`: a teaching handout of one or more models side by side (with
--exercises: an exercise sheet in FILE and its worked answers in FILE-answers)."""
from __future__ import annotations

from .common import add_model, add_workload, checked_names, options_from
from .derive import add_units, answers_path, check_output, check_template, units_from, write


def register(sub) -> None:
    p = sub.add_parser("handout", help="a teaching handout: dimensions, breakdown, derivations, "
                                       "closed forms, figures, references")
    add_model(p, many=True)
    p.add_argument("--title", default=None, help="the handout's title (shown as plain text)")
    p.add_argument("--sections", default=None, metavar="LIST",
                   help="comma-separated sections to include, in any order: breakdown, params, "
                        "closed, budget, compute, speed, parallel (default: all but speed "
                        "and parallel; speed joins them with --gpu, parallel when a layout "
                        "option such as --tp is given)")
    p.add_argument("--gpu", default=None, metavar="NAME",
                   help="accelerator of the \"How fast\" section (adds it; default H100 when "
                        "--sections names speed)")
    p.add_argument("--gpus", action="append", default=[], metavar="FILE",
                   help="your own accelerators (TOML, the form of symcalc/inputs/gpus.toml)")
    p.add_argument("--exercises", action="store_true",
                   help="write an exercise sheet to FILE (formulas and sizes, numbers left blank) "
                        "and the worked answers beside it as FILE-answers")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="FILE.md, FILE.tex or FILE.pdf (PDF needs pdflatex)")
    add_units(p)
    add_workload(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from ..errors import SymcalcError

    from ..derivations.handout_data import DEFAULT_SECTIONS, handout
    from .derive import derive_per_rank
    from ..inputs.resolver import resolve
    from ..render import handout as render

    check_template(args.template)
    out = Path(args.output)
    beside = [answers_path(out)] if args.exercises else []
    if out.suffix.lower() == ".pdf":  # a failed build keeps its log there
        beside += [out.with_suffix(".log"), answers_path(out).with_suffix(".log")]
    check_output(args.output, (".md", ".tex", ".pdf"), "handout", beside)  # before the build
    kind = out.suffix.lower()
    if kind == ".pdf":
        import shutil

        if not shutil.which("pdflatex") and not shutil.which("xelatex"):
            raise SymcalcError("-o", "PDF output needs pdflatex or xelatex (not found on "
                                     "PATH); write FILE.tex instead, or install texlive")
    from ..render.escape import check_text

    if args.title is not None:
        check_text("--title", args.title, latex=kind != ".md")
    specs = checked_names([resolve(m, args.sets) for m in args.model], latex=kind != ".md")
    opts = options_from(args)
    sections = list(DEFAULT_SECTIONS) + (["speed"] if args.gpu else []) + (
        ["parallel"] if opts.parallel else []) if args.sections is None else [
        x.strip() for x in args.sections.split(",") if x.strip()]
    from ..derivations.handout_speed import DEFAULT_GPU
    from ..inputs.gpus import accelerator

    if args.gpus and args.gpu is None:
        raise SymcalcError("--gpus", "adds accelerators for --gpu NAME; name one with --gpu")
    speed = speed_of(accelerator(args.gpu or DEFAULT_GPU, tuple(args.gpus))) \
        if "speed" in sections else None
    data = handout(specs, args.title, opts, sections, exercises=args.exercises, speed=speed,
                   figures=rank_figures, derive_rank=derive_per_rank)
    units = units_from(args)
    tex = kind != ".md"
    if args.exercises:  # the sheet, and its answer key (the worked handout) beside it
        sheet, key = render.exercise_documents(data, tex, units, args.template)
        outputs = [(sheet, out), (key, answers_path(out))]
    else:
        outputs = [((render.handout_latex if tex else render.handout_markdown)(
            data, units, args.template), out)]
    for text, path in outputs:
        if kind == ".pdf":
            render.compile_pdf(text, path)
        else:
            write(text, str(path))
    return 0


def rank_figures(spec, opts) -> dict:
    """A layout's figures by name (the report's per_rank and communication blocks)."""
    from ..fast.layouts import figures

    return figures(spec, opts)


def speed_of(gpu):
    """The "How fast" section's data of one model on ``gpu`` (handout_data.handout's
    ``speed``): the quick path's figures (fast.speed), the derivation built from them."""
    from ..derivations.handout_speed import speed_sheet
    from ..fast import speed as SP
    from ..fast.quick import quick_report

    def one(spec, opts):
        if spec.family == "encoder-decoder" or not gpu.memory_bandwidth:
            return None
        fig = SP.Figures(spec, opts, quick_report(spec, opts), SP.SpeedOptions(gpu=gpu))
        return speed_sheet(spec, fig, SP.capacity(fig))
    return one

"""`symcalc derive MODEL --quantity Q --format md|tex [--standalone] [-o FILE]`: a worked
example of one quantity, every component's formula with its source, the numbers
substituted, each intermediate value and the total."""
from __future__ import annotations

from .common import add_lang, add_model, add_workload, checked_names, options_from

PARAM_UNITS = ("auto", "exact", "K", "M", "B", "T", "yi")
FLOP_PREFIXES = ("auto", "K", "M", "G", "T", "P", "E")


def add_units(p) -> None:
    p.add_argument("--unit", default="auto", choices=PARAM_UNITS, metavar="UNIT",
                   help="parameters shown as: " + ", ".join(PARAM_UNITS) + " (yi = 10^8, 亿)")
    p.add_argument("--flops-unit", default="auto", choices=FLOP_PREFIXES, metavar="PREFIX",
                   help="SI prefix for FLOPs: " + ", ".join(FLOP_PREFIXES))
    p.add_argument("--template", default=None, metavar="FILE",
                   help="your own jinja2 template (run sandboxed) instead of the built-in one")
    add_lang(p)


def register(sub) -> None:
    p = sub.add_parser("derive", help="a quantity worked out step by step (Markdown or LaTeX)")
    add_model(p)
    p.add_argument("--quantity", default=None,
                   help="params.total (default), params.active, flops.forward_matmul, "
                        "flops.training, memory.weights_bytes, memory.kv_cache_bytes, ...; "
                        "with a layout per_rank.peak_bytes, per_rank.weights_bytes, "
                        "communication.tp.step_bytes, ... (docs/cli.md)")
    p.add_argument("--format", default=None, choices=("md", "tex"),
                   help="md or tex (default: from -o FILE: .tex and .pdf are LaTeX, a whole "
                        "document; otherwise md)")
    p.add_argument("--standalone", action="store_true",
                   help="with --format tex: a whole document that compiles with pdflatex")
    p.add_argument("--against", default=None, metavar="MODEL",
                   help="instead: the parameter difference of MODEL against this one, per component")
    p.add_argument("--assume", default=None, metavar="NAME",
                   help="instead: the closed form under an assumption set (kaplan, textbook) "
                        "and its exact correction")
    p.add_argument("--form", default=None, metavar="NAME",
                   help="instead: a published formula (see symcalc.derivations.published, e.g. "
                        "seed-layer-mixed) at the model's sizes against symcalc's count")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write to FILE: FILE.md Markdown, FILE.tex a LaTeX document, FILE.pdf "
                        "that document compiled (needs pdflatex or xelatex)")
    p.add_argument("--exercises", action="store_true",
                   help="with -o FILE: an exercise sheet in FILE (formulas and sizes, numbers "
                        "left blank) and the worked answers beside it as FILE-answers")
    add_units(p)
    from .solve import add_solve_args

    add_solve_args(p, required=False)  # derive MODEL --for d --target ...: the solving steps
    add_workload(p)
    from .speed import add_speed_args

    p.add_argument("--gpu", action="append", default=[], metavar="NAME",
                   help="accelerator of a how-fast quantity (speed.decode_seconds_per_token, "
                        "speed.prefill_seconds, capacity.max_sequences, utilization.mfu)")
    add_speed_args(p)
    p.set_defaults(func=run)


def units_from(args):
    from ..render.view import Units

    return Units(params=args.unit, flops=args.flops_unit)


INSTEAD = (("--against", "against"), ("--assume", "assume"), ("--form", "form"),
           ("--quantity", "quantity"))


def refuse_instead(args) -> None:
    """--against, --assume, --form and --quantity choose what a derivation without --for
    shows; with --for (a solution derives its own relation) they are refused, never ignored."""
    from ..errors import SymcalcError

    if args.solve_for is not None or any(getattr(args, m) is not None
                                         for m in ("target", "fit", "when")):
        for flag, name in INSTEAD:
            if getattr(args, name) is not None:
                raise SymcalcError(flag, "does not apply with --for (a solution derives its "
                                         "own relation); leave it out, or derive without --for")


def build(args):
    from ..derivations import derive as dv, derive_forms as forms
    from ..inputs.resolver import resolve

    latex = args.format == "tex"
    refuse_instead(args)
    if args.solve_for is not None or any(getattr(args, m) is not None for m in ("target", "fit", "when")):
        from ..derivations.derive_solve import derive_solution
        from .solve import solution_from

        from ..errors import SymcalcError

        if args.solve_for is None:
            raise SymcalcError("--for", "names the size to solve for (with --target, --fit or --when)")
        from .solve import layout_question

        if layout_question(args):
            raise SymcalcError("--for", "a search over parallel layouts has no derivation: run "
                                        "symcalc solve, then derive a figure of the layout it "
                                        "finds (derive --quantity per_rank.peak_bytes --tp ...)")
        return derive_solution(solution_from(args, latex))
    quantity = args.quantity or "params.total"
    spec = checked_names([resolve(args.model, args.sets)], latex)[0]
    opts = options_from(args)
    if quantity.split(".")[0] in ("speed", "capacity", "utilization") or args.gpu:
        return speed_derivation(args, spec, opts, quantity)
    if args.against is not None:  # '' is refused, never ignored
        if not args.against.strip():
            from ..errors import SymcalcError

            raise SymcalcError("--against", "must name a model (a preset, config.json or "
                                            ".toml spec); got ''")
        other = checked_names([resolve(args.against, args.sets)], latex)[0]
        return forms.derive_difference(spec, other)
    if args.form is not None:
        from ..derivations.published import FORMS
        from ..errors import SymcalcError

        if args.form not in FORMS:
            raise SymcalcError("--form", f"must be one of {', '.join(FORMS)} (got {args.form!r})")
        return forms.derive_published(args.form, spec, opts)
    if args.assume is not None:  # assumption() refuses '' naming the sets
        return forms.derive_closed_form(spec, args.assume, quantity, opts)
    from ..derivations.derive_parallel import QUANTITIES as PARALLEL

    if quantity in PARALLEL:
        return derive_per_rank(spec, quantity, opts)
    return dv.derive(spec, quantity, opts)


def derive_per_rank(spec, quantity: str, opts):
    """A per-rank or communication figure on the most-loaded rank's stage (as the report
    finds it from the term table), worked out from symcalc.algebra.parallel/communication."""
    from ..algebra.tp_plans import plan_entries
    from ..derivations.derive_parallel import derive_parallel
    from ..fast import per_rank, plans, quick

    v = quick.values(spec, opts)
    v.update(plans.facts(spec, opts.tp_plan))
    lay = opts.layout()
    from ..algebra.layout import check_spec
    from ..algebra.options import seq_len_of

    check_spec(spec, lay, seq_len_of(spec, opts), v.get("s_dec"))
    stage, _, _ = per_rank.most_loaded(quick.Numbers(spec, opts), v, lay.pp, {})
    return derive_parallel(spec, quantity, opts, plan_entries(plans.plan_rows(spec, "hf")), stage)


def speed_derivation(args, spec, opts, quantity: str):
    """A how-fast quantity on the first --gpu (derivations.derive_speed)."""
    from ..derivations.derive_speed import QUANTITIES, derive_speed
    from ..errors import SymcalcError
    from ..fast.quick import quick_report
    from ..inputs.gpus import accelerator
    from .speed import refuse_without_gpu, speed_options

    if quantity not in QUANTITIES:
        raise SymcalcError("--quantity", f"with --gpu must be one of {', '.join(QUANTITIES)} "
                                         f"(got {quantity!r})")
    refuse_without_gpu(args)
    if not args.gpu:
        raise SymcalcError("--gpu", f"{quantity} needs an accelerator: name one with --gpu")
    from ..fast import speed as SP

    gpu = accelerator(args.gpu[0], tuple(args.gpus))
    fig = SP.Figures(spec, opts, quick_report(spec, opts), speed_options(args, opts, gpu))
    return derive_speed(spec, quantity, fig, SP.capacity(fig), SP.utilization(fig))


SOLVE_ONLY = (("--keep", "keep"), ("--multiple-of", "multiple_of"), ("--gpus", "gpus"))


def check_template(template: str | None) -> None:
    """``--template ''`` is refused: an empty name would silently use the built-in one."""
    if template is not None and not template.strip():
        from ..errors import SymcalcError

        raise SymcalcError("--template", f"must name a template file (got {template!r})")


def refuse_unused(args) -> None:
    """The solving options say nothing without --for: refused, never ignored."""
    from ..errors import SymcalcError

    if args.solve_for is None:
        for option, dest in SOLVE_ONLY:
            if dest == "gpus" and getattr(args, "gpu", None):
                continue  # accelerators of a how-fast quantity
            if getattr(args, dest) not in (None, []):
                raise SymcalcError(option, "applies only with --for (derive MODEL --for SIZE "
                                           "--target|--fit|--when ...: the solving steps)")


def output_kind(args) -> tuple[str, bool, bool]:
    """(format, standalone, pdf) from --format, --standalone and -o's extension: FILE.pdf is
    a LaTeX document compiled, FILE.tex a LaTeX document (a fragment only with --format tex
    and no --standalone), FILE.md Markdown; a --format that contradicts the file is refused."""
    from pathlib import Path

    from ..errors import SymcalcError

    suffix = Path(args.output).suffix.lower() if args.output else ""
    wanted = {".pdf": "tex", ".tex": "tex", ".md": "md"}.get(suffix)
    if wanted and args.format not in (None, wanted):
        raise SymcalcError("--format", f"{args.format} does not go in {args.output!r} "
                                       f"({suffix} is {'Markdown' if wanted == 'md' else 'LaTeX'}); "
                                       "drop --format or change the file's extension")
    fmt = args.format or wanted or "md"
    standalone = args.standalone or (args.format is None and wanted == "tex")
    if args.standalone and fmt != "tex":
        raise SymcalcError("--standalone", "applies only with --format tex (or -o FILE.tex)")
    return fmt, standalone or suffix == ".pdf", suffix == ".pdf"


def run(args) -> int:
    from pathlib import Path

    from ..errors import SymcalcError

    check_template(args.template)
    refuse_unused(args)
    if args.exercises and args.output is None:
        raise SymcalcError("--exercises", "needs -o FILE (the sheet; the answers go beside it "
                                          "as FILE-answers)")
    check_output(args.output, example="derivation",
                 beside=[answers_path(Path(args.output))] if args.exercises else [])
    args.format, standalone, pdf = output_kind(args)
    if pdf:
        import shutil

        if not shutil.which("pdflatex") and not shutil.which("xelatex"):
            raise SymcalcError("-o", "PDF output needs pdflatex or xelatex (not found on PATH); "
                                     "write FILE.tex instead, or install texlive")
    derivation = build(args)
    units = units_from(args)

    def text_of(blanks, key=None) -> str:
        if args.format == "md":
            from ..render.markdown import derivation_markdown

            return derivation_markdown(derivation, units, args.template, blanks=blanks, key=key)
        from ..render.latex import derivation_latex

        return derivation_latex(derivation, standalone, units, args.template, blanks=blanks,
                                key=key)

    outputs = [(args.exercises, args.output)]
    if args.exercises:  # the sheet's numbered blanks, then the key that fills them
        from ..render.view import sheet_blanks

        blanks = sheet_blanks(derivation)
        sheet = text_of(blanks)
        outputs = [(sheet, args.output),
                   (text_of(False, key=blanks), str(answers_path(Path(args.output))))]
    else:
        outputs = [(text_of(False), args.output)]
    for text, path in outputs:
        if pdf:
            from ..render.handout import compile_pdf

            compile_pdf(text, Path(path))
        else:
            write(text, path)
    return 0


def answers_path(out):
    """sheet.pdf -> sheet-answers.pdf, beside it (the worked answers of an exercise sheet)."""
    return out.with_name(f"{out.stem}-answers{out.suffix}")


def check_output(output: str | None, kinds: tuple[str, ...] = (), example: str = "out",
                 beside=()) -> None:
    """Refuse a destination that cannot be written, before any work: a name that is only an
    extension (``.md``, ``out/.tex``: a hidden file nobody asked for), a folder, a path under
    a file or a missing folder, a place not writable or whose status cannot be read, a name
    over the system's limit, and anything but a regular file (a FIFO would hang the write, a
    device swallow it), for the output and the files written ``beside`` it (an answer
    sheet, a LaTeX log)."""
    from ..errors import SymcalcError
    from ..inputs.files import label_of

    if output is None:
        return
    try:
        _check_output(output, kinds, example, beside)
    except OSError as err:  # a status that cannot be read (EACCES), a name too long, ...
        from ..inputs.files import _reason

        raise SymcalcError("-o", f"cannot write {label_of(output)!r} ({_reason(err)})") from None


def _check_output(output: str, kinds: tuple[str, ...], example: str, beside=()) -> None:
    import os
    import tempfile
    from pathlib import Path

    from ..errors import SymcalcError

    out = Path(output)
    for path in (out, *beside):
        regular_or_absent(output, str(path))
    if output.endswith(("/", os.sep)) or out.is_dir():
        raise SymcalcError("-o", f"{output!r} is a folder; give a file name in it")
    if out.name.lower() in kinds or (out.name.startswith(".") and "." not in out.name[1:]):
        suffix = out.name.lower() if out.name.lower() in kinds or not kinds else kinds[0]
        raise SymcalcError("-o", f"{output!r} is only an extension; give a file name, "
                                 f"e.g. {example}{suffix}")
    if kinds and out.suffix.lower() not in kinds:
        raise SymcalcError("-o", f"must end in {', '.join(kinds[:-1])} or {kinds[-1]} "
                                 f"(got {output!r})")
    folder = out.parent
    for above in [folder, *folder.parents]:
        if above.exists():
            if not above.is_dir():
                raise SymcalcError("-o", f"cannot write {output!r}: {str(above)!r} is a file, "
                                         "not a folder")
            break
    if not folder.is_dir():
        raise SymcalcError("-o", f"cannot write {output!r}: folder {str(folder)!r} does not exist")
    if out.exists() and not os.access(out, os.W_OK):
        raise SymcalcError("-o", f"cannot write {output!r} (permission denied)")
    try:  # a real probe: permissions, read-only file systems, pseudo-file systems
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".symcalc-probe-"):
            pass
    except OSError as err:
        raise SymcalcError("-o", f"cannot write in {str(folder)!r} ({err.strerror or err})") from None


def regular_or_absent(output: str, path: str) -> None:
    """Refuse ``path`` when it exists and is not a regular file (checked without opening)."""
    import os
    import stat

    from ..errors import SymcalcError

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return  # absent, or refused by the other checks
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        what = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or \
            stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
        raise SymcalcError("-o", f"{path!r} is {what}; symcalc writes only regular files")


def write(text: str, output: str | None) -> None:
    """``text`` to stdout, or to the regular file ``output`` (opened without blocking and
    checked once open: a FIFO put there since :func:`check_output` is refused too)."""
    import os
    import stat

    from ..errors import SymcalcError

    if output is None:
        print(text, end="" if text.endswith("\n") else "\n")
        return
    try:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, 0o666)
    except OSError as err:
        raise SymcalcError("-o", f"cannot write {output!r} ({err.strerror or err})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SymcalcError("-o", f"{output!r} is not a regular file; symcalc writes only "
                                     "regular files")
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            fd = -1
            f.write(text)
    except OSError as err:
        raise SymcalcError("-o", f"cannot write {output!r} ({err.strerror or err})") from None
    finally:
        if fd >= 0:
            os.close(fd)

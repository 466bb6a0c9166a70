"""`symcalc derive MODEL --quantity Q --format md|tex [--standalone] [-o FILE]`: a worked
example of one quantity, every component's formula with its source, the numbers
substituted, each intermediate value and the total."""
from __future__ import annotations

from .common import add_model, add_workload, checked_names, options_from

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


def add_lang(p) -> None:
    """--lang en|ru|zh: the words and number formats of what the command writes."""
    from ..i18n import LANGS

    p.add_argument("--lang", default="en", choices=LANGS, metavar="LANG",
                   help="language of labels, headings, notes and number formats: "
                        + ", ".join(LANGS) + " (default en)")


def register(sub) -> None:
    p = sub.add_parser("derive", help="a quantity worked out step by step (Markdown or LaTeX)")
    add_model(p)
    p.add_argument("--quantity", default="params.total",
                   help="params.total (default), params.active, flops.forward_matmul, "
                        "flops.training, memory.weights_bytes, memory.kv_cache_bytes, ...")
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
                   help="instead: a published formula (see symcalc.published, e.g. "
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
    p.set_defaults(func=run)


def units_from(args):
    from ..render.view import Units

    return Units(params=args.unit, flops=args.flops_unit)


def build(args):
    from ..derivations import derive as dv, derive_forms as forms
    from ..inputs.resolver import resolve

    latex = args.format == "tex"
    if args.solve_for is not None or any(getattr(args, m) is not None for m in ("target", "fit", "when")):
        from ..derivations.derive_solve import derive_solution
        from .solve import solution_from

        if args.solve_for is None:
            from ..errors import SymcalcError

            raise SymcalcError("--for", "names the size to solve for (with --target, --fit or --when)")
        return derive_solution(solution_from(args, latex))
    spec = checked_names([resolve(args.model, args.sets)], latex)[0]
    opts = options_from(args)
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
        return forms.derive_closed_form(spec, args.assume, args.quantity, opts)
    return dv.derive(spec, args.quantity, opts)


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

    if args.exercises and args.output is None:
        raise SymcalcError("--exercises", "needs -o FILE (the sheet; the answers go beside it "
                                          "as FILE-answers)")
    check_output(args.output)
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


def check_output(output: str | None, kinds: tuple[str, ...] = ()) -> None:
    """Refuse a destination that cannot be written, before any work: a name that is only an
    extension, a folder, a path under a file or a missing folder, a place not writable."""
    import os
    import tempfile
    from pathlib import Path

    from ..errors import SymcalcError

    if output is None:
        return
    out = Path(output)
    if output.endswith(("/", os.sep)) or out.is_dir():
        raise SymcalcError("-o", f"{output!r} is a folder; give a file name in it")
    if kinds and (out.name.lower() in kinds or out.stem.startswith(".") and out.suffix == ""):
        raise SymcalcError("-o", f"{output!r} is only an extension; give a file name, "
                                 f"e.g. handout{out.name.lower()}")
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

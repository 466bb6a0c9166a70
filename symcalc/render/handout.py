"""A handout (:mod:`symcalc.derivations.handout_data`) as Markdown or LaTeX, and LaTeX to PDF.

The renderer formats every number and escapes every piece of user text; the templates
(``handout.md.j2``, ``handout.tex.j2``) only place what they are given.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import SymcalcError
from ..derivations.handout_data import CATEGORIES, Handout, dimension_meaning
from ..algebra.symbols import SIZES
from .escape import latex_text, markdown_text
from .latex import tex_view, with_fonts
from .markdown import md_view
from ..i18n import _, current, tr, using
from .numbers import GB, decimal, grouped, math_decimal, percent, ratio, short, si
from .templates import render, render_user
from .view import SourceIndex, Units, number_tex


# eight colours told apart in print, each with its own mark (a figure of eight models stays
# readable in greyscale too)
COLORS = ("blue", "red", "teal", "orange", "violet", "brown", "black", "olive")
MARKS = ("*", "square*", "triangle*", "diamond*", "pentagon*", "o", "square", "triangle")
TABLE_MODELS = 3  # models per table: more columns are split into further tables, never shrunk
BLANK_CELL = "\\underline{\\hspace{1.6cm}}"


def _sci(x: int) -> str:
    """A float for pgfplots coordinates (exact enough for a log-log plot)."""
    return f"{float(x):.6e}"


def _approx(x) -> str:
    import sympy

    x = sympy.Rational(x)
    return grouped(int(x)) if x.q == 1 else decimal(ratio(x.p, x.q), 1)


def _no_sizes(v: dict) -> dict:
    """The handout lists every size once, in its first table."""
    v["sections"] = [s for s in v["sections"] if s["kind"] != "sizes"]
    return v


def _bytes_short(n: int) -> str:
    return _("{x} GB", x=decimal(ratio(n, GB), 2)) if n >= 10**7 else \
        _("{x} MB", x=decimal(ratio(n, 10**6), 2))


def _chunks(items: list, size: int = TABLE_MODELS) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def _summary(h: Handout, esc, blank: str) -> dict:
    """The one-box summary: the budget's headline numbers, one column per model."""
    o = h.options
    if any(sh.budget is None for sh in h.sheets):
        return {"rows": [], "workload": ""}
    lines = [(_("parameters"), lambda sh, b: short(b.params)),
             (_("active parameters"), lambda sh, b: short(b.active) if b.active else "--"),
             (_("weights ({dtype})", dtype=o.dtype), lambda sh, b: _bytes_short(b.weights_bytes)),
             (_("KV cache ({dtype})", dtype=o.kv_dtype), lambda sh, b: _bytes_short(b.kv_bytes)
              if sh.spec.family != "encoder" else "--"),
             (_("training memory"), lambda sh, b: _bytes_short(b.training_bytes)),
             (_("forward FLOPs"), lambda sh, b: si(b.forward_flops)),
             (_("training FLOPs"), lambda sh, b: si(b.training_flops))]
    rows = []
    for name, f in lines:
        values = [f(sh, sh.budget) for sh in h.sheets]
        if all(v == "--" for v in values):
            continue
        rows.append({"name": esc(name), "cells": [v if v == "--" else (blank if h.exercises
                                                                      else esc(v))
                                                  for v in values]})
    first = h.sheets[0].budget
    workload = _("b = {b} sequence(s) of s = {s} tokens; training: one step, with weights, "
                 "gradients and optimizer state ({optimizer}) on one device",
                 b=first.batch, s=grouped(first.seq), optimizer=o.optimizer)
    return {"rows": rows, "workload": esc(workload)}


def _budget_rows(h: Handout, esc, blank) -> list[dict]:
    """The budget table: one row per quantity, one column per model (chunked)."""
    def cell(x):
        return blank if h.exercises else esc(x)

    spec_rows = [
        (_("parameters"), lambda b, sh: grouped(b.params)),
        (_("active parameters (MoE)"), lambda b, sh: grouped(b.active) if b.active else "--"),
        (_("weights in {dtype} (bytes)", dtype=h.options.dtype),
         lambda b, sh: grouped(b.weights_bytes)),
        (_("KV cache in {dtype} (bytes)", dtype=h.options.kv_dtype),
         lambda b, sh: grouped(b.kv_bytes)),
        (_("KV cache with as many K/V heads as query heads"), lambda b, sh:
         grouped(b.kv_mha_bytes) if b.kv_mha_bytes else "--"),
        (_("training memory (bytes)"), lambda b, sh: grouped(b.training_bytes)),
        (_("forward FLOPs (matrix products)"), lambda b, sh: grouped(b.forward_flops)),
        (_("training FLOPs"), lambda b, sh: grouped(b.training_flops)),
        ("6 N D", lambda b, sh: grouped(b.six_nd)),
    ]
    out = []
    for name, f in spec_rows:
        values = [f(sh.budget, sh) for sh in h.sheets]
        if all(v == "--" for v in values):
            continue
        out.append({"name": esc(name), "cells": [cell(v) if v != "--" else "--" for v in values]})
    return out


def _caption(h: Handout, esc) -> str:
    parts = [_("Dashed: the linear term c s; solid: the quadratic term a s^2; the dot marks s* "
               "where they meet; a dotted vertical line marks each model's context length.")]
    for group in h.coincide:
        parts.append(_("The curves of {models} coincide (the same a and c), so only the last "
                       "one drawn is visible.", models=", ".join(group)))
    return esc(" ".join(parts))


def handout_view(h: Handout, tex: bool, units: Units = Units()) -> dict:
    esc = latex_text if tex else markdown_text
    view_of = tex_view if tex else md_view
    blanks = h.exercises
    blank = BLANK_CELL if tex else "____"
    refs = SourceIndex()
    models = [esc(sh.spec.name) for sh in h.sheets]
    dims = [{"symbol": SIZES[n].latex, "meaning": esc(tr(dimension_meaning(n))),
             "cells": [grouped(sh.dims[n]) if n in sh.dims else "--" for sh in h.sheets]}
            for n in h.dimensions]
    cats = [c for c in CATEGORIES if any(c in sh.categories for sh in h.sheets)]
    breakdown = [{"name": esc(tr(c)),
                  "cells": [blank if blanks else grouped(sh.categories.get(c, 0)) for sh in h.sheets],
                  "shares": [blank if blanks else esc(percent(100 * sh.categories.get(c, 0) / sh.total))
                             for sh in h.sheets]}
                 for c in cats]
    keys = ["".join(ch for ch in c if ch.isalnum()) for c in cats]
    bars = [{"model": models[i], "color": COLORS[i % len(COLORS)], "coords": " ".join(
        f"({key},{100 * sh.categories.get(c, 0) / sh.total:.2f})" for key, c in zip(keys, cats))}
        for i, sh in enumerate(h.sheets)]
    sheets = []
    for i, sh in enumerate(h.sheets):
        ctx = sh.context
        top = max(sh.curve.points[-1][1], sh.curve.points[-1][2])
        bottom = min(sh.curve.points[0][1], sh.curve.points[0][2])
        budget = sh.budget
        sheets.append({
            "model": models[i], "attention": esc(tr(sh.attention)),
            "color": COLORS[i % len(COLORS)], "mark": MARKS[i % len(MARKS)],
            "total": grouped(sh.total), "total_short": short(sh.total),
            "params": _no_sizes(view_of(sh.params, units, refs, blanks=blanks)),
            "closed": _no_sizes(view_of(sh.closed, units, refs, blanks=blanks)),
            "flops": _no_sizes(view_of(sh.flops, units, refs, blanks=blanks)),
            "budget": [_no_sizes(view_of(d, units, refs, blanks=blanks))
                       for d in budget.derivations] if budget else [],
            "budget_notes": [esc(tr(n)) for n in budget.notes] if budget else [],
            "correction": grouped(sh.closed.meta["correction"]),
            "kaplan": grouped(sh.closed.meta["approx"]),
            "closed_line": esc(_("{model}: Kaplan et al.'s form gives {approx} ({approx_short}), the "
                                 "exact non-embedding count is {exact} ({exact_short}).",
                                 model=sh.spec.name, approx=grouped(sh.closed.meta["approx"]),
                                 approx_short=short(sh.closed.meta["approx"]),
                                 exact=grouped(sh.closed.meta["exact"]),
                                 exact_short=short(sh.closed.meta["exact"])))
            if not blanks and sh.closed.meta.get("exact") is not None else "",
            "crossover": _approx(sh.curve.crossover),
            "crossover_tex": number_tex(sh.curve.crossover) if sh.curve.crossover.q == 1
            else math_decimal(ratio(sh.curve.crossover.p, sh.curve.crossover.q), 1),
            "crossover_point": f"({_sci(sh.curve.crossover)},{_sci(sh.curve.linear * sh.curve.crossover)})",
            "linear_coords": " ".join(f"({p},{_sci(lin)})" for p, lin, _ in sh.curve.points),
            "quadratic_coords": " ".join(f"({p},{_sci(quad)})" for p, _, quad in sh.curve.points),
            "context": grouped(ctx) if ctx else "",
            "context_line": f"({ctx},{_sci(bottom)}) ({ctx},{_sci(top)})" if ctx else "",
            "rows": [{"s": grouped(p), "linear": grouped(lin), "quadratic": grouped(quad),
                      "over": quad > lin} for p, lin, quad in sh.curve.points],
        })
    summary = _summary(h, esc, blank) if "budget" in h.sections else {"rows": [], "workload": ""}
    budget_rows = _budget_rows(h, esc, blank) if "budget" in h.sections else []
    groups = []
    for idx in _chunks(list(range(len(h.sheets)))):
        groups.append({"models": [models[i] for i in idx],
                       "dims": [dict(r, cells=[r["cells"][i] for i in idx]) for r in dims],
                       "breakdown": [dict(r, cells=[r["cells"][i] for i in idx],
                                          shares=[r["shares"][i] for i in idx]) for r in breakdown],
                       "totals": [blank if blanks else grouped(h.sheets[i].total) for i in idx],
                       "totals_short": [blank if blanks else short(h.sheets[i].total)
                                        for i in idx],
                       "budget": [dict(r, cells=[r["cells"][i] for i in idx]) for r in budget_rows],
                       "summary": [dict(r, cells=[r["cells"][i] for i in idx])
                                   for r in summary["rows"]],
                       "sheets": [sheets[i] for i in idx]})
    many = len(h.sheets) > 3
    splitting = _splitting(h, esc, view_of, units, refs, blank) if h.splitting else None
    return {"splitting": splitting, "title": esc(tr(h.title)), "models": models, "dims": dims, "breakdown": breakdown,
            "groups": groups, "sections": list(h.sections), "exercises": blanks,
            "summary": summary,
            "totals": [grouped(sh.total) for sh in h.sheets],
            "totals_short": [short(sh.total) for sh in h.sheets],
            "bars": bars, "categories": [esc(tr(c)) for c in cats], "category_keys": keys,
            "bar_width": f"{max(3, min(9, 48 // max(1, len(h.sheets))))}pt",
            "bar_labels": not many, "legend_columns": min(4, len(h.sheets)),
            "caption": _caption(h, esc),
            "sheets": sheets, "points": [grouped(p) for p in h.points],
            "xmin": h.points[0], "xmax": h.points[-1], "wide": len(h.sheets) > 2,
            "references": refs.entries(esc)}


SPLIT_COLUMNS = (("per_rank.params", "parameters per rank", False),
                 ("per_rank.weights_bytes", "weights per rank", True),
                 ("per_rank.peak_bytes", "training peak per rank", True),
                 ("communication.tp.step_wire_bytes", "TP bytes sent per step", True),
                 ("communication.pp.step_wire_bytes", "PP bytes sent per step", True),
                 ("communication.dp.step_wire_bytes", "DP bytes sent per step", True))


def _splitting(h: Handout, esc, view_of, units: Units, refs: SourceIndex, blank: str) -> dict:
    """The section "Splitting the model across GPUs": per model a table of layouts (rows)
    by per-rank figure (columns), each model's weights per rank worked out at one layout,
    the exercise and (in the answers) its numbers."""
    sp, blanks = h.splitting, h.exercises

    def cell(f, key, is_bytes):
        if f is None:
            return "--"
        if blanks:
            return blank
        if not f[key]:
            return "0"
        return _bytes_short(f[key]) if is_bytes else short(f[key])

    models = []
    for i, sh in enumerate(h.sheets):
        rows = [{"layout": esc(label), "cells": [cell(f, k, b) for k, _l, b in SPLIT_COLUMNS],
                 "why": esc(why)} for (label, _lay), (f, why) in zip(sp.layouts, sp.figures[i])]
        models.append({"model": esc(sh.spec.name), "rows": rows,
                       "refused": [r for r in rows if r["why"]]})
    answers = []
    for name, params, nbytes in sp.exercise_answers:
        answers.append(esc(_("{model}: {params} parameters on rank 0, {bytes} of weights",
                             model=name, params=grouped(params),
                             bytes=f"{grouped(nbytes)} B = {_bytes_short(nbytes)}"))
                       if params is not None else
                       esc(_("{model}: cannot be split over t = 4", model=name)))
    return {"columns": [esc(_(label)) for _key, label, _b in SPLIT_COLUMNS], "models": models,
            "worked": esc(sp.worked), "exercise_layout": esc(sp.exercise_layout),
            # each with its sizes and its layout (the layout's symbols are in no other table)
            "derivations": [view_of(d, units, refs, blanks=blanks) for d in sp.derivations],
            "answers": [] if blanks else answers, "dtype": esc(h.options.dtype)}


def handout_markdown(h: Handout, units: Units = Units(), template: str | None = None,
                     lang: str | None = None) -> str:
    """The handout in Markdown, in ``lang`` (en, ru, zh; default: the language in force)."""
    with using(lang or current()):
        v = handout_view(h, tex=False, units=units)
        return render_user(template, False, h=v) if template else render("handout.md.j2", h=v)


def handout_latex(h: Handout, units: Units = Units(), template: str | None = None,
                  lang: str | None = None) -> str:
    """The handout as a LaTeX document, in ``lang``: pdflatex's preamble for ASCII English,
    xelatex's with the fonts its text needs otherwise (:func:`.latex.with_fonts`)."""
    with using(lang or current()):
        v = handout_view(h, tex=True, units=units)
        if template:
            return with_fonts(lambda f: render_user(template, True, h=v, fonts=f))
        return with_fonts(lambda f: render("handout.tex.j2", h=v, fonts=f))


LATEX_TIME_LIMIT = 300  # seconds for one LaTeX run


def latex_environment(folder: str) -> dict:
    """The environment LaTeX runs in: it reads and writes only in ``folder`` and in TeX's own
    trees (kpathsea ``openin_any=p``/``openout_any=p``: no absolute paths outside
    ``TEXMFOUTPUT``, no ``..``, no dot files), so a template's ``\\input{/etc/passwd}`` fails."""
    import os

    return {**os.environ, "openin_any": "p", "openout_any": "p", "TEXMFOUTPUT": folder,
            "shell_escape": "f"}


def engine_for(tex: str) -> str:
    """pdflatex for a document of ASCII text, xelatex for any other (or one that loads
    fontspec): the preamble :func:`handout_latex` writes matches the engine."""
    if "\\usepackage{fontspec}" in tex or any(ord(ch) > 127 for ch in tex):
        return "xelatex"
    return "pdflatex"


def compile_pdf(tex: str, output: Path, engine: str | None = None) -> None:
    """pdflatex or xelatex (:func:`engine_for`; through latexmk when installed) in a scratch
    directory, shell escape off, file access restricted to that directory
    (:func:`latex_environment`). On failure the log is kept next to the output (``output``
    with ``.log``) and the first error is named; a glyph the fonts lack is an error naming
    the character."""
    engine = engine or engine_for(tex)
    latexmk, program = shutil.which("latexmk"), shutil.which(engine)
    if not program:
        need = "texlive-xetex" if engine == "xelatex" else "texlive-latex-base"
        raise SymcalcError("-o", f"PDF output of this document needs {engine} (not found on "
                                 f"PATH); write FILE.tex instead, or install {need}")
    with tempfile.TemporaryDirectory(prefix="symcalc-") as tmp:
        src = Path(tmp) / "handout.tex"
        src.write_text(tex, encoding="utf-8")
        if latexmk:
            flag = "-xelatex" if engine == "xelatex" else "-pdf"
            cmd = [latexmk, flag, "-interaction=nonstopmode", "-halt-on-error",
                   f"-{engine}={engine} -no-shell-escape %O %S", src.name]
            runs = [cmd]
        else:
            cmd = [program, "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", src.name]
            runs = [cmd, cmd]
        env = latex_environment(tmp)
        log = Path(tmp) / "handout.log"
        for run in runs:
            try:
                done = subprocess.run(run, cwd=tmp, capture_output=True, text=True,
                                      errors="replace", env=env, stdin=subprocess.DEVNULL,
                                      timeout=LATEX_TIME_LIMIT)
                failed, why = done.returncode != 0, ""
            except subprocess.TimeoutExpired:
                failed, why = True, f"took more than {LATEX_TIME_LIMIT} s"
            text = log.read_text(errors="replace") if log.exists() else ""
            missing = next((l for l in text.splitlines() if l.startswith("Missing character:")), "")
            if failed or missing:
                first = next((l for l in text.splitlines() if l.startswith("!")), "")
                kept = output.with_suffix(".log")
                try:
                    kept.write_text(text, encoding="utf-8")
                    where = f"log: {kept}"
                except OSError:
                    where = "no log could be kept"
                if missing and not failed:
                    raise SymcalcError("-o", f"{engine}: {missing.strip()} ({where})")
                raise SymcalcError("-o", f"{engine} failed on the handout "
                                         f"({why or first or 'no error line in the log'}; {where})")
        shutil.copyfile(Path(tmp) / "handout.pdf", output)

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
from .latex import tex_view
from .markdown import md_view
from .numbers import GB, grouped, short, si
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
    return grouped(int(x)) if x == int(x) else f"{float(x):,.1f}"


def _no_sizes(v: dict) -> dict:
    """The handout lists every size once, in its first table."""
    v["sections"] = [s for s in v["sections"] if s["kind"] != "sizes"]
    return v


def _bytes_short(n: int) -> str:
    return f"{n / GB:,.2f} GB" if n >= 10**7 else f"{n / 10**6:,.2f} MB"


def _chunks(items: list, size: int = TABLE_MODELS) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def _summary(h: Handout, esc, blank: str) -> dict:
    """The one-box summary: the budget's headline numbers, one column per model."""
    o = h.options
    if any(sh.budget is None for sh in h.sheets):
        return {"rows": [], "workload": ""}
    lines = [("parameters", lambda sh, b: short(b.params)),
             ("active parameters", lambda sh, b: short(b.active) if b.active else "--"),
             (f"weights ({o.dtype})", lambda sh, b: _bytes_short(b.weights_bytes)),
             (f"KV cache ({o.kv_dtype})", lambda sh, b: _bytes_short(b.kv_bytes)
              if sh.spec.family != "encoder" else "--"),
             ("training memory", lambda sh, b: _bytes_short(b.training_bytes)),
             ("forward FLOPs", lambda sh, b: si(b.forward_flops)),
             ("training FLOPs", lambda sh, b: si(b.training_flops))]
    rows = []
    for name, f in lines:
        values = [f(sh, sh.budget) for sh in h.sheets]
        if all(v == "--" for v in values):
            continue
        rows.append({"name": esc(name), "cells": [v if v == "--" else (blank if h.exercises
                                                                      else esc(v))
                                                  for v in values]})
    first = h.sheets[0].budget
    workload = (f"b = {first.batch} sequence(s) of s = {first.seq:,} tokens; training: one "
                f"step, with weights, gradients and optimizer state ({o.optimizer}) on one "
                "device")
    return {"rows": rows, "workload": esc(workload)}


def _budget_rows(h: Handout, esc, blank) -> list[dict]:
    """The budget table: one row per quantity, one column per model (chunked)."""
    def cell(x):
        return blank if h.exercises else esc(x)

    spec_rows = [
        ("parameters", lambda b, sh: grouped(b.params)),
        ("active parameters (MoE)", lambda b, sh: grouped(b.active) if b.active else "--"),
        (f"weights in {h.options.dtype} (bytes)", lambda b, sh: grouped(b.weights_bytes)),
        (f"KV cache in {h.options.kv_dtype} (bytes)", lambda b, sh: grouped(b.kv_bytes)),
        ("KV cache with as many K/V heads as query heads", lambda b, sh:
         grouped(b.kv_mha_bytes) if b.kv_mha_bytes else "--"),
        ("training memory (bytes)", lambda b, sh: grouped(b.training_bytes)),
        ("forward FLOPs (matrix products)", lambda b, sh: grouped(b.forward_flops)),
        ("training FLOPs", lambda b, sh: grouped(b.training_flops)),
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
    parts = ["Dashed: the linear term c s; solid: the quadratic term a s^2; the dot marks s* "
             "where they meet; a dotted vertical line marks each model's context length."]
    for group in h.coincide:
        parts.append(f"The curves of {', '.join(group)} coincide (the same a and c), so only "
                     "the last one drawn is visible.")
    return esc(" ".join(parts))


def handout_view(h: Handout, tex: bool, units: Units = Units()) -> dict:
    esc = latex_text if tex else markdown_text
    view_of = tex_view if tex else md_view
    blanks = h.exercises
    blank = BLANK_CELL if tex else "____"
    refs = SourceIndex()
    models = [esc(sh.spec.name) for sh in h.sheets]
    dims = [{"symbol": SIZES[n].latex, "meaning": esc(dimension_meaning(n)),
             "cells": [grouped(sh.dims[n]) if n in sh.dims else "--" for sh in h.sheets]}
            for n in h.dimensions]
    cats = [c for c in CATEGORIES if any(c in sh.categories for sh in h.sheets)]
    pct = "\\%" if tex else "%"
    breakdown = [{"name": esc(c),
                  "cells": [blank if blanks else grouped(sh.categories.get(c, 0)) for sh in h.sheets],
                  "shares": [blank if blanks else f"{100 * sh.categories.get(c, 0) / sh.total:.1f}{pct}"
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
            "model": models[i], "attention": esc(sh.attention),
            "color": COLORS[i % len(COLORS)], "mark": MARKS[i % len(MARKS)],
            "total": grouped(sh.total), "total_short": short(sh.total),
            "params": _no_sizes(view_of(sh.params, units, refs, blanks=blanks)),
            "closed": _no_sizes(view_of(sh.closed, units, refs, blanks=blanks)),
            "flops": _no_sizes(view_of(sh.flops, units, refs, blanks=blanks)),
            "budget": [_no_sizes(view_of(d, units, refs, blanks=blanks))
                       for d in budget.derivations] if budget else [],
            "budget_notes": [esc(n) for n in budget.notes] if budget else [],
            "correction": grouped(sh.closed.meta["correction"]),
            "kaplan": grouped(sh.closed.meta["approx"]),
            "crossover": _approx(sh.curve.crossover),
            "crossover_tex": number_tex(sh.curve.crossover) if sh.curve.crossover.q == 1
            else f"{float(sh.curve.crossover):,.1f}".replace(",", "{,}"),
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
    return {"title": esc(h.title), "models": models, "dims": dims, "breakdown": breakdown,
            "groups": groups, "sections": list(h.sections), "exercises": blanks,
            "summary": summary,
            "totals": [grouped(sh.total) for sh in h.sheets],
            "totals_short": [short(sh.total) for sh in h.sheets],
            "bars": bars, "categories": [esc(c) for c in cats], "category_keys": keys,
            "bar_width": f"{max(3, min(9, 48 // max(1, len(h.sheets))))}pt",
            "bar_labels": not many, "legend_columns": min(4, len(h.sheets)),
            "caption": _caption(h, esc),
            "sheets": sheets, "points": [grouped(p) for p in h.points],
            "xmin": h.points[0], "xmax": h.points[-1], "wide": len(h.sheets) > 2,
            "references": refs.entries(esc)}


def handout_markdown(h: Handout, units: Units = Units(), template: str | None = None) -> str:
    v = handout_view(h, tex=False, units=units)
    return render_user(template, False, h=v) if template else render("handout.md.j2", h=v)


def handout_latex(h: Handout, units: Units = Units(), template: str | None = None) -> str:
    v = handout_view(h, tex=True, units=units)
    return render_user(template, True, h=v) if template else render("handout.tex.j2", h=v)


LATEX_TIME_LIMIT = 300  # seconds for one LaTeX run


def latex_environment(folder: str) -> dict:
    """The environment LaTeX runs in: it reads and writes only in ``folder`` and in TeX's own
    trees (kpathsea ``openin_any=p``/``openout_any=p``: no absolute paths outside
    ``TEXMFOUTPUT``, no ``..``, no dot files), so a template's ``\\input{/etc/passwd}`` fails."""
    import os

    return {**os.environ, "openin_any": "p", "openout_any": "p", "TEXMFOUTPUT": folder,
            "shell_escape": "f"}


def compile_pdf(tex: str, output: Path) -> None:
    """pdflatex (through latexmk when installed) in a scratch directory, shell escape off,
    file access restricted to that directory (:func:`latex_environment`). On failure the log
    is kept next to the output (``output`` with ``.log``) and the first error is named."""
    latexmk, pdflatex = shutil.which("latexmk"), shutil.which("pdflatex")
    if not pdflatex:
        raise SymcalcError("-o", "PDF output needs pdflatex (not found on PATH); "
                                 "write FILE.tex instead, or install texlive and latexmk")
    with tempfile.TemporaryDirectory(prefix="symcalc-") as tmp:
        src = Path(tmp) / "handout.tex"
        src.write_text(tex, encoding="utf-8")
        if latexmk:
            cmd = [latexmk, "-pdf", "-interaction=nonstopmode", "-halt-on-error",
                   "-pdflatex=pdflatex -no-shell-escape %O %S", src.name]
            runs = [cmd]
        else:
            cmd = [pdflatex, "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", src.name]
            runs = [cmd, cmd]
        env = latex_environment(tmp)
        for run in runs:
            try:
                done = subprocess.run(run, cwd=tmp, capture_output=True, text=True,
                                      errors="replace", env=env, stdin=subprocess.DEVNULL,
                                      timeout=LATEX_TIME_LIMIT)
                failed, why = done.returncode != 0, ""
            except subprocess.TimeoutExpired:
                failed, why = True, f"took more than {LATEX_TIME_LIMIT} s"
            if failed:
                log = Path(tmp) / "handout.log"
                text = log.read_text(errors="replace") if log.exists() else ""
                first = next((l for l in text.splitlines() if l.startswith("!")), "")
                kept = output.with_suffix(".log")
                try:
                    kept.write_text(text, encoding="utf-8")
                    where = f"log: {kept}"
                except OSError:
                    where = "no log could be kept"
                raise SymcalcError("-o", f"pdflatex failed on the handout "
                                         f"({why or first or 'no error line in the log'}; {where})")
        shutil.copyfile(Path(tmp) / "handout.pdf", output)

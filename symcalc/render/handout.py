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
from .numbers import grouped, short
from .templates import render, render_user
from .view import SourceIndex, Units, number_tex


COLORS = ("blue", "red", "teal", "orange", "violet", "brown")


def _sci(x: int) -> str:
    """A float for pgfplots coordinates (exact enough for a log-log plot)."""
    return f"{float(x):.6e}"


def _approx(x) -> str:
    return grouped(int(x)) if x == int(x) else f"{float(x):,.1f}"


def _no_sizes(v: dict) -> dict:
    """The handout lists every size once, in its first table."""
    v["sections"] = [s for s in v["sections"] if s["kind"] != "sizes"]
    return v


def handout_view(h: Handout, tex: bool, units: Units = Units()) -> dict:
    esc = latex_text if tex else markdown_text
    view_of = tex_view if tex else md_view
    refs = SourceIndex()
    models = [esc(sh.spec.name) for sh in h.sheets]
    dims = [{"symbol": SIZES[n].latex, "meaning": esc(dimension_meaning(n)),
             "cells": [grouped(sh.dims[n]) if n in sh.dims else "--" for sh in h.sheets]}
            for n in h.dimensions]
    cats = [c for c in CATEGORIES if any(c in sh.categories for sh in h.sheets)]
    breakdown = [{"name": esc(c), "cells": [grouped(sh.categories.get(c, 0)) for sh in h.sheets],
                  "shares": [f"{100 * sh.categories.get(c, 0) / sh.total:.1f}\\%" if tex else
                             f"{100 * sh.categories.get(c, 0) / sh.total:.1f}%" for sh in h.sheets]}
                 for c in cats]
    keys = ["".join(ch for ch in c if ch.isalnum()) for c in cats]
    bars = [{"model": models[i], "color": COLORS[i % len(COLORS)], "coords": " ".join(
        f"({key},{100 * sh.categories.get(c, 0) / sh.total:.2f})" for key, c in zip(keys, cats))}
        for i, sh in enumerate(h.sheets)]
    sheets = []
    for i, sh in enumerate(h.sheets):
        sheets.append({
            "model": models[i], "attention": esc(sh.attention),
            "color": COLORS[i % len(COLORS)], "anchor": "south east" if i % 2 == 0 else "north west",
            "total": grouped(sh.total), "total_short": short(sh.total),
            "params": _no_sizes(view_of(sh.params, units, refs)),
            "closed": _no_sizes(view_of(sh.closed, units, refs)),
            "flops": _no_sizes(view_of(sh.flops, units, refs)),
            "correction": grouped(sh.closed.meta["correction"]),
            "kaplan": grouped(sh.closed.meta["approx"]),
            "crossover": _approx(sh.curve.crossover),
            "crossover_tex": number_tex(sh.curve.crossover) if sh.curve.crossover.q == 1
            else f"{float(sh.curve.crossover):.1f}",
            "crossover_point": f"({_sci(sh.curve.crossover)},{_sci(sh.curve.linear * sh.curve.crossover)})",
            "crossover_at": f"(axis cs:{_sci(sh.curve.crossover)},{_sci(sh.curve.linear * sh.curve.crossover)})",
            "linear_coords": " ".join(f"({p},{_sci(lin)})" for p, lin, _ in sh.curve.points),
            "quadratic_coords": " ".join(f"({p},{_sci(quad)})" for p, _, quad in sh.curve.points),
            "rows": [{"s": grouped(p), "linear": grouped(lin), "quadratic": grouped(quad),
                      "over": quad > lin} for p, lin, quad in sh.curve.points],
        })
    return {"title": esc(h.title), "models": models, "dims": dims, "breakdown": breakdown,
            "totals": [grouped(sh.total) for sh in h.sheets],
            "totals_short": [short(sh.total) for sh in h.sheets],
            "bars": bars, "categories": [esc(c) for c in cats], "category_keys": keys,
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

"""A handout (:mod:`symcalc.derivations.handout_data`) as Markdown or LaTeX, and LaTeX to PDF.

The renderer formats every number and escapes every piece of user text; the templates
(``handout.md.j2``, ``handout.tex.j2``) only place what they are given.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import sympy

from ..errors import SymcalcError
from ..derivations.handout_data import Handout
from ..derivations.handout_models import CATEGORIES
from .escape import latex_text, markdown_text
from .latex import tex_view, with_fonts
from .markdown import md_view
from ..i18n import _, current, tr, using
from .numbers import GB, decimal, flops_in, grouped, math_decimal, params_in, percent, ratio, short, si
from .templates import render, render_user
from .exercises import QUESTIONS, Blanks, cell as exercise_cell
from .view import SourceIndex, Units, number_tex, plain_number, symbol_tex


# twelve colours told apart in print, each with its own mark (a figure of many models stays
# readable in greyscale too)
COLORS = ("blue", "red", "teal", "orange", "violet", "brown", "black", "olive", "magenta",
          "cyan!70!black", "gray", "lime!60!black")
MARKS = ("*", "square*", "triangle*", "diamond*", "pentagon*", "o", "square", "triangle",
         "diamond", "pentagon", "x", "+")
TABLE_MODELS = 3  # models per table: more columns are split into further tables, never shrunk


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


def _summary(h: Handout, esc, units: Units) -> dict:
    """The one-box summary: the budget's headline numbers, one column per model."""
    o = h.options
    if any(sh.budget is None for sh in h.sheets):
        return {"rows": [], "workload": ""}
    lines = [(_("parameters"), lambda sh, b: params_in(b.params, units.params)),
             (_("active parameters"), lambda sh, b: params_in(b.active, units.params)
              if b.active else "--"),
             (_("weights ({dtype})", dtype=o.dtype), lambda sh, b: _bytes_short(b.weights_bytes)),
             (_("KV cache ({dtype})", dtype=o.kv_dtype), lambda sh, b: _bytes_short(b.kv_bytes)
              if b.kv_bytes is not None else "--"),
             (_("recurrent state"), lambda sh, b: _bytes_short(b.recurrent_bytes)
              if b.recurrent_bytes is not None else "--"),
             (_("training peak"), lambda sh, b: _bytes_short(b.peak_bytes)),
             (_("forward FLOPs"), lambda sh, b: flops_in(b.forward_flops, units.flops)),
             (_("training FLOPs"), lambda sh, b: flops_in(b.training_flops, units.flops))]
    rows = []
    for name, f in lines:
        values = [f(sh, sh.budget) for sh in h.sheets]
        if all(v == "--" for v in values):
            continue
        rows.append({"name": esc(name), "cells": [v if v == "--" else esc(v) for v in values]})
    first = h.sheets[0].budget
    workload = _("b = {b} sequence(s) of s = {s} tokens; training: one step on one device, with "
                 "weights, gradients, optimizer state ({optimizer}) and activations ({model} "
                 "activation model)", b=first.batch, s=grouped(first.seq), optimizer=o.optimizer,
                 model=o.activations)
    return {"rows": rows, "workload": esc(workload),
            "activations": esc(tr(first.activation_model))}


def _budget_rows(h: Handout, esc, blank=None) -> list[dict]:
    """The budget table: one row per quantity, one column per model (chunked); on a sheet
    (``blank``: text, value -> a numbered blank) every figure is a blank."""
    spec_rows = [
        (_("parameters"), lambda b: b.params),
        (_("active parameters (MoE)"), lambda b: b.active),
        (_("weights in {dtype} (bytes)", dtype=h.options.dtype), lambda b: b.weights_bytes),
        (_("KV cache in {dtype} (bytes)", dtype=h.options.kv_dtype), lambda b: b.kv_bytes),
        (_("KV cache of multi-head attention of the same shape (bytes)"),
         lambda b: b.kv_mha_bytes),
        (_("recurrent state in {dtype} (bytes)", dtype=h.options.state_dtype),
         lambda b: b.recurrent_bytes),
        (_("training state: weights, gradients, optimizer state (bytes)"),
         lambda b: b.state_bytes),
        (_("activations (bytes)"), lambda b: b.activations_bytes),
        (_("training peak (bytes)"), lambda b: b.peak_bytes),
        (_("forward FLOPs (matrix products)"), lambda b: b.forward_flops),
        (_("training FLOPs"), lambda b: b.training_flops),
        ("6 N D", lambda b: b.six_nd),
        (_("training FLOPs minus 6 N D"), lambda b: b.gap),
    ]
    out = []
    for name, f in spec_rows:
        values = [f(sh.budget) for sh in h.sheets]
        if all(v is None for v in values):
            continue
        out.append({"name": esc(name), "cells": [
            "--" if v is None else blank(grouped(v), v) if blank else esc(grouped(v))
            for v in values]})
    return out


def _notes(sh, esc, blanks: Blanks | None, tex: bool) -> list[str]:
    """A model's lessons of the budget; on a sheet, the question each answers, with a blank."""
    if sh.budget is None:
        return []
    if blanks is None:
        return [esc(tr(text)) for _kind, text in sh.budget.notes]
    return [f"{esc(_(QUESTIONS[kind]))} {exercise_cell(blanks, esc(tr(text)), None, tex)}"
            for kind, text in sh.budget.notes]


def _closed_line(sh) -> str:
    """Kaplan et al.'s form against the exact count, or, where their assumptions do not give
    12 L d^2, their relations substituted (named as that)."""
    m = sh.closed.meta
    fields = dict(model=sh.spec.name, approx=grouped(m["approx"]), approx_short=short(m["approx"]),
                  exact=grouped(m["exact"]), exact_short=short(m["exact"]))
    if m.get("kaplan_form", True):
        return _("{model}: Kaplan et al.'s form gives {approx} ({approx_short}), the exact "
                 "non-embedding count is {exact} ({exact_short}).", **fields)
    return _("{model}: Kaplan et al.'s assumptions do not give 12 L d^2 for these layers; "
             "their relations substituted into the exact count give {approx} ({approx_short}), "
             "the exact non-embedding count is {exact} ({exact_short}).", **fields)


COINCIDE = {
    "both": "The curves of {models} coincide (the same a and c): one line shows them all.",
    "quadratic": "The quadratic terms of {models} coincide (the same a): one solid line shows "
                 "them all.",
    "linear": "The linear terms of {models} coincide (the same c): one dashed line shows them "
              "all.",
}


def _caption(h: Handout, esc) -> str:
    parts = [_("Dashed: the linear term c s; solid: the quadratic term a s^2; the dot marks s* "
               "where they meet.")]
    with_context = [sh.spec.name for sh in h.sheets if sh.context]
    if with_context:
        parts.append(_("A dotted vertical line marks the context length of {models}.",
                       models=", ".join(with_context)))
    for term, group in h.coincide:
        parts.append(_(COINCIDE[term], models=", ".join(group)))
    text = parts[0]
    for part in parts[1:]:  # sentences one after another (no space between Chinese ones)
        text = _("{first} {second}", first=text, second=part)
    return esc(text)


def handout_blanks(h: Handout) -> Blanks:
    """The blanks of a handout's exercise sheet: none yet, and the sizes its tables give."""
    return Blanks({sympy.Rational(d.value) for sh in h.sheets for d in sh.dims.values()})


def handout_view(h: Handout, tex: bool, units: Units = Units(), blanks: Blanks | None = None,
                 key: Blanks | None = None) -> dict:
    """Everything the handout templates show; on an exercise sheet (``h.exercises``) every
    answer a numbered blank kept in ``blanks``; ``key``, the blanks of that sheet, makes the
    document its answer key."""
    esc = latex_text if tex else markdown_text
    view_of = tex_view if tex else md_view
    if h.exercises and blanks is None:
        blanks = handout_blanks(h)
    if not h.exercises:
        blanks = None

    def blank(text: str, value) -> str:  # a table cell of the sheet
        return exercise_cell(blanks, text, value, tex)

    refs = SourceIndex()
    models = [esc(sh.spec.name) for sh in h.sheets]
    dims = []
    for n in h.dimensions:
        define = next(sh.dims[n] for sh in h.sheets if n in sh.dims)
        dims.append({"symbol": symbol_tex(define.symbol), "meaning": esc(tr(define.meaning)),
                     "cells": [plain_number(sh.dims[n].value) if n in sh.dims else "--"
                               for sh in h.sheets]})
    cats = [c for c in CATEGORIES if any(c in sh.categories for sh in h.sheets)]
    breakdown = []
    for c in cats:
        cells, shares = [], []
        for sh in h.sheets:
            n, share = sh.categories.get(c, 0), esc(percent(100 * sh.categories.get(c, 0) / sh.total))
            cells.append(blank(grouped(n), n) if blanks else grouped(n))
            shares.append(blank(share, None) if blanks else share)
        breakdown.append({"name": esc(tr(c)), "cells": cells, "shares": shares})
    totals = [blank(grouped(sh.total), sh.total) if blanks else grouped(sh.total)
              for sh in h.sheets]
    keys = ["".join(ch for ch in c if ch.isalnum()) for c in cats]
    # each bar labelled with the share exactly as the table prints it
    bars = [{"model": models[i], "color": COLORS[i % len(COLORS)], "coords": " ".join(
        f"({key},{100 * sh.categories.get(c, 0) / sh.total:.2f}) "
        f"[{esc(percent(100 * sh.categories.get(c, 0) / sh.total))}]"
        for key, c in zip(keys, cats))} for i, sh in enumerate(h.sheets)]
    views = {part: [_no_sizes(view_of(getattr(sh, part), units, refs, blanks=blanks))
                    for sh in h.sheets] for part in ("params", "closed")}
    budget_rows = _budget_rows(h, esc, blank if blanks else None) if "budget" in h.sections else []
    notes = [_notes(sh, esc, blanks, tex) for sh in h.sheets]
    views["budget"] = [[_no_sizes(view_of(d, units, refs, blanks=blanks))
                        for d in sh.budget.derivations] if sh.budget else [] for sh in h.sheets]
    views["flops"] = [_no_sizes(view_of(sh.flops, units, refs, blanks=blanks)) for sh in h.sheets]
    sheets = []
    for i, sh in enumerate(h.sheets):
        ctx = sh.context
        top = max(sh.curve.points[-1][1], sh.curve.points[-1][2])
        bottom = min((v for v in sh.curve.points[0][1:] if v), default=1)  # a = 0: off the log axis
        budget = sh.budget
        sheets.append({
            "model": models[i], "attention": esc(tr(sh.attention)),
            "color": COLORS[i % len(COLORS)], "mark": MARKS[i % len(MARKS)],
            "total": grouped(sh.total), "total_short": short(sh.total),
            "params": views["params"][i], "closed": views["closed"][i],
            "flops": views["flops"][i], "budget": views["budget"][i],
            "budget_notes": notes[i],
            "correction": grouped(sh.closed.meta["correction"]),
            "kaplan": grouped(sh.closed.meta["approx"]),
            "closed_line": esc(_closed_line(sh))
            if not blanks and sh.closed.meta.get("exact") is not None else "",
            **_crossover_view(sh.curve),
            "linear_coords": " ".join(f"({p},{_sci(lin)})" for p, lin, _ in sh.curve.points),
            # no s^2 term: no solid line (zero has no place on the log axis)
            "quadratic_coords": " ".join(f"({p},{_sci(quad)})" for p, _, quad in sh.curve.points)
            if sh.curve.quadratic else "",
            "context": grouped(ctx) if ctx else "",
            "context_line": f"({ctx},{_sci(bottom)}) ({ctx},{_sci(top)})" if ctx else "",
            "rows": [{"s": grouped(p), "linear": grouped(lin), "quadratic": grouped(quad),
                      "over": quad > lin} for p, lin, quad in sh.curve.points],
            "speed": _speed_view(sh, models[i], esc, blank, blanks, units, refs, view_of),
        })
    summary = _summary(h, esc, units) if "budget" in h.sections else {
        "rows": [], "workload": "", "activations": ""}
    if blanks:  # the box would only repeat the budget's blanks
        summary = dict(summary, rows=[])
    groups = []
    for idx in _chunks(list(range(len(h.sheets)))):
        groups.append({"models": [models[i] for i in idx],
                       "dims": [dict(r, cells=[r["cells"][i] for i in idx]) for r in dims],
                       "breakdown": [dict(r, cells=[r["cells"][i] for i in idx],
                                          shares=[r["shares"][i] for i in idx]) for r in breakdown],
                       "totals": [totals[i] for i in idx],
                       "totals_short": ["" if blanks else short(h.sheets[i].total)
                                        for i in idx],
                       "budget": [dict(r, cells=[r["cells"][i] for i in idx]) for r in budget_rows],
                       "summary": [dict(r, cells=[r["cells"][i] for i in idx])
                                   for r in summary["rows"]],
                       "sheets": [sheets[i] for i in idx]})
    many = len(h.sheets) > 3
    splitting = _splitting(h, esc, view_of, units, refs, blank, blanks) if h.splitting else None
    return {"splitting": splitting, "title": esc(tr(h.title)), "models": models, "dims": dims,
            "breakdown": breakdown,
            "groups": groups, "sections": list(h.sections), "exercises": h.exercises,
            "key": key.key() if key is not None else [],
            "summary": summary,
            "totals": [grouped(sh.total) for sh in h.sheets],
            "totals_short": [short(sh.total) for sh in h.sheets],
            "bars": bars, "categories": [esc(tr(c)) for c in cats], "category_keys": keys,
            "category_labels": ["{" + esc(tr(c)) + "}" for c in cats],
            "rotate_labels": len(cats) > 5, "enlarge": "0.12" if len(cats) > 3 else "0.25",
            "bar_width": f"{max(3, min(9, 48 // max(1, len(h.sheets))))}pt",
            "bar_labels": not many, "legend_columns": min(4, len(h.sheets)),
            "caption": _caption(h, esc),
            "sheets": sheets, "points": [grouped(p) for p in h.points],
            "xmin": h.points[0], "xmax": h.points[-1], "wide": len(h.sheets) > 2,
            "speed": _speed_figure(h, esc), "references": refs.entries(esc)}


def _crossover_view(curve) -> dict:
    """s* of one model as the table, the text and the figure show it; all empty for a model
    without an s^2 term (``curve.crossover`` None: the templates say it has none)."""
    x = curve.crossover
    if x is None:
        return {"crossover": "", "crossover_tex": "", "crossover_point": ""}
    return {"crossover": _approx(x),
            "crossover_tex": number_tex(x) if x.q == 1 else math_decimal(ratio(x.p, x.q), 1),
            "crossover_point": f"({_sci(x)},{_sci(curve.linear * x)})"}


def _speed_view(sh, model, esc, blank, blanks, units, refs, view_of):
    """The "How fast" section of one model (render.handout_speed), with its derivation."""
    if sh.speed is None:
        return None
    from .handout_speed import sheet_view

    v = sheet_view(sh, model, sh.spec.moe, esc, blank, blanks)
    v["derivation"] = view_of(sh.speed.derivation, units, refs, blanks=blanks)
    return v


def _speed_figure(h: Handout, esc):
    if "speed" not in h.sections:
        return None
    from .handout_speed import figure_view

    return figure_view(list(h.sheets), esc)


SPLIT_COLUMNS = (("per_rank.params", "parameters per rank", False),
                 ("per_rank.weights_bytes", "weights per rank", True),
                 ("per_rank.peak_bytes", "training peak per rank", True),
                 ("communication.tp.step_wire_bytes", "TP bytes sent per step", True),
                 ("communication.pp.step_wire_bytes", "PP bytes sent per step", True),
                 ("communication.dp.step_wire_bytes", "DP bytes sent per step", True))


def _splitting(h: Handout, esc, view_of, units: Units, refs: SourceIndex, blank,
               blanks: Blanks | None) -> dict:
    """The section "Splitting the model across GPUs": per model a table of layouts (rows)
    by per-rank figure (columns), each model's weights per rank worked out at one layout,
    the exercise and (in the answer key) its numbers. On an exercise sheet every figure is
    a numbered blank (``blank(text, value)``)."""
    sp = h.splitting

    def cell(f, key, is_bytes):
        if f is None:
            return "--"
        text = "0" if not f[key] else _bytes_short(f[key]) if is_bytes else short(f[key])
        return blank(text, f[key]) if blanks else text

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
                     lang: str | None = None, blanks: Blanks | None = None,
                     key: Blanks | None = None) -> str:
    """The handout in Markdown, in ``lang`` (en, ru, zh; default: the language in force); an
    exercise sheet keeps its numbered blanks in ``blanks``, and ``key`` (a sheet's blanks)
    makes the document that sheet's answer key."""
    with using(lang or current()):
        if h.exercises and blanks is None:
            blanks = handout_blanks(h)
        v = handout_view(h, tex=False, units=units, blanks=blanks, key=key)
        text = render_user(template, False, h=v) if template else render("handout.md.j2", h=v)
        return blanks.finish(text) if h.exercises else text


def handout_latex(h: Handout, units: Units = Units(), template: str | None = None,
                  lang: str | None = None, blanks: Blanks | None = None,
                  key: Blanks | None = None) -> str:
    """The handout as a LaTeX document, in ``lang``: pdflatex's preamble for ASCII English,
    xelatex's with the fonts its text needs otherwise (:func:`.latex.with_fonts`);
    ``blanks`` and ``key`` as for :func:`handout_markdown`."""
    with using(lang or current()):
        if h.exercises and blanks is None:
            blanks = handout_blanks(h)
        finish = blanks.finish if h.exercises else (lambda text: text)
        v = handout_view(h, tex=True, units=units, blanks=blanks, key=key)
        if template:
            return with_fonts(lambda f: finish(render_user(template, True, h=v, fonts=f)))
        return with_fonts(lambda f: finish(render("handout.tex.j2", h=v, fonts=f)))


def exercise_documents(h: Handout, tex: bool, units: Units = Units(),
                       template: str | None = None, lang: str | None = None) -> tuple[str, str]:
    """An exercise sheet of ``h`` and its answer key: the worked handout, labelled as the key,
    led by the answer of every numbered blank."""
    from dataclasses import replace

    write = handout_latex if tex else handout_markdown
    blanks = handout_blanks(h)
    sheet = write(replace(h, exercises=True), units, template, lang, blanks=blanks)
    return sheet, write(replace(h, exercises=False), units, template, lang, key=blanks)


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


# what LaTeX and its packages write in the log when the document needs another run
RERUN = re.compile(r"Rerun to get|Label\(s\) may have changed|rerunfilecheck|Please rerun LaTeX")
MAX_RUNS = 3


def compile_pdf(tex: str, output: Path, engine: str | None = None) -> None:
    """pdflatex or xelatex (:func:`engine_for`) in a scratch directory, run once, and again
    (at most :data:`MAX_RUNS` runs) only while its log asks for a rerun; shell escape off, file access restricted to that directory
    (:func:`latex_environment`). On failure the log is kept next to the output (``output``
    with ``.log``) and the first error is named; a glyph the fonts lack is an error naming
    the character."""
    engine = engine or engine_for(tex)
    program = shutil.which(engine)
    if not program:
        need = "texlive-xetex" if engine == "xelatex" else "texlive-latex-base"
        raise SymcalcError("-o", f"PDF output of this document needs {engine} (not found on "
                                 f"PATH); write FILE.tex instead, or install {need}")
    with tempfile.TemporaryDirectory(prefix="symcalc-") as tmp:
        src = Path(tmp) / "handout.tex"
        src.write_text(tex, encoding="utf-8")
        # one run sets a document without cross-references; the engine asks for another in
        # its log when labels changed (a user template with \ref), and gets it, up to 3 runs
        run = [program, "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", src.name]
        env = latex_environment(tmp)
        log = Path(tmp) / "handout.log"
        for attempt in range(MAX_RUNS):
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
            if not RERUN.search(text):
                break
        pdf = Path(tmp) / "handout.pdf"
        if not pdf.exists():  # e.g. a template whose every input was refused: no pages
            raise SymcalcError("-o", f"{engine} wrote no PDF for this document (no pages of "
                                     "output: was everything it reads refused?)")
        shutil.copyfile(pdf, output)

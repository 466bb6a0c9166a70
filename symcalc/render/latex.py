"""LaTeX output: a derivation as a fragment (``align*`` blocks to paste) or as a standalone
document that compiles with pdflatex (ASCII English) or xelatex (any other text, fonts chosen by
:mod:`.fonts`). User text is escaped (:mod:`.escape`); words are in the language asked for
(:mod:`symcalc.i18n`)."""
from __future__ import annotations

from typing import Callable

from ..derivations.derivation import Derivation
from ..i18n import current, using
from . import fonts as fontlib
from .escape import latex_text
from .templates import render, render_user
from .view import SourceIndex, Units, derivation_view, sheet_blanks

# 亿 is shown as itself (xelatex with a CJK font); Jupyter's MathJax gets it as text too
YI_TEX = "亿"


def with_fonts(render_with: Callable[[dict | None], str]) -> str:
    """A whole document rendered once without fonts; when its text is not plain ASCII English,
    rendered again with the fonts xelatex needs for it (:func:`.fonts.choose`)."""
    tex = render_with(None)
    chosen = fontlib.choose(tex, current())
    return tex if chosen is None else render_with(chosen)


def align_rows(equations: list[dict]) -> list[dict]:
    """Equations as align* rows: the first line of each carries its left side and its tag; a
    label too wide to stand beside its equation is a row of text above it."""
    rows = []
    for eq in equations:
        tag = eq["meaning"] + (f"~[{eq['ref']}]" if eq["ref"] else "")
        if eq.get("tag_above") and tag:
            rows.append({"text": tag, "lhs": "", "rhs": "", "tag": ""})
            tag = ""
        for i, line in enumerate(eq["lines"]):
            rows.append({"lhs": eq["lhs"] if i == 0 else "", "rhs": line,
                         "tag": tag if i == 0 else "", "text": ""})
    return rows


def tex_view(d: Derivation, units: Units = Units(), refs: SourceIndex | None = None,
             blanks=False) -> dict:
    v = derivation_view(d, latex_text, units, refs, yi_text=YI_TEX, blanks=blanks, tex=True)
    v["words_escaped"] = True
    for s in v["sections"]:
        if s["kind"] == "steps":
            s["rows"] = align_rows(s["equations"])
        if s["kind"] == "result":
            s["words"] = [w.replace(latex_text(YI_TEX), YI_TEX) for w in s["words"]]
    return v


def derivation_latex(d: Derivation, standalone: bool = False, units: Units = Units(),
                     template: str | None = None, jupyter: bool = False,
                     blanks=False, lang: str | None = None, key=None) -> str:
    """A derivation in LaTeX; ``standalone`` wraps it in a compilable article; ``blanks``
    (True or :class:`.exercises.Blanks`) makes it an exercise sheet (every computed number a
    numbered blank) and ``key`` (that sheet's blanks) its answer key; ``lang``: en, ru or zh
    (default: the language in force)."""
    with using(lang or current()):
        return _derivation_latex(d, standalone, units, template, jupyter, blanks, key)


def _derivation_latex(d, standalone, units, template, jupyter, blanks, key=None) -> str:
    if jupyter:
        v = derivation_view(d, mathjax_text, units, yi_text="亿")
        for sec in v["sections"]:
            if sec["kind"] == "steps":
                sec["rows"] = [dict(r, tag=r["tag"].replace("~[", " ["))
                               for r in align_rows(sec["equations"])]
        return body_for_jupyter(v)
    if blanks is True:
        blanks = sheet_blanks(d)
    finish = blanks.finish if blanks else (lambda text: text)
    v = tex_view(d, units, blanks=blanks)
    v["key"] = key.key() if key is not None else []
    if template:
        return finish(render_user(template, True, v=v, standalone=standalone))
    body = finish(render("derivation.tex.j2", v=v))
    if not standalone:
        return body
    return with_fonts(lambda f: render("document.tex.j2", body=body, pgfplots=False, fonts=f))


def mathjax_text(text: object) -> str:
    """Text for MathJax's ``\\text{...}``: it has no text-mode escapes, so the characters that
    would end the text, align or start math are spelled out or dropped."""
    out = str(text)
    for ch, word in (("\\", "/"), ("{", "("), ("}", ")"), ("$", ""), ("&", "and"), ("#", "no."),
                     ("%", " percent"), ("^", "^"), ("~", "~")):
        out = out.replace(ch, word)
    return "".join(c for c in out if c.isprintable())


def jupyter_text(text: object) -> str:
    """Words inside display math that both MathJax and (pdf)LaTeX set, as nbconvert's PDF
    export compiles them: ``\\text{}`` pieces holding no character that either reads
    specially (:func:`mathjax_text`), an underscore set as math between them (``\\_``), a
    power as a superscript digit or ``**``."""
    out = mathjax_text(text)
    for power, digit in (("^2", "\u00b2"), ("^3", "\u00b3")):
        out = out.replace(power, digit)
    out = out.replace("^", "**")
    return "\\_".join(f"\\text{{{piece}}}" for piece in out.split("_"))


def body_for_jupyter(v: dict) -> str:
    """Jupyter's LaTeX display is MathJax: one aligned block, text in ``\\text{}``. It keeps
    what the document shows: the title, the sizes with their meanings, each step with its
    label and source number, the result with its unit, and the sources."""
    t = jupyter_text
    lines = [f"&{t(v['title'])}"]
    if v["conventions"]:
        lines.append(f"&{t('Conventions: ' + '; '.join(v['conventions']))}")
    for s in v["sections"]:
        if s["kind"] == "sizes":
            lines.append(f"&{t(s['title'])}")
            lines += [f"{r['symbol']} &= {r['value_tex']} && {t(r['meaning'])}" for r in s["rows"]]
        elif s["kind"] == "steps":
            lines.append(f"&{t(s['title'])}")
            for r in s["rows"]:
                if r.get("text"):
                    lines.append(f"&{t(r['text'])}")
                    continue
                tag = f" && {t(r['tag'])}" if r["tag"] else ""
                lines.append(f"{r['lhs']} &{r['rhs']}{tag}")
        else:
            lines.append(f"{s['lhs']} &= {s['value_tex']} && {t(' = '.join(s['words']))}")
    lines += [f"&{t('[' + str(r['n']) + '] ' + r['citation'])}" for r in v["references"]]
    return "$$\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}$$"

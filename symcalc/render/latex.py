"""LaTeX output: a derivation as a fragment (``align*`` blocks to paste) or as a standalone
document that compiles with pdflatex. User text is escaped (:mod:`.escape`)."""
from __future__ import annotations

from ..derivations.derivation import Derivation
from .escape import latex_text
from .templates import render, render_user
from .view import SourceIndex, Units, derivation_view

YI_TEX = r"$\times 10^{8}$ (yi)"


def align_rows(equations: list[dict]) -> list[dict]:
    """Equations as align* rows: the first line of each carries its left side and its tag."""
    rows = []
    for eq in equations:
        tag = eq["meaning"] + (f"~[{eq['ref']}]" if eq["ref"] else "")
        for i, line in enumerate(eq["lines"]):
            rows.append({"lhs": eq["lhs"] if i == 0 else "", "rhs": line, "tag": tag if i == 0 else ""})
    return rows


def tex_view(d: Derivation, units: Units = Units(), refs: SourceIndex | None = None) -> dict:
    v = derivation_view(d, latex_text, units, refs, yi_text=YI_TEX)
    v["words_escaped"] = True
    for s in v["sections"]:
        if s["kind"] == "steps":
            s["rows"] = align_rows(s["equations"])
        if s["kind"] == "result":
            s["words"] = [w.replace(latex_text(YI_TEX), YI_TEX) for w in s["words"]]
    return v


def derivation_latex(d: Derivation, standalone: bool = False, units: Units = Units(),
                     template: str | None = None, jupyter: bool = False) -> str:
    """A derivation in LaTeX; ``standalone`` wraps it in a compilable article."""
    v = tex_view(d, units)
    if template:
        return render_user(template, True, v=v, standalone=standalone)
    body = render("derivation.tex.j2", v=v)
    if jupyter:
        return body_for_jupyter(v)
    if not standalone:
        return body
    return render("document.tex.j2", body=body, pgfplots=False)


def body_for_jupyter(v: dict) -> str:
    """Jupyter's LaTeX display is MathJax: math only, one aligned block."""
    rows = [r for s in v["sections"] if s["kind"] == "steps" for r in s["rows"]]
    lines = [f"{r['lhs']} &{r['rhs']}" for r in rows]
    result = next(s for s in v["sections"] if s["kind"] == "result")
    lines.append(f"{result['lhs']} &= {result['value_tex']}")
    return "$$\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}$$"

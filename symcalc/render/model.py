"""How a :class:`symcalc.model.Model` shows itself in Jupyter: dimensions and totals."""
from __future__ import annotations

from ..algebra.symbols import SIZES
from ..i18n import _, tr, using
from .escape import markdown_text
from .latex import jupyter_text
from .numbers import bytes_both, grouped, short, si
from .view import number_tex


def _rows(m) -> list[tuple[str, str, str]]:
    rep = m.report()
    p = rep["params"]
    rows = [(SIZES[n].latex, tr(SIZES[n].meaning), v) for n, v in m.spec.sizes().items()]
    return rows, [
        (_("parameters"), p["total"], short(p["total"])),
        (_("non-embedding parameters"), p["non_embedding"], short(p["non_embedding"])),
        (_("forward FLOPs (matmul, batch {b}, seq_len {s})", b=rep["flops"]["batch"],
           s=rep["flops"]["seq_len"]),
         rep["flops"]["forward_matmul"], si(rep["flops"]["forward_matmul"])),
        (_("weights at {dtype} (bytes)", dtype=rep["memory"]["dtype"]),
         rep["memory"]["weights_bytes"], bytes_both(rep["memory"]["weights_bytes"])),
    ]


def model_markdown(m) -> str:
    """The summary table in Markdown, its words in the model's language (``m.lang``)."""
    with using(getattr(m, "lang", "en")):
        sizes, totals = _rows(m)
        lines = [f"**{markdown_text(m.name)}**", "",
                 f"| {_('symbol')} | {_('meaning')} | {_('value')} |", "|---|---|---:|"]
        lines += [f"| ${sym}$ | {markdown_text(meaning)} | {grouped(v)} |"
                  for sym, meaning, v in sizes]
        lines += ["", f"| {_('quantity')} | {_('exact')} | |", "|---|---:|---|"]
        lines += [f"| {label} | {grouped(v)} | {extra} |" for label, v, extra in totals]
    return "\n".join(lines) + "\n"


def model_latex(m) -> str:
    """MathJax-friendly: one array, text in \\text{}; its words in the model's language."""
    with using(getattr(m, "lang", "en")):
        sizes, totals = _rows(m)
        rows = [f"{sym} & {jupyter_text(meaning)} & {number_tex(v)}" for sym, meaning, v in sizes]
        rows += [f"{jupyter_text(label)} & & {number_tex(v)}" for label, v, _extra in totals]
    name = "".join(ch for ch in m.name if ch.isalnum() or ch in "-. ")
    return ("$$\\begin{array}{llr}\n\\textbf{" + name + "} & & \\\\\n"
            + " \\\\\n".join(rows) + "\n\\end{array}$$")

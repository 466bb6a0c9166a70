"""Escaping of text a user supplies (model names, titles, labels) for LaTeX and Markdown.

LaTeX: every special character (``\\ { } $ & # ^ _ % ~``) becomes a command that prints it,
then non-ASCII characters go through latexcodec (``ü`` -> ``\\"u``); a character latexcodec
cannot spell (e.g. CJK under pdflatex) is shown as its code point, ``[U+4EBF]``. The result is
visible text in any context: ``\\input{/etc/passwd}`` prints as those characters and runs
nothing.
"""
from __future__ import annotations

import codecs

import latexcodec  # noqa: F401  (registers the "latex" codec)

LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", '"': r"\textquotedbl{}",
}


def _non_ascii(ch: str) -> str:
    try:
        return "{" + codecs.encode(ch, "latex").decode("ascii") + "}"  # {\"\i}code, not \"\icode
    except UnicodeEncodeError:
        return f"[U+{ord(ch):04X}]"


def latex_text(text: object) -> str:
    """``text`` as LaTeX that prints it literally (text mode)."""
    out = []
    for ch in str(text):
        if ch in LATEX_SPECIALS:
            out.append(LATEX_SPECIALS[ch])
        elif ord(ch) < 128:
            out.append(ch if ch.isprintable() else " ")
        else:
            out.append(_non_ascii(ch))
    return "".join(out)


MARKDOWN_SPECIALS = set("\\`*_[]|$~#")


def markdown_text(text: object) -> str:
    """``text`` as Markdown that displays it literally (no markup, no HTML, no math)."""
    out = []
    for ch in str(text):
        if ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == "&":
            out.append("&amp;")
        elif ch in MARKDOWN_SPECIALS:
            out.append("\\" + ch)
        elif ch in "\r\n":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)

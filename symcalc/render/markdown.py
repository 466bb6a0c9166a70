"""Markdown output: headings, tables, and math in ``$...$`` / ``$$...$$`` that GitHub and
Jupyter display. User text is escaped (:func:`.escape.markdown_text`)."""
from __future__ import annotations

from ..derivations.derivation import Derivation
from .escape import markdown_text
from .templates import render, render_user
from .view import SourceIndex, Units, derivation_view


def md_view(d: Derivation, units: Units = Units(), refs: SourceIndex | None = None) -> dict:
    return derivation_view(d, markdown_text, units, refs)


def derivation_markdown(d: Derivation, units: Units = Units(), template: str | None = None) -> str:
    v = md_view(d, units)
    if template:
        return render_user(template, False, v=v)
    return render("derivation.md.j2", v=v)

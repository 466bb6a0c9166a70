"""Markdown output: headings, tables, and math in ``$...$`` / ``$$...$$`` that GitHub and
Jupyter display. User text is escaped (:func:`.escape.markdown_text`)."""
from __future__ import annotations

from ..derivations.derivation import Derivation
from ..i18n import current, using
from .escape import markdown_text
from .templates import render, render_user
from .view import SourceIndex, Units, derivation_view


def md_view(d: Derivation, units: Units = Units(), refs: SourceIndex | None = None,
            blanks: bool = False) -> dict:
    return derivation_view(d, markdown_text, units, refs, blanks=blanks)


def derivation_markdown(d: Derivation, units: Units = Units(), template: str | None = None,
                        blanks: bool = False, lang: str | None = None) -> str:
    """A derivation in Markdown, its words in ``lang`` (en, ru, zh; default: the language in
    force)."""
    with using(lang or current()):
        v = md_view(d, units, blanks=blanks)
        if template:
            return render_user(template, False, v=v)
        return render("derivation.md.j2", v=v)

"""Markdown output: headings, tables, and math in ``$...$`` / ``$$...$$`` that GitHub and
Jupyter display. User text is escaped (:func:`.escape.markdown_text`)."""
from __future__ import annotations

from ..derivations.derivation import Derivation
from ..i18n import current, using
from .escape import markdown_text
from .templates import render, render_user
from .view import SourceIndex, Units, derivation_view, sheet_blanks


def md_view(d: Derivation, units: Units = Units(), refs: SourceIndex | None = None,
            blanks=False) -> dict:
    return derivation_view(d, markdown_text, units, refs, blanks=blanks)


def derivation_markdown(d: Derivation, units: Units = Units(), template: str | None = None,
                        blanks=False, lang: str | None = None, key=None) -> str:
    """A derivation in Markdown, its words in ``lang`` (en, ru, zh; default: the language in
    force); ``blanks`` (True or :class:`.exercises.Blanks`) makes it an exercise sheet, and
    ``key`` (the blanks of that sheet) makes it its answer key."""
    with using(lang or current()):
        if blanks is True:
            blanks = sheet_blanks(d)
        v = md_view(d, units, blanks=blanks)
        v["key"] = key.key() if key is not None else []
        text = render_user(template, False, v=v) if template else render("derivation.md.j2", v=v)
        return blanks.finish(text) if blanks else text

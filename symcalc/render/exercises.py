"""Exercise sheets: every answer is a numbered blank, and the key fills them.

A sheet shows the formulas and the sizes. Each computed value is a blank; so are a few
formulas a student should be able to write (the KV cache, a training step as a multiple of
the forward pass, the crossover length) and the reasons behind a lesson (why a tied head
adds 0, what grouped-query attention saves). No answer may appear anywhere else on the
sheet: a substitution of earlier results is left out, a note that states a result becomes
its question, and a value equal to a number the sheet gives anyway (a size) is shown rather
than asked. The renderer that builds the sheet keeps the :class:`Blanks`; the answer key is
rendered from them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import sympy

from ..i18n import _

# formulas left blank as well as their values: the lesson is writing them
FORMULA_BLANKS = ("memory.kv_cache_bytes", "crossover", "flops.training")
# the questions a sheet asks in place of the notes that state a lesson's answer
QUESTIONS = {
    "gqa": "How much does grouped-query attention save here, and on what?",
    "mla": "How many times fewer values per token and layer does the latent cache hold than "
           "multi-head attention would?",
    "mla_token": "How many times fewer values per token, over all its layers, does the latent "
                 "cache hold than multi-head attention would?",
    "hybrid": "What share of the decode memory is the recurrent state at this length, and how "
              "does each part change with s?",
    "negative": "Why is the exact count below 6 N D here?",
}


@dataclass(frozen=True)
class Blank:
    n: int
    kind: str  # value, formula, reason or cell
    answer: str  # ready to show: LaTeX math when ``math``, else text
    math: bool
    value: object = None  # the exact number of a value or cell blank


# a blank's number while the sheet is built; :meth:`Blanks.finish` numbers the blanks in
# the order the page shows them
_TOKEN = re.compile(r"QQB(\d+)QQ")


def _token(n: int) -> str:
    return f"QQB{n}QQ"


@dataclass
class Blanks:
    """The numbered blanks of one sheet, and the numbers it gives (its sizes)."""
    given: set = field(default_factory=set)
    items: list[Blank] = field(default_factory=list)
    order: dict[int, int] = field(default_factory=dict)  # built number -> number on the page

    def add(self, kind: str, answer: str, math: bool, value=None) -> int:
        self.items.append(Blank(len(self.items) + 1, kind, answer, math, value))
        return len(self.items)

    def finish(self, text: str) -> str:
        """The rendered sheet with its blanks numbered 1, 2, ... down the page (a blank the
        page does not show has no number and no line in the key)."""
        order: dict[int, int] = {}

        def number(m: re.Match) -> str:
            return str(order.setdefault(int(m[1]), len(order) + 1))

        out = _TOKEN.sub(number, text)
        self.order = order
        return out

    def shown(self) -> list[Blank]:
        """The blanks of the finished sheet, by their number on the page."""
        by_built = {b.n: b for b in self.items}
        return [Blank(new, by_built[old].kind, by_built[old].answer, by_built[old].math,
                      by_built[old].value)
                for old, new in sorted(self.order.items(), key=lambda kv: kv[1])]

    def gives(self, value) -> bool:
        """The sheet shows this number anyway (as a size), so it cannot be a blank's answer."""
        try:
            return sympy.Rational(value) in self.given
        except (TypeError, ValueError):
            return False

    def key(self) -> list[dict]:
        return [{"n": b.n, "kind": b.kind, "answer": b.answer, "math": b.math}
                for b in self.shown()]


def blank_math(n: int) -> str:
    """A blank inside math, numbered (LaTeX and MathJax)."""
    return f"\\underline{{\\;({_token(n)})\\qquad\\qquad}}"


def blank_text(n: int, tex: bool) -> str:
    """A blank in running text or a table cell, numbered."""
    return (f"\\underline{{\\hspace{{1.6cm}}}}\\,({_token(n)})" if tex
            else f"\\_\\_\\_\\_ ({_token(n)})")


def sheet_equation(eq: dict, blanks: Blanks, value_tex, tex: bool, esc) -> dict:
    """An equation of a sheet: its formula and the sizes substituted, its value a blank. A sum
    of earlier parts shows only its formula (their numbers are earlier answers); a line that
    is a bare number (a tied head's 0) asks why."""
    if not eq.get("done") or (eq.get("value") is None and eq.get("number") is None):
        return eq  # nothing computed on this line (a rule stated, a bound named)
    value = eq.get("value")
    if eq.get("number") is not None:
        n = blanks.add("reason", eq["meaning"], False)
        question = esc(_("Why is this {value}?", value=str(eq["number"])))
        return dict(eq, meaning=f"{question} {blank_text(n, tex)}", ref="")
    body = [p for i, p in enumerate(eq["pieces"][:-1]) if i not in eq.get("secret", ())]
    if eq.get("order") == "none":
        body = body[:1]
    if value is not None and blanks.gives(value):  # a size shown anyway: shown, not asked
        return dict(eq, pieces=body + eq["pieces"][-1:])
    if eq.get("raw_path") in FORMULA_BLANKS and body:
        n = blanks.add("formula", " ".join(body[0]), True)
        body = [[blank_math(n)]]
    n = blanks.add("value", value_tex(value), True, value)
    return dict(eq, pieces=body + [[blank_math(n)]])


def reference(n: int) -> str:
    """A blank named again (a result's words after its value): its number, no line to fill."""
    return f"({_token(n)})"


def cell(blanks: Blanks, text: str, value, tex: bool) -> str:
    """A table cell of a sheet: a numbered blank whose answer is the cell's text (the text
    itself where the sheet gives that number anyway)."""
    if value is not None and blanks.gives(value):
        return text
    return blank_text(blanks.add("cell", text, False, value), tex)

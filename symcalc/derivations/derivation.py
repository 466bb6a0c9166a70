"""A worked example as data: a sequence of typed steps, built by :mod:`symcalc.derivations.derive`
without any formatting and read by the renderers in :mod:`symcalc.render` (this module
imports none of them: :class:`symcalc.render.display.Shown` is a derivation that displays
itself in Jupyter).

Each quantity a derivation names ("one layer", "attention, query projection") has a *path*
(``layer/attention/q``) and a letter (``N`` parameters, ``C`` FLOPs, ``M`` bytes); the
sympy symbol :func:`part_symbol` stands for it when a later step composes it. A typical
component reads, as steps:

* :class:`Formula`  ``N_{attention,q} = d d_h n_h``  (with its source key)
* :class:`Substitute`  ``= 4096 \\cdot 128 \\cdot 32``  (sympy ``UnevaluatedExpr`` numbers)
* :class:`Evaluate`  ``= 16,777,216``  (an exact integer or rational)

and :class:`Compose` adds or scales earlier paths (``N_{layer} = N_{attention,q} + ...``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import sympy

UNITS = {"N": "parameters", "C": "FLOPs", "M": "bytes", "T": "seconds", "I": "FLOPs per byte",
         "B": "blocks", "S": "sequences", "U": "utilization", "R": "tokens per second",
         "K": "collectives"}
# assumption sets (symcalc.algebra.assumptions) as a sentence names them
ASSUMPTION_NAMES = {"kaplan": "Kaplan et al.'s assumptions", "textbook": "the textbook assumptions",
                    "none": "no assumptions",
                    "kaplan_relations": "Kaplan et al.'s relations substituted, not their form",
                    "even": "an even split (every degree divides what it splits)"}
_PART = re.compile(r"^([A-Z])\[(.*)\]$")


def part_symbol(letter: str, path: str) -> sympy.Symbol:
    """The symbol that stands for the value of ``path`` in a composing step."""
    return sympy.Symbol(f"{letter}[{path}]", positive=True)


def part_of(symbol: sympy.Symbol) -> Optional[tuple[str, str]]:
    """(letter, path) of a part symbol, or None for a size symbol."""
    m = _PART.match(symbol.name)
    return (m.group(1), m.group(2)) if m else None


@dataclass(frozen=True)
class Define:
    """A size symbol and its value for this model: ``d = 4096`` (hidden size)."""
    symbol: sympy.Symbol
    value: int
    meaning: str
    kind: str = "define"


@dataclass(frozen=True)
class Formula:
    """A component's formula in the canonical symbols, with its source key."""
    path: str
    letter: str
    expr: sympy.Expr
    source: str
    meaning: str = ""
    kind: str = "formula"


@dataclass(frozen=True)
class Compose:
    """A path as a sum or multiple of earlier paths (their :func:`part_symbol`)."""
    path: str
    letter: str
    expr: sympy.Expr
    meaning: str = ""
    source: str = ""
    kind: str = "compose"


@dataclass(frozen=True)
class Simplify:
    """``before`` rewritten as ``after`` under a named assumption set."""
    path: str
    letter: str
    before: sympy.Expr
    after: sympy.Expr
    assumption: str
    description: str
    source: str = ""
    kind: str = "simplify"


@dataclass(frozen=True)
class Substitute:
    """The previous line with numbers in place of its symbols: ``expr`` is that line's
    expression and ``values`` the numbers (sizes and earlier parts). :attr:`unevaluated`
    is the substituted expression itself, numbers kept apart (``12*32*4096**2``)."""
    path: str
    letter: str
    expr: sympy.Expr
    values: tuple[tuple[sympy.Symbol, object], ...]
    kind: str = "substitute"

    @property
    def unevaluated(self) -> sympy.Expr:
        return _unevaluated(self.expr, dict(self.values))


def _unevaluated(expr: sympy.Expr, values: dict) -> sympy.Expr:
    """``expr`` with symbols replaced by ``UnevaluatedExpr`` numbers, nothing combined
    (``.doit()`` evaluates it). Min/Max compare numbers, so they get plain ones."""
    if expr in values:
        return sympy.UnevaluatedExpr(sympy.sympify(values[expr]))
    if expr.is_Atom:
        return expr
    if isinstance(expr, (sympy.Min, sympy.Max)):
        return expr.func(*[a.xreplace({k: sympy.sympify(v) for k, v in values.items()})
                           for a in expr.args], evaluate=False)
    return expr.func(*[_unevaluated(a, values) for a in expr.args], evaluate=False)


@dataclass(frozen=True)
class Evaluate:
    """The exact value of the previous line."""
    path: str
    letter: str
    value: Union[int, sympy.Rational]
    kind: str = "evaluate"


@dataclass(frozen=True)
class Result:
    """The derivation's answer with its unit (a whole number: bytes are rounded up; a time or
    a utilization an exact rational)."""
    path: str
    letter: str
    value: Union[int, sympy.Rational]
    unit: str
    meaning: str = ""
    kind: str = "result"
    note: str = ""  # a figure the result implies (a share): not shown on an exercise sheet


@dataclass(frozen=True)
class Relate:
    """``lhs op rhs[0] = rhs[1] = ...``: a relation or a chain of equal forms, where ``op`` is
    ``=``, ``<=``, ``>=``, ``<``, ``>`` or ``~`` (approximately); a solving step."""
    path: str
    letter: str
    lhs: sympy.Expr
    op: str
    rhs: tuple[sympy.Expr, ...]
    meaning: str = ""
    source: str = ""
    kind: str = "relate"


Step = Union[Define, Formula, Compose, Simplify, Substitute, Evaluate, Result, Relate]


@dataclass(frozen=True)
class Section:
    title: str
    steps: tuple[Step, ...]
    note: str = ""


@dataclass(frozen=True)
class Derivation:
    """A worked example: who (model), what (quantity), how (sections of steps)."""
    model: str
    quantity: str
    title: str
    letter: str
    sections: tuple[Section, ...]
    conventions: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def unit(self) -> str:
        return UNITS[self.letter]

    def steps(self) -> list[Step]:
        return [step for section in self.sections for step in section.steps]

    @property
    def result(self) -> Result:
        return next(s for s in reversed(self.steps()) if isinstance(s, Result))

    def values(self) -> dict[str, Union[int, sympy.Rational]]:
        """path -> evaluated value, for every evaluated path."""
        return {s.path: s.value for s in self.steps() if isinstance(s, Evaluate)}

    def evaluations(self) -> list[tuple[str, object]]:
        """(path, value) of every Evaluate step, in order."""
        return [(s.path, s.value) for s in self.steps() if isinstance(s, Evaluate)]

    def __repr__(self) -> str:
        """One readable line (the dataclass repr would dump every step and expression): the
        title, the result with its unit, the size of the derivation and its sources."""
        try:
            r = self.result
            answer = (f" = {r.value:,} {r.unit}" if isinstance(r.value, int) else
                      f" = {r.value} ({float(r.value):.6g}) {r.unit}")
        except StopIteration:
            answer = ""
        steps = sum(len(s.steps) for s in self.sections)
        sources = ", ".join(self.sources()) or "none"
        return (f"<{type(self).__name__} {self.title!r}{answer}; {len(self.sections)} sections, "
                f"{steps} steps; sources: {sources}>")

    def sources(self) -> list[str]:
        """Source keys of every formula used, in order of first use."""
        out: dict[str, None] = {}
        for step in self.steps():
            key = getattr(step, "source", "")
            if key:
                out.setdefault(key, None)
        return list(out)

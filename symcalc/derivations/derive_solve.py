"""A solution (:class:`symcalc.algebra.solve.Solution`) as a derivation: the question, the
sizes that follow the one solved for, the other sizes, the equation with them substituted,
how the root was found, the root, and the rounding to valid integers. Data only."""
from __future__ import annotations

import sympy

from ..algebra.roots import pieces
from ..algebra.symbols import SIZES
from ..errors import SymcalcError
from .derivation import Define, Derivation, Relate, Result, Section

Q = sympy.Symbol("Q")
LETTERS = {"count": "N", "flops": "C", "bytes": "M"}


def _kind(solution) -> str:
    kinds = {k for n, k in solution.relation.names if "." in n or ":" in n}
    return "bytes" if "bytes" in kinds else "flops" if "flops" in kinds else "count"


def _method(solution) -> str:
    """What sympy did to find the root, in words."""
    x = solution.symbol
    split = pieces(solution.reduced, x)
    if len(split) > 1:
        return (f"Min/Max split into {len(split)} pieces, each solved on its own interval; "
                "the root is the one inside its piece")
    num, _ = sympy.fraction(sympy.together(solution.reduced))
    degree = sympy.Poly(sympy.expand(num), x).degree()
    if degree == 1:
        return "linear in the size: the one root of a x + c = 0 (sympy.roots)"
    if degree == 2:
        return "quadratic: the quadratic formula, positive root (sympy.roots)"
    return f"degree {degree}: real roots isolated exactly (sympy.real_roots, CRootOf)"


def _question(solution, letter: str) -> list:
    rel = solution.relation
    f = sympy.Function("f")(solution.symbol)
    steps = [Relate("question", letter, Q, "=", (rel.lhs,), f"Q = {rel.lhs_text}"),
             Relate("question", letter, Q, solution.relation.op, (rel.rhs,),
                    f"the condition: {rel.text}")]
    if solution.ties:
        steps.append(Relate("question", letter, Q, "=", (solution.lhs,),
                            "with the sizes that follow " + solution.size))
    return steps, f


def _rounding(solution, letter: str) -> list:
    x = solution.symbol
    q_at = sympy.Function("Q")
    said = "; ".join(solution.constraints) or f"{solution.size} a positive integer"
    yes, no = {"fit": ("fits", "does not fit"), "when": ("holds", "does not hold")}.get(
        solution.mode, ("", ""))
    steps = []
    for side, word in (("below", "at or below"), ("above", "at or above")):
        n = getattr(solution, side)
        if n is None:
            continue
        steps.append(Relate(side, letter, x, "=", (sympy.Integer(n),),
                            f"the nearest valid {solution.size} {word} the root ({said})"))
        held = getattr(solution, f"holds_{side}")
        verdict = (yes if held else no) if yes else ""
        steps.append(Relate(side, letter, q_at(sympy.Integer(n)), "=",
                            (sympy.Rational(getattr(solution, f"value_{side}")),),
                            f"Q there{': ' + verdict if verdict else ''}"))
    return steps


def _answer(solution):
    """(integer, words) the Result shows: the largest size that fits, the first size where
    the condition holds, or the size whose quantity is nearest the target."""
    b, a = solution.below, solution.above
    if solution.mode == "fit":
        return b, f"the largest {solution.size} that fits"
    if solution.mode == "when":
        pick = b if solution.holds_below else a
        return pick, f"the nearest valid {solution.size} where the condition holds"
    if b is None or a is None:
        return (a if b is None else b), f"the nearest valid {solution.size}"
    # the gap f = lhs - rhs at each (the right side may move with the size too)
    gap = {n: abs(solution.reduced.xreplace({solution.symbol: sympy.Integer(n)})) for n in (b, a)}
    near = b if gap[b] <= gap[a] else a
    return near, f"the valid {solution.size} whose Q is nearest the target"


def derive_solution(solution) -> Derivation:
    if solution.always:
        if solution.uncapped is None:
            raise SymcalcError(f"--{solution.mode}", f"{solution.relation.text!r:.80} holds at "
                                                     f"every {solution.size}: there is no root")
        inner = derive_solution(solution.uncapped)
        note = ("the relation holds at every size with the sliding window; below, the "
                "answer with every token cached")
        return Derivation(inner.model, inner.quantity, inner.title + " (no window)", inner.letter,
                          inner.sections, inner.conventions + (note,), inner.meta)
    kind = _kind(solution)
    letter = LETTERS[kind]
    x = solution.symbol
    question, f = _question(solution, letter)
    follows = [Relate("follows", letter, SIZES[t.name].symbol, "=", (t.expr,), t.why)
               for t in solution.ties]
    used = (solution.lhs - solution.rhs).free_symbols
    sizes = [Define(SIZES[k].symbol, v, SIZES[k].meaning) for k, v in solution.fixed
             if SIZES[k].symbol in used]
    subs = {SIZES[k].symbol: sympy.Integer(v) for k, v in solution.fixed}
    solving = [
        Relate("solve", letter, Q, "=", (sympy.expand(solution.lhs.xreplace(subs)),),
               "the other sizes at the model's values"),
        Relate("solve", letter, f, "=", (solution.reduced,),
               f"f = Q minus the right side; the condition is f {solution.relation.op} 0"),
    ]
    roots = tuple(r for r in (solution.general_form, solution.closed_form) if r is not None)
    solving.append(Relate("root", letter, x, "=", roots + (solution.exact,), _method(solution)))
    if not solution.exact.is_Integer:
        solving.append(Relate("root", letter, x, "~", (solution.exact.evalf(10),),
                              "its decimal value"))
    sections = [Section("Sizes", tuple(sizes)), Section("The question", tuple(question))]
    if follows:
        sections.append(Section(f"Sizes that follow {solution.size}", tuple(follows)))
    sections += [Section(f"Solving for {solution.size}", tuple(solving)),
                 Section("Valid integer sizes", tuple(_rounding(solution, letter)))]
    value, words = _answer(solution)
    if value is not None:
        sections.append(Section("Result", (Result(solution.size, letter, value, "size", words),)))
    conventions = tuple(solution.notes)
    title = f"Solving {solution.model} for {solution.size}: {solution.relation.text}"
    meta = {"solution": solution.to_json()}
    return Derivation(solution.model, f"solve {solution.size}", title, letter,
                      tuple(sections), conventions, meta)

"""Solving a relation between quantities for one size, the other sizes taken from the model.

``solve(spec, "d", "params.total = 7e9")`` keeps every size at the model's value except ``d``
and those that follow it (:mod:`.ties`), finds the exact positive real root of
``lhs - rhs = 0`` (:mod:`.roots`), and the nearest integer sizes on each side that the model
allows: a size is valid when it and every size that follows it are whole, it is a multiple
of ``multiple_of``, and the spec built with them keeps its rules (d divisible by n_h when d_h
follows d, n_h divisible by n_kv, ...).

The three modes differ only in the comparisons they take: ``target`` an equation,
``fit`` a budget (``<=`` or ``<``; "below" is then the largest size that fits), ``when`` any
inequality (a crossover).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Optional

import sympy

from .deadline import SOLVE_LIMIT, cpu_limit, undecided
from ..errors import SymcalcError
from . import quantities as q
from .options import Options, workload_values
from .refs import lookup_for
from .relation import Relation, parse_relation
from .roots import Unsplittable, evaluator, nearest, positive_roots
from .spec import SIZE_LIMIT, SIZE_LIMIT_TEXT, Spec, check_limit, size_values, with_overrides
from .symbols import SIZES
from .ties import Tie, all_ties, apply

MODES = {"target": ("=",), "fit": ("<=", "<"), "when": ("<=", ">=", "<", ">")}
WORKLOAD_SIZES = {"b": "batch", "s": "seq_len", "s_dec": "dec_seq_len", "N_d": "dp", "t": "tp"}


@dataclass(frozen=True)
class Solution:
    model: str
    size: str
    mode: str
    relation: Relation
    ties: tuple[Tie, ...]
    lhs: sympy.Expr  # the relation's sides with the ties applied, sizes as symbols
    rhs: sympy.Expr
    fixed: tuple[tuple[str, int], ...]  # the other sizes at the model's values
    reduced: sympy.Expr  # lhs - rhs as a function of the size alone
    roots: tuple[sympy.Expr, ...]  # every positive real root of ``reduced``
    exact: Optional[sympy.Expr]  # the root the integers are taken around
    closed_form: Optional[sympy.Expr]  # that root with the other sizes as symbols
    general_form: Optional[sympy.Expr]  # the same before the ties (no size following another)
    related_form: Optional[sympy.Expr]  # closed_form under the model's other relations
    relations: tuple[Tie, ...]  # ties that do not involve the size (used for related_form)
    below: Optional[int]
    above: Optional[int]
    value_below: Optional[sympy.Rational]  # lhs at ``below``
    value_above: Optional[sympy.Rational]
    holds_below: Optional[bool]  # does the relation hold at ``below``
    holds_above: Optional[bool]
    always: bool  # no root: the relation holds at every size
    multiple_of: int
    constraints: tuple[str, ...]  # what makes an integer size valid, as said to a user
    notes: tuple[str, ...]
    uncapped: Optional["Solution"] = None  # the answer with every Min(x, W) cap lifted

    @property
    def symbol(self) -> sympy.Symbol:
        return SIZES[self.size].symbol

    def equation(self) -> str:
        return f"{self.lhs} {self.relation.op} {self.rhs}"

    def to_json(self) -> dict:
        return {"equation": self.equation(),
                "exact": None if self.exact is None else str(self.exact),
                "below": self.below, "above": self.above,
                "value_below": json_number(self.value_below),
                "value_above": json_number(self.value_above)}


def json_number(x):
    if x is None:
        return None
    x = sympy.Rational(x)
    return int(x) if x.q == 1 else str(x)


def size_name(text, field: str = "--for") -> str:
    """The size a user names (``--for d``, ``--diff s``), read by the one expression parser
    with only the sizes as names: it must be one of them, alone."""
    from .expression import parse

    known = ", ".join(sorted(SIZES))
    try:
        got = parse(text, field, lambda n: (SIZES[n].symbol, "count") if n in SIZES else None)
    except SymcalcError:
        got = None
    if got is None or not got.expr.is_Symbol:
        raise SymcalcError(field, f"{text!r:.40} is not a size (sizes: {known})")
    return str(got.expr)


def solvable(spec: Spec, size: str, values: dict[str, int], field: str = "--for") -> str:
    """``size`` as a size name the model has (its sizes, or a workload symbol)."""
    size = size_name(size, field)
    if size not in values or (size not in spec.sizes() and size not in WORKLOAD_SIZES):
        raise SymcalcError(field, f"{spec.name} has no size {size} (its sizes: "
                                  f"{', '.join(sorted(set(spec.sizes()) | (set(values) & set(WORKLOAD_SIZES))))})")
    return size


def _values(spec: Spec, opts: Options) -> dict[str, int]:
    values = {**size_values(spec), **workload_values(spec, opts)}
    return {k: v for k, v in values.items() if k in SIZES}


def _valid(spec: Spec, size: str, ties: list[Tie], values: dict[str, int], step: int):
    """Is the integer n a valid value of ``size``: whole followers, the spec's rules."""
    x = SIZES[size].symbol
    subs = {SIZES[k].symbol: sympy.Integer(v) for k, v in values.items() if k != size}
    follows = [(t.name, evaluator(apply(SIZES[t.name].symbol, ties).xreplace(subs), x))
               for t in ties]

    def valid(n: int) -> bool:
        if n % step:
            return False
        changes = {size: n} if size in spec.sizes() else {}
        for name, at in follows:  # each follower, exactly (a Fraction, or a sympy number)
            v = at(n)
            if not (v > 0 and (v.denominator == 1 if isinstance(v, Fraction) else v.is_integer)):
                return False
            changes[name] = int(v)
        spec_changes = {k: v for k, v in changes.items() if k in spec.sizes()}
        if spec_changes:
            try:
                with_overrides(spec, spec_changes)
            except SymcalcError:
                return False
        return True

    return valid


def _denominators(spec: Spec, size: str, ties: list[Tie], values: dict[str, int]) -> list[int]:
    """For each size that follows ``size`` in proportion (d_h = d / n_h), the denominator
    ``size`` must be a multiple of for it to be whole: candidates step by their lcm."""
    x = SIZES[size].symbol
    subs = {SIZES[k].symbol: sympy.Integer(v) for k, v in values.items() if k != size}
    out = []
    for t in ties:
        ratio = sympy.expand(apply(SIZES[t.name].symbol, ties).xreplace(subs)) / x
        if ratio.is_Rational and ratio > 0:
            out.append(int(ratio.q))
    return out


def _constraints(spec: Spec, size: str, ties: list[Tie], values: dict[str, int], step: int):
    x = SIZES[size].symbol
    subs = {SIZES[k].symbol: sympy.Integer(v) for k, v in values.items() if k != size}
    out = [f"{size} a multiple of {step}"] if step > 1 else []
    for t in ties:
        follows = apply(SIZES[t.name].symbol, ties)
        at = sympy.expand(follows.xreplace(subs))
        coeff = sympy.Rational(at / x) if (at / x).is_Rational else None
        if coeff is not None and coeff.q > 1:
            out.append(f"{size} divisible by {coeff.q} so that {t.name} = {t.expr} is whole")
    if size == "n_h" and "n_kv" not in {t.name for t in ties}:
        out.append(f"n_h divisible by n_kv = {spec.n_kv}")
    if size == "n_kv":
        out.append(f"n_kv divides n_h = {spec.n_h}")
    return tuple(out)


def _closed_form(difference: sympy.Expr, x: sympy.Symbol, exact: sympy.Expr,
                 subs: dict) -> Optional[sympy.Expr]:
    """The root with the other sizes as symbols, when sympy finds it quickly (a rational
    function whose numerator is at most quadratic in x, no Min/Max)."""
    if difference.atoms(sympy.Min, sympy.Max):
        return None
    num, _ = sympy.fraction(sympy.together(difference))
    num = sympy.expand(num)
    try:
        if sympy.Poly(num, x).degree() > 2:
            return None
    except sympy.PolynomialError:
        return None
    for root in sympy.solve(num, x):
        if sympy.simplify(root.xreplace(subs) - exact) == 0:
            return sympy.factor(root) if len(str(sympy.factor(root))) < len(str(root)) else root
    return None


def solve(spec: Spec, size: str, relation: str, mode: str = "target", opts: Options = Options(),
          keep=(), multiple_of: int = 1, constants: dict | None = None) -> Solution:
    """See the module docstring. ``constants``: extra names for the relation (accelerators)
    as name -> (bytes, kind)."""
    opts = opts.checked()
    values = _values(spec, opts)
    size = solvable(spec, size, values)
    if isinstance(multiple_of, bool) or not isinstance(multiple_of, int) or multiple_of < 1:
        raise SymcalcError("--multiple-of", f"must be a positive integer (got {multiple_of!r:.40})")
    check_limit("--multiple-of", multiple_of)
    if mode not in MODES:
        raise SymcalcError("solve", f"mode must be one of {', '.join(MODES)} (got {mode!r:.40})")
    field = f"--{mode}"
    lookup, extra = lookup_for(spec, opts, constants or {})
    with cpu_limit(SOLVE_LIMIT, field, "solving"):
        rel = parse_relation(relation, field, lookup, MODES[mode], extra)
        own = set(spec.sizes()) | (set(values) & set(WORKLOAD_SIZES))
        missing = [n for n, _ in rel.names if n in SIZES and n not in own] + \
            sorted(str(s) for s in rel.difference().free_symbols if str(s) not in values)
        if missing:
            raise SymcalcError(field, f"{spec.name} has no size {missing[0]} (its sizes: "
                                      f"{', '.join(sorted(own))})")
        ties = all_ties(spec, keep, values, size)
        with undecided(field, rel.text):
            return _solve(spec, size, mode, rel, ties, values, multiple_of)


def _solve(spec, size, mode, rel, all_ties_, values, step, cap_lifted=False) -> Solution:
    x = SIZES[size].symbol
    ties = [t for t in all_ties_ if x in apply(SIZES[t.name].symbol, all_ties_).free_symbols]
    relations = [t for t in all_ties_ if t not in ties]
    lhs, rhs = apply(rel.lhs, ties), apply(rel.rhs, ties)
    if cap_lifted:
        lift = {a: x for a in (lhs - rhs).atoms(sympy.Min) if x in a.free_symbols}
        lhs, rhs = lhs.xreplace(lift), rhs.xreplace(lift)
    difference = sympy.expand(lhs - rhs)
    if x not in difference.free_symbols:
        raise SymcalcError("--for", f"{rel.text!r:.80} does not depend on {size} for "
                                    f"{spec.name} (with {', '.join(t.name for t in ties) or 'no size'} "
                                    f"following it)")
    fixed = {k: v for k, v in values.items() if k != size}
    subs = {SIZES[k].symbol: sympy.Integer(v) for k, v in fixed.items()}
    reduced = sympy.expand(difference.xreplace(subs))
    lhs_at = sympy.expand(lhs.xreplace(subs))
    try:
        roots = positive_roots(reduced, x)
    except Unsplittable as err:
        raise SymcalcError(f"--{mode}", str(err)) from None
    if any(r.has(sympy.nan, sympy.zoo, sympy.oo) for r in roots) or reduced.has(sympy.nan, sympy.zoo):
        raise SymcalcError(f"--{mode}", f"{rel.text!r:.80} divides by zero at {spec.name}'s sizes")
    notes = []
    if len(roots) > 1:
        notes.append(f"{len(roots)} positive roots; the integers are taken around the largest")
    exact = roots[-1] if roots else None
    if exact is not None and float(exact) > SIZE_LIMIT:
        raise SymcalcError(f"--{mode}", f"the root of {rel.text!r:.80} is {size} = "
                                        f"{float(exact):.4g}, over the largest size symcalc "
                                        f"takes ({SIZE_LIMIT_TEXT}) for {spec.name}")
    step = lcm(step, *_denominators(spec, size, ties, values))
    valid = _valid(spec, size, ties, values, step)

    reduced_at = evaluator(reduced, x)

    def holds(n) -> bool:
        return rel.holds(reduced_at(int(n)), 0)

    below = above = None
    always = False
    if exact is None:
        if mode == "target" or not holds(1):
            raise SymcalcError(f"--{mode}", f"no positive {size} satisfies {rel.text!r:.80} for "
                                            f"{spec.name}")
        always = True
    else:
        below = nearest(exact, lambda n: (mode != "fit" or holds(n)) and valid(n), step, True,
                        SIZE_LIMIT)  # holds first: microseconds, where valid builds a spec
        above = nearest(exact, valid, step, False, SIZE_LIMIT)
        if mode == "fit" and above is not None and above == below:
            above = nearest(exact + 1, valid, step, False, SIZE_LIMIT)
        if mode == "fit" and below is None:
            raise SymcalcError("--fit", f"no positive {size} satisfies {rel.text!r:.80} for "
                                        f"{spec.name} (the root is {float(exact):.4g}; no valid "
                                        f"{size} is at or below it)")
    if size == "s" and spec.position == "learned" and spec.P and exact is not None \
            and exact > spec.P:
        notes.append(f"beyond the learned position table P = {spec.P}: the model itself "
                     f"cannot run sequences that long")
    value = (lambda n: None if n is None else lhs_at.xreplace({x: sympy.Integer(n)}))
    closed = general = related = None
    if exact is not None:
        closed = _closed_form(difference, x, exact, subs)
        if ties and not cap_lifted:
            general = _closed_form(sympy.expand(rel.lhs - rel.rhs), x, exact, subs)
            general = None if general == closed else general
        if closed is not None and relations:
            related = sympy.factor(sympy.simplify(apply(closed, all_ties_)))
            related = None if related == closed else related
    uncapped = None
    if always and not cap_lifted and any(x in a.free_symbols for a in (lhs - rhs).atoms(sympy.Min)):
        notes.append("the relation holds at every size because a sliding window caps the "
                     "cache; the answer without the cap follows")
        try:
            uncapped = _solve(spec, size, mode, rel, all_ties_, values, step, cap_lifted=True)
        except SymcalcError:
            uncapped = None
    return Solution(spec.name, size, mode, rel, tuple(ties), lhs, rhs, tuple(sorted(fixed.items())),
                    reduced, tuple(roots), exact, closed, general, related, tuple(relations), below, above, value(below), value(above),
                    None if below is None else holds(below), None if above is None else holds(above),
                    always, step, _constraints(spec, size, ties, values, step), tuple(notes),
                    uncapped)


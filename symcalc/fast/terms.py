"""The term table's evaluator: exact numbers without sympy (the page's ``terms.js`` reads the
same table the same way; docs/evaluators.md).

``symcalc/fast/terms.store`` (written by :mod:`symcalc.fast.build_terms`) holds, per model
shape, sets of *rows* -- one per parameter leaf, FLOP leaf, saved tensor, cache term -- and
each quantity as a linear combination of set sums. A row is ``[path, source, guard, tree,
den]`` (saved tensors add their choice text): its value is ``prod(guard) * tree / den``,
``guard`` the constant symbols (structural switches, implementation facts) that multiply
all of it. A tree is an int, a symbol name, or ``[op, args...]`` with op ``+``, ``*``,
``^`` (integer power), ``min``, ``cd`` (ceiling of a quotient) and, in coefficients only,
``/`` (exact division).

Evaluation is in two steps. :func:`specialize` folds the values that do not vary (switches,
facts, options: everything but the sizes) into the rows once per model and options, dropping
the rows that vanish; what is left are trees in the sizes. :func:`number` then sums each
set's rows (integers, grouped by their denominator), combines the sums with the exact
rational coefficients over one common denominator and rounds up once. Sizes may be Python
ints (exact at any size) or numpy arrays (sweeps); :func:`bound` gives an upper bound of every
intermediate value, so that a sweep knows beforehand whether int64 is safe.
"""
from __future__ import annotations

import os
from functools import lru_cache
from math import gcd
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "terms.store")


@lru_cache(maxsize=None)
def entry(name: str) -> Any:
    """One entry of the store (:func:`symcalc.fast.build_terms.entries`)."""
    from .. import compiled

    return compiled.read(PATH, name)


def common() -> dict[str, Any]:
    return entry("common")


@lru_cache(maxsize=None)
def table() -> dict[str, Any]:
    """The whole table as one object (what the page embeds): quantities, optimizers,
    symbols, varying sizes, strings, vision parts and, per shape, its sets of rows and
    quantity combinations. A report reads only the entries it evaluates (:func:`rows_of`)."""
    c = common()
    out = {k: c[k] for k in ("about", "quantities", "optimizers")}
    out["symbols"] = entry("symbols")
    out.update({k: c[k] for k in ("varying", "strings")})
    out["shapes"] = {sh: {"sets": {name: rows_of(sh, name) for name in body["sets"]},
                          "quantities": body["quantities"]}
                     for sh, body in c["shapes"].items()}
    out["vision"] = entry("vision")
    return out


def rows_of(shape: str, name: str) -> list:
    """The rows of set ``name`` of ``shape`` (``[]`` for a set the shape lacks)."""
    if name not in set_names(shape):
        return []
    return entry(f"sets/{shape}/{name}")


@lru_cache(maxsize=None)
def set_names(shape: str) -> frozenset[str]:
    return frozenset(common()["shapes"][shape]["sets"])


def quantities() -> dict[str, str]:
    return common()["quantities"]


def optimizers() -> dict[str, list[int]]:
    return common()["optimizers"]


# -- trees ----------------------------------------------------------------------------------
def _value(name: str, c: dict[str, Any]):
    if name[0] == "#":
        return int(name[1:])
    return c.get(name, name)


def fold(t, c: dict[str, Any]):
    """``t`` with the values of ``c`` put in and folded: an int when nothing else is left,
    else a smaller tree whose leaves are the names ``c`` does not give."""
    kind = type(t)
    if kind is int:
        return t
    if kind is str:
        return int(t[1:]) if t[0] == "#" else c.get(t, t)
    op = t[0]
    if op == "*":
        k, rest = 1, []
        for i in range(1, len(t)):
            a = fold(t[i], c)
            if type(a) is int:
                if a == 0:
                    return 0
                k *= a
            else:
                rest.append(a)
        if not rest:
            return k
        if k != 1:
            rest.insert(0, k)
        return rest[0] if len(rest) == 1 else ["*", *rest]
    if op == "+":
        k, rest = 0, []
        for i in range(1, len(t)):
            a = fold(t[i], c)
            if type(a) is int:
                k += a
            else:
                rest.append(a)
        if not rest:
            return k
        if k:
            rest.append(k)
        return rest[0] if len(rest) == 1 else ["+", *rest]
    args = [fold(t[i], c) for i in range(1, len(t))]
    if all(type(a) is int for a in args):
        a, b = args
        if op == "^":
            return a ** b
        if op == "min":
            return a if a < b else b
        if op == "cd":
            return -((-a) // b)
    return [op, *args]


def evaluate(t, v: dict[str, Any]):
    """The value of a folded tree at sizes ``v`` (Python ints or numpy arrays)."""
    if type(t) is int:
        return t
    if type(t) is str:
        return v[t]
    op = t[0]
    if op == "*":
        out = evaluate(t[1], v)
        for a in t[2:]:
            out = out * evaluate(a, v)
        return out
    if op == "+":
        out = evaluate(t[1], v)
        for a in t[2:]:
            out = out + evaluate(a, v)
        return out
    a, b = evaluate(t[1], v), evaluate(t[2], v)
    if op == "^":
        return a ** b
    if op == "min":
        return b + (a - b) * (a < b)  # elementwise on numpy arrays too
    if op == "cd":
        return -((-a) // b)
    raise ValueError(f"unknown operation {op!r} in a term tree")


def bound(t, v: dict[str, int]) -> int:
    """An upper bound of |value| of every node of a folded tree when each size is at most its
    value in ``v`` (and at least 1): coefficients taken positive, min(a, b) <= a + b,
    ceil(n / q) <= n."""
    if type(t) is int:
        return abs(t)
    if type(t) is str:
        return abs(v[t])
    op = t[0]
    if op == "*":
        out = 1
        for a in t[1:]:
            out *= bound(a, v)
        return out
    if op in ("+", "min"):
        return sum(bound(a, v) for a in t[1:])
    if op == "^":
        return bound(t[1], v) ** t[2]
    if op == "cd":
        return bound(t[1], v)
    raise ValueError(f"unknown operation {op!r} in a term tree")


# -- exact rationals as (numerator, denominator) pairs ------------------------------------------
def ratio(t, c: dict[str, Any]) -> tuple[int, int]:
    """A coefficient tree at constants ``c`` as an exact (numerator, denominator > 0)."""
    if type(t) is int:
        return t, 1
    if type(t) is str:
        value = _value(t, c)
        if type(value) is not int:
            raise KeyError(f"no value for {t!r}")
        return value, 1
    op = t[0]
    parts = [ratio(a, c) for a in t[1:]]
    if op == "*":
        n, d = 1, 1
        for a, b in parts:
            n, d = n * a, d * b
    elif op == "+":
        n, d = 0, 1
        for a, b in parts:
            n, d = n * b + a * d, d * b
    elif op == "/":
        (a, b), (p, q) = parts
        if p == 0:
            raise ZeroDivisionError("a coefficient divides by 0")
        n, d = a * q, b * p
    elif op == "^":
        (a, b), (e, _) = parts
        n, d = a ** e, b ** e
    else:
        raise ValueError(f"operation {op!r} in a coefficient")
    if d < 0:
        n, d = -n, -d
    g = gcd(n, d)
    return (n // g, d // g) if g > 1 else (n, d)


# -- specialised models -------------------------------------------------------------------------
class Rows:
    """A shape's row sets with one model's constants folded in (:func:`specialize`)."""

    def __init__(self, shape: str, constants: dict[str, Any]):
        self.shape = shape
        self.constants = constants
        self._sets: dict[str, list] = {}
        self._coefs: dict[str, list] = {}

    def rows(self, name: str) -> list:
        """``(path, folded tree, den, row)`` of set ``name``'s rows that do not vanish."""
        got = self._sets.get(name)
        if got is None:
            got = self._sets[name] = list(self._fold(name))
        return got

    def _fold(self, name: str):
        c = self.constants
        strings = common()["strings"]
        for row in rows_of(self.shape, name):
            k = 1
            for g in row[2]:
                k *= c[g]
                if not k:
                    break
            if not k:
                continue
            t = fold(row[3], c)
            if t == 0:
                continue
            yield strings[row[0]], (t if k == 1 else (k * t if type(t) is int else ["*", k, t])), \
                row[4], row

    def coefficients(self, quantity: str) -> list[tuple[str, int, int]]:
        """``(set, numerator, denominator)`` of the quantity's combination, zeros left out."""
        got = self._coefs.get(quantity)
        if got is None:
            got = []
            for name, t in self.entry(quantity)["sum"]:
                n, d = ratio(t, self.constants)
                if n:
                    got.append((name, n, d))
            self._coefs[quantity] = got
        return got

    def entry(self, quantity: str) -> dict:
        return common()["shapes"][self.shape]["quantities"][quantity]

    def at(self, quantity: str) -> "Rows":
        """The rows to evaluate ``quantity`` on: these, or those with the values it fixes
        (the contract's matmul FLOPs fix the full score matrix)."""
        fix = self.entry(quantity).get("fix")
        if not fix or all(self.constants.get(k) == x for k, x in fix.items()):
            return self
        return specialize(self.shape, {**self.constants, **fix})

    def set_sum(self, name: str, v: dict[str, Any]) -> tuple[Any, int]:
        """Exact (numerator, denominator) of set ``name`` at sizes ``v``."""
        by_den: dict[int, Any] = {}
        for _, t, den, _ in self.rows(name):
            x = evaluate(t, v)
            by_den[den] = by_den[den] + x if den in by_den else x
        return _combine([(x, 1, den) for den, x in by_den.items()])

    def exact(self, quantity: str, v: dict[str, Any]) -> tuple[Any, int]:
        """The quantity at sizes ``v`` as an exact (numerator, denominator)."""
        if self.at(quantity) is not self:
            return self.at(quantity).exact(quantity, v)
        parts = []
        for name, n, d in self.coefficients(quantity):
            x, den = self.set_sum(name, v)
            parts.append((x, n, d * den))
        return _combine(parts)

    def number(self, quantity: str, v: dict[str, Any]):
        """The quantity at sizes ``v``, rounded up to a whole number (one ceiling)."""
        x, den = self.exact(quantity, v)
        return x if den == 1 else -((-x) // den)

    def bound(self, quantity: str, v: dict[str, int]) -> int:
        """An upper bound of every intermediate value of :meth:`number` at sizes at most ``v``."""
        if self.at(quantity) is not self:
            return self.at(quantity).bound(quantity, v)
        total, common = 0, 1
        parts = []
        for name, n, d in self.coefficients(quantity):
            for _, t, den, _ in self.rows(name):
                parts.append((bound(t, v), abs(n), d * den))
                common = common * (d * den) // gcd(common, d * den)
        for b, n, d in parts:
            total += b * n * (common // d)
        return max(total, common)

    def leaves(self, name: str, v: dict[str, Any]) -> list[tuple[str, Any]]:
        """(path, value rounded up) of each row of set ``name``."""
        out = []
        for path, t, den, _ in self.rows(name):
            x = evaluate(t, v)
            out.append((path, x if den == 1 else -((-x) // den)))
        return out


def _combine(parts) -> tuple[Any, int]:
    """Sum of ``x * n / d`` over ``parts`` as one (numerator, common denominator)."""
    common = 1
    for _, _, d in parts:
        common = common * d // gcd(common, d)
    total = 0
    for x, n, d in parts:
        k = n * (common // d)
        total = total + (x if k == 1 else x * k)
    return total, common


@lru_cache(maxsize=64)
def _specialized(shape: str, key: tuple) -> Rows:
    return Rows(shape, dict(key))


def specialize(shape: str, constants: dict[str, Any]) -> Rows:
    """The rows of ``shape`` with ``constants`` folded in (cached per shape and constants)."""
    return _specialized(shape, tuple(sorted(constants.items())))

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


def parallel() -> dict[str, Any]:
    """The per-rank part: per_rank names, fact kinds, views, lets and, per shape, the
    per-rank and communication quantities (read only when a layout asks for them)."""
    return entry("parallel")


@lru_cache(maxsize=None)
def table() -> dict[str, Any]:
    """The whole table as one object (what the page embeds): quantities, optimizers,
    symbols, varying sizes, strings, vision parts and, per shape, its sets of rows and
    quantity combinations. A report reads only the entries it evaluates (:func:`rows_of`)."""
    c = common()
    out = {k: c[k] for k in ("about", "quantities", "optimizers")}
    out["symbols"] = entry("symbols")
    out.update({k: c[k] for k in ("varying", "strings")})
    more = parallel()
    out["shapes"] = {sh: {"sets": {name: rows_of(sh, name) for name in body["sets"]},
                          "quantities": {**body["quantities"],
                                         **more["shapes"][sh]["quantities"]},
                          "layer_counts": body["layer_counts"]}
                     for sh, body in c["shapes"].items()}
    out["vision"] = entry("vision")
    out.update({k: more[k] for k in ("per_rank", "fact_kinds", "views", "lets")})
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
@lru_cache(maxsize=None)
def _fact_kinds() -> frozenset[str]:
    return frozenset(parallel()["fact_kinds"])


def is_fact(name: str) -> bool:
    """A plan fact (``<kind>:<part>``): 0 unless the plan sets it."""
    return ":" in name and name.split(":", 1)[0] in _fact_kinds()


def _value(name: str, c: dict[str, Any]):
    if name[0] == "#":
        return int(name[1:])
    if name in c:
        return c[name]
    return 0 if is_fact(name) else name


def fold(t, c: dict[str, Any]):
    """``t`` with the values of ``c`` put in and folded: an int when nothing else is left,
    else a smaller tree whose leaves are the names ``c`` does not give. (The hottest loop of
    a report: it iterates over slices and tests types by identity rather than calling
    helpers; bench/run.py measures it.)"""
    kind = type(t)
    if kind is int:
        return t
    if kind is str:
        got = c.get(t)
        if got is not None:
            return got
        if t[0] == "#":
            return int(t[1:])
        return 0 if ":" in t and is_fact(t) else t
    op = t[0]
    if op == "*":
        k, rest = 1, []
        for a in t[1:]:
            if type(a) is not int:
                a = fold(a, c)
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
        for a in t[1:]:
            if type(a) is not int:
                a = fold(a, c)
            if type(a) is int:
                k += a
            else:
                rest.append(a)
        if not rest:
            return k
        if k:
            rest.append(k)
        return rest[0] if len(rest) == 1 else ["+", *rest]
    args = [fold(a, c) for a in t[1:]]
    if all(type(a) is int for a in args):
        a, b = args
        if op == "^":
            return a ** b
        if op == "min":
            return a if a < b else b
        if op == "max":
            return a if a > b else b
        if op == "cd":
            return -((-a) // b)
        if op == "fd":
            return a // b
    return [op, *args]


def evaluate(t, v: dict[str, Any]):
    """The value of a folded tree at sizes ``v`` (Python ints or numpy arrays)."""
    kind = type(t)
    if kind is str:
        return v[t]
    if kind is int or kind is float:  # a float: a size folded into a float sweep
        return t
    op = t[0]
    if op == "*":
        out = 1
        for a in t[1:]:
            kind = type(a)
            out = out * (v[a] if kind is str else a if kind is int else evaluate(a, v))
        return out
    if op == "+":
        out = 0
        for a in t[1:]:
            kind = type(a)
            out = out + (v[a] if kind is str else a if kind is int else evaluate(a, v))
        return out
    a, b = evaluate(t[1], v), evaluate(t[2], v)
    if op == "^":
        return a ** b
    if op == "min":
        return b + (a - b) * (a < b)  # elementwise on numpy arrays too
    if op == "max":
        return b + (a - b) * (a > b)
    if op == "cd":
        return -((-a) // b)
    if op == "fd":
        return a // b
    raise ValueError(f"unknown operation {op!r} in a term tree")


def polynomial(t, atoms: dict[str, Any]) -> dict[tuple, int]:
    """A folded tree as ``{monomial: integer coefficient}``, a monomial a sorted tuple of
    (name, power); a subtree that is not a polynomial (min, max, cd, fd) is one name, its
    tree kept in ``atoms`` under its JSON text. A constant is an int (a float in a sweep asked
    for floats)."""
    if type(t) is not str and type(t) is not list:
        return {(): t} if t else {}
    if type(t) is str:
        return {((t, 1),): 1}
    op = t[0]
    if op == "+":
        out: dict[tuple, int] = {}
        for a in t[1:]:
            add(out, polynomial(a, atoms))
        return out
    if op == "*" or op == "^":
        factors = t[1:] if op == "*" else [t[1]] * t[2]
        out = {(): 1}
        for a in factors:
            out = _times(out, polynomial(a, atoms))
        return out
    import json

    key = json.dumps(t, separators=(",", ":"))
    atoms[key] = t
    return {((key, 1),): 1}


def add(out: dict[tuple, int], more: dict[tuple, int]) -> None:
    """``out += more`` (polynomials as :func:`polynomial` gives them), zeros dropped."""
    for m, k in more.items():
        k += out.get(m, 0)
        if k:
            out[m] = k
        else:
            out.pop(m, None)


def _times(a: dict[tuple, int], b: dict[tuple, int]) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for m, k in a.items():
        for n, j in b.items():
            powers = dict(m)
            for name, p in n:
                powers[name] = powers.get(name, 0) + p
            add(out, {tuple(sorted(powers.items())): k * j})
    return out


def factored(poly: dict[tuple, int]):
    """A polynomial (:func:`polynomial`) as a tree, the name most of its monomials share
    taken out first (``a*b + a*c + d`` as ``a*(b + c) + d``), recursively; in a product the
    coefficient comes first, so that on a sweep's grid it multiplies the smallest array."""
    if not poly:
        return 0
    if len(poly) > 1:
        counts: dict[str, int] = {}
        for m in poly:
            for n, _ in m:
                counts[n] = counts.get(n, 0) + 1
        top = max(sorted(counts), key=lambda n: counts[n]) if counts else None
        if top is not None and counts[top] > 1:
            inner: dict[tuple, int] = {}
            rest: dict[tuple, int] = {}
            for m, k in poly.items():
                if any(n == top for n, _ in m):
                    less = tuple((n, p - 1 if n == top else p) for n, p in m
                                 if not (n == top and p == 1))
                    inner[less] = k
                else:
                    rest[m] = k
            t = _product([top, factored(inner)])
            return t if not rest else ["+", t, factored(rest)]
        return ["+", *(factored({m: k}) for m, k in sorted(poly.items()))]
    (m, k), = poly.items()
    names = [n if p == 1 else ["^", n, p] for n, p in m]
    return _product(([] if k == 1 else [k]) + names) if names else k


def _product(factors: list):
    if len(factors) == 1:
        return factors[0]
    out = ["*"]
    for f in factors:
        out += f[1:] if type(f) is list and f[0] == "*" else [f]
    return out


def bound(t, v: dict[str, int]) -> int:
    """An upper bound of |value| of every node of a folded tree when each size is at most its
    value in ``v`` (and at least 1): coefficients taken positive, min(a, b) and max(a, b)
    <= a + b, ceil(n / q) and floor(n / q) <= n."""
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
    if op in ("+", "min", "max"):
        return sum(bound(a, v) for a in t[1:])
    if op == "^":
        return bound(t[1], v) ** t[2]
    if op in ("cd", "fd"):
        return bound(t[1], v)
    raise ValueError(f"unknown operation {op!r} in a term tree")


# -- exact rationals as (numerator, denominator) pairs ------------------------------------------
def ratio(t, c: dict[str, Any]) -> tuple[int, int]:
    """A coefficient tree at constants ``c`` (ints, or exact (numerator, denominator) pairs:
    the lets) as an exact (numerator, denominator > 0)."""
    if type(t) is int:
        return t, 1
    if type(t) is str:
        value = _value(t, c)
        if type(value) is tuple:
            return value
        if type(value) is not int:
            raise KeyError(f"no value for {t!r}")
        return value, 1
    op = t[0]
    parts = [ratio(a, c) for a in t[1:]]
    if op in ("min", "max"):
        (a, b), (p, q) = parts
        first = (a * q < p * b) == (op == "min")
        return (a, b) if first else (p, q)
    if op in ("cd", "fd"):
        (a, b), (p, q) = parts
        n, d = a * q, b * p
        if d < 0:
            n, d = -n, -d
        return (-((-n) // d) if op == "cd" else n // d), 1
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
def _resolve(shape: str, row: list) -> list:
    """A row, or a reference ``[set, index, guards(, path)]`` to another set's row resolved:
    that row with the guards added (and the path replaced)."""
    if type(row[0]) is not str:
        return row
    base = _resolve(shape, rows_of(shape, row[0])[row[1]])
    out = [row[3] if len(row) > 3 else base[0], base[1], base[2] + row[2], *base[3:]]
    return out


@lru_cache(maxsize=None)
def resolved(shape: str, name: str) -> tuple:
    """The rows of a set, references resolved."""
    return tuple(_resolve(shape, row) for row in rows_of(shape, name))


class Rows:
    """A shape's row sets with one model's constants folded in (:func:`specialize`)."""

    def __init__(self, shape: str, constants: dict[str, Any]):
        self.shape = shape
        self.constants = constants
        self._sets: dict[str, list] = {}
        self._coefs: dict[tuple, list] = {}
        self._lets: dict[Any, dict] = {}
        self._views: dict[tuple, dict] = {}
        self._polys: dict[tuple, Any] = {}

    def rows(self, name: str) -> list:
        """``(path, folded tree, den, row)`` of set ``name``'s rows that do not vanish."""
        got = self._sets.get(name)
        if got is None:
            got = self._sets[name] = list(self._fold(name))
        return got

    def _fold(self, name: str):
        c = self.constants
        strings = common()["strings"]
        for row in resolved(self.shape, name):
            k = 1
            for g in row[2]:
                k *= _value(g, c)
                if not k:
                    break
            if not k:
                continue
            t = fold(row[3], c)
            if t == 0:
                continue
            yield strings[row[0]], (t if k == 1 else (k * t if type(t) is int else ["*", k, t])), \
                row[4], row

    def lets(self, stage=None) -> dict[str, Any]:
        """The constants with the stage index and the table's lets (named coefficients,
        exact (numerator, denominator) pairs) put in."""
        got = self._lets.get(stage)
        if got is None:
            got = dict(self.constants)
            if stage is not None:
                got["i_p"] = stage
            for name, t in parallel()["lets"]:
                got["$" + name] = ratio(t, got)
            self._lets[stage] = got
        return got

    def coefficients(self, quantity: str, stage=None) -> list[tuple[str, int, int, Any]]:
        """``(set, numerator, denominator, view)`` of the quantity's combination (at the
        stage, for a quantity of one), zeros left out."""
        entry = self.entry(quantity)
        stage = stage if entry.get("stage") else None
        got = self._coefs.get((quantity, stage))
        if got is None:
            got = []
            c = self.lets(stage) if entry.get("stage") else self.constants
            tn, td = ratio(entry["times"], c) if "times" in entry else (1, 1)
            for item in entry["sum"]:
                n, d = ratio(item[1], c)
                if n and tn:
                    got.append((item[0], n * tn, d * td, item[2] if len(item) > 2 else None))
            self._coefs[(quantity, stage)] = got
        return got

    def entry(self, quantity: str) -> dict:
        found = common()["shapes"][self.shape]["quantities"].get(quantity)
        return found if found is not None else \
            parallel()["shapes"][self.shape]["quantities"][quantity]

    def at(self, quantity: str) -> "Rows":
        """The rows to evaluate ``quantity`` on: these, or those with the values it fixes
        (the contract's matmul FLOPs fix the full score matrix)."""
        fix = self.entry(quantity).get("fix")
        if not fix or all(self.constants.get(k) == x for k, x in fix.items()):
            return self
        return specialize(self.shape, {**self.constants, **fix})

    def view(self, name: str, v: dict[str, Any], stage=None) -> dict[str, Any]:
        """The sizes ``v`` with the view's substituted (each a tree of the sizes, folded with
        the constants and the stage index)."""
        trees = self._views.get((name, stage))
        if trees is None:
            c = dict(self.constants)
            if stage is not None:
                c["i_p"] = stage
            trees = self._views[(name, stage)] = {k: fold(t, c)
                                                  for k, t in parallel()["views"][name].items()}
        out = dict(v)
        for k, t in trees.items():
            if k in v:  # a size the model has (s_dec: an encoder-decoder model's)
                out[k] = evaluate(t, v)
        return out

    def set_sum(self, name: str, v: dict[str, Any]) -> tuple[Any, int]:
        """Exact (numerator, denominator) of set ``name`` at sizes ``v``."""
        if any(getattr(x, "ndim", 0) for x in v.values()):
            return self._columns_sum(name, v)
        by_den: dict[int, Any] = {}
        for _, t, den, _ in self.rows(name):
            x = evaluate(t, v)
            by_den[den] = by_den[den] + x if den in by_den else x
        return _combine([(x, 1, den) for den, x in by_den.items()])

    def _columns_sum(self, name: str, v: dict[str, Any]) -> tuple[Any, int]:
        """:meth:`set_sum` at sizes some of which are numpy arrays (a sweep): the scalar sizes
        folded into the rows, the rows of each denominator collected into one polynomial in
        the array sizes (:func:`polynomial`) and written back as a tree with the sizes most
        monomials share factored out (:func:`factored`), so that a sweep takes a few
        products of columns per set instead of several per row. Every value it forms is
        bounded by the expanded rows' values, so :meth:`bound` bounds it too."""
        scalars = tuple(sorted((k, x) for k, x in v.items() if not getattr(x, "ndim", 0)))
        key = (name, scalars)
        got = self._polys.get(key)
        if got is None:
            c, atoms, polys = dict(scalars), {}, {}
            for _, t, den, _ in self.rows(name):
                add(polys.setdefault(den, {}), polynomial(fold(t, c), atoms))
            got = self._polys[key] = ({d: factored(p) for d, p in polys.items() if p}, atoms)
        trees, atoms = got
        if atoms:
            v = dict(v)
            v.update({k: evaluate(t, v) for k, t in atoms.items()})
        return _combine([(evaluate(t, v), 1, den) for den, t in trees.items()])

    def exact(self, quantity: str, v: dict[str, Any], stage=None,
              memo: dict | None = None) -> tuple[Any, int]:
        """The quantity at sizes ``v`` (and the stage index, for a per-rank quantity) as an
        exact (numerator, denominator). ``memo``: set sums already taken at these sizes,
        by set and view values (scalar sizes only)."""
        if self.at(quantity) is not self:
            return self.at(quantity).exact(quantity, v, stage, memo)
        parts = []
        for name, n, d, view in self.coefficients(quantity, stage):
            sizes = v if view is None else self.view(view, v, stage)
            key = None
            if memo is not None:
                key = (name, view) if view is None else \
                    (name, view, tuple(sizes.get(k) for k in parallel()["views"][view]))
                got = memo.get(key)
            else:
                got = None
            if got is None:
                got = self.set_sum(name, sizes)
                if key is not None:
                    memo[key] = got
            x, den = got
            parts.append((x, n, d * den))
        return _combine(parts)

    def number(self, quantity: str, v: dict[str, Any], stage=None, memo: dict | None = None):
        """The quantity at sizes ``v``, rounded up to a whole number (one ceiling)."""
        x, den = self.exact(quantity, v, stage, memo)
        return x if den == 1 else -((-x) // den)

    def bound(self, quantity: str, v: dict[str, int], stage=None) -> int:
        """An upper bound of every intermediate value of :meth:`number` at sizes at most ``v``
        (a view's sizes bounded by the sizes they are taken from: a stage holds at most L
        layers, a rank at most the heads and tokens)."""
        if self.at(quantity) is not self:
            return self.at(quantity).bound(quantity, v, stage)
        total, common = 0, 1
        parts = []
        for name, n, d, _view in self.coefficients(quantity, stage):
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

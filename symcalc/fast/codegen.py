"""Numeric evaluators generated from the sympy expressions: ``python -m symcalc.fast.codegen``
writes ``symcalc/fast/_generated.py`` (committed; ``tests/test_codegen.py`` regenerates it and
fails when the two differ, so the evaluators cannot drift from the expressions).

For each model shape (``single``, ``encoder-decoder``) and each reported quantity, one
*general* expression is built from the same functions :mod:`symcalc.algebra.quantities` uses
(:mod:`symcalc.algebra.accounting`, :mod:`symcalc.algebra.flops`, :mod:`symcalc.algebra.memory`), with every
structural switch a 0/1 symbol and every option a symbol too (:data:`OPTIONS`): dtype bytes as
numerator/denominator, optimizer bytes, one-hot indicators for the ZeRO stage, recomputation,
MACs and so on. Finite option choices are combined as ``sum(indicator * expression(choice))``
so that each choice is still computed by the source function.

The expression is split into an integer polynomial numerator and a denominator; the
numerator is grouped by its monomial in switches and options, and each group is printed with
sympy's Python code printer behind an ``if``, so that a spec only pays for the groups that are
on. The generated code uses integer arithmetic only (``+ - *``, ceiling division, and a
``min`` written arithmetically) and so runs unchanged on Python ints (exact), numpy int64
arrays (sweeps) and numpy object or float arrays. Each quantity also gets a *bound* function:
the numerator with every coefficient made positive and ``Min(a, b)`` replaced by ``a + b``,
which bounds every intermediate value of the evaluation (sizes are >= 1), so that a sweep can
tell whether int64 is safe before evaluating.
"""
from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

import sympy
from sympy.printing.pycode import PythonCodePrinter

from ..algebra import accounting, activations, flops, memory
from ..algebra.activation_profiles import FACT_MEANINGS
from ..algebra.activations import CHOICE_MEANINGS
from ..algebra.quantities import QUANTITIES
from ..algebra.symbols import SIZES, SWITCHES, s

SHAPES = ("single", "encoder-decoder")
TARGET = Path(__file__).with_name("_generated.py")

OPTION_MEANINGS = {
    "w_num": "weight bytes per element, numerator (int4: 1)",
    "w_den": "weight bytes per element, denominator (int4: 2)",
    "kv_num": "KV-cache bytes per element, numerator",
    "kv_den": "KV-cache bytes per element, denominator",
    "st_num": "recurrent-state bytes per element, numerator",
    "st_den": "recurrent-state bytes per element, denominator",
    "opt_w": "optimizer: bytes per parameter of weights",
    "opt_g": "optimizer: bytes per parameter of gradients",
    "opt_o": "optimizer: bytes per parameter of optimizer state",
    "sw_zero1": "ZeRO stage 1 (one-hot with 2 and 3; all 0: stage 0)",
    "sw_zero2": "ZeRO stage 2",
    "sw_zero3": "ZeRO stage 3",
    "sw_macs": "count multiply-accumulates (matmul FLOPs / 2)",
    "sw_nonmatmul": "add non-matmul FLOPs",
    "sw_rc_sel": "selective recomputation (one-hot with sw_rc_full; both 0: none)",
    "sw_rc_full": "full recomputation",
    "sw_tp": "tensor parallelism (t > 1)",
    "sw_sp": "sequence parallelism",
    "sw_decoder": "the single stack is a decoder (keeps a KV cache)",
    **CHOICE_MEANINGS,
    **FACT_MEANINGS,
}
OPTIONS = {n: sympy.Symbol(n, integer=True, nonnegative=True) for n in OPTION_MEANINGS}
CONSTANTS = {i.symbol for i in SWITCHES.values()} | set(OPTIONS.values())


# Sub-quantities that larger expressions refer to by name instead of repeating them: each
# symbol stands for the integer *numerator* of a quantity (see split_fraction), which the
# generated code computes first. Weights and training state are the parameter total times
# bytes per parameter; training FLOPs are a multiple of the forward FLOPs.
LETS = {"params_total": "params.total", "forward_num": "flops.forward"}
LET_SYMBOLS = {n: sympy.Symbol(n, positive=True, integer=True) for n in LETS}


def _o(name: str) -> sympy.Symbol:
    return OPTIONS[name]


# -- general expressions ------------------------------------------------------------------
def _forward(shape: str, part=lambda bd: bd.total) -> sympy.Expr:
    """``part`` of the forward FLOPs with the conventions as option symbols."""
    return flops.forward_total(part(flops.shape_matmul(shape)), part(flops.shape_nonmatmul(shape)),
                               _o("sw_macs"), _o("sw_nonmatmul"))


def _training(shape: str) -> sympy.Expr:
    return flops.training_total(_let("forward_num", shape), _forward(shape, flops.attention_core),
                                _o("sw_rc_full"), _o("sw_rc_sel"))


def _kv_cache(shape: str) -> sympy.Expr:
    per = _o("kv_num") / _o("kv_den")
    if shape == "encoder-decoder":
        return memory.kv_cache_bytes("encoder-decoder", per)
    dec = _o("sw_decoder")
    return (dec * memory.kv_cache_bytes("decoder", per)
            + (1 - dec) * memory.kv_cache_bytes("encoder", per))


def _recurrent_state(shape: str) -> sympy.Expr:
    if shape == "encoder-decoder":
        return sympy.Integer(0)
    return memory.recurrent_state_bytes("decoder", _o("kv_num") / _o("kv_den"),
                                        _o("st_num") / _o("st_den"))


def _activations(shape: str) -> sympy.Expr:
    """Every activation model, recomputation and parallelism choice by one-hot weights; the
    implementation facts (``ac_*``) as symbols."""
    return activations.weighted_bytes({n: _o(n) for n in FACT_MEANINGS}, shape,
                                      {n: _o(n) for n in CHOICE_MEANINGS})


def _training_bytes(shape: str) -> sympy.Expr:
    opt = memory.Optimizer("general", _o("opt_w"), _o("opt_g"), _o("opt_o"), "symbols")
    n_params = _let("params_total", shape)
    z1, z2, z3 = _o("sw_zero1"), _o("sw_zero2"), _o("sw_zero3")
    stages = {0: 1 - z1 - z2 - z3, 1: z1, 2: z2, 3: z3}
    return sum((on * memory.training_bytes(n_params, opt, z) for z, on in stages.items()),
               sympy.Integer(0))


def general(name: str, shape: str) -> sympy.Expr:
    """Quantity ``name`` for every model of ``shape``: switches and options as symbols.
    Substituting a spec's and options' values gives ``quantities.expression(name, ...)``."""
    expr = general_with_lets(name, shape)
    lets = {sym: split_fraction(general(LETS[n], shape))[0]
            for n, sym in LET_SYMBOLS.items() if sym in expr.free_symbols}
    return sympy.expand(expr.xreplace(lets)) if lets else expr


def _let(name: str, shape: str) -> sympy.Expr:
    """Quantity ``LETS[name]`` as its numerator symbol over its (numeric) denominator."""
    den = split_fraction(general(LETS[name], shape))[1]
    if not den.is_number:
        raise ValueError(f"{LETS[name]} has a symbolic denominator {den}")
    return LET_SYMBOLS[name] / den


@lru_cache(maxsize=None)
def general_with_lets(name: str, shape: str) -> sympy.Expr:
    """:func:`general` with integer sub-quantities left as the symbols of :data:`LETS`."""
    bd = accounting.shape_params(shape)
    causal_off = {SWITCHES["sw_causal"].symbol: 0, SWITCHES["sw_causal_exact"].symbol: 0}
    builders = {
        "params.total": lambda: bd.total,
        "params.active": lambda: accounting.active_total(bd),
        "params.embedding": lambda: accounting.embedding_total(bd),
        "params.non_embedding": lambda: bd.total - accounting.embedding_total(bd),
        "flops.forward_matmul": lambda: flops.shape_matmul(shape).total.xreplace(causal_off),
        "flops.forward": lambda: _forward(shape),
        "flops.training": lambda: _training(shape),
        "flops.decode_per_token": lambda: flops.decode_matmul_per_token(shape, s),
        "memory.weights_bytes": lambda: memory.weights_bytes(_let("params_total", shape),
                                                             _o("w_num") / _o("w_den")),
        "memory.kv_cache_bytes": lambda: _kv_cache(shape),
        "memory.recurrent_state_bytes": lambda: _recurrent_state(shape),
        "memory.activations_bytes": lambda: _activations(shape),
        "memory.training_bytes": lambda: _training_bytes(shape),
    }
    return sympy.expand(builders[name]())


def leaves(kind: str, shape: str) -> list[tuple[str, sympy.Expr]]:
    """Breakdown leaves the report lists: ``params``, ``matmul`` (contract convention, full
    scores) or ``layer:<stack prefix>`` (one layer of a stack)."""
    if kind == "params":
        bd = accounting.shape_params(shape)
    elif kind == "matmul":
        off = {SWITCHES["sw_causal"].symbol: 0, SWITCHES["sw_causal_exact"].symbol: 0}
        bd = flops.shape_matmul(shape).map(lambda e: e.xreplace(off))
    else:
        bd = accounting.shape_layers(shape)[kind.split(":", 1)[1]][1]
    return [(leaf.path, sympy.expand(leaf.value)) for leaf in bd]


def leaf_kinds(shape: str) -> list[str]:
    return ["params", "matmul"] + [f"layer:{p}" for p in accounting.shape_layers(shape)]


# -- splitting and printing ---------------------------------------------------------------
def split_fraction(expr: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """``expr == num / den`` with ``num`` a polynomial with integer coefficients."""
    expr = sympy.expand(expr)
    den = sympy.Integer(1)
    for term in sympy.Add.make_args(expr):
        den = sympy.lcm(den, term.as_numer_denom()[1])
    num = sympy.expand(expr * den)
    for term in sympy.Add.make_args(num):
        if term.as_numer_denom()[1] != 1:
            raise ValueError(f"not a polynomial numerator: {term}")
    return num, den


def groups(num: sympy.Expr) -> list[tuple[sympy.Expr, sympy.Expr]]:
    """``num`` as ``sum(constant_monomial * size_polynomial)``, grouped by the product of
    switches and options in each term."""
    out: dict[sympy.Expr, sympy.Expr] = {}
    for term in sympy.Add.make_args(num):
        const, rest = sympy.Integer(1), sympy.Integer(1)
        for factor in sympy.Mul.make_args(term):
            base = factor.as_base_exp()[0]
            if base in CONSTANTS:
                const *= factor
            else:
                rest *= factor
        out[const] = out.get(const, sympy.Integer(0)) + rest
    return sorted(out.items(), key=lambda kv: sympy.default_sort_key(kv[0]))


def absolute(poly: sympy.Expr) -> sympy.Expr:
    """Every coefficient made positive and ``Min(a, b)`` made ``a + b``: an upper bound of
    every intermediate value when the variables are >= 1."""
    poly = poly.replace(sympy.Min, lambda *args: sympy.Add(*args))
    # ceiling(n / q) <= n for n, q >= 1
    poly = poly.replace(sympy.ceiling, lambda arg: arg.as_numer_denom()[0])
    return sympy.Add(*[abs(c) * m for m, c in sympy.expand(poly).as_coefficients_dict().items()])


class _Printer(PythonCodePrinter):
    def _print_Min(self, expr):  # min() that also works elementwise on numpy arrays
        a, b = expr.args
        return f"_min({self._print(a)}, {self._print(b)})"

    def _print_ceiling(self, expr):  # ceiling(n / q) in integer arithmetic
        num, den = expr.args[0].as_numer_denom()
        return f"_ceil_div({self._print(num)}, {self._print(den)})"


_printer = _Printer({"fully_qualified_modules": False})


def code(expr: sympy.Expr) -> str:
    return _printer.doprint(expr)


def _reads(exprs, shape: str = "", bound: bool = False) -> list[str]:
    names = sorted({str(x) for e in exprs for x in e.free_symbols})
    suffix = "__bound" if bound else "__num"
    return [f"    {n} = {_ident(shape, LETS[n])}{suffix}(v)" if n in LETS else f'    {n} = v["{n}"]'
            for n in names]


def _grouped_body(num: sympy.Expr, den: sympy.Expr, shape: str, bound: bool) -> list[str]:
    parts = groups(num)
    lines = _reads([num, den] if bound else [num], shape, bound) + ["    out = 0"]
    for const, poly in parts:
        # bounds stay expanded; evaluators pull common factors out (a numpy grid then only
        # pays full size for the products that involve every axis)
        poly = absolute(poly) if bound else sympy.factor_terms(poly)
        c = code(abs(const) if bound else const)
        lines += [f"    c = {c}", "    if c:", f"        out = out + c*({code(poly)})"]
    lines.append(f"    return out + {code(absolute(den))}" if bound else "    return out")
    return lines


def quantity_source(fname: str, expr: sympy.Expr, shape: str) -> str:
    """``fname__num`` (the integer numerator), ``fname`` (ceil of numerator / denominator)
    and ``fname__bound``."""
    num, den = split_fraction(expr)
    value = [*_reads([den], shape), f"    return {fname}__num(v)" if den == 1
             else f"    return _ceil_div({fname}__num(v), {code(den)})"]
    return "\n".join([f"def {fname}__num(v):", *_grouped_body(num, den, shape, bound=False),
                      "", "", f"def {fname}(v):", *value, "", "",
                      f"def {fname}__bound(v):", *_grouped_body(num, den, shape, bound=True),
                      "", ""])


def leaves_source(fname: str, items: list[tuple[str, sympy.Expr]]) -> str:
    values = []
    for _, expr in items:
        num, den = split_fraction(expr)
        values.append(code(num) if den == 1 else f"_ceil_div({code(num)}, {code(den)})")
    body = _reads([e for _, e in items])
    body += ["    return ("] + [f"        {v}," for v in values] + ["    )"]
    return "\n".join([f"def {fname}(v):", *body, "", ""])


def _ident(shape: str, name: str) -> str:
    return f"{shape}__{name}".replace("-", "_").replace(".", "_").replace("/", "_").replace(":", "__")


HEADER = '''"""GENERATED by `python -m symcalc.fast.codegen` from the sympy expressions; do not edit.

Evaluators of every quantity and breakdown leaf, per model shape. ``v`` maps symbol names to
values: Python ints (exact) or numpy arrays. See docs/evaluators.md.
"""
# fmt: off


def _min(a, b):
    return b + (a - b) * (a < b)


def _ceil_div(n, d):
    return -((-n) // d)


'''


def generate() -> str:
    out = [HEADER]
    out.append(f"QUANTITIES = {tuple(QUANTITIES)!r}\n")
    out.append("OPTIMIZERS = {\n" + "".join(
        f"    {o.name!r}: ({o.weights}, {o.gradients}, {o.state}),\n"
        for o in memory.OPTIMIZERS.values()) + "}\n\n\n")
    table_q, table_l = [], []
    for shape in SHAPES:
        for name in QUANTITIES:
            fname = _ident(shape, name)
            out.append(quantity_source(fname, general_with_lets(name, shape), shape) + "\n")
            table_q.append(f"    ({shape!r}, {name!r}): ({fname}, {fname}__bound),\n")
        for kind in leaf_kinds(shape):
            fname = _ident(shape, f"leaves_{kind}")
            items = leaves(kind, shape)
            out.append(leaves_source(fname, items) + "\n")
            paths = "".join(f"        {p!r},\n" for p, _ in items)
            table_l.append(f"    ({shape!r}, {kind!r}): ((\n{paths}    ), {fname}),\n")
    out.append("EVALUATORS = {\n" + "".join(table_q) + "}\n\n")
    out.append("LEAVES = {\n" + "".join(table_l) + "}\n")
    return "".join(out)


def write_or_check(target: Path, text: str, command: str, argv: list[str]) -> int:
    """Write ``text`` to ``target``, or with ``--check`` in ``argv`` report whether it is
    already there (exit status 1 when stale, naming ``command`` that regenerates it)."""
    if "--check" in argv:
        same = target.exists() and target.read_text(encoding="utf-8") == text
        print(f"{target.name} is {'up to date' if same else f'STALE: run python -m {command}'}")
        return 0 if same else 1
    target.parent.mkdir(exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return write_or_check(TARGET, generate(), "symcalc.fast.codegen",
                          sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())

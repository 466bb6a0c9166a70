"""The expression language of symcalc's data files: family files (``[spec]``,
``[implementation]``, ``[checks]``) and the implementation facts
(``symcalc/algebra/implementation.toml``). Grammar: docs/families.md, "The expression
language". No sympy here.

A text is parsed once with :mod:`ast`, checked against the grammar (never ``eval``/``exec``)
and turned into a *tree* of JSON values, which :func:`evaluate` walks; the calculator page walks
the same trees (``symcalc/page/lang.js``), so both read a data file the same way:

* ``null``, ``true``, ``false``, integers: literals; ``["'", text]``: a string literal;
* ``"key"``: a name (a config key, a spec or implementation field);
* ``["[", items...]``: a list; ``["sub", obj, key]``: ``obj['key']`` or ``items[0]``;
* ``["or", ...]`` (null-coalescing), ``["and", ...]``, ``["not", x]``, ``["neg", x]``,
  ``["if", test, then, else]``;
* ``["+", a, b]``, ``["-", a, b]``, ``["*", a, b]``, ``["//", a, b]``, ``["%", a, b]``;
* ``["cmp", left, [op, right], ...]`` with op ``== != < <= > >= is is not in not in``;
* ``["call", name, args...]``: a function of :data:`FUNCTIONS`.

:func:`evaluate` returns the value and the names it was read from (so that an error names the
config key beside the field).
"""
from __future__ import annotations

import re
from ..records import Record
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any, Callable

from ..errors import SymcalcError

DOCS = "docs/families.md"
LITERALS = {"null": None, "true": True, "false": False, "None": None, "True": True,
            "False": False}


# -- functions an expression may call ---------------------------------------------------------
class ValueProblem(Exception):
    """A value of the wrong kind; turned into a SymcalcError naming its key."""

    def __init__(self, rule: str, value: Any):
        super().__init__(rule)
        self.rule = rule
        self.value = value


def _need_list(items: Any) -> None:
    if not isinstance(items, list):
        raise ValueProblem("must be a list", items)


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _numbers(args: tuple) -> list:
    values = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
    if not values:
        raise ValueProblem("must not be empty", args[0] if args else None)
    for v in values:
        if not is_number(v):
            raise ValueProblem("must be a number", v)
    return values


def _int_arg(v: Any, allow_zero: bool = False) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (v == 0 and not allow_zero):
        raise ValueProblem("must be a positive integer" if not allow_zero
                           else "must be a non-negative integer", v)
    return v


def _count(items: Any, value: Any) -> int:
    """Items of a list equal to ``value``; of a string, its characters equal to ``value``
    (Nemotron-H's hybrid_override_pattern: ``count(pattern, 'M')``)."""
    if not isinstance(items, str):
        _need_list(items)
    return sum(1 for x in items if x == value)


def _count_from(items: Any, start: Any, value: Any) -> int:
    """Items of ``items[start:]`` equal to ``value`` (Gemma 3n: the sliding layers among the
    last num_kv_shared_layers, ``count_from(layer_types, L - shared, 'sliding_attention')``)."""
    _need_list(items)
    return sum(1 for x in items[_int_arg(start, allow_zero=True):] if x == value)


def _count_true(items: Any, n: Any) -> int:
    """Items among the first ``n`` of a list that are true or a nonzero number (Llama 4's
    no_rope_layers: its rotary layers)."""
    _need_list(items)
    return sum(1 for x in items[:_int_arg(n, allow_zero=True)] if x)


def _layer_sum(value: Any, layers: Any) -> int:
    """The sum over ``layers`` layers of a per-layer number: ``value * layers`` for one number,
    the sum of a list that has one number per layer (Gemma 3n's intermediate_size)."""
    layers = _int_arg(layers, allow_zero=True)
    if isinstance(value, list):
        if len(value) != layers:
            raise ValueProblem(f"must have one value per layer (L = {layers}, got "
                               f"{len(value)})", value)
        return sum(_numbers((value,))) if value else 0
    return _numbers((value,))[0] * layers


def _len(items: Any) -> int:
    if not isinstance(items, (list, str)):
        raise ValueProblem("must be a list", items)
    return len(items)


def _distinct(items: Any) -> list:
    """The items of a list without repeats, each at its first place (by ``==``, as ``count``
    compares): Qwen4-Exp's ple_layer_ids, which its config turns into a sorted set."""
    _need_list(items)
    out: list = []
    for x in items:
        if not any(x == y for y in out):
            out.append(x)
    return out


def _min(*args: Any) -> Any:
    return min(_numbers(args))


def _max(*args: Any) -> Any:
    return max(_numbers(args))


def _floor(x: Any) -> int:
    """The whole part of a non-negative number (``int()`` in transformers' code)."""
    if isinstance(x, list):
        raise ValueProblem("must be a number", x)
    value = _numbers((x,))[0]
    if value < 0:
        raise ValueProblem("must not be negative", x)
    if value != value or value == float("inf"):  # int() of nan or infinity raises
        raise ValueProblem("must be a finite number", x)
    return int(value)


def _positive(x: Any) -> bool:
    """True when ``x`` reads as a number above 0 (a dropout probability or a softcap that
    is set); null, text that is not a number and 0 are false."""
    try:
        return float(x) > 0
    except (TypeError, ValueError):
        return False


def _sparse_layers(L: Any, step: Any, mlp_only_layers: Any) -> int:
    """Qwen2-MoE / Qwen3-MoE: layers ``i`` with an MoE block (transformers:
    ``i not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0``)."""
    L, step = _int_arg(L), _int_arg(step)
    if mlp_only_layers is not None:
        _need_list(mlp_only_layers)
    skip = set(x for x in mlp_only_layers or [] if not isinstance(x, (list, dict)))
    return sum(1 for i in range(L) if i not in skip and (i + 1) % step == 0)


def _deepseek_moe_layers(L: Any, first_k_dense_replace: Any, moe_layer_freq: Any = 1) -> int:
    """DeepSeek: layers ``i`` with an MoE block: ``i >= first_k_dense_replace and
    i % moe_layer_freq == 0`` (transformers' deepseek_v2/v3 read only first_k_dense_replace:
    pass 1, or null, as moe_layer_freq to follow them)."""
    L = _int_arg(L)
    first = _int_arg(first_k_dense_replace or 0, allow_zero=True)
    freq = _int_arg(moe_layer_freq if moe_layer_freq is not None else 1)
    return sum(1 for i in range(L) if i >= first and i % freq == 0)


def _interval_layers(L: Any, interval: Any, first: Any, last: Any) -> int:
    """ERNIE-4.5-MoE: layers ``i`` in ``range(L)`` with ``first <= i <= last`` and
    ``(i + 1) % interval == 0`` (transformers: moe_layer_start_index, moe_layer_end_index --
    the caller turns its -1 into L - 1 -- and moe_layer_interval). ``first`` and ``last`` may
    be any integers (a negative bound excludes nothing or everything); ``interval`` is positive."""
    L, interval = _int_arg(L), _int_arg(interval)
    for bound in (first, last):
        if isinstance(bound, bool) or not isinstance(bound, int):
            raise ValueProblem("must be an integer", bound)
    return sum(1 for i in range(L) if first <= i <= last and (i + 1) % interval == 0)


# Miller-Rabin witnesses that decide primality exactly below 3.3 * 10^24
_PRIME_WITNESSES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
NGRAM_LIMITS = (10**15, 100_000)  # the largest base, the most primes one call may find


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in _PRIME_WITNESSES:
        if n % p == 0:
            return n == p
    r, m = 0, n - 1
    while m % 2 == 0:
        r, m = r + 1, m // 2
    for a in _PRIME_WITNESSES:
        x = pow(a, m, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _ngram_rows(base: Any, heads: Any, tables: Any, divisor: Any) -> int:
    """Qwen4-Exp's hashed n-gram tables (transformers 5.24 Qwen4ExpTextNGramEmbedding): rows
    summed over ``tables`` tables of ``heads`` heads each, head j of all (counted over the
    tables) holding as many rows as the (j + 1)-th prime from ``base`` on, each table's rows
    rounded up to a multiple of ``divisor``."""
    base, heads = _int_arg(base), _int_arg(heads)
    tables, divisor = _int_arg(tables, allow_zero=True), _int_arg(divisor)
    if base > NGRAM_LIMITS[0]:
        raise ValueProblem(f"must be at most {NGRAM_LIMITS[0]}", base)
    if heads * tables > NGRAM_LIMITS[1]:
        raise ValueProblem(f"asks for more than {NGRAM_LIMITS[1]} primes", tables)
    total, prime = 0, base - 1
    for _ in range(tables):
        rows = 0
        for _ in range(heads):
            prime += 1
            while not _is_prime(prime):
                prime += 1
            rows += prime
        total += -(-rows // divisor) * divisor
    return total


def _last_part(text: Any, sep: Any) -> str:
    """What follows the last ``sep`` in ``text`` (all of it without one): T5's
    feed_forward_proj 'gated-gelu' names the activation gelu."""
    if not isinstance(text, str) or not isinstance(sep, str) or not sep:
        raise ValueProblem("must be text", text if not isinstance(text, str) else sep)
    return text.split(sep)[-1]


def _values(obj: Any) -> list:
    """The members of a JSON object in their order (Gemma 4's per_layer_config, keyed by layer
    index): ``values(per_layer_config)[0]['head_dim']``."""
    if not isinstance(obj, dict):
        raise ValueProblem("must be an object", obj)
    return list(obj.values())


def _is_list(value: Any) -> bool:
    """True for a JSON list (``vision_feature_layer`` is an index or a list of them)."""
    return isinstance(value, list)


def _matches(text: Any, pattern: Any) -> bool:
    """``text`` is a string that ``pattern`` (a Python regular expression) matches whole."""
    if not isinstance(pattern, str):
        raise ValueProblem("pattern must be text", pattern)
    return isinstance(text, str) and re.fullmatch(pattern, text) is not None


PROJECTIONS = ("q", "k", "v", "o")


def _projections(text: Any) -> list[str]:
    """The attention projections an ``attention_bias`` text names: ``all``, ``none`` (or
    empty), or a list of q, k, v, o (``"q,k"``, ``"q k"`` or ``"qkv"``), in q, k, v, o order."""
    if not isinstance(text, str):
        raise ValueProblem("must be 'all', 'none' or a list of q, k, v, o", text)
    lowered = text.strip().lower()
    if lowered == "all":
        return list(PROJECTIONS)
    if lowered in ("none", ""):
        return []
    parts = lowered.replace(",", " ").split()
    if len(parts) == 1 and parts[0] not in PROJECTIONS:
        parts = list(parts[0])  # "qkv" -> q, k, v
    if any(p not in PROJECTIONS for p in parts):
        raise ValueProblem("must be 'all', 'none' or a list of q, k, v, o", text)
    return [p for p in PROJECTIONS if p in parts]


def _any(*conditions: Any) -> bool:
    """True when any argument is true (each must be true, false or null). ``a or b`` is not
    a boolean or: it is ``a`` unless ``a`` is null."""
    for c in conditions:
        if c is not None and not isinstance(c, bool):
            raise ValueProblem("must be true or false", c)
    return any(conditions)


# name -> (function, smallest and largest number of arguments; None = any)
FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    "count": (_count, 2, 2),
    "count_from": (_count_from, 3, 3),
    "count_true": (_count_true, 2, 2),
    "layer_sum": (_layer_sum, 2, 2),
    "len": (_len, 1, 1),
    "distinct": (_distinct, 1, 1),
    "min": (_min, 1, None),
    "max": (_max, 1, None),
    "floor": (_floor, 1, 1),
    "positive": (_positive, 1, 1),
    "sparse_layers": (_sparse_layers, 3, 3),
    "deepseek_moe_layers": (_deepseek_moe_layers, 2, 3),
    "interval_layers": (_interval_layers, 4, 4),
    "ngram_rows": (_ngram_rows, 4, 4),
    "matches": (_matches, 2, 2),
    "last_part": (_last_part, 2, 2),
    "is_list": (_is_list, 1, 1),
    "values": (_values, 1, 1),
    "any": (_any, 1, None),
    "projections": (_projections, 1, 1),
}


# -- parsing a text into a tree ------------------------------------------------------------------
class Expr(Record):
    """One parsed expression of a data file."""

    text: str
    tree: Any
    names: frozenset[str]  # the names it may read


def parse_expression(text: Any, where: str, key: str) -> Expr:
    """Parse and check one expression; ``where`` names the file, ``key`` the table key."""
    import ast

    if not isinstance(text, str):
        raise SymcalcError(where, f"{key}: must be an expression in a string (got {text!r})")
    try:
        node = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise SymcalcError(where, f"{key}: expression does not parse ({err.msg}: {text!r})") from None
    names: set[str] = set()
    tree = _tree(ast, node.body, where, key, text, names)
    return Expr(text, tree, frozenset(names))


_BINOPS = {"Add": "+", "Sub": "-", "Mult": "*", "FloorDiv": "//", "Mod": "%"}
_CMPOPS = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=",
           "Is": "is", "IsNot": "is not", "In": "in", "NotIn": "not in"}


def _tree(ast, node, where: str, key: str, text: str, names: set[str]):
    def sub(n):
        return _tree(ast, n, where, key, text, names)

    def forbid(what: str):
        raise SymcalcError(where, f"{key}: forbidden construct {what} in {text!r} (see {DOCS})")

    kind = type(node).__name__
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, bool) or isinstance(value, int):
            return value
        if isinstance(value, str):
            return ["'", value]
        raise SymcalcError(where, f"{key}: forbidden literal {value!r} in {text!r}")
    if isinstance(node, ast.Name):
        if node.id in LITERALS:
            return LITERALS[node.id]
        names.add(node.id)
        return node.id
    if isinstance(node, (ast.List, ast.Tuple)):
        return ["[", *(sub(e) for e in node.elts)]
    if isinstance(node, ast.BoolOp):
        return ["or" if isinstance(node.op, ast.Or) else "and", *(sub(v) for v in node.values)]
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return ["not", sub(node.operand)]
        if isinstance(node.op, ast.USub):
            return ["neg", sub(node.operand)]
        forbid(type(node.op).__name__)
    if isinstance(node, ast.IfExp):
        return ["if", sub(node.test), sub(node.body), sub(node.orelse)]
    if isinstance(node, ast.BinOp):
        op = _BINOPS.get(type(node.op).__name__)
        if op is None:
            forbid(type(node.op).__name__)
        return [op, sub(node.left), sub(node.right)]
    if isinstance(node, ast.Compare):
        out = ["cmp", sub(node.left)]
        for op, right in zip(node.ops, node.comparators):
            name = _CMPOPS.get(type(op).__name__)
            if name is None:
                forbid(type(op).__name__)
            out.append([name, sub(right)])
        return out
    if isinstance(node, ast.Subscript):
        index = node.slice
        if not (isinstance(index, ast.Constant) and (
                isinstance(index.value, str) or (isinstance(index.value, int)
                                                 and not isinstance(index.value, bool)
                                                 and index.value >= 0))):
            raise SymcalcError(where, f"{key}: a subscript takes one constant key, text or a "
                                      f"non-negative integer, in {text!r}")
        return ["sub", sub(node.value), index.value]
    if isinstance(node, ast.Call):
        fn = node.func.id if isinstance(node.func, ast.Name) else None
        if fn not in FUNCTIONS:
            raise SymcalcError(where, f"{key}: unknown function "
                                      f"{fn or ast.unparse(node.func)!r} in {text!r} "
                                      f"(known: {', '.join(sorted(FUNCTIONS))})")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise SymcalcError(where, f"{key}: {fn}() takes positional arguments only")
        _, lo, hi = FUNCTIONS[fn]
        if len(node.args) < lo or (hi is not None and len(node.args) > hi):
            want = str(lo) if lo == hi else f"{lo} or more" if hi is None else f"{lo} to {hi}"
            raise SymcalcError(where, f"{key}: {fn}() takes {want} arguments "
                                      f"(got {len(node.args)}) in {text!r}")
        return ["call", fn, *(sub(a) for a in node.args)]
    forbid(kind)


# -- evaluating a tree ----------------------------------------------------------------------------
class Scope:
    """Name lookup for one evaluation: the data's value (an explicit ``null`` stays null),
    else the defaults', else null. ``spelled`` names a key the way the data spelled it (an
    alias of a family's ``[aliases]``), for error messages."""

    def __init__(self, data: dict[str, Any], defaults: dict[str, Any] | None = None,
                 spelled: dict[str, str] | None = None):
        self.data = data
        self.defaults = defaults or {}
        self.spelled = spelled or {}

    def get(self, key: str) -> Any:
        return self.data[key] if key in self.data else self.defaults.get(key)

    def name(self, key: str) -> str:
        return self.spelled.get(key, key)


# an evaluated value and the names it came from (for error messages)
Value = tuple  # (value, tuple of names)


def evaluate(expr: Expr, scope: Scope, where: str) -> Value:
    """The value of ``expr`` and the names it was read from."""
    return _eval(expr.tree, scope, where, expr.text)


class _Slow(Exception):
    """The lean evaluator met something it leaves to :func:`_eval` (an error to word)."""


_LEAN_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b,
             "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
             ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
             "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}


def value_of(tree: Any, text: str, scope: Scope, where: str) -> Any:
    """The value of a tree, as :func:`evaluate` gives it, without tracking the names it
    reads (the rules and facts run on every report: this is about three times faster). On
    anything unusual -- a value of the wrong kind, a function, a subscript -- the full
    evaluator runs, so values and errors are exactly :func:`evaluate`'s."""
    try:
        return _lean(tree, scope.data, scope.defaults)
    except _Slow:
        return _eval(tree, scope, where, text)[0]


def _lean(t, data: dict, defaults: dict) -> Any:
    if t is None or t is True or t is False or type(t) is int:
        return t
    if type(t) is str:
        return data[t] if t in data else defaults.get(t)
    op = t[0]
    if op == "and":
        for operand in t[1:]:
            v = _lean(operand, data, defaults)
            if v is None or v is False:
                return False
            if v is not True:
                raise _Slow
        return True
    if op == "not":
        v = _lean(t[1], data, defaults)
        if v is None or v is False:
            return True
        if v is True:
            return False
        raise _Slow
    if op == "or":
        v = None
        for operand in t[1:]:
            v = _lean(operand, data, defaults)
            if v is not None:
                return v
        return v
    if op == "if":
        c = _lean(t[1], data, defaults)
        if c is True:
            return _lean(t[2], data, defaults)
        if c is None or c is False:
            return _lean(t[3], data, defaults)
        raise _Slow
    if op == "'":
        return t[1]
    if op == "cmp":
        left = _lean(t[1], data, defaults)
        result = True
        for name, right_tree in t[2:]:
            right = _lean(right_tree, data, defaults)
            if name == "is" or name == "is not":
                same = left is right if left is None or right is None else left == right
                ok = same if name == "is" else not same
            else:
                try:
                    ok = _LEAN_CMP[name](left, right)
                except TypeError:
                    raise _Slow from None
            result = result and ok
            left = right
        return result
    if op in _ARITH:
        a, b = _lean(t[1], data, defaults), _lean(t[2], data, defaults)
        if type(a) is not int or type(b) is not int or (b == 0 and op in ("//", "%")):
            raise _Slow
        return _ARITH[op](a, b)
    if op == "[":
        return [_lean(e, data, defaults) for e in t[1:]]
    if op == "call" and t[1] in ("any", "positive", "max", "min", "projections"):
        args = [_lean(a, data, defaults) for a in t[2:]]
        try:
            return FUNCTIONS[t[1]][0](*args)
        except ValueProblem:
            raise _Slow from None
    raise _Slow


def condition(value: Value, where: str) -> bool:
    """A value used as a condition: JSON true/false, or null (= false)."""
    v, keys = value
    if v is None or isinstance(v, bool):
        return bool(v)
    if keys:
        raise SymcalcError(", ".join(keys), f"must be true or false (got {v!r})")
    raise SymcalcError(where, f"condition must be true or false (got {v!r})")


def _merge(*key_groups: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for keys in key_groups:
        out.extend(k for k in keys if k not in out)
    return tuple(out)


_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "//": lambda a, b: a // b, "%": lambda a, b: a % b}
_COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b,
            "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
            ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
            "is": lambda a, b: a is b if a is None or b is None else a == b,
            "is not": lambda a, b: a is not b if a is None or b is None else a != b,
            "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}


def _eval(t, scope: Scope, where: str, text: str) -> Value:
    if t is None or isinstance(t, (bool, int)):
        return t, ()
    if isinstance(t, str):
        return scope.get(t), (scope.name(t),)
    op = t[0]
    if op == "'":
        return t[1], ()
    if op == "[":
        items = [_eval(e, scope, where, text) for e in t[1:]]
        return [v for v, _ in items], _merge(*(k for _, k in items))
    if op == "or":  # a or b: a unless a is null
        value: Value = (None, ())
        for operand in t[1:]:
            value = _eval(operand, scope, where, text)
            if value[0] is not None:
                return value
        return value
    if op == "and":  # every operand a condition
        keys: tuple[str, ...] = ()
        for operand in t[1:]:
            value = _eval(operand, scope, where, text)
            keys = _merge(keys, value[1])
            if not condition(value, where):
                return False, keys
        return True, keys
    if op == "not":
        value = _eval(t[1], scope, where, text)
        return not condition(value, where), value[1]
    if op == "neg":
        value = _eval(t[1], scope, where, text)
        _numeric(value, where, text)
        return -value[0], value[1]
    if op == "if":
        if condition(_eval(t[1], scope, where, text), where):
            return _eval(t[2], scope, where, text)
        return _eval(t[3], scope, where, text)
    if op in _ARITH:
        a = _eval(t[1], scope, where, text)
        b = _eval(t[2], scope, where, text)
        _numeric(a, where, text)
        _numeric(b, where, text)
        if op in ("//", "%") and b[0] == 0:
            raise SymcalcError(", ".join(b[1]) or where, f"must not be 0 (divides in {text!r})")
        return _ARITH[op](a[0], b[0]), _merge(a[1], b[1])
    if op == "cmp":
        left = _eval(t[1], scope, where, text)
        keys = left[1]
        result = True
        for name, right_tree in t[2:]:
            right = _eval(right_tree, scope, where, text)
            keys = _merge(keys, right[1])
            try:
                ok = _COMPARE[name](left[0], right[0])
            except TypeError:
                bad = right if name in ("in", "not in") else left
                raise SymcalcError(", ".join(keys) or where,
                                   f"cannot be compared in {text!r} (got {bad[0]!r})") from None
            result = result and ok
            left = right
        return result, keys
    if op == "sub":
        return _subscript(t, scope, where, text)
    if op == "call":
        fn = t[1]
        args = [_eval(a, scope, where, text) for a in t[2:]]
        keys = _merge(*(k for _, k in args))
        try:
            return FUNCTIONS[fn][0](*(v for v, _ in args)), keys
        except ValueProblem as err:
            culprit = next((k for v, k in args if v is err.value and k), keys)
            name = ", ".join(culprit) or where
            raise SymcalcError(name, f"{err.rule} (got {err.value!r}; in {fn}())") from None
    raise SymcalcError(where, f"forbidden construct {op!r} in {text!r}")


def _subscript(t, scope: Scope, where: str, text: str) -> Value:
    """``obj['key']`` (a JSON object's member) or ``items[i]`` (a list's item): null when
    the member or item is absent or ``obj`` itself is null. The value is named by its path
    (``rope_scaling.type``, ``layer_types[0]``) in error messages."""
    container, keys = _eval(t[1], scope, where, text)
    key = t[2]
    root = keys[0] if len(keys) == 1 else None
    path = ((f"{root}.{key}" if isinstance(key, str) else f"{root}[{key}]"),) if root else keys
    if container is None:
        return None, path
    if isinstance(key, str):
        if not isinstance(container, dict):
            raise SymcalcError(", ".join(keys) or where,
                               f"must be an object to read {key!r} (got {container!r}; "
                               f"in {text!r})")
        return container.get(key), path
    if not isinstance(container, list):
        raise SymcalcError(", ".join(keys) or where,
                           f"must be a list to read item {key} (got {container!r}; in {text!r})")
    return (container[key] if key < len(container) else None), path


def _numeric(value: Value, where: str, text: str) -> None:
    if not is_number(value[0]):
        name = ", ".join(value[1]) or where
        raise SymcalcError(name, f"must be a number (got {value[0]!r}; in {text!r})")

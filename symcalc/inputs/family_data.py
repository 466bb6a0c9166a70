"""Model families as data: reading ``symcalc/inputs/families/<model_type>.toml`` and evaluating
the small expressions in it. See docs/families.md for the file format.

A family file maps a Hugging Face ``config.json`` of one ``model_type`` to :class:`Spec`
fields: literal values (``[fixed]``) and expressions over config keys (``[spec]``), with
per-class additions (``[roles.<role>]``). Expressions are parsed with :mod:`ast` and walked
by :func:`evaluate` -- never ``eval``/``exec``; only the constructs listed in
``docs/families.md`` are accepted, and a file that uses anything else is refused when it is
loaded, as one :class:`SymcalcError` naming the file and the key.

Loaded only when a config.json is read (the quick path for presets never imports this).
"""
from __future__ import annotations

import ast
import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import SymcalcError
from ..algebra.spec import FIELD_NAMES

FAMILIES_DIR = Path(__file__).parent / "families"
DOCS = "docs/families.md"

TOP_KEYS = ("model_type", "description", "sources", "not_modelled", "bare_class", "classes",
            "aliases", "defaults", "fixed", "spec", "roles", "checks", "wrapper")
# [wrapper]: a multimodal config whose language model is a nested config (docs/families.md)
WRAPPER_KEYS = ("text_config", "text_model_type", "text_absent", "text_absent_nulls", "text_only",
                "vision_config", "vision", "projector", "vision_defaults", "vision_absent", "sizes")
ROLE_KEYS = ("fixed", "spec")
# Spec fields a family file may set (name and source come from the config and its class).
SETTABLE = tuple(f for f in FIELD_NAMES if f not in ("name", "source"))
LITERALS = {"null": None, "true": True, "false": False, "None": None, "True": True,
            "False": False}


# -- functions an expression may call ---------------------------------------------------------
def _count(items: Any, value: Any) -> int:
    """Items of a list equal to ``value``; of a string, its characters equal to ``value``
    (Nemotron-H's hybrid_override_pattern: ``count(pattern, 'M')``)."""
    if not isinstance(items, str):
        _need_list("count", items)
    return sum(1 for x in items if x == value)


def _count_from(items: Any, start: Any, value: Any) -> int:
    """Items of ``items[start:]`` equal to ``value`` (Gemma 3n: the sliding layers among the
    last num_kv_shared_layers, ``count_from(layer_types, L - shared, 'sliding_attention')``)."""
    _need_list("count_from", items)
    return sum(1 for x in items[_int_arg(start, allow_zero=True):] if x == value)


def _layer_sum(value: Any, layers: Any) -> int:
    """The sum over ``layers`` layers of a per-layer number: ``value * layers`` for one number,
    the sum of a list that has one number per layer (Gemma 3n's intermediate_size)."""
    layers = _int_arg(layers, allow_zero=True)
    if isinstance(value, list):
        if len(value) != layers:
            raise _ValueProblem(f"must have one value per layer (L = {layers}, got "
                                f"{len(value)})", value)
        return sum(_numbers("layer_sum", (value,))) if value else 0
    return _numbers("layer_sum", (value,))[0] * layers


def _len(items: Any) -> int:
    if not isinstance(items, (list, str)):
        raise _ValueProblem("must be a list", items)
    return len(items)


def _min(*args: Any) -> Any:
    return min(_numbers("min", args))


def _max(*args: Any) -> Any:
    return max(_numbers("max", args))


def _sparse_layers(L: Any, step: Any, mlp_only_layers: Any) -> int:
    """Qwen2-MoE / Qwen3-MoE: layers ``i`` with an MoE block (transformers:
    ``i not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0``)."""
    L, step = _int_arg(L), _int_arg(step)
    if mlp_only_layers is not None:
        _need_list("sparse_layers", mlp_only_layers)
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
            raise _ValueProblem("must be an integer", bound)
    return sum(1 for i in range(L) if first <= i <= last and (i + 1) % interval == 0)


def _is_list(value: Any) -> bool:
    """True for a JSON list (``vision_feature_layer`` is an index or a list of them)."""
    return isinstance(value, list)


def _matches(text: Any, pattern: Any) -> bool:
    """``text`` is a string that ``pattern`` (a Python regular expression) matches whole."""
    if not isinstance(pattern, str):
        raise _ValueProblem("pattern must be text", pattern)
    return isinstance(text, str) and re.fullmatch(pattern, text) is not None


def _any(*conditions: Any) -> bool:
    """True when any argument is true (each must be true, false or null). ``a or b`` is not
    a boolean or: it is ``a`` unless ``a`` is null."""
    for c in conditions:
        if c is not None and not isinstance(c, bool):
            raise _ValueProblem("must be true or false", c)
    return any(conditions)


def _trunc(value: Any) -> int:
    """A number rounded toward zero, as Python's ``int()`` rounds a float (LFM2:
    ``int(block_ffn_dim_multiplier * width)``, the product computed in floats as
    transformers computes it)."""
    if isinstance(value, list):
        raise _ValueProblem("must be a number", value)
    x = _numbers("trunc", (value,))[0]
    if isinstance(x, float) and not math.isfinite(x):
        raise _ValueProblem("must be a finite number", value)
    return int(x)


# name -> (function, smallest and largest number of arguments; None = any)
FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    "count": (_count, 2, 2),
    "count_from": (_count_from, 3, 3),
    "layer_sum": (_layer_sum, 2, 2),
    "len": (_len, 1, 1),
    "min": (_min, 1, None),
    "max": (_max, 1, None),
    "sparse_layers": (_sparse_layers, 3, 3),
    "deepseek_moe_layers": (_deepseek_moe_layers, 2, 3),
    "interval_layers": (_interval_layers, 4, 4),
    "matches": (_matches, 2, 2),
    "is_list": (_is_list, 1, 1),
    "any": (_any, 1, None),
    "trunc": (_trunc, 1, 1),
}


class _ValueProblem(Exception):
    """A config value of the wrong kind; turned into a SymcalcError naming its key."""

    def __init__(self, rule: str, value: Any):
        super().__init__(rule)
        self.rule = rule
        self.value = value


def _need_list(fn: str, items: Any) -> None:
    if not isinstance(items, list):
        raise _ValueProblem("must be a list", items)


def _numbers(fn: str, args: tuple) -> list:
    values = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
    if not values:
        raise _ValueProblem("must not be empty", args[0] if args else None)
    for v in values:
        if not _is_number(v):
            raise _ValueProblem("must be a number", v)
    return values


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _int_arg(v: Any, allow_zero: bool = False) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (v == 0 and not allow_zero):
        raise _ValueProblem("must be a positive integer" if not allow_zero
                            else "must be a non-negative integer", v)
    return v


# -- expressions --------------------------------------------------------------------------------
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b}
_CMPOPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
           ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
           ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
           ast.Is: lambda a, b: a is b if a is None or b is None else a == b,
           ast.IsNot: lambda a, b: a is not b if a is None or b is None else a != b,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_ALLOWED = (ast.Expression, ast.Name, ast.Constant, ast.List, ast.Tuple, ast.BoolOp, ast.And,
            ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.IfExp, ast.BinOp, ast.Compare, ast.Call,
            ast.Subscript, ast.Load, *_BINOPS, *_CMPOPS)


@dataclass(frozen=True)
class Expr:
    """One parsed expression of a family file."""

    text: str
    tree: ast.expr
    names: frozenset[str]  # the config keys it may read


def _constant_key(node: ast.expr) -> bool:
    """``x['key']`` or ``x[0]``: a text key or a non-negative integer index, nothing else."""
    return isinstance(node, ast.Constant) and (
        isinstance(node.value, str)
        or (isinstance(node.value, int) and not isinstance(node.value, bool) and node.value >= 0))


def parse_expression(text: Any, where: str, key: str) -> Expr:
    """Parse and check one expression; ``where`` names the file, ``key`` the table key."""
    if not isinstance(text, str):
        raise SymcalcError(where, f"{key}: must be an expression in a string (got {text!r})")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise SymcalcError(where, f"{key}: expression does not parse ({err.msg}: {text!r})") from None
    names: set[str] = set()
    callees = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise SymcalcError(where, f"{key}: forbidden construct {type(node).__name__} "
                                      f"in {text!r} (see {DOCS})")
        if isinstance(node, ast.Constant) and not (
                node.value is None or isinstance(node.value, (bool, int, str))):
            raise SymcalcError(where, f"{key}: forbidden literal {node.value!r} in {text!r}")
        if isinstance(node, ast.Subscript) and not _constant_key(node.slice):
            raise SymcalcError(where, f"{key}: a subscript takes one constant key, text or a "
                                      f"non-negative integer, in {text!r}")
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
        if isinstance(node, ast.Name) and node.id not in LITERALS and id(node) not in callees:
            names.add(node.id)
    return Expr(text, tree.body, frozenset(names))


class Scope:
    """Config-key lookup for one config.json: the file's value (an explicit ``null`` stays
    null), else the family's ``[defaults]``, else null. ``spelled`` names a key the way the
    file spelled it (an alias of ``[aliases]``), for error messages."""

    def __init__(self, data: dict[str, Any], defaults: dict[str, Any],
                 spelled: dict[str, str] | None = None):
        self.data = data
        self.defaults = defaults
        self.spelled = spelled or {}

    def get(self, key: str) -> Any:
        return self.data[key] if key in self.data else self.defaults.get(key)

    def name(self, key: str) -> str:
        return self.spelled.get(key, key)


def canonical_config(aliases: dict[str, str], data: dict[str, Any]
                     ) -> tuple[dict[str, Any], dict[str, str]]:
    """A config.json with every alias of ``aliases`` (another spelling -> the key the family
    file reads) replaced by that key, as transformers' config class reads it, and for each key
    so set the spelling it came from.

    transformers' ``attribute_map`` makes both spellings one attribute; the config class sets
    its own fields first and every other key of the file after them, in the file's order. So
    when a file has both spellings the alias (not a field) wins, and of two aliases of one key
    the later in the file wins (``[aliases]`` maps the non-field spellings to the field)."""
    if not aliases or not any(k in aliases for k in data):
        return data, {}
    out = {k: v for k, v in data.items() if k not in aliases}
    spelled: dict[str, str] = {}
    for key, value in data.items():  # file order: a later alias wins
        target = aliases.get(key)
        if target is not None:
            out[target] = value
            spelled[target] = key
    return out, spelled


# an evaluated value and the config keys it came from (for error messages)
Value = tuple[Any, tuple[str, ...]]


def evaluate(expr: Expr, scope: Scope, where: str) -> Value:
    """The value of ``expr`` and the config keys it was read from."""
    return _eval(expr.tree, scope, where, expr.text)


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


def _eval(node: ast.expr, scope: Scope, where: str, text: str) -> Value:
    if isinstance(node, ast.Constant):
        return node.value, ()
    if isinstance(node, ast.Name):
        if node.id in LITERALS:
            return LITERALS[node.id], ()
        return scope.get(node.id), (scope.name(node.id),)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_eval(e, scope, where, text) for e in node.elts]
        return [v for v, _ in items], _merge(*(k for _, k in items))
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.Or):  # a or b: a unless a is null
            value: Value = (None, ())
            for operand in node.values:
                value = _eval(operand, scope, where, text)
                if value[0] is not None:
                    return value
            return value
        keys: tuple[str, ...] = ()
        for operand in node.values:  # and: every operand a condition
            value = _eval(operand, scope, where, text)
            keys = _merge(keys, value[1])
            if not condition(value, where):
                return False, keys
        return True, keys
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, scope, where, text)
        if isinstance(node.op, ast.Not):
            return not condition(value, where), value[1]
        _numeric(value, where, text)
        return -value[0], value[1]
    if isinstance(node, ast.IfExp):
        if condition(_eval(node.test, scope, where, text), where):
            return _eval(node.body, scope, where, text)
        return _eval(node.orelse, scope, where, text)
    if isinstance(node, ast.BinOp):
        a = _eval(node.left, scope, where, text)
        b = _eval(node.right, scope, where, text)
        _numeric(a, where, text)
        _numeric(b, where, text)
        if isinstance(node.op, ast.FloorDiv) and b[0] == 0:
            raise SymcalcError(", ".join(b[1]) or where, f"must not be 0 (divides in {text!r})")
        return _BINOPS[type(node.op)](a[0], b[0]), _merge(a[1], b[1])
    if isinstance(node, ast.Compare):
        left = _eval(node.left, scope, where, text)
        keys = left[1]
        result = True
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, scope, where, text)
            keys = _merge(keys, right[1])
            try:
                ok = _CMPOPS[type(op)](left[0], right[0])
            except TypeError:
                bad = right if isinstance(op, (ast.In, ast.NotIn)) else left
                raise SymcalcError(", ".join(keys) or where,
                                   f"cannot be compared in {text!r} (got {bad[0]!r})") from None
            result = result and ok
            left = right
        return result, keys
    if isinstance(node, ast.Subscript):
        return _subscript(node, scope, where, text)
    if isinstance(node, ast.Call):
        fn = node.func.id  # type: ignore[attr-defined]
        args = [_eval(a, scope, where, text) for a in node.args]
        keys = _merge(*(k for _, k in args))
        try:
            return FUNCTIONS[fn][0](*(v for v, _ in args)), keys
        except _ValueProblem as err:
            culprit = next((k for v, k in args if v is err.value and k), keys)
            name = ", ".join(culprit) or where
            raise SymcalcError(name, f"{err.rule} (got {err.value!r}; in {fn}())") from None
    raise SymcalcError(where, f"forbidden construct {type(node).__name__} in {text!r}")


def _subscript(node: ast.Subscript, scope: Scope, where: str, text: str) -> Value:
    """``obj['key']`` (a JSON object's member) or ``items[i]`` (a list's item): null when
    the member or item is absent or ``obj`` itself is null. The value is named by its path
    (``rope_scaling.type``, ``layer_types[0]``) in error messages."""
    container, keys = _eval(node.value, scope, where, text)
    key = node.slice.value  # type: ignore[attr-defined]  (checked when parsed)
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
    if not _is_number(value[0]):
        name = ", ".join(value[1]) or where
        raise SymcalcError(name, f"must be a number (got {value[0]!r}; in {text!r})")


# -- family files -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    require: Expr
    rule: str


@dataclass(frozen=True)
class Role:
    fixed: dict[str, Any]
    spec: dict[str, Expr]


@dataclass(frozen=True)
class Wrapper:
    """A multimodal family's ``[wrapper]`` table: where its language model's config is, and
    what else the checkpoint holds (a vision tower and a projector of symcalc.algebra.vision)."""

    text_config: str  # the key holding the language model's config
    text_model_type: str  # its model_type when the nested config names none
    text_absent: dict[str, Any]  # the nested config transformers builds when the key is absent
    vision_config: str | None = None
    vision: str | None = None  # a tower of symcalc.algebra.vision.TOWERS
    projector: str | None = None  # a projector of symcalc.algebra.vision.PROJECTORS
    vision_defaults: dict[str, Any] = field(default_factory=dict)  # the vision config class's
    vision_absent: dict[str, Any] = field(default_factory=dict)  # when vision_config is absent
    sizes: dict[str, Expr] = field(default_factory=dict)  # vision symbol -> expression
    # classes that build the language model alone from the wrapper config (transformers'
    # causal-LM mapping: Qwen3_5ForCausalLM on a qwen3_5 config): no part outside it
    text_only: tuple[str, ...] = ()

    def nested(self, data: dict[str, Any], key: str | None, absent: dict[str, Any]
               ) -> dict[str, Any]:
        """The nested config under ``key`` as transformers reads it: the file's object, or the
        whole ``absent`` config when the key is missing or null."""
        value = data.get(key) if key else None
        if value is None:
            return dict(absent)
        if not isinstance(value, dict):
            raise SymcalcError(key or "config", f"must be an object (a nested config; got {value!r})")
        return value


@dataclass(frozen=True)
class Family:
    model_type: str
    description: str
    sources: tuple[str, ...]
    bare_class: str
    classes: dict[str, str]  # class name -> role
    defaults: dict[str, Any]
    fixed: dict[str, Any]
    spec: dict[str, Expr]
    roles: dict[str, Role]
    checks: dict[str, Check] = field(default_factory=dict)
    # another spelling of a config key (transformers' attribute_map) -> the key read here
    aliases: dict[str, str] = field(default_factory=dict)
    label: str = ""  # "families/<model_type>.toml", for error messages
    wrapper: Wrapper | None = None  # a multimodal config around a nested language model
    # what transformers builds or runs that the counts leave out or refuse (docs/families.md)
    not_modelled: tuple[str, ...] = ()

    def fields_for(self, role: str) -> dict[str, Any]:
        """Field -> literal value or :class:`Expr`, the role's entries over the base ones."""
        out: dict[str, Any] = {**self.fixed, **self.spec}
        r = self.roles[role]
        out.update(r.fixed)
        out.update(r.spec)
        return out


def _table(raw: dict, key: str, where: str, required: bool = False, prefix: str = "") -> dict:
    value = raw.get(key)
    if value is None:
        if required:
            raise SymcalcError(where, f"{prefix}{key}: is required (see {DOCS})")
        return {}
    if not isinstance(value, dict):
        raise SymcalcError(where, f"{prefix}{key}: must be a table (got {value!r})")
    return value


def _fields(table: dict, prefix: str, where: str, exprs: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if name not in SETTABLE:
            raise SymcalcError(where, f"{key}: is not a symcalc spec field it may set "
                                      f"(known: {', '.join(SETTABLE)})")
        if exprs:
            out[name] = parse_expression(value, where, key)
        elif isinstance(value, (str, int, bool)):
            out[name] = value
        else:
            raise SymcalcError(where, f"{key}: must be text, an integer or a boolean "
                                      f"(got {value!r})")
    return out


def _both(fixed: dict, spec: dict, prefix: str, where: str) -> None:
    both = sorted(set(fixed) & set(spec))
    if both:
        raise SymcalcError(where, f"{prefix}spec.{both[0]}: is in {prefix}fixed too")


def parse_family(text: str, label: str, stem: str) -> Family:
    """One family file's text -> :class:`Family`; ``label`` names the file in errors."""
    from .files import parse_toml

    raw = parse_toml(text, label)
    unknown = [k for k in raw if k not in TOP_KEYS]
    if unknown:
        raise SymcalcError(label, f"{unknown[0]}: is not a family-file key "
                                  f"(known: {', '.join(TOP_KEYS)})")
    model_type = raw.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise SymcalcError(label, f"model_type: is required, as text (got {model_type!r})")
    if model_type != stem:
        raise SymcalcError(label, f"model_type: must match the file name {stem!r} "
                                  f"(got {model_type!r})")
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SymcalcError(label, "description: is required, as text")
    sources = raw.get("sources")
    if (not isinstance(sources, list) or not sources
            or not all(isinstance(s, str) and s.strip() for s in sources)):
        raise SymcalcError(label, "sources: is required, a non-empty list of text")
    not_modelled = raw.get("not_modelled")
    if (not isinstance(not_modelled, list)
            or not all(isinstance(s, str) and s.strip() for s in not_modelled)):
        raise SymcalcError(label, "not_modelled: is required, a list of short phrases (text; "
                                  "an empty list when nothing is left out)")

    classes = _table(raw, "classes", label, required=True)
    if not classes:
        raise SymcalcError(label, "classes: must name at least one class")
    for cls, role in classes.items():
        if not isinstance(role, str):
            raise SymcalcError(label, f"classes.{cls}: must be a role name (got {role!r})")
    bare = raw.get("bare_class")
    if not isinstance(bare, str) or bare not in classes:
        raise SymcalcError(label, f"bare_class: must be one of [classes] "
                                  f"({', '.join(classes)}; got {bare!r})")

    defaults = _table(raw, "defaults", label)
    aliases = _aliases(_table(raw, "aliases", label), defaults, label)
    wrapper = _wrapper(raw, label) if "wrapper" in raw else None
    for cls in (wrapper.text_only if wrapper else ()):
        if cls not in classes:
            raise SymcalcError(label, f"wrapper.text_only: {cls!r} is not a class of [classes]")
    fixed = _fields(_table(raw, "fixed", label), "fixed", label, exprs=False)
    spec_table = _table(raw, "spec", label, required=wrapper is None)
    if not spec_table and wrapper is None:
        raise SymcalcError(label, "spec: must map at least one field")
    spec = _fields(spec_table, "spec", label, exprs=True)
    _both(fixed, spec, "", label)

    roles: dict[str, Role] = {}
    for role, body in _table(raw, "roles", label).items():
        prefix = f"roles.{role}"
        if not isinstance(body, dict):
            raise SymcalcError(label, f"{prefix}: must be a table (got {body!r})")
        extra = [k for k in body if k not in ROLE_KEYS]
        if extra:
            raise SymcalcError(label, f"{prefix}.{extra[0]}: is not a role key "
                                      f"(known: {', '.join(ROLE_KEYS)})")
        r_fixed = _fields(_table(body, "fixed", label, prefix=f"{prefix}."), f"{prefix}.fixed",
                          label, exprs=False)
        r_spec = _fields(_table(body, "spec", label, prefix=f"{prefix}."), f"{prefix}.spec",
                         label, exprs=True)
        _both(r_fixed, r_spec, f"{prefix}.", label)
        roles[role] = Role(r_fixed, r_spec)
    for cls, role in classes.items():
        if role not in roles:
            raise SymcalcError(label, f"classes.{cls}: role {role!r} has no [roles.{role}] "
                                      "table (an empty one is fine)")
    unused = [r for r in roles if r not in classes.values()]
    if unused:
        raise SymcalcError(label, f"roles.{unused[0]}: no class in [classes] has this role")

    checks: dict[str, Check] = {}
    for key, body in _table(raw, "checks", label).items():
        prefix = f"checks.{key}"
        if (not isinstance(body, dict) or set(body) != {"require", "rule"}
                or not isinstance(body["rule"], str)):
            raise SymcalcError(label, f"{prefix}: must be {{ require = \"<expression>\", "
                                      "rule = \"<text>\" }")
        checks[key] = Check(parse_expression(body["require"], label, f"{prefix}.require"),
                            body["rule"])
    _reads_no_alias(aliases, [spec, *(r.spec for r in roles.values())],
                    [c.require for c in checks.values()], label)
    return Family(model_type, description, tuple(sources), bare, dict(classes),
                  dict(defaults), fixed, spec, roles, checks, aliases, label, wrapper,
                  tuple(" ".join(s.split()) for s in not_modelled))


def _reads_no_alias(aliases: dict[str, str], tables: list[dict[str, Expr]],
                    more: list[Expr], label: str) -> None:
    """An expression reads the key an alias names, never the alias (the config is rewritten
    to that key before it is read)."""
    exprs = [e for t in tables for e in t.values()] + more
    for e in exprs:
        read = sorted(e.names & set(aliases))
        if read:
            raise SymcalcError(label, f"aliases.{read[0]}: is read by {e.text!r}; read "
                                      f"{aliases[read[0]]!r} (the alias is rewritten to it)")


def _aliases(table: dict, defaults: dict, label: str) -> dict[str, str]:
    """``[aliases]``: text -> text, an alias is not itself a target nor a defaulted key."""
    for alias, target in table.items():
        where = f"aliases.{alias}"
        if not isinstance(target, str) or not target or target == alias:
            raise SymcalcError(label, f"{where}: must name another config key (got {target!r})")
        if target in table:
            raise SymcalcError(label, f"{where}: {target!r} is an alias itself (name the key "
                                      "the expressions read)")
        if alias in defaults:
            raise SymcalcError(label, f"{where}: is in [defaults] (give the default under "
                                      f"{target!r})")
    return dict(table)


def _wrapper(raw: dict, label: str) -> Wrapper:
    """The ``[wrapper]`` table: text_config and text_model_type required, the rest optional."""
    body = _table(raw, "wrapper", label)
    extra = [k for k in body if k not in WRAPPER_KEYS]
    if extra:
        raise SymcalcError(label, f"wrapper.{extra[0]}: is not a wrapper key "
                                  f"(known: {', '.join(WRAPPER_KEYS)})")
    text: dict[str, Any] = {}
    for key in ("text_config", "text_model_type", "vision_config", "vision", "projector"):
        value = body.get(key)
        if value is None and key in ("text_config", "text_model_type"):
            raise SymcalcError(label, f"wrapper.{key}: is required, as text")
        if value is not None and (not isinstance(value, str) or not value):
            raise SymcalcError(label, f"wrapper.{key}: must be text (got {value!r})")
        text[key] = value
    if (text["vision"] or text["projector"]) and not text["vision_config"]:
        raise SymcalcError(label, "wrapper.vision_config: is required with a vision tower "
                                  "or projector")
    sizes = {name: parse_expression(value, label, f"wrapper.sizes.{name}")
             for name, value in _table(body, "sizes", label, prefix="wrapper.").items()}
    absent = dict(_table(body, "text_absent", label, prefix="wrapper."))
    nulls = body.get("text_absent_nulls", [])  # TOML has no null: these keys are null
    if not isinstance(nulls, list) or not all(isinstance(k, str) for k in nulls):
        raise SymcalcError(label, f"wrapper.text_absent_nulls: must be a list of keys "
                                  f"(got {nulls!r})")
    absent.update({k: None for k in nulls})
    text_only = body.get("text_only", [])
    if not isinstance(text_only, list) or not all(isinstance(c, str) for c in text_only):
        raise SymcalcError(label, f"wrapper.text_only: must be a list of class names "
                                  f"(got {text_only!r})")
    return Wrapper(text["text_config"], text["text_model_type"], absent,
                   text["vision_config"], text["vision"], text["projector"],
                   dict(_table(body, "vision_defaults", label, prefix="wrapper.")),
                   dict(_table(body, "vision_absent", label, prefix="wrapper.")), sizes,
                   tuple(text_only))


@functools.lru_cache(maxsize=None)
def load_families(folder: str | None = None) -> dict[str, Family]:
    """Every ``<model_type>.toml`` of ``folder`` (default: the packaged families), parsed and
    checked once per process."""
    base = Path(folder) if folder is not None else FAMILIES_DIR
    return {name: load_family(name, folder) for name in family_names(str(base))}


def family_names(folder: str | None = None) -> tuple[str, ...]:
    """The model_types of ``folder``'s family files, without parsing them."""
    base = Path(folder) if folder is not None else FAMILIES_DIR
    return tuple(sorted(p.stem for p in base.glob("*.toml")))


@functools.lru_cache(maxsize=None)
def load_family(model_type: str, folder: str | None = None) -> Family:
    """One family file, parsed and checked (a config.json needs only its own family)."""
    base = Path(folder) if folder is not None else FAMILIES_DIR
    path = base / f"{model_type}.toml"
    label = f"{base.name}/{path.name}"
    from .files import read_text

    text = read_text(path, label)
    return parse_family(text, label, model_type)


def build_fields(family: Family, role: str, data: dict[str, Any]
                 ) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
    """The spec fields of one config.json, and for each field the config keys it was read
    from (so that a size error can name the key beside the symcalc field). For a wrapper
    family these are only its own entries, which change its language model's fields."""
    data, spelled = canonical_config(family.aliases, data)
    scope = Scope(data, family.defaults, spelled)
    for key, check in family.checks.items():
        where = f"{family.label}: checks.{key}"
        if not condition(evaluate(check.require, scope, where), where):
            raise SymcalcError(scope.name(key), f"{check.rule} (got {scope.get(key)!r})")
    values: dict[str, Any] = {}
    keys: dict[str, tuple[str, ...]] = {}
    for name, entry in family.fields_for(role).items():
        if isinstance(entry, Expr):
            values[name], keys[name] = evaluate(entry, scope, f"{family.label}: {name}")
        else:
            values[name] = entry
    return values, keys

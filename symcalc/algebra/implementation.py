"""What an implementation keeps for backward, as data: the fields of
``symcalc/algebra/implementation.toml`` (read once), an :class:`Implementation` (a spec's
values of them) and :func:`facts`, the small whole numbers the saved-tensor terms of
:mod:`symcalc.algebra.saved` multiply by. No sympy here: the quick path reads them too.

A spec's architecture is its :class:`~symcalc.algebra.spec.Spec` fields; how its transformers
implementation computes (which norm upcasts what, where dropout sits, what the router keeps)
is its ``implementation``: a family file gives it from a config.json (its ``[implementation]``
table, docs/families.md), a preset or spec file states it in an ``[implementation]`` table, a
hand-written spec without one keeps the fields' defaults (Korthikanti et al.'s assumptions).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from ..records import Record
from functools import lru_cache
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any, Iterator

from ..errors import SymcalcError

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "implementation.toml")
LABEL = "symcalc/algebra/implementation.toml"
KINDS = ("bool", "count", "choice", "text")


class Field(Record):
    name: str
    meaning: str
    kind: str  # bool | count | choice
    default: Any
    choices: tuple[str, ...] = ()
    config_other: Any = None  # what a family reads for a config value outside the choices
    config: Any = None  # Expr: the field from a config.json when its family gives no entry


class Definitions(Record):
    fields: dict[str, Field]
    checks: dict[str, tuple[Any, str]]  # name -> (Expr, rule)
    lets: tuple[tuple[str, Any], ...]  # (name, Expr), in order
    facts: dict[str, tuple[str, Any]]  # name -> (meaning, Expr)


def _expr_json(text: Any, key: str) -> dict[str, Any]:
    from .lang import parse_expression

    e = parse_expression(text, LABEL, key)
    return {"text": e.text, "tree": e.tree, "names": sorted(e.names)}


def compile_definitions(raw: dict[str, Any]) -> dict[str, Any]:
    """implementation.toml's tables, checked, as JSON (every expression parsed)."""
    fields = {}
    for name, body in raw.get("fields", {}).items():
        kind = body.get("kind")
        if kind not in KINDS:
            raise SymcalcError(LABEL, f"fields.{name}.kind: must be one of {', '.join(KINDS)}")
        config = body.get("config")
        fields[name] = {"meaning": body["meaning"], "kind": kind, "default": body["default"],
                        "choices": list(body.get("choices", ())),
                        "config_other": body.get("config_other"),
                        "config": (_expr_json(config, f"fields.{name}.config")
                                   if config is not None else None)}
    return {
        "fields": fields,
        "checks": {name: [_expr_json(b["require"], f"checks.{name}.require"), b["rule"]]
                   for name, b in raw.get("checks", {}).items()},
        "lets": [[name, _expr_json(text, f"let.{name}")] for name, text in raw.get("let", {}).items()],
        "facts": {name: [b["meaning"], _expr_json(b["value"], f"facts.{name}.value")]
                  for name, b in raw.get("facts", {}).items()},
    }


@lru_cache(maxsize=None)
def definitions() -> Definitions:
    """The fields, checks, shared sub-expressions and facts of implementation.toml, parsed
    and checked once (ahead of time, in the compiled store, while the file is unchanged)."""
    from .. import compiled
    from .lang import Expr

    data = compiled.load(compiled.ALGEBRA_STORE, "implementation", PATH,
                         lambda raw: compile_definitions(compiled.read_toml_bytes(raw, LABEL)))

    def expr(e: dict[str, Any]) -> Expr:
        return Expr(e["text"], e["tree"], frozenset(e["names"]))

    fields = {name: Field(name, b["meaning"], b["kind"], b["default"], tuple(b["choices"]),
                          b["config_other"], expr(b["config"]) if b["config"] else None)
              for name, b in data["fields"].items()}
    checks = {name: (expr(e), rule) for name, (e, rule) in data["checks"].items()}
    lets = tuple((name, expr(e)) for name, e in data["lets"])
    facts = {name: (meaning, expr(e)) for name, (meaning, e) in data["facts"].items()}
    return Definitions(fields, checks, lets, facts)


def field_names() -> tuple[str, ...]:
    return tuple(definitions().fields)


def fact_meanings() -> dict[str, str]:
    return {name: meaning for name, (meaning, _) in definitions().facts.items()}


class Implementation(Mapping):
    """A spec's implementation fields: every field of implementation.toml, its default unless
    given. Immutable and hashable (specs are cache keys); iterates over the fields that differ
    from their defaults (what a preset states)."""

    __slots__ = ("_given",)

    def __init__(self, given: tuple[tuple[str, Any], ...] = ()):
        object.__setattr__(self, "_given", tuple(sorted(given)))

    def __getitem__(self, name: str) -> Any:
        for k, v in self._given:
            if k == name:
                return v
        field = definitions().fields.get(name)
        if field is None:
            raise KeyError(name)
        return field.default

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._given)

    def __len__(self) -> int:
        return len(self._given)

    def __hash__(self) -> int:
        return hash(self._given)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Implementation) and self._given == other._given

    def __repr__(self) -> str:
        return f"Implementation({dict(self._given)!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("an Implementation is immutable")

    def __deepcopy__(self, memo) -> "Implementation":
        return self

    def values(self) -> dict[str, Any]:  # type: ignore[override]
        """Every field's value, the defaults included."""
        out = {name: f.default for name, f in definitions().fields.items()}
        out.update(self._given)
        return out

    def given(self) -> dict[str, Any]:
        """The fields that differ from their defaults."""
        return dict(self._given)

    def with_(self, **changes: Any) -> "Implementation":
        return make({**self.given(), **changes})


EMPTY = Implementation()


def make(values: Mapping[str, Any] | None = None, where: str = "implementation") -> Implementation:
    """A checked :class:`Implementation` from field values (``where`` prefixes nothing: the
    error names the field, as every spec field's does)."""
    if isinstance(values, Implementation):
        return values
    if not values:
        return EMPTY
    defs = definitions()
    given = []
    for name, value in (values or {}).items():
        field = defs.fields.get(name)
        if field is None:
            raise SymcalcError(name, f"is not an implementation field (known: "
                                     f"{', '.join(defs.fields)})")
        value = check_value(field, value)
        if value != field.default or type(value) is not type(field.default):
            given.append((name, value))
    out = Implementation(tuple(given))
    if given:
        from .lang import Scope, condition, evaluate

        scope = Scope(out.values())
        for name, (expr, rule) in defs.checks.items():
            if not condition(evaluate(expr, scope, LABEL), LABEL):
                raise SymcalcError(name, f"{rule} ({out[name]!r})")
    return out


def check_value(field: Field, value: Any) -> Any:
    """``value`` as field ``field`` takes it, or a SymcalcError naming the field."""
    if field.kind == "bool":
        if not isinstance(value, bool):
            raise SymcalcError(field.name, f"must be true or false (got {value!r:.60})")
    elif field.kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SymcalcError(field.name, f"must be a whole number, zero or more "
                                           f"(got {value!r:.60})")
        from .limits import check_limit

        check_limit(field.name, value)
    elif field.kind == "text":
        if not isinstance(value, str) or len(value) > 200:
            raise SymcalcError(field.name, f"must be text of at most 200 characters "
                                           f"(got {value!r:.60})")
    elif value not in field.choices:
        raise SymcalcError(field.name, f"must be one of {', '.join(map(repr, field.choices))} "
                                       f"(got {value!r:.60})")
    return value


def from_config(values: Mapping[str, Any]) -> dict[str, Any]:
    """Field values a family read from a config.json, each as the field takes it: a choice
    outside its list becomes the field's ``config_other`` where it has one (an activation
    symcalc does not know reads as one whose backward keeps its input)."""
    defs = definitions().fields
    out = dict(values)
    for name, value in values.items():
        field = defs.get(name)
        if field is not None and field.kind == "choice" and value not in field.choices \
                and field.config_other is not None:
            out[name] = field.config_other
    return out


def coerce_text(name: str, text: str) -> Any:
    """The text of ``--set name=value`` as implementation field ``name`` takes it."""
    field = definitions().fields[name]
    if field.kind == "bool":
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        raise SymcalcError(f"--set {name}", f"must be true or false (got {text!r:.60})")
    if field.kind == "count":
        from .limits import parse_int

        return parse_int(f"--set {name}", text, zero=True)
    return text


def activation_width(dtype: str) -> int:
    """Bytes of one activation element: 4 when the model runs in float32, else 2 (fp16, bf16,
    and the 16-bit compute of a quantized checkpoint)."""
    return 4 if str(dtype).strip().lower() in ("fp32", "float32") else 2


def facts(spec, dtype: str, batch: int = 2) -> dict[str, int]:
    """The implementation facts of a spec at activation dtype ``dtype`` and ``batch``
    sequences, each a small whole number (implementation.toml's [facts])."""
    return dict(_facts(spec, activation_width(dtype), batch))


@lru_cache(maxsize=256)
def _facts(spec, width: int, batch: int) -> tuple[tuple[str, int], ...]:
    from ..records import fields as spec_fields

    from .lang import Scope, value_of

    defs = definitions()
    data: dict[str, Any] = {f.name: getattr(spec, f.name) for f in spec_fields(spec)
                            if f.name != "implementation"}
    data.update(spec.implementation.values())
    data.update(width=width, batch=batch)
    scope = Scope(data)
    for name, expr in defs.lets:
        data[name] = value_of(expr.tree, expr.text, scope, f"{LABEL}: let.{name}")
    out = []
    for name, (_, expr) in defs.facts.items():
        value = value_of(expr.tree, expr.text, scope, f"{LABEL}: facts.{name}")
        out.append((name, int(value)))
    return tuple(out)

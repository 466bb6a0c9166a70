"""Ordered rules of a data file, compiled to JSON and run: ``symcalc/algebra/spec.toml``'s
(make_spec's refusals, the sizes that follow from others, the structural switches, the size
values). No sympy here: the quick path runs them.

A rules file is compiled once into plain JSON (:func:`compile_rules`): every expression of it
a ``{"text", "tree"}`` of :mod:`symcalc.algebra.lang`, every rule text a list of parts (text,
or an expression whose value is written in). :func:`run` walks the steps over a dict of values;
the calculator page runs the same JSON with the same steps (``page/core.js``, ``runRules``).
"""
from __future__ import annotations

import re
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any

from ..errors import SymcalcError
from .lang import Scope, _eval, condition, parse_expression, value_of

_HOLE = r"\{([^{}]*)\}"  # compiled when a rules file is (not on a report)


def _expr(text: Any, label: str, key: str) -> dict[str, Any]:
    e = parse_expression(text, label, key)
    return {"text": e.text, "tree": e.tree}


def compile_template(text: Any, label: str, key: str) -> list[Any]:
    """``"must divide n_h ({n_h} % {n_kv} != 0)"`` -> text parts and expressions."""
    if not isinstance(text, str):
        raise SymcalcError(label, f"{key}: must be text (got {text!r})")
    parts: list[Any] = []
    last = 0
    for m in re.finditer(_HOLE, text):
        if m.start() > last:
            parts.append(text[last:m.start()])
        parts.append(_expr(m.group(1), label, key))
        last = m.end()
    if last < len(text):
        parts.append(text[last:])
    return parts


def compile_rules(raw: dict[str, Any], label: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """The JSON form of a rules file's tables (``[[rules]]``, ``[switches]``, ``[values]``);
    ``fields`` are the names a rule may fill or refuse (a ``let`` may not reuse one)."""
    steps: list[dict[str, Any]] = []
    lets: set[str] = set()
    for i, body in enumerate(raw.get("rules", [])):
        key = f"rules[{i}]"
        kinds = [k for k in ("let", "fill", "refuse") if k in body]
        if len(kinds) != 1:
            raise SymcalcError(label, f"{key}: needs exactly one of let, fill, refuse")
        kind = kinds[0]
        if kind == "let":
            name = body["let"]
            if name in fields:
                raise SymcalcError(label, f"{key}: let {name!r} reuses a field name")
            lets.add(name)
            steps.append({"let": name, "value": _expr(body["value"], label, key)})
        elif kind == "fill":
            if body["fill"] not in fields:
                raise SymcalcError(label, f"{key}: fill {body['fill']!r} is not a field")
            when = body.get("when")
            steps.append({"fill": body["fill"],
                          "when": _expr(when, label, key) if when is not None else None,
                          "value": _expr(body["value"], label, key)})
        else:
            each = body.get("each")
            if (each is None) == ("field" not in body):
                raise SymcalcError(label, f"{key}: a refusal names one field or `each`")
            for name in each or []:
                if name not in fields:
                    raise SymcalcError(label, f"{key}: {name!r} is not a field")
            steps.append({"refuse": _expr(body["refuse"], label, key),
                          "each": list(each) if each is not None else None,
                          "field": (compile_template(body["field"], label, key)
                                    if each is None else None),
                          "rule": compile_template(body["rule"], label, key)})
    switches = [[name, _expr(text, label, f"switches.{name}")]
                for name, text in raw.get("switches", {}).items()]
    values = {name: _expr(text, label, f"values.{name}")
              for name, text in raw.get("values", {}).items()}
    return {"steps": steps, "switches": switches, "values": values}


def show(value: Any) -> str:
    """A value written into a rule text (the page writes it the same way)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def fill_template(parts: list[Any], scope: Scope, label: str) -> str:
    return "".join(p if isinstance(p, str) else show(_eval(p["tree"], scope, label, p["text"])[0])
                   for p in parts)


def test(e: dict[str, Any], scope: Scope, label: str) -> bool:
    v = value_of(e["tree"], e["text"], scope, label)
    if v is None or v is True or v is False:
        return bool(v)
    return condition(_eval(e["tree"], scope, label, e["text"]), label)  # words the error


def run(steps: list[dict[str, Any]], values: dict[str, Any], defaults: dict[str, Any],
        label: str) -> None:
    """Run the steps over ``values`` (filled in place; the ``let`` names are removed after),
    raising :class:`SymcalcError` ``field: rule`` at the first refusal."""
    scope = Scope(values, defaults)
    lets = []
    for step in steps:
        if "let" in step:
            e = step["value"]
            values[step["let"]] = value_of(e["tree"], e["text"], scope, label)
            lets.append(step["let"])
        elif "fill" in step:
            if step["when"] is None or test(step["when"], scope, label):
                e = step["value"]
                values[step["fill"]] = value_of(e["tree"], e["text"], scope, label)
        elif step["each"] is not None:
            for name in step["each"]:
                values["this"] = values.get(name, defaults.get(name))
                try:
                    if test(step["refuse"], scope, label):
                        raise SymcalcError(name, fill_template(step["rule"], scope, label))
                finally:
                    del values["this"]
        elif test(step["refuse"], scope, label):
            raise SymcalcError(fill_template(step["field"], scope, label),
                               fill_template(step["rule"], scope, label))
    for name in lets:
        del values[name]


def evaluate_all(exprs, values: dict[str, Any], label: str) -> dict[str, Any]:
    """``{name: value}`` of ``(name, expression)`` pairs over ``values``."""
    scope = Scope(values)
    return {name: value_of(e["tree"], e["text"], scope, label) for name, e in exprs}

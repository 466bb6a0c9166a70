"""The conventions behind a report's figures, in words: ``conventions.toml`` compiled once
and its texts filled in for one model and one set of options. The calculator page runs the
same JSON with the same steps (page/core.js, conventionTexts). No sympy here."""
from __future__ import annotations

import os
from functools import lru_cache
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any

from ..errors import SymcalcError
from .lang import Scope, value_of
from .rules import fill_template, test

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conventions.toml")
LABEL = "symcalc/algebra/conventions.toml"


def _part(body: Any, key: str) -> dict[str, Any]:
    from .rules import _expr, compile_template

    if isinstance(body, str):
        return {"when": None, "text": compile_template(body, LABEL, key)}
    if not isinstance(body, dict):
        raise SymcalcError(LABEL, f"{key}: a part is a text or a table (got {body!r:.40})")
    when = _expr(body["when"], LABEL, key) if "when" in body else None
    if "items" in body:
        if set(body) - {"items", "join", "empty", "when"}:
            raise SymcalcError(LABEL, f"{key}: a list part has items, join, empty and when")
        return {"when": when, "join": str(body.get("join", "")),
                "empty": compile_template(body.get("empty", ""), LABEL, key),
                "items": [_part(item, f"{key}.items[{i}]")
                          for i, item in enumerate(body["items"])]}
    if set(body) - {"text", "when"}:
        raise SymcalcError(LABEL, f"{key}: a part has text and when")
    return {"when": when, "text": compile_template(body["text"], LABEL, key)}


def compile_conventions(raw: bytes) -> dict[str, Any]:
    """conventions.toml's bytes compiled: ``steps`` (its lets) and ``texts``, a list of
    ``[key, {"when", "parts"}]`` in the file's order. What the compiled store holds
    (``symcalc.inputs.compile_data``)."""
    from .. import compiled
    from .rules import _expr, compile_rules

    data = compiled.read_toml_bytes(raw, LABEL)
    steps = compile_rules({"rules": data.get("rules", [])}, LABEL, ())["steps"]
    if any("let" not in s for s in steps):
        raise SymcalcError(LABEL, "rules: only `let` steps name values for the texts")
    texts = []
    for key, body in data.get("texts", {}).items():
        if "." not in key or set(body) - {"when", "parts"}:
            raise SymcalcError(LABEL, f"texts.{key}: a text is named <block>.<figure> and "
                                      "has parts (and when)")
        when = _expr(body["when"], LABEL, f"texts.{key}") if "when" in body else None
        texts.append([key, {"when": when, "parts": [_part(p, f"texts.{key}.parts[{i}]")
                                                    for i, p in enumerate(body["parts"])]}])
    return {"steps": steps, "texts": texts}


@lru_cache(maxsize=None)
def load() -> dict[str, Any]:
    """conventions.toml compiled, read once per process (from the compiled store while the
    file is unchanged)."""
    from .. import compiled

    return compiled.load(compiled.ALGEBRA_STORE, "conventions", PATH, compile_conventions)


def _fill(part: dict[str, Any], scope, out: list[str]) -> None:
    if part["when"] is not None and not test(part["when"], scope, LABEL):
        return
    if "items" not in part:
        out.append(fill_template(part["text"], scope, LABEL))
        return
    items: list[str] = []
    for item in part["items"]:
        _fill(item, scope, items)
    out.append(part["join"].join(items) if items else fill_template(part["empty"], scope, LABEL))


def texts(values: dict[str, Any], block: str, only: tuple = ()) -> dict[str, str]:
    """``{figure: text}`` of every text of ``block`` (``flops``, ``memory``, ``per_rank``;
    ``only`` these figures when given) whose condition holds over ``values`` (a fresh dict:
    the lets are added to it)."""
    data = load()
    scope = Scope(values)
    for step in data["steps"]:
        e = step["value"]
        values[step["let"]] = value_of(e["tree"], e["text"], scope, LABEL)
    out: dict[str, str] = {}
    prefix = block + "."
    for key, body in data["texts"]:
        if not key.startswith(prefix) or (only and key[len(prefix):] not in only):
            continue
        if body["when"] is not None and not test(body["when"], scope, LABEL):
            continue
        parts: list[str] = []
        for part in body["parts"]:
            _fill(part, scope, parts)
        out[key[len(prefix):]] = "".join(parts)
    return out


def _option_values(opts) -> dict[str, Any]:
    """The names the texts read from the options alone: every option, the activation width
    and the activation model in words."""
    from .implementation import activation_width
    from .options import ACTIVATION_TEXT

    out = {f: getattr(opts, f) for f in opts.__match_args__}
    out.update(width=activation_width(opts.dtype),
               activation_text=ACTIVATION_TEXT.get(opts.activations))
    return out


def values(spec, opts) -> dict[str, Any]:
    """The names the texts read for one spec and set of options (see conventions.toml)."""
    from . import quantized
    from .spec import FIELD_NAMES

    out = {f: getattr(spec, f) for f in FIELD_NAMES if f != "implementation"}
    out.update(_option_values(opts))
    fmt = quantized.parse(opts.dtype)
    out.update(hybrid=spec.hybrid, plan_name=spec.implementation.get("tp_plan", ""),
               quant_name=fmt.name if fmt else None, quant_meaning=fmt.meaning if fmt else None,
               quant_bits=fmt.bits_per_weight() if fmt else None,
               quant_experts_only=fmt.experts_only if fmt else False)
    return out


def activations_text(opts) -> str:
    """The activation model used (default paper), its width and the choices applied, as the
    report words them (``memory.activations_bytes``; derivations say the same)."""
    return texts(_option_values(opts), "memory", ("activations_bytes",))["activations_bytes"]

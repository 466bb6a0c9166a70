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

import functools
from ..records import Record, default_factory
import os
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any

from ..errors import SymcalcError
from ..algebra.lang import (DOCS, FUNCTIONS, LITERALS, Expr, Scope, condition, evaluate,  # noqa: F401
                            parse_expression)
from ..algebra.spec import FIELD_NAMES

# a plain path: pathlib (with urllib and ipaddress) costs a config.json's report 3 ms
FAMILIES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "families")

TOP_KEYS = ("model_type", "description", "sources", "not_modelled", "bare_class", "classes",
            "aliases", "defaults", "fixed", "spec", "implementation", "roles", "checks",
            "wrapper", "tp_plan")
# [wrapper]: a multimodal config whose language model is a nested config (docs/families.md)
WRAPPER_KEYS = ("text_config", "text_model_type", "text_absent", "text_absent_nulls", "text_only",
                "vision_config", "vision", "projector", "vision_defaults", "vision_absent", "sizes",
                "audio_config", "audio", "audio_defaults", "text_flat")
ROLE_KEYS = ("fixed", "spec", "tp_plan")
# Spec fields a family file may set (name and source come from the config and its class).
SETTABLE = tuple(f for f in FIELD_NAMES if f not in ("name", "source", "implementation"))


# -- family files -------------------------------------------------------------------------------
class Check(Record):
    require: Expr
    rule: str


PlanRows = tuple[tuple[str, str, tuple[str, ...], bool, bool], ...]


class Role(Record):
    fixed: dict[str, Any]
    spec: dict[str, Expr]
    # the class's own tensor-parallel entries (transformers' ``_tp_plan`` of the class:
    # ``lm_head``), applied with the base model's plan
    tp_plan: PlanRows = ()


class Wrapper(Record):
    """A multimodal family's ``[wrapper]`` table: where its language model's config is, and
    what else the checkpoint holds (a vision tower and a projector of symcalc.algebra.vision)."""

    text_config: str  # the key holding the language model's config ("." : the top level)
    text_model_type: str  # its model_type when the nested config names none
    text_absent: dict[str, Any]  # the nested config transformers builds when the key is absent
    vision_config: str | None = None
    vision: str | None = None  # a tower of symcalc.algebra.vision.TOWERS
    projector: str | None = None  # a projector of symcalc.algebra.vision.PROJECTORS
    vision_defaults: dict[str, Any] = default_factory(dict)  # the vision config class's
    vision_absent: dict[str, Any] = default_factory(dict)  # when vision_config is absent
    sizes: dict[str, Expr] = default_factory(dict)  # vision symbol -> expression
    # classes that build the language model alone from the wrapper config (transformers'
    # causal-LM mapping: Qwen3_5ForCausalLM on a qwen3_5 config): no part outside it
    text_only: tuple[str, ...] = ()
    audio_config: str | None = None  # the key holding an audio encoder's config
    audio: str | None = None  # a tower of symcalc.algebra.vision.AUDIO_TOWERS
    audio_defaults: dict[str, Any] = default_factory(dict)  # the audio config class's
    # the language model's keys at the top level when text_config is missing or null (the
    # config class moves them into its text_config, with the wrapper's tie flag: Dots3Note)
    text_flat: bool = False

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


class Family(Record):
    model_type: str
    description: str
    sources: tuple[str, ...]
    bare_class: str
    classes: dict[str, str]  # class name -> role
    defaults: dict[str, Any]
    fixed: dict[str, Any]
    spec: dict[str, Expr]
    roles: dict[str, Role]
    checks: dict[str, Check] = default_factory(dict)
    label: str = ""  # "families/<model_type>.toml", for error messages
    wrapper: Wrapper | None = None  # a multimodal config around a nested language model
    # what transformers builds or runs that the counts leave out or refuse (docs/families.md)
    not_modelled: tuple[str, ...] = ()
    # implementation field -> literal value or Expr (symcalc/algebra/implementation.toml)
    implementation: dict[str, Any] = default_factory(dict)
    # the config class's base_model_tp_plan: (module, style, parts, transposed, per_expert)
    tp_plan: tuple[tuple[str, str, tuple[str, ...], bool, bool], ...] = ()
    # another spelling of a config key (transformers' attribute_map) -> the key read here
    aliases: dict[str, str] = default_factory(dict)

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
        roles[role] = Role(r_fixed, r_spec, _tp_plan(body, label, f"{prefix}."))
    for cls, role in classes.items():
        if role not in roles:
            raise SymcalcError(label, f"classes.{cls}: role {role!r} has no [roles.{role}] "
                                      "table (an empty one is fine)")
    unused = [r for r in roles if r not in classes.values()]
    if unused:
        raise SymcalcError(label, f"roles.{unused[0]}: no class in [classes] has this role")

    implementation = _implementation(_table(raw, "implementation", label), label)
    checks: dict[str, Check] = {}
    for key, body in _table(raw, "checks", label).items():
        prefix = f"checks.{key}"
        if (not isinstance(body, dict) or set(body) != {"require", "rule"}
                or not isinstance(body["rule"], str)):
            raise SymcalcError(label, f"{prefix}: must be {{ require = \"<expression>\", "
                                      "rule = \"<text>\" }")
        checks[key] = Check(parse_expression(body["require"], label, f"{prefix}.require"),
                            body["rule"])
    _reads_no_alias(aliases, [spec, implementation, *(r.spec for r in roles.values())],
                    [c.require for c in checks.values()], label)
    return Family(model_type, description, tuple(sources), bare, dict(classes),
                  dict(defaults), fixed, spec, roles, checks, label, wrapper,
                  tuple(" ".join(s.split()) for s in not_modelled), implementation,
                  _tp_plan(raw, label), aliases)


def _reads_no_alias(aliases: dict[str, str], tables: list[dict[str, Any]],
                    more: list[Expr], label: str) -> None:
    """An expression reads the key an alias names, never the alias (the config is rewritten
    to that key before it is read)."""
    exprs = [e for t in tables for e in t.values() if isinstance(e, Expr)] + more
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


def _implementation(table: dict, label: str) -> dict[str, Any]:
    """The ``[implementation]`` table: each key an implementation field; a TOML boolean or
    integer is its value, a string an expression over the config's keys."""
    from ..algebra.implementation import field_names

    known = field_names()
    out: dict[str, Any] = {}
    for name, value in table.items():
        key = f"implementation.{name}"
        if name not in known:
            raise SymcalcError(label, f"{key}: is not an implementation field (known: "
                                      f"{', '.join(known)}; symcalc/algebra/implementation.toml)")
        if isinstance(value, str):
            out[name] = parse_expression(value, label, key)
        elif isinstance(value, (bool, int)):
            out[name] = value
        else:
            raise SymcalcError(label, f"{key}: must be an expression in a string, a boolean or "
                                      f"an integer (got {value!r})")
    return out


PLAN_KEYS = ("style", "parts", "transposed", "per_expert")


def _tp_plan(raw: dict, label: str, prefix: str = "") -> PlanRows:
    """``[tp_plan]`` (and a role's ``[roles.<role>.tp_plan]``): transformers module pattern ->
    { style, parts, transposed, per_expert } (see docs/families.md): the style one of
    :data:`symcalc.algebra.layout.TP_STYLES`, parts a list of breakdown paths it holds."""
    from ..algebra.layout import TP_STYLES

    out = []
    for module, body in _table(raw, "tp_plan", label, prefix=prefix).items():
        key = f"{prefix}tp_plan.{module}"
        if not isinstance(body, dict) or "style" not in body or "parts" not in body:
            raise SymcalcError(label, f"{key}: must be {{ style = \"<style>\", parts = "
                                      "[\"<path>\", ...] }")
        extra = [k for k in body if k not in PLAN_KEYS]
        if extra:
            raise SymcalcError(label, f"{key}.{extra[0]}: is not a plan key "
                                      f"(known: {', '.join(PLAN_KEYS)})")
        style, parts = body["style"], body["parts"]
        transposed, per_expert = body.get("transposed", False), body.get("per_expert", False)
        if style not in TP_STYLES:
            raise SymcalcError(label, f"{key}.style: must be one of {', '.join(TP_STYLES)} "
                                      f"(got {style!r})")
        if not isinstance(parts, list) or not all(isinstance(x, str) and x for x in parts):
            raise SymcalcError(label, f"{key}.parts: must be a list of breakdown paths")
        for name, flag in (("transposed", transposed), ("per_expert", per_expert)):
            if not isinstance(flag, bool):
                raise SymcalcError(label, f"{key}.{name}: must be true or false")
        out.append((module, style, tuple(parts), transposed, per_expert))
    return tuple(out)


def tp_plan(name: str) -> PlanRows:
    """The plan a spec's ``tp_plan`` implementation field names, ``MODEL_TYPE`` or
    ``MODEL_TYPE:ROLE``: the ``[tp_plan]`` of the model type's family file (the config
    class's ``base_model_tp_plan``) and, with a role, that role's ``[roles.<role>.tp_plan]``
    (the class's own entries, as transformers' ``tp_plan="auto"`` applies both). Empty for a
    model type without a family file."""
    model_type, _, role = name.partition(":")
    if model_type not in family_names():
        return ()
    family = load_family(model_type)
    extra = family.roles[role].tp_plan if role in family.roles else ()
    return family.tp_plan + extra


def tp_plan_name(family: Family, role: str | None) -> str:
    """The ``tp_plan`` value of a spec read from ``family`` for a class of ``role``: the
    model type, with the role when the role has entries of its own; "" when the family has
    no plan at all."""
    own = role is not None and role in family.roles and bool(family.roles[role].tp_plan)
    if not family.tp_plan and not own:
        return ""
    return f"{family.model_type}:{role}" if own else family.model_type


def _wrapper(raw: dict, label: str) -> Wrapper:
    """The ``[wrapper]`` table: text_config and text_model_type required, the rest optional."""
    body = _table(raw, "wrapper", label)
    extra = [k for k in body if k not in WRAPPER_KEYS]
    if extra:
        raise SymcalcError(label, f"wrapper.{extra[0]}: is not a wrapper key "
                                  f"(known: {', '.join(WRAPPER_KEYS)})")
    text: dict[str, Any] = {}
    for key in ("text_config", "text_model_type", "vision_config", "vision", "projector",
                "audio_config", "audio"):
        value = body.get(key)
        if value is None and key in ("text_config", "text_model_type"):
            raise SymcalcError(label, f"wrapper.{key}: is required, as text")
        if value is not None and (not isinstance(value, str) or not value):
            raise SymcalcError(label, f"wrapper.{key}: must be text (got {value!r})")
        text[key] = value
    if text["text_config"] == "." and not any(k in raw for k in ("spec", "fixed")):
        raise SymcalcError(label, "wrapper.text_config: '.' (the language model's keys at the "
                                  "top level) needs the family's own [spec] or [fixed]")
    if text["vision"] and not text["vision_config"]:  # (Fuyu's projector reads top-level keys)
        raise SymcalcError(label, "wrapper.vision_config: is required with a vision tower")
    if text["audio"] and not text["audio_config"]:
        raise SymcalcError(label, "wrapper.audio_config: is required with an audio tower")
    sizes = {name: parse_expression(value, label, f"wrapper.sizes.{name}")
             for name, value in _table(body, "sizes", label, prefix="wrapper.").items()}
    absent = dict(_table(body, "text_absent", label, prefix="wrapper."))
    nulls = body.get("text_absent_nulls", [])  # TOML has no null: these keys are null
    if not isinstance(nulls, list) or not all(isinstance(k, str) for k in nulls):
        raise SymcalcError(label, f"wrapper.text_absent_nulls: must be a list of keys "
                                  f"(got {nulls!r})")
    absent.update({k: None for k in nulls})
    flat = body.get("text_flat", False)
    if not isinstance(flat, bool):
        raise SymcalcError(label, f"wrapper.text_flat: must be true or false (got {flat!r})")
    text_only = body.get("text_only", [])
    if not isinstance(text_only, list) or not all(isinstance(c, str) for c in text_only):
        raise SymcalcError(label, f"wrapper.text_only: must be a list of class names "
                                  f"(got {text_only!r})")
    return Wrapper(text["text_config"], text["text_model_type"], absent,
                   text["vision_config"], text["vision"], text["projector"],
                   dict(_table(body, "vision_defaults", label, prefix="wrapper.")),
                   dict(_table(body, "vision_absent", label, prefix="wrapper.")), sizes,
                   tuple(text_only), text["audio_config"], text["audio"],
                   dict(_table(body, "audio_defaults", label, prefix="wrapper.")), flat)


@functools.lru_cache(maxsize=None)
def load_families(folder: str | None = None) -> dict[str, Family]:
    """Every ``<model_type>.toml`` of ``folder`` (default: the packaged families), parsed and
    checked once per process."""
    base = os.fspath(folder if folder is not None else FAMILIES_DIR)
    return {name: load_family(name, folder) for name in family_names(base)}


def family_names(folder: str | None = None) -> tuple[str, ...]:
    """The model_types of ``folder``'s family files, without parsing them (the packaged
    folder is listed once per process: every config read and plan lookup asks)."""
    if folder is None:
        return _packaged_names(os.fspath(FAMILIES_DIR))
    return _listed(os.fspath(folder))


def _listed(base: str) -> tuple[str, ...]:
    return tuple(sorted(f[:-5] for f in os.listdir(base)
                        if f.endswith(".toml") and not f.startswith(".")))


@functools.lru_cache(maxsize=None)
def _packaged_names(base: str) -> tuple[str, ...]:
    return _listed(base)


@functools.lru_cache(maxsize=None)
def load_family(model_type: str, folder: str | None = None) -> Family:
    """One family file, parsed and checked (a config.json needs only its own family); a
    packaged family comes from the compiled store while its file is unchanged."""
    base = os.fspath(folder if folder is not None else FAMILIES_DIR)
    path = os.path.join(base, f"{model_type}.toml")
    label = f"{os.path.basename(os.path.normpath(base))}/{model_type}.toml"
    if folder is None:
        from .. import compiled
        from .files import decode

        def build(raw: bytes) -> dict[str, Any]:
            return family_to_json(parse_family(decode(raw, label), label, model_type))

        return family_from_json(compiled.load(compiled.INPUTS_STORE, f"family:{model_type}",
                                              path, build))
    from .files import read_text

    text = read_text(path, label)
    return parse_family(text, label, model_type)


# -- a parsed family as JSON (the compiled store) and back -------------------------------------
def _enc(value: Any) -> Any:
    if isinstance(value, Expr):
        return {"$expr": [value.text, value.tree, sorted(value.names)]}
    if isinstance(value, dict):
        return {k: _enc(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_enc(v) for v in value]
    return value


def _dec(value: Any) -> Any:
    if isinstance(value, dict):
        if "$expr" in value:
            text, tree, names = value["$expr"]
            return Expr(text, tree, frozenset(names))
        return {k: _dec(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dec(v) for v in value]
    return value


def family_to_json(f: Family) -> dict[str, Any]:
    out = {k: _enc(getattr(f, k)) for k in Family.__match_args__}
    out["roles"] = {r: {"fixed": _enc(role.fixed), "spec": _enc(role.spec),
                        "tp_plan": _enc(role.tp_plan)}
                    for r, role in f.roles.items()}
    out["checks"] = {k: {"require": _enc(c.require), "rule": c.rule} for k, c in f.checks.items()}
    if f.wrapper is not None:
        out["wrapper"] = {k: _enc(getattr(f.wrapper, k)) for k in Wrapper.__match_args__}
    return out


def _plan_rows(rows: list) -> PlanRows:
    return tuple((m, st, tuple(parts), tr, pe) for m, st, parts, tr, pe in rows)


def family_from_json(d: dict[str, Any]) -> Family:
    v = {k: _dec(x) for k, x in d.items()}
    v["sources"], v["not_modelled"] = tuple(v["sources"]), tuple(v["not_modelled"])
    v["roles"] = {r: Role(body["fixed"], body["spec"], _plan_rows(body["tp_plan"]))
                  for r, body in v["roles"].items()}
    v["checks"] = {k: Check(c["require"], c["rule"]) for k, c in v["checks"].items()}
    v["tp_plan"] = _plan_rows(v["tp_plan"])
    if v["wrapper"] is not None:
        w = dict(v["wrapper"])
        w["text_only"] = tuple(w["text_only"])
        v["wrapper"] = Wrapper(**w)
    return Family(**v)


def build_implementation(family: Family, data: dict[str, Any], role: str | None = None
                         ) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
    """The implementation fields of one config.json (the family's ``[implementation]``
    entries, else each field's generic ``config`` reading, else its default) and the config
    keys each was read from."""
    from ..algebra import implementation as impl

    data, spelled = canonical_config(family.aliases, data)
    scope = Scope(data, family.defaults, spelled)
    values: dict[str, Any] = {}
    keys: dict[str, tuple[str, ...]] = {}
    for name, fld in impl.definitions().fields.items():
        entry = family.implementation.get(name, fld.config)
        if entry is None:
            continue
        if isinstance(entry, Expr):
            values[name], keys[name] = evaluate(entry, scope, f"{family.label}: implementation.{name}")
        else:
            values[name] = entry
    plan = tp_plan_name(family, role)
    if plan:  # the family's own base_model_tp_plan (and its class's entries)
        values.setdefault("tp_plan", plan)
    return impl.from_config(values), keys


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

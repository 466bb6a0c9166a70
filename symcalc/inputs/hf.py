"""Hugging Face ``config.json`` -> :class:`Spec`, without importing transformers.

What a ``model_type`` means is data: ``symcalc/inputs/families/<model_type>.toml`` (see
docs/families.md), read by :mod:`symcalc.inputs.family_data` the first time a config.json is
read. Keys missing from a config take the defaults of transformers' config class (the
family file's ``[defaults]``). The model class is ``architectures[0]``, or the family's
``bare_class`` when none is named.

A multimodal family (a file with a ``[wrapper]`` table) nests its language model under a key
such as ``text_config``: :func:`spec_from_config` returns that language model's spec and
:func:`read_model` also returns what the checkpoint holds besides it (:class:`Outside`: the
vision tower and projector, with their parameter counts where the config gives the sizes).
"""
from __future__ import annotations

from ..errors import SymcalcError
from ..records import Record, default_factory

TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms

if TYPE_CHECKING:
    from typing import Any
    from pathlib import Path

    from .family_data import Family, Wrapper
    from ..algebra.spec import Spec

DOCS = "docs/families.md"


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a config.json (or the config.json inside a folder) as a JSON object."""
    import os  # not pathlib: it costs a report 3 ms of imports

    from .files import label_of, parse_json, read_text

    p = os.fspath(path)
    try:
        if os.path.isdir(p):
            p = os.path.join(p, "config.json")
    except (OSError, ValueError):
        pass  # read_text says why
    name = os.path.basename(os.path.normpath(p))
    data = parse_json(read_text(p, label_of(p)), name)
    if not isinstance(data, dict):
        raise SymcalcError(name, f"must be a JSON object, not {type(data).__name__}")
    return data


def families(folder: str | None = None) -> dict[str, "Family"]:
    """Every family symcalc knows, by model_type (parsed once; ``folder`` is for tests)."""
    from .family_data import load_families

    return load_families(folder)


class Outside(Record):
    """A part of a multimodal checkpoint outside its language model."""

    role: str  # "vision_tower", "audio_tower" or "projector"
    kind: str  # a tower or projector of symcalc.algebra.vision
    description: str
    source: str  # a key of symcalc.derivations.sources
    params: int | None  # None: the config does not give the sizes (``why`` says which)
    breakdown: dict[str, int] = default_factory(dict)
    why: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"part": self.role, "kind": self.kind,
                               "description": self.description, "source": self.source,
                               "params": self.params}
        if self.params is None:
            out["why"] = self.why
        return out


def spec_from_config(data: dict[str, Any], name: str = "config.json",
                     folder: str | None = None) -> "Spec":
    """The :class:`Spec` of one parsed config.json (``folder``: another families folder); for
    a multimodal config, the spec of its language model."""
    return read_model(data, name, folder, outside=False)[0]


def read_model(data: dict[str, Any], name: str = "config.json", folder: str | None = None,
               outside: bool = True) -> tuple["Spec", tuple[Outside, ...]]:
    """The language model's :class:`Spec` and, for a multimodal config, the parts outside it
    (empty for a text-only config; not computed when ``outside`` is false)."""
    from .family_data import (build_fields, build_implementation, canonical_config,
                              family_names, load_family)

    known = family_names(folder)
    model_type = data.get("model_type")
    if not isinstance(model_type, str) or model_type not in known:
        _refuse_listed(model_type, known)
        raise SymcalcError("model_type", f"must be one of {', '.join(known)} "
                                         f"(got {model_type!r}); see {DOCS}")
    family = load_family(model_type, folder)
    archs = data.get("architectures") or [family.bare_class]
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs):
        raise SymcalcError("architectures", "must be a list of class names")
    cls = archs[0]
    if cls not in family.classes:
        raise SymcalcError("architectures[0]", f"must be a {model_type} class symcalc knows "
                                               f"({', '.join(family.classes)}); got {cls!r}")
    role = family.classes[cls]
    w = family.wrapper
    if w is None or w.text_config == ".":
        fields, keys = build_fields(family, role, data)
        fields.setdefault("name", name)
        fields["source"] = f"Hugging Face config ({model_type}, {cls})"
        fields["implementation"], impl_keys = build_implementation(family, data, role)
        spec = _make(fields, {**keys, **impl_keys})
        if w is None or not outside or cls in w.text_only:
            return spec, ()
        # the language model's keys at the top level (GIT), the towers nested beside them
        return spec, _outside(family, _towers_view(w, dict(canonical_config(family.aliases,
                                                                            data)[0]), data))
    return _read_wrapped(family, cls, role, data, name, folder, outside)


def _towers_view(w: "Wrapper", view: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """``view`` with the towers' nested configs, their classes' defaults filled in."""
    if w.vision_config:
        vision = w.nested(data, w.vision_config, w.vision_absent)
        view[w.vision_config] = {**w.vision_defaults, **vision}
    if w.audio_config:  # a missing audio config is its class's defaults
        view[w.audio_config] = {**w.audio_defaults, **w.nested(data, w.audio_config, {})}
    return view


def _refuse_listed(model_type: Any, known: tuple[str, ...]) -> None:
    """A transformers model type symcalc has no family file for but knows the reason of
    (symcalc/inputs/model_types.toml): refused in one line naming the part it cannot express."""
    if not isinstance(model_type, str):
        return
    from .refusals import refusal, refuse

    part = refusal(model_type, known)
    if part is not None:
        raise refuse(model_type, part)


def _make(fields: dict[str, Any], keys: dict[str, tuple[str, ...]]) -> "Spec":
    from ..algebra.spec import make_spec

    try:
        return make_spec(**fields)
    except SymcalcError as err:  # name the config.json key beside the symcalc field
        read = keys.get(err.field)
        if not read:
            raise
        raise SymcalcError(f"{', '.join(read)} ({err.field})", err.rule) from None


def _read_wrapped(family: "Family", cls: str, role: str, data: dict[str, Any], name: str,
                  folder: str | None, outside: bool) -> tuple["Spec", tuple[Outside, ...]]:
    """A multimodal config: the nested language model read by its own family file under the
    wrapper class's role, the wrapper's role entries on top, then the parts outside it."""
    from .family_data import (build_fields, build_implementation, canonical_config,
                              family_names, load_family)

    w = family.wrapper
    assert w is not None
    key = w.text_config
    if w.text_flat and data.get(key) is None:
        # the language model's keys at the top level, as the config class moves them into
        # its text_config (Dots3NoteConfig), with the wrapper's tie flag
        text = {k: v for k, v in data.items() if k not in ("model_type", "architectures", key)}
        text.setdefault("tie_word_embeddings", family.defaults.get("tie_word_embeddings"))
    else:
        text = w.nested(data, key, w.text_absent)
    text_type = text.get("model_type") or w.text_model_type
    known = family_names(folder)
    if not isinstance(text_type, str) or text_type not in known:
        _refuse_listed(text_type, known)
        raise SymcalcError(f"{key}.model_type", f"must be one of {', '.join(known)} "
                                                f"(got {text_type!r}); see {DOCS}")
    text_family = load_family(text_type, folder)
    if text_family.wrapper is not None or role not in text_family.roles:
        raise SymcalcError(f"{key}.model_type", f"{text_type!r} cannot be the language model "
                                                f"of {cls} (no {role!r} role in "
                                                f"{text_family.label})")
    fields, read = build_fields(text_family, role, text)
    fields["implementation"], impl_read = build_implementation(text_family, text, role)
    keys = {f: tuple(f"{key}.{k}" for k in ks) for f, ks in {**read, **impl_read}.items()}
    text = canonical_config(text_family.aliases, text)[0]
    # the wrapper's own entries see the nested configs with their defaults filled in
    view = dict(canonical_config(family.aliases, data)[0])
    view[key] = {**text_family.defaults, **text}
    _towers_view(w, view, data)
    if cls not in w.text_only:  # a text-only class is its language model alone
        more, more_keys = build_fields(family, role, view)
        fields.update(more)
        keys.update(more_keys)
    fields.setdefault("name", name)
    fields["source"] = f"Hugging Face config ({family.model_type}, {cls}; language model " \
                       f"{text_type} under {key})"
    spec = _make(fields, keys)
    return spec, (_outside(family, view) if outside and cls not in w.text_only else ())


def _vision_size(sym: str, value: int, read) -> int:
    """A vision size as the rules of every other size have it: a switch 0 or 1, a count of
    ``vision.COUNTS`` 0 or more, any other size a positive integer (a tower of width 0 is no
    tower) at most SIZE_LIMIT."""
    from ..algebra import vision as vis
    from ..algebra.spec import check_limit

    field = ", ".join(read) or sym
    if sym in vis.SWITCHES:
        if value not in (0, 1):
            raise SymcalcError(field, f"must be 0 or 1 (got {value:,})" if abs(value) < 10**30
                               else "must be 0 or 1")
        return value
    if sym in vis.COUNTS and value == 0:  # a count that may be none (the page allows 0 too)
        return value
    if value <= 0:
        raise SymcalcError(field, "must be a positive integer (got "
                                  f"{value:,})" if value > -10**30 else "must be a positive integer")
    check_limit(field, value)
    return value


def _outside(family: "Family", view: dict[str, Any]) -> tuple[Outside, ...]:
    """The vision tower and projector of a wrapper family, counted where the sizes allow."""
    from .family_data import Scope, evaluate
    from ..algebra import vision as vis

    w = family.wrapper
    assert w is not None
    sizes: dict[str, int] = {}
    problems: dict[str, str] = {}
    scope = Scope(view, family.defaults)
    for sym, expr in w.sizes.items():
        try:
            value, read = evaluate(expr, scope, f"{family.label}: wrapper.sizes.{sym}")
        except SymcalcError as err:
            problems[sym] = str(err)
            continue
        if isinstance(value, bool) and sym in vis.SWITCHES:
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            problems[sym] = f"{', '.join(read) or sym}: must be a whole number (got {value!r:.60})"
            continue
        sizes[sym] = _vision_size(sym, value, read)
    out = []
    for role, kind in (("vision_tower", w.vision), ("audio_tower", w.audio),
                       ("projector", w.projector)):
        if not kind:
            continue
        part = vis.part(role, kind)
        missing = sorted(s for s in part.symbols if s not in sizes)
        if missing:
            why = "; ".join(problems.get(s, f"{s}: not given by the family file") for s in missing)
            out.append(Outside(role, kind, part.description, part.source, None, {}, why))
            continue
        nums = vis.numbers(part, sizes)
        out.append(Outside(role, kind, part.description, part.source, sum(nums.values()),
                           {k: v for k, v in nums.items() if v}))
    return tuple(out)


def __getattr__(name: str) -> Any:
    """Read-only views of the family files in the shape of the former tables:
    ``DEFAULTS`` (model_type -> defaults), ``CLASSES`` (class -> (model_type, role)) and
    ``BARE`` (model_type -> bare class)."""
    from types import MappingProxyType

    if name == "DEFAULTS":
        return MappingProxyType({mt: MappingProxyType(f.defaults) for mt, f in families().items()})
    if name == "CLASSES":
        return MappingProxyType({cls: (mt, role) for mt, f in families().items()
                                 for cls, role in f.classes.items()})
    if name == "BARE":
        return MappingProxyType({mt: f.bare_class for mt, f in families().items()})
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

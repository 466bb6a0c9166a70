"""Hugging Face ``config.json`` -> :class:`Spec`, without importing transformers.

What a ``model_type`` means is data: ``symcalc/inputs/families/<model_type>.toml`` (see
docs/families.md), read by :mod:`symcalc.inputs.family_data` the first time a config.json is
read. Keys missing from a config take the defaults of transformers' config class (the
family file's ``[defaults]``). The model class is ``architectures[0]``, or the family's
``bare_class`` when none is named.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import SymcalcError

if TYPE_CHECKING:
    from pathlib import Path

    from .family_data import Family
    from ..algebra.spec import Spec

DOCS = "docs/families.md"


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a config.json (or the config.json inside a folder) as a JSON object."""
    from pathlib import Path  # here: pathlib costs a preset's quick report 3 ms of imports

    from .files import label_of, parse_json, read_text

    p = Path(path)
    try:
        if p.is_dir():
            p = p / "config.json"
    except OSError:
        pass  # read_text says why
    data = parse_json(read_text(p, label_of(p)), p.name)
    if not isinstance(data, dict):
        raise SymcalcError(p.name, f"must be a JSON object, not {type(data).__name__}")
    return data


def families(folder: str | None = None) -> dict[str, "Family"]:
    """Every family symcalc knows, by model_type (parsed once; ``folder`` is for tests)."""
    from .family_data import load_families

    return load_families(folder)


def spec_from_config(data: dict[str, Any], name: str = "config.json",
                     folder: str | None = None) -> "Spec":
    """The :class:`Spec` of one parsed config.json (``folder``: another families folder)."""
    from .family_data import build_fields, family_names, load_family
    from ..algebra.spec import make_spec

    known = family_names(folder)
    model_type = data.get("model_type")
    if not isinstance(model_type, str) or model_type not in known:
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
    fields, keys = build_fields(family, family.classes[cls], data)
    fields.setdefault("name", name)
    fields["source"] = f"Hugging Face config ({model_type}, {cls})"
    try:
        return make_spec(**fields)
    except SymcalcError as err:  # name the config.json key beside the symcalc field
        read = keys.get(err.field)
        if not read:
            raise
        raise SymcalcError(f"{', '.join(read)} ({err.field})", err.rule) from None


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

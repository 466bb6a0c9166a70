"""MODEL arguments -> :class:`Spec`: a preset name, a Hugging Face config.json (or a folder
holding one), a Hugging Face repository ``owner/name`` in the local hub cache, or a symcalc
spec file (TOML), then ``--set key=value`` overrides."""
from __future__ import annotations

from typing import Any, Iterable

from . import presets
from .errors import SymcalcError
from .hf import load_config, spec_from_config
from .spec import Spec, coerce_text, make_spec, with_overrides

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


def load_spec_file(path: Path) -> Spec:
    """A symcalc spec file: TOML whose keys are :class:`Spec` fields (``name`` defaults to
    the file name). A ``[spec]`` table is read too, so preset files are spec files."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise SymcalcError(str(path), f"cannot be read ({err.strerror or err})") from None
    except tomllib.TOMLDecodeError as err:
        raise SymcalcError(path.name, f"is not valid TOML ({err})") from None
    fields = dict(data.get("spec", data))
    fields.pop("spec", None)
    for meta in ("description", "expected_total", "expected_active", "reference", "seed"):
        fields.pop(meta, None)
    fields.setdefault("name", data.get("name", path.stem))
    if "source" in data and "source" not in fields:
        fields["source"] = data["source"]
    return make_spec(**fields)


def parse_sets(items: Iterable[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or ():
        if "=" not in item:
            raise SymcalcError(f"--set {item}", "must have the form key=value")
        key, _, text = item.partition("=")
        key = key.strip()
        out[key] = coerce_text(key, text.strip())
    return out


def resolve(model: str, sets: Iterable[str] = ()) -> Spec:
    """The spec that MODEL names, with the ``--set`` overrides applied."""
    if presets.exists(model):
        return _with_sets(presets.load(model).spec, sets)
    from pathlib import Path  # not for presets: pathlib costs their quick report 3 ms

    path = Path(model)
    if not path.exists() and _is_repo_id(model):  # owner/name: the local Hugging Face cache
        from .hf_cache import cached_config

        spec = spec_from_config(load_config(cached_config(model)), name=model)
        return _with_sets(spec, sets)
    if path.is_dir() or path.suffix == ".json":
        if not path.exists():
            raise SymcalcError("MODEL", f"{model!r} does not exist")
        spec = spec_from_config(load_config(path), name=_hf_name(path))
    elif path.suffix == ".toml":
        if not path.exists():
            raise SymcalcError("MODEL", f"{model!r} does not exist")
        spec = load_spec_file(path)
    else:
        raise SymcalcError("MODEL", f"{model!r} is not a preset (see `symcalc presets`), "
                                    "a config.json, a folder with one, a Hugging Face repo "
                                    "owner/name in the local cache, or a .toml spec file")
    return _with_sets(spec, sets)


def _is_repo_id(model: str) -> bool:
    from .hf_cache import is_repo_id

    return is_repo_id(model)


def _with_sets(spec: Spec, sets: Iterable[str]) -> Spec:
    overrides = parse_sets(sets)
    return with_overrides(spec, overrides) if overrides else spec


def _hf_name(path: Path) -> str:
    folder = path if path.is_dir() else path.parent
    return folder.name or path.name

"""MODEL arguments -> :class:`Spec`: a preset name, a Hugging Face config.json (or a folder
holding one), a Hugging Face repository ``owner/name`` in the local hub cache, or a symcalc
spec file (TOML, :mod:`.spec_file`), then ``--set key=value`` overrides."""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Iterable

    from .hf import Outside

from ..algebra.spec import Spec, coerce_text, with_overrides
from ..errors import SymcalcError
from . import presets
from .spec_file import load_spec_file


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
    """The spec that MODEL names, with the ``--set`` overrides applied (for a multimodal
    config.json, its language model)."""
    return resolve_model(model, sets)[0]


def resolve_model(model: str, sets: Iterable[str] = ()) -> tuple[Spec, tuple[Outside, ...]]:
    """:func:`resolve`, and the parts of a multimodal checkpoint outside its language model
    (the vision tower and projector; empty for everything else). ``--set`` changes only the
    language model."""
    if presets.exists(model):
        return _with_sets(presets.load(model).spec, sets), ()
    check_path(model)
    import os

    from .hf import load_config, read_model  # not for a preset (a report's commonest MODEL)

    if model.endswith(".json") and os.path.isfile(model):  # without pathlib (3 ms of imports)
        folder = os.path.basename(os.path.dirname(model))
        spec, outside = read_model(load_config(model), name=folder or os.path.basename(model))
        return _with_sets(spec, sets), outside
    from pathlib import Path

    path = Path(model)
    if not path.exists() and _is_repo_id(model):  # owner/name: the local Hugging Face cache
        from .hf_cache import cached_config

        spec, outside = read_model(load_config(cached_config(model)), name=model)
        return _with_sets(spec, sets), outside
    outside: tuple[Outside, ...] = ()
    if path.is_dir() or path.suffix == ".json":
        if not path.exists():
            raise SymcalcError("MODEL", f"{model!r} does not exist")
        spec, outside = read_model(load_config(path), name=_hf_name(path))
    elif path.suffix == ".toml":
        if not path.exists():
            raise SymcalcError("MODEL", f"{model!r} does not exist")
        spec = load_spec_file(path)
    else:
        raise SymcalcError("MODEL", f"{model!r} is not a preset (see `symcalc presets`), "
                                    "a config.json, a folder with one, a Hugging Face repo "
                                    "owner/name in the local cache, or a .toml spec file")
    return _with_sets(spec, sets), outside


def check_path(model: str) -> None:
    """A MODEL that cannot be a path at all (a name over the file-name limit, a NUL
    character) or whose status cannot be read (a folder on its way that this user may not
    enter, ``/proc/1/root/...``) is refused here, before pathlib's checks raise. A path
    that does not exist passes: it may still be a repo id of the hub cache."""
    import errno
    import os

    from .files import label_of

    try:
        os.stat(model)
    except ValueError:
        raise SymcalcError("MODEL", "is not a preset, and as a path it holds a NUL "
                                    "character") from None
    except OSError as err:
        if err.errno == errno.ENAMETOOLONG:
            raise SymcalcError("MODEL", f"is not a preset, and as a path its name is longer "
                                        f"than the system allows ({len(model)} characters; "
                                        "File name too long)") from None
        if err.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise SymcalcError("MODEL", f"{label_of(model)!r} cannot be read "
                                        f"({err.strerror or err})") from None


def _is_repo_id(model: str) -> bool:
    from .hf_cache import is_repo_id

    return is_repo_id(model)


def _with_sets(spec: Spec, sets: Iterable[str]) -> Spec:
    overrides = parse_sets(sets)
    return with_overrides(spec, overrides) if overrides else spec


def _hf_name(path: Path) -> str:
    folder = path if path.is_dir() else path.parent
    return folder.name or path.name

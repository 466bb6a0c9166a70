"""A symcalc spec file: TOML whose keys are :class:`~symcalc.algebra.spec.Spec` fields."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..algebra.spec import Spec, make_spec
from ..errors import SymcalcError

if TYPE_CHECKING:
    from pathlib import Path  # not imported: pathlib costs a preset's quick report 3 ms

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

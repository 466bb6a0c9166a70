"""A symcalc spec file: TOML whose keys are :class:`~symcalc.algebra.spec.Spec` fields."""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms

from ..algebra.spec import Spec, make_spec
from ..errors import SymcalcError

if TYPE_CHECKING:
    from pathlib import Path  # not imported: pathlib costs a preset's quick report 3 ms


def load_spec_file(path: Path) -> Spec:
    """A symcalc spec file: TOML whose keys are :class:`Spec` fields (``name`` defaults to
    the file name). A ``[spec]`` table is read too, so preset files are spec files."""
    from .files import label_of, parse_toml, read_text

    data = parse_toml(read_text(path, label_of(path)), path.name)
    table = data.get("spec", data)
    if not isinstance(table, dict):  # `spec = 5`, `spec = "abc"`, `[[spec]]`
        kind = ("an array" if isinstance(table, list)
                else f"{type(table).__name__} {table!r:.40}")
        raise SymcalcError(f"{path.name}: spec", f"must be a table of spec fields ([spec]), "
                                                 f"not {kind}")
    fields = dict(table)
    fields.pop("spec", None)
    for meta in ("description", "expected_total", "expected_active", "reference", "seed"):
        fields.pop(meta, None)
    fields.setdefault("name", data.get("name", path.stem))
    if "source" in data and "source" not in fields:
        fields["source"] = data["source"]
    return make_spec(**fields)

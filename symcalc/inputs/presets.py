"""Named models shipped as data files (``symcalc/inputs/presets/*.toml``).

Grammar of a preset file (TOML): top-level ``name``, ``description``, ``source`` (where the
dimensions come from), ``expected_total`` (the parameter count the source or transformers
gives, checked by the tests), optionally ``expected_active`` (MoE) and ``reference`` (the
transformers class whose count it is) and ``note`` (where the published checkpoint differs
from what transformers builds); a ``[spec]`` table holds the fields of
:class:`symcalc.algebra.spec.Spec`.
"""
from __future__ import annotations

from ..records import Record
from functools import lru_cache
import os
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Optional

from ..algebra.spec import Spec, make_spec


class Preset(Record):
    name: str
    description: str
    source: str
    expected_total: int
    spec: Spec
    expected_active: Optional[int] = None
    reference: str = ""
    note: str = ""  # where the checkpoint differs from what transformers builds, and why


# A plain folder: the presets ship as files inside the package, and importlib.resources
# (or pathlib) would cost a quick report several ms of imports (tempfile, zipfile, shutil).
_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "presets")


@lru_cache(maxsize=None)
def names() -> tuple[str, ...]:
    return tuple(sorted(f[:-5] for f in os.listdir(_FOLDER) if f.endswith(".toml")))


def exists(name: str) -> bool:
    return name in names()


def raw(name: str) -> dict:
    """A preset file's tables (from the compiled store while the file is unchanged)."""
    from .. import compiled

    path = os.path.join(_FOLDER, f"{name}.toml")

    def build(_raw: bytes) -> dict:  # an edited preset: the reader every file goes through
        from .files import read_toml

        return read_toml(path, f"presets/{name}.toml")

    return compiled.load(compiled.INPUTS_STORE, f"preset:{name}", path, build)


@lru_cache(maxsize=None)
def load(name: str) -> Preset:
    data = raw(name)
    spec = make_spec(name=data["name"], source=data["source"], **data["spec"],
                     implementation=data.get("implementation"))
    return Preset(name=data["name"], description=data["description"], source=data["source"],
                  expected_total=data["expected_total"], spec=spec,
                  expected_active=data.get("expected_active"), reference=data.get("reference", ""),
                  note=data.get("note", ""))


def all_presets() -> list[Preset]:
    return [load(n) for n in names()]

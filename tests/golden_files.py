"""Golden files for rendered output. Run ``pytest --update-golden`` (or set
SYMCALC_UPDATE_GOLDEN=1) to rewrite them from the current output, then review the diff and
commit it."""
from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"


def updating() -> bool:
    return os.environ.get("SYMCALC_UPDATE_GOLDEN", "") not in ("", "0")


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if updating() or not path.exists():
        if not updating():
            raise AssertionError(f"golden file {path} is missing; run with SYMCALC_UPDATE_GOLDEN=1")
        path.write_text(text, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert text == expected, (f"{name} differs from its golden file; if the change is intended, "
                              "rerun with SYMCALC_UPDATE_GOLDEN=1 and review the diff")

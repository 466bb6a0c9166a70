"""Rewrite (or check) the compiled stores of :mod:`symcalc.compiled`: spec.toml's and
layout.toml's rules and implementation.toml (``symcalc/algebra/compiled.store``), every packaged family file and
preset (``symcalc/inputs/compiled.store``).

    python -m symcalc.inputs.compile_data           # rewrite both stores
    python -m symcalc.inputs.compile_data --check   # exit 1 naming what is stale

Run it after editing any of those files (the tests run ``--check``). A stale entry never
gives a wrong number -- :func:`symcalc.compiled.load` compiles an edited file afresh -- but
it costs the report path the TOML parser.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .. import compiled


def _source(path: str) -> tuple[int, bytes]:
    with open(path, "rb") as f:
        raw = f.read()
    return compiled.crc(raw), raw


def algebra_entries() -> dict[str, tuple[int, Any]]:
    from ..algebra import conventions, implementation, layout, option_rules, spec
    from ..algebra.rules import compile_rules

    c, raw = _source(spec.RULES_PATH)
    out = {"spec": (c, compile_rules(compiled.read_toml_bytes(raw, spec.RULES_LABEL),
                                     spec.RULES_LABEL, spec.FIELD_NAMES))}
    c, raw = _source(implementation.PATH)
    out["implementation"] = (c, implementation.compile_definitions(
        compiled.read_toml_bytes(raw, implementation.LABEL)))
    c, raw = _source(layout.LAYOUT_RULES_PATH)
    out["layout"] = (c, layout.compile_layout_rules(raw))
    c, raw = _source(option_rules.PATH)
    out["options"] = (c, option_rules.compile_option_rules(raw))
    c, raw = _source(conventions.PATH)
    out["conventions"] = (c, conventions.compile_conventions(raw))
    return out


def inputs_entries() -> dict[str, tuple[int, Any]]:
    from . import presets
    from .family_data import FAMILIES_DIR, family_names, family_to_json, parse_family
    from .files import decode

    out: dict[str, tuple[int, Any]] = {}
    for name in family_names():
        label = f"families/{name}.toml"
        c, raw = _source(os.path.join(FAMILIES_DIR, f"{name}.toml"))
        out[f"family:{name}"] = (c, family_to_json(parse_family(decode(raw, label), label, name)))
    for name in presets.names():
        c, raw = _source(os.path.join(presets._FOLDER, f"{name}.toml"))
        out[f"preset:{name}"] = (c, compiled.read_toml_bytes(raw, f"presets/{name}.toml"))
    from .gpus import BUILT_IN, LABEL

    c, raw = _source(BUILT_IN)
    out["gpus"] = (c, compiled.read_toml_bytes(raw, LABEL))
    return out


def stale(path: str, entries: dict[str, tuple[int, Any]]) -> list[str]:
    """Names whose entry in the store at ``path`` is missing or differs (and entries it holds
    that no longer have a source)."""
    import json

    table, _ = compiled.index(path)
    out = sorted(set(table) - set(entries))
    for name, (c, value) in sorted(entries.items()):
        found = table.get(name)
        if found is None or found[0] != c:
            out.append(name)
            continue
        if compiled.entry(path, name, c) != json.loads(json.dumps(value)):
            out.append(name)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m symcalc.inputs.compile_data",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = ap.parse_args(argv)
    bad = []
    for path, entries in ((compiled.ALGEBRA_STORE, algebra_entries()),
                          (compiled.INPUTS_STORE, inputs_entries())):
        if args.check:
            compiled.forget()
            names = stale(path, entries)
            bad += [f"{os.path.relpath(path)}: {n}" for n in names]
        else:
            compiled.write(path, entries)
            print(f"wrote {os.path.relpath(path)}: {len(entries)} entries, "
                  f"{os.path.getsize(path):,} bytes")
    if bad:
        print("stale compiled entries (run python -m symcalc.inputs.compile_data):\n  "
              + "\n  ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

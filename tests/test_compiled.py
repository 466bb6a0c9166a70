"""The compiled stores (symcalc.compiled): fresh, faithful, and never served stale.

* ``python -m symcalc.inputs.compile_data --check`` passes: every family file, preset,
  spec.toml and implementation.toml has its entry, compiled from its current bytes;
* an entry read back is what compiling the file gives (a family round-trips to an equal
  Family, a preset to its parsed tables);
* an entry whose source changed is not used: the file is compiled afresh.
"""
from __future__ import annotations

import json

from symcalc import compiled
from symcalc.inputs import compile_data, presets
from symcalc.inputs.family_data import (FAMILIES_DIR, family_from_json, family_names,
                                        load_family, parse_family)


def test_stores_are_fresh(capsys):
    assert compile_data.main(["--check"]) == 0, capsys.readouterr().err


def test_every_family_reads_back_equal():
    for name in family_names():
        path = f"{FAMILIES_DIR}/{name}.toml"
        with open(path, encoding="utf-8") as f:
            parsed = parse_family(f.read(), f"families/{name}.toml", name)
        assert load_family(name) == parsed, name


def test_every_preset_reads_back_its_tables():
    from symcalc.inputs.files import read_toml

    for name in presets.names():
        assert presets.raw(name) == read_toml(f"{presets._FOLDER}/{name}.toml"), name


def test_a_changed_source_is_compiled_afresh(tmp_path):
    source = tmp_path / "x.toml"
    source.write_text("a = 1\n")
    store = tmp_path / "s.store"
    compiled.write(str(store), {"x": (compiled.crc(source.read_bytes()), {"a": "from the store"})})

    def build(raw):
        return compiled.read_toml_bytes(raw, "x.toml")

    assert compiled.load(str(store), "x", str(source), build) == {"a": "from the store"}
    source.write_text("a = 2\n")
    assert compiled.load(str(store), "x", str(source), build) == {"a": 2}
    assert compiled.load(str(store), "missing", str(source), build) == {"a": 2}


def test_store_format_reads_only_the_entry(tmp_path):
    store = tmp_path / "s.store"
    compiled.write(str(store), {"b": (7, [1, {"k": "v"}]), "a": (3, "text")})
    head = json.loads(store.read_bytes().split(b"\n", 1)[0])
    assert sorted(head) == ["a", "b"] and head["a"][0] == 3
    assert compiled.read(str(store), "b") == [1, {"k": "v"}]
    assert compiled.entry(str(store), "a", 3) == "text"
    assert compiled.entry(str(store), "a", 4) is None


def test_family_json_round_trip_survives_json_text():
    for name in family_names():
        f = load_family(name)
        from symcalc.inputs.family_data import family_to_json

        assert family_from_json(json.loads(json.dumps(family_to_json(f)))) == f, name

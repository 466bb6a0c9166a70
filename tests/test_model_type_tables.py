"""Knowledge is data: no code or data file of symcalc names a transformers model type that has
no family file. A model type's quirks live in its family file (symcalc/inputs/families/), read
by generic code; a table keyed by model types elsewhere would be the knowledge in the wrong
place, and one naming a type symcalc cannot read (an old SOFTMAX_IN_MODEL_DTYPE listed roberta,
distilbert and mt5) would be dead.

The model types are transformers 5.24's (tests/data/model_types.json, written from
CONFIG_MAPPING_NAMES)."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "symcalc"
MODEL_TYPES = set(json.loads((REPO / "tests/data/model_types.json").read_text())["model_types"])
FAMILIES = {p.stem for p in (PACKAGE / "inputs/families").glob("*.toml")}
# where rules live: the math, the inputs, the evaluators and the page (render and the templates
# hold prose, whose words may collide with model types: "align", "git")
# (model_types.toml lists transformers' model types and why symcalc refuses those without a
# family file: it names them on purpose; tests/test_model_type_status.py holds it to the files)
SCANNED = [p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".js", ".toml")
           and p.parent.name not in ("families", "presets") and p.name != "model_types.toml"
           and p.relative_to(PACKAGE).parts[0] in ("algebra", "inputs", "fast", "page")]
# words symcalc uses for a component or a kind that transformers also uses as a model_type
# name: they name the component, not the model type (no table keyed by them holds a model
# type's quirks)
COMPONENT_WORDS = {
    "encoder-decoder": "the spec family of T5-shaped models (Spec.family)",
    "mamba": "the Mamba-1 mixer (Spec.ssm)",
    "mamba2": "the Mamba-2 mixer (Spec.ssm)",
    "siglip": "the SigLIP vision tower of symcalc.algebra.vision",
    "pixtral": "the Pixtral vision tower of symcalc.algebra.vision",
    "bit": "the unit of information (symcalc.algebra.units: 80Gbit)",
}
_JS_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')


def strings_of(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return {n.value for n in ast.walk(ast.parse(text))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    if path.suffix == ".toml":
        import tomllib

        out: set[str] = set()

        def walk(x):
            if isinstance(x, str):
                out.add(x)
                out.update(re.findall(r"'([^']*)'", x))  # literals inside expressions
            elif isinstance(x, dict):
                for k, v in x.items():
                    out.add(k)
                    walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)

        walk(tomllib.loads(text))
        return out
    return {a or b for a, b in _JS_STRING.findall(text)}


def test_the_scan_sees_the_packages_code():
    assert len(SCANNED) > 40 and len(MODEL_TYPES) > 500
    assert "llama" in strings_of(PACKAGE / "inputs/families/llama.toml")


@pytest.mark.parametrize("path", SCANNED, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_model_type_without_a_family_file(path):
    named = {s for s in strings_of(path)
             if s in MODEL_TYPES and s not in FAMILIES and s not in COMPONENT_WORDS}
    assert not named, f"{path.relative_to(REPO)} names model types without a family file: {sorted(named)}"


def test_a_table_naming_a_type_without_a_family_is_caught(tmp_path):
    bad = tmp_path / "table.py"
    bad.write_text('SOFTMAX_IN_MODEL_DTYPE = frozenset({"gpt2", "xlnet", "reformer"})\n')
    named = {s for s in strings_of(bad) if s in MODEL_TYPES and s not in FAMILIES}
    assert named == {"xlnet", "reformer"}

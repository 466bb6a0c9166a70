"""The package's layout: stages import only what comes before them, no import cycle among
symcalc's modules, and the module paths from before the regrouping (``symcalc.spec`` ...)
are gone (0.1.0 was never released with them)."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import symcalc

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "symcalc"

# stage -> the symcalc packages its modules may import (besides itself and symcalc.errors)
STAGES = {
    "algebra": set(),
    "inputs": {"algebra"},
    "fast": {"algebra", "inputs"},
    "derivations": {"algebra"},
}


# modules at the package root that every stage may use: errors, light records, compiled stores
ROOT_UTILITIES = {"symcalc.errors", "symcalc.records", "symcalc.compiled"}


# -- the import graph ----------------------------------------------------------------------------
def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every symcalc module ``name`` imports, at the top or inside a function (a lazy import
    is still an import); third-party modules by their top-level name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def add(target: str) -> None:
        out.add(target if target.startswith("symcalc") else target.split(".")[0])

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:  # `from pkg import module` imports the module
                sub = f"{source}.{alias.name}"
                if sub in known:
                    add(sub)
                    continue
                add(source)
    out.discard(name)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: {m for m in imports(name, path, known) if m in known}
            for name, path in mods.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``edges`` as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_is_read():
    g = graph()
    assert "symcalc.algebra.symbols" in g["symcalc.algebra.accounting"]
    assert "symcalc.inputs.hf_cache" in g["symcalc.inputs.resolver"]  # a lazy import
    assert "symcalc.derivations.derivation" in g["symcalc.render.display"]
    assert len(g) > 50


def test_no_import_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_stages_import_only_earlier_stages(stage):
    """algebra <- inputs <- fast, algebra <- derivations; none of them imports render,
    commands, the cli or jinja2 (formatting is the render layer's)."""
    mods = modules()
    allowed = {f"symcalc.{s}" for s in STAGES[stage] | {stage}} | ROOT_UTILITIES
    for name, path in mods.items():
        if not name.startswith(f"symcalc.{stage}"):
            continue
        for target in imports(name, path, set(mods)):
            assert target != "jinja2", f"{name} imports jinja2"
            if target.startswith("symcalc"):
                assert any(target == a or target.startswith(a + ".") for a in allowed), \
                    f"{name} imports {target}"


def test_data_modules_import_no_renderer():
    mods = modules()
    for name, path in mods.items():
        if name.split(".")[1:2] in (["algebra"], ["inputs"], ["fast"], ["derivations"]):
            bad = {t for t in imports(name, path, set(mods))
                   if t.startswith("symcalc.render") or t == "jinja2"}
            assert not bad, f"{name} imports {sorted(bad)}"


# -- the old module paths ------------------------------------------------------------------------
OLD_PATHS = ("symcalc.spec", "symcalc.options", "symcalc.quantities", "symcalc.presets",
             "symcalc.quick", "symcalc.codegen", "symcalc.hf", "symcalc.family_data",
             "symcalc.derive", "symcalc.sources", "symcalc.sweep", "symcalc._aliases",
             "symcalc.fast.codegen", "symcalc.fast._generated")


@pytest.mark.parametrize("old", OLD_PATHS)
def test_old_module_paths_are_gone(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
    assert not (REPO / (old.replace(".", "/") + ".py")).exists()


def test_quick_path_imports_no_sympy_in_a_fresh_interpreter():
    code = ("import sys\nimport symcalc.algebra.spec, symcalc.algebra.options, "
            "symcalc.inputs.presets, symcalc.fast.quick\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sympy', 'jinja2')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_unknown_names_are_still_errors():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("symcalc.no_such_module")
    with pytest.raises(AttributeError):
        symcalc.no_such_attribute  # noqa: B018

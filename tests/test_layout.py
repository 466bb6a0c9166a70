"""The package's layout: stages import only what comes before them, no import cycle among
symcalc's modules, and the module paths from before the regrouping (``symcalc.spec`` ...)
are the very same module objects as the new ones (``symcalc.algebra.spec`` ...)."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import symcalc
from symcalc._aliases import ALIASES

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "symcalc"

# stage -> the symcalc packages its modules may import (besides itself and symcalc.errors)
STAGES = {
    "algebra": set(),
    "inputs": {"algebra"},
    "fast": {"algebra", "inputs"},
    "derivations": {"algebra"},
}


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
    is still an import), with old paths resolved through the alias table; third-party
    modules by their top-level name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def add(target: str) -> None:
        target = ALIASES.get(target, target)
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
                sub = ALIASES.get(f"{source}.{alias.name}", f"{source}.{alias.name}")
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
    allowed = {f"symcalc.{s}" for s in STAGES[stage] | {stage}} | {"symcalc.errors"}
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
@pytest.mark.parametrize("old", sorted(ALIASES))
def test_alias_is_the_same_module(old):
    new = ALIASES[old]
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert sys.modules[old] is sys.modules[new] is module
    assert module.__name__ == new and module.__spec__.name == new  # its own spec, kept
    assert getattr(symcalc, old.split(".")[1]) is module


def test_alias_targets_exist_and_old_files_are_gone():
    for old, new in ALIASES.items():
        assert (REPO / (new.replace(".", "/") + ".py")).is_file(), new
        assert not (REPO / (old.replace(".", "/") + ".py")).exists(), old


def test_monkeypatch_through_an_old_path_is_seen_by_the_new(monkeypatch):
    import symcalc.family_data as old
    from symcalc.inputs import family_data as new

    monkeypatch.setattr(old, "FAMILIES_DIR", Path("/nowhere"))
    assert new.FAMILIES_DIR == Path("/nowhere")


def test_old_paths_work_in_a_fresh_interpreter_without_sympy():
    code = ("import sys\nimport symcalc.spec, symcalc.options, symcalc.presets, symcalc.quick\n"
            "from symcalc.spec import Spec\nfrom symcalc.algebra.spec import Spec as S2\n"
            "from symcalc import quick\nimport symcalc.fast.quick as q2\n"
            "assert Spec is S2 and quick is q2\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sympy', 'jinja2')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["symcalc.codegen", "symcalc.fast.codegen"])
def test_codegen_runs_as_a_module_under_both_names(name):
    done = subprocess.run([sys.executable, "-m", name, "--check"], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "_generated.py is up to date"


def test_unknown_names_are_still_errors():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("symcalc.no_such_module")
    with pytest.raises(AttributeError):
        symcalc.no_such_attribute  # noqa: B018

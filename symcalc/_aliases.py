"""Old module paths, from before the package was grouped by stage, kept importable.

``import symcalc.spec`` returns the very module object ``symcalc.algebra.spec`` (not a copy
and not a wrapper), so ``isinstance`` checks, ``monkeypatch.setattr`` and ``mock.patch`` on
either name act on the one module. ``python -m symcalc.codegen`` runs
``symcalc.fast.codegen``. There is no file per old name: :data:`ALIASES` is the whole table,
and :class:`AliasFinder` (put on ``sys.meta_path`` by ``symcalc/__init__.py``) serves it.

Importing this module imports nothing but :mod:`importlib.machinery` (no sympy).
"""
from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec

ALIASES: dict[str, str] = {
    # algebra: the model math
    "symcalc.symbols": "symcalc.algebra.symbols",
    "symcalc.spec": "symcalc.algebra.spec",
    "symcalc.options": "symcalc.algebra.options",
    "symcalc.breakdown": "symcalc.algebra.breakdown",
    "symcalc.components": "symcalc.algebra.components",
    "symcalc.accounting": "symcalc.algebra.accounting",
    "symcalc.flops": "symcalc.algebra.flops",
    "symcalc.memory": "symcalc.algebra.memory",
    "symcalc.quantities": "symcalc.algebra.quantities",
    "symcalc.assumptions": "symcalc.algebra.assumptions",
    "symcalc.closed_form": "symcalc.algebra.closed_form",
    # inputs: families, configs, presets (symcalc.inputs itself is now the package)
    "symcalc.family_data": "symcalc.inputs.family_data",
    "symcalc.hf": "symcalc.inputs.hf",
    "symcalc.hf_cache": "symcalc.inputs.hf_cache",
    "symcalc.presets": "symcalc.inputs.presets",
    # fast: the generated evaluators
    "symcalc.codegen": "symcalc.fast.codegen",
    "symcalc._generated": "symcalc.fast._generated",
    "symcalc.quick": "symcalc.fast.quick",
    "symcalc.sweep": "symcalc.fast.sweep",
    # derivations: worked examples as data
    "symcalc.derivation": "symcalc.derivations.derivation",
    "symcalc.derive": "symcalc.derivations.derive",
    "symcalc.derive_forms": "symcalc.derivations.derive_forms",
    "symcalc.published": "symcalc.derivations.published",
    "symcalc.handout_data": "symcalc.derivations.handout_data",
    "symcalc.sources": "symcalc.derivations.sources",
}


class _AliasSpec(ModuleSpec):
    """The spec of an old name. Its ``parent`` is the new module's package, so that code run
    from it (``python -m symcalc.codegen``: runpy sets ``__package__`` from the spec) resolves
    its relative imports where the file now is."""

    def __init__(self, name: str, loader: "AliasLoader", origin: str | None, target: str):
        super().__init__(name, loader, origin=origin)
        self.has_location = origin is not None
        self.target = target

    @property
    def parent(self) -> str:
        return self.target.rpartition(".")[0]


class AliasLoader:
    """Loads an old name as the module of its new name (importing that one if needed)."""

    def __init__(self, target: str):
        self.target = target
        self._spec: ModuleSpec | None = None

    def create_module(self, spec: ModuleSpec):
        module = importlib.import_module(self.target)
        self._spec = module.__spec__  # the import system writes the alias spec over it
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self._spec  # the module keeps its own spec: nothing is run twice

    def get_code(self, fullname: str):
        """The new module's code, for runpy (``python -m OLD.NAME``)."""
        import importlib.util

        spec = importlib.util.find_spec(self.target)
        return spec.loader.get_code(self.target)


class AliasFinder:
    """A ``sys.meta_path`` finder for the names in :data:`ALIASES` and nothing else."""

    def find_spec(self, fullname: str, path=None, target=None):
        new = ALIASES.get(fullname)
        if new is None:
            return None
        loaded = sys.modules.get(new)
        origin = getattr(loaded, "__file__", None) if loaded else _origin(new)
        return _AliasSpec(fullname, AliasLoader(new), origin, new)


def _origin(name: str) -> str | None:
    """The file of the module ``name`` without importing it (its package is imported)."""
    from importlib.machinery import PathFinder

    package, _, _ = name.rpartition(".")
    parent = importlib.import_module(package)
    spec = PathFinder.find_spec(name, parent.__path__)
    return spec.origin if spec else None


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (first: the names are ours)."""
    if not any(isinstance(f, AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())


def attribute(name: str):
    """``symcalc.NAME`` for an old module name not imported yet (the package's
    ``__getattr__``): imports and returns the module; AttributeError otherwise."""
    new = ALIASES.get(f"symcalc.{name}")
    if new is None:
        raise AttributeError(f"module 'symcalc' has no attribute {name!r}")
    return importlib.import_module(f"symcalc.{name}")

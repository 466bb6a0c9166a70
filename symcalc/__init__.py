"""symcalc: symbolic parameter, FLOP and memory accounting for transformer models.

The package is grouped by stage: :mod:`symcalc.algebra` (the sympy expressions and the
spec), :mod:`symcalc.inputs` (families, configs, presets -> a spec), :mod:`symcalc.fast` (the
term table and its evaluator: numbers without sympy), :mod:`symcalc.derivations` (worked
examples as data) and :mod:`symcalc.render` (formatting); :mod:`symcalc.commands` and
:mod:`symcalc.cli` are the command line.

Importing the package is cheap: sympy is loaded only by the modules that build expressions
(``symcalc.algebra.accounting``, ``symcalc.algebra.closed_form`` ...), never by the quick
numeric path (``symcalc.fast.quick``).
"""
__version__ = "0.1.0"

__all__ = ["__version__", "Model", "model", "solve", "sensitivity"]
# loaded on first use (the command line never pays for the notebook entry points)
_LAZY = {"Model": "model", "model": "model", "solve": "questions", "sensitivity": "questions"}


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""symcalc: symbolic parameter, FLOP and memory accounting for transformer models.

Importing the package is cheap: sympy is loaded only by the modules that build expressions
(``symcalc.accounting``, ``symcalc.closed_form`` ...), never by the quick numeric path
(``symcalc.quick``).
"""
__version__ = "0.1.0"

from .model import Model, model  # noqa: E402  (no sympy: the notebook entry point)

__all__ = ["__version__", "Model", "model"]

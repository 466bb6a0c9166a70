"""Fast evaluators: plain-Python functions generated from the sympy expressions
(:mod:`.codegen` writes :mod:`._generated`), the quick report (:mod:`.quick`) and grid
sweeps (:mod:`.sweep`). Only :mod:`.codegen` imports sympy."""

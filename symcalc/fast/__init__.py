"""Numbers without sympy: the term table (:mod:`.build_terms` writes ``terms.store`` from the
sympy expressions' component functions; :mod:`.terms` evaluates it), the quick report
(:mod:`.quick`) and grid sweeps (:mod:`.sweep`). Only :mod:`.build_terms` imports sympy."""

"""options.toml, compiled and read once: a layout's refusals beyond each option's kind
(``steps``, run by :meth:`symcalc.algebra.layout.Layout.checked`) and the option switches of
the term table (``switches``, :func:`symcalc.algebra.options.switches`). The calculator page
runs the same JSON (page/core.js, checkedLayout and optionSwitches). No sympy here."""
from __future__ import annotations

import os
from functools import lru_cache

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "options.toml")
LABEL = "symcalc/algebra/options.toml"


def compile_option_rules(raw: bytes) -> dict:
    """options.toml's bytes compiled (:func:`symcalc.algebra.rules.compile_rules`): what the
    compiled store holds (``symcalc.inputs.compile_data``)."""
    from .. import compiled
    from .rules import compile_rules

    return compile_rules(compiled.read_toml_bytes(raw, LABEL), LABEL, ())


@lru_cache(maxsize=None)
def option_rules() -> dict:
    """``{"steps", "switches", "values"}`` of options.toml (from the compiled store while the
    file is unchanged)."""
    from .. import compiled

    return compiled.load(compiled.ALGEBRA_STORE, "options", PATH, compile_option_rules)

"""The pytest plugin (entry point ``pytest11: symcalc``).

* ``symcalc_model``: a :class:`Loaded` model (``.spec``, ``.report``, ``.model``) named by
  ``@pytest.mark.symcalc("llama-2-7b", batch=8)`` on the test, or by indirect
  parametrization (``@pytest.mark.parametrize("symcalc_model", ["gpt2"], indirect=True)``);
* ``symcalc_factory``: a function ``(name, sets=(), **options) -> Loaded`` for tests that
  load several models.

Loading uses the quick report (no sympy); nothing is imported until a fixture is used.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class Loaded:
    """A model for a test: its spec, its report (the ``report --json`` object) and the
    :class:`symcalc.Model` (derivations, closed forms)."""
    spec: Any
    report: dict
    model: Any


def load(name, sets=(), **options) -> Loaded:
    """The model ``name`` (a preset, config.json or .toml path, a spec or a Model) with
    ``sets`` (``KEY=VALUE`` texts) and workload ``options``; a bad argument is one clear
    failure (:mod:`symcalc.testing.checks`)."""
    __tracebackhide__ = True
    from symcalc.algebra.options import Options
    from symcalc.fast.quick import quick_report
    from symcalc.model import Model
    from symcalc.testing.checks import clear, model_arg, options_arg, sets_arg
    from symcalc.testing.closed import _spec

    where = "symcalc model"
    name, sets = model_arg(where, name), sets_arg(where, sets)
    options = options_arg(where, options)
    with clear(where):
        spec, base = _spec(name, sets)
        opts = (base.with_(**options) if options else base).checked()
        return Loaded(spec, quick_report(spec, opts), Model(spec, opts))


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "symcalc(model, *sets, **options): the model the "
                                       "symcalc_model fixture loads (a preset, config.json or spec)")


@pytest.fixture
def symcalc_factory():
    return load


@pytest.fixture
def symcalc_model(request):
    if getattr(request, "param", None) is not None:
        param = request.param
        if isinstance(param, dict):  # {"name": MODEL, "sets": [...], **options}
            param = dict(param)
            if "name" not in param:
                from symcalc.testing.checks import fail

                fail("symcalc model", "name", "an indirect parameter given as a dict names "
                                              "its model with 'name' (and may give 'sets' "
                                              "and options)")
            return load(param.pop("name"), param.pop("sets", ()), **param)
        return load(param)
    marker = request.node.get_closest_marker("symcalc")
    if marker is None or not marker.args:
        raise pytest.UsageError("symcalc_model needs @pytest.mark.symcalc(MODEL, ...) or "
                                "indirect parametrization with a model name")
    return load(marker.args[0], marker.args[1:], **marker.kwargs)

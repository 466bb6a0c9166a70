"""The arguments of symcalc's test helpers and fixtures, checked where they come in.

A bad argument -- a model that is no model (``123``, ``None``, a dict), ``sets`` that are
not ``KEY=VALUE`` texts, an option the workload does not have, a module without
``named_parameters()``, a ``name_map`` that is no mapping of globs to paths, a preset that
does not exist -- is one clear failure naming the argument and the rule:

* inside a pytest test (or fixture), ``pytest.fail(..., pytrace=False)``: the test fails
  with that line and no traceback through symcalc;
* elsewhere, a :class:`symcalc.errors.SymcalcError` (``FIELD: RULE``).

A mismatch the helpers find stays an ``AssertionError`` with its explanation.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from ..records import fields
from typing import Any, Iterable

from ..errors import SymcalcError

MODEL_KINDS = ("a preset name, a config.json or .toml path, a spec "
               "(symcalc.algebra.spec.Spec) or a symcalc.Model")


def fail(where: str, field: str, rule: str):
    """Stop with ``where: field: rule``: a pytest failure in a test, else a SymcalcError."""
    __tracebackhide__ = True
    if os.environ.get("PYTEST_CURRENT_TEST"):
        import pytest

        pytest.fail(f"{where}: {field}: {rule}", pytrace=False)
    raise SymcalcError(f"{where}: {field}", rule)


@contextmanager
def clear(where: str):
    """symcalc's own refusals (an unknown preset, a bad ``--set``, an unknown quantity) as
    the same clear failure."""
    __tracebackhide__ = True
    try:
        yield
    except SymcalcError as err:
        fail(where, err.field, err.rule)


def _kind(value: Any) -> str:
    return type(value).__name__


def model_arg(where: str, model: Any, field: str = "model") -> Any:
    """``model`` if it names a model (a text or path, a Spec, a Model), else a failure."""
    __tracebackhide__ = True
    from ..algebra.spec import Spec
    from ..model import Model

    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if isinstance(model, bytes) or not isinstance(model, (str, Spec, Model)):
        fail(where, field, f"must be {MODEL_KINDS} (got {_kind(model)} {model!r:.40})")
    if isinstance(model, str) and not model.strip():
        fail(where, field, f"must be {MODEL_KINDS} (got '')")
    return model


def sets_arg(where: str, sets: Any) -> tuple[str, ...]:
    """``sets``: one ``KEY=VALUE`` text or several (a list or tuple of them)."""
    __tracebackhide__ = True
    if sets is None:
        return ()
    if isinstance(sets, str):
        return (sets,)
    if not isinstance(sets, (list, tuple)) or not all(isinstance(s, str) for s in sets):
        bad = sets if not isinstance(sets, (list, tuple)) else \
            next(s for s in sets if not isinstance(s, str))
        fail(where, "sets", f"must be KEY=VALUE texts, e.g. ['L=24', 'd=1024'] "
                            f"(got {_kind(bad)} {bad!r:.40})")
    return tuple(sets)


def text_arg(where: str, field: str, value: Any, example: str) -> str:
    __tracebackhide__ = True
    if not isinstance(value, str):
        fail(where, field, f"must be text, e.g. {example} (got {_kind(value)} {value!r:.40})")
    return value


def options_arg(where: str, options: dict) -> dict:
    """Workload options by the names of :class:`symcalc.algebra.options.Options`; the text
    options (dtypes, conventions) must be text."""
    __tracebackhide__ = True
    from ..algebra.options import Options

    known = {f.name: f for f in fields(Options)}
    for name, value in options.items():
        if name not in known:
            fail(where, name, f"is not an option (options: {', '.join(known)})")
        if isinstance(known[name].default, str) and not isinstance(value, str):
            fail(where, name, f"must be text, e.g. {known[name].default!r} "
                              f"(got {_kind(value)} {value!r:.40})")
    return options


def expected_arg(where: str, expected: Any) -> Any:
    """A formula: text in the canonical names, a number or a sympy expression."""
    __tracebackhide__ = True
    import numbers

    if isinstance(expected, (str, numbers.Number)) and not isinstance(expected, bool):
        return expected
    import sympy

    if isinstance(expected, sympy.Basic):
        return expected
    fail(where, "expected", f"must be a formula: text in the canonical size names "
                            f"(e.g. '12*L*d**2'), a number or a sympy expression "
                            f"(got {_kind(expected)} {expected!r:.40})")


def module_arg(where: str, module: Any) -> Iterable:
    """The ``(name, parameter)`` pairs of ``module.named_parameters()``, each parameter with
    a ``shape`` of whole numbers."""
    __tracebackhide__ = True
    named = getattr(module, "named_parameters", None)
    if not callable(named):
        fail(where, "module", f"must have named_parameters() (a torch.nn.Module or alike; "
                              f"got {_kind(module)})")
    out = []
    for item in named():
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            fail(where, "module", f"named_parameters() must give (name, parameter) pairs "
                                  f"(got {_kind(item)} {item!r:.40})")
        name, param = item
        shape = getattr(param, "shape", None)
        try:
            dims = tuple(shape)
        except TypeError:
            dims = None
        if dims is None or not all(isinstance(s, int) or hasattr(s, "__index__") for s in dims):
            fail(where, "module", f"parameter {name!r:.60} has no shape of whole numbers "
                                  f"(got {_kind(param)})")
        out.append(item)
    return out


def name_map_arg(where: str, name_map: Any) -> dict | None:
    """``None`` or glob pattern -> a symcalc path or a list of them."""
    __tracebackhide__ = True
    if name_map is None:
        return None
    if not isinstance(name_map, dict):
        fail(where, "name_map", f"must map glob patterns of parameter names to symcalc paths "
                                f"(got {_kind(name_map)})")
    for pattern, paths in name_map.items():
        ok = isinstance(paths, str) or (isinstance(paths, (list, tuple)) and paths
                                        and all(isinstance(p, str) for p in paths))
        if not isinstance(pattern, str) or not ok:
            fail(where, "name_map", f"maps glob patterns to a path or a list of paths, e.g. "
                                    f"{{'blocks.*.attn.wq.*': 'layer/attention/q'}} "
                                    f"(got {pattern!r:.40}: {paths!r:.40})")
    return name_map

"""Helpers for your own test suite, and a pytest plugin (registered through the ``pytest11``
entry point, so installing symcalc makes them available; docs/testing.md).

* :func:`assert_closed_form` -- a quantity of a model equals your formula, symbolically; on a
  failure, the difference term by term with the components each term comes from;
* :func:`assert_param_count` -- a module's ``named_parameters()`` (PyTorch or anything shaped
  like it; symcalc imports no torch) match symcalc's count, component by component; on a
  failure, the component and the size that explain it;
* fixtures ``symcalc_model`` and ``symcalc_factory`` (:mod:`symcalc.testing.plugin`).

Importing this module is cheap: sympy is loaded when an assertion runs.
"""
from __future__ import annotations

from .closed import assert_closed_form
from .params import assert_param_count, param_groups

__all__ = ["assert_closed_form", "assert_param_count", "param_groups"]

"""Questions asked backwards, in Python: ``symcalc.solve`` and ``symcalc.sensitivity``.

>>> import symcalc
>>> symcalc.solve("llama-2-7b", "d", target="params.total=7e9").below
4192
>>> symcalc.solve("mistral-7b", "s", fit="memory.weights_bytes + memory.kv_cache_bytes <= H100",
...               batch=8).always      # the sliding window caps the cache
True

Nothing here imports sympy until a function is called.
"""
from __future__ import annotations

from typing import Iterable, Optional


def accelerator_constants(files: Iterable[str] = ()) -> dict:
    """Every accelerator name and alias -> (its memory in bytes, "bytes")."""
    from .inputs import gpus

    return {key: (acc.memory_bytes, "bytes") for key, acc in gpus.load(tuple(files)).items()}


def solve_spec(spec, size: str, relation: str, mode: str = "target", options=None,
               keep: Iterable[str] = (), multiple_of: int = 1, gpus: Iterable[str] = ()):
    from .algebra.options import Options
    from .algebra.solve import solve as solve_relation

    return solve_relation(spec, size, relation, mode, options or Options(), tuple(keep),
                          multiple_of, accelerator_constants(gpus))


def _spec_and_options(model, sets, options):
    from .algebra.options import Options
    from .model import Model

    if isinstance(model, Model):
        return model.spec, (Options(**options).checked() if options else model.options)
    if isinstance(model, str):
        from .inputs.resolver import resolve

        return resolve(model, sets), Options(**options).checked()
    return model, Options(**options).checked()  # a Spec


def solve(model, size: str, target: Optional[str] = None, fit: Optional[str] = None,
          when: Optional[str] = None, keep: Iterable[str] = (), multiple_of: int = 1,
          gpus: Iterable[str] = (), sets: Iterable[str] = (), **options):
    """The size ``size`` of ``model`` (a preset name, config path, spec or
    :class:`symcalc.Model`) meeting exactly one of ``target`` (``"params.total=7e9"``),
    ``fit`` (``"memory.kv_cache_bytes <= 80GB"``) or ``when`` (an inequality). Returns a
    :class:`symcalc.algebra.solve.Solution` (``.exact``, ``.below``, ``.above``,
    ``.to_json()``); workload options as keywords (``batch=8``)."""
    from .errors import SymcalcError

    given = [(m, t) for m, t in (("target", target), ("fit", fit), ("when", when)) if t is not None]
    if len(given) != 1:
        raise SymcalcError("solve", "give exactly one of target=, fit= or when=")
    spec, opts = _spec_and_options(model, sets, options)
    mode, text = given[0]
    return solve_spec(spec, size, text, mode, opts, keep, multiple_of, gpus)


def sensitivity(model, size: str, quantity: str = "params.total", keep: Iterable[str] = (),
                sets: Iterable[str] = (), **options):
    """dQ/dsize and the elasticity (size / Q) dQ/dsize of ``quantity`` at the model's sizes
    (:class:`symcalc.algebra.sensitivity.Sensitivity`)."""
    from .algebra.sensitivity import sensitivity as compute

    spec, opts = _spec_and_options(model, sets, options)
    return compute(spec, quantity, size, opts, tuple(keep))

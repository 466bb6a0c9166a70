"""Inputs: what names a model, turned into a :class:`~symcalc.algebra.spec.Spec`.

Family files (``families/*.toml``, read by :mod:`.family_data`) map a Hugging Face config
(:mod:`.hf`, :mod:`.hf_cache`) to spec fields; presets (``presets/*.toml``, :mod:`.presets`)
and spec files (:mod:`.spec_file`) name one directly; :func:`resolve` picks among them
(:mod:`.resolver`). No sympy here.
"""
from .resolver import parse_sets, resolve
from .spec_file import load_spec_file

__all__ = ["load_spec_file", "parse_sets", "resolve"]

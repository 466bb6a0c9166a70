"""Jupyter display of a derivation. :class:`Shown` is a :class:`Derivation` (same fields,
same methods) that also has ``_repr_markdown_`` and ``_repr_latex_``; the data module
itself imports no renderer, so the display lives here, in the render layer.
:meth:`symcalc.model.Model.derive` and ``.closed_form`` return one."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ..derivations.derivation import Derivation
from .latex import derivation_latex
from .markdown import derivation_markdown


@dataclass(frozen=True, repr=False)  # keeps Derivation's one-line repr
class Shown(Derivation):
    """A derivation that displays itself (Jupyter picks one of the two) in ``lang``."""

    lang: str = "en"

    def _repr_markdown_(self) -> str:
        return derivation_markdown(self, lang=self.lang)

    def _repr_latex_(self) -> str:
        return derivation_latex(self, jupyter=True, lang=self.lang)


def shown(d: Derivation, lang: str = "en") -> Shown:
    """``d`` as a :class:`Shown` in ``lang`` (``d`` itself when it already is one in it)."""
    if isinstance(d, Shown):
        return d if d.lang == lang else replace(d, lang=lang)
    return Shown(**{f.name: getattr(d, f.name) for f in fields(Derivation)}, lang=lang)

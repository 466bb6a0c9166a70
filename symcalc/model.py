"""A model in a notebook: ``symcalc.model("mistral-7b")`` displays its dimensions and
totals, and ``.derive("params.total")`` returns a derivation that displays itself.

Both objects implement ``_repr_markdown_`` and ``_repr_latex_`` (Jupyter picks one); the
formatting is done by :mod:`symcalc.render`, imported only when something is displayed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .algebra.options import Options
from .algebra.spec import Spec


@dataclass(frozen=True)
class Model:
    spec: Spec
    options: Options = Options()
    lang: str = "en"  # the language of its display and derivations (en, ru, zh)

    @property
    def name(self) -> str:
        return self.spec.name

    def report(self) -> dict:
        from .report import report

        return report(self.spec, self.options)

    def derive(self, quantity: str = "params.total"):
        """The worked example of ``quantity``: a :class:`~symcalc.derivations.derivation.Derivation`
        that displays itself (:class:`~symcalc.render.display.Shown`)."""
        from .derivations.derive import derive
        from .render.display import shown

        return shown(derive(self.spec, quantity, self.options), self.lang)

    def closed_form(self, assume: str = "kaplan"):
        from .derivations.derive_forms import derive_closed_form
        from .render.display import shown

        return shown(derive_closed_form(self.spec, assume, "params.total", self.options), self.lang)

    def _repr_markdown_(self) -> str:
        from .render.model import model_markdown

        return model_markdown(self)

    def _repr_latex_(self) -> str:
        from .render.model import model_latex

        return model_latex(self)


def model(name: str, sets: Iterable[str] = (), lang: str | None = None, **options) -> Model:
    """A preset name, config.json or spec file, with ``--set``-style overrides
    (``sets=["L=48"]``), the language it is shown in (``lang="ru"``) and workload options
    (``batch=8, seq_len=4096``)."""
    from .i18n import check_lang
    from .inputs.resolver import resolve

    return Model(resolve(name, sets), Options(**options).checked(), check_lang(lang, "lang"))

"""The model types transformers builds with a language-model head, and the ones symcalc refuses.

``symcalc/inputs/model_types.toml`` maps transformers' causal-LM, masked-LM and
sequence-to-sequence model types to the class each mapping builds and, for each causal-LM type
without a family file, the part
of its architecture symcalc cannot express yet. A config.json of such a type is refused in one
line naming that part (:func:`refusal`); a type with a family file is read by it, whatever the
list says. docs/families.md's status table is generated from the same data
(docs/families_table.py).
"""
from __future__ import annotations

import functools
from typing import Any

from ..errors import SymcalcError

DOCS = "docs/families.md"


@functools.lru_cache(maxsize=None)
def model_types() -> dict[str, Any]:
    """model_types.toml as read: ``causal_lm``, ``masked_lm``, ``seq2seq_lm`` (model type ->
    the class transformers' mapping builds), ``refused`` (model type -> the part symcalc
    cannot express) and ``transformers`` (the version the mappings are from)."""
    import tomllib
    from importlib import resources

    text = resources.files("symcalc.inputs").joinpath("model_types.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    for key in ("causal_lm", "masked_lm", "seq2seq_lm"):
        items = data.get(key)
        if not isinstance(items, dict) or not all(isinstance(x, str) for x in items.values()):
            raise SymcalcError(f"model_types.toml: {key}", "must map model types to a class name")
    refused = data.get("refused", {})
    if not isinstance(refused, dict) or not all(isinstance(v, str) and v.strip()
                                                for v in refused.values()):
        raise SymcalcError("model_types.toml: refused", "must map model types to a part (text)")
    unknown = sorted(set(refused) - set(data["causal_lm"]))
    if unknown:
        raise SymcalcError(f"model_types.toml: refused.{unknown[0]}",
                           "is not a causal-LM model type of [causal_lm]")
    return data


def refusal(model_type: str, known: tuple[str, ...]) -> str | None:
    """The part symcalc cannot express for ``model_type``, or None when it has a family file
    (``known``) or is not a refused type."""
    if model_type in known:
        return None
    return model_types().get("refused", {}).get(model_type)


def refuse(model_type: str, part: str) -> SymcalcError:
    """The one-line error for a config.json of a refused type."""
    return SymcalcError("model_type", f"{model_type!r} is not read yet: symcalc cannot express "
                                      f"{part}; see {DOCS}")

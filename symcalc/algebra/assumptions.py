"""Named assumption sets for closed forms.

An assumption set changes the architecture (drop biases, norms, embeddings; make the FFN
plain) and relates sizes (n_h d_h = d, n_kv = n_h, d_ff = 4d). Applying one to a spec's
expression gives the textbook closed forms: ``kaplan`` turns GPT-2-, BERT- and Llama-shaped
totals into exactly ``12*L*d**2``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..records import replace

import sympy

from ..errors import SymcalcError
from .spec import Spec
from .symbols import d, d_ff, d_h, n_h, n_kv


@dataclass(frozen=True)
class Assumption:
    name: str
    description: str
    source: str
    relations: dict = field(default_factory=dict)  # symbol -> expression in other symbols
    structure: dict = field(default_factory=dict)  # Spec field -> value

    def apply_spec(self, spec: Spec) -> Spec:
        changes = {k: v for k, v in self.structure.items()}
        if changes.get("token_embedding") is False and spec.head == "tied":
            changes.setdefault("head", "none")
        return replace(spec, **changes) if changes else spec

    def apply_expr(self, expr: sympy.Expr) -> sympy.Expr:
        return sympy.expand(expr.xreplace(self.relations)) if self.relations else expr

    def describe_relations(self) -> list[str]:
        return [f"{k} = {v}" for k, v in self.relations.items()]


TEXTBOOK_RELATIONS = {d_h: d / n_h, n_kv: n_h, d_ff: 4 * d}

ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in (
        Assumption("none", "the architecture as it is, sizes as symbols", "", {}, {}),
        Assumption("textbook", "heads together as wide as the model, one K/V head per query "
                   "head (multi-head), an FFN four times as wide; the rest of the architecture "
                   "kept (biases, norms, embeddings)", "vaswani2017",
                   TEXTBOOK_RELATIONS, {}),
        Assumption("kaplan", "Kaplan et al. 2020: heads together as wide as the model, one K/V "
                   "head per query head, a plain FFN four times as wide, no biases; norms, "
                   "embeddings and head left out (non-embedding N)", "kaplan2020",
                   TEXTBOOK_RELATIONS,
                   {"ffn": "plain", "ffn_bias": False, "attention_bias": "none",
                    "attention_output": True, "norm": "none", "token_embedding": False,
                    "position": "none", "T": None, "head": "none", "head_bias": False,
                    "pooler": False, "mlm_head": False, "E": None, "k": None,
                    # the biases, embeddings and heads of issue 21's masked-LM encoders
                    "ffn_down_bias": False, "P_2d": None, "V_ent": None, "d_ent": None,
                    "ent_head": False, "ent_untied": False, "contact_head": False,
                    "d_ph": None}),
    )
}


def assumption(name: str) -> Assumption:
    if name not in ASSUMPTIONS:
        raise SymcalcError("--assume", f"must be one of {', '.join(ASSUMPTIONS)} (got {name!r})")
    return ASSUMPTIONS[name]

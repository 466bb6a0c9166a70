"""Which paper a component of *this* model comes from.

The engine's components (:mod:`symcalc.algebra.components`) carry one source key each, chosen
for the general case: every norm points at LayerNorm, K and V at grouped-query attention, a
learned position table at BERT, a head weight at weight tying. A derivation shows a single
model, so it cites what that model actually uses: RMSNorm for an RMSNorm model, Vaswani et al.
for the K/V of multi-head attention, Shazeer 2019 for multi-query attention, GPT-2 for the
position table of a GPT-2-style decoder, and the implementation's own output layer for an untied head.
"""
from __future__ import annotations

from ..algebra.spec import Spec

NORM_BY_KIND = {"rmsnorm": "zhang2019", "layernorm": "ba2016", "layernorm_nobias": "raffel2020"}
# sources the engine uses for "some norm" and that a model-specific norm source replaces
GENERIC_NORM = ("ba2016", "radford2019")


def _is_norm(last: str, parts: list[str]) -> bool:
    return "norm" in parts[:-1] or last in ("final_norm", "embedding_norm") or (
        last.startswith("norm") and len(parts) > 1)


def attention_kv_source(spec: Spec) -> str:
    """K and V projections: one K/V head per query head (Vaswani), one shared (Shazeer 2019),
    or groups (Ainslie et al.)."""
    n_kv = spec.n_kv if spec.n_kv is not None else spec.n_h
    if n_kv == spec.n_h:
        return "vaswani2017"
    if n_kv == 1:
        return "shazeer2019"
    return "ainslie2023"


def position_source(spec: Spec) -> str:
    """A learned position table: BERT's for an encoder, GPT-2's for a decoder."""
    return {"encoder": "devlin2019", "decoder": "radford2019"}.get(spec.family, "vaswani2017")


def component_source(spec: Spec, path: str, source: str) -> str:
    """The source key to cite for the breakdown leaf ``path`` of ``spec`` (``source`` is the
    engine's general key, kept when nothing more specific applies)."""
    parts = path.split("/")
    last = parts[-1]
    if _is_norm(last, parts) and source in GENERIC_NORM and spec.norm in NORM_BY_KIND:
        return NORM_BY_KIND[spec.norm]
    if last in ("k", "v") and len(parts) > 1 and parts[-2] in ("attention", "cross_attention") \
            and source == "ainslie2023":
        return attention_kv_source(spec)
    if "linear_attention" in parts and spec.linear_attn in LINEAR_ATTN_SOURCES:
        return LINEAR_ATTN_SOURCES[spec.linear_attn]  # not Gated DeltaNet's paper
    if spec.B_l is not None and path in ("encoder/layer/attention/scores",
                                         "encoder/layer/attention/context"):
        return "guo2022longt5"  # LongT5's local attention in blocks (flops.self_pairs)
    if path.endswith("embedding/position") and source == "devlin2019":
        return position_source(spec)
    if (path.endswith("head/weight") or path == "head") and source == "press2017" \
            and spec.head != "tied":
        return "hf_transformers"  # an lm_head Linear(d, V) of its own: nothing is shared
    return source


TIED_HEAD_SOURCE = "press2017"
# a linear-attention mixer whose every part comes from one paper of its own
LINEAR_ATTN_SOURCES = {"mlstm": "beck2024xlstm"}

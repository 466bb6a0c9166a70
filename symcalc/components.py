"""Parameter counts of every transformer component, as sympy expressions.

Each function returns a list of :class:`Part` (a name relative to the component, the
expression and the key of its source in :mod:`symcalc.sources`). Structural switches appear
as 0/1 indicator symbols (``sw_*``); see :mod:`symcalc.symbols`. Nothing here formats
anything.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from .symbols import SWITCHES, E, P, R, T, V, d, d_ff, d_h, n_h, n_kv


def sw(name: str) -> sympy.Symbol:
    return SWITCHES["sw_" + name].symbol


@dataclass(frozen=True)
class Part:
    name: str
    expr: sympy.Expr
    source: str


def linear(n_in, n_out, bias) -> sympy.Expr:
    """A dense layer: an n_in x n_out weight, plus n_out biases when ``bias`` is 1."""
    return n_in * n_out + bias * n_out


def attention_params() -> list[Part]:
    """Q, K, V, O projections with n_h query heads and n_kv key/value heads of width d_h.

    Q maps d -> n_h*d_h and O maps n_h*d_h -> d; K and V map d -> n_kv*d_h, so n_kv = n_h is
    multi-head, 1 < n_kv < n_h grouped-query and n_kv = 1 multi-query attention. d_h need not
    equal d/n_h (it is an explicit head_dim in Llama/Mistral configs and d_kv in T5).
    """
    return [
        Part("q", linear(d, n_h * d_h, sw("bias_q")), "vaswani2017"),
        Part("k", linear(d, n_kv * d_h, sw("bias_k")), "ainslie2023"),
        Part("v", linear(d, n_kv * d_h, sw("bias_v")), "ainslie2023"),
        Part("o", sw("attn_out") * linear(n_h * d_h, d, sw("bias_o")), "vaswani2017"),
    ]


def ffn_params() -> list[Part]:
    """Position-wise FFN, plain (up, down) or gated (gate, up, down), optionally a mixture of
    E experts with a bias-free d x E router. For a dense FFN E is substituted by 1."""
    bias = sw("ffn_bias")
    return [
        Part("router", sw("router") * d * E, "shazeer2017"),
        Part("gate", E * sw("gated") * linear(d, d_ff, bias), "shazeer2020"),
        Part("up", E * linear(d, d_ff, bias), "vaswani2017"),
        Part("down", E * linear(d_ff, d, bias), "vaswani2017"),
    ]


NORM_SOURCE = "ba2016"


def norm_params() -> sympy.Expr:
    """One LayerNorm (scale and shift: 2d), scale-only LayerNorm as in T5 (d) or RMSNorm (d)."""
    return sw("norm_w") * d + sw("norm_b") * d


def embedding_params() -> list[Part]:
    """Token table V x d, learned position table P x d, token-type table T x d (BERT)."""
    return [
        Part("token", sw("tok_emb") * V * d, "vaswani2017"),
        Part("position", sw("pos_emb") * P * d, "devlin2019"),
        Part("token_type", sw("type_emb") * T * d, "devlin2019"),
    ]


def relative_bias_params() -> sympy.Expr:
    """T5's relative-attention bias: R buckets x n_h scalars, held by the first layer of a stack."""
    return sw("rel_bias") * R * n_h


def head_params() -> list[Part]:
    """Output head d -> V: its own V x d weight only when untied (a tied head reuses the token
    table), plus an optional V bias."""
    return [
        Part("weight", sw("head") * sw("head_untied") * V * d, "press2017"),
        Part("bias", sw("head") * sw("head_bias") * V, "vaswani2017"),
    ]


def pooler_params() -> sympy.Expr:
    """BERT pooler: a d x d dense layer with bias applied to the first token."""
    return sw("pooler") * linear(d, d, 1)


def mlm_transform_params() -> sympy.Expr:
    """BERT masked-LM head transform: dense d x d with bias, then LayerNorm (2d). Its decoder
    weight is tied to the token table; its V-bias is the head bias."""
    return sw("mlm") * (linear(d, d, 1) + norm_params())

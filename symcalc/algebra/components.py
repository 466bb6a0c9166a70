"""Parameter counts of every transformer component, as sympy expressions.

Each function returns a list of :class:`Part` (a name relative to the component, the
expression and the key of its source in :mod:`symcalc.derivations.sources`). Structural switches appear
as 0/1 indicator symbols (``sw_*``); see :mod:`symcalc.algebra.symbols`. Nothing here formats
anything.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from .symbols import (SWITCHES, E, E_s, P, R, T, V, d, d_emb, d_ff, d_h, d_moe, d_nope, d_rope,
                      d_sh, d_v, n_h, n_kv, r_kv, r_q)


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


def qk_width():
    """Width of one query/key head: d_h, or d_nope + d_rope under MLA."""
    return d_h + sw("mla") * (d_nope + d_rope - d_h)


def value_width():
    """Width of one value head: d_h, or d_v under MLA."""
    return d_h + sw("mla") * (d_v - d_h)


def attention_params() -> list[Part]:
    """Q, K, V, O projections with n_h query heads and n_kv key/value heads of width d_h.

    Q maps d -> n_h*d_h and O maps n_h*d_h -> d; K and V map d -> n_kv*d_h, so n_kv = n_h is
    multi-head, 1 < n_kv < n_h grouped-query and n_kv = 1 multi-query attention. d_h need not
    equal d/n_h (it is an explicit head_dim in Llama/Mistral configs and d_kv in T5).

    Under multi-head latent attention (``sw_mla``, DeepSeek-V2 Sec. 2.1) keys and values come
    from one latent of rank r_kv: a down-projection d -> r_kv + d_rope (the extra d_rope is a
    rotary key shared by all heads), a norm on the latent, and an up-projection
    r_kv -> n_h (d_nope + d_v). Queries go d -> n_h (d_nope + d_rope) directly, or through a
    rank r_q with its own norm (``sw_q_lora``). Per-head q/k norms (Qwen3, Gemma-3: one d_h
    vector each; OLMo-2, Cohere: over all heads; Phi's LayerNorms add as many biases) and
    GPT-OSS's sink logits (one per head) are weights.
    """
    mla, lora, std = sw("mla"), sw("q_lora"), 1 - sw("mla")
    q_out = n_h * (d_nope + d_rope)
    return [
        Part("q", std * linear(d, n_h * d_h, sw("bias_q"))
             + mla * (1 - lora) * linear(d, q_out, sw("bias_q")), "vaswani2017"),
        Part("q_a", mla * lora * linear(d, r_q, sw("bias_q")), "deepseek2024"),
        Part("q_norm", mla * lora * r_q, "deepseek2024"),
        Part("q_b", mla * lora * r_q * q_out, "deepseek2024"),
        Part("k", std * linear(d, n_kv * d_h, sw("bias_k")), "ainslie2023"),
        Part("v", std * linear(d, n_kv * d_h, sw("bias_v")), "ainslie2023"),
        Part("kv_a", mla * linear(d, r_kv + d_rope, sw("bias_k")), "deepseek2024"),
        Part("kv_norm", mla * r_kv, "deepseek2024"),
        Part("kv_b", mla * r_kv * n_h * (d_nope + d_v), "deepseek2024"),
        Part("q_head_norm", (1 + sw("qk_bias")) * (sw("qk_head") * d_h + sw("qk_all") * n_h * d_h),
             "henry2020"),
        Part("k_head_norm", (1 + sw("qk_bias")) * (sw("qk_head") * d_h + sw("qk_all") * n_kv * d_h),
             "henry2020"),
        Part("sinks", sw("sinks") * n_h, "openai2025"),
        Part("o", sw("attn_out") * linear(n_h * value_width(), d, sw("bias_o")), "vaswani2017"),
    ]


def ffn_params() -> list[Part]:
    """Dense position-wise FFN, plain (up, down) or gated (gate, up, down), of width d_ff."""
    bias = sw("ffn_bias")
    return [
        Part("gate", sw("gated") * linear(d, d_ff, bias), "shazeer2020"),
        Part("up", linear(d, d_ff, bias), "vaswani2017"),
        Part("down", linear(d_ff, d, bias), "vaswani2017"),
    ]


def expert_width():
    """Width of a routed expert: d_moe where the config gives one, else d_ff (Mixtral)."""
    return d_ff + sw("moe_width") * (d_moe - d_ff)


def shared_width():
    """Width of a shared expert: d_sh where given, else the routed experts' width."""
    return expert_width() + sw("sh_width") * (d_sh - expert_width())


def moe_params() -> list[Part]:
    """A mixture-of-experts FFN: a d x E router (GPT-OSS: with a bias), E experts of width
    d_moe (GPT-OSS: with biases), and E_s always-on shared experts of width d_sh
    (DeepSeekMoE), which Qwen2-MoE scales by a sigmoid gate d -> 1."""
    moe, gated, bias = sw("router"), sw("gated"), sw("ffn_bias")
    shared = moe * sw("shared") * E_s
    d_moe, d_sh = expert_width(), shared_width()
    return [
        Part("router", moe * d * E, "shazeer2017"),
        Part("router_bias", moe * sw("router_bias") * E, "openai2025"),
        Part("experts/gate", moe * E * gated * d * d_moe, "shazeer2020"),
        Part("experts/up", moe * E * d * d_moe, "fedus2022"),
        Part("experts/down", moe * E * d_moe * d, "fedus2022"),
        Part("experts/bias", moe * sw("expert_bias") * E * ((1 + gated) * d_moe + d), "openai2025"),
        Part("shared/gate", shared * gated * linear(d, d_sh, bias), "dai2024"),
        Part("shared/up", shared * linear(d, d_sh, bias), "dai2024"),
        Part("shared/down", shared * linear(d_sh, d, bias), "dai2024"),
        Part("shared_gate", moe * sw("shared_gate") * d, "qwen2024moe"),
    ]


NORM_SOURCE = "ba2016"


def norm_params() -> sympy.Expr:
    """One LayerNorm (scale and shift: 2d), scale-only LayerNorm as in T5 (d) or RMSNorm (d)."""
    return sw("norm_w") * d + sw("norm_b") * d


def embedding_width():
    """Width of the token table and the tied head: d, or d_emb where OPT projects it."""
    return d + sw("proj_emb") * (d_emb - d)


def embedding_params() -> list[Part]:
    """Token table V x d (V x d_emb with OPT's projections d_emb -> d in and d -> d_emb out,
    no bias), learned position table P x d, token-type table T x d (BERT)."""
    return [
        Part("token", sw("tok_emb") * V * embedding_width(), "vaswani2017"),
        Part("project_in", sw("proj_emb") * d_emb * d, "zhang2022"),
        Part("project_out", sw("proj_emb") * d * d_emb, "zhang2022"),
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
        Part("weight", sw("head") * sw("head_untied") * V * embedding_width(), "press2017"),
        Part("bias", sw("head") * sw("head_bias") * V, "vaswani2017"),
    ]


def pooler_params() -> sympy.Expr:
    """BERT pooler: a d x d dense layer with bias applied to the first token."""
    return sw("pooler") * linear(d, d, 1)


def mlm_transform_params() -> sympy.Expr:
    """BERT masked-LM head transform: dense d x d with bias, then LayerNorm (2d). Its decoder
    weight is tied to the token table; its V-bias is the head bias."""
    return sw("mlm") * (linear(d, d, 1) + norm_params())

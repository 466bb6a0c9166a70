"""Parameter accounting: a spec's components composed into a :class:`Breakdown`.

Two model shapes cover the seven families:

* ``single``: one stack (encoder-only BERT, decoder-only GPT/Llama/Mistral/Qwen/Mixtral, and
  T5's encoder alone): embeddings, ``L`` layers, final norm, head, BERT's pooler and
  masked-LM transform.
* ``encoder-decoder`` (T5, BART): a shared token table, an encoder of ``L`` layers and a
  decoder of ``L_dec`` layers with cross-attention, each stack with its relative-attention
  bias, position table, embedding norm and final norm (:data:`PER_STACK`), and the head.

:func:`shape_params` builds the expression with every switch as a symbol, once per shape;
:func:`params` substitutes one spec's switches and drops the parts that are off.
"""
from __future__ import annotations

from functools import lru_cache

import sympy

from . import components as c
from .breakdown import Breakdown, Leaf
from .spec import Spec, switch_values
from .symbols import (ALL, SIZES, L, L_attn, L_conv, L_dec, L_dense, L_ffn, L_idx, L_kv_shared,
                      L_kv_shared_local, L_lin, L_local, L_ssm, S_k, S_kn, S_q, S_v, d_ff,
                      d_ff_sum, d_h, d_hg, n_kv, n_kvg, S_o, A_l, A_g, L_attn_w, L_ffn_w, d, d_ai,
                      L_csa, L_hca)

EMBEDDING_PATHS = ("embedding/token", "embedding/position", "embedding/token_type", "embedding/side",
                   "embedding/per_layer", "embedding/box", "embedding/entity", "head/weight",
                   "ngram_ple/tables")


def _parts(prefix: str, parts: list[c.Part]) -> list[Leaf]:
    return [Leaf(f"{prefix}/{p.name}", p.expr, p.source) for p in parts]


LAYER_NORMS = (("attention", "norm_attn_in"), ("attention_out", "norm_attn_out"),
               ("ffn", "norm_ffn_in"), ("ffn_out", "norm_ffn_out"))


# The token mixers of a hybrid stack besides softmax attention: group -> (layer count, parts).
MIXERS = {"linear_attention": (L_lin, c.linear_attention_params),
          "ssm": (L_ssm, c.ssm_params),
          "short_conv": (L_conv, c.short_conv_params)}
# per-layer view of one mixer of each kind (see :func:`shape_layers`)
MIXER_VIEWS = {"linear_mixer": "linear_attention", "ssm_mixer": "ssm", "conv_mixer": "short_conv"}
# per-layer view of a global layer's attention where the global layers have a shape of their
# own (sw_gshape: Gemma 4, MiMo-V2-Flash); the layer view then holds a sliding layer's
GLOBAL_VIEW = "global_attention"
# Gemma 3n's additions to every layer of a decoder stack: group -> parts
LAYER_EXTRAS = {"altup": c.altup_params, "laurel": c.laurel_params,
                "per_layer_input": c.per_layer_input_params, "adapter": c.adapter_params}
# attention parts that only the layers computing their own keys and values hold (Gemma 3n's
# KV-sharing layers have no k/v projections and no k norm)
KV_PATHS = frozenset(f"attention/{p}" for p in ("k", "v", "kv_a", "kv_norm", "kv_b", "k_head_norm"))


def layer_params(cross_attention: bool = False, hybrid: bool = False) -> Breakdown:
    """One layer: self-attention, optional cross-attention, the norms each block keeps (before
    and after attention and FFN; Gemma-2 keeps four, a parallel block one), the dense FFN and
    the MoE FFN; with ``hybrid`` (a decoder stack) also one mixer of each other kind (linear
    attention, Mamba, short convolution). Which mixer and FFN a layer has, and how many
    layers of each kind a stack holds, is :func:`group_count`'s business: here each appears
    once. A decoder stack's layers may also hold Gemma 3n's AltUp, LAuReL and per-layer input
    parts (:data:`LAYER_EXTRAS`, in every layer)."""
    norm = c.norm_params()
    leaves = _parts("attention", c.attention_params(decoder=hybrid))
    if hybrid:  # a decoder stack: Beam's gate biases, DeepSeek Sparse Attention's indexer
        leaves.append(Leaf("attention/gate_bias", (1 - c.sw("mla")) * c.sw("attn_gate")
                           * c.sw("gate_hbias") * SIZES["n_h"].symbol, "beam2026"))
        leaves += _parts("attention/indexer", c.indexer_params())
        leaves += _parts("attention", c.compressor_params())  # DeepSeek-V4's KV compressors
        for group, (_, parts) in MIXERS.items():
            leaves += _parts(group, parts())
        for group, parts in LAYER_EXTRAS.items():
            leaves += _parts(group, parts())
        leaves += _parts("shared_block", c.shared_block_params())
        # Doge: the two learned scales of the residual stream in every layer
        # (ZAYA: scales and biases of the residual and of the sublayer's output, twice: 8d)
        leaves.append(Leaf("norm/residual_scales", (2 * c.sw("rscale") + 8 * c.sw("raff"))
                           * SIZES["d"].symbol, "shi2024doge"))
        leaves += _parts("hyper_connections", c.hyper_connection_params())
    # a decoder stack's own cross-attention (sw_cross: BART-shaped decoders run alone, its
    # weights unused) or an encoder-decoder's decoder layer, which runs it
    unused = c.sw("cross") if hybrid else 1
    if cross_attention or hybrid:
        leaves += [Leaf(f"cross_attention/{p.name}", unused * p.expr, p.source)
                   for p in c.attention_params()]
    for name, switch in LAYER_NORMS[:2]:
        leaves.append(Leaf(f"norm/{name}", c.sw(switch) * norm, c.NORM_SOURCE))
    if hybrid:  # A.X-K2: the norm before attention gated by a low-rank MLP (fc1, fc2)
        leaves.append(Leaf("norm/attention_gate", c.sw("gnorm") * 2 * SIZES["d"].symbol
                           * SIZES["r_g"].symbol, "skt2026axk2"))
    if cross_attention or hybrid:  # an encoder-decoder's cross-attention has the norms its
        # self-attention has (T5Gemma: before and after; T5, BART: one)
        count = unused if hybrid else c.sw("norm_attn_in") + c.sw("norm_attn_out")
        leaves.append(Leaf("norm/cross_attention", count * norm, c.NORM_SOURCE))
    for name, switch in LAYER_NORMS[2:]:
        leaves.append(Leaf(f"norm/{name}", c.sw(switch) * norm, c.NORM_SOURCE))
    leaves += _parts("ffn", c.ffn_params())
    leaves += _parts("moe", c.moe_params())
    if not hybrid:  # an encoder-decoder's stack: the decoder-only parts off (c.DECODER_ONLY)
        off = c.decoder_only_off()
        leaves = [Leaf(l.path, sympy.sympify(l.value).xreplace(off), l.source) for l in leaves]
    return Breakdown(leaves)


def dense_count(ffn_layers):
    """Layers of a stack with a dense FFN: all ``ffn_layers`` (the layers with an FFN), or
    L_dense of an MoE stack."""
    moe = c.sw("router")
    return (1 - moe) * ffn_layers + moe * L_dense


def moe_count(ffn_layers):
    """Layers of a stack with an MoE FFN: none, or those with an FFN that are not dense."""
    return c.sw("router") * (ffn_layers - L_dense)


FFN_NORMS = ("norm/ffn", "norm/ffn_out")


def group_count(path: str, layers, hybrid: bool = False, params: bool = False):
    """How many layers of a stack of ``layers`` hold the layer part at ``path``. In a hybrid
    (decoder) stack attention is in L_attn layers, each other mixer in its own count, and the
    FFN, with its norms, in L_ffn layers (each L, or 0 for the other mixers, unless the
    spec says otherwise: :func:`structure`); the key/value parts of attention in all but the
    L_kv_shared layers that reuse an earlier layer's (Gemma 3n). With ``params`` the copies
    holding the weights: L_attn_w attention and L_ffn_w FFN blocks, which Zamba's layers
    share (B_sh copies; else L_attn and L_ffn)."""
    group = path.split("/", 1)[0]
    attn = L_attn_w if params and hybrid else L_attn
    ffn_layers = (L_ffn_w if params else L_ffn) if hybrid else layers
    if group == "ffn":
        return dense_count(ffn_layers)
    if group == "moe":
        return moe_count(ffn_layers)
    if hybrid:
        if path.startswith("attention/indexer/"):  # GLM-5's shared layers run none
            return L_idx
        if path.startswith("attention/csa/"):  # DeepSeek-V4: the CSA layers' compressor
            return L_csa
        if path.startswith("attention/hca/"):  # and the HCA layers'
            return L_hca
        if path == "attention/dyn_convs":  # Inkling 2: the global layers only
            return attn - L_local
        if group in ("attention", "softmax"):  # softmax: the attention core's non-matmul work
            if path == "attention/sinks":  # MiMo-V2-Flash: on the sliding layers only
                return attn - c.sw("sinks_local") * (attn - L_local)
            return attn - L_kv_shared if path in KV_PATHS else attn
        if group in MIXERS:
            return MIXERS[group][0]
        if path in FFN_NORMS:
            return ffn_layers
        if group == "shared_block":  # Zamba: the input norm per copy, projection and adapters per use
            return attn if path == "shared_block/norm" else L_attn
        if path == "norm/residual_scales":  # Doge, Dory: every layer, once per distinct layer
            return attn
        if params and path == "norm/attention":  # ALBERT: the layers that reuse a held layer
            # (B_sh without Zamba's blocks) hold its attention norm once
            return layers - (1 - c.sw("shblk")) * (L_attn - attn)
    return layers


# attention parts whose width follows the head width (and key/value heads): path -> (the
# per-layer width, the sum of that width over the layers holding the part; spec.toml's [values])
# (the key and value widths by their heads; the values' sums hold MiMo-V2-Flash's d_v)
GLOBAL_SHAPE = {"attention/" + p: (w, total, x) for p, w, total, x in (
    ("q", d_h, S_q, d_h), ("q_gate", d_h, S_q, d_h), ("o", d_h, S_o, d_h),
    ("q_head_norm", d_h, S_q, d_h), ("scores", d_h, S_q, d_h), ("context", d_h, S_o, d_h),
    ("k", n_kv * d_h, S_k, n_kv), ("v", n_kv * d_h, S_v, n_kv),
    ("k_head_norm", d_h, S_kn, d_h),
    # Inkling's convolutions on the keys and values (n_kv d_h channels each; the layers' own
    # keys and values: no KV sharing beside them) and on the two d-wide outputs
    ("short_convs", n_kv * d_h, S_k, n_kv))}
VALUE_PATHS = ("attention/v", "attention/o")


def global_counts(path: str):
    """(layers at the sliding layers' shape, layers at the global layers' shape) of an
    attention part of :data:`GLOBAL_SHAPE` in a stack with ``sw_gshape`` (the global ones
    hold no v projection with ``sw_gkv``); per-rank splits take each shape on its own."""
    count = group_count(path, L, hybrid=True)
    glob = L_attn - L_local
    if path in KV_PATHS:
        glob -= L_kv_shared - L_kv_shared_local
    held = glob * (1 - c.sw("gkv")) if path == "attention/v" else glob
    return count - glob, held


def at_layer_shape(path: str, expr, glob: bool):
    """``expr`` (one layer's part at ``path``, or a width of it) at the sliding layers' shape
    or (``glob``) the global layers': head width d_hg, n_kvg key/value heads; the value
    projection and the output's input at the layer's value width (A_l - d_h, A_g - d_hg:
    d_v where MiMo-V2-Flash gives one)."""
    expr = sympy.sympify(expr)
    if path in VALUE_PATHS:
        expr = expr.xreplace({d_h: (A_g - d_hg) if glob else (A_l - d_h)})
    return expr.xreplace({d_h: d_hg, n_kv: n_kvg}) if glob else expr


def global_extra(path: str, value, count):
    """What the global layers' own attention shape (``sw_gshape``: head width d_hg, n_kvg
    key/value heads; Gemma 4's global_head_dim and num_global_key_value_heads, and with
    ``attention_k_eq_v`` no v projection: transformers' Gemma4TextAttention) changes in an
    attention part's stack total of ``count`` layers of ``value`` each: the part is linear in
    its width (a bias of the output aside), so the total swaps the count times the width for
    the width summed over the layers (S_q, S_k, S_v, S_kn; multi-head latent attention and q/k norms over all heads are
    refused beside it)."""
    if path not in GLOBAL_SHAPE:
        return 0
    width, total, x = GLOBAL_SHAPE[path]
    value = sympy.sympify(value).xreplace({c.sw("mla"): 0, c.sw("qk_all"): 0})
    per_width = sympy.cancel(sympy.diff(value, x) / sympy.diff(width, x))
    return c.sw("gshape") * (total - count * width) * per_width


def layer_count(path: str, layers, hybrid: bool = False, params: bool = False):
    """:func:`group_count`, less the first layer where it lacks the part: ModernBERT's first
    layer has no norm before attention (``sw_first_attn_norm_off``; transformers'
    ModernBertEncoderLayer and ModernBertDecoderLayer build nn.Identity there)."""
    count = group_count(path, layers, hybrid, params)
    if path == "norm/attention":
        count -= c.sw("first_attn_norm_off")
    return count


def stack_value(path: str, value, layers, hybrid: bool = False, params: bool = False):
    """One layer part's ``value`` summed over the layers of a stack that hold it
    (:func:`group_count`; ``params``: the copies holding its weights). A dense FFN whose width differs by layer (``sw_ff_sum``, Gemma 3n's
    MatFormer slices) sums its widths instead: every FFN part is linear in d_ff, so the stack
    total swaps the L_ffn d_ff of the uniform stack for d_ff_sum."""
    count = layer_count(path, layers, hybrid, params)
    total = count * value
    if hybrid and not params and path == "attention/short_convs":
        # Inkling 2's global layers convolve their keys and values elementwise with per-token
        # weights (sw_dcv): no conv1d over n_kvg d_hg channels there (its weight_proj FLOPs are
        # attention/dyn_convs)
        kv = (SIZES["n_kv"].symbol * sympy.diff(value, SIZES["n_kv"].symbol)).xreplace(
            {SIZES["n_kv"].symbol: n_kvg, d_h: d_hg})
        total -= c.sw("dcv") * (L_attn - L_local) * kv
    if hybrid and path == "moe/router_scales":  # ZAYA: the first layer's router has no state in
        total -= c.sw("router") * c.sw("rmlp") * SIZES["d_r"].symbol
    if path == "attention/o":  # GPT-NeoX-Japanese: the output's bias in the last layer only
        total += c.sw("last_o_bias") * sympy.diff(value, c.sw("bias_o"))
    if hybrid and path.split("/", 1)[0] == "ffn":
        total += c.sw("ff_sum") * (d_ff_sum - count * d_ff) * sympy.diff(value, d_ff)
    if hybrid:
        total += global_extra(path, value, count)
        total += window_extra(path, value)
    return total


def _window_off():
    """Switches off beside the sliding layers' own MLA shape (the spec refuses them with it);
    the part's own switches stay, so that its row keeps them as guards."""
    return {x: 0 for x in (c.sw("gshape"), c.sw("diff"), c.sw("moa"), c.sw("shblk"),
                           c.sw("qk_all"), c.sw("qk_head"), c.sw("sinks"), c.sw("mla_gate"),
                           c.sw("gkv"), c.sw("dmask"))}


def window_shape():
    """The substitution that puts an attention part at the sliding layers' own MLA shape
    (``sw_mlaw``, dots.llm3's per_layer_config: n_hw heads, ranks r_qw and r_kvw, head widths
    d_nw, d_rw, d_vw)."""
    S = SIZES
    return {S["n_h"].symbol: S["n_hw"].symbol, S["n_kv"].symbol: S["n_hw"].symbol,
            S["r_q"].symbol: S["r_qw"].symbol, S["r_kv"].symbol: S["r_kvw"].symbol,
            S["d_nope"].symbol: S["d_nw"].symbol, S["d_rope"].symbol: S["d_rw"].symbol,
            S["d_v"].symbol: S["d_vw"].symbol, d_h: S["d_nw"].symbol + S["d_rw"].symbol}


# the parts of multi-head latent attention the sliding layers hold at their own shape
# (sw_mlaw: dots.llm3; the indexer runs in none of them), and the softmax's work
WINDOW_PATHS = frozenset(["softmax"] + [f"attention/{p}" for p in (
    "q_a", "q_norm", "q_b", "kv_a", "kv_norm", "kv_b", "o", "q_gate", "k_rope_norm", "scores",
    "context")])


WINDOW_OFF: dict = {}


def windowed(path: str) -> bool:
    return path in WINDOW_PATHS


def window_extra(path: str, value):
    """What the sliding layers' own MLA shape (``sw_mlaw``) changes in an attention part's
    stack total: its L_local sliding layers hold it at :func:`window_shape` (every sliding
    layer holds every attention part: the spec refuses KV sharing beside it)."""
    if not windowed(path):
        return 0
    value = sympy.sympify(value).xreplace(WINDOW_OFF)  # only beside MLA, nothing else
    return c.sw("mlaw") * L_local * (value.xreplace(window_shape()) - value)


def sliding_value(path: str, value):
    """One layer's part at ``path`` as a sliding layer holds it: in a stack whose global
    layers have a shape of their own (``sw_gshape``), the value projection and the output's
    input at the sliding layers' value width (:func:`at_layer_shape`: MiMo-V2-Flash's d_v),
    and no dynamic convolutions (Inkling 2's, in the global layers only: :func:`group_count`)."""
    if path == "attention/dyn_convs":
        return (1 - c.sw("gshape")) * value
    if path not in VALUE_PATHS:
        return value
    return value + c.sw("gshape") * (at_layer_shape(path, value, False) - value)


def global_value(path: str, value):
    """One layer's attention part at ``path`` as a global layer of a stack with ``sw_gshape``
    holds it: the parts of :data:`GLOBAL_SHAPE` at the global shape (:func:`at_layer_shape`),
    no attention sinks where only the sliding layers keep them (``sw_sinks_local``:
    MiMo-V2-Flash) and no v projection with ``sw_gkv`` (Gemma 4's attention_k_eq_v); every
    other part as a sliding layer holds it (as :func:`stack_value` counts them)."""
    if path == "attention/sinks":
        return (1 - c.sw("sinks_local")) * value
    if path not in GLOBAL_SHAPE:
        return value
    held = 1 - c.sw("gkv") if path == "attention/v" else 1
    return held * at_layer_shape(path, value, True)


def shape_counts(path: str):
    """(sliding layers, global layers) of a stack with ``sw_gshape`` that hold the attention
    part at ``path``: L_local and L_attn - L_local, less the layers that reuse an earlier
    layer's keys and values for the key/value parts (L_kv_shared_local of the sliding ones,
    the rest of L_kv_shared of the global ones). Each at its value of :func:`sliding_value`
    and :func:`global_value`, they sum to :func:`stack_value`'s total."""
    local, glob = L_local, L_attn - L_local
    if path in KV_PATHS:
        local, glob = local - L_kv_shared_local, glob - (L_kv_shared - L_kv_shared_local)
    return local, glob


def typical_layer(layer: Breakdown, dense: bool = False) -> Breakdown:
    """One layer as a report lists it: an MoE layer in an MoE stack (the dense FFN zeroed),
    or with ``dense`` the dense layer of such a stack (the MoE FFN zeroed). It is an
    attention layer, a sliding one where the global layers have a shape of their own
    (:func:`sliding_value`; :data:`GLOBAL_VIEW` lists a global layer's attention): the other
    mixers of a hybrid stack have views of their own (:data:`MIXER_VIEWS`)."""
    moe = c.sw("router")

    def weight(leaf: Leaf):
        group = leaf.path.split("/", 1)[0]
        if group in MIXERS:
            return 0 * leaf.value
        if group == "ffn":
            return leaf.value if dense else (1 - moe) * leaf.value
        if group == "moe":
            return 0 * leaf.value if dense else leaf.value
        return sliding_value(leaf.path, leaf.value)

    return Breakdown(Leaf(l.path, weight(l), l.source) for l in layer)


def _stack(prefix: str, layers, layer: Breakdown, hybrid: bool = False) -> list[Leaf]:
    """Relative-attention bias (first layer only; every layer's with ``sw_rel_layers``), each
    layer part times the layers that hold it, final norm."""
    head = f"{prefix}/" if prefix else ""
    # (UMT5: every layer's, sw_rel_layers)
    per_layer = c.sw("rel_layers")
    out = [Leaf(f"{head}relative_bias", c.relative_bias_params() * (1 + per_layer * (layers - 1)),
                "raffel2020")]
    if hybrid:  # Inkling's banks of relative-position profiles (sw_rlog), X_rel distances
        out.append(Leaf(f"{head}relative_logits", c.relative_logits_params(), "inkling2026"))
        # Inkling 2's learned queries of the block attention residuals
        out.append(Leaf(f"{head}block_residuals", c.block_residual_params(), "inkling2026"))
        # DeBERTa-v2's relative-position table and its norm
        out.append(Leaf(f"{head}relative_embeddings", c.relative_embedding_params(),
                        "he2021deberta"))
    out += [Leaf(f"{head}layer/{l.path}", stack_value(l.path, l.value, layers, hybrid, params=True),
                 l.source) for l in layer]
    # (ESM C: a bias-free final LayerNorm after biased ones, sw_fnob)
    out.append(Leaf(f"{head}final_norm", c.sw("final_norm") * c.norm_params() - c.sw("fnob") * d,
                    "radford2019"))
    return out


@lru_cache(maxsize=None)
def shape_layers(shape: str) -> dict[str, tuple[sympy.Symbol, Breakdown]]:
    """The layers a report lists per stack: prefix -> (layer count symbol, one layer). A
    single stack also lists ``dense_layer``, the dense layer of an MoE stack (reported only
    when there is one: see :func:`layer_prefixes`)."""
    if shape == "single":
        layer = layer_params(hybrid=True)
        views = {"layer": (L, typical_layer(layer)),
                 "dense_layer": (L_dense, typical_layer(layer, dense=True))}
        for view, group in MIXER_VIEWS.items():
            views[view] = (MIXERS[group][0], Breakdown(
                Leaf(l.path, l.value, l.source) for l in layer
                if l.path.split("/", 1)[0] == group))
        views[GLOBAL_VIEW] = (L_attn - L_local, Breakdown(
            Leaf(l.path, global_value(l.path, l.value), l.source) for l in layer
            if l.path.split("/", 1)[0] == "attention"))
        return views
    return {"encoder/layer": (L, typical_layer(layer_params())),
            "decoder/layer": (L_dec, typical_layer(layer_params(cross_attention=True)))}


def layer_counts(shape: str) -> dict[str, sympy.Expr]:
    """How many layers each per-layer view of :func:`shape_layers` stands for: a report lists
    a view only when its count is above 0. The attention/FFN layer counts the layers that
    have attention or an FFN (none in a Mamba stack), the dense layer an MoE stack's dense
    layers, a mixer its layers."""
    if shape == "single":
        out = {"layer": L_attn + L_ffn, "dense_layer": L_dense}
        out.update({view: MIXERS[group][0] for view, group in MIXER_VIEWS.items()})
        out[GLOBAL_VIEW] = c.sw("gshape") * (L_attn - L_local)
        return out
    return {"encoder/layer": L, "decoder/layer": L_dec}


def layer_prefixes(spec: Spec) -> list[str]:
    """The per-layer views that apply to ``spec`` (:func:`layer_counts` above 0)."""
    from .spec import size_values

    values = {SIZES[k].symbol: x for k, x in size_values(spec).items() if k in SIZES}
    fixed = structure(spec)
    return [p for p, n in layer_counts(spec.shape).items()
            if sympy.sympify(n).xreplace(fixed).xreplace(values) > 0]


@lru_cache(maxsize=None)
def shape_params(shape: str) -> Breakdown:
    """Every parameter of a model of ``shape``, switches left as symbols."""
    leaves = _parts("embedding", c.embedding_params())
    leaves.append(Leaf("embedding_norm", c.sw("emb_norm") * c.norm_params(c.stage_width()),
                       "devlin2019"))
    if shape == "single":  # ZAYA: a scale and a bias of the embeddings entering the stack
        leaves.append(Leaf("input_scales", c.sw("raff") * 2 * d, "zyphra2025cca"))
    if shape == "single":
        leaves += _stack("", L, layer_params(hybrid=True), hybrid=True)
        leaves += _parts("per_layer_input", c.per_layer_model_params())
        leaves += _parts("altup", c.altup_model_params())
        leaves.append(Leaf("skipped_layers", c.skipped_layer_params(), "meta2024mllama"))
        leaves.append(Leaf("hyper_head", c.hyper_head_params(), "tencent2026hyv4"))
        leaves.append(Leaf("hyper_mixer", c.gated_mixer_params(), "qwen2026qwen4exp"))
        leaves += _parts("ngram_ple", c.ngram_ple_params())
        leaves += _parts("backbone", c.backbone_params())
        leaves.append(Leaf("initial_state", c.sw("zinit") * SIZES["d"].symbol, "wang2025hrm"))
    else:
        leaves += _stack("encoder", L, layer_params())
        leaves += _stack("decoder", L_dec, layer_params(cross_attention=True))
    leaves += _parts("head", c.head_params())
    leaves.append(Leaf("pooler", c.pooler_params(), "devlin2019"))
    leaves.append(Leaf("mlm_head", c.mlm_transform_params(), "devlin2019"))
    leaves.append(Leaf("contact_head", c.contact_head_params(), "rives2021esm"))
    leaves.append(Leaf("entity_head", c.entity_head_params(), "yamada2020luke"))
    if shape != "single":  # ELECTRA's embedding stage, RemBERT's head width: single stacks
        off = c.single_only_off()
        leaves = [Leaf(l.path, sympy.sympify(l.value).xreplace(off) * PER_STACK.get(l.path, 1),
                       l.source) for l in leaves]
    return Breakdown(leaves)


# an encoder-decoder's parts that each of its two stacks holds (BART and its kin: a learned or
# sinusoidal position table and a norm after the embeddings in the encoder and in the decoder;
# T5 has neither); the token table is shared, unless each stack holds its own (sw_stack_tab:
# T5Gemma, FSMT), beside the shared one (sw_shared_tab: BART-shaped models untied)
PER_STACK = {"embedding/position": 2, "embedding_norm": 2,
             "embedding/token": 1 + c.sw("stack_tab") + c.sw("shared_tab")}


def structure(spec: Spec) -> dict[sympy.Symbol, sympy.Integer]:
    """The substitution that fixes a spec's structure: its switches, and E = k = 1 for a
    dense FFN."""
    out = {ALL[name].symbol: sympy.Integer(v) for name, v in switch_values(spec).items()}
    if not spec.moe:
        out[SIZES["E"].symbol] = sympy.Integer(1)
        out[SIZES["k"].symbol] = sympy.Integer(1)
    if not spec.dense_layers:
        out[L_dense] = sympy.Integer(0)
    if spec.V_x is None:  # no token rows beyond the head's vocabulary (Mllama has 8)
        out[SIZES["V_x"].symbol] = sympy.Integer(0)
    if not spec.d_bb:  # no target model projected in and out (Gemma 4's assistants)
        out[SIZES["d_bb"].symbol] = sympy.Integer(0)
    if spec.K_cb is None:  # one token table and one head (MusicGen has one per codebook)
        out[SIZES["K_cb"].symbol] = sympy.Integer(1)
    if spec.L_local is None:  # no window (0 layers slide) or every layer slides
        out[L_local] = sympy.Integer(0)
    if spec.shape == "single":  # a stack that is not hybrid: every layer attends and has an FFN
        if spec.L_attn is None:
            out[L_attn] = L
        if spec.L_ffn is None:
            out[L_ffn] = L
        if spec.B_sh is None:  # every attention and FFN layer holds its own weights
            out[L_attn_w] = out.get(L_attn, L_attn)
            out[L_ffn_w] = out.get(L_ffn, L_ffn)
        if not spec.L_kv_shared:  # every attention layer computes its keys and values
            out[L_kv_shared] = sympy.Integer(0)
        if not spec.L_kv_shared_local:
            out[L_kv_shared_local] = sympy.Integer(0)
        if spec.L_idx is None:  # every attention layer runs its indexer (or there is none)
            out[L_idx] = out.get(L_attn, L_attn)
        for name, (count, _) in MIXERS.items():
            if getattr(spec, {"linear_attention": "L_lin", "ssm": "L_ssm",
                              "short_conv": "L_conv"}[name]) is None:
                out[count] = sympy.Integer(0)
    if spec.d_ai is None:  # the attention projections read the hidden state alone
        out[d_ai] = d
    # the width of each head's output gate: one scalar per head, else a gate per channel
    # (HY-V4's gate beside MLA: one per value channel, d_v)
    out[SIZES["d_g"].symbol] = (sympy.Integer(1) if spec.attn_gate_per_head
                                else SIZES["d_v"].symbol if spec.mla else SIZES["d_h"].symbol)
    return out


@lru_cache(maxsize=None)
def _params_for_structure(shape: str, key: tuple) -> Breakdown:
    return _concrete_from_key(shape_params(shape), key)


def _concrete_from_key(breakdown: Breakdown, key: tuple) -> Breakdown:
    """Substitute a structure (see :func:`structure_key`) and drop the parts that vanish."""
    return substitute(breakdown, dict(key))


def substitute(breakdown: Breakdown, fixed: dict) -> Breakdown:
    """``fixed`` substituted into every part, expanded; the parts that vanish dropped."""
    return breakdown.map(lambda e: put(e, fixed)).where(lambda l: l.value != 0)


def put(expr, fixed: dict) -> sympy.Expr:
    """``sympy.expand(expr.xreplace(fixed))``, term by term.

    A structure or a set of convention switches fixes symbols to integers (mostly 0 and 1)
    or to other symbols. Rebuilding a whole expression with them and expanding it again is
    most of the sympy path's time, while most terms of a shape's expression either hold none
    of the fixed symbols (kept as they are) or hold one fixed to 0 as a factor (dropped
    without being rebuilt): :func:`_terms` splits each expression into its expanded terms
    once, from the second time it is asked for (or the first, for an expression put made).
    The terms left are rebuilt one by one and summed; a value that is not a symbol or an
    integer (a sum) takes the whole-expression way."""
    if not isinstance(expr, sympy.Expr) or not fixed:
        return sympy.expand(sympy.sympify(expr).xreplace(fixed))
    if not all(v.is_Symbol or v.is_Integer for v in fixed.values()):
        return sympy.expand(expr.xreplace(fixed))
    if expr not in _TERMS and expr not in _SEEN:
        # the first time an expression not known to be expanded is asked for: expanding a
        # shape's whole expression costs more than one substitution into it (a command
        # line asks once), so only the second request splits it
        if len(_SEEN) > 50_000:
            _SEEN.clear()
        _SEEN.add(expr)
        return _expanded(sympy.expand(expr.xreplace(fixed)))
    kept = []
    for term, factors, symbols, polynomial in _terms(expr):
        if symbols.isdisjoint(fixed):
            kept.append(term)
            continue
        if any(fixed.get(f, 1) == 0 for f in factors):
            continue
        term = term.xreplace(fixed)
        kept.append(term if polynomial else sympy.expand(term))
    return _expanded(sympy.Add(*kept))


_TERMS: dict = {}  # expression -> its terms (:func:`_terms`), or None: expanded, not yet split
_SEEN: set = set()  # expressions put once the whole-expression way
_MISSING = object()


def _expanded(expr: sympy.Expr) -> sympy.Expr:
    """``expr``, marked as expanded (its terms split without expanding it again)."""
    if len(_TERMS) > 50_000:
        _TERMS.clear()
    _TERMS.setdefault(expr, None)
    return expr


def _terms(expr: sympy.Expr) -> tuple:
    """``expr`` expanded, one entry per term: (term, the symbols that are its factors with a
    positive integer power, all its symbols, whether it is a product of such powers and a
    number). Kept per expression; an expression :func:`put` made is known to be expanded
    already."""
    got = _TERMS.get(expr, _MISSING)
    if got is None or got is _MISSING:
        out = []
        for term in sympy.Add.make_args(expr if got is None else sympy.expand(expr)):
            factors, polynomial = set(), True
            for f in sympy.Mul.make_args(term):
                if f.is_Symbol:
                    factors.add(f)
                elif f.is_Pow and f.base.is_Symbol and f.exp.is_Integer and f.exp > 0:
                    factors.add(f.base)
                elif not f.is_Number:
                    polynomial = False
            out.append((term, frozenset(factors), frozenset(term.free_symbols), polynomial))
        got = _TERMS[expr] = tuple(out)
    return got


@lru_cache(maxsize=256)
def structure_key(spec: Spec) -> tuple:
    """:func:`structure` as a sorted tuple (a cache key), once per spec: a report asks for it
    once per quantity and layer stack (a spec is a frozen record, hashed by value)."""
    return tuple(sorted(structure(spec).items(), key=lambda kv: kv[0].name))


def params(spec: Spec) -> Breakdown:
    """The spec's parameters, sizes left symbolic (cached per structure)."""
    return _params_for_structure(spec.shape, structure_key(spec))


def per_layer(spec: Spec) -> dict[str, Breakdown]:
    """One layer of each stack, the spec's structure substituted."""
    key = structure_key(spec)
    layers = shape_layers(spec.shape)
    return {prefix: _concrete_from_key(layers[prefix][1], key) for prefix in layer_prefixes(spec)}


def embedding_total(breakdown: Breakdown):
    """Vocabulary and position tables, and an untied head's weight (as the seeds count it:
    "embeddings and output layer"); everything else is non-embedding."""
    return sympy.Add(*[l.value for l in breakdown if l.path in EMBEDDING_PATHS])


def active_params(spec: Spec) -> sympy.Expr:
    """Parameters one token passes through: for MoE, k of the E experts (router included)."""
    return active_total(params(spec))


def is_routed_expert(path: str) -> bool:
    """A part of the routed experts (counted k of E times per token)."""
    return "/moe/experts/" in f"/{path}"


def active_total(bd: Breakdown) -> sympy.Expr:
    """The total of ``bd`` with the routed experts counted k times instead of E times (router
    and shared experts in full; also used on the shape's breakdown by :mod:`symcalc.fast.build_terms`,
    where dense models have E = k = 1 and no MoE parts)."""
    E, k = SIZES["E"].symbol, SIZES["k"].symbol
    return sympy.expand(sympy.Add(*[leaf.value.xreplace({E: k}) if is_routed_expert(leaf.path)
                                    else leaf.value for leaf in bd]))


def numbers(expr_or_breakdown, values: dict[str, int]):
    """Substitute sizes (by canonical name) and return exact Python ints."""
    subs = {SIZES[n].symbol: sympy.Integer(v) for n, v in values.items() if n in SIZES}
    if isinstance(expr_or_breakdown, Breakdown):
        return expr_or_breakdown.map(lambda e: int(e.xreplace(subs)))
    return int(sympy.sympify(expr_or_breakdown).xreplace(subs))


WINDOW_OFF.update(_window_off())

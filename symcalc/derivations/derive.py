"""Derivations built from the engine's expressions, as data (no formatting here).

:func:`derive` turns one quantity of one model (``params.total``, ``flops.forward_matmul``,
``memory.kv_cache_bytes`` ...) into a :class:`~symcalc.derivations.derivation.Derivation`: the sizes,
every component's formula with its source, the numbers substituted, each intermediate
value, the per-layer sum, the layers, the total. Comparisons (closed forms, two models,
published formulas) are in :mod:`symcalc.derivations.derive_forms`.
"""
from __future__ import annotations

from typing import Iterable

import sympy

from ..algebra import accounting, activations, memory, quantized, quantities as q
from ..algebra.breakdown import Breakdown, Leaf
from ..algebra.closed_form import simplify
from ..algebra.components import sw
from .citations import TIED_HEAD_SOURCE, component_source
from .derivation import (Compose, Define, Derivation, Evaluate, Formula, Result, Section,
                         Substitute, part_symbol)
from ..algebra.options import Options, workload_values
from ..algebra.spec import Spec, size_values
from ..algebra.symbols import SIZES, L

MEANINGS = {
    "attention/q": "query projection", "attention/k": "key projection",
    "attention/v": "value projection", "attention/o": "attention output projection",
    "attention/scores": "attention scores Q K^T", "attention/context": "scores times V",
    "cross_attention/q": "cross-attention query", "cross_attention/k": "cross-attention key",
    "cross_attention/v": "cross-attention value", "cross_attention/o": "cross-attention output",
    "cross_attention/scores": "cross-attention scores", "cross_attention/context":
    "cross-attention scores times V",
    "norm/attention": "norm of the attention block", "norm/cross_attention": "norm of the cross-attention block",
    "norm/ffn": "norm of the FFN block", "ffn/gate": "FFN gate",
    "ffn/up": "FFN up projection", "ffn/down": "FFN down projection",
    "norm/attention_out": "norm after attention", "norm/ffn_out": "norm after the FFN",
    "attention/q_a": "query down-projection (MLA)", "attention/q_norm": "norm of the query latent",
    "attention/q_b": "query up-projection (MLA)", "attention/kv_a": "key/value down-projection "
    "and shared rotary key (MLA)", "attention/kv_norm": "norm of the key/value latent",
    "attention/kv_b": "key/value up-projection (MLA)", "attention/q_head_norm": "query norm",
    "attention/k_head_norm": "key norm", "attention/sinks": "attention-sink logits",
    "moe/router": "MoE router", "moe/router_bias": "router bias",
    "moe/experts/gate": "expert gates", "moe/experts/up": "expert up projections",
    "moe/experts/down": "expert down projections", "moe/experts/bias": "expert biases",
    "moe/shared/gate": "shared-expert gate projection", "moe/shared/up": "shared-expert up projection",
    "moe/shared/down": "shared-expert down projection", "moe/shared_gate": "shared-expert sigmoid gate", "moe/norm": "norm of the MoE block's output",
    "moe/norm_gate": "low-rank gate of the norm before the MoE block",
    "moe/bias": "bias on the MoE block's output", "attention/router": "router of the attention experts",
    "norm/attention_gate": "low-rank gate of the norm before attention",
    "ffn/activation": "FFN activation (and gate)", "moe/activation": "expert activations (and gates)",
    "embedding/project_in": "projection of the embeddings in", "embedding/project_out":
    "projection out to the embedding width", "project_in": "projection in", "project_out": "projection out",
    "embedding/token": "token embeddings", "embedding/position": "learned positions",
    "embedding/token_type": "token-type embeddings", "embedding_norm": "embedding norm",
    "embedding/box": "2D position tables of the token boxes (LayoutLM)",
    "embedding/entity": "entity embeddings (LUKE)",
    "attention/value_conv": "depthwise convolution over the values (Nystromformer)",
    "attention/entity_q": "entity-aware query projections (LUKE)",
    "entity_head": "entity prediction head (LUKE)",
    "relative_bias": "relative-attention bias", "final_norm": "final norm",
    "relative_logits": "relative-position logits (Inkling's profile banks)",
    "attention/rel_proj": "relative-state projection (Inkling's r_proj)",
    "attention/short_convs": "short convolutions on keys, values and the sublayer outputs (Inkling)",
    "attention/cca": "convolutions over queries and keys and the key scales (ZAYA's CCA)",
    "input_scales": "scale and bias of the embeddings entering the stack (ZAYA)",
    "hyper_connections/mixers": "hyper-connection mixers before attention and the FFN (HY-V4)",
    "hyper_head": "hyper head folding the residual streams into one (HY-V4)",
    "hyper_connections/input_mix_down": "gated residuals' input mixers, streams to rank r_hc (Qwen4-Exp)",
    "hyper_connections/gates": "gated residuals' stream norms, input mixers back to the streams and injection weights (Qwen4-Exp)",
    "hyper_mixer": "final mixer folding the residual streams into one (Qwen4-Exp)",
    "attention/indexer/qk": "QSA indexer queries and key (index_qk_proj)",
    "attention/indexer/qk_norms": "QSA indexer query and key norms",
    "attention/indexer/blocks": "QSA indexer scores over complete key blocks",
    "attention/indexer/blocks_step": "QSA indexer scores over the cache's complete key blocks",
    "attention/indexer/q_k_proj": "MiniMax-M3 indexer queries and key (q_proj, k_proj)",
    "attention/indexer/q_k_norm": "MiniMax-M3 indexer query and key norms",
    "attention/indexer/token_scores": "MiniMax-M3 indexer scores of every query against every key",
    "attention/indexer/token_scores_step": "MiniMax-M3 indexer scores over every cached key",
    "ngram_ple/tables": "hashed n-gram embedding tables (Qwen4-Exp's PLE)",
    "ngram_ple/layers": "n-gram PLE key and value projections, norms and dilated convolution",
    "ngram_ple/conv": "n-gram PLE convolution window",
    "ngram_ple/ids": "n-gram PLE context token ids (int64)",
    "hyper_connections/residual_mix": "doubly-stochastic mix of the residual streams (DeepSeek-V4's mHC)",
    "attention/o_a": "grouped output projection, each head group to its rank (o_a_proj)",
    "attention/o_b": "grouped output projection, the groups to the model width (o_b_proj)",
    "attention/csa/compressor": "CSA compressor: key/value and gate projections (two series), position bias, norm",
    "attention/csa/indexer/compressor": "CSA indexer's compressor: key and gate projections (two series), position bias, norm",
    "attention/hca/compressor": "HCA compressor: key/value and gate projections, position bias, norm",
    "attention/csa/scores": "scores against the CSA compressed entries",
    "attention/csa/context": "weighted sum of the CSA compressed entries",
    "attention/csa/indexer/q": "CSA indexer queries (q_b_proj)",
    "attention/csa/indexer/weights": "CSA indexer head weights",
    "attention/csa/indexer/logits": "CSA indexer scores against its compressed keys",
    "attention/csa/indexer/logits_step": "CSA indexer scores over the compressed cache",
    "attention/hca/scores": "scores against the HCA compressed entries",
    "attention/hca/context": "weighted sum of the HCA compressed entries",
    "attention/compressed/scores_and_context_step": "scores and weighted sum over the compressed cache",
    "attention/dyn_convs": "per-token weights of the global layers' key and value convolutions and their input norms (Inkling 2)",
    "block_residuals": "block attention residuals' learned queries over stacked block outputs (Inkling 2)",
    "head/weight": "output head weight (untied)", "head/bias": "output head bias",
    "head": "output head", "pooler": "BERT pooler", "mlm_head": "masked-LM head transform",
    "contact_head": "contact-prediction head (ESM)",
    "relative_embeddings": "relative-position table (DeBERTa)",
    "attention/pos_k": "relative-position key projection (DeBERTa)",
    "attention/pos_q": "relative-position query projection (DeBERTa)",
    "attention/c2p": "content-to-position scores (DeBERTa)",
    "attention/p2c": "position-to-content scores (DeBERTa)",
    "ffn/act": "learned parameters of the FFN activation (xIELU's two scalars, nGPT's and Inkling's scales)",
    "attention/sub_norm": "norm of the attention output before its output projection (BitNet)",
    "ffn/sub_norm": "norm before the FFN's down projection (BitNet)",
    "moe/router_scales": "learned router scales and state (Inkling's shared-expert scores and scale, ZAYA's router state)",
    "norm/residual_scales": "learned scales (and biases) of the residual stream and the sublayer outputs (Doge, ZAYA)",
    "softmax": "softmax and score scaling", "norm": "norms", "activation": "activation (and gate)",
    "residual": "residual adds",
    "attention/q_gate": "query-wide output gate projection",
    "attention/gate_bias": "output gate bias per head",
    "attention/indexer/q": "sparse-attention indexer queries (wq_b)",
    "attention/indexer/k": "sparse-attention indexer key (wk)",
    "attention/indexer/k_norm": "sparse-attention indexer key norm",
    "attention/indexer/weights": "sparse-attention indexer head weights",
    "attention/indexer/logits": "sparse-attention indexer scores",
    "attention/indexer/logits_step": "sparse-attention indexer scores over the cache",
    "linear_attention/qkv": "linear-attention q, k, v projections",
    "linear_attention/conv": "short causal convolution over q, k, v",
    "linear_attention/beta": "write-strength (beta) projection",
    "linear_attention/decay": "decay gate (projection, dt bias, A)",
    "linear_attention/output_gate": "output gate projection",
    "linear_attention/norm": "gated norm of the output",
    "linear_attention/core": "chunked delta-rule products",
    "linear_attention/o": "linear-attention output projection",
    "ssm/in_proj": "Mamba input projection", "ssm/conv": "Mamba causal convolution",
    "ssm/x_proj": "projection to dt, B and C", "ssm/dt_proj": "time-step projection",
    "ssm/decay": "state matrix A, skip D (and dt bias)", "ssm/inner_norms": "norms of dt, B and C",
    "ssm/norm": "gated norm of the output", "ssm/core": "selective-scan products",
    "ssm/out_proj": "Mamba output projection",
    "short_conv/in_proj": "short-convolution input projection (B, C, x)",
    "short_conv/conv": "short causal convolution", "short_conv/out_proj":
    "short-convolution output projection",    "embedding/per_layer": "per-layer input embeddings (Gemma 3n)",
    "altup/projections": "AltUp input projections (one per extra stream)",
    "altup/unembed_projections": "AltUp output projections (one per extra stream)",
    "altup/correct_output_scale": "AltUp output scale",
    "altup/correction_coefs": "AltUp correction coefficients",
    "altup/prediction_coefs": "AltUp prediction coefficients",
    "altup/modality_router": "AltUp router",
    "altup/router": "AltUp router",
    "altup/router_norm": "norm before the AltUp router",
    "altup/mix": "AltUp stream mixing",
    "laurel/left": "LAuReL down-projection",
    "laurel/right": "LAuReL up-projection",
    "laurel/norm": "LAuReL norm",
    "per_layer_input/gate": "per-layer input gate",
    "per_layer_input/projection": "per-layer input projection",
    "per_layer_input/norm": "per-layer input norm",
    "per_layer_input/model_projection": "projection of the hidden state to the per-layer inputs",
    "per_layer_input/model_norm": "norm of the per-layer inputs",
    "embedding/side": "pronunciation and shape embeddings (RoCBERT)",
    "map_in": "map of the concatenated embeddings into the hidden width (RoCBERT)",
    "adapter/bottlenecks": "language adapters (X-MOD)", "adapter/norm": "norm of the language adapters",
    "skipped_layers": "cross-attention layers a text-only forward skips (Mllama)",
    "backbone/pre_projection": "projection of the target model's states into the assistant",
    "backbone/post_projection": "projection of the assistant's output to the target's width",
    "initial_state": "learned initial state of the low-level stack (HRM-Text)",
    "attention/k_rope_norm": "norm of the shared rotary key (dots.llm3)",
    "head/centroids": "centroids choosing the head rows scored (Gemma 4 assistant)",
    "centroids": "centroids choosing the head rows scored (Gemma 4 assistant)",
}
# The parts of a hybrid stack by the layers that hold them (see :func:`_hybrid_stack`).
HYBRID_CLASSES = {"L_attn": ("attention_layer", "one attention layer's attention"),
                  "L_lin": ("linear_layer", "one linear-attention mixer"),
                  "L_ssm": ("ssm_layer", "one Mamba mixer"),
                  "L_conv": ("conv_layer", "one short-convolution mixer"),
                  "L_ffn": ("ffn_layer", "the parts of every layer with an FFN"),
                  "L_dense": ("dense_layer", "one dense FFN"),
                  # global layers of their own attention shape (accounting.shape_counts)
                  "L_local": ("sliding_layer", "one sliding-window layer's attention"),
                  "L - L_local": ("global_layer", "one global layer's attention"),
                  "L_attn - L_local": ("global_layer", "one global layer's attention")}
TITLES = {"N": "Parameters", "C": "FLOPs", "M": "Memory"}

# Each quantity in words a reader of a handout understands (no option names, no internal
# labels); :data:`symcalc.algebra.quantities.QUANTITIES` describes them for the CLI's help.
QUANTITY_TITLES = {
    "params.total": "parameters",
    "params.active": "active parameters",
    "params.embedding": "embedding parameters",
    "params.non_embedding": "non-embedding parameters",
    "flops.forward_matmul": "forward-pass FLOPs of the matrix products",
    "flops.forward": "forward-pass FLOPs",
    "flops.training": "training FLOPs",
    "flops.decode_per_token": "FLOPs to generate one token",
    "memory.weights_bytes": "weight memory",
    "memory.kv_cache_bytes": "KV-cache memory",
    "memory.recurrent_state_bytes": "recurrent-state memory",
    "memory.activations_bytes": "activation memory",
    "memory.training_bytes": "training memory",
}


# whose count the activations are, by activation model (the eager and sdpa models read
# transformers' code, not Korthikanti et al.'s paper)
ACTIVATION_MEANINGS = {
    "paper": "activations kept for the backward pass, Korthikanti et al.'s terms",
    "eager": "activations kept for the backward pass, as transformers' eager attention keeps them",
    "sdpa": "activations kept for the backward pass, with a fused attention kernel",
}


def title_of(quantity: str, spec: Spec) -> str:
    words = QUANTITY_TITLES[quantity]
    return f"{words[0].upper()}{words[1:]} of {spec.name}"


def quantity_meaning(quantity: str, spec: Spec, opts: Options = Options()) -> str:
    """What the result is, in words, with the settings it was computed under."""
    if quantity == "params.active":
        return (f"parameters one token passes through: {spec.k} of the {spec.E} experts per "
                "MoE layer, everything else in full" if spec.moe else
                "parameters one token passes through (a dense model: all of them)")
    return {
        "params.total": "parameters",
        "params.embedding": "token and position tables and an untied output head",
        "params.non_embedding": "every parameter outside the embedding tables and untied head",
        "flops.forward_matmul": "FLOPs of every matrix product in one forward pass over b "
                                "sequences of s tokens",
        "flops.forward": "FLOPs of one forward pass over b sequences of s tokens",
        "flops.training": "FLOPs of one training step: forward and backward pass",
        "flops.decode_per_token": "matrix-product FLOPs to generate one more token per "
                                  "sequence with s tokens cached",
        "memory.weights_bytes": f"weights stored in {opts.dtype}",
        "memory.kv_cache_bytes": f"keys and values cached for b sequences of s tokens, in "
                                 f"{opts.kv_dtype}",
        "memory.recurrent_state_bytes": "state the linear-attention, SSM and convolution layers "
                                        "keep per sequence (it does not grow with s)",
        "memory.activations_bytes": ACTIVATION_MEANINGS[opts.activations],
        "memory.training_bytes": "weights, gradients and optimizer state on one device",
    }[quantity]


def meaning(path: str) -> str:
    parts = path.split("/")
    for i in range(len(parts)):
        key = "/".join(parts[i:])
        if key in MEANINGS:
            return MEANINGS[key]
    return path


def model_values(spec: Spec, opts: Options = Options()) -> dict[str, int]:
    """Every size and workload value of a model by canonical name."""
    return {**size_values(spec), **workload_values(spec, opts)}


def numbers(values: dict[str, int]) -> dict[sympy.Symbol, sympy.Integer]:
    return {SIZES[n].symbol: sympy.Integer(v) for n, v in values.items() if n in SIZES}


def substitute(path: str, letter: str, expr: sympy.Expr, subs: dict) -> Substitute:
    """The substitution step of ``expr``: the numbers of its free symbols."""
    used = sorted(expr.free_symbols & set(subs), key=lambda s: s.name)
    return Substitute(path, letter, expr, tuple((s, subs[s]) for s in used))


def evaluate(expr: sympy.Expr, subs: dict):
    out = sympy.sympify(sympy.sympify(expr).xreplace(subs))
    if not out.is_number:
        raise ValueError(f"unsubstituted symbols in {out}")
    return sympy.Rational(out) if out.is_Rational else out


def chain(step, subs: dict) -> tuple[list, object]:
    """A formula or composition followed by its substitution and value."""
    expr = step.expr
    value = evaluate(expr, subs)
    steps = [step]
    if not expr.is_Atom:
        steps.append(substitute(step.path, step.letter, expr, subs))
    steps.append(Evaluate(step.path, step.letter, value))
    return steps, value


def defines(exprs: Iterable[sympy.Expr], values: dict[str, int]) -> list[Define]:
    used = set().union(*(sympy.sympify(e).free_symbols for e in exprs))
    out = []
    for name, info in SIZES.items():
        if info.symbol in used and name in values:
            out.append(Define(info.symbol, int(values[name]), info.meaning))
    return out


def stacks_of(spec: Spec) -> dict[str, sympy.Symbol]:
    """Prefix of each repeated layer -> its count symbol (``layer`` -> L)."""
    return {prefix: count for prefix, (count, _) in accounting.shape_layers(spec.shape).items()}


GROUPS = {"attention": "self-attention in one layer", "cross_attention": "cross-attention in one layer",
          "norm": "norms in one layer", "ffn": "FFN in one layer", "moe": "MoE FFN in one layer",
          "linear_attention": "linear attention in one layer", "ssm": "Mamba mixer in one layer",
          "short_conv": "short convolution in one layer",
          "altup": "AltUp in one layer",
          "laurel": "LAuReL in one layer",
          "per_layer_input": "per-layer inputs in one layer",
          "adapter": "language adapters in one layer",
          "hyper_connections": "hyper-connections in one layer"}


def _per_layer(value, count) -> sympy.Expr:
    """``value / count`` expanded: what one of ``count`` layers holds. A count that is a
    product of symbols and numbers (L, L_local, 2 L_dec) divides the expanded value term by
    term, which is what ``cancel`` gives for it, without sympy's polynomial gcd (about 15 s
    of the torch-free lane's CPU); a count that is a sum (L - L_local) goes through
    ``cancel``."""
    count = sympy.sympify(count)
    if all(f.is_Symbol or f.is_Number for f in sympy.Mul.make_args(count)):
        return sympy.expand(value / count)
    return sympy.expand(sympy.cancel(value / count))


def _layer_steps(prefix: str, leaves: list[tuple[str, Leaf, object]], letter: str, subs: dict,
                 values: dict, formulas: list, title: str, reuse: tuple[str, ...] = (),
                 cited=lambda path, source: source):
    """Per-layer formulas of ``leaves`` (path, leaf, layers holding it), their groups and
    their sum ``prefix`` ("one layer"); ``reuse`` are group paths already derived."""
    steps, parts = [], list(reuse)
    by_group: dict[str, list] = {}
    for path, leaf, count in leaves:
        by_group.setdefault(path[len(prefix) + 1:].split("/")[0], []).append((path, leaf, count))
    for group, members in by_group.items():
        for path, leaf, count in members:
            per = _per_layer(leaf.value, count)
            formulas.append(per)
            more, values[path] = chain(Formula(path, letter, per, cited(leaf.path, leaf.source),
                                               meaning(path)), subs)
            steps += more
        if len(members) == 1:
            parts.append(members[0][0])
            continue
        gpath = f"{prefix}/{group}"
        more, values[gpath] = chain(Compose(gpath, letter, sympy.Add(
            *[part_symbol(letter, m[0]) for m in members], evaluate=False),
            GROUPS.get(group, group)), {part_symbol(letter, m[0]): values[m[0]] for m in members})
        steps += more
        parts.append(gpath)
    one = sympy.Add(*[part_symbol(letter, p) for p in parts], evaluate=False)
    more, values[prefix] = chain(Compose(prefix, letter, one, title), {
        **subs, **{part_symbol(letter, p): values[p] for p in parts}})
    return steps + more, parts


def _by_layer_shape(prefix: str, leaves: list, spec: Spec, structure: dict) -> list:
    """The parameter leaves of a stack whose global layers have an attention shape of their
    own (``sw_gshape``): each attention part once at a sliding layer's value times the
    sliding layers holding it, once at a global layer's value times the global ones
    (accounting.shape_counts, sliding_value, global_value: the per-layer views' figures);
    a kind of layer that lacks the part drops it."""
    views = accounting.per_layer(spec)
    sliding = views["layer"].as_dict()
    glob = views.get(accounting.GLOBAL_VIEW, Breakdown([])).as_dict()
    out = []
    for path, leaf, count in leaves:
        part = path[len(prefix) + 1:]
        if part.split("/", 1)[0] != "attention":
            out.append((path, leaf, count))
            continue
        kinds = zip(accounting.shape_counts(part), (sliding.get(part, 0), glob.get(part, 0)))
        for n, value in kinds:
            n = sympy.expand(sympy.sympify(n).xreplace(structure))
            if n != 0 and value != 0:
                out.append((path, Leaf(leaf.path, n * value, leaf.source), n))
    return out


def _hybrid_stack(prefix: str, leaves, letter: str, subs: dict, values: dict, formulas: list,
                  cited) -> list:
    """A hybrid stack: its parts grouped by the layers that hold them (attention in L_attn
    layers, each other mixer in its count, the FFN in its layers, norms in every layer), one
    block of per-layer formulas per group, and the stack as the sum of each block times its
    layer count."""
    classes: dict[object, list] = {}
    for x in leaves:
        classes.setdefault(x[2], []).append(x)
    steps, terms, nums = [], [], {}
    for count, members in classes.items():
        name, title = HYBRID_CLASSES.get(str(count), (None, None))
        if count == L:
            name, title = "every_layer", "the parts of every layer"
        elif name is None and any(p[len(prefix) + 1:].startswith("moe/") for p, _, _ in members):
            name, title = "moe_layer", "one MoE FFN"
        elif name is None:  # e.g. Gemma 3n's k/v projections, absent where layers share K/V
            name = f"group{len(terms) + 1}_layer"
            title = f"the parts held by {count} layers"
        renamed = [(name + p[len(prefix):], l, c) for p, l, c in members]
        more, _ = _layer_steps(name, renamed, letter, subs, values, formulas, title, cited=cited)
        steps += more
        terms.append(sympy.Mul(count, part_symbol(letter, name), evaluate=False))
        nums[part_symbol(letter, name)] = values[name]
        formulas.append(count)
    everything = prefix + "s"
    more, values[everything] = chain(Compose(everything, letter, sympy.Add(*terms, evaluate=False),
                                             "all layers"), {**subs, **nums})
    return steps + more


TIED_HEAD_MEANING = ("output head, tied to the token table: it multiplies by the same V x d "
                     "matrix, so it adds 0 parameters")


def components(bd: Breakdown, spec: Spec, letter: str, subs: dict, total_path: str = "total",
               tied_head: bool = False) -> tuple[list[Section], object, list[sympy.Expr]]:
    """Sections deriving ``bd``'s total: one section per repeated layer (per-layer formulas,
    their sum, times the layer count), one for the parts outside the layers, and the total.
    An MoE stack with dense layers shows its MoE layer and its dense layer, each times the
    layers of that kind."""
    stacks = stacks_of(spec)
    structure = accounting.structure(spec)

    def cited(path: str, source: str) -> str:
        return component_source(spec, path, source)

    sections, formulas, order = [], [], []
    values: dict[str, object] = {}
    for prefix, count in stacks.items():
        hybrid = spec.shape == "single" and prefix == "layer"
        leaves = [(l.path, l, sympy.expand(accounting.layer_count(
            l.path[len(prefix) + 1:], count, hybrid, params=letter == "N").xreplace(structure)))
            for l in bd if l.path.startswith(prefix + "/")]
        if not leaves:
            continue
        split = hybrid and letter == "N" and structure.get(sw("gshape")) == 1
        if split:  # global layers of their own shape: each attention part per kind of layer
            leaves = _by_layer_shape(prefix, leaves, spec, structure)
        counts = {x[2] for x in leaves}
        # (an MoE stack whose attention parts sit in layers of more than one count, DeepSeek-V4's
        # CSA and HCA layers: by kind too; its dense and MoE FFN layers alone take the path below)
        mixer_counts = {x[2] for x in leaves
                        if not x[0][len(prefix) + 1:].startswith(("ffn/", "moe/", "norm/ffn"))}
        if hybrid and (split or spec.hybrid or (len(counts) > 1 and not spec.moe)
                       or len(mixer_counts) > 1):
            steps = _hybrid_stack(prefix, leaves, letter, subs, values, formulas, cited)
            sections.append(Section("Layers by kind", tuple(steps)))
            continue
        dense = [x for x in leaves if x[0][len(prefix) + 1:].startswith("ffn/")]
        mixed = bool(dense) and len({x[2] for x in leaves}) > 1
        common = [x for x in leaves if x not in dense] if mixed else leaves
        steps, parts = _layer_steps(prefix, common, letter, subs, values, formulas,
                                    "one MoE layer" if mixed else "one layer", cited=cited)
        everything = prefix + "s"
        if not mixed:
            n_layers = common[0][2]
            more, values[everything] = chain(Compose(everything, letter, sympy.Mul(
                n_layers, part_symbol(letter, prefix), evaluate=False), f"all {n_layers} layers"),
                {**subs, part_symbol(letter, prefix): values[prefix]})
            formulas.append(n_layers)
        else:
            dense_prefix = f"dense_{prefix}"
            shared = tuple(p for p in parts if p.split("/")[-1] != "moe"
                           and not p[len(prefix) + 1:].startswith("moe/"))
            renamed = [(f"dense_{p}", l, c) for p, l, c in dense]
            more_d, _ = _layer_steps(dense_prefix, renamed, letter, subs, values, formulas,
                                     "one dense layer", reuse=shared, cited=cited)
            steps += more_d
            n_dense = dense[0][2]
            n_moe = next(x[2] for x in leaves if x[0][len(prefix) + 1:].startswith("moe/"))
            expr = sympy.Add(sympy.Mul(n_moe, part_symbol(letter, prefix), evaluate=False),
                             sympy.Mul(n_dense, part_symbol(letter, dense_prefix), evaluate=False),
                             evaluate=False)
            more, values[everything] = chain(Compose(everything, letter, expr, "all layers"), {
                **subs, part_symbol(letter, prefix): values[prefix],
                part_symbol(letter, dense_prefix): values[dense_prefix]})
            formulas += [n_moe, n_dense]
        steps += more
        title = "One layer" if prefix == "layer" else f"One {prefix.split('/')[0]} layer"
        sections.append(Section(title, tuple(steps)))
    outside = []
    for leaf in bd:
        stack = next((p for p in stacks if leaf.path.startswith(p + "/")), None)
        if stack is not None:
            if stack + "s" not in order:
                order.append(stack + "s")
            continue
        formulas.append(leaf.value)
        more, values[leaf.path] = chain(
            Formula(leaf.path, letter, leaf.value, cited(leaf.path, leaf.source),
                    meaning(leaf.path)), subs)
        outside += more
        order.append(leaf.path)
    if tied_head and letter == "N" and spec.head == "tied" and spec.token_embedding:
        formula = Formula("head/weight", "N", sympy.Integer(0), TIED_HEAD_SOURCE, TIED_HEAD_MEANING)
        more, values["head/weight"] = chain(formula, subs)
        outside += more
        order.append("head/weight")
    if outside:
        sections.append(Section("Outside the layers", tuple(outside)))
    total = sympy.Add(*[part_symbol(letter, p) for p in order], evaluate=False)
    more, value = chain(Compose(total_path, letter, total, "the sum of every part"),
                        {**subs, **{part_symbol(letter, p): values[p] for p in order}})
    sections.append(Section("Total", tuple(more)))
    return sections, value, formulas


def with_sizes(sections: list[Section], formulas, values) -> tuple[Section, ...]:
    return (Section("Sizes", tuple(defines(formulas, values))),) + tuple(sections)


def result_section(path: str, letter: str, value, meaning_: str, note: str = "") -> Section:
    unit = {"N": "parameters", "C": "FLOPs", "M": "bytes"}[letter]
    return Section("Result", (Result(path, letter, q.whole(value), unit, meaning_, note=note),))


def _params_breakdown(spec: Spec, quantity: str) -> Breakdown:
    bd = accounting.params(spec)
    if quantity == "params.embedding":
        return bd.where(lambda l: l.path in accounting.EMBEDDING_PATHS)
    if quantity == "params.non_embedding":
        return bd.where(lambda l: l.path not in accounting.EMBEDDING_PATHS)
    if quantity == "params.active" and spec.moe:
        E, k = SIZES["E"].symbol, SIZES["k"].symbol
        return Breakdown(Leaf(l.path, sympy.expand(l.value.xreplace({E: k})), l.source)
                         if accounting.is_routed_expert(l.path) else l for l in bd)
    return bd


def derive_breakdown(spec: Spec, quantity: str, bd: Breakdown, letter: str, values: dict,
                     title: str, conventions: tuple[str, ...] = ()) -> Derivation:
    subs = numbers(values)
    sections, value, formulas = components(bd, spec, letter, subs, quantity,
                                           tied_head=quantity != "params.non_embedding")
    body = with_sizes(sections, formulas, values) + (result_section(quantity, letter, value,
                                                              quantity_meaning(quantity, spec)),)
    return Derivation(spec.name, quantity, title, letter, body, conventions)


def derive(spec: Spec, quantity: str = "params.total", opts: Options = Options()) -> Derivation:
    """The worked example of ``quantity`` for ``spec`` under ``opts``."""
    q.check_quantity(quantity)
    opts = opts.checked()
    values = model_values(spec, opts)
    kind = quantity.split(".")[0]
    if kind == "params":
        conv = ("each token passes through k of the E experts; the router counts in full",) \
            if quantity == "params.active" and spec.moe else ()
        return derive_breakdown(spec, quantity, _params_breakdown(spec, quantity), "N", values,
                                title_of(quantity, spec), conv)
    if quantity in ("flops.forward_matmul", "flops.forward", "flops.training"):
        return _derive_flops(spec, quantity, opts, values)
    if quantity in ("memory.weights_bytes", "memory.training_bytes"):
        return _derive_state_bytes(spec, quantity, opts, values)
    if quantity == "memory.activations_bytes":
        return _derive_activations(spec, opts, values)
    return _derive_single(spec, quantity, opts, values)


FLOP_CONVENTION = ("2 FLOPs per multiply-accumulate; every matrix product; embedding lookups "
                   "free; the head over every position")


def _causal_note(spec: Spec, opts: Options) -> str:
    if spec.family == "encoder" or opts.causal == "full":
        return "attention scores over the full s x s matrix"
    return {"half": "causal attention: half of the s x s scores",
            "exact": "causal attention: s(s+1)/2 query-key pairs"}[opts.causal]


def _derive_flops(spec: Spec, quantity: str, opts: Options, values: dict) -> Derivation:
    contract = quantity == "flops.forward_matmul"
    mopts = opts.with_(causal="full") if contract else opts
    bd = q.matmul_breakdown(spec, mopts)
    subs = numbers(values)
    conv = [FLOP_CONVENTION, _causal_note(spec, mopts)]
    path = "flops.forward_matmul" if contract else "matmul"
    sections, value, formulas = components(bd, spec, "C", subs, path)
    tail: list[Section] = []
    if not contract:
        parts = {part_symbol("C", path): value}
        fwd = part_symbol("C", path)
        if opts.macs:
            fwd = fwd / 2
            conv.append("counted in multiply-accumulates: 1 MAC = 2 FLOPs")
        if opts.nonmatmul:
            nm_sections, nm_value, nm_formulas = components(
                q.nonmatmul_breakdown(spec, opts), spec, "C", subs, "nonmatmul")
            sections += [Section("Non-matmul: " + s.title.lower(), s.steps) for s in nm_sections]
            formulas += nm_formulas
            parts[part_symbol("C", "nonmatmul")] = nm_value
            fwd = fwd + part_symbol("C", "nonmatmul")
            conv.append("non-matmul work at the per-element costs of symcalc.algebra.flops.NONMATMUL_COSTS")
        steps, value = chain(Compose("flops.forward", "C", fwd, "forward pass"), parts)
        if quantity == "flops.training":
            steps += _training_steps(spec, opts, value, subs)
            value = steps[-1].value
            conv.append("training = forward + backward (2x forward)" + RECOMPUTE_NOTE[opts.recompute])
        tail.append(Section("Forward" if quantity == "flops.forward" else "Training", tuple(steps)))
    body = with_sizes(sections + tail, formulas, values) + (
        result_section(quantity, "C", value, quantity_meaning(quantity, spec, opts)),)
    title = title_of(quantity, spec)
    return Derivation(spec.name, quantity, title, "C", body, tuple(conv))


RECOMPUTE_NOTE = {"none": "", "full": " + one recompute forward (full recomputation)",
                  "selective": " + the attention core's forward (selective recomputation)"}


def _training_steps(spec: Spec, opts: Options, forward_value, subs: dict) -> list:
    """Training = (3 + full) x forward [+ attention core], as in flops.training_total."""
    fwd = part_symbol("C", "flops.forward")
    parts = {fwd: forward_value}
    expr = sympy.Mul(3 + int(opts.recompute == "full"), fwd, evaluate=False)
    steps: list = []
    if opts.recompute == "selective":
        core, core_value = chain(Formula("attention_core", "C", q.attention_core(spec, opts),
                                         "korthikanti2022", "attention core recomputed: scores, "
                                         "softmax and weighted sum of V"), subs)
        steps += core
        parts[part_symbol("C", "attention_core")] = core_value
        expr = expr + part_symbol("C", "attention_core")
    more, _ = chain(Compose("flops.training", "C", expr, "forward + backward (2x forward)"
                            + RECOMPUTE_NOTE[opts.recompute]), parts)
    return steps + more


def _params_line(spec: Spec, subs: dict) -> tuple[list, object, sympy.Expr]:
    expr = simplify(q.expression("params.total", spec))
    steps, value = chain(Formula("params.total", "N", expr, "hf_transformers",
                                 "parameters (the derivation of params.total itemises it)"), subs)
    return steps, value, expr


def _derive_state_bytes(spec: Spec, quantity: str, opts: Options, values: dict) -> Derivation:
    subs = numbers(values)
    steps, n_value, n_expr = _params_line(spec, subs)
    N = part_symbol("N", "params.total")
    if quantity == "memory.weights_bytes" and quantized.parse(opts.dtype):
        return _derive_quantized(spec, opts, values)
    if quantity == "memory.weights_bytes":
        expr = N * memory.dtype_bytes(opts.dtype)
        conv = (f"weights stored as {opts.dtype}: {memory.dtype_bytes(opts.dtype)} bytes each",)
        source = ""
    else:
        opt = memory.optimizer(opts.optimizer)
        expr = memory.training_bytes(N, opt, opts.zero)
        conv = (opt.meaning, "everything on one device (no ZeRO partitioning)"
                if opts.zero == 0 and opts.dp == 1 else
                f"ZeRO stage {opts.zero} over {opts.dp} data-parallel ranks, per rank")
        source = "rajbhandari2020"
    more, value = chain(Compose(quantity, "M", expr, quantity_meaning(quantity, spec, opts), source),
                        {**subs, N: n_value})
    body = with_sizes([Section("Parameters", tuple(steps)), Section("Bytes", tuple(more))],
                       [n_expr, expr], values) + (result_section(quantity, "M", value,
                                                                  quantity_meaning(quantity, spec, opts)),)
    title = title_of(quantity, spec)
    return Derivation(spec.name, quantity, title, "M", body, conv)


def _derive_quantized(spec: Spec, opts: Options, values: dict) -> Derivation:
    """Weights in a quantized format: the parameters it quantizes and the rest, then the
    bytes of each group (quantized weights, scales, zero points, per-matrix scales, 16-bit
    tensors) and their sum."""
    fmt = quantized.parse(opts.dtype)
    subs = numbers(values)
    leaves = q.weight_leaves(spec)
    q_paths = [p for p in leaves if quantized.quantized(p, fmt, bool(spec.moe))]
    n_q = simplify(sum((leaves[p] for p in q_paths), sympy.Integer(0)))
    n_rest = simplify(q.expression("params.total", spec) - n_q)
    steps: list = []
    parts: dict = {}
    for path, expr, what in (("params.quantized", n_q, "weight matrices the format quantizes: "
                              + ", ".join(q_paths)),
                             ("params.unquantized", n_rest, "every other parameter, kept at 16 bits")):
        recipe = "openai2025" if path == "params.quantized" and fmt.experts_only and spec.moe \
            else "hf_transformers"
        more, val = chain(Formula(path, "N", expr, recipe, what), subs)
        steps += more
        parts[part_symbol("N", path)] = val
    Nq, Nr = part_symbol("N", "params.quantized"), part_symbol("N", "params.unquantized")
    main, scale_src = fmt.sources[0], fmt.sources[-1]
    groups = [("weights.quantized", Nq * sympy.Rational(fmt.bits, 8),
               f"{fmt.bits}-bit weights", main)]
    if fmt.group is not None:
        groups.append(("weights.scales", Nq * sympy.Rational(fmt.scale_bytes) / fmt.group,
                       f"one {fmt.scale_bytes}-byte scale per {fmt.group} weights", scale_src))
        if fmt.zero_bytes:
            groups.append(("weights.zero_points", Nq * sympy.Rational(fmt.zero_bytes) / fmt.group,
                           f"one {fmt.bits}-bit zero point per {fmt.group} weights", main))
    if fmt.tensor_bytes:
        count = sum(quantized.matrices(p, spec) for p in q_paths)
        groups.append(("weights.tensor_scales", sympy.Integer(count * fmt.tensor_bytes),
                       f"one fp32 scale ({fmt.tensor_bytes} bytes) for each of the {count} "
                       "weight matrices", main))
    groups.append(("weights.unquantized", 2 * Nr, "16-bit tensors", ""))
    byte_steps: list = []
    total = sympy.Integer(0)
    for path, expr, what, source in groups:
        more, val = chain(Compose(path, "M", expr, what, source), {**subs, **parts})
        byte_steps += more
        parts[part_symbol("M", path)] = val
        total = total + part_symbol("M", path)
    more, value = chain(Compose("memory.weights_bytes", "M", total, f"weights in {fmt.name}"), parts)
    byte_steps += more
    meaning_ = quantity_meaning("memory.weights_bytes", spec, opts)
    body = with_sizes([Section("Parameters", tuple(steps)), Section("Bytes", tuple(byte_steps))],
                      [n_q, n_rest], values) + (result_section("memory.weights_bytes", "M", value,
                                                                meaning_),)
    conv = (f"{fmt.meaning}: {fmt.bits_per_weight()} bits per quantized weight",
            "quantized: the routed experts' weight matrices (GPT-OSS's MXFP4 recipe)"
            if fmt.experts_only and spec.moe else
            "quantized: the weight matrices of the layers; embeddings, head, norms, routers, "
            "separate biases and small gating tensors stay at 16 bits",
            "groups and blocks counted as elements / group size (rows padded to whole groups)")
    return Derivation(spec.name, "memory.weights_bytes", title_of("memory.weights_bytes", spec),
                      "M", body, conv)


BYTES_PER_VALUE = sympy.Symbol("beta_kv", positive=True)
BYTES_PER_STATE = sympy.Symbol("beta_state", positive=True)


def _bytes_text(dtype: str) -> str:
    n = memory.dtype_bytes(dtype, "kv-dtype")
    return f"{n} byte" + ("" if n <= 1 else "s")


SINGLE_SOURCES = {"flops.decode_per_token": "pope2022", "memory.kv_cache_bytes": "pope2022",
                  "memory.activations_bytes": "korthikanti2022",
                  "memory.recurrent_state_bytes": "transformers_cache"}


def activation_conventions(spec: Spec, opts: Options) -> str:
    """The activation model in words, as the report states it (without the report's option
    name: "the paper activation model: Korthikanti et al. ...")."""
    from ..algebra.conventions import activations_text

    text = activations_text(opts)
    flag = "--activations "
    if not text.startswith(flag):
        return text
    name, _, rest = text[len(flag):].partition(": ")
    return f"the {name} activation model: {rest}"


# a norm by kind, where a saved tensor's words name the paper's LayerNorm
NORM_WORDS = {"rmsnorm": "RMSNorm"}


def _norm_words(choice: str, source: str, spec: Spec) -> tuple[str, str]:
    """A saved tensor's words and source for this model's norm: Korthikanti et al.'s
    "each LayerNorm keeps its input" is each RMSNorm's for an RMSNorm model (Zhang and
    Sennrich), as the component's own source is."""
    from .citations import NORM_BY_KIND

    name = NORM_WORDS.get(spec.norm)
    if name and "LayerNorm" in choice and "(Cohere)" not in choice:
        choice = choice.replace("LayerNorm", name)
        if source == "ba2016":
            source = NORM_BY_KIND[spec.norm]
    return choice, source


def _single_source(spec: Spec, quantity: str) -> str:
    """The source of a one-formula quantity: the paper of the component that shapes it."""
    if quantity in ("memory.kv_cache_bytes", "flops.decode_per_token"):
        if spec.m_csa is not None:  # DeepSeek-V4's compressed caches beside the window
            return "deepseek2026v4"
        if spec.mla:
            return "deepseek2024"
        if spec.L_local is not None:
            return "gemma2024"
        if spec.W is not None:
            return "beltagy2020"
    return SINGLE_SOURCES.get(quantity, "")


def korthikanti_misfit(spec: Spec) -> str:
    """'' when Korthikanti et al.'s per-layer activation count was derived for this kind of
    layer (GPT-3's: multi-head attention, a plain 4d FFN), else what differs (the ``paper``
    activation model takes these into account term by term, except the mixers of hybrid
    stacks)."""
    differs = []
    if spec.ffn == "gated":
        differs.append("a gated (SwiGLU-type) FFN keeps a third d_ff-wide input")
    elif spec.d_ff != 4 * spec.d:
        differs.append(f"the FFN is {spec.d_ff} wide, not 4d")
    if spec.n_kv is not None and spec.n_kv != spec.n_h:
        differs.append(f"grouped/multi-query attention stores keys and values of {spec.n_kv} "
                       f"heads, not {spec.n_h}")
    if spec.moe:
        differs.append("routed experts keep their own inputs")
    if spec.hybrid:
        differs.append("linear-attention/SSM layers store other tensors")
    if not differs:
        return ""
    return ("Korthikanti et al.'s 34 s b d + 5 n_h s^2 b per layer was derived for GPT-3's "
            "layers (multi-head attention, a plain 4d FFN); here it is applied term by term "
            "to this model's layers, where " + "; ".join(differs)
            + ("; the linear-attention and SSM mixers' own tensors are not counted"
               if spec.hybrid else ""))


def _kv_words(spec: Spec, opts: Options) -> str:
    """What one cached token holds in each layer, in words."""
    at = f"at {opts.kv_dtype} ({_bytes_text(opts.kv_dtype)} per value)"
    if spec.mla and opts.mla_cache != "expanded":
        return ("MLA cache: per token and layer, the key/value latent and the rotary key "
                f"shared by all heads, {at}; keys and values are up-projected from them when "
                "attention runs")
    if spec.mla:
        return f"MLA cache expanded: per token and layer, the up-projected keys and values of every head, {at}"
    return f"per cached token and layer: a key and a value vector for each K/V head, {at}"


def _derive_single(spec: Spec, quantity: str, opts: Options, values: dict) -> Derivation:
    letter = "C" if quantity.startswith("flops") else "M"
    if quantity == "flops.decode_per_token" and opts.context:
        values = dict(values, s=opts.context)
    subs = numbers(values)
    if spec.W is not None:
        subs[SIZES["W"].symbol] = sympy.Integer(spec.W)
    extra: list[Define] = []
    if quantity == "memory.kv_cache_bytes":
        # bytes per value kept as a symbol: 2 (K and V) x values x beta stays visible
        per_value = memory.dtype_bytes(opts.kv_dtype, "kv-dtype")
        expr = simplify(q._fix(memory.kv_cache_bytes(spec.family, BYTES_PER_VALUE), spec, opts))
        subs[BYTES_PER_VALUE] = per_value
        extra.append(Define(BYTES_PER_VALUE, per_value,
                            f"bytes per cached value ({opts.kv_dtype})"))
        if q.value(expr.xreplace({BYTES_PER_VALUE: per_value}), values) != q.value(
                q.expression(quantity, spec, opts), values):
            raise AssertionError("the KV-cache derivation disagrees with memory.kv_cache_bytes")
    elif quantity == "memory.recurrent_state_bytes":
        # bytes per value kept as symbols: the state's and the convolution inputs' own
        kv_bytes = memory.dtype_bytes(opts.kv_dtype, "kv-dtype")
        state_bytes = memory.dtype_bytes(opts.state_dtype, "state-dtype")
        expr = simplify(q._fix(memory.recurrent_state_bytes(spec.family, BYTES_PER_VALUE,
                                                            BYTES_PER_STATE), spec, opts))
        subs.update({BYTES_PER_VALUE: kv_bytes, BYTES_PER_STATE: state_bytes})
        extra += [Define(BYTES_PER_STATE, state_bytes, f"bytes per state value ({opts.state_dtype})"),
                  Define(BYTES_PER_VALUE, kv_bytes, f"bytes per cached value ({opts.kv_dtype})")]
        if q.value(expr.xreplace({BYTES_PER_VALUE: kv_bytes, BYTES_PER_STATE: state_bytes}),
                   values) != q.value(q.expression(quantity, spec, opts), values):
            raise AssertionError("the state derivation disagrees with memory.recurrent_state_bytes")
    else:
        expr = simplify(q.expression(quantity, spec, opts))
    steps, value = chain(Formula(quantity, letter, expr, _single_source(spec, quantity),
                                 quantity_meaning(quantity, spec, opts)), subs)
    conv = {"flops.decode_per_token": ("one new token per sequence; s is the KV-cache length",),
            "memory.kv_cache_bytes": (_kv_words(spec, opts),),
            "memory.recurrent_state_bytes": (
                f"per sequence: the recurrent state at {opts.state_dtype} (what transformers "
                "keeps) and the convolutions' last inputs, as many as their kernel is wide, at "
                f"{opts.kv_dtype}; it does not grow with the sequence",),
            "memory.activations_bytes": (activation_conventions(spec, opts),)}[quantity]
    if quantity == "memory.activations_bytes" and opts.activations == "paper" \
            and korthikanti_misfit(spec):
        conv += (korthikanti_misfit(spec),)
    if spec.mla and quantity == "flops.decode_per_token":
        conv += ("MLA cache: " + ("up-projected keys and values" if opts.mla_cache == "expanded"
                                  else "the key/value latent and shared rotary key"),)
    if spec.W is not None and quantity in ("memory.kv_cache_bytes", "flops.decode_per_token"):
        conv += (f"{spec.local_layers} of {spec.L} layers slide: at most W tokens each",)
    all_values = dict(values, **({"W": spec.W} if spec.W else {}))
    sizes = with_sizes([Section("Formula", tuple(steps))], [expr], all_values)
    sizes = (Section(sizes[0].title, sizes[0].steps + tuple(extra)),) + sizes[1:]
    body = sizes + (
        result_section(quantity, letter, value, quantity_meaning(quantity, spec, opts)),)
    title = title_of(quantity, spec)
    return Derivation(spec.name, quantity, title, letter, body, conv)


def _derive_activations(spec: Spec, opts: Options, values: dict) -> Derivation:
    """Every tensor the chosen activation model keeps, one line each with its source and the
    implementation choice it depends on (its bytes over all the layers holding it, after
    recomputation and parallelism), then their sum."""
    quantity = "memory.activations_bytes"
    subs = numbers(values)
    facts = activations.facts_of(spec, opts.dtype, opts.batch)
    kept: dict[str, list] = {}  # path -> [expression, source, choice]
    for stack, term, expr in activations.kept_terms(opts.activations, facts, spec.shape,
                                                    opts.recompute, opts.tp > 1,
                                                    opts.sequence_parallel):
        expr = q._fix(expr, spec, opts)
        if expr == 0:
            continue
        path = term.name if stack == "layers" else f"{stack}/{term.name}"
        if path in kept:
            kept[path][0] = sympy.expand(kept[path][0] + expr)
        else:
            choice, source = (_norm_words(term.choice, term.source, spec)
                              if opts.activations == "paper" else (term.choice, term.source))
            if opts.activations != "paper" and source == "korthikanti2022":
                source = "torch_autograd"  # the eager and sdpa models read what autograd saves
            kept[path] = [expr, source, choice]
    steps, parts, formulas = [], {}, []
    for path, (expr, source, choice) in kept.items():
        formulas.append(expr)
        more, parts[path] = chain(Formula(path, "M", expr, source, choice), subs)
        steps += more
    total = sympy.Add(*[part_symbol("M", p) for p in parts], evaluate=False)
    more, value = chain(Compose(quantity, "M", total, "the sum of every kept tensor"),
                        {**subs, **{part_symbol("M", p): v for p, v in parts.items()}})
    if q.whole(value) != q.whole(q.value(q.expression(quantity, spec, opts), values)):
        raise AssertionError("the activation derivation disagrees with memory.activations_bytes")
    conv = (activation_conventions(spec, opts),)
    if opts.activations == "paper" and korthikanti_misfit(spec):
        conv += (korthikanti_misfit(spec),)
    body = with_sizes([Section("Saved tensors", tuple(steps)), Section("Total", tuple(more))],
                      formulas, values) + (
        result_section(quantity, "M", value, quantity_meaning(quantity, spec, opts)),)
    return Derivation(spec.name, quantity, title_of(quantity, spec), "M", body, conv)

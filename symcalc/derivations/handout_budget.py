"""A handout's whole budget of one model at its workload (b sequences of s tokens): weights,
the KV cache (set against the multi-head cache of the same shape for GQA, MQA and MLA), a
hybrid's recurrent state beside it, training memory with its activations, and training
compute against the rule of thumb 6 N D with the gap between them explained. Exact integers
and the derivations that show how; no formatting.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..records import replace

import sympy

from ..algebra import accounting, memory, quantities as q, quantized
from ..algebra.options import Options
from ..algebra.spec import Spec
from ..algebra.symbols import SIZES
from .derivation import Compose, Derivation, Formula, Section, part_symbol
from .derive import activation_conventions, chain, derive, model_values, numbers, with_sizes
from .sixnd import six_nd_derivation


@dataclass(frozen=True)
class Budget:
    """The whole budget of one model at the handout's workload: exact integers (bytes rounded
    up), with the derivations that show how. Names follow the report's: the training
    *state* (weights, gradients, optimizer state), the *activations* and their sum, the
    training *peak*."""
    params: int
    active: int | None  # MoE: parameters one token passes through
    weights_bytes: int
    kv_bytes: int | None  # None for an encoder (nothing is cached)
    kv_mha_bytes: int | None  # the same shape with multi-head attention's cache (GQA, MQA, MLA)
    recurrent_bytes: int | None  # a hybrid's recurrent state (does not grow with s)
    state_bytes: int
    activations_bytes: int
    peak_bytes: int
    forward_flops: int  # matmul FLOPs of one forward pass over b x s tokens
    training_flops: int
    six_nd: int  # 6 N D with D = b s tokens (N = active parameters for an MoE)
    gap: int  # training FLOPs minus 6 N D
    tokens: int
    batch: int
    seq: int
    activation_model: str  # the activation model, in words (as the report states it)
    derivations: tuple[Derivation, ...]
    notes: tuple[tuple[str, str], ...]  # (kind, lesson): gqa, mla, mla_token, hybrid, negative


def _value(quantity: str, spec: Spec, opts: Options, values: dict) -> int:
    return int(q.whole(q.value(q.expression(quantity, spec, opts), values)))


def active_derivation(spec: Spec, opts: Options, total: int) -> Derivation:
    """An MoE's active parameters: the total less the routed experts a token skips,
    (E - k) of them in every MoE layer."""
    values = model_values(spec, opts)
    subs = numbers(values)
    E, k = SIZES["E"].symbol, SIZES["k"].symbol
    experts = [leaf.value for leaf in accounting.params(spec) if accounting.is_routed_expert(leaf.path)]
    skipped_expr = sympy.factor(sympy.expand(sum(v - v.xreplace({E: k}) for v in experts)))
    skipped, skipped_value = chain(Formula("skipped", "N", skipped_expr, "shazeer2017",
                                           "routed experts a token skips: E - k in every MoE "
                                           "layer"), subs)
    N, N_skip = part_symbol("N", "params.total"), part_symbol("N", "skipped")
    active, value = chain(Compose("params.active", "N", sympy.Add(N, -N_skip, evaluate=False),
                                  "parameters one token passes through"),
                          {N: total, N_skip: skipped_value})
    body = with_sizes([Section("Experts a token skips", tuple(skipped)),
                       Section("Active parameters", tuple(active))], [skipped_expr], values)
    return Derivation(spec.name, "params.active", f"Active parameters of {spec.name}", "N", body,
                      ("each token passes through k of the E experts; the router and the "
                       "shared experts count in full",), {"active": int(value)})


def _layer_counts(expr) -> set:
    """The layer counts in ``expr`` (L, L_attn, L_idx, ...): the kinds of layer that cache."""
    return {x for x in expr.free_symbols if x.name == "L" or x.name.startswith("L_")}


def mla_cache_derivation(spec: Spec, opts: Options) -> Derivation:
    """Values MLA caches per token and layer (the latent and the shared rotary key) against
    the keys and values multi-head attention of the same heads would cache. Where the layers
    do not all cache the same (a hybrid's MLA layers among recurrent ones, HY-V4's indexer
    keys on some layers), both are counted per token and summed over the kinds of layer,
    each kind with its own number of layers, as memory.kv_cache_bytes sums them; the meta
    says which (``per``: "layer" or "token")."""
    values = model_values(spec, opts)
    subs = numbers(values)
    L, b, s = (SIZES[n].symbol for n in ("L", "b", "s"))
    per_token = {}
    for cache in ("latent", "expanded"):
        expr = q.expression("memory.kv_cache_bytes", spec, opts.with_(mla_cache=cache))
        per_token[cache] = sympy.factor(expr / (b * s * memory.dtype_bytes(opts.kv_dtype,
                                                                             "kv-dtype")))
    per_layer = {c: sympy.factor(w / L) for c, w in per_token.items()}
    uniform = all(_layer_counts(per_token[c]) == {L} and not _layer_counts(w)
                  for c, w in per_layer.items())
    if uniform:  # every one of the L layers caches the same: per token and layer
        per = per_layer
        texts = ("Cached values per token and layer",
                 "the latent and the rotary key, per token and layer",
                 "keys and values of every head, per token and layer")
        conventions = ("values, not bytes: both at the same bytes per value",)
    else:  # the kinds of layer, each with its own count, summed per token
        per = {c: sympy.collect(sympy.expand(w), sorted(_layer_counts(w), key=str))
               for c, w in per_token.items()}
        texts = ("Cached values per token, summed over the layers",
                 "what the latent cache holds per token, summed over the layers",
                 "what multi-head attention would cache per token, summed over the layers")
        conventions = ("values, not bytes: both at the same bytes per value",
                       "the layers do not all cache the same: each kind of layer is counted "
                       "with its own number of layers")
    latent, latent_value = chain(Formula("latent", "n", per["latent"], "deepseek2024",
                                         texts[1]), subs)
    mha, mha_value = chain(Formula("MHA", "n", per["expanded"], "vaswani2017", texts[2]), subs)
    n_lat, n_mha = part_symbol("n", "latent"), part_symbol("n", "MHA")
    ratio, ratio_value = chain(Compose("ratio", "n", sympy.Mul(n_mha, sympy.Pow(
        n_lat, -1, evaluate=False), evaluate=False), "how many times fewer values MLA caches"),
        {n_lat: latent_value, n_mha: mha_value})
    body = with_sizes([Section(texts[0], tuple(latent + mha + ratio))],
                      [per["latent"], per["expanded"]], values)
    return Derivation(spec.name, "memory.kv_cache_bytes", f"The latent cache of {spec.name} "
                      "against multi-head attention's", "n", body, conventions,
                      {"latent": int(latent_value), "mha": int(mha_value), "ratio": ratio_value,
                       "per": "layer" if uniform else "token"})


def decode_derivation(spec: Spec, kv: int, state: int) -> Derivation:
    """Decode memory of a hybrid: the cache of its attention layers and the recurrent state of
    the others, side by side."""
    M_kv, M_state = part_symbol("M", "memory.kv_cache_bytes"), part_symbol("M", "memory.recurrent_state_bytes")
    steps, total = chain(Compose("decode", "M", sympy.Add(M_kv, M_state, evaluate=False),
                                 "the KV cache and the recurrent state"), {M_kv: kv, M_state: state})
    return Derivation(spec.name, "memory.decode_bytes", f"Decode memory of {spec.name}", "M",
                      (Section("Cache and state", tuple(steps)),),
                      ("what decoding keeps besides the weights",),
                      {"decode": int(total), "share": sympy.Rational(state, int(total))})


def peak_derivation(spec: Spec, opts: Options, state: int, act: int) -> Derivation:
    """The training peak as the report sums it: the training state and the activations, each
    rounded up to whole bytes."""
    M_state, M_act = part_symbol("M", "memory.training_bytes"), part_symbol("M", "memory.activations_bytes")
    steps, total = chain(Compose("memory.training_peak", "M", sympy.Add(M_state, M_act, evaluate=False),
                                 "weights, gradients, optimizer state and activations"),
                         {M_state: state, M_act: act})
    return Derivation(spec.name, "memory.training_peak", f"Training peak of {spec.name}", "M",
                      (Section("State and activations", tuple(steps)),),
                      ("one training step on one device; each part rounded up to whole bytes "
                       "before the sum",), {"peak": int(total)})


def from_parameters(spec: Spec, quantity: str, opts: Options) -> Derivation:
    """Weights or training state in bytes from N, the parameters the handout derived in its
    own section, rather than N's closed form once more (a quantized format keeps its
    derivation: it sorts the parameters into groups)."""
    full = derive(spec, quantity, opts)
    if quantity == "memory.weights_bytes" and quantized.parse(opts.dtype):
        return full
    kept = tuple(s for s in full.sections if s.title != "Parameters")
    return replace(full, sections=kept,
                   conventions=full.conventions + ("N: the parameters derived step by step above",))


def budget(spec: Spec, opts: Options) -> Budget:
    values = model_values(spec, opts)
    n = _value("params.total", spec, opts, values)
    derivs, lessons = [], []

    def note(kind: str, text: str) -> None:  # a lesson and its kind (the sheet's question)
        lessons.append((kind, text))

    active = None
    if spec.moe:
        act_d = active_derivation(spec, opts, n)
        active = act_d.meta["active"]
        if active != _value("params.active", spec, opts, values):
            raise AssertionError("the active-parameter derivation disagrees with params.active")
        derivs.append(act_d)
    derivs.append(from_parameters(spec, "memory.weights_bytes", opts))
    kv = kv_mha = recurrent = None
    if spec.family != "encoder":
        kv = _value("memory.kv_cache_bytes", spec, opts, values)
        derivs.append(derive(spec, "memory.kv_cache_bytes", opts))
        n_kv = spec.n_kv if spec.n_kv is not None else spec.n_h
        # an all-linear, all-SSM or all-convolution stack caches no keys or values: no lesson
        # sets its cache against multi-head attention's
        attends = kv > 0
        # (a window caps an MLA cache: not one width per token and layer)
        if spec.mla and spec.W is None and attends:
            mla = mla_cache_derivation(spec, opts)
            derivs.append(mla)
            kv_mha = _value("memory.kv_cache_bytes", spec, opts.with_(mla_cache="expanded"), values)
            if mla.meta["per"] == "layer":
                note("mla", f"the latent cache holds {mla.meta['latent']:,} values per token and "
                             f"layer where multi-head attention would hold {mla.meta['mha']:,} keys "
                             f"and values: {round(mla.meta['ratio'])}x fewer, the lesson of MLA")
            else:
                note("mla_token", f"over all its layers the latent cache holds "
                                  f"{mla.meta['latent']:,} values per token where multi-head "
                                  f"attention would hold {mla.meta['mha']:,}: "
                                  f"{round(mla.meta['ratio'])}x fewer, the lesson of MLA")
        elif n_kv != spec.n_h and attends:
            mha = replace(spec, n_kv=spec.n_h)
            kv_mha = _value("memory.kv_cache_bytes", mha, opts, model_values(mha, opts))
            factor = spec.n_h // n_kv if spec.n_h % n_kv == 0 else spec.n_h / n_kv
            note("gqa", f"with {n_kv} K/V heads instead of {spec.n_h}, the cache is "
                         f"{factor}x smaller than multi-head attention's of the same shape; the K "
                         "and V projections shrink by the same factor, but they are a small "
                         "share of the parameters")
        if spec.hybrid:
            recurrent = _value("memory.recurrent_state_bytes", spec, opts, values)
            derivs.append(derive(spec, "memory.recurrent_state_bytes", opts))
            dec = decode_derivation(spec, kv, recurrent)
            derivs.append(dec)
            share = 100 * dec.meta["share"]
            note("hybrid", f"at s = {values['s']:,} the recurrent state is {recurrent:,} bytes, "
                         f"{round(share) if share >= 10 else round(float(share), 1)}% of the "
                         "decode memory; it stays the "
                         "same at any length while the KV cache of the attention layers grows "
                         "with s")
    state = _value("memory.training_bytes", spec, opts, values)
    act = _value("memory.activations_bytes", spec, opts, values)
    derivs += [from_parameters(spec, "memory.training_bytes", opts),
               derive(spec, "memory.activations_bytes", opts)]
    peak = peak_derivation(spec, opts, state, act)
    derivs.append(peak)
    fwd = _value("flops.forward_matmul", spec, opts, values)
    train = _value("flops.training", spec, opts, values)
    six = six_nd_derivation(spec, opts, active or n, fwd, train)
    derivs.append(six)
    if six.meta["gap"] < 0:
        note("negative", six.meta["negative"])
    return Budget(n, active, _value("memory.weights_bytes", spec, opts, values), kv, kv_mha,
                  recurrent, state, act, peak.meta["peak"], fwd, train, six.meta["six_nd"],
                  six.meta["gap"], values["b"] * values["s"], values["b"], values["s"],
                  activation_conventions(spec, opts), tuple(derivs), tuple(lessons))

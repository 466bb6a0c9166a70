"""How fast, worked out step by step (issue 23): the roofline time of prefill or decode, the
KV-cache capacity as vLLM lays it out, MFU. The formulas are the rules of
:mod:`symcalc.algebra.roofline`, :mod:`symcalc.algebra.serving` and
:mod:`symcalc.algebra.utilization` applied to sympy symbols; the numbers are the quick path's
(:mod:`symcalc.fast.speed`, computed by the caller and passed in as ``fig``, a
:class:`symcalc.fast.speed.Figures`, with its capacity and utilization blocks), so a derivation
ends on the report's figure. Data only: no formatting here.
"""
from __future__ import annotations

from fractions import Fraction

import sympy

from ..algebra import roofline as RL, serving as SV, utilization as UT
from ..algebra.spec import Spec
from ..algebra.symbols import (B_blk, L, M_gpu, N_gpu, N_tok, R_tok, b, beta_m, beta_n, d,
                               eta_c, eta_m, eta_n, pi_c, u_mem)
from ..errors import SymcalcError
from .derivation import (Compose, Define, Derivation, Evaluate, Formula, Relate, Result,
                         Section, Substitute, part_symbol)

QUANTITIES = {
    "speed.prefill_seconds": "time of the prefill (time to first token)",
    "speed.decode_seconds_per_token": "time to decode one token per sequence",
    "capacity.max_sequences": "sequences the KV cache holds at once",
    "utilization.mfu": "model FLOPs utilization",
}


def _r(x) -> sympy.Rational:
    x = Fraction(x)
    return sympy.Rational(x.numerator, x.denominator)


def _value(x):
    x = _r(x)
    return int(x) if x.q == 1 else x


def _evaluated(path: str, letter: str, expr, values: dict, meaning: str = "",
               source: str = "") -> list:
    """Formula (or composition of earlier parts), the numbers put in, the value."""
    step = (Compose(path, letter, expr, meaning, source) if any(
        getattr(sym, "name", "").startswith(tuple("CMTINBSU")) and "[" in sym.name
        for sym in expr.free_symbols) else Formula(path, letter, expr, source, meaning))
    value = expr.xreplace({k: _r(v) for k, v in values.items()})
    return [step, Substitute(path, letter, expr, tuple((k, _value(v)) for k, v in values.items()
                                                    if k in expr.free_symbols)),
            Evaluate(path, letter, _value(value))]


def _given(path: str, letter: str, value, meaning: str, source: str = "") -> list:
    """A figure taken from the report (derived on its own by ``derive --quantity ...``)."""
    v = _value(value)
    return [Formula(path, letter, sympy.sympify(v), source, meaning), Evaluate(path, letter, v)]


def _accelerator(fig, network: bool) -> Section:
    gpu = fig.gpu
    steps = [Define(pi_c, int(fig.peak), f"peak dense {fig.dtype} FLOP/s of one {gpu.name}"),
             Define(beta_m, int(gpu.memory_bandwidth), "memory bandwidth, bytes/s")]
    if network:
        link = next(l[1] for l in fig.links.values() if l and l[1])
        steps.append(Define(beta_n, link.bandwidth, f"{link.name}, bytes/s one way"))
    for sym, eta in zip((eta_c, eta_m, eta_n), fig.sopts.efficiency):
        if eta != 1 and (sym is not eta_n or network):
            steps.append(Define(sym, _value(eta), {eta_c: "compute efficiency",
                                                   eta_m: "memory efficiency",
                                                   eta_n: "network efficiency"}[sym]))
    return Section("The accelerator", tuple(steps))


def derive_phase(spec: Spec, fig, phase: str) -> Derivation:
    """The roofline time of ``phase`` (prefill or decode) on the most-loaded rank of ``fig``."""
    p = fig.phase(phase)
    w = fig.w
    network = any(p.wire.values())
    tokens = "b s" if phase == "prefill" else "b"
    C, M, Xn, T = (part_symbol("C", phase), part_symbol("M", phase),
                   part_symbol("M", f"{phase}/network"), part_symbol("T", phase))
    parts = {k: part_symbol("M", f"{phase}/{k}") for k in p.bytes}
    meanings = {
        "weights": "weights read: all but lookup-only tables and the routed experts no token "
                   "picks",
        "kv_cache": "KV cache written" if phase == "prefill" else
                    "KV cache read at the context, one token written",
        "recurrent_state": "recurrent state written" if phase == "prefill" else
                           "recurrent state read and written",
        "hidden": f"hidden states: each layer reads its input and writes its output, {tokens} "
                  "tokens",
    }
    flops_meaning = ("FLOPs of the forward pass (flops.forward)" if phase == "prefill" else
                     "FLOPs of one decoded token per sequence (flops.decode_per_token)")
    if not fig.layout.trivial:
        flops_meaning += ", the rank's share"  # its own message id (i18n)
    work = _given(phase, "C", p.flops, flops_meaning)
    rank = fig.layout.trivial
    for k, x in p.bytes.items():
        if not x:
            continue
        if k == "hidden" and rank:
            expr = RL.hidden_bytes(L, b * (w.seq_len if phase == "prefill" else 1), d,
                                   w.value_bytes)
            work += [Formula(f"{phase}/hidden", "M", expr, "pope2022time", meanings[k]),
                     Substitute(f"{phase}/hidden", "M", expr, ((L, w.layers), (b, w.batch),
                                                                (d, w.width))),
                     Evaluate(f"{phase}/hidden", "M", _value(x))]
        else:
            work += _given(f"{phase}/{k}", "M", x, meanings[k],
                           "uniform_routing" if k == "weights" and w.experts else "")
    shown = [k for k, x in p.bytes.items() if x]
    total = sympy.Add(*[parts[k] for k in shown])
    work += [Compose(phase, "M", total, "bytes moved"),
             Substitute(phase, "M", total, tuple((parts[k], _value(p.bytes[k])) for k in shown)),
             Evaluate(phase, "M", _value(p.moved))]
    if network:
        work += _given(f"{phase}/network", "M", sum(p.wire.values()),
                       "bytes the rank sends: " + ", ".join(d for d, x in p.wire.items() if x)
                       + " collectives on the wire (ring algorithms)", "thakur2005")
    e = fig.sopts.efficiency
    expr = RL.phase_seconds(RL.compute_seconds(C, pi_c, eta_c if e[0] != 1 else 1),
                            RL.memory_seconds(M, beta_m, eta_m if e[1] != 1 else 1),
                            RL.network_seconds(Xn, beta_n, eta_n if e[2] != 1 else 1)
                            if network else 0)
    values = {C: p.flops, M: p.moved, pi_c: fig.peak, beta_m: fig.gpu.memory_bandwidth}
    if network:
        values.update({Xn: sum(p.wire.values()),
                       beta_n: next(l[1] for l in fig.links.values() if l and l[1]).bandwidth})
    values.update({sym: eta for sym, eta in zip((eta_c, eta_m, eta_n), e) if eta != 1})
    stage_time = p.seconds / p.stages
    roof = [Formula(phase, "T", expr, "pope2022time",
                    "the larger of compute and memory time, plus communication"),
            Substitute(phase, "T", expr, tuple((k, _value(v)) for k, v in values.items()
                                               if k in expr.free_symbols)),
            Evaluate(phase, "T", _value(stage_time))]
    if p.stages > 1:
        roof += [Compose(phase, "T", p.stages * T, f"{p.stages} pipeline stages in turn"),
                 Evaluate(phase, "T", _value(p.seconds))]
    I, R = part_symbol("I", phase), sympy.Symbol("R_ridge", positive=True)
    ridge_expr = RL.ridge_point(pi_c, beta_m, eta_c if e[0] != 1 else 1, eta_m if e[1] != 1 else 1)
    bound = [Formula(phase, "I", RL.intensity(C, M), "williams2009", "arithmetic intensity"),
             Substitute(phase, "I", RL.intensity(C, M), ((C, _value(p.flops)), (M, _value(p.moved)))),
             Evaluate(phase, "I", _value(p.intensity)),
             Relate(phase, "I", I, "<" if p.intensity < fig.ridge() else ">=",
                    (ridge_expr, _r(fig.ridge())),
                    {"compute": "the ridge point: compute-bound",
                     "memory": "the ridge point: memory-bound",
                     "network": "the ridge point: network-bound"}[p.bound], "williams2009")]
    conventions = [fig.sopts.is_bound and "a lower bound: every efficiency is 1" or
                   "an estimate at the efficiencies given",
                   f"{fig.dtype} peak of {fig.gpu.name}", "compute and memory traffic overlap; "
                   "communication does not"]
    if not rank:
        conventions.append(f"the most-loaded rank of tp={fig.layout.tp} pp={fig.layout.pp} "
                           f"ep={fig.layout.ep} cp={fig.layout.cp}")
    what = "prefill" if phase == "prefill" else "decode"
    quantity = "speed.prefill_seconds" if phase == "prefill" else "speed.decode_seconds_per_token"
    meaning = QUANTITIES[quantity]
    sections = (_accelerator(fig, network),
                Section(f"FLOPs and bytes of the {what}", tuple(work)),
                Section("The roofline", tuple(roof + bound)),
                Section("Result", (Result(phase, "T", _value(p.seconds), "seconds", meaning),)))
    return Derivation(spec.name, quantity, f"{meaning[0].upper()}{meaning[1:]} of {spec.name} "
                      f"on {fig.gpu.name}", "T", sections, tuple(conventions))


def derive_capacity(spec: Spec, fig, cap) -> Derivation:
    if cap is None:
        raise SymcalcError("--quantity", f"capacity.max_sequences needs a decoder with a KV "
                                         f"cache or a recurrent state ({spec.name})")
    W, A = part_symbol("M", "weights"), part_symbol("M", "activation_peak")
    budget_expr = SV.kv_budget(M_gpu, u_mem, W, A)
    vals = {M_gpu: cap["memory_bytes"], u_mem: cap["gpu_memory_utilization"],
            W: cap["weights_bytes"], A: cap["activation_peak_bytes"]}
    Bud, m1 = part_symbol("M", "kv_budget"), part_symbol("M", "per_token_per_layer")
    G = sympy.Symbol("G", positive=True, integer=True)
    page_expr = B_blk * m1
    Page, Blocks, Req = part_symbol("M", "page"), part_symbol("B", "blocks"), \
        part_symbol("B", "per_sequence")
    blocks_expr = SV.blocks(Bud, Page, G)
    steps = [
        Define(M_gpu, cap["memory_bytes"], f"memory of one {fig.gpu.name}"),
        Define(u_mem, _value(cap["gpu_memory_utilization"]), "--gpu-memory-utilization"),
        Define(B_blk, int(cap["block_size"]), "tokens per block (raised to hold a recurrent "
                                              "state)" if cap["layers"]["recurrent"] else
               "tokens per block"),
        Define(N_tok, cap["max_num_batched_tokens"], "--max-num-batched-tokens"),
        Define(G, cap["layers_per_group"], "layers per KV-cache group"),
    ]
    work = [*_given("weights", "M", cap["weights_bytes"], "weights on the device"),
            *_given("activation_peak", "M", cap["activation_peak_bytes"],
                    "activation peak of a forward over N_tok tokens"),
            *_evaluated("kv_budget", "M", budget_expr, vals, "memory x utilization - weights - "
                        "activation peak", "vllm_worker"),
            *_given("per_token_per_layer", "M", cap["kv_bytes_per_token_per_layer"]
                    or cap["state_bytes_per_layer"], "KV cache of one token in one layer"),
            *_evaluated("page", "M", page_expr, {B_blk: cap["block_size"],
                                                 m1: cap["kv_bytes_per_token_per_layer"]}
                        if cap["layers"]["full"] + cap["layers"]["sliding"] else
                        {B_blk: 1, m1: cap["page_bytes"]},
                        "bytes of one layer's block", "vllm_kv_cache_interface"),
            *_evaluated("blocks", "B", blocks_expr, {Bud: cap["kv_budget_bytes"],
                                                    Page: cap["page_bytes"],
                                                    G: cap["layers_per_group"]},
                        "budget // page // layers per group", "vllm_kv_cache_utils")]
    req = 0
    ctx = sympy.Symbol("s", positive=True, integer=True)
    Wn = sympy.Symbol("W", positive=True, integer=True)
    for kind, groups in cap["groups"].items():
        req += groups * SV.request_pages(kind, ctx, B_blk, Wn, N_tok)
    req_vals = {ctx: cap["context"], B_blk: cap["block_size"], N_tok: cap["max_num_batched_tokens"]}
    if spec.W is not None:
        req_vals[Wn] = spec.W
    work += _evaluated("per_sequence", "B", req, req_vals, "blocks one sequence of s tokens "
                       "takes, over every group", "vllm_kv_cache_interface")
    seq_expr = SV.max_sequences(Blocks, Req)
    work += _evaluated("max_sequences", "S", seq_expr, {Blocks: cap["blocks"],
                                                       Req: cap["pages_per_sequence"]},
                       "blocks // blocks per sequence", "vllm_kv_cache_utils")
    sections = (Section("The accelerator and the engine", tuple(steps)),
                Section("The KV cache", tuple(work)),
                Section("Result", (Result("max_sequences", "S", int(cap["max_sequences"] or 0),
                                          "sequences", QUANTITIES["capacity.max_sequences"]),)))
    return Derivation(spec.name, "capacity.max_sequences",
                      f"Sequences of {cap['context']} tokens {spec.name} serves at once on "
                      f"{fig.gpu.name}", "S", sections,
                      ("vLLM's rules (vllm/v1/core/kv_cache_utils.py, kv_cache_interface.py, "
                       "worker/gpu_worker.py)", "the activation peak: "
                       + ("as given" if cap["activation_peak"] == "given" else
                          "symcalc's estimate of vLLM's profile run")))


def derive_mfu(spec: Spec, fig, util) -> Derivation:
    sopts = fig.sopts
    if not util or "mfu" not in util:
        raise SymcalcError("--quantity", "utilization.mfu needs a measured --step-time or "
                                         "--tokens-per-second")
    F = part_symbol("C", "model_per_token")
    expr = UT.utilization(F, R_tok, N_gpu, pi_c)
    vals = {F: util["model_flops_per_token"], R_tok: util["tokens_per_second"],
            N_gpu: util["gpus"], pi_c: fig.peak}
    source = "megatron_flops" if sopts.mfu_numerator == "megatron" else "chowdhery2022"
    work = [*_given("model_per_token", "C", util["model_flops_per_token"],
                    f"model FLOPs per token ({sopts.mfu_numerator})", source),
            *_given("tokens_per_second", "R", util["tokens_per_second"],
                    "tokens per second of the run"),
            *_evaluated("mfu", "U", expr, vals, "model FLOPs per second over the peak", source)]
    return Derivation(spec.name, "utilization.mfu", f"Model FLOPs utilization of {spec.name} "
                      f"on {util['gpus']} x {fig.gpu.name}", "U",
                      (_accelerator(fig, False), Section("MFU", tuple(work)),
                       Section("Result", (Result("mfu", "U", _value(util["mfu"]), "utilization",
                                                 QUANTITIES["utilization.mfu"]),))),
                      (f"numerator: {sopts.mfu_numerator}",))


def derive_speed(spec: Spec, quantity: str, fig, capacity=None, utilization=None) -> Derivation:
    """``fig``: the figures of the model on the accelerator (symcalc.fast.speed.Figures);
    ``capacity``, ``utilization``: its blocks (fast.speed.capacity / utilization)."""
    if quantity not in QUANTITIES:
        raise SymcalcError("--quantity", f"must be one of {', '.join(QUANTITIES)} for how fast "
                                         f"(got {quantity!r})")
    if quantity == "speed.prefill_seconds":
        return derive_phase(spec, fig, "prefill")
    if quantity == "speed.decode_seconds_per_token":
        return derive_phase(spec, fig, "decode")
    if quantity == "capacity.max_sequences":
        return derive_capacity(spec, fig, capacity)
    return derive_mfu(spec, fig, utilization)

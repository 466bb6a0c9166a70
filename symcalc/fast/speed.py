"""How fast, on the quick path (issue 23): the report's ``speed``, ``capacity`` and
``utilization`` blocks from its exact FLOPs and bytes and one accelerator's data, by the rules
of :mod:`symcalc.algebra.roofline`, :mod:`symcalc.algebra.serving` and
:mod:`symcalc.algebra.utilization` evaluated with exact rationals. No sympy on this path:
under a parallel layout the rank's bytes and the bytes it sends come from the report's
``per_rank`` and ``communication`` blocks (the term table's per-rank quantities), at the rank
that needs the most memory for serving (:func:`rank`).

Every figure is an exact rational (:class:`fractions.Fraction`); :func:`as_json` prints them
as floats or, exact, as ``"p/q"`` text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

from ..algebra import exact as X, roofline as RL, serving as SV, utilization as UT
from ..algebra import quantized
from ..algebra.layout import Layout
from ..algebra.options import Options, dtype_fraction, seq_len_of
from ..algebra.spec import Spec
from ..errors import SymcalcError
from ..inputs.gpus import Accelerator
from .quick import Numbers, evaluate, quick_report, values

EFFICIENCIES = ("compute", "memory", "network")
LOOKUP_TABLES = ("embedding/position", "embedding/token_type", "embedding/per_layer")
CORE = ("scores", "context")  # attention's products of activations: no weights, split with the KV
# dimensions in the order Megatron-LM lays out ranks (innermost first): a group whose ranks
# fit within one node's scale-up domain runs over that link, else across nodes
RANK_ORDER = (("tp", "tp"), ("cp", "cp"), ("ep", "ep"), ("dp", "dp"), ("pp", "pp"))
DEFAULT_UTILIZATION = Fraction(9, 10)  # vLLM's --gpu-memory-utilization
DEFAULT_BLOCK = 16  # vLLM's --block-size on CUDA
DEFAULT_BATCHED_TOKENS = 8192  # vLLM picks its own by usage context and device: pass yours


@dataclass(frozen=True)
class SpeedOptions:
    """What the speed, capacity and utilization figures need beyond the report's options."""

    gpu: Accelerator
    compute_dtype: Optional[str] = None  # None: from --dtype
    efficiency: tuple = (Fraction(1), Fraction(1), Fraction(1))  # compute, memory, network
    memory_utilization: Fraction = DEFAULT_UTILIZATION
    block_size: int = DEFAULT_BLOCK
    max_num_batched_tokens: int = DEFAULT_BATCHED_TOKENS
    activation_peak: Optional[int] = None  # bytes; None: symcalc's estimate
    step_time: Optional[Fraction] = None
    tokens_per_second: Optional[Fraction] = None
    train_tokens: Optional[int] = None
    mfu_numerator: str = "megatron"
    layout: Layout = field(default_factory=Layout)

    @property
    def is_bound(self) -> bool:
        """Every efficiency 1: the times are lower bounds (rooflines)."""
        return all(e == 1 for e in self.efficiency)


def compute_dtype(opts: Options, sopts: SpeedOptions) -> str:
    """The dtype whose peak FLOP/s the matmuls run at: --compute-dtype, else that of --dtype
    (a quantized weight format computes in bf16)."""
    if sopts.compute_dtype:
        return sopts.compute_dtype
    key = opts.dtype.strip().lower()
    return {"fp32": "fp32", "float32": "fp32", "fp16": "fp16", "float16": "fp16",
            "fp8": "fp8"}.get(key, "bf16")


def value_bytes(opts: Options) -> int:
    """Bytes of one activation value (the hidden states): 4 at fp32, else 2."""
    return 4 if opts.dtype.strip().lower() in ("fp32", "float32") else 2


# -- the whole model's figures --------------------------------------------------------------

@dataclass(frozen=True)
class Whole:
    """One model replica on one device: the figures each phase's roofline reads."""

    prefill_flops: Fraction
    prefill_core: Fraction  # of which attention scores and context
    decode_flops: Fraction
    decode_core: Fraction
    weights: Fraction  # every weight at --dtype
    lookup: Fraction  # lookup-only tables (read b s rows, not whole)
    routed: Fraction  # routed experts' weights (read as far as tokens pick them)
    experts: Optional[tuple[int, int]]  # (E, k)
    kv_prefill: Fraction  # KV cache of b sequences of s tokens
    kv_context: Fraction  # of b sequences of --context tokens (read by decode)
    kv_token: Fraction  # one more token for each of b sequences
    state: Fraction  # recurrent state of b sequences
    layers: int
    width: int
    value_bytes: int
    batch: int
    seq_len: int
    context: int
    groups: dict  # layer group -> {"prefill_flops", "decode_flops", "weights"}


def _bytes_of(spec: Spec, opts: Options, leaves: dict[str, int]) -> Fraction:
    """Bytes of some parameter leaves at --dtype (a quantized format as it stores them)."""
    if not leaves:
        return Fraction(0)
    fmt = quantized.parse(opts.dtype)
    if fmt is not None:
        return Fraction(quantized.total_bytes(leaves, spec, fmt))
    n, d = dtype_fraction(opts.dtype)
    return Fraction(sum(leaves.values()) * n, d)


def group_of(path: str) -> str:
    """The layer group a breakdown path belongs to: ``layer/attention``, ``layer/ffn``,
    ``layer/moe`` ... (and ``decoder/layer/...``), or its first part (``embedding``,
    ``head``)."""
    parts = path.split("/")
    if "layer" in parts:
        i = parts.index("layer")
        return "/".join(parts[:i + 2])
    return parts[0]


def whole(spec: Spec, opts: Options, rep: dict) -> Whole:
    """The figures of one replica of the model from the term table and the report."""
    opts = opts.checked()
    src = Numbers(spec, opts)
    v = values(spec, opts)
    context = opts.context or seq_len_of(spec, opts)
    dv = dict(v, s=context)
    params = {leaf.path: leaf.value for leaf in src.leaves("params", v)}
    lookup = {p: n for p, n in params.items()
              if p in LOOKUP_TABLES or (p == "embedding/token" and spec.head != "tied")}
    routed = {p: n for p, n in params.items() if p.startswith("layer/moe/experts/")}
    pre = {leaf.path: leaf.value for leaf in src.leaves("matmul", v)}
    dec = {leaf.path: leaf.value for leaf in src.leaves("decode", dv)}
    core_pre = sum(x for p, x in pre.items() if p.rsplit("/", 1)[-1] in CORE)
    core_dec = sum(x for p, x in dec.items() if p.rsplit("/", 1)[-1] in CORE)
    flops = rep["flops"]
    # the phase's FLOPs under the report's conventions; its attention core in that share
    pre_total = sum(pre.values()) or 1
    prefill = Fraction(flops["forward"])
    decode = Fraction(flops["decode_per_token"])
    memory = rep["memory"]
    kv_prefill = Fraction(memory["kv_cache_bytes"])
    kv_context = kv_prefill if context == v["s"] else Fraction(src.number("memory.kv_cache_bytes", dv))
    kv_token = Fraction(src.number("memory.kv_cache_bytes", dict(v, s=1)))  # b sequences
    state = Fraction(memory.get("recurrent_state_bytes", 0))
    groups: dict[str, dict] = {}
    for path, x in pre.items():
        groups.setdefault(group_of(path), {}).setdefault("prefill_flops", []).append(x)
    for path, x in dec.items():
        groups.setdefault(group_of(path), {}).setdefault("decode_flops", []).append(x)
    for path, n in params.items():
        if path not in lookup:
            groups.setdefault(group_of(path), {}).setdefault("weights", {})[path] = n
    table = {}
    for g, parts in groups.items():
        table[g] = {"prefill_flops": Fraction(sum(parts.get("prefill_flops", []))),
                    "decode_flops": Fraction(sum(parts.get("decode_flops", []))),
                    "weights": _bytes_of(spec, opts, parts.get("weights", {})),
                    "routed": _bytes_of(spec, opts, {p: n for p, n in parts.get("weights", {}).items()
                                                     if p in routed})}
    layers = spec.L + ((spec.L_dec or 0) if spec.family == "encoder-decoder" else 0)
    return Whole(
        prefill, prefill * core_pre / pre_total if pre_total else Fraction(0),
        decode, decode * core_dec / (sum(dec.values()) or 1),
        Fraction(memory["weights_bytes"]), _bytes_of(spec, opts, lookup),
        _bytes_of(spec, opts, routed), (spec.E, spec.k) if spec.moe else None,
        kv_prefill, kv_context, kv_token, state, layers, spec.d,
        value_bytes(opts), opts.batch, v["s"], context, table)


# -- one rank of a layout -------------------------------------------------------------------

@dataclass(frozen=True)
class Rank:
    """What the most-loaded rank holds of the replica (shares of the whole) and what it
    sends, by dimension, for one prefill (a microbatch's forward) and one decoded token."""

    weights: Fraction
    kv: Fraction
    state: Fraction
    prefill_wire: dict
    decode_wire: dict
    source: str  # "report" (its per_rank and communication blocks) | "whole"


def _wire(block: dict, dim: str, phase: str) -> Fraction:
    """Bytes one rank sends (on the wire, under the ring algorithms) for a dimension of the
    report's ``communication`` block: a microbatch's forward or one decoded token."""
    key = {"forward": "forward_wire_bytes", "decode": "decode_wire_bytes_per_token"}[phase]
    return Fraction(block[dim][key])


def serving_rank(spec, opts: Options, rep: dict | None = None) -> dict[str, Any]:
    """The stage block (its per-rank figures and its ``communication``) of the rank that needs
    the most memory for serving: the largest ``serving_peak_bytes`` (weights, KV cache and
    recurrent state), the earlier stage on a tie. With one pipeline stage that is the
    report's own ``per_rank`` and ``communication``; else a stage of its ``per_stage`` (the
    report of ``opts`` with --per-stage when ``rep`` has none). How fast reads this
    (:func:`rank`)."""
    if rep is None or "per_rank" not in rep:
        rep = quick_report(spec, opts.with_(per_stage=opts.pp > 1))
    if opts.pp == 1:
        return {**rep["per_rank"], "communication": rep["communication"]}
    if "per_stage" not in rep:
        rep = quick_report(spec, opts.with_(per_stage=True))
    return max(rep["per_stage"], key=lambda one: (one["serving_peak_bytes"], -one["stage"]))


def rank(spec: Spec, opts: Options, rep: dict, layout: Layout, w: Whole) -> Rank:
    """The rank's shares: the report's per-rank figures and communication of the rank that
    needs the most memory for serving (:func:`serving_rank`: the
    report's own blocks with one pipeline stage, else its stage with the largest serving
    peak), or (one rank) the whole replica."""
    from ..algebra.options import LAYOUT_FIELDS

    dims = [d for d, _ in RANK_ORDER]
    if layout.trivial:
        zero = {d: Fraction(0) for d in dims}
        return Rank(w.weights, w.kv_prefill, w.state, zero, dict(zero), "whole")
    same = all(getattr(opts, f) == getattr(layout, f) for f in LAYOUT_FIELDS)
    lay_opts = opts if same else opts.with_layout(layout)
    one = serving_rank(spec, lay_opts, rep if same else None)
    cm = one["communication"]
    return Rank(Fraction(one["weights_bytes"]), Fraction(one["kv_cache_bytes"]),
                Fraction(one.get("recurrent_state_bytes", w.state)),
                {d: _wire(cm, d, "forward") for d in dims},
                {d: _wire(cm, d, "decode") for d in dims}, "report")


def links(gpu: Accelerator, layout: Layout) -> dict[str, Optional[Any]]:
    """The link each dimension's collectives run over: within the node when the dimension's
    group (its ranks spaced by the inner dimensions' product) fits in the scale-up domain,
    else across nodes."""
    degrees = {"tp": layout.tp, "cp": layout.cp, "ep": layout.ep, "dp": layout.dp,
               "pp": layout.pp}
    out, stride = {}, 1
    inside = gpu.within_node.devices if gpu.within_node else 1
    for dim, _ in RANK_ORDER:
        n = degrees[dim]
        if n == 1:
            out[dim] = None
        elif stride * n <= inside and gpu.within_node:
            out[dim] = ("within_node", gpu.within_node)
        else:
            out[dim] = ("across_nodes", gpu.across_nodes)
        if dim != "ep":  # expert parallelism reuses the data- and context-parallel ranks
            stride *= n
    return out


# -- the phases -----------------------------------------------------------------------------

def _share(part: Fraction, whole_: Fraction) -> Fraction:
    return part / whole_ if whole_ else Fraction(1)


@dataclass(frozen=True)
class Phase:
    """One phase on the most-loaded rank: its FLOPs, bytes moved by kind, bytes on the wire
    by dimension, and the three times."""

    name: str
    tokens: int
    flops: Fraction
    bytes: dict  # weights, kv_cache, recurrent_state, hidden
    wire: dict  # dimension -> bytes
    compute_seconds: Fraction
    memory_seconds: Fraction
    network_seconds: Fraction
    stages: int  # pipeline stages one batch passes in turn

    @property
    def moved(self) -> Fraction:
        return sum(self.bytes.values(), Fraction(0))

    @property
    def seconds(self) -> Fraction:
        return self.stages * RL.phase_seconds(self.compute_seconds, self.memory_seconds,
                                              self.network_seconds)

    @property
    def bound(self) -> str:
        return RL.bound(self.compute_seconds, self.memory_seconds, self.network_seconds)

    @property
    def intensity(self) -> Fraction:
        return RL.intensity(self.flops, self.moved)


def weights_read(w: Whole, tokens: int) -> Fraction:
    """Weights a phase over ``tokens`` tokens reads (:func:`symcalc.algebra.roofline.weights_read`)."""
    E, k = w.experts or (1, 1)
    return RL.weights_read(w.weights, w.lookup, w.routed, tokens, E, k)


class Figures:
    """The phases of one model on one accelerator under a layout."""

    def __init__(self, spec: Spec, opts: Options, rep: dict, sopts: SpeedOptions):
        self.spec, self.opts, self.rep, self.sopts = spec, opts.checked(), rep, sopts
        self.gpu = sopts.gpu
        if not self.gpu.memory_bandwidth:
            raise SymcalcError("--gpu", f"{self.gpu.name} has no memory_bandwidth in its data "
                                        "(speed needs it; add it in your --gpus file)")
        self.dtype = compute_dtype(opts, sopts)
        self.peak = Fraction(self.gpu.peak(self.dtype))
        self.eta_c, self.eta_m, self.eta_n = sopts.efficiency
        self.layout = sopts.layout
        self.w = whole(spec, self.opts, rep)
        self.r = rank(spec, self.opts, rep, self.layout, self.w)
        self.links = links(self.gpu, self.layout)
        self.s_w = _share(self.r.weights, self.w.weights)
        self.s_kv = _share(self.r.kv, self.w.kv_prefill)
        self.s_st = _share(self.r.state, self.w.state)

    def _network(self, wire: dict) -> Fraction:
        total = Fraction(0)
        for dim, x in wire.items():
            if not x:
                continue
            link = self.links.get(dim)
            if link is None or link[1] is None:
                where = "across nodes" if link else "between devices"
                raise SymcalcError("--gpu", f"{self.gpu.name} has no link {where} in its data "
                                            f"({dim} needs one; add [{self.gpu.name}."
                                            f"{'across_nodes' if link else 'within_node'}] "
                                            "in a --gpus file)")
            total += RL.network_seconds(x, link[1].bandwidth, self.eta_n)
        return total

    def flops(self, total: Fraction, core: Fraction, tokens_split: bool) -> Fraction:
        """The rank's FLOPs: the weight matmuls in its share of the weights (over the
        context-parallel ranks' share of the tokens in a prefill), the attention core in its
        share of the KV cache."""
        split = self.layout.cp if tokens_split else 1
        return (total - core) * self.s_w / split + core * self.s_kv

    def hidden(self, tokens: int, tokens_split: bool) -> Fraction:
        """Hidden states the rank moves: those of its stage's layers (replicated on every
        tensor-parallel rank, split over them with sequence parallelism; over the
        context-parallel ranks in a prefill)."""
        w, lay = self.w, self.layout
        layers = Fraction(-(-w.layers // lay.pp), w.layers)
        split = (lay.cp if tokens_split else 1) * (lay.tp if lay.sequence_parallel else 1)
        return RL.hidden_bytes(w.layers, tokens, w.width, w.value_bytes) * layers / split

    def phase(self, name: str, batch: Optional[int] = None) -> Phase:
        w, b = self.w, batch or self.w.batch
        k = Fraction(b, w.batch)  # figures scale with the batch (decode's batch search)
        if name == "prefill":
            tokens = b * w.seq_len
            flops = self.flops(w.prefill_flops * k, w.prefill_core * k, True)
            moved = {"weights": weights_read(w, tokens) * self.s_w,
                     "kv_cache": w.kv_prefill * k * self.s_kv,
                     "recurrent_state": w.state * k * self.s_st,
                     "hidden": self.hidden(tokens, True)}
            total = RL.prefill_bytes(*moved.values())
            wire = {d: x * k for d, x in self.r.prefill_wire.items()}
        else:
            tokens = b
            flops = self.flops(w.decode_flops * k, w.decode_core * k, False)
            parts = (weights_read(w, tokens) * self.s_w, w.kv_context * k * self.s_kv,
                     w.kv_token * k * self.s_kv, w.state * k * self.s_st,
                     self.hidden(tokens, False))
            total = RL.decode_bytes(*parts)
            moved = {"weights": parts[0], "kv_cache": parts[1] + parts[2],
                     "recurrent_state": 2 * parts[3], "hidden": parts[4]}
            wire = {d: x * k for d, x in self.r.decode_wire.items()}
        assert total == sum(moved.values(), Fraction(0))
        return Phase(name, tokens, flops, moved, wire,
                     RL.compute_seconds(flops, self.peak, self.eta_c),
                     RL.memory_seconds(total, self.gpu.memory_bandwidth, self.eta_m),
                     self._network(wire), self.layout.pp)

    def ridge(self) -> Fraction:
        return RL.ridge_point(self.peak, self.gpu.memory_bandwidth, self.eta_c, self.eta_m)

    def compute_bound_batch(self, limit: int = 2**20) -> Optional[int]:
        """The smallest batch whose decode is compute-bound (compute time at least memory
        time; the network aside)."""
        def holds(b: int) -> bool:
            p = self.phase("decode", b)
            return p.compute_seconds >= p.memory_seconds
        return RL.first_batch(holds, limit)

    def groups(self, phase: str) -> dict[str, dict]:
        """Each layer group's own roofline for the phase (matmul FLOPs and the bytes of its
        weights, the KV cache with attention and the recurrent state with its mixers; the
        hidden states are the phase's, not a group's)."""
        w = self.w
        tokens = w.batch * (w.seq_len if phase == "prefill" else 1)
        out = {}
        for g, row in sorted(w.groups.items()):
            flops = row[f"{phase}_flops"] * self.s_w / (self.layout.cp if phase == "prefill" else 1)
            E, k = w.experts or (1, 1)
            weights = RL.weights_read(row["weights"], 0, row["routed"], tokens, E, k)
            moved = weights * self.s_w
            if g.endswith("/attention"):
                moved += (w.kv_prefill if phase == "prefill" else w.kv_context + w.kv_token) \
                    * self.s_kv
            if g.split("/")[-1] in ("ssm", "linear_attention", "short_conv"):
                moved += w.state * (1 if phase == "prefill" else 2) * self.s_st
            if not flops and not moved:
                continue
            c = RL.compute_seconds(flops, self.peak, self.eta_c)
            m = RL.memory_seconds(moved, self.gpu.memory_bandwidth, self.eta_m)
            out[g] = {"flops": flops, "bytes": moved,
                      "arithmetic_intensity": RL.intensity(flops, moved) if moved else None,
                      "seconds": RL.phase_seconds(c, m), "bound": RL.bound(c, m)}
        return out


# -- capacity -------------------------------------------------------------------------------

def layer_kinds(spec: Spec) -> tuple[int, int, int]:
    """(full, sliding, recurrent) layers of the model that keep a cache or a state."""
    cached = spec.attention_layers - spec.kv_shared_layers if spec.family == "decoder" else 0
    sliding = 0
    if spec.W is not None and cached:
        sliding = cached if spec.L_local is None else spec.L_local - (spec.L_kv_shared_local or 0)
    recurrent = (spec.L_lin or 0) + (spec.L_ssm or 0) + (spec.L_conv or 0)
    return cached - sliding, sliding, recurrent


def activation_peak(spec: Spec, opts: Options, sopts: SpeedOptions) -> tuple[int, str]:
    """(bytes, how) of the activation peak of a forward over --max-num-batched-tokens tokens:
    yours (--activation-peak), else symcalc's estimate: what one layer keeps of that forward
    under the fused-attention model (--activations sdpa, no s^2 scores), the layers' average,
    on the rank's share of a tensor-parallel split."""
    if sopts.activation_peak is not None:
        return sopts.activation_peak, "given"
    one = opts.with_(batch=1, seq_len=sopts.max_num_batched_tokens, activations="sdpa",
                     recompute="none", context=None, tp=sopts.layout.tp)
    total = evaluate("memory.activations_bytes", spec, one)
    layers = spec.L + ((spec.L_dec or 0) if spec.family == "encoder-decoder" else 0)
    return -(-total // layers), "estimate"


def capacity(fig: Figures) -> Optional[dict]:
    """vLLM's KV cache on the most-loaded rank (:mod:`symcalc.algebra.serving`)."""
    spec, opts, sopts, w = fig.spec, fig.opts, fig.sopts, fig.w
    if spec.family != "decoder":
        return None
    full, sliding, recurrent = layer_kinds(spec)
    if not (full or sliding or recurrent):
        return None
    layout = fig.layout
    pp = layout.pp
    full, sliding, recurrent = (-(-n // pp) for n in (full, sliding, recurrent))
    per_token = Fraction(0)
    cached = full + sliding
    if cached:
        one = Fraction(evaluate("memory.kv_cache_bytes", spec, opts.with_(batch=1, seq_len=1)))
        per_token = one / sum(layer_kinds(spec)[:2])
        if layout.tp > 1 and not spec.mla:
            n_kv = spec.n_kv or spec.n_h
            per_token = per_token * (-(-n_kv // layout.tp)) / n_kv
    state = Fraction(0)
    if recurrent:
        per_seq = Fraction(evaluate("memory.recurrent_state_bytes", spec, opts.with_(batch=1)))
        state = per_seq / sum(layer_kinds(spec)[2:]) / layout.tp
    peak, how = activation_peak(spec, opts, sopts)
    weights = fig.r.weights
    budget = SV.kv_budget(fig.gpu.memory_bytes, sopts.memory_utilization, weights, peak)
    context = w.context
    cap = SV.capacity(SV.Layers(full, sliding, recurrent, per_token, state, spec.W), budget,
                      sopts.block_size, context, sopts.max_num_batched_tokens)
    return {"kv_budget_bytes": cap.budget, "blocks": cap.blocks,
            "max_sequences": cap.max_sequences,
            "context": context, "block_size": cap.block, "page_bytes": cap.page,
            "layers_per_group": cap.group, "groups": cap.groups,
            "pages_per_sequence": cap.per_request,
            "layers": {"full": full, "sliding": sliding, "recurrent": recurrent},
            "kv_bytes_per_token_per_layer": per_token, "state_bytes_per_layer": state,
            "memory_bytes": fig.gpu.memory_bytes,
            "gpu_memory_utilization": sopts.memory_utilization,
            "weights_bytes": weights, "activation_peak_bytes": peak,
            "activation_peak": how,
            "max_num_batched_tokens": sopts.max_num_batched_tokens,
            "replicas": layout.dp,
            "deployment_max_sequences": (cap.max_sequences or 0) * layout.dp}


# -- utilization ----------------------------------------------------------------------------

def numerator_per_token(spec: Spec, opts: Options, name: str) -> Fraction:
    """Model FLOPs per token of an MFU convention (:data:`symcalc.algebra.utilization.NUMERATORS`)."""
    tokens = opts.batch * seq_len_of(spec, opts)
    if name == "megatron":
        model = opts.with_(causal="half", recompute="none", macs=False, nonmatmul=False)
        return Fraction(evaluate("flops.training", spec, model), tokens)
    if name == "palm":
        src = Numbers(spec, opts)
        v = values(spec, opts)
        params = {leaf.path: leaf.value for leaf in src.leaves("params", v)}
        n = sum(params.values()) - params.get("embedding/position", 0)
        return UT.palm_flops_per_token(n, spec.attention_layers, spec.n_h, spec.d_h,
                                       seq_len_of(spec, opts))
    raise SymcalcError("--mfu-numerator", f"must be one of {', '.join(UT.NUMERATORS)} "
                                          f"(got {name!r})")


def utilization(fig: Figures) -> Optional[dict]:
    """MFU and HFU of a measured run, training time for --train-tokens."""
    spec, opts, sopts, layout = fig.spec, fig.opts, fig.sopts, fig.layout
    if sopts.step_time is None and sopts.tokens_per_second is None and sopts.train_tokens is None:
        return None
    gpus = layout.tp * layout.pp * layout.cp * layout.dp
    tokens_per_step = opts.batch * seq_len_of(spec, opts) * layout.microbatches * layout.dp
    hw = Fraction(fig.rep["flops"]["training"], opts.batch * seq_len_of(spec, opts))
    model = numerator_per_token(spec, opts, sopts.mfu_numerator)
    out: dict[str, Any] = {"gpus": gpus, "peak_flops": fig.peak, "compute_dtype": fig.dtype,
                           "numerator": sopts.mfu_numerator,
                           "model_flops_per_token": model, "hardware_flops_per_token": hw,
                           "tokens_per_step": tokens_per_step}
    rate = sopts.tokens_per_second
    if sopts.step_time is not None:
        out["step_seconds"] = sopts.step_time
        rate = UT.tokens_per_second(tokens_per_step, sopts.step_time)
    if rate is not None:
        out["tokens_per_second"] = rate
        out["mfu"] = UT.utilization(model, rate, gpus, fig.peak)
        out["hfu"] = UT.utilization(hw, rate, gpus, fig.peak)
    if sopts.train_tokens is not None:
        how = "measured"
        if rate is None:
            rate, how = UT.compute_bound_rate(hw, gpus, fig.peak, fig.eta_c), "compute bound"
        seconds = UT.training_seconds(sopts.train_tokens, rate)
        out["training"] = {"tokens": sopts.train_tokens, "seconds": seconds,
                           "gpu_hours": UT.gpu_hours(seconds, gpus), "from": how}
    return out


# -- the report's blocks --------------------------------------------------------------------

def speed(fig: Figures, compute_bound_batch: bool = True) -> dict:
    pre, dec = fig.phase("prefill"), fig.phase("decode")
    b_star = fig.compute_bound_batch() if compute_bound_batch else None
    note = ("lower bounds (rooflines): every efficiency is 1" if fig.sopts.is_bound else
            "estimates at efficiency compute={}, memory={}, network={}".format(
                *(str(e) for e in fig.sopts.efficiency)))

    def phase_dict(p: Phase) -> dict:
        return {"tokens": p.tokens, "flops": p.flops, "bytes": {**p.bytes, "total": p.moved},
                "network_bytes": {d: x for d, x in p.wire.items() if x},
                "compute_seconds": p.compute_seconds, "memory_seconds": p.memory_seconds,
                "network_seconds": p.network_seconds, "pipeline_stages": p.stages,
                "seconds": p.seconds, "bound": p.bound, "arithmetic_intensity": p.intensity,
                "attainable_flops": RL.attainable(p.intensity, fig.peak,
                                                  fig.gpu.memory_bandwidth, fig.eta_c,
                                                  fig.eta_m),
                "groups": fig.groups(p.name)}

    out = {
        "gpu": fig.gpu.name, "compute_dtype": fig.dtype, "peak_flops": fig.peak,
        "memory_bandwidth": fig.gpu.memory_bandwidth,
        "efficiency": dict(zip(EFFICIENCIES, fig.sopts.efficiency)),
        "is_bound": fig.sopts.is_bound, "note": note,
        "prefill_seconds": pre.seconds, "decode_seconds_per_token": dec.seconds,
        "bound": {"prefill": pre.bound, "decode": dec.bound},
        "tokens_per_second": {"prefill": RL.tokens_per_second(pre.tokens, pre.seconds),
                              "decode": RL.tokens_per_second(dec.tokens, dec.seconds)},
        "arithmetic_intensity": {"prefill": pre.intensity, "decode": dec.intensity},
        "ridge_point": fig.ridge(),
        "compute_bound_batch": b_star,
        "batch": fig.w.batch, "seq_len": fig.w.seq_len, "context": fig.w.context,
        "layout": {k: getattr(fig.layout, k) for k in ("tp", "pp", "ep", "cp", "dp")},
        "links": {d: (l[1].name if l and l[1] else None) for d, l in fig.links.items() if l},
        "per_rank_from": fig.r.source,
        "phases": {"prefill": phase_dict(pre), "decode": phase_dict(dec)},
    }
    if fig.spec.family == "encoder":  # an encoder generates nothing: no decode
        out.update(decode_seconds_per_token=None, compute_bound_batch=None)
        for key in ("bound", "tokens_per_second", "arithmetic_intensity"):
            out[key]["decode"] = None
        del out["phases"]["decode"]
    return out


def blocks(spec: Spec, opts: Options, rep: dict, sopts: SpeedOptions,
           compute_bound_batch: bool = True) -> dict:
    """``speed``, ``capacity`` and (with a measurement or --train-tokens) ``utilization``,
    exact (``compute_bound_batch``: search the batch at which decode turns compute-bound)."""
    fig = Figures(spec, opts, rep, sopts)
    out = {"speed": speed(fig, compute_bound_batch), "capacity": capacity(fig)}
    util = utilization(fig)
    if util is not None:
        out["utilization"] = util
    return out


def as_json(value: Any, exact: bool = False) -> Any:
    """Exact figures as JSON: a Fraction as a float, or with ``exact`` as ``"p/q"`` text
    (an int when whole); ints stay ints."""
    if isinstance(value, dict):
        return {k: as_json(x, exact) for k, x in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json(x, exact) for x in value]
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return value.numerator
        return f"{value.numerator}/{value.denominator}" if exact else float(value)
    return value


# -- the page -------------------------------------------------------------------------------

COMPUTE_DTYPES = {"fp32": "fp32", "float32": "fp32", "fp16": "fp16", "float16": "fp16",
                  "fp8": "fp8"}  # any other --dtype computes in bf16 (compute_dtype)


def page_rules() -> dict:
    """The rules of one model on one device as trees the page walks
    (:class:`symcalc.algebra.exact.Rec`; ``symcalc/page/speed.js``): the same functions of
    :mod:`symcalc.algebra.roofline` as the report uses, recorded. Each output may name the
    ones before it; ``ge`` is 1 when its first argument is at least its second (the bound)."""
    R = X.Rec
    b, s = R("batch"), R("seq_len")
    E, k = R("E"), R("k")
    hidden = lambda tokens: RL.hidden_bytes(R("layers"), tokens, R("width"), R("value_bytes"))  # noqa: E731
    out = {
        "prefill_bytes": RL.prefill_bytes(
            RL.weights_read(R("weights"), R("lookup"), R("routed"), b * s, E, k),
            R("kv_cache"), R("state"), hidden(b * s)),
        "decode_bytes": RL.decode_bytes(
            RL.weights_read(R("weights"), R("lookup"), R("routed"), b, E, k),
            R("kv_context"), R("kv_token"), R("state"), hidden(b)),
    }
    for phase in ("prefill", "decode"):
        c = RL.compute_seconds(R(f"{phase}_flops"), R("peak"))
        m = RL.memory_seconds(R(f"{phase}_bytes"), R("bandwidth"))
        tokens = b * s if phase == "prefill" else b
        out.update({
            f"{phase}_compute_seconds": c, f"{phase}_memory_seconds": m,
            f"{phase}_seconds": RL.phase_seconds(R(f"{phase}_compute_seconds"),
                                                 R(f"{phase}_memory_seconds")),
            f"{phase}_compute_bound": R(["ge", f"{phase}_compute_seconds",
                                         f"{phase}_memory_seconds"]),
            f"{phase}_intensity": RL.intensity(R(f"{phase}_flops"), R(f"{phase}_bytes")),
            f"{phase}_tokens_per_second": RL.tokens_per_second(tokens, R(f"{phase}_seconds")),
        })
    out["ridge_point"] = RL.ridge_point(R("peak"), R("bandwidth"))
    for phase in ("prefill", "decode"):
        out[f"{phase}_attainable"] = RL.attainable(R(f"{phase}_intensity"), R("peak"),
                                                   R("bandwidth"))
    return {
        "rules": {name: X.Rec.of(x) for name, x in out.items()},
        "lookup": list(LOOKUP_TABLES), "lookup_untied_head": ["embedding/token"],
        "routed_prefix": "layer/moe/experts/", "compute_dtypes": COMPUTE_DTYPES,
        "fp16_falls_back_to": "bf16", "value_bytes": {"fp32": 4, "float32": 4},
        "value_bytes_default": value_bytes(Options()),
    }

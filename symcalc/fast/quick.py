"""The report object without sympy: the numbers come from the term table
(:mod:`symcalc.fast.terms`, ``symcalc/fast/terms.store``, written from the sympy expressions'
component functions by ``python -m symcalc.fast.build_terms``).

:func:`quick_report` returns exactly what :func:`symcalc.report.report` returns (a test
compares them for every preset and many options); :func:`evaluate` gives one quantity.
Importing this module loads neither sympy nor jinja2.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any, Optional

from . import terms
from ..algebra.breakdown import Breakdown, Leaf
from ..errors import SymcalcError
from ..algebra.options import Options, dtype_fraction, seq_len_of, workload_values
from ..algebra.options import switches as option_switches
from ..algebra.implementation import facts as activation_facts
from ..algebra import quantized
from ..algebra.spec import Spec, size_values, switch_values

QUANTITIES = tuple(terms.quantities())


def conventions(spec: Spec, opts: Options) -> dict[str, dict[str, str]]:
    """The named conventions behind each figure, as shown in the report
    (symcalc/algebra/conventions.toml)."""
    from ..algebra import conventions as words

    v = words.values(spec, opts)
    return {"flops": words.texts(dict(v), "flops"), "memory": words.texts(v, "memory")}


def option_values(spec: Spec, opts: Options) -> dict[str, int]:
    """Values of the option symbols of the term table (:mod:`symcalc.fast.build_terms`: dtype
    bytes, optimizer bytes, one-hot ZeRO stage and recomputation, ...)."""
    # a quantized format: the term table sees 16 bits; the report and evaluate()
    # replace its weights by quantized_weights()
    w_num, w_den = (2, 1) if quantized.parse(opts.dtype) else dtype_fraction(opts.dtype)
    kv_num, kv_den = dtype_fraction(opts.kv_dtype)
    st_num, st_den = dtype_fraction(opts.state_dtype)
    optimizers = terms.optimizers()
    if opts.optimizer not in optimizers:
        raise SymcalcError("optimizer", f"must be one of {', '.join(optimizers)} "
                                        f"(got {opts.optimizer!r})")
    opt_w, opt_g, opt_o = optimizers[opts.optimizer]
    return {
        "w_num": w_num, "w_den": w_den, "kv_num": kv_num, "kv_den": kv_den,
        "st_num": st_num, "st_den": st_den,
        "opt_w": opt_w, "opt_g": opt_g, "opt_o": opt_o,
        **option_switches(spec, opts),
        **activation_facts(spec, opts.dtype, opts.batch),
    }


def values(spec: Spec, opts: Options = Options(), check_heads: bool = True) -> dict[str, int]:
    """Every symbol the term table reads, for one spec under one set of options: sizes,
    switches, facts, options, the layout's degrees and, under a layout, its plan facts."""
    out: dict[str, int] = {"W": 1}
    out.update(size_values(spec))
    out.update(workload_values(spec, opts, check_heads))
    out.update(switch_values(spec))
    out.update(option_values(spec, opts))
    out.update(layout_values(spec, opts))
    return out


def layout_values(spec: Spec, opts: Options) -> dict[str, int]:
    """The layout's degrees (t and N_d are workload values) and, with a parallel option, the
    plan facts of its convention (:mod:`symcalc.fast.plans`)."""
    out = {"p": opts.pp, "v": opts.vpp, "m": opts.microbatches, "e": opts.ep,
           "t_e": opts.tp if opts.etp is None else opts.etp, "c": opts.cp}
    if opts.parallel:
        from . import plans

        out.update(plans.facts(spec, opts.tp_plan))
    return out


def check_quantity(name: str) -> str:
    if name not in QUANTITIES:
        raise SymcalcError("quantity", f"must be one of {', '.join(QUANTITIES)} (got {name!r})")
    return name


def evaluate(name: str, spec: Spec, opts: Options = Options(),
             at: Optional[dict[str, int]] = None) -> int:
    """Quantity ``name`` of ``spec`` as an exact int, as the report gives it (rounded up to a
    whole number; decode FLOPs at ``opts.context``); ``at`` overrides symbol values."""
    check_quantity(name)
    opts = opts.checked()
    v = values(spec, opts)
    if name == "flops.decode_per_token" and opts.context:
        v["s"] = opts.context
    if at:
        v.update(at)
    if name == "memory.weights_bytes" and quantized.parse(opts.dtype):
        return quantized_weights(spec, opts, Numbers(spec, opts), v)["bytes"]
    return Numbers(spec, opts).number(name, v)


def quantized_weights(spec: Spec, opts: Options, src, v: dict[str, int]) -> dict[str, Any]:
    """Bytes of the weights in a quantized format by group (exact, each rounded up), their
    total rounded up once, and the format's bits per quantized weight."""
    import math

    fmt = quantized.parse(opts.dtype)
    leaves = {leaf.path: leaf.value for leaf in src.leaves("params", v)}
    groups = quantized.weight_groups(leaves, spec, fmt)
    return {
        "format": fmt.name,
        "bits_per_quantized_weight": str(fmt.bits_per_weight()),
        "quantized_params": groups["quantized"][0],
        "unquantized_params": groups["unquantized"][0],
        **({"tensor_scales": groups["tensor_scales"][0]} if "tensor_scales" in groups else {}),
        "bytes_by_group": {g: math.ceil(b) for g, (_n, b) in groups.items()},
        "bytes": math.ceil(sum(b for _n, b in groups.values())),
    }


class Numbers:
    """Where a report's numbers come from: here, the term table (:mod:`symcalc.fast.terms`)."""

    def __init__(self, spec: Spec, opts: Options):
        self.spec, self.shape = spec, spec.shape
        self._first: Any = None  # the first values' (constants, size names, rows)
        self._variants: dict[tuple, Any] = {}

    def _rows(self, v: dict[str, Any]):
        """The rows specialized to ``v``'s constants, and ``v``'s sizes. A report asks about
        a dozen times, with the first values or a copy with a few entries changed (the
        decode context, one sequence, causal off); such a copy is recognised by comparing
        the first constants, without splitting and sorting all of ``v`` again."""
        first = self._first
        if first is not None and len(v) == len(first[0]) + len(first[2]):
            names, values, size_names, rows = first
            try:  # map and tuple comparison run in C: a report asks a dozen times
                got = tuple(map(v.__getitem__, names))
                sizes = dict(zip(size_names, map(v.__getitem__, size_names)))
            except KeyError:
                got = None
            if got == values:
                return rows, sizes
            if got is not None:
                changed = tuple((k, x) for k, x, y in zip(names, got, values) if x != y)
                rows = self._variants.get(changed)
                if rows is None:
                    rows = self._variants[changed] = terms.specialize(
                        self.shape, {**dict(zip(names, values)), **dict(changed)})
                return rows, sizes
        constants, sizes = split_values(v)
        rows = terms.specialize(self.shape, constants)
        if first is None:
            self._first = (tuple(constants), tuple(constants.values()), tuple(sizes), rows)
        return rows, sizes

    def number(self, name: str, v: dict[str, int]) -> int:
        rows, sizes = self._rows(v)
        return rows.number(name, sizes)

    def leaves(self, kind: str, v: dict[str, int]) -> Breakdown:
        """``params``, ``matmul`` (contract convention) or ``layer:<stack prefix>``."""
        rows, sizes = self._rows(v)
        return Breakdown(Leaf(p, x) for p, x in rows.leaves(kind, sizes) if x != 0)

    def layer_prefixes(self, v: dict[str, int]) -> list[str]:
        """The per-layer views listed at values ``v``: those whose layer count (the table's
        ``layer_counts``, from symcalc.algebra.accounting.layer_counts) is above 0."""
        counts = terms.common()["shapes"][self.shape]["layer_counts"]
        return [p for p, t in counts.items() if terms.fold(t, v) > 0]

    def stage_number(self, name: str, v: dict[str, int], stage: int, memo: dict) -> int:
        """A per-rank quantity of the stage (memo: set sums already taken at these sizes)."""
        rows, sizes = self._rows(v)
        return rows.number(name, sizes, stage, memo)

    def stage_leaves(self, v: dict[str, int], stage: int) -> list[tuple[dict, Any]]:
        """The rank's parameter leaves on the stage, ``[(dense, ZeRO-3 weight share),
        (routed experts, share)]`` (the per-rank sets at their views, the first and last
        stage's parts where the stage holds them)."""
        from fractions import Fraction

        rows, sizes = self._rows(v)
        lets = rows.lets(stage)
        flag = lambda name: Fraction(*lets[f"${name}"])  # noqa: E731
        dense: dict[str, Any] = {}
        for name, view, weight in (("rp:layers", "stage", 1), ("rp:first", None, flag("first")),
                                   ("rp:last", None, flag("last")), ("rp:tied", None, flag("tied"))):
            if not weight:
                continue
            at = sizes if view is None else rows.view(view, sizes, stage)
            for path, x in rows.leaves(name, at):
                dense[path] = dense.get(path, 0) + x
        experts = dict(rows.leaves("rp:experts", rows.view("experts", sizes, stage)))
        return [(dense, flag("wd")), (experts, flag("we"))]


def varying() -> frozenset[str]:
    """Sizes that may vary from point to point of a sweep; every other value a row or
    coefficient reads is folded in once (terms.specialize)."""
    return frozenset(terms.common()["varying"])


def split_values(v: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(constants, sizes) of a mapping of symbol values."""
    constants, sizes, sized = {}, {}, varying()
    for k, x in v.items():
        (sizes if k in sized else constants)[k] = x
    return constants, sizes


def params_report(spec: Spec, src, v: dict[str, int]) -> dict[str, Any]:
    bd = src.leaves("params", v)
    total = bd.total
    embedding = src.number("params.embedding", v)
    per_layer: dict[str, int] = {}
    for prefix in src.layer_prefixes(v):
        nums = src.leaves(f"layer:{prefix}", v).as_dict()
        head = prefix.split("/")[0] + "/" if "/" in prefix else (
            "" if prefix == "layer" else prefix + "/")
        per_layer[f"{head}total" if head else "total"] = sum(nums[p] for p in nums if "/" not in p)
        per_layer.update({f"{head}{p}": x for p, x in nums.items()})
    return {
        "total": total,
        "embedding": embedding,
        "non_embedding": total - embedding,
        "active": src.number("params.active", v),
        "head_dim": spec.d_h,
        "per_layer": per_layer,
        "breakdown": bd.as_dict(),
    }


def assemble(spec: Spec, opts: Options, src) -> dict[str, Any]:
    """The report object (params, flops, memory; exact ints) from a source of numbers."""
    opts = opts.checked()
    v = values(spec, opts)
    full = dict(v, sw_causal=0, sw_causal_exact=0)
    decode = dict(v, s=opts.context or v["s"])
    flops: dict[str, Any] = {"batch": opts.batch, "seq_len": seq_len_of(spec, opts)}
    if spec.family == "encoder-decoder":
        flops["dec_seq_len"] = v["s_dec"]
    flops.update({
        "forward_matmul": src.number("flops.forward_matmul", v),
        "forward": src.number("flops.forward", v),
        "training": src.number("flops.training", v),
        "decode_per_token": src.number("flops.decode_per_token", decode),
        "decode_context": decode["s"],
        "breakdown": src.leaves("matmul", full).as_dict(),
    })
    memory = {
        "dtype": opts.dtype,
        "kv_dtype": opts.kv_dtype,
        **({"state_dtype": opts.state_dtype} if spec.hybrid else {}),
        **{key: src.number(f"memory.{key}", v) for key in
           ("weights_bytes", "kv_cache_bytes", "activations_bytes", "training_bytes")},
    }
    if quantized.parse(opts.dtype):
        memory["weights_quantized"] = quantized_weights(spec, opts, src, v)
        memory["weights_bytes"] = memory["weights_quantized"]["bytes"]
    # one training step's peak per rank: the training state and the activations kept for
    # the backward pass are held together when the backward pass starts
    memory["training_peak_bytes"] = memory["training_bytes"] + memory["activations_bytes"]
    if spec.hybrid:  # state that replaces the KV cache of the non-attention layers
        memory["recurrent_state_bytes"] = src.number("memory.recurrent_state_bytes", v)
        memory["decode_state"] = decode_state(src, v, memory)
    if spec.mla:  # both conventions, named
        memory["kv_cache_bytes_by_convention"] = {
            name: src.number("memory.kv_cache_bytes", dict(v, sw_mla_expanded=int(name == "expanded")))
            for name in ("latent", "expanded")}
    conv = conventions(spec, opts)
    flops["conventions"] = conv["flops"]
    memory["conventions"] = conv["memory"]
    out = {"model": spec.name, "family": spec.family, "params": params_report(spec, src, v),
           "flops": flops, "memory": memory}
    if opts.parallel:  # per rank of the layout: from the same rows (docs/conventions.md)
        from .per_rank import parallel_report

        out.update(parallel_report(spec, opts, src, v, memory))
    return out


def decode_state(src, v: dict[str, int], memory: dict[str, Any]) -> dict[str, int]:
    """What decoding keeps: the KV cache of the attention layers and the recurrent state of
    the others for the batch, their sum, the sum for one sequence of seq_len tokens, and the
    bytes one more cached token adds to a sequence (before any window is full)."""
    one = dict(v, b=1)
    kv_seq = src.number("memory.kv_cache_bytes", one)
    state_seq = src.number("memory.recurrent_state_bytes", one)
    return {
        "total_bytes": memory["kv_cache_bytes"] + memory["recurrent_state_bytes"],
        "per_sequence_bytes": kv_seq + state_seq,
        "per_sequence_recurrent_bytes": state_seq,
        "per_token_bytes": src.number("memory.kv_cache_bytes", dict(one, s=1)),
    }


def quick_report(spec: Spec, opts: Options = Options()) -> dict[str, Any]:
    """The full report (params, flops, memory) as exact ints, without sympy."""
    return assemble(spec, opts, Numbers(spec, opts))

"""Workload and conventions of a report: every switch practitioners argue about, named.
No sympy here."""
from __future__ import annotations

from ..records import Record, replace
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Optional

from ..errors import SymcalcError
from . import quantized
from .spec import check_limit

CAUSAL = ("full", "half", "exact")
# what the layers keep for backward: Korthikanti et al.'s terms, or what transformers' eager or
# fused-attention (sdpa) code keeps (symcalc.algebra.activations)
ACTIVATION_MODELS = ("paper", "eager", "sdpa")
DEFAULT_ACTIVATIONS = "paper"
MLA_CACHE = ("latent", "expanded")
RECOMPUTE = ("none", "selective", "full")
OPTIMIZER_NAMES = ("adam-mixed", "adam-fp32", "sgd-momentum")
# Bytes per element as (numerator, denominator); "bitsN" or a bare N gives N/8.
DTYPE_BYTES = {"fp32": (4, 1), "float32": (4, 1), "fp16": (2, 1), "float16": (2, 1),
               "bf16": (2, 1), "bfloat16": (2, 1), "fp8": (1, 1), "int8": (1, 1),
               "int4": (1, 2), "fp4": (1, 2)}
DTYPES = tuple(DTYPE_BYTES)


class Options(Record):
    batch: int = 1
    seq_len: Optional[int] = None  # None: the model's position table, capped at 2048
    dec_seq_len: Optional[int] = None  # encoder-decoder: decoder tokens (default seq_len)
    dtype: str = "bf16"
    kv_dtype: str = "bf16"
    # linear-attention and SSM recurrent state: transformers 5.24's torch paths keep it in fp32
    # whatever the model dtype (their convolution windows follow kv_dtype)
    state_dtype: str = "fp32"
    causal: str = "full"  # full s^2 | half s^2/2 | exact s(s+1)/2
    macs: bool = False  # count multiply-accumulates (matmul FLOPs / 2)
    nonmatmul: bool = False  # add softmax, norms, activations, residual adds
    recompute: str = "none"  # none | selective | full
    activations: str = "paper"  # paper | eager | sdpa (symcalc.algebra.activation_profiles)
    optimizer: str = "adam-mixed"
    zero: int = 0
    dp: int = 1  # data-parallel ranks N_d
    tp: int = 1  # tensor-parallel degree t
    sequence_parallel: bool = False
    context: Optional[int] = None  # decode FLOPs per token at this KV-cache length
    mla_cache: str = "latent"  # MLA: the latent (transformers, serving) | expanded keys and values
    # the rest of the parallel layout (symcalc.algebra.layout.Layout; docs/conventions.md)
    pp: int = 1  # pipeline stages p
    vpp: int = 1  # model chunks per pipeline rank v (> 1: the interleaved schedule)
    microbatches: int = 1  # microbatches per step m (--batch is the microbatch size)
    ep: int = 1  # expert-parallel degree e
    etp: Optional[int] = None  # tensor-parallel degree inside each expert t_e (None: tp)
    cp: int = 1  # context-parallel degree c
    tp_plan: str = "hf"  # what tensor parallelism splits: hf | megatron
    cp_algorithm: str = "ring"  # ring | ulysses
    distributed_optimizer: bool = False  # Megatron-LM's (the optimizer state sharded, as ZeRO-1)
    per_stage: bool = False  # the report lists every pipeline stage's figures too

    def layout(self):
        """The parallel layout of these options (:class:`symcalc.algebra.layout.Layout`)."""
        from .layout import Layout

        return Layout(tp=self.tp, pp=self.pp, vpp=self.vpp, microbatches=self.microbatches,
                      ep=self.ep, etp=self.etp, cp=self.cp, dp=self.dp, zero=self.zero,
                      distributed_optimizer=self.distributed_optimizer,
                      sequence_parallel=self.sequence_parallel, tp_plan=self.tp_plan,
                      cp_algorithm=self.cp_algorithm)

    @property
    def parallel(self) -> bool:
        """A parallel option is given (a layout field differs from its default): the report
        adds per_rank and communication."""
        return any(getattr(self, f) != getattr(DEFAULT, f) for f in LAYOUT_FIELDS)

    @property
    def zero_stage(self) -> int:
        """The ZeRO stage in effect: Megatron-LM's distributed optimizer is stage 1."""
        return 1 if self.distributed_optimizer else self.zero

    def checked(self) -> "Options":
        for name in ("batch", "seq_len", "dec_seq_len", "dp", "tp", "context"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise SymcalcError(name.replace("_", "-"), f"must be a positive integer (got {value!r:.60})")
            check_limit(name.replace("_", "-"), value)
        for name, allowed in (("causal", CAUSAL), ("recompute", RECOMPUTE),
                              ("activations", ACTIVATION_MODELS),
                              ("optimizer", OPTIMIZER_NAMES), ("mla_cache", MLA_CACHE)):
            if getattr(self, name) not in allowed:
                raise SymcalcError(name.replace("_", "-"), f"must be one of {', '.join(allowed)} "
                                         f"(got {getattr(self, name)!r})")
        if quantized.parse(self.dtype) is None:  # a quantized weight format, or a dtype
            check_dtype("dtype", self.dtype)
        for name in ("kv_dtype", "state_dtype"):
            quantized.check(getattr(self, name), name.replace("_", "-"))
            check_dtype(name.replace("_", "-"), getattr(self, name))
        if self.parallel:  # a layout of one rank has nothing to check (and costs no import)
            self.layout().checked()
        return self

    def with_(self, **changes) -> "Options":
        return replace(self, **changes)

    def with_layout(self, layout) -> "Options":
        """These options with every field of ``layout`` (a :class:`Layout`) in place."""
        return replace(self, **{f: getattr(layout, f) for f in LAYOUT_FIELDS})


_OPTION_NAMES = Options.__match_args__  # every option's name
# the options that make a parallel layout (Options.layout)
LAYOUT_FIELDS = ("tp", "pp", "vpp", "microbatches", "ep", "etp", "cp", "dp", "zero",
                 "sequence_parallel", "tp_plan", "cp_algorithm", "distributed_optimizer")
DEFAULT = Options()


def _bits(key: str) -> str:
    """The digits of ``bitsN`` or ``N``: ASCII only (str.isdigit also takes ``²``)."""
    digits = key[4:] if key.startswith("bits") else key
    return digits if 0 < len(digits) <= 2 and digits.isascii() and digits.isdigit() else ""


def check_dtype(field: str, name: str) -> None:
    key = str(name).strip().lower()
    digits = _bits(key)
    if key in DTYPES or (digits and 0 < int(digits) <= 64):
        return
    raise SymcalcError(field, f"must be one of {', '.join(DTYPES)} or a bit width like bits3 "
                              f"(got {name!r})")


def dtype_fraction(name: str) -> tuple[int, int]:
    """Bytes per element as (numerator, denominator), e.g. int4 -> (1, 2)."""
    key = str(name).strip().lower()
    if key in DTYPE_BYTES:
        return DTYPE_BYTES[key]
    return int(_bits(key)), 8


DEFAULT_SEQ_LEN = 2048


def seq_len_of(spec, opts: Options) -> int:
    """The sequence length used: ``--seq-len``, else the model's learned position table
    (capped at 2048), else 2048. Reports always show the value used."""
    if opts.seq_len is not None:
        return opts.seq_len
    if spec.position == "learned" and spec.P:
        return min(spec.P, DEFAULT_SEQ_LEN)
    return DEFAULT_SEQ_LEN


def heads_split_badly(n_h, n_kv, tp):
    """Tensor parallelism splits the heads: t must divide n_h, and n_kv unless the KV heads
    are replicated (t a multiple of n_kv). Works on ints and on numpy arrays alike."""
    return (n_h % tp != 0) | ((n_kv % tp != 0) & (tp % n_kv != 0))


def workload_values(spec, opts: Options, check_heads: bool = True) -> dict[str, int]:
    """Values of the workload symbols b, s, s_dec, W, N_d, t (the spec's heads checked
    against the tensor-parallel degree unless ``check_heads`` is false)."""
    if check_heads and opts.tp > 1 and heads_split_badly(spec.n_h, spec.n_kv, opts.tp):
        raise SymcalcError("tp", f"tensor-parallel degree must divide the heads "
                                 f"(n_h={spec.n_h}, n_kv={spec.n_kv}, tp={opts.tp})")
    s = seq_len_of(spec, opts)
    out = {"b": opts.batch, "s": s, "N_d": opts.dp, "t": opts.tp}
    if spec.family == "encoder-decoder":
        out["s_dec"] = opts.dec_seq_len or s
    if spec.W is not None:
        out["W"] = spec.W
    return out


def _switches(data: dict, prefix: str = "") -> dict[str, int]:
    from .option_rules import LABEL, option_rules
    from .rules import evaluate_all

    rows = option_rules()["switches"]
    if prefix:
        rows = [r for r in rows if r[0].startswith(prefix)]
    return {k: int(v) for k, v in evaluate_all(rows, data, LABEL).items()}


def switches(spec, opts: Options) -> dict[str, int]:
    """Every option switch of the term table (options.toml's ``[switches]``): the causal and
    MLA-cache conventions, the ZeRO stage, the layout's conventions, the activation model
    and what recomputation and parallelism keep."""
    data = {f: getattr(opts, f) for f in _OPTION_NAMES}
    data.update(family=spec.family, head=spec.head, mla=spec.mla)
    return _switches(data)


def convention_switches(spec, opts: Options) -> dict[str, int]:
    """The causal-attention indicators (encoder-only models are never causal) and the MLA
    cache convention (options.toml's ``sw_causal``, ``sw_causal_exact``, ``sw_mla_expanded``)."""
    every = switches(spec, opts)
    return {k: every[k] for k in ("sw_causal", "sw_causal_exact", "sw_mla_expanded")}


def choice_weights(model: str, recompute: str, tensor_parallel: bool,
                   sequence_parallel: bool) -> dict[str, int]:
    """One-hot weights of the activation model, recomputation and parallelism choices
    (options.toml's ``ac_*``; :func:`symcalc.algebra.activations.weighted_sums`)."""
    return _switches({"activations": model, "recompute": recompute,
                      "tp": 2 if tensor_parallel else 1,
                      "sequence_parallel": bool(sequence_parallel)}, "ac_")


# -- the activation model in words (the report's convention note; derivations say the same) --
ACTIVATION_TEXT = {
    "paper": "paper: Korthikanti et al. 2022 term by term with this model's d_ff, gate, n_kv "
             "and dropouts (1-byte masks)",
    "eager": "eager: what transformers' eager attention keeps on CPU (float32 norm/softmax "
             "upcasts, masks at the activation dtype)",
    "sdpa": "sdpa: a fused attention kernel (no s^2 scores; float32 log-sum-exp)",
}

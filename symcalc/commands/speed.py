"""The options of "how fast" (issue 23) shared by report, solve, sweep, derive and handout:
the accelerator's compute dtype, efficiencies, the serving engine's settings, a measured run;
and the report's ``speed``, ``capacity`` and ``utilization`` blocks. No sympy here (the
report's quick path)."""
from __future__ import annotations

from ..errors import SymcalcError

TYPE_CHECKING = False  # not imported at run time: a report without --gpu pays for neither
if TYPE_CHECKING:
    from fractions import Fraction
    from typing import Any, Optional

COMPUTE_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")
NUMBER_LIMIT = 40  # characters of a decimal option


def add_speed_args(p, gpu: bool = False, exact: bool = True) -> None:
    """``gpu``: also --gpu and --gpus (commands without the report's fits columns);
    ``exact``: also --exact (sweep has its own)."""
    g = p.add_argument_group("how fast (with --gpu; docs/cli.md 'How fast')")
    if gpu:
        g.add_argument("--gpu", action="append", default=[], metavar="NAME",
                       help="accelerator (names in symcalc/inputs/gpus.toml, e.g. H100)")
        g.add_argument("--gpus", action="append", default=[], metavar="FILE",
                       help="your own accelerators (TOML, the form of symcalc/inputs/gpus.toml)")
    g.add_argument("--compute-dtype", default=None, choices=COMPUTE_DTYPES, metavar="DTYPE",
                   help="peak FLOP/s used: " + ", ".join(COMPUTE_DTYPES)
                        + " (default: that of --dtype; a quantized format computes in bf16)")
    g.add_argument("--efficiency", default=None, metavar="compute=X,memory=Y,network=Z",
                   help="achieved share of peak FLOP/s, memory and link bandwidth, each in "
                        "(0, 1] (default 1: every time is a lower bound)")
    g.add_argument("--gpu-memory-utilization", default=None, metavar="U",
                   help="share of the memory vLLM may use (default 0.9)")
    g.add_argument("--block-size", default=None, metavar="N",
                   help="tokens per KV-cache block (default 16, vLLM's)")
    g.add_argument("--max-num-batched-tokens", default=None, metavar="N",
                   help="tokens of vLLM's largest batch, whose activation peak the KV budget "
                        "leaves out (default 8192)")
    g.add_argument("--activation-peak", default=None, metavar="BYTES",
                   help="the activation peak vLLM measured (default: symcalc's estimate)")
    g.add_argument("--step-time", default=None, metavar="SECONDS",
                   help="measured seconds of one training step: MFU and HFU")
    g.add_argument("--tokens-per-second", default=None, metavar="R",
                   help="measured training tokens per second (instead of --step-time)")
    g.add_argument("--train-tokens", default=None, metavar="D",
                   help="training tokens (e.g. 2T): time and GPU-hours")
    g.add_argument("--mfu-numerator", default="megatron", choices=("megatron", "palm"),
                   help="model FLOPs of MFU: megatron (Megatron-LM's count, default) | palm "
                        "(6N + 12 L n_h d_h s per token)")
    if exact:
        g.add_argument("--exact", action="store_true",
                       help="speed, capacity and utilization as exact fractions \"p/q\" in "
                            "--json")


def decimal(field: str, text: Any, upper: Optional[Fraction] = None) -> Fraction:
    """A positive exact decimal (``0.6``, ``3/4``, ``1.5e-3``), at most ``upper``."""
    from fractions import Fraction

    raw = str(text).strip()
    if not raw or len(raw) > NUMBER_LIMIT:
        raise SymcalcError(field, f"must be a number of at most {NUMBER_LIMIT} characters "
                                  f"(got {raw!r:.50})")
    try:
        mantissa, _, exp = raw.lower().partition("e")
        if exp and abs(int(exp)) > 30:
            raise ValueError
        value = Fraction(raw)
    except (ValueError, ZeroDivisionError):
        raise SymcalcError(field, f"must be a number such as 0.6 (got {raw!r:.50})") from None
    if value <= 0:
        raise SymcalcError(field, f"must be more than 0 (got {raw})")
    if upper is not None and value > upper:
        raise SymcalcError(field, f"must be at most {upper} (got {raw})")
    return value


def efficiencies(text: Optional[str]) -> tuple[Fraction, Fraction, Fraction]:
    """``compute=0.6,memory=0.8`` -> (compute, memory, network), each 1 unless given."""
    from fractions import Fraction

    out = {"compute": Fraction(1), "memory": Fraction(1), "network": Fraction(1)}
    if text is None:
        return tuple(out.values())
    if not str(text).strip():
        raise SymcalcError("--efficiency", "must be NAME=VALUE pairs, e.g. compute=0.6,memory=0.8")
    seen = set()
    for item in str(text).split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in out:
            raise SymcalcError("--efficiency", f"{item.strip()!r:.40} is not NAME=VALUE with NAME "
                                               "compute, memory or network")
        if name in seen:
            raise SymcalcError("--efficiency", f"{name} is given twice")
        seen.add(name)
        out[name] = decimal(f"--efficiency {name}", value, Fraction(1))
    return tuple(out.values())


def _count(field: str, text, zero: bool = False) -> Optional[int]:
    if text is None:
        return None
    from ..algebra.spec import parse_int

    return parse_int(field, text, zero=zero)


def _amount(field: str, text, kind: str) -> Optional[int]:
    """A count or a byte amount: digits, or a number with a unit (``2T`` tokens, ``6GB``)."""
    if text is None:
        return None
    raw = str(text).strip()
    if raw.replace("_", "").replace(",", "").isdigit():
        return _count(field, raw)
    if len(raw) > NUMBER_LIMIT:
        raise SymcalcError(field, f"is {len(raw):,} characters long; at most {NUMBER_LIMIT}")
    from ..algebra.units import parse_amount

    amount = parse_amount(field, raw)
    if amount.kind != kind or amount.value.denominator != 1 or amount.value <= 0:
        raise SymcalcError(field, f"must be a whole number of {kind} (got {raw!r:.40})")
    return int(amount.value)


def layout_of(args, opts):
    """The run's layout: the layout options every command that reads the workload takes
    (--tp, --pp, --ep, --cp, --dp, --zero, ...; Options.layout)."""
    return opts.layout().checked()


def speed_options(args, opts, gpu):
    from fractions import Fraction

    from ..fast.speed import (DEFAULT_BATCHED_TOKENS, DEFAULT_BLOCK, DEFAULT_UTILIZATION,
                              SpeedOptions)

    if args.step_time is not None and args.tokens_per_second is not None:
        raise SymcalcError("--tokens-per-second", "give --step-time or --tokens-per-second, "
                                                  "not both")
    util = args.gpu_memory_utilization
    return SpeedOptions(
        gpu=gpu, compute_dtype=args.compute_dtype, efficiency=efficiencies(args.efficiency),
        memory_utilization=DEFAULT_UTILIZATION if util is None
        else decimal("--gpu-memory-utilization", util, Fraction(1)),
        block_size=_count("--block-size", args.block_size) or DEFAULT_BLOCK,
        max_num_batched_tokens=_count("--max-num-batched-tokens", args.max_num_batched_tokens)
        or DEFAULT_BATCHED_TOKENS,
        activation_peak=_amount("--activation-peak", args.activation_peak, "bytes"),
        step_time=None if args.step_time is None else decimal("--step-time", args.step_time),
        tokens_per_second=None if args.tokens_per_second is None
        else decimal("--tokens-per-second", args.tokens_per_second),
        train_tokens=_amount("--train-tokens", args.train_tokens, "count"),
        mfu_numerator=args.mfu_numerator, layout=layout_of(args, opts))


MEASURED = ("step_time", "tokens_per_second", "train_tokens")
SPEED_ONLY = ("compute_dtype", "efficiency", "gpu_memory_utilization", "block_size",
              "max_num_batched_tokens", "activation_peak", *MEASURED)


def refuse_without_gpu(args) -> None:
    """The speed options say nothing without an accelerator: refused, never ignored."""
    if getattr(args, "gpu", None):
        return
    for name in SPEED_ONLY:
        if getattr(args, name, None) is not None:
            raise SymcalcError(f"--{name.replace('_', '-')}", "needs an accelerator: name one "
                                                               "with --gpu")
    if getattr(args, "exact", False):
        raise SymcalcError("--exact", "applies to the speed figures: name an accelerator with --gpu")


def with_speed(rep: dict, spec, opts, args) -> dict:
    """The report with ``speed``, ``capacity`` (and ``utilization``) of the first --gpu, and
    of every one under ``by_gpu`` when several are named."""
    refuse_without_gpu(args)
    if not getattr(args, "gpu", None):
        return rep
    from ..fast.speed import as_json, blocks
    from ..inputs.gpus import accelerator

    out = {}
    for name in args.gpu:
        gpu = accelerator(name, tuple(args.gpus))
        if not gpu.memory_bandwidth:
            out[gpu.name] = {"speed": None, "capacity": None,
                             "missing": f"{gpu.name} has no memory_bandwidth in its data"}
            continue
        out[gpu.name] = as_json(blocks(spec, opts, rep, speed_options(args, opts, gpu)),
                                args.exact)
    first = next(iter(out.values()))
    rep.update(first)
    if len(out) > 1:
        rep["by_gpu"] = out
    return rep

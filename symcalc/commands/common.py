"""Arguments shared by several commands: the model, --set, the workload and conventions."""
from __future__ import annotations

from ..algebra.options import CAUSAL, OPTIMIZER_NAMES, RECOMPUTE, Options

TYPE_CHECKING = False  # argparse only for the annotations: a plain report never imports it
if TYPE_CHECKING:
    import argparse


PARTS = ("text", "all")


def add_model(p: argparse.ArgumentParser, many: bool = False, optional: bool = False) -> None:
    p.add_argument("model", nargs="+" if many else ("?" if optional else None), metavar="MODEL",
                   help="preset name (see `symcalc presets`), config.json or folder, or .toml spec")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override a spec field, e.g. --set L=48 --set ffn=gated")
    p.add_argument("--part", default="text", choices=PARTS,
                   help="multimodal config.json (text_config inside): text = its language model "
                        "(default); all = also count the vision tower and projector in "
                        "params.total (report only; their FLOPs and memory are not modelled)")


def add_lang(p) -> None:
    """--lang en|ru|zh: the words and number formats of what the command writes."""
    from ..i18n import LANGS

    p.add_argument("--lang", default="en", choices=LANGS, metavar="LANG",
                   help="language of labels, headings, notes and number formats: "
                        + ", ".join(LANGS) + " (default en)")


def add_workload(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("workload and conventions")
    g.add_argument("--batch", type=str, default="1", help="sequences per step (default 1)")
    g.add_argument("--seq-len", type=str, default=None,
                   help="tokens per sequence (default: position table, capped at 2048, else 2048)")
    g.add_argument("--dec-seq-len", type=str, default=None,
                   help="decoder tokens of an encoder-decoder model (default: seq-len)")
    g.add_argument("--dtype", default="bf16", help="weights dtype: fp32 fp16 bf16 fp8 int8 int4 or bitsN, or a "
                        "quantized format with its scales: int8-gG int4-gG [-zp], fp8-tensor, "
                        "fp8-blockN, mxfp4, nvfp4 (docs/cli.md)")
    g.add_argument("--kv-dtype", default="bf16", help="KV cache dtype (default bf16)")
    g.add_argument("--state-dtype", default="fp32",
                   help="recurrent state of linear-attention and SSM layers (default fp32, "
                        "what transformers keeps; their convolution windows use --kv-dtype)")
    g.add_argument("--mla-cache", default="latent",
                   help="MLA KV cache: latent (r_kv + d_rope per token and layer, what "
                        "transformers and serving engines keep) | expanded (up-projected keys "
                        "and values, n_h (d_nope + d_rope + d_v))")
    g.add_argument("--causal", default="full", help=f"attention scores: {' | '.join(CAUSAL)}")
    g.add_argument("--macs", action="store_true", help="count multiply-accumulates (matmul FLOPs / 2)")
    g.add_argument("--nonmatmul", action="store_true", help="add softmax, norms, activations, residuals")
    g.add_argument("--recompute", default="none", help=f"activation recomputation: {' | '.join(RECOMPUTE)}")
    g.add_argument("--activations", default="paper",
                   help="activation model: paper (Korthikanti et al. with the model's own "
                        "components; default) | eager (what transformers' eager code keeps) | "
                        "sdpa (fused attention kernel)")
    g.add_argument("--optimizer", default="adam-mixed", help=f"{' | '.join(OPTIMIZER_NAMES)}")
    g.add_argument("--context", type=str, default=None,
                   help="KV-cache length for decode FLOPs per token (default: seq-len)")
    add_layout(p)


def add_layout(p: argparse.ArgumentParser) -> None:
    """The parallel layout (docs/cli.md, docs/conventions.md): any of these adds the report's
    per_rank and communication blocks."""
    g = p.add_argument_group("parallel layout (per rank; docs/conventions.md)")
    g.add_argument("--tp", type=str, default="1", help="tensor-parallel degree t")
    g.add_argument("--pp", type=str, default="1", help="pipeline-parallel stages p")
    g.add_argument("--vpp", type=str, default="1",
                   help="model chunks per pipeline rank v (more than 1: the interleaved schedule)")
    g.add_argument("--schedule", default=None, choices=("1f1b", "interleaved"),
                   help="pipeline schedule (default: interleaved with --vpp > 1, else 1f1b)")
    g.add_argument("--microbatches", type=str, default="1",
                   help="microbatches per step m (--batch sequences each)")
    g.add_argument("--ep", type=str, default="1", help="expert-parallel degree e")
    g.add_argument("--etp", type=str, default=None,
                   help="tensor-parallel degree inside each expert t_e (default: --tp)")
    g.add_argument("--cp", type=str, default="1", help="context-parallel degree c")
    g.add_argument("--cp-algorithm", default="ring", choices=("ring", "ulysses"),
                   help="context parallelism by ring attention (default) or Ulysses all-to-alls")
    g.add_argument("--dp", type=str, default="1", help="data-parallel ranks N_d")
    g.add_argument("--zero", type=str, default="0", help="ZeRO stage 0-3 (FSDP is stage 3)")
    g.add_argument("--distributed-optimizer", action="store_true",
                   help="Megatron-LM's distributed optimizer (the optimizer state sharded, as ZeRO-1)")
    g.add_argument("--sequence-parallel", action="store_true", help="sequence parallelism (with --tp)")
    g.add_argument("--tp-plan", default="hf", choices=("hf", "megatron"),
                   help="what tensor parallelism splits: hf (the plan transformers applies, "
                        "default) | megatron (Megatron-LM's layer, padded vocabulary)")


def checked_names(specs, latex: bool = False):
    """The specs, each name refused when longer than the limit for names or (``latex``)
    holding a character pdflatex cannot set (:func:`symcalc.render.escape.check_text`)."""
    from ..algebra.limits import NAME_LIMIT

    for spec in specs:
        if latex or len(spec.name) > NAME_LIMIT:  # the common case needs no escaping module
            from ..render.escape import check_text

            check_text("name", spec.name, latex)
    return specs


def _int(field: str, text, zero: bool = False):
    """An option's number (``3200``, ``3_200``, ``3,200``; not ``3,2``), at most 10**15."""
    from ..algebra.spec import parse_int

    if text is None:
        return None
    return parse_int(field, text, zero=zero)


def options_from(args: argparse.Namespace) -> Options:
    return Options(
        batch=_int("batch", args.batch), seq_len=_int("seq-len", args.seq_len),
        dec_seq_len=_int("dec-seq-len", args.dec_seq_len), dtype=args.dtype,
        kv_dtype=args.kv_dtype, state_dtype=args.state_dtype, mla_cache=args.mla_cache, causal=args.causal, macs=args.macs, nonmatmul=args.nonmatmul,
        recompute=args.recompute, activations=args.activations, optimizer=args.optimizer, zero=_int("zero", args.zero, zero=True),
        dp=_int("dp", args.dp), tp=_int("tp", args.tp), sequence_parallel=args.sequence_parallel,
        context=_int("context", args.context), **layout_options(args),
    ).checked()


def layout_options(args: argparse.Namespace) -> dict:
    """The layout's Options fields from the arguments (--schedule checked against --vpp)."""
    from ..errors import SymcalcError

    vpp = _int("vpp", args.vpp)
    schedule = getattr(args, "schedule", None)
    if schedule == "interleaved" and vpp == 1:
        raise SymcalcError("--schedule", "interleaved needs --vpp, the model chunks per "
                                         "pipeline rank (2 or more)")
    if schedule == "1f1b" and vpp > 1:
        raise SymcalcError("--schedule", f"1f1b holds one model chunk per rank (got --vpp {vpp})")
    return dict(pp=_int("pp", args.pp), vpp=vpp, microbatches=_int("microbatches", args.microbatches),
                ep=_int("ep", args.ep), etp=_int("etp", args.etp), cp=_int("cp", args.cp),
                cp_algorithm=args.cp_algorithm, tp_plan=args.tp_plan,
                distributed_optimizer=args.distributed_optimizer,
                per_stage=bool(getattr(args, "per_stage", False)))

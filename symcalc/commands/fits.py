"""`report --gpu NAME` (repeatable) and `--gpus FILE`: does the model fit on an accelerator?
Three budgets, each against one device's memory as its vendor states it: the weights, the
weights and the KV cache (inference), the training state and activations (per rank).
No sympy here (the report's quick path)."""
from __future__ import annotations

BUDGETS = (("weights", ("weights_bytes",)),
           ("inference", ("weights_bytes", "kv_cache_bytes")),
           ("training", ("training_bytes", "activations_bytes")))


def add_gpu_args(p) -> None:
    p.add_argument("--gpu", action="append", default=[], metavar="NAME",
                   help="add a fits / does-not-fit column for this accelerator (repeatable; "
                        "names in symcalc/inputs/gpus.toml, e.g. H100, A100-40GB, TPU-v4)")
    p.add_argument("--gpus", action="append", default=[], metavar="FILE",
                   help="your own accelerators (TOML, the form of symcalc/inputs/gpus.toml)")


def fits(memory: dict, names, files=()) -> dict:
    """{"budgets": {name: bytes}, "gpus": [{name, memory, memory_bytes, bf16_flops, source,
    fits: {budget: bool}}]} for the report's ``memory`` block."""
    from ..inputs.gpus import accelerator

    budgets = {name: sum(memory[k] for k in keys) for name, keys in BUDGETS}
    out = []
    for name in names:
        acc = accelerator(name, tuple(files))
        out.append({"name": acc.name, "memory": acc.memory, "memory_bytes": acc.memory_bytes,
                    "bf16_flops": acc.bf16_flops, "source": acc.source,
                    "fits": {b: acc.fits(n) for b, n in budgets.items()}})
    return {"budgets": budgets, "gpus": out}


def with_fits(rep: dict, args) -> dict:
    if getattr(args, "gpu", None):
        rep["fits"] = fits(rep["memory"], args.gpu, args.gpus)
    elif getattr(args, "gpus", None):
        from ..errors import SymcalcError

        raise SymcalcError("--gpus", "adds accelerators for --gpu NAME; name one with --gpu")
    return rep

"""The arguments of the most common command lines, ``symcalc report MODEL [--json] [--gpu
NAME ...]``, without argparse: importing argparse (and gettext with it) and building the
report's parser is about 10 % of such a run. Any other command line, or one with any other
argument, goes to argparse (:mod:`symcalc.commands.parser`). ``tests/test_cli.py`` checks
that these are exactly the arguments argparse gives for the same command lines.
"""
from __future__ import annotations

# what argparse gives ``symcalc report MODEL`` for each argument it does not name
DEFAULTS = {
    "command": "report", "sets": [], "part": "text", "batch": "1", "seq_len": None,
    "dec_seq_len": None, "dtype": "bf16", "kv_dtype": "bf16", "state_dtype": "fp32",
    "mla_cache": "latent", "causal": "full", "macs": False, "nonmatmul": False,
    "recompute": "none", "activations": "paper", "optimizer": "adam-mixed", "context": None,
    "tp": "1", "pp": "1", "vpp": "1", "schedule": None, "microbatches": "1", "ep": "1",
    "etp": None, "cp": "1", "cp_algorithm": "ring", "dp": "1", "zero": "0",
    "distributed_optimizer": False, "sequence_parallel": False, "tp_plan": "hf",
    "json": False, "per_stage": False, "gpu": [], "gpus": [], "compute_dtype": None,
    "efficiency": None, "gpu_memory_utilization": None, "block_size": None,
    "max_num_batched_tokens": None, "activation_peak": None, "step_time": None,
    "tokens_per_second": None, "train_tokens": None, "mfu_numerator": "megatron",
    "exact": False, "lang": "en", "collect": False,
}


class Arguments:
    """The parsed arguments, read by attribute as an ``argparse.Namespace`` is."""

    def __init__(self, **values):
        self.__dict__.update(values)


def plain_report(argv: list[str]):
    """The arguments of ``report MODEL`` with ``--json`` and any ``--gpu NAME``, in any order;
    None for any other command line."""
    if not argv or argv[0] != "report":
        return None
    models, gpus, as_json = [], [], False
    rest = iter(argv[1:])
    for arg in rest:
        if arg == "--json" and not as_json:
            as_json = True
        elif arg == "--gpu":
            name = next(rest, "")
            if name[:1] in ("-", ""):
                return None
            gpus.append(name)
        elif arg[:1] in ("-", "") or models:
            return None
        else:
            models.append(arg)
    if not models:
        return None
    from .report import run

    values = {k: (list(x) if isinstance(x, list) else x) for k, x in DEFAULTS.items()}
    return Arguments(**{**values, "model": models[0], "json": as_json, "gpu": gpus, "func": run})

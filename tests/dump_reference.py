"""Print transformers reference counts as JSON lines (one object per line) on stdout.

    .venv/bin/python tests/dump_reference.py > tests/data/reference_counts.jsonl
    .venv/bin/python tests/dump_reference.py --check   # also cross-check meta vs CPU (generated configs)

Lines:
  {"kind": "generated", "id", "class", "params", "forward_matmul_flops", "batch": 2, "seq_len": 7}
  {"kind": "preset", "id", "class", "params", "forward_matmul_flops", "batch": 1, "seq_len": 128}
"-as-BertModel" preset ids are the BERT presets with architectures=["BertModel"] (their hub
config.json says BertForMaskedLM, which has no pooler but an MLM head).
Timings go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hf_reference as R  # noqa: E402


def _line(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true",
                    help="assert meta FLOPs == CPU FLOPs with real weights (Mixtral: eager experts)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    try:
        import transformers

        transformers.logging.set_verbosity_error()
    except Exception:
        pass

    t_start = time.perf_counter()
    for cid, cfg in R.generated_configs():
        params = R.reference_params(cfg)
        flops = R.reference_forward_matmul_flops(cfg, 2, 7)
        if args.check:
            cpu = R.count_forward_flops(cfg, 2, 7, device="cpu", experts_implementation="eager")
            assert cpu == flops, (cid, flops, cpu)
        _line({"kind": "generated", "id": cid, "class": R.model_class_name(cfg), "params": params,
               "forward_matmul_flops": flops, "batch": 2, "seq_len": 7})
    t_gen = time.perf_counter()
    print(f"# generated configs: {t_gen - t_start:.1f}s", file=sys.stderr)

    presets = list(R.PRESET_CONFIGS.items())
    for name in ("bert-base-uncased", "bert-large-uncased"):
        presets.append((f"{name}-as-BertModel", dict(R.PRESET_CONFIGS[name], architectures=["BertModel"])))
    for pid, cfg in presets:
        t0 = time.perf_counter()
        params = R.reference_params(cfg)
        flops = R.reference_forward_matmul_flops(cfg, 1, 128)
        _line({"kind": "preset", "id": pid, "class": R.model_class_name(cfg), "params": params,
               "forward_matmul_flops": flops, "batch": 1, "seq_len": 128})
        print(f"# {pid}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    print(f"# presets: {time.perf_counter() - t_gen:.1f}s; total {time.perf_counter() - t_start:.1f}s",
          file=sys.stderr)


if __name__ == "__main__":
    main()

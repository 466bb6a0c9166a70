"""Record transformers' numbers for the torch-free test lane (tests/test_family_numbers.py).

    .venv/bin/python tests/record_reference.py                  # rewrite tests/data/reference/*.jsonl
    .venv/bin/python tests/record_reference.py --check          # compare, write nothing
    .venv/bin/python tests/record_reference.py --types lfm2,jamba

Writes ``tests/data/reference/<model_type>.jsonl``, one JSON object per line, each one
measurement of transformers 5.24 / torch 2.13 made the way the live reference tests make it
(tests/hf_reference.py: meta device, eager attention, batched_mm experts):

* every ``tests/families/<model_type>/*.json`` config -- tiny ones at (batch, seq_len) = (2, 7),
  ``hub-*`` ones at (1, 5) -- and every config of ``hf_reference.generated_configs()`` at
  (2, 7) and of ``hf_reference.PRESET_CONFIGS`` at (1, 128):
  ``{"config", "class", "params", "forward_matmul_flops", "batch", "seq_len"}``; a config that
  is not a file carries itself as ``"config_json"``; where symcalc differs from transformers
  on purpose (docs/conventions.md) the line says by how much: ``"deliberate_params_difference"``
  (symcalc minus transformers) and ``"deliberate_flops_difference"`` (transformers minus
  symcalc), from hf_reference's functions of those names;
* the decoding state of tests/reference/test_decode_state.py's cases (a CPU forward with a cache, fp32 or
  bf16): ``{"config", "class", "batch", "seq_len", "dtype", "kv_cache_bytes",
  "recurrent_state_bytes"}``;
* the KV cache of tests/reference/test_kv_cache_reference.py's cases (fp32): ``{"config": "kv-case:<id>",
  "config_json", "class", "batch", "seq_len", "dtype", "kv_cache_bytes"}`` plus, where a sliding
  window is full, ``"window_gap_bytes"``: the bytes symcalc holds more (W tokens per sliding
  layer where transformers' DynamicSlidingWindowLayer keeps W - 1; Falcon's repeated keys are
  left to the live test).

Lines are sorted (config, batch, seq_len, dtype); the files are rewritten only when a number
changed. ``--check`` exits 1 listing every line that differs. Timings go to stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "reference"
FAMILIES = REPO / "tests" / "families"
TINY_WORKLOAD = (2, 7)
HUB_WORKLOAD = (1, 5)
PRESET_WORKLOAD = (1, 128)


def _quiet() -> None:
    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()


def _counts(cfg: dict, batch: int, seq_len: int, hub: bool = False) -> dict:
    import hf_reference as H

    line = {"class": H.model_class_name(cfg), "params": H.reference_params(cfg)}
    try:
        line["forward_matmul_flops"] = H.reference_forward_matmul_flops(cfg, batch, seq_len)
    except RuntimeError as err:
        # a hub config whose class runs neither on meta (no stand-in) nor, at its size, on CPU
        # (LongCat-Flash's expert loop): its parameters only; the tiny configs of the family
        # hold the forward
        if not hub or "too large for the CPU fallback" not in str(err):
            raise
    line.update(batch=batch, seq_len=seq_len)
    params_diff = H.deliberate_param_difference(cfg)
    flops_diff = H.deliberate_flops_difference(cfg, batch, seq_len) if "forward_matmul_flops" in line else 0
    if params_diff:
        line["deliberate_params_difference"] = params_diff
    if flops_diff:
        line["deliberate_flops_difference"] = flops_diff
    return line


def count_lines(types: set[str] | None) -> list[tuple[str, dict]]:
    """(model_type, line) for the family configs, the generated configs and the presets."""
    import hf_reference as H

    out = []
    for path in sorted(FAMILIES.glob("*/*.json")):
        mt = path.parent.name
        if types and mt not in types:
            continue
        cfg = json.loads(path.read_text(encoding="utf-8"))
        hub = path.name.startswith("hub-")
        batch, seq_len = HUB_WORKLOAD if hub else TINY_WORKLOAD
        out.append((mt, {"config": path.name, **_counts(cfg, batch, seq_len, hub)}))
        H.clear_cache()
    for cid, cfg in H.generated_configs():
        if types and cfg["model_type"] not in types:
            continue
        out.append((cfg["model_type"], {"config": f"generated:{cid}", "config_json": cfg,
                                        **_counts(cfg, *TINY_WORKLOAD)}))
    for name, cfg in H.PRESET_CONFIGS.items():
        if types and cfg["model_type"] not in types:
            continue
        out.append((cfg["model_type"], {"config": f"preset:{name}", "config_json": cfg,
                                        **_counts(cfg, *PRESET_WORKLOAD)}))
        H.clear_cache()
    return out


def cache_lines(types: set[str] | None) -> list[tuple[str, dict]]:
    """The cached forwards of tests/reference/test_decode_state.py and tests/reference/test_kv_cache_reference.py
    (those modules hold the cases and the way transformers' cache is read; imported here,
    by this script, not by a test)."""
    import hf_reference as H
    import test_decode_state as DS
    import test_kv_cache_reference as KV

    out = []
    seen = set()
    for param in DS.CASES:
        name, batch, seq_len, dtype = param.values
        mt = name.split("/")[0]
        if (types and mt not in types) or (name, batch, seq_len, dtype) in seen:
            continue
        seen.add((name, batch, seq_len, dtype))
        held = DS.transformers_cache(name, batch, seq_len, dtype)
        cfg = DS._config(name)
        line = {"config": name.split("/", 1)[1], "class": H.model_class_name(cfg),
                "batch": batch, "seq_len": seq_len, "dtype": dtype, "kv_cache_bytes": held["kv"]}
        if held["state"]:  # a softmax-only stack (Gemma 4's cases) holds none
            line["recurrent_state_bytes"] = held["state"]
        out.append((mt, line))
    for case in KV.IDS:
        cfg, batch, seq_len = KV.CASES[case]
        mt = cfg["model_type"]
        if types and mt not in types:
            continue
        held, shapes = KV.transformers_cache(case)
        line = {"config": f"kv-case:{case}", "config_json": cfg, "class": H.model_class_name(cfg),
                "batch": batch, "seq_len": seq_len, "dtype": "fp32", "kv_cache_bytes": held}
        if case in KV.WINDOW_DEVIATION:  # as test_symcalc_window_gap_is_one_token_per_sliding_layer
            _, (b, n_kv, _, d_h), _ = shapes[0]
            line["window_gap_bytes"] = KV._sliding_layers(case) * 2 * b * n_kv * d_h * 4
        out.append((mt, line))
    return out


def _key(line: dict) -> tuple:
    return (line["config"], line["batch"], line["seq_len"], line.get("dtype", ""),
            "kv_cache_bytes" in line)


def read(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with the files, write nothing")
    ap.add_argument("--types", help="comma-separated model types (default: every one)")
    args = ap.parse_args()
    _quiet()
    # offline, a model that cannot run on meta is run on CPU up to a billion parameters (XLM's
    # class defaults: 667M, about 20 s); the live reference lane stops at 50M and leaves such a
    # config's forward to the number recorded here (tests/reference/test_family_reference.py)
    import hf_reference as H

    H.CPU_FALLBACK_MAX_PARAMS = max(H.CPU_FALLBACK_MAX_PARAMS, 1_000_000_000)
    types = set(args.types.split(",")) if args.types else None
    t0 = time.perf_counter()
    lines = count_lines(types)
    t1 = time.perf_counter()
    print(f"# params and forward FLOPs: {len(lines)} lines, {t1 - t0:.1f}s", file=sys.stderr)
    cached = cache_lines(types)
    print(f"# caches: {len(cached)} lines, {time.perf_counter() - t1:.1f}s", file=sys.stderr)
    by_type: dict[str, list[dict]] = {}
    for mt, line in lines + cached:
        by_type.setdefault(mt, []).append(line)
    differ = 0
    for mt, new in sorted(by_type.items()):
        new.sort(key=_key)
        path = OUT / f"{mt}.jsonl"
        old = read(path)
        if args.check:
            old_by = {_key(x): x for x in old}
            for line in new:
                if old_by.get(_key(line)) != line:
                    differ += 1
                    print(f"{mt}: {line['config']} recorded {old_by.get(_key(line))} "
                          f"measured {line}", file=sys.stdout)
            for key in set(old_by) - {_key(x) for x in new}:
                differ += 1
                print(f"{mt}: {key[0]} recorded but no longer measured", file=sys.stdout)
            continue
        if old != new:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(x, sort_keys=False) + "\n" for x in new),
                            encoding="utf-8")
            print(f"# wrote {path.relative_to(REPO)} ({len(new)} lines)", file=sys.stderr)
    print(f"# total {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    if args.check and differ:
        print(f"{differ} lines differ", file=sys.stdout)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

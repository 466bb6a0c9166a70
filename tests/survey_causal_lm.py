"""Survey every model type transformers builds with a causal-LM head (issue 21).

    .venv/bin/python tests/survey_causal_lm.py                 # all 196, writes the JSON
    .venv/bin/python tests/survey_causal_lm.py --types exaone,jamba --out /tmp/s.json

For each model_type of ``MODEL_FOR_CAUSAL_LM_MAPPING_NAMES`` (transformers 5.24) it records:

* the config class, the class the mapping builds, and whether that class belongs to another
  model_type (exaone, internlm3 and iquestcoder build ``LlamaForCausalLM``): ``builds_family``;
* the config class's ``attribute_map`` (alias -> stored attribute), its sub-configs, and which
  of its dataclass fields the alias or the stored name is;
* the modular file's parents (the models whose modules it imports: what it reuses);
* for the class defaults and for a small variant (sizes shrunk generically, see ``small``):
  whether the model builds on meta, its parameters (``num_parameters()``) and its forward
  matmul FLOPs (FlopCounterMode, eager attention, batched_mm experts; tests/hf_reference.py),
  at (1, 5) for the defaults and (2, 7) for the small variant;
* where symcalc has a family file for the type: symcalc's numbers and whether they agree
  (``exact``), or the one-line error.

The result (tests/data/causal_lm_survey.json) is data. tests/data/causal_lm_groups.json, written
by hand from it (and from each type's parameters on meta), groups the types symcalc does not
read by what they reuse and what they need; tests/test_family_numbers.py holds the grouping to
the family files. Timings go to stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import sys
import time
import traceback
import warnings
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "causal_lm_survey.json"
DEFAULT_WORKLOAD = (1, 5)
SMALL_WORKLOAD = (2, 7)
SMALL_L = 4

# generic shrink: a key present (non-null) in the class defaults gets this value
SMALL_SIZES = {
    "hidden_size": 64, "n_embd": 64, "d_model": 64, "emb_dim": 64, "embed_dim": 64,
    "intermediate_size": 96, "n_inner": 96, "ffn_dim": 96, "d_ff": 96, "decoder_ffn_dim": 96,
    "encoder_ffn_dim": 96, "d_inner": 96, "ffn_hidden_size": 96,
    "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "num_heads": 4, "attention_heads": 4,
    "encoder_attention_heads": 4, "decoder_attention_heads": 4,
    "num_key_value_heads": 2, "num_kv_heads": 2, "multi_query_group_num": 2,
    "head_dim": 16, "kv_channels": 16, "attention_head_dim": 16,
    "vocab_size": 128, "n_words": 128,
    "moe_intermediate_size": 32, "expert_ffn_hidden_size": 32, "shared_expert_intermediate_size": 48,
    "n_routed_experts": 4, "num_experts": 4, "num_local_experts": 4, "moe_num_experts": 4,
    "num_experts_per_tok": 2, "moe_k": 2, "moe_topk": 2, "num_experts_per_token": 2,
    "n_shared_experts": 1, "num_shared_experts": 1,
    "kv_lora_rank": 16, "q_lora_rank": 24, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8,
    "v_head_dim": 8, "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1,
    "num_expert_group": 1, "topk_group_num": 1,
    "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
    "mamba_d_state": 8, "state_size": 8, "ssm_state_size": 8, "mamba_n_heads": 8,
    "mamba_d_head": 16, "mamba_head_dim": 16, "mamba_n_groups": 1, "n_groups": 1,
    "index_n_heads": 2, "index_head_dim": 16, "index_topk": 4, "rotary_dim": 8,
}
LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "encoder_layers",
              "decoder_layers")
TOKEN_KEYS = ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id",
              "sep_token_id", "cls_token_id", "mask_token_id", "unk_token_id")


def _quiet() -> None:
    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()


def _short(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:300]}"


def _fields(cls) -> dict:
    """Dataclass fields of a config class -> default (repr for what JSON cannot hold)."""
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            value = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            value = f.default_factory()  # type: ignore[misc]
        else:
            value = None
        try:
            json.dumps(value)
        except TypeError:
            value = repr(value)
        out[f.name] = value
    return out


def _modular_parents(model_type: str, module_name: str) -> list[str]:
    """The model folders a model's modular (else modeling) file imports from."""
    import transformers

    base = Path(transformers.__file__).parent / "models" / module_name
    for name in (f"modular_{module_name}.py", f"modeling_{module_name}.py"):
        path = base / name
        if path.exists():
            text = path.read_text(encoding="utf-8")
            found = re.findall(r"from \.\.(\w+)\.(?:modeling|configuration|modular)_\w+ import", text)
            return sorted(set(found) - {module_name})
    return []


def _select(items: list, L: int) -> list:
    """``L`` items of a per-layer list keeping every distinct value (first occurrences, then
    the next items in order)."""
    keep: list[int] = []
    seen: set = set()
    for i, x in enumerate(items):
        key = json.dumps(x, sort_keys=True)
        if key not in seen:
            seen.add(key)
            keep.append(i)
    for i in range(len(items)):
        if len(keep) >= L:
            break
        if i not in keep:
            keep.append(i)
    return [items[i] for i in sorted(keep[:max(L, 1)])]


def small(defaults: dict) -> dict:
    """A small variant of a config class's defaults (keys to pass, not the whole dict)."""
    out: dict = {}
    L0 = next((defaults[k] for k in LAYER_KEYS if isinstance(defaults.get(k), int)), None)
    L = SMALL_L
    for key, value in defaults.items():
        if key in LAYER_KEYS and isinstance(value, int):
            out[key] = min(value, L)
        elif key in SMALL_SIZES and isinstance(value, int) and not isinstance(value, bool):
            out[key] = min(value, SMALL_SIZES[key]) if value > 0 else value
        elif key in SMALL_SIZES and isinstance(value, list) and value and all(
                isinstance(x, int) for x in value):
            out[key] = [min(x, SMALL_SIZES[key]) for x in value]
    L = min(L0 or L, L)
    for key, value in defaults.items():
        if L0 and isinstance(value, list) and len(value) == L0 and L0 != L:
            items = _select(value, L)
            out[key] = [min(x, SMALL_SIZES[key]) if key in SMALL_SIZES and isinstance(x, int)
                        else x for x in items]
        elif L0 and isinstance(value, str) and len(value) == L0 and L0 > 1 and L0 != L:
            out[key] = "".join(_select(list(value), L))
    if defaults.get("kv_lora_rank") and "num_attention_heads" in out:  # MLA: n_kv = n_h
        if "num_key_value_heads" in defaults:
            out["num_key_value_heads"] = out["num_attention_heads"]
        out.pop("head_dim", None)  # MLA configs derive it from the rope/nope widths
    text = defaults.get("text_config")
    if isinstance(text, dict):  # a multimodal config: shrink its language model
        out["text_config"] = {**small(text), **({"model_type": text["model_type"]}
                                                 if "model_type" in text else {})}
    for key in TOKEN_KEYS:
        v = defaults.get(key)
        if isinstance(v, int) and v >= 64:
            out[key] = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}.get(key, 3)
        elif isinstance(v, list):
            out[key] = [x if x < 64 else 2 for x in v if isinstance(x, int)]
    return out


def build(cfg: dict):
    """What ``AutoModelForCausalLM.from_config`` builds on meta for a config.json-style dict
    (eager attention, batched_mm experts; a multimodal config gives its text model where the
    mapping's class is a text-only causal LM)."""
    import torch
    from transformers import AutoModelForCausalLM

    import hf_reference as H

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(H.hf_config(cfg))
    model.eval()
    model.requires_grad_(False)
    return model


def count_flops(model, batch: int, seq_len: int) -> tuple[int, str]:
    """FlopCounterMode total of one forward on meta (masks tried as tests/hf_reference.py
    does), else on CPU with random weights and eager experts for a small model."""
    import torch

    import hf_reference as H

    last: Exception | None = None
    for mask in (True, False, "4d"):
        try:
            return H._run_counted(model, H.forward_inputs(model, batch, seq_len, "meta", mask=mask)), "meta"
        except Exception as err:  # noqa: BLE001
            if not H._is_meta_error(err):
                raise
            last = err
    if model.num_parameters() > H.CPU_FALLBACK_MAX_PARAMS:
        # a module with a meta stand-in (H.META_STANDINS: same matmul FLOPs, no routing read back)
        patched = {type(m) for m in model.modules() if type(m).__name__ in H.META_STANDINS}
        if not patched:
            raise RuntimeError(f"cannot run on meta and too large for CPU: {last}")
        with contextlib.ExitStack() as stack:
            for cls in patched:
                stack.enter_context(H._patched_forward(cls, H.META_STANDINS[cls.__name__]))
            return H._run_counted(model, H.forward_inputs(model, batch, seq_len, "meta", mask=True)), "meta"
    from transformers import AutoModelForCausalLM

    cfg = model.config
    cfg._experts_implementation = "eager"
    torch.manual_seed(0)
    cpu = AutoModelForCausalLM.from_config(cfg).eval()
    cpu.requires_grad_(False)
    for mask in (True, False, "4d"):
        try:
            return H._run_counted(cpu, H.forward_inputs(cpu, batch, seq_len, "cpu", mask=mask)), "cpu"
        except Exception as err:  # noqa: BLE001
            last = err
    raise last  # type: ignore[misc]


def measure(cfg: dict, batch: int, seq_len: int) -> dict:
    """Build on meta, count parameters and forward matmul FLOPs (errors recorded)."""
    out: dict = {}
    t0 = time.perf_counter()
    try:
        model = build(cfg)
        out["class"] = type(model).__name__
        out["params"] = int(model.num_parameters())
    except Exception as err:  # noqa: BLE001
        out["build_error"] = _short(err)
        out["seconds"] = round(time.perf_counter() - t0, 2)
        return out
    try:
        out["forward_matmul_flops"], out["forward_device"] = count_flops(model, batch, seq_len)
        out["batch"], out["seq_len"] = batch, seq_len
    except Exception as err:  # noqa: BLE001
        out["forward_error"] = _short(err)
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


def symcalc_numbers(cfg: dict, batch: int, seq_len: int) -> dict:
    """symcalc's params and forward matmul FLOPs for a config, or its one-line error."""
    from symcalc.errors import SymcalcError
    from symcalc.fast.quick import quick_report
    from symcalc.inputs.hf import read_model
    from symcalc.algebra.options import Options

    try:
        spec, outside = read_model(cfg)
        rep = quick_report(spec, Options(batch=batch, seq_len=seq_len))
    except SymcalcError as err:
        return {"error": str(err)}
    except Exception as err:  # noqa: BLE001 - a crash is a finding too
        return {"crash": _short(err)}
    return {"params": rep["params"]["total"] + sum(o.params or 0 for o in outside),
            "forward_matmul_flops": rep["flops"]["forward_matmul"]}


def survey_type(model_type: str, family_files: set[str]) -> dict:
    import transformers

    import hf_reference as H
    from transformers import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    cls_name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type]
    config_cls = CONFIG_MAPPING[model_type]
    model_cls = getattr(transformers, cls_name)
    built_type = getattr(model_cls.config_class, "model_type", None)
    fields = _fields(config_cls)
    amap = dict(getattr(config_cls, "attribute_map", {}) or {})
    module_name = config_cls.__module__.split(".")[-2]
    entry: dict = {
        "model_type": model_type,
        "config_class": config_cls.__name__,
        "module": module_name,
        "causal_lm_class": cls_name,
        "builds_family": built_type if built_type != model_type else None,
        "attribute_map": amap,
        "alias_fields": {a: {"alias_is_field": a in fields, "target_is_field": t in fields}
                         for a, t in amap.items()},
        "sub_configs": sorted(getattr(config_cls, "sub_configs", {}) or {}),
        "reuses": _modular_parents(model_type, module_name),
        "symcalc_family": model_type in family_files,
    }
    try:
        defaults = config_cls().to_dict()
    except Exception as err:  # noqa: BLE001
        entry["config_error"] = _short(err)
        return entry
    base = {"model_type": model_type, "architectures": [cls_name]}
    variants = {"default": (dict(base), DEFAULT_WORKLOAD),
                "small": ({**base, **small(defaults)}, SMALL_WORKLOAD)}
    for name, (cfg, (b, s)) in variants.items():
        got = measure(cfg, b, s)
        got["config"] = cfg
        if entry["symcalc_family"] and "params" in got:
            ours = symcalc_numbers(cfg, b, s)
            got["symcalc"] = ours
            want = got.get("forward_matmul_flops")
            if want is not None:  # where symcalc counts less on purpose (Llama 4's idle experts)
                want -= H.deliberate_flops_difference(cfg, b, s)
            got["exact"] = (ours.get("params") == got["params"]
                            and ours.get("forward_matmul_flops") == want)
        entry[name] = got
    return entry


def main() -> None:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    import hf_reference as H

    ap = argparse.ArgumentParser()
    ap.add_argument("--types", help="comma-separated model types (default: all)")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    _quiet()
    types = args.types.split(",") if args.types else list(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    family_files = {p.stem for p in H.FAMILY_FILE_DIR.glob("*.toml")}
    out_path = Path(args.out)
    old = json.loads(out_path.read_text()) if out_path.exists() and args.types else {"types": {}}
    start = time.perf_counter()
    for mt in types:
        t0 = time.perf_counter()
        try:
            entry = survey_type(mt, family_files)
        except Exception as err:  # noqa: BLE001
            entry = {"model_type": mt, "survey_error": _short(err),
                     "trace": traceback.format_exc(limit=3)}
        H.clear_cache()
        old["types"][mt] = entry
        print(f"# {mt}: {time.perf_counter() - t0:.1f}s "
              f"{'exact' if entry.get('default', {}).get('exact') and entry.get('small', {}).get('exact') else ''}",
              file=sys.stderr, flush=True)
    import torch
    import transformers

    old["transformers"] = transformers.__version__
    old["torch"] = torch.__version__
    old["count"] = len(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    old["types"] = dict(sorted(old["types"].items()))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(old, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"# total {time.perf_counter() - start:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()

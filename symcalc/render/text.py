"""The readable report table (plain text, reads the report object only)."""
from __future__ import annotations

from typing import Any

from ..i18n import _, tr
from .escape import one_line
from .numbers import _space, bytes_both, decimal, grouped, percent, short, si


def _rows(rows: list[tuple[str, str]]) -> list[str]:
    width = max(len(k) for k, _v in rows)
    return [f"  {k.ljust(width)}  {v}" for k, v in rows]


def _part_lines(rep: dict[str, Any]) -> list[str]:
    """A multimodal config: which part is reported and what is left out."""
    if "part" not in rep:
        return []
    parts = rep["parts"]
    out = [_("part: {part}  (the language model of a multimodal checkpoint)", part=rep["part"])
           if rep["part"] == "text" else
           _("part: {part}  (language model + vision tower + projector)", part=rep["part"])]
    for role, p in parts.items():
        if role == "text":
            continue
        count = _("{n} params", n=grouped(p["params"])) if p["params"] is not None else \
            _("params not computable ({why})", why=p["why"])
        state = _("included") if p["included"] else _("left out")
        out.append("  " + _("{state}: {role}, {description} ({count}; source {source})",
                            state=state, role=tr(role.replace("_", " ")),
                            description=tr(p["description"]), count=count, source=p["source"]))
    if rep["part"] == "text":
        out.append(_("  (--part all adds them to the parameter total)"))
    out.append("  " + _("note: {note}", note=tr(rep["parts_note"])))
    return out


def report_table(rep: dict[str, Any]) -> str:
    p, f, m = rep["params"], rep["flops"], rep["memory"]
    lines = [_("model: {name}", name=one_line(rep['model']))] + _part_lines(rep) + ["", _("parameters")]
    per = p["per_layer"]
    stacks = [k[:-len("/total")] for k in per if k.endswith("/total")]
    if "total" in per:  # a single stack's layer (an MoE stack may add its dense_layer)
        stacks = [""] + stacks
    rows = [(_("total"), f"{grouped(p['total'])}  ({short(p['total'])})"),
            (_("embedding"), f"{grouped(p['embedding'])}  ("
                             + (_("token/position tables, untied head") if "head/weight" in p["breakdown"]
                                else _("token/position tables")) + ")"),
            (_("non-embedding"), grouped(p["non_embedding"]))]
    if p["active"] != p["total"]:
        rows.append((_("active per token"), f"{grouped(p['active'])}  ({short(p['active'])})"))
    for stack in stacks:
        pre = f"{stack}/" if stack else ""
        label = {"": _("per layer"), "dense_layer": _("dense layer"),
                 "linear_mixer": _("linear-attention mixer"), "ssm_mixer": _("Mamba mixer"),
                 "conv_mixer": _("short-conv mixer"),
                 "global_attention": _("global-attention layer")}.get(stack, f"{stack} layer")
        rows.append((label, grouped(per[f"{pre}total"])))
        parts = [k[len(pre):] for k in per if k.startswith(pre) and k != f"{pre}total"
                 and "/" not in k[len(pre):]]  # every group of the layer (AltUp, LAuReL ...)
        for part in parts:
            rows.append((f"  {tr(part.replace('_', '-'))}", grouped(per[f"{pre}{part}"])))
    rows.append((_("head dimension"), str(p["head_dim"])))
    w16 = 2 * p["total"]
    rows.append((_("weights at 16 bits"), bytes_both(w16)))
    lines += _rows(rows)

    conv = f["conventions"]
    lines += ["", _("compute  (batch {b} x seq_len {s}", b=f['batch'], s=f['seq_len'])
              + (_(", decoder {n}", n=f['dec_seq_len']) if "dec_seq_len" in f else "") + ")"]
    lines += _rows([
        (_("forward, matmul"), _("{n} FLOPs", n=grouped(f['forward_matmul'])) + f"  ({si(f['forward_matmul'])})"),
        ("", f"[{tr(conv['forward_matmul'])}]"),
        (_("forward") if rep.get("family") == "encoder" else _("forward (= prefill)"), f"{grouped(f['forward'])}  ({si(f['forward'], unit='')})  [{tr(conv['forward'])}]"),
        (_("training step"), f"{grouped(f['training'])}  ({si(f['training'], unit='')})  [{tr(conv['training'])}]"),
    ] + ([] if rep.get("family") == "encoder" else [
        (_("decode, per token"), _("{n} FLOPs at context {c}", n=grouped(f['decode_per_token']), c=f['decode_context'])),
    ]))
    mc = m["conventions"]
    lines += ["", _("memory")]
    lines += _rows([
        (_("weights"), f"{grouped(m['weights_bytes'])} B = {bytes_both(m['weights_bytes'])}  [{tr(mc['weights_bytes'])}]"),
        (_("KV cache"), f"{grouped(m['kv_cache_bytes'])} B = {bytes_both(m['kv_cache_bytes'])}  [{tr(mc['kv_cache_bytes'])}]"),
    ] + [
        (f"  {name}", f"{grouped(n)} B = {bytes_both(n)}")
        for name, n in m.get("kv_cache_bytes_by_convention", {}).items()
    ] + ([] if "recurrent_state_bytes" not in m else [
        (_("recurrent state"), f"{grouped(m['recurrent_state_bytes'])} B = "
                               f"{bytes_both(m['recurrent_state_bytes'])}  [{tr(mc['recurrent_state_bytes'])}]"),
        ("  " + _("decode state"), f"{grouped(m['decode_state']['total_bytes'])} B = "
                                   f"{bytes_both(m['decode_state']['total_bytes'])}  "
                                   + _("(KV cache + recurrent state)")),
        ("  " + _("per sequence"), _("{n} B at seq_len, of which {m} B do not grow",
                                     n=grouped(m['decode_state']['per_sequence_bytes']),
                                     m=grouped(m['decode_state']['per_sequence_recurrent_bytes']))),
        ("  " + _("per token"), _("{n} B more for each cached token",
                                  n=grouped(m['decode_state']['per_token_bytes']))),
    ]) + [
        (_("activations"), f"{grouped(m['activations_bytes'])} B = {bytes_both(m['activations_bytes'])}  [{tr(mc['activations_bytes'])}]"),
        (_("training state"), f"{grouped(m['training_bytes'])} B = {bytes_both(m['training_bytes'])}  [{tr(mc['training_bytes'])}]"),
    ] + ([] if "training_peak_bytes" not in m else [
        (_("training peak"), f"{grouped(m['training_peak_bytes'])} B = {bytes_both(m['training_peak_bytes'])}  [{tr(mc['training_peak_bytes'])}]"),
    ]))
    if "per_rank" in rep:
        lines += per_rank_lines(rep)
    if "fits" in rep:
        lines += fits_table(rep["fits"])
    if rep.get("speed"):
        lines += speed_table(rep)
    return "\n".join(lines) + "\n"


def _b(n: int) -> str:
    return f"{grouped(n)} B = {bytes_both(n)}"


def per_rank_lines(rep: dict[str, Any]) -> list[str]:
    """The layout's per-rank figures and communication (report keys per_rank,
    communication, per_stage)."""
    r, lay = rep["per_rank"], rep["per_rank"]["layout"]
    lines = ["", _("per rank  (tp {tp} x pp {pp} x cp {cp} x dp {dp} = {n} ranks, ep {ep}; "
                   "most-loaded: stage {stage})", tp=lay["tp"], pp=lay["pp"], cp=lay["cp"],
                   dp=lay["dp"], n=lay["ranks"], ep=lay["ep"], stage=r["stage"])]
    rows = [(_("parameters"), f"{grouped(r['params'])}  ({short(r['params'])})"),
            (_("weights"), _b(r["weights_bytes"])),
            (_("gradients"), _b(r["gradients_bytes"])),
            (_("optimizer state"), _b(r["optimizer_bytes"])),
            (_("activations"), _b(r["activations_bytes"])),
            (_("KV cache"), _b(r["kv_cache_bytes"])),
            (_("training peak"), _b(r["peak_bytes"])),
            (_("serving peak"), _b(r["serving_peak_bytes"]))]
    lines += _rows(rows)
    for key in ("rank", "tp_plan", "pipeline", "states"):
        lines.append(f"  [{tr(r['conventions'][key])}]")
    lines += ["", _("communication per rank  (payload bytes; bytes sent on the wire per step)")]
    rows = []
    for dim, c in rep["communication"].items():
        if not any(c.values()):
            continue
        text = _("forward {f}, step {s}, on the wire {w}, decode {d} per token",
                 f=si(c["forward_bytes"], unit="B"), s=si(c["step_bytes"], unit="B"),
                 w=si(c["step_wire_bytes"], unit="B"), d=si(c["decode_bytes_per_token"], unit="B"))
        if dim == "tp":
            text += "; " + _("{n} all-reduces per forward", n=grouped(c["forward_allreduce_count"]))
        rows.append((dim, text))
    lines += _rows(rows) if rows else ["  " + _("none: one rank holds everything")]
    lines.append(f"  [{tr(r['conventions']['communication'])}]")
    for one in rep.get("per_stage", []):
        lines.append("  " + _("stage {i}: {params} params, training peak {peak}",
                              i=one["stage"], params=short(one["params"]),
                              peak=bytes_both(one["peak_bytes"])))
    return lines


def _num(x: Any) -> float:
    """A figure of the speed blocks as a float (they may be exact "p/q" text)."""
    if isinstance(x, str) and "/" in x:
        n, d = x.split("/")
        return int(n) / int(d)
    return float(x)


def _seconds(x: Any) -> str:
    x = _num(x)
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if x >= scale or unit == "µs":
            return f"{decimal(x / scale, 3)}{_space()}{unit}"
    return str(x)


def speed_table(rep: dict[str, Any]) -> list[str]:
    """How fast: the roofline of prefill and decode, the KV cache vLLM would have, and the
    utilization of a measured run (reads the report's speed blocks only)."""
    sp, cap = rep["speed"], rep.get("capacity")
    lines = ["", _("how fast on {gpu} ({dtype} peak)", gpu=one_line(sp["gpu"]),
                   dtype=sp["compute_dtype"])
             + "  [" + (_("lower bounds: every efficiency is 1") if sp["is_bound"] else
                        _("estimates at the efficiencies given")) + "]"]
    rows = []
    for phase, label, tokens in (("prefill", _("prefill (time to first token)"),
                                  _("tokens/s")),
                                 ("decode", _("decode, per token"), _("tokens/s"))):
        seconds = sp["prefill_seconds" if phase == "prefill" else "decode_seconds_per_token"]
        if seconds is None:  # an encoder: no decode
            continue
        rows.append((label, _("{t}, {bound}-bound, {r} {unit}, {i} FLOPs/byte",
                              t=_seconds(seconds), bound=_(sp["bound"][phase]),
                              r=decimal(_num(sp["tokens_per_second"][phase]), 1), unit=tokens,
                              i=decimal(_num(sp["arithmetic_intensity"][phase]), 1))))
    rows.append((_("ridge point"), _("{i} FLOPs/byte", i=decimal(_num(sp["ridge_point"]), 1))))
    b = sp["compute_bound_batch"]
    if sp["decode_seconds_per_token"] is not None:
        rows.append((_("decode compute-bound from"),
                     _("batch {b}", b=b) if b is not None else
                     _("no batch: each sequence's KV cache keeps decode memory-bound")))
    lines += _rows(rows)
    if cap:
        lines += ["", _("KV cache as vLLM lays it out (gpu_memory_utilization {u})",
                        u=decimal(_num(cap["gpu_memory_utilization"]), 2))]
        lines += _rows([
            (_("budget"), f"{bytes_both(int(_num(cap['kv_budget_bytes'])))}"),
            (_("blocks"), _("{n} of {t} tokens", n=grouped(int(_num(cap["blocks"]))),
                            t=cap["block_size"])),
            (_("sequences at once"), _("{n} of {t} tokens", n=cap["max_sequences"],
                                       t=grouped(cap["context"]))),
        ])
    util = rep.get("utilization")
    if util:
        rows = []
        if "mfu" in util:
            rows += [(_("MFU"), percent(100 * _num(util["mfu"])) + f"  [{util['numerator']}]"),
                     (_("HFU"), percent(100 * _num(util["hfu"])))]
        if "training" in util:
            tr_ = util["training"]
            rows.append((_("training time"), _("{h} GPU-hours for {n} tokens",
                                               h=decimal(_num(tr_["gpu_hours"]), 1),
                                               n=short(tr_["tokens"]))))
        if rows:
            lines += [""] + _rows(rows)
    return lines


FIT_LABELS = {"weights": "weights", "inference": "weights + KV cache",
              "training": "training state + activations"}


def fits_table(data: dict[str, Any]) -> list[str]:
    """The fits / does-not-fit columns: one per accelerator, one row per budget."""
    gpus = data["gpus"]
    heads = [f"{one_line(g['name'])} ({one_line(g['memory'])})" for g in gpus]
    labels = {k: _(v) for k, v in FIT_LABELS.items()}
    width = max(len(v) for v in labels.values())
    yes, no = _("fits"), _("does not fit")
    cells = [max(len(h), len(no)) for h in heads]
    lines = ["", _("fits on one device").ljust(width + 28)
             + "  ".join(h.ljust(c) for h, c in zip(heads, cells)).rstrip()]
    for budget, n in data["budgets"].items():
        marks = [yes if g["fits"][budget] else no for g in gpus]
        lines.append(f"  {labels[budget].ljust(width)}  {bytes_both(n):>22}  "
                     + "  ".join(m.ljust(c) for m, c in zip(marks, cells)).rstrip())
    return lines


def presets_table(presets) -> str:
    rows = []
    for p in presets:
        rows.append((one_line(p.name), f"{grouped(p.expected_total):>16}  {one_line(p.description)}"))
        if p.note:
            rows.append(("", f"{'':>16}  note: {one_line(p.note)}"))
    return "\n".join(_rows(rows)) + "\n"

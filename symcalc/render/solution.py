"""A solution (:class:`symcalc.algebra.solve.Solution`) and a sensitivity as terminal text.
Reads their fields only; numbers are formatted here."""
from __future__ import annotations

from ..i18n import _
from .escape import one_line
from .numbers import bytes_both, grouped, short, si

VERDICT = {"fit": ("fits", "does not fit"), "when": ("holds", "does not hold"),
           "target": ("", "")}


def kind_of(solution) -> str:
    kinds = {k for n, k in solution.relation.names if "." in n or ":" in n}
    return "bytes" if "bytes" in kinds else "flops" if "flops" in kinds else "count"


def amount(value, kind: str) -> str:
    v = int(value) if value == int(value) else float(value)
    if kind == "bytes":
        return f"{grouped(int(v))} B ({bytes_both(int(v))})"
    if kind == "flops":
        return f"{grouped(int(v))} FLOPs ({si(int(v))})"
    return f"{grouped(int(v))} ({short(int(v))})"


def _sizes(solution) -> str:
    used = {s.name for s in (solution.lhs - solution.rhs).free_symbols}
    return ", ".join(f"{k} = {grouped(v)}" for k, v in solution.fixed if k in used)


def _side(solution, which: str) -> str:
    n = getattr(solution, which)
    if n is None:
        return f"  {which:<12} none (no valid {solution.size} within reach)"
    yes, no = VERDICT[solution.mode]
    held = getattr(solution, f"holds_{which}")
    verdict = f"  {yes if held else no}" if yes else ""
    value = amount(getattr(solution, f"value_{which}"), kind_of(solution))
    return f"  {which:<12} {solution.size} = {grouped(n)}   lhs = {value}{verdict}"


def solution_text(solution, nested: bool = False) -> str:
    x = solution.size
    lines = [] if nested else [f"{one_line(solution.model)}: solve for {x} "
                               f"({solution.mode}: {one_line(solution.relation.text)})"]
    lines.append(f"  {'equation':<12} {solution.equation()}")
    for t in solution.ties:
        lines.append(f"  {'follows ' + x:<12} {t.name} = {t.expr}  ({one_line(t.why)})")
    sizes = _sizes(solution)
    if sizes:
        lines.append(f"  {'model sizes':<12} {sizes}")
    if solution.general_form is not None:
        lines.append(f"  {'closed form':<12} {x} = {solution.general_form}")
    if solution.closed_form is not None:
        label = "as solved" if solution.general_form is not None else "closed form"
        lines.append(f"  {label:<12} {x} = {solution.closed_form}")
    if solution.related_form is not None:
        said = ", ".join(f"{t.name} = {t.expr}" for t in solution.relations)
        lines.append(f"  {'':<12} = {solution.related_form}  (with {said})")
    if solution.always:
        lines.append(f"  {'answer':<12} holds for every {x} >= 1: no largest or smallest {x}")
    else:
        approx = f"  (~ {float(solution.exact):,.2f})" if not solution.exact.is_Integer else ""
        lines.append(f"  {'exact':<12} {x} = {solution.exact}{approx}")
        for c in solution.constraints:
            lines.append(f"  {'valid ' + x:<12} {c}")
        lines += [_side(solution, "below"), _side(solution, "above")]
    for note in solution.notes:
        lines.append(f"  {'note':<12} {one_line(note)}")
    if solution.uncapped is not None:
        lines.append("  without the sliding window (every token cached):")
        lines.append(solution_text(solution.uncapped, nested=True).rstrip("\n"))
    return "\n".join(lines) + "\n"


def sensitivity_text(s) -> str:
    x = s.size
    what = {"L": "one more layer", "s": "one more token per sequence", "b": "one more sequence"}
    lines = [f"{s.quantity} of {one_line(s.model)}: sensitivity to {x} (at {x} = {grouped(s.at)})"]
    for t in s.ties:
        lines.append(f"  follows {x}: {t.name} = {t.expr}  ({one_line(t.why)})")
    lines += [f"  d{s.quantity}/d{x} = {s.derivative}",
              f"  at the model's sizes: {s.slope} per unit of {x}"
              + (f" (~ {float(s.slope):,.6g})" if not getattr(s.slope, "is_Integer", False) else ""),
              f"  elasticity ({x}/Q) dQ/d{x} = {s.elasticity} ~ {float(s.elasticity):.4f}: "
              f"{s.quantity} grows as {x}^{float(s.elasticity):.2f} here",
              f"  {what.get(x, f'one more unit of {x}')} adds {grouped(int(s.step)) if s.step == int(s.step) else s.step}"
              f" (Q = {grouped(int(s.value)) if s.value == int(s.value) else s.value})"]
    return "\n".join(lines) + "\n"


def layouts_text(answer: dict) -> str:
    """A layout search as terminal text: the smallest degree that fits (``--for``), or every
    layout of N GPUs that fits with its per-rank peak and the bytes it sends per step."""
    if "layouts" not in answer:
        dim = answer["size"]
        lines = [f"{one_line(answer['equation'])}, searching {dim} (the other options as given)"]
        if answer["above"] is None:
            lines.append(f"  no {dim} the model can take meets it ({answer['tried']} tried)")
        else:
            lines.append(f"  smallest {dim} that fits: {answer['above']}  "
                         f"(left side {grouped(int(answer['value_above']))})")
            if answer["below"] is not None:
                lines.append(f"  {dim} = {answer['below']} does not: "
                             f"{grouped(int(answer['value_below']))}")
        return "\n".join(lines) + "\n"
    lines = [f"{answer['gpus']} GPUs, {one_line(answer['equation'])}: "
             f"{len(answer['layouts'])} of {answer['tried']} layouts fit "
             f"({answer['refused']} the model cannot take)"]
    for x in answer["layouts"]:
        sends = ", ".join(f"{d} {si(b, unit='B')}" for d, b in x["step_bytes"].items() if b)
        lines.append(f"  tp {x['tp']:>3} pp {x['pp']:>3} cp {x['cp']:>3} dp {x['dp']:>4} "
                     f"ep {x['ep']:>3}  peak {bytes_both(x['peak_bytes'])}  "
                     f"sent per step {si(x['step_wire_bytes'], unit='B')}"
                     + (f"  ({sends})" if sends else ""))
    return "\n".join(lines) + "\n"


def speed_answer_text(relation: str, a: dict) -> str:
    """A how-fast answer (fast.speed_solve) as terminal text."""
    what = {"b": "batch b", "s": "sequence length s", "gpus": "accelerators"}[a["for"]]
    lay = a["layout"]
    layout = ", ".join(f"{k} {v}" for k, v in lay.items() if v != 1) or "one device"
    lines = [_("{edge} {what} with {relation}: {n}",
               edge=_(a["edge"]), what=_(what), relation=one_line(relation), n=a["answer"]),
             "  " + _("layout: {layout} ({g} accelerators)", layout=layout, g=a["gpus"])]
    if a.get("note"):
        lines.append("  " + _("note: {note}", note=a["note"]))
    for name, x in a["figures"].items():
        lines.append(f"  {name} = {x:.6g}")
    if a["beyond"]:
        lines.append("  " + _("at {at}:", at=a["beyond"]["at"]) + " " + ", ".join(
            f"{n} = {x:.6g}" for n, x in a["beyond"]["figures"].items()
            if n in relation))
    return "\n".join(lines) + "\n"

"""The handout's "How fast" section prepared for its templates (``_speed.md.j2``,
``_speed.tex.j2``): every number formatted, the roofline figure's coordinates, the exercise
in words. Reads :mod:`symcalc.derivations.handout_speed`'s data only."""
from __future__ import annotations

from fractions import Fraction
from typing import Callable, Optional

from ..i18n import _
from .numbers import decimal, grouped, si

FLOPS_PER_BYTE = "FLOPs/byte"


def _f(x) -> float:
    return float(Fraction(x))


def _sci(x) -> str:
    return f"{_f(x):.6e}"


def _seconds(x) -> str:
    x = _f(x)
    if x >= 1:
        return _("{t} s", t=decimal(x, 3))
    return _("{t} ms", t=decimal(1000 * x, 3))


def linear_batch(sheet) -> Optional[int]:
    """b* of the exercise: the first whole batch with b c / pi >= (W + b m) / beta, from the
    three numbers it gives (None: never)."""
    c, W, m = sheet.decode_flops_per_sequence, sheet.decode_bytes_fixed, sheet.decode_bytes_per_sequence
    gap = c * sheet.bandwidth - m * sheet.peak
    if gap <= 0:
        return None
    b = W * sheet.peak / gap
    return max(1, -((-b.numerator) // b.denominator))


def sheet_view(sh, model: str, moe: bool, esc: Callable[[str], str],
               blank: Callable[[str, object], str], exercises) -> Optional[dict]:
    """One model's "How fast" figures; on an exercise sheet (``exercises``: its blanks) each
    figure and the exercise's answer a numbered blank, ``blank(text, value)``, whose answer
    the key gives."""
    sp = sh.speed
    if sp is None:
        return None

    def cell(text: str) -> str:
        return blank(esc(text), None) if exercises else esc(text)

    rows = []
    for name, p in ((_("prefill (time to first token)"), sp.prefill),
                    (_("decode, per token"), sp.decode)):
        rows.append({"name": esc(name), "seconds": cell(_seconds(p.seconds)),
                     "tokens": cell(decimal(_f(p.tokens_per_second), 1)),
                     "intensity": cell(decimal(_f(p.intensity), 1)),
                     "attainable": cell(si(int(_f(p.attainable)), unit="FLOP/s")),
                     "bound": esc(_(p.bound))})
    b_star = sp.compute_bound_batch
    exercise = None
    if not moe:
        answer = linear_batch(sp)
        exercise = {
            "question": esc(_("Decode of {model} at batch b does b c FLOPs and moves W + b m "
                              "bytes: c = {c} FLOPs, W = {W} bytes, m = {m} bytes. On {gpu} "
                              "(peak {pi} FLOP/s, bandwidth {beta} bytes/s), from which batch "
                              "does decode take longer for its FLOPs than for its bytes?",
                              model=model, c=grouped(int(sp.decode_flops_per_sequence)),
                              W=grouped(int(sp.decode_bytes_fixed)),
                              m=grouped(int(sp.decode_bytes_per_sequence)), gpu=sp.gpu,
                              pi=grouped(sp.peak), beta=grouped(sp.bandwidth))),
            "answer": cell(
                _("b* = ceil(W pi / (c beta - m pi)) = {b}", b=grouped(answer))
                if answer is not None else
                _("never: c beta does not exceed m pi, each sequence's own bytes keep decode "
                  "memory-bound")),
        }
    return {
        "model": model, "gpu": esc(sp.gpu), "rows": rows,
        "ridge": cell(decimal(_f(sp.ridge), 1)),
        "batch": cell(grouped(b_star)) if b_star is not None else
        esc(_("no batch: each sequence's KV cache keeps decode memory-bound")),
        "sequences": cell(grouped(sp.max_sequences)) if sp.max_sequences is not None else "--",
        "prefill_point": f"({_sci(sp.prefill.intensity)},{_sci(sp.prefill.attainable)})",
        "decode_point": f"({_sci(sp.decode.intensity)},{_sci(sp.decode.attainable)})",
        "exercise": exercise,
    }


def figure_view(sheets: list, esc: Callable[[str], str]) -> Optional[dict]:
    """The roofline figure of the section: the accelerator's roof (min(peak, I x bandwidth))
    over the intensities the models' points span, log-log."""
    points = [sh.speed for sh in sheets if sh.speed is not None]
    if not points:
        return None
    sp = points[0]
    xs = [p.prefill.intensity for p in points] + [p.decode.intensity for p in points] + [sp.ridge]
    lo, hi = min(xs) / 4, max(xs) * 4
    roof = [(lo, lo * sp.bandwidth), (sp.ridge, Fraction(sp.peak)), (hi, Fraction(sp.peak))]
    return {"gpu": esc(sp.gpu), "roof": " ".join(f"({_sci(x)},{_sci(y)})" for x, y in roof),
            "ridge": f"({_sci(sp.ridge)},{_sci(sp.peak)})",
            "xmin": _sci(lo), "xmax": _sci(hi),
            "ymin": _sci(lo * sp.bandwidth / 2), "ymax": _sci(sp.peak * 2),
            "xlabel": esc(_("arithmetic intensity (FLOPs per byte)")),
            "ylabel": esc(_("attainable FLOP/s")),
            "caption": esc(_("The roofline of {gpu}: attainable FLOP/s is the smaller of the "
                             "peak and the arithmetic intensity times the memory bandwidth; "
                             "the ridge point (the corner) separates memory-bound from "
                             "compute-bound work. Filled marks: prefill; open marks: decode.",
                             gpu=sp.gpu))}

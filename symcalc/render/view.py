"""A :class:`~symcalc.derivations.derivation.Derivation` as the plain data its templates show: LaTeX
math strings for each line, escaped text, formatted numbers. Shared by the Markdown and the
LaTeX renderers (both write their math in LaTeX); the text escaping is theirs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import sympy
from sympy.printing.latex import LatexPrinter

from ..derivations import derivation as dv
from ..derivations.sources import SOURCES
from ..algebra.symbols import SIZES, latex_names
from ..i18n import _, ngettext, tr
from .exercises import Blanks, blank_math, blank_text, reference, sheet_equation
from .numbers import (GB, GiB, bytes_both, decimal, flops_in, grouped, math_decimal, math_grouped,
                      params_in, percent, ratio)

LINE_LIMIT = 80  # visible characters of a display line, left side included (A4, 11pt)
LEFT = 14  # the width of a usual left side (N_{attention,q})
TAG_LIMIT = 46  # a label wider than this (in math characters) goes on a line above its equation
SUM_CHUNK = 4  # terms per line of a long sum


@dataclass(frozen=True)
class Units:
    """How results are shown: parameters in ``params`` (auto, exact, K, M, B, T, yi) and
    FLOPs with the SI prefix ``flops`` (auto, K, M, G, T, P, E)."""
    params: str = "auto"
    flops: str = "auto"


SHORT_NAMES = {"params.total": "", "params.active": "active", "params.embedding": "emb",
               "params.non_embedding": "non-emb", "flops.forward_matmul": "fwd",
               "flops.forward": "fwd", "flops.training": "train", "flops.decode_per_token":
               "decode", "memory.weights_bytes": "weights", "memory.kv_cache_bytes": "KV",
               "memory.activations_bytes": "act", "memory.training_bytes": "train",
               "memory.recurrent_state_bytes": "state", "memory.training_peak": "peak"}


# a stack's layer classes (``every_layer/moe/router``): they group a derivation's steps, and
# a subscript names the part without them (N_{moe,router})
_CLASS = re.compile(r"^(every|attention|linear|ssm|conv|ffn|moe|dense|group\d+)_layer$")
_CODE_NAME = re.compile(r"^[a-z]{1,2}_[ab]$")  # q_a, kv_b: the checkpoint's own names


def part_name(letter: str, path: str) -> str:
    """``N`` + a subscript naming the path in words: ``layer/attention/q`` -> N_{attention,q},
    ``every_layer/moe/shared_gate`` -> N_{moe,shared gate}, ``params.non_embedding`` ->
    N_{non-emb} (a hyphen, not a minus)."""
    if path in SHORT_NAMES:
        sub = SHORT_NAMES[path]
    else:
        bits = path.split("/")
        keep = [b for i, b in enumerate(bits)
                if i == len(bits) - 1 or not (b == "layer" or _CLASS.match(b))]
        sub = ",".join(keep)
    if not sub:
        return letter
    sub = re.sub(r"[^A-Za-z0-9._,/ -]", "", sub)
    words = []
    for word in sub.split(","):
        word = word.replace("_", r"\_") if _CODE_NAME.match(word) else word.replace("_", " ")
        words.append(word.replace(" ", r"\ ").replace("-", r"\text{-}"))
    return f"{letter}_{{\\mathrm{{{','.join(words)}}}}}"


def number_tex(value) -> str:
    """An exact number in math: 7{,}241{,}732{,}096 (grouped from five digits on); a
    fraction as \\frac."""
    value = sympy.Rational(value) if not isinstance(value, int) else value
    if isinstance(value, int) or value.q == 1:
        n = int(value)
        return math_grouped(n) if abs(n) >= 10**4 else str(n)
    return f"\\frac{{{number_tex(int(value.p))}}}{{{number_tex(int(value.q))}}}"


def plain_number(value) -> str:
    """A size as text: grouped digits, or a fraction p/q (half a byte per int4 value)."""
    value = sympy.Rational(value)
    return grouped(int(value)) if value.q == 1 else f"{value.p}/{value.q}"


def symbol_tex(symbol: sympy.Symbol) -> str:
    """A size's LaTeX name (the canonical one, or a derivation's own such as beta_kv)."""
    return latex_names().get(symbol) or StepPrinter().doprint(symbol)


def value_tex(value) -> str:
    """An evaluated value: exact, and a fraction followed by its decimal value (one decimal,
    or four significant digits below 10)."""
    exact = number_tex(value)
    if isinstance(value, int) or sympy.Rational(value).q == 1:
        return exact
    value = sympy.Rational(value)
    return f"{exact} \\approx {math_decimal(ratio(value.p, value.q), decimals_for(value))}"


def decimals_for(value) -> int:
    """Decimals that show a rational with about four significant digits (one from 10 on),
    fewer when it ends sooner (1/2: 0.5)."""
    x = abs(float(value))
    if x >= 10 or x == 0:
        return 1
    import math as _math

    want = min(15, max(1, 3 - int(_math.floor(_math.log10(x)))))
    q = sympy.Rational(value)
    for places in range(1, want):
        if (q * 10**places).q == 1:
            return places
    return want


# symbols a derivation introduces for itself (not sizes of the model)
DERIVATION_SYMBOLS = {"beta_kv": r"\beta_{\mathrm{kv}}", "beta_state": r"\beta_{\mathrm{state}}"}


class StepPrinter(LatexPrinter):
    """LaTeX of a step: canonical symbol names, part symbols as N_{...}, grouped integers,
    and (for a substitution) each symbol printed as its number, so the substituted line
    keeps the formula's shape: ``12 \\cdot 32 \\cdot 4096^{2}``."""

    def __init__(self, values: dict | None = None, **settings):
        super().__init__({"symbol_names": latex_names(), "mul_symbol": "dot", **settings})
        self.values = values or {}

    def _print_Symbol(self, expr, style="plain"):
        if expr in self.values:
            return number_tex(self.values[expr])
        part = dv.part_of(expr)
        if part:
            return part_name(*part)
        if expr.name in DERIVATION_SYMBOLS:
            return DERIVATION_SYMBOLS[expr.name]
        return super()._print_Symbol(expr, style)

    def _print_Integer(self, expr):
        return number_tex(int(expr))


def math(expr, values: dict | None = None, order: str | None = None,
         room: int = LINE_LIMIT - LEFT) -> list[str]:
    """An expression as a list of chunks: one chunk, or a long sum cut into lines that fit
    (continuation chunks start with '+'); a long product ``L (a + b + ...)`` is broken inside
    its widest bracket."""
    settings = {"order": order} if order else {}
    printer = StepPrinter(values, **settings)
    whole = printer.doprint(expr)
    width = room - 16  # room for the tag beside the first line
    if visible(whole) <= width and (not isinstance(expr, sympy.Add)
                                    or len(expr.args) <= SUM_CHUNK):
        return [whole]
    if not isinstance(expr, sympy.Add):
        inner = _wide_product(expr, printer, width)
        return _signed(inner) if inner else [whole]
    terms = list(expr.args) if order == "none" else list(expr.as_ordered_terms())
    chunks, current = [], ""
    for term in terms:
        text = printer.doprint(term)
        inner = _wide_product(term, printer, width) if visible(text) > width else None
        if inner:  # L (a + b + ... ) too wide for a line: its sum broken inside the brackets
            if current:
                chunks.append(current)
            if text.startswith("-") and not inner[0].startswith("-"):
                inner[0] = "- " + inner[0]
            chunks += inner[:-1]
            current = inner[-1]
            continue
        joined = text if not current else (f"{current} - {text[1:].lstrip()}"
                                           if text.startswith("-") else f"{current} + {text}")
        count = joined.count(" + ") + joined.count(" - ") + 1
        if current and (visible(joined) > width or count > SUM_CHUNK):
            chunks.append(current)
            current = text
        else:
            current = joined
    chunks.append(current)
    return _signed(chunks)


def _signed(chunks: list[str]) -> list[str]:
    """Continuation chunks start with their sign ('+' added) unless they continue a bracket."""
    return [chunks[0]] + [c if c.startswith(("-", "\\left.")) else "+ " + c for c in chunks[1:]]


def _wide_product(term, printer, width: int) -> list[str] | None:
    """A product with a sum among its factors (``L (a + b + ...)``, ``(L - L_dense) (a + b
    + ...)``) as lines, broken inside its widest sum: the first line opens that bracket with
    \\left( ... \\right., the others continue with \\left. + ..., the last closes it."""
    if not isinstance(term, sympy.Mul):
        return None
    factors = list(term.args)
    sums = [i for i, f in enumerate(factors) if isinstance(f, sympy.Add)]
    if not sums:
        return None
    widest = max(sums, key=lambda i: visible(printer.doprint(factors[i])))
    rest = factors[:widest] + factors[widest + 1:]
    sign = ""
    if rest and rest[0] == -1:  # -(a + b): the sign leads the first line
        sign, rest = "- ", rest[1:]
    pre = " \\cdot ".join(_factor(f, printer) for f in rest)
    parts, current = [], ""
    for t in factors[widest].as_ordered_terms():
        text = printer.doprint(t)
        joined = text if not current else (f"{current} - {text[1:].lstrip()}"
                                           if text.startswith("-") else f"{current} + {text}")
        if current and visible(joined) > width - 6:
            parts.append(current)
            current = text if text.startswith("-") else "+ " + text
        else:
            current = joined
    parts.append(current)
    if len(parts) < 2:
        return None
    lead = f"{pre} \\cdot " if pre else ""
    lines = [f"{sign}{lead}\\left({parts[0]} \\right."]
    lines += [f"\\left. {p} \\right." for p in parts[1:-1]]
    lines.append(f"\\left. {parts[-1]}\\right)")
    return lines


def _factor(f, printer) -> str:
    """One factor of a product as it prints inside the product (a sum in brackets)."""
    text = printer.doprint(f)
    return f"\\left({text}\\right)" if isinstance(f, sympy.Add) else text


def visible(tex: str) -> int:
    """Rough width of a LaTeX math string in characters."""
    t = tex.replace("{,}", ",")
    t = re.sub(r"\\(cdot|quad)", " ", t)
    t = re.sub(r"\\(left|right|mathrm|frac|min|max)", "", t)
    t = re.sub(r"\\[a-zA-Z]+", "x", t)
    return len(re.sub(r"[{}^_\\ ]", "", t)) + t.count(" ") // 2


def tag_width(text: str) -> float:
    """Rough width of a label set in \\footnotesize, in math characters (a Chinese character
    is about twice as wide as a Latin letter)."""
    wide = sum(1 for ch in text if ord(ch) >= 0x2E80)
    return 0.75 * (len(text) - wide) + 1.65 * wide + 4


def lines_of(pieces: list[list[str]], tag: str = "", rel: str = "=",
             room: int = LINE_LIMIT - LEFT) -> list[str]:
    """Right-hand sides joined by '=' (the first by ``rel``) into lines no wider than ``room``
    (the first line leaves room for its tag, set in a smaller font)."""
    lines, current, broken = [], "", False
    for j, piece in enumerate(pieces):
        for i, chunk in enumerate(piece):
            text = (f"{rel if j == 0 else '='} " if i == 0 else "\\quad ") + chunk
            limit = room - (tag_width(tag) if not lines and tag else 0)
            if current and (broken or len(piece) > 1 or visible(current + text) > limit):
                lines.append(current)
                current = text
            else:
                current = f"{current} {text}".strip()
        broken = len(piece) > 1
    lines.append(current)
    return lines


class SourceIndex:
    """Numbers the sources of one document in order of first use."""

    def __init__(self):
        self.keys: list[str] = []

    def ref(self, key: str) -> str:
        if not key:
            return ""
        if key not in self.keys:
            self.keys.append(key)
        return str(self.keys.index(key) + 1)

    def entries(self, esc: Callable[[str], str]) -> list[dict]:
        return [{"n": i + 1, "key": k, "citation": esc(SOURCES[k].citation),
                 "where": esc(SOURCES[k].where)} for i, k in enumerate(self.keys) if k in SOURCES]


def _equation(step, esc, refs: SourceIndex, room: int = LINE_LIMIT - LEFT) -> dict:
    order = "none" if isinstance(step, dv.Compose) else None
    if isinstance(step, dv.Simplify):
        pieces = [math(step.after, room=room)]
        label = dv.ASSUMPTION_NAMES.get(step.assumption, step.assumption)
        # one sentence ("under Kaplan et al.'s assumptions"), translated whole; the
        # relations substituted are named, not said to be "under" anything
        note = tr(label if step.assumption == "kaplan_relations" else f"under {label}")
    else:
        pieces = [math(step.expr, order=order, room=room)] \
            if isinstance(step, (dv.Formula, dv.Compose)) else []
        note = tr(getattr(step, "meaning", ""))
    ref = refs.ref(getattr(step, "source", ""))
    number = getattr(step, "expr", None)
    return {"lhs": part_name(step.letter, step.path), "raw_path": step.path,
            "pieces": pieces, "order": order,
            "number": number if number is not None and number.is_number else None,
            "meaning": esc(note), "path": esc(step.path), "ref": ref,
            "source": esc(SOURCES[step.source].citation) if ref and step.source in SOURCES else ""}


REL_TEX = {"=": "=", "<=": "\\le", ">=": "\\ge", "<": "<", ">": ">", "~": "\\approx"}


def _relation(step, esc, refs: SourceIndex, room: int = LINE_LIMIT - LEFT) -> dict:
    ref = refs.ref(step.source)
    return {"lhs": StepPrinter().doprint(step.lhs), "pieces": [math(r, room=room) for r in step.rhs],
            "rel": REL_TEX[step.op], "order": None, "meaning": esc(tr(step.meaning)),
            "path": esc(step.path), "ref": ref, "done": True,
            "source": esc(SOURCES[step.source].citation) if ref and step.source in SOURCES else ""}


def _finish(eq: dict, room: int = LINE_LIMIT - LEFT) -> dict:
    tag = re.sub(r"\\[a-z]+\{\}|\\", "", eq["meaning"]) + (f" [{eq['ref']}]" if eq["ref"] else "")
    rel = eq.get("rel", "=")
    # a label too wide to stand beside its equation is set on a line above it
    eq["tag_above"] = tag_width(tag) > TAG_LIMIT
    eq["lines"] = lines_of(eq["pieces"], "" if eq["tag_above"] else tag, rel, room)
    # one display line (Markdown): the pieces without the LaTeX line-break indents
    eq["inline"] = f"{eq['lhs']} {rel} " + " = ".join(" ".join(piece) for piece in eq["pieces"])
    return eq


def _room(steps) -> int:
    """Width left for the right-hand sides of a block of steps: an align* block lines them up
    after its widest left side."""
    widest = LEFT
    for step in steps:
        if isinstance(step, dv.Relate):
            widest = max(widest, visible(StepPrinter().doprint(step.lhs)))
        elif hasattr(step, "letter") and not isinstance(step, dv.Define):
            # the subscript is set smaller: about 0.7 of a character each
            widest = max(widest, 1 + int(0.7 * (visible(part_name(step.letter, step.path)) - 1)))
    return max(40, LINE_LIMIT - widest)


def steps_view(steps, esc, refs: SourceIndex, blanks: Blanks | None = None,
               tex: bool = False) -> list[dict]:
    """Consecutive steps on one path become one equation: formula = numbers = value (on an
    exercise sheet, ``blanks``, the value is a numbered blank: :mod:`.exercises`)."""
    out: list[dict] = []
    room = _room(steps)
    for step in steps:
        if isinstance(step, (dv.Formula, dv.Compose, dv.Simplify)):
            out.append(_equation(step, esc, refs, room))
        elif isinstance(step, dv.Relate):
            out.append(_relation(step, esc, refs, room))
        elif isinstance(step, dv.Substitute):
            out[-1]["pieces"].append(math(step.expr, dict(step.values), out[-1]["order"], room))
            if any(dv.part_of(sym) for sym, _v in step.values):  # earlier results' numbers
                out[-1].setdefault("secret", set()).add(len(out[-1]["pieces"]) - 1)
        elif isinstance(step, dv.Evaluate):
            if out and out[-1].get("number") is not None and not out[-1].get("done") \
                    and out[-1]["number"] == step.value:  # "N = 0", not "N = 0 = 0"
                out[-1]["value"], out[-1]["done"] = step.value, True
                continue
            if not out or out[-1]["path"] != esc(step.path) or out[-1].get("done"):
                out.append({"lhs": part_name(step.letter, step.path),
                            "pieces": [], "order": None, "meaning": esc(step.path),
                            "path": esc(step.path), "ref": "", "source": ""})
            out[-1]["pieces"].append([value_tex(step.value)])
            out[-1]["value"] = step.value
            out[-1]["done"] = True
    if blanks is not None:
        out = [sheet_equation(eq, blanks, value_tex, tex, esc) for eq in out]
    return [_finish(eq, room) for eq in out]


def result_text(result: dv.Result, units: Units, yi_text: str) -> list[str]:
    """The result in words, each unit the user may want: exact, short, SI, GB and GiB."""
    n = result.value
    if result.unit == "parameters":
        shown = params_in(n, units.params)
        shown = shown.replace("亿", yi_text)
        return [ngettext("{n} parameter", "{n} parameters", n).format(n=grouped(n)), shown]
    if result.unit == "FLOPs":
        return [_("{n} FLOPs", n=grouped(n)), flops_in(n, units.flops)]
    if result.unit == "size":
        return [f"{result.path} = {grouped(n)}"]
    if result.unit == "collectives":
        return [_("{n} collectives", n=grouped(n))]
    if result.unit == "seconds":
        x = float(n)
        return [_("{t} seconds", t=decimal(x, decimals_for(n))),
                _("{t} ms", t=decimal(1000 * x, decimals_for(1000 * sympy.Rational(n))))]
    if result.unit == "utilization":
        return [percent(100 * float(n), 2)]
    if result.unit == "sequences":
        return [ngettext("{n} sequence", "{n} sequences", n).format(n=grouped(n))]
    return [ngettext("{n} byte", "{n} bytes", n).format(n=grouped(n)), bytes_both(n)]


def sheet_blanks(*derivations: dv.Derivation) -> Blanks:
    """The blanks of a sheet of these derivations: none yet, and the sizes they give."""
    return Blanks({sympy.Rational(s.value) for d in derivations for s in d.steps()
                   if isinstance(s, dv.Define)})


def unit_words(result: dv.Result, blank: str, esc) -> str:
    """The result's words on a sheet: its unit, in the language in force, after the blank."""
    mark = "QQBLANKQQ"
    if result.unit == "parameters":
        text = ngettext("{n} parameter", "{n} parameters", 5).format(n=mark)
    elif result.unit == "FLOPs":
        text = _("{n} FLOPs", n=mark)
    elif result.unit == "bytes":
        text = ngettext("{n} byte", "{n} bytes", 5).format(n=mark)
    else:
        text = f"{result.path} = {mark}"
    return esc(text).replace(mark, blank)


def derivation_view(d: dv.Derivation, esc: Callable[[str], str], units: Units = Units(),
                    refs: SourceIndex | None = None, yi_text: str = "亿",
                    blanks: "bool | Blanks" = False, tex: bool = False) -> dict:
    """Everything a derivation template shows, prepared; ``blanks``: as an exercise sheet,
    every computed number a numbered blank (the sizes and formulas shown), kept in the
    :class:`.exercises.Blanks` given (or new ones that give the derivation's sizes)."""
    refs = refs or SourceIndex()
    if blanks is True:
        blanks = sheet_blanks(d)
    blanks = blanks if isinstance(blanks, Blanks) else None
    sections = []
    for section in d.sections:
        defines = [s for s in section.steps if isinstance(s, dv.Define)]
        results = [s for s in section.steps if isinstance(s, dv.Result)]
        if defines:
            rows = [{"symbol": symbol_tex(s.symbol),
                     "meaning": esc(tr(s.meaning)), "value": plain_number(s.value),
                     "value_tex": number_tex(s.value)} for s in defines]
            sections.append({"title": esc(tr(section.title)), "kind": "sizes", "rows": rows})
        elif results:
            r = results[0]
            lhs = (latex_names()[SIZES[r.path].symbol] if r.unit == "size" and r.path in SIZES
                   else part_name(r.letter, r.path))
            asked = blanks is not None and not blanks.gives(r.value)
            n = blanks.add("value", number_tex(r.value), True, r.value) if asked else 0
            sections.append({"title": esc(tr(section.title)), "kind": "result",
                             "lhs": lhs, "value_tex": blank_math(n) if asked else number_tex(r.value),
                             "value": blank_text(n, tex) if asked else grouped(r.value),
                             "words": ([unit_words(r, reference(n), esc)] if asked else
                                       [esc(w) for w in result_text(r, units, yi_text)]),
                             "meaning": esc(tr(r.meaning)) if r.meaning != r.unit else "",
                             "note": "" if blanks is not None else esc(tr(r.note))})
        else:
            sections.append({"title": esc(tr(section.title)), "kind": "steps",
                             "equations": steps_view(section.steps, esc, refs, blanks, tex),
                             "note": esc(tr(section.note))})
    return {"title": esc(tr(d.title)), "model": esc(d.model), "quantity": esc(d.quantity),
            "conventions": [esc(tr(c)) for c in d.conventions], "sections": sections,
            "references": refs.entries(esc)}

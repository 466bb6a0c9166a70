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
from .numbers import GB, GiB, bytes_both, flops_in, grouped, math_decimal, math_grouped, params_in, ratio

LINE_LIMIT = 66  # visible characters of math per line before a break (A4, 11pt)
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
               "memory.activations_bytes": "act", "memory.training_bytes": "train"}


def part_name(letter: str, path: str) -> str:
    """``N`` + a subscript naming the path: ``layer/attention/q`` -> N_{attention,q}."""
    if path in SHORT_NAMES:
        sub = SHORT_NAMES[path]
    else:
        bits = path.split("/")
        keep = [b for i, b in enumerate(bits) if b != "layer" or i == len(bits) - 1]
        sub = ",".join(keep)
    if not sub:
        return letter
    sub = re.sub(r"[^A-Za-z0-9._,/ -]", "", sub)
    sub = sub.replace("_", r"\_").replace(" ", r"\ ")
    return f"{letter}_{{\\mathrm{{{sub}}}}}"


def number_tex(value) -> str:
    """An exact number in math: 7{,}241{,}732{,}096 (grouped from five digits on); a
    fraction as \\frac."""
    value = sympy.Rational(value) if not isinstance(value, int) else value
    if isinstance(value, int) or value.q == 1:
        n = int(value)
        return math_grouped(n) if abs(n) >= 10**4 else str(n)
    return f"\\frac{{{number_tex(int(value.p))}}}{{{number_tex(int(value.q))}}}"


def _plain_number(value) -> str:
    """A size as text: grouped digits, or a fraction p/q (half a byte per int4 value)."""
    value = sympy.Rational(value)
    return grouped(int(value)) if value.q == 1 else f"{value.p}/{value.q}"


def value_tex(value) -> str:
    """An evaluated value: exact, and a fraction followed by its decimal value."""
    exact = number_tex(value)
    if isinstance(value, int) or sympy.Rational(value).q == 1:
        return exact
    value = sympy.Rational(value)
    return f"{exact} \\approx {math_decimal(ratio(value.p, value.q), 1)}"


# symbols a derivation introduces for itself (not sizes of the model)
DERIVATION_SYMBOLS = {"beta_kv": r"\beta_{\mathrm{kv}}"}


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


def math(expr, values: dict | None = None, order: str | None = None) -> list[str]:
    """An expression as a list of chunks: one chunk, or a long sum cut into lines that fit
    (continuation chunks start with '+')."""
    settings = {"order": order} if order else {}
    printer = StepPrinter(values, **settings)
    whole = printer.doprint(expr)
    width = LINE_LIMIT - 16  # room for the tag beside the first line
    if not isinstance(expr, sympy.Add) or (len(expr.args) <= SUM_CHUNK and visible(whole) <= width):
        return [whole]
    terms = list(expr.args) if order == "none" else list(expr.as_ordered_terms())
    chunks, current = [], ""
    for term in terms:
        text = printer.doprint(term)
        inner = _wide_product(term, printer, width) if visible(text) > width else None
        if inner:  # L (a + b + ... ) too wide for a line: its sum broken inside the brackets
            if current:
                chunks.append(current)
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
    """A product with one sum among its factors (``L (a + b + ...)``) as lines: the first
    opens the bracket with \\left( ... \\right., the others continue with \\left. + ...,
    the last closes it."""
    if not isinstance(term, sympy.Mul):
        return None
    sums = [f for f in term.args if isinstance(f, sympy.Add)]
    if len(sums) != 1:
        return None
    rest = sympy.Mul(*[f for f in term.args if f is not sums[0]], evaluate=False)
    pre = printer.doprint(rest)
    parts, current = [], ""
    for t in sums[0].as_ordered_terms():
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
    lines = [f"{pre} \\cdot \\left({parts[0]} \\right."]
    lines += [f"\\left. {p} \\right." for p in parts[1:-1]]
    lines.append(f"\\left. {parts[-1]}\\right)")
    return lines


def visible(tex: str) -> int:
    """Rough width of a LaTeX math string in characters."""
    t = tex.replace("{,}", ",")
    t = re.sub(r"\\(cdot|quad)", " ", t)
    t = re.sub(r"\\(left|right|mathrm|frac|min|max)", "", t)
    t = re.sub(r"\\[a-zA-Z]+", "x", t)
    return len(re.sub(r"[{}^_\\ ]", "", t)) + t.count(" ") // 2


def lines_of(pieces: list[list[str]], tag: str = "", rel: str = "=") -> list[str]:
    """Right-hand sides joined by '=' (the first by ``rel``) into lines no wider than
    :data:`LINE_LIMIT` (the first line leaves room for its tag, set in a smaller font)."""
    lines, current, broken = [], "", False
    for j, piece in enumerate(pieces):
        for i, chunk in enumerate(piece):
            text = (f"{rel if j == 0 else '='} " if i == 0 else "\\quad ") + chunk
            limit = LINE_LIMIT - (int(0.7 * len(tag)) + 4 if not lines and tag else 0)
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


def _equation(step, esc, refs: SourceIndex) -> dict:
    order = "none" if isinstance(step, dv.Compose) else None
    if isinstance(step, dv.Simplify):
        pieces = [math(step.after)]
        note = _("under {assumption}",
                 assumption=tr(dv.ASSUMPTION_NAMES.get(step.assumption, step.assumption)))
    else:
        pieces = [math(step.expr, order=order)] if isinstance(step, (dv.Formula, dv.Compose)) else []
        note = tr(getattr(step, "meaning", ""))
    ref = refs.ref(getattr(step, "source", ""))
    number = getattr(step, "expr", None)
    return {"lhs": part_name(step.letter, step.path), "pieces": pieces, "order": order,
            "number": number if number is not None and number.is_number else None,
            "meaning": esc(note), "path": esc(step.path), "ref": ref,
            "source": esc(SOURCES[step.source].citation) if ref and step.source in SOURCES else ""}


REL_TEX = {"=": "=", "<=": "\\le", ">=": "\\ge", "<": "<", ">": ">", "~": "\\approx"}


def _relation(step, esc, refs: SourceIndex) -> dict:
    ref = refs.ref(step.source)
    return {"lhs": StepPrinter().doprint(step.lhs), "pieces": [math(r) for r in step.rhs],
            "rel": REL_TEX[step.op], "order": None, "meaning": esc(tr(step.meaning)),
            "path": esc(step.path), "ref": ref, "done": True,
            "source": esc(SOURCES[step.source].citation) if ref and step.source in SOURCES else ""}


def _finish(eq: dict) -> dict:
    tag = re.sub(r"\\[a-z]+\{\}|\\", "", eq["meaning"]) + (f" [{eq['ref']}]" if eq["ref"] else "")
    rel = eq.get("rel", "=")
    eq["lines"] = lines_of(eq["pieces"], tag, rel)
    # one display line (Markdown): the pieces without the LaTeX line-break indents
    eq["inline"] = f"{eq['lhs']} {rel} " + " = ".join(" ".join(piece) for piece in eq["pieces"])
    return eq


# what an exercise sheet shows where a number is to be filled in (math mode, LaTeX and MathJax)
BLANK = r"\underline{\qquad\qquad\qquad}"


def _blank(eq: dict) -> dict:
    """An equation of an exercise sheet: the formula and the sizes substituted, the value left
    to fill in. A sum of earlier parts shows only its formula: its numbers are earlier answers."""
    if not eq.get("done") or eq.get("number") is not None:  # "N_head = 0" is the lesson
        return eq
    pieces = eq["pieces"]
    if eq.get("order") == "none":
        pieces = pieces[:1]
    elif len(pieces) > 1:
        pieces = pieces[:-1]
    else:
        pieces = []
    return dict(eq, pieces=pieces + [[BLANK]])


def steps_view(steps, esc, refs: SourceIndex, blanks: bool = False) -> list[dict]:
    """Consecutive steps on one path become one equation: formula = numbers = value (on an
    exercise sheet, ``blanks``, the value is left blank)."""
    out: list[dict] = []
    for step in steps:
        if isinstance(step, (dv.Formula, dv.Compose, dv.Simplify)):
            out.append(_equation(step, esc, refs))
        elif isinstance(step, dv.Relate):
            out.append(_relation(step, esc, refs))
        elif isinstance(step, dv.Substitute):
            out[-1]["pieces"].append(math(step.expr, dict(step.values), out[-1]["order"]))
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
    return [_finish(_blank(eq) if blanks else eq) for eq in out]


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
    return [ngettext("{n} byte", "{n} bytes", n).format(n=grouped(n)), bytes_both(n)]


def derivation_view(d: dv.Derivation, esc: Callable[[str], str], units: Units = Units(),
                    refs: SourceIndex | None = None, yi_text: str = "亿",
                    blanks: bool = False) -> dict:
    """Everything a derivation template shows, prepared; ``blanks``: as an exercise sheet,
    every computed number left blank (the sizes and formulas shown)."""
    refs = refs or SourceIndex()
    sections = []
    for section in d.sections:
        defines = [s for s in section.steps if isinstance(s, dv.Define)]
        results = [s for s in section.steps if isinstance(s, dv.Result)]
        if defines:
            rows = [{"symbol": latex_names().get(s.symbol) or StepPrinter().doprint(s.symbol),
                     "meaning": esc(tr(s.meaning)), "value": _plain_number(s.value),
                     "value_tex": number_tex(s.value)} for s in defines]
            sections.append({"title": esc(tr(section.title)), "kind": "sizes", "rows": rows})
        elif results:
            r = results[0]
            lhs = (latex_names()[SIZES[r.path].symbol] if r.unit == "size" and r.path in SIZES
                   else part_name(r.letter, r.path))
            sections.append({"title": esc(tr(section.title)), "kind": "result",
                             "lhs": lhs, "value_tex": BLANK if blanks else number_tex(r.value),
                             "value": "____" if blanks else grouped(r.value),
                             "words": ([esc("____ " + tr(r.unit))] if blanks else
                                       [esc(w) for w in result_text(r, units, yi_text)]),
                             "meaning": esc(tr(r.meaning)) if r.meaning != r.unit else ""})
        else:
            sections.append({"title": esc(tr(section.title)), "kind": "steps",
                             "equations": steps_view(section.steps, esc, refs, blanks),
                             "note": esc(tr(section.note))})
    return {"title": esc(tr(d.title)), "model": esc(d.model), "quantity": esc(d.quantity),
            "conventions": [esc(tr(c)) for c in d.conventions], "sections": sections,
            "references": refs.entries(esc)}

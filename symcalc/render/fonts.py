"""Fonts for a handout whose text is not plain ASCII: xelatex with fontspec, a main font that
has every Latin, Cyrillic or Greek character of the document, and (for Chinese, Japanese or
Korean characters) xeCJK with a CJK font, chosen among the Debian fonts installed
(fonts-liberation, fonts-dejavu, fonts-noto-cjk, fonts-arphic-*), as fontconfig (``fc-list``) reports them.

A character no candidate font has in every face the document sets text in (regular, bold,
italic: a handout's title and model names are bold) is refused before LaTeX runs, naming
the character.
"""
from __future__ import annotations

import shutil
import subprocess
import unicodedata
from functools import lru_cache

from ..errors import SymcalcError

# preferred first; every one is a Debian package's font
# (Liberation Serif before DejaVu Serif: Times-wide, so Russian lines and equation tags fit)
MAIN_FONTS = ("Latin Modern Roman", "Liberation Serif", "DejaVu Serif", "Noto Serif",
              "FreeSerif", "DejaVu Sans")
CJK_FONTS = ("Noto Serif CJK SC", "Noto Sans CJK SC", "AR PL UMing CN", "AR PL SungtiL GB",
             "AR PL UKai CN", "WenQuanYi Zen Hei", "Droid Sans Fallback")
# babel's names of the languages symcalc writes (hyphenation, the words LaTeX adds itself)
BABEL = {"ru": "russian"}


def is_cjk(ch: str) -> bool:
    """A character xeCJK sets with the CJK font (ideographs, kana, hangul, CJK punctuation)."""
    c = ord(ch)
    return (0x2E80 <= c <= 0x9FFF or 0xA960 <= c <= 0xA97F or 0xAC00 <= c <= 0xD7FF
            or 0xF900 <= c <= 0xFAFF or 0xFE30 <= c <= 0xFE4F or 0xFF00 <= c <= 0xFFEF
            or 0x20000 <= c <= 0x3FFFF)


# the weights fontspec sets text in: regular (book, medium) and bold (semibold, bold);
# a face outside both (ExtraLight, Black) is never used by \setmainfont's defaults
REGULAR_WEIGHTS = range(50, 106)
BOLD_WEIGHTS = range(180, 211)


def _weight(text: str) -> int | None:
    try:
        return int(float(text))
    except ValueError:  # a variable font's range, "[0 210]": it sets every weight
        return None


@lru_cache(maxsize=None)
def faces(family: str) -> tuple[tuple[str, frozenset[int]], ...] | None:
    """(style, code points) of each face of the installed font ``family`` that a document
    sets text in -- regular, bold, italic and bold italic, every optical size and width
    fontconfig lists for them (``fc-list``) -- or None if the family is not installed.
    Handouts set names and titles in bold (``\\textbf``, the title) as well as upright, so a
    character must be in every one of these faces, not only in one."""
    fc = shutil.which("fc-list")
    if not fc:
        return None
    try:
        out = subprocess.run([fc, "--format", "%{weight}|%{style[0]}|%{charset}\n",
                              f":family={family}"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    found, others = [], []
    for line in out.splitlines():
        weight, _, rest = line.partition("|")
        style, _, ranges = rest.partition("|")
        points: set[int] = set()
        for part in ranges.split():
            lo, _, hi = part.partition("-")
            try:
                points.update(range(int(lo, 16), int(hi or lo, 16) + 1))
            except ValueError:
                continue
        if not points:
            continue
        w = _weight(weight)
        used = w is None or w in REGULAR_WEIGHTS or w in BOLD_WEIGHTS
        (found if used else others).append((style or "Regular", frozenset(points)))
    return tuple(found or others) or None


@lru_cache(maxsize=None)
def charset(family: str) -> frozenset[int] | None:
    """The code points every face of ``family`` that text is set in has (:func:`faces`),
    None if the family is not installed."""
    got = faces(family)
    if not got:
        return None
    return frozenset.intersection(*(points for _, points in got))


def lacking(family: str, ch: str) -> list[str]:
    """The styles of ``family``'s faces (of :func:`faces`) that lack ``ch``."""
    return sorted({style for style, points in faces(family) or () if ord(ch) not in points})


def _ignorable(ch: str) -> bool:
    """Spaces and marks TeX sets without a glyph of the font (no-break spaces are glue)."""
    return ch in "\u00a0\u202f\u2009" or unicodedata.category(ch) in ("Zs", "Cc", "Cf")


def _pick(candidates, needed: set[str], what: str) -> str:
    installed = [f for f in candidates if charset(f) is not None]
    if not installed:
        raise SymcalcError("-o", f"no {what} font is installed (tried {', '.join(candidates)}); "
                                 "install fonts-dejavu and fonts-noto-cjk")
    for family in installed:
        if all(ord(ch) in charset(family) for ch in needed):
            return family
    # the character that no installed font has in every face, named (else the best font's
    # first miss); a font that has it in some faces only is named with the faces it lacks
    for ch in sorted(needed):
        if not any(ord(ch) in charset(f) for f in installed):
            partly = [f for f in installed if len(lacking(f, ch)) < len(faces(f))]
            some = (f"; {partly[0]} has it, but not in its {', '.join(lacking(partly[0], ch))} "
                    "face (names and titles are also set in bold)") if partly else ""
            raise SymcalcError("-o", f"character {ch!r} (U+{ord(ch):04X}, "
                                     f"{unicodedata.name(ch, 'unnamed')}) is in no installed "
                                     f"font symcalc can use in every face it sets text in "
                                     f"(tried {', '.join(installed)}){some}")
    best = max(installed, key=lambda f: sum(ord(ch) in charset(f) for ch in needed))
    return best


def choose(text: str, lang: str = "en") -> dict | None:
    """The fonts for a document holding ``text``: None when it is ASCII and English (pdflatex
    with its own fonts), else {"main", "cjk", "babel"} for xelatex."""
    wide = {ch for ch in text if ord(ch) > 127 and not _ignorable(ch)}
    if not wide and lang == "en" and all(ord(ch) < 128 for ch in text):
        return None
    cjk = {ch for ch in wide if is_cjk(ch)}
    main = _pick(MAIN_FONTS, (wide - cjk) | set("abcxyz"), "main")
    return {"main": main, "cjk": _pick(CJK_FONTS, cjk, "CJK") if cjk else "",
            "babel": BABEL.get(lang, "")}

"""Fonts for a handout whose text is not plain ASCII: xelatex with fontspec, a main font that
has every Latin, Cyrillic or Greek character of the document, and (for Chinese, Japanese or
Korean characters) xeCJK with a CJK font, chosen among the Debian fonts installed
(fonts-liberation, fonts-dejavu, fonts-noto-cjk, fonts-arphic-*), as fontconfig (``fc-list``) reports them.

A character no candidate font has is refused before LaTeX runs, naming the character.
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


@lru_cache(maxsize=None)
def charset(family: str) -> frozenset[int] | None:
    """The code points the installed font ``family`` has (fontconfig), None if not installed."""
    fc = shutil.which("fc-list")
    if not fc:
        return None
    try:
        out = subprocess.run([fc, "--format", "%{charset}\n", f":family={family}"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    points: set[int] = set()
    for line in out.splitlines():
        for part in line.split():
            lo, _, hi = part.partition("-")
            try:
                points.update(range(int(lo, 16), int(hi or lo, 16) + 1))
            except ValueError:
                continue
    return frozenset(points) or None


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
    # the character that no installed font has, named (else the best font's first miss)
    for ch in sorted(needed):
        if not any(ord(ch) in charset(f) for f in installed):
            raise SymcalcError("-o", f"character {ch!r} (U+{ord(ch):04X}, "
                                     f"{unicodedata.name(ch, 'unnamed')}) is in no installed "
                                     f"font symcalc can use (tried {', '.join(installed)})")
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

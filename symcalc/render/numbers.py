"""Number formatting shared by every renderer (no sympy, no jinja2).

English keeps symcalc's own formats (7,241,732,096; 7.24 B). Russian and Chinese take their
digits, separators and count words from CLDR through Babel: Russian groups with a no-break
space and writes a decimal comma (7 241 732 096; 7,242 млрд), Chinese counts in 万 and 亿
(0.849亿). Bytes are always named GB (10^9) and GiB (2^30).
"""
from __future__ import annotations

import math
import re
from decimal import Decimal, localcontext
from functools import lru_cache

from ..i18n import UNSPLIT_FOUR, current  # 4096, not 4 096, in Russian

GB, GiB = 10**9, 2**30
SI = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
# Chinese counts in the largest unit the number reaches, to four significant digits
# (6,710亿, 8,493万, 1.244亿); --unit yi keeps the estimator's tenths of 亿 (0.849亿)
SIGNIFICANT = {"zh": 4}


def _babel_locale(lang: str):
    from babel import Locale

    return Locale.parse(lang)


@lru_cache(maxsize=None)
def symbols(lang: str) -> tuple[str, str]:
    """CLDR's (group, decimal) separators of ``lang``."""
    from babel.numbers import get_decimal_symbol, get_group_symbol

    return get_group_symbol(lang), get_decimal_symbol(lang)


# Numbers of any size render exactly. A quotient (n / 10^9 for GB, n / 10^12 for "T") is a
# float while its whole part is exact in one (below 2^53), else an exact Decimal: a float
# overflows past 1.8e308 and prints noise past 2^53 (10^40 / 10^12 as 9999999999999999583
# ...). Integers of any length are grouped through Decimal (str() refuses over 4,300
# digits), and Babel formats inside a decimal context wide enough for every digit (its
# default 28 digits raised InvalidOperation from 10^28 up in Russian and Chinese).
FLOAT_EXACT = 2**53


def ratio(n: int, div: int) -> float | Decimal:
    """``n / div`` for display: a float while that is exact to the unit, else a Decimal
    correct to ten places after the point."""
    n = int(n)
    if abs(n) < FLOAT_EXACT * div:
        return n / div
    with localcontext() as ctx:
        ctx.prec = int(abs(n).bit_length() * 0.30103) + 12
        return Decimal(n) / Decimal(div)


def _commas(n: int) -> str:
    """An integer grouped by threes with commas, of any length."""
    n = int(n)
    return f"{n:,}" if n.bit_length() < 13_000 else format(Decimal(n), ",")


def _babel(x, lang: str, pattern: str | None = None) -> str:
    """Babel's format_decimal of ``x`` (an int, a float or a Decimal) with every digit."""
    from babel.numbers import format_decimal

    if isinstance(x, int) and x.bit_length() >= 13_000:
        x = Decimal(x)  # Babel takes str() of an int, which refuses over 4,300 digits
    if isinstance(x, Decimal):
        size = x.adjusted() if x.is_finite() and x else 0
    elif isinstance(x, int):
        size = int(abs(x).bit_length() * 0.30103)
    else:  # a float: at most 309 digits before the point
        size = int(math.log10(abs(x))) if x and math.isfinite(x) else 0
    with localcontext() as ctx:
        ctx.prec = max(ctx.prec, size + 40)
        return format_decimal(x, format=pattern, locale=lang)


def decimal(x: float | Decimal, digits: int, lang: str | None = None) -> str:
    """``x`` with ``digits`` decimals, grouped, in ``lang``'s format (14,48 in Russian)."""
    lang = lang or current()
    if lang == "en":
        return f"{x:,.{digits}f}"
    whole = "0" if lang in UNSPLIT_FOUR and abs(x) < 10**4 else "#,##0"
    return _babel(x, lang, whole + ("." + "0" * digits if digits else ""))


def grouped(n: int, sep: str = ",") -> str:
    """Exact integer with thousands separators: 7,241,732,096 (Russian 7 241 732 096 with
    no-break spaces, CLDR's grouping)."""
    lang = current()
    if lang == "en" or sep != ",":
        return _commas(n).replace(",", sep)
    if lang in UNSPLIT_FOUR and abs(int(n)) < 10**4:  # 4096, as formulas write it
        return str(int(n))
    return _babel(int(n), lang)


def math_grouped(n: int) -> str:
    """An integer inside TeX math: 7{,}241{,}732{,}096; Russian 7\\,241\\,732\\,096."""
    group, _ = symbols(current()) if current() != "en" else (",", ".")
    text = _commas(n)
    return text.replace(",", "{,}" if group == "," else "\\,")


def math_decimal(x: float | Decimal, digits: int = 1) -> str:
    """A decimal inside TeX math, in the current language's separators."""
    lang = current()
    group, point = symbols(lang) if lang != "en" else (",", ".")
    text = f"{x:,.{digits}f}".replace(",", "\0").replace(".", "\1")
    return (text.replace("\0", "{,}" if group == "," else "\\,")
            .replace("\1", "{,}" if point == "," else "."))


@lru_cache(maxsize=None)
def count_words(lang: str) -> tuple[tuple[int, str], ...]:
    """CLDR's words for large counts in ``lang``, largest first: Russian (10^12, ' трлн') ...
    (10^3, ' тыс.'); Chinese (10^12, '万亿'), (10^8, '亿'), (10^4, '万')."""
    formats = _babel_locale(lang).compact_decimal_formats["short"]
    other = formats.get("other") or next(iter(formats.values()))
    out = []
    for power, pattern in other.items():
        text = pattern.pattern if hasattr(pattern, "pattern") else str(pattern)
        m = re.fullmatch(r"0([^0].*)", text)  # one digit before the word: the unit itself
        if m:
            out.append((int(power), m[1].replace("'", "")))
    return tuple(sorted(out, reverse=True))


def count_unit(n: int, power: int, digits: int = 3, lang: str | None = None) -> str:
    """``n`` in units of ``power`` with CLDR's word: 7,242 млрд, 0.849亿."""
    lang = lang or current()
    word = dict(count_words(lang)).get(power)
    if word is None:
        return decimal(ratio(n, power), digits, lang)
    return decimal(ratio(n, power), digits, lang) + word


def short(n: int) -> str:
    """7,241,732,096 -> '7.24 B'; 124,439,808 -> '124.44 M' (Russian '7,242 млрд', Chinese
    '72.417亿')."""
    n = int(n)
    lang = current()
    if lang != "en":
        for power, _word in count_words(lang):
            if abs(n) >= power:
                if lang in SIGNIFICANT:  # digits of the whole part, of any size (no str())
                    q = abs(n) // power
                    whole = int(q.bit_length() * 0.30103) + 1
                    whole = max(1, whole - (q < 10 ** (whole - 1)))
                    return count_unit(n, power, max(0, SIGNIFICANT[lang] - whole))
                return count_unit(n, power)
        return grouped(n)
    for div, unit in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K")):
        if abs(n) >= div:
            return f"{ratio(n, div):.2f} {unit}"
    return str(n)


def _space() -> str:
    """Between a number and its unit: a no-break space outside English."""
    return " " if current() == "en" else "\u00a0"


def si(n: int, prefix: str | None = None, unit: str = "FLOPs") -> str:
    """In an SI prefix (auto when None): 1.83 TFLOPs."""
    n = int(n)
    if prefix is None:
        prefix = next((p for p in ("E", "P", "T", "G", "M", "K") if abs(n) >= SI[p]), "")
    return f"{decimal(ratio(n, SI[prefix]), 2)}{_space()}{prefix}{unit}"


def yi(n: int) -> str:
    """In units of 10^8 (亿), as the estimator in the seeds shows: 0.849 亿 (Chinese 0.849亿)."""
    if current() == "zh":
        return count_unit(n, 10**8)
    return f"{decimal(ratio(n, 10**8), 3)}{_space()}亿"


def bytes_both(n: int) -> str:
    """Bytes in GB (10^9) and GiB (2^30), always both named: 14.48 GB / 13.49 GiB (Russian
    14,48 ГБ / 13,49 ГиБ)."""
    from ..i18n import _

    n = int(n)
    return (_("{x} GB", x=decimal(ratio(n, GB), 2)) + " / "
            + _("{x} GiB", x=decimal(ratio(n, GiB), 2)))


PARAM_UNITS = {"exact": None, "K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12, "yi": 10**8}


def params_in(n: int, unit: str = "auto") -> str:
    """A count in the unit asked for: 'auto' (short), K, M, B, T, or yi (10^8, 亿);
    'exact' gives the grouped integer. Russian names K..T with CLDR's тыс./млн/млрд/трлн."""
    if unit == "auto":
        return short(n)
    if unit == "exact":
        return grouped(n)
    if unit == "yi":
        return yi(n)
    lang = current()
    if lang != "en" and PARAM_UNITS[unit] in dict(count_words(lang)):
        return count_unit(n, PARAM_UNITS[unit])
    return f"{decimal(ratio(n, PARAM_UNITS[unit]), 3)}{_space()}{unit}"


def flops_in(n: int, prefix: str = "auto") -> str:
    """FLOPs with the SI prefix asked for (auto picks the largest that keeps a leading digit)."""
    return si(n, None if prefix == "auto" else prefix)


def percent(x: float, digits: int = 1) -> str:
    """A share in per cent: 12.3% (Russian 12,3 %, CLDR's pattern)."""
    lang = current()
    if lang == "en":
        return f"{x:.{digits}f}%"
    from babel.numbers import format_percent

    pattern = _babel_locale(lang).percent_formats[None].pattern  # Russian '#,##0\xa0%'
    pattern = re.sub(r"0(?=[^0]*$)", "0." + "0" * digits, pattern, count=1) if digits else pattern
    return format_percent(x / 100, format=pattern, locale=lang)

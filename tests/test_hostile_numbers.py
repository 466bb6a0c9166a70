"""Issue 25 item 5: numbers of any size render, in every language, without a traceback.

Babel's default decimal context (28 digits) raised InvalidOperation for numbers from 10^28
up in Russian and Chinese (report, derive, handout); a short form (n / 10^12 as a float)
overflowed past 1.8e308 and printed float noise past 2^53; an integer over 4,300 digits
could not be turned into a string at all. Each expected value here is computed another way
(Fraction, integer division), never by the renderer's own code."""
from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest

from symcalc.cli import main
from symcalc.i18n import using
from symcalc.render import numbers as N

HUGE = [10**27, 10**28, 7 * 10**28 + 123, 10**40, 2**200, 10**300 + 1, 10**400, 10**5000 + 7]
GROUP = {"en": ",", "ru": "\u00a0", "zh": ","}
POINT = {"en": ".", "ru": ",", "zh": "."}


def commas(n: int, sep: str) -> str:
    """Digits grouped by threes, built from the digits one by one (no str() of a huge int)."""
    digits = []
    while n:
        n, d = divmod(n, 10)
        digits.append("0123456789"[d])
    text = "".join(reversed(digits)) or "0"
    head = len(text) % 3 or 3
    return sep.join([text[:head]] + [text[i:i + 3] for i in range(head, len(text), 3)])


def rounded(q: Fraction, places: int, lang: str) -> str:
    """``q`` rounded half to even at ``places``, grouped, in ``lang``'s separators."""
    scaled = round(q * 10**places)
    whole, part = divmod(scaled, 10**places)
    tail = f"{POINT[lang]}{part:0{places}d}" if places else ""
    return commas(whole, GROUP[lang]) + tail


@pytest.mark.parametrize("lang", ["en", "ru", "zh"])
@pytest.mark.parametrize("n", HUGE, ids=lambda n: f"bits{n.bit_length()}")
def test_renderers_take_numbers_of_any_size(lang, n):
    with using(lang):
        assert N.grouped(n) == commas(n, GROUP[lang])
        both = N.bytes_both(n)
        sp = " " if lang == "en" else "\u00a0"
        gb, gib = ("ГБ", "ГиБ") if lang == "ru" else ("GB", "GiB")  # Russian names the units
        assert both == (f"{rounded(Fraction(n, 10**9), 2, lang)}{sp}{gb} / "
                        f"{rounded(Fraction(n, 2**30), 2, lang)}{sp}{gib}")
        assert N.si(n) == f"{rounded(Fraction(n, 10**18), 2, lang)}{sp}EFLOPs"
        assert N.params_in(n, "exact") == commas(n, GROUP[lang])
        for unit in ("K", "M", "B", "T", "yi", "auto"):
            assert re.sub(r"\D", "", N.params_in(n, unit))  # digits, no traceback
        if lang == "en":
            assert N.short(n) == f"{rounded(Fraction(n, 10**12), 2, lang).replace(',', '')} T"
            assert N.math_grouped(n) == commas(n, "{,}")


def test_short_forms_print_no_float_noise():
    """10^40 / 10^12 as a float printed 9999999999999999583119736832.00 T."""
    assert N.short(10**40) == "1" + "0" * 28 + ".00 T"
    assert N.bytes_both(10**40).startswith("10" + ",000" * 10 + ".00 GB")
    with using("ru"):
        assert N.short(10**40) == commas(10**28, "\u00a0") + ",000\u00a0трлн"
    with using("zh"):  # a natural magnitude: 10^40 is 10^28 万亿, every digit
        assert N.short(10**40) == commas(10**28, ",") + "万亿"


def test_small_numbers_render_as_before():
    """Below 2^53 the float path stays: the formats every golden file holds."""
    assert N.short(7241732096) == "7.24 B" and N.short(124439808) == "124.44 M"
    assert N.bytes_both(14483464192) == "14.48 GB / 13.49 GiB"
    with using("ru"):
        assert N.short(7241732096) == "7,242\u00a0млрд"
        assert N.grouped(7241732096) == "7\u00a0241\u00a0732\u00a0096"
    with using("zh"):  # natural magnitudes (issue 24): 8,490万, not 0.849亿
        assert N.short(84_900_000) == "8,490万"


def test_sentences_translated_with_huge_numbers():
    """tr() re-formats a number an English sentence holds; from 10^28 up Babel failed."""
    from symcalc.i18n import tr

    n = 10**40 + 1
    english = f"context {commas(n, ',')}"
    with using("ru"):
        assert tr(english) == f"контекст {commas(n, chr(0xa0))}"


M = str(10**15)
BIG = ["--set", "n_h=1", "--set", f"V={M}", "--set", f"d={M}", "--set", f"d_ff={M}",
       "--batch", M, "--seq-len", M]


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_report_in_russian_and_chinese_at_the_size_limit(capsys, lang):
    """`report --lang ru|zh` with every number from 10^28 up: exit 0, each number exact."""
    code, out, err = _run(capsys, "report", "gpt2", *BIG, "--json")
    assert code == 0, err
    rep = json.loads(out)
    code, out, err = _run(capsys, "report", "gpt2", *BIG, "--lang", lang)
    assert code == 0 and err == "", err
    assert rep["flops"]["forward_matmul"] > 10**28
    for n in (rep["flops"]["forward_matmul"], rep["memory"]["training_peak_bytes"]):
        assert commas(n, GROUP[lang]) in out


@pytest.mark.parametrize("lang", ["ru", "zh"])
@pytest.mark.parametrize("argv", [
    ["derive", "gpt2", "--quantity", "flops.forward_matmul"],
    ["derive", "gpt2", "--quantity", "memory.kv_cache_bytes", "--format", "tex"],
    ["derive", "gpt2", "--quantity", "memory.activations_bytes", "--unit", "B"],
    ["handout", "gpt2", "-o", "{tmp}/h.md"],
    ["handout", "gpt2", "--sections", "budget,compute", "-o", "{tmp}/h.tex"],
])
def test_documents_in_russian_and_chinese_at_the_size_limit(capsys, tmp_path, lang, argv):
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = _run(capsys, *args, *BIG, "--lang", lang)
    assert code == 0 and err == "", err
    text = out or next(tmp_path.iterdir()).read_text(encoding="utf-8")
    assert re.search(r"\d{3}([\u00a0,]|\\,|\{,\})\d{3}([\u00a0,]|\\,|\{,\})\d{3}", text)

"""Exercise sheets students cannot copy (issue 24): every answer is a numbered blank, the key
fills each one, and no answer appears anywhere on the sheet, in every language and format."""
from __future__ import annotations

import re

import pytest

from symcalc import i18n
from symcalc.derivations.handout_data import handout
from symcalc.inputs import presets
from symcalc.render.handout import exercise_documents

NBSP = "\u00a0"
# the sheets: a tied head (why does it add 0?), GQA (what does it save?), MLA and MoE (how many
# times fewer values?), a hybrid (the recurrent state's share; a negative 6 N D gap)
SHEETS = {"tied-head": ["gpt2"], "gqa": ["mistral-7b"], "mla": ["deepseek-v3"],
          "hybrid": ["qwen3-next-80b-a3b"]}
BLANK = {
    "md": re.compile(r"\\underline\{\\;\((\d+)\)\\qquad\\qquad\}|\\_\\_\\_\\_ \((\d+)\)"),
    "tex": re.compile(r"\\underline\{\\;\((\d+)\)\\qquad\\qquad\}"
                      r"|\\underline\{\\hspace\{1\.6cm\}\}\\,\((\d+)\)"),
}
KEY = {"md": re.compile(r"^\| \((\d+)\) \| (.*) \|$", re.M),
       "tex": re.compile(r"^\\item\[\((\d+)\)\] (.*)$", re.M)}


@pytest.fixture(scope="module")
def handouts():
    return {name: handout([presets.load(m).spec for m in models])
            for name, models in SHEETS.items()}


def blanks_of(sheet: str, fmt: str) -> list[int]:
    return [int(a or b) for a, b in BLANK[fmt].findall(sheet)]


def answer_forms(answer: str) -> list[str]:
    """How a numeric answer of three or more digits could be written on a sheet (plain,
    inside math, with the language's group separator); [] for a short number."""
    plain = answer.strip().strip("$").replace("{,}", ",").replace("\\,", NBSP).replace("\\%", "%")
    if not re.fullmatch(r"-?[\d,. \u00a0]+(\s?%)?", plain) or len(re.sub(r"\D", "", plain)) < 3:
        return []
    math = plain.replace(",", "{,}").replace(NBSP, "\\,")
    return sorted({plain, math, plain.replace("%", "\\%")})


def test_answer_forms():
    assert answer_forms("$124{,}439{,}808$") == ["124,439,808", "124{,}439{,}808"]
    assert answer_forms("31.6\\%") == ["31.6%", "31.6\\%"]
    assert answer_forms("$1536$") == ["1536"] and answer_forms("4") == []


# each sheet in each language, in Markdown or LaTeX taken in turn: every sheet and every
# language meets both formats (all 24 cases took 8 s of the torch-free lane)
SHEET_CASES = [(name, lang, ("md", "tex")[i % 2])
               for i, (name, lang) in enumerate((n, l) for n in sorted(SHEETS)
                                                for l in ("en", "ru", "zh"))]


def test_sheet_cases_meet_every_sheet_language_and_format():
    for i in (0, 1):  # sheet, language
        assert {(c[i], c[2]) for c in SHEET_CASES} == \
            {(c[i], f) for c in SHEET_CASES for f in ("md", "tex")}


@pytest.mark.parametrize("name,lang,fmt", SHEET_CASES)
def test_sheet_blanks_filled_from_the_key_and_absent_from_the_sheet(handouts, name, lang, fmt):
    i18n.missing.pop(lang, None)
    sheet, key = exercise_documents(handouts[name], fmt == "tex", lang=lang)
    numbers = blanks_of(sheet, fmt)
    # numbered down the page, each once, and the key answers exactly those
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) > 20
    answers = {int(n): a for n, a in KEY[fmt].findall(key)}
    assert sorted(answers) == numbers
    # the key fills every blank; each numeric answer is a figure of the worked handout after it
    worked = key.split(answers[len(answers)], 1)[1]
    filled = BLANK[fmt].sub(lambda m: answers[int(m[1] or m[2])], sheet)
    assert not BLANK[fmt].search(filled)
    checked = 0
    for n, answer in answers.items():
        forms = answer_forms(answer)
        if forms:
            assert any(f in worked for f in forms), (n, answer)
            # ... and no answer appears anywhere on the sheet
            assert not any(f in sheet for f in forms), (name, lang, fmt, n, answer)
            checked += 1
        elif not answer.strip("$").strip().isdigit():  # a formula or a reason
            assert answer.strip("$") not in sheet, (n, answer)
    assert checked > 20
    # formulas and reasons are asked too, not only arithmetic
    kinds = key.count("\\cdot") + key.count("\\frac")
    assert kinds and any(len(a) > 20 and not a.startswith("$") for a in answers.values())
    # labelled, and in the sheet's language throughout
    assert not i18n.missing.get(lang), sorted(i18n.missing[lang])[:5]
    if lang != "en":
        assert not re.search(r"\((\d+)\)\s*\**\s*(bytes|parameters)\b", sheet)
        assert not re.search(r"\b(Why|How|What|Answer key)\b", sheet + key)
    else:
        assert "Answer key" in key and "Exercise sheet" in sheet


def test_the_lessons_are_asked(handouts):
    """The tied head's 0, GQA's saving, MLA's latent cache, a hybrid's state and a negative
    6 N D gap are questions on the sheet, their answers in the key."""
    asked = {"tied-head": ["Why is this 0?"], "gqa": ["How much does grouped-query attention save"],
             "mla": ["How many times fewer values"],
             "hybrid": ["What share of the decode memory", "Why is the exact count below 6 N D"]}
    answered = {"tied-head": ["it adds 0 parameters"], "gqa": ["4x smaller"],
                "mla": ["40,960", "71x fewer"], "hybrid": ["77,856,768 bytes, 61%"]}
    for name, questions in asked.items():
        sheet, key = exercise_documents(handouts[name], False)
        for q in questions:
            assert q in sheet, (name, q)
        for a in answered[name]:
            assert a in key and a not in sheet, (name, a)

"""Documents in Russian and Chinese (--lang ru|zh): every word from the message catalogs,
numbers in CLDR's formats, handouts set by xelatex with the fonts their text needs."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from jinja2.ext import babel_extract

from golden_files import check_golden
from symcalc import i18n
from symcalc.algebra.options import Options
from symcalc.derivations.handout_data import handout
from symcalc.inputs.resolver import resolve
from symcalc.render.handout import handout_latex, handout_markdown
from symcalc.render import numbers
from symcalc.render.templates import TEX_SYNTAX, template_dir

REPO = Path(__file__).resolve().parents[1]
NBSP = "\u00a0"
FIELD = re.compile(r"\{([a-z_]+)\}")


def template_messages() -> set[str]:
    """Every message id the package's templates pass to _() / gettext / ngettext."""
    found = set()
    for path in sorted(template_dir().glob("*.j2")):
        options = {k: v for k, v in TEX_SYNTAX.items() if v is not None} \
            if path.name.endswith(".tex.j2") else {}
        options.update(trim_blocks="true", lstrip_blocks="true")
        with path.open("rb") as fh:
            for _line, _func, message, _comments in babel_extract(
                    fh, ("_", "gettext", "ngettext"), [], options):
                first = message[0] if isinstance(message, tuple) else message
                if first:
                    found.add(first)
    return found


def code_messages() -> set[str]:
    """Message ids the renderers pass to _() / ngettext."""
    from babel.messages.extract import extract_python

    found = set()
    for path in sorted((REPO / "symcalc" / "render").glob("*.py")):
        with path.open("rb") as fh:
            for _line, _func, message, _c in extract_python(fh, {"_": None, "ngettext": (1, 2)},
                                                             [], {}):
                first = message[0] if isinstance(message, tuple) else message
                if first:
                    found.add(first)
    return found


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_every_template_and_renderer_message_is_translated(lang):
    catalog = i18n.translations(lang)._catalog
    singular = {k[0] if isinstance(k, tuple) else k for k, v in catalog.items() if v}
    ids = template_messages() | code_messages()
    assert len(ids) > 60 and "The models" in ids and "{n} parameter" in ids
    untranslated = sorted(m for m in ids if m not in singular)
    assert not untranslated, f"no {lang} translation for {untranslated[:5]}"


def test_a_template_string_without_translation_is_found(tmp_path, monkeypatch):
    """The check above reads the templates themselves: a new string is caught."""
    folder = tmp_path / "templates"
    folder.mkdir()
    for path in template_dir().glob("*.j2"):
        (folder / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "handout.md.j2").write_text("{{ _('A heading nobody translated') }}\n",
                                          encoding="utf-8")
    monkeypatch.setitem(globals(), "template_dir", lambda: folder)
    assert "A heading nobody translated" in template_messages()
    with pytest.raises(AssertionError, match="A heading nobody translated"):
        test_every_template_and_renderer_message_is_translated("ru")


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_catalog_fields_match(lang):
    """A translation keeps its id's fields ({model}, {n}) and only those."""
    for msgid, text in i18n.translations(lang)._catalog.items():
        mid = msgid[0] if isinstance(msgid, tuple) else msgid
        if not mid:
            continue
        assert set(FIELD.findall(mid)) == set(FIELD.findall(text)), (lang, mid, text)


def test_numbers_follow_cldr():
    with i18n.using("ru"):
        assert numbers.grouped(7241732096) == f"7{NBSP}241{NBSP}732{NBSP}096"
        assert numbers.short(7241732096) == f"7,242{NBSP}млрд"
        assert numbers.params_in(84934656, "M") == f"84,935{NBSP}млн"
        assert numbers.short(907776) == f"907,776{NBSP}тыс."
        assert numbers.bytes_both(14483464192) == f"14,48{NBSP}GB / 13,49{NBSP}GiB"
    with i18n.using("zh"):
        assert numbers.grouped(7241732096) == "7,241,732,096"
        assert numbers.yi(84934656) == "0.849亿" and numbers.short(84934656) == "0.849亿"
        assert numbers.short(38400000) == "0.384亿" and numbers.short(90000) == "9.000万"
        assert numbers.bytes_both(14483464192) == f"14.48{NBSP}GB / 13.49{NBSP}GiB"
    assert numbers.short(7241732096) == "7.24 B"  # English unchanged
    with pytest.raises(i18n.SymcalcError, match="--lang: 'fr' is not a language"):
        i18n.check_lang("fr")


def _handout(names):
    return handout([resolve(n, []) for n in names], None, Options())


@pytest.mark.parametrize("lang,model", [("ru", "mistral-7b"), ("zh", "seed-estimator-12x768")])
def test_handout_markdown_golden_and_fully_translated(lang, model):
    i18n.missing.pop(lang, None)
    text = handout_markdown(_handout([model]), lang=lang)
    assert not i18n.missing.get(lang), sorted(i18n.missing[lang])[:5]
    check_golden(f"handout-{model}.{lang}.md", text)
    if lang == "ru":
        assert f"**7{NBSP}241{NBSP}732{NBSP}096 параметров = 7,242{NBSP}млрд**" in text
        assert "## Где находятся параметры" in text and "скрытая размерность" in text
    else:
        assert "0.849亿" in text and "## 参数分布" in text and "注意力头" in text


def test_derivations_of_the_seeds_are_fully_translated(cli):
    for lang, args in (("ru", ["seed-decoder-calculator-default", "--unit", "B"]),
                       ("ru", ["seed-decoder-calculator-default", "--quantity",
                               "memory.weights_bytes", "--dtype", "bf16"]),
                       ("zh", ["seed-estimator-12x768", "--quantity", "params.non_embedding",
                               "--unit", "yi"]),
                       ("zh", ["seed-estimator-12x768", "--against", "gpt2", "--set", "V=50000"])):
        res = cli("derive", *args, "--lang", lang)
        assert res.returncode == 0, res.stderr
        assert not re.search(r"\b(Sizes|Result|References|parameters|bytes)\b", res.stdout), \
            (lang, args, res.stdout[:400])


def test_report_table_in_russian(cli):
    res = cli("report", "mistral-7b", "--lang", "ru")
    assert res.returncode == 0, res.stderr
    assert f"всего               7{NBSP}241{NBSP}732{NBSP}096  (7,242{NBSP}млрд)" in res.stdout
    assert f"14,48{NBSP}GB / 13,49{NBSP}GiB" in res.stdout


needs_xetex = pytest.mark.skipif(
    not (shutil.which("xelatex") and shutil.which("pdftotext") and shutil.which("fc-list")),
    reason="xelatex, pdftotext or fontconfig missing")


@needs_xetex
@pytest.mark.parametrize("lang,model,totals", [
    ("ru", "mistral-7b", [f"7{NBSP}241{NBSP}732{NBSP}096", f"7,242{NBSP}млрд", "Модели"]),
    ("zh", "seed-estimator-12x768", ["0.849亿", "1.233亿", "参数分布"])])
def test_localized_handout_compiles(cli, tmp_path, lang, model, totals):
    pdf = tmp_path / f"{lang}.pdf"
    res = cli("handout", model, "--lang", lang, "-o", pdf)
    assert res.returncode == 0, res.stderr  # a missing glyph would be an error here
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    for figure in totals:
        assert figure in text, (figure, text[:500])
    assert "[U+" not in text


@needs_xetex
def test_a_character_no_font_has_is_one_clear_error(cli, tmp_path):
    res = cli("handout", "gpt2", "--title", "x \U000F0001", "-o", tmp_path / "x.pdf")
    assert res.returncode == 2 and "U+F0001" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_cjk_title_in_english_tex_uses_xelatex_preamble(cli, tmp_path):
    out = tmp_path / "t.tex"
    res = cli("handout", "gpt2", "--sections", "params", "--title", "参数 & \\input{x}", "-o", out)
    assert res.returncode == 0, res.stderr
    tex = out.read_text(encoding="utf-8")
    assert "\\usepackage{xeCJK}" in tex and "参数 \\& \\textbackslash{}input\\{x\\}" in tex

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


@pytest.mark.skipif(not shutil.which("msgfmt"), reason="msgfmt (GNU gettext) is not installed")
@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_catalog_passes_msgfmt_check(lang):
    """GNU gettext's own check (msgfmt -c) accepts the catalog, so translators' tools can
    compile it: no message flagged python-format whose translation is not one."""
    po = Path(i18n.__file__).parent / "locale" / lang / "LC_MESSAGES" / "symcalc.po"
    done = subprocess.run(["msgfmt", "-c", "-o", "/dev/null", str(po)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_numbers_follow_cldr():
    with i18n.using("ru"):
        assert numbers.grouped(7241732096) == f"7{NBSP}241{NBSP}732{NBSP}096"
        assert numbers.short(7241732096) == f"7,242{NBSP}млрд"
        assert numbers.params_in(84934656, "M") == f"84,935{NBSP}млн"
        assert numbers.short(907776) == f"907,776{NBSP}тыс."
        # bytes named in Russian; a four-digit number whole, in tables as in formulas
        assert numbers.bytes_both(14483464192) == f"14,48{NBSP}ГБ / 13,49{NBSP}ГиБ"
        assert numbers.grouped(4096) == "4096" and numbers.grouped(14336) == f"14{NBSP}336"
    with i18n.using("zh"):
        assert numbers.grouped(7241732096) == "7,241,732,096"
        # natural magnitudes: the largest unit reached, four significant digits; --unit yi
        # keeps the estimator's tenths of 亿
        assert numbers.yi(84934656) == "0.849亿" and numbers.short(84934656) == "8,493万"
        assert numbers.short(671026404352) == "6,710亿" and numbers.short(124439808) == "1.244亿"
        assert numbers.short(38400000) == "3,840万" and numbers.short(90000) == "9.000万"
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
        assert "8,493万" in text and "## 参数分布" in text and "注意力头" in text


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
    assert f"14,48{NBSP}ГБ / 13,49{NBSP}ГиБ" in res.stdout


needs_xetex = pytest.mark.skipif(
    not (shutil.which("xelatex") and shutil.which("pdftotext") and shutil.which("fc-list")),
    reason="xelatex, pdftotext or fontconfig missing")


@needs_xetex
@pytest.mark.parametrize("lang,model,totals", [
    ("ru", "mistral-7b", [f"7{NBSP}241{NBSP}732{NBSP}096", f"7,242{NBSP}млрд", "Модели"]),
    ("zh", "seed-estimator-12x768", ["8,493万", "1.233亿", "参数分布"])])
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


def data_messages() -> dict[str, list[str]]:
    """The English texts of the data modules a document can show: component meanings, layer
    groups, hybrid layer classes, quantity titles (and the titles built from them), symbol
    meanings of the size tables, handout sections and the parts of a multimodal checkpoint."""
    from symcalc.algebra import vision
    from symcalc.algebra.symbols import ALL
    from symcalc.derivations import derive
    from symcalc.derivations.handout_data import SECTION_MEANINGS

    return {
        "MEANINGS": list(derive.MEANINGS.values()),
        "GROUPS": list(derive.GROUPS.values()),
        "HYBRID_CLASSES": [title for _key, title in derive.HYBRID_CLASSES.values()],
        "QUANTITY_TITLES": list(derive.QUANTITY_TITLES.values())
        + [derive.title_of(q, resolve("gpt2", [])) for q in derive.QUANTITY_TITLES],
        "symbols": [info.meaning for info in ALL.values()],
        "sections": list(SECTION_MEANINGS.values()),
        "vision": [make().description for make in (*vision.TOWERS.values(),
                                                   *vision.PROJECTORS.values())],
    }


def untranslated(texts, lang: str) -> list[str]:
    out = []
    with i18n.using(lang):
        for text in texts:
            i18n.missing.pop(lang, None)
            i18n.tr(text)
            if i18n.missing.get(lang):
                out.append(text)
    return out


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_every_data_table_entry_is_translated(lang):
    tables = data_messages()
    assert len(tables["MEANINGS"]) > 60 and len(tables["symbols"]) > 80
    for name, texts in tables.items():
        left = untranslated(texts, lang)
        assert not left, f"{name}: no {lang} translation for {left[:5]}"
    with i18n.using(lang):
        assert i18n.tr("Mamba-2 heads") != "Mamba-2 heads"
        assert i18n.tr("Training FLOPs of gpt2") in ("FLOPs обучения gpt2", "gpt2 的训练 FLOPs")


def test_a_new_meaning_without_translation_is_found(monkeypatch):
    from symcalc.derivations import derive

    monkeypatch.setitem(derive.MEANINGS, "ssm/new_thing", "a component nobody translated")
    with pytest.raises(AssertionError, match="a component nobody translated"):
        test_every_data_table_entry_is_translated("ru")


def convention_notes() -> set[str]:
    """Every convention note of the report table over the presets and the options that
    change the notes."""
    from symcalc.fast.quick import conventions

    opts = [Options(causal=c, macs=m, nonmatmul=n, recompute=r) for c in ("full", "half", "exact")
            for m in (False, True) for n in (False, True) for r in ("none", "full", "selective")]
    opts += [Options(activations=a, tp=tp, sequence_parallel=sp) for a in ("paper", "eager", "sdpa")
             for tp in (1, 2) for sp in (False, True)]
    opts += [Options(mla_cache="expanded")]
    opts += [Options(dtype=d) for d in ("int4-g128-zp", "int8-g64", "fp8-tensor", "fp8-block128",
                                        "mxfp4", "nvfp4")]
    notes = set()
    for path in sorted((REPO / "symcalc" / "inputs" / "presets").glob("*.toml")):
        spec = resolve(path.stem, [])
        for o in opts:
            for group in conventions(spec, o).values():
                notes.update(group.values())
    return notes


# words a translated note may keep: option values, names, units and formula letters
KEPT = {"none", "full", "selective", "paper", "eager", "sdpa", "expanded", "latent", "FLOPs",
        "MACs", "float", "Korthikanti", "dropout", "adam-mixed", "ZeRO", "transformers", "torch",
        "FlopCounterMode", "softmax", "log-sum-exp", "mamba", "conv", "rope", "nope", "attn",
        "top-k", "prefill", "matmul", "shared",  # "shared": the symbol L_kv_shared
        "mxfp", "nvfp", "MXFP", "NVFP", "GPT-OSS", "tensor", "block"}  # the last: --dtype names


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_every_convention_note_is_translated(lang):
    """The bracketed notes of `report` (symcalc.fast.quick.conventions): each one has an entry
    or matches a pattern, and no English field is carried through untranslated."""
    notes = convention_notes()
    assert len(notes) > 40
    assert not untranslated(notes, lang), untranslated(notes, lang)[:3]
    with i18n.using(lang):
        for note in notes:
            text = i18n.tr(note)
            left = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{2,}[A-Za-z]", re.sub(r"--[a-z-]+", "", text))
                    if w not in KEPT]
            assert not left, (lang, note, text, left)


def test_report_of_a_hybrid_and_a_multimodal_config_in_chinese(cli):
    res = cli("report", "jamba-1.5-mini", "--lang", "zh", "--gpu", "h100")
    assert res.returncode == 0, res.stderr
    assert "[每个序列，与长度无关：28 个 mamba 层 x（状态 d_in N_s + 卷积输入 K_conv d_in）" in res.stdout
    assert "解码状态" in res.stdout and "无法容纳" in res.stdout and "per sequence" not in res.stdout
    res = cli("report", REPO / "tests" / "families" / "gemma3" / "hub-gemma-3-27b.json",
              "--lang", "ru")
    assert res.returncode == 0, res.stderr
    assert "не учтено: визуальная башня, визуальный трансформер SigLIP" in res.stdout


def test_model_summary_in_jupyter_speaks_its_language():
    from symcalc.model import model

    i18n.missing.pop("ru", None)
    ru = model("gpt2", lang="ru")
    md = ru._repr_markdown_()
    assert "| обозначение | смысл | значение |" in md and "| величина | точно | |" in md
    assert f"| параметры | 124{NBSP}439{NBSP}808 |" in md and "скрытая размерность" in md
    assert "веса в bf16 (байт)" in md and "FLOPs прямого прохода (matmul, батч 1" in md
    assert "\\text{размер словаря}" in ru._repr_latex_()
    assert "Размеры" in ru.derive()._repr_markdown_()
    assert not i18n.missing.get("ru"), sorted(i18n.missing["ru"])[:5]
    en = model("gpt2")._repr_markdown_()  # English as before
    assert "| symbol | meaning | value |" in en and "| parameters | 124,439,808 | 124.44 M |" in en
    with pytest.raises(i18n.SymcalcError, match="lang: 'de'"):
        model("gpt2", lang="de")


@pytest.mark.parametrize("lang,model", [("ru", "falcon-h1-7b"), ("zh", "deepseek-v2-lite"),
                                        ("ru", "t5-base"), ("zh", "qwen3-next-80b-a3b")])
def test_derivations_beyond_the_handouts_are_fully_translated(lang, model):
    """Hybrid, MLA/MoE and encoder-decoder derivations: every section title, meaning and
    convention note (clause lists such as Korthikanti's 'where ...; ...' included) in lang."""
    from symcalc.derivations.derive import QUANTITY_TITLES, derive
    from symcalc.render.markdown import derivation_markdown

    spec = resolve(model, [])
    i18n.missing.pop(lang, None)
    shown = 0
    for quantity in QUANTITY_TITLES:
        try:
            d = derive(spec, quantity, Options())
        except i18n.SymcalcError:
            continue  # a quantity this model does not have (recurrent state of a plain stack)
        derivation_markdown(d, lang=lang)
        shown += 1
    assert shown >= 11
    assert not i18n.missing.get(lang), sorted(i18n.missing[lang])[:5]


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_quantized_weight_derivations_are_translated(lang):
    from symcalc.derivations.derive import derive
    from symcalc.render.markdown import derivation_markdown

    i18n.missing.pop(lang, None)
    for model in ("gpt-oss-20b", "mistral-7b"):
        for dtype in ("int4-g128-zp", "int8-g64", "fp8-tensor", "fp8-block128", "mxfp4", "nvfp4"):
            text = derivation_markdown(derive(resolve(model, []), "memory.weights_bytes",
                                              Options(dtype=dtype)), lang=lang)
            assert "bits per quantized weight" not in text
    assert not i18n.missing.get(lang), sorted(i18n.missing[lang])[:5]

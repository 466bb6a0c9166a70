"""The handout's section "Splitting the model across GPUs" (issue 22): a table of layouts per
model from the report's per-rank figures, each model's weights per rank worked out, an
exercise with its answers; on with a layout option or --sections parallel, translated."""
from __future__ import annotations

import pytest

from symcalc import i18n
from symcalc.algebra.options import Options
from symcalc.fast.quick import quick_report
from symcalc.inputs import resolve
from symcalc.render.numbers import decimal, ratio

HEADING = "## Splitting the model across GPUs"


def test_a_layout_option_adds_the_section(cli, tmp_path):
    out = tmp_path / "h.md"
    res = cli("handout", "llama-2-13b", "mistral-7b", "--tp", "8", "-o", str(out))
    assert res.returncode == 0, res.stderr
    text = out.read_text()
    assert HEADING in text and "### Weights per rank of llama-2-13b" in text
    rep = quick_report(resolve("llama-2-13b"), Options(tp=8))
    assert f"{decimal(ratio(rep['per_rank']['peak_bytes'], 10**9), 2)} GB" in text
    assert "3,254,691,840" in text  # the derivation's result
    # the exercise's answers (t = 4)
    four = quick_report(resolve("mistral-7b"), Options(tp=4))
    assert f"{four['per_rank']['params']:,} parameters on rank 0" in text


def test_no_layout_no_section_unless_asked(cli, tmp_path):
    plain, asked = tmp_path / "a.md", tmp_path / "b.md"
    assert cli("handout", "gpt2", "-o", str(plain)).returncode == 0
    assert HEADING not in plain.read_text()
    res = cli("handout", "gpt2", "--sections", "parallel", "-o", str(asked))
    assert res.returncode == 0, res.stderr
    text = asked.read_text()
    assert HEADING in text
    assert "tp 8: tp: tensor-parallel degree must divide the heads" in text  # refused, said why


def test_exercise_sheet_blanks_the_numbers(cli, tmp_path):
    out = tmp_path / "e.md"
    res = cli("handout", "mistral-7b", "--sections", "parallel", "--exercises", "-o", str(out))
    assert res.returncode == 0, res.stderr
    sheet = out.read_text()
    answers = (tmp_path / "e-answers.md").read_text()
    assert "parameters on rank 0" not in sheet and "parameters on rank 0" in answers
    # the table's figures are numbered blanks (main's exercise sheets), none shown
    assert "| tp 8 | \\_\\_\\_\\_ (" in sheet
    assert "1,810,632,704" not in sheet and "1,810,632,704" in answers  # tp 4's rank 0


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_the_section_is_translated(cli, tmp_path, lang):
    from symcalc.commands.handout import rank_figures
    from symcalc.commands.derive import derive_per_rank
    from symcalc.derivations.handout_data import handout
    from symcalc.render.handout import handout_markdown

    i18n.missing.pop(lang, None)
    h = handout([resolve("llama-2-13b"), resolve("mixtral-8x7b")], opts=Options(tp=8),
                sections=("params", "parallel"), figures=rank_figures,
                derive_rank=derive_per_rank)
    text = handout_markdown(h, lang=lang)
    assert not i18n.missing.get(lang), sorted(i18n.missing.get(lang, []))[:5]
    assert "Splitting the model" not in text


def test_the_latex_section_compiles(cli, tmp_path):
    import shutil

    if not shutil.which("pdflatex"):
        pytest.skip("pdflatex is not installed")
    out = tmp_path / "h.pdf"
    res = cli("handout", "llama-2-13b", "--sections", "parallel", "--tp", "4", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert out.stat().st_size > 10_000

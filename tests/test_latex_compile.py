"""The LaTeX symcalc writes compiles with pdflatex, and the PDF shows the numbers and the
user's text literally (skipped where pdflatex or pdftotext is missing; CI installs them)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "docs" / "examples"

needs_tex = pytest.mark.skipif(not (shutil.which("pdflatex") and shutil.which("pdftotext")),
                               reason="pdflatex and pdftotext are not installed")


def compile_tex(tex: Path) -> str:
    """pdflatex (shell escape off) in the file's folder, or xelatex for a document whose
    text is not ASCII (its preamble loads fontspec); the PDF's text."""
    engine = "xelatex" if "\\usepackage{fontspec}" in tex.read_text(encoding="utf-8") else "pdflatex"
    for _ in range(1):
        done = subprocess.run([engine, "-no-shell-escape", "-interaction=nonstopmode",
                               "-halt-on-error", tex.name], cwd=tex.parent, capture_output=True,
                              text=True, errors="replace", timeout=120)
        assert done.returncode == 0, done.stdout[-3000:]
    pdf = tex.with_suffix(".pdf")
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout


EXAMPLE_TOTALS = {
    "layer-calculator-bert-base": ["108,805,632", "109,482,240", "676,608", "77.31 GFLOPs",
                                   "96.64 GFLOPs"],
    "scratch-guide": ["29,828", "31,940"],
    "kaplan-12x768": ["84,934,656"],
    "decoder-calculator-default": ["7,241,732,096", "6,979,588,096", "262,144,000",
                                   "218,112,000", "14.48 GB"],
    "estimator-12x768": ["84,934,656", "38,400,000", "0.849", "0.384"],
    # the seeds in their own language (xelatex, a few seconds each): CLDR figures as printed
    "decoder-calculator-default.ru": ["7\u00a0241\u00a0732\u00a0096", "6\u00a0979\u00a0588\u00a0096",
                                      "262\u00a0144\u00a0000", "7,242\u00a0млрд", "14,48\u00a0ГБ"],
    "estimator-12x768.zh": ["84,934,656", "38,400,000", "0.849亿", "0.384亿"],
}


@needs_tex
@pytest.mark.parametrize("name", sorted(EXAMPLE_TOTALS))
def test_example_compiles(name, tmp_path):
    tex = tmp_path / f"{name}.tex"
    shutil.copyfile(EXAMPLES / f"{name}.tex", tex)
    text = compile_tex(tex)
    for figure in EXAMPLE_TOTALS[name]:
        assert figure in text, figure
    problems = layout_problems(tex.with_suffix(".log").read_text(errors="replace"))
    assert not problems, problems[:3]  # e.g. a long command line in \texttt


@needs_tex
@pytest.mark.parametrize("quantity", ["params.total", "flops.training", "memory.kv_cache_bytes"])
def test_derive_standalone_compiles(cli, tmp_path, quantity):
    out = tmp_path / "d.tex"
    res = cli("derive", "mixtral-8x7b", "--quantity", quantity, "--format", "tex", "--standalone",
              "-o", out)
    assert res.returncode == 0, res.stderr
    text = compile_tex(out)
    if quantity == "params.total":
        assert "46,702,792,704" in text


INJECTED = r"\input{/etc/passwd}"
WRITE18 = r"\write18{touch pwned}"


@needs_tex
def test_injection_prints_as_text(cli, tmp_path):
    out = tmp_path / "inj.tex"
    res = cli("derive", "gpt2", "--set", f"name={INJECTED} {WRITE18}", "--format", "tex",
              "--standalone", "-o", out)
    assert res.returncode == 0, res.stderr
    source = out.read_text()
    assert "\\input{" not in source and "\\write18{" not in source
    text = compile_tex(out)
    assert INJECTED in text and WRITE18 in text  # shown literally
    assert "root:" not in text  # /etc/passwd was not read
    assert not (tmp_path / "pwned").exists()


@needs_tex
def test_handout_pdf(cli, tmp_path):
    """The acceptance run: `symcalc handout mistral-7b llama-2-7b -o h.pdf`; its first page
    drawn as a PNG. Its layout is checked here, on the PDF the command writes (no word beyond
    the text block, no almost empty last page): the other handouts' layout tests below also
    read LaTeX's log, which the command does not keep."""
    out = tmp_path / "h.pdf"
    res = cli("handout", "mistral-7b", "llama-2-7b", "-o", out)
    assert res.returncode == 0, res.stderr
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True,
                          check=True).stdout
    for figure in ("7,241,732,096", "6,738,415,616", "537,137,152", "27,124", "25,204",
                   "References", "GQA", "MHA"):
        assert figure in text, figure
    pages = pdf_pages(out)
    # issue 24 added the activations, the training peak and the 6 N D gap derived per model
    assert 4 <= pages <= 16
    assert not outside_text_block(out), outside_text_block(out)[:5]
    assert lines_on_page(out, pages) > 8, "an almost empty last page"
    assert "In one box" in text and "The whole budget" in text
    # pdftoppm draws page 1 of it (CI keeps that as docs/handout-page1.png)
    if shutil.which("pdftoppm"):
        subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", "-singlefile",
                        str(out), str(tmp_path / "page1")], check=True)
        png = (tmp_path / "page1.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert (REPO / "docs" / "handout-page1.png").exists()


@needs_tex
def test_non_ascii_title_compiles(cli, tmp_path):
    """Latin accents compile under pdflatex; CJK turns the document to xelatex with a CJK
    font (tests/test_i18n.py compiles one); a character no font has is refused before LaTeX
    runs (one line)."""
    out = tmp_path / "u.tex"
    res = cli("handout", "seed-scratch-guide", "--title", "Ünïcode naïve & co", "-o", out)
    assert res.returncode == 0, res.stderr
    text = compile_tex(out)
    assert "Ünïcode naïve & co" in text
    res = cli("handout", "seed-scratch-guide", "--title", "naïve 亿", "-o", tmp_path / "c.tex")
    assert res.returncode == 0 and "\\usepackage{xeCJK}" in (tmp_path / "c.tex").read_text()
    res = cli("handout", "seed-scratch-guide", "--title", "naïve \U000F0001", "-o",
              tmp_path / "d.tex")
    assert res.returncode == 2 and "U+F0001" in res.stderr and not (tmp_path / "d.tex").exists()


# -- layout: every handout of the matrix compiles without overfull boxes or missing glyphs ------
OVERFULL = re.compile(r"^Overfull \\[hv]box \(([\d.]+)pt too (?:wide|high)\)", re.M)
# (mistral-7b beside llama-2-7b: test_handout_pdf above checks the PDF the command writes)
HANDOUTS = {
    "tied-head": ["gpt2"],
    "encoder-and-encoder-decoder": ["bert-base", "t5-small"],
    "moe": ["mixtral-8x7b"],
    "eight-models": ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "llama-2-7b", "llama-2-13b",
                     "llama-3-8b", "qwen2-0.5b"],
}
# the architectures taught next (xelatex for ru and zh)
NEXT = {"mla-moe": ["deepseek-v3"], "hybrid": ["qwen3-next-80b-a3b"]}
MARGIN = 2.2 / 2.54 * 72  # geometry's margin (2.2 cm) in pt
# full-width punctuation may hang into the margin: its glyph sits in the left of its box
HANGING = "。，、；：！？）」』"
OPENING = "（「『"


def layout_problems(log: str) -> list[str]:
    """Overfull boxes over 1 pt and characters the font lacks, as the log names them."""
    bad = [m.group(0) for m in OVERFULL.finditer(log) if float(m.group(1)) > 1.0]
    bad += [line for line in log.splitlines() if line.startswith("Missing character")]
    return bad


def pdf_pages(pdf: Path) -> int:
    """The PDF's page count (pdfinfo)."""
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
    return int(next(l.split()[-1] for l in info.splitlines() if l.startswith("Pages")))


def lines_on_page(pdf: Path, page: int) -> int:
    """Non-blank lines of text on one page of the PDF (pdftotext)."""
    text = subprocess.run(["pdftotext", "-f", str(page), "-l", str(page), str(pdf), "-"],
                          capture_output=True, text=True).stdout
    return len([l for l in text.splitlines() if l.strip()])


def outside_text_block(pdf: Path, slack: float = 2.0) -> list[str]:
    """Words set beyond the text block's left or right edge (a label pushed off the page, a
    formula running into the margin) as pdftotext's boxes place them; an overfull box the log
    does not report (a \\tag wider than the line) is found here too."""
    import html

    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                         check=True).stdout
    width = float(re.search(r'<page width="([\d.]+)"', xml)[1])
    left, right = MARGIN - slack, width - MARGIN + slack
    out = []
    for x0, y0, x1, y1, word in re.findall(r'<word xMin="([-\d.]+)" yMin="([-\d.]+)" '
                                           r'xMax="([-\d.]+)" yMax="([-\d.]+)">(.*?)</word>', xml):
        x0, x1, height = float(x0), float(x1), float(y1) - float(y0)
        word = html.unescape(word)
        if word and word[-1] in HANGING:
            x1 -= 0.7 * height
        if word and word[0] in OPENING:
            x0 += 0.7 * height
        if x0 < left or x1 > right:
            out.append(f"{word!r} at x = {x0:.1f}..{x1:.1f} pt")
    return out


def test_layout_problems_are_found():
    log = ("Overfull \\hbox (14.28534pt too wide) detected at line 150\n"
           "Overfull \\hbox (0.5pt too wide) in paragraph\n"
           "Missing character: There is no \u00e9 in font cmr10!\n")
    assert len(layout_problems(log)) == 2


@needs_tex
@pytest.mark.parametrize("name", sorted(HANDOUTS))
def test_handout_layout(cli, tmp_path, name):
    tex = tmp_path / f"{name}.tex"
    res = cli("handout", *HANDOUTS[name], "-o", tex)
    assert res.returncode == 0, res.stderr
    text = compile_tex(tex)
    log = tex.with_suffix(".log").read_text(errors="replace")
    assert not layout_problems(log), layout_problems(log)[:5]
    pdf = tex.with_suffix(".pdf")
    assert not outside_text_block(pdf), outside_text_block(pdf)[:5]
    assert lines_on_page(pdf, pdf_pages(pdf)) > 8, "an almost empty last page"
    assert "In one box" in text and "The whole budget" in text
    if name == "eight-models":
        # no figure labels inside the plot (they collided): s* and context are in the legend
        assert "context 1,024" in text and "s* = 25,204" in text.replace("∗", "*")
        assert tex.read_text().count("\\node[") == 0


def test_words_outside_the_text_block_are_found(tmp_path):
    """The check finds a label pushed off the page's left edge (the 6 N D tag of issue 24
    did that with no overfull box in the log)."""
    if not (shutil.which("pdflatex") and shutil.which("pdftotext")):
        pytest.skip("pdflatex and pdftotext are not installed")
    tex = tmp_path / "clip.tex"
    tex.write_text("\\documentclass[11pt,a4paper]{article}\\usepackage[margin=2.2cm]{geometry}"
                   "\\usepackage{amsmath}\\begin{document}\\begin{align*}x &= 1 \\tag*{"
                   + "a label much too wide for its line " * 4 + "}\\end{align*}"
                   "\\end{document}\n")
    compile_tex(tex)
    assert outside_text_block(tex.with_suffix(".pdf"))


@needs_tex
@pytest.mark.parametrize("name,lang", [("mla-moe", "en"), ("mla-moe", "ru"), ("hybrid", "en"),
                                       ("hybrid", "zh")])
def test_next_architectures_layout(cli, tmp_path, name, lang):
    """DeepSeek-V3 (MLA, MoE with dense layers) and Qwen3-Next (hybrid) in English and in one
    other language each (xelatex, about 5 s a handout): no overfull box, no missing glyph, no
    word beyond the text block (formulas, tags, labels)."""
    tex = tmp_path / f"{name}.{lang}.tex"
    res = cli("handout", *NEXT[name], "--lang", lang, "-o", tex)
    assert res.returncode == 0, res.stderr
    compile_tex(tex)
    log = tex.with_suffix(".log").read_text(errors="replace")
    assert not layout_problems(log), layout_problems(log)[:5]
    outside = outside_text_block(tex.with_suffix(".pdf"))
    assert not outside, outside[:5]


@needs_tex
def test_exercise_sheet_and_answers(cli, tmp_path):
    sheet = tmp_path / "sheet.pdf"
    res = cli("handout", "gpt2", "--exercises", "--sections", "params", "-o", sheet)
    assert res.returncode == 0, res.stderr
    answers = tmp_path / "sheet-answers.pdf"
    assert sheet.exists() and answers.exists()
    text = lambda p: subprocess.run(["pdftotext", str(p), "-"], capture_output=True,  # noqa: E731
                                    text=True, check=True).stdout
    blank, full = text(sheet), text(answers)
    assert "124,439,808" in full and "124,439,808" not in blank
    assert "590,592" in full and "590,592" not in blank
    assert "768 · 64 · 12" in blank  # the sizes substituted are shown


@needs_tex
def test_derive_writes_what_its_output_says(cli, tmp_path):
    """-o FILE.pdf is a PDF, -o FILE.tex a LaTeX document that compiles (issue 24: both were
    Markdown); a --format that contradicts the file is refused."""
    pdf = tmp_path / "d.pdf"
    res = cli("derive", "gpt2", "-o", pdf)
    assert res.returncode == 0, res.stderr
    assert pdf.read_bytes()[:5] == b"%PDF-"
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "124,439,808" in text and "References" in text
    tex = tmp_path / "d.tex"
    res = cli("derive", "mixtral-8x7b", "--quantity", "memory.kv_cache_bytes", "-o", tex)
    assert res.returncode == 0, res.stderr
    assert tex.read_text().startswith("\\documentclass")
    assert "268,435,456" in compile_tex(tex)
    res = cli("derive", "gpt2", "--format", "md", "-o", tmp_path / "x.pdf")
    assert res.returncode == 2 and "--format" in res.stderr and res.stderr.count("\n") == 1
    assert not (tmp_path / "x.pdf").exists()


JUPYTER_PREAMBLE = ("\\documentclass[11pt]{article}\n\\usepackage[T1]{fontenc}\n"
                    "\\usepackage{amsmath}\n\\usepackage{amssymb}\n\\usepackage{textcomp}\n"
                    "\\usepackage{geometry}\n\\begin{document}\n")


@needs_tex
def test_repr_latex_compiles_with_pdflatex(tmp_path):
    """What Jupyter shows as LaTeX goes into nbconvert's PDF export as it is: every display
    (a model, derivations of MLA, hybrid and dense models) compiles with pdflatex and keeps
    its words (the underscores of d_model and (moe_intermediate_size) included)."""
    from symcalc.model import model

    shown = [model("gpt2"), model("qwen3-next-80b-a3b"),
             model("gpt2").derive(), model("deepseek-v3").derive("memory.kv_cache_bytes"),
             model("qwen3-next-80b-a3b").derive("memory.recurrent_state_bytes"),
             model("mistral-7b").derive("memory.activations_bytes"),
             model("gpt2").closed_form("kaplan")]
    tex = tmp_path / "notebook.tex"
    tex.write_text(JUPYTER_PREAMBLE + "\n\n".join(s._repr_latex_() for s in shown)
                   + "\n\\end{document}\n", encoding="utf-8")
    done = subprocess.run(["pdflatex", "-no-shell-escape", "-interaction=nonstopmode",
                           "-halt-on-error", tex.name], cwd=tmp_path, capture_output=True,
                          text=True, errors="replace", timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    text = subprocess.run(["pdftotext", str(tex.with_suffix(".pdf")), "-"], capture_output=True,
                          text=True, check=True).stdout
    for words in ("hidden size d", "model", "moe", "intermediate", "Recurrent-state memory",
                  "Parameters of gpt2", "Activation memory of mistral-7b"):
        assert words in text, words

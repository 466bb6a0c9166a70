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
                                      "262\u00a0144\u00a0000", "7,242\u00a0млрд", "14,48\u00a0GB"],
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
    """The acceptance run: `symcalc handout mistral-7b llama-2-7b -o h.pdf`."""
    out = tmp_path / "h.pdf"
    res = cli("handout", "mistral-7b", "llama-2-7b", "-o", out)
    assert res.returncode == 0, res.stderr
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True,
                          check=True).stdout
    for figure in ("7,241,732,096", "6,738,415,616", "537,137,152", "27,124", "25,204",
                   "References", "GQA", "MHA"):
        assert figure in text, figure
    info = subprocess.run(["pdfinfo", str(out)], capture_output=True, text=True).stdout
    pages = int(next(l.split()[-1] for l in info.splitlines() if l.startswith("Pages")))
    assert 4 <= pages <= 12


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
HANDOUTS = {
    "gqa-vs-mha": ["mistral-7b", "llama-2-7b"],
    "tied-head": ["gpt2"],
    "encoder-and-encoder-decoder": ["bert-base", "t5-small"],
    "moe": ["mixtral-8x7b"],
    "eight-models": ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "llama-2-7b", "llama-2-13b",
                     "llama-3-8b", "qwen2-0.5b"],
}


def layout_problems(log: str) -> list[str]:
    """Overfull boxes over 1 pt and characters the font lacks, as the log names them."""
    bad = [m.group(0) for m in OVERFULL.finditer(log) if float(m.group(1)) > 1.0]
    bad += [line for line in log.splitlines() if line.startswith("Missing character")]
    return bad


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
    pages = int(next(l.split()[-1] for l in subprocess.run(
        ["pdfinfo", str(pdf)], capture_output=True, text=True).stdout.splitlines()
        if l.startswith("Pages")))
    last = subprocess.run(["pdftotext", "-f", str(pages), "-l", str(pages), str(pdf), "-"],
                          capture_output=True, text=True).stdout
    assert len([l for l in last.splitlines() if l.strip()]) > 8, "an almost empty last page"
    assert "In one box" in text and "The whole budget" in text
    if name == "eight-models":
        # no figure labels inside the plot (they collided): s* and context are in the legend
        assert "context 1,024" in text and "s* = 25,204" in text.replace("∗", "*")
        assert tex.read_text().count("\\node[") == 0


@needs_tex
def test_page_one_renders_to_png(cli, tmp_path):
    """pdftoppm draws page 1 (CI keeps it as docs/handout-page1.png)."""
    if not shutil.which("pdftoppm"):
        pytest.skip("pdftoppm is not installed")
    pdf = tmp_path / "h.pdf"
    assert cli("handout", "mistral-7b", "llama-2-7b", "-o", pdf).returncode == 0
    subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", "-singlefile", str(pdf),
                    str(tmp_path / "page1")], check=True)
    png = (tmp_path / "page1.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert (REPO / "docs" / "handout-page1.png").exists()


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

"""Handouts (Markdown and LaTeX), the seeds' worked examples in docs/examples/, and the
package's templates loading from a non-editable install."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from golden_files import check_golden
from symcalc.inputs import presets
from symcalc.derivations.handout_data import handout
from symcalc.render.handout import handout_latex, handout_markdown

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "docs" / "examples"


def specs(*names):
    return [presets.load(n).spec for n in names]


@pytest.fixture(scope="module")
def pair():
    return handout(specs("mistral-7b", "llama-2-7b"))


def test_handout_markdown_golden(pair):
    check_golden("handout-mistral-7b-llama-2-7b.md", handout_markdown(pair))


def test_handout_latex_golden(pair):
    check_golden("handout-mistral-7b-llama-2-7b.tex", handout_latex(pair))


def test_handout_content(pair):
    md = handout_markdown(pair)
    for figure in ("7,241,732,096", "6,738,415,616", "27{,}124", "25{,}204", "537{,}137{,}152",
                   "GQA: 32 query heads share 8 K/V heads", "MHA: 32 heads"):
        assert figure in md, figure
    # n_kv side by side: 8 for Mistral (GQA), 32 for Llama-2 (MHA)
    assert re.search(r"\| \$n_\{\\mathrm\{kv\}\}\$ \| [^|]+ \| 8 \| 32 \|", md)
    # every reference cited in the text is listed, numbered in order of first use
    cited = {int(n) for n in re.findall(r"\[(\d+)\]\n", md)}
    listed = re.findall(r"^(\d+)\. ", md.split("## References")[1], re.M)
    assert cited and cited <= {int(n) for n in listed}
    for key in ("vaswani2017", "ainslie2023", "kaplan2020", "shazeer2020", "zhang2019"):
        assert f"(`{key}`)" in md
    assert "(`press2017`)" not in md  # both heads are untied


def test_handout_whole_budget(pair):
    """The GQA handout shows GQA's real benefit: Mistral's cache is 4x smaller than the same
    shape with multi-head attention, Llama-2's is that multi-head size."""
    mistral, llama = (sh.budget for sh in pair.sheets)
    assert mistral.kv_bytes * 4 == mistral.kv_mha_bytes == llama.kv_bytes == 1_073_741_824
    assert mistral.weights_bytes == 2 * 7_241_732_096
    assert mistral.state_bytes == 16 * 7_241_732_096
    assert mistral.peak_bytes == mistral.state_bytes + mistral.activations_bytes
    assert mistral.six_nd == 6 * 7_241_732_096 * 2048
    md = handout_markdown(pair)
    assert "**In one box.**" in md.split("## The models")[0]
    assert "4x smaller than multi-head attention" in md and "## The whole budget" in md


def test_handout_sections_switch():
    h = handout(specs("gpt2"), sections=["compute", "params"])
    md = handout_markdown(h)
    assert "## Parameters, step by step" in md and "## Compute against sequence length" in md
    assert "## The whole budget" not in md and "In one box" not in md
    assert "## Closed forms" not in md and "## Where the parameters are" not in md


def test_handout_sections_refused(cli, tmp_path):
    res = cli("handout", "gpt2", "--sections", "params,foo", "-o", tmp_path / "h.md")
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "--sections" in res.stderr and "'foo'" in res.stderr


def test_exercises_md(cli, tmp_path):
    sheet = tmp_path / "sheet.md"
    assert cli("derive", "gpt2", "--exercises", "-o", sheet).returncode == 0
    blank, full = sheet.read_text(), (tmp_path / "sheet-answers.md").read_text()
    assert "124{,}439{,}808" in full and "124{,}439{,}808" not in blank
    assert r"768 \cdot 64 \cdot 12 + 64 \cdot 12 = \underline" in blank
    res = cli("derive", "gpt2", "--exercises")
    assert res.returncode == 2 and "--exercises" in res.stderr
    hs = tmp_path / "h.md"
    assert cli("handout", "mistral-7b", "--exercises", "-o", hs).returncode == 0
    assert "7,241,732,096" not in hs.read_text()
    assert "7,241,732,096" in (tmp_path / "h-answers.md").read_text()


def test_eight_models_split_tables_and_coincident_curves():
    h = handout(specs("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "llama-2-7b",
                      "llama-2-13b", "llama-3-8b", "qwen2-0.5b"))
    tex = handout_latex(h)
    assert "resizebox" not in tex  # split, never shrunk
    assert tex.count("symbol & meaning") == 3  # 3 + 3 + 2 models
    assert "legend style={font=\\small, at={(0.5,-0.17)}" in tex  # legend below the plot
    same = handout(specs("gpt2", "gpt2"))
    assert same.coincide == (("both", ("gpt2", "gpt2")),)
    assert "coincide" in handout_latex(same)


def test_handout_latex_figures(pair):
    tex = handout_latex(pair)
    assert tex.count("\\begin{axis}") == 2  # bar chart and FLOPs against s
    assert "symbolic x coords={embeddings,attention,FFN,norms,outputhead}" in tex
    assert "$s^\\ast = 27{,}124$" in tex and "$s^\\ast = 25{,}204$" in tex
    assert "\\input" not in tex.replace("\\input{", "")  # no \input at all
    assert "\\usepackage{pgfplots}" in tex


def test_handout_title_is_text(tmp_path, cli):
    out = tmp_path / "h.tex"
    res = cli("handout", "gpt2", "--title", r"\input{/etc/passwd} 100% & \write18{id}", "-o", out)
    assert res.returncode == 0, res.stderr
    tex = out.read_text()
    assert r"\textbackslash{}input\{/etc/passwd\} 100\% \& \textbackslash{}write18\{id\}" in tex
    assert "\\input{" not in tex and "\\write18{" not in tex


def test_handout_bad_output(cli, tmp_path):
    res = cli("handout", "gpt2", "-o", tmp_path / "h.docx")
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "-o" in res.stderr


def test_pdf_without_pdflatex(tmp_path):
    env = dict(os.environ, PATH=str(Path(sys.executable).parent))
    done = subprocess.run([sys.executable, "-m", "symcalc.cli", "handout", "gpt2", "-o",
                           str(tmp_path / "h.pdf")], capture_output=True, text=True, env=env)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "pdflatex" in done.stderr
    assert not (tmp_path / "h.pdf").exists()


def _generator():
    spec = importlib.util.spec_from_file_location("examples_generate", EXAMPLES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_examples_are_up_to_date(tmp_path):
    gen = _generator()
    written = gen.generate(tmp_path)
    assert len(written) == 2 * len(gen.EXAMPLES)
    for path in written:
        committed = EXAMPLES / path.name
        assert committed.exists(), f"{committed} missing: run python docs/examples/generate.py"
        assert committed.read_text() == path.read_text(), (
            f"docs/examples/{path.name} is stale: run python docs/examples/generate.py")


def test_examples_show_the_seed_figures():
    gen = _generator()
    for ex in gen.EXAMPLES:
        md = (EXAMPLES / f"{ex.name}.md").read_text()
        derived = md.split("\n## ", 1)[1].replace("{,}", ",")  # the commands' output
        for figure in ex.checks:
            assert figure in derived, (ex.name, figure)
    guide = (EXAMPLES / "scratch-guide.md").read_text()
    assert "85,560 fewer than printed" in guide and 115_388 - 29_828 == 85_560
    est = (EXAMPLES / "estimator-12x768.md").read_text()
    assert "0.849 亿" in est and "0.384 亿" in est
    bert = (EXAMPLES / "layer-calculator-bert-base.md").read_text()
    assert "**676,608 parameters" in bert and "77.31 GFLOPs" in bert and "96.64 GFLOPs" in bert


def test_templates_load_from_a_wheel_install(tmp_path):
    """Build a wheel, unpack it into a fresh venv that borrows sympy, jinja2 and
    latexcodec from this interpreter's site-packages (not symcalc: the editable hook is not
    read), and run `symcalc derive` from there."""
    wheels = tmp_path / "wheels"
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation,
                            "-q", "-w", str(wheels), str(REPO)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    import jinja2, latexcodec, markupsafe, mpmath, sympy  # noqa: E401

    borrowed = {str(Path(m.__file__).resolve().parent.parent)
                for m in (jinja2, latexcodec, markupsafe, mpmath, sympy)}
    (Path(site) / "borrowed.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    wheel = next(wheels.glob("symcalc-*.whl"))
    import zipfile  # what installing a pure-Python wheel puts in site-packages (pip: ~2 s more)

    zipfile.ZipFile(wheel).extractall(site)
    probe = subprocess.run([py, "-c", "import symcalc, symcalc.render.templates as t; "
                            "print(symcalc.__file__); print(t.template_dir())"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    where, templates = probe.stdout.split()
    assert where.startswith(str(venv)) and templates.startswith(str(venv))
    assert templates.endswith("symcalc/templates")
    run = subprocess.run([py, "-m", "symcalc.cli", "derive", "gpt2", "--quantity", "params.total",
                          "--format", "md"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "124{,}439{,}808" in run.stdout and "## References" in run.stdout


def test_hybrid_handout_counts_every_layer_kind():
    """A handout of hybrid stacks (linear attention, Mamba-1/2, short convolutions) builds; its
    parameter derivation ends at the exact total, and the compute curve is the FLOP count at s
    a whole number of scan chunks (Q_c = 64 for Qwen3-Next's delta rule)."""
    from symcalc.algebra.options import Options
    from conftest import sympy_number

    names = ("qwen3-next-80b-a3b", "jamba-1.5-mini", "nemotron-h-8b", "lfm2-1.2b")
    h = handout(specs(*names))
    md = handout_markdown(h)
    for name in names:
        total = presets.load(name).expected_total
        assert f"{total:,}" in md, name
    qwen = h.sheets[0]
    s = 4 * 64
    want = sympy_number("flops.forward_matmul", qwen.spec, Options(seq_len=s))
    assert qwen.curve.quadratic * s * s + qwen.curve.linear * s + qwen.curve.constant == want
    assert any("whole number of Q_c-token chunks" in c for c in qwen.flops.conventions)


def test_qsa_handout_takes_whole_key_blocks():
    """Qwen4-Exp's QSA indexer scores floor((i + 1) / C_ix) key blocks per query: a handout of
    it builds (floor taken as at s a whole number of blocks, as the scans' ceiling), and its
    compute curve is the FLOP count where s is a whole number of blocks and of scan chunks."""
    import json
    from pathlib import Path

    from conftest import sympy_number
    from symcalc.algebra.options import Options
    from symcalc.inputs.hf import spec_from_config

    path = Path(__file__).parent / "families" / "qwen4_exp_text" / "causal-lm-ple-indexer.json"
    spec = spec_from_config(json.loads(path.read_text(encoding="utf-8")))
    sheet = handout([spec]).sheets[0]
    for s in (2 * 64, 6 * 64):  # whole chunks of 64, whole blocks of C_ix = 2
        want = sympy_number("flops.forward_matmul", spec, Options(seq_len=s))
        assert sheet.curve.quadratic * s * s + sheet.curve.linear * s + sheet.curve.constant == want
    assert any("whole number of 2-token blocks" in c for c in sheet.flops.conventions)

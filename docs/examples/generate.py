"""Regenerate the worked examples of docs/examples/ from the seeds' calculators.

Each example is a Markdown document (``NAME.md``) and a standalone LaTeX document
(``NAME.tex``) assembled from ``symcalc derive`` runs, with a short introduction saying what
the seed prints and what symcalc finds. Run from the repository root::

    python docs/examples/generate.py            # rewrite docs/examples/*.md and *.tex
    python docs/examples/generate.py --check    # exit 1 if a file would change

tests/test_handout.py regenerates them into a scratch folder and compares.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from symcalc.cli import main as symcalc
from symcalc.render.escape import latex_text, markdown_text
from symcalc.render.templates import render

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Example:
    name: str
    title: str
    intro: tuple[str, ...]  # plain-text paragraphs (escaped per format)
    runs: tuple[tuple[str, ...], ...]  # `symcalc derive` arguments, format added here
    checks: tuple[str, ...]  # figures the document must show (tests look for them)


EXAMPLES = (
    Example(
        "layer-calculator-bert-base",
        "The layer calculator's BERT-base, and the exact BertModel",
        ("The layer calculator (seeds/000) counts 4 d² + 2 d d_ff + 4 d parameters per layer "
         "and V d + s d for the embeddings. For BERT-base (d 768, L 12, d_ff 3072, V 30522, "
         "s 512) that gives the 108,805,632 below, derived from symcalc's components with the "
         "calculator's assumptions.",
         "The exact BertModel has 109,482,240 parameters: the difference is itemised below, "
         "component by component (projection and FFN biases, token-type table, embedding "
         "LayerNorm, pooler).",
         "Its FLOP formula L (4 s d² + 2 s² d + 4 s d d_ff) counts the attention terms in "
         "multiply-accumulates and the FFN in FLOPs (77.31 GFLOPs); counted in FLOPs throughout "
         "it is L (8 s d² + 4 s² d + 4 s d d_ff) = 96.64 GFLOPs, which is symcalc's "
         "forward matmul count.",
         "Its embeddings, V d + s d, are 23,834,112 (the first derivation below). Its activation "
         "memory, s d 4 bytes per layer (fp32 hidden states only), is 512 x 768 x 4 = 1,572,864 "
         "bytes per layer and 18,874,368 for the 12 layers; symcalc's activation estimate "
         "(Korthikanti et al.) also keeps the attention scores, the FFN inputs and the dropout "
         "masks, and is far larger."),
        (("seed-layer-calculator-bert-base", "--quantity", "params.embedding", "--unit", "exact"),
         ("seed-layer-calculator-bert-base", "--quantity", "params.total", "--unit", "exact"),
         ("seed-layer-calculator-bert-base", "--against", "bert-base"),
         ("seed-layer-calculator-bert-base", "--form", "seed-layer-mixed", "--seq-len", "512",
          "--flops-unit", "G"),
         ("seed-layer-calculator-bert-base", "--form", "seed-layer-flops", "--seq-len", "512",
          "--flops-unit", "G")),
        ("23,834,112", "108,805,632", "109,482,240", "676,608", "77.31 GFLOPs", "96.64 GFLOPs")),
    Example(
        "scratch-guide",
        "The from-scratch guide's demo GPT",
        ("The guide (seeds/001) counts P = 2 V E + V + (C + 2) E + B (11 E² + 9 E) for a GPT "
         "with bias-free Q, K, V, no attention output projection, an MLP with biases and an "
         "untied head with a bias, and prints 115388 for n_head 4, E 32, C 5, V 100, B 2.",
         "Its own formula gives 29,828 for those values (derived below from the components), "
         "85,560 fewer than printed. The repository's current code adds an output projection "
         "with a bias (E² + E more per block), which gives 31,940."),
        (("seed-scratch-guide-formula", "--quantity", "params.total", "--unit", "exact"),
         ("seed-scratch-guide", "--quantity", "params.total", "--unit", "exact"),
         ("seed-scratch-guide-formula", "--against", "seed-scratch-guide")),
        ("29,828", "31,940", "2,112")),
    Example(
        "kaplan-12x768",
        "Kaplan et al.'s 12 L d² at L = 12, d = 768",
        ("Kaplan et al. 2020 (seeds/002) approximate the non-embedding parameters as "
         "N = 12 L d², with d_attn = d_ff / 4 = d and biases and norms left out. At L 12, "
         "d 768 that is 12 x 12 x 768² = 84,934,656: below, the closed form under the "
         "Kaplan assumptions and the components it keeps.",
         "On the real GPT-2 (same L and d) the exact non-embedding count is 85,056,000: the "
         "biases and norms left out are 121,344 parameters, 0.14 %. Its embeddings (39,383,808: "
         "token table and positions; the head is tied and adds nothing) are not part of N at "
         "all, and are shown apart in the third derivation."),
        (("seed-kaplan-12x768", "--assume", "kaplan"),
         ("seed-kaplan-12x768", "--quantity", "params.total", "--unit", "exact"),
         ("gpt2", "--assume", "kaplan")),
        ("84,934,656", "85,056,000", "121,344", "39,383,808")),
    Example(
        "decoder-calculator-default",
        "The decoder calculator's default model (Mistral-7B's shape)",
        ("The decoder calculator (seeds/003) defaults to L 32, d 4096, 32 heads with 8 K/V "
         "heads, a gated FFN of width 14336, RMSNorm, V 32000 and an untied head. Each of its "
         "breakdown lines is a step below: attention per layer 41,943,040, FFN per layer "
         "176,160,768, per layer 218,112,000, embeddings and head 262,144,000, non-embedding "
         "6,979,588,096 (final norm included), total 7,241,732,096, and 14.48 GB at 16 bits."),
        (("seed-decoder-calculator-default", "--quantity", "params.total", "--unit", "B"),
         ("seed-decoder-calculator-default", "--quantity", "params.embedding", "--unit", "exact"),
         ("seed-decoder-calculator-default", "--quantity", "params.non_embedding", "--unit", "exact"),
         ("seed-decoder-calculator-default", "--quantity", "memory.weights_bytes", "--dtype", "bf16")),
        ("7,241,732,096", "6,979,588,096", "262,144,000", "218,112,000", "41,943,040",
         "176,160,768", "14.48 GB")),
    Example(
        "estimator-12x768",
        "The estimator's L = 12, d = 768, V = 50000 in units of 100,000,000",
        ("The estimator (seeds/004) shows the body 12 L d² and the embeddings V d in units of "
         "100,000,000 (yi): 0.849 and 0.384 for L 12, d 768, V 50000, about 123 M in all. It calls "
         "this slightly low without saying by how much. For its own model built as GPT-2 is "
         "(biases, LayerNorms, a learned table of 1,024 positions, a tied head) the last "
         "derivation answers: 907,776 parameters more, 0.74 % of the 123,334,656, of which the "
         "position table is 786,432 and the biases and norms 121,344."),
        (("seed-estimator-12x768", "--quantity", "params.non_embedding", "--unit", "yi"),
         ("seed-estimator-12x768", "--quantity", "params.embedding", "--unit", "yi"),
         ("seed-estimator-12x768", "--quantity", "params.total", "--unit", "M"),
         ("seed-estimator-12x768", "--against", "gpt2", "--set", "V=50000")),
        ("0.849", "0.384", "84,934,656", "38,400,000", "123,334,656", "907,776", "786,432")),
)


def paragraphs(ex: Example) -> tuple[str, ...]:
    return (ex.intro,) if isinstance(ex.intro, str) else ex.intro


def derive_output(args: tuple[str, ...], fmt: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"part.{fmt}"
        status = symcalc(["derive", *args, "--format", fmt, "-o", str(out)])
        if status != 0:
            raise SystemExit(f"symcalc derive {' '.join(args)} failed ({status})")
        return out.read_text(encoding="utf-8")


def command_line(args: tuple[str, ...], fmt: str) -> str:
    return "symcalc derive " + " ".join(args) + f" --format {fmt}"


def markdown(ex: Example) -> str:
    parts = [f"# {markdown_text(ex.title)}", ""]
    parts += [markdown_text(p) + "\n" for p in paragraphs(ex)]
    parts.append("Generated by `python docs/examples/generate.py` from these commands:\n")
    parts += [f"    {command_line(a, 'md')}" for a in ex.runs]
    parts.append("")
    parts += [derive_output(a, "md") for a in ex.runs]
    return "\n".join(parts)


def latex(ex: Example) -> str:
    body = [f"\\section*{{{latex_text(ex.title)}}}"]
    body += [latex_text(p) + "\n" for p in paragraphs(ex)]
    body.append("{\\small\\raggedright Generated by \\texttt{python docs/examples/generate.py} from:")
    body.append("\\begin{itemize}")
    body += [f"\\item \\texttt{{{latex_text(command_line(a, 'tex'))}}}" for a in ex.runs]
    body.append("\\end{itemize}}")
    body += [derive_output(a, "tex") for a in ex.runs]
    return render("document.tex.j2", body="\n".join(body), pgfplots=False)


def generate(folder: Path) -> list[Path]:
    written = []
    for ex in EXAMPLES:
        for suffix, text in ((".md", markdown(ex)), (".tex", latex(ex))):
            path = folder / f"{ex.name}{suffix}"
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    if not args.check:
        for path in generate(HERE):
            print(path.relative_to(HERE.parent.parent))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        stale = [p.name for p in generate(Path(tmp))
                 if not (HERE / p.name).exists() or (HERE / p.name).read_text(encoding="utf-8")
                 != p.read_text(encoding="utf-8")]
    for name in stale:
        print(f"stale: docs/examples/{name}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

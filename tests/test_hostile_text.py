"""Issue 10, part A: user text (model names, titles) in every output.

Control characters never reach a terminal or a file raw; text pdflatex cannot set is refused
before LaTeX, naming the field and the character; names and titles have a length limit."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from symcalc.cli import main
from symcalc.render.escape import TEXT_LIMIT, check_text, latex_text, markdown_text, plain_text

ONE_LINE = re.compile(r"^symcalc: error: [^\n]+: [^\n]+$")
HOSTILE = "evil\x1b[2J\x1b]0;pwned\x07\x9b31m\u202e\x00\r"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\x00", "\r")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (out, err)
    assert ONE_LINE.match(err.rstrip("\n")) and err.count("\n") == 1, err
    return err.rstrip("\n")


# item 5: control characters ------------------------------------------------------------------

def test_plain_text_escapes_controls_visibly():
    assert plain_text("a\x1b[2Jb\tc\nd") == "a\\x1b[2Jb\tc\nd"
    assert plain_text("\x9b\u202e\udc9b") == "\\x9b\\u202e\\udc9b"
    assert markdown_text("x\x1by") == "x\\\\x1by"


@pytest.mark.parametrize("argv", [
    ["report", "gpt2"], ["forms", "gpt2"], ["closed-form", "gpt2"],
    ["derive", "gpt2"], ["derive", "gpt2", "--format", "tex", "--standalone"],
    ["derive", "gpt2", "--against", "gpt2"],
])
def test_no_control_character_reaches_the_terminal(capsys, argv):
    code, out, err = run(capsys, *argv, "--set", f"name={HOSTILE}")
    assert code == 0, err
    assert "evil" in out
    for ch in RAW:
        assert ch not in out, repr(ch)


@pytest.mark.parametrize("kind", [".md", ".tex"])
def test_no_control_character_in_a_handout(capsys, tmp_path, kind):
    out = tmp_path / f"h{kind}"
    code, _, err = run(capsys, "handout", "gpt2", "--set", f"name={HOSTILE}",
                       "--title", f"T {HOSTILE}", "-o", out)
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert "evil" in text
    for ch in RAW:
        assert ch not in text, repr(ch)


def test_no_control_character_in_an_error(capsys):
    line = refused(capsys, "report", HOSTILE)
    for ch in RAW:
        assert ch not in line


# item 4: what no installed font can set, and length ------------------------------------------
# pdflatex cannot set these; since issue 14 a document holding them goes to xelatex with a font
# that has them (symcalc.render.fonts), so they are kept, never written as "[U+...]".
SETTABLE_BY_XELATEX = ["¥", "¢", "¬", "Α", "ℝ", "ℂ", "ℕ", "∄", "亿", "€"]
# private-use and unassigned code points: no font has them, so they are refused, named
IN_NO_FONT = ["\U000F0001", "\U0010FFFD", "\uE000"]


@pytest.mark.parametrize("ch", IN_NO_FONT)
def test_latex_refuses_characters_no_font_has_naming_them(capsys, tmp_path, ch):
    line = refused(capsys, "derive", "gpt2", "--format", "tex", "--set", f"name=ok {ch} x")
    assert line.startswith(f"symcalc: error: name: character {ch!r} (U+{ord(ch):04X}")
    assert "is in no installed font" in line
    line = refused(capsys, "handout", "gpt2", "--title", f"T{ch}", "-o", tmp_path / "h.tex")
    assert line.startswith(f"symcalc: error: --title: character {ch!r}")
    assert not (tmp_path / "h.tex").exists()


@pytest.mark.parametrize("ch", SETTABLE_BY_XELATEX)
def test_markdown_keeps_them(capsys, ch):
    code, out, err = run(capsys, "derive", "gpt2", "--set", f"name=ok {ch} x")
    assert code == 0 and ch in out


def test_latex_maps_what_latexcodec_spells_with_known_commands():
    assert latex_text("Straße é ΓΔ —") == r"Stra{\ss}e {\'e} {$\Gamma$}{$\Delta$} {---}"
    assert latex_text("--quantity x-y a---b") == "-{}-quantity x-y a-{}-{}-b"  # no dash ligatures
    for ch in SETTABLE_BY_XELATEX:  # never an undefined command, never "[U+...]"
        out = latex_text(ch)
        assert "[U+" not in out and (out == ch or out.startswith("{")), (ch, out)


@pytest.mark.parametrize("argv", [
    ["report", "gpt2"], ["derive", "gpt2"], ["forms", "gpt2"], ["closed-form", "gpt2"],
])
def test_long_names_are_refused_with_the_limit(capsys, argv):
    line = refused(capsys, *argv, "--set", "name=" + "n" * 20_000)
    assert line == f"symcalc: error: name: is 20,000 characters long; the limit is {TEXT_LIMIT}"
    code, _, err = run(capsys, *argv, "--set", "name=" + "n" * TEXT_LIMIT)
    assert code == 0, err


def test_long_titles_and_backslashes_are_refused(capsys, tmp_path):
    line = refused(capsys, "handout", "gpt2", "--title", "\\" * 15_000, "-o", tmp_path / "h.md")
    assert line.startswith("symcalc: error: --title: is 15,000 characters long")
    check_text("--title", "\\" * TEXT_LIMIT, latex=True)


@pytest.mark.skipif(not shutil.which("pdflatex"), reason="pdflatex not installed")
def test_accepted_names_compile(capsys, tmp_path):
    name = "Straße é ΓΔ — " + "\\" * 50 + " {x} $y$ %z"
    code, out, err = run(capsys, "derive", "gpt2", "--format", "tex", "--standalone",
                         "--set", f"name={name}")
    assert code == 0, err
    (tmp_path / "d.tex").write_text(out, encoding="utf-8")
    done = subprocess.run(["pdflatex", "-no-shell-escape", "-interaction=nonstopmode",
                           "-halt-on-error", "d.tex"], cwd=tmp_path, capture_output=True,
                          text=True, errors="replace", timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]


# issue 26 item 3: characters checked against every face that sets them -------------------------

def _fake_faces(monkeypatch, table):
    """Fonts as given: {family: {style: "characters"}} (plus ASCII in every face)."""
    from symcalc.render import fonts

    ascii_points = frozenset(range(32, 127))

    def faces(family):
        got = table.get(family)
        return None if got is None else tuple(
            (style, ascii_points | {ord(c) for c in chars}) for style, chars in got.items())

    monkeypatch.setattr(fonts, "faces", faces)
    monkeypatch.setattr(fonts, "charset", fonts.charset.__wrapped__)
    monkeypatch.setattr(fonts, "MAIN_FONTS", tuple(table))
    return fonts


def test_a_character_in_the_regular_face_only_is_refused(monkeypatch):
    """The issue's case in miniature: the regular face has ℝ, the bold face (the title) has
    not; the check used the union of the faces and let xelatex fail 10-16 s later."""
    fonts = _fake_faces(monkeypatch, {"Serif": {"Regular": "ℝé", "Bold": "é", "Italic": "ℝé"}})
    with pytest.raises(Exception) as err:
        fonts.choose("ℝ")
    assert "'ℝ' (U+211D" in str(err.value) and "not in its Bold face" in str(err.value)
    assert fonts.choose("é")["main"] == "Serif"


def test_a_font_with_the_character_in_every_face_is_chosen(monkeypatch):
    fonts = _fake_faces(monkeypatch, {"Serif": {"Regular": "ℝ", "Bold": ""},
                                      "Sans": {"Regular": "ℝ", "Bold": "ℝ", "Oblique": "ℝ"}})
    assert fonts.choose("ℝ")["main"] == "Sans"


def test_title_refused_before_latex_when_a_face_lacks_it(capsys, tmp_path, monkeypatch):
    """Against the installed fonts: DejaVu Serif has ℝ in its Book face but not in Bold;
    with it as the only main font, `handout --title ℝ -o r.pdf` is refused before any
    LaTeX runs, naming the character, the font and the face."""
    from symcalc.render import fonts

    serif = fonts.faces("DejaVu Serif")
    if not serif or not fonts.lacking("DejaVu Serif", "ℝ") or \
            len(fonts.lacking("DejaVu Serif", "ℝ")) == len(serif):
        pytest.skip("needs DejaVu Serif with ℝ in some faces only (fonts-dejavu)")
    import symcalc.render.handout as rh

    def boom(*a, **k):
        raise AssertionError("LaTeX ran before the characters were checked")

    monkeypatch.setattr(rh, "compile_pdf", boom)
    monkeypatch.setattr(fonts, "MAIN_FONTS", ("DejaVu Serif",))
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}"
                        if name in ("pdflatex", "xelatex") else shutil_which(name))
    line = refused(capsys, "handout", "gpt2", "--title", "ℝ", "-o", tmp_path / "r.pdf")
    assert line.startswith("symcalc: error: --title: character 'ℝ' (U+211D"), line
    assert "DejaVu Serif has it, but not in its" in line and "Bold" in line, line
    line = refused(capsys, "handout", "gpt2", "--set", "name=ℝ", "-o", tmp_path / "r.tex")
    assert line.startswith("symcalc: error: name: character 'ℝ'"), line
    assert not list(tmp_path.iterdir())


shutil_which = shutil.which


@pytest.mark.skipif(not shutil.which("xelatex") or not shutil.which("fc-list"),
                    reason="needs xelatex and fontconfig")
def test_title_in_a_face_the_installed_fonts_lack_compiles_or_is_refused(capsys, tmp_path):
    """With the fonts installed here: `handout --title ℝ -o r.pdf` either compiles (a font
    has ℝ in every face, e.g. DejaVu Sans) or is refused before LaTeX -- never an xelatex
    'Missing character' failure."""
    code, out, err = run(capsys, "handout", "gpt2", "--title", "ℝ", "--sections", "breakdown",
                         "-o", tmp_path / "r.pdf")
    assert "Missing character" not in err, err
    assert (code == 0 and (tmp_path / "r.pdf").stat().st_size > 0) or \
        (code == 2 and "--title: character 'ℝ'" in err), err

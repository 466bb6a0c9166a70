"""Issue 10, part A: user templates (``--template FILE``).

Every template error is one line ``symcalc: error: TEMPLATE:LINE: what`` with exit status 2;
resources are bounded; includes never follow a link out of the template's folder; LaTeX for
user templates cannot read files outside its build folder."""
from __future__ import annotations

import re
import shutil
import subprocess
import time

import pytest

from symcalc.cli import main

ONE_LINE = re.compile(r"^symcalc: error: [^\n]+: [^\n]+$")


def refused(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (out, err)
    assert ONE_LINE.match(err.rstrip("\n")) and err.count("\n") == 1, err
    return err.rstrip("\n")


def template(tmp_path, text: str | bytes, name: str = "t.md.j2"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


CASES = {  # source, line of the error, words of the rule
    "division": ("ok\n{{ 1/0 }}\n", 2, "ZeroDivisionError"),
    "missing-include": ("a\nb\n{% include 'nope.j2' %}\n", 3, "includes 'nope.j2'"),
    "absolute-include": ("{% include '/etc/passwd' %}", 1, "includes '/etc/passwd'"),
    "parent-include": ("{% include '../../../../etc/passwd' %}", 1, "includes '../"),
    "syntax": ("x\n{{ v.title }\n", 2, "unexpected '}'"),
    "unknown-tag": ("{% frobnicate %}", 1, "frobnicate"),
    "undefined": ("{{ nothing_here.x }}", 1, "undefined"),
    "huge-range": ("{{ range(10**9)|list }}", 1, "MAX_RANGE"),
    "huge-string": ("{{ 'a'*10**11 }}", 1, "the limit is 1,000,000"),
    "huge-list": ("{{ [1]*10**9 }}", 1, "the limit is 1,000,000"),
    "doubling": ("{% set ns = namespace(s='a') %}{% for i in range(64) %}"
                 "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}", 1, "the limit is"),
    "huge-power": ("{{ 7**(10**9) }}", 1, "10,000 bits"),
    "padding": ("{{ 'x'.center(10**9) }}", 1, "center()"),
    "padding-filter": ("{{ 'x'|center(10**9) }}", 1, "center filter"),
    "percent-width": ("{{ '%999999999d' % 1 }}", 1, "width"),
    "format-width": ("{{ '{:>999999999}'.format(1) }}", 1, "width"),
    "join": ("{{ range(100000)|join('x'*100000) }}", 1, "join"),
    "replace": ("{{ ('a'*100000).replace('a', 'b'*1000) }}", 1, "replace"),
    "self-include": ("{% include 't.md.j2' %}", 1, "more than 20 deep"),
    "macro-recursion": ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", 1, "recursion"),
    "python-internals": ("{{ v.__class__.__mro__ }}", 1, "not allowed in a template"),
    "mutation": ("{{ v.conventions.append(1) }}", 1, "not allowed in a template"),
    "not-utf8": (b"ok\n\xff\xfe{{ x }}", 2, "is not UTF-8"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_template_error_is_one_line_naming_template_and_line(capsys, tmp_path, case):
    source, line, words = CASES[case]
    path = template(tmp_path, source)
    started = time.perf_counter()
    msg = refused(capsys, "derive", "gpt2", "--template", path)
    assert msg.startswith(f"symcalc: error: {path}:{line}: "), msg
    assert words in msg, msg
    assert time.perf_counter() - started < 20


def test_error_in_an_included_template_names_that_template(capsys, tmp_path):
    template(tmp_path, "a\nb\n{{ 1/0 }}\n", "inner.md.j2")
    path = template(tmp_path, "{% include 'inner.md.j2' %}")
    msg = refused(capsys, "derive", "gpt2", "--template", path)
    assert msg.startswith("symcalc: error: inner.md.j2:3: ZeroDivisionError"), msg
    template(tmp_path, b"\n\n\xff", "bad.md.j2")
    path = template(tmp_path, "{% include 'bad.md.j2' %}")
    msg = refused(capsys, "derive", "gpt2", "--template", path)
    assert msg.startswith("symcalc: error: bad.md.j2:3: is not UTF-8"), msg


def test_tex_template_errors_too(capsys, tmp_path):
    path = template(tmp_path, "\\section{x}\n((( 1/0 )))\n", "t.tex.j2")
    msg = refused(capsys, "derive", "gpt2", "--format", "tex", "--template", path)
    assert msg.startswith(f"symcalc: error: {path}:2: ZeroDivisionError")
    msg = refused(capsys, "handout", "gpt2", "-o", tmp_path / "h.tex", "--template", path)
    assert msg.startswith(f"symcalc: error: {path}:2: ZeroDivisionError")


def test_render_time_is_bounded(capsys, tmp_path, monkeypatch):
    import symcalc.render.templates as templates

    monkeypatch.setattr(templates, "TIME_LIMIT", 0.5)
    path = template(tmp_path, "{% for i in range(100000) %}{% for j in range(100000) %}"
                              "{% endfor %}{% endfor %}")
    started = time.perf_counter()
    msg = refused(capsys, "derive", "gpt2", "--template", path)
    assert "took more than 0.5 s" in msg and time.perf_counter() - started < 10


def test_output_size_is_bounded(capsys, tmp_path, monkeypatch):
    import symcalc.render.templates as templates

    monkeypatch.setattr(templates, "OUTPUT_LIMIT", 100_000)
    path = template(tmp_path, "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}")
    msg = refused(capsys, "derive", "gpt2", "--template", path)
    assert "renders more than 100,000 characters" in msg


def test_include_does_not_follow_links_out_of_the_folder(capsys, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "link.txt").symlink_to(outside / "secret.txt")
    (folder / "dir").symlink_to(outside, target_is_directory=True)
    for name in ("link.txt", "dir/secret.txt"):
        path = template(folder, f"{{% include '{name}' %}}")
        msg = refused(capsys, "derive", "gpt2", "--template", path)
        assert "links out of the template folder" in msg and "TOP SECRET" not in msg


def test_includes_inside_the_folder_and_package_templates_work(capsys, tmp_path):
    (tmp_path / "part.md.j2").write_text("part: {{ v.title }}\n", encoding="utf-8")
    (tmp_path / "same.md.j2").symlink_to(tmp_path / "part.md.j2")  # a link inside is fine
    path = template(tmp_path, "{% include 'part.md.j2' %}{% include 'same.md.j2' %}"
                              "{% from '_derivation.md.j2' import references %}ok\n")
    assert main(["derive", "gpt2", "--template", str(path)]) == 0
    assert capsys.readouterr().out == "part: Parameters of gpt2\npart: Parameters of gpt2\nok\n"


def test_latex_for_user_templates_reads_only_its_folder(tmp_path, monkeypatch):
    """The environment restricts LaTeX's file access (checked without LaTeX installed)."""
    import symcalc.render.handout as rh

    env = rh.latex_environment(str(tmp_path))
    assert env["openin_any"] == "p" and env["openout_any"] == "p"
    assert env["TEXMFOUTPUT"] == str(tmp_path) and env["shell_escape"] == "f"


@pytest.mark.skipif(not shutil.which("pdflatex"), reason="pdflatex not installed "
                    "(`which pdflatex` finds nothing here)")
@pytest.mark.parametrize("payload", [r"\input{/etc/passwd}", r"\input{../../../../etc/passwd}",
                                     r"\verbatiminput{/etc/hostname}"])
def test_user_tex_template_cannot_read_outside_files(tmp_path, payload):
    import symcalc.render.handout as rh
    from symcalc.errors import SymcalcError

    tex = ("\\documentclass{article}\\usepackage{verbatim}\\begin{document}"
           f"{payload}\\end{{document}}\n")
    out = tmp_path / "h.pdf"
    with pytest.raises(SymcalcError):
        rh.compile_pdf(tex, out)
    assert not out.exists()
    done = subprocess.run(["pdflatex", "-version"], capture_output=True, text=True)
    assert done.returncode == 0


@pytest.mark.skipif(not shutil.which("pdflatex"), reason="pdflatex not installed "
                    "(`which pdflatex` finds nothing here)")
def test_a_cross_reference_gets_its_second_run(tmp_path):
    """One run sets symcalc's own documents; a template with \\label and \\ref gets the rerun its
    log asks for, so the PDF shows the section number, not ??."""
    import symcalc.render.handout as rh

    tex = ("\\documentclass{article}\\begin{document}See section~\\ref{s} (xyzzy)."
           "\\section{One}\\label{s}\\end{document}\n")
    out = tmp_path / "h.pdf"
    rh.compile_pdf(tex, out)
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout
    assert "See section 1 (xyzzy)" in text, text


def test_format_width_from_an_argument_is_bounded(capsys, tmp_path):
    path = template(tmp_path, "{{ '{:>{}}'.format(1, 10**9) }}")
    msg = refused(capsys, "derive", "gpt2", "--template", path)
    assert "more than 1,000,000" in msg


# issue 25 item 2: translations stay in the sandbox ------------------------------------------------

SECRET = "symcalc-secret-2f9c"  # put in the environment; no template may print it

TRANSLATION_PAYLOADS = {  # the payloads and their kin, each refused on its line
    "environ": '{{ _("{f.__globals__[_gettext].os.environ}", f=_) }}',
    "globals": '{{ _("{f.__globals__}", f=_) }}',
    "builtins": '{{ _("{f.__globals__[__builtins__][open]}", f=_) }}',
    "class": '{{ _("{s.__class__.__mro__}", s="x") }}',
    "init": '{{ _("{s.__init__}", s="x") }}',
    "function": '{{ _("{f}", f=_) }}',
    "method": '{{ _("{s.upper}", s="x") }}',
    "repr": '{{ _("{s.upper!r}", s="x") }}',
    "gettext": '{{ _("{g}", g=gettext) }}',
    "data": '{{ _("{v}", v=v) }}',
    "data-attr": '{{ _("{v.sections.__class__}", v=v) }}',
    "width": '{{ _("{s:>999999999}", s="x") }}',
    "nested-width": '{{ _("{s:{w}}", s="x", w=10**9) }}',
    "format-map": '{{ _("{s.format_map}", s="x") }}',
}


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("case", sorted(TRANSLATION_PAYLOADS))
def test_translation_payloads_stay_in_the_sandbox(capsys, tmp_path, monkeypatch, case, lang):
    """_() formatted with str.format outside the sandbox: the first payload printed the
    whole environment, others <built-in function ...>. Every one is one line naming the
    template's line, and nothing of Python or the environment is printed."""
    monkeypatch.setenv("SYMCALC_TEST_SECRET", SECRET)
    path = template(tmp_path, "ok\n" + TRANSLATION_PAYLOADS[case] + "\n")
    msg = refused(capsys, "derive", "gpt2", "--lang", lang, "--template", path)
    assert msg.startswith(f"symcalc: error: {path}:2: "), msg
    assert SECRET not in msg and "<built-in" not in msg and "<function" not in msg, msg


def test_translations_still_format_text_and_numbers(capsys, tmp_path):
    """What _() is for keeps working in a user template: a message id translated, its
    fields filled with text and numbers, format specs and conversions on them."""
    path = template(tmp_path, '{{ _("context {n}", n=4096) }}|{{ _("The models") }}|'
                              '{{ _("{a} and {b:>4} {c:,} {d!r}", a=v.title, b=3, c=1234567, '
                              'd="x") }}\n')
    for lang, words in (("en", "context 4096|The models|"), ("ru", "контекст 4096|Модели|")):
        assert main(["derive", "gpt2", "--lang", lang, "--template", str(path)]) == 0
        out = capsys.readouterr().out
        assert out.startswith(words) and "and    3 1,234,567 'x'" in out, out


def test_package_templates_included_by_a_user_template_keep_their_words(capsys, tmp_path):
    """The package's templates, included by a user template, run with the sandboxed _()
    too (their fields are text): the same document as the built-in one."""
    path = template(tmp_path, "{% include 'derivation.md.j2' %}")
    for lang in ("en", "ru", "zh"):
        assert main(["derive", "gpt2", "--lang", lang, "--template", str(path)]) == 0
        mine = capsys.readouterr().out
        assert main(["derive", "gpt2", "--lang", lang]) == 0
        assert mine == capsys.readouterr().out

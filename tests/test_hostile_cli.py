"""Issue 10, part A: usage errors, output destinations, empty option values.

Every bad input ends in exit status 2 and exactly one line ``symcalc: error: FIELD: RULE``."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from symcalc.cli import main

ONE_LINE = re.compile(r"^symcalc: error: [^\n]+: [^\n]+$")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv) -> str:
    """Run ``argv``; assert it is refused with one line; return the line."""
    code, out, err = run(capsys, *argv)
    assert code == 2, (out, err)
    assert out == ""
    assert ONE_LINE.match(err.rstrip("\n")) and err.count("\n") == 1, err
    return err.rstrip("\n")


# item 1: usage errors -----------------------------------------------------------------------

@pytest.mark.parametrize("argv,field", [
    (["report", "gpt2", "--bogus"], "--bogus"),
    (["frob"], "COMMAND"),
    (["report"], "MODEL"),
    (["report", "gpt2", "--batch"], "--batch"),
    (["derive", "gpt2", "--unit", "Q"], "--unit"),
    (["sweep", "gpt2", "--exact", "--float"], "--float"),
    (["report", "gpt2", "--s", "3"], "--s"),
    (["report", "gpt2", "--", "-x"], "-x"),
    (["report", "gpt2", ""], "''"),
])
def test_usage_error_names_the_program_once(capsys, argv, field):
    line = refused(capsys, *argv)
    assert line.count("symcalc") == 1 or "symcalc COMMAND --help" in line, line
    assert line.startswith(f"symcalc: error: {field}: "), line


def test_no_command_is_one_line_on_stderr(capsys):
    line = refused(capsys)
    assert line.startswith("symcalc: error: COMMAND: is required")


def test_no_command_in_a_fresh_interpreter():
    done = subprocess.run([sys.executable, "-m", "symcalc.cli"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert ONE_LINE.match(done.stderr.rstrip("\n")) and done.stderr.count("\n") == 1


def test_help_still_works(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0 and "COMMAND" in capsys.readouterr().out


def test_newline_in_an_argument_stays_on_one_line(capsys):
    line = refused(capsys, "report", "gpt2", "--bogus\nsecond line\x1b[2J")
    assert "\x1b" not in line


@pytest.mark.parametrize("name", [".pdf", ".md", ".tex", "out/.pdf"])
def test_output_that_is_only_an_extension(capsys, tmp_path, name):
    (tmp_path / "out").mkdir()
    line = refused(capsys, "handout", "gpt2", "-o", tmp_path / name if "/" in name else name)
    assert "is only an extension" in line and "got" not in line


@pytest.mark.parametrize("argv,example", [
    (["derive", "gpt2", "-o", ".md"], "derivation.md"),
    (["derive", "gpt2", "--format", "tex", "-o", ".tex"], "derivation.tex"),
    (["derive", "gpt2", "--format", "tex", "--standalone", "-o", "out/.tex"], "derivation.tex"),
    (["derive", "gpt2", "--exercises", "-o", ".md"], "derivation.md"),
    (["page", "-o", ".html"], "calc.html"),
    (["page", "gpt2", "-o", "out/.html"], "calc.html"),
    (["handout", "gpt2", "-o", ".bashrc"], "handout.md"),
])
def test_every_output_name_is_more_than_an_extension(capsys, tmp_path, monkeypatch, argv,
                                                     example):
    """Issue 26 item 5: derive and page wrote hidden files such as '.md' and '.html';
    they are refused as handout refuses them, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    line = refused(capsys, *argv)
    assert line.startswith("symcalc: error: -o: ") and "is only an extension" in line, line
    assert f"e.g. {example}" in line
    assert [p.name for p in tmp_path.rglob("*")] == ["out"]


def test_hidden_names_with_a_stem_still_write(capsys, tmp_path):
    """'.notes.md' has a name before its extension: written as asked."""
    code, out, err = run(capsys, "derive", "gpt2", "-o", tmp_path / ".notes.md")
    assert code == 0 and err == ""
    assert "124,439,808" in (tmp_path / ".notes.md").read_text()


# item 2: the destination is checked before any build -------------------------------------------

def _no_build(monkeypatch):
    """Make any build fail loudly: the destination must be refused first."""
    import symcalc.commands.handout as cmd
    import symcalc.render.handout as rh

    def boom(*a, **k):
        raise AssertionError("built before the destination was checked")

    monkeypatch.setattr(rh, "compile_pdf", boom)
    monkeypatch.setattr(rh, "handout_latex", boom)
    monkeypatch.setattr(rh, "handout_markdown", boom)
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    return cmd


@pytest.mark.parametrize("kind", [".pdf", ".tex", ".md"])
@pytest.mark.parametrize("where,words", [
    ("missing/h", "does not exist"),
    ("folder", "is a folder"),
    ("folder/", "is a folder"),
    ("file.txt/h", "is a file, not a folder"),
])
def test_handout_destination_checked_before_the_build(capsys, tmp_path, monkeypatch, kind,
                                                       where, words):
    _no_build(monkeypatch)
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("x")
    target = str(tmp_path / where) + ("" if where.endswith("folder") or where.endswith("/")
                                      else kind)
    line = refused(capsys, "handout", "gpt2", "-o", target)
    assert line.startswith("symcalc: error: -o: ") and words in line, line


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc (not writable)")
def test_handout_unwritable_place_checked_before_the_build(capsys, monkeypatch):
    _no_build(monkeypatch)
    line = refused(capsys, "handout", "gpt2", "-o", "/proc/handout.pdf")
    assert "cannot write" in line


def test_derive_destination_checked(capsys, tmp_path):
    line = refused(capsys, "derive", "gpt2", "-o", tmp_path / "missing" / "d.md")
    assert "does not exist" in line
    assert not list(tmp_path.iterdir())


def test_pdf_failure_keeps_its_log_next_to_the_output(tmp_path, monkeypatch):
    """The log named in the message exists after the command returns; LaTeX runs with file
    access restricted to its build folder and no shell escape."""
    import symcalc.render.handout as rh
    from symcalc.errors import SymcalcError

    calls = []

    def fake_run(cmd, cwd, env, **kw):
        calls.append((cmd, env))
        (Path(cwd) / "handout.log").write_text("This is pdfTeX\n! Undefined control sequence.\n")
        return subprocess.CompletedProcess(cmd, 1, "", "")

    monkeypatch.setattr(rh.shutil, "which", lambda name: f"/usr/bin/{name}" if name == "pdflatex" else None)
    monkeypatch.setattr(rh.subprocess, "run", fake_run)
    out = tmp_path / "h.pdf"
    with pytest.raises(SymcalcError) as err:
        rh.compile_pdf("\\documentclass{article}\\begin{document}\\foo\\end{document}", out)
    assert "! Undefined control sequence." in str(err.value)
    log = tmp_path / "h.log"
    assert f"log: {log}" in str(err.value) and "Undefined control" in log.read_text()
    cmd, env = calls[0]
    assert "-no-shell-escape" in cmd
    assert env["openin_any"] == "p" and env["openout_any"] == "p"


# item 6: empty option values are refused, never ignored ----------------------------------------

@pytest.mark.parametrize("option,allowed", [
    ("--assume", "kaplan"), ("--form", "seed-layer-mixed"), ("--against", "preset"),
])
def test_empty_option_value_is_refused(capsys, option, allowed):
    line = refused(capsys, "derive", "gpt2", option, "")
    assert line.startswith(f"symcalc: error: {option}: ") and allowed in line


# issue 26 item 4: no option is silently ignored -------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["derive", "gpt2", "--template", ""], ["derive", "gpt2", "--template", " "],
    ["handout", "gpt2", "--template", "", "-o", "{tmp}/h.md"],
])
def test_empty_template_is_refused(capsys, tmp_path, argv):
    """--template '' used the built-in template, exit 0; now it is refused, nothing written."""
    line = refused(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert line.startswith("symcalc: error: --template: must name a template file")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("option,value", [
    ("--multiple-of", v) for v in ("abc", "", "0", "-1", "1.5", "²", str(10**15 + 1), "64", "1")
] + [("--keep", ""), ("--keep", "d_ff/d"), ("--gpus", ""), ("--gpus", "g.toml")])
def test_solving_options_without_for_are_refused(capsys, option, value):
    """derive's solving options apply only with --for; they were ignored (exit 0)."""
    line = refused(capsys, "derive", "gpt2", option, value)
    assert line.startswith(f"symcalc: error: {option}: applies only with --for"), line


@pytest.mark.parametrize("value,rule", [
    ("abc", "must be a positive integer"), ("", "must be a positive integer"),
    ("0", "must be a positive integer"), ("-1", "must be a positive integer"),
    ("1.5", "must be a positive integer"), ("²", "must be a positive integer"),
    (str(10**15 + 1), "must be at most 10**15"),
])
@pytest.mark.parametrize("command", ["derive", "solve"])
def test_multiple_of_values_with_for(capsys, command, value, rule):
    line = refused(capsys, command, "gpt2", "--for", "d", "--target", "params.total=7e9",
                   "--multiple-of", value)
    assert line.startswith(f"symcalc: error: --multiple-of: {rule}"), line


def test_multiple_of_still_applies_with_for(capsys):
    code, out, err = run(capsys, "solve", "gpt2", "--for", "d", "--target", "params.total=7e9",
                         "--multiple-of", "64", "--json")
    import json

    got = json.loads(out)
    assert code == 0 and got["below"] % 64 == 0 and got["above"] % 64 == 0, got


@pytest.mark.parametrize("argv,line_start", [
    (["closed-form", "gpt2", "--keep", ""], "--keep: applies only with --diff"),
    (["closed-form", "gpt2", "--keep", "d_ff/d"], "--keep: applies only with --diff"),
    (["solve", "gpt2", "--for", "d", "--target", "params.total=7e9", "--gpus", ""],
     "--gpus: must name a TOML file"),
    (["report", "gpt2", "--gpu", "H100", "--gpus", ""], "--gpus: must name a TOML file"),
])
def test_options_that_need_another_say_which(capsys, argv, line_start):
    assert refused(capsys, *argv).startswith(f"symcalc: error: {line_start}")

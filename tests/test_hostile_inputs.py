"""Issue 10, part B: input files, sizes and parsing.

Every bad input ends in exit status 2 and exactly one line ``symcalc: error: FIELD: RULE``
(never a traceback, a hang or a silently wrong number). Each test failed on the code before
part B."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from symcalc.cli import main

ONE_LINE = re.compile(r"^symcalc: error: [^\n]+: [^\n]+$")
TINY = {"family": "decoder", "L": 2, "d": 64, "n_h": 4, "d_ff": 256, "V": 100}
GPT2 = {"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 100,
        "n_positions": 128}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv) -> str:
    """Run ``argv``; assert it is refused with one line; return the line."""
    code, out, err = run(capsys, *argv)
    assert code == 2, (out[:300], err)
    assert out == ""
    assert ONE_LINE.match(err.rstrip("\n")) and err.count("\n") == 1, err
    return err.rstrip("\n")


def toml_of(fields: dict) -> str:
    return "\n".join(f"{k} = {json.dumps(v)}" for k, v in fields.items()) + "\n"


# --dtype ² ---------------------------------------------------------------------------------

@pytest.mark.parametrize("option,value", [("--dtype", "²"), ("--kv-dtype", "bits¹"),
                                          ("--dtype", "bits١٢"), ("--kv-dtype", "³")])
def test_superscript_dtype_is_one_line(capsys, option, value):
    line = refused(capsys, "report", "gpt2", option, value)
    assert f"error: {option[2:]}: must be one of" in line


def test_bit_widths_still_work(capsys):
    code, out, _ = run(capsys, "report", "gpt2", "--kv-dtype", "bits3", "--dtype", "4")
    assert code == 0 and "bits3" in out


# files that are not UTF-8 ------------------------------------------------------------------

def test_config_json_not_utf8(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(b'{"model_type": "gpt2",\n "n_layer": 2\xff}')
    line = refused(capsys, "report", path)
    assert "config.json: is not UTF-8 text (byte 0xff at line 2, column 14)" in line


def test_spec_toml_not_utf8(capsys, tmp_path):
    path = tmp_path / "m.toml"
    path.write_bytes(toml_of(TINY).encode() + b'name = "\xe9"\n')
    assert "m.toml: is not UTF-8 text" in refused(capsys, "report", path)


def test_csv_not_utf8(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"L,d\n2,\xff\n")
    assert "t.csv: is not UTF-8 text" in refused(capsys, "sweep", "gpt2", "--table", path)


def test_csv_field_over_the_csv_limit(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('L\n"' + "1" * 200_000 + '"\n')
    assert "t.csv: is not a valid CSV table" in refused(capsys, "sweep", "gpt2", "--table", path)


# nesting -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,text", [
    ("config.json", "[" * 100_000),
    ("config.json", '{"a":' * 100_000),
    ("config.json", "[" * 150 + "]" * 150),  # parses, but deeper than the limit
    ("deep.toml", "x = " + "[" * 100_000),
    ("deep.toml", "x = " + "{a=" * 100_000),
])
def test_deep_nesting_is_one_line(capsys, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert "nests deeper than 100 levels" in refused(capsys, "report", path)


# spec = 5 ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,kind", [
    ("spec = 5\n", "int"), ('spec = "abc"\n', "str"), ("spec = [1, 2]\n", "an array"),
    ("[[spec]]\n" + toml_of(TINY), "an array"), ("spec = true\n", "bool"),
])
def test_spec_that_is_not_a_table(capsys, tmp_path, text, kind):
    path = tmp_path / "m.toml"
    path.write_text(text)
    line = refused(capsys, "report", path)
    assert "m.toml: spec: must be a table of spec fields ([spec])" in line and kind in line


def test_spec_table_still_works(capsys, tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('name = "tiny"\n[spec]\n' + toml_of(TINY))
    code, out, _ = run(capsys, "report", path, "--json")
    assert code == 0 and json.loads(out)


# float sizes -------------------------------------------------------------------------------

@pytest.mark.parametrize("value,shown", [("2.0", "2.0"), ("1e30", "1e+30"), ("inf", "inf"),
                                         ("nan", "nan")])
def test_toml_float_sizes_refused(capsys, tmp_path, value, shown):
    path = tmp_path / "m.toml"
    path.write_text(toml_of({k: v for k, v in TINY.items() if k != "L"}) + f"L = {value}\n")
    line = refused(capsys, "report", path)
    assert line.endswith(f"L: must be a positive integer (got {shown})")


def test_config_json_float_sizes_refused(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(GPT2, n_layer=2.0)))
    line = refused(capsys, "report", path)
    assert line.endswith("n_layer (L): must be a positive integer (got 2.0)")


def test_make_spec_refuses_whole_floats():
    from symcalc.algebra.spec import make_spec
    from symcalc.errors import SymcalcError

    with pytest.raises(SymcalcError, match=r"^d: must be a positive integer \(got 64\.0\)$"):
        make_spec(**dict(TINY, name="tiny", d=64.0))


def test_hub_configs_still_read():
    from symcalc.inputs.hf import load_config, spec_from_config

    paths = sorted(Path(__file__).parent.glob("families/*/hub-*.json"))
    assert len(paths) >= 7
    for path in paths:
        spec_from_config(load_config(path))


# sizes too large to render -----------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["--set", f"d={10**200}", "--set", "n_h=1"],
    ["--set", "d=1" + "0" * 5000, "--json"],
    ["--set", "V=1_000_000_000_000_001"],
    ["--batch", "9" * 400],
    ["--seq-len", str(10**16)],
    ["--context", str(10**16)],
])
def test_huge_sizes_refused_with_the_limit(capsys, argv):
    line = refused(capsys, "report", "gpt2", *argv)
    assert "must be at most 10**15" in line


def test_huge_sizes_in_files_refused(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GPT2)[:-1] + ', "n_embd": ' + "9" * 200 + "}")
    assert "must be at most 10**15" in refused(capsys, "report", path)
    path.write_text('{"n_embd": ' + "9" * 5000 + "}")  # over Python's 4,300-digit limit
    line = refused(capsys, "report", path)
    assert "config.json: is not valid JSON" in line and "more than 4,300 digits" in line
    assert "set_int_max_str_digits" not in line  # Python's advice, not the user's
    spec = tmp_path / "m.toml"
    spec.write_text(toml_of(TINY) + "V = " + "9" * 5000 + "\n")
    assert "m.toml: is not valid TOML for symcalc (an integer of more than 4,300" in \
        refused(capsys, "report", spec)
    spec.write_text(toml_of(dict(TINY, V=10**16)))
    assert "V: must be at most 10**15" in refused(capsys, "report", spec)


@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_sizes_at_the_limit_render(capsys, fmt):
    """Every size at 10**15 at once: the readable table and JSON render (no float overflow,
    no json digit limit)."""
    big = str(10**15)
    argv = ["report", "mixtral-8x7b", "--set", f"d={big}", "--set", f"n_h={big}",
            "--set", f"n_kv={big}", "--set", f"d_ff={big}", "--set", f"V={big}",
            "--set", f"L={big}", "--set", f"d_h={big}", "--set", f"E={big}", "--set", f"k={big}",
            "--batch", big, "--seq-len", big, "--context", big, *fmt]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    if fmt:
        json.loads(out)


def test_grid_and_table_values_over_the_limit(capsys, tmp_path):
    assert "--grid V: must be at most 10**15" in refused(capsys, "sweep", "gpt2", "--grid",
                                                          f"V={10**16}", "--exact")
    path = tmp_path / "t.csv"
    path.write_text("V\n1" + "0" * 5000 + "\n")
    assert "must be at most 10**15" in refused(capsys, "sweep", "gpt2", "--table", path)


# paths: too long, unreadable, FIFO, /dev/zero, too large ----------------------------------

def test_model_name_over_the_file_name_limit(capsys):
    for model in ["a" * 300 + ".json", "a" * 300 + ".toml", "a" * 300]:
        line = refused(capsys, "report", model)
        assert line.startswith("symcalc: error: MODEL: ")
        assert len(line) < 400


def test_unreadable_path_simulated(capsys, tmp_path, monkeypatch):
    """CI runs as root, where chmod 000 does not stop a read: make the open fail."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GPT2))
    real_open = os.open

    def deny(p, *a, **k):
        if os.fspath(p) == str(path):
            raise PermissionError(13, "Permission denied", os.fspath(p))
        return real_open(p, *a, **k)

    monkeypatch.setattr(os, "open", deny)
    assert "config.json: cannot be read (Permission denied)" in refused(capsys, "report", path)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_path_chmod(capsys, tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(toml_of(TINY))
    path.chmod(0)
    try:
        assert "cannot be read (Permission denied)" in refused(capsys, "report", path)
    finally:
        path.chmod(0o600)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
@pytest.mark.parametrize("name", ["config.json", "m.toml", "t.csv", "folder"])
def test_fifo_is_refused_without_hanging(capsys, tmp_path, name):
    target = tmp_path / name
    if name == "folder":
        target.mkdir()
        target = target / "config.json"
    os.mkfifo(target)
    argv = ["sweep", "gpt2", "--table", target] if name.endswith(".csv") else \
        ["report", target.parent if name == "folder" else target]
    start = time.monotonic()
    line = refused(capsys, *argv)
    assert "is not a regular file" in line and time.monotonic() - start < 5


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
@pytest.mark.parametrize("name", ["config.json", "m.toml", "t.csv"])
def test_dev_zero_is_refused(capsys, tmp_path, name):
    link = tmp_path / name
    link.symlink_to("/dev/zero")
    argv = ["sweep", "gpt2", "--table", link] if name.endswith(".csv") else ["report", link]
    assert "is not a regular file" in refused(capsys, *argv)


@pytest.mark.parametrize("name", ["config.json", "m.toml", "t.csv"])
def test_files_over_the_size_limit(capsys, tmp_path, name):
    path = tmp_path / name
    with open(path, "wb") as f:
        f.truncate(4 * 1024 * 1024 + 1)  # sparse: no 4 MiB written
    argv = ["sweep", "gpt2", "--table", path] if name.endswith(".csv") else ["report", path]
    line = refused(capsys, *argv)
    assert "symcalc reads files of at most 4 MiB" in line


def test_read_text_rules(tmp_path):
    from symcalc.errors import SymcalcError
    from symcalc.inputs.files import read_text

    path = tmp_path / "f"
    path.write_text("ok é")
    assert read_text(path) == "ok é"
    with pytest.raises(SymcalcError, match="is a folder"):
        read_text(tmp_path)
    with pytest.raises(SymcalcError, match="cannot be read"):
        read_text(tmp_path / "missing")
    path.write_text("x" * 11)
    with pytest.raises(SymcalcError, match="at most 10 bytes"):
        read_text(path, limit=10)


# sweep grids too large for memory ----------------------------------------------------------

@pytest.mark.parametrize("grid,shown", [
    (["L=1:1000000000"], "1,000,000,000 values"),
    (["L=1:100000", "d=1:100000"], "100,000 x 100,000 = 10,000,000,000 points"),
    (["L=1:10000", "d=1:10000", "V=1:100"], "= 10,000,000,000 points"),
])
def test_grid_too_large_is_refused_before_allocating(capsys, grid, shown):
    argv = ["sweep", "gpt2"] + [x for g in grid for x in ("--grid", g)]
    start = time.monotonic()
    line = refused(capsys, *argv)
    assert shown in line and "at most 10,000,000 points" in line
    assert time.monotonic() - start < 5


def test_grid_too_large_in_python():
    from symcalc.errors import SymcalcError
    from symcalc.fast.sweep import sweep

    with pytest.raises(SymcalcError, match="at most 10,000,000 points"):
        sweep("gpt2", grid={"L": range(1, 10**9), "d": [64]})


# CSV header --------------------------------------------------------------------------------

def test_csv_header_with_a_column_twice(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("L,d,L\n2,64,4\n")
    assert "t.csv header: names the column 'L' twice" in refused(capsys, "sweep", "gpt2",
                                                                 "--table", path)


# --set L=3,2 and --set name=1 --------------------------------------------------------------

@pytest.mark.parametrize("argv,field", [
    (["--set", "L=3,2"], "--set L"), (["--set", "L=32_00"], "--set L"),
    (["--set", "L=1_2"], "--set L"), (["--set", "L=3,200_000"], "--set L"),
    (["--set", "L=１２"], "--set L"), (["--set", "L=+3"], "--set L"),
    (["--batch", "3,2"], "batch"), (["--seq-len", "1_0"], "seq-len"),
])
def test_misplaced_separators_refused(capsys, argv, field):
    assert f"error: {field}: must be" in refused(capsys, "report", "gpt2", *argv)


@pytest.mark.parametrize("text", ["3200", "3,200", "3_200", "003200"])
def test_thousands_separators_accepted(capsys, text):
    from symcalc.inputs import resolve

    assert resolve("gpt2", [f"L={text}"]).L == 3200
    code, out, _ = run(capsys, "report", "gpt2", "--set", f"L={text}", "--batch", text, "--json")
    assert code == 0 and json.loads(out)


def test_grid_separators(capsys):
    from symcalc.errors import SymcalcError
    from symcalc.fast.sweep import parse_values

    assert parse_values("d", "1_024,2048") == [1024, 2048]
    for bad in ("1_0", "10_24", "１"):
        with pytest.raises(SymcalcError, match="--grid d"):
            parse_values("d", bad)


@pytest.mark.parametrize("name", ["1", "yes", "0", "off", "true"])
def test_a_name_is_text(capsys, name):
    code, out, _ = run(capsys, "report", "gpt2", "--set", f"name={name}", "--json")
    assert code == 0 and json.loads(out)["model"] == name


def test_switches_take_only_true_or_false(capsys):
    from symcalc.inputs import resolve

    assert resolve("gpt2", ["ffn_bias=no"]).ffn_bias is False
    assert resolve("gpt2", ["ffn_bias=1"]).ffn_bias is True
    assert "--set pooler: must be true or false (got 'maybe')" in refused(
        capsys, "report", "gpt2", "--set", "pooler=maybe")


def test_counts_from_the_command_line(capsys):
    from symcalc.inputs import resolve

    assert resolve("deepseek-v2-lite", ["L_dense=2"]).L_dense == 2
    assert resolve("deepseek-v2-lite", ["L_dense=0"]).L_dense == 0


# the hub cache, presets, family files: the same reading rules ------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_hub_cache_reads_only_regular_files(capsys, tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    folder = hub / "models--acme--tiny"
    snap = folder / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (snap / "config.json").write_bytes(b'{"model_type": "gpt2"\xff}')
    (folder / "refs").mkdir()
    os.mkfifo(folder / "refs" / "main")  # a FIFO ref: ignored, the newest snapshot is used
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    start = time.monotonic()
    line = refused(capsys, "report", "acme/tiny")
    assert "config.json: is not UTF-8 text" in line and time.monotonic() - start < 5


def test_family_file_not_utf8(tmp_path):
    from symcalc.errors import SymcalcError
    from symcalc.inputs.family_data import load_family

    (tmp_path / "llama.toml").write_bytes(b'model_type = "llama"\ndescription = "\xff"\n')
    with pytest.raises(SymcalcError, match="llama.toml: is not UTF-8 text"):
        load_family("llama", str(tmp_path))


def test_presets_use_the_same_reader(monkeypatch):
    """A preset edited since the compiled store was written is read by the reader every file
    goes through (an unchanged one comes from the store, parsed ahead of time)."""
    from symcalc import compiled
    from symcalc.inputs import files, presets

    seen = []
    real = files.read_text
    monkeypatch.setattr(files, "read_text", lambda p, *a, **k: seen.append(p) or real(p, *a, **k))
    presets.load.cache_clear()
    try:
        fresh = presets.load("gpt2")
        assert seen == []  # from the store
        presets.load.cache_clear()
        monkeypatch.setattr(compiled, "entry", lambda *a: None)  # as if gpt2.toml were edited
        assert presets.load("gpt2") == fresh
    finally:
        presets.load.cache_clear()
    assert [os.path.basename(p) for p in seen] == ["gpt2.toml"]


# paths whose status cannot be read (issue 26 item 2, issue 25 item 5) ----------------------

# every command that takes MODEL, with what else it needs to reach the model
MODEL_COMMANDS = {
    "report": [], "closed-form": [], "forms": [], "derive": [],
    "handout": ["-o", "{out}/h.md"], "sweep": ["--grid", "L=1,2"],
    "solve": ["--for", "d", "--target", "params.total=7e9"], "page": ["-o", "{out}/p.html"],
}


def _argv(command, model, out):
    return [command, model] + [a.replace("{out}", str(out)) for a in MODEL_COMMANDS[command]]


def _closed_folder(base: Path) -> Path:
    """base/closed/x.json with base/closed of mode 0."""
    closed = base / "closed"
    closed.mkdir()
    (closed / "x.json").write_text(json.dumps(GPT2))
    closed.chmod(0)
    return closed / "x.json"


def _stat_denied(path) -> str:
    try:
        os.stat(path)
    except PermissionError:
        return "denied"
    return "readable"


@pytest.mark.parametrize("command", sorted(MODEL_COMMANDS))
def test_model_in_a_folder_of_mode_0(capsys, command):
    """`symcalc COMMAND d/x.json` with d of mode 0, as a user who may not enter d: one line,
    exit 2 (it was a PermissionError traceback, exit 1). As root the command runs in a child
    that drops to uid 65534, which really cannot read the path."""
    import shutil

    import other_user

    if os.name != "posix" or (os.geteuid() == 0 and not other_user.can_switch_user()):
        pytest.skip("needs POSIX permissions and a user they apply to")
    base = other_user.open_folder()
    try:
        model = _closed_folder(base)
        argv = _argv(command, model, base)
        main([str(a) for a in _argv(command, base / "missing" / "x.json", base)])  # imports
        capsys.readouterr()
        uid = other_user.NOBODY if os.geteuid() == 0 else None
        code, out, err, proof = other_user.main_as(uid, argv, check=lambda: _stat_denied(model))
    finally:
        (base / "closed").chmod(0o700)
        shutil.rmtree(base)
    assert proof == "denied"  # the path really is closed to the user the command ran as
    assert code == 2 and out == "", (out, err)
    assert err.count("\n") == 1 and ONE_LINE.match(err.rstrip("\n")), err
    assert err.startswith(f"symcalc: error: MODEL: '{model}' cannot be read (Permission denied)")


@pytest.mark.skipif(_stat_denied("/proc/1/root/x.json") != "denied",
                    reason="/proc/1/root is readable here (a privileged container)")
@pytest.mark.parametrize("command", sorted(MODEL_COMMANDS))
def test_model_under_proc_1_root(capsys, tmp_path, command):
    """The issue's case: `/proc/1/root/x.json`, whose status even root may not read."""
    line = refused(capsys, *_argv(command, "/proc/1/root/x.json", tmp_path))
    assert line == "symcalc: error: MODEL: '/proc/1/root/x.json' cannot be read (Permission denied)"


@pytest.mark.parametrize("command", ["derive", "handout", "page"])
def test_output_in_a_folder_of_mode_0(capsys, command):
    """`-o d/out.md` with d of mode 0: one line naming -o, before any work."""
    import shutil

    import other_user

    if os.name != "posix" or (os.geteuid() == 0 and not other_user.can_switch_user()):
        pytest.skip("needs POSIX permissions and a user they apply to")
    base = other_user.open_folder()
    closed = base / "closed"
    closed.mkdir()
    closed.chmod(0)
    target = closed / ("p.html" if command == "page" else "h.md")
    argv = [command] + (["gpt2"] if command != "page" else []) + ["-o", target]
    try:
        main([str(a) for a in argv[:-1] + [base / "missing" / target.name]])  # imports
        capsys.readouterr()
        uid = other_user.NOBODY if os.geteuid() == 0 else None
        code, out, err, proof = other_user.main_as(uid, argv, check=lambda: _stat_denied(target))
    finally:
        closed.chmod(0o700)
        shutil.rmtree(base)
    assert proof == "denied"
    assert code == 2 and out == "" and err.count("\n") == 1, (out, err)
    assert err.startswith(f"symcalc: error: -o: cannot write '{target}' (Permission denied)"), err


@pytest.mark.skipif(_stat_denied("/proc/1/root/x.json") != "denied",
                    reason="/proc/1/root is readable here (a privileged container)")
@pytest.mark.parametrize("argv", [
    ["derive", "gpt2", "-o", "/proc/1/root/x.md"], ["handout", "gpt2", "-o", "/proc/1/root/x.md"],
    ["page", "-o", "/proc/1/root/x.html"], ["derive", "gpt2", "--template", "/proc/1/root/x.j2"],
    ["report", "gpt2", "--gpu", "x", "--gpus", "/proc/1/root/x.toml"],
    ["sweep", "gpt2", "--table", "/proc/1/root/x.csv"],
])
def test_other_paths_under_proc_1_root(capsys, argv):
    line = refused(capsys, *argv)
    assert "cannot" in line and "(Permission denied)" in line, line


@pytest.mark.parametrize("argv", [
    ["derive", "gpt2", "-o", "{long}.md"], ["derive", "gpt2", "--format", "tex", "-o", "{long}.tex"],
    ["handout", "gpt2", "-o", "{long}.md"], ["page", "-o", "{long}.html"],
    ["derive", "gpt2", "--template", "{long}.j2"], ["handout", "gpt2", "--template", "{long}",
                                                     "-o", "h.md"],
    ["report", "gpt2", "--gpu", "x", "--gpus", "{long}.toml"],
    ["sweep", "gpt2", "--table", "{long}.csv"], ["page", "{long}.json", "-o", "p.html"],
])
def test_file_names_over_the_system_limit(capsys, tmp_path, monkeypatch, argv):
    """Every file a command reads or writes, named longer than a file name may be: one
    line (it was an OSError traceback for -o and --template)."""
    monkeypatch.chdir(tmp_path)
    line = refused(capsys, *[a.replace("{long}", "a" * 300) for a in argv])
    assert "File name too long" in line and len(line) < 400, line
    assert not list(tmp_path.iterdir())


def test_hub_cache_with_a_home_that_cannot_be_found(capsys, monkeypatch):
    """HF_HOME='~nosuchuser/hf' names no home directory: one line (it was a RuntimeError)."""
    for var in ("HF_HUB_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", "~symcalc-no-such-user/hf")
    line = refused(capsys, "report", "acme/tiny")
    assert line.startswith("symcalc: error: HF_HOME: ") and "home" in line, line
    monkeypatch.delenv("HF_HOME")
    monkeypatch.setenv("HF_HUB_CACHE", "~symcalc-no-such-user")
    assert refused(capsys, "report", "acme/tiny").startswith("symcalc: error: HF_HUB_CACHE: ")


def test_hub_cache_for_a_user_without_a_home(capsys, monkeypatch, tmp_path):
    """No HOME and a uid with no entry in the user database (a container run with --user):
    the hub cache's folder cannot be found; one line saying to set HF_HUB_CACHE."""
    import other_user

    if not other_user.can_switch_user():
        pytest.skip("needs root to run as a uid with no home")
    for var in ("HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    main(["report", "acme/tiny"])  # imports
    capsys.readouterr()
    from pathlib import Path as P

    def home():
        try:
            return str(P.home())
        except RuntimeError:
            return "none"

    # run from /: the checkout may sit in a folder only its owner can enter (a clone into
    # `mktemp -d`), where the other user could not even look for a folder named acme/tiny
    code, out, err, proof = other_user.main_as(
        other_user.unknown_uid(), ["report", "acme/tiny"], check=home, cwd="/",
        env={"HOME": None, "HF_HUB_CACHE": None, "HF_HOME": None, "XDG_CACHE_HOME": None})
    assert proof == "none"  # the child really has no home directory
    assert code == 2 and out == "" and err.count("\n") == 1, (out, err)
    assert err.startswith("symcalc: error: HOME: ") and "HF_HUB_CACHE" in err, err


@pytest.mark.parametrize("memory,bf16", [
    ("9" * 5000 + " GB", "1 TFLOPs"), ("80 GB", "9" * 5000 + " TFLOPs"),
    ("1e" + "9" * 5000 + " GB", "1 TFLOPs"), ("0." + "9" * 5000 + " GB", "1 TFLOPs"),
])
@pytest.mark.parametrize("command", [["report", "gpt2", "--gpu", "X1"],
                                     ["solve", "gpt2", "--for", "d", "--fit",
                                      "memory.weights_bytes <= X1"]])
def test_gpus_file_with_a_5000_digit_amount(capsys, tmp_path, memory, bf16, command):
    """Issue 25 item 5: a --gpus file's amount of 5,000 digits ended in Python's ValueError
    on integer strings over 4,300 digits; it is refused by its length before it is read."""
    path = tmp_path / "g.toml"
    path.write_text(f'[X1]\nmemory = "{memory}"\nbf16 = "{bf16}"\nsource = "x"\n')
    line = refused(capsys, *command, "--gpus", path)
    key = "memory" if len(memory) > 40 else "bf16"
    assert f"[X1] {key}: is 5,00" in line and "an amount is at most 40" in line, line


BIG = "9" * 5000  # past Python's 4,300-digit limit for int <-> str


@pytest.mark.parametrize("where", [
    "hidden_size", "max_position_embeddings", "rope_theta", "sliding_window", "bos_token_id",
    "rms_norm_eps", "torch_dtype", "rope_scaling.factor", "quantization_config.bits",
    "layer_types[0]", "text_config.hidden_size"])
def test_5000_digit_integers_in_a_config_json(capsys, tmp_path, where):
    """Issue 25 item 5: an integer over 4,300 digits anywhere in config.json, a size or not,
    nested or not: one line naming the file and the digit limit."""
    config = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
              "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}
    key, _, sub = where.partition(".")
    if key.endswith("[0]"):
        config[key[:-3]] = ["@BIG@", "full_attention"]
    elif sub:
        config[key] = {sub: "@BIG@"}
    else:
        config[key] = "@BIG@"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config).replace('"@BIG@"', BIG))
    line = refused(capsys, "report", path)
    assert "config.json: is not valid JSON for symcalc (an integer of more than 4,300" in line


@pytest.mark.parametrize("argv", [
    ["report", "gpt2", "--set", f"L={BIG}"], ["report", "gpt2", "--set", f"E={BIG}"],
    ["report", "deepseek-v2-lite", "--set", f"L_dense={BIG}"],
    ["report", "gpt2", "--set", f"router_groups={BIG}"],
    ["report", "gpt2", "--set", f"name={BIG}"], ["report", "gpt2", "--set", f"pooler={BIG}"],
    ["report", "gpt2", "--batch", BIG], ["derive", "gpt2", "--lang", "ru", "--seq-len", BIG],
    ["sweep", "gpt2", "--grid", f"L=1:{BIG}"], ["report", "{tmp}/spec.toml"],
    ["report", "gpt2", "--gpu", "X1", "--gpus", "{tmp}/g.toml"],
])
def test_5000_digit_integers_on_the_command_line_and_in_toml(capsys, tmp_path, argv):
    (tmp_path / "spec.toml").write_text(toml_of(TINY) + f"[extra]\nx = {BIG}\n")
    (tmp_path / "g.toml").write_text(f'[X1]\nmemory = {BIG}\nbf16 = "1 TFLOPs"\nsource = "x"\n')
    line = refused(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert len(line) < 400 and "set_int_max_str_digits" not in line, line

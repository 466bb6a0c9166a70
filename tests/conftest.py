"""Shared helpers: run the command line (symcalc.cli.main), write config files, read JSON;
and the test lanes.

Lanes: the tests that compare with transformers live are marked ``reference`` (every test in
tests/reference/, and a few elsewhere that import torch or transformers inside). The torch-free
lane is ``python -m pytest -m "not reference"``; without torch installed tests/reference/ is not
even collected. Recorded reference numbers (tests/data/) keep every family checked there."""
from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# sympy keeps the results of its cached operations in an LRU of 1,000 entries unless told;
# the suite builds the same expressions over and over across presets and option sets, and
# with a larger cache its sympy comparisons take about a third less CPU (read by sympy when it
# is first imported, which is after this file)
os.environ.setdefault("SYMPY_CACHE_SIZE", "100000")
# without torch (the torch-free lane's machines) the live comparisons cannot even be imported
collect_ignore_glob = [] if importlib.util.find_spec("torch") else ["reference/*"]


def pytest_sessionstart(session):
    """Import sympy and every symcalc module once, before any test runs. pytester's in-process
    runs (tests/test_testing_plugin.py) drop the modules first imported inside them when they
    end; a module imported again afterwards is a new module object with new classes, and the
    objects made before it (sympy's Symbol, a family file's parsed expressions) would no longer
    be instances of them."""
    import pkgutil

    import sympy  # noqa: F401

    import symcalc

    for info in pkgutil.walk_packages(symcalc.__path__, "symcalc."):
        if info.name.startswith("symcalc.page") or info.name == "symcalc.__main__":
            continue
        __import__(info.name)


def pytest_collection_modifyitems(config, items):
    reference = HERE / "reference"
    for item in items:
        if reference in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.reference)

def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/* from the current output (review the diff)")


def pytest_configure(config):
    if config.getoption("--update-golden"):
        os.environ["SYMCALC_UPDATE_GOLDEN"] = "1"  # read by tests/golden_files.py


REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"  # CI clones main with a copy of shared/ beside it


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str

    def json(self):
        assert self.returncode == 0, self.stderr
        return json.loads(self.stdout)


def run_cli(*args, cwd: Path | None = None) -> Run:
    """``symcalc ARGS`` (exit status, stdout, stderr) by :func:`symcalc.cli.main`, the function
    the console script calls, in this interpreter: a fresh interpreter per call cost each one
    sympy's import and cold caches (about half a second), and main(argv) is the same command
    line with the garbage collector and the language put back after it. An exception main
    does not turn into its one-line error propagates and fails the test, as a traceback on
    stderr would. (The tests about the process itself, what it imports and how fast it
    starts, run their own interpreters.)"""
    import contextlib
    import io
    import os

    from symcalc.cli import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as done:  # argparse's --help and --version
                code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    finally:
        os.chdir(here)
    return Run(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def write_config(tmp_path):
    """Write a dict as ``config.json`` in a fresh folder under tmp_path; return the file."""
    count = [0]

    def write(config: dict, name: str = "config.json") -> Path:
        count[0] += 1
        folder = tmp_path / f"model{count[0]}"
        folder.mkdir()
        path = folder / name
        path.write_text(json.dumps(config), encoding="utf-8")
        return path

    return write


def sympy_number(quantity: str, spec, opts) -> int:
    """One figure by substitution into its sympy expression (symcalc.report.SympyNumbers, the
    reference path of symcalc.report.report), without computing the rest of the report."""
    from symcalc.algebra.options import workload_values
    from symcalc.algebra.spec import size_values
    from symcalc.report import SympyNumbers

    at = {**size_values(spec), **workload_values(spec, opts)}
    if quantity == "flops.decode_per_token":
        at["s"] = opts.context or at["s"]
    return SympyNumbers(spec, opts).number(quantity, at)


def in_turn(items, choices, per: int = 1) -> list[tuple]:
    """Each of ``items`` with ``per`` of ``choices``, taken in turn across the items, so that
    every choice meets about per/len(choices) of them: [(item, (choice, ...)), ...] (the
    option sets a costly comparison runs each preset under)."""
    return [(item, tuple(choices[(per * i + j) % len(choices)] for j in range(per)))
            for i, item in enumerate(items)]


def write_page_data(folder: Path) -> Path:
    """What the page embeds, as tests/page_harness.js reads it: meta.json (symcalc.page.meta)
    and terms.json beside it (the term table as one object); returns meta.json's path."""
    from symcalc.fast import terms
    from symcalc.page import _json, meta

    path = Path(folder) / "meta.json"
    path.write_text(_json(meta()), encoding="utf-8")
    path.with_name("terms.json").write_text(_json(terms.table()), encoding="utf-8")
    return path


def page_core(meta_file: Path, jobs: list) -> list:
    """The page's core in Node (tests/page_harness.js) on ``jobs``, reading the data
    :func:`write_page_data` wrote at ``meta_file``: one result per job; a crash fails."""
    import shutil
    import subprocess

    r = subprocess.run([shutil.which("node"), str(HERE / "page_harness.js")], capture_output=True,
                       text=True, input=json.dumps({"meta": str(meta_file), "jobs": jobs}),
                       timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    crashes = [o["crash"] for o in out if "crash" in o]
    assert not crashes, crashes[0]
    return out

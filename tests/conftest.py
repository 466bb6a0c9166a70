"""Shared helpers: run the command line in a subprocess, write config files, read JSON."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

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
    """``python -m symcalc.cli ARGS`` in a fresh interpreter (exit status, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-m", "symcalc.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)
    return Run(done.returncode, done.stdout, done.stderr)


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

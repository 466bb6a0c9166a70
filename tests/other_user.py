"""Run symcalc's command line as another user, for the tests of paths a user may not read.

CI runs as root, where ``chmod 0`` stops nothing: a forked child drops to an unprivileged
uid (``os.setuid``) and runs :func:`symcalc.cli.main` there, so a folder of mode 0 is
really closed to it. The child cannot import what lies under a private home (the Python
of a pyenv in /root), so the caller runs the command once first in the parent (any
outcome), which imports the modules the command needs.
"""
from __future__ import annotations

import contextlib
import io
import os
import pickle
import pwd
import tempfile
from pathlib import Path

NOBODY = 65534


def can_switch_user() -> bool:
    return hasattr(os, "fork") and hasattr(os, "setuid") and os.geteuid() == 0


def unknown_uid() -> int:
    """A uid with no entry in the user database (no home directory)."""
    uid = 54321
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid += 1


def open_folder() -> Path:
    """A fresh folder every user may enter and write (mode 0777), outside root's 0700
    temporary folders; the caller removes it."""
    folder = Path(tempfile.mkdtemp(prefix="symcalc-user-"))
    folder.chmod(0o777)
    return folder


def main_as(uid: int | None, argv, env: dict | None = None, check=None, cwd: str | None = None):
    """``main(argv)`` in a forked child running as ``uid`` (None: as this user), with the
    environment changed by ``env`` (a value None removes the variable), in the folder ``cwd``
    (None: this one). Returns (exit status, stdout, stderr, check()) where ``check`` runs in
    the child before main (e.g. the proof that the child cannot read the path)."""
    from symcalc.cli import main

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(r)
            if cwd is not None:
                os.chdir(cwd)
            for key, value in (env or {}).items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            proof = check() if check else None
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main([str(a) for a in argv])
                except SystemExit as done:
                    code = done.code
            result = ("done", code, out.getvalue(), err.getvalue(), proof)
        except BaseException as exc:  # noqa: BLE001 (reported to the parent)
            import traceback

            result = ("raised", None, "", traceback.format_exc(), repr(exc))
        try:
            with os.fdopen(w, "wb") as f:
                f.write(pickle.dumps(result))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    kind, code, out, err, proof = pickle.loads(data)
    assert kind == "done", err
    return code, out, err, proof

"""``owner/name`` -> the config.json of that Hugging Face repository in the local hub cache.

No network and no huggingface_hub: the cache layout is read directly.
``<hub>/models--Owner--Name/refs/main`` holds a commit hash and
``<hub>/models--Owner--Name/snapshots/<hash>/config.json`` the file; when ``refs/main`` is
missing (or names a snapshot without a config.json), the newest snapshot that holds a
config.json is used. ``<hub>`` is ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import SymcalcError

# owner/name as the Hub allows them (letters, digits, - _ .), not a path with more parts
_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*")


def is_repo_id(text: str) -> bool:
    """``text`` has the form ``owner/name`` of a Hugging Face repository."""
    return bool(_REPO.fullmatch(text)) and not text.endswith((".json", ".toml"))


def hub_cache_dir() -> Path:
    """The hub cache folder, as huggingface_hub resolves it. A ``~`` that names no home
    directory (``HF_HOME=~nobody/hf``; no ``HOME`` and a user with no entry in the user
    database) is one :class:`SymcalcError` saying what to set."""
    env = os.environ
    for var, below in (("HF_HUB_CACHE", ()), ("HF_HOME", ("hub",)),
                       ("XDG_CACHE_HOME", ("huggingface", "hub"))):
        if env.get(var):
            try:
                return Path(env[var]).expanduser().joinpath(*below)
            except (RuntimeError, KeyError):
                raise SymcalcError(var, f"{env[var]!r:.80}: its '~' names no home directory "
                                        "known here; give the folder in full") from None
    try:
        return Path.home() / ".cache" / "huggingface" / "hub"
    except (RuntimeError, KeyError):
        raise SymcalcError("HOME", "is not set and this user has no home directory, so the "
                                   "Hugging Face cache cannot be found; set HF_HUB_CACHE "
                                   "(or HF_HOME) to its folder") from None


def cached_config(repo_id: str) -> Path:
    """The cached config.json of ``repo_id``, or one :class:`SymcalcError` saying how to
    fetch it."""
    hub = hub_cache_dir()
    folder = hub / ("models--" + repo_id.replace("/", "--"))
    found = _from_ref(folder) or _newest_snapshot(folder)
    if found is None:
        raise SymcalcError(repo_id, f"not in the local Hugging Face cache ({hub}); fetch only "
                                    f"its config with: huggingface-cli download {repo_id} "
                                    "config.json")
    return found


def _from_ref(folder: Path) -> Path | None:
    from .files import read_text

    try:
        commit = read_text(folder / "refs" / "main", limit=4096).strip()
    except SymcalcError:  # missing, not a regular file, too large, not UTF-8
        return None
    if not commit or "/" in commit or commit in (".", ".."):
        return None
    path = folder / "snapshots" / commit / "config.json"
    return path if path.is_file() else None


def _newest_snapshot(folder: Path) -> Path | None:
    try:
        snapshots = [p / "config.json" for p in (folder / "snapshots").iterdir()]
    except OSError:
        return None
    found = [p for p in snapshots if p.is_file()]
    if not found:
        return None
    return max(found, key=lambda p: (p.stat().st_mtime, p.parent.name))

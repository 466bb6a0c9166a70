"""MODEL = owner/name: the config.json in the local Hugging Face hub cache, no network."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from symcalc.inputs import hf_cache
from symcalc.errors import SymcalcError
from symcalc.inputs import resolve

LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
         "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
         "vocab_size": 100}
ENV_KEYS = ("HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def add_snapshot(hub: Path, repo: str, commit: str, config: dict | None, ref: bool = True) -> Path:
    folder = hub / ("models--" + repo.replace("/", "--"))
    snap = folder / "snapshots" / commit
    snap.mkdir(parents=True, exist_ok=True)
    if config is not None:
        # as huggingface_hub stores it: a symlink into blobs/
        blob = folder / "blobs" / f"blob-{commit}"
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_text(json.dumps(config))
        (snap / "config.json").symlink_to(os.path.relpath(blob, snap))
    if ref:
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / "main").write_text(commit)
    return snap


@pytest.mark.parametrize("env,sub", [
    ({"HF_HUB_CACHE": "{t}/a"}, "a"),
    ({"HF_HOME": "{t}/b"}, "b/hub"),
    ({"XDG_CACHE_HOME": "{t}/c"}, "c/huggingface/hub"),
    ({}, "home/.cache/huggingface/hub"),
    ({"HF_HUB_CACHE": "{t}/a", "HF_HOME": "{t}/b", "XDG_CACHE_HOME": "{t}/c"}, "a"),
    ({"HF_HOME": "{t}/b", "XDG_CACHE_HOME": "{t}/c"}, "b/hub"),
])
def test_hub_cache_dir_order(env, sub, monkeypatch, tmp_path):
    for key, value in env.items():
        monkeypatch.setenv(key, value.format(t=tmp_path))
    assert hf_cache.hub_cache_dir() == tmp_path / sub


@pytest.mark.parametrize("env", ["HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", None])
def test_resolve_reads_the_cached_config(env, monkeypatch, tmp_path):
    if env:
        monkeypatch.setenv(env, str(tmp_path / "cache"))
    hub = hf_cache.hub_cache_dir()
    add_snapshot(hub, "Acme/Tiny-1", "0123abc", LLAMA)
    spec = resolve("Acme/Tiny-1")
    assert (spec.name, spec.L, spec.d, spec.d_ff, spec.V, spec.head) == (
        "Acme/Tiny-1", 2, 64, 96, 100, "untied")


def test_refs_main_picks_the_snapshot(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    add_snapshot(tmp_path, "Acme/Tiny", "old", {**LLAMA, "num_hidden_layers": 3})
    time.sleep(0.01)
    add_snapshot(tmp_path, "Acme/Tiny", "new", {**LLAMA, "num_hidden_layers": 5}, ref=False)
    # refs/main still names "old": it wins over the newer snapshot
    assert resolve("Acme/Tiny").L == 3
    assert hf_cache.cached_config("Acme/Tiny").parent.name == "old"


def test_without_refs_main_the_newest_snapshot_with_a_config(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    add_snapshot(tmp_path, "Acme/Tiny", "first", {**LLAMA, "num_hidden_layers": 3}, ref=False)
    snap = add_snapshot(tmp_path, "Acme/Tiny", "second", {**LLAMA, "num_hidden_layers": 4},
                        ref=False)
    add_snapshot(tmp_path, "Acme/Tiny", "third", None, ref=False)  # no config.json in it
    first = tmp_path / "models--Acme--Tiny" / "blobs" / "blob-first"
    os.utime(first, (1_000_000, 1_000_000))
    os.utime(snap / "config.json", (2_000_000, 2_000_000))
    assert resolve("Acme/Tiny").L == 4
    os.utime(first, (3_000_000, 3_000_000))
    assert resolve("Acme/Tiny").L == 3


def test_stale_refs_main_falls_back(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    add_snapshot(tmp_path, "Acme/Tiny", "only", {**LLAMA, "num_hidden_layers": 6}, ref=False)
    refs = tmp_path / "models--Acme--Tiny" / "refs"
    refs.mkdir()
    (refs / "main").write_text("gone\n")
    assert resolve("Acme/Tiny").L == 6


@pytest.mark.parametrize("layout", ["nothing", "empty-repo-folder", "snapshot-without-config"])
def test_absent_is_one_error_naming_the_repo(layout, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    if layout == "empty-repo-folder":
        (tmp_path / "models--Qwen--Qwen3-8B").mkdir()
    elif layout == "snapshot-without-config":
        add_snapshot(tmp_path, "Qwen/Qwen3-8B", "abc", None)
    with pytest.raises(SymcalcError) as err:
        resolve("Qwen/Qwen3-8B")
    assert str(err.value) == (
        f"Qwen/Qwen3-8B: not in the local Hugging Face cache ({tmp_path}); fetch only its "
        "config with: huggingface-cli download Qwen/Qwen3-8B config.json")


def test_cli_absent_exit_2_one_line(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))  # the subprocess inherits it
    run = cli("report", "Qwen/Qwen3-8B", "--json")
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        f"symcalc: error: Qwen/Qwen3-8B: not in the local Hugging Face cache ({tmp_path}); "
        "fetch only its config with: huggingface-cli download Qwen/Qwen3-8B config.json"]


def test_cli_reads_the_cache(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    add_snapshot(tmp_path, "Acme/Tiny", "abc", LLAMA)
    run = cli("report", "Acme/Tiny", "--json")
    assert run.returncode == 0, run.stderr
    out = run.json()
    assert out["model"] == "Acme/Tiny"
    # 2 layers x (4 d^2 + 3 d d_ff + 2 d) + final norm d + embedding and untied head 2 V d
    d, d_ff, V = 64, 96, 100
    assert out["params"]["total"] == 2 * (4 * d * d + 3 * d * d_ff + 2 * d) + d + 2 * V * d


def test_an_existing_path_wins_over_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    add_snapshot(tmp_path / "hub", "acme/tiny", "abc", {**LLAMA, "num_hidden_layers": 9})
    folder = tmp_path / "acme" / "tiny"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(LLAMA))
    monkeypatch.chdir(tmp_path)
    assert resolve("acme/tiny").L == 2  # the local folder, not the cache
    assert resolve("acme/tiny").name == "tiny"


def test_a_preset_wins_over_the_cache(monkeypatch, tmp_path):
    from symcalc.inputs import presets

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert resolve("gpt2") == presets.load("gpt2").spec


@pytest.mark.parametrize("text,is_repo", [
    ("Qwen/Qwen3-8B", True), ("meta-llama/Llama-2-7b-hf", True), ("a/b.c_d", True),
    ("gpt2", False), ("a/b/c", False), ("/abs/path", False), ("a/config.json", False),
    ("a/spec.toml", False), ("./a", False), ("a/", False), ("", False),
])
def test_is_repo_id(text, is_repo):
    assert hf_cache.is_repo_id(text) is is_repo


def test_sets_apply_to_a_cached_config(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    add_snapshot(tmp_path, "Acme/Tiny", "abc", LLAMA)
    assert resolve("Acme/Tiny", ["L=7"]).L == 7

"""The command line: `symcalc report` (table and JSON contract), `symcalc presets`, spec files
and --set overrides, and the seeds' figures."""
from __future__ import annotations

import json
import re

import pytest

from symcalc.inputs import presets

MISTRAL = 7_241_732_096


def table_rows(text: str) -> dict[str, str]:
    """``label  value`` rows of the readable table (label stripped, first occurrence)."""
    rows: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^ {2,}(\S.*?)\s{2,}(\S.*)$", line)
        if m:
            rows.setdefault(m.group(1), m.group(2))
    return rows


@pytest.fixture(scope="module")
def mistral_table():
    from conftest import run_cli

    run = run_cli("report", "mistral-7b")
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_mistral_prints_its_total(mistral_table):
    assert "7,241,732,096" in mistral_table


def test_mistral_table_rows(mistral_table):
    rows = table_rows(mistral_table)
    assert rows["total"] == "7,241,732,096  (7.24 B)"
    assert rows["embedding"].startswith("262,144,000")
    assert rows["non-embedding"] == "6,979,588,096"
    assert rows["per layer"] == "218,112,000"
    assert rows["attention"] == "41,943,040"
    assert rows["ffn"] == "176,160,768"
    assert rows["head dimension"] == "128"
    assert rows["weights at 16 bits"] == "14.48 GB / 13.49 GiB"


def test_mistral_workload_table_names_conventions(cli):
    out = cli("report", "mistral-7b", "--batch", "1", "--seq-len", "4096").stdout
    rows = table_rows(out)
    for label in ("forward, matmul", "forward (= prefill)", "training step", "weights", "KV cache",
                  "activations", "training state"):
        assert label in rows, label
    assert "batch 1 x seq_len 4096" in out
    assert "536,870,912 B" in rows["KV cache"]  # 131,072 bytes per token x 4096 tokens
    assert "FlopCounterMode" in out and "Korthikanti" in out and "ZeRO stage 0" in out


CONTRACT = {
    "params": ("total", "embedding", "non_embedding"),
    "flops": ("batch", "seq_len", "forward_matmul", "forward", "training"),
    "memory": ("weights_bytes", "kv_cache_bytes", "activations_bytes", "training_bytes"),
}


@pytest.mark.parametrize("name", ["mistral-7b", "t5-small", "bert-base", "mixtral-8x7b"])
def test_json_contract(name, cli):
    out = cli("report", name, "--json", "--batch", "2", "--seq-len", "64").json()
    assert out["model"] == name
    for group, keys in CONTRACT.items():
        for key in keys:
            value = out[group][key]
            assert type(value) is int, (group, key, value)
    for key in ("per_layer", "breakdown"):
        assert out["params"][key] and all(type(v) is int for v in out["params"][key].values())
    p = out["params"]
    assert p["total"] == presets.load(name).expected_total
    assert p["embedding"] + p["non_embedding"] == p["total"]
    assert (out["flops"]["batch"], out["flops"]["seq_len"]) == (2, 64)
    assert out["flops"]["training"] == 3 * out["flops"]["forward"]  # forward + 2x backward
    assert out["flops"]["forward"] == out["flops"]["forward_matmul"]  # default: matmuls only
    assert out["memory"]["weights_bytes"] == 2 * p["total"]  # bf16 by default
    assert out["memory"]["training_bytes"] == 16 * p["total"]  # mixed-precision Adam, stage 0


def test_mistral_memory_figures(cli):
    out = cli("report", "mistral-7b", "--json", "--batch", "1", "--seq-len", "4096").json()
    m = out["memory"]
    L, d, n_h, s = 32, 4096, 32, 4096
    assert m["kv_cache_bytes"] == 131_072 * 4096
    # Korthikanti et al. term by term with Mistral's own layer (--activations paper, 16-bit):
    # 12 s d for norms and inputs, K and V of 8 heads of 128, a gated FFN of 14336
    # (8 s d_ff), 2 n_h s^2 for the scores (Mistral has no dropout: no masks)
    assert m["activations_bytes"] == L * s * (12 * d + 4 * 8 * 128 + 8 * 14336 + 2 * n_h * s)
    assert m["weights_bytes"] == 2 * MISTRAL
    assert cli("report", "mistral-7b", "--json", "--seq-len", "8192").json()["memory"][
        "kv_cache_bytes"] == 131_072 * 4096  # the 4096-token window caps the cache


def _parents_are_sums(flat: dict[str, int]) -> int:
    checked = 0
    for path, value in flat.items():
        kids = [v for p, v in flat.items() if p.startswith(path + "/") and "/" not in p[len(path) + 1:]]
        if kids:
            assert value == sum(kids), path
            checked += 1
    return checked


@pytest.mark.parametrize("name", ["gpt2", "t5-base", "mixtral-8x7b", "bert-base"])
def test_json_breakdowns_parents_are_sums(name, cli):
    out = cli("report", name, "--json", "--seq-len", "32").json()
    bd = out["params"]["breakdown"]
    assert _parents_are_sums(bd) > 3
    top = [v for p, v in bd.items() if "/" not in p]
    assert sum(top) == out["params"]["total"]
    fb = out["flops"]["breakdown"]
    assert _parents_are_sums(fb) >= 3  # layer, layer/attention, layer/ffn at least
    assert sum(v for p, v in fb.items() if "/" not in p) == out["flops"]["forward_matmul"]


def test_presets_lists_every_preset(cli):
    out = cli("presets").stdout
    for p in presets.all_presets():
        assert re.search(rf"^\s+{re.escape(p.name)}\s+{p.expected_total:,}\s", out, re.M), p.name
    listed = cli("presets", "--json").json()
    assert {(x["name"], x["expected_total"]) for x in listed} == {
        (p.name, p.expected_total) for p in presets.all_presets()}


SPEC = """\
# a GPT-2-small-shaped model written by hand
name = "my-gpt"
family = "decoder"
L = 12
d = 768
n_h = 12
d_ff = 3072
V = 50257
P = 1024
position = "learned"
attention_bias = "all"
ffn_bias = true
norm = "layernorm"
head = "tied"
"""


def test_spec_file(cli, tmp_path):
    path = tmp_path / "my.toml"
    path.write_text(SPEC)
    out = cli("report", path, "--json").json()
    assert out["model"] == "my-gpt"
    assert out["params"]["total"] == 124_439_808  # GPT2LMHeadModel


def test_spec_file_with_set(cli, tmp_path):
    path = tmp_path / "my.toml"
    path.write_text(SPEC)
    out = cli("report", path, "--json", "--set", "head=untied").json()
    assert out["params"]["total"] == 124_439_808 + 50257 * 768


def test_preset_file_is_a_spec_file(cli, tmp_path):
    from importlib import resources

    text = resources.files("symcalc").joinpath("inputs/presets/llama-3-8b.toml").read_text()
    (tmp_path / "l3.toml").write_text(text)
    assert cli("report", tmp_path / "l3.toml", "--json").json()["params"]["total"] == 8_030_261_248


@pytest.mark.parametrize("model,sets,total", [
    ("gpt2", ["L=24", "d=1024", "n_h=16"], 354_823_168),  # = gpt2-medium
    ("gpt2", ["L=36", "d=1280", "n_h=20"], 774_030_080),  # = gpt2-large
    ("llama-2-7b", ["n_kv=8", "d_ff=14336"], MISTRAL),  # Llama-2-7B made Mistral-shaped
    ("mistral-7b", ["head=tied"], MISTRAL - 32000 * 4096),
    ("mixtral-8x7b", ["E=1", "k=1"], MISTRAL + 32 * 4096),  # one expert + its router
])
def test_set_overrides(model, sets, total, cli):
    args = [a for kv in sets for a in ("--set", kv)]
    assert cli("report", model, "--json", *args).json()["params"]["total"] == total


def test_seed_decoder_calculator_figures(cli):
    out = cli("report", "seed-decoder-calculator-default", "--json").json()
    p = out["params"]
    assert p["total"] == 7_241_732_096
    assert p["non_embedding"] == 6_979_588_096  # final norm included
    assert p["embedding"] == 262_144_000  # embeddings + head
    assert p["per_layer"]["total"] == 218_112_000
    assert p["per_layer"]["attention"] == 41_943_040
    assert p["per_layer"]["ffn"] == 176_160_768
    assert p["head_dim"] == 128
    assert round(out["memory"]["weights_bytes"] / 10**9, 2) == 14.48
    table = table_rows(cli("report", "seed-decoder-calculator-default").stdout)
    assert table["weights at 16 bits"].startswith("14.48 GB")


def test_seed_layer_calculator_figures(cli):
    p = cli("report", "seed-layer-calculator-bert-base", "--json").json()["params"]
    assert p["per_layer"]["total"] == 7_080_960  # 4 d^2 + 2 d d_ff + 4 d
    assert p["embedding"] == 23_834_112  # V d + s d
    assert p["total"] == 108_805_632


def test_python_dash_m_symcalc():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "symcalc", "report", "gpt2", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert '"total": 124439808' in done.stdout


def test_a_report_as_the_process_ends_without_teardown_and_loses_nothing():
    """``python -m symcalc report`` leaves by os._exit (cli._leave): the whole JSON still
    arrives, a bad MODEL still exits 2 with its one line, and a reader that closes the pipe
    after one byte gets exit status 0 and no traceback."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "symcalc", "report"]
    done = subprocess.run(cmd + ["deepseek-v3", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["params"]["total"] == 671_026_404_352
    bad = subprocess.run(cmd + ["no-such-model"], capture_output=True, text=True)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.startswith("symcalc: error: MODEL:") and bad.stderr.count("\n") == 1
    with subprocess.Popen(cmd + ["deepseek-v3", "--json"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        proc.stdout.read(1)
        proc.stdout.close()
        err = proc.stderr.read()
    assert proc.returncode == 0 and b"Traceback" not in err, err


@pytest.mark.parametrize("argv", [["report", "mistral-7b", "--json"], ["report", "--json", "gpt2"],
                                  ["report", "config.json"], ["report", "m", "--gpu", "H100", "--json"],
                                  ["report", "--gpu", "H100", "--gpu", "TPU-v4", "m"]])
def test_a_plain_report_line_gets_argparses_arguments(argv):
    from symcalc.commands.parser import build_parser
    from symcalc.commands.plain_report import plain_report

    assert vars(plain_report(argv)) == vars(build_parser("report").parse_args(argv))


@pytest.mark.parametrize("argv", [
    ["report"], ["report", "--json"], ["report", "m", "--json", "--json"], ["report", "m", "n"],
    ["report", "m", "--js"], ["report", "-h"], ["report", "m", "--tp", "2"], ["report", ""],
    ["presets", "--json"], ["derive", "m", "--json"], ["report", "m", "--json=1"], [],
    ["report", "m", "--gpu"], ["report", "m", "--gpu", "--json"], ["report", "m", "--gpu=H100"],
    ["report", "--gpu", "H100"], ["report", "m", "--gpus", "f.toml"]])
def test_any_other_command_line_goes_to_argparse(argv):
    from symcalc.commands.plain_report import plain_report

    assert plain_report(argv) is None

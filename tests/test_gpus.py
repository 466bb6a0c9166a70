"""Accelerators as data (issue 23 item 1): every field of symcalc/inputs/gpus.toml against the
figure its cited datasheet prints, worked here by hand (the printed figure, its unit, and the
rule that turns it into the stored integer: half of a figure printed with 2:4 sparsity, a
share of a figure printed for several devices, half of a bidirectional link), and the loader's
rules for user files.
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from symcalc.errors import SymcalcError
from symcalc.inputs import gpus

T, P, G = 10**12, 10**15, 10**9
GiB = 2**30

# (accelerator, field) -> (figure as the source prints it, unit, divisor)
#   divisor 2 for "with sparsity" (dense is half) or "both directions"; n for a figure
#   printed for n devices
DATASHEET = {
    ("H100", "memory"): ("80GB", G, 1),
    ("H100", "memory_bandwidth"): ("3.35TB/s", 1000 * G, 1),
    ("H100", "flops.fp32"): ("67", T, 1),
    ("H100", "flops.tf32"): ("989", T, 2),
    ("H100", "flops.bf16"): ("1,979", T, 2),
    ("H100", "flops.fp8"): ("3,958", T, 2),
    ("H100", "within_node"): ("900GB/s", G, 2),
    ("H100", "across_nodes"): ("400Gb/s", G // 8, 1),
    ("H100-PCIe", "memory"): ("80GB", G, 1),
    ("H100-PCIe", "memory_bandwidth"): ("2TB/s", 1000 * G, 1),
    ("H100-PCIe", "flops.fp32"): ("51", T, 1),
    ("H100-PCIe", "flops.tf32"): ("756", T, 2),
    ("H100-PCIe", "flops.bf16"): ("1,513", T, 2),
    ("H100-PCIe", "flops.fp8"): ("3,026", T, 2),
    ("H100-PCIe", "within_node"): ("128GB/s", G, 2),
    ("H200", "memory"): ("141GB", G, 1),
    ("H200", "memory_bandwidth"): ("4.8TB/s", 1000 * G, 1),
    ("H200", "flops.fp32"): ("67", T, 1),
    ("H200", "flops.tf32"): ("989", T, 2),
    ("H200", "flops.bf16"): ("1,979", T, 2),
    ("H200", "flops.fp8"): ("3,958", T, 2),
    ("H200", "within_node"): ("900GB/s", G, 2),
    ("H200", "across_nodes"): ("400Gb/s", G // 8, 1),
    ("B200", "memory"): ("1,440GB", G, 8),
    ("B200", "memory_bandwidth"): ("64TB/s", 1000 * G, 8),
    ("B200", "flops.fp32"): ("600", T, 8),
    ("B200", "flops.tf32"): ("18", P, 16),
    ("B200", "flops.bf16"): ("36", P, 16),
    ("B200", "flops.fp8"): ("72", P, 16),
    ("B200", "flops.fp4"): ("144", P, 16),
    ("B200", "within_node"): ("1.8TB/s", 1000 * G, 2),
    ("B200", "across_nodes"): ("400Gb/s", G // 8, 1),
    ("GB200", "memory"): ("372 GB", G, 2),
    ("GB200", "memory_bandwidth"): ("16 TB/s", 1000 * G, 2),
    ("GB200", "flops.fp32"): ("180", T, 2),
    ("GB200", "flops.tf32"): ("5", P, 4),
    ("GB200", "flops.bf16"): ("10", P, 4),
    ("GB200", "flops.fp8"): ("20", P, 4),
    ("GB200", "flops.fp4"): ("40", P, 4),
    ("GB200", "within_node"): ("3.6 TB/s", 1000 * G, 4),
    ("GB200", "across_nodes"): ("400Gb/s", G // 8, 1),
    ("A100-80GB", "memory"): ("80GB", G, 1),
    ("A100-80GB", "memory_bandwidth"): ("2,039GB/s", G, 1),
    ("A100-80GB", "flops.fp32"): ("19.5", T, 1),
    ("A100-80GB", "flops.tf32"): ("156", T, 1),
    ("A100-80GB", "flops.bf16"): ("312", T, 1),
    ("A100-80GB", "within_node"): ("600GB/s", G, 2),
    ("A100-80GB", "across_nodes"): ("200Gb/s", G // 8, 1),
    ("A100-40GB", "memory"): ("40GB", G, 1),
    ("A100-40GB", "memory_bandwidth"): ("1,555GB/s", G, 1),
    ("A100-40GB", "flops.fp32"): ("19.5", T, 1),
    ("A100-40GB", "flops.tf32"): ("156", T, 1),
    ("A100-40GB", "flops.bf16"): ("312", T, 1),
    ("A100-40GB", "within_node"): ("600GB/s", G, 2),
    ("A100-40GB", "across_nodes"): ("200Gb/s", G // 8, 1),
    ("L40S", "memory"): ("48GB", G, 1),
    ("L40S", "memory_bandwidth"): ("864GB/s", G, 1),
    ("L40S", "flops.fp32"): ("91.6", T, 1),
    ("L40S", "flops.tf32"): ("183", T, 1),
    ("L40S", "flops.bf16"): ("362.05", T, 1),
    ("L40S", "flops.fp8"): ("733", T, 1),
    ("L40S", "within_node"): ("64GB/s", G, 2),
    ("L4", "memory"): ("24GB", G, 1),
    ("L4", "memory_bandwidth"): ("300GB/s", G, 1),
    ("L4", "flops.fp32"): ("30.3", T, 1),
    ("L4", "flops.tf32"): ("120", T, 2),
    ("L4", "flops.bf16"): ("242", T, 2),
    ("L4", "flops.fp8"): ("485", T, 2),
    ("L4", "within_node"): ("64GB/s", G, 2),
    ("RTX4090", "memory"): ("24 GB", G, 1),
    ("RTX4090", "memory_bandwidth"): ("1008 GB/sec", G, 1),
    ("RTX4090", "flops.fp32"): ("82.6", T, 1),
    ("RTX4090", "flops.tf32"): ("82.6", T, 1),
    ("RTX4090", "flops.bf16"): ("165.2", T, 1),
    ("RTX4090", "flops.fp8"): ("330.3", T, 1),
    ("RTX4090", "within_node"): ("32 GB/s", G, 1),
    ("RTX5090", "memory"): ("32 GB", G, 1),
    ("RTX5090", "memory_bandwidth"): ("1792 GB/sec", G, 1),
    ("RTX5090", "flops.fp32"): ("104.8", T, 1),
    ("RTX5090", "flops.tf32"): ("104.8", T, 1),
    ("RTX5090", "flops.bf16"): ("209.5", T, 1),
    ("RTX5090", "flops.fp8"): ("419", T, 1),
    ("RTX5090", "flops.fp4"): ("3352", T, 2),
    ("RTX5090", "within_node"): ("64 GB/s", G, 1),
    ("MI300X", "memory"): ("192 GB", G, 1),
    ("MI300X", "memory_bandwidth"): ("5.3 TB/s", 1000 * G, 1),
    ("MI300X", "flops.fp32"): ("163.4", T, 1),
    ("MI300X", "flops.tf32"): ("653.7", T, 1),
    ("MI300X", "flops.bf16"): ("1307.4", T, 1),
    ("MI300X", "flops.fp8"): ("2614.9", T, 1),
    ("MI300X", "within_node"): ("896 GB/s", G, 2),
    ("MI325X", "memory"): ("256 GB", G, 1),
    ("MI325X", "memory_bandwidth"): ("6 TB/s", 1000 * G, 1),
    ("MI325X", "flops.fp32"): ("163.4", T, 1),
    ("MI325X", "flops.tf32"): ("653.7", T, 1),
    ("MI325X", "flops.bf16"): ("1307.4", T, 1),
    ("MI325X", "flops.fp8"): ("2614.9", T, 1),
    ("MI325X", "within_node"): ("896 GB/s", G, 2),
    ("MI355X", "memory"): ("288 GB", G, 1),
    ("MI355X", "memory_bandwidth"): ("8 TB/s", 1000 * G, 1),
    ("MI355X", "flops.fp32"): ("157.3", T, 1),
    ("MI355X", "flops.bf16"): ("2.5", P, 1),
    ("MI355X", "flops.fp8"): ("5", P, 1),
    ("MI355X", "flops.fp4"): ("10", P, 1),
    ("MI355X", "within_node"): ("1075.2 GB/s", G, 2),
    ("MI250X", "memory"): ("128 GB", G, 1),
    ("MI250X", "memory_bandwidth"): ("3.2768 TB/s", 1000 * G, 1),
    ("MI250X", "flops.fp32"): ("95.7", T, 1),
    ("MI250X", "flops.bf16"): ("383", T, 1),
    ("TPU-v4", "memory"): ("32 GiB", GiB, 1),
    ("TPU-v4", "memory_bandwidth"): ("1200 GBps", G, 1),
    ("TPU-v4", "flops.bf16"): ("275", T, 1),
    ("TPU-v5e", "memory"): ("16 GB", G, 1),
    ("TPU-v5e", "memory_bandwidth"): ("819 GBps", G, 1),
    ("TPU-v5e", "flops.bf16"): ("197", T, 1),
    ("TPU-v5e", "within_node"): ("400 GBps", G, 2),
    ("TPU-v5e", "across_nodes"): ("6.4 Tbps", 1000 * G // 8, 256),
    ("TPU-v5p", "memory"): ("95GB", G, 1),
    ("TPU-v5p", "memory_bandwidth"): ("2765 GBps", G, 1),
    ("TPU-v5p", "flops.bf16"): ("459", T, 1),
    ("TPU-v5p", "flops.fp8"): ("459", T, 1),
    ("TPU-v5p", "within_node"): ("1200 GBps", G, 2),
    ("TPU-v5p", "across_nodes"): ("50 Gbps", G // 8, 1),
    ("TPU-v6e", "memory"): ("32 GB", G, 1),
    ("TPU-v6e", "memory_bandwidth"): ("1638 GBps", G, 1),
    ("TPU-v6e", "flops.bf16"): ("918", T, 1),
    ("TPU-v6e", "within_node"): ("800 GBps", G, 2),
    ("Gaudi3", "memory"): ("128 GB", G, 1),
    ("Gaudi3", "memory_bandwidth"): ("3.7 TB/s", 1000 * G, 1),
    ("Gaudi3", "flops.bf16"): ("1835", T, 1),
    ("Gaudi3", "flops.fp8"): ("1835", T, 1),
    ("Gaudi3", "within_node"): ("200 GbE", 21 * G // 8, 1),
    ("Gaudi3", "across_nodes"): ("200 GbE", 3 * G // 8, 1),
}
DEVICES = {"H100": 8, "H100-PCIe": 8, "H200": 8, "B200": 8, "GB200": 72, "A100-80GB": 8,
           "A100-40GB": 8, "L40S": 8, "L4": 8, "RTX4090": 8, "RTX5090": 8, "MI300X": 8,
           "MI325X": 8, "MI355X": 8, "TPU-v5e": 256, "TPU-v5p": 8960, "TPU-v6e": 256,
           "Gaudi3": 8}
REQUIRED = ("A100-40GB", "A100-80GB", "H100", "H100-PCIe", "H200", "B200", "GB200", "L40S",
            "RTX4090", "RTX5090", "MI300X", "MI325X", "MI355X", "TPU-v5e", "TPU-v5p",
            "TPU-v6e", "Gaudi3")


def _number(printed: str) -> Fraction:
    digits = "".join(c for c in printed.split()[0] if c.isdigit() or c in ".,").rstrip(".,")
    return Fraction(digits.replace(",", ""))


def _stored(acc: gpus.Accelerator, field: str) -> int:
    if field.startswith("flops."):
        return acc.flops[field.split(".", 1)[1]]
    if field in gpus.LINKS:
        return getattr(acc, field).bandwidth
    return {"memory": acc.memory_bytes, "memory_bandwidth": acc.memory_bandwidth}[field]


@pytest.fixture(scope="module")
def table():
    return {a.name: a for a in gpus.unique(gpus.load())}


def test_field_against_its_datasheet(table):
    """Every stored amount is the figure its source prints (one test for all 133 rows)."""
    misses = []
    for (name, field), (printed, unit, divisor) in sorted(DATASHEET.items()):
        acc = table[name]
        if printed not in acc.sources[field]:
            misses.append((name, field, printed, acc.sources[field]))
        elif _stored(acc, field) != _number(printed) * unit / divisor:
            misses.append((name, field, printed, _stored(acc, field)))
    assert len(DATASHEET) > 100 and not misses, misses


def test_every_field_is_checked_and_sourced(table):
    """Every stored amount has a row above, and a source of its own that names a vendor
    document (no field rides on another's source)."""
    fields = {(a.name, f) for a in table.values() for f in a.sources}
    assert fields == set(DATASHEET)
    for acc in table.values():
        for f, text in acc.sources.items():
            assert any(w in text for w in ("datasheet", "data sheet", "whitepaper",
                                            "white paper", "specifications", "documentation")), (acc.name, f)


def test_the_issue_list_is_covered(table):
    for name in REQUIRED:
        acc = table[name]
        assert acc.memory_bandwidth and acc.flops.get("bf16") and acc.within_node, name
    assert table["B200"].flops["fp4"] and table["MI355X"].flops["fp4"]
    assert {n: a.within_node.devices for n, a in table.items() if a.within_node} == DEVICES


def test_the_built_in_file_is_read_without_a_unit_parser():
    """Issue 23 item 1: `report --gpu` is cheap again: the built-in file holds exact integers,
    so loading it never reaches symcalc.algebra.units (which loads pint)."""
    import subprocess
    import sys

    code = ("import sys; from symcalc.inputs import gpus; gpus.load(); "
            "print('symcalc.algebra.units' in sys.modules, 'pint' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_memory_and_flops_as_text():
    assert gpus.memory_text(80 * 10**9) == "80 GB" and gpus.memory_text(32 * GiB) == "32 GiB"
    assert gpus.flops_text(989_500 * 10**9) == "989.5 TFLOPs"
    assert gpus.flops_text(2_250 * T) == "2.25 PFLOPs"


def _user(tmp_path, text):
    f = tmp_path / "g.toml"
    f.write_text(text, encoding="utf-8")
    return str(f)


def test_user_file_new_and_old_forms(tmp_path):
    path = _user(tmp_path, '[Lab-1]\nmemory = 12_884_901_888\nmemory_bandwidth = "1 TB"\n'
                           '[Lab-1.flops]\nbf16 = 100_000_000_000_000\nfp8 = "200 TFLOPs"\n'
                           '[Lab-1.within_node]\nname = "x"\nbandwidth = 10_000_000_000\n'
                           'devices = 4\n[Lab-1.sources]\nmemory = "ours"\n'
                           'memory_bandwidth = "ours"\n"flops.bf16" = "ours"\n'
                           '"flops.fp8" = "ours"\nwithin_node = "ours"\n'
                           '[Old]\nmemory = "24 GiB"\nbf16 = "50 TFLOPs"\nsource = "lab"\n')
    table = gpus.load([path])
    lab, old = table["lab-1"], table["old"]
    assert lab.memory == "12 GiB" and lab.memory_bandwidth == 10**12
    assert lab.flops == {"bf16": 10**14, "fp8": 2 * 10**14} and lab.within_node.devices == 4
    assert old.memory == "24 GiB" and old.memory_bytes == 24 * GiB and old.bf16_flops == 5 * 10**13
    assert old.memory_bandwidth is None and old.sources["flops.bf16"] == "lab"


@pytest.mark.parametrize("body,message", [
    ('memory = 8e10\nbf16 = 1\nsource = "x"', "a TOML float is not exact"),
    ('memory = 80\nbf16 = 1\n', "source: is required: where memory comes from"),
    ('memory = 80\n[Z.flops]\nbf17 = 1\n', "flops.bf17: is not a dtype"),
    ('memory = 80\nsource = "x"\n', "flops: is required"),
    ('memory = 80\nbf16 = 1\nsource = "x"\n[Z.within_node]\nbandwidth = 1\n',
     "within_node.devices: must be a whole number of devices"),
    ('memory = 80\nbf16 = 1\n[Z.sources]\nmemory = "x"\n"flops.bf16" = "y"\nspeed = "z"\n',
     "sources.speed: names no field"),
    ('memory = 80\nbf16 = 1\n[Z.flops]\nbf16 = 2\n', "bf16: is given twice"),
])
def test_user_file_mistakes(tmp_path, body, message):
    path = _user(tmp_path, f"[Z]\n{body}\n")
    with pytest.raises(SymcalcError) as err:
        gpus.load([path])
    assert message in str(err.value), str(err.value)

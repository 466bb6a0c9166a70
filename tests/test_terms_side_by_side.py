"""The move from generated evaluators to the term table changes no number: on every preset and
every tests/families config, under six option sets, the report assembled from the term table
(symcalc.fast.terms) equals the one from the generated evaluators (symcalc.fast._generated),
key for key. Deleted together with the generated evaluators."""
from __future__ import annotations

import glob
import json

import pytest

from symcalc.algebra.options import Options
from symcalc.errors import SymcalcError
from symcalc.fast import quick
from symcalc.inputs import presets
from symcalc.inputs.hf import load_config, spec_from_config


def option_sets(spec):
    tp = 2 if spec.n_h % 2 == 0 and spec.n_kv % 2 == 0 else 1
    return [
        Options(),
        Options(activations="eager", dtype="fp32", batch=3, seq_len=100, context=77),
        Options(activations="eager", batch=1, seq_len=64, recompute="full", tp=tp),
        Options(activations="sdpa", recompute="selective", tp=tp, sequence_parallel=True,
                causal="exact", macs=True, nonmatmul=True, zero=3, dp=8, kv_dtype="int4",
                dtype="fp8", mla_cache="expanded"),
        Options(causal="half", zero=1, dp=3, optimizer="sgd-momentum", dtype="int4",
                kv_dtype="bits3", state_dtype="bf16", seq_len=4097, batch=2),
        Options(activations="sdpa", batch=1, seq_len=5, zero=2, dp=7, optimizer="adam-fp32",
                dtype="nvfp4"),
    ]


def _models():
    out = [(n, presets.load(n).spec) for n in presets.names()]
    for path in sorted(glob.glob("tests/families/*/*.json")):
        try:
            out.append((path, spec_from_config(load_config(path), name=path)))
        except SymcalcError:  # a config the family refuses on purpose
            pass
    return out


def test_term_table_equals_generated_evaluators():
    cases = differences = 0
    for name, spec in _models():
        for opts in option_sets(spec):
            try:
                old = quick.assemble(spec, opts, quick.Numbers(spec, opts))
            except SymcalcError:
                continue
            new = quick.assemble(spec, opts, quick.TermNumbers(spec, opts))
            cases += 1
            if json.dumps(old) != json.dumps(new):
                differences += 1
    assert cases > 2000
    assert differences == 0

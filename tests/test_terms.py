"""The term table cannot drift from the sympy expressions:

* symcalc/fast/terms.store equals a fresh build (run ``python -m symcalc.fast.build_terms``
  after changing any expression);
* read back into sympy, each quantity's combination of rows, with a model's switches, facts
  and options put in, is symbolically equal to ``quantities.expression``;
* the evaluator (symcalc.fast.terms) agrees with sympy substitution on every preset and on
  hypothesis-drawn models and options, for every quantity; its bound bounds.
"""
from __future__ import annotations

from functools import lru_cache

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import models, workloads
from symcalc.algebra import quantities as q
from symcalc.algebra.options import Options, workload_values
from symcalc.algebra.spec import size_values
from symcalc.algebra.symbols import ALL
from symcalc.fast import build_terms, quick, terms
from symcalc.inputs import presets
from conftest import in_turn, sympy_number

PRESETS = presets.names()
OPTION_SETS = [
    Options(),
    Options(batch=3, seq_len=100, dtype="int4", kv_dtype="fp32", causal="exact", macs=True,
            nonmatmul=True, recompute="full", optimizer="sgd-momentum", zero=2, dp=7, context=333),
    Options(batch=2, seq_len=513, causal="half", recompute="selective", zero=3, dp=64, tp=2,
            sequence_parallel=True, dtype="bits3", macs=True, activations="eager"),
]


def test_table_is_fresh():
    # terms.inputs records the hashes of what the table was built from; when one differs
    # (or the record is missing), the table is rebuilt and compared byte for byte
    if build_terms.inputs_unchanged():
        return
    assert build_terms.TARGET.read_bytes() == build_terms.generate(), \
        "symcalc/fast/terms.store is stale: run `python -m symcalc.fast.build_terms`"
    # the table is fresh but its record is not (a data file or module changed without a
    # rebuild): every run would rebuild the table to tell, about 10 s of the torch-free lane
    assert not build_terms.record_is_stale(), \
        "symcalc/fast/terms.inputs is stale: run `python -m symcalc.fast.build_terms`"


@pytest.fixture
def toy_package(tmp_path, monkeypatch):
    """A package of one module (rule.py, X = 1) and its table (b"table") for build_terms to
    record, in place of symcalc/."""
    pkg = tmp_path / "symcalc"
    (pkg / "fast").mkdir(parents=True)
    (pkg / "rule.py").write_text("X = 1\n")
    monkeypatch.setattr(build_terms, "PACKAGE", pkg)
    monkeypatch.setattr(build_terms, "TARGET", pkg / "fast" / "terms.store")
    monkeypatch.setattr(build_terms, "INPUTS", pkg / "fast" / "terms.inputs")
    build_terms.TARGET.write_bytes(b"table")
    return pkg


def test_the_inputs_record_notices_a_changed_input_or_table(toy_package):
    pkg = toy_package
    (pkg / "sizes.toml").write_text("d = 1\n")
    build_terms.INPUTS.write_bytes(build_terms.inputs_record(b"table", ["rule.py"]))
    assert build_terms.inputs_unchanged()
    (pkg / "rule.py").write_text("X = 2\n")
    assert not build_terms.inputs_unchanged()
    (pkg / "rule.py").write_text("X = 1\n")
    (pkg / "sizes.toml").write_text("d = 2\n")
    assert not build_terms.inputs_unchanged()
    (pkg / "sizes.toml").write_text("d = 1\n")
    assert build_terms.inputs_unchanged()
    (pkg / "rule.py").write_text("X = 1\n")
    build_terms.TARGET.write_bytes(b"edited")
    assert not build_terms.inputs_unchanged()
    build_terms.TARGET.write_bytes(b"table")
    (pkg / "rule.py").unlink()
    assert not build_terms.inputs_unchanged()


def test_a_stale_record_is_told_apart_from_other_versions(toy_package):
    """record_is_stale (which --check and test_table_is_fresh report): the record no longer
    matches although this Python and sympy wrote it; with other versions it cannot match and
    is not called stale."""
    import json

    pkg = toy_package
    build_terms.INPUTS.write_bytes(build_terms.inputs_record(b"table", ["rule.py"]))
    assert not build_terms.record_is_stale()
    (pkg / "rule.py").write_text("X = 2\n")
    assert build_terms.record_is_stale()
    record = json.loads(build_terms.INPUTS.read_text())
    build_terms.INPUTS.write_text(json.dumps({**record, "sympy": "0.0"}))
    assert not build_terms.record_is_stale()


def test_the_committed_record_lists_the_modules_a_build_imports():
    import json

    modules = json.loads(build_terms.INPUTS.read_text(encoding="utf-8"))["modules"]
    assert {"fast/build_terms.py", "algebra/symbols.py", "algebra/components.py"} <= set(modules)
    assert not any(m.startswith(("render/", "page/", "commands/")) for m in modules)


def to_sympy(t):
    """A term tree back as a sympy expression (symbols with the canonical assumptions)."""
    if isinstance(t, int):
        return sympy.Integer(t)
    if isinstance(t, str):
        if t.startswith("#"):
            return sympy.Integer(int(t[1:]))
        return ALL[t].symbol if t in ALL else sympy.Symbol(t, integer=True, nonnegative=True)
    op, args = t[0], [to_sympy(a) for a in t[1:]]
    if op == "+":
        return sympy.Add(*args)
    if op == "*":
        return sympy.Mul(*args)
    if op == "^":
        return args[0] ** args[1]
    if op == "/":
        return args[0] / args[1]
    if op == "min":
        return sympy.Min(*args)
    if op == "cd":
        return sympy.ceiling(args[0] / args[1])
    if op == "fd":  # lightning attention's whole blocks
        return sympy.floor(args[0] / args[1])
    raise AssertionError(op)


def table_expression(name, spec, opts):
    """Quantity ``name`` rebuilt from the table's rows and coefficients, the model's switches,
    facts and options put in (sizes left as symbols)."""
    v = quick.values(spec, opts)
    constants, _ = quick.split_values(v)
    shape = terms.table()["shapes"][spec.shape]
    entry = shape["quantities"][name]
    constants.update(entry.get("fix", {}))
    put = {to_sympy(k): sympy.Integer(x) for k, x in constants.items()}
    total = sympy.Add(*[to_sympy(coef) * set_sum(spec.shape, set_name)
                        for set_name, coef in entry["sum"]])
    return sympy.expand(total.xreplace(put))


@lru_cache(maxsize=None)
def set_sum(shape: str, set_name: str) -> sympy.Expr:
    """The rows of one set of a shape's table read back into sympy and added (read once per
    run: the sets are shared by the quantities and the cases)."""
    return sympy.Add(*[sympy.Mul(*[to_sympy(g) for g in row[2]]) * to_sympy(row[3]) / row[4]
                       for row in terms.table()["shapes"][shape]["sets"][set_name]])


# one model of each kind: dense GQA, MoE, MLA + MoE, hybrid, encoder, encoder-decoder, Gemma 3n
SAMPLE = ["mistral-7b", "mixtral-8x7b", "deepseek-v2-lite", "qwen3-next-80b-a3b", "bert-base",
          "t5-small", "gemma-3n-e4b", "falcon-7b", "jamba-1.5-mini", "deepseek-v3.2"]


@pytest.mark.parametrize("name,opts", [  # the defaults, the options or the parallel set in turn
    pytest.param(name, OPTION_SETS[k], id=f"{('default', 'options', 'parallel')[k]}-{name}")
    for name, (k,) in in_turn(SAMPLE, [0, 1, 2])])
def test_rows_add_up_to_the_quantities(name, opts):
    spec = presets.load(name).spec
    if opts.tp > 1 and (spec.n_h % opts.tp or spec.n_kv % opts.tp and opts.tp % spec.n_kv):
        opts = opts.with_(tp=1)
    fix = {ALL[n].symbol: sympy.Integer(x) for n, x in size_values(spec).items()
           if n in ("L_attn", "L_ffn", "L_dense", "L_local", "L_lin", "L_ssm", "L_conv",
                    "L_kv_shared", "L_kv_shared_local", "L_idx") and x in (0, spec.L)}
    # the output gate's width per head, which the sympy expression's structure substitutes
    fix[ALL["d_g"].symbol] = (sympy.Integer(1) if spec.attn_gate_per_head
                              else ALL["d_v"].symbol if spec.mla else ALL["d_h"].symbol)
    if spec.d_ai is None:  # the attention projections read d inputs (Zamba's 2d aside)
        fix[ALL["d_ai"].symbol] = ALL["d"].symbol
    if spec.B_sh is None:  # every attention and FFN layer holds its weights (Zamba's aside)
        for held, count in (("L_attn_w", "L_attn"), ("L_ffn_w", "L_ffn")):
            fix[ALL[held].symbol] = fix.get(ALL[count].symbol, ALL[count].symbol)
    # one codebook and no token rows beyond the head's vocabulary, unless the spec says
    if spec.K_cb is None:
        fix[ALL["K_cb"].symbol] = sympy.Integer(1)
    if spec.V_x is None:
        fix[ALL["V_x"].symbol] = sympy.Integer(0)
    if not spec.d_bb:  # no target model projected in and out (Gemma 4's assistants aside)
        fix[ALL["d_bb"].symbol] = sympy.Integer(0)
    # the table folds the ranks in (options, not sizes of the model)
    ranks = {ALL[n].symbol: sympy.Integer(x) for n, x in workload_values(spec, opts).items()
             if n in ("t", "N_d")}
    for quantity in q.QUANTITIES:
        got = table_expression(quantity, spec, opts)
        want = q.expression(quantity, spec, opts)
        # the sympy expression has the layer groups of a uniform stack substituted away
        got = sympy.expand(got.xreplace({k: (ALL["L"].symbol if x == spec.L else x)
                                         for k, x in fix.items()}))
        want = sympy.expand(want.xreplace(ranks).xreplace(
            {k: (ALL["L"].symbol if x == spec.L else x) for k, x in fix.items()}))
        if quantity == "flops.decode_per_token":
            continue  # evaluated at the context, compared by value below
        assert sympy.expand(got - want) == 0, quantity


def _check_all(spec, opts):
    for quantity in q.QUANTITIES:
        assert quick.evaluate(quantity, spec, opts) == sympy_number(quantity, spec, opts), quantity


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_evaluator_equals_sympy_on_drawn_models(data):
    spec = data.draw(models())
    _check_all(spec, data.draw(workloads(spec)))


@pytest.mark.parametrize("name", ["mixtral-8x7b", "deepseek-v3", "qwen3-next-80b-a3b", "t5-base"])
def test_bound_is_an_upper_bound_of_the_value(name):
    spec = presets.load(name).spec
    v = quick.values(spec, Options(seq_len=32768, activations="eager", nonmatmul=True))
    constants, sizes = quick.split_values(v)
    rows = terms.specialize(spec.shape, constants)
    for quantity in q.QUANTITIES:
        assert 0 <= rows.number(quantity, sizes) <= rows.bound(quantity, sizes), quantity


def test_min_and_ceiling_work_on_ints():
    v = {"a": 10**30, "b": 5, "c": 7}
    assert terms.evaluate(["min", "a", "b"], v) == 5
    assert terms.evaluate(["min", "b", "a"], v) == 5
    assert terms.evaluate(["cd", "c", "b"], v) == 2
    assert terms.fold(["*", "x", ["+", 1, -1]], {}) == 0
    assert terms.ratio(["/", ["+", "x", 1], 4], {"x": 3}) == (1, 1)


def test_every_row_collected_and_factored_for_sweeps_keeps_its_value():
    """A sweep sums each set's rows as one polynomial with shared sizes factored out
    (terms.polynomial, terms.factored): on every row of the table, with every name given
    a drawn value (atoms -- min, max, ceilings, floors -- taken apart), that form has the
    row's value, and so has the sum of a whole set."""
    import json
    import random

    rng = random.Random(20)
    table = terms.table()
    checked = 0
    for shape, body in table["shapes"].items():
        for name, rows in body["sets"].items():
            rows = terms.resolved(shape, name)
            names: set[str] = set()

            def walk(t):
                if type(t) is str and not t.startswith("#"):
                    names.add(t)
                elif type(t) is list:
                    for a in t[1:]:
                        walk(a)
            for row in rows:
                walk(row[3])
            for _ in range(2):
                v = {n: rng.randint(1, 9) for n in names}
                atoms: dict = {}
                whole: dict = {}
                want = 0
                facts = {n: x for n, x in v.items() if terms.is_fact(n)}  # else fold drops them
                for row in rows:
                    t = terms.fold(row[3], facts)
                    one = terms.polynomial(t, atoms)
                    terms.add(whole, one)
                    got_v = dict(v)
                    got_v.update({k: terms.evaluate(a, v) for k, a in atoms.items()})
                    value = terms.evaluate(t, v)
                    assert terms.evaluate(terms.factored(one), got_v) == value, \
                        (shape, name, json.dumps(row[3])[:300])
                    want += value
                    checked += 1
                got_v = dict(v)
                got_v.update({k: terms.evaluate(a, v) for k, a in atoms.items()})
                assert terms.evaluate(terms.factored(whole), got_v) == want, (shape, name)
    assert checked > 1000

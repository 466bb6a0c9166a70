"""Issue 25, items 3, 4 and 6 (and item 5 for expressions): the strings that become sympy
expressions, the work they start, and the answers that were silently wrong.

* item 3 -- no code runs from an expression: one parser (symcalc.algebra.expression) reads the
  plugin's forms, solve's relations and the size of --for / --diff, with limits;
* item 4 -- nothing hangs: roots over the size limit, the candidate search, a CPU-time limit on
  sympy, -o naming a FIFO;
* item 6 -- no silent wrong answer: units by pint (80Gb), unit algebra, options a command
  would ignore, the slope at a window's edge, exact elasticities, exact short forms, and the
  inputs that were counted although no model has them.
"""
from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from pathlib import Path

import pytest
import sympy

import symcalc
from symcalc.algebra import expression, roots
from symcalc.algebra.deadline import cpu_limit, undecided
from symcalc.algebra.symbols import SIZES
from symcalc.algebra.units import parse_amount
from symcalc.cli import main
from symcalc.errors import SymcalcError
from symcalc.fast.quick import quick_report
from symcalc.inputs.resolver import resolve
from symcalc.testing import assert_closed_form

REPO = Path(__file__).resolve().parent.parent
ONE_LINE = re.compile(r"^symcalc: error: [^\n]+: [^\n]+\n$")
d, L, s, W = (SIZES[n].symbol for n in ("d", "L", "s", "W"))


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and ONE_LINE.match(err), (argv, code, out, err)
    return err


def plugin_refusal(*args, **kwargs) -> str:
    """assert_closed_form's refusal: a pytest failure inside a test (symcalc.testing.checks),
    a SymcalcError elsewhere; both read ``assert_closed_form: FIELD: RULE``."""
    with pytest.raises((SymcalcError, pytest.fail.Exception)) as refused_:
        assert_closed_form(*args, **kwargs)
    text = str(refused_.value)
    assert "\n" not in text.strip() and text.startswith("assert_closed_form: "), text
    return text


def total(model, **sets):
    return quick_report(resolve(model, [f"{k}={v}" for k, v in sets.items()]))["params"]["total"]


# -- item 3: no code runs from an expression --------------------------------------------------
def payloads(canary: Path) -> list[str]:
    """The issue's payload and its cousins: each would create ``canary`` if evaluated."""
    cmd = f"touch {canary}"
    return [
        f"12*L*d**2 + 0*(lambda:0).__globals__['__builtins__']['__import__']('os').system('{cmd}')",
        f"__import__('os').system('{cmd}')",
        f"12*L*d**2 + 0*open('{canary}', 'w').close()",
        f"d.__class__.__mro__[1].__subclasses__()",
        f"exec(\"import os; os.system('{cmd}')\")",
        f"[x for x in ().__class__.__base__.__subclasses__()]",
        f"12*L*d**2; import os; os.system('{cmd}')",
    ]


def test_plugin_forms_run_no_code(tmp_path):
    canary = tmp_path / "ran"
    for text in payloads(canary):
        assert "expected: " in plugin_refusal("gpt2", text, assume="kaplan")
    assert not canary.exists()


def test_solve_relations_run_no_code(capsys, tmp_path):
    canary = tmp_path / "ran"
    for text in payloads(canary):
        refused(capsys, "solve", "gpt2", "--for", "d", "--target", f"params.total = {text}")
        refused(capsys, "solve", "gpt2", "--for", text, "--target", "params.total=7e9")
        refused(capsys, "closed-form", "gpt2", "--diff", text)
    assert not canary.exists()


def test_no_module_evaluates_user_text():
    """No eval/exec and no sympy string parser anywhere in the package; the modules that
    receive user expressions never call sympify (the family files' interpreter, which walks
    an ast it has checked, is the one place named _eval)."""
    banned = re.compile(r"(?<![\w.])(eval|exec|parse_expr)\(|sympy\.parsing|sympify\(\s*(text|expected)")
    found = [f"{p.relative_to(REPO)}:{i}" for p in (REPO / "symcalc").rglob("*.py")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if banned.search(line)]
    assert not found, found
    for name in ("algebra/expression.py", "algebra/relation.py", "testing/closed.py",
                 "algebra/solve.py", "algebra/sensitivity.py"):
        assert "sympify(" not in (REPO / "symcalc" / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize("text, want", [
    ("12*L*d**2", 12 * L * d**2),
    ("12 * L * d^2", 12 * L * d**2),
    ("-(2*d - 3*d)/4", d / 4),
    ("0.5*d + 1e3", d / 2 + 1000),
    ("2*Min(s, W) + Max(1, d)", 2 * sympy.Min(s, W) + sympy.Max(1, d)),
    ("(d**2)**2", d**4),
])
def test_the_grammar_reads_forms(text, want):
    got = expression.parse(text, "x", lambda n: (SIZES[n].symbol, "count") if n in SIZES else None)
    assert sympy.expand(got.expr - want) == 0


HOSTILE = [  # (text, words of the refusal)
    ("10**10**10", "a power must be a whole number 0 to 4"),
    ("d**262144", "a power must be a whole number 0 to 4"),
    ("d**2**2", "a power of a power needs parentheses"),
    ("((((d**4)**4)**4)**4)", "multiplies more than 12 names together"),
    ("(" * 495 + "d", "nests parentheses, signs and calls more than 40 deep"),
    ("-" * 495 + "d", "nests parentheses, signs and calls more than 40 deep"),
    ("Min(" * 100 + "d", "nests parentheses, signs and calls more than 40 deep"),
    ("d*" * 1500 + "d", "must be at most 2,000 characters"),
    ("(L+d+s+W+V+P+T+E+k)**4*(L+d+s+W+V+P+T+E+k)**4", "terms multiplied out"),
    ("9" * 101, "at most 100 digits"),
    ("1e31", "exponents up to 30"),
    ("d/(d-d)", "division by zero"),
    ("d/((d+1)**2 - d**2 - 2*d - 1)", "division by zero"),
    ("d ** -1", "a power must be a whole number"),
    ("d**1.5", "a power must be a whole number"),
]


@pytest.mark.parametrize("text, words", HOSTILE)
def test_limits_in_the_plugin(text, words):
    assert words in plugin_refusal("gpt2", text)


@pytest.mark.parametrize("text, words", HOSTILE)
def test_limits_in_solve(capsys, text, words):
    err = refused(capsys, "solve", "gpt2", "--for", "d", "--fit", f"params.total <= {text}")
    assert words in err


def test_set_values_never_become_expressions(capsys):
    """--set reads sizes as integers (symcalc.algebra.spec.parse_int), never an expression."""
    for value in ("2**10", "__import__('os')", "1e3", "d*2"):
        assert "must be a whole number" in refused(capsys, "report", "gpt2", "--set", f"L={value}")


# -- item 4: nothing hangs ---------------------------------------------------------------------
@pytest.mark.parametrize("argv, words", [
    (["--for", "d", "--fit", "memory.weights_bytes <= " + "1234567890" * 5],
     "is d = 2.07e+23, over the largest size symcalc takes (10**15)"),
    (["--for", "L", "--target", "params.total=1e30"],
     "is L = 1.411e+23, over the largest size symcalc takes (10**15)"),
])
def test_roots_over_the_size_limit_are_refused(capsys, argv, words):
    assert words in refused(capsys, "solve", "gpt2", *argv)


def test_the_candidate_search_is_bounded(monkeypatch):
    """--multiple-of 10**15: the root (d = 6,797) has no multiple of 10**15 below it, and the
    first above it is already refused (d_h = d / 12 not whole), the next over the limit."""
    from symcalc.algebra import solve as solving

    tried = []
    make = solving._valid

    def counting(*args):
        valid = make(*args)
        return lambda n: tried.append(n) or valid(n)

    monkeypatch.setattr(solving, "_valid", counting)
    sol = symcalc.solve("gpt2", "d", target="params.total=7e9", multiple_of=10**15)
    assert (sol.below, sol.above) == (None, None)
    assert all(n <= 10**15 for n in tried) and len(tried) <= 2


def test_nearest_stops_at_the_limit_and_steps_by_the_followers():
    calls = []
    assert roots.nearest(sympy.Integer(10**20), lambda n: calls.append(n) or False, 7, True,
                         10**15) is None
    assert max(calls) <= 10**15 and len(calls) <= roots.SEARCH_LIMIT
    calls.clear()
    assert roots.nearest(sympy.Integer(10**15 - 5), lambda n: calls.append(n) or False, 7,
                         False, 10**15) is None and calls == []  # 10**15 + 1 is over it
    # gpt2's d_h = d / 12: candidates step by 12 (and by lcm(12, 64) with --multiple-of 64)
    sol = symcalc.solve("gpt2", "d", target="params.total=7e9", multiple_of=64)
    assert sol.below % 192 == 0 and sol.above == sol.below + 192


def test_sympy_time_is_limited(monkeypatch):
    import time

    from symcalc.algebra import quantities, sensitivity, solve as solving

    # The work inside the limit must outlast it whatever sympy's cache already holds (a warm
    # cache once finished the differentiation in under 0.1 ms, and the timer never fired):
    # every expression built inside it first burns 50 ms of CPU time.
    build = quantities.expression

    def slow(*args, **kwargs):
        start = time.process_time()
        while time.process_time() - start < 0.05:
            pass
        return build(*args, **kwargs)

    monkeypatch.setattr(quantities, "expression", slow)
    monkeypatch.setattr(solving, "SOLVE_LIMIT", 1e-4)
    with pytest.raises(SymcalcError, match=r"^--fit: solving took more than 0.0001 s of CPU time"):
        symcalc.solve("mistral-7b", "s", fit="memory.kv_cache_bytes * 3 + memory.weights_bytes "
                                             "<= H100")
    monkeypatch.setattr(sensitivity, "SOLVE_LIMIT", 1e-4)
    with pytest.raises(SymcalcError, match=r"^--diff: differentiating took more than"):
        symcalc.sensitivity("mistral-7b", "s", "memory.activations_bytes")


def test_cpu_limit_restores_the_timer():
    import signal

    with cpu_limit(5, "x", "work"):
        assert signal.getitimer(signal.ITIMER_VIRTUAL)[0] > 0
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("argv, fifo", [
    (["derive", "gpt2", "-o", "@x.md"], "x.md"),
    (["derive", "gpt2", "--exercises", "-o", "@x.md"], "x-answers.md"),
    (["handout", "gpt2", "-o", "@x.md"], "x.md"),
    (["handout", "gpt2", "--exercises", "-o", "@x.tex"], "x-answers.tex"),
    (["handout", "gpt2", "-o", "@x.pdf"], "x.log"),
    (["page", "gpt2", "-o", "@x.html"], "x.html"),
])
def test_output_that_is_a_fifo_is_refused(capsys, tmp_path, argv, fifo):
    os.mkfifo(tmp_path / fifo)
    argv = [str(tmp_path / a[1:]) if a.startswith("@") else a for a in argv]
    assert "is a FIFO; symcalc writes only regular files" in refused(capsys, *argv)


def test_write_refuses_a_fifo_put_there_after_the_check(tmp_path):
    from symcalc.commands.derive import write

    path = tmp_path / "late.md"
    os.mkfifo(path)
    with pytest.raises(SymcalcError, match="^-o: "):
        write("text", str(path))  # no reader: opening without blocking fails at once


# -- item 5, for expressions: one line where sympy cannot decide ------------------------------
def test_undecidable_and_imprecise_are_one_line():
    from sympy.core.evalf import PrecisionExhausted

    with pytest.raises(SymcalcError, match="^--when: sympy cannot pin down"):
        with undecided("--when", "x"):
            raise PrecisionExhausted()
    with pytest.raises(SymcalcError, match="^--when: sympy cannot decide a comparison"):
        with undecided("--when", "x"):
            bool(d > 3)
    with pytest.raises(SymcalcError, match="^--when: 'x' is nested too deeply"):
        with undecided("--when", "x"):
            raise RecursionError()
    with pytest.raises(TypeError, match="other"):
        with undecided("--when", "x"):
            raise TypeError("other")


def test_whole_falls_back_to_an_exact_check(monkeypatch):
    from sympy.core.evalf import PrecisionExhausted

    class GivesUp:  # sympy as roots.py sees it, with floor and ceiling giving up
        def __getattr__(self, name):
            if name in ("floor", "ceiling"):
                def give_up(x):
                    raise PrecisionExhausted()
                return give_up
            return getattr(sympy, name)

    monkeypatch.setattr(roots, "sympy", GivesUp())
    root = sympy.sqrt(2) * sympy.sqrt(8) + sympy.Rational(1, 3)  # 4 + 1/3
    assert roots.whole(root, True) == 4 and roots.whole(root, False) == 5
    assert roots.whole(sympy.sqrt(16 * 10**20), True) == 4 * 10**10


@pytest.mark.parametrize("size", ["W", "E"])
def test_a_size_the_model_lacks_is_refused(capsys, size):
    err = refused(capsys, "solve", "gpt2", "--for", "d", "--fit", f"params.total <= {size}*1e9")
    assert f"gpt2 has no size {size}" in err


def test_min_of_two_expressions_in_the_size_is_one_line(capsys):
    err = refused(capsys, "solve", "gpt2", "--for", "d", "--when",
                  "Min(flops:layer/ffn, 2*flops:layer/attention/scores) >= 1e12")
    assert "a Min or Max is split only between d itself and a number" in err


# -- item 6: units and unit algebra -----------------------------------------------------------
def test_gigabits_are_not_gigabytes(capsys, tmp_path):
    err = refused(capsys, "solve", "gpt2", "--for", "d", "--fit", "memory.weights_bytes <= 80Gb")
    assert "80Gb is 80 gigabits (b is a bit, B a byte): write 80GB for bytes, or 80Gbit" in err
    bits = symcalc.solve("gpt2", "d", fit="memory.weights_bytes <= 80Gbit")
    assert bits.below == symcalc.solve("gpt2", "d", fit="memory.weights_bytes <= 10GB").below
    gpus = tmp_path / "g.toml"
    gpus.write_text('[G1]\nmemory = "80Gb"\nbf16 = "1 TFLOPs"\nsource = "x"\n', encoding="utf-8")
    assert "gigabits" in refused(capsys, "report", "gpt2", "--gpu", "G1", "--gpus", gpus)


@pytest.mark.parametrize("text, value", [("80GB", 80 * 10**9), ("24GiB", 24 * 2**30),
                                          ("80Gbit", 10**10), ("1 kbit", 125),
                                          ("2.25 PFLOPs", 225 * 10**13), ("1 EB", 10**18)])
def test_units_are_exact(text, value):
    assert parse_amount("x", text).value == value


@pytest.mark.parametrize("relation, words", [
    ("memory.weights_bytes * memory.kv_cache_bytes <= 80GB", "compares bytes^2 with bytes"),
    ("memory.weights_bytes <= flops.forward_matmul", "compares bytes with FLOPs"),
    ("params.total <= H100", "compares counts with bytes"),
    ("memory.weights_bytes + flops.forward_matmul <= 80GB", "adds bytes with FLOPs"),
    ("memory.weights_bytes + params.total <= 80GB", "adds bytes with counts"),
    ("memory.weights_bytes / memory.kv_cache_bytes <= 80GB", "compares counts with bytes"),
])
def test_unit_algebra_refuses_mismatched_dimensions(capsys, relation, words):
    assert words in refused(capsys, "solve", "gpt2", "--for", "s", "--fit", relation)


def test_unit_algebra_keeps_what_is_consistent():
    both = "memory.weights_bytes + memory.kv_cache_bytes"
    a = symcalc.solve("gpt2", "s", fit=f"{both} <= 8e9", batch=8)  # a plain number adopts bytes
    b = symcalc.solve("gpt2", "s", fit=f"{both} <= 8GB", batch=8)
    c = symcalc.solve("gpt2", "s", fit=f"({both}) / memory.weights_bytes <= 8GB / "
                                        "memory.weights_bytes", batch=8)  # counts with counts
    assert a.below == b.below == c.below


# -- item 6: options a command would ignore ---------------------------------------------------
@pytest.mark.parametrize("extra, field", [(["--assume", "kaplan"], "--assume"),
                                          (["--against", "gpt2-medium"], "--against"),
                                          (["--form", "kaplan"], "--form"),
                                          (["--quantity", "params.active"], "--quantity")])
def test_derive_for_refuses_what_it_would_ignore(capsys, extra, field):
    err = refused(capsys, "derive", "gpt2", "--for", "d", "--target", "params.total=7e9", *extra)
    assert err.startswith(f"symcalc: error: {field}: does not apply with --for")


@pytest.mark.parametrize("extra, field", [(["--keep", "d_ff/d"], "--keep"),
                                          (["--multiple-of", "64"], "--multiple-of")])
def test_derive_refuses_solving_options_without_for(capsys, extra, field):
    assert f"{field}: applies only with --for" in refused(capsys, "derive", "gpt2", *extra)


@pytest.mark.parametrize("argv, line", [
    (["--diff", "E"], "--diff: gpt2 has no size E"),
    (["--diff", "zz"], "--diff: 'zz' is not a size"),
    (["--diff", "d*2"], "--diff: 'd*2' is not a size"),
    (["--diff", "s"], "--diff: params.total does not depend on s"),
    (["--diff", "d", "--keep", "d_ff"], "--keep d_ff: must be a ratio"),
    (["--diff", "d", "--assume", "kaplan"], "--assume: does not apply with --diff"),
    (["--keep", "d_ff/d"], "--keep: applies only with --diff"),
])
def test_closed_form_diff_errors_name_its_own_options(capsys, argv, line):
    err = refused(capsys, "closed-form", "gpt2", *argv)
    assert err.startswith(f"symcalc: error: {line}") and "--for" not in err


# -- item 6: the slope at a window's edge, exact elasticities, exact short forms ---------------
def test_slope_at_the_window_edge_is_the_left_one():
    """Mistral's cache grows with s up to W = 4096 and stays there: at s = W the slope is the
    growth from the left (what the 4,096th token added), not sympy's Heaviside(0) = 1/2."""
    def kv(n):
        return quick_report(resolve("mistral-7b"), symcalc.algebra.options.Options(
            seq_len=n).checked())["memory"]["kv_cache_bytes"]

    at = symcalc.sensitivity("mistral-7b", "s", "memory.kv_cache_bytes", seq_len=4096)
    assert at.slope == kv(4096) - kv(4095) == 131_072 and at.elasticity == 1
    assert at.step == kv(4097) - kv(4096) == 0
    inside = symcalc.sensitivity("mistral-7b", "s", "memory.kv_cache_bytes", seq_len=4000)
    assert inside.slope == 131_072


def test_elasticity_stays_exact():
    """params.total is linear in L, so dQ/dL = Q(L+1) - Q(L) and the elasticity is
    L (Q(L+1) - Q(L)) / Q(L) exactly (nsimplify used to round this one to 1)."""
    n = 10**15 - 1
    got = symcalc.sensitivity("gpt2", "L", sets=[f"L={n}"])
    want = Fraction(n * (total("gpt2", L=n + 1) - total("gpt2", L=n)), total("gpt2", L=n))
    assert got.elasticity == sympy.Rational(want.numerator, want.denominator) != 1
    assert json.loads(json.dumps(got.to_json()))["elasticity"] == f"{want.numerator}/{want.denominator}"


@pytest.mark.parametrize("n", [123456789012345678901234567890, 2**100 + 1, 10**40 + 7])
def test_short_forms_of_huge_numbers_are_exact(n):
    from symcalc.render import numbers as N

    whole, frac = divmod(n * 100 // 10**12, 100)
    shown = N.short(n)
    assert shown.startswith(f"{whole}.") and shown.endswith(" T")
    assert N.bytes_both(n).replace(",", "").startswith(str(n // 10**9))
    assert N.si(n).replace(",", "").startswith(str(n // 10**18))


# -- item 6: inputs no model has ---------------------------------------------------------------
def _gemma3(**vision):
    cfg = json.loads((REPO / "tests/families/gemma3/tiny-conditional.json").read_text())
    cfg["vision_config"].update(vision)
    return cfg


@pytest.mark.parametrize("vision, words", [
    ({"hidden_size": 10**300}, "vision_config.hidden_size: must be at most 10**15"),
    ({"hidden_size": 0}, "vision_config.hidden_size: must be a positive integer (got 0)"),
    ({"num_hidden_layers": 0}, "vision_config.num_hidden_layers: must be a positive integer"),
    ({"intermediate_size": -4}, "vision_config.intermediate_size: must be a positive integer"),
])
def test_vision_sizes_follow_the_size_rules(capsys, tmp_path, vision, words):
    (tmp_path / "config.json").write_text(json.dumps(_gemma3(**vision)), encoding="utf-8")
    assert words in refused(capsys, "report", tmp_path / "config.json")


def test_a_decoder_needs_something_in_some_layer(capsys):
    err = refused(capsys, "report", "gpt2", "--set", "L_attn=0", "--set", "L_ffn=0")
    assert "leaves every layer empty" in err
    assert run(capsys, "report", "gpt2", "--set", "L_ffn=0")[0] == 0  # attention-only: fine


def test_mamba2_groups_divide_the_heads(capsys, tmp_path):
    cfg = json.loads((REPO / "tests/families/falcon_h1/tiny-out-bias-only.json").read_text())
    heads = cfg["mamba_n_heads"]
    cfg["mamba_n_groups"] = heads + 1 if heads > 1 else 2
    (tmp_path / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    assert "the Mamba-2 groups must divide the heads H_s" in refused(
        capsys, "report", tmp_path / "config.json")


@pytest.mark.parametrize("memory, bf16, field", [("0 GB", "1 TFLOPs", "memory"),
                                                 ("8 GB", "0 TFLOPs", "bf16")])
def test_an_accelerator_has_memory_and_speed(capsys, tmp_path, memory, bf16, field):
    gpus = tmp_path / "g.toml"
    gpus.write_text(f'[Z]\nmemory = "{memory}"\nbf16 = "{bf16}"\nsource = "x"\n', encoding="utf-8")
    assert f"[Z] {field}: must be more than 0" in refused(capsys, "report", "gpt2", "--gpu", "Z",
                                                          "--gpus", gpus)


@pytest.mark.parametrize("dtype", ["int4-g１２８", "int8-g٣٢", "fp8-block１２８", "int4-g²"])
def test_group_sizes_are_ascii_digits(capsys, dtype):
    assert "ASCII digits 0-9" in refused(capsys, "report", "gpt2", "--dtype", dtype)


def test_plugin_forms_take_no_units():
    for form in ("80GB*L", "7B*L*d", "1 PFLOPs"):
        assert "expected: a closed form takes numbers without units" in plugin_refusal("gpt2", form)


def test_the_search_evaluator_is_exact():
    """roots.evaluator (the candidate search's fast path) equals sympy's substitution, across
    a Min edge and with a quotient."""
    expr = 3 * sympy.Min(s, 4096) * s + sympy.Rational(7, 3) * s**2 / (s + 1) - 10**12
    at = roots.evaluator(expr, s)
    for n in (1, 2, 4095, 4096, 4097, 10**9, 10**15):
        assert at(n) == expr.xreplace({s: sympy.Integer(n)})

"""Issue 10, parts A and B: the command line under generated input, in-process.

Every run ends with exit status 0, or exit status 2 and exactly one line on stderr,
``symcalc: error: FIELD: RULE`` -- never a traceback, never another status. PDF builds are
left out (seconds each). Bounded to about half a minute (``max_examples`` below, no deadline).
"""
from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symcalc.cli import main  # noqa: E402

ONE_LINE = re.compile(r"^symcalc: error: [^\n]+: [^\n]+$")
PRESETS = ["gpt2", "llama-2-7b", "mixtral-8x7b", "t5-small", "bert-base", "deepseek-v2-lite"]
QUANTITIES = ["params.total", "params.active", "flops.forward_matmul", "flops.training",
              "memory.kv_cache_bytes", "memory.weights_bytes", "all", "params.nope", ""]
SET_KEYS = ["L", "d", "n_h", "n_kv", "d_ff", "V", "ffn", "name", "norm", "pos", "k", "E", "x", ""]

# text a user may type: letters, digits, punctuation, LaTeX and Markdown specials, control
# characters, non-ASCII (what pdflatex can and cannot set)
text = st.text(alphabet=st.sampled_from(
    list("abcXYZ019 _-.,:;=/\\{}$%&#^~<>|*`[]()'\"") +
    ["\n", "\t", "\r", "\x00", "\x1b", "\x07", "\x9b", "\u202e", "é", "ß", "Γ", "¥", "ℝ", "亿",
     "\u2028"]), max_size=30)
number = st.one_of(st.integers(-3, 5000).map(str), st.sampled_from(
    ["1_024", "0", "-1", "1.5", "1e3", "abc", "", " 7 ", "2,048", "3,2", "32_00", "１２",
     "²", "1" + "0" * 15, "1" + "0" * 16, "9" * 200, "9" * 5000, "2.0", "inf", "+3"]))
value = st.one_of(number, text)


def _set_item(key: str, val: str) -> str:
    return f"{key}={val}"


# `--set L=3,2` and `--set name=1` (once read as 32 and True) are covered by
# tests/test_hostile_inputs.py; here they only must not end in a traceback.
set_item = st.builds(_set_item, st.sampled_from(SET_KEYS), value)

config_value = st.one_of(st.integers(-2, 4096), st.booleans(), st.none(), text,
                         st.lists(st.integers(0, 9), max_size=3),
                         st.sampled_from(["llama", "gpt2", "mixtral", "t5", "bert", "silu"]))
config = st.dictionaries(st.sampled_from(
    ["model_type", "hidden_size", "num_hidden_layers", "num_attention_heads",
     "num_key_value_heads", "intermediate_size", "vocab_size", "n_layer", "n_embd", "n_head",
     "architectures", "tie_word_embeddings", "num_local_experts", "num_experts_per_tok",
     "hidden_act", "max_position_embeddings"]), config_value, max_size=8)
config = st.one_of(config, st.builds(lambda c: {"model_type": "llama", **c}, config))

toml_line = st.builds(lambda k, v: f"{k} = {v}", st.sampled_from(
    ["family", "L", "d", "n_h", "n_kv", "d_ff", "V", "name", "ffn", "spec"]), st.one_of(
    st.integers(-2, 4096).map(str), st.sampled_from(['"decoder"', '"encoder"', '"gated"',
                                                      '"x"', "true", "[1]", '"é¥"', "5",
                                                      '"abc"', "2.0", "1e30", "inf",
                                                      "9" * 30, "9" * 5000, "{}",
                                                      "[[1]]", "[" * 200 + "]" * 200])))
toml = st.one_of(st.lists(toml_line, max_size=8).map("\n".join),
                 st.sampled_from(["[[spec]]\nfamily = \"decoder\"\nL = 2", "x = " + "[" * 100_000,
                                  "[spec]\nL = 2.0\nd = 64\nn_h = 4\nd_ff = 256\nV = 9\n"
                                  "family = \"decoder\""]))
# raw bytes for a config.json, .toml or CSV: not UTF-8, NULs, nesting 100,000 deep, huge
# integers, a field over the csv module's limit
raw_file = st.one_of(st.binary(max_size=40), st.sampled_from(
    [b"\xff\xfe{}", b'{"model_type": "gpt2"\xff}', b"[" * 100_000, b'{"a":' * 100_000,
     b'{"model_type": "gpt2", "n_layer": 2.0}', b'{"model_type": "gpt2", "n_embd": '
     + b"9" * 5000 + b"}", b'{"model_type": "gpt2", "n_layer": 1e400}']))
csv_table = st.one_of(
    st.builds(lambda h, rows: ",".join(h) + "\n" + "\n".join(",".join(r) for r in rows),
              st.lists(st.sampled_from(["L", "d", "n_h", "V", "batch", "x", ""]), min_size=1,
                       max_size=3),
              st.lists(st.lists(number, min_size=1, max_size=3), max_size=3)).map(str.encode),
    st.sampled_from([b"L,L\n1,2\n", b"L\n\xff\n", b'L\n"' + b"1" * 200_000 + b'"\n',
                     b"L\n1\x002\n", b"L\n" + b"1\n" * 3]), raw_file)

# template translations (issue 25 item 2): _() with fields that walk attributes and items,
# conversions, widths and nested specs, filled with functions, data, text and numbers
SECRET = "symcalc-fuzz-secret-7d1e"  # in the environment while the fuzz test runs
FIELD_VALUES = ["_", "gettext", "ngettext", "range", "v", "h", "v.title", "'abc'", "4096",
                "10**9", "none", "lipsum", "cycler", "v.sections", "namespace", "dict"]


@st.composite
def translation(draw):
    """{{ _('...', f=..., n=4096, w=...) }}: f always given, so most messages format."""
    msg = " ".join(draw(st.lists(st.sampled_from(
        ["{f}", "{f.__globals__}", "{f.__globals__[_gettext].os.environ}", "{f.__class__}",
         "{f.__init__}", "{f[0]}", "{f.upper}", "{f!r}", "{f!s:>9}", "{f:{w}}",
         "{f:>999999999}", "{f.title}", "{f.sections[0].title}", "{f.__self__}",
         "{f.__func__.__globals__}", "context {n}", "{0}", "{", "The models", "x"]),
        min_size=1, max_size=2)))
    fields = [("f", draw(st.sampled_from(FIELD_VALUES))), ("n", "4096")]
    if draw(st.booleans()):
        fields.append(("w", draw(st.sampled_from(["3", "10**9", "'x'"]))))
    return "{{ _(%r%s) }}" % (msg, "".join(f", {k}={v}" for k, v in fields))


template = st.one_of(
    translation(), translation(),
    st.sampled_from(["{{ v.title }}", "{{ h.title }}", "{{ 1/0 }}", "{% include 'nope' %}",
                     "{{ v.__class__ }}", "{{ x }", "{% for s in v.sections %}{{ s.title }}"
                     "{% endfor %}", "{{ 'a'*10**9 }}", "{{ range(10**6)|list }}",
                     "((( v.title )))", "((* for s in v.sections *))((( s.title )))((* endfor *))",
                     "{% include 'self.j2' %}", "{{ '%9999999d' % 1 }}"]),
    text)

workload = st.lists(st.tuples(st.sampled_from(
    ["--batch", "--seq-len", "--context", "--zero", "--tp", "--dp", "--dtype", "--kv-dtype",
     "--causal", "--optimizer", "--recompute", "--mla-cache"]),
    st.one_of(number, st.sampled_from(["bf16", "fp8", "int4", "bits3", "full", "adam",
                                       "selective", "latent", "bogus", "", "²", "bits¹",
                                       "bits٣"]))),
    max_size=3)


@st.composite
def invocation(draw):
    command = draw(st.sampled_from(["report", "forms", "closed-form", "derive", "handout",
                                    "sweep", "presets", "nonsense"]))
    model_kind = draw(st.sampled_from(["preset", "preset", "preset", "garbage", "config",
                                       "toml", "raw-json", "raw-toml", "long"]))
    files: dict[str, str | bytes] = {}
    if model_kind == "preset":
        model = draw(st.sampled_from(PRESETS))
    elif model_kind == "garbage":
        model = draw(text.filter(lambda t: "\x00" not in t))
    elif model_kind == "config":
        files["m/config.json"] = json.dumps(draw(config))
        model = "@m/config.json"
    elif model_kind == "toml":
        files["spec.toml"] = draw(toml)
        model = "@spec.toml"
    elif model_kind == "raw-json":
        files["m/config.json"] = draw(raw_file)
        model = draw(st.sampled_from(["@m/config.json", "@m"]))
    elif model_kind == "raw-toml":
        files["spec.toml"] = draw(raw_file)
        model = "@spec.toml"
    else:  # longer than a file name may be
        model = "a" * 300 + draw(st.sampled_from(["", ".json", ".toml"]))
    argv = [command, model] if command != "presets" else [command]
    for _ in range(draw(st.integers(0, 2))):
        argv += ["--set", draw(set_item)]
    if draw(st.integers(0, 2)) == 0:  # most runs keep a valid workload, to reach the output
        for option, val in draw(workload):
            argv += [option, val]
    if command in ("closed-form", "derive", "sweep") and draw(st.booleans()):
        argv += ["--quantity", draw(st.sampled_from(QUANTITIES))]
    if command == "derive":
        fmt = draw(st.sampled_from(["md", "tex"]))
        argv += ["--format", fmt]
        extra = draw(st.sampled_from(["", "--standalone", "--assume", "--form", "--against"]))
        if extra == "--standalone":
            argv.append(extra)
        elif extra:
            argv += [extra, draw(st.one_of(st.sampled_from(
                ["kaplan", "textbook", "none", "seed-layer-mixed", "gpt2", ""]), text))]
    if command == "handout":
        suffix = draw(st.sampled_from([".md", ".tex", ".txt", ""]))
        argv += ["-o", draw(st.sampled_from(["@h", "@missing/h", "@", "@m"])) + suffix]
        if draw(st.booleans()):
            argv += ["--title", draw(text)]
    if command == "sweep":
        if draw(st.integers(0, 3)) == 0:
            files["t.csv"] = draw(csv_table)
            argv += ["--table", "@t.csv"]
        else:
            argv += ["--grid", draw(st.sampled_from(
                ["L=1,2", "L=1:4:1", "d=64,128", "L=", "x=1", "L=0", "batch=1,2",
                 "L=1:1000000000", "V=1" + "0" * 16, "L=1_0", "d=1_024", "V=" + "9" * 5000]))]
            if draw(st.integers(0, 5)) == 0:
                argv += ["--grid", "d=1:100000", "--grid", "V=1:100000"]
    if command in ("derive", "handout") and draw(st.integers(0, 2)) > 0:
        files["t/user.j2"] = draw(template)
        files["t/self.j2"] = "{% include 'self.j2' %}"
        argv += ["--template", "@t/user.j2"]
    if command in ("report", "forms", "closed-form", "sweep") and draw(st.booleans()):
        argv.append("--json" if command != "sweep" else "--format=json")
    if draw(st.integers(0, 9)) == 0:
        argv.append(draw(st.sampled_from(["--bogus", "-x", "", "--", "--help-me"])))
    return argv, files


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(invocation())
def test_cli_under_generated_input(capsys, monkeypatch, case):
    argv, files = case
    monkeypatch.setenv("SYMCALC_FUZZ_SECRET", SECRET)
    with tempfile.TemporaryDirectory(prefix="symcalc-fuzz-") as tmp:
        root = Path(tmp)
        for name, content in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        args = [str(root / a[1:]) if a.startswith("@") else a for a in argv]
        capsys.readouterr()
        try:
            code = main(args)
        except SystemExit as done:  # --help style exits only
            code = done.code
        out, err = capsys.readouterr()
    assert code in (0, 2), (args, code, err)
    assert SECRET not in out + err, (args, files)
    if code == 2:
        assert out == "", (args, out)
        assert err.count("\n") == 1 and ONE_LINE.match(err.rstrip("\n")), (args, err)
    else:
        assert err == "", (args, err)
        if "--template" not in args:  # user text never reaches the terminal raw
            assert not any(c in out for c in "\x1b\x07\x9b\u202e\x00"), (args, out)
        else:  # a template shows neither the environment nor Python's objects through _()
            for leak in (SECRET, "environ(", "<built-in", "<bound method", "<method"):
                assert leak not in out, (args, files, out[:300])
            if "_(" in str(files.get("t/user.j2", "")):
                assert "<function" not in out and "<class" not in out, (args, files, out[:300])
        if "--json" in args:
            json.loads(out)  # exact integers stay integers (json has no overflow)


@st.composite
def translated(draw):
    """derive or handout of a preset, in a language, with a user template of _() calls
    (the only thing wrong, if anything, is the template)."""
    calls = draw(st.lists(translation(), min_size=1, max_size=3))
    argv = [draw(st.sampled_from(["derive", "derive", "handout"])),
            draw(st.sampled_from(["gpt2", "t5-small"])),
            "--lang", draw(st.sampled_from(["en", "ru", "zh"]))]
    if argv[0] == "handout":
        argv += ["--sections", "breakdown", "-o", "@h.md"]
    return argv + ["--template", "@t/user.j2"], "\n".join(calls) + "\n"


@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(translated())
def test_template_translations_under_generated_input(capsys, monkeypatch, case):
    """Issue 25 item 2: _() in a user template, with fields that walk attributes and items,
    conversions and widths, filled with functions, the data, text and numbers: it prints
    text and numbers or is refused in one line naming the template's line; never the
    environment or a Python object."""
    argv, source = case
    monkeypatch.setenv("SYMCALC_FUZZ_SECRET", SECRET)
    with tempfile.TemporaryDirectory(prefix="symcalc-fuzz-") as tmp:
        root = Path(tmp)
        (root / "t").mkdir()
        (root / "t" / "user.j2").write_text(source, encoding="utf-8")
        args = [str(root / a[1:]) if a.startswith("@") else a for a in argv]
        capsys.readouterr()
        code = main(args)
        out, err = capsys.readouterr()
        if code == 0 and argv[0] == "handout":
            out = (root / "h.md").read_text(encoding="utf-8")
    assert code in (0, 2), (args, source, err)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and ONE_LINE.match(err.rstrip("\n")), err
        assert "user.j2:" in err, (source, err)
    for leak in (SECRET, "environ(", "<built-in", "<bound method", "<method", "<function",
                 "<class", "<module"):
        assert leak not in out + err, (source, (out + err)[:300])


# -- issue 25: expression strings and plugin calls ---------------------------------------------
# Every string that becomes a sympy expression (solve --target/--fit/--when, --for, closed-form
# --diff, assert_closed_form's forms) is read by one parser (symcalc.algebra.expression): here
# drawn from its tokens, from Python payloads and from the limits' edges. Nothing may run (a
# canary file would appear), hang or end in a traceback.
CANARY = Path(tempfile.gettempdir()) / "symcalc-fuzz-canary"
EXPR_NAMES = ["params.total", "params.active", "memory.kv_cache_bytes", "memory.weights_bytes",
              "memory.activations_bytes", "flops.forward_matmul", "flops:layer/ffn",
              "flops:layer/attention/scores", "params:layer/attention", "params:nope", "d", "L",
              "s", "n_h", "d_ff", "W", "E", "V", "H100", "A100-80GB", "X200", "Min", "Max",
              "__import__", "lambda", "__globals__", "__class__", "os", "system", "eval", "open"]
EXPR_NUMBERS = ["0", "1", "2", "0.5", "7e9", "1e30", "1e31", "80GB", "80Gb", "80Gbit", "80 gb",
                "24 GiB", "7B", "1 PFLOPs", "9" * 50, "9" * 101, "1e-30", ".5", "1_0"]
EXPR_OPS = ["+", "-", "*", "/", "**", "^", "(", ")", ",", "[", "]", ".", "'", '"', ":", ";",
            "<=", ">=", "=", "==", "<", ">", "lambda:0", " ", "\n", "\x00", "é"]
EXPR_EDGES = ["(" * 495 + "d", "10**10**10", "d**262144", "((((d**4)**4)**4)**4)",
              "d*" * 1100 + "d", "-" * 60 + "d", "Min(" * 50 + "d", "d/(d-d)", "",
              f"12*L*d**2 + 0*(lambda:0).__globals__['__builtins__']['__import__']('os')"
              f".system('touch {CANARY}')", f"__import__('os').system('touch {CANARY}')",
              "(L+d+s+W+V)**4*(L+d+s+W+V)**4*(L+d+s+W+V)**4", "12*L*d**2", "Min(s, W)*2*L"]
expr_token = st.sampled_from(EXPR_NAMES + EXPR_NUMBERS + EXPR_OPS)
expr_tokens = st.lists(expr_token, max_size=12).map("".join)


@st.composite
def expr_text(draw, depth: int = 0):
    """A well-formed expression over the names and numbers above (so that some are solved),
    or a soup of tokens, or an edge of the limits."""
    kind = draw(st.sampled_from(["well", "well", "soup", "edge"]))
    if kind == "soup":
        return draw(expr_tokens)
    if kind == "edge":
        return draw(st.sampled_from(EXPR_EDGES))
    out = draw(st.sampled_from(EXPR_NAMES[:10] + EXPR_NUMBERS[:10]))
    for _ in range(draw(st.integers(0, 2))):
        op = draw(st.sampled_from(["+", "-", "*", "/"]))
        right = draw(expr_text(depth + 1)) if depth < 2 and draw(st.booleans()) else \
            draw(st.sampled_from(EXPR_NAMES[:10] + EXPR_NUMBERS[:10]))
        out = f"{out} {op} ({right})" if draw(st.booleans()) else f"{out}{op}{right}"
    if draw(st.integers(0, 4)) == 0:
        out = f"({out})**{draw(st.integers(0, 5))}"
    return out


KINDED = {"count": ["params.total", "params.active", "d", "L", "7B", "7e9", "2", "0.5"],
          "bytes": ["memory.kv_cache_bytes", "memory.weights_bytes", "memory.activations_bytes",
                    "H100", "80GB", "24 GiB", "80Gbit", "1e30"],
          "flops": ["flops.forward_matmul", "flops:layer/ffn", "flops:layer/attention/scores",
                    "1 PFLOPs", "1e12"]}


@st.composite
def kinded_relation(draw, op: str):
    """A relation whose two sides measure one thing (most are solved, not refused)."""
    names = KINDED[draw(st.sampled_from(sorted(KINDED)))]

    def side():
        out = draw(st.sampled_from(names))
        for _ in range(draw(st.integers(0, 2))):
            out += draw(st.sampled_from([" + ", " - "])) + draw(st.sampled_from(names))
        if draw(st.integers(0, 3)) == 0:
            out = f"{draw(st.sampled_from(['2', '0.5', '3']))}*({out})"
        return out

    return f"{side()} {op} {side()}"


@st.composite
def expression_invocation(draw):
    model = draw(st.sampled_from(["gpt2", "mistral-7b", "t5-small", "mixtral-8x7b"]))
    # hypothesis leans to the first choices: those are the ones that get solved
    size = draw(st.sampled_from(["d", "L", "s", "n_h", "b", "d_ff"])) \
        if draw(st.integers(0, 4)) < 4 else draw(st.one_of(st.sampled_from(["W", "E"]), expr_text()))
    command = draw(st.sampled_from(["solve", "derive", "closed-form", "solve"]))
    if command == "closed-form":
        return ["closed-form", model, "--diff", size, "--quantity", draw(st.sampled_from(
            ["params.total", "memory.kv_cache_bytes", "flops.forward_matmul", "nope"]))]
    mode = draw(st.sampled_from(["--target", "--fit", "--when"]))
    op = draw(st.sampled_from({"--target": ["=", "=="], "--fit": ["<=", "<", "="],
                               "--when": [">=", "<", ">"]}[mode]))
    how = draw(st.integers(0, 5))
    relation = draw(kinded_relation(op)) if how < 3 else draw(expr_text()) if how == 5 else \
        f"{draw(expr_text())} {op} {draw(expr_text())}"
    argv = [command, model, "--for", size, mode, relation]
    if draw(st.integers(0, 3)) == 3:
        argv += ["--multiple-of", draw(st.sampled_from(["64", "1000000000000000", "0", "x"]))]
    if draw(st.integers(0, 3)) == 3:
        argv += ["--batch", draw(st.sampled_from(["8", "1000000000000000"]))]
    return argv


@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(expression_invocation())
def test_expressions_under_generated_input(capsys, argv):
    CANARY.unlink(missing_ok=True)
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert not CANARY.exists(), argv
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and ONE_LINE.match(err.rstrip("\n")), (argv, err)
    else:
        assert err == "", (argv, err)


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(model=st.sampled_from(["gpt2", "llama-2-7b", "mistral-7b", "t5-small"]),
       form=st.one_of(expr_text(), st.sampled_from(["12*L*d**2", "Min(s, W)"])),
       quantity=st.sampled_from(["params.total", "flops.forward_matmul",
                                 "memory.kv_cache_bytes", "params.nope"]),
       assume=st.sampled_from(["none", "kaplan", "textbook", "nope"]))
def test_plugin_forms_under_generated_input(model, form, quantity, assume):
    """assert_closed_form passes, fails as an assertion, or refuses the form, quantity or
    assumption as one SymcalcError line (or a pytest failure saying so) -- nothing else."""
    from symcalc.errors import SymcalcError
    from symcalc.testing import assert_closed_form

    CANARY.unlink(missing_ok=True)
    try:
        assert_closed_form(model, form, quantity=quantity, assume=assume)
    except AssertionError as failed:
        assert str(failed).startswith(f"{quantity} of "), str(failed)
    except SymcalcError as refused:
        assert "\n" not in str(refused)
    except pytest.fail.Exception:
        pass
    assert not CANARY.exists(), form

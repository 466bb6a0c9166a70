"""How fast (issue 23): every figure against its definition with independent arithmetic,
the MFU numerator against Megatron-LM's formula, the capacity against vLLM's rules worked by
hand, the JSON contract.

The rules live in symcalc.algebra.roofline / serving / utilization (written once, evaluated
exactly here and symbolically in derivations); the figures of a model come from
symcalc.fast.speed on the report's own numbers. The arithmetic below is written from the
definitions in docs/conventions.md ("How fast"), not from those modules.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction as Q

import pytest
from hypothesis import given, settings, strategies as st

from symcalc.algebra import roofline as RL, serving as SV
from symcalc.algebra.layout import Layout
from symcalc.algebra.options import Options
from symcalc.cli import main
from symcalc.fast import speed as SP
from symcalc.fast.quick import quick_report
from symcalc.inputs import resolve
from symcalc.inputs.gpus import accelerator

H100 = accelerator("H100")
fractions = st.fractions(min_value=Q(1, 1000), max_value=Q(10**6)).filter(lambda x: x > 0)
shares = st.fractions(min_value=Q(1, 100), max_value=1).filter(lambda x: x > 0)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- the rules ----------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(C=fractions, M=fractions, X=fractions | st.just(Q(0)), P=fractions, B=fractions,
       N=fractions, ec=shares, em=shares, en=shares)
def test_phase_time_is_the_roofline_plus_communication(C, M, X, P, B, N, ec, em, en):
    c, m, n = C / (ec * P), M / (em * B), X / (en * N)
    got = RL.phase_seconds(RL.compute_seconds(C, P, ec), RL.memory_seconds(M, B, em),
                           RL.network_seconds(X, N, en))
    assert got == (c if c >= m else m) + n
    expected = "network" if n > max(c, m) else ("compute" if c >= m else "memory")
    assert RL.bound(c, m, n) == expected
    assert RL.intensity(C, M) == C / M and RL.ridge_point(P, B, ec, em) == ec * P / (em * B)
    # at the ridge point compute and memory take equally long
    ridge = ec * P / (em * B)
    assert RL.compute_seconds(ridge * M, P, ec) == RL.memory_seconds(M, B, em)
    assert RL.attainable(C / M, P, B, ec, em) == min(ec * P, C / M * em * B)


def test_the_rules_are_the_sympy_forms():
    """The same functions give the sympy expressions derivations show; substituted they
    are the exact numbers."""
    import sympy

    from symcalc.algebra.symbols import beta_m, beta_n, eta_c, eta_m, eta_n, pi_c

    C, M, Xb = sympy.symbols("C M X", positive=True)
    expr = RL.phase_seconds(RL.compute_seconds(C, pi_c, eta_c), RL.memory_seconds(M, beta_m, eta_m),
                            RL.network_seconds(Xb, beta_n, eta_n))
    assert expr == sympy.Max(C / (eta_c * pi_c), M / (eta_m * beta_m)) + Xb / (eta_n * beta_n)
    vals = {C: 7, M: 3, Xb: 5, pi_c: 11, beta_m: 2, beta_n: 13, eta_c: sympy.Rational(1, 2),
            eta_m: 1, eta_n: sympy.Rational(3, 4)}
    exact = RL.phase_seconds(RL.compute_seconds(7, 11, Q(1, 2)), RL.memory_seconds(3, 2),
                             RL.network_seconds(5, 13, Q(3, 4)))
    assert expr.xreplace(vals) == sympy.Rational(exact.numerator, exact.denominator)


@settings(max_examples=300, deadline=None)
@given(E=st.integers(1, 300), data=st.data())
def test_experts_read_is_the_expected_count_rounded_up(E, data):
    k = data.draw(st.integers(1, E))
    n = data.draw(st.integers(0, 3000))
    brute = E * (1 - Q(E - k, E) ** n)
    assert RL.experts_read(n, E, k) == math.ceil(brute)


@given(t=st.integers(1, 10**6))
def test_first_batch_finds_the_threshold(t):
    assert RL.first_batch(lambda b: b >= t, limit=2**20) == t
    assert RL.first_batch(lambda b: False, limit=64) is None


# -- a model's figures, worked from the report -----------------------------------------------

def _kv(spec, opts, seq):
    return quick_report(spec, opts.with_(seq_len=seq, context=None))["memory"]["kv_cache_bytes"]


def _by_hand(name, opts, gpu=H100):
    """Prefill and decode on one device, worked from the report's figures and the model's
    sizes by the definitions (docs/conventions.md, "How fast")."""
    spec = resolve(name)
    rep = quick_report(spec, opts)
    m, f, bd = rep["memory"], rep["flops"], rep["params"]["breakdown"]
    b, s = opts.batch, rep["flops"]["seq_len"]
    ctx = opts.context or s
    w = Q(2)  # bf16
    lookup = sum(bd.get(p, 0) for p in ("embedding/position", "embedding/token_type",
                                        "embedding/per_layer"))
    if spec.head != "tied":
        lookup += bd.get("embedding/token", 0)
    routed = sum(x for p, x in bd.items() if p.startswith("layer/moe/experts/")
                 and p.count("/") == 3)

    def weights(tokens):
        read = Q(m["weights_bytes"]) - lookup * w
        if spec.moe:
            touched = math.ceil(spec.E * (1 - Q(spec.E - spec.k, spec.E) ** tokens))
            read -= routed * w * (1 - Q(touched, spec.E))
        return read

    state = Q(m.get("recurrent_state_bytes", 0))
    hidden = lambda tokens: 2 * spec.L * tokens * spec.d * 2  # noqa: E731
    pre_bytes = weights(b * s) + m["kv_cache_bytes"] + state + hidden(b * s)
    dec_bytes = weights(b) + _kv(spec, opts, ctx) + _kv(spec, opts, 1) + 2 * state + hidden(b)
    P, B = Q(gpu.flops["bf16"]), Q(gpu.memory_bandwidth)
    pre = max(Q(f["forward"]) / P, pre_bytes / B)
    dec = max(Q(f["decode_per_token"]) / P, dec_bytes / B)
    return rep, {"prefill_bytes": pre_bytes, "decode_bytes": dec_bytes, "prefill": pre,
                 "decode": dec, "prefill_flops": Q(f["forward"]),
                 "decode_flops": Q(f["decode_per_token"])}


def _figures(name, opts, **kw):
    spec = resolve(name)
    rep = quick_report(spec, opts)
    return SP.blocks(spec, opts, rep, SP.SpeedOptions(gpu=kw.pop("gpu", H100), **kw))


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(["llama-2-7b", "gpt2", "mixtral-8x7b", "mistral-7b",
                             "jamba-1.5-mini", "deepseek-v2-lite"]),
       batch=st.integers(1, 64), seq=st.integers(1, 8192), ctx=st.none() | st.integers(1, 9000),
       causal=st.sampled_from(["full", "half"]))
def test_prefill_and_decode_against_their_definitions(name, batch, seq, ctx, causal):
    opts = Options(batch=batch, seq_len=seq, context=ctx, causal=causal)
    rep, hand = _by_hand(name, opts)
    sp = _figures(name, opts)["speed"]
    pre, dec = sp["phases"]["prefill"], sp["phases"]["decode"]
    assert pre["bytes"]["total"] == hand["prefill_bytes"]
    assert dec["bytes"]["total"] == hand["decode_bytes"]
    assert pre["flops"] == hand["prefill_flops"] and dec["flops"] == hand["decode_flops"]
    assert sp["prefill_seconds"] == hand["prefill"]
    assert sp["decode_seconds_per_token"] == hand["decode"]
    assert sp["tokens_per_second"]["prefill"] == batch * seq / hand["prefill"]
    assert sp["tokens_per_second"]["decode"] == batch / hand["decode"]
    assert sp["arithmetic_intensity"]["decode"] == hand["decode_flops"] / hand["decode_bytes"]
    assert sp["ridge_point"] == Q(H100.flops["bf16"], H100.memory_bandwidth)
    for phase in ("prefill", "decode"):
        p = sp["phases"][phase]
        intensity = p["flops"] / p["bytes"]["total"]
        assert sp["bound"][phase] == ("compute" if intensity >= sp["ridge_point"] else "memory")


def test_decode_turns_compute_bound_at_the_first_batch_that_is():
    """Llama-3-8B (GQA) at a 256-token context: b* is the first batch whose decode FLOPs
    take at least as long as its bytes, worked by hand at b* and b* - 1."""
    opts = Options(batch=1, seq_len=256)
    b_star = _figures("llama-3-8b", opts)["speed"]["compute_bound_batch"]
    assert b_star is not None and b_star > 1

    def compute_bound(b):
        _rep, hand = _by_hand("llama-3-8b", opts.with_(batch=b))
        P, B = Q(H100.flops["bf16"]), Q(H100.memory_bandwidth)
        return hand["decode_flops"] / P >= hand["decode_bytes"] / B

    assert compute_bound(b_star) and not compute_bound(b_star - 1)


def test_efficiencies_scale_each_time_and_say_it():
    opts = Options(batch=4, seq_len=1024)
    bound = _figures("llama-2-7b", opts)["speed"]
    est = _figures("llama-2-7b", opts, efficiency=(Q(3, 5), Q(4, 5), Q(1)))["speed"]
    assert bound["is_bound"] and not est["is_bound"] and "0.6" not in bound["note"]
    for phase in ("prefill", "decode"):
        assert est["phases"][phase]["compute_seconds"] == bound["phases"][phase]["compute_seconds"] / Q(3, 5)
        assert est["phases"][phase]["memory_seconds"] == bound["phases"][phase]["memory_seconds"] / Q(4, 5)
    assert est["ridge_point"] == bound["ridge_point"] * Q(3, 5) / Q(4, 5)


def test_tensor_parallel_adds_the_all_reduces_over_nvlink():
    """tp 8: each rank reads its share of the weights and sends the forward's collectives
    over NVLink; decode sends 2 (8 - 1)/8 x payload per all-reduce and (8 - 1)/8 x payload
    per all-gather (ring)."""
    opts = Options(batch=16, seq_len=2048, tp=8)
    sp = _figures("llama-2-7b", opts, layout=Layout(tp=8))["speed"]
    dec = sp["phases"]["decode"]
    # as transformers applies llama's plan (tp_plan="auto"): two all-reduces per layer
    # (attention output, FFN down) and one of the vocabulary-sharded embedding, b d bf16
    # values each; the head (colwise_gather_output) all-gathers b V logits
    reduce = (2 * 32 + 1) * 16 * 4096 * 2
    gather = 16 * 32000 * 2
    assert dec["network_bytes"]["tp"] == reduce * Q(2 * 7, 8) + gather * Q(7, 8)
    assert dec["network_seconds"] == dec["network_bytes"]["tp"] / H100.within_node.bandwidth
    assert sp["links"] == {"tp": "NVLink 4 through NVSwitch"}
    # the rank's weights (the report's per_rank: the most-loaded rank) read in the whole
    # model's proportion (the untied token table is looked up, not read)
    spec = resolve("llama-2-7b")
    rank = quick_report(spec, opts)["per_rank"]["weights_bytes"]
    whole = quick_report(spec, opts.with_(tp=1))["memory"]["weights_bytes"]
    assert dec["bytes"]["weights"] == rank * Q(whole - 32000 * 4096 * 2, whole)
    assert Q(whole, 8) < rank < Q(whole, 6)


# -- MFU: Megatron-LM's numerator ---------------------------------------------------------------

def megatron_flops(batch, s, L, d, n_h, n_kv, d_h, d_ff, V, swiglu=True):
    """Megatron-LM's num_floating_point_operations (megatron/training/training.py) for a
    dense GPT, written out: 12 B s L d^2 (attention + MLP + logit), the attention term
    (1 + groups/heads + s/(2d)) x (n_h d_h / d) with the causal half of the scores, the
    vocabulary padded to a multiple of 128."""
    V_pad = -(-V // 128) * 128
    attention = (1 + Q(n_kv, n_h) + Q(s, 2 * d)) * Q(n_h * d_h, d)
    mlp = Q(d_ff, d) * (Q(3, 2) if swiglu else 1)
    logit = Q(V_pad, 2 * L * d)
    return 12 * batch * s * L * d * d * (attention + mlp + logit)


@pytest.mark.parametrize("name,s", [("llama-2-7b", 4096), ("mistral-7b", 4096),
                                    ("llama-3-8b", 8192)])
def test_megatron_numerator_is_symcalcs_training_flops_causal_half(name, s):
    spec = resolve(name)
    opts = Options(batch=2, seq_len=s)
    theirs = megatron_flops(2, s, spec.L, spec.d, spec.n_h, spec.n_kv, spec.d_h, spec.d_ff, spec.V)
    assert SP.numerator_per_token(spec, opts, "megatron") * 2 * s == theirs
    half = quick_report(spec, opts.with_(causal="half"))["flops"]["training"]
    assert half == theirs
    # the named convention: the published form "megatron-mfu" is symcalc's count, exactly
    from symcalc.derivations import published

    assert published.difference("megatron-mfu", spec) == 0


def test_palm_numerator_is_the_published_form():
    import sympy

    from symcalc.derivations.published import form
    from symcalc.algebra.spec import size_values
    from symcalc.algebra.symbols import SIZES

    spec = resolve("llama-2-7b")
    opts = Options(seq_len=4096)
    ours = SP.numerator_per_token(spec, opts, "palm")
    vals = {SIZES[k].symbol: v for k, v in size_values(spec).items() if k in SIZES}
    vals[SIZES["s"].symbol] = 4096
    theirs = form("palm").published(spec).xreplace(vals)
    assert sympy.Rational(ours.numerator, ours.denominator) == theirs


def test_mfu_and_hfu_of_a_step(capsys):
    """MFU = model FLOPs per token x tokens per second / (GPUs x peak); HFU counts the
    recomputed forward too."""
    code, out, _ = run(capsys, "report", "llama-2-7b", "--gpu", "H100", "--batch", "4",
                       "--seq-len", "4096", "--dp", "8", "--recompute", "full",
                       "--step-time", "1.5", "--train-tokens", "2T", "--json", "--exact")
    assert code == 0
    u = json.loads(out)["utilization"]
    spec = resolve("llama-2-7b")
    model = megatron_flops(4, 4096, 32, 4096, 32, 32, 128, 11008, 32000) / (4 * 4096)
    rate = Q(4 * 4096 * 8) / Q(3, 2)
    peak = 8 * H100.flops["bf16"]
    assert Q(u["mfu"]) == model * rate / peak
    hw = Q(quick_report(spec, Options(batch=4, seq_len=4096, recompute="full"))["flops"]["training"], 4 * 4096)
    assert Q(u["hfu"]) == hw * rate / peak and Q(u["hfu"]) > Q(u["mfu"])
    seconds = Q(2 * 10**12) / rate
    assert Q(u["training"]["seconds"]) == seconds
    assert Q(u["training"]["gpu_hours"]) == seconds * 8 / 3600


# -- capacity: vLLM's rules worked by hand ---------------------------------------------------------

def _capacity(name, gpu, **kw):
    opts = Options(batch=1, seq_len=kw.pop("context"))
    spec = resolve(name)
    rep = quick_report(spec, opts)
    fig = SP.Figures(spec, opts, rep, SP.SpeedOptions(gpu=accelerator(gpu), **kw))
    return SP.capacity(fig), rep


def test_capacity_llama_2_7b_full_attention():
    """Uniform full attention: one group of all 32 layers, blocks = budget // page // 32
    (get_num_blocks), a request of 4096 tokens takes cdiv(4096, 16) = 256 blocks."""
    cap, rep = _capacity("llama-2-7b", "H100", context=4096, activation_peak=2 * 10**9)
    budget = 80 * 10**9 * Q(9, 10) - 13_476_831_232 - 2 * 10**9   # memory x util - weights - peak
    page = 16 * 2 * 32 * 128 * 2          # block x (K and V) x kv heads x head dim x bf16
    blocks = int(budget // page // 32)
    assert rep["memory"]["weights_bytes"] == 13_476_831_232
    assert (cap["kv_budget_bytes"], cap["page_bytes"], cap["blocks"]) == (budget, page, blocks)
    assert cap["pages_per_sequence"] == 256 and cap["max_sequences"] == blocks // 256
    assert blocks == 6738 and blocks // 256 == 26


def test_capacity_gemma_2_9b_sliding_and_full():
    """21 sliding (W = 4096) + 21 full layers: two groups of 21 (max 21 < 1.5 x 21); a
    request of 8192 tokens takes cdiv(8192, 16) = 512 pages of the full group and
    cdiv(min(4095 + 2048, 8192), 16) + 1 = 385 of the sliding one."""
    cap, rep = _capacity("gemma-2-9b", "A100-80GB", context=8192, activation_peak=10**9,
                         max_num_batched_tokens=2048)
    budget = 80 * 10**9 * Q(9, 10) - rep["memory"]["weights_bytes"] - 10**9
    page = 16 * 2 * 8 * 256 * 2
    blocks = int(budget // page // 21)
    per_request = 512 + (-(-(4095 + 2048) // 16) + 1)
    assert rep["memory"]["weights_bytes"] == 2 * 9_241_705_984
    assert cap["layers_per_group"] == 21 and cap["groups"] == {"full": 1, "sliding": 1}
    assert (cap["page_bytes"], cap["blocks"], cap["pages_per_sequence"]) == (page, blocks, per_request)
    assert per_request == 897 and cap["max_sequences"] == blocks // 897


def test_capacity_deepseek_v2_lite_mla_latent():
    """MLA keeps one latent of r_kv + d_rope = 512 + 64 values per token and layer
    (MLAAttentionSpec: no factor 2)."""
    cap, rep = _capacity("deepseek-v2-lite", "H100", context=32768, activation_peak=3 * 10**9)
    budget = 80 * 10**9 * Q(9, 10) - rep["memory"]["weights_bytes"] - 3 * 10**9
    page = 16 * (512 + 64) * 2
    blocks = int(budget // page // 27)
    assert cap["page_bytes"] == page and cap["blocks"] == blocks
    assert cap["max_sequences"] == blocks // (32768 // 16)


def test_capacity_jamba_mamba_layers_raise_the_block():
    """Jamba 1.5 Mini: 4 attention + 28 Mamba layers. One Mamba layer's state per sequence
    (transformers' count: d_in N_s fp32 + K_conv d_in bf16 = 8192*16*4 + 4*8192*2 = 589,824 B)
    needs an attention page of 16 * cdiv(589824, 16 * 4096) = 144 tokens; groups of 4 layers
    (28 >= 1.5 x 4): 1 full group, 7 Mamba groups; a request takes cdiv(ctx, 144) + 7."""
    cap, rep = _capacity("jamba-1.5-mini", "MI325X", context=16384, activation_peak=4 * 10**9)
    state = 8192 * 16 * 4 + 4 * 8192 * 2
    token = 2 * 8 * 128 * 2
    block = 16 * -(-state // (16 * token))
    page = block * token
    budget = 256 * 10**9 * Q(9, 10) - rep["memory"]["weights_bytes"] - 4 * 10**9
    blocks = int(budget // page // 4)
    per_request = -(-16384 // block) + 7
    assert (state, block, page) == (589_824, 144, 589_824)
    assert cap["block_size"] == block and cap["groups"] == {"full": 1, "recurrent": 7}
    assert (cap["blocks"], cap["pages_per_sequence"]) == (blocks, per_request)
    assert cap["max_sequences"] == blocks // per_request


def test_group_size_rule():
    assert SV.group_size([21, 21]) == 21 and SV.group_size([12, 13]) == 13
    assert SV.group_size([4, 22]) == 4 and SV.group_size([32]) == 32


# -- the contract --------------------------------------------------------------------------------

def test_json_contract_floats_and_exact(capsys):
    code, out, _ = run(capsys, "report", "mistral-7b", "--gpu", "H100", "--json")
    rep = json.loads(out)
    sp, cap = rep["speed"], rep["capacity"]
    for key in ("prefill_seconds", "decode_seconds_per_token", "ridge_point"):
        assert isinstance(sp[key], float)
    assert set(sp["bound"]) == set(sp["tokens_per_second"]) == {"prefill", "decode"}
    assert set(sp["arithmetic_intensity"]) == {"prefill", "decode"}
    assert {"kv_budget_bytes", "blocks", "max_sequences"} <= set(cap)
    assert "utilization" not in rep
    code, out, _ = run(capsys, "report", "mistral-7b", "--gpu", "H100", "--json", "--exact")
    exact = json.loads(out)["speed"]
    n, d = exact["decode_seconds_per_token"].split("/")
    assert float(Q(int(n), int(d))) == sp["decode_seconds_per_token"]


def test_report_with_gpu_imports_neither_sympy_nor_pint():
    code = ("import sys; from symcalc.cli import main; "
            "main(['report', 'mistral-7b', '--gpu', 'H100', '--json']); "
            "print('sympy' in sys.modules, 'pint' in sys.modules, file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stderr.split() == ["False", "False"]


@pytest.mark.parametrize("argv,message", [
    (["--gpu", "H100", "--efficiency", "compute=1.5"], "--efficiency compute: must be at most 1"),
    (["--gpu", "H100", "--efficiency", "speed=0.5"], "--efficiency: 'speed=0.5' is not NAME=VALUE"),
    (["--step-time", "2"], "--step-time: needs an accelerator"),
    (["--gpu", "H100", "--compute-dtype", "fp4"], "--compute-dtype: H100 has no fp4 peak"),
    (["--gpu", "H100", "--step-time", "1", "--tokens-per-second", "5"],
     "--tokens-per-second: give --step-time or --tokens-per-second"),
    (["--gpu", "H100", "--gpu-memory-utilization", "0"], "must be more than 0"),
    (["--gpu", "RTX4090", "--tp", "2", "--dp", "8", "--pp", "1"], None),
])
def test_speed_options_are_checked(capsys, argv, message):
    argv = [a for a in argv if a not in ("--pp", "1")] if message is None else argv
    code, _out, err = run(capsys, "report", "llama-2-7b", *argv)
    if message is None:
        assert code == 0, err
        return
    assert code == 2 and message in err, err


# -- derivations ---------------------------------------------------------------------------------

@pytest.mark.parametrize("quantity,key", [
    ("speed.prefill_seconds", ("speed", "prefill_seconds")),
    ("speed.decode_seconds_per_token", ("speed", "decode_seconds_per_token")),
    ("capacity.max_sequences", ("capacity", "max_sequences")),
    ("utilization.mfu", ("utilization", "mfu")),
])
@pytest.mark.parametrize("extra", [[], ["--tp", "2", "--efficiency", "compute=0.5,network=0.8"]])
def test_each_figure_is_derived_step_by_step(capsys, quantity, key, extra):
    """derive --quantity ends on the report's exact figure, cites its sources, renders to
    Markdown and LaTeX."""
    from symcalc.commands.derive import build  # noqa: F401
    from symcalc.commands.parser import build_parser
    from symcalc.render.latex import derivation_latex
    from symcalc.render.markdown import derivation_markdown

    common = ["mistral-7b", "--gpu", "H100", "--batch", "4", "--seq-len", "2048",
              "--step-time", "0.8", *extra]
    code, out, err = run(capsys, "report", *common, "--json", "--exact")
    assert code == 0, err
    figure = json.loads(out)[key[0]][key[1]]
    args = build_parser("derive").parse_args(["derive", *common, "--quantity", quantity])
    d = build(args)
    got = d.result.value
    assert Q(str(got)) == Q(str(figure))
    assert d.sources() and all(s for s in d.sources())
    assert "Result" in derivation_markdown(d) and "\\frac" in derivation_latex(d, False)


# -- solve ---------------------------------------------------------------------------------------

def test_largest_batch_under_a_decode_time_on_8_gpus(capsys):
    """'The largest batch whose decode time per token is under 50 ms on 8 x H100 with tp 8':
    the answer meets it, one more sequence does not (each checked with report)."""
    common = ["llama-2-13b", "--gpu", "H100", "--tp", "8", "--seq-len", "4096"]
    code, out, err = run(capsys, "solve", *common, "--for", "b", "--fit",
                         "speed.decode_seconds_per_token <= 0.05", "--json")
    assert code == 0, err
    got = json.loads(out)
    b = got["answer"]
    assert got["edge"] == "largest" and got["layout"]["tp"] == 8 and got["gpus"] == 8

    def decode(batch):
        code, out, _ = run(capsys, "report", *common, "--batch", str(batch), "--json", "--exact")
        return Q(json.loads(out)["speed"]["decode_seconds_per_token"])

    assert decode(b) <= Q(1, 20) < decode(b + 1)
    assert "does not fit" in got["note"]  # the KV cache holds fewer sequences of 4096 tokens


def test_fewest_gpus_that_serve_64_sequences(capsys):
    """'The fewest GPUs that serve 64 sequences of 32k tokens': the layout found holds 64,
    and no layout of one accelerator fewer does (tensor parallelism dividing the heads within
    a node, pipeline stages, data-parallel replicas, enumerated here)."""
    common = ["llama-3-8b", "--gpu", "H100", "--seq-len", "32768"]
    code, out, err = run(capsys, "solve", *common, "--for", "gpus", "--fit",
                         "capacity.deployment_max_sequences >= 64", "--json")
    assert code == 0, err
    got = json.loads(out)
    n = got["gpus"]

    def serves(t, p, dp):
        code, out, err = run(capsys, "report", *common, "--tp", str(t), "--dp", str(dp),
                             *(["--pp", str(p)] if p > 1 else []), "--json")
        if code != 0 and "--pp" in err:  # before the layouts issue adds --pp to report
            spec = resolve("llama-3-8b")
            opts = Options(seq_len=32768, tp=t, dp=dp)
            return SP.capacity(SP.Figures(spec, opts, quick_report(spec, opts), SP.SpeedOptions(
                gpu=H100, layout=Layout(tp=t, pp=p, dp=dp))))["deployment_max_sequences"] >= 64
        return json.loads(out)["capacity"]["deployment_max_sequences"] >= 64

    lay = got["layout"]
    assert serves(lay["tp"], lay["pp"], lay["dp"])
    fewer = n - 1
    for t in (1, 2, 4, 8):
        for p in range(1, fewer // t + 1):
            if fewer % (t * p) == 0:
                assert not serves(t, p, fewer // (t * p)), (t, p)


def test_sweep_takes_accelerators_and_layouts_as_axes(capsys):
    """Each row is the report's figure at that point (accelerator, tp, batch)."""
    code, out, err = run(capsys, "sweep", "llama-2-7b", "--grid", "gpu=H100,MI300X",
                         "--grid", "tp=1,2", "--grid", "batch=1,32", "--seq-len", "2048",
                         "--quantity", "speed.decode_seconds_per_token", "--quantity",
                         "capacity.max_sequences", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert len(rows) == 8
    for row in rows:
        code, out, _ = run(capsys, "report", "llama-2-7b", "--gpu", row["gpu"], "--tp",
                           str(row["tp"]), "--batch", str(row["batch"]), "--seq-len", "2048",
                           "--json")
        rep = json.loads(out)
        assert row["speed.decode_seconds_per_token"] == rep["speed"]["decode_seconds_per_token"]
        assert row["capacity.max_sequences"] == rep["capacity"]["max_sequences"]


# -- the handout's "How fast" section --------------------------------------------------------------

def _speed_handout(names, lang="en", tex=False, seq=256, exercises=False):
    from symcalc.derivations.handout_data import SECTIONS, handout
    from symcalc.render.handout import handout_latex, handout_markdown

    from symcalc.commands.handout import speed_of

    h = handout([resolve(n) for n in names], None, Options(seq_len=seq), SECTIONS,
                exercises=exercises, speed=speed_of(H100))
    return (handout_latex if tex else handout_markdown)(h, lang=lang), h


def test_handout_section_how_fast_with_its_exercise():
    """The section shows each model's prefill and decode against the report, and the
    exercise's answer, worked from the three numbers it gives, is the report's batch."""
    text, h = _speed_handout(["llama-3-8b", "gpt2"])
    assert "## How fast" in text and "Exercise." in text
    for sh in h.sheets:
        sp = sh.speed
        rep = _figures(sh.spec.name, Options(seq_len=256))["speed"]
        assert sp.decode.seconds == rep["decode_seconds_per_token"]
        assert sp.prefill.seconds == rep["prefill_seconds"]
        from symcalc.render.handout_speed import linear_batch

        assert linear_batch(sp) == rep["compute_bound_batch"]
    assert "b\\* = ceil(W pi / (c beta - m pi)) = " in text
    sheet, _h = _speed_handout(["llama-3-8b"], exercises=True)
    assert "ceil(W pi" not in sheet and "\\_\\_\\_\\_ (" in sheet  # numbered blanks
    # the section's own figures are numbered blanks too (not the blank function's repr)
    assert "<function" not in sheet
    assert "| prefill (time to first token) | \\_\\_\\_\\_ (" in sheet


@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_handout_section_is_fully_translated(lang):
    from symcalc import i18n

    i18n.missing.pop(lang, None)
    text, _h = _speed_handout(["llama-3-8b"], lang=lang)
    assert not i18n.missing.get(lang), sorted(i18n.missing[lang])[:5]
    assert ("## Насколько быстро" if lang == "ru" else "## 有多快") in text


def test_handout_roofline_figure_compiles(tmp_path):
    import shutil

    from symcalc.render.handout import compile_pdf

    if not shutil.which("pdflatex"):
        pytest.skip("needs pdflatex")
    tex, _h = _speed_handout(["llama-3-8b", "mixtral-8x7b"], tex=True)
    assert "\\addplot[black, very thick, forget plot]" in tex
    compile_pdf(tex, tmp_path / "h.pdf")
    assert (tmp_path / "h.pdf").stat().st_size > 10_000


# -- the page --------------------------------------------------------------------------------------

PAGE_CASES = [
    ("llama-2-7b", {}), ("mixtral-8x7b", {"batch": 8, "seq_len": 1024}),
    ("gpt2", {"batch": 3, "context": 700}), ("jamba-1.5-mini", {"seq_len": 4096}),
    ("deepseek-v2-lite", {"dtype": "fp32", "batch": 2}), ("mistral-7b", {"seq_len": 8192, "context": 9000}),
    # 3.9M prefill tokens over 64 experts: the tree takes the power at no more than 80 tokens
    # (the page spun for minutes on (56/64)^3,903,291 before)
    ("olmoe-1b-7b", {"batch": 49, "seq_len": 79659}),
]
PAGE_GPUS = ("H100", "TPU-v5e")


@pytest.fixture(scope="module")
def page_speed(tmp_path_factory):
    """The page's speed figures of every case on both chips, from one Node run."""
    from conftest import page_core, write_page_data

    jobs = [{"kind": "speed", "preset": name, "options": options, "gpu": gpu}
            for name, options in PAGE_CASES for gpu in PAGE_GPUS]
    got = page_core(write_page_data(tmp_path_factory.mktemp("page")), jobs)
    return {(j["preset"], json.dumps(j["options"]), j["gpu"]): g for j, g in zip(jobs, got)}


@pytest.mark.skipif(__import__("shutil").which("node") is None, reason="needs Node.js")
@pytest.mark.parametrize("name,options", PAGE_CASES)
def test_the_page_shows_the_same_figures(page_speed, name, options):
    """The page walks the trees symcalc.fast.speed.page_rules records from the same rules;
    on its own report it gives the report's exact figures."""
    for gpu in PAGE_GPUS:
        page = page_speed[(name, json.dumps(options), gpu)]["ok"]
        if page is None:  # the chip has no peak for the dtype: the command line refuses it
            with pytest.raises(Exception, match="no fp32 peak"):
                _figures(name, Options(**options), gpu=accelerator(gpu))
            continue
        sp = _figures(name, Options(**options), gpu=accelerator(gpu))["speed"]
        assert Q(page["prefill_seconds"]) == sp["prefill_seconds"]
        assert Q(page["decode_seconds"]) == sp["decode_seconds_per_token"]
        for phase in ("prefill", "decode"):
            assert Q(page[f"{phase}_intensity"]) == sp["arithmetic_intensity"][phase]
            assert Q(page[f"{phase}_bytes"]) == sp["phases"][phase]["bytes"]["total"]
            assert Q(page[f"{phase}_tokens_per_second"]) == sp["tokens_per_second"][phase]
            bound = "compute" if page[f"{phase}_compute_bound"] == "1/1" else "memory"
            assert bound == sp["bound"][phase]
        assert Q(page["ridge_point"]) == sp["ridge_point"]


@pytest.mark.parametrize("layout,stage", [(dict(tp=2), 0),
                                          (dict(tp=2, pp=2, microbatches=4), 1)])
def test_the_rank_is_the_reports_serving_rank(layout, stage):
    """How fast reads the report's per-rank blocks (issue 22): with one stage its per_rank
    and communication (bytes on the wire), else the --per-stage block with the largest
    serving peak. qwen2-0.5b on two stages: training loads stage 0 most (the microbatches in
    flight), serving stage 1 (the final norm)."""
    spec = resolve("qwen2-0.5b")
    opts = Options(batch=2, seq_len=128, **layout)
    rep = quick_report(spec, opts)
    fig = SP.Figures(spec, opts, rep, SP.SpeedOptions(gpu=H100, layout=opts.layout()))
    stages = quick_report(spec, opts.with_(per_stage=True)).get("per_stage") or [
        {**rep["per_rank"], "communication": rep["communication"]}]
    one = stages[stage]
    assert one["serving_peak_bytes"] == max(s["serving_peak_bytes"] for s in stages)
    assert rep["per_rank"]["stage"] == 0
    assert (fig.r.weights, fig.r.kv) == (one["weights_bytes"], one["kv_cache_bytes"])
    cm = one["communication"]
    assert fig.r.prefill_wire == {d: cm[d]["forward_wire_bytes"] for d in cm}
    assert fig.r.decode_wire == {d: cm[d]["decode_wire_bytes_per_token"] for d in cm}

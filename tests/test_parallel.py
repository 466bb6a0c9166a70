"""Per-rank memory and communication of parallel layouts (symcalc.algebra.parallel), through
sympy substitution, without torch:

* one rank (t = p = 1) gives today's whole-model figures, for every preset;
* hypothesis: the per-rank parameters summed over every tensor-, expert-parallel rank and
  pipeline stage give back the whole model (a tied head's copy and Megatron's vocabulary
  padding the only extra rows);
* the megatron convention against Megatron-LM's theoretical_memory_usage.py for three
  published configurations of Narayanan et al. 2021, Table 1 (worked below);
* ZeRO-2/3 against DeepSpeed's estimate_zero2/3_model_states_mem_needs (no offload), and the
  paper's 2 + 2 + 12 bytes against Rajbhandari et al. 2020's example;
* closed forms and the communication of one layer checked term by term.
"""
from __future__ import annotations

import math

import pytest
import sympy
from hypothesis import HealthCheck, given, settings, strategies as st

from symcalc.algebra import accounting, communication as C, parallel as P, quantities as Q
from symcalc.algebra import stages as ST, tp_plans as TP
from symcalc.algebra.layout import Layout
from symcalc.algebra.options import Options, workload_values
from symcalc.algebra.spec import make_spec, size_values
from symcalc.algebra.symbols import SIZES
from symcalc.errors import SymcalcError
from symcalc.inputs import resolve
from symcalc.inputs.family_data import tp_plan
from symcalc.inputs.presets import names


def plan_of(spec):
    return TP.plan_entries(tp_plan(spec.implementation["tp_plan"]))


def values(spec, opts: Options, layout: Layout) -> dict:
    vals = size_values(spec)
    vals.update(workload_values(spec, opts, check_heads=False))
    vals.update(layout.values())
    return {SIZES[k].symbol: sympy.Integer(v) for k, v in vals.items() if k in SIZES}


def num(expr, spec, opts=Options(), layout=Layout()):
    out = sympy.sympify(expr).xreplace(values(spec, opts, layout))
    assert out.is_number, out
    return out


# -- one rank is the whole model ----------------------------------------------------------------

# the attention widths summed over the layers where the global layers have a shape of their own
SUMMED_WIDTHS = frozenset(SIZES[k].symbol
                          for k in ("S_q", "S_k", "S_v", "S_kn", "S_o", "A_l", "A_g"))


# every other preset (alphabetically): the sympy per-rank expressions at t = p = ... = 1 are
# the whole model's. Every preset's table is held to the same (test_terms_parallel's
# test_one_rank_is_the_whole_model) and to the sympy report, per rank on a third of them
# (test_quick's layout option sets); this sympy identity cost the lane 6 s over all presets.
@pytest.mark.parametrize("name", names()[::2])
def test_one_rank_gives_todays_figures(name):
    spec = resolve(name)
    opts = Options(seq_len=128, batch=2)
    mem = P.rank_memory(spec, opts, Layout(), plan_of(spec))
    one = {SIZES[k].symbol: sympy.Integer(v) for k, v in Layout().values().items()
           if k != "N_d"}  # t = p = ... = 1, sizes left symbolic

    values = {SIZES[k].symbol: sympy.Integer(v) for k, v in
              {**size_values(spec), **workload_values(spec, opts)}.items() if k in SIZES}

    def same(ours, quantity):
        diff = sympy.expand(sympy.sympify(ours).xreplace(one) - Q.expression(quantity, spec, opts))
        if diff != 0 and diff.free_symbols & SUMMED_WIDTHS:
            # global layers of their own shape (Gemma 4, MiMo-V2-Flash): the whole-model
            # expressions hold the widths summed over the layers as symbols of their own
            # (spec.toml's [values]), the per-rank ones the per-layer widths: they agree at
            # the spec's sizes
            diff = diff.xreplace(values)
        return diff == 0

    assert same(P.total(mem.params), "params.total")
    for ours, quantity in ((mem.weights, "memory.weights_bytes"),
                           (mem.kv_cache, "memory.kv_cache_bytes"),
                           (mem.recurrent_state, "memory.recurrent_state_bytes"),
                           (mem.activations, "memory.activations_bytes")):
        assert same(P.total(ours), quantity), quantity
    assert same(mem.model_states(), "memory.training_bytes")


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
@pytest.mark.parametrize("optimizer", ["adam-mixed", "adam-fp32", "sgd-momentum"])
def test_zero_stages_give_todays_training_bytes(zero, optimizer):
    spec = resolve("mistral-7b")
    opts = Options(zero=zero, dp=64, optimizer=optimizer)
    mem = P.rank_memory(spec, opts, Layout(dp=64, zero=zero), plan_of(spec))
    states = num(mem.model_states(), spec, opts, Layout(dp=64, zero=zero))
    assert states == num(Q.expression("memory.training_bytes", spec, opts), spec, opts,
                         Layout(dp=64, zero=zero))


@pytest.mark.parametrize("name", ["llama-2-7b", "gpt2-medium", "mixtral-8x7b"])
@pytest.mark.parametrize("sp", [False, True])
@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_megatron_activations_are_todays_tensor_parallel_figures(name, sp, recompute):
    """Under Megatron's layer every region runs split: the activations per rank are today's
    --tp figure (Korthikanti et al. 2022's division of every term)."""
    spec = resolve(name)
    opts = Options(seq_len=256, tp=8, sequence_parallel=sp, recompute=recompute)
    layout = Layout(tp=8, tp_plan="megatron", sequence_parallel=sp)
    ours = P.total(P.rank_activations(spec, opts, layout))
    t, t_e = SIZES["t"].symbol, SIZES["t_e"].symbol  # the experts split over t_e = t
    assert sympy.expand(ours.xreplace({t_e: t})
                        - Q.expression("memory.activations_bytes", spec, opts)) == 0


# -- llama-2-13b --tp 8 --------------------------------------------------------------------------

def test_llama_2_13b_tp8_weights_per_rank():
    """The issue's example, exactly: under hf the plan transformers applies with
    tp_plan="auto" splits the token table (the embed_tokens entry it adds to the base plan)
    and the head (LlamaForCausalLM's own lm_head entry) over the 32,000 rows, under megatron
    both are split over a vocabulary padded to 32,768 = 32 x 128 x 8."""
    spec = resolve("llama-2-13b")
    L, d, d_ff, V = 40, 5120, 13824, 32000
    layers = L * (4 * d * d + 3 * d * d_ff)  # q, k, v, o and the gated FFN, no biases
    norms = L * 2 * d + d
    assert layers + norms + 2 * V * d == 13_015_864_320
    hf = num(P.total(P.rank_memory(spec, Options(), Layout(tp=8), plan_of(spec)).weights),
             spec, layout=Layout(tp=8))
    assert hf == 2 * (layers // 8 + norms + 2 * V * d // 8) == 3_254_691_840
    meg = num(P.total(P.rank_memory(spec, Options(), Layout(tp=8, tp_plan="megatron")).weights),
              spec, layout=Layout(tp=8, tp_plan="megatron"))
    assert meg == 2 * (layers // 8 + norms + 2 * (32768 // 8) * d) == 3_256_657_920
    closed = P.assume_divisible(P.total(P.rank_params(spec, Layout(tp=8), plan_of(spec))))
    L_, d_, dff_, nh_, nkv_, dh_, V_, t_ = (SIZES[n].symbol for n in
                                            ("L", "d", "d_ff", "n_h", "n_kv", "d_h", "V", "t"))
    assert sympy.expand(closed - ((3 * L_ * d_ * dff_ + 2 * L_ * d_ * dh_ * (nh_ + nkv_)) / t_
                                  + 2 * L_ * d_ + d_ + 2 * V_ * d_ / t_)) == 0


# -- sums over ranks give back the whole model --------------------------------------------------

@st.composite
def decoders(draw):
    n_kv = draw(st.sampled_from([1, 2, 4]))
    groups = draw(st.integers(1, 3))
    d_h = draw(st.sampled_from([4, 6, 8]))
    return make_spec(
        name="drawn", family="decoder", L=draw(st.integers(1, 7)), d=draw(st.integers(4, 40)),
        n_h=n_kv * groups, n_kv=n_kv, d_h=d_h, d_ff=draw(st.integers(3, 50)),
        V=draw(st.integers(5, 300)), ffn=draw(st.sampled_from(["plain", "gated"])),
        norm=draw(st.sampled_from(["rmsnorm", "layernorm"])), position="rotary",
        attention_bias=draw(st.sampled_from(["none", "all", "qkv"])),
        ffn_bias=draw(st.booleans()), head=draw(st.sampled_from(["tied", "untied"])),
        head_bias=draw(st.booleans()))


GPT_NEOX_LIKE = (TP.PlanEntry("embed_in", "embedding_rowwise", ("embedding/token",)),
                 TP.PlanEntry("qkv", "colwise", ("layer/attention/q", "layer/attention/k",
                                                "layer/attention/v")),
                 TP.PlanEntry("o", "rowwise", ("layer/attention/o",)),
                 TP.PlanEntry("gate_up", "colwise_gather_output", ("layer/ffn/gate",
                                                                  "layer/ffn/up")),
                 TP.PlanEntry("down", "rowwise_split_input", ("layer/ffn/down",)))


RANK = sympy.Symbol("r", integer=True, nonnegative=True)  # a tensor-parallel rank


def rowwise_bias(spec) -> dict:
    """Bias elements of the row-parallel modules (attention output, FFN down) over the
    stack: whole on every rank."""
    return {"layer/attention/o": spec.L * spec.d * ("o" in spec.biased_projections),
            "layer/ffn/down": spec.L * spec.d * spec.ffn_bias}


def per_path_over_ranks(spec, layout, plan, stages=None):
    """path -> (sum over every tensor-parallel rank and stage, the values of its ranks)."""
    out: dict[str, list] = {}
    for stage in stages or ST.stage_indices(layout):
        terms = P.rank_params(spec, layout, plan, stage, tp_rank=RANK)
        for x in terms:
            expr = x.expr.xreplace(values(spec, Options(), layout))
            out.setdefault(x.path, []).extend(expr.xreplace({RANK: r})
                                              for r in range(layout.tp))
    return out


@given(spec=decoders(), t=st.integers(1, 6), p=st.integers(1, 3),
       plan=st.sampled_from(["llama", "fused"]))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hf_ranks_and_stages_sum_to_the_whole_model(spec, t, p, plan):
    """hf, every tensor-parallel rank of every stage: the split parts sum to the whole part,
    a part the plan leaves whole is whole on each of the t ranks of its stage; the last
    stage of a tied model holds its own copy of the token table."""
    p = min(p, spec.L)
    entries = plan_of(resolve("llama-2-7b")) if plan == "llama" else GPT_NEOX_LIKE
    layout = Layout(tp=t, pp=p)
    split = {part for entry in entries for part in entry.parts}
    split.discard("layer/attention/q_head_norm")
    got = per_path_over_ranks(spec, layout, entries)
    whole = {leaf.path: num(leaf.value, spec) for leaf in accounting.params(spec)}
    for path, value in whole.items():
        ranks = got[path]
        if path in split:  # a rowwise module's bias is whole on every rank
            assert sum(ranks) == value + (t - 1) * rowwise_bias(spec).get(path, 0), path
        elif path.startswith("layer/"):  # each stage's layers whole on its t ranks
            assert sum(ranks) == t * value, path
        else:
            assert ranks == [value] * t, path
    if p > 1 and spec.head == "tied":
        assert sum(got["head/tied_copy"]) == whole["embedding/token"] * (
            1 if "embedding/token" in split else t)
    assert set(got) - set(whole) <= {"head/tied_copy"}


@given(spec=decoders(), p=st.integers(1, 3), v=st.integers(1, 3))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_megatron_ranks_and_stages_sum_to_the_padded_model(spec, p, v):
    """megatron (t = n_kv, dividing every width): split parts sum to the whole part, the
    token table and an untied head to their vocabulary padded to a multiple of 128 t, norms
    whole on every rank; layers L/p a stage."""
    t = spec.n_kv
    v = v if p > 1 else 1
    spec = make_spec(**{**spec.to_dict(), "L": spec.L * p * v, "d_ff": spec.d_ff * t})
    layout = Layout(tp=t, pp=p, vpp=v, tp_plan="megatron")
    padded = 128 * t * math.ceil(spec.V / (128 * t))
    got = per_path_over_ranks(spec, layout, ())
    split = {part for entry in TP.megatron_plan() for part in entry.parts}
    for leaf in accounting.params(spec):
        value = num(leaf.value, spec)
        ranks = got[leaf.path]
        if leaf.path in ("embedding/token", "head/weight"):
            assert sum(ranks) == padded * spec.d, leaf.path
        elif leaf.path == "head/bias":
            assert sum(ranks) == padded
        elif leaf.path.startswith("layer/") and leaf.path not in split:
            assert sum(ranks) == t * value, leaf.path
        elif leaf.path in split:
            assert sum(ranks) == value + (t - 1) * rowwise_bias(spec).get(leaf.path, 0), \
                leaf.path
        else:
            assert ranks == [value] * t, leaf.path
    if p > 1 and spec.head == "tied":
        assert sum(got["head/tied_copy"]) == padded * spec.d


@given(E=st.integers(2, 9), e=st.integers(1, 9), k=st.integers(1, 2))
@settings(max_examples=20, deadline=None)
def test_experts_over_ep_ranks_sum_to_all_experts(E, e, k):
    e = min(e, E)
    spec = make_spec(name="moe", family="decoder", L=2, d=16, n_h=4, n_kv=2, d_h=4, d_ff=24,
                     V=50, E=E, k=k, ffn="gated", norm="rmsnorm", position="rotary",
                     head="untied")
    layout = Layout(ep=e)
    whole = num(accounting.params(spec).value("layer/moe/experts"), spec)
    got = sum(num(x.expr, spec, layout=layout) for r in range(e)
              for x in P.rank_params(spec, layout, (), ep_rank=r)
              if TP.is_routed_expert(x.path))
    assert got == whole
    most = sum(num(x.expr, spec, layout=layout) for x in P.rank_params(spec, layout, ())
               if TP.is_routed_expert(x.path))
    assert most == whole * math.ceil(E / e) / E


@given(n_kv=st.sampled_from([1, 2, 4, 8]), t=st.sampled_from([1, 2, 4, 8, 16]))
@settings(max_examples=20, deadline=None)
def test_kv_heads_split_or_replicated(n_kv, t):
    """K/V heads split by t; one head on every rank (replicated t/n_kv times) when t
    exceeds n_kv; MLA's latent whole."""
    spec = make_spec(name="gqa", family="decoder", L=3, d=64, n_h=16, n_kv=n_kv, d_h=4,
                     d_ff=32, V=50, position="rotary", norm="rmsnorm", head="untied")
    opts = Options(seq_len=32)
    plan = plan_of(resolve("llama-2-7b"))
    whole = num(Q.expression("memory.kv_cache_bytes", spec, opts), spec, opts)
    ours = num(P.total(P.rank_kv_cache(spec, opts, Layout(tp=t), plan)), spec, opts,
               Layout(tp=t))
    assert ours == whole * max(1, n_kv // t) / n_kv
    mla = resolve("deepseek-v2-lite")
    whole = num(Q.expression("memory.kv_cache_bytes", mla, opts), mla, opts)
    ours = num(P.total(P.rank_kv_cache(mla, opts, Layout(tp=t), plan_of(mla))), mla, opts,
               Layout(tp=t))
    assert ours == whole


# -- Megatron-LM: three published configurations --------------------------------------------

# Narayanan et al. 2021, Table 1, as Megatron-LM's examples/sc21/run_table_1.sh runs them:
# (name, t, p, v, microbatch, global batch, nodes of 8 GPUs, layers, hidden, heads); GPT-2's
# BPE vocabulary (50,257 tokens), sequences of 2,048, learned positions, tied head
SC21 = (("18B", 8, 1, 1, 8, 1024, 32, 40, 6144, 48),
        ("145B", 8, 8, 2, 2, 2304, 192, 80, 12288, 96),
        ("530B", 8, 35, 3, 1, 2520, 315, 105, 20480, 128))


def megatron_gpt(L, h, a):
    return make_spec(name="gpt", family="decoder", L=L, d=h, n_h=a, d_ff=4 * h, V=50257,
                     P=2048, position="learned", attention_bias="all", ffn_bias=True,
                     norm="layernorm", head="tied")


def megatron_formula(L, h, a, V_pad, t, p):
    """compute_weight_and_optimizer_memory (megatron/training/theoretical_memory_usage.py):
    the most-loaded shard's parameters, ((transformer block)/p + embedding)/t."""
    query_ratio = 1  # kv_channels * heads / hidden
    layer = 2 * h * (4 * h + 2) + 2 * h * h * (1 + 1) * query_ratio  # MLP + 2 LayerNorms + attn
    block = L * layer + 2 * h  # + final LayerNorm
    return sympy.Rational(block, p) / t + sympy.Rational(V_pad * h, t), block + V_pad * h


@pytest.mark.parametrize("case", SC21, ids=[c[0] for c in SC21])
def test_megatron_convention_against_megatron_lm(case):
    """Megatron-LM's formula divides everything it counts by t and leaves out the linear
    biases and the position table; the parameters on rank (0, 0) differ from it by exactly
    those: the row-parallel biases (h per proj and fc2) and the LayerNorms are whole on every
    rank, the column-parallel biases (3h qkv, 4h fc1) split, the position table whole, and the
    final LayerNorm sits on the last stage (the formula spreads it over all)."""
    name, t, p, v, mbs, gbs, nodes, L, h, a = case
    spec = megatron_gpt(L, h, a)
    layout = Layout(tp=t, pp=p, vpp=v, tp_plan="megatron", state_accounting="megatron",
                    dp=nodes * 8 // (t * p), microbatches=gbs // (mbs * nodes * 8 // (t * p)))
    V_pad = 128 * t * math.ceil(50257 / (128 * t))
    formula, total = megatron_formula(L, h, a, V_pad, t, p)
    # one rank, the whole model (t = p = 1): the formula's total plus biases and positions
    whole = num(accounting.params(spec).total, spec)
    assert whole + (V_pad - 50257) * h == total + L * 13 * h - L * 4 * h + 2048 * h
    ours = num(P.total(P.rank_params(spec, layout, (), "first")), spec, layout=layout)
    layers = sympy.Rational(L, p)
    worked = (formula
              + layers * (sympy.Rational(3 * h + 4 * h, t) + 2 * h)  # linear biases
              + layers * 4 * h * (1 - sympy.Rational(1, t))  # LayerNorms whole
              + 2048 * h  # position table, first stage
              - sympy.Rational(2 * h, p * t)  # final LayerNorm: not on the first stage...
              + (2 * h if p == 1 else 0))  # ...unless it is the only one
    assert ours == worked
    # 18 bytes per parameter, 6 + 12/N_d with the distributed optimizer
    for dist_opt, per in ((False, 18), (True, 6 + sympy.Rational(12, layout.dp))):
        lay = layout.with_(distributed_optimizer=dist_opt)
        mem = P.rank_memory(spec, Options(seq_len=2048, batch=mbs), lay)
        states = num(mem.model_states(), spec, Options(seq_len=2048, batch=mbs), lay)
        assert states == ours * per


@pytest.mark.parametrize("case", SC21, ids=[c[0] for c in SC21])
def test_megatron_activations_against_megatron_lm(case):
    """compute_activation_memory (sequence parallelism and selective recomputation): per
    layer s b h (18 + 4 ffn/h) / t, L layers' worth on the first stage -- p microbatches of
    L/p layers under 1F1B (at most m), the interleaved schedule's 1 + (p - 1)/(p v) more --
    plus the embedding's input and dropout and (p = 1) the output layer, which symcalc's
    layer activations leave out."""
    name, t, p, v, mbs, gbs, nodes, L, h, a = case
    spec = megatron_gpt(L, h, a)
    dp = nodes * 8 // (t * p)
    m = gbs // (mbs * dp)
    layout = Layout(tp=t, pp=p, vpp=v, microbatches=m, tp_plan="megatron",
                    sequence_parallel=True, dp=dp)
    opts = Options(seq_len=2048, batch=mbs, recompute="selective")
    ours = num(P.total(P.rank_activations(spec, opts, layout, (), "first")), spec, opts, layout)
    s, b, V_pad = 2048, mbs, 128 * t * math.ceil(50257 / (128 * t))
    act = sympy.Integer(s * b * h) * (18 + 4 * 4) * L
    embedding = 8 * s * b * p + s * b * h * p
    if v > 1:
        penalty = 1 + sympy.Rational(p - 1, p * v)
        act, embedding = act * penalty, embedding * penalty
    elif p > 1:
        act, embedding = act * min(1, sympy.Rational(m, p)), embedding * min(1, sympy.Rational(m, p))
    out = s * b * h * 4 * (1 + sympy.Rational(V_pad, h)) if p == 1 else 0
    megatron = (act + embedding + out) / t
    assert ours == megatron - (embedding + out) / t


# -- ZeRO --------------------------------------------------------------------------------------

def test_zero_paper_example():
    """Rajbhandari et al. 2020, Sec. 5 / Fig. 1: 7.5B parameters on N_d = 64: 120 GB, ZeRO-1
    31.4 GB, ZeRO-2 16.6 GB, ZeRO-3 1.9 GB (2 + 2 + 12 bytes)."""
    psi = 7_500_000_000
    terms = [P.Term("all", sympy.Integer(psi), "", "whole")]
    got = []
    for zero in range(4):
        mem = P.model_states(terms, Options(), Layout(dp=64, zero=zero))
        got.append(P.total(mem["weights"] + mem["gradients"] + mem["optimizer"]).xreplace(
            {SIZES["N_d"].symbol: 64, SIZES["c"].symbol: 1}))
    assert [round(float(x) / 10**9, 1) for x in got] == [120.0, 31.4, 16.6, 1.9]


def deepspeed_zero2(total_params, gpus):
    """estimate_zero2_model_states_mem_needs(cpu_offload=False): gpu_mem."""
    return 4 * total_params + int(16 * total_params / gpus)


def deepspeed_zero3(total_params, largest_layer_params, gpus):
    """estimate_zero3_model_states_mem_needs(cpu_offload=False): gpu_mem."""
    return 4 * largest_layer_params + int(18 * total_params / gpus)


@pytest.mark.parametrize("name", ["llama-2-7b", "mistral-7b", "gpt2-xl"])
@pytest.mark.parametrize("gpus", [1, 8, 64, 100])
def test_zero_against_deepspeed_estimates(name, gpus):
    """state_accounting = deepspeed: symcalc's exact value truncates to DeepSpeed's (it
    truncates the partitioned bytes with int()); the largest layer is the token table (or
    the untied head) of these models, V d."""
    spec = resolve(name)
    psi = int(num(accounting.params(spec).total, spec))
    largest = spec.V * spec.d
    assert num(P.largest_layer(spec, plan_of(spec)), spec) == largest
    for zero, theirs in ((2, deepspeed_zero2(psi, gpus)),
                         (3, deepspeed_zero3(psi, largest, gpus))):
        layout = Layout(dp=gpus, zero=zero, state_accounting="deepspeed")
        mem = P.rank_memory(spec, Options(), layout, plan_of(spec))
        ours = num(mem.model_states(), spec, layout=layout)
        assert int(ours) == theirs


# -- communication -------------------------------------------------------------------------------

def test_megatron_layer_communication():
    """Shoeybi et al. 2019: two all-reduces of b s h in the forward of a layer (after
    attention and after the MLP), two in the backward; sequence parallelism turns each into a
    reduce-scatter and an all-gather of the same payload, the same bytes on the wire; plus
    the embedding's all-reduce and the cross entropy's three fp32 values per token."""
    spec = megatron_gpt(4, 64, 8)
    opts = Options(seq_len=32, batch=2)
    layout = Layout(tp=4, tp_plan="megatron")
    comms = C.tp_comm(spec, opts, layout)
    A, tokens, h = 2, 64, 64
    fwd = [x for x in comms if x.phase == "forward"]
    assert sum(num(x.count, spec) for x in fwd if x.kind == "all_reduce") == 2 * 4 + 1 + 3
    assert num(C.comm_bytes(fwd), spec, opts, layout) == (2 * 4 + 1) * tokens * h * A + 3 * tokens * 4
    bwd = [x for x in comms if x.phase == "backward"]
    assert num(C.comm_bytes(bwd), spec, opts, layout) == (2 * 4 + 1) * tokens * h * A
    sp = C.tp_comm(spec, opts, layout.with_(sequence_parallel=True))
    wire = num(C.comm_bytes(comms, wire=True), spec, opts, layout)
    assert num(C.comm_bytes(sp, wire=True), spec, opts, layout) == wire
    assert wire == num(C.comm_bytes(comms), spec, opts, layout) * sympy.Rational(2 * 3, 4)


def test_data_parallel_and_zero_volumes():
    """Rajbhandari et al. 2020, Sec. 7: 2 Psi on the wire per step for plain data
    parallelism and for ZeRO-1/2 (as n grows), 3 Psi for ZeRO-3 (with m = 1)."""
    spec = resolve("llama-2-7b")
    psi = num(accounting.params(spec).total, spec)
    n = 1024
    for zero, volume in ((0, 2), (1, 2), (2, 2), (3, 3)):
        layout = Layout(dp=n, zero=zero)
        comm = C.communication(spec, Options(), layout, plan_of(spec))["dp"]["step"]
        wire = num(C.comm_bytes(comm, wire=True), spec, layout=layout)
        assert wire == 2 * psi * volume * sympy.Rational(n - 1, n) * (1 if zero else 1)


def test_pipeline_point_to_point():
    """A middle stage sends b s h activations forward and b s h gradients backward per
    microbatch; the first sends no gradient, the last no activation."""
    spec = resolve("llama-2-7b")
    opts = Options(seq_len=128, batch=2)
    layout = Layout(pp=4, microbatches=8)
    assert [x.path for x in C.pp_comm(spec, opts, layout, "first")] == ["pp/forward/send_activations"]
    assert [x.path for x in C.pp_comm(spec, opts, layout, "last")] == ["pp/backward/send_gradients"]
    middle = C.pp_comm(spec, opts, layout, 1)
    assert [num(x.bytes, spec, opts, layout) for x in middle] == [2 * 128 * 4096 * 2] * 2


def test_refusals():
    spec = resolve("llama-2-7b")
    with pytest.raises(SymcalcError, match="^ep: "):
        P.rank_params(spec, Layout(ep=2))
    with pytest.raises(SymcalcError, match="^tp: Megatron-LM needs 3"):
        P.rank_params(spec, Layout(tp=3, tp_plan="megatron"))
    with pytest.raises(SymcalcError, match="^pp: "):
        P.rank_params(resolve("qwen3-next-80b-a3b"), Layout(pp=2))
    # layers that differ in an order the spec does not hold: an indexer of their own in 21 of
    # HY4's 78 layers, DeepSeek-V4's CSA, HCA and sliding-only layers
    with pytest.raises(SymcalcError, match="^pp: pipeline stages of a stack whose layers differ in their indexers"):
        P.rank_params(resolve("hy4-preview"), Layout(pp=2))
    with pytest.raises(SymcalcError, match="^pp: pipeline stages of a stack of compressed"):
        P.rank_params(resolve("deepseek-v4-flash"), Layout(pp=2))
    with pytest.raises(SymcalcError, match="^vpp: "):
        Layout(vpp=2).checked()
    with pytest.raises(SymcalcError, match="^tp-plan: "):
        Layout(tp_plan="deepspeed").checked()

"""Breakdowns: parents are the sums of their children, per-layer figures agree with the
whole-model breakdown, and the component paths the issue names exist."""
from __future__ import annotations

import functools

import pytest
import sympy

from symcalc.algebra import accounting
from symcalc.inputs import presets
from symcalc.algebra import quantities as q
from symcalc.algebra.breakdown import Breakdown, Leaf
from symcalc.algebra.options import Options
from symcalc.fast.quick import quick_report
from symcalc.report import report
from symcalc.algebra.spec import size_values, switch_values, with_overrides

ALL = [p.name for p in presets.all_presets()]
OPTS = Options(batch=2, seq_len=16)


@functools.lru_cache(maxsize=None)
def preset_report(name: str) -> dict:
    """The report of a preset at OPTS as `symcalc report` gives it (the quick path), made once
    per process for the per-preset tests below (read it, do not modify it).
    tests/test_quick.py holds it equal to the sympy report on every preset."""
    return quick_report(presets.load(name).spec, OPTS)


def children(flat: dict, path: str) -> list:
    depth = path.count("/") + 1
    return [v for p, v in flat.items() if p.startswith(path + "/") and p.count("/") == depth]


def assert_parents_are_sums(flat: dict) -> None:
    for path, value in flat.items():
        kids = children(flat, path)
        if kids:
            assert sympy.expand(value - sum(kids)) == 0, path


def sliding_mla_view(spec) -> dict:
    """The per-layer view of a sliding layer that has an MLA shape of its own (dots3 note's
    per_layer_config): the spec at the window's heads, ranks and head widths, without the
    window shape and without the indexer (the sliding layers run none)."""
    window = with_overrides(spec, {
        "n_h": spec.n_hw, "n_kv": spec.n_hw, "r_q": spec.r_qw, "r_kv": spec.r_kvw,
        "d_nope": spec.d_nw, "d_rope": spec.d_rw, "d_v": spec.d_vw, "d_h": spec.d_nw + spec.d_rw,
        "n_hw": None, "r_qw": None, "r_kvw": None, "d_nw": None, "d_rw": None, "d_vw": None,
        "n_ih": None, "d_ih": None, "L_idx": None})
    return quick_report(window, OPTS)["params"]["per_layer"]


def assert_sliding_and_global_views_make_the_stack(spec, p: dict, where) -> None:
    """Each attention part of the stack is the layer view's (a sliding layer's) times the
    sliding layers holding it plus the global_attention view's times the global ones (the
    key/value parts less the layers that reuse an earlier layer's); 0 where no layer holds it."""
    per, shared_local = p["per_layer"], spec.L_kv_shared_local or 0
    for part, value in per.items():
        if part.startswith("attention/"):
            kv = part in accounting.KV_PATHS
            local = spec.local_layers - (shared_local if kv else 0)
            glob = spec.attention_layers - spec.local_layers - (
                spec.kv_shared_layers - shared_local if kv else 0)
            assert p["breakdown"].get(f"layer/{part}", 0) == (
                local * value + glob * per.get(f"global_attention/{part}", 0)), (where, part)


@pytest.mark.parametrize("name", ALL)
def test_report_breakdowns(name):
    rep = preset_report(name)
    for flat in (rep["params"]["breakdown"], rep["flops"]["breakdown"], rep["params"]["per_layer"]):
        assert_parents_are_sums(flat)
    assert sum(v for p, v in rep["params"]["breakdown"].items() if "/" not in p) == rep["params"]["total"]
    assert sum(v for p, v in rep["flops"]["breakdown"].items() if "/" not in p) == rep["flops"]["forward_matmul"]


@pytest.mark.parametrize("name", ALL)
def test_symbolic_breakdown_parents(name):
    bd = accounting.params(presets.load(name).spec)
    assert_parents_are_sums(bd.as_dict())
    assert sympy.expand(bd.total - sum(l.value for l in bd)) == 0


@pytest.mark.parametrize("name", ALL)
def test_per_layer_times_layers_is_the_stack(name):
    """Each stack is its layers times their count; an MoE stack with dense layers is
    (L - L_dense) MoE layers plus L_dense dense ones, attention and norms in every layer. A
    hybrid stack has attention in L_attn layers, each other mixer (its own per-layer view) in
    its count, and the FFN and its norms in L_ffn layers. Gemma 3n's last L_kv_shared
    attention layers lack the key/value parts (accounting.KV_PATHS). Where the global layers
    have an attention shape of their own (d_hg, n_kvg: MiMo-V2-Flash, Gemma 4) the layer view
    holds a sliding layer's attention and the global_attention view a global layer's, each
    part times the layers of its kind holding it. Attention parts that only some layers hold
    (an indexer of its own in L_idx layers, DeepSeek-V4's compressors in L_csa and L_hca) are
    in the layer view and count their layers in the stack. ZAYA's first MoE layer has no router
    state carried in, so its router lacks the d_r state scale the other layers' hold. Where the
    sliding layers have an MLA shape of their own (n_hw, r_qw, r_kvw, d_nw, d_rw, d_vw: dots3
    note) the layer view is a global layer's attention; the L_local sliding layers hold each
    part as the same spec at the window's sizes without an indexer gives it. Looped layers
    (B_sh without Zamba's d_ai: HRM-Text) hold each part B_sh times; ModernBERT's first layer
    has no norm before attention."""
    spec = presets.load(name).spec
    p = preset_report(name)["params"]
    per = p["per_layer"]
    own_shape = spec.d_hg is not None or spec.n_kvg is not None
    assert ("global_attention/total" in per) == own_shape
    if own_shape:
        assert_sliding_and_global_views_make_the_stack(spec, p, name)
    if spec.shape == "single":
        dense = spec.dense_layers if spec.moe else 0
        assert ("dense_layer/total" in per) == bool(dense)
        ffn = spec.ffn_layers
        mixers = {"linear_mixer": spec.L_lin, "ssm_mixer": spec.L_ssm, "conv_mixer": spec.L_conv}
        for view, n in mixers.items():
            assert (f"{view}/total" in per) == bool(n), view
        counts = {"attention": spec.attention_layers, "moe": ffn - dense,
                  "ffn": ffn if not spec.moe else dense, "norm/ffn": ffn, "norm/ffn_out": ffn}
        if spec.B_sh is not None and spec.d_ai is None:
            # looped layers (HRM-Text, Dory): B_sh distinct layers run L times hold the
            # weights once, their attention norms included (accounting.group_count)
            counts = {part: spec.B_sh for part in (*counts, "norm/attention",
                                                   "norm/residual_scales")}
        kv_paths = [p for p in accounting.KV_PATHS if p in per]
        # attention parts held by some layers only: (path, layers holding it)
        some = [(path, n) for path, n in (("attention/indexer", spec.L_idx),
                                          ("attention/csa", spec.L_csa),
                                          ("attention/hca", spec.L_hca))
                if n is not None and path in per]
        # the sliding layers' own MLA shape: a sliding layer's attention parts (no indexer)
        win = sliding_mla_view(spec) if spec.n_hw is not None else {}
        local = spec.L_local if win else 0
        # ZAYA's MLP router (sw_rmlp): the first layer's has no state scale (d_r) to carry in
        first_router = spec.d_r if switch_values(spec).get("sw_rmlp") and spec.moe else 0
        expected = 0
        for part, value in per.items():
            if part.endswith("total") or part.startswith(("dense_layer/", "global_attention/")):
                continue
            view = part.split("/")[0]
            if own_shape and view == "attention":  # its parts checked per kind of layer above
                expected += p["breakdown"]["layer/attention"] if part == "attention" else 0
                continue
            if view in mixers:
                path, count = part[len(view) + 1:], mixers[view]
            else:
                path = part
                count = counts.get(path, counts.get(path.split("/")[0], spec.L))
                count = next((n for prefix, n in some
                              if path == prefix or path.startswith(prefix + "/")), count)
            if path in accounting.KV_PATHS:
                count -= spec.kv_shared_layers
                if win:  # no sharing beside the window's shape (the spec refuses it)
                    value, count = (count - local) * value + local * win.get(part, 0), 1
            elif path == "attention":  # the sharing layers lack their key/value parts
                value, count = ((count - local) * value + local * win.get(part, 0)
                                - spec.kv_shared_layers * sum(per[p] for p in kv_paths)
                                - sum((count - local - n) * per[prefix] for prefix, n in some)), 1
            elif win and view == "attention" and count == spec.attention_layers:
                value, count = (count - local) * value + local * win.get(part, 0), 1
            elif path in ("moe", "moe/router_scales") and first_router:
                value, count = count * value - first_router, 1
            if not spec.first_attn_norm and path in ("norm", "norm/attention"):
                # ModernBERT's first layer has no norm before attention (the per-layer view
                # lists a later layer's)
                value, count = count * value - per["norm/attention"], 1
            if path.count("/") == (1 if view in mixers else 0):  # a top-level group
                expected += count * value
            dense_value = per.get(f"dense_layer/{part}", 0) if view == "ffn" and spec.moe else 0
            if view == "ffn" and spec.moe:  # the dense FFN is listed by the dense-layer view
                value, count = 0, 0
            assert p["breakdown"][f"layer/{path}"] == count * value + dense * dense_value, part
        dense_ffn = per.get("dense_layer/ffn", 0) * dense
        assert p["breakdown"]["layer"] == expected + dense_ffn
        return
    for prefix, count in {"encoder/layer": spec.L, "decoder/layer": spec.L_dec}.items():
        head = prefix[: -len("layer")]
        assert p["breakdown"][prefix] == count * per[f"{head}total"]
        for part, value in per.items():
            if part.startswith(head) and not part.endswith("total"):
                assert p["breakdown"][f"{prefix}/{part[len(head):]}"] == count * value


@pytest.mark.parametrize("name", ALL)
def test_embedding_plus_non_embedding(name):
    p = preset_report(name)["params"]
    assert p["embedding"] + p["non_embedding"] == p["total"]
    emb = sum(p["breakdown"].get(path, 0) for path in accounting.EMBEDDING_PATHS)
    assert p["embedding"] == emb


@pytest.mark.parametrize("name,paths", [
    ("bert-base", ["embedding/token", "embedding/position", "embedding/token_type", "embedding_norm",
                   "layer/attention/q", "layer/attention/o", "layer/ffn/up", "layer/ffn/down",
                   "layer/norm/attention", "pooler"]),
    ("gpt2", ["embedding/token", "embedding/position", "layer/attention/k", "final_norm"]),
    ("mistral-7b", ["layer/ffn/gate", "head/weight", "final_norm"]),
    ("mixtral-8x7b", ["layer/moe/router", "layer/moe/experts/gate", "head/weight"]),
    ("t5-small", ["encoder/relative_bias", "decoder/relative_bias", "decoder/layer/cross_attention/q",
                  "decoder/layer/norm/cross_attention", "encoder/final_norm"]),
])
def test_component_paths(name, paths):
    bd = report(presets.load(name).spec, Options(seq_len=8))["params"]["breakdown"]
    for path in paths:
        assert bd[path] > 0, path


def test_absent_parts_are_dropped():
    bd = report(presets.load("gpt2").spec, Options(seq_len=8))["params"]["breakdown"]
    assert "head/weight" not in bd  # tied
    assert "layer/ffn/gate" not in bd and "pooler" not in bd and "layer/ffn/router" not in bd


def test_mistral_leaves():
    values = size_values(presets.load("mistral-7b").spec)
    bd = accounting.numbers(accounting.params(presets.load("mistral-7b").spec), values).as_dict()
    assert bd["layer/attention/q"] == 32 * 4096 * 4096
    assert bd["layer/attention/k"] == bd["layer/attention/v"] == 32 * 4096 * 1024
    assert bd["layer/ffn/gate"] == bd["layer/ffn/up"] == bd["layer/ffn/down"] == 32 * 4096 * 14336
    assert bd["layer/norm"] == 32 * 2 * 4096
    assert bd["final_norm"] == 4096


def test_breakdown_class():
    bd = Breakdown([Leaf("a/x", 1), Leaf("a/y/z", 2), Leaf("b", 4), Leaf("a/y/w", 8)])
    assert bd.paths() == ["a", "a/x", "a/y", "a/y/z", "b", "a/y/w"]
    assert bd.as_dict() == {"a": 11, "a/x": 1, "a/y": 10, "a/y/z": 2, "b": 4, "a/y/w": 8}
    assert bd.total == 15 and bd.value("a/y") == 10
    assert bd.children() == ["a", "b"] and bd.children("a") == ["a/x", "a/y"]
    assert bd.subtree("a").as_dict() == {"x": 1, "y": 10, "y/z": 2, "y/w": 8}
    assert "a/y" in bd and "a/q" not in bd and "a/yy" not in bd
    assert bd.map(lambda v: 2 * v).total == 30
    assert bd.where(lambda l: l.value > 2).as_dict() == {"b": 4, "a": 8, "a/y": 8, "a/y/w": 8}
    with pytest.raises(ValueError):
        Breakdown([Leaf("a", 1), Leaf("a", 2)])
    with pytest.raises(KeyError):
        bd.value("nope")


def test_quantity_expressions_match_report():
    spec = presets.load("llama-3-8b").spec
    opts = Options(batch=3, seq_len=100)
    rep = report(spec, opts)
    values = {**size_values(spec), "b": 3, "s": 100}
    assert q.value(q.expression("params.non_embedding", spec), values) == rep["params"]["non_embedding"]
    assert q.value(q.expression("flops.training", spec, opts), values) == rep["flops"]["training"]
    assert q.value(q.expression("memory.kv_cache_bytes", spec, opts), values) == rep["memory"]["kv_cache_bytes"]


def test_the_last_layers_output_bias_counts_once():
    """last_o_bias (GPT-NeoX-Japanese's dense_bias): d parameters in the whole stack, none
    in the FLOPs; refused beside a biased output in every layer."""
    from symcalc.algebra.spec import make_spec
    from symcalc.errors import SymcalcError

    base = dict(name="x", family="decoder", L=3, d=32, n_h=4, d_ff=64, V=50, attention_bias="none")
    opts = Options(batch=2, seq_len=5)
    plain, biased = (report(make_spec(**base, last_o_bias=b), opts) for b in (False, True))
    assert biased["params"]["total"] - plain["params"]["total"] == 32
    assert biased["flops"]["forward_matmul"] == plain["flops"]["forward_matmul"]
    with pytest.raises(SymcalcError, match="last_o_bias"):
        make_spec(**{**base, "attention_bias": "all"}, last_o_bias=True)


def test_an_embedding_stage_of_its_own_width_and_a_head_of_its_own():
    """embedding_project (ELECTRA, RoFormer, RemBERT): the token, position and token-type
    tables and their norm d_emb wide, one biased d_emb -> d projection, no project_out; d_out
    (RemBERT): the masked-LM transform d -> d_out, its norm and an untied head d_out wide. Both
    paths (sympy and the term table) give the sums worked out by hand; d_out is refused
    without the stage and beside a tied head of another width."""
    from symcalc.algebra.spec import make_spec
    from symcalc.errors import SymcalcError
    from symcalc.fast.quick import quick_report

    d, E, D, V, P, T = 32, 16, 20, 50, 12, 2
    base = dict(name="x", family="decoder", L=2, d=d, n_h=4, d_ff=40, V=V, P=P, T=T,
                position="learned", embedding_norm=True, mlm_head=True, head_bias=True)
    opts = Options(batch=2, seq_len=5)
    plain = report(make_spec(**base), opts)
    stage = make_spec(**base, d_emb=E, embedding_project=True)
    own = make_spec(**base, d_emb=E, embedding_project=True, d_out=D, head="untied")
    for spec, width in ((stage, E), (own, D)):
        rep = report(spec, opts)
        assert rep == quick_report(spec, opts)
        embeddings = (V + P + T) * E + 2 * E + E * d + d  # tables, norm, projection in
        mlm = d * width + width + 2 * width  # dense with its bias, LayerNorm
        head = V * D if spec.head == "untied" else 0
        tied_plain = (V + P + T) * d + 2 * d + d * d + d + 2 * d
        assert rep["params"]["total"] - plain["params"]["total"] == \
            embeddings + mlm + head - tied_plain
        tokens = 2 * 5
        assert rep["flops"]["forward_matmul"] - plain["flops"]["forward_matmul"] == \
            2 * tokens * (E * d + d * width + width * V - d * d - d * V)
    # RemBERT maps its embeddings in even when they are d wide
    same = make_spec(**base, d_emb=d, embedding_project=True)
    assert report(same, opts)["params"]["total"] - plain["params"]["total"] == d * d + d
    assert quick_report(same, opts)["params"]["total"] - plain["params"]["total"] == d * d + d
    with pytest.raises(SymcalcError, match="d_out"):
        make_spec(**base, d_out=D, head="untied")
    with pytest.raises(SymcalcError, match="d_out"):
        make_spec(**base, d_emb=E, embedding_project=True, d_out=D)
    with pytest.raises(SymcalcError, match="embedding_project"):
        make_spec(**base, embedding_project=True)


def test_a_rotary_table_held_as_a_parameter_counts_p_rows_of_head_width():
    """rotary_table (RoFormer's frozen embed_positions): P x d_h parameters, no FLOPs; refused
    without rotary positions."""
    from symcalc.algebra.spec import make_spec
    from symcalc.errors import SymcalcError
    from symcalc.fast.quick import quick_report

    base = dict(name="x", family="decoder", L=2, d=32, n_h=4, d_ff=40, V=50, P=12,
                position="rotary")
    opts = Options(batch=2, seq_len=5)
    plain, table = (make_spec(**base, rotary_table=t) for t in (False, True))
    for run in (report, quick_report):
        a, b = run(plain, opts), run(table, opts)
        assert b["params"]["total"] - a["params"]["total"] == 12 * 8
        assert b["flops"]["forward_matmul"] == a["flops"]["forward_matmul"]
    with pytest.raises(SymcalcError, match="rotary_table"):
        make_spec(**{**base, "position": "learned"}, rotary_table=True)


def test_side_tables_and_the_input_map_of_their_concatenation():
    """RoCBERT: pronunciation and shape tables (lookups: parameters, no FLOPs) and the biased
    map of the word embedding with d_cat concatenated channels into d; d_cat must be a sum of
    the tables' widths."""
    from symcalc.algebra.spec import make_spec
    from symcalc.errors import SymcalcError
    from symcalc.fast.quick import quick_report

    base = dict(name="x", family="decoder", L=2, d=32, n_h=4, d_ff=40, V=50)
    side = dict(V_pr=30, d_pr=12, V_sp=20, d_sp=8)
    opts = Options(batch=2, seq_len=5)
    for run in (report, quick_report):
        plain = run(make_spec(**base), opts)
        tables = run(make_spec(**base, **side), opts)
        mapped = run(make_spec(**base, **side, d_cat=12), opts)
        assert tables["params"]["total"] - plain["params"]["total"] == 30 * 12 + 20 * 8
        assert tables["flops"]["forward_matmul"] == plain["flops"]["forward_matmul"]
        assert mapped["params"]["total"] - tables["params"]["total"] == (32 + 12) * 32 + 32
        assert mapped["flops"]["forward_matmul"] - plain["flops"]["forward_matmul"] == \
            2 * 10 * (32 + 12) * 32
    with pytest.raises(SymcalcError, match="d_cat"):
        make_spec(**base, **side, d_cat=5)
    with pytest.raises(SymcalcError, match="d_sp"):
        make_spec(**base, V_pr=30, d_pr=12)


def test_language_adapters_count_every_language_and_run_one_per_token():
    """X-MOD: n_ad adapters d -> d_ad -> d (biased) per layer in the parameters, one of them
    per token in the FLOPs; adapter_norm adds a LayerNorm per layer."""
    from symcalc.algebra.spec import make_spec
    from symcalc.errors import SymcalcError
    from symcalc.fast.quick import quick_report

    base = dict(name="x", family="decoder", L=2, d=32, n_h=4, d_ff=40, V=50)
    opts = Options(batch=2, seq_len=5)
    for run in (report, quick_report):
        plain = run(make_spec(**base), opts)
        ad = run(make_spec(**base, n_ad=3, d_ad=10), opts)
        normed = run(make_spec(**base, n_ad=3, d_ad=10, adapter_norm=True), opts)
        assert ad["params"]["total"] - plain["params"]["total"] == 2 * 3 * (2 * 32 * 10 + 10 + 32)
        assert normed["params"]["total"] - ad["params"]["total"] == 2 * 2 * 32
        assert ad["flops"]["forward_matmul"] - plain["flops"]["forward_matmul"] == \
            2 * 2 * 10 * 2 * 32 * 10
    with pytest.raises(SymcalcError, match="d_ad"):
        make_spec(**base, n_ad=3)


def test_skipped_layers_count_in_parameters_only_and_extra_token_rows():
    """Mllama: L_x cross-attention layers (q/k/v/o, q and k norms of head width, the norm
    before the FFN, the FFN, two gates; the norm before the mixer is every layer's) add
    parameters but no FLOPs or cache; V_x token rows add V_x d to the table only."""
    from symcalc.algebra.spec import make_spec
    from symcalc.fast.quick import quick_report

    base = dict(name="x", family="decoder", L=3, d=32, n_h=4, n_kv=2, d_ff=40, V=50,
                norm="rmsnorm", ffn="gated", head="untied")
    opts = Options(batch=2, seq_len=5)
    one = 32 * 32 * 2 + 2 * 32 * 16 + 2 * 8 + 32 + 3 * 32 * 40 + 2
    for run in (report, quick_report):
        plain = run(make_spec(**base, L_attn=2, L_ffn=2), opts)
        skip = run(make_spec(**base, L_attn=2, L_ffn=2, L_x=1, V_x=8), opts)
        assert skip["params"]["total"] - plain["params"]["total"] == one + 8 * 32
        assert skip["flops"]["forward_matmul"] == plain["flops"]["forward_matmul"]
        assert skip["memory"]["kv_cache_bytes"] == plain["memory"]["kv_cache_bytes"]


def test_codebooks_multiply_the_token_tables_and_the_heads():
    """MusicGen: K_cb token tables (of V + V_x rows) and K_cb heads, each head over every
    position; the layers see the summed embedding once."""
    from symcalc.algebra.spec import make_spec
    from symcalc.fast.quick import quick_report

    base = dict(name="x", family="decoder", L=2, d=32, n_h=4, d_ff=40, V=50, head="untied",
                V_x=1)
    opts = Options(batch=2, seq_len=5)
    for run in (report, quick_report):
        one = run(make_spec(**base), opts)
        three = run(make_spec(**base, K_cb=3), opts)
        assert three["params"]["total"] - one["params"]["total"] == 2 * (51 * 32 + 50 * 32)
        assert three["flops"]["forward_matmul"] - one["flops"]["forward_matmul"] == \
            2 * 2 * 10 * 32 * 50


@pytest.mark.parametrize("path,shown,hidden", [
    ("tests/families/mamba/tiny-bare.json", ["ssm_mixer/total"], ["total", "attention", "ffn"]),
    ("tests/families/mamba2/tiny-bare.json", ["ssm_mixer/total"], ["total", "attention", "ffn"]),
])
def test_per_layer_lists_only_the_layers_the_stack_has(path, shown, hidden):
    """A Mamba stack has no attention or FFN layer: neither report (sympy nor quick) lists
    one in its per-layer view; a dense model lists its layer and no mixer."""
    import json
    from pathlib import Path

    from symcalc.fast.quick import quick_report
    from symcalc.inputs.hf import read_model

    root = Path(__file__).resolve().parent.parent
    spec, _ = read_model(json.loads((root / path).read_text()), name="config.json")
    for rep in (report(spec), quick_report(spec)):
        per_layer = rep["params"]["per_layer"]
        assert all(k in per_layer for k in shown), per_layer
        assert not any(k in per_layer for k in hidden), per_layer
    dense = quick_report(presets.load("mistral-7b").spec)["params"]["per_layer"]
    assert "attention" in dense and not any(k.endswith("mixer/total") for k in dense), dense


def test_global_attention_view_times_layers_is_the_stack():
    """Every test config whose global layers have an attention shape of their own (Gemma 4
    and its assistants, MiMo-V2-Flash, Inkling 2 ...): each attention part of the stack is a
    sliding layer's (the layer view) times the sliding layers holding it plus a global
    layer's (the global_attention view) times the global ones; the key/value parts leave out
    the layers that share an earlier layer's keys and values."""
    from pathlib import Path

    from symcalc.errors import SymcalcError
    from symcalc.fast.quick import quick_report
    from symcalc.inputs.hf import load_config, spec_from_config

    checked = 0
    for path in sorted((Path(__file__).parent / "families").glob("*/*.json")):
        try:
            spec = spec_from_config(load_config(path), path.name)
        except SymcalcError:
            continue
        if spec.d_hg is None and spec.n_kvg is None:
            continue
        p = quick_report(spec, Options(batch=1, seq_len=4))["params"]
        assert_sliding_and_global_views_make_the_stack(spec, p, path)
        checked += 1
    assert checked >= 30

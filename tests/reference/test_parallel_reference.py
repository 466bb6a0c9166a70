"""Per-rank parameters and the forward's collectives of ``--tp-plan hf``, exactly, against
PyTorch's own tensor parallelism on one CPU process (tests/tp_reference.py says how the plan
is applied), for every family with a ``base_model_tp_plan`` at t = 2, 4, 8.

* parameters: every tiny config of the family (tests/families/<model_type>/, and the
  generated configs of the first seven), built on the meta device, including widths t does
  not divide (rank 0 holds ceil(n/t) rows, as torch.chunk gives it);
* collectives: where t divides every width the plan splits (PyTorch's forward refuses the
  others), one forward on CPU; the count and payload bytes of its all-reduces (and
  all-gathers) equal symcalc's ``tp`` forward collectives.
"""
from __future__ import annotations

import json

import pytest
import sympy

pytest.importorskip("torch")  # the reference lane: transformers and torch live
import hf_reference as H  # noqa: E402
from symcalc.algebra import communication as C, parallel as P, tp_plans as TP
from symcalc.algebra.layout import Layout
from symcalc.algebra.options import Options
from symcalc.algebra.spec import size_values
from symcalc.algebra.symbols import SIZES
from symcalc.inputs.family_data import load_families, tp_plan
from symcalc.inputs.hf import spec_from_config

pytestmark = pytest.mark.reference

DEGREES = (2, 4, 8)
FORWARD_MAX_PARAMS = 20_000_000
BATCH, SEQ = 2, 8


def _plan_families() -> list[str]:
    return sorted(mt for mt, fam in load_families().items() if fam.tp_plan)


def _family_cases():
    """Each family's first config at every degree of DEGREES, its other configs at one degree
    each, in turn (every degree still meets every family's plan)."""
    cases, turn = [], 0
    for mt in _plan_families():
        configs = [(name, cfg) for name, cfg in _configs_named(mt)
                   if not name.split("/")[-1].startswith("hub-")]
        # live: the first config of each family that is not its class defaults (a model of
        # billions of parameters takes seconds to build even on the meta device), at every
        # degree; all of them: REFERENCE_ALL
        configs = configs if H.REFERENCE_ALL else [
            (name, cfg) for name, cfg in configs if "class-defaults" not in name][:1]
        for i, (name, cfg) in enumerate(configs):
            degrees = DEGREES if i == 0 else (DEGREES[turn % len(DEGREES)],)
            turn += i > 0
            cases.append(pytest.param(mt, cfg, degrees, id=name))
    return cases


def _configs_named(model_type: str) -> list[tuple[str, dict]]:
    out = [(name, cfg) for name, cfg in H.generated_configs() if cfg["model_type"] == model_type]
    folder = H.FAMILY_CONFIG_DIR / model_type
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            out.append((f"{model_type}/{path.stem}", json.loads(path.read_text())))
    return out


def _values(spec, t: int) -> dict:
    vals = size_values(spec)
    vals.update({"t": t, "b": BATCH, "s": SEQ, "c": 1, "N_d": 1, "p": 1, "e": 1, "t_e": t,
                 "m": 1, "v": 1})
    return {SIZES[k].symbol: sympy.Integer(v) for k, v in vals.items() if k in SIZES}


def _layer_widths_split(config: dict, t: int) -> bool:
    """Gemma 3n's per-layer FFN widths: the spec holds their sum, split evenly (t must divide
    each width; symcalc.algebra.parallel.sharded_params)."""
    widths = config.get("intermediate_size")
    return not isinstance(widths, list) or all(w % t == 0 for w in widths)


def _symcalc(spec, t: int):
    plan = TP.plan_entries(tp_plan(spec.implementation["tp_plan"]))
    params = P.rank_params(spec, Layout(tp=t), plan)
    return plan, params


def _plans(spec) -> tuple[dict[str, str], dict[str, str]]:
    """(base model's plan, the class's own entries) of the spec's ``tp_plan`` value."""
    name = spec.implementation["tp_plan"]
    model_type, _, role = name.partition(":")
    fam = load_families()[model_type]
    base = {m: s for m, s, *_ in fam.tp_plan}
    own = {m: s for m, s, *_ in fam.roles[role].tp_plan} if role else {}
    return base, own


def test_plans_are_the_configs_plans():
    """Every family file's [tp_plan] is its base model's plan as transformers builds it (the
    config class's base_model_tp_plan after the embed_tokens entry
    ``PreTrainedModel.init_parallel_plans`` adds), in order, and each role's
    [roles.<role>.tp_plan] its class's own ``_tp_plan`` (a multimodal wrapper's plans are
    its text family's)."""
    import transformers
    from transformers import CONFIG_MAPPING

    families = load_families()
    for mt, fam in families.items():
        ours = [(module, style) for module, style, *_ in fam.tp_plan]
        if not ours and any("tensor-parallel plan" in n for n in fam.not_modelled):
            # a plan transformers applies and symcalc does not model, said in the family file
            # (T5Gemma's stacks, sharded by their module configs): --tp-plan hf keeps every
            # part whole
            continue
        if fam.wrapper is not None:
            assert not ours and not any(r.tp_plan for r in fam.roles.values()), mt
            continue
        declared = list((getattr(CONFIG_MAPPING[mt], "base_model_tp_plan", None) or {}).items())
        if not declared:  # a causal LM around a text model of its own config (Gemma 4's
            # assistants): that model's config class gives the plan
            declared = list((getattr(type(H.class_defaults(mt).get_text_config()),
                                     "base_model_tp_plan", None) or {}).items())
        assert ours in (declared, [("embed_tokens", "embedding_rowwise")] + declared), mt
        ours = dict(ours)
        configs = [cfg for name, cfg in _configs_named(mt) if "hub-" not in name]
        if configs:  # the base model's own plan, as built
            model = H.build_model(configs[0], device="meta")
            built = dict(model.base_model.tp_plan or {})
            if any(k.startswith("model.") for k in built):  # Llama 4: the language model is a child
                built = {k.split(".", 1)[1]: v for k, v in built.items() if k.startswith("model.")}
            assert list(built.items()) == list(ours.items()), mt
        for cls, role in fam.classes.items():
            if getattr(transformers, cls, None) is None:
                continue  # a name transformers 5.24 no longer exports (an older spelling)
            own = dict(getattr(getattr(transformers, cls), "_tp_plan", None) or {})
            assert {m: s for m, s, *_ in fam.roles[role].tp_plan} == own, (mt, cls)


@pytest.mark.parametrize("model_type,config,degrees", _family_cases())
def test_rank_params_match_pytorch(model_type, config, degrees):
    import tp_reference as R

    spec = spec_from_config(config)
    plan_dict, own = _plans(spec)
    whole = H.reference_params(config)
    for t in degrees:
        if not _layer_widths_split(config, t):
            continue
        with R.fake_world(t) as mesh:
            model = H.build_model(config, device="meta")
            R.apply_plan(model, plan_dict, mesh, own)
            theirs = R.local_params(model)
        _, params = _symcalc(spec, t)
        ours = P.total(params).xreplace(_values(spec, t))
        assert ours == theirs, (t, ours, theirs, whole)


def _divisible(spec, t, params) -> bool:
    """Every ceiling of the per-rank parameters is exact (t divides every split width), and t
    divides the heads."""
    vals = _values(spec, t)
    exact = all(sympy.ceiling(x.args[0].xreplace(vals)) == x.args[0].xreplace(vals)
                for term in params for x in term.expr.atoms(sympy.ceiling))
    n_kv = spec.n_kv or spec.n_h
    return exact and spec.n_h % t == 0 and n_kv % t == 0


def _forward_cases():
    """Each family's first config at every degree of DEGREES that divides it, its other
    configs at the first such degree from a starting point taken in turn (a CPU forward per
    degree is the cost here)."""
    cases, turn = [], 0
    for mt in _plan_families():
        configs = [(name, cfg) for name, cfg in _configs_named(mt)
                   if not name.split("/")[-1].startswith("hub-")]
        # live: the first config of each family that is not its class defaults (a model of
        # billions of parameters takes seconds to build even on the meta device), at every
        # degree; all of them: REFERENCE_ALL
        configs = configs if H.REFERENCE_ALL else [
            (name, cfg) for name, cfg in configs if "class-defaults" not in name][:1]
        for i, (name, cfg) in enumerate(configs):
            order = DEGREES if i == 0 else DEGREES[turn % 3:] + DEGREES[:turn % 3]
            turn += i > 0
            cases.append(pytest.param(mt, cfg, order, i == 0, id=name))
    return cases


# configs whose tensor-parallel forward PyTorch refuses for a reason the spec does not hold
# (the test checks that it still does)
REFUSED = {
    f"{mt}/{name}": "n_shared_experts = 0 builds a zero-wide shared MLP, which DTensor cannot "
                    "view once split"
    for mt, name in (("deepseek_v2", "causal-lm-no-shared"), ("deepseek_v3", "causal-lm-no-shared"),
                     ("glm4_moe", "causal-lm-all-moe-no-shared-tied"),
                     ("kimi_linear", "causal-lm-layer-types-mlp-types-tied"))
}
# Doge's dynamic mask comes from dt_proj, which its plan leaves whole: a rank adds a mask of
# every head to the scores of its own heads (transformers 5.24's tensor-parallel forward fails)
REFUSED.update({f"doge/{name}": "the dynamic mask is not split with the heads"
                for name in ("tiny-bare-biases-head-dim", "tiny-gqa", "tiny-tied-window")})
# Inkling's embedding norms the table's lookups inside the embedding module: the vocabulary-split
# table's partial lookups reach its RMSNorm before the all-reduce (DTensor refuses the Partial
# placement there; transformers 5.24's EmbeddingParallel hooks the same module)
REFUSED.update({f"inkling_text/{name}": "the embedding norm reads the partial lookups"
                for name in ("causal-lm-default-pattern-t2", "causal-lm-layer-types-dense-sparse",
                             "model-checkpoint-keys")})
# Gemma 4's assistants take the target model's keys and values as inputs (shared_kv_states,
# H.forward_inputs gives them whole): a rank's query heads meet every key/value head
REFUSED.update({f"{mt}/{path.stem}": "the target's keys and values are not split with the heads"
                for mt in ("gemma4_assistant", "gemma4_unified_assistant")
                for path in (H.FAMILY_CONFIG_DIR / mt).glob("*.json")})


def _kind(name: str) -> str:
    for kind, keys in (("all_reduce", ("all_reduce", "allreduce")),
                       ("all_gather", ("all_gather", "allgather")),
                       ("reduce_scatter", ("reduce_scatter",)),
                       ("all_to_all", ("all_to_all", "alltoall"))):
        if any(k in name for k in keys):
            return kind
    return name


@pytest.mark.parametrize("model_type,config,order,every", _forward_cases())
def test_forward_collectives_match_pytorch(model_type, config, order, every, request):
    """Count and payload bytes of the forward's all-reduces and all-gathers (an all-gather's
    payload is the gathered tensor: t times the shard PyTorch is called with)."""
    import tp_reference as R

    if H.reference_params(config) > FORWARD_MAX_PARAMS:
        pytest.skip("a class-default config: too large for a CPU forward (parameters are "
                    "checked on meta)")
    spec = spec_from_config(config)
    plan_dict, own = _plans(spec)
    checked = 0
    name = request.node.callspec.id
    for t in order:
        if checked and not every:
            break
        if spec.n_h % t or (spec.n_kv or spec.n_h) % t:
            continue  # _divisible's head rule, before the sympy per-rank count
        plan, params = _symcalc(spec, t)
        if not _divisible(spec, t, params):
            continue
        refused = P.tp_forward_problems(spec, Layout(tp=t), plan) or REFUSED.get(name)
        with R.fake_world(t) as mesh:
            model = H.build_model(config, device="cpu")
            R.apply_plan(model, plan_dict, mesh, own)
            inputs = H.forward_inputs(model, BATCH, SEQ, "cpu")
            whole = bool(own) and spec.head != "none"  # the head's entries run too
            if refused:  # PyTorch's forward refuses it too
                with pytest.raises((RuntimeError, AssertionError)):  # (DTensor's placements)
                    R.forward_collectives(model, plan_dict, inputs, whole)
                checked += 1
                continue
            calls = R.forward_collectives(model, plan_dict, inputs, whole)
        theirs: dict[str, list[int]] = {}
        for name, size in calls:
            kind = _kind(name)
            size = size * t if kind == "all_gather" else size
            theirs.setdefault(kind, []).append(size)
        comms = C.tp_comm(spec, Options(dtype="fp32", batch=BATCH, seq_len=SEQ), Layout(tp=t),
                          plan)
        vals = _values(spec, t)
        ours: dict[str, list[int]] = {}
        for x in comms:
            if x.phase != "forward":
                continue
            n = int(x.count.xreplace(vals))
            ours.setdefault(x.kind, []).extend([int(x.payload.xreplace(vals))] * n)
        assert {k: (len(v), sum(v)) for k, v in ours.items()} == \
               {k: (len(v), sum(v)) for k, v in theirs.items()}, t
        checked += 1
    if not checked:
        pytest.skip("t in (2, 4, 8) divides no config width here: parameters only")


@pytest.mark.parametrize("config", [cfg for name, cfg in H.generated_configs()
                                    if cfg["model_type"] in ("llama", "mistral", "qwen2",
                                                             "mixtral")][::3],
                         ids=lambda cfg: f"{cfg['model_type']}-{cfg.get('hidden_size')}")
def test_largest_layer_is_deepspeeds(config):
    """DeepSpeed's model_to_params (stage3.py): the most parameters one module holds
    directly, what its ZeRO-3 estimate gathers (symcalc: state_accounting deepspeed)."""

    model = H.build_model(config, device="meta")
    theirs = max(sum(p.numel() for p in m.parameters(recurse=False)) for m in model.modules())
    spec = spec_from_config(config)
    ours = P.largest_layer(spec, TP.plan_entries(tp_plan(spec.implementation["tp_plan"])))
    assert ours.xreplace(_values(spec, 1)) == theirs

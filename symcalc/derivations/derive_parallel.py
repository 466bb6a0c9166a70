"""Per-rank figures and communication of a parallel layout worked out step by step, as data
(no formatting): ``derive --quantity per_rank.peak_bytes`` (and every ``per_rank.*`` and
``communication.*`` figure of the report).

The terms are those of :mod:`symcalc.algebra.parallel` and :mod:`symcalc.algebra.communication`
on the most-loaded rank's stage (its index given: the report's ``per_rank.stage``), each a
formula in the canonical and layout symbols (t, p, v, m, e, t_e, c, N_d, the stage index
i_p) with its source and the rule that divided it, the numbers put in, the sum; then the
closed form where every degree divides what it splits (weights per rank N/(t p) where that is
the rule), beside the exact one with its ceilings. The result equals the report's figure
(tests/test_derive_parallel.py).
"""
from __future__ import annotations

from typing import Iterable

import sympy

from ..algebra import communication as C, parallel as P, quantities as q
from ..algebra.layout import PER_RANK, SYMBOLS
from ..algebra.options import Options
from ..algebra.spec import Spec
from ..algebra.symbols import SIZES, i_p
from .derivation import (Compose, Define, Derivation, Evaluate, Formula, Result, Section,
                         Simplify, part_symbol)
from .derive import chain, defines, meaning, model_values, numbers

DERIVED = {"per_rank.peak_bytes": "training peak of the most-loaded rank: its model states "
                                  "and its activations"}
QUANTITIES = {**PER_RANK, **DERIVED}
# each figure in words for a title ("Weights per rank of llama-2-13b")
TITLES = {"per_rank.params": "parameters per rank", "per_rank.weights_bytes": "weights per rank",
          "per_rank.gradients_bytes": "gradients per rank",
          "per_rank.optimizer_bytes": "optimizer state per rank",
          "per_rank.states_bytes": "model states per rank",
          "per_rank.activations_bytes": "activations per rank",
          "per_rank.kv_cache_bytes": "KV cache per rank",
          "per_rank.peak_bytes": "training peak per rank"}
for _dim in ("tp", "pp", "dp", "ep", "cp"):
    TITLES.update({f"communication.{_dim}.forward_bytes": f"{_dim} payload of one forward",
                   f"communication.{_dim}.step_bytes": f"{_dim} payload of one step",
                   f"communication.{_dim}.step_wire_bytes": f"{_dim} bytes sent in one step",
                   f"communication.{_dim}.decode_bytes_per_token": f"{_dim} payload of one "
                                                                  "decoded token",
                   f"communication.{_dim}.forward_wire_bytes": f"{_dim} bytes sent in one "
                                                              "forward",
                   f"communication.{_dim}.decode_wire_bytes_per_token": f"{_dim} bytes sent for "
                                                                       "one decoded token"})
TITLES.update({"communication.tp.forward_allreduce_count": "tp all-reduces of one forward",
               "communication.tp.forward_allreduce_bytes": "tp all-reduce payload of one forward"})

# how a layout divided a term (parallel.Term.rule), in words
RULES = {
    "whole": "whole on every rank", "experts": "ceil(E/e) of the E experts",
    "colwise": "output rows split over t (column-parallel)",
    "colwise_gather_output": "output rows split over t, the output gathered",
    "rowwise": "input columns split over t (row-parallel), bias whole",
    "rowwise_split_input": "input columns split over t, bias whole",
    "packed_colwise": "gate and up rows each split over t_e",
    "packed_rowwise": "gate and up columns each split over t_e",
    "embedding_rowwise": "vocabulary rows split over t",
    "vocab_colwise": "vocabulary rows split over t (padded vocabulary)",
    "zero": "sharded over the data-parallel group (ZeRO)",
    "tp": "its region runs split over t", "sp": "split over t by sequence parallelism",
    "heads": "key/value heads split over t",
}
COMM_KINDS = {"all_reduce": "all-reduce", "all_gather": "all-gather",
              "reduce_scatter": "reduce-scatter", "all_to_all": "all-to-all",
              "p2p": "point-to-point send"}


def rule_text(rule: str) -> str:
    words = []
    for part in rule.split("+"):
        words.append({"layers": "the stage's layers", "cp": "s/c tokens",
                      "inflight": "times the microbatches in flight"}.get(part, RULES.get(part, part)))
    return "; ".join(words)


def stage_of(stage: int, pp: int):
    """The stage as the per-rank functions take it: first, last, or the symbol i_p."""
    if stage == 0:
        return "first"
    if stage == pp - 1:
        return "last"
    return i_p


def layout_defines(opts: Options, stage: int) -> list[Define]:
    lay = opts.layout()
    out = []
    for field, name in SYMBOLS.items():
        value = lay.expert_tp if field == "etp" else getattr(lay, field)
        out.append(Define(SIZES[name].symbol, int(value), SIZES[name].meaning))
    if 0 < stage < lay.pp - 1:
        out.append(Define(i_p, stage, SIZES["i_p"].meaning))
    return out


# the source of a rule that divided a term (the component's own source otherwise)
RULE_SOURCES = {"zero": "rajbhandari2020", "tp": "korthikanti2022sp", "sp": "korthikanti2022sp",
                "inflight": "narayanan2021pp", "layers": "narayanan2021pp", "experts": "lepikhin2021",
                "cp": "liu2023ring", "heads": "torch_tp"}


def rule_source(rule: str, default: str, megatron: bool) -> str:
    for part in rule.split("+"):
        if part in RULE_SOURCES:
            return RULE_SOURCES[part]
        if part in RULES and part != "whole":
            return "shoeybi2019" if megatron else "torch_tp"
    return default


def _terms_section(title: str, terms: Iterable, letter: str, subs: dict, prefix: str,
                   megatron: bool = False) -> tuple[list[Section], object, sympy.Expr]:
    """One line per term (its formula with the source of the rule that divided it, the
    numbers, the value) and their sum."""
    steps, parts, values, exact = [], [], {}, sympy.Integer(0)
    for i, term in enumerate(terms):
        path = f"{prefix}/{term.path}" if prefix else term.path
        if part_symbol(letter, path) in values:
            path = f"{path}#{i}"
        what = f"{meaning(term.path)}, on this rank: {rule_text(term.rule)}"
        source = rule_source(term.rule, term.source, megatron)
        more, value = chain(Formula(path, letter, term.expr, source, what), subs)
        steps += more
        parts.append(path)
        values[part_symbol(letter, path)] = value
        exact += term.expr
    total = sympy.Add(*[part_symbol(letter, p) for p in parts], evaluate=False) if parts \
        else sympy.Integer(0)
    more, value = chain(Compose(prefix or title, letter, total, title), values)
    return [Section(title, tuple(steps)), Section(f"{title}: sum", tuple(more))], value, exact


def _closed(path: str, letter: str, exact: sympy.Expr, megatron: bool) -> Section:
    """The exact form beside the one where every degree divides what it splits."""
    even = sympy.factor_terms(sympy.expand(P.assume_divisible(exact)))
    return Section("Closed form", (Simplify(
        path, letter, exact, even, "even",
        "t, t_e, e, p and c divide the widths, heads, experts, layers and tokens they split: "
        "every ceiling and floor exact", "megatron_lm" if megatron else "torch_tp"),))


def _memory(spec: Spec, opts: Options, plan, stage: int):
    lay = opts.layout()
    return P.rank_memory(spec, opts, lay, plan, stage_of(stage, lay.pp))


def derive_parallel(spec: Spec, quantity: str, opts: Options, plan, stage: int) -> Derivation:
    """``quantity`` (a key of :data:`QUANTITIES`) of the layout's rank on ``stage``."""
    opts = opts.checked()
    lay = opts.layout()
    values = {**model_values(spec, opts), **lay.values()}
    if 0 < stage < lay.pp - 1:
        values["i_p"] = stage
    subs = numbers(values)
    conv = [f"layout: tp {lay.tp}, pp {lay.pp} ({lay.schedule}, {lay.microbatches} "
            f"microbatches, {lay.vpp} model chunks per rank), ep {lay.ep}, etp {lay.expert_tp}, "
            f"cp {lay.cp}, dp {lay.dp}, ZeRO stage {opts.zero_stage}",
            f"the rank: tensor- and expert-parallel rank 0 on pipeline stage {stage}, the most "
            "loaded",
            f"tensor parallelism splits the parts as --tp-plan {lay.tp_plan} says"]
    letter = "N" if quantity == "per_rank.params" else "K" if quantity.endswith("_count") \
        else "M"
    sections: list[Section] = []
    formulas: list[sympy.Expr] = []
    if quantity.startswith("communication."):
        value, exact, more = _communication(spec, quantity, opts, plan, stage, subs)
        sections += more
        conv.append("payload: each collective's whole tensor; on the wire: ring algorithms, "
                    "all-reduce 2(n-1)/n, all-gather, reduce-scatter and all-to-all (n-1)/n "
                    "of the payload (thakur2005)")
    else:
        mem = _memory(spec, opts, plan, stage)
        groups = {
            "per_rank.params": [("Parameters on the rank", mem.params, "params")],
            "per_rank.weights_bytes": [("Weights on the rank", mem.weights, "weights")],
            "per_rank.gradients_bytes": [("Gradients on the rank", mem.gradients, "gradients")],
            "per_rank.optimizer_bytes": [("Optimizer state on the rank", mem.optimizer,
                                          "optimizer")],
            "per_rank.activations_bytes": [("Activations on the rank", mem.activations,
                                            "activations")],
            "per_rank.kv_cache_bytes": [("KV cache on the rank", mem.kv_cache, "kv_cache")],
        }
        states = [("Weights (training)", mem.training_weights, "weights"),
                  ("Gradients on the rank", mem.gradients, "gradients"),
                  ("Optimizer state on the rank", mem.optimizer, "optimizer")]
        if mem.working_set:
            states.append(("ZeRO-3 working set", mem.working_set, "working_set"))
        groups["per_rank.states_bytes"] = states
        groups["per_rank.peak_bytes"] = states + [("Activations on the rank", mem.activations,
                                                   "activations")]
        if quantity not in groups:
            from ..errors import SymcalcError

            raise SymcalcError("quantity", f"must be one of {', '.join(QUANTITIES)} "
                                           f"(got {quantity!r})")
        parts, exact = {}, sympy.Integer(0)
        for title, terms, prefix in groups[quantity]:
            more, part, expr = _terms_section(title, terms, letter, subs, prefix,
                                              lay.tp_plan == "megatron")
            sections += more
            parts[prefix] = part
            exact += expr
            formulas.append(expr)
        if quantity == "per_rank.peak_bytes":  # each part rounded up, as the report adds them
            states_value = sum((parts[k] for k in parts if k != "activations"), sympy.Integer(0))
            st, sv = chain(Compose("per_rank.states_bytes", "M",
                                   sympy.Add(*[part_symbol("M", k) for k in parts
                                               if k != "activations"], evaluate=False),
                                   "model states (weights, gradients, optimizer state)"),
                           {part_symbol("M", k): parts[k] for k in parts})
            peak = part_symbol("M", "per_rank.states_bytes") + part_symbol("M", "activations")
            pk, value = chain(Compose(quantity, "M", peak, DERIVED[quantity]),
                              {part_symbol("M", "per_rank.states_bytes"): q.whole(states_value),
                               part_symbol("M", "activations"): q.whole(parts["activations"])})
            sections.append(Section("Training peak", tuple(st + pk)))
        elif len(parts) > 1:
            more, value = chain(Compose(quantity, letter, sympy.Add(
                *[part_symbol(letter, k) for k in parts], evaluate=False), PER_RANK[quantity]),
                {part_symbol(letter, k): v for k, v in parts.items()})
            sections.append(Section("Sum", tuple(more)))
        else:
            value = next(iter(parts.values()))
    sections.append(_closed(quantity, letter, exact, lay.tp_plan == "megatron"))
    formulas.append(exact)
    head = (Section("Sizes", tuple(defines(formulas, values))),
            Section("Layout", tuple(layout_defines(opts, stage))))
    unit = {"N": "parameters", "M": "bytes", "K": "collectives"}[letter]
    body = head + tuple(sections) + (Section("Result", (Result(quantity, letter, q.whole(value),
                                                               unit, QUANTITIES[quantity]),)),)
    words = TITLES[quantity]
    title = f"{words[0].upper()}{words[1:]} of {spec.name}"
    return Derivation(spec.name, quantity, title, letter, body, tuple(conv),
                      {"stage": stage})


def _communication(spec: Spec, quantity: str, opts: Options, plan, stage: int, subs: dict):
    """The collectives of one dimension and phase: count x payload (x the wire factor), their
    sum."""
    lay = opts.layout()
    _, dim, kind = quantity.split(".")
    comm = C.communication(spec, opts, lay, plan, stage_of(stage, lay.pp))[dim]
    phase = {"forward_bytes": "forward", "step_bytes": "step", "step_wire_bytes": "step",
             "decode_bytes_per_token": "decode", "forward_allreduce_count": "forward",
             "forward_allreduce_bytes": "forward", "forward_wire_bytes": "forward",
             "decode_wire_bytes_per_token": "decode"}[kind]
    items = comm[phase]
    if kind.startswith("forward_allreduce"):
        items = [x for x in items if x.kind == "all_reduce"]
    wire = "wire" in kind
    letter = "K" if kind.endswith("count") else "M"
    steps, values, paths, exact = [], {}, [], sympy.Integer(0)
    for i, x in enumerate(items):
        path = f"{dim}/{i}"
        if letter == "K":
            expr = x.count
        else:
            expr = x.count * x.payload * (C.wire_factor(x.kind, x.group) if wire else 1)
        what = (f"{x.path.split('/', 3)[-1]}: {COMM_KINDS[x.kind]} ({x.phase}) over "
                f"{x.group} ranks" + (", the bytes this rank sends" if wire else ""))
        what = what.replace("_", " ") if "*" in what else what
        more, value = chain(Formula(path, letter, expr, x.source, what), subs)
        steps += more
        values[part_symbol(letter, path)] = value
        paths.append(path)
        exact += expr
    total = sympy.Add(*[part_symbol(letter, p) for p in paths], evaluate=False) if paths \
        else sympy.Integer(0)
    more, value = chain(Compose(quantity, letter, total, PER_RANK[quantity]), values)
    title = f"{dim.upper()} collectives ({phase})"
    return value, exact, [Section(title, tuple(steps)), Section(f"{title}: sum", tuple(more))]

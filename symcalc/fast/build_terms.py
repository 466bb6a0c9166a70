"""Writes the term table, ``symcalc/fast/terms.store``: ``python -m symcalc.fast.build_terms``
(``--check``: exit 1 when the committed table is stale).

Beside it, ``terms.inputs`` records what the table was built from: the symcalc modules the
build imported, one SHA-256 over them and every data file of the package, the Python and
sympy versions, and the table's own SHA-256. :func:`inputs_unchanged` compares that
record with the files as they are, which takes milliseconds; the suite's staleness test
rebuilds the table (about 10 s) only when the record does not match.

The component functions of :mod:`symcalc.algebra` stay the single source of truth. Each of
their terms -- a parameter :class:`~symcalc.algebra.breakdown.Leaf`, a FLOP leaf, a saved
tensor (:class:`~symcalc.algebra.saved.Saved`), a KV-cache or recurrent-state term -- becomes
one *row*: its slash path, its expression in the canonical symbols (sizes, the structural
switches ``sw_*``, the implementation facts ``ac_*``), its source and, for saved tensors, the
choice it depends on and how parallelism and recomputation treat it. Nothing is expanded
across rows. A quantity is a linear combination of row sums whose coefficients are built by
the same functions (``flops.forward_total``, ``memory.training_bytes`` ...) from the options
as symbols. The Python evaluator (:mod:`symcalc.fast.terms`) and the page read this one
table; see docs/evaluators.md.
"""
from __future__ import annotations

import hashlib
import json
import sys
from math import gcd
from pathlib import Path

import sympy

from ..algebra import accounting, activations, flops, memory
from ..algebra.activations import CHOICE_MEANINGS
from ..algebra.implementation import fact_meanings
from ..algebra.options import ACTIVATION_MODELS
from ..algebra.quantities import QUANTITIES
from ..algebra.symbols import ALL, SIZES, SWITCHES, s
from ..algebra.layout import PER_RANK
from ..algebra.tp_styles import FACT_KINDS
from . import build_parallel

SHAPES = ("single", "encoder-decoder")
# switches a shape never sets (spec.toml refuses them there): fixed at 0 in its rows, which
# then leave out the terms and rows they guard
SHAPE_FIXED = {"encoder-decoder": ("sw_mla", "sw_q_lora")}
_fixed: dict = {}  # the shape being built's SHAPE_FIXED, as a substitution (see row_tree)
TARGET = Path(__file__).with_name("terms.store")
INPUTS = TARGET.with_name("terms.inputs")
PACKAGE = TARGET.parent.parent  # symcalc/

OPTION_MEANINGS = {
    "w_num": "weight bytes per element, numerator (int4: 1)",
    "w_den": "weight bytes per element, denominator (int4: 2)",
    "kv_num": "KV-cache bytes per element, numerator",
    "kv_den": "KV-cache bytes per element, denominator",
    "st_num": "recurrent-state bytes per element, numerator",
    "st_den": "recurrent-state bytes per element, denominator",
    "opt_w": "optimizer: bytes per parameter of weights",
    "opt_g": "optimizer: bytes per parameter of gradients",
    "opt_o": "optimizer: bytes per parameter of optimizer state",
    "sw_zero1": "ZeRO stage 1 (one-hot with 2 and 3; all 0: stage 0)",
    "sw_zero2": "ZeRO stage 2",
    "sw_zero3": "ZeRO stage 3",
    "sw_macs": "count multiply-accumulates (matmul FLOPs / 2)",
    "sw_nonmatmul": "add non-matmul FLOPs",
    "sw_rc_sel": "selective recomputation (one-hot with sw_rc_full; both 0: none)",
    "sw_rc_full": "full recomputation",
    "sw_decoder": "the single stack is a decoder (keeps a KV cache)",
    **CHOICE_MEANINGS,
    **build_parallel.OPTION_MEANINGS,
}
OPTIONS = {n: sympy.Symbol(n, integer=True, nonnegative=True) for n in OPTION_MEANINGS}
FACT_MEANINGS = fact_meanings()
FACTS = {n: sympy.Symbol(n, integer=True, nonnegative=True) for n in FACT_MEANINGS}
# symbols whose value is fixed by the model's structure, the facts and the options (never a
# grid axis): a row's factors among them form its guard
CONSTANT_NAMES = frozenset(SWITCHES) | frozenset(OPTIONS) | frozenset(FACTS)


def _o(name: str) -> sympy.Symbol:
    return OPTIONS[name]


from .trees import _int, tree  # noqa: E402,F401  (tree: the rows' and coefficients' JSON form)


def split_fraction(expr: sympy.Expr) -> tuple[sympy.Expr, int]:
    """``expr == num / den`` with ``num`` a polynomial with integer coefficients, ``den`` an
    integer."""
    expr = sympy.expand(expr)
    den = sympy.Integer(1)
    for term in sympy.Add.make_args(expr):
        den = sympy.ilcm(den, term.as_numer_denom()[1]) if term.as_numer_denom()[1].is_Integer \
            else _no_symbolic_den(expr)
    num = sympy.expand(expr * den)
    return num, int(den)


def _no_symbolic_den(expr):
    raise ValueError(f"a row must not divide by a symbol: {expr}")


def row_tree(expr: sympy.Expr):
    """(guard, tree, den): the row ``expr`` as ``prod(guard) * tree / den`` with ``guard``
    the constant symbols (switches, facts) that multiply all of it, ``den`` an integer."""
    num, den = split_fraction(expr.xreplace(_fixed) if _fixed else expr)
    if num == 0:
        return None
    guard, rest = [], []
    for f in content(num):
        if isinstance(f, sympy.Symbol) and f.name in CONSTANT_NAMES:
            guard.append(f.name)
        else:
            rest.append(f)
    if len(rest) == 1:
        return sorted(guard), grouped_tree(rest[0]), den
    made = [grouped_tree(f) for f in rest if f != 1]
    return sorted(guard), (["*", *made] if len(made) > 1 else made[0] if made else 1), den


def grouped_tree(expr: sympy.Expr):
    """The tree of a polynomial with its terms grouped by the constant symbols (switches,
    facts, options) they hold: the symbol most terms share is taken out of them first
    (``sw_a*x + sw_a*y + z`` as ``sw_a*(x + y) + z``), recursively, and leads its product.
    Folding a model's constants into a row (:func:`symcalc.fast.terms.fold`) then drops a
    group whose switch is 0 at its first factor instead of visiting each of its terms: an
    expanded row of every variant (the KV cache's has 64 terms, about 1,500 nodes) costs
    a report a few dozen nodes."""
    if not isinstance(expr, sympy.Add):
        return tree(expr)
    parts = []
    for t in expr.args:
        c, rest = t.as_coeff_Mul()
        parts.append((c, rest.as_powers_dict() if rest != 1 else {}))
    return _grouped(parts)


def _grouped(parts: list):
    counts: dict[sympy.Symbol, int] = {}
    for _, powers in parts:
        for b, e in powers.items():
            if isinstance(b, sympy.Symbol) and b.name in CONSTANT_NAMES and e.is_Integer:
                counts[b] = counts.get(b, 0) + 1
    if not counts:
        return tree(sympy.Add(*[c * sympy.Mul(*[b ** e for b, e in powers.items()])
                                for c, powers in parts]))
    top = max(sorted(counts, key=lambda b: b.name), key=lambda b: counts[b])
    inner, rest = [], []
    for c, powers in parts:
        if top in powers and powers[top].is_Integer:
            less = dict(powers)
            less[top] -= 1
            if less[top] == 0:
                del less[top]
            inner.append((c, less))
        else:
            rest.append((c, powers))
    made = _grouped(inner)
    group = top.name if made == 1 else \
        ["*", top.name, *(made[1:] if type(made) is list and made[0] == "*" else [made])]
    if not rest:
        return group
    more = _grouped(rest)
    return ["+", group, *(more[1:] if type(more) is list and more[0] == "+" else [more])]


def content(num: sympy.Expr) -> list:
    """The factors of an expanded polynomial with integer coefficients: its content (the
    coefficients' gcd, negative when every coefficient is, and each base every monomial holds,
    at its lowest power), then the sum of what is left -- what ``sympy.factor_terms`` gives
    for such a sum, without its general machinery (a term table build calls it for each of
    a few thousand rows)."""
    terms = sympy.Add.make_args(num)
    if len(terms) == 1:
        return list(sympy.Mul.make_args(num))
    parts = []
    for t in terms:
        c, rest = t.as_coeff_Mul()
        parts.append((int(c), dict(rest.as_powers_dict()) if rest != 1 else {}))
    common = dict(parts[0][1])
    for _, powers in parts[1:]:
        for base in list(common):
            e = powers.get(base)
            if e is None or not (e.is_Integer and common[base].is_Integer):
                del common[base]
            else:
                common[base] = min(common[base], e)
    g = 0
    for c, _ in parts:
        g = gcd(g, c)
    if all(c < 0 for c, _ in parts):
        g = -g
    if g == 1 and not common:
        return [num]
    left = sympy.Add(*[sympy.Integer(c // g) * sympy.Mul(*[b ** (e - common.get(b, 0))
                                                          for b, e in powers.items()])
                       for c, powers in parts])
    factors = ([sympy.Integer(g)] if g != 1 else []) + [b ** e for b, e in common.items()]
    return factors + [left]


# -- rows ---------------------------------------------------------------------------------
class Strings:
    """Each text once: rows refer to paths, sources and choice texts by index."""

    def __init__(self):
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.items)
            self.items.append(text)
        return self.index[text]


def _rows(strings: Strings, items, choice=None) -> list:
    """``[path, source, guard, tree, den]`` (and the choice text's index) per item
    ``(path, expression, source)`` that is not identically 0."""
    out = []
    for item in items:
        path, expr, source = item[:3]
        made = row_tree(expr)
        if made is None:
            continue
        guard, t, den = made
        row = [strings(path), strings(source), guard, t, den]
        if len(item) > 3:
            row.append(strings(item[3]))
        out.append(row)
    return out


def _leaves(breakdown, keep=lambda leaf: True, change=lambda leaf: leaf.value):
    return [(leaf.path, change(leaf), leaf.source) for leaf in breakdown if keep(leaf)]


def _is_core(leaf) -> bool:
    return leaf.path.rsplit("/", 1)[-1] in flops.ATTENTION_CORE


def act_sets(strings: Strings, shape: str) -> dict[str, list]:
    """Per activation model, its saved tensors over all the layers that hold them (the facts
    as symbols), in sets: ``act:<model>:s:<region>`` (tensor parallelism divides them where
    the plan runs the region split), ``act:<model>:rep`` (only sequence parallelism does) and
    ``act:<model>:core:<region>`` (the attention core, dropped by selective recomputation);
    rows carry the choice text."""
    out = {}
    for model in ACTIVATION_MODELS:
        kinds = {"rep": []}
        kinds.update({f"s:{r}": [] for r in build_parallel.REGIONS})
        kinds.update({f"core:{r}": [] for r in ("attention", "other")})
        for stack, terms in activations.stack_terms(model, FACTS, shape):
            for term in terms:
                kinds[_act_kind(term)].append((f"{stack}/{term.name}", term.bytes, term.source,
                                               term.choice))
        for kind, items in kinds.items():
            out[f"act:{model}:{kind}"] = _rows(strings, items)
    out["act_input"] = _rows(strings, [("layers/layer_input",
                                        activations.layer_inputs(FACTS, shape),
                                        "korthikanti2022",
                                        "full recomputation: each layer keeps only its input")])
    return out


def _act_kind(term) -> str:
    """The set of a saved term: ``rep`` (outside tensor parallelism), ``s:<region>`` (split
    where the plan runs the region split; the routed experts' over t_e), ``core:<region>``
    (the attention core, which selective recomputation drops)."""
    region = term.name.split("/", 1)[0]
    if term.name.startswith("moe/experts/"):
        region = "experts"
    if term.core:
        return f"core:{'attention' if region == 'attention' else 'other'}"
    if not term.split:
        return "rep"
    return f"s:{region if region in build_parallel.REGIONS else 'other'}"


ACT_REGIONS = tuple(f"s:{r}" for r in build_parallel.REGIONS)


def sets_for(strings: Strings, shape: str) -> dict:
    """Every row set of ``shape``: parameters (with the embedding and routed-expert rows again,
    and the routed experts' active count), one layer of each stack, matmul and non-matmul
    FLOPs (with the attention core again), decode FLOPs, KV cache, recurrent state and
    convolution windows, activations."""
    E, k = SIZES["E"].symbol, SIZES["k"].symbol
    params = accounting.shape_params(shape)
    routed = lambda leaf: accounting.is_routed_expert(leaf.path)
    sets = {
        "params": _rows(strings, _leaves(params)),
        "embedding": _rows(strings, _leaves(params, lambda l: l.path in accounting.EMBEDDING_PATHS)),
        "routed": _rows(strings, _leaves(params, routed)),
        "active": _rows(strings, _leaves(params, routed, lambda l: l.value.xreplace({E: k}))),
    }
    for prefix, (_, layer) in accounting.shape_layers(shape).items():
        sets[f"layer:{prefix}"] = _rows(strings, _leaves(layer))
    for name, bd in (("matmul", flops.shape_matmul(shape)), ("nonmatmul", flops.shape_nonmatmul(shape))):
        sets[name] = _rows(strings, _leaves(bd))
        sets[f"{name}_core"] = _rows(strings, _leaves(bd, _is_core))
    sets["decode"] = _rows(strings, flops.decode_terms(shape, s))
    sets["kv"] = _rows(strings, memory.kv_cache_terms(shape))
    state = memory.recurrent_state_terms(shape)
    sets["state"] = _rows(strings, [x for x in state if x[0].endswith("/state")])
    sets["conv"] = _rows(strings, [x for x in state if x[0].endswith("/conv")])
    sets["ids"] = _rows(strings, [x for x in state if x[0].endswith("/ids")])
    sets.update(act_sets(strings, shape))
    leaves = list(params)
    sets.update(build_parallel.rank_rows(shape, strings, sets["params"], leaves, row_tree,
                                         CONSTANT_NAMES))
    sets.update(build_parallel.comm_rows(shape, strings, sets["params"], leaves, row_tree,
                                         CONSTANT_NAMES))
    return sets


# -- quantities: linear combinations of row sums ----------------------------------------------
def _sum(name: str) -> sympy.Symbol:
    """The symbol of a row set's sum."""
    return sympy.Symbol("S:" + name)


def activation_formula(shape: str) -> sympy.Expr:
    """:func:`symcalc.algebra.activations.weighted_sums` over the row sums of each model."""
    w = {n: _o(n) for n in CHOICE_MEANINGS}
    return activations.weighted_sums(
        {m: (sympy.Add(*[_sum(f"act:{m}:{r}") for r in ACT_REGIONS]), _sum(f"act:{m}:rep"),
             _sum(f"act:{m}:core:attention") + _sum(f"act:{m}:core:other"))
         for m in ACTIVATION_MODELS}, _sum("act_input"), w)


def formulas(shape: str) -> dict[str, sympy.Expr]:
    """Every quantity as a linear combination of row sums, built by the functions the sympy
    expressions use (coefficients in the options)."""
    params = _sum("params")
    macs, nonmatmul = _o("sw_macs"), _o("sw_nonmatmul")
    core = flops.forward_total(_sum("matmul_core"), _sum("nonmatmul_core"), macs, nonmatmul)
    forward = flops.forward_total(_sum("matmul"), _sum("nonmatmul"), macs, nonmatmul)
    opt = memory.Optimizer("general", _o("opt_w"), _o("opt_g"), _o("opt_o"), "symbols")
    z1, z2, z3 = _o("sw_zero1"), _o("sw_zero2"), _o("sw_zero3")
    zero = {0: 1 - z1 - z2 - z3, 1: z1, 2: z2, 3: z3}
    kv = _o("kv_num") / _o("kv_den")
    state = _o("st_num") / _o("st_den")
    return {
        "params.total": params,
        "params.active": params - _sum("routed") + _sum("active"),
        "params.embedding": _sum("embedding"),
        "params.non_embedding": params - _sum("embedding"),
        "flops.forward_matmul": _sum("matmul"),
        "flops.forward": forward,
        "flops.training": flops.training_total(forward, core, _o("sw_rc_full"), _o("sw_rc_sel")),
        "flops.decode_per_token": _sum("decode"),
        "memory.weights_bytes": memory.weights_bytes(params, _o("w_num") / _o("w_den")),
        "memory.kv_cache_bytes": kv * _sum("kv"),
        "memory.recurrent_state_bytes": state * _sum("state") + kv * _sum("conv")
        + memory.ID_BYTES * _sum("ids"),
        "memory.activations_bytes": activation_formula(shape),
        "memory.training_bytes": sum((on * memory.training_bytes(params, opt, z)
                                      for z, on in zero.items()), sympy.Integer(0)),
        **build_parallel.formulas(shape, ACTIVATION_MODELS),
    }


# values a quantity fixes whatever the options say: the contract's matmul FLOPs count the full
# s x s scores
FIXED = {"flops.forward_matmul": {"sw_causal": 0, "sw_causal_exact": 0}}


def quantity_entry(name: str, expr: sympy.Expr, sets: dict) -> dict:
    """``{"sum": [[set, coefficient tree(, view)], ...]}`` (and ``"fix"``: values the quantity
    fixes; ``"stage": 1``: its coefficients and views read the stage index i_p). Sums of
    sets the shape does not have (no rows) are left out."""
    times = None
    if isinstance(expr, build_parallel.Times):
        expr, times = expr
    out = {"sum": [x for x in linear_terms(expr) if sets.get(x[0])]}
    if times is not None:
        out["times"] = tree(times)
    if name in FIXED:
        out["fix"] = FIXED[name]
    if name.split(".", 1)[0] in ("per_rank", "communication"):
        out["stage"] = 1
    return out


def linear_terms(expr: sympy.Expr) -> list:
    """``[[sum name, coefficient tree(, view)], ...]`` of a linear combination of row sums (a
    sum symbol ``S:set@view`` is the set summed at a view)."""
    expr = sympy.expand(expr)
    sums = sorted((x for x in expr.free_symbols if x.name.startswith("S:")), key=lambda x: x.name)
    out = []
    rest = expr
    for x in sums:
        c = sympy.factor(expr.coeff(x))
        rest -= sympy.expand(c * x)
        name, _, view = x.name[2:].partition("@")
        out.append([name, tree(c)] + ([view] if view else []))
    if sympy.expand(rest) != 0:
        raise ValueError(f"not a linear combination of row sums: {expr}")
    return out


def vision_parts() -> list:
    """``[role, kind, description, source, symbols, [[path, tree], ...], total tree,
    switches]`` of every vision tower and projector of :mod:`symcalc.algebra.vision` (the page
    counts a multimodal config's parts from these; ``switches``: its symbols that are 0 or 1,
    which a config may give as true or false)."""
    from ..algebra import vision as vis

    out = []
    for role, table in vis.TABLES.items():
        for kind, make in table.items():
            part = make()
            rows = [[path, tree(sympy.expand(e))] for path, e in part.terms.items()]
            out.append([role, kind, part.description, part.source, sorted(part.symbols), rows,
                        tree(sympy.factor_terms(sympy.expand(part.total))),
                        sorted(part.symbols & vis.SWITCHES)])
    return out


# -- the table ------------------------------------------------------------------------------
def meanings() -> dict[str, str]:
    """Every symbol a row or coefficient reads, with its meaning."""
    out = {name: info.meaning for name, info in ALL.items()}
    out.update(OPTION_MEANINGS)
    out.update(FACT_MEANINGS)
    return out


def generate() -> bytes:
    """The term table as store bytes (:func:`entries`)."""
    from .. import compiled

    return compiled.store_bytes({name: (0, value) for name, value in entries(build()).items()})


def entries(table: dict) -> dict:
    """The table split into store entries, so that a report reads only what it evaluates:
    ``common`` (quantities, optimizers, strings, varying sizes, each shape's quantity
    combinations and set names), ``symbols``, ``vision``, ``parallel`` (what only a layout
    reads: the per_rank names, fact kinds, views, lets and each shape's per-rank and
    communication quantities) and ``sets/<shape>/<set>``, one per set of rows
    (:func:`symcalc.fast.terms.table` puts them back together)."""
    common = {k: table[k] for k in ("about", "quantities", "optimizers", "varying", "strings")}
    common["shapes"] = {sh: {"quantities": {q: e for q, e in body["quantities"].items()
                                            if not is_parallel_quantity(q)},
                             "sets": list(body["sets"]),
                             "layer_counts": body["layer_counts"]}
                        for sh, body in table["shapes"].items()}
    parallel = {k: table[k] for k in ("per_rank", "fact_kinds", "views", "lets")}
    parallel["shapes"] = {sh: {"quantities": {q: e for q, e in body["quantities"].items()
                                              if is_parallel_quantity(q)}}
                          for sh, body in table["shapes"].items()}
    out = {"common": common, "symbols": table["symbols"], "vision": table["vision"],
           "parallel": parallel}
    for sh, body in table["shapes"].items():
        for name, rows in body["sets"].items():
            out[f"sets/{sh}/{name}"] = rows
    return out


def build() -> dict:
    """The whole term table (as :func:`symcalc.fast.terms.table` reads it back)."""
    strings = Strings()
    shapes = {}
    for shape in SHAPES:
        _fixed.clear()
        _fixed.update({ALL[n].symbol: sympy.Integer(0) for n in SHAPE_FIXED.get(shape, ())})
        sets = sets_for(strings, shape)
        same = same_sets(sets)
        for name in same:
            del sets[name]
        shapes[shape] = {"sets": sets,
                         "quantities": {q: quantity_entry(q, read_once(e, same), sets)
                                        for q, e in formulas(shape).items()},
                         # a per-layer view is listed when its count is above 0
                         "layer_counts": {p: tree(n) for p, n in
                                          accounting.layer_counts(shape).items()}}
    _fixed.clear()
    table = {
        "about": "GENERATED by `python -m symcalc.fast.build_terms` from symcalc.algebra; "
                 "do not edit (docs/evaluators.md)",
        "quantities": QUANTITIES,
        "optimizers": {o.name: [o.weights, o.gradients, o.state]
                       for o in memory.OPTIMIZERS.values()},
        "symbols": meanings(),
        # sizes that may differ from point to point of a sweep; every other value is folded
        # into the rows once per model (terms.specialize); the layout's degrees are folded
        # too, and the stage index i_p is given per stage
        "varying": sorted(n for n in SIZES if n not in build_parallel.LAYOUT_NAMES),
        "strings": strings.items,
        "shapes": shapes,
        "vision": vision_parts(),
    }
    table.update({
        "per_rank": PER_RANK,
        # the kinds of plan facts (a fact is "<kind>:<part>[:<part>]"), each with its meaning
        # ({0}, {1}: the parts it names); rows and coefficients read them, and one a plan
        # does not set is 0 (symcalc.algebra.tp_styles.plan_facts)
        "fact_kinds": FACT_KINDS,
        # sizes substituted before a set is summed (a quantity's [set, coefficient, view])
        "views": {name: {str(k): tree(sympy.expand(x) if not x.is_Atom else x)
                         for k, x in view.items()}
                  for name, view in build_parallel.views().items()},
        # named coefficients, in order: each a tree of the constants, the stage index and the
        # lets before it, computed once per model, options and stage
        "lets": [[name, tree(x)] for name, x in build_parallel.lets()],
    })
    return table


def same_sets(sets: dict) -> dict[str, str]:
    """The activation sets of a model whose rows are those of the same set of an earlier model
    (sdpa keeps what eager keeps outside the attention core): ``{set: the set it repeats}``.
    Such a set is written once; the quantities sum the first one with both models' weights."""
    out = {}
    for i, model in enumerate(ACTIVATION_MODELS):
        for name in [n for n in sets if n.startswith(f"act:{model}:")]:
            kind = name[len(f"act:{model}:"):]
            first = next((f"act:{m}:{kind}" for m in ACTIVATION_MODELS[:i]
                          if sets.get(f"act:{m}:{kind}") == sets[name]), None)
            if first is not None and sets[name]:
                out[name] = out.get(first, first)
    return out


def read_once(expr, same: dict[str, str]):
    """A quantity's formula with the sums of repeated sets (:func:`same_sets`) read from the
    set they repeat (a view's suffix ``@view`` kept)."""
    if not same:
        return expr
    if isinstance(expr, build_parallel.Times):
        return build_parallel.Times(read_once(expr[0], same), expr[1])
    swap = {}
    for x in expr.free_symbols:
        name, at, view = x.name[2:].partition("@")
        if x.name.startswith("S:") and name in same:
            swap[x] = sympy.Symbol("S:" + same[name] + at + view)
    return expr.xreplace(swap)


def is_parallel_quantity(name: str) -> bool:
    """A per-rank or communication quantity (the store's ``parallel`` entry)."""
    return name.split(".", 1)[0] in ("per_rank", "communication")


def write_or_check(target: Path, data: bytes, command: str, argv: list[str]) -> int:
    """Write ``data`` to ``target``, or with ``--check`` in ``argv`` report whether it is
    already there (exit status 1 when stale, naming ``command`` that regenerates it)."""
    if "--check" in argv:
        same = target.exists() and target.read_bytes() == data
        print(f"{target.name} is {'up to date' if same else f'STALE: run python -m {command}'}")
        return 0 if same else 1
    target.write_bytes(data)
    from .. import compiled

    compiled.forget()
    print(f"wrote {target} ({len(data):,} bytes)")
    return 0


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _versions() -> dict:
    return {"python": "%d.%d" % sys.version_info[:2], "sympy": sympy.__version__}


def _data_files() -> set[Path]:
    return {p.resolve() for ext in ("toml", "json", "store", "txt") for p in PACKAGE.rglob(f"*.{ext}")}


def input_modules() -> list[str]:
    """The symcalc modules imported in this process so far, as paths relative to symcalc/
    (after a build: every module whose code may have shaped the table)."""
    root = PACKAGE.resolve()
    files = {Path(m.__file__).resolve() for name, m in list(sys.modules.items())
             if (name == "symcalc" or name.startswith("symcalc.")) and getattr(m, "__file__", None)}
    files.add(Path(__file__).resolve())  # run as __main__ by ``python -m``
    return sorted(p.relative_to(root).as_posix() for p in files if root in p.parents)


def _digest(modules: list[str]) -> str:
    """One SHA-256 over the listed modules and every data file of the package (a superset of
    what a build reads: a file outside symcalc/ cannot change the table; the versions are
    recorded apart), each file's path and bytes."""
    root = PACKAGE.resolve()
    files = {root / m for m in modules} | _data_files()
    files -= {TARGET.resolve(), INPUTS.resolve()}
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(_sha(path.read_bytes()).encode())
    return h.hexdigest()


def inputs_record(table: bytes, modules: list[str]) -> bytes:
    """``terms.inputs``: the versions, the table's hash, the modules the build imported and
    the digest of those modules and the data files."""
    record = {**_versions(), "table": _sha(table), "modules": modules,
              "digest": _digest(modules)}
    return (json.dumps(record, indent=0, sort_keys=True) + "\n").encode()


def inputs_unchanged() -> bool:
    """True when ``terms.inputs`` matches the versions, the committed table and the digest of
    its modules and the data files as they are now: the table was built from exactly these
    inputs, so it is fresh. False means only that the table must be rebuilt to tell
    (:func:`generate`)."""
    try:
        record = json.loads(INPUTS.read_text(encoding="utf-8"))
        if any(record.get(k) != v for k, v in _versions().items()):
            return False
        if record["table"] != _sha(TARGET.read_bytes()):
            return False
        return record["digest"] == _digest(record["modules"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    data = generate()
    status = write_or_check(TARGET, data, "symcalc.fast.build_terms", argv)
    if "--check" not in argv:
        INPUTS.write_bytes(inputs_record(data, input_modules()))
    elif status == 0 and record_is_stale():
        print("symcalc/fast/terms.inputs is stale (the table itself is fresh): run "
              "`python -m symcalc.fast.build_terms` to rewrite it; until then the suite "
              "rebuilds the table to check it", file=sys.stderr)
        status = 1
    return status


def record_is_stale() -> bool:
    """``terms.inputs`` no longer describes the inputs although it was written with this
    Python and sympy (with other versions it cannot match, and the table is rebuilt to check
    it, which is right)."""
    try:
        record = json.loads(INPUTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    same_versions = all(record.get(k) == v for k, v in _versions().items())
    return same_versions and not inputs_unchanged()


if __name__ == "__main__":
    sys.exit(main())

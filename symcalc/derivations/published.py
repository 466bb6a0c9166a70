"""Published FLOP and parameter formulas as named conventions, each derived from symcalc's
own components under the assumptions its authors made.

A :class:`Form` holds a published formula (in the canonical symbols of
:mod:`symcalc.algebra.symbols`), the source it comes from, the architecture it assumes (spec fields
such as a plain FFN or a tied head), the size relations it assumes (``d_h = d/n_h``,
``n_kv = n_h``, ``d_ff = 4d``, ``P = s``) and ``exact``: symcalc's quantity for a spec under
the form's *counting* convention (FLOPs or MACs, causal skipping, passes per training step,
per token or per step). Counting conventions are fixed by the form; what remains between a
model and the form is architecture, and :meth:`Form.difference` gives it exactly:

* :func:`derive` applies a form's assumptions to a spec, builds symcalc's expression from the
  components and returns the residual against the published formula (zero when the form is
  reproduced);
* :meth:`Form.difference` is symcalc's exact quantity for the model as it is minus the
  published formula, expanded in canonical symbols (gated FFN, GQA, biases, norms, untied
  tables ... show up as terms).

Symbols: ``b`` is the published ``B`` (sequences per step, summed over every device), ``s``
the sequence length (Kaplan's ``n_ctx``), ``d`` the hidden size (Megatron's ``h``),
``n_h*d_h`` Kaplan's ``d_attn``. Nothing here formats or renders.

Which symcalc settings reproduce each form exactly (for a model meeting its assumptions):

* seed layer calculator (seeds/000): ``flops.forward_matmul`` at batch 1 is its FLOP-consistent
  version L(8sd^2 + 4s^2d + 4sd d_ff); the printed 4sd^2 + 2s^2d + 4sd d_ff is the attention
  subtree counted with ``--macs`` plus the FFN without; its parameters are ``params.total``
  with P = s.
* Kaplan et al. 2020: N is ``params.non_embedding`` under ``--assume kaplan``; C_fwd is
  ``flops.forward --causal half`` per token (its 2 L n_ctx d_attn is half the score matrix
  and half the weighted sum); 6N is 3x the weight matmuls only (the context term dropped).
* Hoffmann et al. 2022: ``flops.forward_matmul`` (full s^2) + the token lookup as a one-hot
  matmul 2sVd + softmax at 3 FLOPs per score element; training 3x.
* Narayanan et al. 2021 eq. 2: ``params.total`` with final_norm = false and P = s; eq. 3: 3x
  forward + one more forward of the layers (the logit layer is not recomputed; symcalc's
  ``--recompute full`` recomputes it too: 2bsdV more).
* Korthikanti et al. 2022 eq. 7: ``flops.training`` (no recomputation, full s^2) exactly;
  eq. 8: that + 3x the attention core (its s^2 term doubled), where one recomputed forward of
  the core, :func:`selective_recompute_training`, is 8 b s^2 L d less.
* PaLM / nanoGPT: ``flops.training --causal full`` per token, with N every parameter but a
  learned position table, for a model whose every such parameter is a matmul weight.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..records import replace
from typing import Callable, Optional

import sympy

from ..algebra import accounting, flops
from ..algebra import quantities as q
from ..algebra.assumptions import ASSUMPTIONS
from ..algebra.breakdown import Breakdown
from ..errors import SymcalcError
from ..algebra.flops import NONMATMUL_COSTS
from ..algebra.options import Options
from ..algebra.spec import Spec, make_spec
from ..algebra.symbols import L, P, V, b, d, d_ff, d_h, n_h, n_kv, s

MHA = {n_kv: n_h}
HEAD_WIDTH = {d_h: d / n_h}
TEXTBOOK = {d_h: d / n_h, n_kv: n_h, d_ff: 4 * d}
POSITIONS_AS_SEQ = {P: s}

DENSE = {"E": None, "k": None, "pooler": False, "mlm_head": False}
MATMUL_SHAPE = {**DENSE, "attention_output": True, "ffn": "plain"}


@dataclass(frozen=True, eq=False)
class Form:
    """One published formula as a named convention."""

    name: str
    source: str  # key in symcalc.derivations.sources
    description: str
    unit: str
    assumptions: tuple[str, ...]
    reproduced_by: str  # the symcalc switches that give the published value exactly
    formula: Callable[[Spec], sympy.Expr]
    exact: Callable[[Spec], sympy.Expr]
    structure: dict = field(default_factory=dict)  # spec field -> value the form assumes
    relations: dict = field(default_factory=dict)  # symbol -> expression the form assumes
    rows: Optional[Callable[[Spec], list]] = None  # (label, published, symcalc) per term

    def shaped(self, spec: Spec) -> Spec:
        """The spec with the architecture the form assumes."""
        changes = {k: v(spec) if callable(v) else v for k, v in self.structure.items()}
        return replace(spec, **changes) if changes else spec

    def relate(self, expr: sympy.Expr) -> sympy.Expr:
        return sympy.expand(sympy.sympify(expr).xreplace(self.relations))

    def published(self, spec: Spec) -> sympy.Expr:
        """The published formula (canonical symbols; only PaLM's N reads the spec)."""
        _check_single(spec)
        return sympy.expand(self.formula(spec))

    def symcalc(self, spec: Spec) -> sympy.Expr:
        """symcalc's exact quantity for ``spec`` as it is, under the form's counting."""
        _check_single(spec)
        return sympy.expand(self.exact(spec))

    def difference(self, spec: Spec, opts: Optional[Options] = None) -> sympy.Expr:
        """symcalc's exact quantity minus the published formula, expanded in canonical
        symbols; zero when the model meets the form's assumptions. The form fixes every
        counting convention, so ``opts`` (kept for a uniform signature) changes nothing."""
        return sympy.expand(self.symcalc(spec) - self.published(spec))


@dataclass(frozen=True)
class Proof:
    """A form reproduced from the components: both sides under the form's assumptions."""

    form: str
    model: str
    symcalc: sympy.Expr
    published: sympy.Expr
    residual: sympy.Expr  # expand(symcalc - published); zero when reproduced
    rows: tuple = ()  # (label, published, symcalc, residual) per term of a table

    @property
    def holds(self) -> bool:
        return self.residual == 0 and all(r[3] == 0 for r in self.rows)


def _check_single(spec: Spec) -> None:
    if spec.shape != "single":
        raise SymcalcError("MODEL", "published forms describe one stack (encoder-only or "
                                    f"decoder-only); {spec.name} is encoder-decoder")


# -- symcalc's pieces ----------------------------------------------------------------------

def matmul(spec: Spec, causal: str = "full") -> Breakdown:
    """Forward matmul FLOPs by component (2 per multiply-accumulate), sizes symbolic."""
    return q.matmul_breakdown(spec, Options(causal=causal))


def _part(bd: Breakdown, path: str) -> sympy.Expr:
    return bd.value(path) if path in bd else sympy.Integer(0)


def attention_core(bd: Breakdown) -> sympy.Expr:
    """Scores Q.K^T and their weighted sum of V (the s^2 work) of every layer."""
    return flops.attention_core(bd)


def score_elements(spec: Spec) -> sympy.Expr:
    """Attention-score elements of every layer (n_h b s^2 each, full matrix), read off
    symcalc's softmax leaf, which costs softmax + scale FLOPs per element."""
    per_element = NONMATMUL_COSTS["softmax"] + NONMATMUL_COSTS["scale"]
    return q.nonmatmul_breakdown(spec, Options(causal="full")).value("layer/softmax") / per_element


def one_sequence(expr) -> sympy.Expr:
    return sympy.expand(sympy.sympify(expr).xreplace({b: 1}))


def per_token(expr) -> sympy.Expr:
    return sympy.expand(expr / (b * s))


def training(spec: Spec, recompute: str = "none") -> sympy.Expr:
    """symcalc's flops.training: 3 forward passes (4 with full recomputation, 3 plus the
    attention core with selective recomputation), full s^2."""
    return q.expression("flops.training", spec, Options(causal="full", recompute=recompute))


def selective_recompute_training(spec: Spec) -> sympy.Expr:
    """Model FLOPs plus one recomputed forward of the attention core: what selective
    recomputation (Korthikanti et al. 2022, Sec. 5) executes."""
    return training(spec, recompute="selective")


def layers_recompute_training(spec: Spec) -> sympy.Expr:
    """Full recomputation of the transformer layers only (Megatron checkpoints each layer's
    input; the logit layer is not recomputed): 3 passes + one forward of the layers."""
    bd = matmul(spec)
    return sympy.expand(3 * bd.total + bd.value("layer"))


def kaplan_n(spec: Optional[Spec] = None) -> sympy.Expr:
    """Kaplan et al.'s N = 2 d L (2 d_attn + d_ff) with d_attn = n_h d_h."""
    return 2 * d * L * (2 * n_h * d_h + d_ff)


def palm_n(spec: Spec) -> sympy.Expr:
    """The N users plug into 6N: every parameter but the learned position table
    (nanoGPT's ``get_num_params(non_embedding=True)``; PaLM has no position table)."""
    bd = accounting.params(spec)
    return sympy.expand(bd.total - _part(bd, "embedding/position"))


def _seed_mixed(spec: Spec) -> sympy.Expr:
    bd = matmul(spec)
    attention = _part(bd, "layer/attention")
    return one_sequence(attention / 2 + (bd.total - attention))


def _chinchilla_forward(spec: Spec) -> sympy.Expr:
    """Matmuls (full s^2), the token lookup as a one-hot matmul (2 s V d) and softmax at 3
    FLOPs per score element: Hoffmann et al.'s counting."""
    bd = matmul(spec)
    lookup = 2 * b * s * V * d if spec.token_embedding else 0
    return one_sequence(bd.total + lookup + 3 * score_elements(spec))


def _chinchilla_rows(spec: Spec) -> list:
    bd = matmul(spec)
    a = n_h * d_h
    lookup = 2 * b * s * V * d if spec.token_embedding else 0
    pairs = [
        ("embeddings", 2 * s * V * d, lookup),
        ("attention: key, query and value projections", L * 2 * 3 * s * d * a,
         _part(bd, "layer/attention/q") + _part(bd, "layer/attention/k")
         + _part(bd, "layer/attention/v")),
        ("attention: key @ query logits", L * 2 * s**2 * a, _part(bd, "layer/attention/scores")),
        ("attention: softmax", L * 3 * n_h * s**2, 3 * score_elements(spec)),
        ("attention: softmax @ query reductions", L * 2 * s**2 * a,
         _part(bd, "layer/attention/context")),
        ("attention: final linear", L * 2 * s * a * d, _part(bd, "layer/attention/o")),
        ("dense block", L * 2 * s * (2 * d * d_ff), _part(bd, "layer/ffn")),
        ("final logits", 2 * s * d * V, _part(bd, "head")),
    ]
    return [(label, pub, one_sequence(mine)) for label, pub, mine in pairs]


def _chinchilla_formula(spec: Spec) -> sympy.Expr:
    return sum((pub for _, pub, _ in _chinchilla_rows(spec)), sympy.Integer(0))


def _head_kept(spec: Spec) -> str:
    return "untied" if spec.head == "untied" else "tied"


# -- the forms -----------------------------------------------------------------------------

_KAPLAN_SHAPE = {**ASSUMPTIONS["kaplan"].structure, "family": "decoder"}
_SEED_PARAMS_SHAPE = {
    **DENSE, "attention_bias": "none", "attention_output": True, "ffn": "plain",
    "ffn_bias": False, "norm": "layernorm", "final_norm": False, "embedding_norm": False,
    "token_embedding": True, "position": "learned", "T": None, "head": "none",
    "head_bias": False}
_GPT2_SHAPE = {
    **MATMUL_SHAPE, "attention_bias": "all", "ffn_bias": True, "norm": "layernorm",
    "final_norm": False, "embedding_norm": False, "token_embedding": True,
    "position": "learned", "T": None, "head": "tied", "head_bias": False}
_MEGATRON_FLOPS_SHAPE = {**MATMUL_SHAPE, "head": _head_kept, "token_embedding": True}

FORMS: dict[str, Form] = {f.name: f for f in (
    Form(
        "seed-layer-mixed", "seed_layer_calculator",
        "layer calculator's forward FLOPs: L (4 s d^2 + 2 s^2 d + 4 s d d_ff) for one sequence",
        "FLOPs, forward, one sequence",
        ("n_h d_h = d", "n_kv = n_h (multi-head)", "plain FFN (two matrices)",
         "no output head, pooler or MLM head", "attention terms in multiply-accumulates, "
         "FFN terms in FLOPs (the calculator's mixed counting)", "full s^2 scores"),
        "attention subtree of forward_matmul with --macs, everything else without; batch 1",
        lambda spec: L * (4 * s * d**2 + 2 * s**2 * d + 4 * s * d * d_ff),
        _seed_mixed,
        structure={**MATMUL_SHAPE, "head": "none"}, relations={**HEAD_WIDTH, **MHA}),
    Form(
        "seed-layer-flops", "seed_layer_calculator",
        "the layer calculator's formula counted consistently in FLOPs: "
        "L (8 s d^2 + 4 s^2 d + 4 s d d_ff) for one sequence",
        "FLOPs, forward, one sequence",
        ("n_h d_h = d", "n_kv = n_h (multi-head)", "plain FFN (two matrices)",
         "no output head, pooler or MLM head", "full s^2 scores"),
        "flops.forward_matmul (--causal full), batch 1",
        lambda spec: L * (8 * s * d**2 + 4 * s**2 * d + 4 * s * d * d_ff),
        lambda spec: one_sequence(matmul(spec).total),
        structure={**MATMUL_SHAPE, "head": "none"}, relations={**HEAD_WIDTH, **MHA}),
    Form(
        "seed-layer-activations", "seed_layer_calculator",
        "layer calculator's activation memory: s d 4 bytes per layer (fp32 hidden states), "
        "L s d 4 for one sequence",
        "bytes, activations, one sequence",
        ("only each layer's input hidden state is kept (what full recomputation keeps)",
         "32-bit activations (4 bytes each)", "no attention scores, FFN inputs or dropout "
         "masks"),
        "memory.activations_bytes with --recompute full --dtype fp32, batch 1",
        lambda spec: L * s * d * 4,
        lambda spec: one_sequence(q.expression(
            "memory.activations_bytes", spec, Options(recompute="full", dtype="fp32"))),
        structure={**MATMUL_SHAPE, "head": "none"}, relations={**HEAD_WIDTH, **MHA}),
    Form(
        "seed-layer-params", "seed_layer_calculator",
        "layer calculator's parameters: L (4 d^2 + 2 d d_ff + 4 d) + V d + s d",
        "parameters",
        ("n_h d_h = d", "n_kv = n_h", "plain FFN", "no biases on the projections and the FFN",
         "two LayerNorms (weight and bias) per layer, none after the embeddings or the last "
         "layer", "token table V d and a learned position table of s rows (P = s)",
         "no token types, head, pooler or MLM head"),
        "params.total with P = s",
        lambda spec: L * (4 * d**2 + 2 * d * d_ff + 4 * d) + V * d + s * d,
        lambda spec: q.expression("params.total", spec),
        structure=_SEED_PARAMS_SHAPE, relations={**HEAD_WIDTH, **MHA, **POSITIONS_AS_SEQ}),
    Form(
        "kaplan-params", "kaplan2020",
        "Kaplan et al. non-embedding parameters N = 2 d L (2 d_attn + d_ff) "
        "(= 12 L d^2 with d_attn = d, d_ff = 4d)",
        "parameters (non-embedding)",
        ("n_kv = n_h (multi-head); d_attn = n_h d_h", "plain FFN", "no biases or norms",
         "embeddings, position table and head left out"),
        "params.non_embedding under --assume kaplan",
        kaplan_n,
        lambda spec: q.expression("params.non_embedding", spec),
        structure=_KAPLAN_SHAPE, relations=dict(MHA)),
    Form(
        "kaplan-forward", "kaplan2020",
        "Kaplan et al. forward FLOPs per token C_fwd = 2N + 2 L n_ctx d_attn",
        "FLOPs, forward, per token",
        ("as kaplan-params", "n_ctx = s", "causal attention: half of the s^2 scores and "
         "of the weighted sum (2 L n_ctx d_attn per token)", "de-embedding (2 d V) left out"),
        "flops.forward --causal half divided by b s",
        lambda spec: 2 * kaplan_n() + 2 * L * s * n_h * d_h,
        lambda spec: per_token(matmul(spec, "half").total),
        structure=_KAPLAN_SHAPE, relations=dict(MHA)),
    Form(
        "kaplan-training", "kaplan2020",
        "Kaplan et al. training FLOPs per token C = 6N",
        "FLOPs, training, per token",
        ("as kaplan-params", "backward = 2x forward", "attention-score work "
         "(2 L n_ctx d_attn per token forward) dropped: n_ctx << 12 d_model"),
        "3 x (flops.forward_matmul - attention scores and context) divided by b s",
        lambda spec: 6 * kaplan_n(),
        lambda spec: per_token(3 * (matmul(spec).total - attention_core(matmul(spec)))),
        structure=_KAPLAN_SHAPE, relations=dict(MHA)),
    Form(
        "chinchilla-forward", "hoffmann2022",
        "Hoffmann et al. Appendix F forward FLOPs for one sequence",
        "FLOPs, forward, one sequence",
        ("n_kv = n_h (multi-head)", "plain FFN", "output head over every position",
         "token lookup counted as a one-hot matmul (2 s V d)",
         "softmax 3 FLOPs per score element", "full s^2 scores"),
        "flops.forward_matmul + 2 s V d + 3 n_h s^2 per layer, batch 1",
        _chinchilla_formula,
        _chinchilla_forward,
        structure={**MATMUL_SHAPE, "token_embedding": True, "head": _head_kept},
        relations=dict(MHA), rows=_chinchilla_rows),
    Form(
        "chinchilla-training", "hoffmann2022",
        "Hoffmann et al. Appendix F training FLOPs for one sequence: forward + 2x forward",
        "FLOPs, training, one sequence",
        ("as chinchilla-forward", "backward = 2x forward"),
        "3 x chinchilla-forward's counting (flops.training with its counting)",
        lambda spec: 3 * _chinchilla_formula(spec),
        lambda spec: 3 * _chinchilla_forward(spec),
        structure={**MATMUL_SHAPE, "token_embedding": True, "head": _head_kept},
        relations=dict(MHA)),
    Form(
        "narayanan-params", "narayanan2021",
        "Narayanan et al. eq. 2: P = 12 L d^2 (1 + 13/(12 d) + (V + s)/(12 L d))",
        "parameters",
        ("GPT-2 layers: biases on Q, K, V, O and both FFN matrices, two LayerNorms",
         "n_h d_h = d, n_kv = n_h, d_ff = 4d", "tied head (V d counted once)",
         "learned position table of s rows (P = s)", "the final LayerNorm (2 d) left out"),
        "params.total with P = s and final_norm = false",
        lambda spec: 12 * L * d**2 * (1 + sympy.Rational(13, 12) / d + (V + s) / (12 * L * d)),
        lambda spec: q.expression("params.total", spec),
        structure=_GPT2_SHAPE, relations={**TEXTBOOK, **POSITIONS_AS_SEQ}),
    Form(
        "narayanan-flops", "narayanan2021",
        "Narayanan et al. eq. 3 with full recomputation: F = 96 B s L d^2 "
        "(1 + s/(6 d) + V/(16 L d)) per step",
        "FLOPs, training step (B = b sequences)",
        ("n_h d_h = d, n_kv = n_h, d_ff = 4d, plain FFN", "logit layer over V counted",
         "full s^2 scores", "backward = 2x forward; the transformer layers' forward is run "
         "once more (full recomputation), the logit layer's is not"),
        "3 x flops.forward_matmul + one more forward of the layers; symcalc's "
        "flops.training --recompute full recomputes the head too (2 b s d V more)",
        lambda spec: 96 * b * s * L * d**2 * (1 + s / (6 * d) + V / (16 * L * d)),
        layers_recompute_training,
        structure=_MEGATRON_FLOPS_SHAPE, relations=dict(TEXTBOOK)),
    Form(
        "korthikanti-model", "korthikanti2022",
        "Korthikanti et al. eq. 7 model FLOPs: 72 B s L d^2 (1 + s/(6 d) + V/(12 d L)) per step",
        "FLOPs, training step (B = b sequences)",
        ("n_h d_h = d, n_kv = n_h, d_ff = 4d, plain FFN", "logit layer over V counted",
         "full s^2 scores", "backward = 2x forward, no recomputation"),
        "flops.training (--recompute none, --causal full)",
        lambda spec: 72 * b * s * L * d**2 * (1 + s / (6 * d) + V / (12 * d * L)),
        training,
        structure=_MEGATRON_FLOPS_SHAPE, relations=dict(TEXTBOOK)),
    Form(
        "korthikanti-selective", "korthikanti2022",
        "Korthikanti et al. eq. 8 hardware FLOPs with selective recomputation: "
        "72 B s L d^2 (1 + s/(3 d) + V/(12 d L)) per step",
        "FLOPs, training step (B = b sequences)",
        ("as korthikanti-model", "the s^2 term doubled: the attention core counted at 6x "
         "its forward FLOPs instead of 3x. One recomputed forward of the core (4 B s^2 d per "
         "layer) gives 1 + 2s/(9d) instead, 8 B s^2 L d less"),
        "flops.training + 3 x (attention scores and context); "
        "selective_recompute_training() is the one-extra-forward count",
        lambda spec: 72 * b * s * L * d**2 * (1 + s / (3 * d) + V / (12 * d * L)),
        lambda spec: training(spec) + 3 * attention_core(matmul(spec)),
        structure=_MEGATRON_FLOPS_SHAPE, relations=dict(TEXTBOOK)),
    Form(
        "megatron-mfu", "megatron_flops",
        "Megatron-LM's num_floating_point_operations, the numerator of its throughput and of "
        "symcalc's MFU: 12 B s L d^2 ((1 + n_kv/n_h + s/(2d)) n_h d_h/d + g d_ff/d "
        "+ V/(2 L d)) per step, g = 3/2 for a gated FFN",
        "FLOPs, training step (B = b sequences)",
        ("dense decoder: attention, FFN (gated or plain), head over V; no biases, norms or "
         "position tables counted", "the causal half of the score matrix",
         "backward = 2x forward, no recomputation", "V padded to a multiple of 128 t "
         "(Megatron's padded_vocab_size; the models named here need no padding at t = 1)"),
        "flops.training --causal half --recompute none",
        lambda spec: 12 * b * s * L * d**2 * (
            (1 + n_kv / n_h + s / (2 * d)) * n_h * d_h / d
            + (sympy.Rational(3, 2) if spec.ffn == "gated" else 1) * d_ff / d
            + V / (2 * L * d)),
        lambda spec: q.expression("flops.training", spec, Options(causal="half")),
        structure={**DENSE, "family": "decoder", "attention_bias": "none", "ffn_bias": False,
                   "head_bias": False, "head": _head_kept, "token_embedding": True,
                   "T": None, "attention_output": True}),
    Form(
        "palm", "chowdhery2022",
        "PaLM / nanoGPT MFU: 6N + 12 L n_h d_h s training FLOPs per token, N = parameters "
        "except a learned position table",
        "FLOPs, training, per token",
        ("every parameter in N multiplies once per token: no biases or norms, a tied head "
         "(or no token table), dense FFN", "full s^2 scores", "backward = 2x forward"),
        "flops.training (--causal full) divided by b s",
        lambda spec: 6 * palm_n(spec) + 12 * L * n_h * d_h * s,
        lambda spec: per_token(training(spec)),
        structure={**DENSE, "attention_bias": "none", "ffn_bias": False, "norm": "none",
                   "T": None, "head_bias": False,
                   "head": lambda spec: "tied" if spec.token_embedding else "none"}),
)}


def form(name: str) -> Form:
    if name not in FORMS:
        raise SymcalcError("form", f"must be one of {', '.join(FORMS)} (got {name!r})")
    return FORMS[name]


def generic_spec() -> Spec:
    """A decoder whose sizes are irrelevant: derivations keep every size symbolic."""
    return make_spec(name="generic", family="decoder", L=1, d=1, n_h=1, d_ff=1, V=1, P=1,
                     position="learned")


def derive(name: str, spec: Optional[Spec] = None) -> Proof:
    """Apply form ``name``'s assumptions to ``spec`` (default: a generic decoder), build
    symcalc's expression from the components and subtract the published formula, both under
    the form's size relations. ``Proof.holds`` when the residual (and every row's) is 0."""
    f = form(name)
    shaped = f.shaped(spec or generic_spec())
    mine, pub = f.relate(f.symcalc(shaped)), f.relate(f.published(shaped))
    rows = tuple((label, f.relate(p), f.relate(m), f.relate(m - p))
                 for label, p, m in (f.rows(shaped) if f.rows else ()))
    return Proof(name, shaped.name, mine, pub, sympy.expand(mine - pub), rows)


def difference(name: str, spec: Spec, opts: Optional[Options] = None) -> sympy.Expr:
    """symcalc's exact quantity for ``spec`` minus form ``name``, in canonical symbols."""
    return form(name).difference(spec, opts)


def model_relations(spec: Spec) -> dict:
    """The textbook relations that ``spec``'s sizes happen to satisfy (n_h d_h = d,
    n_kv = n_h, d_ff = 4d), to read a difference in the model's own terms."""
    out = {}
    if spec.n_h * spec.d_h == spec.d:
        out[d_h] = d / n_h
    if spec.n_kv == spec.n_h:
        out[n_kv] = n_h
    if spec.d_ff == 4 * spec.d:
        out[d_ff] = 4 * d
    return out


def reduced_difference(name: str, spec: Spec) -> sympy.Expr:
    """:func:`difference` with the relations the model satisfies substituted."""
    return sympy.factor_terms(sympy.expand(difference(name, spec).xreplace(model_relations(spec))))

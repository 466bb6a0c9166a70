"""A parallel layout: how many ranks split each dimension, and the named conventions that say
how. No sympy here (the quick path will read it); the expressions are in
:mod:`symcalc.algebra.parallel` (memory) and :mod:`symcalc.algebra.communication`.

Dimensions (each a symbol of :mod:`symcalc.algebra.symbols`):

* ``tp`` (t): tensor parallelism, the projections of each layer split over t ranks;
* ``pp`` (p), ``vpp`` (v), ``microbatches`` (m): pipeline parallelism, the layers split over p
  stages, each rank holding v model chunks (v > 1 is the interleaved schedule, else 1F1B), m
  microbatches per step;
* ``ep`` (e), ``etp`` (t_e): expert parallelism, the routed experts spread over e ranks, each
  expert's matrices split over t_e ranks (None: t);
* ``cp`` (c): context parallelism, the sequence split over c ranks;
* ``dp`` (N_d), ``zero``: data parallelism over N_d replicas and the ZeRO stage (0-3; FSDP is
  stage 3), ``distributed_optimizer``: Megatron-LM's (the optimizer state sharded over the
  data-parallel ranks, as ZeRO-1);
* ``sequence_parallel``: what tensor parallelism leaves whole split along the sequence.

Conventions (named, each in docs/conventions.md with its source):

* ``tp_plan``: ``hf`` (the family's ``base_model_tp_plan`` as PyTorch's ``parallelize_module``
  applies it) or ``megatron`` (Megatron-LM's layer, vocabulary padded to a multiple of 128 t);
* ``cp_algorithm``: ``ring`` (Ring Attention, Megatron-LM's context parallelism) or ``ulysses``
  (DeepSpeed-Ulysses all-to-alls);
* ``state_accounting``: the bytes of weights, gradients and optimizer state per parameter
  and what ZeRO shards: ``paper`` (Rajbhandari et al. 2020, Sec. 5: the --optimizer's
  bytes), ``megatron`` (Megatron-LM's 2 + 4 + 12 = 18 bytes, fp32 main gradients) or
  ``deepspeed`` (what DeepSpeed's ``estimate_zero2/3_model_states_mem_needs`` count).
"""
from __future__ import annotations

import os
from functools import lru_cache

from .. import records
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Optional

from ..errors import SymcalcError

TP_PLANS = ("hf", "megatron")
CP_ALGORITHMS = ("ring", "ulysses")
STATE_ACCOUNTING = ("paper", "megatron", "deepspeed")
# tensor-parallel styles of transformers' base_model_tp_plan (and Megatron-LM's output layer)
# that symcalc knows: symcalc.algebra.tp_plans.STYLES says what each does
TP_STYLES = ("colwise", "colwise_gather_output", "rowwise", "rowwise_split_input",
             "packed_colwise", "packed_rowwise", "embedding_rowwise",
             "replicated_with_grad_allreduce", "mla_kv_a_proj", "moe_tp_experts", "vocab_colwise",
             "local_params", "moe_identity_expert", "all_reduce", "replicate")
DEGREES = ("tp", "pp", "vpp", "microbatches", "ep", "etp", "cp", "dp")
# layout field -> symbol name
SYMBOLS = {"tp": "t", "pp": "p", "vpp": "v", "microbatches": "m", "ep": "e", "etp": "t_e",
           "cp": "c", "dp": "N_d"}


# Per-rank quantities of a layout (the term table evaluates each on one stage; the report's
# per_rank block is the most-loaded stage's, peak_bytes = states_bytes + activations_bytes)
PER_RANK = {
    "per_rank.params": "parameters the rank holds",
    "per_rank.weights_bytes": "its weights at --dtype (ZeRO-3 shards them)",
    "per_rank.gradients_bytes": "its gradients (ZeRO-2 and 3 shard them)",
    "per_rank.optimizer_bytes": "its optimizer state (ZeRO-1, 2, 3 shard it)",
    "per_rank.states_bytes": "its weights at the optimizer's bytes, gradients and optimizer "
                             "state",
    "per_rank.activations_bytes": "activations it keeps for backward: its layers, tokens, "
                                  "heads and the microbatches in flight",
    "per_rank.kv_cache_bytes": "its KV cache at --kv-dtype",
}
DIMENSIONS = ("tp", "pp", "dp", "ep", "cp")
for _dim in DIMENSIONS:
    PER_RANK.update({
        f"communication.{_dim}.forward_bytes": f"{_dim}: payload bytes of one microbatch's forward",
        f"communication.{_dim}.step_bytes": f"{_dim}: payload bytes of one training step",
        f"communication.{_dim}.step_wire_bytes": f"{_dim}: bytes the rank sends in one step (ring "
                                                 "algorithms)",
        f"communication.{_dim}.decode_bytes_per_token": f"{_dim}: payload bytes of one decoded "
                                                        "token",
        f"communication.{_dim}.forward_wire_bytes": f"{_dim}: bytes the rank sends in one "
                                                    "microbatch's forward (ring algorithms)",
        f"communication.{_dim}.decode_wire_bytes_per_token": f"{_dim}: bytes the rank sends for "
                                                             "one decoded token (ring algorithms)",
    })
PER_RANK.update({
    "communication.tp.forward_allreduce_count": "all-reduces of one microbatch's forward",
    "communication.tp.forward_allreduce_bytes": "their payload bytes",
})
# what the report's per_rank block adds to the table's quantities
PER_RANK_DERIVED = {
    "per_rank.peak_bytes": "training peak of the most-loaded rank: states_bytes + "
                           "activations_bytes, each rounded up",
    "per_rank.serving_peak_bytes": "weights_bytes + kv_cache_bytes + recurrent state",
}


class Layout(records.Record):
    tp: int = 1
    pp: int = 1
    vpp: int = 1
    microbatches: int = 1
    ep: int = 1
    etp: Optional[int] = None  # None: the experts split over tp like the rest of the layer
    cp: int = 1
    dp: int = 1
    zero: int = 0
    distributed_optimizer: bool = False
    sequence_parallel: bool = False
    tp_plan: str = "hf"
    cp_algorithm: str = "ring"
    state_accounting: str = "paper"

    @property
    def schedule(self) -> str:
        """``interleaved`` (Narayanan et al. 2021, Sec. 2.2.2) with more than one model chunk
        per rank, else ``1f1b`` (PipeDream-Flush)."""
        return "interleaved" if self.vpp > 1 else "1f1b"

    @property
    def expert_tp(self) -> int:
        return self.tp if self.etp is None else self.etp

    @property
    def trivial(self) -> bool:
        """One rank holds everything (data parallelism aside, which copies the model)."""
        return (self.tp, self.pp, self.ep, self.cp) == (1, 1, 1, 1)

    def values(self) -> dict[str, int]:
        """The layout's symbols by name: t, p, v, m, e, t_e, c, N_d."""
        out = {SYMBOLS[f]: getattr(self, f) for f in DEGREES if f != "etp"}
        out["t_e"] = self.expert_tp
        return out

    def checked(self) -> "Layout":
        for name in DEGREES:
            value = getattr(self, name)
            if name == "etp" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise SymcalcError(name, f"must be a positive integer (got {value!r:.60})")
            if value > 10**6:
                raise SymcalcError(name, f"must be at most 1000000 (got {value})")
        for name, allowed in (("tp_plan", TP_PLANS), ("cp_algorithm", CP_ALGORITHMS),
                              ("state_accounting", STATE_ACCOUNTING)):
            if getattr(self, name) not in allowed:
                raise SymcalcError(name.replace("_", "-"), f"must be one of {', '.join(allowed)} "
                                                           f"(got {getattr(self, name)!r:.40})")
        from .option_rules import LABEL, option_rules
        from .rules import run

        # options.toml's refusals (the interleaved schedule needs pp > 1, ...)
        run(option_rules()["steps"], {f: getattr(self, f) for f in self.__match_args__}, {},
            LABEL)
        return self

    def with_(self, **changes) -> "Layout":
        return records.replace(self, **changes)


LAYOUT_RULES_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layout.toml")
LAYOUT_RULES_LABEL = "symcalc/algebra/layout.toml"


def compile_layout_rules(raw: bytes) -> list:
    """The steps of layout.toml's bytes (:func:`symcalc.algebra.rules.compile_rules`): what
    the compiled store holds (``symcalc.inputs.compile_data``)."""
    from .. import compiled
    from .rules import compile_rules

    return compile_rules(compiled.read_toml_bytes(raw, LAYOUT_RULES_LABEL),
                         LAYOUT_RULES_LABEL, ())["steps"]


@lru_cache(maxsize=None)
def layout_rules() -> list:
    """layout.toml's rules compiled, read once per process (from the compiled store while
    the file is unchanged); the calculator page runs the same steps (page/core.js,
    checkSpec)."""
    from .. import compiled

    return compiled.load(compiled.ALGEBRA_STORE, "layout", LAYOUT_RULES_PATH,
                         compile_layout_rules)


def check_spec(spec, layout: Layout, seq_len: Optional[int] = None,
               dec_seq_len: Optional[int] = None) -> None:
    """Refuse what a layout cannot do with the spec (``symcalc.algebra.spec.Spec``), naming
    the field: the rules of symcalc/algebra/layout.toml (expert parallelism needs experts, e
    at most E; p at most L; stacks whose layer order is not in the spec cannot be cut into
    stages; the interleaved schedule needs p v to divide L and a stack whose layers are
    alike; context parallelism splits the sequence into c equal parts; Megatron-LM needs t to
    divide the heads and the widths it splits, and p v the layers, and models attention/FFN/MoE
    decoder stacks only). No sympy here."""
    from .rules import run
    from .spec import FIELD_NAMES

    values = {f: getattr(spec, f) for f in FIELD_NAMES}
    values.update(tp=layout.tp, pp=layout.pp, vpp=layout.vpp, ep=layout.ep, etp=layout.etp,
                  cp=layout.cp, tp_plan=layout.tp_plan, seq_len=seq_len,
                  dec_seq_len=dec_seq_len, hybrid=spec.hybrid)
    run(layout_rules(), values, {}, LAYOUT_RULES_LABEL)


def forward_problems(spec, layout: Layout, attention_split: bool) -> list[str]:
    """Why the layout's tensor-parallel forward cannot run (empty when it can): a split
    attention needs t to divide the query and the key/value heads, and q/k norms over all
    heads (Cohere's n_h d_h-wide norms) need every head on each rank. The per-rank
    parameters stand either way (rank 0 holds ceil(n/t) rows)."""
    if layout.tp == 1 or not attention_split:
        return []
    out = []
    n_kv = spec.n_kv or spec.n_h
    if spec.n_h % layout.tp or (n_kv % layout.tp and not spec.mla):
        out.append(f"t must divide the query and the key/value heads (n_h={spec.n_h}, "
                   f"n_kv={n_kv}, t={layout.tp})")
    if spec.n_kvg is not None and spec.n_kvg % layout.tp:
        out.append(f"t must divide the global layers' key/value heads (n_kvg={spec.n_kvg}, "
                   f"t={layout.tp})")
    if spec.qk_norm == "all_heads":
        out.append("q/k norms over all heads need every head on each rank")
    return out

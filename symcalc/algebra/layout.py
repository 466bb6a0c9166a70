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

from dataclasses import dataclass, replace
from typing import Optional

from ..errors import SymcalcError

TP_PLANS = ("hf", "megatron")
CP_ALGORITHMS = ("ring", "ulysses")
STATE_ACCOUNTING = ("paper", "megatron", "deepspeed")
# tensor-parallel styles of transformers' base_model_tp_plan (and Megatron-LM's output layer)
# that symcalc knows: symcalc.algebra.tp_plans.STYLES says what each does
TP_STYLES = ("colwise", "colwise_gather_output", "rowwise", "rowwise_split_input",
             "packed_colwise", "packed_rowwise", "embedding_rowwise",
             "replicated_with_grad_allreduce", "mla_kv_a_proj", "moe_tp_experts", "vocab_colwise")
DEGREES = ("tp", "pp", "vpp", "microbatches", "ep", "etp", "cp", "dp")
# layout field -> symbol name
SYMBOLS = {"tp": "t", "pp": "p", "vpp": "v", "microbatches": "m", "ep": "e", "etp": "t_e",
           "cp": "c", "dp": "N_d"}


@dataclass(frozen=True)
class Layout:
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
        if self.zero not in (0, 1, 2, 3):
            raise SymcalcError("zero", f"stage must be 0, 1, 2 or 3 (got {self.zero!r:.20})")
        for name, allowed in (("tp_plan", TP_PLANS), ("cp_algorithm", CP_ALGORITHMS),
                              ("state_accounting", STATE_ACCOUNTING)):
            if getattr(self, name) not in allowed:
                raise SymcalcError(name.replace("_", "-"), f"must be one of {', '.join(allowed)} "
                                                           f"(got {getattr(self, name)!r:.40})")
        if self.vpp > 1 and self.pp == 1:
            raise SymcalcError("vpp", "the interleaved schedule needs more than one pipeline "
                                      f"stage (pp=1, vpp={self.vpp})")
        if self.distributed_optimizer and self.zero:
            raise SymcalcError("zero", "Megatron's distributed optimizer already shards the "
                                       "optimizer state: use one or the other")
        if self.state_accounting == "deepspeed" and self.zero not in (2, 3):
            raise SymcalcError("state-accounting", "DeepSpeed's estimates exist for ZeRO "
                                                   f"stages 2 and 3 (got stage {self.zero})")
        return self

    def with_(self, **changes) -> "Layout":
        return replace(self, **changes)

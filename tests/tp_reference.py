"""Tensor parallelism as PyTorch runs it, on one CPU process: the reference the per-rank
figures of symcalc.algebra.parallel (``--tp-plan hf``) are checked against.

Plain helper module for tests/test_parallel_reference.py (no test functions; imports torch, so
only reference tests use it).

How a plan is applied (one process plays rank 0 of t):

* ``torch.distributed.init_process_group("fake", store=FakeStore(), rank=0, world_size=t)``
  (``torch.testing._internal.distributed.fake_pg``: collectives return at once, shapes are
  real) and ``init_device_mesh("cpu", (t,))``;
* the entries of the base model's plan (the config's ``base_model_tp_plan`` after the
  ``embed_tokens`` entry transformers' ``init_parallel_plans`` adds) that name a module
  PyTorch has a style for go through ``torch.distributed.tensor.parallel.parallelize_module`` on the base model
  (``model.<base_model_prefix>``): ``colwise`` -> ``ColwiseParallel()``, ``rowwise`` ->
  ``RowwiseParallel()``, and the PyTorch equivalents of transformers' other module styles:
  ``colwise_gather_output`` -> ``ColwiseParallel(output_layouts=Replicate())`` (an all-gather
  of the output), ``rowwise_split_input`` -> ``RowwiseParallel(input_layouts=Replicate())``,
  ``embedding_rowwise`` -> ``RowwiseParallel(input_layouts=Replicate())`` on the embedding
  (vocabulary rows split, the partial lookups all-reduced);
* what PyTorch has no style for goes through transformers' own style objects
  (``transformers.distributed.tensor_parallel.ALL_PARALLEL_STYLES``): an entry that names a
  parameter (the routed experts' 3-D ``gate_up_proj`` / ``down_proj``: ``packed_colwise``,
  ``rowwise``, ``colwise``, ``packed_rowwise``) is sharded by the style's ``shard_param``, and
  ``moe_tp_experts`` installs its forward (the experts' partial outputs all-reduced);
  ``replicated_with_grad_allreduce`` and ``mla_kv_a_proj`` change only the backward and
  leave the parameters whole, so they are not applied;
* the class's own entries (``lm_head``: ``colwise_gather_output``) go the same way on the
  whole model;
* styles are built with ``src_data_rank = None``: the shards are cut locally, no scatter;
* a tied head is tied again to the (now sharded) token table afterwards (``tie_weights()``,
  as transformers does once a tensor-parallel model is loaded): sharding replaced the
  table's parameter, and the head would otherwise keep the whole old one.

What is read: the local size of every parameter (``DTensor.to_local()``; tied weights once),
and, around one forward on CPU, every collective ``CommDebugMode`` sees with the bytes of its
tensor (:class:`PayloadMode`, a ``CommDebugMode`` that also records its argument's size).
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                               parallelize_module)
from torch.testing._internal.distributed.fake_pg import FakeStore

# transformers' module styles -> a PyTorch style (module entries only)
def torch_style(name: str):
    style = {
        "colwise": lambda: ColwiseParallel(),
        "rowwise": lambda: RowwiseParallel(),
        "colwise_gather_output": lambda: ColwiseParallel(output_layouts=Replicate()),
        "rowwise_split_input": lambda: RowwiseParallel(input_layouts=Replicate()),
        "embedding_rowwise": lambda: RowwiseParallel(input_layouts=Replicate()),
    }.get(name)
    if style is None:
        return None
    out = style()
    out.src_data_rank = None
    return out


BACKWARD_ONLY = ("replicated_with_grad_allreduce", "mla_kv_a_proj")


@contextmanager
def fake_world(t: int):
    """A fake process group of t ranks (this process is rank 0) and its 1-D CPU mesh."""
    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=t)
    try:
        yield init_device_mesh("cpu", (t,))
    finally:
        dist.destroy_process_group()


def _matches(pattern: str, names) -> list[str]:
    rx = re.compile("^" + re.escape(pattern).replace(r"\*", r"\d+") + "$")
    return [n for n in names if rx.match(n)]


def base_model(model, plan: dict[str, str]):
    """The module the plan's names are relative to: the first of ``model.base_model``,
    ``model.model``, ``model.transformer`` and the model itself where a plan entry names a
    module or a parameter (Llama 4's base_model_prefix names no attribute)."""
    for root in (model.base_model, getattr(model, "model", None),
                 getattr(model, "transformer", None), model):
        if root is None:
            continue
        names = [n for n, _ in root.named_modules()] + [n for n, _ in root.named_parameters()]
        if any(_matches(key, names) for key in plan):
            return root
    return model


def apply_plan(model, plan: dict[str, str], mesh, class_plan: dict[str, str] | None = None
               ) -> dict[str, str]:
    """Apply ``plan`` (the base model's plan: the config's base_model_tp_plan after the
    embed_tokens entry transformers adds) to the model's base model as the module docstring
    says, and ``class_plan`` (the class's own ``_tp_plan``: ``lm_head``) to the model itself;
    returns module or parameter name -> how it was applied."""
    done = _apply(model, base_model(model, plan), plan, mesh)
    if class_plan:
        done.update(_apply(model, model, class_plan, mesh))
    # sharding replaced the table's parameter: a tied head is tied to the new one again, as
    # transformers ties its weights after loading a tensor-parallel model
    if getattr(model.config.get_text_config(), "tie_word_embeddings", False):
        model.tie_weights()
    return done


def _apply(model, root, plan: dict[str, str], mesh) -> dict[str, str]:
    from transformers.distributed.tensor_parallel import ALL_PARALLEL_STYLES

    modules = dict(root.named_modules())
    params = dict(root.named_parameters(remove_duplicate=False))
    done: dict[str, str] = {}
    for key, style in plan.items():
        hit_params = _matches(key, params)
        for name in hit_params:
            owner, _, pname = name.rpartition(".")
            ALL_PARALLEL_STYLES[style].shard_param(modules[owner], pname, mesh)
            done[name] = f"transformers {style} (parameter)"
        if hit_params:
            continue
        hit = _matches(key, modules)
        if style in BACKWARD_ONLY or not hit:
            continue
        ours = torch_style(style)
        if ours is not None:
            # a module whose children hold parameters of their own (Inkling's normed embedding:
            # embed_norm): torch's style would distribute them too, under dotted names it cannot
            # register; transformers shards the module's own weight and leaves them whole
            kids = [(modules[n], cn, c) for n in hit for cn, c in modules[n].named_children()
                    if any(True for _ in c.parameters())]
            for owner, cn, _ in kids:
                delattr(owner, cn)
            parallelize_module(root, mesh, {key: ours})
            for owner, cn, c in kids:
                setattr(owner, cn, c)
            for name in hit:
                done[name] = f"torch {type(ours).__name__}"
        else:
            for name in hit:
                ALL_PARALLEL_STYLES[style].install_forward(modules[name], mesh)
                done[name] = f"transformers {style}"
    return done


def local_params(model) -> int:
    """Parameters rank 0 holds: the local shard of each DTensor, the whole of the rest (a
    tied weight once)."""
    total = 0
    for p in model.parameters():
        total += (p.to_local() if isinstance(p, DTensor) else p).numel()
    return total


class PayloadMode(CommDebugMode):
    """CommDebugMode that also records, for each collective, its name and the bytes of the
    tensor it was called with (the local tensor: an all-gather's shard, an all-reduce's
    whole)."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, int]] = []
        # CommDebugMode's module tracker pops one parent too many when a module runs inside
        # another's hooks (Gemma 3's shared rotary module, transformers' expert hooks) and
        # raises IndexError; only the totals are read here, so it may skip that pop
        tracker = self.advanced_module_tracker
        pop = tracker._fw_set_module_hook

        def tolerant(mod, inputs, output):
            if len(tracker.parent_list) > 1:
                pop(mod, inputs, output)

        tracker._fw_set_module_hook = tolerant

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if out is NotImplemented or isinstance(func, torch._ops.HigherOrderOperator):
            return out
        packet = func._overloadpacket
        name = str(packet)
        if any(k in name for k in ("all_reduce", "allreduce", "all_gather", "allgather",
                                   "reduce_scatter", "all_to_all", "alltoall")):
            tensor = args[0]
            if isinstance(tensor, (list, tuple)):
                tensor = tensor[0]
            self.calls.append((name, tensor.numel() * tensor.element_size()))
        return out


def forward_collectives(model, plan: dict[str, str], inputs: dict[str, Any],
                        whole: bool = False) -> list[tuple[str, int]]:
    """(collective, bytes of its tensor) of one forward pass of the base model the plan
    applies to, or with ``whole`` of the whole model (its head: the class's entries)."""
    root = model if whole else base_model(model, plan)
    with torch.no_grad(), PayloadMode() as mode:
        root(**inputs)
    return mode.calls

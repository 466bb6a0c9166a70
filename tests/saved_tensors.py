"""What one training-mode forward pass of a transformers model keeps for backward, measured.

Plain helper module for the activation tests (no test functions here). A forward pass runs
under ``torch.autograd.graph.saved_tensors_hooks``: every tensor autograd saves for the backward
pass goes through the pack hook, which keeps a reference to it (so no storage is freed and
reused while we count) and records its storage. Then:

* each storage is counted once, by the identity of its ``untyped_storage()`` (its data pointer:
  a view, a transpose or the same tensor saved by two nodes is one storage), at its full
  ``nbytes()`` -- what actually stays allocated;
* storages of parameters (and buffers) are left out: they are the weights, not activations;
* the per-layer bytes are the difference between two models that differ only in their number
  of layers (everything outside the layers -- embeddings, final norm, head, logits, masks,
  rotary tables -- cancels).

Models are built on CPU with small random weights at fp32 or bf16 (``dtype``), eager attention
unless ``attn_implementation`` says otherwise, ``model.train()`` (dropout active where the
config has a nonzero probability), and every parameter requiring grad.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import torch
import transformers

import hf_reference

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass
class Saved:
    """The storages one forward pass saved (parameters and buffers excluded)."""

    storages: dict[int, int] = field(default_factory=dict)  # data_ptr -> nbytes
    records: list[tuple[str, tuple, int]] = field(default_factory=list)  # (dtype, shape, nbytes), first sight

    @property
    def total(self) -> int:
        return sum(self.storages.values())


def count_saved(model, inputs: dict[str, Any]) -> Saved:
    """Run ``model(**inputs)`` with grad enabled and count the storages autograd saves."""
    excluded = {p.untyped_storage().data_ptr() for p in model.parameters()}
    excluded |= {b.untyped_storage().data_ptr() for b in model.buffers()}
    out = Saved()
    kept: list[torch.Tensor] = []

    def pack(t: torch.Tensor):
        kept.append(t)
        if t.device.type == "meta" or t.numel() == 0 and t.untyped_storage().nbytes() == 0:
            return t
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr in excluded or ptr in out.storages:
            return t
        out.storages[ptr] = storage.nbytes()
        out.records.append((str(t.dtype).replace("torch.", ""), tuple(t.shape), storage.nbytes()))
        return t

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = model(**inputs)
    del result
    kept.clear()
    return out


LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers")


def build(config: dict, dtype: str = "fp32", attn_implementation: str = "eager",
          experts_implementation: str | None = None, seed: int = 0):
    """The model named by ``config`` on CPU, training mode, small random weights at ``dtype``.
    ``experts_implementation`` None keeps transformers' default for MoE experts."""
    cls = getattr(transformers, hf_reference.model_class_name(config))
    cfg = hf_reference.hf_config(config, experts_implementation)
    cfg._attn_implementation = attn_implementation
    torch.manual_seed(seed)
    model = cls(cfg).to(DTYPES[dtype])
    model.train()
    model.requires_grad_(True)
    return model


def saved_bytes(config: dict, batch: int, seq_len: int, dtype: str = "fp32",
                attn_implementation: str = "eager", experts_implementation: str | None = None,
                mask: bool = False, use_cache: bool = False) -> Saved:
    """Storages saved by one training-mode forward pass of the model ``config`` describes
    (``use_cache``: with a KV cache, as transformers' default training forward builds one)."""
    model = build(config, dtype, attn_implementation, experts_implementation)
    inputs = hf_reference.forward_inputs(model, batch, seq_len, "cpu", mask=mask,
                                         use_cache=use_cache)
    torch.manual_seed(1)
    return count_saved(model, inputs)


def with_layers(config: dict, keys: dict[str, int]) -> dict:
    cfg = copy.deepcopy(config)
    cfg.update(keys)
    return cfg


def per_layer_bytes(config: dict, batch: int, seq_len: int, dtype: str = "fp32",
                    layer_key: str = "num_hidden_layers", few: int = 1, many: int = 2,
                    extra: dict[str, int] | None = None, **kwargs) -> int:
    """Bytes one more layer saves: the difference between ``many`` and ``few`` layers (keys
    ``layer_key``, plus any ``extra`` keys set to the same counts, e.g. T5's decoder layers
    set apart), divided by ``many - few``; refuses a difference that does not divide."""
    def run(n: int) -> int:
        keys = {layer_key: n, **{k: v for k, v in (extra or {}).items()}}
        return saved_bytes(with_layers(config, keys), batch, seq_len, dtype, **kwargs).total

    diff = run(many) - run(few)
    per, rest = divmod(diff, many - few)
    if rest:
        raise AssertionError(f"{diff} bytes over {many - few} layers is not a whole number per layer")
    return per


def describe(config: dict, batch: int, seq_len: int, dtype: str = "fp32", **kwargs) -> list:
    """Every saved storage of one pass, first sight order: (dtype, shape, nbytes). For
    working out what a layer keeps."""
    return saved_bytes(config, batch, seq_len, dtype, **kwargs).records

"""Serving capacity as vLLM (v1) computes it: the memory left for the KV cache, the blocks it
makes, and how many requests of a context length fit at once. Each rule is written once and
evaluated with exact rationals on the quick path or sympy symbols in derivations
(:mod:`symcalc.algebra.exact`); no sympy here. Sources, in vLLM's code:

* ``vllm_worker`` -- the budget: memory x gpu_memory_utilization, less the weights and the
  peak activations of a profile run over max_num_batched_tokens tokens (vLLM measures that
  peak; symcalc estimates it, or takes yours);
* ``vllm_kv_cache_interface`` -- a page is block_size tokens of one layer: keys and values,
  2 n_kv d_h values per token (MLA: one latent, r_kv + d_rope); a request needs
  cdiv(max_model_len, block_size) pages of a full-attention layer, cdiv(min(W - 1 +
  max_num_batched_tokens, max_model_len), block_size) + 1 of a sliding-window one, one page
  of a recurrent (Mamba, linear-attention, short-convolution) layer;
* ``vllm_hybrid_block`` -- with recurrent layers the attention block grows to the smallest
  multiple of the block size whose page holds one layer's state, and the state's page is
  padded to it;
* ``vllm_kv_cache_utils`` -- layers of each kind are split into groups of G layers (G the
  smallest kind's count, or the largest's when that is under 1.5 times the smallest); the
  cache is G pools of pages, so blocks = budget // page // G; a request takes, per group,
  the pages its kind needs; max concurrency = blocks / pages per request.

Kinds of layer: ``full`` (attention over every token), ``sliding`` (a window W), ``recurrent``
(a fixed state per sequence). Layers that read another layer's cache (Gemma 3n) keep none.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from . import exact as X

KINDS = ("full", "sliding", "recurrent")


def kv_budget(memory: Any, utilization: Any, weights: Any, activation_peak: Any) -> Any:
    """Bytes vLLM leaves for the KV cache on one device (may be negative: nothing fits)."""
    return X.q(memory) * X.q(utilization) - X.q(weights) - X.q(activation_peak)


def attention_block(block_size: Any, state_page: Any, token_page: Any) -> Any:
    """Tokens per attention block: the block size, or with recurrent layers the smallest
    multiple of it whose page (tokens x ``token_page`` bytes) holds ``state_page`` bytes."""
    if not state_page:
        return X.q(block_size)
    return X.maximum(block_size, block_size * X.ceil(X.q(state_page) / (block_size * token_page)))


def group_size(counts: list[int]) -> int:
    """Layers per KV-cache group: the smallest kind's layer count, or the largest's when it
    is under 1.5 times the smallest (vLLM's _get_kv_cache_groups_uniform_page_size); one
    kind: all its layers."""
    counts = [n for n in counts if n]
    if not counts:
        return 0
    lo, hi = min(counts), max(counts)
    return hi if 2 * hi < 3 * lo else lo


def groups(count: int, size: int) -> int:
    """Groups of ``size`` layers one kind of ``count`` layers fills (the last one padded)."""
    return -(-count // size) if count else 0


def blocks(budget: Any, page: Any, size: Any) -> Any:
    """Blocks of the cache: the budget over G pools of pages (none when negative)."""
    return X.maximum(0, X.floor(X.q(budget) / (X.q(page) * size)))


def request_pages(kind: str, context: Any, block: Any, window: Any = None,
                  batched_tokens: Any = None) -> Any:
    """Pages one request of ``context`` tokens needs in one layer of a kind."""
    if kind == "full":
        return X.ceil(X.q(context) / block)
    if kind == "sliding":
        return X.ceil(X.minimum(X.q(window) - 1 + batched_tokens, context) / X.q(block)) + 1
    if kind == "recurrent":
        return 1
    raise ValueError(kind)


def max_sequences(blocks_: Any, per_request: Any) -> Any:
    """Requests that fit at once: vLLM's max concurrency blocks / per_request, rounded
    down to whole requests."""
    return X.floor(X.q(blocks_) / per_request)


@dataclass(frozen=True)
class Layers:
    """Layers of each kind one device holds, and their bytes: per cached token of one
    attention layer (``token_bytes``) and per sequence of one recurrent layer
    (``state_bytes``, the largest kind's)."""

    full: int
    sliding: int
    recurrent: int
    token_bytes: Any
    state_bytes: Any
    window: Optional[int] = None


@dataclass(frozen=True)
class Capacity:
    budget: Any
    block: Any  # tokens per block
    page: Any  # bytes of one layer's page
    group: int  # layers per group
    groups: dict  # kind -> groups
    blocks: Any
    per_request: Any  # pages one request takes (over every group)
    max_sequences: Any


def capacity(layers: Layers, budget: Any, block_size: Any, context: Any,
             batched_tokens: Any) -> Capacity:
    """The KV cache of one device as vLLM lays it out (see the module docstring)."""
    block = attention_block(block_size, layers.state_bytes if layers.recurrent else 0,
                            layers.token_bytes) if (layers.full or layers.sliding) \
        else X.q(block_size)
    if layers.full or layers.sliding:
        page = block * X.q(layers.token_bytes)
    else:
        page = X.q(layers.state_bytes)
    counts = {"full": layers.full, "sliding": layers.sliding, "recurrent": layers.recurrent}
    size = group_size(list(counts.values()))
    by_kind = {kind: groups(n, size) for kind, n in counts.items() if n}
    per_request = sum(g * request_pages(kind, context, block, layers.window, batched_tokens)
                      for kind, g in by_kind.items())
    n_blocks = blocks(budget, page, size) if size else 0
    return Capacity(budget, block, page, size, by_kind, n_blocks, per_request,
                    max_sequences(n_blocks, per_request) if per_request else None)

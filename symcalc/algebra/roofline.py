"""How fast one phase can run: the roofline (Williams et al. 2009) of its FLOPs and bytes on
one accelerator, plus its communication (Pope et al. 2022). Each rule is written once and
evaluated with exact rationals on the quick path or with sympy symbols in derivations
(:mod:`symcalc.algebra.exact`); no sympy is imported here.

A phase (the prefill of b sequences of s tokens, or one decoded token for each of b
sequences) does C FLOPs, moves M bytes between memory and the chip and sends X bytes over a
link. Its time is at least

    t = max(C / (eta_c pi), M / (eta_m beta)) + X / (eta_n beta_net)

with pi the peak FLOP/s of the compute dtype, beta the memory bandwidth, beta_net the link's
bandwidth one way, and efficiencies eta (1 by default: then t is a lower bound, a roofline;
below 1 it is an estimate at that efficiency). Compute and memory traffic overlap; the
communication is added (not overlapped), as Pope et al. count it. The phase is compute-,
memory- or network-bound by whichever term is largest. Its arithmetic intensity is C / M
FLOPs per byte; the ridge point eta_c pi / (eta_m beta) is the intensity above which compute
bounds it, and the attainable FLOP/s at intensity I is min(eta_c pi, I eta_m beta).

Bytes moved (symcalc's convention, docs/conventions.md "How fast"):

* the weights read once per phase, but for the lookup-only tables (token, position and
  token-type embeddings without a tied head: a lookup reads b s rows, not the table) and the
  routed experts no token picks (:func:`experts_read`);
* the KV cache written (prefill) or read and one token written (decode); the recurrent state
  written (prefill) or read and written (decode);
* the hidden states: each layer reads its input and writes its output, 2 L tokens d values.

Sources: ``williams2009``, ``pope2022time``, ``uniform_routing``.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

from . import exact as X

BOUNDS = ("compute", "memory", "network")


def compute_seconds(flops: Any, peak: Any, eta: Any = 1) -> Any:
    """FLOPs over the attainable FLOP/s."""
    return X.q(flops) / (X.q(eta) * X.q(peak))


def memory_seconds(bytes_: Any, bandwidth: Any, eta: Any = 1) -> Any:
    """Bytes moved over the attainable memory bandwidth."""
    return X.q(bytes_) / (X.q(eta) * X.q(bandwidth))


def network_seconds(bytes_: Any, bandwidth: Any, eta: Any = 1) -> Any:
    """Bytes one device sends over the attainable link bandwidth (one direction)."""
    return X.q(bytes_) / (X.q(eta) * X.q(bandwidth))


def phase_seconds(compute: Any, memory: Any, network: Any = 0) -> Any:
    """The roofline of one phase: the larger of its compute and memory times (they
    overlap), plus its communication."""
    return X.maximum(compute, memory) + X.q(network)


def bound(compute: Any, memory: Any, network: Any = 0) -> str:
    """Which resource bounds a phase: network when its communication takes longer than
    both others, else compute when its FLOPs take at least as long as its bytes, else
    memory (numbers only)."""
    if network > max(compute, memory):
        return "network"
    return "compute" if compute >= memory else "memory"


def intensity(flops: Any, bytes_: Any) -> Any:
    """Arithmetic intensity: FLOPs per byte moved."""
    return X.q(flops) / X.q(bytes_)


def ridge_point(peak: Any, bandwidth: Any, eta_c: Any = 1, eta_m: Any = 1) -> Any:
    """The intensity (FLOPs per byte) at which compute and memory take equally long."""
    return X.q(eta_c) * X.q(peak) / (X.q(eta_m) * X.q(bandwidth))


def attainable(intensity_: Any, peak: Any, bandwidth: Any, eta_c: Any = 1,
               eta_m: Any = 1) -> Any:
    """Attainable FLOP/s at an arithmetic intensity: the roofline."""
    return X.minimum(X.q(eta_c) * X.q(peak), X.q(intensity_) * X.q(eta_m) * X.q(bandwidth))


def tokens_per_second(tokens: Any, seconds: Any) -> Any:
    return X.q(tokens) / X.q(seconds)


def hidden_bytes(layers: Any, tokens: Any, width: Any, value_bytes: Any) -> Any:
    """Hidden states a phase moves: each layer reads its input and writes its output,
    ``tokens`` vectors of ``width`` values each."""
    return 2 * X.q(layers) * X.q(tokens) * X.q(width) * X.q(value_bytes)


def weights_read(weights: Any, lookup: Any, routed: Any, tokens: Any, E: Any = 1,
                 k: Any = 1) -> Any:
    """Weight bytes a phase over ``tokens`` tokens reads: all but the lookup-only tables and
    the share of the routed experts (``routed`` bytes over E experts) no token picks."""
    return X.q(weights) - X.q(lookup) - X.q(routed) * (1 - X.q(experts_read(tokens, E, k)) / E)


def prefill_bytes(weights: Any, kv_cache: Any, state: Any, hidden: Any) -> Any:
    """Bytes a prefill moves: the weights it reads, the KV cache and recurrent state it
    writes, the hidden states."""
    return X.q(weights) + X.q(kv_cache) + X.q(state) + X.q(hidden)


def decode_bytes(weights: Any, kv_context: Any, kv_token: Any, state: Any, hidden: Any) -> Any:
    """Bytes one decoded token per sequence moves: the weights it reads, the KV cache of the
    context read and the new token's written, the recurrent state read and written, the
    hidden states."""
    return X.q(weights) + X.q(kv_context) + X.q(kv_token) + 2 * X.q(state) + X.q(hidden)


def experts_read(tokens: Any, E: Any, k: Any) -> Any:
    """Routed experts of one MoE layer that ``tokens`` tokens read, each picking k of E
    at random (uniform routing): E (1 - (1 - k/E)^tokens) on average, rounded up to whole
    experts; all E once E (1 - k/E)^tokens < 1. Exact on numbers without computing huge
    powers (the count settles at E after about (E/k) ln E tokens)."""
    if X.recorded(tokens, E, k):
        # the page evaluates the tree with exact rationals: the power is taken at no more
        # than n_max = ceil(E/k (10 + E [E >= 22,026])) tokens, past which the count is E
        # anyway (E q^n <= E exp(-n k/E) < 1 once n > (E/k) ln E, and ln E < 10 below
        # 22,026 experts, ln E < E above), so a prefill of millions of tokens stays small
        n_max = X.ceil(X.q(E) / k * (10 + X.at_least(E, 22026) * E))
        return X.ceil(E * (1 - X.power(1 - X.q(k) / E, X.minimum(tokens, n_max))))
    if X.symbolic(tokens, E, k):
        return X.ceil(E * (1 - X.power(1 - X.q(k) / E, tokens)))
    tokens, E, k = int(tokens), int(E), int(k)
    if tokens == 0:
        return 0
    if k >= E:
        return E
    # E q^n < 1 with q = (E - k)/E  <=>  E (E - k)^n < E^n; find such an n by doubling
    m = 1
    while E * (E - k) ** m >= E ** m:
        if m >= tokens:
            break
        m *= 2
    if m <= tokens and E * (E - k) ** m < E ** m:
        return E  # E q^tokens <= E q^m < 1: the ceiling is E
    return E - X.floor(X.q(E) * X.power(X.q(E - k) / E, tokens))


def first_batch(compute_bound: Callable[[int], bool], limit: int = 2**20) -> Optional[int]:
    """The smallest batch b >= 1 at which ``compute_bound(b)`` holds, for a condition that
    stays true once true (decode's FLOPs grow with b faster than its bytes); None when not
    even ``limit`` reaches it."""
    if compute_bound(1):
        return 1
    hi = 2
    while not compute_bound(hi):
        if hi >= limit:
            return None
        hi = min(hi * 2, limit)
    lo = hi // 2  # compute_bound(lo) is false
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if compute_bound(mid):
            hi = mid
        else:
            lo = mid
    return hi


def compute_bound_batch(weights: Any, flops_per_sequence: Any, bytes_per_sequence: Any,
                        peak: Any, bandwidth: Any, eta_c: Any = 1, eta_m: Any = 1) -> Any:
    """The batch at which decode turns compute-bound when its bytes are ``weights`` read once
    plus ``bytes_per_sequence`` per sequence and its FLOPs ``flops_per_sequence`` per
    sequence: b c / (eta_c pi) = (W + b m) / (eta_m beta), so b = W / (c/R - m) with R the
    ridge point (real-valued; rounded up it is the first such whole batch). Infinite
    (never) when c / R <= m: each sequence's own bytes keep decode memory-bound."""
    R = ridge_point(peak, bandwidth, eta_c, eta_m)
    return X.q(weights) / (X.q(flops_per_sequence) / R - X.q(bytes_per_sequence))

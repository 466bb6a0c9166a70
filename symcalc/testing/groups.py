"""Parameters grouped by the symcalc components they count toward."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .names import layer_of, normalised

# sizes tried, in this order, to explain a component's count (the likeliest mistakes first)
SUSPECTS = ("n_kv", "n_h", "d_h", "d_ff", "d_moe", "d_sh", "E", "E_s", "V", "P", "T", "d_v",
            "d_nope", "d_rope", "r_q", "r_kv", "d_emb", "d", "L", "L_dense", "R")


@dataclass
class Group:
    """Parameters that together count toward a set of symcalc breakdown leaves."""
    leaves: set[str]
    params: list[tuple[str, tuple[int, ...], int]] = field(default_factory=list)

    @property
    def found(self) -> int:
        return sum(n for _, _, n in self.params)

    def label(self) -> str:
        return " + ".join(sorted(self.leaves)) if self.leaves else "(nothing in symcalc)"


def layers_in(group: Group) -> list[Optional[int]]:
    return sorted({layer_of(name) for name, _, _ in group.params}, key=lambda i: (i is None, i))


def first_layer(group: Group) -> list[tuple[str, tuple[int, ...], int]]:
    """The group's parameters in its first layer, names normalised."""
    first = layers_in(group)[0]
    return [(normalised(n), s, k) for n, s, k in group.params if layer_of(n) == first]

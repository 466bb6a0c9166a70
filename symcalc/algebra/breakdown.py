"""An ordered mapping from slash paths to values whose parents are the sums of their children.

Only leaves are stored; a parent's value is computed as the sum of the leaves below it, so
the rule "a parent is the sum of its children" holds by construction. Works for sympy
expressions and for plain integers alike (no sympy import here).
"""
from __future__ import annotations

from ..records import Record
TYPE_CHECKING = False  # typing is not imported at run time: it costs a report ~3 ms
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator


class Leaf(Record):
    path: str
    value: Any
    source: str = ""


class Breakdown:
    def __init__(self, leaves: Iterable[Leaf]):
        self.leaves: tuple[Leaf, ...] = tuple(leaves)
        seen = set()
        for leaf in self.leaves:
            if leaf.path in seen:
                raise ValueError(f"duplicate path {leaf.path}")
            seen.add(leaf.path)

    # -- structure -----------------------------------------------------------------------
    def paths(self) -> list[str]:
        """Every path, parents before their children, in order of first appearance."""
        out: dict[str, None] = {}
        for leaf in self.leaves:
            parts = leaf.path.split("/")
            for i in range(1, len(parts) + 1):
                out.setdefault("/".join(parts[:i]), None)
        return list(out)

    def children(self, path: str = "") -> list[str]:
        depth = 0 if not path else path.count("/") + 1
        return [p for p in self.paths() if p.count("/") == depth and _under(p, path)]

    def under(self, path: str) -> list[Leaf]:
        return [leaf for leaf in self.leaves if _under(leaf.path, path)]

    def value(self, path: str = "") -> Any:
        leaves = self.under(path)
        if not leaves:
            raise KeyError(path)
        values = [leaf.value for leaf in leaves]
        if any(hasattr(v, "free_symbols") for v in values):  # sympy's, so sympy is loaded
            from sympy import Add
            return Add(*values)  # one Add: adding leaf by leaf is quadratic
        return sum(values[1:], values[0])

    @property
    def total(self) -> Any:
        return self.value("")

    def __contains__(self, path: str) -> bool:
        return any(_under(leaf.path, path) for leaf in self.leaves)

    def __iter__(self) -> Iterator[Leaf]:
        return iter(self.leaves)

    def as_dict(self) -> dict[str, Any]:
        """Every path (parents included) -> value."""
        return {p: self.value(p) for p in self.paths()}

    # -- transformations -----------------------------------------------------------------
    def map(self, fn: Callable[[Any], Any]) -> "Breakdown":
        return Breakdown(Leaf(l.path, fn(l.value), l.source) for l in self.leaves)

    def where(self, keep: Callable[[Leaf], bool]) -> "Breakdown":
        return Breakdown(l for l in self.leaves if keep(l))

    def prefixed(self, prefix: str) -> "Breakdown":
        return Breakdown(Leaf(f"{prefix}/{l.path}", l.value, l.source) for l in self.leaves)

    def subtree(self, path: str) -> "Breakdown":
        """The leaves under ``path`` with the prefix removed."""
        cut = len(path) + 1
        return Breakdown(Leaf(l.path[cut:], l.value, l.source) for l in self.under(path)
                         if l.path != path)

    def __add__(self, other: "Breakdown") -> "Breakdown":
        return Breakdown(self.leaves + other.leaves)


def _under(path: str, parent: str) -> bool:
    return not parent or path == parent or path.startswith(parent + "/")

"""Number formatting shared by every renderer (no sympy, no jinja2)."""
from __future__ import annotations

GB, GiB = 10**9, 2**30
SI = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


def grouped(n: int, sep: str = ",") -> str:
    """Exact integer with thousands separators: 7,241,732,096."""
    return f"{int(n):,}".replace(",", sep)


def short(n: int) -> str:
    """7,241,732,096 -> '7.24 B'; 124,439,808 -> '124.44 M'."""
    n = int(n)
    for div, unit in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K")):
        if abs(n) >= div:
            return f"{n / div:.2f} {unit}"
    return str(n)


def si(n: int, prefix: str | None = None, unit: str = "FLOPs") -> str:
    """In an SI prefix (auto when None): 1.83 TFLOPs."""
    n = int(n)
    if prefix is None:
        prefix = next((p for p in ("E", "P", "T", "G", "M", "K") if abs(n) >= SI[p]), "")
    return f"{n / SI[prefix]:,.2f} {prefix}{unit}"


def yi(n: int) -> str:
    """In units of 10^8 (亿), as the estimator in the seeds shows: 0.849 亿."""
    return f"{int(n) / 10**8:.3f} 亿"


def bytes_both(n: int) -> str:
    """Bytes in GB (10^9) and GiB (2^30), always both named: 14.48 GB / 13.49 GiB."""
    n = int(n)
    return f"{n / GB:,.2f} GB / {n / GiB:,.2f} GiB"


PARAM_UNITS = {"exact": None, "K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12, "yi": 10**8}


def params_in(n: int, unit: str = "auto") -> str:
    """A count in the unit asked for: 'auto' (short), K, M, B, T, or yi (10^8, 亿);
    'exact' gives the grouped integer."""
    if unit == "auto":
        return short(n)
    if unit == "exact":
        return grouped(n)
    if unit == "yi":
        return yi(n)
    return f"{int(n) / PARAM_UNITS[unit]:,.3f} {unit}"


def flops_in(n: int, prefix: str = "auto") -> str:
    """FLOPs with the SI prefix asked for (auto picks the largest that keeps a leading digit)."""
    return si(n, None if prefix == "auto" else prefix)

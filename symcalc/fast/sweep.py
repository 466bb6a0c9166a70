"""Sweeps: any quantity over a grid (Cartesian product) or a table of configurations,
vectorised with numpy through the term table (:mod:`symcalc.fast.terms`; no sympy).

    >>> from symcalc.fast.sweep import sweep
    >>> r = sweep("mistral-7b", grid={"d": [2048, 4096], "L": [16, 32]},
    ...           quantities=["params.total"])
    >>> [int(x) for x in r.columns["params.total"]]
    [1708197888, 3285321728, 3751940096, 7241732096]

Numbers are exact int64 when every intermediate value provably fits (an upper bound is
evaluated exactly at the largest grid values first). When it may not fit, :func:`sweep`
raises :class:`SymcalcError` saying so, unless the caller asked for ``numbers="exact"``
(Python ints in object arrays, exact at any size) or ``numbers="float"`` (float64).
Never silently rounded or wrapped.

Grid keys: the spec's sizes (``L``, ``d``, ``n_h``, ``n_kv``, ``d_h``, ``d_ff``, ``V``, ``P``,
``T``, ``E``, ``k``, ``R``, ``L_dec``, ``W``) and the workload ``batch``, ``seq_len``,
``dec_seq_len``. A point is the spec with those values overridden (as ``--set`` does), so
``d_h`` follows ``d / n_h``, ``n_kv`` follows ``n_h`` and ``d_ff`` follows ``4 d`` when they
did in the model (:func:`symcalc.algebra.spec.with_overrides`; a test compares point by point).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Union

from . import quick, terms
from ..errors import SymcalcError
from ..algebra.layout import PER_RANK
from ..algebra.options import DEFAULT_SEQ_LEN, Options, heads_split_badly
import re

from ..algebra.spec import SIZE_FIELDS, Spec, check_limit, parse_int

_GRID_INT = re.compile(r"-?[0-9]+|[0-9]{1,3}(?:_[0-9]{3})+")  # the list separator is ","

WORKLOAD_KEYS = {"batch": "b", "seq_len": "s", "dec_seq_len": "s_dec"}
GRID_KEYS = SIZE_FIELDS + tuple(WORKLOAD_KEYS)
INT64_MAX = 2**63 - 1
NUMBERS = ("int64", "exact", "float")
# A sweep evaluates at most this many points (grid: the product of the axis lengths; table:
# the rows), refused before anything is allocated: 10^7 points are 80 MB per int64 column.
POINT_LIMIT = 10**7


def _numpy():
    try:
        import numpy
    except ModuleNotFoundError:
        raise SymcalcError("sweep", "needs numpy: pip install 'symcalc[sweep]'") from None
    return numpy


@dataclass
class SweepResult:
    """Columns of equal length: the grid keys, then the quantities."""
    model: str
    keys: list[str]
    quantities: list[str]
    columns: dict[str, Any]
    numbers: str

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def rows(self) -> Iterable[dict[str, Any]]:
        names = self.keys + self.quantities
        cols = [self._python(n) for n in names]
        for row in zip(*cols):
            yield dict(zip(names, row))

    def _python(self, name: str) -> list:
        """A column as Python numbers: ints, except quantities asked for as floats."""
        as_float = self.numbers == "float" and name in self.quantities
        return [float(x) for x in self.columns[name]] if as_float else \
            [int(x) for x in self.columns[name]]

    def to_csv(self, out) -> None:
        names = self.keys + self.quantities
        out.write(",".join(names) + "\n")
        cols = [map(str, self._python(n)) for n in names]
        out.write("".join(",".join(row) + "\n" for row in zip(*cols)))

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "numbers": self.numbers, "keys": self.keys,
                "quantities": self.quantities, "rows": list(self.rows())}


def parse_values(name: str, text: str) -> list[int]:
    """``512,1024,2048`` or ``512:4096:512`` (start:stop:step, stop included), mixed freely."""
    out: list[int] = []
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        pieces = part.split(":")
        if any(not _GRID_INT.fullmatch(x) for x in pieces):
            raise SymcalcError(f"--grid {name}", f"values must be integers like 512,1024 or "
                                                 f"512:4096:512 (got {part!r:.60})")
        nums = [parse_int(f"--grid {name}", x, zero=True) for x in pieces]
        if len(nums) == 1:
            out.append(nums[0])
        elif len(nums) in (2, 3) and (len(nums) == 2 or nums[2] > 0):
            start, stop, step = nums[0], nums[1], nums[2] if len(nums) == 3 else 1
            values = range(start, stop + 1, step)
            if len(out) + len(values) > POINT_LIMIT:
                raise SymcalcError(f"--grid {name}", f"has {len(out) + len(values):,} values; "
                                                     f"a sweep has at most {POINT_LIMIT:,} points")
            out.extend(values)
        else:
            raise SymcalcError(f"--grid {name}", f"a range is start:stop:step with step > 0 "
                                                 f"(got {part!r})")
    if not out:
        raise SymcalcError(f"--grid {name}", "needs at least one value")
    return out


def _check_key(spec: Spec, key: str) -> str:
    if key not in GRID_KEYS:
        raise SymcalcError(f"--grid {key}", f"is not a grid key (known: {', '.join(GRID_KEYS)})")
    if key == "dec_seq_len" and spec.family != "encoder-decoder":
        raise SymcalcError(f"--grid {key}", "applies only to encoder-decoder models")
    if key in SIZE_FIELDS and getattr(spec, key) is None:
        raise SymcalcError(f"--grid {key}", f"the model has no {key} (give it one with "
                                            f"--set {key}=VALUE first)")
    return key


def _column(np, key: str, values) -> Any:
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size == 0:
        raise SymcalcError(f"--grid {key}", "needs a non-empty list of values")
    if arr.dtype.kind not in "iu" and not all(isinstance(x, int) and not isinstance(x, bool)
                                              for x in arr.tolist()):
        raise SymcalcError(f"--grid {key}", "values must be positive integers")
    if arr.dtype == object:
        arr = np.asarray([int(x) for x in arr.tolist()], dtype=object)
    if (arr <= 0).any():
        raise SymcalcError(f"--grid {key}", f"values must be positive integers (got {arr[arr <= 0][0]})")
    check_limit(f"--grid {key}", int(arr.max()))
    return arr


def _check_points(given: dict[str, Any], product: bool) -> None:
    """Refuse a grid or table of more than POINT_LIMIT points before allocating any."""
    lengths = []
    for key, vals in given.items():
        try:
            lengths.append(len(vals))
        except TypeError:
            raise SymcalcError(f"--grid {key}", "needs a list of values") from None
    if not lengths:
        raise SymcalcError("sweep", "needs at least one grid key or table column")
    points = 1
    for n in lengths:
        points = points * n if product else max(points, n)
    if points > POINT_LIMIT:
        what = " x ".join(f"{n:,}" for n in lengths) + " = " if product and len(lengths) > 1 else ""
        raise SymcalcError("--grid" if product else "table",
                           f"has {what}{points:,} points; a sweep evaluates at most "
                           f"{POINT_LIMIT:,} points")


def _cartesian(np, columns: dict[str, Any]) -> dict[str, Any]:
    """Each axis as an array broadcastable against the others (axis i has shape 1 except
    along i), so that a term only costs the size of the axes it involves."""
    n = len(columns)
    return {k: np.reshape(c, [len(c) if j == i else 1 for j in range(n)])
            for i, (k, c) in enumerate(columns.items())}


def _first_bad(np, mask, what: dict[str, Any]) -> str:
    arrays = np.broadcast_arrays(np.asarray(mask), *[np.asarray(x) for x in what.values()])
    i = int(np.argmax(arrays[0].ravel()))
    return ", ".join(f"{k}={int(a.ravel()[i])}" for k, a in zip(what, arrays[1:]))


# the grid keys the sizes spec.toml's [values] sums over the layers are made of: (a per-layer
# FFN width sum, the global layers' own shape) -> keys
_FF_SUM = ("L", "d_ff")
_GLOBAL = ("L", "d_h", "n_kv", "d_hg", "n_kvg", "d_v")
SUMMED_FROM = {(True, False): _FF_SUM, (False, True): _GLOBAL, (True, True): _FF_SUM + _GLOBAL}


def _points(np, spec: Spec, opts: Options, cols: dict[str, Any]) -> dict[str, Any]:
    """Symbol values of every point: the spec's values, the grid's, and what follows."""
    heads_vary = "n_h" in cols or "n_kv" in cols  # then every point's heads are checked below
    summed = [k for k in SUMMED_FROM.get((spec.d_ff_sum is not None, spec.d_hg is not None
                                          or spec.n_kvg is not None), ()) if k in cols]
    if summed:
        raise SymcalcError(summed[0], "cannot vary in a sweep of this model: its widths summed "
                                      "over the layers (d_ff_sum, or the global layers' S_q, S_k, "
                                      "S_v, S_kn, S_o, A_l, A_g) do not follow the grid")
    v: dict[str, Any] = quick.values(spec, opts, check_heads=not heads_vary)
    for key, arr in cols.items():
        v[WORKLOAD_KEYS.get(key, key)] = arr
    if "d_h" not in cols and ("d" in cols or "n_h" in cols) \
            and spec.d % spec.n_h == 0 and spec.d_h == spec.d // spec.n_h:
        bad = v["d"] % v["n_h"] != 0
        if np.any(bad):
            raise SymcalcError("d", "must be divisible by n_h unless d_h is given ("
                               + _first_bad(np, bad, {"d": v["d"], "n_h": v["n_h"]}) + ")")
        v["d_h"] = v["d"] // v["n_h"]
    if "L" in cols:  # the layer groups of a stack that is not hybrid follow L
        for count, given in (("L_attn", spec.L_attn), ("L_ffn", spec.L_ffn)):
            if given is None and spec.shape == "single":
                v[count] = v["L"]
        for count in ("L_attn", "L_lin", "L_ssm", "L_conv", "L_ffn", "L_local", "L_dense"):
            if getattr(spec, count, None) is not None and count not in cols:
                bad = v["L"] < getattr(spec, count)
                if np.any(bad):
                    raise SymcalcError("L", f"must be at least {count} = {getattr(spec, count)} "
                                            "(" + _first_bad(np, bad, {"L": v["L"]}) + ")")
    if "d" in cols and "d_ff" not in cols and spec.d_ff == 4 * spec.d:
        v["d_ff"] = 4 * v["d"]
    # spec.toml's [values] that default to another size follow it: the attention projections'
    # input width (d unless Zamba's d_ai) and the blocks that hold weights (every attention
    # and FFN layer unless the layers share Zamba's B_sh blocks)
    if "d" in cols and "d_ai" not in cols and spec.d_ai is None:
        v["d_ai"] = v["d"]
    if spec.B_sh is None and spec.shape == "single":
        for held, count in (("L_attn_w", "L_attn"), ("L_ffn_w", "L_ffn")):
            if held not in cols and (count in cols or "L" in cols):
                v[held] = v[count]
    if "n_h" in cols and "n_kv" not in cols and spec.n_kv == spec.n_h:
        v["n_kv"] = v["n_h"]
    if "n_h" in cols or "n_kv" in cols:
        bad = v["n_h"] % v["n_kv"] != 0
        if np.any(bad):
            raise SymcalcError("n_kv", "must divide n_h ("
                               + _first_bad(np, bad, {"n_h": v["n_h"], "n_kv": v["n_kv"]}) + ")")
    if spec.moe and ("E" in cols or "k" in cols):
        bad = v["k"] > v["E"]
        if np.any(bad):
            raise SymcalcError("k", "top-k must not exceed the number of experts ("
                               + _first_bad(np, bad, {"k": v["k"], "E": v["E"]}) + ")")
    if opts.tp > 1 and heads_vary:
        bad = heads_split_badly(v["n_h"], v["n_kv"], opts.tp)
        if np.any(bad):
            raise SymcalcError("tp", "tensor-parallel degree must divide the heads ("
                               + _first_bad(np, bad, {"n_h": v["n_h"], "n_kv": v["n_kv"],
                                                      "tp": opts.tp}) + ")")
    if "seq_len" not in cols and opts.seq_len is None and spec.position == "learned" and "P" in cols:
        v["s"] = np.minimum(v["P"], DEFAULT_SEQ_LEN)
    if spec.family == "encoder-decoder" and "dec_seq_len" not in cols and opts.dec_seq_len is None:
        v["s_dec"] = v["s"]
    return v


def _maximum(np, v: dict[str, Any]) -> dict[str, int]:
    return {k: int(x.max()) if hasattr(x, "max") else x for k, x in v.items()}


def _convert(np, v: dict[str, Any], numbers: str) -> dict[str, Any]:
    dtype = {"int64": np.int64, "exact": object, "float": np.float64}[numbers]
    out, sized = {}, quick.varying()
    for k, x in v.items():
        if k not in sized:  # switches, facts, options: folded in as Python ints
            out[k] = x
        elif hasattr(x, "dtype"):
            if dtype is object:
                x = np.reshape(np.asarray([int(i) for i in x.ravel().tolist()], dtype=object),
                               x.shape)
            elif numbers == "int64" and x.dtype == object and int(x.max()) > INT64_MAX:
                raise SymcalcError(k, f"values beyond int64 (up to {int(x.max()):.3g}); ask for "
                                      "exact Python integers (--exact) or floats (--float)")
            else:
                x = x.astype(dtype, copy=False)
        elif numbers == "float":
            x = float(x)
        out[k] = x
    return out


def _evaluate(np, name: str, spec: Spec, v: dict[str, Any], vmax: dict[str, int],
              numbers: str, shape: tuple[int, ...]):
    """One quantity over the grid: the rows folded once for the model (terms.specialize),
    the bound of every intermediate value checked against int64 first, then evaluated on the
    grid's arrays."""
    constants, sizes = quick.split_values(v)
    rows = terms.specialize(spec.shape, constants)
    if numbers == "int64":
        top = rows.bound(name, quick.split_values(vmax)[1])
        if top > INT64_MAX:
            raise SymcalcError(name, f"may exceed int64 on this grid (intermediate values up "
                                     f"to {float(top):.3g}); ask for exact Python integers "
                                     "(--exact, numbers='exact') or floats (--float, "
                                     "numbers='float')")
    dtype = {"int64": np.int64, "exact": object, "float": np.float64}[numbers]
    return _flat(np, np.asarray(rows.number(name, sizes), dtype=dtype), shape)


def _flat(np, arr, shape: tuple[int, ...]):
    """``arr`` broadcast to the grid's shape, as one row per point."""
    return arr.reshape(-1) if arr.shape == shape else np.broadcast_to(arr, shape).reshape(-1)


def load_table(path: Union[str, Path]) -> dict[str, list[int]]:
    """A CSV file whose header names grid keys; one configuration per row."""
    import io

    from ..inputs.files import label_of, read_text

    path = Path(path)
    text = read_text(path, label_of(path))  # a regular UTF-8 file of at most 4 MiB
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as err:  # a field over csv's limit, a NUL, a bad quote
        raise SymcalcError(path.name, f"is not a valid CSV table ({err})") from None
    if len(rows) < 2:
        raise SymcalcError(path.name, "needs a header of grid keys and at least one row")
    header = [h.strip() for h in rows[0]]
    twice = [h for i, h in enumerate(header) if h in header[:i]]
    if twice:
        raise SymcalcError(f"{path.name} header", f"names the column {twice[0]!r:.60} twice")
    cols: dict[str, list[int]] = {h: [] for h in header}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise SymcalcError(f"{path.name} line {line}", f"has {len(row)} values, "
                                                           f"the header {len(header)}")
        for h, cell in zip(header, row):
            cols[h].append(parse_int(f"{path.name} line {line} {h}", cell))
    return cols


def sweep(model: Union[str, Spec], grid: Optional[dict[str, Any]] = None,
          quantities: Iterable[str] = ("params.total",), options: Options = Options(),
          table: Optional[Union[dict[str, Any], str, Path]] = None, numbers: str = "int64",
          sets: Iterable[str] = ()) -> SweepResult:
    """Evaluate ``quantities`` of ``model`` (preset, config.json, spec file or :class:`Spec`)
    at every point of ``grid`` (Cartesian product, first key slowest) or every row of
    ``table`` (columns of equal length, or a CSV path)."""
    np = _numpy()
    if numbers not in NUMBERS:
        raise SymcalcError("numbers", f"must be one of {', '.join(NUMBERS)} (got {numbers!r})")
    if isinstance(model, Spec):
        spec = model
    else:
        from ..inputs.resolver import resolve
        spec = resolve(model, sets)
    opts = options.checked()
    quantities = list(quantities)
    for name in quantities:
        if name not in RANK_QUANTITIES:
            quick.check_quantity(name)
    from ..algebra import quantized

    if "memory.weights_bytes" in quantities and quantized.parse(opts.dtype):
        raise SymcalcError("dtype", f"a quantized format ({opts.dtype}) is not swept: "
                                    "report and derive give its weights")
    if (grid is None) == (table is None):
        raise SymcalcError("sweep", "give either a grid or a table of configurations")
    given = load_table(table) if isinstance(table, (str, Path)) else (grid or table)
    _check_points(given, table is None)
    cols = {_check_key(spec, k): _column(np, k, vals) for k, vals in given.items()}
    if table is not None:
        if len({len(c) for c in cols.values()}) > 1:
            raise SymcalcError("table", "columns must have the same length")
        shape = (len(next(iter(cols.values()))),)
    else:
        shape = tuple(len(c) for c in cols.values())
        cols = _cartesian(np, cols)
    v = _points(np, spec, opts, cols)
    vmax = _maximum(np, v)
    v = _convert(np, v, numbers)
    decode = dict(v, s=opts.context) if opts.context else v
    decode_max = dict(vmax, s=opts.context) if opts.context else vmax
    out = {k: _flat(np, c, shape) for k, c in cols.items()}
    ranked = [n for n in quantities if n in RANK_QUANTITIES]
    if ranked:
        out.update(_evaluate_rank(np, ranked, spec, opts, v, vmax, numbers, shape))
    for name in quantities:
        if name in ranked:
            continue
        at, at_max = (decode, decode_max) if name == "flops.decode_per_token" else (v, vmax)
        out[name] = _evaluate(np, name, spec, at, at_max, numbers, shape)
    return SweepResult(spec.name, list(cols), quantities, out, numbers)


# the layout's figures a sweep gives (the most-loaded stage's at each point)
RANK_QUANTITIES = (*PER_RANK, "per_rank.peak_bytes", "per_rank.stage")
PEAK = ("per_rank.states_bytes", "per_rank.activations_bytes")


def _evaluate_rank(np, names: list[str], spec: Spec, opts: Options, v: dict[str, Any],
                   vmax: dict[str, int], numbers: str, shape: tuple[int, ...]) -> dict[str, Any]:
    """Per-rank and communication figures over the grid: at every point the stage whose
    training peak is largest (the earlier on a tie), as the report finds it, each stage's
    figures evaluated on the grid's arrays (bounds checked against int64 first)."""
    from ..algebra.layout import check_spec
    from . import plans

    lay = opts.layout()
    check_spec(spec, lay, opts.seq_len, opts.dec_seq_len)
    facts = plans.facts(spec, opts.tp_plan)
    constants, sizes = quick.split_values({**v, **facts})
    rows = terms.specialize(spec.shape, constants)
    table_names = [n for n in dict.fromkeys(list(PEAK) + names) if n in PER_RANK]
    if numbers == "int64":
        top_sizes = quick.split_values(vmax)[1]
        for name in table_names:
            top = max(rows.bound(name, top_sizes, i) for i in range(lay.pp))
            if 2 * top > INT64_MAX:
                raise SymcalcError(name, f"may exceed int64 on this grid (intermediate values "
                                         f"up to {float(top):.3g}); ask for exact Python "
                                         "integers (--exact) or floats (--float)")
    dtype = {"int64": np.int64, "exact": object, "float": np.float64}[numbers]
    full = lambda x: np.broadcast_to(np.asarray(x, dtype=dtype), shape)  # noqa: E731
    best_peak = best_stage = None
    per_stage = []
    for i in range(lay.pp):
        got = {n: full(rows.number(n, sizes, i)) for n in table_names}
        peak = got[PEAK[0]] + got[PEAK[1]]
        got["per_rank.peak_bytes"] = peak
        per_stage.append(got)
        if best_peak is None:
            best_peak, best_stage = peak, np.zeros(shape, dtype=np.int64)
        else:
            more = peak > best_peak
            best_peak = np.where(more, peak, best_peak)
            best_stage = np.where(more, i, best_stage)
    out = {}
    for name in names:
        if name == "per_rank.stage":
            out[name] = _flat(np, np.asarray(best_stage, dtype=dtype), shape)
            continue
        value = per_stage[0][name]
        for i in range(1, lay.pp):
            value = np.where(best_stage == i, per_stage[i][name], value)
        out[name] = _flat(np, np.asarray(value, dtype=dtype), shape)
    return out

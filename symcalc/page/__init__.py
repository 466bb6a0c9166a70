"""The calculator page (`symcalc page`): one self-contained HTML file.

What the page carries: the term table's evaluator (``terms.js``, BigInt) and, as JSON, the
term table itself (``symcalc/fast/terms.store``, the one the command line reads), the spec
rules, report assembly and family-file interpreter (``core.js``), the interface (``ui.js``,
``calc.css``, ``calc.html``) and, as JSON, the data they read: the spec's fields and their
defaults (taken from :mod:`symcalc.algebra.spec` when the page is built, so new fields flow
in), the options' tables, the family files, the presets and the accelerators. No sympy is
imported here.

The page is assembled in one pass over ``calc.html``: each ``{{NAME}}`` placeholder of the
template is replaced once, and the text put in is never searched again, so no user text
(a config's strings, a folder name) can add a placeholder. The data (the meta, the family
files, the term table) lands as JSON, gzip-compressed and base64-encoded (:func:`packed`),
in ``<script type="application/octet-stream">`` elements: base64 has no ``<``, ``&`` or
quote, so nothing in it can end or change the element, and the page is about a fifth of
its unpacked size. The boot script inflates the three blocks with the browser's
``DecompressionStream`` (no network, no script of ours) before the interface starts;
``window.SYMCALC_READY_MS`` is set once it has (``SYMCALC_BOOT_ERROR`` if it failed).
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

from .. import records

HERE = Path(__file__).resolve().parent
CSP = ("default-src 'none'; script-src {scripts}; style-src 'unsafe-inline'; img-src data:; "
       "connect-src 'none'; font-src 'none'; form-action 'none'; base-uri 'none'; "
       "frame-src 'none'; worker-src 'none'; manifest-src 'none'; media-src 'none'; "
       "object-src 'none'")


def _expr(e) -> dict[str, Any]:
    """An expression of a data file as the page reads it: its text (for messages) and its
    tree (symcalc.algebra.lang; the page's lang.js walks it)."""
    return {"text": e.text, "tree": e.tree}


def _entry(value: Any) -> Any:
    from ..algebra.lang import Expr

    return _expr(value) if isinstance(value, Expr) else value


def family_payload(f) -> dict[str, Any]:
    """A parsed family file (symcalc.inputs.family_data.Family) as the page reads it: the
    tables of the file, each expression parsed once, here."""
    from ..inputs.family_data import tp_plan_name

    out: dict[str, Any] = {
        "model_type": f.model_type, "bare_class": f.bare_class, "classes": f.classes,
        "defaults": f.defaults, "fixed": f.fixed,
        "spec": {k: _expr(e) for k, e in f.spec.items()},
        "roles": {r: {"fixed": role.fixed, "spec": {k: _expr(e) for k, e in role.spec.items()}}
                  for r, role in f.roles.items()},
        "checks": {k: {"require": _expr(c.require), "rule": c.rule} for k, c in f.checks.items()},
        "implementation": {k: _entry(v) for k, v in f.implementation.items()},
        # the tp_plan implementation value of each role (family_data.tp_plan_name)
        "tp_plan_names": {r: tp_plan_name(f, r) for r in f.roles},
        "aliases": f.aliases,
    }
    if f.wrapper is not None:
        w = f.wrapper
        out["wrapper"] = {"text_config": w.text_config, "text_model_type": w.text_model_type,
                          "text_absent": w.text_absent, "vision_config": w.vision_config,
                          "vision": w.vision, "projector": w.projector,
                          "vision_defaults": w.vision_defaults, "vision_absent": w.vision_absent,
                          "sizes": {k: _expr(e) for k, e in w.sizes.items()},
                          "text_only": list(w.text_only), "audio_config": w.audio_config,
                          "audio": w.audio, "audio_defaults": w.audio_defaults,
                          "text_flat": w.text_flat}
    return out


def implementation_payload() -> dict[str, Any]:
    """symcalc/algebra/implementation.toml as the page reads it (symcalc.algebra.implementation)."""
    from ..algebra.implementation import definitions

    d = definitions()
    return {
        "fields": {n: {"kind": f.kind, "default": f.default, "choices": f.choices,
                       "meaning": f.meaning,
                       "config_other": f.config_other,
                       "config": _expr(f.config) if f.config is not None else None}
                   for n, f in d.fields.items()},
        "checks": {n: {"require": _expr(e), "rule": rule} for n, (e, rule) in d.checks.items()},
        "lets": [[n, _expr(e)] for n, e in d.lets],
        "facts": [[n, _expr(e)] for n, (_, e) in d.facts.items()],
    }


def meta() -> dict[str, Any]:
    """Everything the page's scripts read besides the term table."""
    from ..algebra import options as op
    from ..algebra import conventions
    from ..algebra.option_rules import option_rules
    from ..algebra import spec as sp
    from ..algebra.layout import CP_ALGORITHMS, DEGREES, TP_PLANS, Layout, layout_rules
    from ..inputs import presets
    from ..inputs.family_data import load_families
    from ..inputs.gpus import load as load_gpus

    fields = []
    for f in records.fields(sp.Spec):
        if f.name == "implementation":
            continue
        default = None if f.default is records.MISSING else f.default
        kind = ("size" if f.name in sp.SIZE_FIELDS
                else "count" if f.name in sp.COUNT_FIELDS
                else "flag" if f.name in sp.FLAG_FIELDS else "text")
        fields.append({"name": f.name, "default": default, "kind": kind})
    choices = {"family": sp.FAMILIES, "ffn": sp.FFN_KINDS, "norm": sp.NORMS, "head": sp.HEADS,
               "position": sp.POSITIONS, "qk_norm": sp.QK_NORMS,
               "linear_attn": sp.LINEAR_ATTNS, "ssm": sp.SSMS}
    spec = {"fields": fields, "size_fields": sp.SIZE_FIELDS, "count_fields": sp.COUNT_FIELDS,
            "flag_fields": sp.FLAG_FIELDS, "hybrid_counts": sp.HYBRID_COUNTS,
            "rules": sp.rules(),
            "size_limit": sp.SIZE_LIMIT, "size_limit_text": sp.SIZE_LIMIT_TEXT,
            "choices": choices}
    from ..fast import terms

    options = {
        "defaults": records.asdict(op.Options()),
        "dtype_bytes": op.DTYPE_BYTES, "default_seq_len": op.DEFAULT_SEQ_LEN,
        "choices": {"causal": op.CAUSAL, "recompute": op.RECOMPUTE,
                    "activations": op.ACTIVATION_MODELS, "optimizer": op.OPTIMIZER_NAMES,
                    "mla_cache": op.MLA_CACHE, "tp_plan": TP_PLANS,
                    "cp_algorithm": CP_ALGORITHMS},
        "optimizers": terms.optimizers(),
        "layout_fields": op.LAYOUT_FIELDS,
        "layout_defaults": records.asdict(Layout()),
        "degrees": DEGREES,
    }
    activations = {"models": op.ACTIVATION_MODELS, "text": op.ACTIVATION_TEXT}
    families = {name: family_payload(f) for name, f in load_families().items()}
    preset_data = {}
    for name in presets.names():
        p = presets.load(name)
        raw = presets.raw(name)
        preset_data[name] = {"name": p.name, "description": p.description, "source": p.source,
                             "expected_total": p.expected_total,
                             "expected_active": p.expected_active, "spec": raw["spec"],
                             "implementation": raw.get("implementation", {})}
    gpus = {}
    for acc in load_gpus().values():
        gpus[acc.name] = {"name": acc.name, "description": acc.description, "memory": acc.memory,
                          "memory_bytes": acc.memory_bytes, "bf16": acc.bf16,
                          "bf16_flops": acc.bf16_flops, "source": acc.source,
                          "memory_bandwidth": acc.memory_bandwidth, "flops": acc.flops}
    from ..commands.report import PARTS_NOTE
    from ..fast.speed import page_rules

    speed = {**page_rules(), "dtype_bytes": op.DTYPE_BYTES}
    return {"spec": spec, "options": options, "activations": activations,
            "plan_facts": plan_facts_payload(),
            "implementation": implementation_payload(),
            "layout_rules": layout_rules(),
            "option_rules": option_rules(),
            "conventions": conventions.load(),
            "families": families, "presets": preset_data, "gpus": gpus, "speed": speed,
            "parts_note": PARTS_NOTE}


def plan_facts_payload() -> dict[str, Any]:
    """Every plan's facts (symcalc.fast.plans.all_facts; each is 1), each distinct list once,
    as indices into one list of names: ``{"names": [...], "sets": [[i, ...], ...], "plans":
    {"<tp_plan>|<shape>|<convention>": index of its set}}``."""
    from ..fast.plans import all_facts

    facts = all_facts()
    names = sorted({n for one in facts.values() for n, x in one.items() if x})
    where = {n: i for i, n in enumerate(names)}
    sets: list[list[int]] = []
    index: dict[tuple, int] = {}
    plans = {}
    for key, one in facts.items():
        ids = tuple(sorted(where[n] for n, x in one.items() if x))
        if ids not in index:
            index[ids] = len(sets)
            sets.append(list(ids))
        plans[key] = index[ids]
    return {"names": names, "sets": sets, "plans": plans}


_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                 "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _json(data: Any) -> str:
    """JSON that cannot end or change the <script> element it lands in (floats keep their
    point: 2.0, not 2)."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=False)
    for char, escaped in _JSON_ESCAPES.items():  # str.replace: ~10x faster than translate here
        text = text.replace(char, escaped)
    return text


def packed(text: str) -> str:
    """``text`` (UTF-8) gzip-compressed, then base64: a data block of the page. The gzip header
    carries no time, so a page is the same bytes on every build of the same data."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


def unpacked(block: str) -> str:
    """The text of a data block written by :func:`packed` (for tests and tools)."""
    return gzip.decompress(base64.b64decode(block)).decode("utf-8")


def _hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


SCRIPTS = ("terms.js", "core.js", "speed.js", "ui.js")
# the data blocks are inflated by the browser (DecompressionStream), then the interface starts
BOOT = """(async () => {
  const text = (id) => {
    const b64 = document.getElementById(id).textContent.trim(), bytes = new Uint8Array(b64.length * 3 / 4);
    const raw = atob(b64);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return new Response(new Blob([bytes.subarray(0, raw.length)]).stream()
      .pipeThrough(new DecompressionStream("gzip"))).text();
  };
  const [terms, meta, families] = await Promise.all(["symcalc-terms", "symcalc-meta", "symcalc-families"].map(text));
  SYMCALC_TERMS.init(JSON.parse(terms));
  SYMCALC_CORE.init(JSON.parse(meta), () => SYMCALC_CORE.parseJSON(families));
  SYMCALC_UI.start();
  window.SYMCALC_READY_MS = performance.now();
})().catch((e) => { window.SYMCALC_BOOT_ERROR = String(e); throw e; });
"""


def scripts() -> list[str]:
    """The page's scripts in load order (the term evaluator first), then the boot script."""
    return [(HERE / n).read_text(encoding="utf-8") for n in SCRIPTS] + [BOOT]


def fill(template: str, parts: dict[str, str]) -> str:
    """``template`` with each ``{{NAME}}`` replaced by ``parts[NAME]`` in one pass: the text put
    in is never searched for placeholders again."""
    pieces = template.split("{{")
    out = [pieces[0]]
    for piece in pieces[1:]:
        name, sep, rest = piece.partition("}}")
        if not sep or name not in parts:
            raise ValueError(f"calc.html: unknown placeholder {{{{{name}}}}}")
        out += [parts[name], rest]
    return "".join(out)


def build(models: Iterable[dict[str, Any]] = (), meta_data: dict | None = None) -> str:
    """The page. ``models``: up to two initial models, each ``{"preset": name}`` or
    ``{"config": text, "name": ...}`` (a config.json's text, read in the page)."""
    from ..fast import terms

    data = meta_data if meta_data is not None else meta()
    families = data["families"]  # parsed by the page only when a config.json is read
    data = {**{k: v for k, v in data.items() if k != "families"}, "initial": list(models)}
    code = scripts()
    csp = CSP.format(scripts=" ".join(_hash(c) for c in code))
    template = (HERE / "calc.html").read_text(encoding="utf-8")
    return fill(template, {
        "CSP": csp,
        "CSS": (HERE / "calc.css").read_text(encoding="utf-8"),
        "META": packed(_json(data)),
        "FAMILIES": packed(_json(families)),
        "TERMS": packed(_json(terms.table())),
        "SCRIPTS": "\n".join(f"<script>{c}</script>" for c in code),
    })


def models_of(names: Iterable[str]) -> list[dict[str, Any]]:
    """MODEL arguments of ``symcalc page``: a preset name, or a config.json (or its folder)
    whose text the page then reads with the family files, as a pasted config."""
    from ..errors import SymcalcError
    from ..inputs import presets
    from ..inputs.files import read_text

    out = []
    for name in names:
        if presets.exists(name):
            out.append({"preset": name})
            continue
        path = Path(name)
        if path.is_dir():
            path = path / "config.json"
        if path.suffix != ".json" or not path.exists():
            raise SymcalcError("MODEL", f"{name!r} is not a preset (see `symcalc presets`) nor a "
                                        "config.json or a folder with one")
        from ..inputs.hf import load_config, read_model

        label = path.parent.name or path.name  # as `symcalc report` names it
        read_model(load_config(path), name=label)  # refused here as by `symcalc report`
        out.append({"config": read_text(path, os.fspath(path)), "name": label})
    if len(out) > 2:
        raise SymcalcError("MODEL", f"the page shows one or two models side by side (got {len(out)})")
    return out

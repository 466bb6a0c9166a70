// Runs the calculator page's core (symcalc/page/core.js with the term table's evaluator) in
// Node for tests/test_page.py: reads {"meta": path, "jobs": [...]} on stdin, prints one JSON
// list of results ({"ok": value} or {"error": "field: rule"}), numbers exact.
"use strict";
const path = require("path");
const fs = require("fs");
const root = path.join(__dirname, "..", "symcalc", "page");
global.SYMCALC_TERMS = require(path.join(root, "terms.js"));
const speed = require(path.join(root, "speed.js"));
const input = JSON.parse(fs.readFileSync(0, "utf-8"));
// the term table as the page embeds it, written beside the meta file by tests/test_page.py
SYMCALC_TERMS.init(JSON.parse(fs.readFileSync(path.join(path.dirname(input.meta), "terms.json"), "utf-8")));
const core = require(path.join(root, "core.js"));
const META = core.parseJSON(fs.readFileSync(input.meta, "utf-8"));
core.init(META);
function spec(job) {
  let s;
  job.outside = [];
  if (job.preset) s = core.presetSpec(job.preset);
  else if (job.config !== undefined) [s, job.outside] = core.readConfigModel(job.config, job.name);
  else s = core.makeSpec(job.fields);
  if (job.sets) {
    const o = {};
    for (const [k, t] of Object.entries(job.sets)) o[k] = core.coerceText(k, t);
    s = core.withOverrides(s, o);
  }
  return s;
}
const out = input.jobs.map((job) => {
  try {
    if (job.kind === "spec") return {ok: spec(job)};
    if (job.kind === "values") {  // a spec's size and switch values (spec.toml's [values], [switches])
      const s = spec(job);
      return {ok: {spec: s, values: core.values(s, core.checkedOptions(core.defaultOptions()))}};
    }
    if (job.kind === "report") {
      const s = spec(job), r = core.report(s, job.options || {});
      return {ok: job.outside.length ? core.withParts(r, job.outside, job.part || "text") : r};
    }
    if (job.kind === "derive") {  // every figure's derivation: its result and the report's figure
      const s = spec(job), part = job.part || "text";
      let r = core.report(s, job.options || {});
      if (job.outside.length) r = core.withParts(r, job.outside, part);
      const figure = {"params.total": r.params.total, "params.active": r.params.active,
        "params.embedding": r.params.embedding, "params.non_embedding": r.params.non_embedding,
        "flops.forward_matmul": r.flops.forward_matmul, "flops.forward": r.flops.forward,
        "flops.training": r.flops.training, "flops.decode_per_token": r.flops.decode_per_token};
      for (const k of ["weights_bytes", "kv_cache_bytes", "recurrent_state_bytes", "activations_bytes", "training_bytes"])
        if (r.memory[k] !== undefined) figure[`memory.${k}`] = r.memory[k];
      if (r.per_rank) {  // the layout's figures, derived at the most-loaded stage
        for (const k of ["params", "weights_bytes", "gradients_bytes", "optimizer_bytes", "states_bytes", "activations_bytes", "kv_cache_bytes"])
          figure[`per_rank.${k}`] = r.per_rank[k];
        for (const [dim, c] of Object.entries(r.communication))
          for (const [k, x] of Object.entries(c)) figure[`communication.${dim}.${k}`] = x;
      }
      const stage = r.per_rank ? r.per_rank.stage : null;
      return {ok: Object.fromEntries(Object.entries(figure).map(([q, x]) => {
        const d = core.derivation(s, job.options || {}, q, job.outside, part, q.startsWith("per_rank.") || q.startsWith("communication.") ? stage : null);
        const rows = d.groups.flatMap(g => g.rows);
        const trees = [...rows.map(r => r.tree), ...d.extra.map(x => x.tree)];
        return [q, {figure: x, result: d.result, terms: rows.length + d.extra.length,
                    formula: trees.every(t => SYMCALC_TERMS.mathml(t).includes("<m")),
                    substituted: trees.every(t => [...SYMCALC_TERMS.names(t)].every(n => typeof d.symbols[n] === "bigint"))}];
      }))};
    }
    if (job.kind === "speed") {  // the page's how-fast figures, exact "p/q"
      const s = spec(job), opts = job.options || {}, r = core.report(s, opts);
      const kvAt = (n) => core.report(s, {...opts, seq_len: Number(n), context: null}).memory.kv_cache_bytes;
      const f = speed.figures(META.speed, r, kvAt, s, core.checkedOptions({...META.options.defaults, ...opts}), META.gpus[job.gpu]);
      if (!f) return {ok: null};
      const out = {};
      for (const [k, v] of Object.entries(f)) out[k] = Array.isArray(v) ? `${v[0]}/${v[1]}` : v;
      return {ok: out};
    }
    if (job.kind === "facts") return {ok: core.activationFacts(spec(job), job.dtype, job.batch)};
    if (job.kind === "int") return {ok: core.parseInt(job.field, job.text, !!job.zero)};
    throw new Error("unknown job " + job.kind);
  } catch (e) {
    if (e instanceof core.SymcalcError) return {error: e.message};
    return {crash: String(e && e.stack || e)};
  }
});
process.stdout.write(core.toJSON(out, 0));

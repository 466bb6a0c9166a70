// Runs the calculator page's core (symcalc/page/core.js with the generated evaluators) in
// Node for tests/test_page.py: reads {"meta": path, "jobs": [...]} on stdin, prints one JSON
// list of results ({"ok": value} or {"error": "field: rule"}), numbers exact.
"use strict";
const path = require("path");
const fs = require("fs");
const root = path.join(__dirname, "..", "symcalc", "page");
global.SYMCALC_GEN = require(path.join(root, "_generated.js"));
const core = require(path.join(root, "core.js"));
const input = JSON.parse(fs.readFileSync(0, "utf-8"));
core.init(core.parseJSON(fs.readFileSync(input.meta, "utf-8")));
function spec(job) {
  let s = job.preset ? core.presetSpec(job.preset) : job.config !== undefined ? core.readConfigText(job.config, job.name) : core.makeSpec(job.fields);
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
    if (job.kind === "report") return {ok: core.report(spec(job), job.options || {})};
    if (job.kind === "int") return {ok: core.parseInt(job.field, job.text, !!job.zero)};
    throw new Error("unknown job " + job.kind);
  } catch (e) {
    if (e instanceof core.SymcalcError) return {error: e.message};
    return {crash: String(e && e.stack || e)};
  }
});
process.stdout.write(core.toJSON(out, 0));

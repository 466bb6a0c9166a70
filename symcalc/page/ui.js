// symcalc calculator page: the interface. Reads SYMCALC_CORE (rules, report, family files)
// and SYMCALC_TERMS (the term table's evaluator); every figure it shows comes from core.report.
"use strict";
const SYMCALC_UI = (() => {
const C = SYMCALC_CORE;
let META = null;
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const FIELD_DEFAULT = (f) => f.default;
const group3 = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

// ---- options (the workload and conventions; shared by both models) ---------------------------
// [key in Options, label, kind, CLI flag, error field]
const OPTIONS = [
  ["batch", "batch", "int", "--batch", "batch"], ["seq_len", "seq-len", "int?", "--seq-len", "seq-len"],
  ["dec_seq_len", "dec-seq-len", "int?", "--dec-seq-len", "dec-seq-len"], ["context", "context", "int?", "--context", "context"],
  ["dtype", "dtype", "dtype", "--dtype", "dtype"], ["kv_dtype", "kv-dtype", "dtype", "--kv-dtype", "kv-dtype"],
  ["state_dtype", "state-dtype", "dtype", "--state-dtype", "state-dtype"],
  ["causal", "causal", "causal", "--causal", "causal"], ["recompute", "recompute", "recompute", "--recompute", "recompute"],
  ["activations", "activations", "activations", "--activations", "activations"],
  ["optimizer", "optimizer", "optimizer", "--optimizer", "optimizer"], ["mla_cache", "mla-cache", "mla_cache", "--mla-cache", "mla-cache"],
  ["zero", "zero", "zero", "--zero", "zero"], ["dp", "dp", "int", "--dp", "dp"], ["tp", "tp", "int", "--tp", "tp"],
  ["macs", "macs", "bool", "--macs", "macs"], ["nonmatmul", "nonmatmul", "bool", "--nonmatmul", "nonmatmul"],
  ["sequence_parallel", "sequence-parallel", "bool", "--sequence-parallel", "sequence-parallel"],
  // the rest of the parallel layout (docs/conventions.md): any of these adds the per-rank figures
  ["pp", "pp", "int", "--pp", "pp"], ["vpp", "vpp", "int", "--vpp", "vpp"],
  ["microbatches", "microbatches", "int", "--microbatches", "microbatches"],
  ["ep", "ep", "int", "--ep", "ep"], ["etp", "etp", "int?", "--etp", "etp"], ["cp", "cp", "int", "--cp", "cp"],
  ["cp_algorithm", "cp-algorithm", "cp_algorithm", "--cp-algorithm", "cp-algorithm"],
  ["tp_plan", "tp-plan", "tp_plan", "--tp-plan", "tp-plan"],
  ["distributed_optimizer", "distributed-optimizer", "bool", "--distributed-optimizer", "distributed-optimizer"],
  ["per_stage", "per-stage", "bool", "--per-stage", "per-stage"],
];
const state = {options: {}, gpu: "H100", panes: []};

function optionText(key) {
  const d = META.options.defaults[key];
  return d === null ? "" : typeof d === "boolean" ? d : String(d);
}
function readOptions() {  // commands.common.options_from, then Options.checked
  const o = {}, t = state.options;
  for (const [key, , kind, , field] of OPTIONS) {
    const text = key in t ? t[key] : optionText(key);
    if (kind === "bool") o[key] = text === true || text === "true";
    else if (kind === "int" || kind === "int?" || kind === "zero") o[key] = kind === "int?" && String(text).trim() === "" ? null : C.parseInt(field, text, kind === "zero");
    else o[key] = text;
  }
  return C.checkedOptions(o);
}

// ---- spec fields ---------------------------------------------------------------------------
function fieldKind(f) {
  if (f.choices) return "choice";
  const ch = META.spec.choices;
  if (f.name in ch) return "choice";
  if (f.name === "ssm_out_bias") return "tristate";
  return f.kind;
}
// implementation fields (symcalc/algebra/implementation.toml), edited as --set edits them
const IMPL_FIELDS = () => Object.entries(META.implementation.fields).map(([name, f]) => (
  {name, default: f.default, kind: f.kind === "bool" ? "flag" : f.kind, choices: f.kind === "choice" ? f.choices : null, impl: true}));
function specText(spec, name) {
  const x = !spec ? null : C.own(META.implementation.fields, name)
    ? (C.own(spec.implementation, name) ? spec.implementation[name] : META.implementation.fields[name].default)
    : spec[name];
  return x === null || x === undefined ? "" : String(x);
}

// ---- panes -----------------------------------------------------------------------------------
function newPane(source) { return {source, sets: {}, base: null, outside: [], part: "text", spec: null, error: "", report: null, v: null, open: new Set(), derive: new Set()}; }

function loadBase(pane) {
  pane.base = null; pane.error = ""; pane.outside = [];
  try {
    if (pane.source.preset) pane.base = C.presetSpec(pane.source.preset);
    else [pane.base, pane.outside] = C.readConfigModel(pane.source.config, pane.source.name || "config.json");
  } catch (e) { pane.error = message(e); }
}
function message(e) { return e instanceof C.SymcalcError ? e.message : `internal error: ${e && e.message || e}`; }

function paneHTML(i) {
  const presetOptions = Object.keys(META.presets).map(n => `<option value="${esc(n)}">${esc(n)}</option>`).join("");
  const base = state.panes[i].base;
  const fieldHTML = (f) => {
    const id = `f${i}-${f.name}`, err = `${id}-err`, kind = fieldKind(f);
    const meaning = (f.impl ? META.implementation.fields[f.name].meaning : SYMCALC_TERMS.table().symbols[f.name]) || f.name.replace(/_/g, " ");
    const lab = `<label for="${id}" title="${esc(meaning)}">${esc(f.name)}</label>`;
    if (kind === "flag") return `<div class="field check" data-field="${f.name}"><input type="checkbox" id="${id}" data-key="${f.name}" aria-describedby="${err}">${lab}<span class="err" id="${err}"></span></div>`;
    let control;
    if (kind === "choice") control = `<select id="${id}" data-key="${f.name}" aria-describedby="${err}">${(f.choices || META.spec.choices[f.name]).map(c => `<option value="${esc(c)}">${esc(c || "(default)")}</option>`).join("")}</select>`;
    else if (kind === "tristate") control = `<select id="${id}" data-key="${f.name}" aria-describedby="${err}"><option value="">(follows ssm_bias)</option><option>true</option><option>false</option></select>`;
    else control = `<input type="text" id="${id}" data-key="${f.name}" inputmode="${kind === "size" || kind === "count" ? "numeric" : "text"}" autocomplete="off" aria-describedby="${err}">`;
    return `<div class="field" data-field="${f.name}">${lab}${control}<span class="err" id="${err}"></span></div>`;
  };
  // the fields this model uses first; the absent sizes and unused switches folded below
  const all = META.spec.fields.filter(f => f.name !== "source");
  const used = (f) => !base || (f.kind === "size" || f.kind === "count" ? base[f.name] !== null && base[f.name] !== FIELD_DEFAULT(f) : f.kind === "flag" ? base[f.name] !== FIELD_DEFAULT(f) : true);
  const fields = all.filter(used).map(fieldHTML).join("");
  const more = all.filter(f => !used(f)).map(fieldHTML).join("");
  const impl = IMPL_FIELDS().map(fieldHTML).join("");
  return `<section class="pane" id="pane-${i}" aria-labelledby="pane-${i}-h">
  <h2 id="pane-${i}-h">Model ${"AB"[i]}</h2>
  <div class="row"><label for="preset-${i}">Preset</label><select id="preset-${i}"><option value="">(pasted config.json)</option>${presetOptions}</select>
  ${i ? `<button type="button" id="remove-${i}">Remove</button>` : ""}</div>
  <details id="paste-${i}"><summary>Paste a Hugging Face config.json</summary>
    <label for="config-${i}" class="muted">config.json text (read with symcalc's family files, in this page)</label>
    <textarea id="config-${i}" spellcheck="false"></textarea>
    <div class="row"><button type="button" id="read-${i}">Read config</button></div></details>
  ${state.panes[i].outside.length ? `<div class="row"><label for="part-${i}" title="--part: what of a multimodal checkpoint the parameter figures count">Part</label><select id="part-${i}"><option value="text">text: the language model (--part text)</option><option value="all">all: with the vision tower and projector (--part all)</option></select></div>` : ""}
  <div class="pane-error" id="error-${i}" role="alert"></div>
  <div class="pane-body">
  <div class="pane-fields"><details open id="fields-${i}"><summary>Sizes and switches</summary><p class="muted">Changes apply as <code>--set</code> would; an empty size is absent.</p><div class="grid">${fields}</div>
  <details id="more-${i}"><summary>Sizes and switches this model does not use</summary><div class="grid">${more}</div></details>
  <details id="impl-${i}"><summary>Implementation (what transformers' code keeps for backward)</summary><div class="grid">${impl}</div></details></details></div>
  <div id="results-${i}" class="pane-results" tabindex="-1"></div></div>
</section>`;
}

function renderPanes() {
  const host = $("panes");
  host.className = state.panes.length > 1 ? "two" : "";
  host.innerHTML = state.panes.map((_, i) => paneHTML(i)).join("");
  state.panes.forEach((pane, i) => wirePane(pane, i));
  $("compare").textContent = state.panes.length > 1 ? "Show one model" : "Compare with a second model";
}

function wirePane(pane, i) {
  const sel = $(`preset-${i}`);
  sel.value = pane.source.preset || "";
  if (pane.source.config !== undefined) $(`config-${i}`).value = pane.source.config;
  if (!pane.source.preset) $(`paste-${i}`).open = true;
  sel.addEventListener("change", () => guard(() => {
    if (!sel.value) { $(`paste-${i}`).open = true; $(`config-${i}`).focus(); return; }
    pane.source = {preset: sel.value}; pane.sets = {}; loadBase(pane); renderPanes(); updateAll(); $(`preset-${i}`).focus();
  }));
  $(`read-${i}`).addEventListener("click", () => guard(() => {
    pane.source = {config: $(`config-${i}`).value, name: "config.json"}; pane.sets = {};
    loadBase(pane); renderPanes(); updateAll();
  }));
  const part = $(`part-${i}`);
  if (part) { part.value = pane.part; part.addEventListener("change", () => guard(() => { pane.part = part.value; update(pane, i, false); })); }
  const rm = $(`remove-${i}`);
  if (rm) rm.addEventListener("click", () => guard(() => { state.panes.splice(i, 1); renderPanes(); updateAll(); }));
  for (const el of $(`pane-${i}`).querySelectorAll("[data-key]")) {
    const key = el.dataset.key;
    const onEdit = () => guard(() => {
      const text = el.type === "checkbox" ? String(el.checked) : el.value;
      // the preset's value typed back undoes the edit, unless other edits derive this field
      // anew (d_h follows d: typing gpt2's 64 after d = 640 keeps d_h = 64, not d / n_h)
      const baseText = specText(pane.base, key);
      const alone = Object.keys(pane.sets).every(k => k === key);
      if (text === baseText && alone) delete pane.sets[key]; else pane.sets[key] = text;
      update(pane, i, false);
    });
    el.addEventListener(el.tagName === "SELECT" || el.type === "checkbox" ? "change" : "input", onEdit);
  }
  $(`results-${i}`).addEventListener("click", (ev) => guard(() => {
    const b = ev.target.closest("button[data-derive]");
    if (b) { toggleDerivation(pane, i, b); return; }
    const c = ev.target.closest("button[data-copy]");
    if (c) copy($(c.dataset.copy).textContent);
  }));
  $(`results-${i}`).addEventListener("toggle", (ev) => { const d = ev.target; if (d.dataset && d.dataset.open) { if (d.open) pane.open.add(d.dataset.open); else pane.open.delete(d.dataset.open); } }, true);
}

function guard(fn) {  // nothing throws to the console: an unexpected error is shown in the page
  try { fn(); } catch (e) { $("status").textContent = message(e); }
}

function setFieldError(i, key, text) {
  const box = document.querySelector(`#pane-${i} [data-field="${key}"]`);
  if (!box) return false;
  box.classList.add("invalid");
  box.querySelector(".err").textContent = text;
  const input = box.querySelector("[data-key]");
  input.setAttribute("aria-invalid", "true");
  return true;
}
function clearErrors(i) {
  for (const box of document.querySelectorAll(`#pane-${i} .field.invalid`)) {
    box.classList.remove("invalid"); box.querySelector(".err").textContent = "";
    box.querySelector("[data-key]").removeAttribute("aria-invalid");
  }
  $(`error-${i}`).textContent = "";
}
function setOptionError(field, text) {
  const opt = OPTIONS.find(o => o[4] === field);
  const box = opt && $(`opt-${opt[0]}`) && $(`opt-${opt[0]}`).closest(".field");
  if (!box) return false;
  box.classList.add("invalid"); box.querySelector(".err").textContent = text;
  box.querySelector("input, select").setAttribute("aria-invalid", "true");
  return true;
}
function clearOptionErrors() {
  for (const box of document.querySelectorAll("#options .field.invalid")) {
    box.classList.remove("invalid"); box.querySelector(".err").textContent = "";
    box.querySelector("input, select").removeAttribute("aria-invalid");
  }
}

function fieldName(errField) {  // "--set d" or "num_hidden_layers (L)" -> the spec field
  const m = /^--set (\w+)$/.exec(errField) || /\((\w+)\)$/.exec(errField);
  return m ? m[1] : errField;
}

function computeSpec(pane) {
  const o = {};
  for (const [key, text] of Object.entries(pane.sets)) o[key] = text === "" ? null : C.coerceText(key, text);
  return Object.keys(o).length ? C.withOverrides(pane.base, o) : pane.base;
}

let optionsError = null;
function updateAll() {
  clearOptionErrors();
  optionsError = null;
  try { state.opts = readOptions(); } catch (e) { state.opts = null; optionsError = e; if (!setOptionError(e.field, message(e))) $("status").textContent = message(e); }
  state.panes.forEach((p, i) => update(p, i, false, true));
  saveHash();
}

function update(pane, i, reload, fromAll = false) {
  if (!fromAll) { updateAll(); return; }
  clearErrors(i);
  pane.spec = null; pane.report = null;
  if (pane.error) $(`error-${i}`).textContent = pane.error;
  if (pane.base) {
    try {
      pane.spec = computeSpec(pane);
    } catch (e) {
      if (!(e instanceof C.SymcalcError) || !setFieldError(i, fieldName(e.field), message(e))) $(`error-${i}`).textContent = message(e);
    }
  }
  if (pane.spec && state.opts) {
    try {
      const t0 = performance.now();
      const r = C.report(pane.spec, state.opts);
      pane.report = pane.outside.length ? C.withParts(r, pane.outside, pane.part) : r;
      pane.ms = performance.now() - t0;
    } catch (e) {
      if (!(e instanceof C.SymcalcError) || !setOptionError(e.field, message(e))) $(`error-${i}`).textContent = message(e);
    }
  }
  syncFields(pane, i);
  renderResults(pane, i);
}

function syncFields(pane, i) {  // inputs show the override as typed, else the spec's value
  const shown = pane.spec || pane.base;
  for (const el of $(`pane-${i}`).querySelectorAll("[data-key]")) {
    const key = el.dataset.key;
    const text = key in pane.sets ? pane.sets[key] : specText(shown, key);
    if (el.type === "checkbox") el.checked = text === "true";
    else if (document.activeElement !== el && el.value !== text) el.value = text;
  }
}

// ---- results ---------------------------------------------------------------------------------
const GB = 10n ** 9n, GIB = 2n ** 30n;
function decimal(n, d, places = 2) {  // n / d rounded half up to `places` decimals, exact
  const scale = 10n ** BigInt(places);
  const neg = n < 0n; if (neg) n = -n;
  const q = (n * scale * 2n + d) / (2n * d);
  const whole = q / scale, frac = String(q % scale).padStart(places, "0");
  return `${neg ? "-" : ""}${group3(whole)}.${frac}`;
}
function short(n, bytes = false) {  // 7.24 B, 1.23e21; bytes: 14.48 GB
  const units = bytes ? [[10n ** 12n, "TB"], [10n ** 9n, "GB"], [10n ** 6n, "MB"], [10n ** 3n, "kB"]]
    : [[10n ** 12n, "T"], [10n ** 9n, "B"], [10n ** 6n, "M"], [10n ** 3n, "K"]];
  if (n >= 10n ** 15n) { const s = n.toString(); return `${s[0]}.${s.slice(1, 3)}e${s.length - 1}`; }
  for (const [u, name] of units) if (n >= u) return `${decimal(n, u)} ${name}`;
  return String(n) + (bytes ? " B" : "");
}
const ROWS = [
  ["params", "params.total", "Parameters", r => r.params.total],
  ["params", "params.active", "Active parameters (per token)", r => r.params.active],
  ["params", "params.embedding", "Embedding parameters", r => r.params.embedding],
  ["params", "params.non_embedding", "Non-embedding parameters", r => r.params.non_embedding],
  ["flops", "flops.forward_matmul", "Forward matmul FLOPs", r => r.flops.forward_matmul],
  ["flops", "flops.forward", "Forward FLOPs (conventions)", r => r.flops.forward],
  ["flops", "flops.training", "Training FLOPs per step", r => r.flops.training],
  ["flops", "flops.decode_per_token", "Decode FLOPs per token", r => r.flops.decode_per_token],
  ["memory", "memory.weights_bytes", "Weights", r => r.memory.weights_bytes],
  ["memory", "memory.kv_cache_bytes", "KV cache", r => r.memory.kv_cache_bytes],
  ["memory", "memory.recurrent_state_bytes", "Recurrent state", r => r.memory.recurrent_state_bytes],
  ["memory", "memory.activations_bytes", "Activations (training)", r => r.memory.activations_bytes],
  ["memory", "memory.training_bytes", "Training state per rank", r => r.memory.training_bytes],
  // the layout's most-loaded rank (--tp --pp --ep --cp --dp --zero ...): the same rows, per stage
  ["count", "per_rank.params", "Parameters per rank", r => r.per_rank && r.per_rank.params],
  ["memory", "per_rank.weights_bytes", "Weights per rank", r => r.per_rank && r.per_rank.weights_bytes],
  ["memory", "per_rank.gradients_bytes", "Gradients per rank", r => r.per_rank && r.per_rank.gradients_bytes],
  ["memory", "per_rank.optimizer_bytes", "Optimizer state per rank", r => r.per_rank && r.per_rank.optimizer_bytes],
  ["memory", "per_rank.states_bytes", "Model states per rank", r => r.per_rank && r.per_rank.states_bytes],
  ["memory", "per_rank.activations_bytes", "Activations per rank", r => r.per_rank && r.per_rank.activations_bytes],
  ["memory", "per_rank.kv_cache_bytes", "KV cache per rank", r => r.per_rank && r.per_rank.kv_cache_bytes],
  ["memory", "per_rank.peak_bytes", "Training peak per rank (states + activations)", r => r.per_rank && r.per_rank.peak_bytes, false],
  ["count", "communication.tp.forward_allreduce_count", "TP all-reduces per forward", r => r.communication && r.communication.tp.forward_allreduce_count],
  ...["tp", "pp", "dp", "ep", "cp"].flatMap(dim => [
    ["memory", `communication.${dim}.step_bytes`, `${dim.toUpperCase()} payload per step`, r => r.communication && r.communication[dim].step_bytes],
    ["memory", `communication.${dim}.step_wire_bytes`, `${dim.toUpperCase()} bytes sent per step`, r => r.communication && r.communication[dim].step_wire_bytes],
    ["memory", `communication.${dim}.decode_bytes_per_token`, `${dim.toUpperCase()} payload per decoded token`, r => r.communication && r.communication[dim].decode_bytes_per_token],
  ]),
];

// the figures a report has (a row whose figure is undefined is not shown)
function shownRows(r) { return ROWS.filter(([, , , f]) => f(r) !== undefined); }
function renderResults(pane, i) {
  const host = $(`results-${i}`);
  const r = pane.report;
  if (!r) { host.innerHTML = `<p class="muted">No figures until the input above is fixed.</p>`; return; }
  const rows = shownRows(r);
  let html = `<h3>Figures <span class="muted">(${esc(r.model)}, ${esc(r.family)}; batch ${r.flops.batch}, seq-len ${r.flops.seq_len}; computed in ${pane.ms.toFixed(2)} ms)</span></h3>`;
  html += `<div class="scroll"><table class="totals"><thead><tr><th scope="col">Figure</th><th scope="col">Exact</th><th scope="col" class="short">Short</th><th scope="col">GB, GiB</th><th scope="col"><span class="sr">Derivation</span></th></tr></thead><tbody>`;
  for (const [kind, q, label, f, derivable = true] of rows) {
    const x = f(r), bytes = kind === "memory";
    const open = pane.derive.has(q);
    html += `<tr><th scope="row">${esc(label)}</th><td class="num" data-q="${q}">${group3(x)}</td><td class="num short">${short(x, bytes)}</td>`
      + `<td class="num">${bytes ? `${decimal(x, GB)}&nbsp;GB<br>${decimal(x, GIB)}&nbsp;GiB` : ""}</td>`
      + `<td>${derivable ? `<button type="button" data-derive="${q}" aria-expanded="${open}" aria-controls="${derivationId(i, q)}">${open ? "hide" : "derive"}</button>` : ""}</td></tr>`;
  }
  html += `</tbody></table></div>`;
  if (r.per_rank) html += rankHTML(r);
  // open derivations below the table (a wide formula scrolls in its own box)
  html += `<div id="derivations-${i}">` + rows.filter(([, q]) => pane.derive.has(q)).map(row => derivationHTML(pane, i, row)).join("") + `</div>`;
  if (r.memory.decode_state) html += `<p class="muted">Decode state: ${group3(r.memory.decode_state.total_bytes)} bytes in all; ${group3(r.memory.decode_state.per_sequence_bytes)} per sequence; ${group3(r.memory.decode_state.per_token_bytes)} per cached token.</p>`;
  if (r.parts) html += partsHTML(r);
  html += fitsHTML(r);
  html += speedHTML(pane, r);
  html += barsHTML("Parameters by part", topLevel(r.params.breakdown), null);
  html += breakdownHTML(pane, "params", "Parameter breakdown", r.params.breakdown);
  html += breakdownHTML(pane, "layer", "One layer", r.params.per_layer);
  html += breakdownHTML(pane, "flops", "Forward matmul FLOPs breakdown (full scores)", r.flops.breakdown);
  html += `<details data-open="conv"${pane.open.has("conv") ? " open" : ""}><summary>Conventions</summary><table><tbody>`
    + Object.entries({...r.flops.conventions, ...r.memory.conventions}).map(([k, t]) => `<tr><th scope="row">${esc(k)}</th><td>${esc(t)}</td></tr>`).join("") + `</tbody></table></details>`;
  const cli = cliCommand(pane);
  html += `<h3>Command line</h3><div class="cli" id="cli-${i}">${esc(cli)}</div><div class="row"><button type="button" data-copy="cli-${i}">Copy command</button></div>`;
  host.innerHTML = html;
}

// the element id of figure q's derivation in pane i (the derive button's aria-controls)
function derivationId(i, q) { return `d${i}-${q.replace(/\./g, "-")}`; }
function derivationHTML(pane, i, [, q, label, f]) {
  return `<section class="derivation" id="${derivationId(i, q)}" aria-label="Derivation of ${esc(label)}"><h3>${esc(label)}</h3>${derivation(pane, q, f(pane.report))}</section>`;
}
// a derive button opens or closes its own derivation in place, in the figures' order; the
// rest of the results is not drawn again (redrawing every open derivation on each click made
// opening n of them cost n² formula layouts)
function toggleDerivation(pane, i, button) {
  const q = button.dataset.derive, r = pane.report;
  const open = !pane.derive.has(q);
  if (open) pane.derive.add(q); else pane.derive.delete(q);
  button.setAttribute("aria-expanded", String(open));
  button.textContent = open ? "hide" : "derive";
  const box = $(`derivations-${i}`);
  if (!open) { const old = $(derivationId(i, q)); if (old) old.remove(); return; }
  const rows = shownRows(r);
  const at = rows.findIndex(([, x]) => x === q);
  const next = rows.slice(at + 1).map(([, x]) => $(derivationId(i, x))).find(Boolean) || null;
  box.insertBefore(document.createRange().createContextualFragment(derivationHTML(pane, i, rows[at])), next);
}
function rankHTML(r) {  // the layout and its conventions; every stage with --per-stage
  const lay = r.per_rank.layout, conv = r.per_rank.conventions;
  let html = `<p class="muted" id="rank-note">Per rank: tp ${lay.tp} x pp ${lay.pp} x cp ${lay.cp} x dp ${lay.dp} = ${lay.ranks} ranks (ep ${lay.ep}); the most-loaded rank is on stage ${r.per_rank.stage}. `
    + Object.values(conv).map(esc).join(" ") + `</p>`;
  if (r.per_stage) html += `<div class="scroll"><table class="stages"><thead><tr><th scope="col">Stage</th><th scope="col">Parameters</th><th scope="col">Training peak</th><th scope="col">PP bytes per step</th></tr></thead><tbody>`
    + r.per_stage.map(s => `<tr><th scope="row">${s.stage}</th><td class="num">${group3(s.params)}</td><td class="num">${group3(s.peak_bytes)}</td><td class="num">${group3(s.communication.pp.step_bytes)}</td></tr>`).join("") + `</tbody></table></div>`;
  return html;
}
function partsHTML(r) {  // a multimodal config: what the checkpoint holds besides its language model
  const rows = Object.entries(r.parts).map(([role, p]) => `<tr><th scope="row">${esc(role.replace(/_/g, " "))}</th><td>${esc(p.description)}${p.kind ? ` <span class="muted">(${esc(p.kind)}; source ${esc(p.source)})</span>` : ""}</td>`
    + `<td class="num" data-part="${esc(role)}">${p.params === null ? "unknown" : group3(p.params)}</td><td>${p.included ? "counted" : "left out"}${p.why ? `: ${esc(p.why)}` : ""}</td></tr>`).join("");
  const left = r.left_out.length ? `Left out of the figures: ${r.left_out.map(x => esc(x.replace(/_/g, " "))).join(", ")} (choose Part: all to count their parameters). ` : "";
  return `<h3>Parts of this checkpoint</h3><div class="scroll"><table class="parts"><tbody>${rows}</tbody></table></div><p class="muted" id="left-out">${left}${esc(r.parts_note)}.</p>`;
}
function topLevel(bd) { return Object.entries(bd).filter(([p]) => !p.includes("/")); }
function barsHTML(title, items, limit) {
  const max = items.reduce((a, [, x]) => (x > a ? x : a), limit || 0n);
  if (!max) return "";
  const pct = (x) => Number((x * 10000n) / max) / 100;
  return `<h3>${esc(title)}</h3><div class="bars" role="list">` + items.map(([name, x]) =>
    `<div class="bar" role="listitem"><span>${esc(name)}</span><span class="track" title="${esc(name)}: ${group3(x)}"><span class="fill${limit && x > limit ? " over" : ""}" style="width:${pct(x)}%"></span>${limit ? `<span class="gpu-line" style="left:${pct(limit)}%"></span>` : ""}</span></div>`).join("") + `</div>`;
}
function fitsHTML(r) {
  const gpu = C.ownGet(META.gpus, state.gpu);
  const mem = r.memory;
  const items = [["weights", mem.weights_bytes], ["KV cache", mem.kv_cache_bytes]];
  if (mem.recurrent_state_bytes !== undefined) items.push(["recurrent state", mem.recurrent_state_bytes]);
  items.push(["activations", mem.activations_bytes], ["training state", mem.training_bytes]);
  let html = "";
  if (gpu) {
    const f = C.fits(mem, gpu);
    html += `<h3>Fits on one ${esc(gpu.name)} (${esc(gpu.memory)} = ${group3(gpu.memory_bytes)} bytes)?</h3><div class="scroll"><table><tbody>`
      + Object.entries(f.budgets).map(([b, n]) => `<tr><th scope="row">${esc(b)}</th><td class="num">${group3(n)} B</td><td class="num">${decimal(n, GB)} GB</td><td class="num">${decimal(n, GIB)} GiB</td><td class="${f.fits[b] ? "fit-yes" : "fit-no"}" data-fit="${b}">${f.fits[b] ? "fits" : "does not fit"}</td></tr>`).join("")
      + `</tbody></table></div>`;
  }
  return html + barsHTML(gpu ? `Memory (green line: one ${gpu.name})` : "Memory", items, gpu ? BigInt(gpu.memory_bytes) : null);
}
// ---- how fast: the roofline of prefill and decode (SYMCALC_SPEED walks symcalc's rules) ------
function speedFigures(pane, r) {
  const gpu = C.ownGet(META.gpus, state.gpu);
  if (!gpu || !META.speed) return null;
  const kvAt = (s) => C.report(pane.spec, {...state.opts, seq_len: Number(s), context: null}).memory.kv_cache_bytes;
  try { return SYMCALC_SPEED.figures(META.speed, r, kvAt, pane.spec, state.opts, gpu); } catch (e) { return null; }
}
function seconds(x) {
  const v = SYMCALC_SPEED.toNumber(x);
  return v >= 1 ? `${v.toFixed(3)} s` : `${(v * 1000).toFixed(3)} ms`;
}
function rooflineSVG(f, gpu) {  // log-log: intensity (FLOPs/byte) against attainable FLOP/s
  const N = SYMCALC_SPEED.toNumber, ridge = N(f.ridge_point), peak = N(f.peak), bw = N(f.bandwidth);
  const xs = [N(f.prefill_intensity), N(f.decode_intensity), ridge];
  const lo = Math.min(...xs) / 4, hi = Math.max(...xs) * 4, ylo = lo * bw / 2, yhi = peak * 2;
  const W = 420, H = 260, m = 40;
  const X = (x) => m + (W - 2 * m) * (Math.log(x) - Math.log(lo)) / (Math.log(hi) - Math.log(lo));
  const Y = (y) => H - m - (H - 2 * m) * (Math.log(y) - Math.log(ylo)) / (Math.log(yhi) - Math.log(ylo));
  const roof = [[lo, lo * bw], [ridge, peak], [hi, peak]].map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(" ");
  const dot = (x, y, cls, label) => `<circle class="${cls}" cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="5"><title>${esc(label)}</title></circle>`;
  return `<svg class="roofline" role="img" viewBox="0 0 ${W} ${H}" width="100%" aria-label="Roofline of ${esc(gpu.name)}">`
    + `<polyline class="roof" points="${roof}" fill="none" stroke="currentColor" stroke-width="2"/>`
    + dot(N(f.prefill_intensity), N(f.prefill_attainable), "pt-prefill", `prefill: ${N(f.prefill_intensity).toFixed(1)} FLOPs/byte`)
    + dot(N(f.decode_intensity), N(f.decode_attainable), "pt-decode", `decode: ${N(f.decode_intensity).toFixed(1)} FLOPs/byte`)
    + `<text x="${W / 2}" y="${H - 8}" text-anchor="middle" font-size="11">arithmetic intensity (FLOPs per byte, log)</text>`
    + `<text x="12" y="${H / 2}" transform="rotate(-90 12 ${H / 2})" text-anchor="middle" font-size="11">attainable FLOP/s (log)</text>`
    + `<text x="${X(ridge).toFixed(1)}" y="${(Y(peak) - 8).toFixed(1)}" text-anchor="middle" font-size="11">ridge ${ridge.toFixed(1)}</text></svg>`;
}
function speedHTML(pane, r) {
  const gpu = C.ownGet(META.gpus, state.gpu);
  if (!gpu) return "";
  const f = speedFigures(pane, r);
  if (!f) return `<p class="muted">How fast: not shown for this model or dtype on the page (symcalc report --gpu gives it).</p>`;
  const N = SYMCALC_SPEED.toNumber;
  const row = (name, p, tokens) => `<tr><th scope="row">${name}</th><td class="num" data-speed="${p}_seconds">${seconds(f[`${p}_seconds`])}</td>`
    + `<td class="num">${N(f[`${p}_tokens_per_second`]).toFixed(1)}</td><td class="num" data-speed="${p}_intensity">${N(f[`${p}_intensity`]).toFixed(1)}</td>`
    + `<td>${f[`${p}_compute_bound`][0] === 1n ? "compute" : "memory"}</td></tr>`;
  return `<h3>How fast on one ${esc(gpu.name)} (${esc(f.dtype)} peak; lower bounds: roofline)</h3><div class="scroll"><table><thead><tr><th scope="col">Phase</th><th scope="col">Time</th><th scope="col">Tokens/s</th><th scope="col">FLOPs/byte</th><th scope="col">Bound</th></tr></thead><tbody>`
    + row("prefill (time to first token)", "prefill") + (pane.spec.family === "encoder" ? "" : row("decode, per token", "decode"))
    + `</tbody></table></div><p class="muted">Ridge point ${N(f.ridge_point).toFixed(1)} FLOPs/byte: above it compute bounds a phase, below it memory does.</p>`
    + rooflineSVG(f, gpu);
}
function breakdownHTML(pane, key, title, bd) {
  const rows = Object.entries(bd).map(([p, x]) => `<tr><td style="padding-left:${0.4 + 1.1 * (p.split("/").length - 1)}rem">${esc(p.split("/").pop())}</td><td class="num">${group3(x)}</td></tr>`).join("");
  return `<details data-open="${key}"${pane.open.has(key) ? " open" : ""}><summary>${esc(title)}</summary><div class="scroll"><table><tbody>${rows}</tbody></table></div></details>`;
}

// ---- derivations: the terms that are on, numbers substituted, the result ----------------------
function derivation(pane, q, value) {
  const staged = q.startsWith("per_rank.") || q.startsWith("communication.");
  const d = C.derivation(pane.spec, state.opts, q, pane.outside, pane.part, staged ? pane.report.per_rank.stage : null);
  const T = SYMCALC_TERMS;
  const frac = (n, den) => (den === 1n ? `<mn>${group3(n)}</mn>` : `<mfrac><mn>${group3(n)}</mn><mn>${group3(den)}</mn></mfrac>`);
  const row = (r, v) => (r.den === 1n ? T.mathml(r.tree, v) : `<mfrac>${T.mathml(r.tree, v)}<mn>${group3(r.den)}</mn></mfrac>`);
  const group = (g, v) => {
    const body = g.rows.map(r => row(r, v)).join("<mo>+</mo>") || "<mn>0</mn>";
    const one = g.numerator === 1n && g.denominator === 1n;
    return (one ? "" : `${frac(g.numerator, g.denominator)}<mo>&#xB7;</mo>`) + `<mrow><mo>(</mo>${body}<mo>)</mo></mrow>`;
  };
  // each set at its own sizes (a per-rank figure's sets may be taken at a view: the stage's
  // layers, the rank's heads, s/c tokens, one expert-parallel rank's experts)
  const sum = (v) => d.groups.map((g, k) => (k ? "<mo>+</mo>" : "") + group(g, v && g.view ? g.sizes : v)).join("") || "<mn>0</mn>";
  const extra = (v) => d.extra.map(x => `<mo>+</mo><mrow><mo>(</mo>${T.mathml(x.tree, v)}<mo>)</mo></mrow>`).join("");
  const name = `<mtext>${esc(q)}</mtext>`;
  const used = Object.keys(d.symbols).sort();
  const meaning = (n) => (SYMCALC_TERMS.table().symbols[n] || "") || (n.startsWith("v_") ? "a size of the vision tower or projector (symcalc.algebra.vision)" : "");
  let html = `<p class="muted">Formula (each term of symcalc's table that does not vanish for this model and these options${d.extra.length ? `, plus the ${d.extra.map(x => esc(x.description)).join(" and ")} (--part all)` : ""}):</p>`;
  html += `<math display="block" data-step="formula"><mrow>${name}<mo>=</mo>${sum(null)}${extra(null)}</mrow></math>`;
  const views = d.groups.filter(g => g.view);
  if (views.length) {
    const table = SYMCALC_TERMS.table().views;
    const seen = new Set();
    html += `<p class="muted">Views (sizes substituted before a set is summed, on stage ${d.stage}): `
      + views.filter(g => !seen.has(g.view) && seen.add(g.view)).map(g => `${esc(g.view)}: ` + Object.keys(table[g.view]).filter(k => k in g.sizes)
        .map(k => `${esc(k)} = ${group3(g.sizes[k])}`).join(", ")).join("; ") + `</p>`;
  }
  html += `<p class="muted">Numbers substituted:</p><math display="block" data-step="substituted"><mrow><mo>=</mo>${sum(d.symbols)}${extra(d.symbols)}</mrow></math>`;
  const exact = d.numerator % d.den === 0n;
  html += `<p>Result: <strong data-step="result">${group3(d.result)}</strong>${exact ? "" : " (rounded up to a whole number)"}${d.extra.length ? " (the language model's figure plus the parts above)" : ""}</p>`;
  const terms = d.groups.flatMap(g => g.rows.map(r => `<tr><td>${esc(r.path)}</td><td>${esc(r.source)}</td><td class="num">${group3(r.den === 1n ? r.value : T.cdiv(r.value, r.den))}</td><td>${esc(r.choice)}</td></tr>`));
  html += `<details><summary>Terms</summary><div class="scroll"><table><tbody>${terms.join("")}</tbody></table></div></details>`;
  html += `<details><summary>Symbols</summary><table><tbody>${used.map(n => `<tr><th scope="row">${esc(n)}</th><td class="num">${group3(d.symbols[n])}</td><td>${esc(meaning(n))}</td></tr>`).join("")}</tbody></table></details>`;
  return html;
}

// ---- command line, permalink, copy -----------------------------------------------------------
function shellQuote(s) { return /^[A-Za-z0-9_.,:=\/+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`; }
function cliCommand(pane) {
  const parts = ["symcalc", "report", shellQuote(pane.source.preset || "config.json")];
  for (const [k, t] of Object.entries(pane.sets)) if (t !== "") parts.push("--set", shellQuote(`${k}=${t}`));
  if (pane.outside.length && pane.part === "all") parts.push("--part", "all");
  for (const [key, , kind, flag] of OPTIONS) {
    if (!(key in state.options)) continue;
    const t = state.options[key];
    if (kind === "bool") { if (t === true || t === "true") parts.push(flag); continue; }
    if (String(t) !== optionText(key) && String(t).trim() !== "") parts.push(flag, shellQuote(String(t)));
  }
  if (state.gpu) parts.push("--gpu", shellQuote(state.gpu));
  parts.push("--json");
  return parts.join(" ");
}
function copy(text) {
  const done = () => { $("status").textContent = "Copied."; };
  const fallback = () => {
    const ta = document.createElement("textarea"); ta.value = text; document.body.appendChild(ta); ta.select();
    try { document.execCommand("copy"); done(); } catch (e) { $("status").textContent = "Select the text and copy it."; }
    ta.remove();
  };
  try { if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, fallback); else fallback(); } catch (e) { fallback(); }
}
function encodeState() {
  const s = {o: state.options, g: state.gpu, m: state.panes.map(p => ({s: p.source, e: p.sets, p: p.part}))};
  const bytes = new TextEncoder().encode(JSON.stringify(s));
  let bin = ""; for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function decodeState(text) {
  const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, c => c.charCodeAt(0))));
}
function readState(text) {  // a permalink's state, checked: anything else is refused whole
  const s = decodeState(text);
  const isObj = (x) => x !== null && typeof x === "object" && !Array.isArray(x);
  if (!isObj(s) || !Array.isArray(s.m) || !s.m.length) throw new Error("not a symcalc permalink");
  const texts = (o) => Object.fromEntries(Object.entries(isObj(o) ? o : {})
    .filter(([k, v]) => typeof v === "string" || typeof v === "boolean"));
  const panes = s.m.slice(0, 2).map((m) => {
    const src = isObj(m) && isObj(m.s) ? m.s : null;
    let source;
    if (src && typeof src.preset === "string") source = {preset: src.preset};
    else if (src && typeof src.config === "string")
      source = {config: src.config, name: typeof src.name === "string" ? src.name : "config.json"};
    else throw new Error("a model of the permalink names no preset and no config.json");
    return {s: source, e: Object.fromEntries(Object.entries(texts(m.e)).filter(([, v]) => typeof v === "string")),
            p: m.p === "all" ? "all" : "text"};
  });
  const options = Object.fromEntries(Object.entries(texts(s.o)).filter(([k]) => OPTIONS.some(([key]) => key === k)));
  return {m: panes, o: options, g: typeof s.g === "string" ? s.g : undefined};
}
function saveHash() { try { history.replaceState(null, "", "#s=" + encodeState()); } catch (e) { /* file:// without history: the permalink button still works */ } }
function permalink() { return location.href.split("#")[0] + "#s=" + encodeState(); }

// ---- start -----------------------------------------------------------------------------------
function optionsHTML() {
  const sel = (key, items) => `<select id="opt-${key}">${items.map(x => `<option value="${esc(x)}">${esc(x)}</option>`).join("")}</select>`;
  const dtypes = `<datalist id="dtypes">${Object.keys(META.options.dtype_bytes).map(d => `<option value="${d}">`).join("")}<option value="bits3"></datalist>`;
  return dtypes + OPTIONS.map(([key, label, kind]) => {
    let control;
    if (kind === "bool") return `<div class="field check"><input type="checkbox" id="opt-${key}"><label for="opt-${key}">${label}</label><span class="err"></span></div>`;
    if (kind in META.options.choices) control = sel(key, META.options.choices[kind]);
    else if (kind === "zero") control = sel(key, ["0", "1", "2", "3"]);
    else control = `<input type="text" id="opt-${key}" autocomplete="off" ${kind === "dtype" ? 'list="dtypes"' : 'inputmode="numeric"'} placeholder="${kind === "int?" ? "default" : ""}">`;
    return `<div class="field"><label for="opt-${key}">${label}</label>${control}<span class="err"></span></div>`;
  }).join("");
}
function start() {
  META = C.meta();
  let restored = null;
  let unread = "";
  try { if (location.hash.startsWith("#s=")) restored = readState(location.hash.slice(3)); } catch (e) {
    restored = null; unread = `The permalink could not be read (${e && e.message || e}); showing the default model.`;
  }
  const initial = restored ? restored.m.map(m => Object.assign(newPane(m.s), {sets: m.e || {}, part: m.p === "all" ? "all" : "text"}))
    : (META.initial.length ? META.initial : [{preset: "mistral-7b"}]).map(m => newPane(m.preset ? {preset: m.preset} : {config: m.config, name: m.name}));
  state.panes = initial.slice(0, 2);
  if (restored) { state.options = restored.o || {}; state.gpu = restored.g === undefined ? "H100" : restored.g; }
  $("options").innerHTML = optionsHTML();
  for (const [key, , kind] of OPTIONS) {
    const el = $(`opt-${key}`);
    const t = key in state.options ? state.options[key] : optionText(key);
    if (kind === "bool") el.checked = t === true || t === "true"; else el.value = String(t);
    el.addEventListener(kind === "bool" || el.tagName === "SELECT" ? "change" : "input", () => guard(() => {
      state.options[key] = kind === "bool" ? el.checked : el.value; updateAll();
    }));
  }
  const gpu = $("gpu");
  gpu.innerHTML = `<option value="">(none)</option>` + Object.values(META.gpus).map(g => `<option value="${esc(g.name)}">${esc(g.name)} (${esc(g.memory)})</option>`).join("");
  gpu.value = state.gpu || "";
  gpu.addEventListener("change", () => guard(() => { state.gpu = gpu.value; updateAll(); }));
  $("compare").addEventListener("click", () => guard(() => {
    if (state.panes.length > 1) state.panes.splice(1); else { const p = newPane({preset: "llama-2-7b"}); loadBase(p); state.panes.push(p); }
    renderPanes(); updateAll();
  }));
  $("permalink").addEventListener("click", () => guard(() => copy(permalink())));
  state.panes.forEach(loadBase);
  renderPanes();
  updateAll();
  if (unread) $("status").textContent = unread;
}
return {start, state, updateAll, cliCommand: (i) => cliCommand(state.panes[i]), encodeState};
})();

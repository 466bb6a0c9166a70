// symcalc calculator page, the part without a document: specs and their rules, the values the
// generated evaluators read, the report object, and the family files' expression language.
// Each function follows the Python function of the same name (named in its comment); the
// tests run both on every preset, drawn models and every tests/families config and compare.
// Needs SYMCALC_TERMS (terms.js, the term table's evaluator) and META (the data symcalc page embeds).
"use strict";
const SYMCALC_CORE = (() => {
let META = null;
let FAMILIES_LOADER = null;  // the page parses the family files on first use (a pasted config)
function init(meta, familiesLoader = null) { META = meta; FAMILIES_LOADER = familiesLoader; FIELD_DEFAULTS = Object.fromEntries(meta.spec.fields.map(f => [f.name, f.default])); }
let FIELD_DEFAULTS = {};

class SymcalcError extends Error {
  constructor(field, rule) { super(`${field}: ${rule}`); this.field = field; this.rule = rule; }
}

// ---- Python values: floats are kept apart from integers (2.0 is not a size) ------------------
class PyFloat { constructor(x) { this.x = x; } }
const isFloat = v => v instanceof PyFloat;
// a key the user typed (a --set field, a preset or accelerator name, a permalink's) looked up
// only among an object's own keys: "__proto__", "constructor" or "toString" find nothing
const own = (obj, key) => obj !== null && obj !== undefined && Object.prototype.hasOwnProperty.call(obj, key);
const ownGet = (obj, key) => (own(obj, key) ? obj[key] : undefined);
const isInt = v => (typeof v === "number" && Number.isInteger(v)) || typeof v === "bigint";
const isNumber = v => isInt(v) || isFloat(v);
const num = v => isFloat(v) ? v.x : Number(v);

function floatRepr(x) {  // Python's repr of a float
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mant, expText] = x.toExponential().split("e");
  const exp = Number(expText);
  const digits = mant.replace("-", "").replace(".", "");
  const sign = x < 0 ? "-" : "";
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}.${frac || "0"}`;
}

function strRepr(s) {  // Python's repr of a str
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else out += ch;
  }
  return out + quote;
}

function repr(v) {  // Python's repr of a JSON value
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (isFloat(v)) return floatRepr(v.x);
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (typeof v === "string") return strRepr(v);
  if (Array.isArray(v)) return "[" + v.map(repr).join(", ") + "]";
  return "{" + Object.entries(v).map(([k, x]) => `${strRepr(k)}: ${repr(x)}`).join(", ") + "}";
}
const r60 = v => repr(v).slice(0, 60);  // {value!r:.60}
const thousands = n => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

// JSON with Python's number types: integers exact (BigInt when past 2^53), floats as PyFloat.
function parseJSON(text) {
  let i = 0;
  const fail = (what) => { throw new SyntaxError(what); };
  const ws = () => { while (i < text.length && " \t\n\r".includes(text[i])) i++; };
  function value() {
    ws();
    const c = text[i];
    if (c === "{") {
      i++; const out = {}; ws();
      if (text[i] === "}") { i++; return out; }
      for (;;) {
        ws(); if (text[i] !== '"') fail(`Expecting property name enclosed in double quotes at char ${i}`);
        const k = string(); ws();
        if (text[i] !== ":") fail(`Expecting ':' delimiter at char ${i}`);
        i++; out[k] = value(); ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "}") { i++; return out; }
        fail(`Expecting ',' delimiter at char ${i}`);
      }
    }
    if (c === "[") {
      i++; const out = []; ws();
      if (text[i] === "]") { i++; return out; }
      for (;;) {
        out.push(value()); ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "]") { i++; return out; }
        fail(`Expecting ',' delimiter at char ${i}`);
      }
    }
    if (c === '"') return string();
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m && m[0]) {
      i += m[0].length;
      if (m[1] || m[2]) return new PyFloat(Number(m[0]));
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    for (const [w, v] of [["true", true], ["false", false], ["null", null],
                          ["NaN", new PyFloat(NaN)], ["Infinity", new PyFloat(Infinity)],
                          ["-Infinity", new PyFloat(-Infinity)]]) {
      if (text.startsWith(w, i)) { i += w.length; return v; }
    }
    fail(`Expecting value at char ${i}`);
  }
  function string() {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') { if (text[i] === "\\") i++; i++; }
    if (i >= text.length) fail(`Unterminated string starting at char ${start}`);
    i++;
    return JSON.parse(text.slice(start, i));
  }
  const out = value(); ws();
  if (i < text.length) fail(`Extra data at char ${i}`);
  return out;
}

// ---- numbers as typed (symcalc.algebra.spec.parse_int) -------------------------------------
const INT_TEXT = /^(?:[0-9]+|[0-9]{1,3}(?:_[0-9]{3})+|[0-9]{1,3}(?:,[0-9]{3})+)$/;
function checkLimit(field, value) {
  const big = BigInt(value);
  if (big > BigInt(META.spec.size_limit)) {
    const shown = big < 10n ** 30n ? thousands(big)
      : `a number of about ${thousands(Math.floor(big.toString(2).length * 0.30103) + 1)} digits`;
    throw new SymcalcError(field, `must be at most ${META.spec.size_limit_text} (got ${shown})`);
  }
}
function parseInt_(field, text, zero = false) {
  const raw = String(text).trim();
  const what = zero ? "a whole number, zero or more" : "a positive integer";
  if (!INT_TEXT.test(raw))
    throw new SymcalcError(field, `must be ${what}, digits optionally grouped by threes with _ or , (got ${r60(raw)})`);
  const digits = raw.replace(/[_,]/g, "").replace(/^0+/, "") || "0";
  if (digits.length > String(META.spec.size_limit).length)
    throw new SymcalcError(field, `must be at most ${META.spec.size_limit_text} (got a number of ${thousands(digits.length)} digits)`);
  const value = Number(digits);
  if (value === 0 && !zero) throw new SymcalcError(field, `must be a positive integer (got ${repr(raw)})`);
  checkLimit(field, value);
  return value;
}

// ---- specs (symcalc.algebra.spec.make_spec and its rules) ----------------------------------
const S = () => META.spec;
const has = (v, f) => v[f] !== undefined && v[f] !== null;
const get = (v, f, dflt = null) => (v[f] === undefined ? dflt : v[f]);

function positiveInt(field, value) {
  if (typeof value === "boolean" || !isInt(value)) throw new SymcalcError(field, `must be a positive integer (got ${r60(value)})`);
  if (value <= 0) throw new SymcalcError(field, `must be a positive integer (got ${value})`);
  checkLimit(field, value);
  return Number(value);
}
function count(field, value) {
  if (typeof value === "boolean" || !isInt(value) || value < 0)
    throw new SymcalcError(field, `must be a whole number, zero or more (got ${r60(value)})`);
  checkLimit(field, value);
  return Number(value);
}
function choice(field, value, allowed) {
  if (!allowed.includes(value)) throw new SymcalcError(field, `must be one of ${allowed.join(", ")} (got ${repr(value)})`);
}
function flag(field, value) {
  if (typeof value !== "boolean") throw new SymcalcError(field, `must be true or false (got ${repr(value)})`);
}
function parseBias(text) {  // spec.parse_bias: the kind check of attention_bias
  try { return new Set(FUNCTIONS.projections(String(text))); } catch (e) {
    if (e instanceof ValueProblem) throw new SymcalcError("attention_bias", "must be 'all', 'none' or a list of q, k, v, o");
    throw e;
  }
}

// spec.toml's rules, compiled (symcalc.algebra.rules): the same steps Python runs
function showValue(v) { return v === null || v === undefined ? "null" : typeof v === "boolean" ? String(v) : String(v); }
function fillTemplate(parts, scope, label) {
  return parts.map(p => typeof p === "string" ? p : showValue(evalTree(p.tree, scope, label, p.text)[0])).join("");
}
function ruleHolds(e, scope, label) { return condition(evalTree(e.tree, scope, label, e.text), label); }
function runRules(steps, v, defaults, label) {  // symcalc.algebra.rules.run
  const scope = makeScope(v, defaults), lets = [];
  for (const step of steps) {
    if ("let" in step) { v[step.let] = evalTree(step.value.tree, scope, label, step.value.text)[0]; lets.push(step.let); }
    else if ("fill" in step) {
      if (step.when === null || ruleHolds(step.when, scope, label)) v[step.fill] = evalTree(step.value.tree, scope, label, step.value.text)[0];
    } else if (step.each !== null) {
      for (const name of step.each) {
        v.this = v[name] === undefined ? (defaults[name] === undefined ? null : defaults[name]) : v[name];
        try { if (ruleHolds(step.refuse, scope, label)) throw new SymcalcError(name, fillTemplate(step.rule, scope, label)); }
        finally { delete v.this; }
      }
    } else if (ruleHolds(step.refuse, scope, label))
      throw new SymcalcError(fillTemplate(step.field, scope, label), fillTemplate(step.rule, scope, label));
  }
  for (const name of lets) delete v[name];
}
function evaluateAll(exprs, data, label) {  // symcalc.algebra.rules.evaluate_all
  const scope = makeScope(data), out = {};
  for (const [name, e] of exprs) out[name] = evalTree(e.tree, scope, label, e.text)[0];
  return out;
}
const RULES_LABEL = "symcalc/algebra/spec.toml";

function makeSpec(values) {  // make_spec
  const names = S().fields.map(f => f.name);
  const unknown = Object.keys(values).filter(k => !names.includes(k) && k !== "implementation").sort();
  if (unknown.length) {
    if (own(IMPL().fields, unknown[0])) throw new SymcalcError(unknown[0], "is an implementation field: give it in the [implementation] table");
    throw new SymcalcError(unknown[0], "is not a symcalc spec field");
  }
  for (const r of ["name", "family", "L", "d", "n_h", "d_ff"]) if (!has(values, r)) throw new SymcalcError(r, "is required");
  const v = {...values};
  for (const f of ["name", "source"]) if (f in v && typeof v[f] !== "string") throw new SymcalcError(f, `must be text (got ${repr(v[f])})`);
  for (const f of S().size_fields) if (has(v, f)) v[f] = positiveInt(f, v[f]);
  for (const f of S().count_fields) if (has(v, f)) v[f] = count(f, v[f]);
  const got = v.implementation;
  if (got !== undefined && got !== null && (typeof got !== "object" || Array.isArray(got) || isFloat(got)))
    throw new SymcalcError("implementation", `must be a table of implementation fields (got ${r60(got)})`);
  const implementation = makeImplementation(got);
  const C = S().choices;
  choice("family", v.family, C.family);
  for (const f of ["ffn", "norm", "head", "position", "qk_norm", "linear_attn", "ssm"])
    choice(f, get(v, f, FIELD_DEFAULTS[f]), C[f]);
  for (const f of S().flag_fields) if (f in v && !(f === "ssm_out_bias" && v[f] === null)) flag(f, v[f]);
  parseBias(get(v, "attention_bias", "none"));
  runRules(S().rules.steps, v, FIELD_DEFAULTS, RULES_LABEL);
  const spec = {};
  for (const f of names) spec[f] = v[f] === undefined ? FIELD_DEFAULTS[f] : v[f];
  spec.implementation = implementation;
  return Object.freeze(spec);
}

function coerceText(key, text) {  // coerce_text (the text of --set key=value)
  if (S().size_fields.includes(key) || S().count_fields.includes(key)) return parseInt_(`--set ${key}`, text, true);
  const f = ownGet(IMPL().fields, key);
  if (f && f.kind === "count") return parseInt_(`--set ${key}`, text, true);
  if (f && f.kind === "bool") {
    const l = text.trim().toLowerCase();
    if (["true", "yes", "on", "1"].includes(l)) return true;
    if (["false", "no", "off", "0"].includes(l)) return false;
    throw new SymcalcError(`--set ${key}`, `must be true or false (got ${r60(text)})`);
  }
  if (S().flag_fields.includes(key)) {
    const l = text.trim().toLowerCase();
    if (["true", "yes", "on", "1"].includes(l)) return true;
    if (["false", "no", "off", "0"].includes(l)) return false;
    throw new SymcalcError(`--set ${key}`, `must be true or false (got ${r60(text)})`);
  }
  return text;
}

function withOverrides(spec, overrides) {  // with_overrides
  const base = {...spec};
  const names = S().fields.map(f => f.name), impl = IMPL().fields;
  for (const key of Object.keys(overrides))
    if (!names.includes(key) && !own(impl, key))
      throw new SymcalcError(`--set ${key}`, `is not a symcalc spec field (known: ${names.join(", ")}; implementation: ${Object.keys(impl).join(", ")})`);
  const implementation = {...(spec.implementation || {})};
  for (const [k, x] of Object.entries(overrides)) if (own(impl, k)) implementation[k] = x; else base[k] = x;
  base.implementation = implementation;
  const newD = overrides.d;
  if (!("d_ff" in overrides) && spec.d_ff === 4 * spec.d && typeof newD === "number" && Number.isInteger(newD) && newD > 0) base.d_ff = 4 * newD;
  if (("d" in overrides || "n_h" in overrides) && !("d_h" in overrides) && spec.d_h === Math.floor(spec.d / spec.n_h) && spec.d % spec.n_h === 0) base.d_h = null;
  if ("n_h" in overrides && !("n_kv" in overrides) && spec.n_kv === spec.n_h) base.n_kv = null;
  return makeSpec(base);
}

// derived views of a spec (Spec properties)
const shape = s => s.family === "encoder-decoder" ? "encoder-decoder" : "single";
const hybrid = s => S().hybrid_counts.some(f => s[f] !== null) || s.short_convs === true || s.K_g !== null;  // spec.Spec.hybrid

// ---- options (symcalc.algebra.options) --------------------------------------------------------
function bits(key) {
  const digits = key.startsWith("bits") ? key.slice(4) : key;
  return digits.length > 0 && digits.length <= 2 && /^[0-9]+$/.test(digits) ? digits : "";
}
function checkDtype(field, name) {
  const key = String(name).trim().toLowerCase();
  const d = bits(key);
  if (own(META.options.dtype_bytes, key) || (d && Number(d) > 0 && Number(d) <= 64)) return;
  throw new SymcalcError(field, `must be one of ${Object.keys(META.options.dtype_bytes).join(", ")} or a bit width like bits3 (got ${repr(name)})`);
}
function dtypeFraction(name) {
  const key = String(name).trim().toLowerCase();
  if (own(META.options.dtype_bytes, key)) return META.options.dtype_bytes[key];
  return [Number(bits(key)), 8];
}
function defaultOptions() { return {...META.options.defaults}; }
function checkedOptions(o) {  // Options.checked
  for (const name of ["batch", "seq_len", "dec_seq_len", "dp", "tp", "context"]) {
    const value = o[name];
    if (value === null || value === undefined) continue;
    const f = name.replace(/_/g, "-");
    if (typeof value === "boolean" || !isInt(value) || value <= 0) throw new SymcalcError(f, `must be a positive integer (got ${r60(value)})`);
    checkLimit(f, value);
  }
  for (const [name, allowed] of Object.entries(META.options.choices))
    if (!allowed.includes(o[name])) throw new SymcalcError(name.replace(/_/g, "-"), `must be one of ${allowed.join(", ")} (got ${repr(o[name])})`);
  for (const name of ["dtype", "kv_dtype", "state_dtype"]) checkDtype(name.replace(/_/g, "-"), o[name]);
  checkedLayout(o);
  return o;
}
function checkedLayout(o) {  // Layout.checked (the options' layout)
  for (const name of META.options.degrees) {
    const value = o[name];
    if (name === "etp" && (value === null || value === undefined)) continue;
    if (typeof value === "boolean" || !isInt(value) || value <= 0) throw new SymcalcError(name, `must be a positive integer (got ${r60(value)})`);
    if (value > 1000000) throw new SymcalcError(name, `must be at most 1000000 (got ${value})`);
  }
  const v = {...META.options.layout_defaults};
  for (const f of Object.keys(v)) if (own(o, f)) v[f] = o[f];
  runRules(META.option_rules.steps, v, {}, OPTIONS_LABEL);  // options.toml's refusals
}
const OPTIONS_LABEL = "symcalc/algebra/options.toml";
function optionSwitches(spec, o) {  // options.switches: options.toml's [switches]
  const out = evaluateAll(META.option_rules.switches, {...o, family: spec.family, head: spec.head, mla: spec.mla}, OPTIONS_LABEL);
  for (const k of Object.keys(out)) out[k] = out[k] ? 1 : 0;
  return out;
}
const isParallel = o => META.options.layout_fields.some(f => o[f] !== META.options.defaults[f]);  // Options.parallel
const zeroStage = o => (o.distributed_optimizer ? 1 : o.zero);  // Options.zero_stage
const expertTp = o => (o.etp === null || o.etp === undefined ? o.tp : o.etp);
function checkSpec(spec, o, seqLen, decSeqLen) {  // layout.check_spec: layout.toml's rules
  const v = {...spec, tp: o.tp, pp: o.pp, vpp: o.vpp, ep: o.ep, etp: o.etp === undefined ? null : o.etp,
             cp: o.cp, tp_plan: o.tp_plan, seq_len: seqLen === undefined ? null : seqLen,
             dec_seq_len: decSeqLen === undefined ? null : decSeqLen, hybrid: hybrid(spec)};
  runRules(META.layout_rules, v, {}, "symcalc/algebra/layout.toml");
}
function seqLenOf(spec, o) {
  if (o.seq_len !== null && o.seq_len !== undefined) return o.seq_len;
  if (spec.position === "learned" && spec.P) return Math.min(spec.P, META.options.default_seq_len);
  return META.options.default_seq_len;
}

// ---- the values the evaluators read (symcalc.fast.quick.values) -------------------------------
function specData(spec) { const data = {...spec}; delete data.implementation; return data; }
function sizeValues(spec) {  // symcalc.algebra.spec.size_values
  const data = specData(spec), out = {};
  for (const f of S().size_fields) out[f] = data[f] === null ? 1 : data[f];
  for (const f of S().count_fields) out[f] = data[f] || 0;
  Object.assign(out, evaluateAll(Object.entries(S().rules.values), data, RULES_LABEL));
  for (const k of Object.keys(out)) if (out[k] === null) delete out[k];
  return out;
}
function headsSplitBadly(nh, nkv, tp) { return (nh % tp !== 0) || ((nkv % tp !== 0) && (tp % nkv !== 0)); }
function workloadValues(spec, o) {
  if (o.tp > 1 && headsSplitBadly(spec.n_h, spec.n_kv, o.tp))
    throw new SymcalcError("tp", `tensor-parallel degree must divide the heads (n_h=${spec.n_h}, n_kv=${spec.n_kv}, tp=${o.tp})`);
  const s = seqLenOf(spec, o);
  const out = {b: o.batch, s, N_d: o.dp, t: o.tp};
  if (spec.family === "encoder-decoder") out.s_dec = o.dec_seq_len || s;
  if (spec.W !== null) out.W = spec.W;
  return out;
}
function switchValues(spec) {  // symcalc.algebra.spec.switch_values
  const out = evaluateAll(S().rules.switches, specData(spec), RULES_LABEL);
  for (const k of Object.keys(out)) out[k] = out[k] ? 1 : 0;
  return out;
}
// ---- implementation facts (symcalc.algebra.implementation.facts) -----------------------------
const IMPL = () => META.implementation;
function implementationValues(spec) {  // Implementation.values(): every field, its default unless given
  const out = {};
  for (const [name, f] of Object.entries(IMPL().fields)) out[name] = f.default;
  return Object.assign(out, spec.implementation || {});
}
const activationWidth = dtype => (["fp32", "float32"].includes(String(dtype).trim().toLowerCase()) ? 4 : 2);  // implementation.activation_width
function activationFacts(spec, dtype, batch) {  // implementation.toml's [let] and [facts]
  const width = activationWidth(dtype);
  const data = {...spec};
  delete data.implementation;
  Object.assign(data, implementationValues(spec), {width, batch});
  const scope = makeScope(data);
  for (const [name, e] of IMPL().lets) data[name] = evaluate(e, scope, `symcalc/algebra/implementation.toml: let.${name}`)[0];
  const out = {};
  for (const [name, e] of IMPL().facts) {
    const value = evaluate(e, scope, `symcalc/algebra/implementation.toml: facts.${name}`)[0];
    out[name] = typeof value === "boolean" ? +value : Number(value);
  }
  return out;
}
function makeImplementation(values) {  // implementation.make
  const fields = IMPL().fields, given = {};
  for (const [name, value] of Object.entries(values || {})) {
    const f = fields[name];
    if (!f) throw new SymcalcError(name, `is not an implementation field (known: ${Object.keys(fields).join(", ")})`);
    if (f.kind === "bool" && typeof value !== "boolean") throw new SymcalcError(name, `must be true or false (got ${r60(value)})`);
    if (f.kind === "count") {
      if (typeof value === "boolean" || !isInt(value) || value < 0) throw new SymcalcError(name, `must be a whole number, zero or more (got ${r60(value)})`);
      checkLimit(name, value);
    }
    if (f.kind === "choice" && !f.choices.includes(value)) throw new SymcalcError(name, `must be one of ${f.choices.map(c => repr(c)).join(", ")} (got ${r60(value)})`);
    if (f.kind === "text" && (typeof value !== "string" || value.length > 200)) throw new SymcalcError(name, `must be text of at most 200 characters (got ${r60(value)})`);
    if (value !== f.default) given[name] = f.kind === "count" ? Number(value) : value;
  }
  if (Object.keys(given).length) {
    const scope = makeScope({...implementationValues({implementation: given})});
    for (const [name, c] of Object.entries(IMPL().checks))
      if (!condition(evaluate(c.require, scope, "symcalc/algebra/implementation.toml"), "symcalc/algebra/implementation.toml"))
        throw new SymcalcError(name, `${c.rule} (${repr(given[name] === undefined ? IMPL().fields[name].default : given[name])})`);
  }
  return Object.freeze(given);
}
function implementationFromConfig(values) {  // implementation.from_config
  const out = {...values};
  for (const [name, value] of Object.entries(values)) {
    const f = ownGet(IMPL().fields, name);
    if (f && f.kind === "choice" && !f.choices.includes(value) && f.config_other !== null) out[name] = f.config_other;
  }
  return out;
}
function buildImplementation(fam, data, role = null) {  // family_data.build_implementation
  const label = `families/${fam.model_type}.toml`;
  const [canon, spelled] = canonicalConfig(fam.aliases, data);
  const scope = makeScope(canon, fam.defaults || {}, spelled);
  const values = {}, keys = {};
  for (const [name, f] of Object.entries(IMPL().fields)) {
    const entry = name in (fam.implementation || {}) ? fam.implementation[name] : f.config;
    if (entry === null || entry === undefined) continue;
    if (isExpr(entry)) [values[name], keys[name]] = evaluate(entry, scope, `${label}: implementation.${name}`);
    else values[name] = entry;
  }
  const plan = (fam.tp_plan_names || {})[role] || "";  // family_data.tp_plan_name, computed when the page is built
  if (plan && !("tp_plan" in values)) values.tp_plan = plan;  // its own base_model_tp_plan (and its class's entries)
  return [implementationFromConfig(values), keys];
}
function optionValues(spec, o) {
  const [w_num, w_den] = dtypeFraction(o.dtype), [kv_num, kv_den] = dtypeFraction(o.kv_dtype);
  const [st_num, st_den] = dtypeFraction(o.state_dtype);
  const opt = META.options.optimizers[o.optimizer];
  return {w_num, w_den, kv_num, kv_den, st_num, st_den, opt_w: opt[0], opt_g: opt[1], opt_o: opt[2],
          ...optionSwitches(spec, o), ...activationFacts(spec, o.dtype, o.batch)};
}
function values(spec, o) {  // quick.values, as plain numbers
  return {W: 1, ...sizeValues(spec), ...workloadValues(spec, o), ...switchValues(spec),
          ...optionValues(spec, o), ...layoutValues(spec, o)};
}
function planFacts(spec, convention) {  // fast.plans.facts, from the facts the page carries (computed by Python)
  const f = META.plan_facts, name = convention === "megatron" ? "" : ((spec.implementation || {}).tp_plan || "");
  const k = f.plans[`${name}|${shape(spec)}|${convention}`];
  if (k === undefined) throw new SymcalcError("tp-plan", `no plan ${JSON.stringify(name)} in the page's data`);
  return Object.fromEntries(f.sets[k].map(i => [f.names[i], 1]));
}
function layoutValues(spec, o) {  // quick.layout_values
  const out = {p: o.pp, v: o.vpp, m: o.microbatches, e: o.ep, t_e: expertTp(o), c: o.cp};
  return isParallel(o) ? Object.assign(out, planFacts(spec, o.tp_plan)) : out;
}
const big = v => Object.fromEntries(Object.entries(v).map(([k, x]) => [k, BigInt(x)]));

// ---- the report (symcalc.fast.quick.assemble) -------------------------------------------------
const T = () => SYMCALC_TERMS;
const ROWS_AT = new WeakMap();  // values object -> shape -> [rows, sizes]: a report asks for many figures at one v
function rowsAt(sh, v) {  // quick.Numbers._rows: the constants folded in, the sizes apart
  let byShape = ROWS_AT.get(v);
  if (!byShape) ROWS_AT.set(v, byShape = new Map());
  if (byShape.has(sh)) return byShape.get(sh);
  const sized = new Set(T().table().varying), constants = {}, sizes = {};
  for (const [k, x] of Object.entries(v)) (sized.has(k) ? sizes : constants)[k] = x;
  const out = [T().specialize(sh, constants), sizes];
  byShape.set(sh, out);
  return out;
}
function number(sh, name, v) { const [rows, sizes] = rowsAt(sh, v); return rows.number(name, sizes); }
function leaves(sh, kind, v) {
  const [rows, sizes] = rowsAt(sh, v);
  return rows.leaves(kind, sizes).filter(([, x]) => x !== 0n);
}
function asDict(ls) {  // Breakdown.as_dict: every parent path (sum of its children), then leaves
  const out = {};
  for (const [path, x] of ls) {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const p = parts.slice(0, i).join("/");
      out[p] = (out[p] || 0n) + x;
    }
  }
  for (const [path, x] of ls) out[path] = x;
  return out;
}
// the per-layer views listed at values v: those whose layer count (the table's layer_counts,
// symcalc.algebra.accounting.layer_counts) is above 0, as quick.layer_prefixes reads them
function layerViews(sh, v) {
  return Object.entries(T().table().shapes[sh].layer_counts).filter(([, t]) => T().fold(t, v) > 0n).map(([p]) => p);
}
function paramsReport(spec, sh, v) {
  const bd = leaves(sh, "params", v);
  const total = bd.reduce((a, [, x]) => a + x, 0n);
  const embedding = number(sh, "params.embedding", v);
  const perLayer = {};
  for (const prefix of layerViews(sh, v)) {
    const nums = asDict(leaves(sh, `layer:${prefix}`, v));
    const head = prefix.includes("/") ? prefix.split("/")[0] + "/" : (prefix === "layer" ? "" : prefix + "/");
    perLayer[head ? `${head}total` : "total"] = Object.entries(nums).filter(([p]) => !p.includes("/")).reduce((a, [, x]) => a + x, 0n);
    for (const [p, x] of Object.entries(nums)) perLayer[`${head}${p}`] = x;
  }
  return {total, embedding, non_embedding: total - embedding, active: number(sh, "params.active", v),
          head_dim: spec.d_h, per_layer: perLayer, breakdown: asDict(bd)};
}
// ---- the conventions in words (symcalc.algebra.conventions: conventions.toml) ---------------
const CONVENTIONS_LABEL = "symcalc/algebra/conventions.toml";
function conventionValues(spec, o) {  // conventions.values (the page reads no quantized --dtype)
  return {...specData(spec), ...o, hybrid: hybrid(spec), plan_name: (spec.implementation || {}).tp_plan || "",
          width: activationWidth(o.dtype), activation_text: own(META.activations.text, o.activations) ? META.activations.text[o.activations] : null,
          quant_name: null, quant_meaning: null, quant_bits: null, quant_experts_only: false};
}
function fillPart(part, scope, out) {  // conventions._fill
  if (part.when !== null && !ruleHolds(part.when, scope, CONVENTIONS_LABEL)) return;
  if (!("items" in part)) { out.push(fillTemplate(part.text, scope, CONVENTIONS_LABEL)); return; }
  const items = [];
  for (const item of part.items) fillPart(item, scope, items);
  out.push(items.length ? items.join(part.join) : fillTemplate(part.empty, scope, CONVENTIONS_LABEL));
}
function conventionTexts(values, block) {  // conventions.texts
  const data = META.conventions, scope = makeScope(values), out = {}, prefix = block + ".";
  for (const step of data.steps) values[step.let] = evalTree(step.value.tree, scope, CONVENTIONS_LABEL, step.value.text)[0];
  for (const [key, body] of data.texts) {
    if (!key.startsWith(prefix)) continue;
    if (body.when !== null && !ruleHolds(body.when, scope, CONVENTIONS_LABEL)) continue;
    const parts = [];
    for (const part of body.parts) fillPart(part, scope, parts);
    out[key.slice(prefix.length)] = parts.join("");
  }
  return out;
}
function conventions(spec, o) {  // quick.conventions
  const v = conventionValues(spec, o);
  return {flops: conventionTexts({...v}, "flops"), memory: conventionTexts(v, "memory")};
}
function report(spec, options) {  // quick.quick_report
  const o = checkedOptions({...defaultOptions(), ...options});
  const sh = shape(spec);
  const plain = values(spec, o);
  const v = big(plain);
  const full = {...v, sw_causal: 0n, sw_causal_exact: 0n};
  const decode = {...v, s: BigInt(o.context || plain.s)};
  const flops = {batch: o.batch, seq_len: seqLenOf(spec, o)};
  if (spec.family === "encoder-decoder") flops.dec_seq_len = plain.s_dec;
  Object.assign(flops, {
    forward_matmul: number(sh, "flops.forward_matmul", v), forward: number(sh, "flops.forward", v),
    training: number(sh, "flops.training", v), decode_per_token: number(sh, "flops.decode_per_token", decode),
    decode_context: o.context || plain.s, breakdown: asDict(leaves(sh, "matmul", full)),
  });
  const memory = {dtype: o.dtype, kv_dtype: o.kv_dtype};
  if (hybrid(spec)) memory.state_dtype = o.state_dtype;
  for (const key of ["weights_bytes", "kv_cache_bytes", "activations_bytes", "training_bytes"]) memory[key] = number(sh, `memory.${key}`, v);
  memory.training_peak_bytes = memory.training_bytes + memory.activations_bytes;  // quick.assemble
  if (hybrid(spec)) {
    memory.recurrent_state_bytes = number(sh, "memory.recurrent_state_bytes", v);
    const one = {...v, b: 1n};
    const kvSeq = number(sh, "memory.kv_cache_bytes", one), stateSeq = number(sh, "memory.recurrent_state_bytes", one);
    memory.decode_state = {total_bytes: memory.kv_cache_bytes + memory.recurrent_state_bytes,
      per_sequence_bytes: kvSeq + stateSeq, per_sequence_recurrent_bytes: stateSeq,
      per_token_bytes: number(sh, "memory.kv_cache_bytes", {...one, s: 1n})};
  }
  if (spec.mla) memory.kv_cache_bytes_by_convention = Object.fromEntries(["latent", "expanded"].map(
    n => [n, number(sh, "memory.kv_cache_bytes", {...v, sw_mla_expanded: n === "expanded" ? 1n : 0n})]));
  const conv = conventions(spec, o);
  flops.conventions = conv.flops;
  memory.conventions = conv.memory;
  const out = {model: spec.name, family: spec.family, params: paramsReport(spec, sh, v), flops, memory};
  if (isParallel(o)) Object.assign(out, parallelReport(spec, o, sh, v, memory));
  return out;
}
// ---- per rank (symcalc.fast.per_rank) ---------------------------------------------------------
const RANK_KEYS = [["params", "per_rank.params"], ["weights_bytes", "per_rank.weights_bytes"],
  ["gradients_bytes", "per_rank.gradients_bytes"], ["optimizer_bytes", "per_rank.optimizer_bytes"],
  ["states_bytes", "per_rank.states_bytes"], ["activations_bytes", "per_rank.activations_bytes"],
  ["kv_cache_bytes", "per_rank.kv_cache_bytes"]];
const COMM_KEYS = ["forward_bytes", "step_bytes", "step_wire_bytes", "decode_bytes_per_token",
  "forward_wire_bytes", "decode_wire_bytes_per_token"];
const TP_KEYS = ["forward_allreduce_count", "forward_allreduce_bytes"];
const DIMENSIONS = ["tp", "pp", "dp", "ep", "cp"];
function stageNumber(sh, q, v, stage, memo) { const [rows, sizes] = rowsAt(sh, v); return rows.number(q, sizes, stage, memo); }
function stageBlock(spec, sh, v, stage, memo, memory) {
  const out = {stage};
  for (const [k, q] of RANK_KEYS) out[k] = stageNumber(sh, q, v, stage, memo);
  out.peak_bytes = out.states_bytes + out.activations_bytes;
  const state = memory.recurrent_state_bytes === undefined ? 0n : memory.recurrent_state_bytes;
  if (hybrid(spec)) out.recurrent_state_bytes = state;
  out.serving_peak_bytes = out.weights_bytes + out.kv_cache_bytes + state;
  return out;
}
function communicationBlock(sh, v, stage, memo) {
  const out = {};
  for (const dim of DIMENSIONS)
    out[dim] = Object.fromEntries(COMM_KEYS.concat(dim === "tp" ? TP_KEYS : []).map(k => [k, stageNumber(sh, `communication.${dim}.${k}`, v, stage, memo)]));
  return out;
}
function layoutBlock(spec, o) {
  return {tp: o.tp, pp: o.pp, vpp: o.vpp, schedule: o.vpp > 1 ? "interleaved" : "1f1b", microbatches: o.microbatches,
          ep: o.ep, etp: expertTp(o), cp: o.cp, dp: o.dp, zero: zeroStage(o), distributed_optimizer: o.distributed_optimizer,
          sequence_parallel: o.sequence_parallel, tp_plan: o.tp_plan, cp_algorithm: o.cp_algorithm,
          plan: o.tp_plan === "hf" ? ((spec.implementation || {}).tp_plan || "") : "megatron", ranks: o.tp * o.pp * o.cp * o.dp};
}
function rankConventions(spec, o) {  // per_rank.conventions_text
  return conventionTexts(conventionValues(spec, o), "per_rank");
}
function mostLoaded(sh, v, pp, memo) {  // per_rank.most_loaded
  let best = 0, peak = null;
  for (let i = 0; i < pp; i++) {
    const x = stageNumber(sh, "per_rank.states_bytes", v, i, memo) + stageNumber(sh, "per_rank.activations_bytes", v, i, memo);
    if (peak === null || x > peak) { best = i; peak = x; }
  }
  return best;
}
function parallelReport(spec, o, sh, v, memory) {  // per_rank.parallel_report
  checkSpec(spec, o, seqLenOf(spec, o), spec.family === "encoder-decoder" ? Number(v.s_dec) : null);
  const memo = new Map(), stage = mostLoaded(sh, v, o.pp, memo);
  const block = stageBlock(spec, sh, v, stage, memo, memory);
  const perRank = {};
  for (const k of ["params", "weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "kv_cache_bytes", "peak_bytes", "stage"]) perRank[k] = block[k];
  for (const k of Object.keys(block)) if (!(k in perRank)) perRank[k] = block[k];
  perRank.layout = layoutBlock(spec, o);
  perRank.conventions = rankConventions(spec, o);
  const out = {per_rank: perRank, communication: communicationBlock(sh, v, stage, memo)};
  if (o.per_stage) out.per_stage = Array.from({length: o.pp}, (_, i) => ({...stageBlock(spec, sh, v, i, memo, memory), communication: communicationBlock(sh, v, i, memo)}));
  return out;
}
// ---- derivations: formula, numbers substituted, result (for every figure the page shows) -----
// The quantity's combination of row sets for this model and these options: each set with its
// exact coefficient and its rows that do not vanish (path, source, folded tree, value); the
// figure is the coefficients times the sums over one common denominator, rounded up once. With
// --part all the parameter figures add the vision tower and projector.
function derivation(spec, options, q, outside = [], part = "text", stage = null) {
  const o = checkedOptions({...defaultOptions(), ...options});
  const sh = shape(spec), base = derivationBase(spec, o, sh);
  let [rows, sizes] = [base.rows, base.sizes];
  if (q === "flops.decode_per_token") [rows, sizes] = rowsAt(sh, {...base.v, s: BigInt(o.context || base.plain.s)});
  rows = rows.at(q);
  // a per-rank figure: at the stage (the most-loaded one), each set at its view's sizes
  const groups = rows.coefficients(q, stage).map(([name, n, d, view]) => {
    const at = view ? rows.view(view, sizes, stage) : sizes;
    return {set: name, numerator: n, denominator: d, view, sizes: at,
            rows: rows.rows(name).map(r => ({...r, value: T().evaluate(r.tree, at)}))};
  });
  const symbols = {};
  for (const g of groups) for (const r of g.rows) for (const n of T().names(r.tree)) symbols[n] = g.sizes[n];
  const [numerator, den] = rows.exact(q, sizes, stage);
  let result = _cdiv(numerator, den);
  const extra = [];
  if (part === "all" && ["params.total", "params.active", "params.non_embedding"].includes(q))
    for (const x of outside) {
      extra.push({role: x.role, description: x.description, source: x.source, tree: x.ml, names: x.symbols, value: x.params});
      for (const n of x.symbols) symbols[n] = x.sizes[n];
      result += x.params;
    }
  return {quantity: q, groups, extra, symbols, numerator, den, result, stage};
}
// the values and specialized rows of the last model and options derived: a page or a report
// derives each of its figures in turn at the same ones
let lastBase = null;
function derivationBase(spec, o, sh) {
  const key = JSON.stringify(o);
  if (lastBase && lastBase.spec === spec && lastBase.key === key) return lastBase;
  const plain = values(spec, o), v = big(plain), [rows, sizes] = rowsAt(sh, v);
  return (lastBase = {spec, key, plain, v, rows, sizes});
}
function _cdiv(n, d) { let r = n / d; if (r * d !== n && ((n > 0n) === (d > 0n))) r += 1n; return r; }

const BUDGETS = [["weights", ["weights_bytes"]], ["inference", ["weights_bytes", "kv_cache_bytes"]],
                 ["training", ["training_bytes", "activations_bytes"]]];
function fits(memory, gpu) {  // commands.fits.fits for one accelerator
  const budgets = Object.fromEntries(BUDGETS.map(([n, ks]) => [n, ks.reduce((a, k) => a + memory[k], 0n)]));
  const mem = BigInt(gpu.memory_bytes);
  return {budgets, fits: Object.fromEntries(Object.entries(budgets).map(([n, b]) => [n, b <= mem]))};
}
function toJSON(value, indent = 1) {  // JSON with BigInts as exact digits
  return JSON.stringify(value, (k, x) => (typeof x === "bigint" ? `@@${x}@@` : x), indent).replace(/"@@(-?\d+)@@"/g, "$1");
}

// ---- the data files' expression language (symcalc.algebra.lang) -----------------------------
// Python parses each expression once into a tree (symcalc.algebra.lang.parse_expression); the
// page carries the trees and walks them as symcalc.algebra.lang.evaluate does.
class ValueProblem extends Error { constructor(rule, value) { super(rule); this.rule = rule; this.value = value; } }
function intArg(v, allowZero = false) {
  if (typeof v === "boolean" || !isInt(v) || v < 0 || (v == 0 && !allowZero))
    throw new ValueProblem(allowZero ? "must be a non-negative integer" : "must be a positive integer", v);
  return Number(v);
}
function numbers(args) {
  const vs = args.length === 1 && Array.isArray(args[0]) ? [...args[0]] : [...args];
  if (!vs.length) throw new ValueProblem("must not be empty", args.length ? args[0] : null);
  for (const v of vs) if (!isNumber(v)) throw new ValueProblem("must be a number", v);
  return vs;
}
function pyEq(a, b) {
  if (a === null || b === null) return a === b;
  if ((isNumber(a) || typeof a === "boolean") && (isNumber(b) || typeof b === "boolean")) return num(a) === num(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => pyEq(x, b[i]));
  if (typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b) && !isFloat(a) && !isFloat(b)) {
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every(k => k in b && pyEq(a[k], b[k]));
  }
  return a === b;
}
function pyLess(a, b) {
  const ok = (x) => isNumber(x) || typeof x === "boolean";
  if (ok(a) && ok(b)) return num(a) < num(b);
  if (typeof a === "string" && typeof b === "string") return a < b;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (!pyEq(a[i], b[i])) return pyLess(a[i], b[i]);
    return a.length < b.length;
  }
  throw new TypeError("not comparable");
}
function pyIn(a, b) {
  if (Array.isArray(b)) return b.some(x => pyEq(a, x));
  if (typeof b === "string") { if (typeof a !== "string") throw new TypeError("in str"); return b.includes(a); }
  if (b !== null && typeof b === "object" && !isFloat(b)) { if (Array.isArray(a) || (typeof a === "object" && a !== null)) throw new TypeError("unhashable"); return typeof a === "string" && a in b; }
  throw new TypeError("not a container");
}
const CMP = {"==": pyEq, "!=": (a, b) => !pyEq(a, b), "<": pyLess, ">": (a, b) => pyLess(b, a),
  "<=": (a, b) => !pyLess(b, a), ">=": (a, b) => !pyLess(a, b),
  "is": (a, b) => (a === null || b === null ? a === b : pyEq(a, b)), "is not": (a, b) => (a === null || b === null ? a !== b : !pyEq(a, b)),
  "in": pyIn, "not in": (a, b) => !pyIn(a, b)};
function arith(op, a, b) {
  if (isFloat(a) || isFloat(b)) {
    const x = num(a), y = num(b);
    return new PyFloat(op === "+" ? x + y : op === "-" ? x - y : op === "*" ? x * y : op === "%" ? x - y * Math.floor(x / y) : Math.floor(x / y));
  }
  const x = BigInt(a), y = BigInt(b);
  let r;
  if (op === "+") r = x + y; else if (op === "-") r = x - y; else if (op === "*") r = x * y;
  else if (op === "%") { r = x % y; if (r !== 0n && ((r < 0n) !== (y < 0n))) r += y; }
  else { r = x / y; if ((x % y !== 0n) && ((x < 0n) !== (y < 0n))) r -= 1n; }
  return (r <= BigInt(Number.MAX_SAFE_INTEGER) && r >= -BigInt(Number.MAX_SAFE_INTEGER)) ? Number(r) : r;
}
const FUNCTIONS = {
  count: (items, value) => { if (typeof items !== "string" && !Array.isArray(items)) throw new ValueProblem("must be a list", items); return [...items].filter(x => pyEq(x, value)).length; },
  count_from: (items, start, value) => { if (!Array.isArray(items)) throw new ValueProblem("must be a list", items); return items.slice(intArg(start, true)).filter(x => pyEq(x, value)).length; },
  layer_sum: (value, layers) => {
    layers = intArg(layers, true);
    if (Array.isArray(value)) {
      if (value.length !== layers) throw new ValueProblem(`must have one value per layer (L = ${layers}, got ${value.length})`, value);
      return value.length ? numbers([value]).reduce((a, x) => arith("+", a, x), 0) : 0;
    }
    return arith("*", numbers([value])[0], layers);
  },
  distinct: (items) => {  // symcalc.algebra.lang._distinct
    if (!Array.isArray(items)) throw new ValueProblem("must be a list", items);
    const out = []; for (const x of items) if (!out.some(y => pyEq(x, y))) out.push(x); return out;
  },
  len: (items) => { if (!(Array.isArray(items) || typeof items === "string")) throw new ValueProblem("must be a list", items); return [...items].length; },
  min: (...args) => numbers(args).reduce((a, x) => (pyLess(x, a) ? x : a)),
  max: (...args) => numbers(args).reduce((a, x) => (pyLess(a, x) ? x : a)),
  sparse_layers: (L, step, skipList) => {
    L = intArg(L); step = intArg(step);
    if (skipList !== null && skipList !== undefined && !Array.isArray(skipList)) throw new ValueProblem("must be a list", skipList);
    const skip = skipList || [];
    let n = 0; for (let i = 0; i < L; i++) if (!skip.some(x => pyEq(x, i)) && (i + 1) % step === 0) n++; return n;
  },
  deepseek_moe_layers: (L, first, freq = 1) => {
    L = intArg(L); first = intArg(first || 0, true); freq = intArg(freq !== null && freq !== undefined ? freq : 1);
    let n = 0; for (let i = 0; i < L; i++) if (i >= first && i % freq === 0) n++; return n;
  },
  interval_layers: (L, interval, first, last) => {
    L = intArg(L); interval = intArg(interval);
    for (const bnd of [first, last]) if (typeof bnd === "boolean" || !isInt(bnd)) throw new ValueProblem("must be an integer", bnd);
    let n = 0; for (let i = 0; i < L; i++) if (first <= i && i <= last && (i + 1) % interval === 0) n++; return n;
  },
  ngram_rows: (base, heads, tables, divisor) => {  // symcalc.algebra.lang._ngram_rows
    base = intArg(base); heads = intArg(heads); tables = intArg(tables, true); divisor = intArg(divisor);
    if (base > 1e15) throw new ValueProblem("must be at most 1000000000000000", base);
    if (heads * tables > 100000) throw new ValueProblem("asks for more than 100000 primes", tables);
    const W = [2n, 3n, 5n, 7n, 11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n, 41n];
    const pw = (a, e, m) => { let r = 1n; a %= m; for (; e > 0n; e >>= 1n, a = a * a % m) if (e & 1n) r = r * a % m; return r; };
    const isPrime = (n) => {
      if (n < 2n) return false;
      for (const p of W) if (n % p === 0n) return n === p;
      let r = 0, m = n - 1n; while (m % 2n === 0n) { r++; m /= 2n; }
      outer: for (const a of W) {
        let x = pw(a, m, n); if (x === 1n || x === n - 1n) continue;
        for (let i = 0; i < r - 1; i++) { x = x * x % n; if (x === n - 1n) continue outer; }
        return false;
      }
      return true;
    };
    let total = 0n, prime = BigInt(base) - 1n; const dv = BigInt(divisor);
    for (let t = 0; t < tables; t++) {
      let rows = 0n;
      for (let h = 0; h < heads; h++) { prime++; while (!isPrime(prime)) prime++; rows += prime; }
      total += (rows + dv - 1n) / dv * dv;
    }
    return total <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(total) : total;
  },
  matches: (text, pattern) => { if (typeof pattern !== "string") throw new ValueProblem("pattern must be text", pattern); return typeof text === "string" && new RegExp(`^(?:${pattern})$`).test(text); },
  is_list: (v) => Array.isArray(v),
  values: (o) => { if (o === null || typeof o !== "object" || Array.isArray(o)) throw new ValueProblem("must be an object", o); return Object.values(o); },
  any: (...cs) => { for (const c of cs) if (c !== null && typeof c !== "boolean") throw new ValueProblem("must be true or false", c); return cs.some(Boolean); },
  count_true: (items, n) => { if (!Array.isArray(items)) throw new ValueProblem("must be a list", items); return items.slice(0, intArg(n, true)).filter(truthy).length; },
  floor: (x) => {
    if (Array.isArray(x)) throw new ValueProblem("must be a number", x);
    const v = numbers([x])[0];
    if (num(v) < 0) throw new ValueProblem("must not be negative", x);
    if (!Number.isFinite(num(v))) throw new ValueProblem("must be a finite number", x);
    return isFloat(v) ? Math.floor(v.x) : v;
  },
  positive: (x) => pyFloat(x) > 0,
  projections: (text) => {  // symcalc.algebra.lang._projections
    const P = ["q", "k", "v", "o"], bad = () => new ValueProblem("must be 'all', 'none' or a list of q, k, v, o", text);
    if (typeof text !== "string") throw bad();
    const t = text.trim().toLowerCase();
    if (t === "all") return [...P];
    if (t === "none" || t === "") return [];
    let parts = t.replace(/,/g, " ").split(/\s+/).filter(Boolean);
    if (parts.length === 1 && !P.includes(parts[0])) parts = [...parts[0]];
    if (parts.some(p => !P.includes(p))) throw bad();
    return P.filter(p => parts.includes(p));
  },
  last_part: (text, sep) => {
    if (typeof text !== "string" || typeof sep !== "string" || !sep) throw new ValueProblem("must be text", typeof text !== "string" ? text : sep);
    return text.split(sep).pop();
  },
};
function pyFloat(x) {  // float(x) as Python gives it, NaN where Python raises
  if (x === null || x === undefined || Array.isArray(x)) return NaN;
  if (typeof x === "boolean") return +x;
  if (isNumber(x)) return num(x);
  if (typeof x !== "string") return NaN;
  const s = x.trim().toLowerCase().replace(/(\d)_(?=\d)/g, "$1");
  if (/^[+-]?(inf|infinity)$/.test(s)) return s.startsWith("-") ? -Infinity : Infinity;
  if (/^[+-]?nan$/.test(s)) return NaN;
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(s) ? Number(s) : NaN;
}
const merge = (...groups) => { const out = []; for (const g of groups) for (const k of g) if (!out.includes(k)) out.push(k); return out; };
function condition([v, keys], where) {
  if (v === null || typeof v === "boolean") return !!v;
  if (keys.length) throw new SymcalcError(keys.join(", "), `must be true or false (got ${repr(v)})`);
  throw new SymcalcError(where, `condition must be true or false (got ${repr(v)})`);
}
function numeric([v, keys], where, text) {
  if (!isNumber(v)) throw new SymcalcError(keys.join(", ") || where, `must be a number (got ${repr(v)}; in ${repr(text)})`);
}
const ARITH = ["+", "-", "*", "//", "%"];
function evalTree(t, scope, where, text) {  // symcalc.algebra.lang._eval
  if (t === null || typeof t === "boolean" || typeof t === "number") return [t, []];
  if (typeof t === "string") return [scope(t), [scope.spelled && scope.spelled[t] || t]];
  const op = t[0], args = t.slice(1);
  const ev = (x) => evalTree(x, scope, where, text);
  switch (op) {
    case "'": return [args[0], []];
    case "[": { const items = args.map(ev); return [items.map(i => i[0]), merge(...items.map(i => i[1]))]; }
    case "or": { let value = [null, []]; for (const x of args) { value = ev(x); if (value[0] !== null) return value; } return value; }
    case "and": { let keys = []; for (const x of args) { const value = ev(x); keys = merge(keys, value[1]); if (!condition(value, where)) return [false, keys]; } return [true, keys]; }
    case "not": { const value = ev(args[0]); return [!condition(value, where), value[1]]; }
    case "neg": { const value = ev(args[0]); numeric(value, where, text); return [isFloat(value[0]) ? new PyFloat(-value[0].x) : arith("-", 0, value[0]), value[1]]; }
    case "if": return condition(ev(args[0]), where) ? ev(args[1]) : ev(args[2]);
    case "cmp": {
      let left = ev(args[0]), keys = left[1], result = true;
      for (const [name, rightTree] of args.slice(1)) {
        const right = ev(rightTree);
        keys = merge(keys, right[1]);
        let ok;
        try { ok = CMP[name](left[0], right[0]); } catch (e) {
          if (!(e instanceof TypeError)) throw e;
          const bad = name === "in" || name === "not in" ? right : left;
          throw new SymcalcError(keys.join(", ") || where, `cannot be compared in ${repr(text)} (got ${repr(bad[0])})`);
        }
        result = result && ok; left = right;
      }
      return [result, keys];
    }
    case "sub": {
      const [container, keys] = ev(args[0]);
      const key = args[1], root = keys.length === 1 ? keys[0] : null;
      const path = root ? [typeof key === "string" ? `${root}.${key}` : `${root}[${key}]`] : keys;
      if (container === null) return [null, path];
      if (typeof key === "string") {
        if (typeof container !== "object" || Array.isArray(container) || isFloat(container))
          throw new SymcalcError(keys.join(", ") || where, `must be an object to read ${repr(key)} (got ${repr(container)}; in ${repr(text)})`);
        return [Object.prototype.hasOwnProperty.call(container, key) ? container[key] : null, path];
      }
      if (!Array.isArray(container)) throw new SymcalcError(keys.join(", ") || where, `must be a list to read item ${key} (got ${repr(container)}; in ${repr(text)})`);
      return [key < container.length ? container[key] : null, path];
    }
    case "call": {
      const fn = args[0], vals = args.slice(1).map(ev);
      const keys = merge(...vals.map(a => a[1]));
      try { return [FUNCTIONS[fn](...vals.map(a => a[0])), keys]; } catch (e) {
        if (!(e instanceof ValueProblem)) throw e;
        const culprit = (vals.find(([v, k]) => v === e.value && k.length) || [null, keys])[1];
        throw new SymcalcError(culprit.join(", ") || where, `${e.rule} (got ${repr(e.value)}; in ${fn}())`);
      }
    }
  }
  if (ARITH.includes(op)) {
    const a = ev(args[0]), b = ev(args[1]);
    numeric(a, where, text); numeric(b, where, text);
    if ((op === "//" || op === "%") && num(b[0]) === 0) throw new SymcalcError(b[1].join(", ") || where, `must not be 0 (divides in ${repr(text)})`);
    return [arith(op, a[0], b[0]), merge(a[1], b[1])];
  }
  throw new SymcalcError(where, `forbidden construct ${repr(op)} in ${repr(text)}`);
}

// family files as the page carries them: their tables, each expression as {text, tree}
function makeScope(data, defaults = {}, spelled = {}) {
  const scope = (key) => (Object.prototype.hasOwnProperty.call(data, key) ? data[key]
    : (Object.prototype.hasOwnProperty.call(defaults, key) ? defaults[key] : null));
  scope.spelled = spelled;  // lang.Scope.name: a key as the config spelled it (an alias)
  return scope;
}
// family_data.canonical_config: each alias of [aliases] replaced by the key it names (a later alias in the file wins)
function canonicalConfig(aliases, data) {
  aliases = aliases || {};
  if (!Object.keys(data).some(k => Object.prototype.hasOwnProperty.call(aliases, k))) return [data, {}];
  const out = {}, spelled = {};
  for (const [k, v] of Object.entries(data)) if (!Object.prototype.hasOwnProperty.call(aliases, k)) out[k] = v;
  for (const [k, v] of Object.entries(data)) if (Object.prototype.hasOwnProperty.call(aliases, k)) { out[aliases[k]] = v; spelled[aliases[k]] = k; }
  return [out, spelled];
}
function evaluate(e, scope, where) { return evalTree(e.tree, scope, where, e.text); }
const isExpr = x => x !== null && typeof x === "object" && !Array.isArray(x) && "tree" in x;
function families() {
  if (!META.families && FAMILIES_LOADER) META.families = FAMILIES_LOADER();
  return META.families;
}
function family(modelType) { return families()[modelType]; }
function fieldsFor(fam, role) {
  const r = (fam.roles || {})[role] || {};
  return [...Object.entries(fam.fixed || {}).map(([k, x]) => [k, x, false]), ...Object.entries(fam.spec || {}).map(([k, x]) => [k, x, true]),
          ...Object.entries(r.fixed || {}).map(([k, x]) => [k, x, false]), ...Object.entries(r.spec || {}).map(([k, x]) => [k, x, true])];
}
function buildFields(fam, role, data) {  // family_data.build_fields
  const label = `families/${fam.model_type}.toml`;
  const [canon, spelled] = canonicalConfig(fam.aliases, data);
  const scope = makeScope(canon, fam.defaults || {}, spelled);
  for (const [key, check] of Object.entries(fam.checks || {})) {
    const where = `${label}: checks.${key}`;
    if (!condition(evaluate(check.require, scope, where), where)) throw new SymcalcError(spelled[key] || key, `${check.rule} (got ${repr(scope(key))})`);
  }
  const values = {}, keys = {};
  const seen = new Map();
  for (const [name, entry, isExpr] of fieldsFor(fam, role)) seen.set(name, [entry, isExpr]);
  for (const [name, [entry, isExpr]] of seen) {
    if (isExpr) [values[name], keys[name]] = evaluate(entry, scope, `${label}: ${name}`);
    else values[name] = entry;
  }
  return [values, keys];
}
const truthy = v => !(v === null || v === undefined || v === false || v === 0 || v === 0n || v === ""
  || (isFloat(v) && v.x === 0) || (Array.isArray(v) && !v.length));
function makeWithKeys(fields, keys) {
  try { return makeSpec(fields); } catch (e) {
    if (!(e instanceof SymcalcError)) throw e;
    const read = keys[e.field];
    if (!read || !read.length) throw e;
    throw new SymcalcError(`${read.join(", ")} (${e.field})`, e.rule);
  }
}
function specFromConfig(data, name = "config.json") { return readModel(data, name)[0]; }
function readModel(data, name = "config.json") {  // hf.read_model: [the language model's spec, the parts outside it]
  const known = Object.keys(families()).sort();
  const modelType = data.model_type;
  if (typeof modelType !== "string" || !known.includes(modelType))
    throw new SymcalcError("model_type", `must be one of ${known.join(", ")} (got ${repr(modelType === undefined ? null : modelType)}); see docs/families.md`);
  const fam = family(modelType);
  const archs = (data.architectures === undefined || data.architectures === null || (Array.isArray(data.architectures) && !data.architectures.length)) ? [fam.bare_class] : data.architectures;
  if (!Array.isArray(archs) || !archs.every(a => typeof a === "string")) throw new SymcalcError("architectures", "must be a list of class names");
  const cls = archs[0];
  if (!(cls in fam.classes)) throw new SymcalcError("architectures[0]", `must be a ${modelType} class symcalc knows (${Object.keys(fam.classes).join(", ")}); got ${repr(cls)}`);
  const role = fam.classes[cls];
  const nested = (k, absent) => {
    const value = k ? (k in data ? data[k] : null) : null;
    if (value === null) return {...absent};
    if (typeof value !== "object" || Array.isArray(value) || isFloat(value)) throw new SymcalcError(k || "config", `must be an object (a nested config; got ${repr(value)})`);
    return value;
  };
  const towersView = (w, view) => {  // hf._towers_view
    if (w.vision_config) view[w.vision_config] = {...(w.vision_defaults || {}), ...nested(w.vision_config, w.vision_absent || {})};
    if (w.audio_config) view[w.audio_config] = {...(w.audio_defaults || {}), ...nested(w.audio_config, {})};
    return view;
  };
  if (!fam.wrapper || fam.wrapper.text_config === ".") {
    const [fields, keys] = buildFields(fam, role, data);
    if (!("name" in fields)) fields.name = name;
    fields.source = `Hugging Face config (${modelType}, ${cls})`;
    const [implementation, implKeys] = buildImplementation(fam, data, role);
    fields.implementation = implementation;
    const spec = makeWithKeys(fields, {...keys, ...implKeys});
    if (!fam.wrapper || (fam.wrapper.text_only || []).includes(cls)) return [spec, []];
    // the language model's keys at the top level (GIT), the towers nested beside them
    return [spec, outsideParts(fam, towersView(fam.wrapper, {...canonicalConfig(fam.aliases, data)[0]}))];
  }
  const w = fam.wrapper, key = w.text_config;
  const absent = {...(w.text_absent || {})};
  for (const k of w.text_absent_nulls || []) absent[k] = null;
  // hf._read_wrapped: the language model's keys at the top level when text_flat (Dots3NoteConfig)
  const text = (w.text_flat && (data[key] === undefined || data[key] === null))
    ? {tie_word_embeddings: (fam.defaults || {}).tie_word_embeddings, ...Object.fromEntries(Object.entries(data).filter(([k]) => !["model_type", "architectures", key].includes(k)))}
    : nested(key, absent);
  const textType = text.model_type || w.text_model_type;
  if (typeof textType !== "string" || !known.includes(textType))
    throw new SymcalcError(`${key}.model_type`, `must be one of ${known.join(", ")} (got ${repr(textType)}); see docs/families.md`);
  const tf = family(textType);
  if (tf.wrapper || !(role in (tf.roles || {})))
    throw new SymcalcError(`${key}.model_type`, `${repr(textType)} cannot be the language model of ${cls} (no ${repr(role)} role in families/${textType}.toml)`);
  const [fields, read] = buildFields(tf, role, text);
  const [implementation, implRead] = buildImplementation(tf, text, role);
  fields.implementation = implementation;
  const keys = Object.fromEntries(Object.entries({...read, ...implRead}).map(([f, ks]) => [f, ks.map(k => `${key}.${k}`)]));
  const canonText = canonicalConfig(tf.aliases, text)[0];
  const view = {...canonicalConfig(fam.aliases, data)[0], [key]: {...(tf.defaults || {}), ...canonText}};
  towersView(w, view);
  const textOnly = (w.text_only || []).includes(cls);  // a text-only class is its language model alone
  if (!textOnly) { const [more, moreKeys] = buildFields(fam, role, view); Object.assign(fields, more); Object.assign(keys, moreKeys); }
  if (!("name" in fields)) fields.name = name;
  fields.source = `Hugging Face config (${fam.model_type}, ${cls}; language model ${textType} under ${key})`;
  const spec = makeWithKeys(fields, keys);
  return [spec, textOnly ? [] : outsideParts(fam, view)];
}
function outsideParts(fam, view) {  // hf._outside: the vision tower and projector, counted where the sizes allow
  const w = fam.wrapper, label = `families/${fam.model_type}.toml`;
  const sizes = {}, problems = {};
  const scope = makeScope(view, fam.defaults || {});
  for (const [sym, text] of Object.entries(w.sizes || {})) {
    let value, read;
    try { [value, read] = evaluate(text, scope, `${label}: wrapper.sizes.${sym}`); } catch (e) {
      if (!(e instanceof SymcalcError)) throw e;
      problems[sym] = e.message; continue;
    }
    if (typeof value === "boolean" && T().visionSwitches().has(sym)) value = +value;
    if (typeof value === "boolean" || !isInt(value) || value < 0) {
      problems[sym] = `${read.join(", ") || sym}: must be a whole number (got ${repr(value)})`; continue;
    }
    sizes[sym] = BigInt(value);
  }
  const out = [];
  for (const [role, kind] of [["vision_tower", w.vision], ["audio_tower", w.audio], ["projector", w.projector]]) {
    if (!kind) continue;
    const {description, source, symbols, total: ml, count} = T().visionPart(role, kind);
    const missing = symbols.filter(x => !(x in sizes)).sort();
    if (missing.length) {
      const why = missing.map(x => problems[x] || `${x}: not given by the family file`).join("; ");
      out.push({role, kind, description, source, params: null, breakdown: {}, why, ml, symbols, sizes: {}});
      continue;
    }
    const breakdown = {};
    let total = 0n;
    for (const [path, x] of count(sizes)) { total += x; if (x) breakdown[path] = x; }
    out.push({role, kind, description, source, params: total, breakdown, why: "", ml, symbols,
              sizes: Object.fromEntries(symbols.map(x => [x, sizes[x]]))});
  }
  return out;
}
function withParts(rep, outside, part) {  // commands.report.with_parts (--part text | all)
  const params = rep.params;
  const parts = {text: {description: "language model", params: params.total, included: true}};
  for (const o of outside) {
    parts[o.role] = {kind: o.kind, description: o.description, source: o.source, params: o.params};
    if (o.params === null) parts[o.role].why = o.why;
    parts[o.role].included = part === "all";
  }
  if (part === "all") {
    const unknown = outside.filter(o => o.params === null);
    if (unknown.length) throw new SymcalcError("--part", `all needs the ${unknown[0].role.replace(/_/g, " ")}'s sizes (${unknown[0].why})`);
    const extra = outside.reduce((a, o) => a + o.params, 0n);
    for (const key of ["total", "non_embedding", "active"]) params[key] += extra;
    for (const o of outside) Object.assign(params.breakdown, o.breakdown);
  }
  rep.part = part; rep.parts = parts;
  rep.left_out = part === "all" ? [] : outside.map(o => o.role);
  rep.parts_note = META.parts_note;
  return rep;
}
function readConfigModel(text, name = "config.json") {  // [spec, outside] of a config.json's text
  return readModel(parseConfig(text, name), name);
}
function readConfigText(text, name = "config.json") { return specFromConfig(parseConfig(text, name), name); }
function parseConfig(text, name) {
  let data;
  try { data = parseJSON(text); } catch (e) { throw new SymcalcError(name, `is not JSON (${e.message})`); }
  if (data === null || typeof data !== "object" || Array.isArray(data) || isFloat(data))
    throw new SymcalcError(name, `must be a JSON object, not ${data === null ? "NoneType" : Array.isArray(data) ? "list" : typeof data === "string" ? "str" : isFloat(data) ? "float" : typeof data === "boolean" ? "bool" : "int"}`);
  return data;
}
function presetSpec(name) {
  const p = ownGet(META.presets, name);
  if (!p) throw new SymcalcError("MODEL", `${r60(name)} is not a preset (see \`symcalc presets\`)`);
  return makeSpec({name: p.name, source: p.source, ...p.spec, implementation: p.implementation});
}

return {init, own, ownGet, meta: () => META, SymcalcError, PyFloat, parseJSON, repr, parseInt: parseInt_, makeSpec, withOverrides, coerceText,
        values, report, fits, toJSON, derivation, withParts, readConfigModel, readModel, evaluate, makeScope, specFromConfig, readConfigText,
        presetSpec, checkedOptions, defaultOptions, shape, hybrid, seqLenOf, big, number, checkDtype,
        activationFacts};
})();
if (typeof module !== "undefined") module.exports = SYMCALC_CORE;

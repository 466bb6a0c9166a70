// The term table's evaluator for the calculator page: the same table as symcalc.fast.terms
// (symcalc/fast/terms.store, embedded by `symcalc page`), read the same way, with BigInt so that
// every count stays exact. See docs/evaluators.md for the table's format: rows
// [path, source, guard, tree, den(, choice)] or references [set, index, guards(, path)], trees
// int | name | [op, ...args] with op + * ^ min max cd fd (and / in coefficients), quantities as
// {sum: [[set, coefficient(, view)]], fix, times, stage}, views, lets and plan facts (a name
// "<kind>:<part>" of a fact kind: 0 unless given).
"use strict";
const SYMCALC_TERMS = (() => {
let TABLE = null, KINDS = new Set(), RESOLVED = new Map();
function init(table) { TABLE = table; CACHE.clear(); RESOLVED.clear(); KINDS = new Set(Object.keys(table.fact_kinds || {})); }
const table = () => TABLE;
const isFact = name => { const k = name.indexOf(":"); return k > 0 && KINDS.has(name.slice(0, k)); };

const big = x => (typeof x === "bigint" ? x : typeof x === "string" ? BigInt(x.slice(1)) : BigInt(x));
const isBig = x => typeof x === "bigint";
function leaf(name, c) {  // a name's constant value, or the name itself (a size)
  if (name[0] === "#") return BigInt(name.slice(1));
  if (Object.prototype.hasOwnProperty.call(c, name)) return c[name];
  return isFact(name) ? 0n : name;
}

// ---- trees ------------------------------------------------------------------------------------
function fold(t, c) {  // the constants of c put in and folded (terms.fold)
  if (typeof t === "number") return BigInt(t);
  if (typeof t === "string") return leaf(t, c);
  const op = t[0], args = t.slice(1).map(a => fold(a, c));
  if (op === "*") {
    let k = 1n; const rest = [];
    for (const a of args) { if (isBig(a)) { if (a === 0n) return 0n; k *= a; } else rest.push(a); }
    if (!rest.length) return k;
    if (k !== 1n) rest.unshift(k);
    return rest.length === 1 ? rest[0] : ["*", ...rest];
  }
  if (op === "+") {
    let k = 0n; const rest = [];
    for (const a of args) { if (isBig(a)) k += a; else rest.push(a); }
    if (!rest.length) return k;
    if (k) rest.push(k);
    return rest.length === 1 ? rest[0] : ["+", ...rest];
  }
  if (args.every(isBig)) {
    const [a, b] = args;
    if (op === "^") return a ** b;
    if (op === "min") return a < b ? a : b;
    if (op === "max") return a > b ? a : b;
    if (op === "cd") return cdiv(a, b);
    if (op === "fd") return fdiv(a, b);
  }
  return [op, ...args];
}
function cdiv(n, d) { let q = n / d; if (q * d !== n && ((n > 0n) === (d > 0n))) q += 1n; return q; }
function fdiv(n, d) { let q = n / d; if (q * d !== n && ((n > 0n) !== (d > 0n))) q -= 1n; return q; }
function evaluate(t, v) {  // a folded tree at sizes v (BigInt)
  if (isBig(t)) return t;
  if (typeof t === "string") {
    if (!(t in v)) throw new Error(`no value for ${t}`);
    return v[t];
  }
  const op = t[0];
  if (op === "*") { let out = 1n; for (const a of t.slice(1)) out *= evaluate(a, v); return out; }
  if (op === "+") { let out = 0n; for (const a of t.slice(1)) out += evaluate(a, v); return out; }
  const a = evaluate(t[1], v), b = op === "^" ? big(t[2]) : evaluate(t[2], v);
  if (op === "^") return a ** b;
  if (op === "min") return a < b ? a : b;
  if (op === "max") return a > b ? a : b;
  if (op === "cd") return cdiv(a, b);
  if (op === "fd") return fdiv(a, b);
  throw new Error(`unknown operation ${op}`);
}
function gcd(a, b) { a = a < 0n ? -a : a; b = b < 0n ? -b : b; while (b) [a, b] = [b, a % b]; return a; }
function ratio(t, c) {  // a coefficient at constants c (BigInts, or [n, d] pairs: the lets) as [numerator, denominator > 0]
  if (typeof t === "number" || (typeof t === "string" && t[0] === "#")) return [big(t), 1n];
  if (typeof t === "string") {
    const x = leaf(t, c);
    if (Array.isArray(x)) return x;
    if (!isBig(x)) throw new Error(`no value for ${t}`);
    return [x, 1n];
  }
  const op = t[0], parts = t.slice(1).map(a => ratio(a, c));
  let n, d;
  if (op === "min" || op === "max") {
    const [[a, b], [p, q]] = parts;
    return ((a * q < p * b) === (op === "min")) ? [a, b] : [p, q];
  }
  if (op === "cd" || op === "fd") {
    const [[a, b], [p, q]] = parts;
    n = a * q; d = b * p;
    if (d < 0n) { n = -n; d = -d; }
    return [op === "cd" ? cdiv(n, d) : fdiv(n, d), 1n];
  }
  if (op === "*") { n = 1n; d = 1n; for (const [a, b] of parts) { n *= a; d *= b; } }
  else if (op === "+") { n = 0n; d = 1n; for (const [a, b] of parts) { n = n * b + a * d; d *= b; } }
  else if (op === "/") { const [[a, b], [p, q]] = parts; n = a * q; d = b * p; }
  else if (op === "^") { const [[a, b], [e]] = parts; n = a ** e; d = b ** e; }
  else throw new Error(`operation ${op} in a coefficient`);
  if (d < 0n) { n = -n; d = -d; }
  const g = gcd(n, d);
  return g > 1n ? [n / g, d / g] : [n, d];
}
function combine(parts) {  // sum of x n / d over parts, as [numerator, common denominator]
  let common = 1n;
  for (const [, , d] of parts) common = common * d / gcd(common, d);
  let total = 0n;
  for (const [x, n, d] of parts) total += x * n * (common / d);
  return [total, common];
}

// ---- one model's rows: the constants folded in once (terms.specialize) -------------------------
function resolve(sets, row) {  // a row, or a reference [set, index, guards(, path)] resolved (terms._resolve)
  if (typeof row[0] !== "string") return row;
  const base = resolve(sets, sets[row[0]][row[1]]);
  return [row.length > 3 ? row[3] : base[0], base[1], base[2].concat(row[2]), ...base.slice(3)];
}
function resolved(shape, name) {
  const key = shape + "|" + name;
  if (!RESOLVED.has(key)) { const sets = TABLE.shapes[shape].sets; RESOLVED.set(key, sets[name].map(r => resolve(sets, r))); }
  return RESOLVED.get(key);
}
class Rows {
  constructor(shape, constants) { this.shape = shape; this.constants = constants; this.sets = new Map(); this.letsBy = new Map(); this.views = new Map(); this.coefs = new Map(); }
  rows(name) {
    if (this.sets.has(name)) return this.sets.get(name);
    const out = [], c = this.constants, strings = TABLE.strings;
    for (const row of resolved(this.shape, name)) {
      let k = 1n;
      for (const g of row[2]) { const x = leaf(g, c); k *= isBig(x) ? x : BigInt(x); if (!k) break; }
      if (!k) continue;
      const t = fold(row[3], c);
      if (t === 0n) continue;
      out.push({path: strings[row[0]], source: strings[row[1]], tree: k === 1n ? t : (isBig(t) ? k * t : ["*", k, t]),
                den: big(row[4]), choice: row.length > 5 ? strings[row[5]] : "", guard: row[2]});
    }
    this.sets.set(name, out);
    return out;
  }
  lets(stage = null) {  // the constants with the stage index and the table's lets ([n, d] pairs) put in (terms.Rows.lets)
    const key = stage === null ? "" : String(stage);
    if (!this.letsBy.has(key)) {
      const c = {...this.constants};
      if (stage !== null) c.i_p = BigInt(stage);
      for (const [name, t] of TABLE.lets || []) c["$" + name] = ratio(t, c);
      this.letsBy.set(key, c);
    }
    return this.letsBy.get(key);
  }
  entry(q) { return TABLE.shapes[this.shape].quantities[q]; }
  at(q) {  // the rows with the values the quantity fixes (the contract's full score matrix)
    const fix = this.entry(q).fix;
    if (!fix || Object.entries(fix).every(([k, x]) => this.constants[k] === big(x))) return this;
    const c = {...this.constants};
    for (const [k, x] of Object.entries(fix)) c[k] = big(x);
    return specialize(this.shape, c);
  }
  coefficients(q, stage = null) {  // [set, numerator, denominator, view] of the quantity's combination, zeros left out
    const entry = this.entry(q), st = entry.stage ? stage : null, key = q + "|" + st;
    if (!this.coefs.has(key)) {
      const c = entry.stage ? this.lets(st) : this.constants;
      const [tn, td] = entry.times ? ratio(entry.times, c) : [1n, 1n];
      this.coefs.set(key, entry.sum.map(([name, t, view]) => { const [n, d] = ratio(t, c); return [name, n * tn, d * td, view || null]; })
        .filter(([, n]) => n !== 0n));
    }
    return this.coefs.get(key);
  }
  view(name, v, stage = null) {  // the sizes v with the view's substituted (terms.Rows.view)
    const key = name + "|" + stage;
    if (!this.views.has(key)) {
      const c = {...this.constants};
      if (stage !== null) c.i_p = BigInt(stage);
      this.views.set(key, Object.entries(TABLE.views[name]).map(([k, t]) => [k, fold(t, c)]));
    }
    const out = {...v};
    for (const [k, t] of this.views.get(key)) if (k in v) out[k] = evaluate(t, v);
    return out;
  }
  setSum(name, v) {
    const byDen = new Map();
    for (const r of this.rows(name)) byDen.set(r.den, (byDen.get(r.den) || 0n) + evaluate(r.tree, v));
    return combine([...byDen].map(([den, x]) => [x, 1n, den]));
  }
  exact(q, v, stage = null, memo = null) {  // [numerator, denominator] of quantity q at sizes v (and the stage)
    const at = this.at(q);
    if (at !== this) return at.exact(q, v, stage, memo);
    return combine(this.coefficients(q, stage).map(([name, n, d, view]) => {
      const sizes = view === null ? v : this.view(view, v, stage);
      const key = memo ? name + "|" + view + "|" + (view === null ? "" : Object.keys(TABLE.views[view]).map(k => sizes[k]).join(",")) : null;
      let got = memo && memo.get(key);
      if (!got) { got = this.setSum(name, sizes); if (memo) memo.set(key, got); }
      const [x, den] = got;
      return [x, n, d * den];
    }));
  }
  number(q, v, stage = null, memo = null) { const [x, den] = this.exact(q, v, stage, memo); return den === 1n ? x : cdiv(x, den); }
  leaves(name, v) { return this.rows(name).map(r => [r.path, r.den === 1n ? evaluate(r.tree, v) : cdiv(evaluate(r.tree, v), r.den)]); }
}
const CACHE = new Map();
function specialize(shape, constants) {
  const key = shape + "|" + Object.keys(constants).sort().map(k => `${k}=${constants[k]}`).join(",");
  if (!CACHE.has(key)) { if (CACHE.size > 64) CACHE.clear(); CACHE.set(key, new Rows(shape, constants)); }
  return CACHE.get(key);
}

// ---- vision parts (symcalc.algebra.vision) ------------------------------------------------------
function visionPart(role, kind) {
  const p = TABLE.vision.find(x => x[0] === role && x[1] === kind);
  if (!p) return null;
  const [, , description, source, symbols, rows, total, switches] = p;
  return {description, source, symbols, total, switches,
          count: sizes => rows.map(([path, t]) => [path, evaluate(fold(t, sizes), sizes)])};
}
function visionSwitches() {  // symcalc.algebra.vision.SWITCHES: the sizes that are 0 or 1
  return new Set(TABLE.vision.flatMap(p => p[7]));
}

// ---- a folded tree as MathML, and with numbers put in -------------------------------------------
function symbolML(name) {
  const k = name.indexOf("_");
  return k < 0 ? `<mi>${name}</mi>` : `<msub><mi>${name.slice(0, k)}</mi><mi>${name.slice(k + 1).replace(/_/g, " ")}</mi></msub>`;
}
const group3 = x => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
function mathml(t, v = null, outer = "") {  // v: put the sizes' values in
  if (isBig(t)) return `<mn>${group3(t)}</mn>`;
  if (typeof t === "number") return `<mn>${group3(t)}</mn>`;
  if (typeof t === "string") return v ? `<mn>${group3(v[t])}</mn>` : symbolML(t);
  const op = t[0], args = t.slice(1);
  if (op === "+") {
    const body = args.map((a, i) => {
      const neg = Array.isArray(a) && a[0] === "*" && isBig(a[1]) && a[1] < 0n;
      const m = neg ? mathml(a[1] === -1n ? (a.length === 3 ? a[2] : ["*", ...a.slice(2)]) : ["*", -a[1], ...a.slice(2)], v, "*") : mathml(a, v, "+");
      return (i ? (neg ? "<mo>&#x2212;</mo>" : "<mo>+</mo>") : (neg ? "<mo>&#x2212;</mo>" : "")) + m;
    }).join("");
    return outer === "*" || outer === "^" ? `<mrow><mo>(</mo>${body}<mo>)</mo></mrow>` : `<mrow>${body}</mrow>`;
  }
  if (op === "*") return `<mrow>${args.map(a => mathml(a, v, "*")).join(v ? "<mo>&#xD7;</mo>" : "<mo>&#xB7;</mo>")}</mrow>`;
  if (op === "^") return `<msup>${mathml(args[0], v, "^")}<mn>${args[1]}</mn></msup>`;
  if (op === "min" || op === "max") return `<mrow><mi>${op}</mi><mo>(</mo>${mathml(args[0], v)}<mo>,</mo>${mathml(args[1], v)}<mo>)</mo></mrow>`;
  if (op === "cd") return `<mrow><mo>&#x2308;</mo><mfrac>${mathml(args[0], v)}${mathml(args[1], v)}</mfrac><mo>&#x2309;</mo></mrow>`;
  if (op === "fd") return `<mrow><mo>&#x230A;</mo><mfrac>${mathml(args[0], v)}${mathml(args[1], v)}</mfrac><mo>&#x230B;</mo></mrow>`;
  if (op === "/") return `<mfrac>${mathml(args[0], v)}${mathml(args[1], v)}</mfrac>`;
  return `<mtext>?</mtext>`;
}
function names(t, out = new Set()) {  // the sizes a folded tree reads
  if (typeof t === "string") out.add(t);
  else if (Array.isArray(t)) for (const a of t.slice(1)) names(a, out);
  return out;
}

return {init, table, specialize, fold, evaluate, ratio, combine, cdiv, fdiv, visionPart, visionSwitches, mathml, names, big, isFact};
})();
if (typeof module !== "undefined") module.exports = SYMCALC_TERMS;

// How fast, on the calculator page: the rules of symcalc.algebra.roofline as recorded trees
// (symcalc.fast.speed.page_rules, in META.speed), walked with exact BigInt rationals. This file
// holds no rule: it gathers the figures the trees name from the page's own report and the
// accelerator's data, and evaluates the trees in order. Tree: a name, an integer, ["q", "p/q"],
// or [op, ...] with op + - * / ^ max min ceil floor ge.
"use strict";
const SYMCALC_SPEED = (() => {
const gcd = (a, b) => { a = a < 0n ? -a : a; b = b < 0n ? -b : b; while (b) [a, b] = [b, a % b]; return a; };
function norm([n, d]) {
  if (d < 0n) { n = -n; d = -d; }
  const g = gcd(n, d);
  return g > 1n ? [n / g, d / g] : [n, d];
}
const cmp = ([a, b], [c, d]) => { const x = a * d, y = c * b; return x < y ? -1 : x > y ? 1 : 0; };
function floorQ([n, d]) { let q = n / d; if (q * d !== n && n < 0n) q -= 1n; return q; }
function value(t, env) {
  if (typeof t === "number" || typeof t === "bigint") return [BigInt(t), 1n];
  if (typeof t === "string") {
    if (!(t in env)) throw new Error(`speed: no value for ${t}`);
    return env[t];
  }
  const op = t[0];
  if (op === "q") { const [n, d] = t[1].split("/"); return [BigInt(n), BigInt(d)]; }
  const a = t.slice(1).map(x => value(x, env));
  switch (op) {
    case "+": return norm([a[0][0] * a[1][1] + a[1][0] * a[0][1], a[0][1] * a[1][1]]);
    case "-": return norm([a[0][0] * a[1][1] - a[1][0] * a[0][1], a[0][1] * a[1][1]]);
    case "*": return norm([a[0][0] * a[1][0], a[0][1] * a[1][1]]);
    case "/": if (a[1][0] === 0n) throw new Error("speed: division by 0"); return norm([a[0][0] * a[1][1], a[0][1] * a[1][0]]);
    case "^": { const e = a[1][0]; return e >= 0n ? norm([a[0][0] ** e, a[0][1] ** e]) : norm([a[0][1] ** -e, a[0][0] ** -e]); }
    case "max": return a.reduce((x, y) => (cmp(y, x) > 0 ? y : x));
    case "min": return a.reduce((x, y) => (cmp(y, x) < 0 ? y : x));
    case "floor": return [floorQ(a[0]), 1n];
    case "ceil": return [-floorQ([-a[0][0], a[0][1]]), 1n];
    case "ge": return [cmp(a[0], a[1]) >= 0 ? 1n : 0n, 1n];
    default: throw new Error(`speed: unknown operation ${op}`);
  }
}
function evaluate(rules, env) {  // every output in order, each added to the values
  const out = {...env};
  for (const [name, tree] of Object.entries(rules)) out[name] = value(tree, out);
  return out;
}
function leaves(bd) {  // breakdown paths with no part below them
  const paths = Object.keys(bd);
  return paths.filter(p => !paths.some(q => q.startsWith(p + "/")));
}
// The figures the trees name, from the page's report: r (at the options), kvAt(s) (the KV
// cache of the batch at s tokens), the spec, the options and the accelerator. Null when the
// page cannot say (an encoder-decoder, a quantized weight format, no bandwidth).
function inputs(S, r, kvAt, spec, opts, gpu) {
  if (!gpu || !gpu.memory_bandwidth || spec.family === "encoder-decoder") return null;
  const bytes = S.dtype_bytes[String(opts.dtype).toLowerCase()];
  if (!bytes) return null;  // quantized formats: the command line gives them
  const dtype = S.compute_dtypes[String(opts.dtype).toLowerCase()] || "bf16";
  let peak = gpu.flops[dtype];
  if (peak === undefined && dtype === "fp16") peak = gpu.flops[S.fp16_falls_back_to];
  if (peak === undefined) return null;
  const bd = r.params.breakdown, leafs = leaves(bd);
  const lookupPaths = S.lookup.concat(spec.head !== "tied" ? S.lookup_untied_head : []);
  const sum = (paths) => paths.reduce((a, p) => a + BigInt(bd[p] || 0), 0n);
  const times = (n) => norm([n * BigInt(bytes[0]), BigInt(bytes[1])]);
  const context = BigInt(opts.context || r.flops.seq_len);
  const q = (x) => [BigInt(x), 1n];
  return {
    prefill_flops: q(r.flops.forward), decode_flops: q(r.flops.decode_per_token),
    weights: q(r.memory.weights_bytes),
    lookup: times(sum(leafs.filter(p => lookupPaths.includes(p)))),
    routed: times(sum(leafs.filter(p => p.startsWith(S.routed_prefix)))),
    E: q(spec.E && spec.k ? spec.E : 1), k: q(spec.E && spec.k ? spec.k : 1),
    kv_cache: q(r.memory.kv_cache_bytes), kv_context: q(kvAt(context)), kv_token: q(kvAt(1n)),
    state: q(r.memory.recurrent_state_bytes || 0), layers: q(spec.L), width: q(spec.d),
    value_bytes: q(S.value_bytes[String(opts.dtype).toLowerCase()] || S.value_bytes_default),
    batch: q(r.flops.batch), seq_len: q(r.flops.seq_len), peak: q(peak),
    bandwidth: q(gpu.memory_bandwidth), dtype,
  };
}
function figures(S, r, kvAt, spec, opts, gpu) {
  const env = inputs(S, r, kvAt, spec, opts, gpu);
  if (!env) return null;
  const dtype = env.dtype;
  delete env.dtype;
  const out = evaluate(S.rules, env);
  out.dtype = dtype;
  return out;
}
const toNumber = ([n, d]) => Number(n) / Number(d);
return {value, evaluate, figures, toNumber};
})();
if (typeof module !== "undefined") module.exports = SYMCALC_SPEED;

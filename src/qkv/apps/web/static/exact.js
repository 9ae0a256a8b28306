// Exact numbers for the playground (playground.js): what a person types, read
// without eval (√2, ln 2, 1/2, 3 ln 2), and a number written in the exact form `qkv attend` gives
// it when it has one (qkv.analysis.numbers: 1/2, ln 2, √2/2), else as its 6 significant digits.

import { fmt } from "./util.js";
import { t } from "./i18n.js";

// ---------------------------------------------------------------------------------------------
// Numbers: what a person types (no eval: a small recursive-descent reader), and exact forms
// ---------------------------------------------------------------------------------------------

const PG_FUNCS = Object.assign(Object.create(null), {
  sqrt: [1, 1, Math.sqrt], ln: [1, 1, Math.log], exp: [1, 1, Math.exp],
  log: [1, 2, (x, b) => (b === undefined ? Math.log(x) : Math.log(x) / Math.log(b))],
});
const PG_CONSTS = Object.assign(Object.create(null), { pi: Math.PI, "π": Math.PI, e: Math.E });

/** The value of a small expression ("√2", "sqrt(2)/2", "ln 2", "2^-3", "3 ln 2", "-pi"); a one-line Error otherwise. */
export function pgParse(text) {
  const src = String(text).replace(/[−–]/g, "-").replace(/[·×]/g, "*").replace(/÷/g, "/").replace(/\*\*/g, "^");
  const shown = src.trim().slice(0, 40);
  if (!src.trim()) throw new Error(t("pg_err_empty"));
  if (src.length > 200) throw new Error(t("pg_err_long"));
  const toks = src.match(/\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|[A-Za-zπ]+|\S/g) || [];
  let i = 0;
  const fail = (tok) => { throw new Error(t(tok === undefined ? "pg_err_end" : "pg_err_at", { text: shown, tok })); };
  const isWord = (s) => s !== undefined && /^[A-Za-zπ]/.test(s);
  const expr = () => {
    let v = term();
    while (toks[i] === "+" || toks[i] === "-") v = toks[i++] === "+" ? v + term() : v - term();
    return v;
  };
  const term = () => {
    let v = unary();
    for (;;) {
      const s = toks[i];
      if (s === "*") { i++; v *= unary(); } else if (s === "/") { i++; v /= unary(); }
      else if (s === "(" || s === "√" || isWord(s)) v *= power();  // 2√3, 3 ln 2, 2(1+1)
      else return v;
    }
  };
  const unary = () => (toks[i] === "-" ? (i++, -unary()) : toks[i] === "+" ? (i++, unary()) : power());
  const power = () => { const b = atom(); return toks[i] === "^" ? (i++, Math.pow(b, unary())) : b; };
  const atom = () => {
    const s = toks[i++];
    if (s !== undefined && /^[\d.]/.test(s)) { const v = Number(s); return Number.isNaN(v) ? fail(s) : v; }
    if (s === "(") { const v = expr(); if (toks[i] !== ")") fail(toks[i]); i++; return v; }
    if (s === "√") return Math.sqrt(atom());
    if (!isWord(s)) return fail(s);
    if (s in PG_CONSTS) return PG_CONSTS[s];
    const f = PG_FUNCS[s];
    if (!f) throw new Error(t("pg_err_name", { name: s }));
    if (toks[i] !== "(") return f[2](atom());  // ln 2, sqrt 2: the function of the next atom
    i++;
    const args = [expr()];
    while (toks[i] === ",") { i++; args.push(expr()); }
    if (toks[i] !== ")") fail(toks[i]);
    i++;
    if (args.length < f[0] || args.length > f[1]) throw new Error(t("pg_err_args", { name: s, n: f[0] === f[1] ? f[0] : `${f[0]}–${f[1]}` }));
    return f[2](...args);
  };
  const v = expr();
  if (i < toks.length) fail(toks[i]);
  if (!Number.isFinite(v)) throw new Error(t("pg_err_finite", { text: shown }));
  return v;
}

let pgBaseList = null;  // [text, value, kind]: √n (n square-free ≤ 100), ln n (n ≤ 20), √n·ln m, π, e
function pgBases() {
  if (pgBaseList) return pgBaseList;
  const squarefree = (n) => { for (let p = 2; p * p <= n; p++) if (n % (p * p) === 0) return false; return true; };
  const roots = [];
  for (let n = 2; n <= 100; n++) if (squarefree(n)) roots.push(n);
  const b = roots.map((n) => [`√${n}`, Math.sqrt(n), "root"]);
  for (let n = 2; n <= 20; n++) b.push([`ln ${n}`, Math.log(n), "word"]);
  for (const n of roots) if (n <= 20) for (let m = 2; m <= 20; m++) b.push([`√${n}·ln ${m}`, Math.sqrt(n) * Math.log(m), "glued"]);
  b.push(["π", Math.PI, "root"], ["e", Math.E, "root"]);
  return (pgBaseList = b);
}

/** (p/q)·base as text: "1/2", "-√2/2", "2√3/3", "ln 2", "(3 ln 2)/2", "(√2·ln 3)/2". */
function pgRatio(p, q, base, kind) {
  const gcd = (a, b) => (b ? gcd(b, a % b) : a), g = gcd(Math.abs(p), q);
  const a = Math.abs(p) / g, d = q / g, sign = p < 0 ? "-" : "";
  if (!base) return d === 1 ? `${sign}${a}` : `${sign}${a}/${d}`;
  const top = a === 1 ? base : kind === "word" ? `${a} ${base}` : `${a}${base}`;
  return d === 1 ? sign + top : kind === "root" ? `${sign}${top}/${d}` : `${sign}(${top})/${d}`;
}

/** The exact form of x to 1e-12·max(1, |x|), the simplest base first, then the smallest denominator; or null. */
function pgFindForm(x) {
  const ax = Math.abs(x), tol = 1e-12 * Math.max(1, ax);
  if (ax > 1e15) return null;
  if (ax > 1e6) return Math.abs(x - Math.round(x)) <= tol ? String(Math.round(x)) : null;
  for (let q = 1; q <= 64; q++) {
    const p = Math.round(x * q);
    if (Math.abs(x - p / q) <= tol) return p === 0 && x !== 0 ? null : pgRatio(p, q, "", "");  // 1e-13 never shows as 0
  }
  // Any p/q this close to y = x/B is a convergent of y's continued fraction (|y − p/q| < 1/(2q²)):
  // trying those, smallest q first, gives the same answer as trying every q ≤ 64, much faster.
  for (const [text, value, kind] of pgBases()) {
    const y = x / value;
    let p0 = 1, p = Math.floor(y), q0 = 0, q = 1, r = y - p;
    for (;;) {
      if (p !== 0 && Math.abs(p) <= 1000 && Math.abs(x - (p / q) * value) <= tol) return pgRatio(p, q, text, kind);
      if (!(r > 0)) break;
      const inv = 1 / r, a = Math.floor(inv);
      r = inv - a;
      [p0, p, q0, q] = [p, a * p + p0, q, a * q + q0];
      if (!(q <= 64)) break;
    }
  }
  return null;
}

const pgForms = new Map();
export function pgClosed(x) {
  if (!Number.isFinite(x)) return null;
  let form = pgForms.get(x);
  if (form === undefined) {
    if (pgForms.size > 4096) pgForms.clear();
    pgForms.set(x, (form = pgFindForm(x)));
  }
  return form;
}

/** Python's f"{x:.6g}". */
function pgG(x) {
  const strip = (s) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  const [m, e] = x.toExponential(5).split("e"), ex = +e;
  if (ex < -4 || ex >= 6) return `${strip(m)}e${ex < 0 ? "-" : "+"}${String(Math.abs(ex)).padStart(2, "0")}`;
  return strip(x.toFixed(5 - ex));
}

/** A number as `qkv attend` displays it (numbers.fmt): its exact form, else 6 significant digits. */
export function pgFmt(x) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "∞" : "-∞";
  return pgClosed(x) ?? pgG(x);
}

export const pgShort = (x) => { const f = pgClosed(x); return f !== null && f.length <= 6 ? f : fmt(x); };

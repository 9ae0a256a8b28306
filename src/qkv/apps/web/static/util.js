// Small helpers every card uses: the element lookup, the page's number format, HTML escaping.

export const $ = (sel) => document.querySelector(sel);
// The one number format of the page (tests parse it). A diverged model's numbers: NaN, ∞, and — for
// what JSON carried as null (core/finite.py).
export const fmt = (x) => x === null || x === undefined ? "—" : Number.isNaN(x) ? "NaN"
  : !Number.isFinite(x) ? (x > 0 ? "∞" : "-∞") : (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(2) : x.toFixed(4);
export const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
export const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));
export const num = (x, attrs = "") => `<span class="num"${attrs}>${fmt(x)}</span>`;

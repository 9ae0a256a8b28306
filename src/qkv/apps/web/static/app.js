"use strict";
// qkv explorer: the browser side. One "view" document (qkv.analysis.view) holds every number the
// page shows; the arrays are decoded once into typed arrays, and a change of layer, head or query
// token only redraws from them. No framework, no network beyond the same-origin JSON API.
// A translation model's "translation-view" (qkv.analysis.translation_view) holds three attentions
// ("parts": cross, decoder, encoder), each with its own queries and keys: the page shows the chosen
// one the way it shows a GPT's, with T queries (rows) and Tk keys (columns); for a GPT Tk = T.
// The page's text in both languages (I18N) is in i18n.js, loaded first.

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const $ = (sel) => document.querySelector(sel);
// The one number format of the page (tests parse it).
const fmt = (x) => (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(2) : x.toFixed(4);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));
const num = (x, attrs = "") => `<span class="num"${attrs}>${fmt(x)}</span>`;

/** The string `key` in the current language with {name} replaced by vars[name] (already HTML). */
function t(key, vars) {
  let s = I18N[S.lang][key] ?? I18N.en[key] ?? key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? vars[name] : m));
  return s;
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

const S = {
  lang: "en", mode: "live",
  info: null, examples: [],        // from /api/model
  doc: null, A: null,              // the current view document and its decoded arrays
  T: 0, L: 0, H: 0, k: 0,
  layer: 0, head: 0, token: 0,
  tr: false, part: null,           // a translation model, and which of its attentions is shown
  P: null, Tk: 0, cache: {}, shared: {},  // the attention shown: its labels, decoded arrays per part
  compare: null, added: null, stopped: null, req: 0, drawn: 0,
  labelW: 40,                      // widest token label in px (measured once per document)
};
// Panels in their own files (playground.js, origin.js, ...), loaded after this one, push an object here:
//   { name, init() once at start (bind events), onDoc(doc) when a new view arrives,
//     render(what) after every redraw of the main panels, lang() after a language switch,
//     lazy: true for a panel that asks the server or draws a lot }
// They share this file's globals (S, t, fmt, esc, num, api, showError, decode, at4, ...): classic
// scripts share one global scope.
// A lazy panel sleeps while its card (id = its name) is more than half a screen away: what it was
// told meanwhile is replayed once when the card comes near (onDoc with the newest document, lang,
// then one render), so a change of text, layer or head costs only the cards a learner can see.
const PANELS = [];
const LAZY_MARGIN = "50% 0px";

function eachPanel(hook, ...args) {
  for (const p of PANELS) {
    if (!p[hook]) continue;
    if (p.lazy && !p.awake && hook !== "init") { defer(p, hook, args[0]); continue; }
    p[hook](...args);
  }
}

function defer(p, hook, what) {
  const due = p.due || (p.due = { onDoc: false, lang: false, render: null });
  if (hook === "render") due.render = due.render === "init" || due.render === "text" ? due.render : what;
  else due[hook] = true;
}

function watchLazyPanels() {
  const lazy = PANELS.filter((p) => p.lazy && document.getElementById(p.name));
  if (typeof IntersectionObserver !== "function") { for (const p of PANELS) p.awake = true; return; }
  const seen = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const p = lazy.find((q) => q.name === e.target.id);
      p.awake = e.isIntersecting;
      const due = p.awake && p.due;
      if (!due) continue;
      p.due = null;
      if (due.onDoc && p.onDoc && S.doc) p.onDoc(S.doc);
      if (due.lang && p.lang) p.lang();
      if (due.render !== null && p.render) p.render(due.render);
    }
  }, { rootMargin: LAZY_MARGIN });
  for (const p of lazy) seen.observe(document.getElementById(p.name));
}
window.qkv = { state: { layer: 0, head: 0, token: 0, lang: "en", part: null }, timings: [], view: null, mode: "live" };

function syncState() {
  Object.assign(window.qkv.state, { layer: S.layer, head: S.head, token: S.token, lang: S.lang, part: S.part });
  window.qkv.mode = S.mode;
}

// ---------------------------------------------------------------------------------------------
// Arrays: base64 little-endian → typed arrays, and row-major offsets into them
// ---------------------------------------------------------------------------------------------

function decode(p) {
  let bytes;
  if (Uint8Array.fromBase64) {
    bytes = Uint8Array.fromBase64(p.data);
  } else {
    const bin = atob(p.data);
    bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  }
  const flat = p.dtype === "int32" ? new Int32Array(bytes.buffer) : new Float32Array(bytes.buffer);
  return p.layout === "lower" ? expandLower(flat, p.shape) : flat;
}

/** "lower" layout: each T×T matrix sent as its lower triangle, row by row; above it is 0. */
function expandLower(flat, shape) {
  const T = shape[shape.length - 1], n = shape.reduce((a, b) => a * b, 1) / (T * T);
  const out = new flat.constructor(n * T * T);
  let src = 0;
  for (let m = 0; m < n; m++) {
    for (let i = 0; i < T; i++) {
      const row = (m * T + i) * T;
      out.set(flat.subarray(src, src + i + 1), row);
      src += i + 1;
    }
  }
  return out;
}

/** The scaled scores s_ij = q_i·k_j / √d_head, −∞ where the causal mask hides key j from query i.
 *  The model divides in float32 by float32(√d_head); one correctly rounded division, repeated here
 *  exactly (a double quotient of two float32 numbers rounds to the same float32).
 *  T queries and Tk keys (cross-attention: Tk source words; otherwise Tk = T). */
function scaledScores(dots, L, H, T, scale, causal, Tk = T) {
  const out = new Float32Array(dots.length), s = Math.fround(scale);
  for (let lh = 0; lh < L * H; lh++) {
    for (let i = 0; i < T; i++) {
      const row = (lh * T + i) * Tk;
      for (let j = 0; j < Tk; j++) out[row + j] = causal && j > i ? -Infinity : dots[row + j] / s;
    }
  }
  return out;
}

// [L,H,T,Tk] / [L,H,T] per query / [L,H,Tk] per key / [L,T] offsets
const at4 = (l, h, i, j) => ((l * S.H + h) * S.T + i) * S.Tk + j;
const at3 = (l, h, i) => (l * S.H + h) * S.T + i;
const atK = (l, h, j) => (l * S.H + h) * S.Tk + j;
const at2 = (l, i) => l * S.T + i;

/** The keys query i can see in the current head: those whose score is not −∞. */
function visibleKeys(i) {
  const sc = S.A.scores, base = at4(S.layer, S.head, i, 0), out = [];
  for (let j = 0; j < S.Tk; j++) if (sc[base + j] !== -Infinity) out.push(j);
  return out;
}

/** The attention shown: a GPT's (or an encoder's) own, or the chosen part of a translation model,
 *  with its query and key labels. `self`: queries and keys are the same positions of one sequence. */
function partOf(doc) {
  if (!S.tr) return { arrays: doc.arrays, L: doc.model.n_layers, causal: doc.model.causal, q: doc.tokens, k: doc.tokens,
    qIds: doc.ids, self: true, queries: "text" };
  const p = doc.parts[S.part], src = p.queries === "source";
  return { arrays: p.arrays, L: p.n_layers, causal: p.causal, q: src ? doc.source.tokens : doc.target.written,
    k: p.keys === "source" ? doc.source.tokens : doc.target.tokens, qIds: src ? doc.source.ids : doc.target.written_ids,
    self: p.queries === p.keys, queries: p.queries };
}

/** Make the current part (S.part; a GPT has one) the one shown: decode its arrays once, size S. */
function usePart() {
  const doc = S.doc, p = partOf(doc), key = S.tr ? S.part : "";
  if (!S.cache[key]) {
    const A = {};
    for (const name of Object.keys(p.arrays)) A[name] = decode(p.arrays[name]);
    Object.assign(A, S.shared);
    A.scores = scaledScores(A.dots, p.L, doc.model.n_heads, p.q.length, doc.scale, p.causal, p.k.length);
    S.cache[key] = A;
  }
  S.P = p; S.A = S.cache[key];
  S.T = p.q.length; S.Tk = p.k.length; S.L = p.L;
  S.layer = clamp(S.layer, 0, S.L - 1); S.head = clamp(S.head, 0, S.H - 1); S.token = clamp(S.token, 0, S.T - 1);
}

function loadDoc(doc) {
  S.doc = doc; S.tr = doc.kind === "translation-view"; S.cache = {}; S.shared = {};
  if (S.tr) {
    for (const name of Object.keys(doc.arrays)) S.shared[name] = decode(doc.arrays[name]);  // the next words
    if (!S.part || !doc.parts[S.part]) S.part = "cross";
  } else {
    S.part = null;
  }
  S.H = doc.model.n_heads; S.k = doc.first;
  usePart();
  if (S.tr && !S.opened) {  // the first translation shown: the last decoder layer's sharpest head, as qkv explain
    S.opened = true; S.layer = S.L - 1; S.head = sharpestHead(S.layer);
  }
  S.token = defaultToken(doc);
  window.qkv.view = doc;
  markStale(null);
  $("#text").value = doc.text;
  fillSelects(); renderTokenButtons(); drawThumbs(); measureLabels(); renderTranslation(); renderUnknown();
  renderSpaceBox();
  eachPanel("onDoc", doc);
}

/** The head of layer l whose rows have the smallest mean entropy (the one that reads fewest keys). */
function sharpestHead(l) {
  let best = 0, least = Infinity;
  for (let h = 0; h < S.H; h++) {
    let bits = 0;
    for (let i = 0; i < S.T; i++) for (let j = 0; j < S.Tk; j++) {
      const a = S.A.pattern[at4(l, h, i, j)];
      if (a > 0) bits -= a * Math.log2(a);
    }
    if (bits < least) { least = bits; best = h; }
  }
  return best;
}

/** Show another attention of a translation model (cross, decoder, encoder). */
function choosePart(name, t0) {
  if (!S.tr || !S.doc.parts[name]) return;
  const wasSource = S.P.queries === "source";
  S.part = name;
  usePart();
  if ((S.P.queries === "source") !== wasSource) S.token = defaultToken(S.doc);  // other queries: open on the default
  fillSelects(); renderTokenButtons(); drawThumbs(); measureLabels();
  render("part", t0);
}

/** The query to open on: the last token, or the last that is not a special one ([CLS], [SEP]);
 *  a translation's: the last target step that writes a word (the server's rule), or the last source word. */
function defaultToken(doc) {
  if (S.tr) return S.P.queries === "source" ? S.T - 1 : clamp(doc.default_token, 0, S.T - 1);
  const special = new Set(doc.special || []);
  for (let i = doc.tokens.length - 1; i >= 0; i--) if (!special.has(i)) return i;
  return doc.tokens.length - 1;
}

/** Whether the model has an LM head (a GPT) or is an encoder, which predicts no next token. */
const hasLM = () => { const m = S.info || (S.doc && S.doc.model); return !m || m.has_lm_head !== false; };

// ---------------------------------------------------------------------------------------------
// The API (same origin, relative URLs)
// ---------------------------------------------------------------------------------------------

async function api(path, body) {
  let res;
  try {
    res = await fetch(path, body === undefined ? {} : {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  } catch (e) {
    throw new Error(t("net_error", { msg: e.message }));
  }
  let data = null;
  try { data = await res.json(); } catch (e) { /* not JSON */ }
  if (!res.ok || data === null) throw new Error((data && data.error) || `HTTP ${res.status}`);
  return data;
}

function showError(msg) {
  const el = $("#error");
  el.textContent = msg || "";
  el.hidden = !msg;
  if (msg) reveal(el);
}

/** Show `msg` in an error line inside `card` (an element or a selector; "" clears it), where the
 *  learner is looking: the line is made on first use, under the card's title, and scrolled into
 *  view when it is off-screen. For any card's own errors (generate, compare, a panel). */
function showErrorIn(card, msg) {
  const box = typeof card === "string" ? $(card) : card;
  if (!box) return null;
  let el = box.querySelector(":scope > .card-error");
  if (!el) {
    if (!msg) return null;
    el = document.createElement("p");
    el.className = "error card-error";
    el.setAttribute("role", "alert");
    const title = box.querySelector(":scope > h2");
    if (title) title.after(el); else box.prepend(el);
  }
  el.textContent = msg || "";
  el.hidden = !msg;
  if (msg) reveal(el);
  return el;
}

/** Scroll `el` into view when any part of it is outside the window (no scroll when it is in view). */
function reveal(el) {
  const r = el.getBoundingClientRect();
  if (r.top < 0 || r.bottom > window.innerHeight || r.left < 0 || r.right > window.innerWidth)
    el.scrollIntoView({ block: "nearest", inline: "nearest" });
}

/** A failed analysis leaves the last results on the page: they are dimmed and a line names the
 *  text they belong to (text: that text), until a new view arrives (text: null). */
function markStale(text) {
  document.body.dataset.stale = text === null ? "0" : "1";
  const el = $("#stale");
  el.hidden = text === null;
  if (text !== null) el.textContent = t("stale_note", { text });
}

/** Count requests in flight; body[data-busy] is "1" while any is. */
function busy(on) {
  S.pending = Math.max(0, (S.pending || 0) + (on ? 1 : -1));
  document.body.dataset.busy = S.pending ? "1" : "0";
}

/** Analyse `text` (a string, or {ids: [...]} for tokens as generated): fetch its view, decode,
 *  redraw. t0 = when the user's event began. Only the newest request's answer is shown. */
async function analyze(text, t0, what = "text") {
  const req = ++S.req;
  busy(true);
  try {
    const doc = await api("api/view", typeof text === "string" ? { text } : text);
    if (req !== S.req) return;  // a newer request was made meanwhile
    showError("");
    loadDoc(doc);
    render(what, t0);
  } catch (e) {
    if (req !== S.req) return;
    showError(e.message);
    if (S.doc) markStale(S.doc.text);  // what is below is not this text's
  } finally {
    busy(false);
  }
}

// ---------------------------------------------------------------------------------------------
// The redraw: everything that depends on layer, head or token. Canvases first (they measure the
// layout), then the HTML parts, each built as one string.
// ---------------------------------------------------------------------------------------------

function render(what, t0) {
  if (S.doc && S.tr) {
    $("#heatmap-title").textContent = t("heatmap_title_tr", { part: t("part_" + S.part), l: S.layer, h: S.head });
    $("#heatmap-caption").innerHTML = t("heatmap_" + S.part) + (S.P.causal ? t("heatmap_masked") : "");
  } else if (S.doc) {
    $("#heatmap-title").textContent = t("heatmap_title", { l: S.layer, h: S.head });
    $("#heatmap-caption").innerHTML = t("heatmap_caption") + t(S.doc.model.causal ? "heatmap_masked" : "heatmap_full");
  }
  const later = [];  // cards outside the window: drawn right after the frame that shows the rest
  if (S.doc) {
    drawHeatmap(); drawLines();
    markChosen();
    for (const [card, draw] of BELOW) if (OUT_OF_VIEW[card]) later.push(draw); else draw();
  }
  if (what === "lang" || what === "init") renderCompare();
  eachPanel("render", what);
  syncState();
  const ms = performance.now() - t0;
  // ms: the synchronous redraw; paint_ms: until the frame that shows it has been painted (layout
  // and paint included), read in a task queued from the next animation frame; done_ms: until the
  // cards outside the window, redrawn in that task, have been painted too (the frame after).
  // The page counts the redraw (body[data-renders]) once every card holds the new numbers.
  const entry = { what, ms, paint_ms: null, done_ms: null };
  window.qkv.timings.push(entry);
  const gen = ++S.drawn, painted = () => performance.now() - t0;
  const count = () => { document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1); };
  requestAnimationFrame(() => setTimeout(() => {
    entry.paint_ms = painted();
    if (!later.length) { entry.done_ms = entry.paint_ms; return; }
    if (gen === S.drawn) for (const draw of later) draw();  // else a newer redraw draws them itself
    count();
    requestAnimationFrame(() => setTimeout(() => { entry.done_ms = painted(); }, 0));
  }, 0));
  if (!later.length) count();
}

// The cards below the heatmap, and whether each is out of the window now (an IntersectionObserver
// keeps it up to date; unknown counts as in view). A redraw paints the cards a learner can see first
// and those out of view in the task after that frame: the step table alone (64 rows x 10 numbers)
// costs as much layout and paint as the rest of the page, and at 1280 x 900 it is below the window.
const BELOW = [["steps-card", () => renderSteps()], ["hull-card", () => renderHull()],
  ["residual-card", () => renderResidual()], ["next-card", () => renderNext()]];
const OUT_OF_VIEW = {};
function watchBelow() {
  if (typeof IntersectionObserver !== "function") return;
  const cards = new Map(BELOW.map(([card]) => [document.querySelector("." + card), card]));
  const seen = new IntersectionObserver((entries) => {
    for (const e of entries) OUT_OF_VIEW[cards.get(e.target)] = !e.isIntersecting;
  });
  for (const el of cards.keys()) if (el) seen.observe(el);
}

function fillSelects() {
  const opts = (n) => Array.from({ length: n }, (_, i) => `<option value="${i}">${i}</option>`).join("");
  if ($("#layer").options.length !== S.L) $("#layer").innerHTML = opts(S.L);
  if ($("#head").options.length !== S.H) $("#head").innerHTML = opts(S.H);
  $("#part-box").hidden = !S.tr;
  if (S.tr) $("#part").innerHTML = ["cross", "decoder", "encoder"].map((p) =>
    `<option value="${p}">${esc(t("part_" + p))}</option>`).join("");
}

/** A translation model: the source and its translation, above the query tokens. */
function renderTranslation() {
  const el = $("#translation");
  el.hidden = !S.tr;
  if (!S.tr) return;
  const d = S.doc;
  el.innerHTML = t(d.translated ? "translation_line" : "translation_given", { text: `<b id="translation-text">${esc(d.translation)}</b>` }) +
    (d.finished ? "" : " " + t("translation_cut"));
}

/** Token buttons. A WordPiece piece that continues the word before it (shown ⁀piece) is drawn
 *  joined to that token (class "cont", the one before "joined"); [CLS] and [SEP] are "special". */
function renderTokenButtons() {
  const cont = new Set(S.doc.continues || []), special = new Set(S.doc.special || []);
  $("#tokens").innerHTML = S.P.q.map((tok, i) => {
    const cls = ["token", cont.has(i) ? "cont" : "", cont.has(i + 1) ? "joined" : "", special.has(i) ? "special" : "",
      isSpace(tok) ? "space" : ""];
    return `<button type="button" class="${cls.filter(Boolean).join(" ")}" data-pos="${i}" ` +
      `title="${esc(tokenTitle(i))}">${esc(tok)}</button>`;
  }).join("");  // the position is drawn by CSS (::before), outside textContent
}

/** Whether a token, as shown, is only whitespace: ␣ for spaces, \n, \t, \r. */
const isSpace = (tok) => /^(?:\u2423|\\[nrt]|\s)+$/.test(tok);

/** The positions the token row and the heatmap show among `labels`: all of them, or, with the ␣
 *  toggle on, those that are not whitespace (all again when nothing else is left). */
function shownIdx(labels) {
  const all = labels.map((_, n) => n);
  if (!S.hideSpace) return all;
  const kept = all.filter((n) => !isSpace(labels[n]));
  return kept.length ? kept : all;
}

/** The ␣ toggle: offered only when the model has whitespace tokens (model.whitespace_tokens; for a
 *  document without that field, when this text holds one). */
function renderSpaceBox() {
  const m = S.info || (S.doc && S.doc.model) || {};
  const has = !S.tr && (m.whitespace_tokens ?? (S.doc ? S.doc.tokens.some(isSpace) : false));
  $("#space-box").hidden = !has;
  if (!has) S.hideSpace = false;
  $("#hide-space").checked = !!S.hideSpace;
  document.body.dataset.hideSpace = S.hideSpace ? "1" : "0";
}

/** The note under the text box for pieces the model never learned as words (doc.unknown, from a
 *  word tokenizer with a fallback: read as characters or bytes), with the nearest known words. */
function renderUnknown() {
  const el = $("#unknown"), list = (S.doc && !S.tr && S.doc.unknown) || [];
  el.hidden = !list.length;
  const sep = S.lang === "zh" ? "、" : ", ";
  el.innerHTML = list.map((u) => t((u.nearest || []).length ? "unknown_line" : "unknown_far", {
    text: `<b>${esc(u.text)}</b>`, pieces: u.pieces.map((p) => `<span class="piece">${esc(p)}</span>`).join(" · "),
    how: t(u.how === "bytes" ? "unknown_bytes" : "unknown_chars"),
    nearest: (u.nearest || []).map(esc).join(sep) })).join("<br>");
}

/** A token button's tooltip: its position and id; a translation's target step: what it reads and writes. */
function tokenTitle(i) {
  if (S.tr && S.P.queries === "target")
    return t("step_title", { i, r: S.doc.target.tokens[i], w: S.doc.target.written[i] });
  return t("token_title", { i, id: S.P.qIds[i] });
}

/** Selects, token buttons and head thumbnails show the current choice. */
function markChosen() {
  $("#layer").value = String(S.layer);
  $("#head").value = String(S.head);
  if (S.tr) $("#part").value = S.part;
  for (const b of document.querySelectorAll("#tokens .token.chosen")) b.classList.remove("chosen");
  const b = document.querySelector(`#tokens .token[data-pos="${S.token}"]`);
  if (b) b.classList.add("chosen");
  for (const c of document.querySelectorAll("#heads canvas.on")) c.classList.remove("on");
  const c = document.querySelector(`#heads canvas[data-layer="${S.layer}"][data-head="${S.head}"]`);
  if (c) c.classList.add("on");
}

// ---------------------------------------------------------------------------------------------
// Colour: a 256-step white → blue ramp, as [r, g, b] triples in one Uint8Array
// ---------------------------------------------------------------------------------------------

const RAMP = (() => {
  const stops = [[248, 250, 253], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
  const lut = new Uint8Array(256 * 3);
  for (let n = 0; n < 256; n++) {
    const x = (n / 255) * (stops.length - 1), s = Math.min(stops.length - 2, Math.floor(x)), f = x - s;
    for (let c = 0; c < 3; c++) lut[n * 3 + c] = Math.round(stops[s][c] * (1 - f) + stops[s + 1][c] * f);
  }
  return lut;
})();
const MASKED = [226, 228, 233];

/** Paint one head's T×Tk pattern into `img` (ImageData Tk wide, T high), one pixel per cell. */
function paintPattern(img, l, h) {
  const P = S.A.pattern, sc = S.A.scores, px = img.data, base = at4(l, h, 0, 0), n = S.T * S.Tk;
  for (let c = 0; c < n; c++) {
    const o = c * 4;
    if (sc[base + c] === -Infinity) {
      px[o] = MASKED[0]; px[o + 1] = MASKED[1]; px[o + 2] = MASKED[2];
    } else {
      const r = Math.round(clamp(P[base + c], 0, 1) * 255) * 3;
      px[o] = RAMP[r]; px[o + 1] = RAMP[r + 1]; px[o + 2] = RAMP[r + 2];
    }
    px[o + 3] = 255;
  }
}

/** A canvas sized to w×h CSS pixels (sharp on high-DPI screens), cleared, with its context. */
function sizeCanvas(cv, w, h) {
  const dpr = window.devicePixelRatio || 1, W = Math.round(w * dpr), H = Math.round(h * dpr);
  if (cv.width !== W || cv.height !== H) {
    cv.width = W; cv.height = H; cv.style.width = w + "px"; cv.style.height = h + "px";
  }
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return ctx;
}

const FONT = '"Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "Source Han Sans SC", system-ui, sans-serif';

function measureLabels() {
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = `12px ${FONT}`;
  S.labelW = Math.min(80, Math.max(12, ...S.P.q.concat(S.P.k).map((tk) => ctx.measureText(tk).width)));
}

/** `s` cut to fit `w` px with an ellipsis. */
function fit(ctx, s, w) {
  if (ctx.measureText(s).width <= w) return s;
  while (s.length > 1 && ctx.measureText(s + "…").width > w) s = s.slice(0, -1);
  return s + "…";
}

// ---------------------------------------------------------------------------------------------
// Head thumbnails: drawn once per document (1 px per cell, CSS scales them up)
// ---------------------------------------------------------------------------------------------

function drawThumbs() {
  const box = $("#heads"), T = S.T, Tk = S.Tk;
  let canvases = box.querySelectorAll("canvas");
  if (canvases.length !== S.L * S.H) {  // a new model shape: build the grid (otherwise reuse it)
    box.style.gridTemplateColumns = `auto repeat(${S.H}, 1fr)`;
    let html = "<span></span>";
    for (let h = 0; h < S.H; h++) html += `<span class="axis">h${h}</span>`;
    for (let l = 0; l < S.L; l++) {
      html += `<span class="axis">L${l}</span>`;
      for (let h = 0; h < S.H; h++) html += `<canvas data-layer="${l}" data-head="${h}"></canvas>`;
    }
    box.innerHTML = html;
    canvases = box.querySelectorAll("canvas");
    titleThumbs();
  }
  const img = new ImageData(Tk, T);
  for (const cv of canvases) {
    if (cv.width !== Tk || cv.height !== T) { cv.width = Tk; cv.height = T; }
    if (S.tr) cv.style.aspectRatio = `${Tk} / ${T}`;
    paintPattern(img, +cv.dataset.layer, +cv.dataset.head);
    cv.getContext("2d").putImageData(img, 0, 0);
  }
}

function titleThumbs() {
  for (const cv of document.querySelectorAll("#heads canvas"))
    cv.title = t("thumb_title", { l: cv.dataset.layer, h: cv.dataset.head });
}

// ---------------------------------------------------------------------------------------------
// Heatmap: rows = queries, columns = keys
// ---------------------------------------------------------------------------------------------

const heat = { x0: 0, y0: 0, cell: 1, off: document.createElement("canvas"), img: null };

// The widths of the canvases' boxes, kept up to date by a ResizeObserver: reading clientWidth while
// redrawing would force a layout of the whole page in the middle of a redraw (a second one per frame).
const WRAP_W = {};
function wrapWidth(sel) {
  if (WRAP_W[sel] === undefined) WRAP_W[sel] = $(sel).clientWidth;
  return WRAP_W[sel];
}

function drawHeatmap() {
  const T = S.T, Tk = S.Tk, cv = $("#heatmap"), avail = Math.min(560, wrapWidth("#heatmap-wrap") || 420);
  // the rows (queries) and columns (keys) shown: all, or those that are not whitespace (␣ toggle)
  const rows = shownIdx(S.P.q), cols = shownIdx(S.P.k), nR = rows.length, nC = cols.length;
  const lw = S.labelW + 8;
  const cell = clamp(Math.floor((avail - lw - 4) / nC), 2, 46);
  const fs = clamp(Math.floor(cell * 0.8), 7, 12);
  const rotate = S.labelW > cell - 2;  // key labels vertical when they do not fit a column
  const top = rotate ? lw : fs + 8;
  Object.assign(heat, { x0: lw, y0: top, cell, rows, cols });
  const ctx = sizeCanvas(cv, lw + cell * nC + 4, top + cell * nR + 4);

  // the cells: paint nR×nC pixels, then scale up without smoothing
  if (!heat.img || heat.img.width !== nC || heat.img.height !== nR) {
    heat.img = new ImageData(nC, nR); heat.off.width = nC; heat.off.height = nR;
  }
  if (nR === T && nC === Tk) paintPattern(heat.img, S.layer, S.head);
  else paintCells(heat.img, S.layer, S.head, rows, cols);
  heat.off.getContext("2d").putImageData(heat.img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(heat.off, lw, top, cell * nC, cell * nR);

  // the weights themselves, when the cells are big enough to hold them
  const P = S.A.pattern, sc = S.A.scores, base = at4(S.layer, S.head, 0, 0);
  if (cell >= 30) {
    ctx.font = `${Math.min(11, cell / 3.2)}px ${FONT}`; ctx.textAlign = "center"; ctx.textBaseline = "middle";
    for (let r = 0; r < nR; r++) for (let c = 0; c < nC; c++) {
      const o = base + rows[r] * Tk + cols[c];
      if (sc[o] === -Infinity) continue;
      ctx.fillStyle = P[o] > 0.45 ? "#fff" : "#334";
      ctx.fillText(P[o].toFixed(2), lw + (c + 0.5) * cell, top + (r + 0.5) * cell);
    }
  }

  // labels: every `step`-th token when the cells are small; rows are the queries, columns the keys
  ctx.font = `${fs}px ${FONT}`; ctx.fillStyle = "#445";
  const step = Math.max(1, Math.ceil((fs + 1) / cell));
  for (let n = 0; n < Math.max(nR, nC); n += step) {
    if (n < nR) {
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      ctx.fillStyle = rows[n] === S.token ? "#c2410c" : "#445";
      ctx.fillText(fit(ctx, S.P.q[rows[n]], S.labelW), lw - 5, top + (n + 0.5) * cell);
    }
    if (n >= nC) continue;
    const tok = fit(ctx, S.P.k[cols[n]], S.labelW);
    ctx.fillStyle = "#445";
    if (rotate) {
      ctx.save(); ctx.translate(lw + (n + 0.5) * cell, top - 5); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "left"; ctx.fillText(tok, 0, 0); ctx.restore();
    } else {
      ctx.textAlign = "center"; ctx.textBaseline = "bottom";
      ctx.fillText(tok, lw + (n + 0.5) * cell, top - 4);
    }
  }
  // the chosen query's row (not drawn when the chosen query is a hidden whitespace token)
  const r = rows.indexOf(S.token);
  if (r >= 0) {
    ctx.strokeStyle = "#ea580c"; ctx.lineWidth = 2;
    ctx.strokeRect(lw - 1, top + r * cell - 1, cell * nC + 2, cell + 2);
  }
}

/** Paint the cells of query rows `rows` and key columns `cols` (the ␣ toggle hides the others). */
function paintCells(img, l, h, rows, cols) {
  const P = S.A.pattern, sc = S.A.scores, px = img.data, base = at4(l, h, 0, 0);
  let o = 0;
  for (const i of rows) for (const j of cols) {
    const c = base + i * S.Tk + j;
    if (sc[c] === -Infinity) {
      px[o] = MASKED[0]; px[o + 1] = MASKED[1]; px[o + 2] = MASKED[2];
    } else {
      const r = Math.round(clamp(P[c], 0, 1) * 255) * 3;
      px[o] = RAMP[r]; px[o + 1] = RAMP[r + 1]; px[o + 2] = RAMP[r + 2];
    }
    px[o + 3] = 255;
    o += 4;
  }
}

/** The (query i, key j) under the pointer, as positions in the text, or null. */
function heatCell(e) {
  const r = $("#heatmap").getBoundingClientRect(), rows = heat.rows || [], cols = heat.cols || [];
  const c = Math.floor((e.clientX - r.left - heat.x0) / heat.cell), n = Math.floor((e.clientY - r.top - heat.y0) / heat.cell);
  return (n >= 0 && n < rows.length && c >= 0 && c < cols.length) ? { i: rows[n], j: cols[c] } : null;
}

function showTip(e, html) {
  const tip = $("#tip");
  if (!html) { tip.hidden = true; return; }
  tip.innerHTML = html; tip.hidden = false;
  tip.style.left = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + "px";
  tip.style.top = (e.clientY + 14) + "px";
}

function onHeatHover(e) {
  if (e.pointerType && e.pointerType !== "mouse") return showTip(e, null);  // a finger has no hover
  const c = heatCell(e);
  if (!c || !S.doc) return showTip(e, null);
  const o = at4(S.layer, S.head, c.i, c.j);
  const vars = { i: c.i, j: c.j, q: esc(S.P.q[c.i]), k: esc(S.P.k[c.j]), a: fmt(S.A.pattern[o]) };
  showTip(e, t(S.A.scores[o] === -Infinity ? "tip_masked" : "tip_cell", vars));
}

// ---------------------------------------------------------------------------------------------
// Lines: queries left, keys right, one line per (i, j) with opacity and width from A_ij
// ---------------------------------------------------------------------------------------------

const lines = { top: 8, rowH: 20, xl: 0 };

function drawLines() {
  const T = S.T, Tk = S.Tk, W = clamp(wrapWidth("#lines-wrap") || 400, 240, 560);
  const rowH = clamp(Math.floor(440 / Math.max(T, Tk)), 12, 26), top = 8;
  const fs = clamp(rowH - 4, 9, 13), lw = S.labelW * fs / 12 + 10;
  const xl = lw, xr = W - lw - 34;  // room for the weights on the right
  Object.assign(lines, { top, rowH, xl });
  const ctx = sizeCanvas($("#lines"), W, top * 2 + rowH * Math.max(T, Tk));
  const y = (i) => top + (i + 0.5) * rowH;
  const P = S.A.pattern, base = at4(S.layer, S.head, 0, 0);

  // the other queries, faintly: lines grouped in 8 opacity buckets, one stroke per bucket
  const buckets = Array.from({ length: 8 }, () => new Path2D());
  for (let i = 0; i < T; i++) {
    if (i === S.token) continue;
    for (let j = 0; j < Tk; j++) {
      const a = P[base + i * Tk + j];
      if (a < 0.02) continue;
      const p = buckets[Math.min(7, Math.floor(a * 8))];
      p.moveTo(xl, y(i)); p.lineTo(xr, y(j));
    }
  }
  ctx.lineWidth = 1;
  buckets.forEach((p, b) => { ctx.strokeStyle = `rgba(71, 85, 105, ${0.04 + 0.05 * b})`; ctx.stroke(p); });

  // the chosen query, strongly
  const i = S.token;
  ctx.strokeStyle = "#1d4ed8";
  for (let j = 0; j < Tk; j++) {
    const a = P[base + i * Tk + j];
    if (a < 0.002) continue;
    ctx.globalAlpha = 0.15 + 0.85 * Math.sqrt(a); ctx.lineWidth = 0.6 + 6 * a;
    ctx.beginPath(); ctx.moveTo(xl, y(i)); ctx.lineTo(xr, y(j)); ctx.stroke();
  }
  ctx.globalAlpha = 1;

  // token labels, and the chosen query's weights beside the keys
  ctx.font = `${fs}px ${FONT}`; ctx.textBaseline = "middle";
  const vis = new Set(visibleKeys(i));
  for (let r = 0; r < Math.max(T, Tk); r++) {
    if (r < T) {  // the query, on the left
      ctx.textAlign = "right"; ctx.fillStyle = r === i ? "#c2410c" : "#334155";
      ctx.font = `${r === i ? "bold " : ""}${fs}px ${FONT}`;
      ctx.fillText(fit(ctx, S.P.q[r], S.labelW * fs / 12), xl - 5, y(r));
      ctx.font = `${fs}px ${FONT}`;
    }
    if (r >= Tk) continue;  // the key, on the right
    ctx.textAlign = "left"; ctx.fillStyle = vis.has(r) ? "#334155" : "#b6bcc8";
    ctx.fillText(fit(ctx, S.P.k[r], S.labelW * fs / 12), xr + 5, y(r));
    if (vis.has(r)) {
      ctx.fillStyle = "#1d4ed8"; ctx.textAlign = "right";
      ctx.fillText(P[base + i * Tk + r].toFixed(2), W - 2, y(r));
    }
  }
}

function onLinesClick(e) {
  const r = $("#lines").getBoundingClientRect();
  if (e.clientX - r.left > r.width / 2) return;  // only the query column chooses
  const i = Math.floor((e.clientY - r.top - lines.top) / lines.rowH);
  if (i >= 0 && i < S.T) chooseToken(i);
}

// ---------------------------------------------------------------------------------------------
// Step by step: s_j, exp, softmax, a_j v_j, z for the chosen query
// ---------------------------------------------------------------------------------------------

function renderSteps() {
  const { layer: l, head: h, token: i, T, k } = S, A = S.A, doc = S.doc;
  const vis = visibleKeys(i), o4 = at4(l, h, i, 0);
  // numbers straight from the arrays; e_j = exp(s_j − m) computed here in double precision
  const s = vis.map((j) => A.scores[o4 + j]);
  const m = Math.max(...s);
  const e = s.map((x) => Math.exp(x - m));
  const sum = e.reduce((x, y) => x + y, 0);
  const a = vis.map((j) => A.pattern[o4 + j]);
  const vn = vis.map((j) => A.v_norm[atK(l, h, j)]);
  let top = 0;
  a.forEach((x, n) => { if (x > a[top]) top = n; });
  const zsum = new Float64Array(k);  // Σ_j a_j v_first_j, shown in the table's last row

  let rows = "";
  vis.forEach((j, n) => {
    const vf = atK(l, h, j) * k, av = [];
    for (let c = 0; c < k; c++) { const x = a[n] * A.v_first[vf + c]; av.push(fmt(x)); zsum[c] += x; }
    rows += `<tr data-key="${j}"${j === i && S.P.self ? ' class="self"' : ""}${n === top ? ' data-top="1"' : ""}>` +
      `<td data-field="pos">${j}</td><td data-field="token">${esc(S.P.k[j])}</td>` +
      `<td data-field="dot">${fmt(A.dots[o4 + j])}</td><td data-field="scaled">${fmt(s[n])}</td>` +
      `<td data-field="shifted">${fmt(s[n] - m)}</td><td data-field="exp">${fmt(e[n])}</td>` +
      `<td data-field="weight" style="--w:${(a[n] * 100).toFixed(1)}%">${fmt(a[n])}</td>` +
      `<td data-field="v_norm">${fmt(vn[n])}</td><td data-field="contribution">${fmt(a[n] * vn[n])}</td>` +
      `<td data-field="av">${av.join(", ")}</td></tr>`;
  });
  const bound = a.reduce((acc, x, n) => acc + x * vn[n], 0);
  const total = a.reduce((x, y) => x + y, 0);
  const zo = at3(l, h, i);
  const zfirst = Array.from(A.z_first.subarray(zo * k, zo * k + k), fmt).join(", ");
  const jt = vis[top];

  const st = { dh: doc.model.d_head, scale: fmt(doc.scale), tok: esc(S.P.k[jt]), dot: fmt(A.dots[o4 + jt]),
    s: fmt(s[top]), m: fmt(m), e: fmt(e[top]), shift: shiftText(s[top], m), sum: fmt(sum), a: fmt(a[top]), n: vis.length, total: fmt(total),
    k, bound: fmt(bound), more: k < doc.model.d_head ? ", …" : "",
    zfirst: `<span id="z-first" class="num">${zfirst}</span>`,
    znorm: `<span id="z-norm" class="num">${fmt(A.z_norm[zo])}</span>` };
  const th = (key, tt, col) => `<th${tt ? ` title="${esc(t(tt))}"` : ""}${col ? ` data-col="${col}"` : ""}>${t(key, { k })}</th>`;
  const masked = vis.length < S.Tk || S.P.causal;
  const maskNote = S.tr && S.part === "cross" ? "mask_cross" : masked ? "mask_causal" : "mask_none";

  $("#steps-title").textContent = S.tr ? t("steps_title_tr", { i, tok: S.P.q[i], part: t("part_" + S.part), l, h })
    : t("steps_title", { i, tok: doc.tokens[i], l, h });
  $("#steps").innerHTML =
    `<ol class="deriv"><li>${t("step1", st)}</li><li>${t("step2", st)}</li><li>${t("step3", st)}</li>` +
    `<li>${t("step4", st)}</li><li>${t("step5", st)}</li></ol>` +
    `<p class="caption">${t(maskNote, { i, T: S.Tk })}</p>` +
    `<div class="table-wrap"><table class="steps-table"><thead><tr><th>j</th>${th("th_token")}` +
    `${th("th_dot", "tt_dot", "dot")}${th("th_scaled", "tt_scaled")}${th("th_shifted", "", "shifted")}${th("th_exp")}` +
    `${th("th_weight", "tt_weight", "weight")}${th("th_vnorm", "", "v_norm")}${th("th_contrib", "tt_contrib")}${th("th_av", "", "av")}</tr></thead>` +
    `<tbody>${rows}</tbody><tfoot><tr><td>Σ</td><td></td><td data-col="dot"></td><td></td><td data-col="shifted"></td><td>${fmt(sum)}</td>` +
    `<td>${fmt(total)}</td><td data-col="v_norm"></td><td>${fmt(bound)}</td><td data-col="av">${Array.from(zsum, fmt).join(", ")}</td></tr></tfoot>` +
    `</table></div>`;
}

/** s − m as the page writes it: "s − m", or "s + |m|" when m < 0 (never "− −4.97"). */
function shiftText(x, m) {
  return m < 0 ? `${fmt(x)} + ${fmt(-m)}` : `${fmt(x)} − ${fmt(m)}`;
}

// ---------------------------------------------------------------------------------------------
// Convex hull: the visible values in 2-D, their hull, and z inside it
// ---------------------------------------------------------------------------------------------

/** Andrew's monotone chain: the hull's corners counter-clockwise (collinear points dropped).
 *  Returns 1 point for one distinct point, 2 for points on a line. */
function convexHull(pts) {
  const p = pts.slice().sort((u, v) => u[0] - v[0] || u[1] - v[1]);
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const half = (list) => {
    const out = [];
    for (const q of list) {
      while (out.length >= 2 && cross(out[out.length - 2], out[out.length - 1], q) <= 1e-12) out.pop();
      out.push(q);
    }
    out.pop();
    return out;
  };
  if (p.length < 2) return p;
  const hull = half(p).concat(half(p.slice().reverse()));
  if (hull.length === 0) return [p[0]];  // every point the same
  return hull;
}

function renderHull() {
  const { layer: l, head: h, token: i } = S, A = S.A;
  const vis = visibleKeys(i), o4 = at4(l, h, i, 0);
  const pts = vis.map((j) => [A.v_2d[atK(l, h, j) * 2], A.v_2d[atK(l, h, j) * 2 + 1]]);
  const zo = at3(l, h, i) * 2, z = [A.z_2d[zo], A.z_2d[zo + 1]];
  const W = 420, Hh = 320, pad = 34;
  // one scale for both axes, so the geometry is not distorted; y grows upwards
  const xs = pts.map((p) => p[0]).concat(z[0]), ys = pts.map((p) => p[1]).concat(z[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const sc = Math.min((W - 2 * pad) / Math.max(x1 - x0, 1e-9), (Hh - 2 * pad) / Math.max(y1 - y0, 1e-9));
  const cx = (W - sc * (x1 - x0)) / 2, cy = (Hh - sc * (y1 - y0)) / 2;
  const X = (x) => (cx + (x - x0) * sc).toFixed(1), Y = (y) => (Hh - cy - (y - y0) * sc).toFixed(1);

  const hull = convexHull(pts);
  let svg = `<svg viewBox="0 0 ${W} ${Hh}" role="img" aria-label="${esc(t("hull_title"))}">`;
  if (hull.length >= 3) svg += `<polygon class="hull" points="${hull.map((p) => X(p[0]) + "," + Y(p[1])).join(" ")}"/>`;
  else if (hull.length === 2) svg += `<line class="hull-line" x1="${X(hull[0][0])}" y1="${Y(hull[0][1])}" x2="${X(hull[1][0])}" y2="${Y(hull[1][1])}"/>`;
  // spokes from z to each value, as strong as its weight
  pts.forEach((p, n) => {
    const a = A.pattern[o4 + vis[n]];
    if (a >= 0.01) svg += `<line class="spoke" x1="${X(z[0])}" y1="${Y(z[1])}" x2="${X(p[0])}" y2="${Y(p[1])}" stroke-opacity="${(0.1 + 0.7 * a).toFixed(2)}"/>`;
  });
  // with many keys, label only the query itself and the 12 heaviest (every point has a tooltip)
  const heavy = new Set(vis.slice().sort((u, v) => A.pattern[o4 + v] - A.pattern[o4 + u]).slice(0, 12));
  pts.forEach((p, n) => {
    const j = vis[n], a = A.pattern[o4 + j], r = (2.5 + 14 * Math.sqrt(a)).toFixed(1);
    const self = j === i && S.P.self, label = vis.length <= 16 || heavy.has(j) || self;
    svg += `<g class="pt${self ? " self" : ""}"><title>${esc(t("hull_point", { j, tok: S.P.k[j], a: fmt(a) }))}</title>` +
      `<circle cx="${X(p[0])}" cy="${Y(p[1])}" r="${r}" fill-opacity="${(0.25 + 0.6 * Math.sqrt(a)).toFixed(2)}"/>` +
      (label ? `<text x="${(+X(p[0]) + +r + 3).toFixed(1)}" y="${(+Y(p[1]) + 4).toFixed(1)}">${esc(S.P.k[j])}</text>` : "") + "</g>";
  });
  const zx = +X(z[0]), zy = +Y(z[1]);
  svg += `<g class="z"><title>${esc(t("hull_z"))}</title><path d="M${zx - 6},${zy - 6}L${zx + 6},${zy + 6}M${zx - 6},${zy + 6}L${zx + 6},${zy - 6}"/>` +
    `<text x="${zx + 8}" y="${zy - 7}">z</text></g></svg>`;
  $("#hull").innerHTML = svg;
  const kept = A.kept_2d[l * S.H + h];
  $("#hull-caption").innerHTML = (S.tr && S.part === "cross" ? t("hull_cross") + " " : "") +
    t("hull_caption", { kept: (100 * kept).toFixed(1) });
}

// ---------------------------------------------------------------------------------------------
// Residual update at the chosen layer and token
// ---------------------------------------------------------------------------------------------

const RESID_ROWS = [
  ["x", "x", "x_norm"], ["head_out", "|z<sub>h</sub>W<sub>O</sub>[h]|", "head_out_norm"],
  ["attn_out", "attn_out", "attn_out_norm"], ["x_plus_attn", "x + attn_out", "x_plus_attn_norm"],
  ["resid_mid", "resid_mid", "resid_mid_norm"], ["mlp_out", "mlp_out", "mlp_out_norm"],
  ["resid_post", "resid_post", "resid_post_norm"],
];

/** The message that describes a residual row: a translation model's decoder reads another stream
 *  before cross-attention (resid_mid) and hands another to its MLP (resid_mid_cross). */
function residDesc(field, post) {
  if (S.tr && S.part === "cross" && (field === "x" || field === "resid_mid")) return `r_${field}_cross`;
  if (S.tr && S.part === "decoder" && field === "resid_mid") return "r_resid_mid_dec";
  return field === "resid_mid" && post ? "r_resid_mid_post" : "r_" + field;
}

function renderResidual() {
  const { layer: l, head: h, token: i } = S, A = S.A, model = S.doc.model;
  const value = (arr) => (arr === "head_out_norm" ? A[arr][at3(l, h, i)] : A[arr][at2(l, i)]);
  // a decoder block puts cross-attention between its self-attention's resid_mid and its MLP: those rows would not add up
  const rows = S.tr && S.part === "decoder" ? RESID_ROWS.slice(0, 5) : RESID_ROWS;
  const vals = rows.map((r) => value(r[2]));
  const max = Math.max(...vals, 1e-12);
  const post = model.norm === "post";
  let html = '<div class="rrows">';
  rows.forEach(([field, label], n) => {
    const desc = t(residDesc(field, post), { h });
    html += `<div class="rrow" data-row="${field}"><span class="rlabel">${label}</span><span class="rdesc">${desc}</span>` +
      `<span class="rval" data-field="${field}" data-value="${vals[n]}"><span class="rbar" style="width:${(100 * vals[n] / max).toFixed(1)}%"></span>` +
      `<span class="num">${fmt(vals[n])}</span></span></div>`;
  });
  const cos = A.update_cos[at2(l, i)];
  const hint = t(Math.abs(cos) < 0.2 ? "cos_orth" : cos > 0 ? "cos_along" : "cos_against");
  const rule = model.residual === false ? "res_off" : post ? "res_post" : model.norm === "none" ? "res_none" : "res_pre";
  html += `</div><p class="cos">${t("cos_line", { cos: `<span id="update-cos" class="num">${fmt(cos)}</span>`, hint })}</p>` +
    `<p class="caption">${(S.tr && S.part === "cross" ? t("res_cross") + " " : "") + t(rule)}` +
    `${S.tr && S.part === "decoder" ? " " + t("res_dec") : ""}</p>`;
  $("#residual-title").textContent = t("residual_title", { tok: S.P.q[i], l });
  $("#residual").innerHTML = html;
}

// ---------------------------------------------------------------------------------------------
// Next token: the top 10 at the chosen position, and the token that actually follows
// ---------------------------------------------------------------------------------------------

function renderNext() {
  if (!hasLM() || !S.A.next_probs) return renderNoNext();
  if (S.tr && S.P.queries === "source") return renderNoNext("next_source");
  $(".next-card").classList.remove("encoder");
  const i = S.token, A = S.A, doc = S.doc, K = A.next_probs.length / S.T;
  const actual = S.tr ? doc.target.written_ids[i] : i + 1 < S.T ? doc.ids[i + 1] : null;
  const pmax = Math.max(A.next_probs[i * K], 1e-12);
  let html = `<p class="caption">${t("next_caption")}</p><div class="bars">`;
  for (let r = 0; r < K; r++) {
    const id = A.next_ids[i * K + r], p = A.next_probs[i * K + r], tok = doc.vocab[String(id)] ?? `#${id}`;
    const hit = id === actual;
    html += `<div class="bar${hit ? " actual" : ""}" data-rank="${r + 1}" data-id="${id}" data-prob="${p}">` +
      `<span class="rank">${r + 1}</span><span class="tok">${esc(tok)}</span>` +
      `<span class="track"><span class="fill" style="width:${(100 * p / pmax).toFixed(1)}%"></span></span>` +
      `<span class="prob num">${fmt(p)}</span></div>`;
  }
  html += "</div>";
  if (actual !== null) {
    html += `<p id="next-actual" class="actual-line">${t(S.tr ? "next_actual_tr" : "next_actual", { tok: esc(S.tr ? doc.target.written[i] : doc.tokens[i + 1]),
      p: `<span class="num" data-field="actual_prob">${fmt(A.actual_prob[i])}</span>`,
      r: `<span class="num" data-field="actual_rank">${A.actual_rank[i]}</span>` })}</p>`;
  } else {
    html += `<p id="next-actual" class="actual-line">${t("next_last")}</p>`;
  }
  $("#next-title").textContent = S.tr ? t("next_title_tr", { tok: doc.target.tokens[i], i }) : t("next_title", { tok: doc.tokens[i], i });
  $("#next").innerHTML = html;
}

/** An encoder (or a translation model's encoder part): no next-token distribution, and the page says
 *  why instead of showing bars. */
function renderNoNext(why = "next_none") {
  const m = S.info || S.doc.model;
  $(".next-card").classList.add("encoder");
  $("#next-title").textContent = t("next_none_title");
  $("#next").innerHTML = `<p id="next-none" class="why">${t(why, { d: m.d_model })}</p>`;
}

// ---------------------------------------------------------------------------------------------
// Compare: one word's vector in two sentences, stage by stage
// ---------------------------------------------------------------------------------------------

function renderCompare() {
  const box = $("#compare-result"), c = S.compare;
  if (!c) { box.innerHTML = S.mode === "static" ? `<p class="caption">${t("compare_none")}</p>` : ""; return; }
  const cont = (tk) => tk.startsWith("\u2040");  // ⁀piece: a WordPiece continuation, joined to the token before
  const sent = (name, s) => `<div class="csent"><b>${name}</b> ${s.tokens.map((tk, n) =>
    `<span class="ctok${n === s.pos ? " hit" : ""}${cont(tk) ? " cont" : ""}">${esc(tk)}</span>`).join("")}</div>`;
  const where = { w: esc(c.word), pa: c.a.pos, pb: c.b.pos };  // the word's position in each: a confound when they differ
  let html = sent("A", c.a) + sent("B", c.b) + (c.same_position === false ? `<p id="compare-pos" class="note cpos-differ">${t("compare_pos_differ", where)}</p>`
    : `<p id="compare-pos" class="cpos">${t("compare_pos_same", where)}</p>`);
  const control = c.stages.some((st) => st.cosine_pos != null);  // the position-controlled cosine (null: no reference)
  html += `<div class="crows${control ? " two" : ""}"><div class="crow chead"><span></span><span>${t("compare_raw")}</span>` +
    (control ? `<span>${t("compare_centred")}</span>` : "") + "</div>";
  const cell = (x, attr) => {
    const none = x === null || x === undefined;  // a zero vector: the angle has no value
    const w = none ? "0" : (100 * Math.min(1, Math.abs(x))).toFixed(1);
    return `<span class="cval" ${attr}><span class="cbar${x < 0 ? " neg" : ""}" style="width:${w}%"></span><span class="num">${none ? "—" : fmt(x)}</span></span>`;
  };
  for (const st of c.stages) {
    html += `<div class="crow"><span class="clabel">${esc(st.label)}</span>` + cell(st.cosine, `data-stage="${esc(st.label)}" data-cosine="${st.cosine}"`) +
      (control ? cell(st.cosine_pos, `data-stage-pos="${esc(st.label)}" data-cosine-pos="${st.cosine_pos}"`) : "") + "</div>";
  }
  const pos = S.info && ["learned", "sinusoidal"].includes(S.info.pos);  // is a position vector added at "L0 in"?
  const ctl = c.control || {};
  html += `</div><p class="caption">${t(!control ? "compare_caption_raw" : pos ? "compare_caption" : "compare_caption_nopos", { ...where, n: ctl.sentences, ref: ctl.reference === "qkv corpus" ? t("compare_corpus") : esc(ctl.reference || "") })}` +
    (control ? "" : " " + t("compare_nocontrol", { why: esc(ctl.why || "") })) + "</p>";
  box.innerHTML = html;
  box.dataset.ready = String(Number(box.dataset.ready || 0) + 1);
}

async function runCompare() {
  const body = { a: $("#compare-a").value, b: $("#compare-b").value, word: $("#compare-word").value };
  busy(true);
  try {
    S.compare = await api("api/compare", body);
    showErrorIn("#compare", "");
    renderCompare();
  } catch (e) {
    showErrorIn("#compare", e.message);  // inside the compare card, scrolled into view
  } finally {
    busy(false);
  }
}

// ---------------------------------------------------------------------------------------------
// Generate
// ---------------------------------------------------------------------------------------------

/** The number in input `id`, or null when empty and `optional`; throws a translated error. */
function readNumber(id, label, optional, integer) {
  const raw = $(id).value.trim();
  if (raw === "" && optional) return null;
  const x = Number(raw);
  if (raw === "" || !Number.isFinite(x) || (integer && !Number.isInteger(x))) throw new Error(t("bad_number", { name: label }));
  return x;
}

async function runGenerate() {
  const t0 = performance.now();
  let body;
  try {
    body = {
      text: $("#text").value,
      max_new_tokens: readNumber("#max-new", t("max_new"), false, true),
      temperature: readNumber("#temperature", t("temperature"), false, false),
      top_k: readNumber("#top-k", "top-k", true, true),
      top_p: readNumber("#top-p", "top-p", true, false),
      seed: readNumber("#seed", t("seed"), true, true),
    };
  } catch (e) { showErrorIn("#gen", e.message); return; }
  showErrorIn("#gen", "");
  busy(true);
  try {
    const res = await api("api/generate", body);
    S.added = res.added; S.stopped = res.stopped || null;
    renderAdded();
    $("#text").value = res.text;
    await analyze({ ids: res.ids }, t0);  // the generated tokens themselves: re-tokenizing the text may differ
  } catch (e) {
    showErrorIn("#gen", e.message);
  } finally {
    busy(false);
  }
}

function renderAdded() {
  const el = $("#gen-added");
  el.hidden = S.added === null;
  if (S.added !== null) el.textContent = t("gen_added", { text: S.added });
  const stop = $("#gen-stopped"), st = S.stopped;  // fewer tokens than asked: the text reached n_ctx
  stop.hidden = !st;
  if (st) stop.textContent = t("gen_stopped", { made: st.made, asked: st.asked, n: st.n_ctx });
}

// ---------------------------------------------------------------------------------------------
// Language and the static parts of the page
// ---------------------------------------------------------------------------------------------

/** ?lang= in the address, else the language a static export was written in (qkv explain --html
 *  --lang), else the browser's. */
function initialLang(data) {
  const q = new URLSearchParams(location.search).get("lang");
  if (q === "zh" || q === "en") return q;
  if (data && (data.lang === "zh" || data.lang === "en")) return data.lang;
  return (navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en";
}

function applyLang() {
  document.documentElement.lang = S.lang === "zh" ? "zh-CN" : "en";
  for (const el of document.querySelectorAll("[data-i18n]")) el.innerHTML = t(el.dataset.i18n);
  for (const el of document.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of document.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
  $("#lang").textContent = t("lang_button");
  renderModelLine();
  renderAdded();
  if (S.doc) {
    for (const b of document.querySelectorAll("#tokens .token")) b.title = tokenTitle(+b.dataset.pos);
    titleThumbs();
    if (S.tr) { fillSelects(); renderTranslation(); }
    renderUnknown();
    if (document.body.dataset.stale === "1") markStale(S.doc.text);
  }
  eachPanel("lang");
}

function renderModelLine() {
  const m = S.info || (S.doc && S.doc.model);
  if (!m) return;
  const seq2seq = m.arch === "seq2seq";
  $("#model-line").textContent = t(seq2seq ? "model_line_tr" : "model_line", { L: m.n_layers, H: m.n_heads, dm: m.d_model,
    dh: m.d_head, nctx: m.n_ctx, tok: t("tok_" + m.tokenizer), params: Number(m.parameters).toLocaleString("en-US"),
    norm: t("norm_" + m.norm), Le: m.n_encoder_layers }) + (m.name ? ` · ${m.name}` : "");
  const nospace = m.tokenizer === "word" && m.space_tokens === false;  // spaces only separate the words
  $("#hint").textContent = t(seq2seq ? "hint_translate" : nospace ? "hint_word_nospace" : "hint_" + m.tokenizer);
  $("#compare").hidden = seq2seq;  // a translation model is shown across its two sentences instead
  renderSource(m);
  renderGenAvailable();
}

/** Which model the page shows, its size and where it came from (model.source of the API). */
function renderSource(m) {
  const src = m.source || {};
  const size = m.weights_bytes ? t("source_size", { mb: (m.weights_bytes / 1e6).toFixed(1) }) : "";
  $("#model-source").textContent = t("model_source", {
    title: src.title || src.name || m.name || "?",
    kind: t(m.arch === "seq2seq" ? "kind_seq2seq" : m.has_lm_head === false ? "kind_encoder" : "kind_decoder"),
    params: Number(m.parameters).toLocaleString("en-US"), size,
    from: src.path ? t("source_path", { path: src.path }) : src.name === "bundled" ? t("source_bundled") : "" });
  $("#model-source").title = src.path || "";
}

/** An encoder cannot generate, a translation model translates instead: the form is disabled and says why. */
function renderGenAvailable() {
  const m = S.info || (S.doc && S.doc.model), translates = !!m && m.arch === "seq2seq", off = !hasLM() || translates;
  $("#gen-none").hidden = !off;
  if (translates) { $("#gen-none").dataset.i18n = "gen_translate"; $("#gen-none").innerHTML = t("gen_translate"); }
  if (off) for (const el of document.querySelectorAll("#gen input, #generate")) el.disabled = true;
}

function setModel(m) {
  // /api/model's answer: {kind, model, examples, compare}; accept a bare model object too
  const info = m && m.model ? m.model : m;
  S.info = info || null;
  S.examples = (m && m.examples) || [];
  $("#examples").innerHTML = S.examples.map((ex, n) =>
    `<button type="button" class="example" data-n="${n}">${esc(ex)}</button>`).join("");
  const c = m && m.compare;
  if (c) { $("#compare-a").value = c.a || ""; $("#compare-b").value = c.b || ""; $("#compare-word").value = c.word || ""; }
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

function chooseToken(i) {
  const t0 = performance.now();
  if (!S.doc) return;
  S.token = i;
  render("token", t0);
}

function chooseHead(l, h, what, t0) {
  S.layer = l; S.head = h;
  render(what, t0);
}

function bind() {
  $("#analyze").addEventListener("click", () => analyze($("#text").value, performance.now()));
  $("#text").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {  // Shift+Enter types a newline
      e.preventDefault();
      analyze($("#text").value, performance.now());
    }
  });
  $("#examples").addEventListener("click", (e) => {
    const b = e.target.closest(".example");
    if (b && S.mode === "live") { const t0 = performance.now(); $("#text").value = S.examples[+b.dataset.n]; analyze($("#text").value, t0); }
  });
  $("#tokens").addEventListener("click", (e) => {
    const b = e.target.closest(".token");
    if (b) chooseToken(+b.dataset.pos);
  });
  $("#layer").addEventListener("change", (e) => { const t0 = performance.now(); chooseHead(+e.target.value, S.head, "layer", t0); });
  $("#head").addEventListener("change", (e) => { const t0 = performance.now(); chooseHead(S.layer, +e.target.value, "head", t0); });
  $("#part").addEventListener("change", (e) => choosePart(e.target.value, performance.now()));
  $("#heads").addEventListener("click", (e) => {
    const c = e.target.closest("canvas");
    if (!c) return;
    const t0 = performance.now(), l = +c.dataset.layer, h = +c.dataset.head;
    chooseHead(l, h, l !== S.layer ? "layer" : "head", t0);
  });
  document.addEventListener("keydown", (e) => {  // ← / → move the query token (outside text fields)
    if (!S.doc || e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, textarea, select")) return;
    const step = e.key === "ArrowLeft" ? -1 : e.key === "ArrowRight" ? 1 : 0;
    if (!step) return;
    const shown = shownIdx(S.P.q), next = step < 0 ? shown.filter((n) => n < S.token).pop() : shown.find((n) => n > S.token);
    if (next !== undefined) { e.preventDefault(); chooseToken(next); }  // hidden whitespace tokens are skipped
  });
  const hm = $("#heatmap");
  // the tooltip follows a mouse only: a tap sends mouse events too, and its tooltip would stay over the page
  hm.addEventListener("pointermove", onHeatHover);
  hm.addEventListener("pointerleave", (e) => showTip(e, null));
  for (const ev of ["touchstart", "scroll"]) window.addEventListener(ev, () => { $("#tip").hidden = true; }, { passive: true, capture: true });
  $("#hide-space").addEventListener("change", (e) => {
    const t0 = performance.now();
    S.hideSpace = e.target.checked;
    document.body.dataset.hideSpace = S.hideSpace ? "1" : "0";
    if (S.hideSpace && S.doc && isSpace(S.P.q[S.token])) {  // move the query off a hidden token
      const kept = shownIdx(S.P.q);
      S.token = kept.filter((n) => n < S.token).pop() ?? kept[0];
    }
    if (S.doc) render("space", t0);
  });
  hm.addEventListener("click", (e) => { const c = heatCell(e); if (c) chooseToken(c.i); });
  $("#lines").addEventListener("click", onLinesClick);
  $("#lang").addEventListener("click", () => {
    const t0 = performance.now();
    S.lang = S.lang === "zh" ? "en" : "zh";
    try { const u = new URL(location.href); u.searchParams.set("lang", S.lang); history.replaceState(null, "", u); } catch (e) { /* file:// */ }
    applyLang();
    render("lang", t0);
  });
  $("#generate").addEventListener("click", runGenerate);
  $("#compare-run").addEventListener("click", runCompare);
  let pending = false;  // redraw the canvases when their boxes change size (not a user event: no timing)
  const redraw = () => {
    if (pending || !S.doc) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; drawHeatmap(); drawLines(); });
  };
  window.addEventListener("resize", () => { for (const k of Object.keys(WRAP_W)) delete WRAP_W[k]; redraw(); });
  if (window.ResizeObserver) {
    const ro = new ResizeObserver((entries) => {
      let changed = false;
      for (const e of entries) {
        const sel = "#" + e.target.id, w = Math.round(e.contentRect.width);
        if (WRAP_W[sel] !== w) { WRAP_W[sel] = w; changed = true; }
      }
      if (changed) redraw();
    });
    for (const sel of ["#heatmap-wrap", "#lines-wrap"]) ro.observe($(sel));
  }
}

// ---------------------------------------------------------------------------------------------
// Start: static snapshot (embedded data) or live (the API)
// ---------------------------------------------------------------------------------------------

async function init() {
  const t0 = performance.now();
  const embedded = document.getElementById("qkv-data");
  const data = embedded ? JSON.parse(embedded.textContent) : null;
  S.lang = initialLang(data);
  bind();
  eachPanel("init");
  watchLazyPanels();
  watchBelow();
  if (embedded) {
    S.mode = "static";
    setModel(data.model || (data.view && data.view.model));
    for (const id of ["#text", "#analyze", "#generate", "#compare-run", "#compare-a", "#compare-b", "#compare-word"]) $(id).disabled = true;
    for (const b of document.querySelectorAll("#examples .example, #gen input")) b.disabled = true;
    $("#static-note").hidden = false;
    S.compare = data.compare || null;
    const start = data.start || {};  // qkv explain --html --layer L --head H --token T opens there
    if (data.view && typeof start.part === "string") S.part = start.part;  // a translation model's attention
    if (data.view) loadDoc(data.view);
    if (S.doc) {
      if (Number.isInteger(start.layer)) S.layer = clamp(start.layer, 0, S.L - 1);
      if (Number.isInteger(start.head)) S.head = clamp(start.head, 0, S.H - 1);
      if (Number.isInteger(start.token)) S.token = clamp(start.token, 0, S.T - 1);
    }
    applyLang();
    render("init", t0);
    return;
  }
  applyLang();
  busy(true);
  try {
    const m = await api("api/model");
    setModel(m);
    applyLang();
    if (S.examples.length) {
      $("#text").value = S.examples[0];
      await analyze(S.examples[0], t0, "init");  // guarded: a click meanwhile wins
    } else {
      render("init", t0);
    }
    if ($("#compare-word").value) runCompare();
  } catch (e) {
    showError(e.message);
  } finally {
    busy(false);
  }
}

// after every script of the page has run (the panels are loaded after this file)
document.addEventListener("DOMContentLoaded", init);

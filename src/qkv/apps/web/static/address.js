// The page's view in its address, and "Export this view". The query keeps what a learner chose:
//   ?model=bundled&text=我 投资了 苹果 ，&layer=1&head=0&token=2&panel=attribution&attribution.target=苹果&lang=zh
// model (a check: a link made for another model says so in one line and opens what it can), text,
// layer, head, token, a translation model's part, the panel last worked in (panel) and the inputs of
// each panel worked in (PANEL.FIELD, from its keep hook: panels.js), and the language. Keys it does
// not own (tour=, ...) are left as they are. A deliberate change is a new entry in the history
// (pushState: a sentence analysed, a layer, head or part chosen, a token clicked, a panel opened), so
// the back button walks through the views; a small move replaces the entry (replaceState: a run of
// typing that analyses by itself, a run of token moves less than TOKEN_RUN ms apart, a panel's inputs
// edited, the language). A reload, a shared link, back and forward restore the view (openAddress;
// popstate). A text longer than TEXT_MAX characters is not written: the address keeps long=N (its
// length) instead, and a page opened from it says so and opens on its first example. A panel value
// longer than INPUT_MAX characters is left out, and at most INPUTS_MAX values are kept (the open panel's first).
// "Export this view" saves the single-file page `qkv explain --html` writes, opening on this view:
// live, POST api/export builds it (routes_export.py); in a static export the page writes itself again
// from the HTML it was opened with (PRISTINE) and its own data with the new start: no server needed.
// A file:// page keeps its query too (the history API may change a file URL's query, not its path).

import { S, model } from "./state.js";
import { $, clamp, esc } from "./util.js";
import { t } from "./i18n.js";
import { listen } from "./announce.js";
import { busy } from "./api.js";
import { showError } from "./errors.js";
import { formKeep, keeper } from "./panels.js";
import { render } from "./render.js";
import { analyze, choosePart } from "./actions.js";
import { followToken } from "./next.js";
import { runCompare } from "./compare.js";
import { download, fileName } from "./save_file.js";

export const TEXT_MAX = 1000, INPUT_MAX = 400, INPUTS_MAX = 16;  // as routes_export.py bounds them
const TOKEN_RUN = 1000, QUICK = 60;
// an address the history API may rewrite: not qkv.show's (an iframe's about:srcdoc, qkv.apps.notebook)
const WRITABLE = /^(https?|file):$/.test(location.protocol);
const OWN = ["model", "text", "long", "layer", "head", "token", "part", "panel", "lang"];
// the cards whose inputs a view keeps ("compare" is the comparison card, the others panels.js's)
export const KEPT = ["compare", "side", "lens", "origin", "attribution", "patch", "ablate", "vocab", "transform"];
const FIELD = /^([a-z]+)\.([a-z]+)$/;
// the page as it was opened, before any script changed it: a static export writes itself again from it
const DATA = document.getElementById("qkv-data");
const PRISTINE = DATA ? "<!doctype html>\n" + document.documentElement.outerHTML : null;

// quiet: nothing is written (the page is opening, or restoring a view); last, lastAt: the previous redraw's
// kind and time; open: the panel last worked in; touched: the panels whose inputs are kept
const A = { notes: [], wrote: -1e9, later: 0, due: false, painting: false, quiet: true, ready: false, last: "", lastAt: 0, open: null, touched: new Set(), push: false, timer: 0 };

// the comparison card is no panel of panels.js: its form, kept the same way
const COMPARE = formKeep({ a: "#compare-a", b: "#compare-b", word: "#compare-word", senses: "#compare-senses" },
  () => { if (S.mode === "live" && A.ready && $("#compare-word").value) runCompare(); });
const keepOf = (name) => (name === "compare" ? COMPARE : keeper(name));

/** The model's name as a link names it: the name it is served under, else where it was loaded from. */
export function modelName() {
  const m = model();
  if (!m) return "";
  const src = m.loaded_from || {};
  return String(m.name || src.title || src.name || "");
}

/** The view an address asks for: every field null when absent (any: whether it names one at all). */
export function readAddress(search = location.search) {
  const q = new URLSearchParams(search);
  const int = (k) => (/^-?\d+$/.test(q.get(k) || "") ? +q.get(k) : null);
  const inputs = {};
  for (const [k, v] of q) {
    const m = FIELD.exec(k);
    if (m && KEPT.includes(m[1]) && v.length <= INPUT_MAX) (inputs[m[1]] = inputs[m[1]] || {})[m[2]] = v;
  }
  const panel = KEPT.includes(q.get("panel")) ? q.get("panel") : null;
  return { model: q.get("model"), text: q.get("text"), long: int("long"), layer: int("layer"), head: int("head"),
    token: int("token"), part: q.get("part"), panel, inputs, any: OWN.some((k) => k !== "lang" && q.has(k)) };
}

/** The inputs of the panels worked in, the open panel's first, within the bounds (INPUT_MAX characters each,
 *  INPUTS_MAX in all); a blank field is left out (the panel opens with its own). */
function keptInputs() {
  const out = {};
  let n = 0;
  for (const name of [...A.touched].sort((x, y) => (y === A.open) - (x === A.open))) {
    const keep = keepOf(name);
    if (!keep) continue;
    for (const [k, v] of Object.entries(keep.read())) {
      if (typeof v !== "string" || !v || v.length > INPUT_MAX || n >= INPUTS_MAX) continue;
      (out[name] = out[name] || {})[k] = v;
      n++;
    }
  }
  return out;
}

/** The view shown now. */
function currentView() {
  return { model: modelName(), text: S.typed, layer: S.layer, head: S.head, token: S.token,
    part: S.tr ? S.part : null, panel: A.open, inputs: keptInputs() };
}

/** This address with the view `v` written in it (the keys this module does not own kept as they are). */
function addressOf(v) {
  const u = new URL(location.href), q = u.searchParams;
  for (const k of [...q.keys()]) {
    const m = FIELD.exec(k);
    if (OWN.includes(k) || (m && KEPT.includes(m[1]))) q.delete(k);
  }
  if (v.model) q.set("model", v.model);
  if (v.text.length <= TEXT_MAX) q.set("text", v.text); else q.set("long", String(v.text.length));
  for (const k of ["layer", "head", "token"]) q.set(k, String(v[k]));
  if (v.part) q.set("part", v.part);
  if (v.panel) q.set("panel", v.panel);
  for (const [name, fields] of Object.entries(v.inputs)) for (const [k, x] of Object.entries(fields)) q.set(`${name}.${k}`, x);
  q.set("lang", S.lang);
  return u;
}

/** Write the view shown into the address: a new history entry (push) or this one (replace). A browser
 *  ignores the history API called too often (Chromium: hundreds of times in seconds, as a benchmark's
 *  redraws or a held arrow key would): a replace within QUICK ms of the last write waits that long. */
function writeAddress(push) {
  if (A.quiet || !S.doc || !WRITABLE) return;
  clearTimeout(A.later);
  const now = performance.now();
  if (!push && now - A.wrote < QUICK) { A.later = setTimeout(() => writeAddress(false), QUICK); return; }
  A.wrote = now;
  const u = addressOf(currentView());
  if (u.href === location.href) return;
  try { history[push ? "pushState" : "replaceState"](null, "", u); } catch (e) { /* a browser that refuses */ }
}

// every redraw says what changed: a new entry, or this one again
listen("redraw", ({ what }) => {
  if (what === "lang" && A.notes.length) note(A.notes);
  if (A.quiet) return;
  const now = performance.now(), kind = what === "text" && S.typedLast ? "typed" : what;
  let push = ["text", "layer", "head", "part"].includes(what);
  if (kind === "typed") push = A.last !== "typed";  // a run of typing is one view
  if (what === "token") push = !(A.last === "token" && now - A.lastAt < TOKEN_RUN);  // ← → held: one view
  A.last = kind; A.lastAt = now;
  // written once the redraw is painted: the history API is a call into the browser (milliseconds), and
  // the redraw's own time is the learner's wait
  A.due = A.due || push;
  if (A.painting) return;
  A.painting = true;
  requestAnimationFrame(() => setTimeout(() => { const p = A.due; A.due = false; A.painting = false; writeAddress(p); }, 0));
});

/** A learner worked in a card of KEPT: it is the open panel, and its inputs are kept. Opening another
 *  panel is a new entry; editing the open one's inputs rewrites this one (after a pause in typing). */
function onUse(e) {
  if (A.quiet || !e.target.closest) return;
  if (e.type === "click" && !e.target.closest("button, td, th, tr[data-key], canvas, input, select, [data-preset]")) return;
  const card = e.target.closest("section.card[id]");
  if (!card || !KEPT.includes(card.id)) return;
  if (A.open !== card.id) A.push = true;
  A.open = card.id;
  if (keepOf(card.id)) A.touched.add(card.id);
  markOpen(card.id, false);
  clearTimeout(A.timer);
  A.timer = setTimeout(() => { const push = A.push; A.push = false; writeAddress(push); }, e.type === "input" ? 400 : 0);
}

/** Mark the open panel's card (and bring it into view: scroll). */
function markOpen(name, scroll) {
  for (const el of document.querySelectorAll(".card[data-open]")) if (el.id !== name) delete el.dataset.open;
  const card = name && document.getElementById(name);
  if (!card) return;
  card.dataset.open = "1";
  if (!scroll) return;
  card.scrollIntoView({ block: "start" });
  // the cards above may still grow (a panel drawing its first answer): once more after they have
  setTimeout(() => { if (card.getBoundingClientRect().top > innerHeight / 2) card.scrollIntoView({ block: "start" }); }, 400);
}

/** The address's notes ([key, fields] each), in the page's language: again after a language switch. */
function note(lines) {
  const el = $("#address-note");
  A.notes = lines;
  el.innerHTML = lines.map(([key, fields]) => t(key, fields)).join("<br>");
  el.hidden = !lines.length;
}

/** Before the first document: the text to open on ("" for the page's own first example) and the notes
 *  the address needs (another model's link; a text too long for an address). */
export function addressText(want, examples) {
  const lines = [];
  const have = modelName();
  if (want.model && have && want.model !== have) lines.push(["addr_model", { want: esc(want.model), have: esc(have) }]);
  if (want.text === null && want.long !== null) lines.push(["addr_long", { n: want.long, max: TEXT_MAX }]);
  if (S.mode === "static" && want.text !== null && S.doc && want.text !== S.typed && want.text !== S.doc.text) {
    lines.push(["addr_static_text", { text: esc(want.text.length > 60 ? want.text.slice(0, 60) + "…" : want.text) }]);
  }
  note(lines);
  return want.text !== null && S.mode === "live" ? want.text : examples[0] || "";
}

/** Show the view `want` asks for on the page's document: part, layer, head, token, the panels' inputs
 *  and the open panel (a live page analyses its text first, when it is another). Nothing is written
 *  meanwhile; then this entry is written again (a clamped layer, a refused text: what is shown). */
export async function openAddress(want) {
  A.quiet = true;
  try {
    if (S.mode === "live" && want.text !== null && want.text !== S.typed) {
      $("#text").value = want.text;
      await analyze(want.text, performance.now(), "text");
    }
    if (!S.doc) return;
    if (S.tr && want.part && Object.hasOwn(S.doc.parts, want.part) && want.part !== S.part) choosePart(want.part, performance.now());
    const at = (i, n) => clamp(i < 0 ? n + i : i, 0, n - 1);  // a negative index counts from the end, as qkv's do
    if (want.layer !== null) S.layer = at(want.layer, S.L);
    if (want.head !== null) S.head = at(want.head, S.H);
    if (want.token !== null) { S.token = at(want.token, S.T); followToken(); }
    render("layer", performance.now());
    A.touched = new Set(Object.keys(want.inputs).filter((k) => keepOf(k)));
    for (const name of A.touched) keepOf(name).write(want.inputs[name]);
    A.open = want.panel;
    markOpen(want.panel, !!want.panel);
  } finally {
    A.quiet = false;
    A.ready = true;
    A.last = ""; A.lastAt = 0;
    writeAddress(false);
  }
}

/** The view a static export opens on: its address's when it names one, else the export's own start. */
export function staticWant(data) {
  const want = readAddress(), start = (data && data.start) || {};
  if (want.any) return want;
  return { ...want, panel: KEPT.includes(start.panel) ? start.panel : null, inputs: start.inputs || {} };
}

/** The page has opened (or failed to): from now on its changes are written into the address. */
export function settleAddress() {
  A.quiet = false;
  A.ready = true;
}

// back and forward: the view of that entry (its language stays the page's: the language button is no view)
window.addEventListener("popstate", () => {
  const want = readAddress();
  if (A.ready && want.any) openAddress(want);
});

// ---- Export this view ------------------------------------------------------------------------------

/** Where the exported page opens (its data's "start", as export.page_data writes it). */
function startOf(v) {
  const start = { layer: v.layer, head: v.head, token: v.token };
  if (v.part) start.part = v.part;
  if (v.panel) start.panel = v.panel;
  if (Object.keys(v.inputs).length) start.inputs = v.inputs;
  return start;
}

/** The static export written again: the page as it was opened, with its data's start and language new. */
export function staticPage(v) {
  const data = JSON.parse(DATA.textContent);
  data.start = startOf(v);
  data.lang = S.lang;
  const json = JSON.stringify(data).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
  const open = /<\x73cript id="qkv-data"[^>]*>/.exec(PRISTINE);  // (no tag's name in the bundle's text)
  const end = PRISTINE.indexOf("<\/script>", open.index);
  return PRISTINE.slice(0, open.index + open[0].length) + json + PRISTINE.slice(end);
}

async function exportView() {
  if (!S.doc) return;
  const v = currentView(), btn = $("#export-view");
  if (S.mode === "static") { download(new Blob([staticPage(v)], { type: "text/html" }), fileName("view", "html")); return; }
  btn.disabled = true;
  busy(true);
  try {
    const res = await fetch("api/export", { method: "POST", body: JSON.stringify({ text: v.text, ...startOf(v), lang: S.lang }),
      headers: { "Content-Type": "application/json", "Accept-Language": S.lang === "zh" ? "zh" : "en" } });
    if (!res.ok) {
      let msg = `HTTP ${res.status}`;
      try { msg = (await res.json()).error || msg; } catch (e) { /* not JSON */ }
      throw new Error(msg);
    }
    download(await res.blob(), fileName("view", "html"));
  } catch (e) {
    showError(t("export_failed", { msg: e.message }));
  } finally {
    busy(false);
    btn.disabled = false;
  }
}

/** Bind the export button and watch the cards for a learner's use (main.js, at start). */
export function bindAddress() {
  $("#export-view").addEventListener("click", exportView);
  for (const ev of ["input", "change", "click"]) document.addEventListener(ev, onUse);
}

// The guided tour (a panel, registered in panels.js): the "Tour / 导览" button opens a step panel that
// walks through the two articles' claims in their order (tour_steps.js: the words, zh and en), each
// step setting the page up live and naming what it measured there (tour_measure.js). Next / back,
// "2 / 10", ← / → (outside text fields) and Escape; the open step is ?tour=N in the address
// (history.replaceState, every other query key kept). The panel states what tests read:
//   #tour[data-step]   the step's id          #tour[data-ready]   "1" once its measure has run
//   #tour[data-facts]  its facts as JSON (in the page's language), what the words were filled with

import { S } from "./state.js";
import { $, esc } from "./util.js";
import { register } from "./panels.js";
import { TOUR_STEPS, TOUR_UI } from "./tour_steps.js";
import { Left, MEASURES, modelName, show } from "./tour_measure.js";

const TOUR = { open: false, n: 0, run: 0, got: null, error: null };
const N = TOUR_STEPS.length;

/** `text` with each {field} replaced by facts[field] (HTML-escaped; a function is called with the language). */
function fill(text, facts, lang) {
  return text.replace(/\{(\w+)\}/g, (m, k) => {
    if (!facts || !(k in facts)) return m;
    const v = facts[k];
    return esc(typeof v === "function" ? v(lang) : String(v));
  });
}

function resolved(facts, lang) {
  const out = {};
  for (const [k, v] of Object.entries(facts || {})) out[k] = typeof v === "function" ? v(lang) : v;
  return out;
}

function build() {
  const el = document.createElement("aside");
  el.id = "tour";
  el.className = "tour";
  el.hidden = true;
  el.setAttribute("role", "dialog");
  el.setAttribute("aria-labelledby", "tour-title");
  el.innerHTML = `<div class="tour-head"><span id="tour-count" class="tour-count"></span>` +
    `<h2 id="tour-title"></h2><button id="tour-close" type="button" class="tour-close">×</button></div>` +
    `<div id="tour-body" class="tour-body" aria-live="polite"></div><div id="tour-extra" class="tour-extra"></div>` +
    `<p id="tour-try" class="tour-try"></p>` +
    `<div class="tour-nav"><button id="tour-back" type="button"></button><button id="tour-next" type="button" class="primary"></button></div>`;
  document.body.appendChild(el);
  $("#tour-close").addEventListener("click", closeTour);
  $("#tour-back").addEventListener("click", () => go(TOUR.n - 1));
  $("#tour-next").addEventListener("click", () => (TOUR.n === N - 1 ? closeTour() : go(TOUR.n + 1)));
  window.addEventListener("keydown", onKey, true);  // before the page's own ← / → (events.js moves the token)
}

function onKey(e) {
  if (!TOUR.open || e.defaultPrevented || e.isComposing) return;
  const t = e.target, typing = t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  if (e.key === "Escape") { e.preventDefault(); closeTour(); return; }
  if (typing || e.altKey || e.ctrlKey || e.metaKey) return;
  const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
  if (!step) return;
  e.preventDefault();
  e.stopPropagation();
  go(TOUR.n + step);
}

/** ?tour=N (1-based) while open, removed when closed; the other keys of the address stay as they are. */
function setAddress() {
  try {
    const u = new URL(location.href);
    if (TOUR.open) u.searchParams.set("tour", String(TOUR.n + 1)); else u.searchParams.delete("tour");
    history.replaceState(history.state, "", u);
  } catch (e) { /* file:// */ }
}

/** The step's words in the page's language, filled with its facts (or "measuring…", or why it failed). */
function draw() {
  const el = $("#tour");
  if (!el) return;
  const ui = TOUR_UI[S.lang], step = TOUR_STEPS[TOUR.n], words = step[S.lang], got = TOUR.got;
  const variant = got && got.variant === "none" ? "_none" : "";
  const decoder = got && got.variant === "decoder";  // the model served is not a GPT-like decoder
  $("#tour-count").textContent = `${TOUR.n + 1} / ${N}`;
  $("#tour-title").textContent = words.title;
  $("#tour-close").title = ui.close;
  $("#tour-close").setAttribute("aria-label", ui.close);
  $("#tour-back").textContent = ui.back;
  $("#tour-back").disabled = TOUR.n === 0;
  $("#tour-next").textContent = TOUR.n === N - 1 ? ui.done : ui.next;
  const body = $("#tour-body"), tryIt = $("#tour-try");
  if (TOUR.error) {
    body.innerHTML = `<p class="error">${esc(ui.failed.replace("{error}", TOUR.error))}</p>`;
    tryIt.innerHTML = "";
  } else if (!got) {
    body.innerHTML = `<p class="caption">${esc(ui.measuring)}</p>`;
    tryIt.innerHTML = "";
  } else if (decoder) {
    body.innerHTML = `<p>${fill(ui.needs_decoder, { model: modelName }, S.lang)}</p>`;
    tryIt.innerHTML = "";
  } else {
    body.innerHTML = `<p>${fill(words["body" + variant] || words.body, got.facts, S.lang)}</p>`;
    tryIt.innerHTML = fill(words["try" + variant] || words.try, got.facts, S.lang);
  }
  el.dataset.step = step.id;
  el.dataset.index = String(TOUR.n);
  el.dataset.ready = got || TOUR.error ? "1" : "0";
  el.dataset.facts = got ? JSON.stringify(resolved(got.facts, S.lang)) : "";
  el.dataset.error = TOUR.error || "";
}

function focusCard(selector) {
  for (const c of document.querySelectorAll(".tour-focus")) c.classList.remove("tour-focus");
  const card = selector ? document.querySelector(selector) : null;
  if (!card || card.closest("#tour")) return;
  card.classList.add("tour-focus");
  card.scrollIntoView({ block: "start" });
}

/** Whether the page shows the positions step's view read with the positions taken out. */
const positionsOff = () => !!(S.doc && S.doc.positions === "off");

/** Leaving the positions step (another step, or the tour closed): the page reads the model with its
 *  positions again (the same sentence), so no later step, panel or address holds the off view. */
async function positionsOn(ctx) {
  if (!S.doc || S.doc.positions === undefined) return;
  await show(S.doc.text, ctx);
}

/** Open step n: its words at once, then its measure (a newer step started meanwhile wins: ctx.live()). */
async function go(n) {
  if (n < 0 || n >= N) return;
  const run = ++TOUR.run, step = TOUR_STEPS[n];
  TOUR.n = n; TOUR.got = null; TOUR.error = null;
  $("#tour-extra").innerHTML = "";
  setAddress();
  draw();
  const ctx = { extra: $("#tour-extra"), live: () => TOUR.open && run === TOUR.run };
  try {
    if (step.id !== "positions") await positionsOn(ctx);
    const got = await MEASURES[step.id](ctx);
    if (run !== TOUR.run) return;
    TOUR.got = got;
  } catch (e) {
    if (run !== TOUR.run || e instanceof Left) return;
    TOUR.error = e && e.message ? e.message : String(e);
  }
  focusCard(step.card);
  draw();
}

export function openTour(n = 0) {
  TOUR.open = true;
  $("#tour").hidden = false;
  document.body.classList.add("touring");
  go(Math.max(0, Math.min(N - 1, n)));
}

export function closeTour() {
  TOUR.open = false;
  TOUR.run++;
  $("#tour").hidden = true;
  document.body.classList.remove("touring");
  for (const c of document.querySelectorAll(".tour-focus")) c.classList.remove("tour-focus");
  setAddress();
  positionsOn({ live: () => !TOUR.open }).catch(() => {});
  const b = $("#tour-open");
  if (b) b.focus();
}

function labelButton() {
  const b = $("#tour-open");
  if (!b) return;
  b.textContent = TOUR_UI[S.lang].open;
  b.title = TOUR_UI[S.lang].open_title;
}

register({
  name: "tour",
  init() {
    build();
    const b = $("#tour-open");
    if (b && document.getElementById("qkv-data")) { b.hidden = true; return; }  // a static export: no server to measure
    if (b) b.addEventListener("click", () => (TOUR.open ? closeTour() : openTour(0)));
    labelButton();
  },
  start() {  // the first document is drawn: a shared address with ?tour=N opens there
    const n = Number(new URLSearchParams(location.search).get("tour"));
    if (Number.isInteger(n) && n >= 1) openTour(n - 1);
  },
  lang() {
    labelButton();
    if (!TOUR.open) return;
    if (TOUR.got && TOUR.got.redraw) TOUR.got.redraw();  // its own table's words
    draw();
  },
  render() {  // a view read with the positions taken out says so in the heatmap's title and in the cards
    const title = $("#heatmap-title"), off = positionsOff();  // that ask the server (they read it with them)
    if (title && off) title.textContent += ` · ${TOUR_UI[S.lang].off}`;
    for (const card of document.querySelectorAll("#lens, #origin")) {  // a note beside the card: it redraws itself
      let note = document.querySelector(`.tour-off-note[data-for="${card.id}"]`);
      if (!off) { if (note) note.remove(); continue; }
      if (!note) {
        note = document.createElement("p");
        note.className = "tour-off-note caption";
        note.dataset.for = card.id;
        card.before(note);
      }
      note.textContent = TOUR_UI[S.lang].off_note;
    }
  },
});

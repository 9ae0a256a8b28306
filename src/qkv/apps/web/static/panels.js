// The panels (playground.js, origin.js, ...): each registers itself here with
//   register({ name, init() once at start (bind events), onDoc(doc) when a new view arrives,
//              render(what) after every redraw of the main cards, lang() after a language switch,
//              lazy: true for a panel that asks the server or draws a lot,
//              start(doc) once, with the first document, awake or not: what it computes at load,
//              keep: { read() -> {field: "value"}, write(values) } what a view keeps of its inputs, optional:
//              address.js writes them into the page's address and into "Export this view", and gives
//              them back on a reload, a shared link or the back button (formKeep: a form's fields) })
// and the page calls them through eachPanel. A lazy panel sleeps while its card (id = its name) is
// more than half a screen away: what it was told meanwhile is replayed once when the card comes near
// (onDoc with the newest document, lang, then one render), so a change of text, layer or head costs
// only the cards a learner can see. They all sleep until the page has drawn its first document
// (main.js calls watchLazyPanels then). A sleeping card that has drawn nothing yet still shows its frame,
// its title and a line saying it waits to be scrolled to (drawWaiting), so a page read or captured
// before scrolling has no blank cards; the line is taken away when the panel wakes.

import { S } from "./state.js";
import { t } from "./i18n.js";

const PANELS = [];
const LAZY_MARGIN = "50% 0px";

export function register(panel) {
  PANELS.push(panel);
}

/** The keep hook of the panel called `name` (its inputs, for the page's address), or null. */
export function keeper(name) {
  const p = PANELS.find((q) => q.name === name);
  return (p && p.keep) || null;
}

/** A keep hook for a form: `fields` maps each name to its element's selector ({target: "#attr-target"}).
 *  write sets the values it is given (those it knows), then calls run() when there is one, else sends each
 *  element "input" and "change" as a learner's edit would (the panel's own listeners redraw). */
export function formKeep(fields, run = null) {
  const els = () => Object.entries(fields).map(([k, sel]) => [k, document.querySelector(sel)]).filter(([, el]) => el);
  return {
    read: () => Object.fromEntries(els().map(([k, el]) => [k, el.value])),
    write(values) {
      const set = els().filter(([k]) => typeof values[k] === "string");
      for (const [k, el] of set) el.value = values[k];
      if (run) { run(); return; }
      for (const [, el] of set) for (const ev of ["input", "change"]) el.dispatchEvent(new Event(ev, { bubbles: true }));
    },
  };
}

/** Whether the panel called `name` is awake (a panel that is not lazy always is; none such: true). */
export function awake(name) {
  const p = PANELS.find((q) => q.name === name);
  return !p || !p.lazy || !!p.awake;
}

/** Every panel's names and whether each is lazy and awake (for the test hook). */
export const panelStates = () => PANELS.map((p) => ({ name: p.name, lazy: !!p.lazy, awake: !!p.awake }));

// the title each waiting card shows (the key of the panel's own title; none: the line alone)
const WAIT_TITLE = { ablate: "ablate_title", lens: "lens_name", attribution: "attr_name", patch: "patch_title",
  side: "side_title", vocab: "vocab_title", origin: "pl_wait_origin" };
const waitLine = () => `<p class="caption waiting-line" data-field="waiting">${t("pl_waiting")}</p>`;

/** A panel not yet woken says it waits: an empty card gets its title and the waiting line; a card that
 *  already holds the panel's own frame (a form, headings) gets the line under its title. Again after a
 *  language switch. */
function drawWaiting(p) {
  const el = document.getElementById(p.name);
  if (!el || p.seen) return;
  if (!el.querySelector(":scope > :not(.card-save)") || el.dataset.waiting === "1") {  // (the save control: save_card.js)
    el.dataset.waiting = "1";
    el.innerHTML = (WAIT_TITLE[p.name] ? `<h2 class="waiting-title">${t(WAIT_TITLE[p.name])}</h2>` : "") + waitLine();
    return;
  }
  const line = el.querySelector(":scope > .waiting-line");
  if (line) { line.textContent = t("pl_waiting"); return; }
  const h2 = el.querySelector(":scope > h2");
  if (h2) h2.insertAdjacentHTML("afterend", waitLine()); else el.insertAdjacentHTML("afterbegin", waitLine());
}

/** The panel wakes: what drawWaiting added goes (an empty card is left empty, for the panel to draw). */
function clearWaiting(p) {
  p.seen = true;
  const el = document.getElementById(p.name);
  if (!el) return;
  if (el.dataset.waiting === "1") { delete el.dataset.waiting; el.innerHTML = ""; return; }
  for (const line of el.querySelectorAll(":scope > .waiting-line")) line.remove();
}

export function eachPanel(hook, ...args) {
  for (const p of PANELS) {
    if (hook === "lang" && p.lazy && !p.awake) drawWaiting(p);
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

/** The first document is drawn: each panel's start (the side-by-side panel compares the pair /api/model
 *  offers at load, as the comparison card does; the other panels wait until they are seen). */
export function startPanels(doc) {
  for (const p of PANELS) if (p.start) { clearWaiting(p); p.start(doc); }  // drawn now: it waits for nothing
}

/** Watch the lazy panels' cards, once the page has drawn its first document (or found none): before
 *  that every card is empty and short, all of them near the window, and a panel woken then would send
 *  its requests at once (a large model's /api/heads measures for seconds, and the next sentence would
 *  wait behind it). An observer made now reports the cards where they really are. */
export function watchLazyPanels() {
  const lazy = PANELS.filter((p) => p.lazy && document.getElementById(p.name));
  if (typeof IntersectionObserver !== "function") { for (const p of PANELS) p.awake = true; return; }
  const seen = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const p = lazy.find((q) => q.name === e.target.id);
      p.awake = e.isIntersecting;
      if (p.awake) clearWaiting(p); else drawWaiting(p);
      const due = p.awake && p.due;
      if (!due) continue;
      p.due = null;
      if (due.onDoc && p.onDoc && S.doc) p.onDoc(S.doc);
      if (due.lang && p.lang) p.lang();
      if (due.render !== null && p.render) p.render(due.render);
    }
  }, { rootMargin: LAZY_MARGIN });
  for (const p of lazy) { if (!p.awake) drawWaiting(p); seen.observe(document.getElementById(p.name)); }
}

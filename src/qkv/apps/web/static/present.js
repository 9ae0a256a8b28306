// Presentation mode, for a projector: one card at a time filling the screen, larger type (present.css
// scales the page's rem for 1280×720 up to 1920×1080), a bar at the bottom with the step ("3 / 14").
//   p (or the header's button)                 start, on the card at the top of the window; p again leaves
//   → PageDown space / ← PageUp                 the next / the previous card;  Home / End: the first / last
//   Esc                                         leave, back where the page was scrolled
// Keys typed into a text field, a number or a menu stay theirs (the layer and head menus keep their
// arrows), and so does a card's own key handling where it has one; ← / → step the cards instead of the
// query token. Cards hidden for this model (the comparison for a translation model, ...) or with nothing
// in them are skipped. Nothing is redrawn or rebuilt: the other cards are only hidden, so typed text and
// choices stay; a lazy panel (panels.js) wakes when its card is shown, as when it is scrolled to.

import { t } from "./i18n.js";
import { PRINT } from "./paint.js";
import { cardTitle } from "./save_card.js";

const PR = { on: false, cards: [], at: 0, scrollY: 0 };
const SHOWN = "presented";
const PAGE_PX = 14;  // app.css's html font-size: the type grows by the presenting font-size over it

const typing = (el) => !!(el && el.closest && el.closest("input, textarea, select, [contenteditable=''], [contenteditable=true]"));

/** Whether `card` has anything to show: not hidden, and more than the save control in it (`laidOut`: and
 *  displayed, asked before presenting; while presenting, present.css hides every card but one). */
function showable(card, laidOut = false) {
  if (card.hidden || card.closest("[hidden]") || (laidOut && getComputedStyle(card).display === "none")) return false;
  return [...card.children].some((c) => !c.classList.contains("card-save") && !c.hidden);
}

/** The cards presentation mode steps through, in the page's order. */
export const presentable = () => [...document.querySelectorAll("main.grid > section.card")].filter((c) => showable(c, true));

function bar() {
  let el = document.getElementById("present-bar");
  if (el) return el;
  el = document.createElement("div");
  el.id = "present-bar"; el.className = "present-bar"; el.hidden = true;
  el.innerHTML = `<button type="button" id="present-prev" data-i18n-title="cards_prev" title="${t("cards_prev")}">←</button>` +
    `<span id="present-step" class="present-step" aria-live="polite"></span>` +
    `<button type="button" id="present-next" data-i18n-title="cards_next" title="${t("cards_next")}">→</button>` +
    `<span id="present-name" class="present-name"></span>` +
    `<button type="button" id="present-exit" data-i18n="cards_exit">${t("cards_exit")}</button>`;
  document.body.appendChild(el);
  el.querySelector("#present-prev").addEventListener("click", () => step(-1));
  el.querySelector("#present-next").addEventListener("click", () => step(1));
  el.querySelector("#present-exit").addEventListener("click", leave);
  return el;
}

/** Show the card at `n` (of PR.cards, again filtered: a card emptied meanwhile is passed over). */
function show(n) {
  const was = PR.cards[PR.at];
  PR.cards = PR.cards.filter((c) => c === was || showable(c));
  PR.at = Math.max(0, Math.min(PR.cards.length - 1, n));
  for (const c of document.querySelectorAll(`.${SHOWN}`)) c.classList.remove(SHOWN);
  const card = PR.cards[PR.at];
  if (!card) return;
  card.classList.add(SHOWN);
  card.scrollTop = 0;
  document.getElementById("present-step").textContent = `${PR.at + 1} / ${PR.cards.length}`;
  document.getElementById("present-name").textContent = cardTitle(card);
  document.body.dataset.presentAt = String(PR.at + 1);
}

const step = (d) => { if (PR.on) show(PR.at + d); };

/** Start presenting, on the first card whose bottom is below the top of the window. */
export function present() {
  if (PR.on) return;
  const cards = presentable();
  if (!cards.length) return;
  PR.scrollY = window.scrollY;
  const first = cards.findIndex((c) => c.getBoundingClientRect().bottom > 40);
  PR.on = true; PR.cards = cards;
  bar().hidden = false;
  document.documentElement.classList.add("presenting");
  document.body.classList.add("presenting");
  zoom(parseFloat(getComputedStyle(document.documentElement).fontSize) / PAGE_PX);
  show(first < 0 ? 0 : first);
}

/** The heatmap and the lines grow with the type (present.css zooms them by --present-zoom) and are drawn
 *  again at that many pixels per CSS pixel (paint.js PRINT), so they stay sharp: the page's own redraw on
 *  a window resize (events.js) does it. */
function zoom(z) {
  PRINT.scale = z;
  document.documentElement.style.setProperty("--present-zoom", String(z));
  window.dispatchEvent(new Event("resize"));
}

/** Leave: every card back, the window scrolled where it was. */
export function leave() {
  if (!PR.on) return;
  PR.on = false;
  for (const c of document.querySelectorAll(`.${SHOWN}`)) c.classList.remove(SHOWN);
  document.documentElement.classList.remove("presenting");
  document.body.classList.remove("presenting");
  delete document.body.dataset.presentAt;
  bar().hidden = true;
  zoom(1);
  document.documentElement.style.removeProperty("--present-zoom");
  window.scrollTo(0, PR.scrollY);
}

const KEYS = { ArrowRight: 1, PageDown: 1, " ": 1, ArrowLeft: -1, PageUp: -1 };

function onKey(e) {
  if (e.altKey || e.ctrlKey || e.metaKey || e.isComposing || e.defaultPrevented) return;
  const field = typing(e.target);
  if (!PR.on) {
    if ((e.key === "p" || e.key === "P") && !field) { e.preventDefault(); present(); }
    return;
  }
  if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); leave(); return; }
  if (field) return;  // the field's own keys
  let to = null;
  if (e.key in KEYS) to = PR.at + KEYS[e.key];
  else if (e.key === "Home") to = 0;
  else if (e.key === "End") to = PR.cards.length - 1;
  else if (e.key === "p" || e.key === "P") { e.preventDefault(); leave(); return; }
  if (to === null) return;
  e.preventDefault(); e.stopPropagation();  // not the page's own ← / → (the query token: events.js)
  show(to);
}

/** The header's button (left of the language button) and the keys. */
export function bindPresent() {
  const b = document.createElement("button");
  b.type = "button"; b.id = "present"; b.className = "present-btn";
  b.dataset.i18n = "cards_present"; b.dataset.i18nTitle = "cards_present_title";
  b.textContent = t("cards_present"); b.title = t("cards_present_title");
  b.addEventListener("click", () => (PR.on ? leave() : present()));
  const lang = document.getElementById("lang");
  if (lang) lang.before(b);
  bar();
  window.addEventListener("keydown", onKey, true);  // before the page's own keys (events.js, on document)
}

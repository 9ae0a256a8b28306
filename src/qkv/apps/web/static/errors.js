// Errors where the learner is looking: the text's own line, a card's line, and the dimmed results
// of a failed analysis.

import { S } from "./state.js";
import { $ } from "./util.js";
import { t } from "./i18n.js";

export function showError(msg) {
  const el = $("#error");
  el.textContent = msg || "";
  el.hidden = !msg;
  if (msg) reveal(el);
}

/** Show `msg` in an error line inside `card` (an element or a selector; "" clears it), where the
 *  learner is looking: the line is made on first use, under the card's title, and scrolled into
 *  view when it is off-screen. For any card's own errors (generate, compare, a panel). */
export function showErrorIn(card, msg) {
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
export function reveal(el) {
  const r = el.getBoundingClientRect();
  if (r.top < 0 || r.bottom > window.innerHeight || r.left < 0 || r.right > window.innerWidth)
    el.scrollIntoView({ block: "nearest", inline: "nearest" });
}

/** A failed analysis leaves the last results on the page: they are dimmed and a line names the
 *  text they belong to (text: that text), until a new view arrives (text: null). */
export function markStale(text) {
  document.body.dataset.stale = text === null ? "0" : "1";
  const el = $("#stale");
  el.hidden = text === null;
  if (text !== null) el.textContent = t("stale_note", { text });
}

/** The server writes a NaN or an infinity as null and says so in a document's "non_finite" {count,
 *  first} (core/finite.py). The page says so for the text it shows: each view of a text sets or clears
 *  the notice (a panel's answer, about the same text, would only change which count is shown). */
export function noteNonFinite(data) {
  if (data.kind !== "view" && data.kind !== "translation-view") return;
  S.nonFinite = data.non_finite || null;
  renderNonFinite();
}

export function renderNonFinite() {
  const el = $("#non-finite"), note = S.nonFinite;
  document.body.dataset.nonFinite = note ? "1" : "0";  // every card's title is marked too (app.css)
  if (!el) return;
  el.hidden = !note;
  if (note) el.textContent = t("non_finite", { count: note.count.toLocaleString(), first: note.first });
}

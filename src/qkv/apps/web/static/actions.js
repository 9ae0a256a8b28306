// What a learner does: analyse a text, choose a token, a head, a translation model's part. Each
// changes S and redraws.

import { S } from "./state.js";
import { $ } from "./util.js";
import { announce } from "./announce.js";
import { api, busy } from "./api.js";
import { markStale, showError } from "./errors.js";
import { defaultToken, setDoc, usePart } from "./doc.js";
import { eachPanel } from "./panels.js";
import { fillSelects } from "./choice.js";
import { measureLabels } from "./paint.js";
import { drawThumbs } from "./thumbs.js";
import { renderSpaceBox, renderTokenButtons, renderUnknown } from "./tokens.js";
import { renderTranslation } from "./translation.js";
import { render } from "./render.js";
import { followToken } from "./next.js";

// typing analyses too: TYPE_WAIT ms after the last key (a debounce), as if Enter had been pressed
export const TYPE_WAIT = 400;
let typing = 0;  // the pending timer of analyzeSoon (0: none)

/** A new view document: made current, and every card that depends only on the document drawn.
 *  readFrom: the text it was read from (default: the box's).
 *  keepText: leave the text box as the learner typed it (not rewritten to the text as read: a word
 *  tokenizer reads 我投资了苹果 as 我 投资了 苹果, and the tokens show that; the box keeps the text). */
export function loadDoc(doc, keepText = false, readFrom = null) {
  setDoc(doc);
  announce("doc", doc);
  markStale(null);
  if (!keepText) $("#text").value = doc.text;
  S.typed = keepText ? (readFrom ?? $("#text").value) : doc.text;  // what this document was read from
  fillSelects(); renderTokenButtons(); drawThumbs(); measureLabels(); renderTranslation(); renderUnknown();
  renderSpaceBox();
  eachPanel("onDoc", doc);
}

/** Forget a pending analyzeSoon (generating writes the text box itself). */
export function cancelTyping() {
  clearTimeout(typing);
  typing = 0;
}

/** Analyse the text box TYPE_WAIT ms after the last keystroke: each new key restarts the wait, and
 *  any analysis started meanwhile (Enter, the button, an example) cancels it. An empty box, or the
 *  text already shown, is left alone. */
export function analyzeSoon() {
  clearTimeout(typing);
  typing = setTimeout(() => {
    typing = 0;
    const text = $("#text").value;
    if (!text.trim() || (S.doc && !S.tr && text === S.typed)) return;
    analyze(text, performance.now(), "text", true);
  }, TYPE_WAIT);
}

/** Analyse `text` (a string, or {ids: [...]} for tokens as generated): fetch its view, decode,
 *  redraw. t0 = when the user's event began. Only the newest request's answer is shown: an older
 *  one that arrives later is dropped, so it never paints over a newer text. The text box keeps what
 *  the learner typed: a string is never rewritten to the text as read; ids rewrite it to their
 *  decoding unless keepBox (generation writes the box itself). typed: started by typing. */
export async function analyze(text, t0, what = "text", typed = false, keepBox = false) {
  cancelTyping();
  const req = ++S.req;
  busy(true);
  try {
    const doc = await api("api/view", typeof text === "string" ? { text } : text);
    if (req !== S.req) return;  // a newer request was made meanwhile
    showError("");
    S.typedLast = typed;  // the page's address makes one view of a run of typing (address.js)
    const from = typeof text === "string" ? text : null;
    loadDoc(doc, typed || keepBox || from !== null, from);  // the box as the learner left it
    render(what, t0);
  } catch (e) {
    if (req !== S.req) return;
    showError(e.message);
    if (S.doc) markStale(S.doc.text);  // what is below is not this text's
  } finally {
    busy(false);
  }
}

export function chooseToken(i) {
  const t0 = performance.now();
  if (!S.doc) return;
  S.token = i;
  followToken();  // the next-token card leaves its opening position for the learner's
  render("token", t0);
}

export function chooseHead(l, h, what, t0) {
  S.layer = l; S.head = h;
  render(what, t0);
}

/** Show another attention of a translation model (cross, decoder, encoder). */
export function choosePart(name, t0) {
  if (!S.tr || !Object.hasOwn(S.doc.parts, name)) return;
  const wasSource = S.P.queries === "source";
  S.part = name;
  usePart();
  if ((S.P.queries === "source") !== wasSource) S.token = defaultToken(S.doc);  // other queries: open on the default
  fillSelects(); renderTokenButtons(); drawThumbs(); measureLabels();
  render("part", t0);
}

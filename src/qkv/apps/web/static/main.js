// qkv explorer: the browser side, as ES modules. This entry module starts the page: a static
// snapshot (the data embedded by qkv explain --html) or live (the same-origin JSON API of qkv serve).
// No framework, no network beyond that API. What each module holds:
//   state (S), util, i18n, api, errors, announce   the page's state and its small helpers
//   decode, doc                                    the server's documents into typed arrays
//   paint, tip, heatmap, thumbs, lines, steps, hull, residual, next, compare, translation, tokens,
//   choice, model_line, generate                   one card (or control) each
//   render, actions, events, lang                  the redraw, what a learner does, the language
//   panels + playground, origin, ablate, lens, attribution, patch, side, vocab, transform
//                                                  the panels, registered in panels.js (shade: their colours)
//   card_picture, save_card, present               each card saved as a picture; presentation mode
//   tour (+ tour_steps, tour_measure)              the guided tour: its panel, its words, its measures
//   address                                        the view in the page's address; "Export this view"
//   measure                                        the timings and the test hook (window.qkv)
// The static export (qkv.apps.web.bundle) inlines them all as one module script, in import order.

import { S } from "./state.js";
import { $, clamp } from "./util.js";
import { api, busy } from "./api.js";
import { noteNonFinite, showError } from "./errors.js";
import { eachPanel, startPanels, watchLazyPanels } from "./panels.js";
import { setModel } from "./model_line.js";
import { render, watchBelow } from "./render.js";
import { analyze, loadDoc } from "./actions.js";
import { runCompare } from "./compare.js";
import { applyLang, initialLang } from "./lang.js";
import { followToken } from "./next.js";
import { bind } from "./events.js";
import { equipCards } from "./save_card.js";
import { bindPresent } from "./present.js";
import { addressText, bindAddress, openAddress, readAddress, settleAddress, staticWant } from "./address.js";
import "./playground.js";  // the panels register themselves, in this order
import "./origin.js";
import "./ablate.js";
import "./lens.js";
import "./attribution.js";
import "./patch.js";
import "./side.js";
import "./vocab.js";
import "./transform.js";
import "./tour.js";  // the guided tour (tour_steps.js its words, tour_measure.js what each step measures)
import "./measure.js";

async function init() {
  const t0 = performance.now();
  const embedded = document.getElementById("qkv-data");
  const data = embedded ? JSON.parse(embedded.textContent) : null;
  S.lang = initialLang(data);
  bind();
  equipCards();  // a save control on every card (save_card.js)
  bindPresent();  // presentation mode: its button and keys (present.js)
  bindAddress();
  eachPanel("init");
  watchBelow();
  if (embedded) {
    S.mode = "static";
    setModel(data.model || (data.view && data.view.model));
    for (const id of ["#text", "#analyze", "#generate", "#compare-run", "#compare-a", "#compare-b", "#compare-word", "#compare-senses"]) $(id).disabled = true;
    for (const b of document.querySelectorAll("#examples .example, #gen input")) b.disabled = true;
    $("#static-note").hidden = false;
    S.compare = data.compare || null;
    const start = data.start || {};  // qkv explain --html --layer L --head H --token T opens there
    if (data.view && typeof start.part === "string") S.part = start.part;  // a translation model's attention
    if (data.view) { loadDoc(data.view); noteNonFinite(data.view); }
    if (S.doc) {
      if (Number.isInteger(start.layer)) S.layer = clamp(start.layer, 0, S.L - 1);
      if (Number.isInteger(start.head)) S.head = clamp(start.head, 0, S.H - 1);
      if (Number.isInteger(start.token)) { S.token = clamp(start.token, 0, S.T - 1); followToken(); }
    }
    applyLang();
    const want = staticWant(data);  // the address's view, else the export's own (address.js)
    addressText(want, []);
    render("init", t0);
    if (S.doc) await openAddress(want);
    settleAddress();
    watchLazyPanels();  // the lazy panels wake once the first document is drawn (panels.js)
    return;
  }
  const want = readAddress();  // a reload, a shared link: the view it names (address.js)
  applyLang();
  busy(true);
  try {
    const m = await api("api/model");
    setModel(m);
    applyLang();
    const first = addressText(want, S.examples);  // the address's text, else the first example
    if (first) {
      $("#text").value = first;
      await analyze(first, t0, "init");  // guarded: a click meanwhile wins
      if (S.doc) startPanels(S.doc);
    } else {
      render("init", t0);
    }
    if (S.doc) await openAddress(want);
    if ($("#compare-word").value) runCompare();
  } catch (e) {
    showError(e.message);
  } finally {
    settleAddress();
    busy(false);
    watchLazyPanels();
  }
}

// a module runs once the document is parsed, before DOMContentLoaded: every element is there
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();

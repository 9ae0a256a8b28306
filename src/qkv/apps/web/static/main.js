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
    render("init", t0);
    watchLazyPanels();  // the lazy panels wake once the first document is drawn (panels.js)
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
      if (S.doc) startPanels(S.doc);
    } else {
      render("init", t0);
    }
    if ($("#compare-word").value) runCompare();
  } catch (e) {
    showError(e.message);
  } finally {
    busy(false);
    watchLazyPanels();
  }
}

// a module runs once the document is parsed, before DOMContentLoaded: every element is there
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();

// The redraw: everything that depends on layer, head or token. Canvases first (they measure the
// layout), then the HTML cards, each built as one string. A redraw announces what it did (announce.js:
// "redraw" when its script has run, "redraw-complete" once every card holds the new numbers); it
// keeps no timings itself (measure.js does).

import { S } from "./state.js";
import { $ } from "./util.js";
import { t } from "./i18n.js";
import { announce } from "./announce.js";
import { eachPanel } from "./panels.js";
import { markChosen } from "./choice.js";
import { drawHeatmap } from "./heatmap.js";
import { drawLines } from "./lines.js";
import { renderSteps } from "./steps.js";
import { renderHull } from "./hull.js";
import { renderResidual } from "./residual.js";
import { renderNext } from "./next.js";
import { renderCompare } from "./compare.js";

// The cards below the heatmap, and whether each is out of the window now (an IntersectionObserver
// keeps it up to date; unknown counts as in view). A redraw paints the cards a learner can see first
// and those out of view in the task after that frame: the step table alone (64 rows x 10 numbers)
// costs as much layout and paint as the rest of the page, and at 1280 x 900 it is below the window.
const BELOW = [["steps-card", renderSteps], ["hull-card", renderHull], ["residual-card", renderResidual],
  ["next-card", renderNext]];
const OUT_OF_VIEW = {};
let drawn = 0;  // redraws so far: the later cards of an old redraw are left to the newer one

/** Redraw for a change of `what` ("init", "text", "layer", "head", "token", "part", "lang", "space")
 *  that began at t0 (performance.now() of the user's event). */
export function render(what, t0) {
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
  const id = ++drawn;
  announce("redraw", { id, what, t0 });
  if (!later.length) { announce("redraw-complete", { id, what, t0, deferred: false }); return; }
  requestAnimationFrame(() => setTimeout(() => {  // in a task queued from the next animation frame
    if (id === drawn) for (const draw of later) draw();  // else a newer redraw draws them itself
    announce("redraw-complete", { id, what, t0, deferred: true });
  }, 0));
}

export function watchBelow() {
  if (typeof IntersectionObserver !== "function") return;
  const cards = new Map(BELOW.map(([card]) => [document.querySelector("." + card), card]));
  const seen = new IntersectionObserver((entries) => {
    for (const e of entries) OUT_OF_VIEW[cards.get(e.target)] = !e.isIntersecting;
  });
  for (const el of cards.keys()) if (el) seen.observe(el);
}

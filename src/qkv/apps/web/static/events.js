// The page's events: what each click, key and change does, and the redraw when a canvas's box
// changes size.

import { S } from "./state.js";
import { $ } from "./util.js";
import { WRAP_W } from "./paint.js";
import { drawHeatmap, heatCell, onHeatHover } from "./heatmap.js";
import { drawLines, linesRow } from "./lines.js";
import { showTip } from "./tip.js";
import { isSpace, shownIdx } from "./tokens.js";
import { runCompare } from "./compare.js";
import { placeSelects } from "./choice.js";
import { runGenerate } from "./generate.js";
import { applyLang } from "./lang.js";
import { render } from "./render.js";
import { analyze, analyzeSoon, chooseHead, choosePart, chooseToken } from "./actions.js";

export function bind() {
  placeSelects();
  $("#analyze").addEventListener("click", () => analyze($("#text").value, performance.now()));
  $("#text").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {  // Shift+Enter types a newline
      e.preventDefault();
      analyze($("#text").value, performance.now());
    }
  });
  // typing alone analyses too, a moment after the last key (an input method's composition: once it ends)
  $("#text").addEventListener("input", (e) => { if (!e.isComposing && S.mode === "live") analyzeSoon(); });
  $("#text").addEventListener("compositionend", () => { if (S.mode === "live") analyzeSoon(); });
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
  $("#lines").addEventListener("click", (e) => { const i = linesRow(e); if (i !== null) chooseToken(i); });
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

// Head thumbnails: every head's pattern, 1 px per cell (CSS scales them up), in a grid that scrolls
// inside its card (24 layers x 14 heads, 16 x 32: hundreds of them). They are drawn lazily: a new
// document draws only those in or near the grid's scrolled view, and only while the heads card is
// near the window; the others are drawn when they scroll into view (two IntersectionObservers). A
// drawn thumbnail says so: data-drawn (the tests count them).

import { S } from "./state.js";
import { $ } from "./util.js";
import { t } from "./i18n.js";
import { paintPattern } from "./paint.js";

const MARGIN = "48px";  // drawn ahead of the scroll: about two rows
const TH = { near: new Set(), cardNear: false, seen: null, card: null, img: null, doc: null };

/** A new document (or another part of a translation's): build the grid for its shape if it changed,
 *  forget what the thumbnails show, and draw those in view. */
export function drawThumbs() {
  const box = $("#heads");
  let canvases = box.querySelectorAll("canvas");
  if (canvases.length !== S.L * S.H) {  // a new model shape: build the grid (otherwise reuse it)
    box.style.setProperty("--heads", S.H);
    box.classList.toggle("many", S.H > 8 || S.L > 12);
    let html = `<span class="axis ax-corner"></span>`;  // the labels' words: titleThumbs, in the page's language
    for (let h = 0; h < S.H; h++) html += `<span class="axis ax-head" data-h="${h}"></span>`;
    for (let l = 0; l < S.L; l++) {
      html += `<span class="axis ax-layer" data-l="${l}"></span>`;
      for (let h = 0; h < S.H; h++) html += `<canvas data-layer="${l}" data-head="${h}"></canvas>`;
    }
    if (TH.seen) TH.seen.disconnect();
    TH.near.clear();
    box.innerHTML = html;
    canvases = box.querySelectorAll("canvas");
    titleThumbs();
    watch(box, canvases);
  }
  TH.img = new ImageData(S.Tk, S.T);
  TH.doc = S.A;
  for (const cv of canvases) {
    if (cv.dataset.drawn === undefined) continue;
    delete cv.dataset.drawn;  // it shows the previous text: cleared unless redrawn below
    if (!TH.near.has(cv) || !TH.cardNear) cv.getContext("2d").clearRect(0, 0, cv.width, cv.height);
  }
  if (TH.cardNear) for (const cv of TH.near) drawOne(cv);
}

function drawOne(cv) {
  if (!S.A || cv.dataset.drawn !== undefined) return;
  const T = S.T, Tk = S.Tk;
  if (TH.doc !== S.A || !TH.img || TH.img.width !== Tk || TH.img.height !== T) { TH.img = new ImageData(Tk, T); TH.doc = S.A; }
  if (cv.width !== Tk || cv.height !== T) { cv.width = Tk; cv.height = T; }
  cv.style.aspectRatio = S.tr ? `${Tk} / ${T}` : "";
  paintPattern(TH.img, +cv.dataset.layer, +cv.dataset.head);
  cv.getContext("2d").putImageData(TH.img, 0, 0);
  cv.dataset.drawn = "";
}

/** Observe the thumbnails (against the grid's own scroll box) and the card (against the window). */
function watch(box, canvases) {
  if (typeof IntersectionObserver !== "function") {  // no observer: every thumbnail, at once
    TH.cardNear = true;
    for (const cv of canvases) TH.near.add(cv);
    return;
  }
  TH.seen = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (e.isIntersecting) { TH.near.add(e.target); if (TH.cardNear) drawOne(e.target); }
      else TH.near.delete(e.target);
    }
  }, { root: box, rootMargin: MARGIN });
  for (const cv of canvases) TH.seen.observe(cv);
  if (TH.card) return;
  TH.card = new IntersectionObserver((entries) => {
    TH.cardNear = entries[entries.length - 1].isIntersecting;
    if (TH.cardNear) for (const cv of TH.near) drawOne(cv);
  }, { rootMargin: "50% 0px" });
  TH.card.observe(box.closest(".card"));
}

/** The chosen head's thumbnail scrolled into the middle of the grid's view when it is not (wholly) in
 *  view: the grid only, never the page. After the frame that shows it: its position read then costs
 *  the redraw no layout of its own. */
export function revealThumb(cv) {
  const box = $("#heads");
  if (!cv) return;
  requestAnimationFrame(() => setTimeout(() => {
    if (box.scrollHeight <= box.clientHeight && box.scrollWidth <= box.clientWidth) return;  // nothing to scroll
    const b = box.getBoundingClientRect(), c = cv.getBoundingClientRect(), edge = 4;  // its outline too
    const top = box.querySelector(".axis.ax-head"), left = box.querySelector(".axis.ax-layer");
    const y0 = b.top + (top ? top.offsetHeight : 0), x0 = b.left + (left ? left.offsetWidth : 0);  // under the sticky labels
    if (c.top - edge < y0 || c.bottom + edge > b.top + box.clientHeight)
      box.scrollTop += (c.top + c.bottom) / 2 - (y0 + b.top + box.clientHeight) / 2;
    if (c.left - edge < x0 || c.right + edge > b.left + box.clientWidth)
      box.scrollLeft += (c.left + c.right) / 2 - (x0 + b.left + box.clientWidth) / 2;
  }, 0));
}

/** The thumbnails' titles, the grid's labels, and the note under a grid that scrolls, in the page's language. */
export function titleThumbs() {
  for (const cv of document.querySelectorAll("#heads canvas"))
    cv.title = t("thumb_title", { l: cv.dataset.layer, h: cv.dataset.head });
  for (const el of document.querySelectorAll("#heads .ax-head")) el.textContent = t("ax_head", { h: el.dataset.h });
  for (const el of document.querySelectorAll("#heads .ax-layer")) el.textContent = t("ax_layer", { l: el.dataset.l });
  const corner = document.querySelector("#heads .ax-corner");
  if (corner) corner.textContent = t("ax_corner");
  noteScroll();
}

/** Under a grid that does not fit its box, a note that it scrolls (read after the frame that lays it out). */
function noteScroll() {
  const box = $("#heads"), note = $("#heads-note");
  requestAnimationFrame(() => setTimeout(() => {
    note.hidden = !(box.scrollHeight > box.clientHeight + 1 || box.scrollWidth > box.clientWidth + 1);
    note.textContent = note.hidden ? "" : t("heads_scroll", { L: S.L, H: S.H });
  }, 0));
}

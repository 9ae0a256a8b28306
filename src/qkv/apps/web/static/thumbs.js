// Head thumbnails: every head's pattern, drawn once per document (1 px per cell, CSS scales them up).

import { S } from "./state.js";
import { $ } from "./util.js";
import { t } from "./i18n.js";
import { paintPattern } from "./paint.js";

export function drawThumbs() {
  const box = $("#heads"), T = S.T, Tk = S.Tk;
  let canvases = box.querySelectorAll("canvas");
  if (canvases.length !== S.L * S.H) {  // a new model shape: build the grid (otherwise reuse it)
    box.style.gridTemplateColumns = `auto repeat(${S.H}, 1fr)`;
    let html = "<span></span>";
    for (let h = 0; h < S.H; h++) html += `<span class="axis">h${h}</span>`;
    for (let l = 0; l < S.L; l++) {
      html += `<span class="axis">L${l}</span>`;
      for (let h = 0; h < S.H; h++) html += `<canvas data-layer="${l}" data-head="${h}"></canvas>`;
    }
    box.innerHTML = html;
    canvases = box.querySelectorAll("canvas");
    titleThumbs();
  }
  const img = new ImageData(Tk, T);
  for (const cv of canvases) {
    if (cv.width !== Tk || cv.height !== T) { cv.width = Tk; cv.height = T; }
    if (S.tr) cv.style.aspectRatio = `${Tk} / ${T}`;
    paintPattern(img, +cv.dataset.layer, +cv.dataset.head);
    cv.getContext("2d").putImageData(img, 0, 0);
  }
}

export function titleThumbs() {
  for (const cv of document.querySelectorAll("#heads canvas"))
    cv.title = t("thumb_title", { l: cv.dataset.layer, h: cv.dataset.head });
}

// Drawing on canvases: the colour ramp, a canvas sized for the screen, labels cut to fit, one
// head's pattern painted one pixel per cell, and the widths of the canvases' boxes.

import { S, at4 } from "./state.js";
import { $, clamp } from "./util.js";

/** A 256-step white → blue ramp, as [r, g, b] triples in one Uint8Array. */
export const RAMP = (() => {
  const stops = [[248, 250, 253], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
  const lut = new Uint8Array(256 * 3);
  for (let n = 0; n < 256; n++) {
    const x = (n / 255) * (stops.length - 1), s = Math.min(stops.length - 2, Math.floor(x)), f = x - s;
    for (let c = 0; c < 3; c++) lut[n * 3 + c] = Math.round(stops[s][c] * (1 - f) + stops[s + 1][c] * f);
  }
  return lut;
})();
export const MASKED = [226, 228, 233];
export const NOT_A_NUMBER = [248, 113, 113];  // a NaN weight (a diverged model): red, off the ramp, never "large"
export const FONT = '"Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "Source Han Sans SC", system-ui, sans-serif';

/** One cell's colour into px at o: masked (score −∞), NaN, or the ramp at its weight. */
function paintCell(px, o, score, weight) {
  if (score === -Infinity) {
    px[o] = MASKED[0]; px[o + 1] = MASKED[1]; px[o + 2] = MASKED[2];
  } else if (Number.isNaN(weight)) {
    px[o] = NOT_A_NUMBER[0]; px[o + 1] = NOT_A_NUMBER[1]; px[o + 2] = NOT_A_NUMBER[2];
  } else {
    const r = Math.round(clamp(weight, 0, 1) * 255) * 3;
    px[o] = RAMP[r]; px[o + 1] = RAMP[r + 1]; px[o + 2] = RAMP[r + 2];
  }
  px[o + 3] = 255;
}

/** Paint one head's T×Tk pattern into `img` (ImageData Tk wide, T high), one pixel per cell. */
export function paintPattern(img, l, h) {
  const P = S.A.pattern, sc = S.A.scores, px = img.data, base = at4(l, h, 0, 0), n = S.T * S.Tk;
  for (let c = 0; c < n; c++) paintCell(px, c * 4, sc[base + c], P[base + c]);
}

/** Paint the cells of query rows `rows` and key columns `cols` (the ␣ toggle hides the others). */
export function paintCells(img, l, h, rows, cols) {
  const P = S.A.pattern, sc = S.A.scores, px = img.data, base = at4(l, h, 0, 0);
  let o = 0;
  for (const i of rows) for (const j of cols) {
    const c = base + i * S.Tk + j;
    paintCell(px, o, sc[c], P[c]);
    o += 4;
  }
}

// the canvases' pixels per device pixel: 1 on screen; card_picture.js sets 2 while it redraws a canvas
// for a picture to save (sharp on a slide), present.js its zoom while presenting (a zoomed canvas stays sharp)
export const PRINT = { scale: 1 };

/** A canvas sized to w×h CSS pixels (sharp on high-DPI screens), cleared, with its context. */
export function sizeCanvas(cv, w, h) {
  const dpr = (window.devicePixelRatio || 1) * PRINT.scale, W = Math.round(w * dpr), H = Math.round(h * dpr);
  if (cv.width !== W || cv.height !== H) {
    cv.width = W; cv.height = H; cv.style.width = w + "px"; cv.style.height = h + "px";
  }
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return ctx;
}

/** `s` cut to fit `w` px with an ellipsis. */
export function fit(ctx, s, w) {
  if (ctx.measureText(s).width <= w) return s;
  while (s.length > 1 && ctx.measureText(s + "…").width > w) s = s.slice(0, -1);
  return s + "…";
}

/** A column's label drawn vertically, ending at (x, y): Chinese or Japanese characters (and full-width
 *  marks) stacked upright, one under the other, as vertical Chinese is written; anything else turned a
 *  quarter to the left (a Chinese character turned on its side reads as another: 三 as 川). */
export function columnLabel(ctx, s, x, y, size) {
  if ([...s].every((c) => c.codePointAt(0) >= 0x2e80)) {
    const chars = [...s];
    ctx.textAlign = "center"; ctx.textBaseline = "bottom";
    chars.forEach((c, j) => ctx.fillText(c, x, y - (chars.length - 1 - j) * (size + 1)));
    return;
  }
  ctx.save(); ctx.translate(x, y); ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "left"; ctx.textBaseline = "middle"; ctx.fillText(s, 0, 0); ctx.restore();
}

/** The widest token label of the part shown, in px (12 px type), kept in S.labelW. */
export function measureLabels() {
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = `12px ${FONT}`;
  S.labelW = Math.min(80, Math.max(12, ...S.P.q.concat(S.P.k).map((tk) => ctx.measureText(tk).width)));
}

// The widths of the canvases' boxes, kept up to date by a ResizeObserver (events.js): reading
// clientWidth while redrawing would force a layout of the whole page in the middle of a redraw.
export const WRAP_W = {};
export function wrapWidth(sel) {
  if (WRAP_W[sel] === undefined) WRAP_W[sel] = $(sel).clientWidth;
  return WRAP_W[sel];
}

// The heatmap of the chosen head: rows are queries, columns keys; a tooltip with each weight.

import { S, at4 } from "./state.js";
import { $, clamp, esc, fmt } from "./util.js";
import { t } from "./i18n.js";
import { FONT, columnLabel, fit, paintCells, paintPattern, sizeCanvas, wrapWidth } from "./paint.js";
import { shownIdx } from "./tokens.js";
import { showTip } from "./tip.js";

// where the cells are (read by heatCell; the tests read it to point at a cell)
export const heat = { x0: 0, y0: 0, cell: 1, off: document.createElement("canvas"), img: null };

export function drawHeatmap() {
  const T = S.T, Tk = S.Tk, cv = $("#heatmap"), avail = Math.min(560, wrapWidth("#heatmap-wrap") || 420);
  // the rows (queries) and columns (keys) shown: all, or those that are not whitespace (␣ toggle)
  const rows = shownIdx(S.P.q), cols = shownIdx(S.P.k), nR = rows.length, nC = cols.length;
  const lw = S.labelW + 8;
  const cell = clamp(Math.floor((avail - lw - 4) / nC), 2, 46);
  const fs = clamp(Math.floor(cell * 0.8), 7, 12);
  const rotate = S.labelW > cell - 2;  // key labels vertical when they do not fit a column
  const top = rotate ? lw : fs + 8;
  Object.assign(heat, { x0: lw, y0: top, cell, rows, cols });
  const ctx = sizeCanvas(cv, lw + cell * nC + 4, top + cell * nR + 4);

  // the cells: paint nR×nC pixels, then scale up without smoothing
  if (!heat.img || heat.img.width !== nC || heat.img.height !== nR) {
    heat.img = new ImageData(nC, nR); heat.off.width = nC; heat.off.height = nR;
  }
  if (nR === T && nC === Tk) paintPattern(heat.img, S.layer, S.head);
  else paintCells(heat.img, S.layer, S.head, rows, cols);
  heat.off.getContext("2d").putImageData(heat.img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(heat.off, lw, top, cell * nC, cell * nR);

  // the weights themselves, when the cells are big enough to hold them
  const P = S.A.pattern, sc = S.A.scores, base = at4(S.layer, S.head, 0, 0);
  if (cell >= 30) {
    ctx.font = `${Math.min(11, cell / 3.2)}px ${FONT}`; ctx.textAlign = "center"; ctx.textBaseline = "middle";
    for (let r = 0; r < nR; r++) for (let c = 0; c < nC; c++) {
      const o = base + rows[r] * Tk + cols[c];
      if (sc[o] === -Infinity) continue;
      ctx.fillStyle = P[o] > 0.45 ? "#fff" : "#334";
      ctx.fillText(P[o].toFixed(2), lw + (c + 0.5) * cell, top + (r + 0.5) * cell);
    }
  }

  // labels: every `step`-th token when the cells are small; rows are the queries, columns the keys
  ctx.font = `${fs}px ${FONT}`; ctx.fillStyle = "#445";
  const step = Math.max(1, Math.ceil((fs + 1) / cell));
  for (let n = 0; n < Math.max(nR, nC); n += step) {
    if (n < nR) {
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      ctx.fillStyle = rows[n] === S.token ? "#c2410c" : "#445";
      ctx.fillText(fit(ctx, S.P.q[rows[n]], S.labelW), lw - 5, top + (n + 0.5) * cell);
    }
    if (n >= nC) continue;
    const tok = fit(ctx, S.P.k[cols[n]], S.labelW);
    ctx.fillStyle = "#445";
    if (rotate) {
      columnLabel(ctx, tok, lw + (n + 0.5) * cell, top - 5, fs);
    } else {
      ctx.textAlign = "center"; ctx.textBaseline = "bottom";
      ctx.fillText(tok, lw + (n + 0.5) * cell, top - 4);
    }
  }
  // the chosen query's row (not drawn when the chosen query is a hidden whitespace token)
  const r = rows.indexOf(S.token);
  if (r >= 0) {
    ctx.strokeStyle = "#ea580c"; ctx.lineWidth = 2;
    ctx.strokeRect(lw - 1, top + r * cell - 1, cell * nC + 2, cell + 2);
  }
}

/** The (query i, key j) under the pointer, as positions in the text, or null. */
export function heatCell(e) {
  const cv = $("#heatmap"), r = cv.getBoundingClientRect(), rows = heat.rows || [], cols = heat.cols || [];
  const z = r.width / (parseFloat(cv.style.width) || r.width) || 1;  // a canvas zoomed (presentation mode: present.css)
  const x = (e.clientX - r.left) / z, y = (e.clientY - r.top) / z;
  const c = Math.floor((x - heat.x0) / heat.cell), n = Math.floor((y - heat.y0) / heat.cell);
  return (n >= 0 && n < rows.length && c >= 0 && c < cols.length) ? { i: rows[n], j: cols[c] } : null;
}

export function onHeatHover(e) {
  if (e.pointerType && e.pointerType !== "mouse") return showTip(e, null);  // a finger has no hover
  const c = heatCell(e);
  if (!c || !S.doc) return showTip(e, null);
  const o = at4(S.layer, S.head, c.i, c.j);
  const vars = { i: c.i, j: c.j, q: esc(S.P.q[c.i]), k: esc(S.P.k[c.j]), a: fmt(S.A.pattern[o]) };
  showTip(e, t(S.A.scores[o] === -Infinity ? "tip_masked" : "tip_cell", vars));
}

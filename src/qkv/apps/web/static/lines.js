// Who looks at whom: queries left, keys right, one line per (i, j) with opacity and width from A_ij.

import { S, at4, visibleKeys } from "./state.js";
import { $, clamp } from "./util.js";
import { FONT, fit, sizeCanvas, wrapWidth } from "./paint.js";

const lines = { top: 8, rowH: 20, xl: 0 };

export function drawLines() {
  const T = S.T, Tk = S.Tk, W = clamp(wrapWidth("#lines-wrap") || 400, 240, 560);
  const rowH = clamp(Math.floor(440 / Math.max(T, Tk)), 12, 26), top = 8;
  const fs = clamp(rowH - 4, 9, 13), lw = S.labelW * fs / 12 + 10;
  const xl = lw, xr = W - lw - 34;  // room for the weights on the right
  Object.assign(lines, { top, rowH, xl });
  const ctx = sizeCanvas($("#lines"), W, top * 2 + rowH * Math.max(T, Tk));
  const y = (i) => top + (i + 0.5) * rowH;
  const P = S.A.pattern, base = at4(S.layer, S.head, 0, 0);

  // the other queries, faintly: lines grouped in 8 opacity buckets, one stroke per bucket
  const buckets = Array.from({ length: 8 }, () => new Path2D());
  for (let i = 0; i < T; i++) {
    if (i === S.token) continue;
    for (let j = 0; j < Tk; j++) {
      const a = P[base + i * Tk + j];
      if (!(a >= 0.02)) continue;  // (NaN, from a diverged model: no line)
      const p = buckets[Math.min(7, Math.floor(a * 8))];
      p.moveTo(xl, y(i)); p.lineTo(xr, y(j));
    }
  }
  ctx.lineWidth = 1;
  buckets.forEach((p, b) => { ctx.strokeStyle = `rgba(71, 85, 105, ${0.04 + 0.05 * b})`; ctx.stroke(p); });

  // the chosen query, strongly
  const i = S.token;
  ctx.strokeStyle = "#1d4ed8";
  for (let j = 0; j < Tk; j++) {
    const a = P[base + i * Tk + j];
    if (!(a >= 0.002)) continue;
    ctx.globalAlpha = 0.15 + 0.85 * Math.sqrt(a); ctx.lineWidth = 0.6 + 6 * a;
    ctx.beginPath(); ctx.moveTo(xl, y(i)); ctx.lineTo(xr, y(j)); ctx.stroke();
  }
  ctx.globalAlpha = 1;

  // token labels, and the chosen query's weights beside the keys
  ctx.font = `${fs}px ${FONT}`; ctx.textBaseline = "middle";
  const vis = new Set(visibleKeys(i));
  for (let r = 0; r < Math.max(T, Tk); r++) {
    if (r < T) {  // the query, on the left
      ctx.textAlign = "right"; ctx.fillStyle = r === i ? "#c2410c" : "#334155";
      ctx.font = `${r === i ? "bold " : ""}${fs}px ${FONT}`;
      ctx.fillText(fit(ctx, S.P.q[r], S.labelW * fs / 12), xl - 5, y(r));
      ctx.font = `${fs}px ${FONT}`;
    }
    if (r >= Tk) continue;  // the key, on the right
    ctx.textAlign = "left"; ctx.fillStyle = vis.has(r) ? "#334155" : "#b6bcc8";
    ctx.fillText(fit(ctx, S.P.k[r], S.labelW * fs / 12), xr + 5, y(r));
    if (vis.has(r)) {
      ctx.fillStyle = "#1d4ed8"; ctx.textAlign = "right";
      ctx.fillText(P[base + i * Tk + r].toFixed(2), W - 2, y(r));
    }
  }
}

/** The query row a click on the lines chose, or null (only the query column chooses). */
export function linesRow(e) {
  const cv = $("#lines"), r = cv.getBoundingClientRect();
  if (e.clientX - r.left > r.width / 2) return null;
  const z = r.height / (parseFloat(cv.style.height) || r.height) || 1;  // a canvas zoomed (presentation mode: present.css)
  const i = Math.floor(((e.clientY - r.top) / z - lines.top) / lines.rowH);
  return i >= 0 && i < S.T ? i : null;
}
